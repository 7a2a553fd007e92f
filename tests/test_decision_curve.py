"""Cost, value and threshold (pe.decision_curve, LabelFreeEstimate.value).

Oracles: a brute-force per-row Bayesian bootstrap in numpy (Exp(1) row weights) for the value
posterior, direct counting (scikit-learn's confusion matrix) for observed values and net
benefit, and coverage of the true net-benefit curve and best value in simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import confusion_matrix

import probeval as pe

VALUE = {"tp": 40.0, "fp": -8.0, "tn": 1.0, "fn": -25.0}


#: Scores: z ~ N(1.4 y, 1), and the score is P(y = 1 | z) (calibrated): its logit is
#: logit(prevalence) - 1.4^2 / 2 + 1.4 z.
SHIFT = 1.4


def _logit_offset(prevalence: float) -> float:
    return math.log(prevalence / (1 - prevalence)) - SHIFT**2 / 2


def _data(rng: np.random.Generator, n: int, prevalence: float = 0.25):
    y = (rng.random(n) < prevalence).astype(int)
    z = rng.normal(SHIFT * y, 1.0)
    return y, 1.0 / (1.0 + np.exp(-(_logit_offset(prevalence) + SHIFT * z)))


def _survival(t: np.ndarray, prevalence: float) -> tuple[np.ndarray, np.ndarray]:
    """P(score > t | y = 1) and P(score > t | y = 0) for the scores of _data."""
    cut = (np.log(t / (1 - t)) - _logit_offset(prevalence)) / SHIFT
    return stats.norm.sf(cut - SHIFT), stats.norm.sf(cut)


def _row_value(y: np.ndarray, s: np.ndarray, t: float) -> np.ndarray:
    positive = s > t
    table = np.select(
        [positive & (y == 1), positive & (y == 0), ~positive & (y == 0)],
        [VALUE["tp"], VALUE["fp"], VALUE["tn"]],
        VALUE["fn"],
    )
    return np.asarray(table, dtype=np.float64)


@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.5, 0.8])
def test_value_matches_a_brute_force_row_bootstrap(threshold: float) -> None:
    rng = np.random.default_rng(1)
    y, s = _data(rng, 600)
    weights = rng.choice([0.5, 1.0, 2.0], 600)
    n = 20_000
    curve = pe.decision_curve(y, s, value=VALUE, prior=0, n_samples=n, rng=2, sample_weight=weights)
    post = curve.value_at(threshold)
    cm = confusion_matrix(y, s > threshold, sample_weight=weights)
    (tn, fp), (fn, tp) = cm / cm.sum()
    direct = VALUE["tp"] * tp + VALUE["fp"] * fp + VALUE["tn"] * tn + VALUE["fn"] * fn
    assert post.observed == pytest.approx(direct, abs=1e-12)
    # Brute force: every row a Gamma(weight) weight, the value averaged under it.
    w = np.random.default_rng(3).standard_gamma(weights, size=(n, 600))
    brute = (w * _row_value(y, s, threshold)).sum(axis=1) / w.sum(axis=1)
    sd = brute.std()
    assert abs(post.mean() - brute.mean()) < 4 * math.sqrt(2) * sd / math.sqrt(n)
    assert post.std() == pytest.approx(sd, rel=4 * math.sqrt(2) / math.sqrt(2 * n))


@pytest.mark.parametrize("prior", [None, 0.5, [[2.0, 1.0], [0.5, 3.0]]])
def test_every_threshold_has_the_dirichlet_evaluate_gives_it(prior) -> None:
    """With a prior, each threshold's cells are Dirichlet(counts + prior): the value's mean and
    variance have closed forms."""
    rng = np.random.default_rng(11)
    y, s = _data(rng, 300)
    n = 40_000
    curve = pe.decision_curve(y, s, value=VALUE, prior=prior, n_samples=n, rng=5)
    pseudo = {None: np.ones((2, 2)), 0.5: np.full((2, 2), 0.5)}.get(
        prior if not isinstance(prior, list) else None, np.ones((2, 2))
    )
    if isinstance(prior, list):
        pseudo = np.array(prior)
    v = np.array([VALUE["tn"], VALUE["fp"], VALUE["fn"], VALUE["tp"]])
    for t in (0.05, 0.5, 0.95):
        counts = confusion_matrix(y, s > t, labels=[0, 1]).ravel().astype(float)
        alpha = counts + pseudo.ravel()
        total = alpha.sum()
        mean = float(v @ alpha / total)
        var = (float(v**2 @ alpha / total) - mean**2) / (total + 1)
        post = curve.value_at(t)
        assert abs(post.mean() - mean) < 4 * math.sqrt(var / n), (t, post.mean(), mean)
        assert post.std() == pytest.approx(math.sqrt(var), rel=4 / math.sqrt(2 * n) + 1e-3)


def test_net_benefit_is_vickers_formula_and_reports_treat_all() -> None:
    rng = np.random.default_rng(4)
    y, s = _data(rng, 2_000)
    curve = pe.decision_curve(y, s, rng=0)
    band = curve.net_benefit_band()
    for i, t in enumerate(band["threshold"]):
        predicted = s > t
        tp = np.sum(predicted & (y == 1)) / len(y)
        fp = np.sum(predicted & (y == 0)) / len(y)
        assert band["observed"][i] == pytest.approx(tp - fp * t / (1 - t), abs=1e-12)
        prevalence = y.mean()
        assert band["treat_all"][i] == pytest.approx(
            prevalence - (1 - prevalence) * t / (1 - t), abs=1e-12
        )
        assert band["low"][i] <= band["median"][i] <= band["high"][i]
        assert 0.0 <= band["p_useful"][i] <= 1.0
    # At t -> 0 treating everyone is as good as the model; in between the model is useful.
    middle = int(np.flatnonzero(np.isclose(band["threshold"], 0.3))[0])
    assert band["p_useful"][middle] > 0.99
    nb = curve.net_benefit(0.3)
    assert nb.observed == pytest.approx(band["observed"][middle])
    with pytest.raises(ValueError, match="value matrix"):
        curve.value_at(0.3)


def _true_net_benefit(t: np.ndarray, prevalence: float) -> np.ndarray:
    s1, s0 = _survival(t, prevalence)
    return prevalence * s1 - (1 - prevalence) * s0 * t / (1 - t)


@pytest.mark.slow
def test_net_benefit_bands_cover_the_true_curve() -> None:
    """200 simulated data sets of 800 rows: pointwise 95% bands of the net benefit cover the
    population curve (at 0.05, 0.10, ..., 0.90)."""
    grid = np.round(np.arange(0.05, 0.91, 0.05), 10)
    truth = _true_net_benefit(grid, 0.25)
    hits = np.zeros(len(grid))
    reps = 200
    for rep in range(reps):
        rng = np.random.default_rng(100 + rep)
        y, s = _data(rng, 800)
        band = pe.decision_curve(y, s, thresholds=grid, n_samples=2_000, rng=rep)
        table = band.net_benefit_band()
        hits += (np.array(table["low"]) <= truth) & (truth <= np.array(table["high"]))
    coverage = hits / reps
    # 200 reps x 18 thresholds (correlated): the average within 92-98%, no threshold below 88%.
    assert 0.92 <= coverage.mean() <= 0.98, coverage
    assert coverage.min() >= 0.88, coverage


@pytest.mark.slow
def test_best_value_covers_the_true_best_value() -> None:
    """200 simulated data sets: the posterior of the best value per row over the thresholds
    covers the population's best value (over the same thresholds)."""
    grid = np.round(np.arange(0.05, 0.91, 0.05), 10)
    p = 0.25
    s1, s0 = _survival(grid, p)
    true_values = (
        VALUE["tp"] * p * s1
        + VALUE["fn"] * p * (1 - s1)
        + VALUE["fp"] * (1 - p) * s0
        + VALUE["tn"] * (1 - p) * (1 - s0)
    )
    hits, reps = 0, 200
    for rep in range(reps):
        rng = np.random.default_rng(900 + rep)
        y, s = _data(rng, 800, p)
        curve = pe.decision_curve(y, s, value=VALUE, thresholds=grid, n_samples=2_000, rng=rep)
        low, high = curve.best_value().eti()
        hits += low <= true_values.max() <= high
    assert 0.92 <= hits / reps <= 0.98, hits / reps


def test_best_threshold_regret_and_p_optimal_agree() -> None:
    rng = np.random.default_rng(6)
    y, s = _data(rng, 3_000)
    curve = pe.decision_curve(y, s, value=VALUE, rng=1)
    table = curve.p_optimal()
    assert sum(table["p_optimal"]) == pytest.approx(1.0)
    best = curve.best_threshold()
    mode = table["threshold"][int(np.argmax(table["p_optimal"]))]
    assert best.hdi()[0] <= mode <= best.hdi()[1]
    # For calibrated scores the best threshold is where a positive's expected value turns
    # positive: p 40 + (1 - p)(-8) > p (-25) + (1 - p) 1, p > 9 / 74.
    assert best.hdi()[0] <= 9 / 74 + 0.03
    assert best.hdi()[1] >= 9 / 74 - 0.03
    regret = curve.regret(mode)
    assert np.all(regret.samples >= 0)
    assert np.all(curve.regret(0.9).samples >= 0)
    assert curve.regret(0.9).mean() > regret.mean()
    assert curve.best_value().mean() >= curve.value_at(mode).mean()
    assert "DecisionCurve(99 thresholds" in repr(curve)
    data = curve.to_dict()
    assert data["value"] == VALUE
    assert len(data["value_band"]["threshold"]) == 99


def test_value_matrix_layouts_agree() -> None:
    rng = np.random.default_rng(7)
    y, s = _data(rng, 500)
    as_dict = pe.decision_curve(y, s, value=VALUE, rng=0)
    as_matrix = pe.decision_curve(
        y, s, value=[[VALUE["tn"], VALUE["fp"]], [VALUE["fn"], VALUE["tp"]]], rng=0
    )
    assert as_dict.value == as_matrix.value
    np.testing.assert_array_equal(as_dict.value_at(0.5).samples, as_matrix.value_at(0.5).samples)


def test_real_valued_scores_use_their_percentiles() -> None:
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 400)
    scores = 3.0 * y + rng.normal(0, 2, 400)
    curve = pe.decision_curve(y, scores, value={"tp": 1, "fp": -1}, rng=0)
    assert curve.thresholds[0] == pytest.approx(np.quantile(scores, 0.01))
    with pytest.raises(ValueError, match="net benefit"):
        curve.net_benefit_band()


def test_label_free_value_matches_the_labelled_value() -> None:
    data = pe.load_demo()
    y, s = data["y_true"], data["score_a"]
    metrics = ["accuracy", "prevalence", "selection_rate"]
    estimator = pe.LabelFreeEstimator(metrics=metrics).fit(y[:4_000], s[:4_000])
    estimate = estimator.estimate(s[4_000:], y_true=y[4_000:], target="realized", rng=0)
    post = estimate.value(VALUE)
    labelled = pe.decision_curve(
        y[4_000:], s[4_000:], value=VALUE, thresholds=[0.5], n_samples=4_000, rng=0
    )
    direct = _row_value(y[4_000:], s[4_000:], 0.5).mean()
    assert post.observed == pytest.approx(direct, abs=1e-9)
    assert labelled.value_at(0.5).observed == pytest.approx(direct, abs=1e-12)
    # The label-free estimate is centred near the value the labels show.
    assert abs(post.mean() - direct) < 3 * post.std()
    with pytest.raises(ValueError, match="selection_rate"):
        pe.LabelFreeEstimator(metrics=["accuracy"]).fit(y[:4_000], s[:4_000]).estimate(
            s[4_000:], rng=0
        ).value(VALUE)


def test_bad_value_inputs_are_named() -> None:
    y, s = np.array([0, 1, 0, 1]), np.array([0.2, 0.7, 0.4, 0.9])
    with pytest.raises(ValueError, match="cells are tp, fp, tn, fn"):
        pe.decision_curve(y, s, value={"gain": 1})
    with pytest.raises(ValueError, match="2 x 2"):
        pe.decision_curve(y, s, value=[1, 2, 3])
    with pytest.raises(TypeError, match="value"):
        pe.decision_curve(y, s, value="tp")
    with pytest.raises(ValueError, match=r"value\['fp'\] must be finite"):
        pe.decision_curve(y, s, value={"fp": math.inf})
    with pytest.raises(ValueError, match="strictly increasing"):
        pe.decision_curve(y, s, thresholds=[0.5, 0.2])
    curve = pe.decision_curve(y, s, value={"tp": 1}, rng=0)
    with pytest.raises(ValueError, match="candidate thresholds"):
        curve.value_at(0.555)
