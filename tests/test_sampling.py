"""Posterior samples against their analytic distributions and a brute-force numpy model.

Every test uses a fixed seed. Kolmogorov-Smirnov tests reject at p < 1e-3; moment checks use
five Monte Carlo standard errors. A failure is therefore either a 1-in-1000 event for that seed
or a real bug, never noise that a rerun would hide.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import probeval as pe
from probeval import _core

KS_ALPHA = 1e-3


@pytest.mark.parametrize(
    ("a", "b"),
    # (Beta(2, 0.02) is tested as Beta(0.02, 2): half its mass lies within 1e-16 of 1, where
    # doubles cannot resolve it, so a KS test there would measure float granularity.)
    [
        (1.0, 1.0),
        (0.5, 0.5),
        (0.05, 3.0),
        (0.02, 2.0),
        (2.0, 0.3),
        (7.0, 3.0),
        (5286.0, 3185.0),
        (1e9, 3.0),
    ],
)
def test_beta_draws_follow_the_beta_distribution(a: float, b: float) -> None:
    samples = _core.beta_draws(a, b, 40_000, 2024)
    assert samples.shape == (40_000,)
    assert np.all((samples >= 0) & (samples <= 1))
    assert stats.kstest(samples, stats.beta(a, b).cdf).pvalue > KS_ALPHA
    sd = stats.beta.std(a, b)
    assert abs(samples.mean() - stats.beta.mean(a, b)) < 5 * sd / np.sqrt(samples.size)


def test_dirichlet_draws_marginals_are_beta() -> None:
    alpha = np.array([3.0, 0.5, 10.0, 1.0])
    draws = _core.dirichlet_draws(alpha, 30_000, 7)
    assert draws.shape == (30_000, 4)
    np.testing.assert_allclose(draws.sum(axis=1), 1.0, atol=1e-12)
    for j, a_j in enumerate(alpha):
        marginal = stats.beta(a_j, alpha.sum() - a_j)
        assert stats.kstest(draws[:, j], marginal.cdf).pvalue > KS_ALPHA


CM = pe.ConfusionMatrix.from_counts(tp=40, fp=12, tn=70, fn=9)


@pytest.mark.parametrize(
    ("metric", "a", "b"),
    [
        ("precision", 41, 13),  # Beta(TP + 1, FP + 1)
        ("recall", 41, 10),  # Beta(TP + 1, FN + 1)
        ("specificity", 71, 13),
        ("accuracy", 112, 23),  # Beta(TP + TN + 2, FP + FN + 2): the Dirichlet marginal
        ("prevalence", 51, 84),
    ],
)
def test_joint_dirichlet_marginals_match_their_analytic_beta(metric: str, a: int, b: int) -> None:
    post = CM.posterior(metric, joint=True, n_samples=40_000, rng=11)
    assert post.beta_params == (a, b)
    assert stats.kstest(post.samples, stats.beta(a, b).cdf).pvalue > KS_ALPHA


def test_joint_metrics_share_their_draws() -> None:
    ev = pe.evaluate(CM, metrics=["precision", "recall", "f1"], joint=True, rng=3, n_samples=5000)
    p, r, f1 = (ev[m].samples for m in ("precision", "recall", "f1"))
    np.testing.assert_allclose(f1, 2 * p * r / (p + r), rtol=1e-12)


def _numpy_reference(alpha: np.ndarray, n: int, seed: int) -> dict[str, np.ndarray]:
    """The same model written the obvious way: rng.dirichlet + vectorised metrics."""
    p = np.random.default_rng(seed).dirichlet(alpha, size=n)
    tp, fp, tn, fn = p.T
    mcc = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return {
        "f1": 2 * tp / (2 * tp + fp + fn),
        "mcc": mcc,
        "kappa": 2 * (tp * tn - fn * fp) / ((tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)),
        "balanced_accuracy": 0.5 * (tp / (tp + fn) + tn / (tn + fp)),
        "jaccard": tp / (tp + fp + fn),
    }


@pytest.mark.parametrize("prior", [1.0, 0.5])
def test_dirichlet_metrics_match_a_numpy_implementation(prior: float) -> None:
    names = ["f1", "mcc", "kappa", "balanced_accuracy", "jaccard"]
    n = 40_000
    ev = pe.evaluate(CM, metrics=names, prior=prior, n_samples=n, rng=5)
    alpha = np.array([40, 12, 70, 9], dtype=float) + prior
    reference = _numpy_reference(alpha, n, seed=6)
    for name in names:
        ours, ref = ev[name].samples, reference[name]
        assert stats.ks_2samp(ours, ref).pvalue > KS_ALPHA, name
        standard_error = np.sqrt(ours.var() / n + ref.var() / n)
        assert abs(ours.mean() - ref.mean()) < 5 * standard_error, name


def test_tiny_priors_give_finite_draws_in_range() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=0, fp=0, tn=3, fn=0)
    ev = pe.evaluate(cm, metrics=["f1", "mcc", "precision"], prior=1e-3, joint=True, rng=0)
    for name in ("f1", "mcc", "precision"):
        samples = ev[name].samples
        assert np.isfinite(samples).all()
        low, high = pe.metric_info(name).bounds
        assert samples.min() >= low
        assert samples.max() <= high


def test_huge_counts_sample_without_overflow() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=10**12, fp=3 * 10**11, tn=2 * 10**12, fn=10**11)
    post = cm.posterior("f1", rng=1, n_samples=20_000)
    f1 = cm.observed("f1")
    # Posterior sd of F1 here is ~3e-7; the mean must sit within a few sd of the observed value.
    assert abs(post.mean() - f1) < 5e-6
    assert np.isfinite(post.samples).all()
