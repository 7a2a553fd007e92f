"""Confusion matrices and the posteriors of their metrics."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from ._random import derive, seed_from
from ._validation import (
    as_count,
    as_count_matrix,
    as_labels,
    as_probabilities,
    as_weights,
    check_beta,
    check_n_samples,
    check_same_length,
    check_threshold,
    check_zero_division,
    describe,
)
from .audit import LabelAudit, check_audit
from .metrics import MetricSpec, resolve_metric
from .posterior import ConfusionOrigin, Posterior
from .priors import BINARY_CELL_INDEX, Prior, resolve_prior

__all__ = ["ConfusionMatrix"]

#: Key of the multiclass kernel's stream (the binary kernel's is 0); far from metric keys.
_MULTICLASS_STREAM = 1 << 40

#: Standard binary label sets, negative class first (scikit-learn's default pos_label=1).
_STANDARD_BINARY = ((0, 1), (False, True), (-1, 1))


def _same_value(a: Any, b: Any) -> bool:
    """Equal, and both booleans or both not (so True does not stand in for the integer 1)."""
    try:
        return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)
    except (TypeError, ValueError):
        return False


def _python_value(value: Any) -> Any:
    """numpy scalars to plain Python values (stable, JSON-friendly labels)."""
    return value.item() if isinstance(value, np.generic) else value


def _distinct(array: np.ndarray) -> np.ndarray:
    """Sorted distinct values; O(n) for integers of a small range (labels usually are)."""
    if array.dtype.kind in "biu" and array.size:
        # Work in a lossless 64-bit type of the same signedness: uint64 labels near 2**64
        # must not overflow an int64 conversion.
        wide = array.astype(np.uint64 if array.dtype.kind == "u" else np.int64)
        low, high = wide.min(), wide.max()
        if int(high) - int(low) < 1 << 16:
            offsets = (wide - low).astype(np.int64)
            present = np.flatnonzero(np.bincount(offsets, minlength=int(high - low) + 1))
            distinct: np.ndarray = (present.astype(wide.dtype) + low).astype(array.dtype)
            return distinct
    return np.unique(array)


def _observed_classes(*arrays: np.ndarray) -> list[Any]:
    """The distinct values in the arrays: sorted when they can be, else in first-seen order."""
    values: set[Any] = set()
    for array in arrays:
        try:
            values.update(_python_value(v) for v in _distinct(array))
        except TypeError:  # np.unique sorts: mixed types such as 1 and "a" do not
            values.update(_python_value(v) for v in array.tolist())
    try:
        return sorted(values)
    except TypeError:
        return list(values)


def _check_orderable(classes: list[Any]) -> None:
    try:
        sorted(classes)
    except TypeError:
        raise TypeError(
            f"labels of mixed, unorderable types {sorted(map(repr, classes))}; pass labels=[...] "
            "to fix the class order"
        ) from None


def _is_standard_binary(order: list[Any]) -> bool:
    return any(
        len(order) == 2 and all(_same_value(a, b) for a, b in zip(order, standard, strict=True))
        for standard in _STANDARD_BINARY
    )


def _resolve_labels(classes: list[Any], labels: Any, pos_label: Any) -> list[Any]:
    """The class order: user labels, else sorted classes (binary standard sets filled in)."""
    if labels is None:
        _check_orderable(classes)
    if labels is not None:
        listed = labels if isinstance(labels, (list, tuple)) else np.asarray(labels).tolist()
        order = [_python_value(v) for v in listed]
        if len(order) < 2:
            raise ValueError(f"labels must list at least 2 classes, got {describe(labels)}")
        if len(set(order)) != len(order):
            raise ValueError(f"labels must be unique, got {describe(labels)}")
        missing = [c for c in classes if c not in order]
        if missing:
            raise ValueError(f"the data contain classes {missing!r} that are not in labels")
    else:
        order = list(classes)
        if len(order) <= 2:
            for standard in _STANDARD_BINARY:
                if all(any(_same_value(c, s) for s in standard) for c in order):
                    order = list(standard)
                    break
    if pos_label is not None:
        if len(order) != 2:
            raise ValueError(f"pos_label needs binary data, found {len(order)} classes")
        if pos_label not in order:
            raise ValueError(f"pos_label={pos_label!r} is not one of the classes {order!r}")
        order = [c for c in order if c != pos_label] + [pos_label]
    if len(order) < 2:
        raise ValueError(
            f"only one class ({order[0]!r}) is present; pass labels=[...] listing both classes"
        )
    return order


def _encode(values: np.ndarray, order: list[Any]) -> np.ndarray:
    """Index of each value in ``order``."""
    position = {c: i for i, c in enumerate(order)}
    try:
        uniques = _distinct(values)
        # Every value is one of the uniques: a binary search finds it (faster than the
        # argsort behind np.unique's return_inverse).
        index = np.searchsorted(uniques, values)
    except TypeError:  # mixed, unorderable types (labels= fixed their order): look each up
        return np.fromiter((position[v] for v in values.tolist()), dtype=np.intp, count=len(values))
    lookup = np.array([position[_python_value(u)] for u in uniques], dtype=np.intp)
    return lookup[index]


class ConfusionMatrix:
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
            order = [_python_value(v) for v in labels]
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
        order = _resolve_labels(_observed_classes(truth, pred), labels, pos_label)
        k = len(order)
        cell = _encode(truth, order) * k + _encode(pred, order)
        matrix = (
            np.bincount(cell, weights=weights, minlength=k * k).astype(np.float64).reshape(k, k)
        )
        ambiguous = (
            k == 2 and labels is None and pos_label is None and not _is_standard_binary(order)
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
        order = _resolve_labels(_observed_classes(truth), None, pos_label)
        if len(order) != 2:
            raise ValueError(f"y_true must be binary for scores, found classes {order!r}")
        if pos_label is None and not _is_standard_binary(order):
            raise ValueError(
                f"y_true has the classes {order!r}; pass pos_label=... to say which one the "
                "scores are the probability of"
            )
        weights = (
            None
            if sample_weight is None
            else as_weights("sample_weight", sample_weight, len(truth))
        )
        actual = _encode(truth, order)
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
        """Resolve a metric name for this matrix (see :func:`probeval.metrics.resolve_metric`)."""
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
        :mod:`probeval.priors` for the prior). Proportion metrics (accuracy, precision, recall,
        ... and, for multiclass data, per-class precision/recall/specificity/NPV and the micro
        averages equal to accuracy) get their exact Beta posterior and draw samples only when
        asked; so do jaccard (binary or per class, a Beta marginal of the Dirichlet) and F1
        (2J / (1 + J) of it, exact when both of that Beta's parameters are at least 1). The
        others are computed from ``n_samples`` Dirichlet draws of the cell probabilities. With
        ``audit=LabelAudit(...)`` the counts are corrected for audited mislabelling in every draw
        (see :mod:`probeval.audit`). See :func:`probeval.evaluate` for the other parameters.
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

    def __repr__(self) -> str:
        def fmt(v: float) -> str:
            return f"{int(v)}" if v == math.floor(v) and abs(v) < 1e15 else f"{v:.6g}"

        if self.is_binary:
            tp, fp, tn, fn = (fmt(v) for v in self.cells())
            return f"ConfusionMatrix(tp={tp}, fp={fp}, tn={tn}, fn={fn}, labels={self._labels!r})"
        k, n = self.n_classes, fmt(self.total)
        return f"ConfusionMatrix({k} classes, n={n}, labels={self._labels!r})"
