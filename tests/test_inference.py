"""Comparisons, decisions, intervals and the KDE: definitions, oracles and coverage."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import probeval as pe


def _comparison(d: np.ndarray, rope: object) -> pe.Comparison:
    """A comparison whose difference samples are exactly ``d`` (b is constant)."""
    a = pe.Posterior.from_samples(d + 0.0, bounds=None)
    b = pe.Posterior.from_samples(np.zeros_like(d), bounds=None)
    return pe.compare(a, b, rope=rope)


def test_probabilities_equal_their_definitions_on_constructed_samples() -> None:
    d = np.array([-0.3, -0.02, -0.01, 0.0, 0.0, 0.005, 0.01, 0.02, 0.4, 0.5])
    c = _comparison(d, rope=0.01)
    assert c.rope == (-0.01, 0.01)
    np.testing.assert_array_equal(c.samples, d)
    # P(d > 0) = 5/10, P(d < 0) = 3/10 (ties at 0 count for neither side).
    assert c.p_direction == pytest.approx(0.5)
    # ROPE is closed: -0.01, 0, 0, 0.005, 0.01 are inside.
    assert c.p_rope == pytest.approx(0.5)
    assert c.p_sig == pytest.approx(0.5)
    assert c.p_sig_pos == pytest.approx(0.3)
    assert c.p_sig_neg == pytest.approx(0.2)
    assert c.p_sig_pos + c.p_sig_neg == pytest.approx(c.p_sig)
    asymmetric = _comparison(d, rope=(-0.5, 0.0))
    assert asymmetric.p_rope == pytest.approx(0.5)
    assert asymmetric.p_sig_pos == pytest.approx(0.5)
    assert asymmetric.p_sig_neg == pytest.approx(0.0)
    assert asymmetric.bf_sig is None  # samples know no random baseline


def test_bf_sig_follows_its_definition() -> None:
    a = pe.ConfusionMatrix.from_counts(tp=90, fp=10, tn=85, fn=15)
    b = pe.ConfusionMatrix.from_counts(tp=70, fp=30, tn=75, fn=25)
    c = pe.compare(a.posterior("f1", rng=0), b.posterior("f1", rng=0), rope=0.02, rng=1)
    assert c.random is not None
    assert c.bf_sig == pytest.approx(c.p_sig / c.random.p_sig)
    assert c.bf_sig > 1  # a real difference is significant more often than a random one
    # The random comparison compares the two random baselines.
    assert c.random.a.observed == pytest.approx(a.random_baseline().observed("f1"))
    wide = pe.compare(a.posterior("f1", rng=0), b.posterior("f1", rng=0), rope=0.9, rng=1)
    assert wide.random is not None
    assert wide.random.p_sig == 0.0
    assert wide.p_sig == 0.0
    assert math.isnan(wide.bf_sig)


def test_compare_draws_independent_samples_even_for_equal_seeds() -> None:
    """Two posteriors computed with the same rng share their random numbers; subtracting
    those samples would understate the spread of the difference."""
    a = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=8).posterior("f1", rng=0)
    b = pe.ConfusionMatrix.from_counts(tp=48, fp=12, tn=41, fn=9).posterior("f1", rng=0)
    naive = a.samples - b.samples
    c = pe.compare(a, b, rng=5)
    expected = a.var() + b.var()
    assert np.var(naive) < 0.5 * expected  # the trap: far too narrow
    assert np.var(c.samples) == pytest.approx(expected, rel=0.05)


def test_vs_random() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=80, fp=20, tn=70, fn=30)
    c = pe.vs_random(cm, "accuracy", rope=0.02, rng=3)
    assert c.b.observed == pytest.approx(0.5)  # a random binary classifier: accuracy 1/2
    assert c.p_sig_pos > 0.99
    assert c.bf_sig is not None
    assert c.bf_sig > 1
    mc = pe.ConfusionMatrix(np.array([[30, 5, 5], [4, 20, 6], [2, 3, 25]]))
    assert pe.vs_random(mc, "accuracy", rng=0).b.observed == pytest.approx(1 / 3)


def test_decision_outcomes_and_precision() -> None:
    post = pe.Posterior.from_beta(800, 200)  # accuracy ~ 0.8, 95% HDI ~ [0.775, 0.824]
    assert pe.decide(post, rope=(0.7, 0.9)).status == "accepted"
    assert pe.decide(post, rope=(0.85, 1.0)).status == "rejected"
    assert pe.decide(post, rope=(0.0, 0.77)).status == "rejected"
    assert pe.decide(post, rope=(0.79, 1.0)).status == "undecided"
    wide = pe.decide(post, rope=(0.7, 0.9), precision=0.01)
    assert wide.status == "accepted"
    assert not wide.final  # width ~0.05 > 0.01
    assert pe.decide(post, rope=(0.7, 0.9), precision=0.1).final
    low, high = post.hdi(0.9)
    d = pe.decide(post, rope=(0.7, 0.9), ci=0.9)
    assert d.hdi == (low, high)
    assert d.width == pytest.approx(high - low)
    assert json.loads(json.dumps(d.to_dict()))["status"] == "accepted"
    assert "accepted" in repr(d)


def test_no_worse_than_reference_default_rope() -> None:
    reference = pe.Posterior.from_beta(800, 200)
    candidate = pe.Posterior.from_beta(8200, 1800)  # 0.82, much narrower
    d = pe.decide(candidate, reference=reference)
    assert d.rope == (reference.hdi(0.95)[0], 1.0)
    assert d.status == "accepted"
    worse = pe.decide(pe.Posterior.from_beta(7000, 3000), reference=reference)
    assert worse.status == "rejected"
    with pytest.raises(TypeError, match="rope"):
        pe.decide(candidate)


def test_decide_on_a_comparison_uses_its_rope() -> None:
    c = _comparison(np.linspace(0.05, 0.15, 1001), rope=0.01)
    d = c.decide()
    assert d.status == "rejected"
    assert d.rope == (-0.01, 0.01)
    assert pe.decide(c, rope=(0.0, 1.0)).status == "accepted"


def test_comparison_reporting() -> None:
    a = pe.ConfusionMatrix.from_counts(tp=90, fp=10, tn=85, fn=15)
    b = pe.ConfusionMatrix.from_counts(tp=70, fp=30, tn=75, fn=25)
    c = pe.compare(a.posterior("accuracy"), b.posterior("accuracy"), rope=0.01, rng=0)
    payload = json.loads(json.dumps(c.to_dict()))
    for key in ("p_direction", "p_rope", "p_sig", "p_sig_pos", "p_sig_neg", "bf_sig", "hdi_low"):
        assert key in payload
    assert payload["observed_a"] == pytest.approx(175 / 200)
    assert "Comparison(accuracy, independent" in repr(c)


def _joint_truth() -> tuple[np.ndarray, float]:
    """Cell probabilities of (truth, A, B), two correlated models; the true accuracy gap."""
    p = np.zeros((2, 2, 2))
    # Prevalence 0.4. Model A is right 85% of the time; B copies A 85% of the time and is
    # otherwise right with probability 0.6 — its errors overlap A's.
    for y, prevalence in ((0, 0.6), (1, 0.4)):
        for a_correct, pa in ((True, 0.85), (False, 0.15)):
            for copies, pc in ((True, 0.85), (False, 0.15)):
                b_options = [(a_correct, 1.0)] if copies else [(True, 0.6), (False, 0.4)]
                for b_correct, pb in b_options:
                    a_label = y if a_correct else 1 - y
                    b_label = y if b_correct else 1 - y
                    p[y, a_label, b_label] += prevalence * pa * pc * pb
    accuracy_a = p[0, 0, :].sum() + p[1, 1, :].sum()
    accuracy_b = p[0, :, 0].sum() + p[1, :, 1].sum()
    return p, float(accuracy_a - accuracy_b)


def test_paired_comparison_covers_the_true_difference_and_is_narrower() -> None:
    p, truth = _joint_truth()
    rng = np.random.default_rng(11)
    cells = np.array([(y, a, b) for y in (0, 1) for a in (0, 1) for b in (0, 1)])
    replications, hits, paired_widths, independent_widths = 500, 0, [], []
    for rep in range(replications):
        counts = rng.multinomial(400, p.reshape(-1))
        rows = np.repeat(cells, counts, axis=0)
        y, a, b = rows[:, 0], rows[:, 1], rows[:, 2]
        paired = pe.compare_paired(y, a, b, metric="accuracy", n_samples=4000, rng=rep)
        low, high = paired.hdi(0.95)
        hits += low <= truth <= high
        paired_widths.append(high - low)
        independent = pe.compare(
            pe.evaluate(y, a, metrics=["accuracy"])["accuracy"],
            pe.evaluate(y, b, metrics=["accuracy"])["accuracy"],
            n_samples=4000,
            rng=rep,
        )
        independent_widths.append(independent.hdi(0.95)[1] - independent.hdi(0.95)[0])
    coverage = hits / replications
    ratio = float(np.mean(independent_widths) / np.mean(paired_widths))
    print(
        f"paired 95% HDI coverage of the accuracy difference {truth:+.4f}: {coverage:.3f}; "
        f"independent HDI is {ratio:.2f}x wider on average"
    )
    assert 0.92 <= coverage <= 0.98
    assert ratio > 1.3


def test_paired_marginals_equal_the_unpaired_posteriors() -> None:
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 300)
    a = np.where(rng.random(300) < 0.8, y, rng.integers(0, 3, 300))
    b = np.where(rng.random(300) < 0.7, y, rng.integers(0, 3, 300))
    c = pe.compare_paired(y, a, b, metric="f1_macro", n_samples=20_000, rng=0)
    alone = pe.evaluate(y, a, metrics=["f1_macro"], n_samples=20_000, rng=1)["f1_macro"]
    assert c.a.observed == pytest.approx(alone.observed)
    assert stats.ks_2samp(c.a.samples, alone.samples).pvalue > 1e-3
    assert c.paired
    assert "paired" in repr(c)


def test_multimodal_region() -> None:
    rng = np.random.default_rng(0)
    bimodal = np.concatenate([rng.normal(0.3, 0.02, 50_000), rng.normal(0.7, 0.02, 50_000)])
    regions = pe.hdi(bimodal, 0.9, multimodal=True, bounds=(0, 1))
    assert len(regions) == 2
    (l1, h1), (l2, h2) = regions
    assert l1 < 0.3 < h1 < 0.5 < l2 < 0.7 < h2
    # Each mode's interval holds ~half of the 90%.
    inside = np.mean(((bimodal >= l1) & (bimodal <= h1)) | ((bimodal >= l2) & (bimodal <= h2)))
    assert inside == pytest.approx(0.9, abs=0.01)
    single = pe.hdi(rng.normal(0.5, 0.05, 50_000), 0.95, multimodal=True)
    assert len(single) == 1
    # U-shaped exact Beta: one interval at each end, together holding ci.
    post = pe.Posterior.from_beta(0.4, 0.5)
    (a0, a1), (b0, b1) = post.hdi(0.9, multimodal=True)
    assert a0 == 0.0
    assert b1 == 1.0
    mass = stats.beta.cdf(a1, 0.4, 0.5) + stats.beta.sf(b0, 0.4, 0.5)
    assert mass == pytest.approx(0.9, abs=2e-3)
    unimodal = pe.Posterior.from_beta(30, 10).hdi(0.95, multimodal=True)
    assert len(unimodal) == 1
    np.testing.assert_allclose(unimodal[0], pe.Posterior.from_beta(30, 10).hdi(0.95), atol=5e-4)


def test_sample_intervals_against_brute_force() -> None:
    rng = np.random.default_rng(4)
    x = rng.gamma(2.0, size=20_001)
    ordered = np.sort(x)
    k = math.ceil(0.9 * x.size)
    widths = ordered[k - 1 :] - ordered[: x.size - k + 1]
    i = int(np.argmin(widths))
    assert pe.hdi(x, 0.9) == (ordered[i], ordered[i + k - 1])
    assert pe.eti(x, 0.9) == pytest.approx(tuple(np.quantile(x, [0.05, 0.95])))


@pytest.mark.parametrize("rule", ["scott", "silverman", 0.01])
def test_kde_agrees_with_the_exact_kde(rule: object) -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(0.5, 0.1, 100_000)
    ours = pe.kde(x, bandwidth=rule)  # type: ignore[arg-type]
    factor = rule if isinstance(rule, str) else rule / x.std(ddof=1)
    exact = stats.gaussian_kde(x, bw_method=factor)(ours.grid)
    assert ours.bandwidth == pytest.approx(
        np.sqrt(stats.gaussian_kde(x, bw_method=factor).covariance[0, 0])
    )
    assert np.max(np.abs(ours.density - exact)) < 1e-3 * exact.max()


def test_kde_reflection_and_mode() -> None:
    rng = np.random.default_rng(2)
    piled = rng.beta(2000, 3, 100_000)
    estimate = pe.kde(piled, bounds=(0, 1))
    assert estimate.integral() == pytest.approx(1.0, abs=1e-3)
    post = pe.Posterior.from_samples(piled)
    assert post.mode() == pytest.approx(1.0, abs=2e-3)  # the density peaks at the bound
    centred = pe.Posterior.from_samples(rng.normal(0.4, 0.03, 100_000))
    assert centred.mode() == pytest.approx(0.4, abs=3e-3)
    assert centred.pdf(0.4) == pytest.approx(stats.norm.pdf(0.4, 0.4, 0.03), rel=0.02)
