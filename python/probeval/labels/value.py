"""Cost, value and threshold: what a classifier's decisions are worth, with uncertainty.

``pe.decision_curve(y_true, y_score, value=...)`` evaluates the decision "positive when the score
is above t" at every candidate threshold t. One Dirichlet is drawn over the cells the thresholds
cut the scores into (positives and negatives between consecutive thresholds: by the Dirichlet's
aggregation property, the row-level Bayesian bootstrap for everything measured at those
thresholds), with the prior's pseudo-rows placed below and above every threshold so that each
threshold's confusion matrix has exactly the posterior :func:`~probeval.evaluate` gives it. Every
draw gives the shares TP(t), FP(t), TN(t), FN(t) of all rows at every threshold at once. From
them:

* the expected value per row at a threshold, ``value_at(t)``, for a value (or cost) matrix —
  ``v_TP TP + v_FP FP + v_TN TN + v_FN FN`` — and its band over the thresholds;
* the value-maximising threshold: each draw's best threshold (``best_threshold()``, and
  ``p_optimal()`` per threshold), the value it reaches (``best_value()``) and what committing to
  one threshold loses against each draw's best (``regret(t)``);
* net benefit (Vickers & Elkin 2006) for scores that are probabilities: at a threshold
  probability p_t, ``NB = TP - FP p_t / (1 - p_t)`` (shares of all rows), next to "treat all"
  (``prevalence - (1 - prevalence) p_t / (1 - p_t)``) and "treat none" (0), with pointwise bands
  and P(the model beats both).

Without labels, a :class:`~probeval.LabelFreeEstimate` gives the expected value per row at the
estimator's threshold (:meth:`~probeval.LabelFreeEstimate.value`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from probeval._util.equality import ValueEquality
from probeval._util.html import HtmlRepr, curve_svg, escape
from probeval._util.rng import seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_float_1d,
    check_ci,
    check_memory,
    check_n_samples,
    check_value_matrix,
    describe,
)
from probeval.base.posterior import Posterior
from probeval.base.priors import resolve_prior
from probeval.labels.curves import log_gamma_draws
from probeval.labels.scores import ScoreSummary

__all__ = ["DecisionCurve", "decision_curve"]

#: Default threshold grid for probability scores: 0.01, 0.02, ..., 0.99.
PROBABILITY_GRID = np.round(np.linspace(0.01, 0.99, 99), 10)


class DecisionCurve(HtmlRepr, ValueEquality):
    """The posterior of a binary classifier's decisions at every candidate threshold (see
    :func:`decision_curve`)."""

    def __init__(
        self,
        thresholds: np.ndarray,
        tp: np.ndarray,
        fp: np.ndarray,
        prevalence: np.ndarray,
        observed: tuple[np.ndarray, np.ndarray, float],
        value: tuple[float, float, float, float] | None,
        probabilities: bool,
    ) -> None:
        #: Candidate thresholds, ascending: "positive" means a score above the threshold.
        self.thresholds = thresholds
        #: (draws, thresholds) shares of all rows that are true / false positives.
        self._tp = tp
        self._fp = fp
        #: (draws,) share of positives.
        self._prevalence = prevalence
        self._observed = observed
        #: (v_TP, v_FP, v_TN, v_FN): the value of one row in each cell, or None.
        self.value = value
        self._probabilities = probabilities

    @property
    def n_samples(self) -> int:
        return int(self._tp.shape[0])

    # ------------------------------------------------------------------ value

    def _value_matrix(self) -> tuple[float, float, float, float]:
        if self.value is None:
            raise ValueError("no value matrix: call decision_curve(..., value={...})")
        return self.value

    def _values(self, tp: Any, fp: Any, prevalence: Any) -> np.ndarray:
        v_tp, v_fp, v_tn, v_fn = self._value_matrix()
        fn = prevalence - tp
        tn = 1.0 - prevalence - fp
        return np.asarray(v_tp * tp + v_fp * fp + v_tn * tn + v_fn * fn, dtype=np.float64)

    def _value_draws(self) -> np.ndarray:
        """(draws, thresholds) expected value per row."""
        return self._values(self._tp, self._fp, self._prevalence[:, None])

    def _observed_values(self) -> np.ndarray:
        tp, fp, prevalence = self._observed
        return self._values(tp, fp, prevalence)

    def _index(self, threshold: Any) -> int:
        t = float(threshold)
        hits = np.flatnonzero(np.abs(self.thresholds - t) <= 1e-12 * max(1.0, abs(t)))
        if len(hits) == 0:
            raise ValueError(
                f"threshold {threshold!r} is not one of the {len(self.thresholds)} candidate "
                "thresholds; pass thresholds=[...] to decision_curve to include it"
            )
        return int(hits[0])

    def _bounds(self) -> tuple[float, float]:
        values = self._value_matrix()
        return (min(values), max(values))

    def value_at(self, threshold: float) -> Posterior:
        """The posterior of the expected value per row when predicting positive above
        ``threshold`` (one of the candidate thresholds)."""
        j = self._index(threshold)
        return Posterior(
            "value per row",
            samples=np.ascontiguousarray(self._value_draws()[:, j]),
            observed=float(self._observed_values()[j]),
            bounds=self._bounds(),
        )

    def value_band(self, ci: float = 0.95) -> Table:
        """Expected value per row at every threshold: observed, posterior median, pointwise
        equal-tailed interval."""
        return _band(
            self.thresholds,
            self._value_draws(),
            self._observed_values(),
            check_ci(ci),
            "value",
            f"expected value per row ({check_ci(ci):.0%} pointwise band)",
        )

    def best_threshold(self) -> Posterior:
        """The posterior of the value-maximising threshold: each draw's best candidate."""
        draws = self._value_draws()
        best = self.thresholds[np.argmax(draws, axis=1)]
        observed = float(self.thresholds[int(np.argmax(self._observed_values()))])
        low, high = float(self.thresholds[0]), float(self.thresholds[-1])
        return Posterior(
            "best threshold",
            samples=np.ascontiguousarray(best),
            observed=observed,
            bounds=(low, high),
        )

    def p_optimal(self) -> Table:
        """P(each threshold maximises the value); sums to 1 over the thresholds."""
        counts = np.bincount(np.argmax(self._value_draws(), axis=1), minlength=len(self.thresholds))
        shares = counts / self.n_samples
        return Table(
            {"threshold": self.thresholds.tolist(), "p_optimal": shares.tolist()},
            title="P(threshold maximises the expected value)",
        )

    def best_value(self) -> Posterior:
        """The posterior of the highest expected value per row over the thresholds."""
        return Posterior(
            "best value per row",
            samples=np.ascontiguousarray(self._value_draws().max(axis=1)),
            observed=float(self._observed_values().max()),
            bounds=self._bounds(),
        )

    def regret(self, threshold: float) -> Posterior:
        """The posterior of what committing to ``threshold`` loses per row against the best
        threshold of each draw (0 when it is the best)."""
        j = self._index(threshold)
        draws = self._value_draws()
        observed = self._observed_values()
        low, high = self._bounds()
        return Posterior(
            "regret per row",
            samples=np.ascontiguousarray(draws.max(axis=1) - draws[:, j]),
            observed=float(observed.max() - observed[j]),
            bounds=(0.0, high - low),
        )

    def summary(self, threshold: float | None = None, ci: float = 0.95) -> Table:
        """The best threshold, the best value and — at ``threshold``, one of the candidates —
        the value and the regret: observed, mean and HDI of each."""
        level = check_ci(ci)
        posteriors = [("best threshold", self.best_threshold()), ("best value", self.best_value())]
        if threshold is not None:
            posteriors = [
                (f"value at {threshold:g}", self.value_at(threshold)),
                *posteriors,
                (f"regret at {threshold:g}", self.regret(threshold)),
            ]
        columns: dict[str, list[Any]] = {
            "quantity": [],
            "observed": [],
            "mean": [],
            "hdi_low": [],
            "hdi_high": [],
        }
        for name, post in posteriors:
            low, high = post.hdi(level)
            for key, item in zip(
                columns, (name, post.observed, post.mean(), low, high), strict=True
            ):
                columns[key].append(item)
        return Table(columns, title=f"value per row ({repr(self).split('; ')[1][:-1]})")

    # ------------------------------------------------------------------ net benefit

    def _odds(self) -> np.ndarray:
        if not self._probabilities:
            raise ValueError(
                "net benefit needs probability thresholds strictly between 0 and 1 (scores "
                "that are probabilities)"
            )
        return np.asarray(self.thresholds / (1.0 - self.thresholds), dtype=np.float64)

    def net_benefit(self, threshold: float) -> Posterior:
        """The posterior of the net benefit at a threshold probability (Vickers & Elkin):
        ``TP - FP p_t / (1 - p_t)`` as shares of all rows."""
        j = self._index(threshold)
        odds = self._odds()[j]
        tp, fp, _ = self._observed
        return Posterior(
            "net benefit",
            samples=np.ascontiguousarray(self._tp[:, j] - self._fp[:, j] * odds),
            observed=float(tp[j] - fp[j] * odds),
            bounds=(-odds, 1.0),
        )

    def net_benefit_band(self, ci: float = 0.95) -> Table:
        """Net benefit of the model and of treating everyone at every threshold probability:
        observed, posterior median and pointwise interval, and P(the model's net benefit is
        above both treating everyone and treating no one)."""
        level = check_ci(ci)
        odds = self._odds()
        model = self._tp - self._fp * odds
        everyone = self._prevalence[:, None] - (1.0 - self._prevalence[:, None]) * odds
        tp, fp, prevalence = self._observed
        tail = (1.0 - level) / 2.0
        q = [tail, 0.5, 1.0 - tail]
        m_low, m_median, m_high = np.quantile(model, q, axis=0)
        a_low, a_high = np.quantile(everyone, [tail, 1.0 - tail], axis=0)
        useful = np.mean(model > np.maximum(everyone, 0.0), axis=0)
        return Table(
            {
                "threshold": self.thresholds.tolist(),
                "observed": (tp - fp * odds).tolist(),
                "median": m_median.tolist(),
                "low": m_low.tolist(),
                "high": m_high.tolist(),
                "treat_all": (prevalence - (1.0 - prevalence) * odds).tolist(),
                "treat_all_low": a_low.tolist(),
                "treat_all_high": a_high.tolist(),
                "p_useful": useful.tolist(),
            },
            title=f"net benefit ({level:.0%} pointwise bands)",
        )

    def to_dict(self, ci: float = 0.95) -> dict[str, Any]:
        result: dict[str, Any] = {"thresholds": self.thresholds.tolist()}
        if self.value is not None:
            result["value"] = dict(zip(("tp", "fp", "tn", "fn"), self.value, strict=True))
            result["value_band"] = self.value_band(ci).to_dict()
        if self._probabilities:
            result["net_benefit"] = self.net_benefit_band(ci).to_dict()
        return result

    def _html(self) -> str:
        parts = [f'<h3>decision curve</h3><p class="pe-note">{escape(repr(self))}</p>']
        if self.value is not None:
            band = self.value_band()
            parts.append(
                curve_svg(
                    self.thresholds,
                    band["median"],
                    band["low"],
                    band["high"],
                    x_label="threshold",
                    y_label="value",
                )
            )
        if self._probabilities:
            nb = self.net_benefit_band()
            parts.append(
                curve_svg(
                    self.thresholds,
                    nb["median"],
                    nb["low"],
                    nb["high"],
                    reference=(self.thresholds, np.maximum(nb["treat_all"], 0.0)),
                    x_label="threshold probability",
                    y_label="net benefit",
                )
            )
        if self.value is not None:
            parts.append(self.summary().to_html())
        return " ".join(parts)

    def __repr__(self) -> str:
        what = (
            "no value matrix"
            if self.value is None
            else "value "
            + ", ".join(
                f"{k}={v:g}" for k, v in zip(("tp", "fp", "tn", "fn"), self.value, strict=True)
            )
        )
        return f"DecisionCurve({len(self.thresholds)} thresholds, {self.n_samples} draws; {what})"


def _band(
    thresholds: np.ndarray,
    draws: np.ndarray,
    observed: np.ndarray,
    level: float,
    name: str,
    title: str,
) -> Table:
    tail = (1.0 - level) / 2.0
    low, median, high = np.quantile(draws, [tail, 0.5, 1.0 - tail], axis=0)
    return Table(
        {
            "threshold": thresholds.tolist(),
            f"observed_{name}": observed.tolist(),
            "median": median.tolist(),
            "low": low.tolist(),
            "high": high.tolist(),
        },
        title=title,
    )


def _thresholds(thresholds: Any, scores: np.ndarray) -> np.ndarray:
    if thresholds is None:
        if scores.min() >= 0.0 and scores.max() <= 1.0:
            return np.asarray(PROBABILITY_GRID.copy(), dtype=np.float64)
        # Any real scores: their percentiles.
        percentiles = np.quantile(scores, np.linspace(0.01, 0.99, 99))
        return np.asarray(np.unique(percentiles), dtype=np.float64)
    grid = as_float_1d("thresholds", thresholds)
    if np.any(np.diff(grid) <= 0):
        raise ValueError(f"thresholds must be strictly increasing, got {describe(thresholds)}")
    return grid


def decision_curve(
    y_true: Any,
    y_score: Any,
    *,
    value: Any = None,
    thresholds: Any = None,
    prior: Any = None,
    n_samples: int = 4_000,
    rng: Any = None,
    sample_weight: Any = None,
    pos_label: Any = None,
) -> DecisionCurve:
    """The posterior of what the decisions "positive above t" are worth, at every candidate
    threshold t: expected value per row for a value matrix, the value-maximising threshold, and
    net benefit (see the module docstring).

    Parameters
    ----------
    y_true : array-like
        Binary true labels.
    y_score : array-like
        Scores of the positive class.
    value : dict or 2 x 2 array-like, optional
        The value of one row in each cell: ``{"tp": ..., "fp": ..., "tn": ..., "fn": ...}``
        (missing keys are 0), or ``[[tn, fp], [fn, tp]]`` as scikit-learn lays out a confusion
        matrix (rows: true class). Costs are negative values. Needed for the value methods, not
        for net benefit.
    thresholds : array-like, optional
        Candidate thresholds, strictly increasing. Default: 0.01, 0.02, ..., 0.99 for scores in
        [0, 1], else the scores' percentiles.
    prior : None, float, str or 2 x 2 array-like
        Pseudo-counts of every threshold's confusion matrix, as in :func:`~probeval.evaluate`
        (default: 1 per cell); 0 gives the plain Bayesian bootstrap of the rows.
    n_samples : int
        Posterior draws (each a whole curve).
    rng : None, int, numpy Generator or SeedSequence
        Source of randomness.
    sample_weight : array-like, optional
        Weight per row.
    pos_label : optional
        The positive class when the labels are not 0/1 or booleans.

    Returns
    -------
    DecisionCurve
        ``value_at(t)``, ``value_band()``, ``best_threshold()``, ``p_optimal()``,
        ``best_value()``, ``regret(t)``, ``net_benefit(t)``, ``net_benefit_band()``.

    Examples
    --------
    >>> import numpy as np
    >>> import probeval as pe
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(5_000) < 0.2
    >>> scores = 1 / (1 + np.exp(-(2.5 * y - 2.2 + rng.normal(0, 1, 5_000))))
    >>> curve = pe.decision_curve(y, scores, value={"tp": 50, "fp": -10}, rng=0)
    >>> tuple(round(x, 2) for x in curve.best_threshold().hdi())
    (0.25, 0.3)
    """
    summary = ScoreSummary.from_scores(
        y_true, y_score, sample_weight=sample_weight, pos_label=pos_label
    )
    summary._check_both_classes()
    checked_value = None if value is None else check_value_matrix("value", value)
    grid = _thresholds(thresholds, summary.values)
    n = check_n_samples(n_samples)
    m = len(grid)
    check_memory(
        4 * n * (m + 1),
        request=f"n_samples={n:,} draws at {m:,} thresholds",
        alternative="ask for fewer n_samples or fewer thresholds",
    )
    # Cell i holds the scores above exactly i thresholds: "positive above t_j" is cells > j.
    cell = np.searchsorted(grid, summary.values, side="left")
    pos = np.bincount(cell, weights=summary.positives, minlength=m + 1)
    neg = np.bincount(cell, weights=summary.negatives, minlength=m + 1)
    # The prior's pseudo-rows sit below every threshold (TN, FN) and above every threshold
    # (TP, FP): then every threshold's confusion matrix is Dirichlet(counts + prior), the
    # posterior evaluate gives it, and a cell no row reached (no negative above a high
    # threshold in a small sample) keeps a proper share instead of exactly 0.
    resolved = resolve_prior(prior, 2)
    if resolved.data is not None:
        raise ValueError("decision_curve takes a number, a name or a 2 x 2 array as prior")
    (pseudo_tn, pseudo_fp), (pseudo_fn, pseudo_tp) = resolved.pseudo_counts(2)
    shape_p, shape_n = pos.copy(), neg.copy()
    shape_p[0] += pseudo_fn
    shape_p[m] += pseudo_tp
    shape_n[0] += pseudo_tn
    shape_n[m] += pseudo_fp
    if shape_p.sum() <= 0 or shape_n.sum() <= 0:
        raise ValueError("y_true needs both classes (or a prior > 0)")
    generator = np.random.default_rng(seed_from(rng))
    log_p = log_gamma_draws(generator, shape_p, n)
    log_n = log_gamma_draws(generator, shape_n, n)
    # One Dirichlet over all 2 (m + 1) cells, normalised in log space.
    top = np.maximum(log_p.max(axis=1), log_n.max(axis=1))[:, None]
    share_p, share_n = np.exp(log_p - top), np.exp(log_n - top)
    total = share_p.sum(axis=1, keepdims=True) + share_n.sum(axis=1, keepdims=True)
    share_p /= total
    share_n /= total
    # Shares above each threshold: suffix sums over the cells j + 1, ..., m.
    tp = np.cumsum(share_p[:, ::-1], axis=1)[:, ::-1][:, 1:]
    fp = np.cumsum(share_n[:, ::-1], axis=1)[:, ::-1][:, 1:]
    prevalence = share_p.sum(axis=1)
    rows = float(pos.sum() + neg.sum())
    observed = (
        np.cumsum(pos[::-1])[::-1][1:] / rows,
        np.cumsum(neg[::-1])[::-1][1:] / rows,
        float(pos.sum()) / rows,
    )
    probabilities = bool(grid[0] > 0.0 and grid[-1] < 1.0)
    return DecisionCurve(
        grid,
        np.ascontiguousarray(tp),
        np.ascontiguousarray(fp),
        prevalence,
        observed,
        checked_value,
        probabilities,
    )


def value_of_cells(
    value: tuple[float, float, float, float],
    accuracy: np.ndarray | float,
    prevalence: np.ndarray | float,
    selection_rate: np.ndarray | float,
) -> np.ndarray:
    """Expected value per row from joint draws of accuracy, prevalence and selection rate,
    which fix the four cells: TP = (accuracy + prevalence + selection rate - 1) / 2."""
    v_tp, v_fp, v_tn, v_fn = value
    tp = (accuracy + prevalence + selection_rate - 1.0) / 2.0
    fp, fn = selection_rate - tp, prevalence - tp
    tn = 1.0 - tp - fp - fn
    return np.asarray(v_tp * tp + v_fp * fp + v_tn * tn + v_fn * fn, dtype=np.float64)
