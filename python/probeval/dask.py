"""Data beyond one machine: sufficient statistics from Dask, posteriors computed locally
(needs the ``dask`` extra: ``pip install "probeval[dask]"``).

Every function here turns each partition of a Dask DataFrame (or the aligned chunks of Dask
Arrays) into a small sufficient statistic — a :class:`ConfusionMatrix`, :class:`SegmentCounts`
or :class:`ScoreSummary` — and adds them up in a tree reduction on the cluster. Only those
statistics travel; the posteriors are computed locally from them, so the samples never do, and
the results are exactly those of the in-memory path on the same rows.

The statistics add up with ``+`` and serialise with ``to_dict()`` / ``from_dict()``, so the same
pattern works from Spark or Ray (see the README's Spark recipe).

A first, cheap pass collects the classes present in the labels, so that every partition counts
with the same class order (a partition may lack a class entirely).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from probeval._util.classes import observed_classes, resolve_labels
from probeval._util.validation import describe
from probeval.labelfree.estimator import LabelFreeEstimator
from probeval.labels.confusion import ConfusionMatrix
from probeval.labels.scores import ScoreSummary
from probeval.labels.segments import SegmentCounts

__all__ = ["confusion_matrix", "fit_label_free", "score_summary", "segment_counts"]

T = TypeVar("T")


def _dask() -> Any:
    try:
        import dask
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError('probeval.dask needs dask: pip install "probeval[dask]"') from error
    return dask


def _parts(frame: Any, columns: dict[str, Any]) -> list[Any]:
    """Delayed per-partition dicts {parameter: numpy array} for the named columns of a Dask
    DataFrame, or for aligned Dask Arrays given directly (``frame=None``)."""
    dask = _dask()
    wanted = {name: value for name, value in columns.items() if value is not None}
    if frame is not None:
        if not hasattr(frame, "to_delayed") or not hasattr(frame, "columns"):
            raise TypeError(f"frame must be a dask DataFrame, got {describe(frame)}")
        for parameter, name in wanted.items():
            if not isinstance(name, str) or name not in list(frame.columns):
                raise ValueError(f"{parameter}={name!r} is not a column of the dask DataFrame")

        def pick(partition: Any) -> dict[str, np.ndarray]:
            return {p: np.asarray(partition[name]) for p, name in wanted.items()}

        return [dask.delayed(pick)(part) for part in frame.to_delayed()]
    arrays = wanted
    for parameter, array in arrays.items():
        if not hasattr(array, "to_delayed") or getattr(array, "ndim", None) != 1:
            raise TypeError(
                f"without a frame, {parameter} must be a one-dimensional dask Array, got "
                f"{describe(array)}"
            )
    chunks = {array.chunks for array in arrays.values()}
    if len(chunks) != 1:
        raise ValueError("the dask Arrays must have the same length and chunks")
    blocks = {p: list(a.to_delayed().ravel()) for p, a in arrays.items()}
    count = len(next(iter(blocks.values())))

    def pack(**parts: np.ndarray) -> dict[str, np.ndarray]:
        return {p: np.asarray(v) for p, v in parts.items()}

    return [dask.delayed(pack)(**{p: blocks[p][i] for p in blocks}) for i in range(count)]


def _tree(parts: list[Any], merge: Callable[[T, T], T]) -> T:
    """Add the partition statistics pairwise, level by level, on the cluster."""
    dask = _dask()
    if not parts:
        raise ValueError("the data have no partitions")
    level = parts
    while len(level) > 1:
        paired = [
            dask.delayed(merge)(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
        level = paired
    (result,) = dask.compute(level[0])
    return result  # type: ignore[no-any-return]


def _classes(parts: list[Any], *keys: str) -> list[Any]:
    """The distinct values of some columns over all partitions (a cheap first pass)."""
    dask = _dask()

    def distinct(part: dict[str, np.ndarray]) -> list[Any]:
        return observed_classes(*(part[k] for k in keys if k in part))

    def union(a: list[Any], b: list[Any]) -> list[Any]:
        return observed_classes(np.array(a + b, dtype=object))

    return _tree([dask.delayed(distinct)(p) for p in parts], union)


def _add(a: Any, b: Any) -> Any:
    return a + b


def confusion_matrix(
    frame: Any = None,
    *,
    y_true: Any,
    y_pred: Any = None,
    y_score: Any = None,
    threshold: float = 0.5,
    sample_weight: Any = None,
    labels: Sequence[Any] | None = None,
    pos_label: Any = None,
) -> ConfusionMatrix:
    """The confusion matrix of a Dask DataFrame's columns (or of Dask Arrays), counted per
    partition and added up on the cluster: then ``cm.posterior(...)`` / ``evaluate(cm)``."""
    dask = _dask()
    if (y_pred is None) == (y_score is None):
        raise TypeError("give y_pred or y_score (one of them)")
    parts = _parts(
        frame, {"y_true": y_true, "y_pred": y_pred, "y_score": y_score, "w": sample_weight}
    )
    if labels is None:
        order = resolve_labels(_classes(parts, "y_true", "y_pred"), None, pos_label)
    else:
        order = list(labels)

    def count(part: dict[str, np.ndarray]) -> ConfusionMatrix:
        if "y_score" in part:
            pred = np.where(part["y_score"] > threshold, order[-1], order[0])
        else:
            pred = part["y_pred"]
        return ConfusionMatrix.from_predictions(
            part["y_true"], pred, labels=order, sample_weight=part.get("w")
        )

    return cast(ConfusionMatrix, _tree([dask.delayed(count)(p) for p in parts], _add))


def segment_counts(
    frame: Any = None,
    *,
    y_true: Any,
    by: Any,
    y_pred: Any = None,
    y_score: Any = None,
    threshold: float = 0.5,
    sample_weight: Any = None,
    labels: Sequence[Any] | None = None,
    pos_label: Any = None,
) -> SegmentCounts:
    """Per-segment confusion counts, partition by partition, added up on the cluster: then
    ``counts.evaluate(...)`` gives every segment's posteriors."""
    dask = _dask()
    if (y_pred is None) == (y_score is None):
        raise TypeError("give y_pred or y_score (one of them)")
    parts = _parts(
        frame,
        {"y_true": y_true, "y_pred": y_pred, "y_score": y_score, "by": by, "w": sample_weight},
    )
    order = (
        list(labels)
        if labels is not None
        else resolve_labels(_classes(parts, "y_true", "y_pred"), None, pos_label)
    )

    def count(part: dict[str, np.ndarray]) -> SegmentCounts:
        return SegmentCounts.from_rows(
            part["y_true"],
            part.get("y_pred"),
            part.get("y_score"),
            by=part["by"],
            threshold=threshold,
            sample_weight=part.get("w"),
            labels=order,
            pos_label=order[-1] if len(order) == 2 else None,
        )

    return cast(SegmentCounts, _tree([dask.delayed(count)(p) for p in parts], _add))


def score_summary(
    frame: Any = None,
    *,
    y_true: Any,
    y_score: Any,
    sample_weight: Any = None,
    pos_label: Any = None,
) -> ScoreSummary:
    """The :class:`ScoreSummary` of binary labels and scores, per partition and merged on the
    cluster: then ``summary.posterior("roc_auc")``."""
    dask = _dask()
    parts = _parts(frame, {"y_true": y_true, "y_score": y_score, "w": sample_weight})
    order = resolve_labels(_classes(parts, "y_true"), None, pos_label)

    def summarise(part: dict[str, np.ndarray]) -> ScoreSummary:
        return ScoreSummary.from_scores(
            part["y_true"], part["y_score"], labels=order, sample_weight=part.get("w")
        )

    return cast(ScoreSummary, _tree([dask.delayed(summarise)(p) for p in parts], _add))


def fit_label_free(
    estimator: LabelFreeEstimator,
    frame: Any = None,
    *,
    y_true: Any,
    y_score: Any,
    pos_label: Any = None,
) -> LabelFreeEstimator:
    """Fit a :class:`LabelFreeEstimator` on reference data in Dask: its exact sufficient
    statistics (a :class:`ScoreSummary`) are built on the cluster and the fit runs locally:
    the same calibration as ``estimator.fit`` on the same rows, but, like
    :meth:`LabelFreeEstimator.fit_summary` with one summary, no drift between periods (a summary
    has no time order). For the drift, build one summary per reference period and pass the list
    to ``fit_summary``."""
    if not isinstance(estimator, LabelFreeEstimator):
        raise TypeError(f"estimator must be a LabelFreeEstimator, got {describe(estimator)}")
    summary = score_summary(frame, y_true=y_true, y_score=y_score, pos_label=pos_label)
    return estimator.fit_summary(summary)
