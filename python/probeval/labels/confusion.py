"""Confusion matrices and the posteriors of their metrics."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.classes import (
    encode,
    is_standard_binary,
    observed_classes,
    python_value,
    resolve_labels,
)
from probeval._util.html import HtmlRepr, format_cell, html_table
from probeval._util.rng import derive, seed_from
from probeval._util.validation import (
    as_count,
    as_count_matrix,
    as_labels,
    as_probabilities,
    as_weights,
    check_beta,
    check_memory,
    check_n_samples,
    check_same_length,
    check_threshold,
    check_zero_division,
    describe,
)
from probeval.base.metrics import BINARY_CELL_INDEX, MetricSpec, resolve_metric
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior, resolve_prior
from probeval.labels.audit import LabelAudit, check_audit

__all__ = ["ConfusionMatrix"]

#: Key of the multiclass kernel's stream (the binary kernel's is 0); far from metric keys.
_MULTICLASS_STREAM = 1 << 40


@dataclass(frozen=True)
class ConfusionOrigin:
    """A posterior computed from a confusion matrix."""

    confusion: ConfusionMatrix
    spec: MetricSpec
    prior: Prior
    beta: float
    zero_division: float
    joint: bool
    audit: LabelAudit | None = None

    @property
    def has_random_baseline(self) -> bool:
        return self.audit is None

    def posterior(self, n_samples: int, seed: int, *, random: bool = False) -> Posterior:
        confusion, prior = self.confusion, self.prior
        if random:
            # The random classifier on all the data seen so far (absorbed and current).
            pooled = confusion.counts if prior.data is None else confusion.counts + prior.data
            confusion = type(confusion)._from_matrix(pooled, confusion.labels, weighted=True)
            confusion = confusion.random_baseline()
            prior = type(prior)(prior.base, label=prior.label)
        result = confusion._posteriors(
            [self.spec],
            prior=prior,
            n_samples=n_samples,
            seed=seed,
            beta=self.beta,
            zero_division=self.zero_division,
            joint=self.joint,
            audit=self.audit,
        )
        return result[self.spec.name]


class ConfusionMatrix(HtmlRepr):
    """Counts of (true class, predicted class) pairs.

    Rows are true classes and columns predicted classes, in the order of :attr:`labels`
    (scikit-learn's layout). For binary data the negative class comes first, so the matrix is
    ``[[TN, FP], [FN, TP]]``; the positive class is 1 (or True) unless ``pos_label`` says
    otherwise.

    Build one with :meth:`from_counts`, :meth:`from_predictions` or :meth:`from_scores`, or
    directly from a K x K array of whole-number counts.
    """

    __slots__ = ("_ambiguous_positive", "_counts", "_labels", "_weighted")

    def __init__(self, counts: Any, labels: Sequence[Any] | None = None) -> None:
        matrix = as_count_matrix("counts", counts)
        self._init(matrix, labels, weighted=False)

    def _init(
        self,
        matrix: np.ndarray,
        labels: Sequence[Any] | None,
        *,
        weighted: bool,
        ambiguous_positive: bool = False,
    ) -> None:
        k = matrix.shape[0]
        if labels is None:
            order = list(range(k))
        else:
            order = [python_value(v) for v in labels]
            if len(order) != k or len(set(order)) != k:
                raise ValueError(f"labels must be {k} distinct values, got {describe(labels)}")
        matrix.setflags(write=False)
        self._counts = matrix
        self._labels = tuple(order)
        self._weighted = weighted
        # Two classes found in the data that are not 0/1, False/True or -1/1, with neither
        # pos_label nor labels to say which one is positive (scikit-learn refuses to guess too).
        self._ambiguous_positive = ambiguous_positive

    @classmethod
    def _from_matrix(
        cls,
        matrix: np.ndarray,
        labels: Sequence[Any] | None,
        *,
        weighted: bool,
        ambiguous_positive: bool = False,
    ) -> ConfusionMatrix:
        cm = cls.__new__(cls)
        cm._init(matrix, labels, weighted=weighted, ambiguous_positive=ambiguous_positive)
        return cm

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_counts(
        cls,
        counts: Any = None,
        *,
        tp: Any = None,
        fp: Any = None,
        tn: Any = None,
        fn: Any = None,
        labels: Sequence[Any] | None = None,
    ) -> ConfusionMatrix:
        """From the four binary cells (``tp=, fp=, tn=, fn=``) or a K x K count array.

        Counts must be whole numbers in [0, 2**53] (exact in float64, so 10**12 is fine).
        """
        cells = {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
        given = {name for name, value in cells.items() if value is not None}
        if counts is not None:
            if given:
                raise TypeError("pass either a count array or tp/fp/tn/fn, not both")
            return cls(counts, labels)
        if given != set(cells):
            missing = ", ".join(sorted(set(cells) - given))
            raise TypeError(f"from_counts needs tp, fp, tn and fn (missing: {missing})")
        matrix = np.zeros((2, 2))
        for name, value in cells.items():
            matrix[BINARY_CELL_INDEX[name]] = as_count(name, value)
        return cls._from_matrix(matrix, labels or (0, 1), weighted=False)

    @classmethod
    def from_predictions(
        cls,
        y_true: Any,
        y_pred: Any,
        *,
        labels: Sequence[Any] | None = None,
        sample_weight: Any = None,
        pos_label: Any = None,
    ) -> ConfusionMatrix:
        """Count true and predicted labels (any hashable class values).

        Parameters
        ----------
        y_true, y_pred : array-like
            True and predicted class labels of the same length.
        labels : sequence, optional
            Class order (as in scikit-learn); default: the sorted classes present. For binary
            0/1, False/True and -1/1 data both classes are always included.
        sample_weight : array-like, optional
            Non-negative weights; the counts become weighted sums.
        pos_label : optional
            The positive class of binary data (default 1 or True).
        """
        truth = as_labels("y_true", y_true)
        pred = as_labels("y_pred", y_pred)
        check_same_length(y_true=truth, y_pred=pred)
        weights = (
            None
            if sample_weight is None
            else as_weights("sample_weight", sample_weight, len(truth))
        )
        order = resolve_labels(observed_classes(truth, pred), labels, pos_label)
        k = len(order)
        cell = encode(truth, order) * k + encode(pred, order)
        matrix = (
            np.bincount(cell, weights=weights, minlength=k * k).astype(np.float64).reshape(k, k)
        )
        ambiguous = (
            k == 2 and labels is None and pos_label is None and not is_standard_binary(order)
        )
        return cls._from_matrix(
            matrix, order, weighted=weights is not None, ambiguous_positive=ambiguous
        )

    @classmethod
    def from_scores(
        cls,
        y_true: Any,
        y_score: Any,
        *,
        threshold: float = 0.5,
        sample_weight: Any = None,
        pos_label: Any = None,
    ) -> ConfusionMatrix:
        """Binary confusion matrix of scores thresholded at ``threshold``.

        A row is predicted positive when its score is strictly greater than the threshold
        (scikit-learn's rule: ``predict`` is ``predict_proba > 0.5``).
        """
        truth = as_labels("y_true", y_true)
        scores = as_probabilities("y_score", y_score)
        check_same_length(y_true=truth, y_score=scores)
        threshold = check_threshold(threshold)
        order = resolve_labels(observed_classes(truth), None, pos_label)
        if len(order) != 2:
            raise ValueError(f"y_true must be binary for scores, found classes {order!r}")
        if pos_label is None and not is_standard_binary(order):
            raise ValueError(
                f"y_true has the classes {order!r}; pass pos_label=... to say which one the "
                "scores are the probability of"
            )
        weights = (
            None
            if sample_weight is None
            else as_weights("sample_weight", sample_weight, len(truth))
        )
        actual = encode(truth, order)
        predicted = (scores > threshold).astype(np.intp)
        matrix = np.bincount(actual * 2 + predicted, weights=weights, minlength=4)
        return cls._from_matrix(
            matrix.astype(np.float64).reshape(2, 2), order, weighted=weights is not None
        )

    # ------------------------------------------------------------------ properties

    @property
    def counts(self) -> np.ndarray:
        """The K x K count matrix (read-only; rows = true class, columns = predicted)."""
        return self._counts

    @property
    def labels(self) -> tuple[Any, ...]:
        """Class labels in matrix order (for binary data: negative, positive)."""
        return self._labels

    @property
    def n_classes(self) -> int:
        return int(self._counts.shape[0])

    @property
    def is_binary(self) -> bool:
        return self.n_classes == 2

    @property
    def weighted(self) -> bool:
        """True when built with sample weights (counts may be fractional)."""
        return self._weighted

    @property
    def total(self) -> float:
        """Number of observations (sum of weights when weighted)."""
        return float(self._counts.sum())

    def _binary_cell(self, name: str) -> float:
        self._require_binary(name)
        return float(self._counts[BINARY_CELL_INDEX[name]])

    @property
    def tp(self) -> float:
        return self._binary_cell("tp")

    @property
    def fp(self) -> float:
        return self._binary_cell("fp")

    @property
    def tn(self) -> float:
        return self._binary_cell("tn")

    @property
    def fn(self) -> float:
        return self._binary_cell("fn")

    def cells(self) -> tuple[float, float, float, float]:
        """(TP, FP, TN, FN) of a binary matrix."""
        return (self.tp, self.fp, self.tn, self.fn)

    # ------------------------------------------------------------------ metrics

    def _require_binary(self, metric: str) -> None:
        if not self.is_binary:
            raise ValueError(
                f"{metric!r} needs a binary confusion matrix; this one has {self.n_classes} classes"
            )
        if self._ambiguous_positive:
            raise ValueError(
                f"{metric!r} needs a positive class, but the labels are {list(self._labels)!r}; "
                "pass pos_label=... (or labels=[negative, positive])"
            )

    def _spec(self, name: str) -> MetricSpec:
        """Resolve a metric name for this matrix (see ``base.metrics.resolve_metric``)."""
        spec = resolve_metric(name, self._labels, binary=self.is_binary)
        if spec.kernel == "binary":
            self._require_binary(spec.name)
        return spec

    def observed(self, metric: str, *, beta: float = 1.0, zero_division: Any = 0.0) -> float:
        """The metric's value on these counts (the usual point estimate)."""
        spec = self._spec(metric)
        return self._observed([spec], check_beta(beta), check_zero_division(zero_division))[0]

    def _observed(self, specs: list[MetricSpec], beta: float, zero_division: float) -> list[float]:
        values: dict[str, float] = {}
        binary = [s for s in specs if s.kernel == "binary"]
        multiclass = [s for s in specs if s.kernel == "multiclass"]
        if binary:
            names = [s.name for s in binary]
            found = _core.binary_metric_values(self.cells(), names, beta, zero_division)
            values.update(zip(names, found, strict=True))
        if multiclass:
            found = _core.multiclass_metric_values(
                self._counts, [s.core_spec() for s in multiclass], beta, zero_division
            )
            values.update(zip((s.name for s in multiclass), found, strict=True))
        return [float(values[s.name]) for s in specs]

    def posterior(
        self,
        metric: str,
        *,
        prior: Any = None,
        n_samples: int = 10_000,
        rng: Any = None,
        beta: float = 1.0,
        zero_division: Any = 0.0,
        joint: bool = False,
        audit: Any = None,
    ) -> Posterior:
        """Posterior distribution of one metric.

        Every metric comes from one model, the Dirichlet over the cells (see
        :class:`~probeval.Prior` for the prior). Proportion metrics (accuracy, precision, recall,
        ... and, for multiclass data, per-class precision/recall/specificity/NPV and the micro
        averages equal to accuracy) get their exact Beta posterior and draw samples only when
        asked; so do jaccard (binary or per class, a Beta marginal of the Dirichlet) and F1
        (2J / (1 + J) of it, exact when both of that Beta's parameters are at least 1). The
        others are computed from ``n_samples`` Dirichlet draws of the cell probabilities. With
        ``audit=LabelAudit(...)`` the counts are corrected for audited mislabelling in every draw
        (see :mod:`probeval.labels.audit`). See :func:`probeval.evaluate` for the other parameters.
        """
        spec = self._spec(metric)
        posteriors = self._posteriors(
            [spec],
            prior=resolve_prior(prior, self.n_classes),
            n_samples=check_n_samples(n_samples),
            seed=seed_from(rng),
            beta=check_beta(beta),
            zero_division=check_zero_division(zero_division),
            joint=bool(joint),
            audit=check_audit(audit),
        )
        return posteriors[spec.name]

    def _posteriors(
        self,
        specs: list[MetricSpec],
        *,
        prior: Prior,
        n_samples: int,
        seed: int,
        beta: float,
        zero_division: float,
        joint: bool,
        audit: LabelAudit | None = None,
    ) -> dict[str, Posterior]:
        """Posteriors of resolved metrics (validated arguments)."""
        if audit is not None:
            return self._audited_posteriors(
                specs, prior, n_samples, seed, beta, zero_division, joint, audit
            )
        counts = self._counts
        k = self.n_classes
        next_prior = prior.updated(counts)
        alpha = prior.dirichlet(counts)
        observed = self._observed(specs, beta, zero_division)
        # One model for every metric: the Dirichlet over the cells. A metric with an exact law
        # (a Beta of aggregated cells, see MetricSpec.exact_law) gets it without sampling;
        # with joint=True only proportions keep theirs, next to draws shared by all metrics.
        exact: dict[str, tuple[float, float]] = {}
        f1_laws: set[str] = set()
        for s in specs:
            law = s.exact_law(k)
            if law is None or (joint and law.kind != "proportion"):
                continue
            a, b = prior.beta(counts, law.success, law.failure, joint=joint or law.marginal)
            if law.kind == "proportion" and (a, b) == (0.0, 0.0):
                raise ValueError(
                    f"{s.name} has no data and a zero prior: its posterior is improper; "
                    "use a positive prior"
                )
            if law.admits(a, b):
                exact[s.name] = (a, b)
                if law.kind == "f1":
                    f1_laws.add(s.name)
        sampled = [s for s in specs if joint or s.name not in exact]
        kernels = {s.kernel for s in sampled}
        check_memory(
            n_samples * len(sampled),
            request=f"n_samples={n_samples:,} for {len(sampled)} sampled metric(s)",
            alternative="ask for fewer n_samples, or fewer metrics per call",
        )
        if joint and len(kernels) > 1:
            raise ValueError(
                "joint=True draws every metric from the same Dirichlet draws, so all metrics must "
                "be binary names (precision, f1, ...) or all multiclass-style names (f1_macro, "
                "precision[1], ...), not a mix"
            )
        if sampled and not alpha.any():
            raise ValueError("no data and a zero prior: the posterior is improper")
        draws: dict[str, np.ndarray] = {}
        binary = [s for s in sampled if s.kernel == "binary"]
        multiclass = [s for s in sampled if s.kernel == "multiclass"]
        if binary:
            tp, fp, tn, fn = (float(alpha[BINARY_CELL_INDEX[c]]) for c in ("tp", "fp", "tn", "fn"))
            names = [s.name for s in binary]
            rows = _core.binary_metric_draws(
                (tp, fp, tn, fn), names, n_samples, derive(seed, 0), beta, zero_division
            )
            draws.update(zip(names, rows, strict=True))
        if multiclass:
            rows = _core.multiclass_metric_draws(
                np.ascontiguousarray(alpha),
                np.ascontiguousarray(prior.pooled(counts), dtype=np.float64),
                [s.core_spec() for s in multiclass],
                n_samples,
                derive(seed, _MULTICLASS_STREAM),
                beta,
                zero_division,
            )
            draws.update(zip((s.name for s in multiclass), rows, strict=True))
        result: dict[str, Posterior] = {}
        for spec, value in zip(specs, observed, strict=True):
            origin = ConfusionOrigin(self, spec, prior, beta, zero_division, joint)
            params = exact.get(spec.name)
            if spec.name in draws:
                result[spec.name] = Posterior(
                    spec.name,
                    samples=np.ascontiguousarray(draws[spec.name]),
                    beta=params,
                    observed=value,
                    bounds=spec.bounds,
                    next_prior=next_prior,
                    origin=origin,
                )
            else:
                result[spec.name] = Posterior(
                    spec.name,
                    beta=params,
                    f1_of_beta=spec.name in f1_laws,
                    observed=value,
                    n_samples=n_samples,
                    seed=derive(seed, spec.stream_key),
                    bounds=spec.bounds,
                    next_prior=next_prior,
                    origin=origin,
                )
        return result

    def _audited_posteriors(
        self,
        specs: list[MetricSpec],
        prior: Prior,
        n_samples: int,
        seed: int,
        beta: float,
        zero_division: float,
        joint: bool,
        audit: LabelAudit,
    ) -> dict[str, Posterior]:
        """Posteriors under audited mislabelling: one fused kernel call for all metrics."""
        if not self.is_binary:
            raise ValueError(
                f"label audits correct the TP/FP/TN/FN cells of binary data; this matrix has "
                f"{self.n_classes} classes"
            )
        self._require_binary("an audited posterior")
        order = ("tp", "fp", "tn", "fn")
        zeros = np.zeros((2, 2))
        core_specs: list[tuple[str, Any]] = []
        for spec in specs:
            if spec.kernel != "binary":
                raise ValueError(
                    f"{spec.name}: use the binary metric names (precision, f1, ...) with an audit"
                )
            law = None if joint else spec.exact_law(2)
            if law is None or law.kind != "proportion":
                core_specs.append((spec.name, None))
                continue
            success, failure = law.success, law.failure
            a0, b0 = prior.beta(zeros, success, failure, joint=False)
            core_specs.append(
                (
                    spec.name,
                    (
                        tuple(bool(success[BINARY_CELL_INDEX[c]]) for c in order),
                        tuple(bool(failure[BINARY_CELL_INDEX[c]]) for c in order),
                        a0,
                        b0,
                    ),
                )
            )
        alpha0 = prior.dirichlet(zeros)

        def cells(matrix: np.ndarray) -> tuple[float, float, float, float]:
            tp, fp, tn, fn = (float(matrix[BINARY_CELL_INDEX[c]]) for c in order)
            return (tp, fp, tn, fn)

        check_memory(
            n_samples * len(core_specs),
            request=f"n_samples={n_samples:,} for {len(core_specs)} audited metric(s)",
            alternative="ask for fewer n_samples, or fewer metrics per call",
        )
        rows = _core.audited_metric_draws(
            cells(self._counts),
            audit.core_args(),
            core_specs,
            cells(alpha0),
            n_samples,
            derive(seed, 0),
            beta,
            zero_division,
        )
        observed = self._observed(specs, beta, zero_division)
        return {
            spec.name: Posterior(
                spec.name,
                samples=np.ascontiguousarray(row),
                observed=value,
                bounds=spec.bounds,
                origin=ConfusionOrigin(self, spec, prior, beta, zero_division, joint, audit),
            )
            for spec, row, value in zip(specs, rows, observed, strict=True)
        }

    def random_baseline(self) -> ConfusionMatrix:
        """The matrix of a random classifier on the same data.

        Same true-class totals (prevalence), but each true class is spread evenly over the
        predicted classes (a uniform confusion conditional): cell (i, j) holds row_i / K. Its
        posterior gives the metric a random classifier would reach on these data. The counts
        are fractional, so the matrix is marked weighted.
        """
        rows = self._counts.sum(axis=1, keepdims=True)
        matrix = np.repeat(rows / self.n_classes, self.n_classes, axis=1)
        return ConfusionMatrix._from_matrix(
            matrix,
            self._labels,
            weighted=True,
            ambiguous_positive=self._ambiguous_positive,
        )

    # ------------------------------------------------------------------ conveniences

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfusionMatrix):
            return NotImplemented
        return self._labels == other._labels and bool(np.array_equal(self._counts, other._counts))

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Any) -> ConfusionMatrix:
        """Counts of both matrices: the confusion matrix of data that arrived in parts. A class
        only one part has is added as an empty row and column to the other."""
        if not isinstance(other, ConfusionMatrix):
            return NotImplemented
        if self._labels == other._labels:
            labels: list[Any] = list(self._labels)
            total = self._counts + other._counts
        else:
            union = list(self._labels) + [c for c in other._labels if c not in self._labels]
            try:
                labels = sorted(union)
            except TypeError:
                labels = union
            total = np.zeros((len(labels), len(labels)))
            for part in (self, other):
                index = [labels.index(c) for c in part._labels]
                total[np.ix_(index, index)] += part._counts
        ambiguous = self._ambiguous_positive and other._ambiguous_positive
        return type(self)._from_matrix(
            total,
            labels,
            weighted=self._weighted or other._weighted,
            ambiguous_positive=ambiguous and len(labels) == 2,
        )

    @classmethod
    def from_dict(cls, data: Any) -> ConfusionMatrix:
        """Inverse of :meth:`to_dict` (labels and counts)."""
        if not isinstance(data, dict):
            raise TypeError(f"from_dict needs a dict, got {describe(data)}")
        if "counts" not in data:
            raise ValueError("the dict has no 'counts'")
        counts = as_count_matrix("counts", data["counts"], whole=False)
        return cls._from_matrix(counts, data.get("labels"), weighted=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form: labels and counts (and the named cells for binary data)."""
        result: dict[str, Any] = {"labels": list(self._labels), "counts": self._counts.tolist()}
        if self.is_binary:
            result.update(dict(zip(("tp", "fp", "tn", "fn"), self.cells(), strict=True)))
        return result

    def _html(self) -> str:
        whole = bool(np.all(self._counts == np.round(self._counts)))
        columns: dict[str, list[Any]] = {"true \\ predicted": [str(c) for c in self._labels]}
        for j, label in enumerate(self._labels):
            column = self._counts[:, j]
            columns[str(label)] = (column.astype(np.int64) if whole else column).tolist()
        total = int(self.total) if whole else format_cell(self.total)
        return html_table(columns, f"confusion matrix (n = {total})")

    def __repr__(self) -> str:
        def fmt(v: float) -> str:
            return f"{int(v)}" if v == math.floor(v) and abs(v) < 1e15 else f"{v:.6g}"

        if self.is_binary:
            tp, fp, tn, fn = (fmt(v) for v in self.cells())
            return f"ConfusionMatrix(tp={tp}, fp={fp}, tn={tn}, fn={fn}, labels={self._labels!r})"
        k, n = self.n_classes, fmt(self.total)
        return f"ConfusionMatrix({k} classes, n={n}, labels={self._labels!r})"
