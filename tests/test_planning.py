"""Planning: the assurance precision reproduces its target, planned sample sizes reach the width
with the stated assurance, checked by simulations independent of the planning code (numpy
draws, scipy's binomial and Beta, :func:`probeval.evaluate`'s posteriors)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import optimize, stats

import probeval as pe
from probeval.experiment import planning

PILOT = pe.ConfusionMatrix.from_counts(tp=300, fp=30, tn=600, fn=70)


def _scipy_hdi_width(a: float, b: float, ci: float = 0.95) -> float:
    dist = stats.beta(a, b)
    res = optimize.minimize_scalar(
        lambda p: dist.ppf(p + ci) - dist.ppf(p),
        bounds=(0, 1 - ci),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(min(res.fun, dist.ppf(ci) - dist.ppf(0.0), dist.ppf(1.0) - dist.ppf(1 - ci)))


@pytest.mark.parametrize(("m", "a0", "b0"), [(1, 1, 1), (25, 1, 1), (60, 0.5, 0.5), (140, 2, 1)])
@pytest.mark.parametrize("theta", [0.03, 0.5, 0.93])
def test_exact_probability_matches_brute_force(m: int, a0: float, b0: float, theta: float) -> None:
    law = planning._BetaLaw(a0, b0, np.array([theta]), "rows")
    widths = np.array([_scipy_hdi_width(k + a0, m - k + b0) for k in range(m + 1)])
    pmf = stats.binom.pmf(np.arange(m + 1), m, theta)
    for width in np.quantile(widths, [0.0, 0.2, 0.5, 0.8, 1.0]) + 1e-9:
        brute = float(pmf[widths <= width].sum())
        assert planning._exact_probability(m, width, law, 0.95) == pytest.approx(brute, abs=1e-9)


def _conclusive_share_accuracy(
    precision: float, n: int, rope: tuple[float, float], sims: int
) -> float:
    rng = np.random.default_rng(2026)
    theta = rng.uniform(*rope, sims)
    k = rng.binomial(n, theta)
    widths = [
        np.subtract(
            *pe.ConfusionMatrix.from_counts(tp=int(x), fp=n - int(x), tn=0, fn=0)
            .posterior("accuracy")
            .hdi()[::-1]
        )
        for x in k
    ]
    return float(np.mean(np.array(widths) <= precision))


def test_assurance_reproduces_its_target_exact_metric() -> None:
    rope, n, sims = (0.85, 1.0), 400, 2_000
    precision = pe.assurance_precision("accuracy", n, rope=rope)
    share = _conclusive_share_accuracy(precision, n, rope, sims)
    assert abs(share - 0.8) <= 0.04, share
    # And it is a quantile: a 10% narrower requirement is reached clearly less often.
    assert _conclusive_share_accuracy(0.9 * precision, n, rope, sims) < 0.7


def _truncated_dirichlet(
    alpha: np.ndarray, metric: str, rope: tuple[float, float], sims: int, rng: np.random.Generator
) -> np.ndarray:
    out = []
    while len(out) < sims:
        p = rng.dirichlet(alpha)
        tp, fp, tn, fn = p
        value = {
            "f1": 2 * tp / (2 * tp + fp + fn),
            "mcc": (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)),
        }[metric]
        if rope[0] <= value <= rope[1]:
            out.append(p)
    return np.array(out)


def _conclusive_share_cells(
    metric: str, precision: float, n: int, rope: tuple[float, float], sims: int, seed: int
) -> float:
    rng = np.random.default_rng(seed)
    # PILOT is (tp, fp, tn, fn) = (300, 30, 600, 70); the default binary prior adds 1 per cell.
    cells = _truncated_dirichlet(np.array([301.0, 31.0, 601.0, 71.0]), metric, rope, sims, rng)
    hits = 0
    for p in cells:
        tp, fp, tn, fn = rng.multinomial(n, p)
        post = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn).posterior(
            metric, n_samples=4_000, rng=rng
        )
        low, high = post.hdi()
        hits += high - low <= precision
    return hits / sims


@pytest.mark.parametrize("metric", ["f1", "mcc"])
def test_assurance_reproduces_its_target_simulated_metric(metric: str) -> None:
    reference = PILOT.posterior(metric, rng=0)
    rope = pe.no_worse_rope(reference)
    precision = pe.assurance_precision(metric, 1_500, rope=rope, expected=PILOT, rng=1)
    share = _conclusive_share_cells(metric, precision, 1_500, rope, 600, seed=7)
    assert abs(share - 0.8) <= 0.04, share


@pytest.mark.parametrize(
    "expected",
    [0.9, 0.55, pe.ConfusionMatrix.from_counts(tp=45, fp=0, tn=0, fn=5).posterior("accuracy")],
)
def test_planned_n_reaches_the_width_exact(expected: object) -> None:
    width = 0.04
    plan = pe.plan_sample_size("accuracy", width, expected=expected)
    assert plan.method == "exact"
    assert plan.unit == "rows"
    assert plan.n is not None
    rng = np.random.default_rng(5)
    sims = 4_000
    theta = np.full(sims, expected) if isinstance(expected, float) else rng.beta(46, 6, sims)

    def share(n: int) -> float:
        k = rng.binomial(n, theta)
        widths = np.array([_fast_width(int(x) + 1, n - int(x) + 1) for x in k])
        return float(np.mean(widths <= width))

    se = math.sqrt(0.8 * 0.2 / sims)
    assert share(plan.n) >= 0.8 - 3 * se
    assert share(int(plan.n * 0.9)) < 0.8  # and not much larger than needed


@functools.cache
def _fast_width(a: float, b: float) -> float:
    return _scipy_hdi_width(float(a), float(b))


def test_planned_n_reaches_the_width_simulated() -> None:
    width = 0.06
    plan = pe.plan_sample_size("f1", width, expected=PILOT, rng=3)
    assert plan.method == "simulated"
    assert plan.unit == "rows"
    assert plan.n is not None
    rng = np.random.default_rng(11)
    sims = 600

    def share(n: int) -> float:
        cells = rng.dirichlet([301.0, 31.0, 601.0, 71.0], sims)
        hits = 0
        for p in cells:
            tp, fp, tn, fn = rng.multinomial(n, p)
            low, high = (
                pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn).posterior("f1").hdi()
            )
            hits += high - low <= width
        return hits / sims

    se = math.sqrt(0.8 * 0.2 / sims)
    assert share(plan.n) >= 0.8 - 3 * se
    assert share(int(plan.n * 0.85)) < 0.8


def test_plan_curve_and_units() -> None:
    plan = pe.plan_sample_size("precision", 0.05, expected=0.8)
    assert plan.unit == "predicted positives"
    curve = plan.curve()
    assert np.all(np.diff(curve["n"]) > 0)
    assert curve["probability"][-1] >= 0.8
    assert plan.n in set(curve["n"].tolist())
    unreachable = pe.plan_sample_size("accuracy", 1e-4, expected=0.5, n_max=1_000)
    assert unreachable.n is None
    assert "not reached" in repr(unreachable)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: pe.plan_sample_size("accuracy", 0, expected=0.9), ValueError, "width"),
        (lambda: pe.plan_sample_size("accuracy", 0.1, expected=1.5), ValueError, "expected"),
        (lambda: pe.plan_sample_size("accuracy", 0.1, expected="a"), TypeError, "expected"),
        (lambda: pe.plan_sample_size("mcc", 0.1, expected=0.5), ValueError, "ConfusionMatrix"),
        (lambda: pe.plan_sample_size("roc_auc", 0.1, expected=PILOT), ValueError, "ranking"),
        (lambda: pe.plan_sample_size("nope", 0.1, expected=0.5), ValueError, "nope"),
        (
            lambda: pe.plan_sample_size("accuracy", 0.1, expected=0.5, assurance=1),
            ValueError,
            "assurance",
        ),
        (lambda: pe.plan_sample_size("accuracy", 0.1, expected=0.5, n_max=0), ValueError, "n_max"),
        (lambda: pe.assurance_precision("accuracy", 0, rope=(0.8, 1)), ValueError, "n"),
        (lambda: pe.assurance_precision("accuracy", 10, rope=(1.5, 2)), ValueError, "ROPE"),
        (lambda: pe.assurance_precision("accuracy", 10, rope=None), TypeError, "rope"),
        (
            lambda: pe.assurance_precision("f1", 10, rope=(0.99, 1), expected=PILOT, rng=0),
            ValueError,
            "under 1%",
        ),
    ],
)
def test_bad_input(call: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


# ----------------------------------------------------------------------- without labels


def _label_free_population(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    scores = np.clip(np.where(y, rng.beta(4, 2, n), rng.beta(2, 4, n)), 0, 1)
    return y, scores


@pytest.fixture(scope="module")
def estimator() -> pe.LabelFreeEstimator:
    y, scores = _label_free_population(20_000, 0)
    return pe.LabelFreeEstimator(metrics=["accuracy", "f1"]).fit(y, scores)


def test_label_free_plan_reaches_the_width_on_fresh_chunks(
    estimator: pe.LabelFreeEstimator,
) -> None:
    width = 0.04
    plan = pe.plan_sample_size("accuracy", width, expected=estimator, rng=1)
    assert plan.method.startswith("label-free")
    assert plan.floor is not None
    assert plan.floor < width
    assert plan.n is not None
    _, fresh = _label_free_population(400 * plan.n, 9)  # production scores never seen

    def share(n: int) -> float:
        result = estimator.estimate(fresh[: 200 * n], chunk_size=n, n_samples=2_000, rng=3)
        table = result.summary()
        rows = np.asarray(table["metric"]) == "accuracy"
        widths = np.asarray(table["hdi_high"])[rows] - np.asarray(table["hdi_low"])[rows]
        return float(np.mean(widths <= width))

    # 200 chunks: the binomial standard error of a share near 0.8 is 0.028.
    assert share(plan.n) >= 0.8 - 3 * 0.028
    assert share(max(1, int(0.5 * plan.n))) < 0.8


def test_label_free_plan_says_never_below_the_floor(estimator: pe.LabelFreeEstimator) -> None:
    plan = pe.plan_sample_size("accuracy", 0.005, expected=estimator, rng=1)
    assert plan.n is None
    assert plan.floor is not None
    assert plan.floor > 0.005
    assert "never" in repr(plan)
    assert plan.to_dict()["floor"] == plan.floor
    with pytest.raises(ValueError, match="one of the estimator's"):
        pe.plan_sample_size("mcc", 0.05, expected=estimator)
    with pytest.raises(TypeError, match="scores= goes with"):
        pe.plan_sample_size("accuracy", 0.05, expected=0.9, scores=[0.1])


def test_label_free_experiment_default_precision(estimator: pe.LabelFreeEstimator) -> None:
    exp = pe.Experiment(["accuracy"], estimator=estimator, planned_n=2_000, seed=4)
    expected = pe.assurance_precision(
        "accuracy", 2_000, rope=exp.ropes["accuracy"], expected=estimator, rng=4
    )
    assert exp.precision["accuracy"] == pytest.approx(expected, abs=1e-12)
    assert pe.Experiment(["accuracy"], estimator=estimator).precision["accuracy"] is None
