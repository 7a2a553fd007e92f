"""Exact Beta distribution functions against scipy (an independent implementation: Boost)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special, stats

import probeval as pe
from probeval import _core

from ._oracles import beta_cdf_mp, beta_logpdf_mp

# Log-uniform shapes from 1e-3 to 1e12 plus hand-picked cases: the uniform prior, Jeffreys
# half-counts, a zero-error classifier (b = 1) and huge balanced and unbalanced counts.
_RNG = np.random.default_rng(12345)
RANDOM_SHAPES = [tuple(10.0 ** _RNG.uniform(-2, 12, 2)) for _ in range(40)]
FIXED_SHAPES = [
    (1.0, 1.0),
    (0.5, 0.5),
    (0.01, 3.0),
    (13286.0, 4185.0),
    (5286.0, 3185.0),
    (1.0, 5001.0),
    (1e12 + 1, 1.0),
    (1e12, 1e12),
    (3e11, 7e11),
    (2.5, 1e12),
    (1e12, 2.5),
    (150.0, 101.0),
]
SHAPES = FIXED_SHAPES + RANDOM_SHAPES
#: scipy (Boost) itself loses up to 4 digits for shapes near 1e12 (e.g. 2.5e-4 relative at
#: a = b = 1e12, where mpmath and the normal limit agree with us), so it is an oracle only here.
SCIPY_SHAPES = [s for s in SHAPES if max(s) <= 1e8]
PROBS = [1e-6, 0.02, 0.3, 0.7, 0.98, 1 - 1e-6]


def _resolution(x: np.ndarray, a: float, b: float) -> np.ndarray:
    """How much the cdf moves per ulp of x (the best any quantile can do in float64)."""
    return np.asarray(_core.beta_pdf(x, a, b)) * np.spacing(np.maximum(x, 0.5)) * 8


def _points(a: float, b: float) -> np.ndarray:
    x = stats.beta.ppf(PROBS, a, b)
    return x[(x > 0) & (x < 1)]


@pytest.mark.parametrize(("a", "b"), SHAPES)
def test_cdf_matches_high_precision_oracle(a: float, b: float) -> None:
    """The smaller tail to 1e-9 relative, against 30-digit mpmath (series or quadrature)."""
    x = _points(a, b)
    cdf, sf = _core.beta_cdf(x, a, b), _core.beta_sf(x, a, b)
    for xi, lower, upper in zip(x, cdf, sf, strict=True):
        ref_lower, ref_upper = beta_cdf_mp(a, b, float(xi))
        if ref_lower <= ref_upper:
            assert lower == pytest.approx(ref_lower, rel=1e-9, abs=1e-300)
        else:
            assert upper == pytest.approx(ref_upper, rel=1e-9, abs=1e-300)
    np.testing.assert_allclose(cdf + sf, 1.0, atol=2e-15)


@pytest.mark.parametrize(("a", "b"), SCIPY_SHAPES)
def test_cdf_and_sf_match_scipy(a: float, b: float) -> None:
    x = _points(a, b)
    np.testing.assert_allclose(
        _core.beta_cdf(x, a, b), special.betainc(a, b, x), rtol=1e-9, atol=1e-14
    )
    np.testing.assert_allclose(
        _core.beta_sf(x, a, b), special.betaincc(a, b, x), rtol=1e-9, atol=1e-14
    )


@pytest.mark.parametrize(("a", "b"), SHAPES)
def test_pdf_matches_high_precision_log_density(a: float, b: float) -> None:
    x = _points(a, b)
    ours = np.log(_core.beta_pdf(x, a, b))
    for xi, value in zip(x, ours, strict=True):
        assert value == pytest.approx(beta_logpdf_mp(a, b, float(xi)), rel=1e-12, abs=1e-9)


@pytest.mark.parametrize(("a", "b"), [s for s in SCIPY_SHAPES if min(s) >= 0.05])
def test_pdf_matches_scipy(a: float, b: float) -> None:
    # (Boost's density overflows for tiny shapes at their extreme quantiles; the mpmath test
    # above covers those.)
    x = _points(a, b)
    np.testing.assert_allclose(_core.beta_pdf(x, a, b), stats.beta.pdf(x, a, b), rtol=1e-8)


@pytest.mark.parametrize(("a", "b"), SCIPY_SHAPES)
def test_quantiles_match_scipy(a: float, b: float) -> None:
    q = np.array([1e-6, 0.001, 0.025, 0.25, 0.5, 0.75, 0.975, 0.999, 1 - 1e-6])
    np.testing.assert_allclose(
        _core.beta_ppf(q, a, b), stats.beta.ppf(q, a, b), rtol=1e-9, atol=1e-10
    )
    np.testing.assert_allclose(
        _core.beta_isf(q, a, b), stats.beta.isf(q, a, b), rtol=1e-9, atol=1e-10
    )


@pytest.mark.parametrize(("a", "b"), SHAPES)
def test_quantiles_invert_the_oracle_cdf(a: float, b: float) -> None:
    """cdf_oracle(ppf(q)) = q, up to how far one ulp of x moves the cdf."""
    for q in (1e-6, 0.025, 0.5, 0.975):
        x = float(_core.beta_ppf(np.array([q]), a, b)[0])
        if x == 0.0:
            # The quantile underflows double precision: check that it truly lies below the
            # smallest subnormal number.
            assert beta_cdf_mp(a, b, 5e-324)[0] >= q
            continue
        lower, upper = beta_cdf_mp(a, b, x)
        if x >= 1 - 2 * np.spacing(1.0):
            # The quantile lies within the last ulps below 1: x must be the smallest double
            # with F(x) >= q, so the double before it falls short.
            assert lower >= q * (1 - 1e-9)
            assert beta_cdf_mp(a, b, float(np.nextafter(x, 0.0)))[0] < q
            continue
        slack = float(_resolution(np.array([x]), a, b)[0]) if 0 < x < 1 else 0.0
        if q <= 0.5:
            assert abs(lower - q) <= 1e-9 * q + slack
        else:
            assert abs(upper - (1 - q)) <= 1e-9 * (1 - q) + slack


def _reference_hdi(a: float, b: float, ci: float) -> tuple[float, float]:
    """Independent HDI: brentq on the equal-density partner and on the interval's mass."""
    mode = (a - 1) / (a + b - 2)
    dist = stats.beta(a, b)

    def partner(lo: float) -> float:
        target = dist.logpdf(lo)
        right = 1 - np.spacing(1.0)
        if dist.logpdf(right) >= target:
            return 1.0
        return optimize.brentq(
            lambda u: dist.logpdf(u) - target, mode, right, xtol=1e-15, rtol=1e-15
        )

    def excess(lo: float) -> float:
        return dist.sf(lo) - dist.sf(partner(lo)) - ci

    left = dist.ppf(1e-12 * (1 - ci))  # mass below is negligible: the interval is too wide
    lo = optimize.brentq(excess, left, mode * (1 - 1e-6), xtol=1e-15, rtol=1e-15)
    return lo, partner(lo)


@pytest.mark.parametrize(
    ("a", "b"),
    [(2.0, 2.0), (13286.0, 4185.0), (5286.0, 3185.0), (3.0, 40.0), (1.5, 2000.0), (801.0, 9.0)],
)
@pytest.mark.parametrize("ci", [0.5, 0.89, 0.95, 0.99])
def test_hdi_matches_independent_solution(a: float, b: float, ci: float) -> None:
    low, high = _core.beta_hdi(a, b, ci)
    ref_low, ref_high = _reference_hdi(a, b, ci)
    assert low == pytest.approx(ref_low, abs=1e-10)
    assert high == pytest.approx(ref_high, abs=1e-10)


@pytest.mark.parametrize(("a", "b"), [s for s in SHAPES if s[0] > 1 and s[1] > 1])
def test_hdi_defining_conditions(a: float, b: float) -> None:
    """Ends have equal density and the interval holds exactly ci (to float resolution)."""
    for ci in (0.5, 0.95, 0.999):
        low, high = _core.beta_hdi(a, b, ci)
        below, _ = beta_cdf_mp(a, b, low)
        _, above = beta_cdf_mp(a, b, high)
        mass = 1.0 - below - above
        slack = 1e-10 + float(
            _resolution(np.array([high]), a, b)[0] + _resolution(np.array([low]), a, b)[0]
        )
        assert abs(mass - ci) < slack
        log_ratio = beta_logpdf_mp(a, b, low) - beta_logpdf_mp(a, b, high)

        # One ulp of an end point moves the log-density by |d/dx ln f| * ulp there.
        def per_ulp(x: float) -> float:
            return abs((a - 1) / x - (b - 1) / (1 - x)) * float(np.spacing(max(x, 0.5)))

        assert abs(log_ratio) < 1e-9 + 8 * (per_ulp(low) + per_ulp(high))
        eti_low, eti_high = _core.beta_eti(a, b, ci)
        assert high - low <= (eti_high - eti_low) * (1 + 1e-9)


#: Shapes just above 1: the density stays high all the way to one boundary, so that end of
#: the HDI can lie at 1e-130 or beyond the last double (then it is the boundary itself).
NEAR_FLAT_SHAPES = [
    (1.0072964425908657, 786602.4543629949),
    (1.016427184420596, 250743225687.68994),
    (132929477232.09805, 1.0204655297569774),
    (1.1327946757668805, 1.1194917946191265),
    (2.020525436553226, 1.140137643336664),
    (12204.816761027425, 1.5060800889729715),
    (1.0 + 1e-9, 5.0),
    (1.0334238636085333, 1.058988470464292),
    (1.0149172844696728, 506.46117126680906),
    (3.0, 11.0),
]


@pytest.mark.parametrize(("a", "b"), NEAR_FLAT_SHAPES)
def test_hdi_of_nearly_flat_shapes(a: float, b: float) -> None:
    """The defining conditions against mpmath; an end at the boundary only where the density
    at the last double before it is still above the other end's."""
    for ci in (0.5, 0.99, 0.999):
        low, high = _core.beta_hdi(a, b, ci)
        below = beta_cdf_mp(a, b, low)[0] if low > 0 else 0.0
        above = beta_cdf_mp(a, b, high)[1] if high < 1 else 0.0
        slack = 1e-10 + float(
            _resolution(np.array([high]), a, b)[0] + _resolution(np.array([low]), a, b)[0]
        )
        assert abs(1.0 - below - above - ci) < slack, (a, b, ci, low, high)
        if low == 0.0:
            assert beta_logpdf_mp(a, b, np.nextafter(0.0, 1.0)) >= beta_logpdf_mp(a, b, high)
        elif high == 1.0:
            assert beta_logpdf_mp(a, b, np.nextafter(1.0, 0.0)) >= beta_logpdf_mp(a, b, low)
        else:
            per_ulp = sum(
                abs((a - 1) / x - (b - 1) / (1 - x)) * float(np.spacing(max(x, 0.5)))
                for x in (low, high)
            )
            log_ratio = beta_logpdf_mp(a, b, low) - beta_logpdf_mp(a, b, high)
            assert abs(log_ratio) < 1e-9 + 8 * per_ulp, (a, b, ci, low, high)
        eti_low, eti_high = _core.beta_eti(a, b, ci)
        assert high - low <= (eti_high - eti_low) * (1 + 1e-9)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (1.0, 1.0, (0.0, 0.95)),  # flat: leftmost interval
        (1.0, 9.0, (0.0, None)),  # decreasing: anchored at 0
        (9.0, 1.0, (None, 1.0)),  # increasing: anchored at 1
        (0.5, 30.0, (0.0, None)),
    ],
)
def test_hdi_at_the_boundary(
    a: float, b: float, expected: tuple[float | None, float | None]
) -> None:
    low, high = _core.beta_hdi(a, b, 0.95)
    if expected[0] is not None:
        assert low == expected[0]
        assert high == pytest.approx(
            expected[1] if expected[1] is not None else stats.beta.ppf(0.95, a, b), abs=1e-12
        )
    else:
        assert high == 1.0
        assert low == pytest.approx(stats.beta.isf(0.95, a, b), abs=1e-12)


def test_u_shaped_hdi_is_the_shorter_anchored_interval() -> None:
    a, b = 0.3, 0.6
    low, high = _core.beta_hdi(a, b, 0.9)
    left = stats.beta.ppf(0.9, a, b)
    right = stats.beta.isf(0.9, a, b)
    if left <= 1 - right:
        assert (low, high) == (0.0, pytest.approx(left, abs=1e-12))
    else:
        assert (low, high) == (pytest.approx(right, abs=1e-12), 1.0)


def test_posterior_exact_summaries_match_scipy() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=5285, fp=3184, tn=8000, fn=1000)
    for metric, (a, b) in {
        "accuracy": (13286, 4185),
        "precision": (5286, 3185),
        "recall": (5286, 1001),
        "specificity": (8001, 3185),
        "npv": (8001, 1001),
        "fpr": (3185, 8001),
        "fnr": (1001, 5286),
        "fdr": (3185, 5286),
        "false_omission_rate": (1001, 8001),
        "prevalence": (6286, 11185),
        "selection_rate": (8470, 9001),
    }.items():
        post = cm.posterior(metric)
        dist = stats.beta(a, b)
        assert post.exact
        assert post.beta_params == (a, b)
        assert post.mean() == pytest.approx(dist.mean(), rel=1e-14)
        assert post.std() == pytest.approx(dist.std(), rel=1e-12)
        assert post.median() == pytest.approx(dist.median(), abs=1e-10)
        assert post.mode() == pytest.approx((a - 1) / (a + b - 2), rel=1e-14)
        np.testing.assert_allclose(post.eti(0.95), dist.interval(0.95), atol=1e-10)
        assert post.prob_above(0.6) == pytest.approx(dist.sf(0.6), rel=1e-9, abs=1e-14)
        assert post.prob_below(0.6) == pytest.approx(dist.cdf(0.6), rel=1e-9, abs=1e-14)
        x = np.linspace(0.01, 0.99, 7)
        np.testing.assert_allclose(post.pdf(x), dist.pdf(x), rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(post.quantile([0.1, 0.9]), dist.ppf([0.1, 0.9]), atol=1e-10)


def test_exact_posterior_draws_no_samples_until_asked() -> None:
    post = pe.ConfusionMatrix.from_counts(tp=5, fp=3, tn=8, fn=1).posterior("accuracy", rng=1)
    post.hdi()
    post.mean()
    assert post._samples is None
    assert post.samples.shape == (10_000,)
    assert post._samples is not None


def test_degenerate_beta_point_masses() -> None:
    # Haldane prior (0): precision with FP = 0 is a point mass at 1.
    post = pe.ConfusionMatrix.from_counts(tp=7, fp=0, tn=3, fn=2).posterior("precision", prior=0)
    assert post.beta_params == (7.0, 0.0)
    assert post.hdi() == (1.0, 1.0)
    assert post.mean() == 1.0
    assert np.all(post.samples == 1.0)
    with pytest.raises(ValueError, match="improper"):
        pe.ConfusionMatrix.from_counts(tp=0, fp=0, tn=3, fn=2).posterior("precision", prior=0)


def test_counts_up_to_1e12_are_exact() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=10**12, fp=10**11, tn=9 * 10**11, fn=5 * 10**10)
    post = cm.posterior("precision")
    a, b = 10**12 + 1, 10**11 + 1
    assert post.beta_params == (a, b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    low, high = post.hdi(0.95)
    # For counts this large the Beta is normal to within 1e-7 sd: HDI = mean -/+ 1.96 sd.
    assert low == pytest.approx(a / (a + b) - 1.959963984540054 * sd, abs=1e-12)
    assert high == pytest.approx(a / (a + b) + 1.959963984540054 * sd, abs=1e-12)
    assert post.observed == pytest.approx(10 / 11, rel=1e-15)
