"""Exact, sampling-free posteriors of binary F1 and Jaccard.

Under p ~ Dirichlet(TP+a_TP, FP+a_FP, TN+a_TN, FN+a_FN) the Jaccard index J = p_TP / (p_TP + p_FP
+ p_FN) is Beta(TP+a_TP, FP+FN+a_FP+a_FN) and F1 = 2J / (1 + J). The oracles here are scipy's
Beta, numerical integration of the transformed density, and the Dirichlet sampler itself.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import probeval as pe

SHAPES = [(2.0, 3.0), (5286.0, 4186.0), (1.0, 7.5), (40.0, 1.5), (3e6, 2e6), (1.3, 1.1)]


def f1_of(j: np.ndarray | float) -> np.ndarray | float:
    return 2.0 * j / (1.0 + j)


def f1_posterior(a: float, b: float) -> pe.Posterior:
    """The exact F1 posterior whose Jaccard index is Beta(a, b), built the public way: whole
    counts plus a per-cell prior holding the fractional rest."""
    tp, fp = math.floor(a) - 1, math.floor(b) - 1
    cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=5, fn=0)
    # Per-cell prior, rows actual 0/1, columns predicted 0/1: [[tn, fp], [fn, tp]].
    prior = np.array([[1.0, b - fp - 0.5], [0.5, a - tp]])
    post = cm.posterior("f1", prior=prior, rng=0)
    assert post.exact
    assert post.beta_params == (a, b)
    return post


def moment(a: float, b: float, g: object) -> float:
    """E[g(F1)] by adaptive quadrature against scipy's Beta density, split at the bulk."""
    dist = stats.beta(a, b)
    lo, hi = dist.ppf(1e-15), dist.isf(1e-15)
    edges = np.linspace(lo, hi, 41)
    total = 0.0
    for left, right in itertools.pairwise(edges):
        value, _ = integrate.quad(
            lambda j: g(f1_of(j)) * dist.pdf(j),  # type: ignore[operator]
            left,
            right,
            epsabs=0,
            epsrel=1e-13,
            limit=200,
        )
        total += value
    return total


@pytest.mark.parametrize(("a", "b"), SHAPES)
def test_quantiles_cdf_and_density_are_the_transformed_beta(a: float, b: float) -> None:
    post = f1_posterior(a, b)
    q = np.array([0.001, 0.025, 0.3, 0.5, 0.975, 0.999])
    np.testing.assert_allclose(post.quantile(q), f1_of(stats.beta.ppf(q, a, b)), rtol=1e-10)
    assert post.median() == pytest.approx(f1_of(stats.beta.median(a, b)), rel=1e-10)
    x = post.quantile(np.array([0.01, 0.4, 0.9]))
    np.testing.assert_allclose(post.cdf(x), stats.beta.cdf(x / (2 - x), a, b), rtol=1e-10)
    assert post.prob_above(x[1]) == pytest.approx(stats.beta.sf(x[1] / (2 - x[1]), a, b), 1e-10)
    # Density: the derivative of the exact cdf.
    h = 1e-6 * (x[2] - x[0])
    numeric = (post.cdf(x + h) - post.cdf(x - h)) / (2 * h)
    np.testing.assert_allclose(post.pdf(x), numeric, rtol=1e-5)
    low, high = post.eti(0.9)
    assert (low, high) == pytest.approx(
        tuple(f1_of(np.array(stats.beta.interval(0.9, a, b)))), rel=1e-10
    )


def test_outside_the_range_the_law_has_no_mass() -> None:
    post = f1_posterior(5286.0, 4186.0)
    np.testing.assert_array_equal(post.cdf(np.array([-0.5, 1.5, 3.0])), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(post.pdf(np.array([-0.5, 1.5, 3.0])), [0.0, 0.0, 0.0])
    assert post.prob_above(2.5) == 0.0
    assert post.prob_below(-1.0) == 0.0


@pytest.mark.parametrize(("a", "b"), SHAPES)
def test_mean_and_variance_match_numerical_integration(a: float, b: float) -> None:
    post = f1_posterior(a, b)
    mean = moment(a, b, lambda f: f)
    var = moment(a, b, lambda f: (f - mean) ** 2)
    assert post.mean() == pytest.approx(mean, rel=1e-11)
    assert post.var() == pytest.approx(var, rel=1e-8)


def test_huge_counts_keep_their_precision() -> None:
    # At 1e12 counts the variance comes from quadrature (the series would cancel); the delta
    # method is exact there to O(1/n).
    a, b = 2e12 + 1, 1e12 + 2
    post = pe.ConfusionMatrix.from_counts(tp=2e12, fp=6e11, tn=1.0, fn=4e11).posterior("f1")
    assert post.beta_params == (a, b)
    m = a / (a + b)
    delta_sd = 2 / (1 + m) ** 2 * math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert post.std() == pytest.approx(delta_sd, rel=1e-8)
    assert post.mean() == pytest.approx(0.8, rel=1e-12)
    low, high = post.hdi()
    assert post.cdf(high) - post.cdf(low) == pytest.approx(0.95, abs=1e-8)


@pytest.mark.parametrize(("a", "b"), SHAPES)
def test_mode_maximises_the_exact_density(a: float, b: float) -> None:
    post = pe.Posterior("f1", beta=(a, b), f1_of_beta=True)
    mode = post.mode()
    lo, hi = post.quantile(1e-9), post.quantile(1 - 1e-9)
    found = optimize.minimize_scalar(
        lambda f: -post.pdf(f), bounds=(lo, hi), method="bounded", options={"xatol": 1e-14}
    )
    assert post.pdf(mode) >= -found.fun * (1 - 1e-9)


@pytest.mark.parametrize(("a", "b"), SHAPES)
@pytest.mark.parametrize("ci", [0.5, 0.9, 0.95])
def test_hdi_is_the_shortest_interval_of_its_mass(a: float, b: float, ci: float) -> None:
    post = pe.Posterior("f1", beta=(a, b), f1_of_beta=True)
    low, high = post.hdi(ci)
    assert stats.beta.cdf(high / (2 - high), a, b) - stats.beta.cdf(
        low / (2 - low), a, b
    ) == pytest.approx(ci, abs=1e-9)
    # Independent check: minimise the width of [F1(Q(p)), F1(Q(p + ci))] over p with scipy.
    width = lambda p: f1_of(stats.beta.ppf(p + ci, a, b)) - f1_of(stats.beta.ppf(p, a, b))  # noqa: E731
    grid = np.linspace(0, 1 - ci, 2001)
    best = grid[np.argmin([width(p) for p in grid])]
    step = (1 - ci) / 2000
    found = optimize.minimize_scalar(
        width,
        bounds=(max(0.0, best - step), min(1 - ci, best + step)),
        method="bounded",
        options={"xatol": 1e-15},
    )
    assert high - low <= found.fun * (1 + 1e-9) + 1e-15
    assert post.hdi(ci, multimodal=True) == [(low, high)]
    eti_low, eti_high = post.eti(ci)
    assert high - low <= eti_high - eti_low


def test_the_law_is_the_dirichlet_law() -> None:
    # joint=True draws F1 from Dirichlet samples; the exact law must agree within Monte Carlo
    # error (standard error of a quantile: sqrt(q (1 - q) / n) / density).
    cm = pe.ConfusionMatrix.from_counts(tp=40, fp=25, tn=300, fn=12)
    n = 400_000
    exact = cm.posterior("f1")
    drawn = cm.posterior("f1", joint=True, n_samples=n, rng=7)
    assert exact.exact
    assert not drawn.exact
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):
        x = exact.quantile(q)
        se = math.sqrt(q * (1 - q) / n) / exact.pdf(x)
        assert abs(np.quantile(drawn.samples, q) - x) < 4 * se
    se_mean = exact.std() / math.sqrt(n)
    assert abs(drawn.samples.mean() - exact.mean()) < 4 * se_mean
    # And its own lazy samples follow it.
    lazy = cm.posterior("f1", n_samples=n, rng=8).samples
    assert abs(lazy.mean() - exact.mean()) < 4 * se_mean
    assert abs(lazy.std() / exact.std() - 1) < 4 / math.sqrt(2 * n)


def test_hdi_covers_the_true_f1_at_its_nominal_rate() -> None:
    # Draw the true cell probabilities from the prior, simulate 150 labelled predictions and
    # check the exact 95% HDI covers the true F1: 2000 replications, 3 standard errors.
    rng = np.random.default_rng(20261121)
    reps, hits = 2000, 0
    for _ in range(reps):
        p = rng.dirichlet(np.ones(4))
        tp, fp, tn, fn = rng.multinomial(150, p)
        truth = 2 * p[0] / (2 * p[0] + p[1] + p[3])
        low, high = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn).posterior("f1").hdi()
        hits += low <= truth <= high
    se = math.sqrt(0.95 * 0.05 / reps)
    assert abs(hits / reps - 0.95) < 3 * se


def test_jaccard_is_the_dirichlet_beta_marginal() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=30, fp=7, tn=50, fn=4)
    for prior, (a, b) in [("uniform", (31, 13)), ("jeffreys", (30.5, 12)), (2.0, (32, 15))]:
        post = cm.posterior("jaccard", prior=prior)
        assert post.exact
        assert post.beta_params == (a, b)
        assert post.mean() == pytest.approx(stats.beta.mean(a, b), rel=1e-12)
        assert post.hdi(0.9) == pytest.approx(pe.Posterior.from_beta(a, b).hdi(0.9), rel=1e-12)
    per_cell = np.array([[3.0, 0.5], [2.0, 1.0]])  # rows: actual 0/1; columns: predicted 0/1
    post = cm.posterior("jaccard", prior=per_cell)
    # TP is actual 1 / predicted 1, FP actual 0 / predicted 1, FN actual 1 / predicted 0.
    assert post.beta_params == (31.0, 7 + 4 + 0.5 + 2.0)


def test_f1_is_sampled_where_its_exact_form_does_not_apply() -> None:
    # Jeffreys prior and no true positives: J ~ Beta(0.5, ...) — F1's density is then not
    # unimodal and F1 is drawn from the Dirichlet instead.
    cm = pe.ConfusionMatrix.from_counts(tp=0, fp=4, tn=20, fn=3)
    assert not cm.posterior("f1", prior="jeffreys").exact
    assert cm.posterior("f1").exact  # uniform prior: Beta(1, 9)
    assert not cm.posterior("f1", joint=True).exact
    # joint=True draws every metric from the same Dirichlet draws.
    assert not cm.posterior("jaccard", prior="jeffreys", joint=True).exact


def test_evaluate_reports_the_exact_law_and_updates_sequentially() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=30, fn=5)
    ev = pe.evaluate(cm, metrics=["f1", "jaccard", "mcc"], rng=1)
    assert ev["f1"].exact_law == "2J / (1 + J), J ~ Beta(51, 17)"
    assert ev["jaccard"].exact_law == "Beta(51, 17)"
    assert ev["mcc"].exact_law is None
    table = ev.summary()
    assert table["median"][0] == pytest.approx(f1_of(stats.beta.median(51, 17)), rel=1e-10)
    assert pe.metric_info("f1").exact
    assert not pe.metric_info("mcc").exact
    later = pe.evaluate(cm, metrics=["f1"], prior=ev.as_prior())
    assert later["f1"].beta_params == (101, 32)


def test_service_calls_give_the_same_exact_numbers() -> None:
    counts = {"tp": 40, "fp": 10, "tn": 35, "fn": 15}
    cm = pe.ConfusionMatrix.from_counts(**counts)
    for metric, prior in [("f1", 1.0), ("jaccard", 0.5), ("f1", 0.5)]:
        post = cm.posterior(metric, prior=prior)
        assert post.exact
        assert pe.metric_interval(metric, **counts, prior=prior) == post.hdi()
        assert pe.metric_interval(metric, **counts, prior=prior, kind="eti", ci=0.8) == (
            pytest.approx(post.eti(0.8), rel=1e-15)
        )
        summary = pe.metric_summary(metric, **counts, prior=prior)
        assert summary == pytest.approx(
            {
                "mean": post.mean(),
                "median": post.median(),
                "std": post.std(),
                "hdi_low": post.hdi()[0],
                "hdi_high": post.hdi()[1],
            },
            rel=1e-14,
        )
    # F1 with J ~ Beta(0.5, ...) is sampled, so it has no exact interval.
    with pytest.raises(ValueError, match="no exact posterior"):
        pe.metric_interval("f1", tp=0, fp=3, tn=4, fn=1, prior=0.5)
    sampled = pe.metric_summary("f1", tp=0, fp=3, tn=4, fn=1, prior=0.5, rng=3)
    post = pe.ConfusionMatrix.from_counts(tp=0, fp=3, tn=4, fn=1).posterior("f1", prior=0.5, rng=3)
    assert not post.exact
    expected = post.summary()
    assert sampled == {key: expected[key] for key in sampled}


def test_service_calls_follow_the_posterior_where_jaccard_is_sampled() -> None:
    # No TP, FP or FN and a zero prior: J's Beta is improper, so jaccard is drawn from the
    # Dirichlet (every draw 0/0, i.e. zero_division) by both paths alike.
    cm = pe.ConfusionMatrix.from_counts(tp=0, fp=0, tn=5, fn=0)
    post = cm.posterior("jaccard", prior=0.0, rng=1, zero_division=1)
    assert not post.exact
    quick = pe.metric_summary("jaccard", tp=0, fp=0, tn=5, fn=0, prior=0.0, rng=1, zero_division=1)
    expected = post.summary()
    assert quick == {key: expected[key] for key in quick}
    assert quick["median"] == 1.0
