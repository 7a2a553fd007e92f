"""Calibration with uncertainty: bins and losses against scikit-learn, reliability bands'
coverage of the true calibration curve in simulation, the loss posteriors' spread against the
bootstrap standard error, and the ECE against a perfectly calibrated model's."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

import probeval as pe


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
def test_bins_and_losses_match_sklearn(strategy: str) -> None:
    rng = np.random.default_rng(1)
    scores = rng.beta(2, 3, 3_000)
    y = rng.random(3_000) < scores**1.3
    report = pe.calibration(y, scores, n_bins=8, strategy=strategy, rng=0)
    prob_true, prob_pred = calibration_curve(y, scores, n_bins=8, strategy=strategy)
    table = report.bins()
    np.testing.assert_allclose(table["rate"], prob_true, atol=1e-12)
    np.testing.assert_allclose(table["mean_score"], prob_pred, atol=1e-12)
    assert report.brier.observed == pytest.approx(brier_score_loss(y, scores), abs=1e-12)
    assert report.log_loss.observed == pytest.approx(log_loss(y, scores), abs=1e-12)
    # The Bayesian bootstrap's spread of a mean is the standard error, to Monte Carlo error.
    rows = (scores - y) ** 2
    assert report.brier.std() == pytest.approx(rows.std() / np.sqrt(rows.size), rel=0.06)


def test_reliability_bands_cover_the_true_calibration_curve() -> None:
    """200 data sets of 600 rows (10 bins of 60, rates from 0.001 to 0.95): each bin's 95% HDI
    against the mean true P(y | score) of its rows."""
    hits, total = 0, 0
    for rep in range(200):
        rng = np.random.default_rng(500 + rep)
        scores = rng.random(600)
        true_p = 0.001 + 0.95 * scores**2  # miscalibrated, with near-empty low bins
        y = rng.random(600) < true_p
        report = pe.calibration(y, scores, n_bins=10, n_samples=2_000, rng=rep)
        table = report.bins()
        index = np.clip(np.searchsorted(report.edges, scores, side="right") - 1, 0, 9)
        truth = np.bincount(index, weights=true_p, minlength=10) / np.bincount(index, minlength=10)
        low, high = np.asarray(table["hdi_low"]), np.asarray(table["hdi_high"])
        hits += int(np.sum((low <= truth) & (truth <= high)))
        total += truth.size
    coverage = hits / total
    # 2,000 intervals: binomial standard error 0.5 points at 95%.
    assert 0.92 <= coverage <= 0.98, coverage


def test_ece_is_judged_against_a_calibrated_models_ece() -> None:
    calibrated, miscalibrated = [], []
    for rep in range(20):
        rng = np.random.default_rng(900 + rep)
        scores = rng.random(2_000)
        y = rng.random(2_000) < scores
        calibrated.append(pe.calibration(y, scores, rng=rep).p_miscalibrated)
        shrunk = 0.25 + 0.5 * scores  # too timid: the ECE is 0.125 in the population
        miscalibrated.append(pe.calibration(y, shrunk, rng=rep).p_miscalibrated)
    # A calibrated model's ECE is no larger than the calibrated reference's, on average.
    assert 0.2 < np.mean(calibrated) < 0.8
    assert min(miscalibrated) > 0.99
    report = pe.calibration(y, shrunk, rng=0)
    assert report.ece.hdi()[0] <= 0.125 <= report.ece.hdi()[1] + 0.01


def test_a_bin_of_all_zeros_gets_a_proper_interval() -> None:
    scores = np.r_[np.full(50, 0.01), np.full(50, 0.9)]
    y = np.r_[np.zeros(50, dtype=int), np.ones(45, dtype=int), np.zeros(5, dtype=int)]
    table = pe.calibration(y, scores, n_bins=2, rng=0).bins()
    assert table["rate"][0] == 0.0
    assert 0.0 <= table["hdi_low"][0] < table["hdi_high"][0] < 0.06


def test_calibration_bad_input() -> None:
    with pytest.raises(ValueError, match="y_score"):
        pe.calibration([0, 1], [0.2, 1.5])
    with pytest.raises(ValueError, match="binary"):
        pe.calibration([0, 1, 2], [0.2, 0.5, 0.9])
    with pytest.raises(ValueError, match="strategy"):
        pe.calibration([0, 1], [0.2, 0.5], strategy="kmeans")
    with pytest.raises(ValueError, match="n_bins"):
        pe.calibration([0, 1], [0.2, 0.5], n_bins=0)
    with pytest.raises(ValueError, match="same length"):
        pe.calibration([0, 1], [0.2])
