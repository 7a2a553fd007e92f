"""Calibration with uncertainty: is P(y = 1 | score) what the scores say?

``pe.calibration(y_true, y_score)`` bins the scores (equal-frequency by default) and gives:

* per bin, the posterior of the positive rate, Beta(positives + 1/2, negatives + 1/2) (Jeffreys:
  a bin of all 0s or all 1s still gets a proper interval), next to the bin's mean score — the
  reliability diagram with credible bands (``pe.plot.reliability``);
* the posterior of the expected calibration error, ECE = sum_b (n_b / n) abs(rate_b - mean score_b),
  with every bin's rate drawn from its posterior. ECE is biased upward in small samples (even a
  perfectly calibrated model's bins scatter around the diagonal), so it comes with the ECE a
  perfectly calibrated model would show on the same bins (labels drawn as y ~ Bernoulli(score))
  and P(ECE above that);
* the posteriors of the Brier score and the log-loss, by the Bayesian bootstrap over rows (the
  mean of the per-row losses under Dirichlet(1, ..., 1) row weights).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from probeval._util.classes import encode, is_standard_binary, observed_classes, resolve_labels
from probeval._util.equality import ValueEquality
from probeval._util.html import HtmlRepr, curve_svg
from probeval._util.jsonable import json_dict
from probeval._util.rng import derive, seed_from
from probeval._util.table import Table
from probeval._util.validation import (
    as_labels,
    as_probabilities,
    check_ci,
    check_memory,
    check_n_samples,
    check_positive_int,
    check_same_length,
    describe,
)
from probeval.base.posterior import Posterior

__all__ = ["CalibrationReport", "calibration"]

#: Row-weight draws held at once in the Bayesian bootstrap of the losses.
_BLOCK = 128
#: Scores are clipped this far from 0 and 1 for the log-loss (as scikit-learn's eps).
_EPS = 1e-15


class CalibrationReport(HtmlRepr, ValueEquality):
    """Reliability bins with credible bands, and the posteriors of ECE, Brier and log-loss
    (see :func:`calibration`)."""

    def __init__(
        self,
        *,
        edges: np.ndarray,
        counts: np.ndarray,
        positives: np.ndarray,
        mean_score: np.ndarray,
        rate_samples: np.ndarray,
        ece: Posterior,
        ece_perfect: Posterior,
        brier: Posterior,
        log_loss: Posterior,
        ci: float,
    ) -> None:
        self.edges = edges
        #: Rows, positives and mean score of each bin.
        self.counts = counts
        self.positives = positives
        self.mean_score = mean_score
        #: (bins, draws) posterior draws of each bin's positive rate.
        self.rate_samples = rate_samples
        self.ece = ece
        #: The ECE of a perfectly calibrated model on the same rows and bins.
        self.ece_perfect = ece_perfect
        self.brier = brier
        self.log_loss = log_loss
        self.ci = ci

    @property
    def p_miscalibrated(self) -> float:
        """P(the ECE is above a perfectly calibrated model's ECE on the same bins)."""
        return float(np.mean(self.ece.samples > self.ece_perfect.samples))

    def bins(self, ci: float | None = None) -> Table:
        """One line per bin: score range, rows, mean score, observed rate and its HDI."""
        level = self.ci if ci is None else check_ci(ci)
        low, high = [], []
        for row in self.rate_samples:
            interval = Posterior("rate", samples=np.ascontiguousarray(row)).hdi(level)
            low.append(interval[0])
            high.append(interval[1])
        return Table(
            {
                "score_low": self.edges[:-1].tolist(),
                "score_high": self.edges[1:].tolist(),
                "n": self.counts.astype(np.int64).tolist(),
                "mean_score": self.mean_score.tolist(),
                "rate": (self.positives / self.counts).tolist(),
                "hdi_low": low,
                "hdi_high": high,
            },
            title=f"reliability ({len(self.counts)} bins, {level:.0%} HDI of each bin's rate)",
        )

    def summary(self, ci: float | None = None) -> Table:
        """ECE (and a perfectly calibrated model's), Brier score and log-loss: observed value,
        posterior mean and HDI."""
        level = self.ci if ci is None else check_ci(ci)
        names = ["ece", "ece_if_calibrated", "brier", "log_loss"]
        posts = [self.ece, self.ece_perfect, self.brier, self.log_loss]
        columns: dict[str, list[Any]] = {
            "quantity": names,
            "observed": [],
            "mean": [],
            "hdi_low": [],
            "hdi_high": [],
        }
        for post in posts:
            low, high = post.hdi(level)
            columns["observed"].append(post.observed)
            columns["mean"].append(post.mean())
            columns["hdi_low"].append(low)
            columns["hdi_high"].append(high)
        return Table(
            columns, title=f"calibration (P(ECE above calibrated) = {self.p_miscalibrated:.3f})"
        )

    def to_dict(self, ci: float | None = None) -> dict[str, Any]:
        """Strict JSON: the summary and bins tables as columns (None where undefined, as the
        observed value of a bin without rows) and ``p_miscalibrated``."""
        return json_dict(
            {
                "summary": self.summary(ci).to_dict(),
                "bins": self.bins(ci).to_dict(),
                "p_miscalibrated": self.p_miscalibrated,
            }
        )

    def _html(self) -> str:
        bins = self.bins()
        x = bins["mean_score"]
        diagram = curve_svg(
            x,
            bins["rate"],
            bins["hdi_low"],
            bins["hdi_high"],
            reference=([0.0, 1.0], [0.0, 1.0]),
            x_label="mean score",
            y_label="rate",
        )
        return f"<h3>calibration</h3>{diagram}{self.summary().to_html()}{bins.to_html()}"

    def __repr__(self) -> str:
        return f"{self.summary()}\n\n{self.bins()}"


def calibration(
    y_true: Any,
    y_score: Any,
    *,
    n_bins: int = 10,
    strategy: str = "quantile",
    n_samples: int = 4_000,
    rng: Any = None,
    ci: float = 0.95,
    pos_label: Any = None,
) -> CalibrationReport:
    """How well calibrated are the scores, with uncertainty (see the module docstring).

    Parameters
    ----------
    y_true : array-like
        Binary true labels.
    y_score : array-like
        Probabilities of the positive class.
    n_bins : int
        Bins of the reliability diagram and the ECE.
    strategy : {"quantile", "uniform"}
        Equal-frequency bins (default) or equal-width bins on [0, 1] (empty ones dropped), as
        scikit-learn's ``calibration_curve``.
    n_samples : int
        Posterior draws.
    rng : None, int, numpy Generator or SeedSequence
        Source of randomness.
    ci : float
        Probability of the HDIs in the tables.
    pos_label :
        The positive class when the labels are not 0/1 or booleans.

    Returns
    -------
    CalibrationReport
        ``bins()`` (the reliability table), ``summary()``, ``ece``, ``ece_perfect``,
        ``brier``, ``log_loss`` (posteriors) and ``p_miscalibrated``.

    Examples
    --------
    >>> import numpy as np
    >>> import probeval as pe
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(5_000)
    >>> report = pe.calibration(rng.random(5_000) < scores, scores, rng=0)   # calibrated
    >>> report.p_miscalibrated < 0.9
    True
    """
    truth = as_labels("y_true", y_true)
    scores = as_probabilities("y_score", y_score)
    check_same_length(y_true=truth, y_score=scores)
    order = resolve_labels(observed_classes(truth), None, pos_label)
    if len(order) > 2 or (pos_label is None and not is_standard_binary(order)):
        raise ValueError(
            f"calibration needs binary labels (0/1 or booleans, or pos_label=...), found {order!r}"
        )
    if len(order) == 2:
        positive = encode(truth, order) == 1
    else:  # one class only: all positives or all negatives
        positive = np.full(truth.size, order[0] == (1 if pos_label is None else pos_label))
    bins = check_positive_int("n_bins", n_bins, maximum=10_000)
    if strategy not in ("quantile", "uniform"):
        raise ValueError(f"strategy must be 'quantile' or 'uniform', got {describe(strategy)}")
    n = check_n_samples(n_samples)
    level = check_ci(ci)
    check_memory(
        n * (bins + 8),
        request=f"n_samples={n:,} for {bins} bins",
        alternative="ask for fewer n_samples",
    )
    seed = seed_from(rng)
    if strategy == "quantile":
        edges = np.unique(np.quantile(scores, np.linspace(0.0, 1.0, bins + 1)))
    else:
        edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, max(len(edges) - 2, 0))
    counts = np.bincount(index, minlength=max(len(edges) - 1, 1)).astype(np.float64)
    keep = counts > 0
    hits = np.bincount(index, weights=positive, minlength=counts.size)[keep]
    sums = np.bincount(index, weights=scores, minlength=counts.size)[keep]
    low_edges = edges[:-1][keep] if len(edges) > 1 else edges
    high_edges = edges[1:][keep] if len(edges) > 1 else edges
    counts = counts[keep]
    mean_score = sums / counts
    generator = np.random.default_rng(seed)
    rates = generator.beta(
        hits[:, None] + 0.5, counts[:, None] - hits[:, None] + 0.5, (counts.size, n)
    )
    share = counts / counts.sum()
    ece_samples = share @ np.abs(rates - mean_score[:, None])
    observed_ece = float(share @ np.abs(hits / counts - mean_score))
    # A perfectly calibrated model on the same rows: y ~ Bernoulli(score), so a bin's positives
    # are Poisson-binomial; drawn as Binomial(n_b, mean score) (its variance is at most that
    # much larger), then the same posterior of its ECE, one simulated label set per draw.
    simulated = generator.binomial(
        counts[:, None].astype(np.int64), np.clip(mean_score, 0.0, 1.0)[:, None], (counts.size, n)
    )
    perfect_rates = generator.beta(simulated + 0.5, counts[:, None] - simulated + 0.5)
    perfect_samples = share @ np.abs(perfect_rates - mean_score[:, None])
    brier_rows = (scores - positive) ** 2
    clipped = np.clip(scores, _EPS, 1 - _EPS)
    loss_rows = -(positive * np.log(clipped) + (~positive) * np.log1p(-clipped))
    brier_samples, loss_samples = _bootstrap_means(
        np.vstack([brier_rows, loss_rows]), n, derive(seed, 1)
    )
    # Weights that sum to 1 up to rounding: keep the means inside the losses' ranges.
    brier_samples = np.clip(brier_samples, 0.0, 1.0)
    loss_samples = np.maximum(loss_samples, 0.0)
    edges_out = np.r_[low_edges, high_edges[-1:]] if counts.size else edges
    return CalibrationReport(
        edges=edges_out,
        counts=counts,
        positives=hits,
        mean_score=mean_score,
        rate_samples=rates,
        ece=Posterior("ece", samples=np.ascontiguousarray(ece_samples), observed=observed_ece),
        ece_perfect=Posterior(
            "ece", samples=np.ascontiguousarray(perfect_samples), observed=float("nan")
        ),
        brier=Posterior("brier", samples=brier_samples, observed=float(brier_rows.mean())),
        log_loss=Posterior(
            "log_loss",
            samples=loss_samples,
            observed=float(loss_rows.mean()),
            bounds=(0.0, float("inf")),
        ),
        ci=level,
    )


def _bootstrap_means(values: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Bayesian-bootstrap means of each row of ``values`` (quantities x rows), one set of
    Dirichlet(1, ..., 1) row weights per draw shared by the quantities."""
    generator = np.random.default_rng(seed)
    out = np.empty((values.shape[0], n))
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        weights = generator.standard_exponential((stop - start, values.shape[1]))
        weights /= weights.sum(axis=1, keepdims=True)
        out[:, start:stop] = values @ weights.T
    return np.ascontiguousarray(out[0]), np.ascontiguousarray(out[1])
