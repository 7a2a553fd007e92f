"""ROC AUC and average precision posteriors from scores (SPEC §2.3).

A confusion matrix is not enough for these metrics: they need the ranking of the scores.
:class:`ScoreSummary` keeps lossless sufficient statistics — the distinct scores with the
(weighted) number of positives and negatives at each — so it can be built once, merged when data
arrive in parts, and reused for any number of posteriors.

The posterior is the Bayesian bootstrap of the Mann-Whitney probability. The scores are put into
ordered bins (the distinct scores when there are at most ``max_bins`` of them, else
``max_bins`` equal-frequency bins that never split a tie) and each draw takes
p ~ Dirichlet(positives per bin + a), q ~ Dirichlet(negatives per bin + a) over the occupied
bins::

    AUC* = sum_k p_k (Q_{k-1} + q_k / 2),    Q_{k-1} = sum_{j<k} q_j

Average precision uses the same p and q and the prevalence pi ~ Beta(n+ + 1, n- + 1).

Behaviour at the edges, by design:

- **Ties** get half credit (the Mann-Whitney convention, as in scikit-learn) and are never split
  between bins.
- **Constant scores**: every draw of the AUC is exactly 0.5, a point mass; average precision is
  the prevalence.
- **One class only**: the AUC is undefined and asking for it raises ``ValueError``; a
  :class:`ScoreSummary` of one class is still valid, so parts can be merged.
- **NaN or infinite scores** raise ``ValueError`` naming the first offending index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.classes import encode, is_standard_binary, observed_classes, resolve_labels
from probeval._util.equality import ValueEquality
from probeval._util.html import HtmlRepr
from probeval._util.rng import derive, seed_from
from probeval._util.validation import (
    as_float_1d,
    as_labels,
    as_weights,
    check_memory,
    check_n_samples,
    check_real,
    check_same_length,
    describe,
)
from probeval.base.metrics import SCORE_METRICS, MetricSpec, canonical_name
from probeval.base.posterior import Posterior
from probeval.base.priors import check_pseudo_counts

__all__ = ["ScoreSummary"]

#: Default number of bins: unique scores up to this many, else equal-frequency bins.
DEFAULT_MAX_BINS = 2048


def check_max_bins(max_bins: Any) -> int | None:
    """``max_bins``: None (one bin per distinct score) or an integer >= 2."""
    if max_bins is None:
        return None
    if isinstance(max_bins, (bool, np.bool_)) or not isinstance(max_bins, (int, np.integer)):
        raise TypeError(f"max_bins must be an integer or None, got {describe(max_bins)}")
    if int(max_bins) < 2:
        raise ValueError(
            f"max_bins must be >= 2 (or None for every distinct score), got {max_bins}"
        )
    return int(max_bins)


def check_score_prior(prior: Any) -> float:
    """Pseudo-count per occupied bin: finite and >= 0."""
    value = check_real("score_prior", prior)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"score_prior must be a finite number >= 0, got {value!r}")
    check_pseudo_counts("score_prior", value)
    return value


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class ScoreSummary(HtmlRepr):
    """Distinct scores of a binary classifier with the (weighted) number of positives and
    negatives at each: lossless sufficient statistics for ROC AUC and average precision.

    Build one with :meth:`from_scores`; add two with ``+`` (or :meth:`merge`) when the data
    come in parts — the result equals the summary of all the data at once. Its size is the
    number of distinct scores, not of rows.

    Parameters
    ----------
    values : array-like
        Distinct finite scores, strictly increasing.
    positives, negatives : array-like
        Non-negative (weighted) counts of positives and negatives at each score.
    labels : (negative, positive), optional
        The class labels, kept for reporting and checked when merging.
    """

    __slots__ = ("_labels", "_negatives", "_positives", "_values")

    def __init__(
        self,
        values: Any,
        positives: Any,
        negatives: Any,
        *,
        labels: Sequence[Any] = (0, 1),
    ) -> None:
        scores = _as_float_or_empty("values", values)
        pos = _as_float_or_empty("positives", positives)
        neg = _as_float_or_empty("negatives", negatives)
        check_same_length(values=scores, positives=pos, negatives=neg)
        if scores.shape[0] > 1 and not (np.diff(scores) > 0).all():
            raise ValueError("values must be strictly increasing distinct scores")
        for name, counts in (("positives", pos), ("negatives", neg)):
            if (counts < 0).any():
                raise ValueError(f"{name} must be >= 0, found {float(counts.min())!r}")
        if not isinstance(labels, (list, tuple)) or len(labels) != 2:
            raise ValueError(f"labels must be (negative, positive), got {describe(labels)}")
        self._values = _read_only(scores)
        self._positives = _read_only(pos)
        self._negatives = _read_only(neg)
        self._labels = tuple(labels)

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_scores(
        cls,
        y_true: Any,
        y_score: Any,
        *,
        pos_label: Any = None,
        labels: Sequence[Any] | None = None,
        sample_weight: Any = None,
    ) -> ScoreSummary:
        """Summarise binary labels and scores (higher score = more likely positive).

        Parameters
        ----------
        y_true : array-like
            Binary labels; one class alone is allowed (a part of a larger data set).
        y_score : array-like
            Finite real scores: probabilities, logits or decision-function values.
        pos_label : optional
            The positive class (default 1 or True for 0/1, False/True and -1/1 labels).
        labels : (negative, positive), optional
            Both classes, for data in which only one of them occurs and is not 0/1.
        sample_weight : array-like, optional
            Non-negative weight per row (rows of weight 0 are dropped).
        """
        truth = as_labels("y_true", y_true)
        scores = as_float_1d("y_score", y_score)
        check_same_length(y_true=truth, y_score=scores)
        weights = (
            None
            if sample_weight is None
            else as_weights("sample_weight", sample_weight, len(truth))
        )
        classes = observed_classes(truth)
        order = resolve_labels(classes, labels, pos_label)
        if len(order) != 2:
            raise ValueError(
                f"y_true must be binary, found classes {order!r}; for multiclass scores pass "
                "an (n, K) y_score to evaluate()"
            )
        if pos_label is None and labels is None and not is_standard_binary(order):
            raise ValueError(
                f"y_true has the classes {order!r}; pass pos_label=... to say which one the "
                "scores are the probability of"
            )
        positive = encode(truth, order) == 1
        values, pos, neg = _core.unique_scores(scores, positive, weights)
        return cls(values, pos, neg, labels=tuple(order))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreSummary:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, dict):
            raise TypeError(f"from_dict needs a dict, got {describe(data)}")
        missing = {"values", "positives", "negatives"} - set(data)
        if missing:
            raise ValueError(f"missing keys {sorted(missing)} in the ScoreSummary dict")
        return cls(
            data["values"],
            data["positives"],
            data["negatives"],
            labels=tuple(data.get("labels", (0, 1))),
        )

    # ------------------------------------------------------------------ properties

    @property
    def values(self) -> np.ndarray:
        """Distinct scores, ascending (read-only)."""
        return self._values

    @property
    def positives(self) -> np.ndarray:
        """(Weighted) number of positives at each distinct score (read-only)."""
        return self._positives

    @property
    def negatives(self) -> np.ndarray:
        """(Weighted) number of negatives at each distinct score (read-only)."""
        return self._negatives

    @property
    def labels(self) -> tuple[Any, ...]:
        """(negative class, positive class)."""
        return self._labels

    @property
    def n_positives(self) -> float:
        return float(self._positives.sum())

    @property
    def n_negatives(self) -> float:
        return float(self._negatives.sum())

    @property
    def n_distinct(self) -> int:
        """Number of distinct scores."""
        return int(self._values.shape[0])

    # ------------------------------------------------------------------ combining

    def merge(self, *others: ScoreSummary) -> ScoreSummary:
        """The summary of this data and ``others`` together (the same as summarising all rows
        at once)."""
        result = self
        for other in others:
            if not isinstance(other, ScoreSummary):
                raise TypeError(f"can only merge ScoreSummary objects, got {describe(other)}")
            if other._labels != result._labels:
                raise ValueError(
                    f"cannot merge summaries with different classes: {result._labels!r} and "
                    f"{other._labels!r}"
                )
            values = np.concatenate([result._values, other._values])
            pos = np.concatenate([result._positives, other._positives])
            neg = np.concatenate([result._negatives, other._negatives])
            unique, inverse = np.unique(values, return_inverse=True)
            result = ScoreSummary(
                unique,
                np.bincount(inverse, weights=pos, minlength=unique.shape[0]),
                np.bincount(inverse, weights=neg, minlength=unique.shape[0]),
                labels=result._labels,
            )
        return result

    def __add__(self, other: Any) -> ScoreSummary:
        if not isinstance(other, ScoreSummary):
            return NotImplemented
        return self.merge(other)

    def binned(self, max_bins: int | None = DEFAULT_MAX_BINS) -> ScoreSummary:
        """At most ``max_bins`` equal-frequency bins that never split a tie; each bin is
        represented by its highest score. Unchanged when there are at most ``max_bins``
        distinct scores (or ``max_bins`` is None)."""
        bins = check_max_bins(max_bins)
        if bins is None or self.n_distinct <= bins:
            return self
        values, pos, neg = _core.equal_frequency_bins(
            self._values, self._positives, self._negatives, bins
        )
        return ScoreSummary(values, pos, neg, labels=self._labels)

    def random_baseline(self) -> ScoreSummary:
        """The same scores with the classes spread over them in proportion, as a classifier
        whose scores carry no information would have them (AUC 0.5, average precision the
        prevalence)."""
        total = self._positives + self._negatives
        n = float(total.sum())
        if n == 0:
            raise ValueError("an empty ScoreSummary has no random baseline")
        return ScoreSummary(
            self._values,
            total * (self.n_positives / n),
            total * (self.n_negatives / n),
            labels=self._labels,
        )

    # ------------------------------------------------------------------ point values

    def _check_both_classes(self) -> None:
        if not (self.n_positives > 0 and self.n_negatives > 0):
            present = "positives" if self.n_positives > 0 else "negatives"
            if self.n_positives == 0 and self.n_negatives == 0:
                present = "no rows"
            raise ValueError(
                f"ROC AUC and average precision need both classes; these scores have only "
                f"{present} (n+ = {self.n_positives:g}, n- = {self.n_negatives:g})"
            )

    def roc_auc(self) -> float:
        """ROC AUC of the scores: equals ``sklearn.metrics.roc_auc_score``."""
        self._check_both_classes()
        return float(_core.auc_point(self._positives, self._negatives)[0])

    def average_precision(self) -> float:
        """Average precision: equals ``sklearn.metrics.average_precision_score``."""
        self._check_both_classes()
        return float(_core.auc_point(self._positives, self._negatives)[1])

    def observed(self, metric: str) -> float:
        """Point value of ``roc_auc`` or ``average_precision``."""
        name = _score_metric_name(metric)
        return self.roc_auc() if name == "roc_auc" else self.average_precision()

    # ------------------------------------------------------------------ posteriors

    def posterior(
        self,
        metric: str = "roc_auc",
        *,
        max_bins: int | None = DEFAULT_MAX_BINS,
        prior: float = 0.0,
        n_samples: int = 10_000,
        rng: Any = None,
    ) -> Posterior:
        """Posterior of ROC AUC or average precision by the (binned) Bayesian bootstrap.

        Parameters
        ----------
        metric : "roc_auc" or "average_precision"
        max_bins : int or None
            Distinct scores up to this many, else equal-frequency bins (ties never split).
            None keeps every distinct score: the exact per-row Bayesian bootstrap (the Exp(1)
            weights of tied rows add up to one Gamma(count) weight per score), at O(distinct
            scores) per draw.
        prior : float
            Pseudo-count added to each occupied bin (0: the pure Bayesian bootstrap).
        n_samples : int
        rng : None, int, Generator or SeedSequence
        """
        return self.posteriors(
            [metric], max_bins=max_bins, prior=prior, n_samples=n_samples, rng=rng
        )[_score_metric_name(metric)]

    def posteriors(
        self,
        metrics: Iterable[str] = SCORE_METRICS,
        *,
        max_bins: int | None = DEFAULT_MAX_BINS,
        prior: float = 0.0,
        n_samples: int = 10_000,
        rng: Any = None,
    ) -> dict[str, Posterior]:
        """Posteriors of several score metrics from the same draws (see :meth:`posterior`)."""
        if isinstance(metrics, str):
            metrics = [metrics]
        names = list(dict.fromkeys(_score_metric_name(m) for m in metrics))
        setting = _Setting(check_max_bins(max_bins), check_score_prior(prior))
        return self._posteriors(names, setting, check_n_samples(n_samples), seed_from(rng))

    def _posteriors(
        self, names: list[str], setting: _Setting, n_samples: int, seed: int
    ) -> dict[str, Posterior]:
        self._check_both_classes()
        observed = _core.auc_point(self._positives, self._negatives)
        bins = self.binned(setting.max_bins)
        want_auc, want_ap = "roc_auc" in names, "average_precision" in names
        check_memory(
            n_samples * (want_auc + want_ap),
            request=f"n_samples={n_samples:,} for {want_auc + want_ap} score metric(s)",
            alternative="ask for fewer n_samples",
        )
        rows = _core.auc_draws(
            bins._positives, bins._negatives, setting.prior, n_samples, seed, want_auc, want_ap
        )
        drawn = dict(zip([n for n in SCORE_METRICS if n in names], rows, strict=True))
        return {
            name: Posterior(
                name,
                samples=np.ascontiguousarray(drawn[name]),
                observed=float(observed[0] if name == "roc_auc" else observed[1]),
                origin=_ScoreOrigin(self, name, setting),
            )
            for name in names
        }

    # ------------------------------------------------------------------ reporting

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly: labels and the per-score counts (see :meth:`from_dict`)."""
        return {
            "labels": list(self._labels),
            "values": self._values.tolist(),
            "positives": self._positives.tolist(),
            "negatives": self._negatives.tolist(),
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScoreSummary):
            return NotImplemented
        return (
            self._labels == other._labels
            and np.array_equal(self._values, other._values)
            and np.array_equal(self._positives, other._positives)
            and np.array_equal(self._negatives, other._negatives)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"ScoreSummary({self.n_distinct} distinct scores, n+ = {self.n_positives:g}, "
            f"n- = {self.n_negatives:g}, positive class {self._labels[1]!r})"
        )


def _as_float_or_empty(name: str, values: Any) -> np.ndarray:
    """Like ``as_float_1d`` but an empty array is allowed (an empty part of the data)."""
    array = np.asarray(values)
    if array.ndim == 1 and array.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    result: np.ndarray = as_float_1d(name, array).copy()
    return result


def _score_metric_name(metric: Any) -> str:
    name = canonical_name(metric)
    if name not in SCORE_METRICS:
        raise ValueError(
            f"{metric!r} is not a score metric; a ScoreSummary gives {', '.join(SCORE_METRICS)}"
        )
    return name


@dataclass(frozen=True)
class _Setting:
    max_bins: int | None
    prior: float


@dataclass(frozen=True)
class _ScoreOrigin:
    """Redraws a binary score posterior (comparisons) and gives its random baseline."""

    summary: ScoreSummary
    metric: str
    setting: _Setting

    @property
    def has_random_baseline(self) -> bool:
        return True

    def posterior(self, n_samples: int, seed: int, *, random: bool = False) -> Posterior:
        summary = self.summary.random_baseline() if random else self.summary
        return summary._posteriors([self.metric], self.setting, n_samples, seed)[self.metric]


# ------------------------------------------------------------------------------ multiclass


def _bin_columns(
    scores: np.ndarray, weights: np.ndarray, max_bins: int | None
) -> tuple[np.ndarray, list[int]]:
    """Per-class bin index of every row (ascending score order) and each class's bin count."""
    n, k = scores.shape
    bins = np.empty((n, k), dtype=np.uint32)
    counts: list[int] = []
    for j in range(k):
        unique, inverse = np.unique(scores[:, j], return_inverse=True)
        inverse = inverse.reshape(-1)
        if max_bins is not None and unique.shape[0] > max_bins:
            mass = np.bincount(inverse, weights=weights, minlength=unique.shape[0]).astype(
                np.float64
            )
            upper, _, _ = _core.equal_frequency_bins(unique, mass, np.zeros_like(mass), max_bins)
            inverse = np.searchsorted(upper, unique)[inverse]
            counts.append(int(upper.shape[0]))
        else:
            counts.append(int(unique.shape[0]))
        bins[:, j] = inverse
    return bins, counts


@dataclass(frozen=True, eq=False)
class _MulticlassScores(ValueEquality):
    """Rows of multiclass scores reduced to what the one-vs-rest bootstrap needs: the true
    class and the bin of every class's score, with the row's weight.

    ``per_row`` (every distinct score kept, ``max_bins=None``) selects the exact shared-weight
    bootstrap over the rows, O(n K) per draw; otherwise each class's binned posterior is drawn
    on its own and the classes are joined by the shared-weight bootstrap's correlations.
    ``ordered`` (AUC bins, AP bins): every distinct score kept, and each class's posterior drawn
    on that many coarse bins that keep the rows' order inside them (exact at the counts), then
    joined likewise.
    """

    bins: np.ndarray  # (m, K) uint32
    classes: np.ndarray  # (m,) uint32
    weights: np.ndarray  # (m,) float64
    n_bins: list[int]
    per_row: bool
    ordered: tuple[int, int] | None = None

    @classmethod
    def build(
        cls,
        codes: np.ndarray,
        scores: np.ndarray,
        weights: np.ndarray,
        max_bins: int | None,
        ordered: tuple[int, int] | None = None,
    ) -> _MulticlassScores:
        keep = weights > 0
        codes, scores, weights = codes[keep], scores[keep], weights[keep]
        bins, n_bins = _bin_columns(scores, weights, None if ordered else max_bins)
        classes = codes.astype(np.uint32)
        per_row = max_bins is None and ordered is None
        if max_bins is None or ordered:
            # Rows that agree on every bin and on the class are interchangeable: one row with
            # their total weight gives the same bootstrap (a sum of Gamma(w) is Gamma(sum w)).
            keys = np.column_stack([classes, bins])
            unique, inverse = np.unique(keys, axis=0, return_inverse=True)
            if unique.shape[0] < keys.shape[0]:
                total = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(unique))
                bins, classes, weights = unique[:, 1:], unique[:, 0], total
        return cls(
            np.ascontiguousarray(bins),
            np.ascontiguousarray(classes),
            np.ascontiguousarray(weights, dtype=np.float64),
            n_bins,
            per_row,
            ordered,
        )


@dataclass(frozen=True)
class _MulticlassOrigin:
    """Redraws a multiclass score posterior; it has no random baseline."""

    data: _MulticlassScores
    spec: MetricSpec
    observed: float

    @property
    def has_random_baseline(self) -> bool:
        return False

    def posterior(self, n_samples: int, seed: int, *, random: bool = False) -> Posterior:
        if random:
            raise ValueError("multiclass score posteriors have no random baseline")
        return _multiclass_posteriors(self.data, [self.spec], [self.observed], n_samples, seed)[
            self.spec.name
        ]


def _multiclass_posteriors(
    data: _MulticlassScores,
    specs: list[MetricSpec],
    observed: list[float],
    n_samples: int,
    seed: int,
) -> dict[str, Posterior]:
    k = len(data.n_bins)
    want_ap = any(s.base == "average_precision" for s in specs)
    # Output rows: K + 2 per metric family; the copula join also holds 3 copies of its
    # 2K (AUC, class totals) or 3K (with AP) joined quantities.
    metric_rows = (k + 2) * (1 + want_ap)
    joined = 0 if data.per_row else 3 * (3 if want_ap else 2) * k
    check_memory(
        n_samples * (metric_rows + joined),
        request=f"n_samples={n_samples:,} for the one-vs-rest metrics of {k} classes",
        alternative="ask for fewer n_samples",
    )
    rows = _core.multiclass_auc_draws(
        data.bins,
        data.classes,
        data.weights,
        data.n_bins,
        n_samples,
        seed,
        want_ap,
        data.per_row,
        ordered=data.ordered,
    )
    result: dict[str, Posterior] = {}
    for spec, value in zip(specs, observed, strict=True):
        offset = 0 if spec.base == "roc_auc" else k + 2
        row = {"class": spec.class_index, "macro": k, "weighted": k + 1}[spec.average]
        result[spec.name] = Posterior(
            spec.name,
            samples=np.ascontiguousarray(rows[offset + row]),
            observed=value,
            origin=_MulticlassOrigin(data, spec, value),
        )
    return result


def multiclass_score_posteriors(
    codes: np.ndarray,
    scores: np.ndarray,
    weights: np.ndarray,
    specs: list[MetricSpec],
    *,
    max_bins: int | None,
    n_samples: int,
    seed: int,
    ordered: tuple[int, int] | None = None,
) -> dict[str, Posterior]:
    """One-vs-rest ROC AUC / average precision posteriors of (n, K) scores, per class and
    averaged, by the per-row Bayesian bootstrap with one weight per row shared by all classes.

    ``codes`` are the rows' class indices (columns of ``scores``); every class must occur.
    ``ordered``: see :class:`_MulticlassScores` (``max_bins`` is then not used).
    """
    k = scores.shape[1]
    per_class = np.bincount(codes, weights=weights, minlength=k)
    if (per_class <= 0).any():
        missing = [int(j) for j in np.flatnonzero(per_class <= 0)]
        raise ValueError(
            f"one-vs-rest ROC AUC needs every class in y_true; classes at columns {missing} "
            "have no rows"
        )
    points = _ovr_points(codes, scores, weights)
    support = per_class / per_class.sum()
    observed = [_ovr_value(points, spec, support) for spec in specs]
    data = _MulticlassScores.build(codes, scores, weights, max_bins, ordered)
    return _multiclass_posteriors(data, specs, observed, n_samples, derive(seed, 0))


def _ovr_points(codes: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Exact one-vs-rest (AUC, AP) of every column, from the distinct scores (as scikit-learn
    computes them): shape (2, K)."""
    points = np.empty((2, scores.shape[1]))
    for j in range(scores.shape[1]):
        _, pos, neg = _core.unique_scores(np.ascontiguousarray(scores[:, j]), codes == j, weights)
        points[:, j] = _core.auc_point(pos, neg)
    return points


def _ovr_value(points: np.ndarray, spec: MetricSpec, support: np.ndarray) -> float:
    """The value ``spec`` names from the per-class points of :func:`_ovr_points`."""
    values = points[0 if spec.base == "roc_auc" else 1]
    if spec.average == "class":
        return float(values[spec.class_index])
    if spec.average == "macro":
        return float(values.mean())
    return float(values @ support)


def joint_score_posteriors(
    codes: np.ndarray,
    models: list[np.ndarray],
    weights: np.ndarray,
    spec: MetricSpec,
    *,
    n_samples: int,
    seed: int,
) -> list[Posterior]:
    """One score metric of several models on the same rows, drawn jointly: one per-row
    Bayesian-bootstrap weight per row and draw shared by every model, so that differences and
    ranks keep the models' correlation.

    ``models`` are (n, K) score matrices whose columns follow the classes of ``codes``. A
    binary metric (``spec.average == ""``) takes each model as the two columns
    ``[-score, score]``: its class-1 one-vs-rest AUC and AP are the binary ones.
    """
    k = models[0].shape[1]
    per_class = np.bincount(codes, weights=weights, minlength=k)
    if (per_class <= 0).any():
        raise ValueError(f"{spec.base} needs every class of y_true among the weighted rows")
    support = per_class / per_class.sum()
    want_ap = spec.base == "average_precision"
    resolved = spec if spec.average else MetricSpec(spec.name, spec.base, "scores", "class", 1)
    observed = [_ovr_value(_ovr_points(codes, m, weights), resolved, support) for m in models]
    model_rows = (k + 2) * (1 + want_ap)
    check_memory(
        n_samples * model_rows * len(models),
        request=f"n_samples={n_samples:,} for the {spec.name} of {len(models)} models",
        alternative="ask for fewer n_samples",
    )
    if not spec.average and not want_ap:
        # Binary ROC AUC only: two models share one two-class slot, [-a, b] — "class 0 vs
        # rest" on -a is a's AUC and "class 1 vs rest" on b is b's — half the columns to
        # scatter per draw. (An odd last model pairs with itself.)
        slots = [
            np.column_stack([-models[i][:, 1], models[min(i + 1, len(models) - 1)][:, 1]])
            for i in range(0, len(models), 2)
        ]
        draws = _shared_weight_draws(codes, slots, weights, False, n_samples, seed)
        samples = [draws[i // 2, i % 2] for i in range(len(models))]
    else:
        draws = _shared_weight_draws(codes, models, weights, want_ap, n_samples, seed)
        offset = k + 2 if want_ap else 0
        row = {"class": resolved.class_index, "macro": k, "weighted": k + 1}[resolved.average]
        samples = [model_draws[offset + row] for model_draws in draws]
    return [
        Posterior(spec.name, samples=np.ascontiguousarray(values), observed=value)
        for values, value in zip(samples, observed, strict=True)
    ]


def _shared_weight_draws(
    codes: np.ndarray,
    models: list[np.ndarray],
    weights: np.ndarray,
    want_ap: bool,
    n_samples: int,
    seed: int,
) -> np.ndarray:
    """(models, rows, draws) one-vs-rest draws of several (n, K) score matrices under one
    per-row Bayesian bootstrap (the exact kernel, every distinct score its own bin)."""
    data = _MulticlassScores.build(codes, np.column_stack(models), weights, None)
    rows = _core.multiclass_auc_draws(
        data.bins,
        data.classes,
        data.weights,
        data.n_bins,
        n_samples,
        seed,
        want_ap,
        True,
        len(models),
    )
    return np.asarray(rows).reshape(len(models), -1, n_samples)
