"""ROC and precision-recall curves with credible bands, and operating points with uncertainty.

``pe.curves(y_true, y_score)`` draws the Bayesian bootstrap of the rows (binned like the ROC AUC
posterior: at most ``max_bins`` equal-frequency score bins that never split a tie; one
Gamma(count) weight per bin and class, which is the row-level Dirichlet(1, ..., 1) summed per
bin). Every draw is a whole ROC and precision-recall curve, so the report gives

* pointwise credible bands of the ROC curve (TPR at each FPR of a grid) and of the
  precision-recall curve (the interpolated precision — the best precision at recall >= r — at
  each recall of a grid);
* the posterior of the recall reachable at a precision of at least p (and of the precision at a
  recall of at least r): each draw's best operating point;
* P(precision >= x and recall >= y) at a threshold, from the joint posterior of the confusion
  matrix there (the Dirichlet ``evaluate`` uses).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from probeval._util.equality import ValueEquality
from probeval._util.html import HtmlRepr, curve_svg
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    check_ci,
    check_memory,
    check_n_samples,
    check_open_unit,
    check_threshold,
    describe,
)
from probeval.base.posterior import Posterior
from probeval.labels.scores import DEFAULT_MAX_BINS, ScoreSummary

__all__ = ["CurveReport", "curves"]

#: Points of the FPR and recall grids the bands are given at.
GRID_POINTS = 101


class CurveReport(HtmlRepr, ValueEquality):
    """Posterior ROC and precision-recall curves of one binary classifier (see :func:`curves`)."""

    def __init__(
        self,
        summary: ScoreSummary,
        tpr: np.ndarray,
        fpr: np.ndarray,
        precision: np.ndarray,
        seed: int,
    ) -> None:
        self.summary = summary
        #: (draws, thresholds) TPR, FPR and precision above each threshold (descending score
        #: bins; column 0 is "nothing predicted positive", of precision 1 by convention).
        self._tpr = tpr
        self._fpr = fpr
        self._precision = precision
        self._seed = seed

    @property
    def n_samples(self) -> int:
        return int(self._tpr.shape[0])

    def roc_band(self, ci: float = 0.95) -> Table:
        """TPR at each FPR of a grid: posterior median and pointwise equal-tailed interval."""
        level = check_ci(ci)
        grid = np.linspace(0.0, 1.0, GRID_POINTS)
        values = np.array(
            [np.interp(grid, f, t) for f, t in zip(self._fpr, self._tpr, strict=True)]
        )
        return _band(grid, values, level, "fpr", "tpr", f"ROC curve ({level:.0%} pointwise band)")

    def pr_band(self, ci: float = 0.95) -> Table:
        """The interpolated precision (best precision at recall >= r) at each recall of a grid:
        posterior median and pointwise equal-tailed interval."""
        level = check_ci(ci)
        grid = np.linspace(0.0, 1.0, GRID_POINTS)
        values = self._best_precision(grid)
        return _band(
            grid,
            values,
            level,
            "recall",
            "precision",
            f"precision-recall curve ({level:.0%} pointwise band)",
        )

    def _best_precision(self, recall: Any) -> np.ndarray:
        """(draws, len(recall)) best precision among thresholds with TPR >= each recall (TPR
        never decreases along the thresholds, so it is a suffix maximum at the first such
        threshold)."""
        targets = np.atleast_1d(np.asarray(recall, dtype=np.float64)) - 1e-12
        suffix = np.maximum.accumulate(self._precision[:, ::-1], axis=1)[:, ::-1]
        first = np.array([np.searchsorted(row, targets) for row in self._tpr])
        first = np.minimum(first, self._tpr.shape[1] - 1)
        return np.asarray(np.take_along_axis(suffix, first, axis=1), dtype=np.float64)

    def recall_at_precision(self, precision: float) -> Posterior:
        """The posterior of the highest recall among thresholds whose precision is at least
        ``precision`` (0 in a draw where none reaches it)."""
        target = check_open_unit("precision", precision)
        ok = (self._precision >= target) & (self._tpr > 0)
        values = np.where(ok, self._tpr, 0.0).max(axis=1)
        return Posterior("recall", samples=np.ascontiguousarray(values))

    def precision_at_recall(self, recall: float) -> Posterior:
        """The posterior of the highest precision among thresholds whose recall is at least
        ``recall``."""
        target = check_open_unit("recall", recall)
        values = self._best_precision(target)[:, 0]
        return Posterior("precision", samples=np.ascontiguousarray(values))

    def p_operating_point(
        self, threshold: float, *, precision: float = 0.0, recall: float = 0.0, prior: float = 1.0
    ) -> float:
        """P(precision >= ``precision`` and recall >= ``recall``) when predicting positive above
        ``threshold``: from the Dirichlet posterior of that threshold's confusion matrix
        (``prior`` pseudo-counts per cell, 1 as in :func:`~probeval.evaluate`)."""
        t = check_threshold(threshold)
        above = self.summary.values > t
        tp = float(self.summary.positives[above].sum())
        fp = float(self.summary.negatives[above].sum())
        fn = float(self.summary.positives[~above].sum())
        tn = float(self.summary.negatives[~above].sum())
        if not (np.isfinite(prior) and prior >= 0):
            raise ValueError(f"prior must be a number >= 0, got {describe(prior)}")
        alpha = np.array([tp, fp, tn, fn]) + prior
        if np.any(alpha <= 0):
            raise ValueError("an empty confusion cell needs prior > 0")
        generator = np.random.default_rng(derive(self._seed, 7))
        cells = generator.dirichlet(alpha, self.n_samples)
        with np.errstate(invalid="ignore", divide="ignore"):
            prec = cells[:, 0] / (cells[:, 0] + cells[:, 1])
            rec = cells[:, 0] / (cells[:, 0] + cells[:, 3])
        return float(np.mean((prec >= precision) & (rec >= recall)))

    def to_dict(self, ci: float = 0.95) -> dict[str, Any]:
        return {"roc": self.roc_band(ci).to_dict(), "pr": self.pr_band(ci).to_dict()}

    def _html(self) -> str:
        roc, pr = self.roc_band(), self.pr_band()
        roc_svg = curve_svg(
            roc["fpr"],
            roc["median"],
            roc["low"],
            roc["high"],
            reference=([0.0, 1.0], [0.0, 1.0]),
            x_label="FPR",
            y_label="TPR",
        )
        pr_svg = curve_svg(
            pr["recall"], pr["median"], pr["low"], pr["high"], x_label="recall", y_label="prec."
        )
        return (
            f'<h3>ROC and precision-recall curves</h3><p class="pe-note">posterior medians '
            f"and 95% pointwise bands, {self.n_samples} draws</p>{roc_svg} {pr_svg}"
        )

    def __repr__(self) -> str:
        return f"CurveReport({self.summary.n_distinct} distinct scores, {self.n_samples} draws)"


def _band(grid: np.ndarray, values: np.ndarray, level: float, x: str, y: str, title: str) -> Table:
    tail = (1.0 - level) / 2.0
    low, median, high = np.quantile(values, [tail, 0.5, 1.0 - tail], axis=0)
    return Table(
        {x: grid.tolist(), "median": median.tolist(), "low": low.tolist(), "high": high.tolist()},
        title=title,
    )


def curves(
    y_true: Any,
    y_score: Any,
    *,
    n_samples: int = 2_000,
    rng: Any = None,
    sample_weight: Any = None,
    pos_label: Any = None,
    max_bins: int | None = DEFAULT_MAX_BINS,
) -> CurveReport:
    """Posterior ROC and precision-recall curves (see the module docstring).

    Parameters
    ----------
    y_true : array-like
        Binary true labels.
    y_score : array-like
        Scores of the positive class (any real numbers).
    n_samples : int
        Posterior draws (each a whole pair of curves).
    rng : None, int, numpy Generator or SeedSequence
        Source of randomness.
    sample_weight : array-like, optional
        Weight per row.
    pos_label : optional
        The positive class when the labels are not 0/1 or booleans.
    max_bins : int or None
        Score bins, as for ROC AUC (:class:`~probeval.ScoreSummary`).

    Returns
    -------
    CurveReport
        ``roc_band()``, ``pr_band()``, ``recall_at_precision(p)``, ``precision_at_recall(r)``,
        ``p_operating_point(threshold, precision=, recall=)``.

    Examples
    --------
    >>> import numpy as np
    >>> import probeval as pe
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2_000)
    >>> report = pe.curves(y, y + rng.normal(0, 1, 2_000), rng=0)
    >>> round(report.recall_at_precision(0.9).median(), 2)
    0.18
    """
    summary = ScoreSummary.from_scores(
        y_true, y_score, sample_weight=sample_weight, pos_label=pos_label
    )
    summary._check_both_classes()
    binned = summary.binned(max_bins)
    n = check_n_samples(n_samples)
    bins = binned.n_distinct
    check_memory(
        8 * n * (bins + 1),
        request=f"n_samples={n:,} curves over {bins:,} score bins",
        alternative="ask for fewer n_samples, or fewer max_bins",
    )
    seed = seed_from(rng)
    generator = np.random.default_rng(seed)
    # Descending scores: the curve starts at "nothing predicted positive". The bins' Gamma
    # weights are drawn as logarithms (log Gamma(a) = log Gamma(a + 1) + log U / a), because a
    # fractional weight's Gamma can underflow to 0 and leave a class with no weight at all.
    log_p = log_gamma_draws(generator, binned.positives[::-1], n)
    log_n = log_gamma_draws(generator, binned.negatives[::-1], n)
    top_p = log_p.max(axis=1, keepdims=True)
    top_n = log_n.max(axis=1, keepdims=True)
    zeros = np.zeros((n, 1))
    tp = np.hstack([zeros, np.cumsum(np.exp(log_p - top_p), axis=1)])
    fp = np.hstack([zeros, np.cumsum(np.exp(log_n - top_n), axis=1)])
    tpr = tp / tp[:, -1:]
    fpr = fp / fp[:, -1:]
    # precision = 1 / (1 + FP / TP), the two classes on their own scales: FP / TP =
    # (fp / tp) e^(top_n - top_p).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_ratio = np.log(fp) - np.log(tp) + (top_n - top_p)
        precision = 1.0 / (1.0 + np.exp(log_ratio))
    precision = np.where(tp > 0, precision, np.where(fp > 0, 0.0, 1.0))
    return CurveReport(summary, tpr, fpr, np.nan_to_num(precision, nan=1.0), seed)


def log_gamma_draws(generator: np.random.Generator, shapes: np.ndarray, n: int) -> np.ndarray:
    """(n, len(shapes)) logarithms of Gamma(shape) draws; -inf where the shape is 0."""
    shapes = np.asarray(shapes, dtype=np.float64)
    # Below 1e-290 (subnormal weights) log U / shape would overflow; the draw is already
    # winner-takes-all there, which the floor keeps.
    safe = np.where(shapes > 0, np.maximum(shapes, 1e-290), 1.0)
    bigger = generator.standard_gamma(np.broadcast_to(shapes + 1.0, (n, shapes.size)))
    uniform = generator.random((n, shapes.size))
    with np.errstate(divide="ignore"):
        logs = np.log(bigger) + np.log(uniform) / safe
    return np.asarray(np.where(shapes > 0, logs, -np.inf), dtype=np.float64)
