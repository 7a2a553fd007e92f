"""Across folds: aggregate_folds and compare_folds.

Oracles: baycomp's CorrelatedTTest (test-only dependency) for the correlated t-test, scipy's
Student t for its quantiles, a brute-force two-dimensional grid over (mu, tau) in numpy for the
random-effects posterior (no closed form used), the pooled confusion matrix for the fixed
effect, and coverage in simulation for the random-effects and hierarchical methods."""

from __future__ import annotations

import math

import baycomp
import numpy as np
import pytest
from scipy import stats

import probeval as pe


def _mc_tolerance(p: float, n: int) -> float:
    """Four binomial standard errors of a probability estimated from n draws."""
    return 4.0 * math.sqrt(max(p * (1 - p), 1e-4) / n) + 1e-9


FOLD_SETS = [
    # (seed, folds, runs, test_fraction)
    (0, 5, 1, None),
    (1, 10, 1, None),
    (2, 10, 2, None),
    (3, 8, 1, 0.3),
    (4, 3, 1, None),
]


@pytest.mark.parametrize(("seed", "k", "runs", "test_fraction"), FOLD_SETS)
def test_correlated_t_test_agrees_with_baycomp(
    seed: int, k: int, runs: int, test_fraction: float | None
) -> None:
    rng = np.random.default_rng(seed)
    b = 0.80 + 0.02 * rng.standard_normal(k)
    a = b + 0.01 + 0.01 * rng.standard_normal(k)
    n = 200_000
    ours = pe.compare_folds(
        a,
        b,
        metric="accuracy",
        rope=0.01,
        runs=runs,
        test_fraction=test_fraction,
        n_samples=n,
        rng=seed,
    )
    if test_fraction is None:
        left, rope, right = baycomp.two_on_single(b, a, rope=0.01, runs=runs)
        mean, var, df = baycomp.CorrelatedTTest.compute_statistics(b, a, runs)
    else:
        # baycomp's correction assumes a test fraction of one fold: reproduce its formula
        # with rho / (1 - rho) for the given fraction.
        diff = a - b
        mean, df = float(diff.mean()), k - 1
        var = float(np.var(diff, ddof=1)) * (1 / k + test_fraction / (1 - test_fraction))
        t = stats.t(df, mean, math.sqrt(var))
        left, right = t.cdf(-0.01), t.sf(0.01)
        rope = 1 - left - right
    for got, want in zip(ours.probs(), (left, rope, right), strict=True):
        assert abs(got - want) < _mc_tolerance(want, n), (ours.probs(), (left, rope, right))
    # The posterior is baycomp's Student t: its quantiles within Monte Carlo error.
    t = stats.t(df, mean, math.sqrt(var))
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):
        got = float(np.quantile(ours.samples, q))
        density = t.pdf(t.ppf(q))
        se = math.sqrt(q * (1 - q) / n) / density
        assert abs(got - t.ppf(q)) < 4 * se, (q, got, t.ppf(q))
    assert ours.difference.observed == pytest.approx(mean, abs=1e-15)


def test_correlated_t_of_one_model_agrees_with_baycomp_against_zero() -> None:
    values = np.array([0.71, 0.74, 0.69, 0.73, 0.72, 0.70, 0.75, 0.71, 0.72, 0.73])
    summary = pe.aggregate_folds(
        values, metric="accuracy", method="correlated_t", n_samples=200_000, rng=1
    )
    mean, var, df = baycomp.CorrelatedTTest.compute_statistics(np.zeros(10), values, 1)
    t = stats.t(df, mean, math.sqrt(var))
    low, high = summary.posterior.eti(0.95)
    assert low == pytest.approx(t.ppf(0.025), abs=4e-4)
    assert high == pytest.approx(t.ppf(0.975), abs=4e-4)
    assert summary.posterior.std() == pytest.approx(t.std(), rel=0.01)


def test_fixed_effect_of_confusion_matrices_is_the_pooled_posterior() -> None:
    folds = [pe.ConfusionMatrix.from_counts(tp=40 + i, fp=8, tn=45, fn=7 - i) for i in range(5)]
    summary = pe.aggregate_folds(folds, metric="precision", method="fixed", rng=0)
    pooled = folds[0] + folds[1] + folds[2] + folds[3] + folds[4]
    exact = pooled.posterior("precision")
    assert summary.posterior.mean() == pytest.approx(exact.mean(), abs=1e-12)
    assert summary.posterior.hdi() == pytest.approx(exact.hdi(), abs=1e-12)
    assert summary.posterior.observed == pytest.approx(pooled.observed("precision"))
    assert summary.heterogeneity["df"] == 4


def _logit(x: np.ndarray) -> np.ndarray:
    return np.log(x) - np.log1p(-x)


def _grid_oracle(y: np.ndarray, s: np.ndarray, scale: float) -> dict[str, float]:
    """Posterior moments of mu and tau in y_f ~ N(mu, s_f^2 + tau^2), flat prior on mu,
    half-Cauchy(scale) on tau — by brute force over a (mu, tau) grid, no closed form."""
    spread = float(np.std(y)) + float(s.max())
    mu = np.linspace(y.min() - 40 * spread, y.max() + 40 * spread, 3_000)
    tau = np.linspace(0.0, 200 * spread, 8_000)
    log_post = np.empty((len(tau), len(mu)))
    for start in range(0, len(tau), 250):  # 250 tau rows at a time: bounded memory
        t = tau[start : start + 250]
        total = s[None, None, :] ** 2 + t[:, None, None] ** 2
        log_like = -0.5 * (np.log(total) + (y - mu[None, :, None]) ** 2 / total).sum(axis=2)
        log_post[start : start + 250] = log_like - np.log1p((t[:, None] / scale) ** 2)
    p = np.exp(log_post - log_post.max())
    p /= p.sum()
    p_mu, p_tau = p.sum(axis=0), p.sum(axis=1)
    m = float(p_mu @ mu)
    return {
        "mu_mean": m,
        "mu_sd": math.sqrt(float(p_mu @ (mu - m) ** 2)),
        "tau_mean": float(p_tau @ tau),
    }


@pytest.mark.parametrize(("seed", "k", "tau"), [(0, 5, 0.0), (1, 8, 0.3), (2, 4, 0.6)])
def test_random_effects_matches_a_brute_force_grid(seed: int, k: int, tau: float) -> None:
    rng = np.random.default_rng(seed)
    theta = 1.2 + tau * rng.standard_normal(k)
    s = rng.uniform(0.05, 0.25, k)
    y = theta + s * rng.standard_normal(k)
    # Fold posteriors whose logits are N(y_f, s_f^2).
    posts = [
        pe.Posterior("accuracy", samples=1 / (1 + np.exp(-(yf + sf * rng.standard_normal(50_000)))))
        for yf, sf in zip(y, s, strict=True)
    ]
    y_seen = np.array([_logit(p.samples).mean() for p in posts])
    s_seen = np.array([_logit(p.samples).std(ddof=1) for p in posts])
    # The documented prior: half-Cauchy with scale 2 hypot(median s, sd of the fold values).
    scale = 2 * math.hypot(float(np.median(s_seen)), float(np.std(y_seen, ddof=1)))
    oracle = _grid_oracle(y_seen, s_seen, scale=scale)
    n = 100_000
    summary = pe.aggregate_folds(posts, method="random", n_samples=n, rng=seed)
    mu = _logit(summary.posterior.samples)
    # Monte Carlo error of a mean: sd / sqrt(n); of an sd: sd sqrt((kurtosis - 1) / 4n) — the
    # marginal of mu is heavy-tailed when tau is poorly known, so the kurtosis matters.
    assert abs(mu.mean() - oracle["mu_mean"]) < 4 * oracle["mu_sd"] / math.sqrt(n) + 1e-3
    kurtosis = float(np.mean((mu - mu.mean()) ** 4) / mu.var() ** 2)
    rel = 4 * math.sqrt((kurtosis - 1) / (4 * n)) + 2e-3
    assert mu.std() == pytest.approx(oracle["mu_sd"], rel=rel)
    tau_draws = summary.tau.samples  # type: ignore[union-attr]
    assert abs(tau_draws.mean() - oracle["tau_mean"]) < 4 * tau_draws.std() / math.sqrt(n) + 2e-3


def _simulated_folds(
    rng: np.random.Generator, k: int, mu: float, tau: float
) -> tuple[list[pe.ConfusionMatrix], np.ndarray]:
    """k test sets of 100-2,000 rows whose true accuracy has logit N(mu, tau^2)."""
    theta = mu + tau * rng.standard_normal(k)
    folds = []
    for t in theta:
        rows = int(rng.integers(100, 2_001))
        right = int(rng.binomial(rows, 1 / (1 + math.exp(-t))))
        folds.append(pe.ConfusionMatrix.from_counts(tp=right, fp=0, tn=0, fn=rows - right))
    return folds, theta


@pytest.mark.slow
@pytest.mark.parametrize("tau", [0.0, 0.15, 0.4])
def test_random_effects_cover_the_mean_and_a_new_fold(tau: float) -> None:
    """300 simulated sets of 6 test sets: 95% coverage of the mean performance and of a new
    test set's true performance."""
    reps, mu = 300, 1.5
    hits_mu = hits_new = 0
    for rep in range(reps):
        rng = np.random.default_rng(1_000 + rep)
        folds, _ = _simulated_folds(rng, 6, mu, tau)
        summary = pe.aggregate_folds(folds, metric="recall", n_samples=4_000, rng=rep)
        low, high = summary.posterior.eti()
        hits_mu += low <= 1 / (1 + math.exp(-mu)) <= high
        new = mu + tau * rng.standard_normal()
        low, high = summary.predictive.eti()  # type: ignore[union-attr]
        hits_new += low <= 1 / (1 + math.exp(-new)) <= high
    # 300 reps: binomial standard error 1.3 points at 95%. Without heterogeneity (tau = 0)
    # the truth sits on the prior's boundary and random effects are conservative (measured
    # 99.3% and 100%: a new fold's value is the mean itself): only the lower bound applies.
    upper = 0.99 if tau > 0 else 1.0
    assert 0.92 <= hits_mu / reps <= upper, (tau, hits_mu / reps, hits_new / reps)
    assert 0.92 <= hits_new / reps <= upper, (tau, hits_mu / reps, hits_new / reps)


@pytest.mark.slow
@pytest.mark.parametrize("tau", [0.0, 0.01, 0.02])
def test_hierarchical_comparison_covers_the_mean_difference(tau: float) -> None:
    """300 simulated pairs of models on 6 independent test sets (paired per test set): 95%
    coverage of the true mean accuracy difference."""
    reps, delta = 300, 0.02
    hits = 0
    for rep in range(reps):
        rng = np.random.default_rng(5_000 + rep)
        comparisons = []
        for fold in range(6):
            rows = int(rng.integers(200, 1_501))
            d = delta + tau * rng.standard_normal()
            y = rng.integers(0, 2, rows)
            right_b = rng.random(rows) < 0.8
            # A is right wherever B is, plus on a share d / 0.2 of B's mistakes.
            right_a = right_b | (rng.random(rows) < d / 0.2)
            comparisons.append(
                pe.compare_paired(
                    y,
                    np.where(right_a, y, 1 - y),
                    np.where(right_b, y, 1 - y),
                    metric="accuracy",
                    n_samples=2_000,
                    rng=fold,
                )
            )
        result = pe.compare_folds(comparisons, method="hierarchical", n_samples=4_000, rng=rep)
        low, high = result.eti()
        hits += low <= delta <= high
    assert 0.92 <= hits / reps <= 0.99, (tau, hits / reps)


def test_hierarchical_weights_folds_by_their_own_spread() -> None:
    rng = np.random.default_rng(3)
    big = [pe.Posterior("accuracy", samples=0.85 + 0.002 * rng.standard_normal(20_000))] * 3
    small = [pe.Posterior("accuracy", samples=0.70 + 0.08 * rng.standard_normal(20_000))]
    reference = [pe.Posterior("accuracy", samples=0.80 + 0.002 * rng.standard_normal(20_000))] * 4
    result = pe.compare_folds(big + small, reference, method="hierarchical", rng=0)
    # The imprecise fold (difference -0.10 +- 0.08) barely moves the mean (+0.05 elsewhere).
    assert result.mean() == pytest.approx(0.05, abs=0.01)
    assert result.predictive is not None
    assert result.tau is not None
    assert result.decide().status in ("rejected", "undecided")


def test_results_report_and_serialise() -> None:
    folds = [pe.ConfusionMatrix.from_counts(tp=40 + i, fp=8, tn=45, fn=7 - i) for i in range(5)]
    summary = pe.aggregate_folds(folds, metric="accuracy", rng=0)
    table = summary.folds()
    assert len(table["fold"]) == 5
    assert "shrunk" in table.columns
    # Shrunk estimates lie between each fold's value and the mean.
    mean = summary.posterior.mean()
    for value, shrunk in zip(table["value"], table["shrunk"], strict=True):
        assert min(value, mean) - 1e-3 <= shrunk <= max(value, mean) + 1e-3
    data = summary.to_dict()
    assert data["method"] == "random"
    assert data["folds"] == 5
    assert 0 <= data["i2"] <= 1
    assert "FoldSummary(accuracy, random, 5 folds" in repr(summary)
    cmp = pe.compare_folds(folds, folds[::-1], metric="accuracy", rope=0.01, rng=0)
    assert sum(cmp.probs()) == pytest.approx(1.0)
    assert cmp.to_dict()["fold_differences"] == pytest.approx([-0.04, -0.02, 0.0, 0.02, 0.04])
    assert "FoldComparison(accuracy, correlated_t, 5 folds" in repr(cmp)
    assert pe.decide(cmp).rope == (-0.01, 0.01)
    assert pe.aggregate_folds(folds, metric="accuracy", rng=0) == summary


def test_bad_fold_inputs_are_named() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=5, fp=1, tn=4, fn=2)
    with pytest.raises(ValueError, match="method"):
        pe.aggregate_folds([cm, cm], metric="accuracy", method="mean")
    with pytest.raises(ValueError, match="at least 2 folds"):
        pe.aggregate_folds([cm], metric="accuracy")
    with pytest.raises(TypeError, match="name the metric"):
        pe.aggregate_folds([cm, cm])
    with pytest.raises(TypeError, match=r"folds\[1\]"):
        pe.aggregate_folds([cm, "x"], metric="accuracy")
    with pytest.raises(TypeError, match="correlated_t"):
        pe.aggregate_folds([0.8, 0.9], metric="accuracy", method="random")
    with pytest.raises(ValueError, match="runs"):
        pe.aggregate_folds([0.8, 0.9, 0.7], metric="accuracy", method="correlated_t", runs=2)
    with pytest.raises(ValueError, match="test_fraction"):
        pe.compare_folds([0.8, 0.9], [0.7, 0.8], metric="f1", test_fraction=1.5)
    with pytest.raises(ValueError, match="runs and test_fraction"):
        pe.compare_folds([cm, cm], [cm, cm], metric="f1", method="hierarchical", runs=2)
    with pytest.raises(ValueError, match="same folds"):
        pe.compare_folds([0.8, 0.9, 0.7], [0.7, 0.8], metric="f1")
    with pytest.raises(ValueError, match="different metrics"):
        pe.compare_folds([cm.posterior("f1"), cm.posterior("accuracy")], [0.1, 0.2])
    with pytest.raises(TypeError, match="Comparison per fold"):
        pe.compare_folds([cm, cm])
    with pytest.raises(ValueError, match="finite"):
        pe.compare_folds([0.8, math.nan], [0.7, 0.8], metric="f1")
