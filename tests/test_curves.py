"""Posterior ROC and precision-recall curves: observed curves against scikit-learn, pointwise
band coverage of the true binormal curves in simulation, operating points against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import precision_recall_curve, roc_curve

import probeval as pe

D = 1.2  # positives ~ N(D, 1), negatives ~ N(0, 1)


def _true_tpr(fpr: np.ndarray) -> np.ndarray:
    return 1.0 - stats.norm.cdf(stats.norm.ppf(1.0 - fpr) - D)


def _true_precision(recall: np.ndarray, prevalence: float) -> np.ndarray:
    fpr = 1.0 - stats.norm.cdf(stats.norm.ppf(1.0 - recall) + D)
    return prevalence * recall / (prevalence * recall + (1 - prevalence) * fpr)


def _data(seed: int, n: int, prevalence: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    return y, D * y + rng.normal(size=n)


def test_draws_center_on_the_observed_curves() -> None:
    y, s = _data(1, 3_000, 0.3)
    report = pe.curves(y, s, n_samples=4_000, rng=0, max_bins=None)
    fpr, tpr, _ = roc_curve(y, s)
    band = report.roc_band()
    observed = np.interp(band["fpr"], fpr, tpr)
    inner = (np.asarray(band["fpr"]) > 0.05) & (np.asarray(band["fpr"]) < 0.95)
    assert np.abs(np.asarray(band["median"])[inner] - observed[inner]).max() < 0.02
    precision, recall, _ = precision_recall_curve(y, s)
    best = np.array([precision[recall >= r].max() for r in (0.2, 0.5, 0.8)])
    medians = [report.precision_at_recall(r).median() for r in (0.2, 0.5, 0.8)]
    np.testing.assert_allclose(medians, best, atol=0.02)


def test_pointwise_bands_cover_the_true_curves() -> None:
    """300 data sets of 600 rows; coverage of the true ROC at five FPRs and of the true
    precision at five recalls by the 95% pointwise bands."""
    fprs = np.array([0.05, 0.1, 0.2, 0.4, 0.6])
    recalls = np.array([0.2, 0.4, 0.6, 0.8, 0.9])
    roc_hits = pr_hits = 0
    for rep in range(300):
        y, s = _data(100 + rep, 600, 0.4)
        report = pe.curves(y, s, n_samples=1_000, rng=rep)
        roc = report.roc_band()
        index = np.searchsorted(np.round(roc["fpr"], 6), np.round(fprs, 6))
        low, high = np.asarray(roc["low"])[index], np.asarray(roc["high"])[index]
        truth = _true_tpr(fprs)
        roc_hits += int(np.sum((low <= truth) & (truth <= high)))
        pr = report.pr_band()
        index = np.searchsorted(np.round(pr["recall"], 6), np.round(recalls, 6))
        low, high = np.asarray(pr["low"])[index], np.asarray(pr["high"])[index]
        truth = _true_precision(recalls, 0.4)
        pr_hits += int(np.sum((low <= truth) & (truth <= high)))
    roc_coverage, pr_coverage = roc_hits / 1_500, pr_hits / 1_500
    # 1,500 intervals each: binomial standard error 0.6 points at 95%.
    assert 0.92 <= roc_coverage <= 0.98, roc_coverage
    assert 0.92 <= pr_coverage <= 0.98, pr_coverage


def test_operating_point_probability_matches_brute_force() -> None:
    y, s = _data(3, 1_000, 0.3)
    report = pe.curves(y, s, n_samples=20_000, rng=1)
    t = 1.0
    tp = int(np.sum((s > t) & (y == 1)))
    fp = int(np.sum((s > t) & (y == 0)))
    fn = int(np.sum((s <= t) & (y == 1)))
    tn = int(np.sum((s <= t) & (y == 0)))
    cells = np.random.default_rng(9).dirichlet([tp + 1, fp + 1, tn + 1, fn + 1], 20_000)
    prec = cells[:, 0] / (cells[:, 0] + cells[:, 1])
    rec = cells[:, 0] / (cells[:, 0] + cells[:, 3])
    x, r = tp / (tp + fp) - 0.02, tp / (tp + fn) - 0.02
    expected = float(np.mean((prec >= x) & (rec >= r)))
    got = report.p_operating_point(t, precision=x, recall=r)
    assert got == pytest.approx(expected, abs=4 * np.sqrt(expected * (1 - expected) * 2 / 20_000))


def test_recall_at_precision_is_zero_when_unreachable_and_bad_input() -> None:
    y, s = _data(4, 500, 0.2)
    assert pe.curves(y, s, rng=0).recall_at_precision(0.999).median() < 0.2
    with pytest.raises(ValueError, match="precision"):
        pe.curves(y, s, rng=0).recall_at_precision(1.5)
    with pytest.raises(ValueError, match="both classes"):
        pe.curves(np.zeros(5, dtype=int), np.arange(5.0))
    with pytest.raises(ValueError, match="y_score"):
        pe.curves([0, 1], [0.1, np.nan])
