"""Many segments at once: ``evaluate_by`` gives every segment's metric posteriors in one
parallel call.

Give rows with a segment key (``by=``) — the per-segment confusion counts are made in one
parallel Rust pass over the rows — or the counts themselves (``counts=``, an (S, 2, 2) or
(S, K, K) array; rows = true class, columns = predicted, classes in sorted order, so binary
matrices are [[TN, FP], [FN, TP]] as in scikit-learn). With ``summaries_only=True`` each
segment's draws are reduced to mean, std, median, HDI and ETI inside the kernel, so 10⁵ segments
never hold 10⁹ samples in memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from probeval import _core
from probeval._util.classes import encode, observed_classes, resolve_labels
from probeval._util.equality import ValueEquality
from probeval._util.frames import is_frame, resolve
from probeval._util.html import HtmlRepr
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_labels,
    as_name_list,
    as_probabilities,
    as_weights,
    check_beta,
    check_ci,
    check_memory,
    check_n_samples,
    check_same_length,
    check_some_weight,
    check_threshold,
    check_zero_division,
    describe,
)
from probeval.base.metrics import (
    BINARY_CELL_INDEX,
    DEFAULT_BINARY,
    DEFAULT_MULTICLASS,
    MetricSpec,
    resolve_metric,
)
from probeval.base.posterior import Posterior
from probeval.base.priors import Prior, resolve_prior
from probeval.labels.confusion import ConfusionMatrix

__all__ = ["SegmentCounts", "SegmentEvaluation", "evaluate_by"]

#: The statistics of every segment and metric, in the kernel's order.
STATISTICS = ("mean", "std", "median", "hdi_low", "hdi_high", "eti_low", "eti_high")
_ORDER = ("tp", "fp", "tn", "fn")


class SegmentEvaluation(HtmlRepr, ValueEquality, Mapping[str, dict[str, np.ndarray]]):
    """Posterior summaries of several metrics for every segment.

    ``result["f1"]`` is a dict of arrays over the segments (``observed``, ``mean``, ``std``,
    ``median``, ``hdi_low``, ``hdi_high``, ``eti_low``, ``eti_high``); :meth:`table` and
    :meth:`to_pandas` give one row per segment and metric; :meth:`posterior` gives a segment's
    full :class:`Posterior` unless ``summaries_only=True`` was asked for.
    """

    def __init__(
        self,
        segments: np.ndarray,
        counts: np.ndarray,
        labels: tuple[Any, ...],
        metrics: list[str],
        stats: np.ndarray,
        observed: np.ndarray,
        posteriors: Any,
        ci: float,
    ) -> None:
        self.segments = segments
        self.counts = counts
        self.labels = labels
        self._metrics = metrics
        self._stats = stats  # (S, M, 7)
        self._observed = observed  # (S, M)
        self._posteriors = posteriors  # callable (segment index, metric) -> Posterior, or None
        self.ci = ci

    @property
    def metrics(self) -> list[str]:
        return list(self._metrics)

    @property
    def n_segments(self) -> int:
        return int(self.segments.shape[0])

    @property
    def totals(self) -> np.ndarray:
        """Rows (or total weight) per segment."""
        total: np.ndarray = self.counts.sum(axis=(1, 2))
        if np.all(total == np.round(total)) and np.all(total < 2**53):
            return total.astype(np.int64)  # unweighted counts read as whole numbers
        return total

    def __getitem__(self, metric: str) -> dict[str, np.ndarray]:
        if metric not in self._metrics:
            raise KeyError(f"{metric!r} was not evaluated; metrics: {', '.join(self._metrics)}")
        m = self._metrics.index(metric)
        out = {"segment": self.segments, "n": self.totals, "observed": self._observed[:, m]}
        out.update({name: self._stats[:, m, i] for i, name in enumerate(STATISTICS)})
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self._metrics)

    def __len__(self) -> int:
        return len(self._metrics)

    def _index(self, segment: Any) -> int:
        matches = np.flatnonzero(self.segments == segment)
        if matches.shape[0] != 1:
            shown = ", ".join(repr(s) for s in self.segments[:10].tolist())
            raise KeyError(
                f"no segment {segment!r}; segments: {shown}{' ...' if self.n_segments > 10 else ''}"
            )
        return int(matches[0])

    def posterior(self, segment: Any, metric: str) -> Posterior:
        """The full posterior of one segment's metric (not kept with ``summaries_only``)."""
        if self._posteriors is None:
            raise ValueError(
                "this evaluation kept summaries only (summaries_only=True): no posteriors to return"
            )
        if metric not in self._metrics:
            raise KeyError(f"{metric!r} was not evaluated; metrics: {', '.join(self._metrics)}")
        post: Posterior = self._posteriors(self._index(segment), metric)
        return post

    def to_dict(self) -> dict[str, np.ndarray]:
        """One row per segment and metric (segment-major), as a dict of arrays."""
        s, m = self.n_segments, len(self._metrics)
        out = {
            "segment": np.repeat(self.segments, m),
            "metric": np.tile(np.array(self._metrics, dtype=object), s),
            "n": np.repeat(self.totals, m),
            "observed": self._observed.reshape(-1),
        }
        out.update({name: self._stats[:, :, i].reshape(-1) for i, name in enumerate(STATISTICS)})
        return out

    def table(self) -> Table:
        """:meth:`to_dict` as a :class:`~probeval._util.table.Table`."""
        data = self.to_dict()
        return Table(
            {k: v.tolist() for k, v in data.items()},
            title=f"{self.n_segments} segments ({100 * self.ci:g}% HDI and ETI)",
        )

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame (pandas is optional)."""
        import pandas as pd

        return pd.DataFrame(self.to_dict())

    def _html(self) -> str:
        return f"<h3>evaluation by segment</h3>{self.table().to_html()}"

    def __repr__(self) -> str:
        shown = min(self.n_segments, 5)
        head = SegmentEvaluation(
            self.segments[:shown],
            self.counts[:shown],
            self.labels,
            self._metrics,
            self._stats[:shown],
            self._observed[:shown],
            None,
            self.ci,
        )
        more = "" if shown == self.n_segments else f"\n... {self.n_segments - shown} more segments"
        return str(head.table()) + more


class SegmentCounts(HtmlRepr):
    """Confusion counts per segment: sufficient statistics that add up (``+``) and travel as
    plain dicts (:meth:`to_dict` / :meth:`from_dict`), so that parts of the data can be counted
    where they live (Dask, Spark, Ray) and evaluated in one place (:meth:`evaluate`)."""

    __slots__ = ("counts", "labels", "segments")

    def __init__(self, segments: Any, labels: Any, counts: Any) -> None:
        matrices = _as_counts(counts)
        keys = list(np.asarray(segments).tolist()) if not isinstance(segments, list) else segments
        classes = list(labels)
        if len(keys) != matrices.shape[0] or len(set(keys)) != len(keys):
            raise ValueError(f"segments must name the {matrices.shape[0]} segments, once each")
        if len(classes) != matrices.shape[1]:
            raise ValueError(f"labels must name the {matrices.shape[1]} classes")
        self.segments = keys
        self.labels = classes
        self.counts = matrices

    @classmethod
    def from_rows(
        cls,
        y_true: Any,
        y_pred: Any = None,
        y_score: Any = None,
        *,
        by: Any,
        threshold: float = 0.5,
        sample_weight: Any = None,
        labels: Any = None,
        pos_label: Any = None,
    ) -> SegmentCounts:
        """Count rows (one Rust pass) as :func:`evaluate_by` does."""
        matrices, keys, order = _count_rows(
            y_true, y_pred, y_score, by, threshold, sample_weight, labels, pos_label
        )
        return cls(keys.tolist(), order, matrices)

    def __add__(self, other: Any) -> SegmentCounts:
        if not isinstance(other, SegmentCounts):
            return NotImplemented
        segments = _union(self.segments, other.segments)
        labels = _union(self.labels, other.labels)
        total = np.zeros((len(segments), len(labels), len(labels)))
        for part in (self, other):
            rows = [segments.index(s) for s in part.segments]
            classes = [labels.index(c) for c in part.labels]
            total[np.ix_(rows, classes, classes)] += part.counts
        return SegmentCounts(segments, labels, total)

    def evaluate(self, **kwargs: Any) -> SegmentEvaluation:
        """:func:`evaluate_by` on these counts (any of its options)."""
        return evaluate_by(counts=self.counts, segments=self.segments, labels=self.labels, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "segments": list(self.segments),
            "labels": list(self.labels),
            "counts": self.counts.tolist(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> SegmentCounts:
        if not isinstance(data, dict):
            raise TypeError(f"from_dict needs a dict, got {describe(data)}")
        missing = {"segments", "labels", "counts"} - set(data)
        if missing:
            raise ValueError(f"missing keys {sorted(missing)}")
        return cls(data["segments"], data["labels"], data["counts"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SegmentCounts):
            return NotImplemented
        return (
            self.segments == other.segments
            and self.labels == other.labels
            and bool(np.array_equal(self.counts, other.counts))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        total = float(self.counts.sum())
        return (
            f"SegmentCounts({len(self.segments)} segments, classes {self.labels!r}, n = {total:g})"
        )


def _union(first: list[Any], second: list[Any]) -> list[Any]:
    merged = list(first) + [v for v in second if v not in set(first)]
    try:
        return sorted(merged)
    except TypeError:
        return merged


def _binary_cells(counts: np.ndarray) -> np.ndarray:
    """(S, 2, 2) matrices to (S, 4) cells in (TP, FP, TN, FN) order."""
    cells = np.empty((counts.shape[0], 4))
    for j, name in enumerate(_ORDER):
        row, column = BINARY_CELL_INDEX[name]
        cells[:, j] = counts[:, row, column]
    return np.ascontiguousarray(cells)


def _core_specs(specs: list[MetricSpec], prior: Prior) -> list[tuple[str, Any]]:
    zeros = np.zeros((2, 2))
    out: list[tuple[str, Any]] = []
    for spec in specs:
        law = spec.exact_law(2)
        # Proportions and Jaccard are exact Betas, with the prior as in evaluate (the Jaccard
        # index is a Dirichlet marginal). F1 = 2J / (1 + J) stays sampled here: its exact form
        # needs J's parameters >= 1, which can differ between segments.
        if law is None or law.kind == "f1":
            out.append((spec.name, None))
            continue
        success, failure = law.success, law.failure
        a0, b0 = prior.beta(zeros, success, failure, joint=law.marginal)
        out.append(
            (
                spec.name,
                (
                    tuple(bool(success[BINARY_CELL_INDEX[c]]) for c in _ORDER),
                    tuple(bool(failure[BINARY_CELL_INDEX[c]]) for c in _ORDER),
                    a0,
                    b0,
                ),
            )
        )
    return out


def _as_counts(counts: Any) -> np.ndarray:
    if isinstance(counts, (str, bytes)):
        raise TypeError(f"counts must be an (S, K, K) array, got {describe(counts)}")
    array = np.asarray(counts)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"counts must hold numbers, got dtype {array.dtype}")
    if (
        array.ndim != 3
        or array.shape[1] != array.shape[2]
        or array.shape[1] < 2
        or array.shape[0] < 1
    ):
        raise ValueError(
            f"counts must have shape (n_segments, K, K) with K >= 2, got {array.shape}"
        )
    values = np.ascontiguousarray(array, dtype=np.float64)
    if not np.isfinite(values).all() or (values < 0).any():
        raise ValueError("counts must be finite and >= 0")
    return values


def evaluate_by(
    data: Any = None,
    /,
    y_pred: Any = None,
    y_score: Any = None,
    *,
    y_true: Any = None,
    by: Any = None,
    counts: Any = None,
    segments: Any = None,
    threshold: float = 0.5,
    metrics: Any = None,
    prior: Any = None,
    n_samples: int = 10_000,
    rng: Any = None,
    ci: float = 0.95,
    beta: float = 1.0,
    zero_division: Any = 0.0,
    summaries_only: bool = False,
    sample_weight: Any = None,
    labels: Any = None,
    pos_label: Any = None,
) -> SegmentEvaluation:
    """Metric posteriors for every segment, in one parallel call.

    Parameters
    ----------
    data : array-like or data frame, optional
        The true labels (positionally), or a data frame whose columns ``y_true``, ``y_pred``,
        ``y_score``, ``by`` and ``sample_weight`` name.
    y_pred, y_score : array-like, optional
        Predictions, or scores P(y = 1) thresholded at ``threshold`` (binary).
    y_true : array-like, optional
        The true labels by keyword.
    by : array-like
        The segment of each row (any hashable values; segments are sorted).
    counts : array of shape (S, K, K), optional
        Instead of rows: one confusion matrix per segment (rows true, columns predicted,
        classes sorted; binary [[TN, FP], [FN, TP]]).
    segments : array-like, optional
        Names of the ``counts`` segments (default 0..S-1).
    summaries_only : bool
        Keep only each segment's summaries (reduced inside the kernel), not its samples.
    metrics, prior, n_samples, rng, beta, zero_division, sample_weight, labels, pos_label :
        As in :func:`probeval.evaluate`; ``ci`` sets the HDI and ETI probability.

    Returns
    -------
    SegmentEvaluation
    """
    ci = check_ci(ci)
    n = check_n_samples(n_samples)
    beta = check_beta(beta)
    zd = check_zero_division(zero_division)
    seed = seed_from(rng)
    if counts is not None:
        if any(v is not None for v in (data, y_true, y_pred, y_score, by, sample_weight)):
            raise TypeError("give either rows (y_true with by=...) or counts=..., not both")
        matrices = _as_counts(counts)
        keys = np.arange(matrices.shape[0]) if segments is None else np.asarray(segments)
        if keys.ndim != 1 or keys.shape[0] != matrices.shape[0]:
            raise ValueError(f"segments must name the {matrices.shape[0]} segments of counts")
        if len(set(keys.tolist())) != keys.shape[0]:
            raise ValueError("segments must be unique")
        order = list(range(matrices.shape[1])) if labels is None else list(labels)
        if len(order) != matrices.shape[1]:
            raise ValueError(f"labels must name the {matrices.shape[1]} classes of counts")
    else:
        if is_frame(data):
            columns = resolve(
                data,
                y_true=y_true,
                y_pred=y_pred,
                y_score=y_score,
                by=by,
                sample_weight=sample_weight,
            )
            y_true, y_pred, y_score = columns["y_true"], columns["y_pred"], columns["y_score"]
            by, sample_weight = columns["by"], columns["sample_weight"]
        elif data is not None:
            if y_true is not None:
                raise TypeError("pass the true labels once: positionally or as y_true=...")
            y_true = data
        if y_true is None or by is None:
            raise TypeError("evaluate_by needs y_true and by=... (or counts=...)")
        matrices, keys, order = _count_rows(
            y_true, y_pred, y_score, by, threshold, sample_weight, labels, pos_label
        )
    binary = matrices.shape[1] == 2
    names = (
        list(DEFAULT_BINARY if binary else DEFAULT_MULTICLASS)
        if metrics is None
        else (as_name_list("metrics", metrics))
    )
    specs = list(
        {s.name: s for s in (resolve_metric(m, order, binary=binary) for m in names)}.values()
    )
    resolved_prior = resolve_prior(prior, matrices.shape[1])
    if resolved_prior.data is not None:
        raise ValueError(
            "evaluate_by takes pseudo-counts as prior (a number, a name or a per-cell array), "
            "not a previous posterior: its data would be added to every segment"
        )
    if binary and all(s.kernel == "binary" for s in specs):
        return _binary(
            matrices,
            keys,
            tuple(order),
            specs,
            resolved_prior,
            n,
            seed,
            ci,
            beta,
            zd,
            summaries_only,
        )
    return _general(
        matrices, keys, tuple(order), specs, resolved_prior, n, seed, ci, beta, zd, summaries_only
    )


def _count_rows(
    y_true: Any,
    y_pred: Any,
    y_score: Any,
    by: Any,
    threshold: float,
    sample_weight: Any,
    labels: Any,
    pos_label: Any,
) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Per-segment confusion counts of rows, in one Rust pass."""
    truth = as_labels("y_true", y_true)
    if y_pred is not None:
        pred = as_labels("y_pred", y_pred)
        check_same_length(y_true=truth, y_pred=pred)
        order = resolve_labels(observed_classes(truth, pred), labels, pos_label)
        pred_codes = encode(pred, order)
    elif y_score is not None:
        scores = as_probabilities("y_score", y_score)
        check_same_length(y_true=truth, y_score=scores)
        order = resolve_labels(observed_classes(truth), labels, pos_label)
        if len(order) != 2:
            raise ValueError(f"y_true must be binary for scores, found classes {order!r}")
        pred_codes = (scores > check_threshold(threshold)).astype(np.intp)
    else:
        raise TypeError("evaluate_by needs y_pred or y_score")
    segment_keys = as_labels("by", by, role="segment key")
    check_same_length(y_true=truth, by=segment_keys)
    keys_order = observed_classes(segment_keys)
    segment_codes = encode(segment_keys, keys_order)
    weights = (
        None if sample_weight is None else as_weights("sample_weight", sample_weight, len(truth))
    )
    if weights is not None:
        check_some_weight("sample_weight", weights)
    matrices = _core.segment_counts(
        encode(truth, order).astype(np.uint32),
        pred_codes.astype(np.uint32),
        segment_codes.astype(np.uint32),
        weights,
        len(keys_order),
        len(order),
    )
    keys = np.asarray(keys_order)
    if keys.dtype.kind not in "biufUS":  # mixed types: keep the Python values
        keys = np.array(keys_order, dtype=object)
    return matrices, keys, order


def _observed_values(
    matrices: np.ndarray, labels: tuple[Any, ...], specs: list[MetricSpec], beta: float, zd: float
) -> np.ndarray:
    out = np.empty((matrices.shape[0], len(specs)))
    for s in range(matrices.shape[0]):
        cm = ConfusionMatrix._from_matrix(matrices[s], list(labels), weighted=True)
        out[s] = cm._observed(specs, beta, zd)
    return out


def _check_kept_draws(n: int, n_metrics: int, n_segments: int) -> None:
    check_memory(
        n * n_metrics * n_segments,
        request=f"n_samples={n:,} for {n_metrics} sampled metric(s) in {n_segments:,} segments",
        alternative=(
            "pass summaries_only=True (seven numbers per segment and metric), or ask for fewer "
            "n_samples"
        ),
    )


def _binary(
    matrices: np.ndarray,
    keys: np.ndarray,
    labels: tuple[Any, ...],
    specs: list[MetricSpec],
    prior: Prior,
    n: int,
    seed: int,
    ci: float,
    beta: float,
    zd: float,
    summaries_only: bool,
) -> SegmentEvaluation:
    cells = _binary_cells(matrices)
    core_specs = _core_specs(specs, prior)
    alpha = prior.dirichlet(np.zeros((2, 2)))
    tp, fp, tn, fn = (float(alpha[BINARY_CELL_INDEX[c]]) for c in _ORDER)
    alpha0 = (tp, fp, tn, fn)
    kernel_seed = derive(seed, 0)
    observed = _observed_values(matrices, labels, specs, beta, zd)
    stats = _core.segment_summaries(cells, alpha0, core_specs, n, kernel_seed, ci, beta, zd)
    posteriors = None
    if not summaries_only:
        sampled = [name for name, exact in core_specs if exact is None]
        _check_kept_draws(n, len(sampled), len(cells))
        draws = (
            _core.segment_draws(cells, alpha0, sampled, n, kernel_seed, beta, zd)
            if sampled
            else None
        )
        exact_params = {name: exact for name, exact in core_specs if exact is not None}
        posteriors = _BinarySegmentPosteriors(
            specs, cells, observed, exact_params, sampled, draws, n, kernel_seed
        )
    return SegmentEvaluation(
        keys, matrices, labels, [s.name for s in specs], stats, observed, posteriors, ci
    )


def _general(
    matrices: np.ndarray,
    keys: np.ndarray,
    labels: tuple[Any, ...],
    specs: list[MetricSpec],
    prior: Prior,
    n: int,
    seed: int,
    ci: float,
    beta: float,
    zd: float,
    summaries_only: bool,
) -> SegmentEvaluation:
    """Multiclass (or multiclass-style names): the matrix kernel, one segment at a time."""
    if not summaries_only:
        _check_kept_draws(n, len(specs), matrices.shape[0])
    stats = np.empty((matrices.shape[0], len(specs), len(STATISTICS)))
    observed = np.empty((matrices.shape[0], len(specs)))
    kept: list[dict[str, Posterior]] = []
    for s in range(matrices.shape[0]):
        cm = ConfusionMatrix._from_matrix(matrices[s], list(labels), weighted=True)
        posts = cm._posteriors(
            specs,
            prior=prior,
            n_samples=n,
            seed=derive(seed, s),
            beta=beta,
            zero_division=zd,
            joint=False,
        )
        for m, spec in enumerate(specs):
            post = posts[spec.name]
            summary = post.summary(ci)
            low, high = post.eti(ci)
            stats[s, m] = (
                summary["mean"],
                summary["std"],
                summary["median"],
                summary["hdi_low"],
                summary["hdi_high"],
                low,
                high,
            )
            observed[s, m] = post.observed
        if not summaries_only:
            kept.append(posts)

    return SegmentEvaluation(
        keys,
        matrices,
        labels,
        [s.name for s in specs],
        stats,
        observed,
        None if summaries_only else _KeptPosteriors(kept),
        ci,
    )


class _BinarySegmentPosteriors(ValueEquality):
    """A binary segment's posterior on demand: exact laws from the segment's cells, sampled
    metrics from the kept draws (an object, not a closure, so that results pickle)."""

    def __init__(
        self,
        specs: list[MetricSpec],
        cells: np.ndarray,
        observed: np.ndarray,
        exact_params: dict[str, Any],
        sampled: list[str],
        draws: np.ndarray | None,
        n: int,
        seed: int,
    ) -> None:
        self.specs = specs
        self.cells = cells
        self.observed = observed
        self.exact_params = exact_params
        self.sampled = sampled
        self.draws = draws
        self.n = n
        self.seed = seed

    def __call__(self, index: int, metric: str) -> Posterior:
        m = [s.name for s in self.specs].index(metric)
        bounds = self.specs[m].bounds
        if metric in self.exact_params:
            success, failure, a0, b0 = self.exact_params[metric]
            c = self.cells[index]
            a = float(sum(c[j] for j in range(4) if success[j]) + a0)
            b = float(sum(c[j] for j in range(4) if failure[j]) + b0)
            return Posterior(
                metric,
                beta=(a, b),
                observed=self.observed[index, m],
                n_samples=self.n,
                seed=derive(self.seed, index),
                bounds=bounds,
            )
        assert self.draws is not None
        row = self.draws[index, self.sampled.index(metric)]
        return Posterior(metric, samples=row, observed=self.observed[index, m], bounds=bounds)


class _KeptPosteriors(ValueEquality):
    """Multiclass segments' posteriors, kept whole: ``kept[segment][metric]``."""

    def __init__(self, kept: list[dict[str, Posterior]]) -> None:
        self.kept = kept

    def __call__(self, index: int, metric: str) -> Posterior:
        return self.kept[index][metric]
