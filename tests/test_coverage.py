"""Simulation-based calibration: do 95% HDIs cover the true metric about 95% of the time?

With 1,000 replications the Monte Carlo standard error of a coverage near 0.95 is 0.7
percentage points, so the accepted band 92-98% is more than four standard errors wide on each
side: a miss is a bug, not bad luck. Seeds are fixed, so the numbers printed are reproducible.
"""

from __future__ import annotations

import numpy as np

import probeval as pe

REPLICATIONS = 1000


def _f1(p: np.ndarray) -> float:
    tp, fp, _, fn = p
    return float(2 * tp / (2 * tp + fp + fn))


def test_f1_hdi_covers_truth_drawn_from_the_prior() -> None:
    """Truth ~ Dirichlet(1, 1, 1, 1), the model's own prior: coverage is exactly 95% in
    expectation, for any sample size."""
    rng = np.random.default_rng(2026)
    hits = 0
    for rep in range(REPLICATIONS):
        p = rng.dirichlet(np.ones(4))
        tp, fp, tn, fn = rng.multinomial(200, p)
        cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
        low, high = cm.posterior("f1", n_samples=4000, rng=rep).hdi(0.95)
        hits += low <= _f1(p) <= high
    coverage = hits / REPLICATIONS
    print(f"F1 95% HDI coverage, truth from the prior: {coverage:.3f}")
    assert 0.92 <= coverage <= 0.98


def test_f1_hdi_covers_a_fixed_truth() -> None:
    """A fixed classifier (true F1 = 0.7164) evaluated on 1,000 rows per replication."""
    rng = np.random.default_rng(7)
    p = np.array([5285, 3184, 8000, 1000]) / 17469
    truth = _f1(p)
    hits = 0
    widths = []
    for rep in range(REPLICATIONS):
        tp, fp, tn, fn = rng.multinomial(1000, p)
        cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
        low, high = cm.posterior("f1", n_samples=4000, rng=10_000 + rep).hdi(0.95)
        hits += low <= truth <= high
        widths.append(high - low)
    coverage = hits / REPLICATIONS
    print(
        f"F1 95% HDI coverage, fixed truth {truth:.4f}: {coverage:.3f}, "
        f"mean width {np.mean(widths):.4f}"
    )
    assert 0.92 <= coverage <= 0.98


def test_exact_accuracy_hdi_covers_a_fixed_truth() -> None:
    rng = np.random.default_rng(8)
    truth = 0.83
    hits = 0
    for _ in range(REPLICATIONS):
        correct = int(rng.binomial(500, truth))
        cm = pe.ConfusionMatrix.from_counts(tp=correct, fp=500 - correct, tn=0, fn=0)
        low, high = cm.posterior("accuracy").hdi(0.95)
        hits += low <= truth <= high
    coverage = hits / REPLICATIONS
    print(f"accuracy exact 95% HDI coverage: {coverage:.3f}")
    assert 0.92 <= coverage <= 0.98


def test_mcc_joint_hdi_covers_truth_drawn_from_the_prior() -> None:
    rng = np.random.default_rng(99)
    hits = 0
    for rep in range(REPLICATIONS):
        p = rng.dirichlet(np.ones(4))
        tp, fp, tn, fn = rng.multinomial(300, p)
        cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
        ev = pe.evaluate(cm, metrics=["mcc"], joint=True, n_samples=4000, rng=rep)
        low, high = ev["mcc"].hdi(0.95)
        tp_, fp_, tn_, fn_ = p
        mcc = (tp_ * tn_ - fp_ * fn_) / np.sqrt(
            (tp_ + fp_) * (tp_ + fn_) * (tn_ + fp_) * (tn_ + fn_)
        )
        hits += low <= mcc <= high
    coverage = hits / REPLICATIONS
    print(f"MCC 95% HDI coverage, truth from the prior: {coverage:.3f}")
    assert 0.92 <= coverage <= 0.98
