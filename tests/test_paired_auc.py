"""Paired ROC AUC: two models' scores on the same rows, one Bayesian-bootstrap weight per row
shared by both. Checked against DeLong's paired variance (reimplemented here from DeLong,
DeLong & Clarke-Pearson 1988), by coverage of the true difference in simulation, and against
scikit-learn's point values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

import probeval as pe


def _components(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's structural components V10 (per positive) and V01 (per negative), midranks."""
    pos, neg = s[y == 1], s[y == 0]
    m, n = len(pos), len(neg)
    ranks = stats.rankdata(np.r_[pos, neg])
    v10 = (ranks[:m] - stats.rankdata(pos)) / n
    v01 = 1.0 - (ranks[m:] - stats.rankdata(neg)) / m
    return v10, v01


def _delong_paired_sd(y: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Standard error of AUC(a) - AUC(b) on the same rows (DeLong's paired test)."""
    a10, a01 = _components(y, a)
    b10, b01 = _components(y, b)
    s10 = np.cov(np.vstack([a10, b10]))
    s01 = np.cov(np.vstack([a01, b01]))
    contrast = np.array([1.0, -1.0])
    var = contrast @ s10 @ contrast / len(a10) + contrast @ s01 @ contrast / len(a01)
    return math.sqrt(var)


def _pair(
    rng: np.random.Generator, n: int, prevalence: float, d_a: float, d_b: float, rho: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Binormal scores of two models whose noise is correlated (rho); returns the population
    AUC difference Phi(d_a / sqrt 2) - Phi(d_b / sqrt 2)."""
    y = (rng.random(n) < prevalence).astype(int)
    y[:2] = [0, 1]
    common = rng.normal(size=n)
    noise_a = math.sqrt(rho) * common + math.sqrt(1 - rho) * rng.normal(size=n)
    noise_b = math.sqrt(rho) * common + math.sqrt(1 - rho) * rng.normal(size=n)
    truth = stats.norm.cdf(d_a / math.sqrt(2)) - stats.norm.cdf(d_b / math.sqrt(2))
    return y, d_a * y + noise_a, d_b * y + noise_b, float(truth)


DATA_SETS = [
    # (n, prevalence, d_a, d_b, rho)
    (400, 0.5, 1.2, 1.0, 0.5),
    (1_000, 0.3, 1.5, 1.5, 0.8),
    (2_000, 0.1, 2.0, 1.6, 0.3),
    (600, 0.6, 0.6, 1.0, 0.9),
    (3_000, 0.2, 1.0, 0.9, 0.0),
    (800, 0.4, 2.5, 2.2, 0.6),
]


@pytest.mark.parametrize(("n", "prevalence", "d_a", "d_b", "rho"), DATA_SETS)
def test_paired_sd_matches_delong(
    n: int, prevalence: float, d_a: float, d_b: float, rho: float
) -> None:
    rng = np.random.default_rng(n)
    y, a, b, _ = _pair(rng, n, prevalence, d_a, d_b, rho)
    cmp = pe.compare_paired(y, y_score_a=a, y_score_b=b, metric="roc_auc", n_samples=20_000, rng=1)
    delong = _delong_paired_sd(y, a, b)
    # First-order agreement; the Monte Carlo error of a 20,000-draw sd is 0.5%.
    assert cmp.difference.std() == pytest.approx(delong, rel=0.10)
    observed = roc_auc_score(y, a) - roc_auc_score(y, b)
    assert cmp.a.observed == pytest.approx(roc_auc_score(y, a), abs=1e-12)
    assert cmp.b.observed == pytest.approx(roc_auc_score(y, b), abs=1e-12)
    assert cmp.difference.mean() == pytest.approx(observed, abs=0.2 * delong)


def test_paired_hdi_covers_the_true_difference() -> None:
    """400 simulated pairs: coverage of the population difference by the 95% HDI."""
    hits, ratios = 0, []
    for rep in range(400):
        rng = np.random.default_rng(10_000 + rep)
        n, prevalence, d_a, d_b, rho = DATA_SETS[rep % len(DATA_SETS)]
        y, a, b, truth = _pair(rng, min(n, 800), prevalence, d_a, d_b, rho)
        cmp = pe.compare_paired(
            y, y_score_a=a, y_score_b=b, metric="roc_auc", n_samples=2_000, rng=rep
        )
        low, high = cmp.difference.hdi()
        hits += low <= truth <= high
    coverage = hits / 400
    # Binomial standard error at 95% over 400 pairs: 1.1 points.
    assert 0.92 <= coverage <= 0.98, (coverage, ratios)


def test_paired_interval_is_narrower_than_the_independent_one() -> None:
    rng = np.random.default_rng(3)
    y, a, b, _ = _pair(rng, 1_500, 0.4, 1.2, 1.0, 0.8)
    paired = pe.compare_paired(y, y_score_a=a, y_score_b=b, metric="roc_auc", rng=0)
    post_a = pe.ScoreSummary.from_scores(y, a).posterior("roc_auc", rng=1)
    post_b = pe.ScoreSummary.from_scores(y, b).posterior("roc_auc", rng=2)
    independent = pe.compare(post_a, post_b)
    ratio = paired.difference.std() / independent.difference.std()
    # With noise correlation 0.8 the paired spread is about half (measured 0.5).
    assert ratio < 0.7, ratio
    # Each model's own posterior is its unpaired one, to Monte Carlo error.
    assert paired.a.std() == pytest.approx(post_a.std(), rel=0.05)


def test_paired_auc_of_a_model_with_itself_is_exactly_zero() -> None:
    rng = np.random.default_rng(5)
    y, a, _, _ = _pair(rng, 500, 0.3, 1.0, 1.0, 0.5)
    cmp = pe.compare_paired(y, y_score_a=a, y_score_b=a.copy(), metric="roc_auc", rng=0)
    assert np.abs(cmp.difference.samples).max() < 1e-12


def test_paired_auc_bad_input() -> None:
    y = np.array([0, 1, 0, 1])
    a = np.array([0.1, 0.8, 0.3, 0.6])
    with pytest.raises(TypeError, match="y_score_b"):
        pe.compare_paired(y, y_score_a=a, metric="roc_auc")
    with pytest.raises(TypeError, match="not both"):
        pe.compare_paired(y, y, y, y_score_a=a, y_score_b=a, metric="roc_auc")
    with pytest.raises(ValueError, match="metric='roc_auc'"):
        pe.compare_paired(y, y_score_a=a, y_score_b=a, metric="average_precision")
    with pytest.raises(ValueError, match="binary"):
        pe.compare_paired([0, 1, 2, 1], y_score_a=a, y_score_b=a, metric="roc_auc")
    with pytest.raises(ValueError, match="same length"):
        pe.compare_paired(y, y_score_a=a[:3], y_score_b=a, metric="roc_auc")
    with pytest.raises(ValueError, match="y_score_a"):
        pe.compare_paired(y, y_score_a=[0.1, np.nan, 0.2, 0.3], y_score_b=a, metric="roc_auc")
    with pytest.raises(ValueError, match="class"):
        pe.compare_paired([1, 1, 1, 1], y_score_a=a, y_score_b=a, metric="roc_auc")
