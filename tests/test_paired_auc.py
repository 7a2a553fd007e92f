"""Paired ROC AUC: two models' scores on the same rows, one Bayesian-bootstrap weight per row
shared by both. Checked against DeLong's paired variance (reimplemented here from DeLong,
DeLong & Clarke-Pearson 1988), by coverage of the true difference in simulation, and against
scikit-learn's point values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, roc_auc_score

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
    with pytest.raises(ValueError, match="metric='accuracy'"):
        pe.compare_paired(y, y_score_a=a, y_score_b=a, metric="accuracy")
    with pytest.raises(ValueError, match="binary"):
        pe.compare_paired([0, 1, 2, 1], y_score_a=a, y_score_b=a, metric="roc_auc")
    with pytest.raises(ValueError, match="same length"):
        pe.compare_paired(y, y_score_a=a[:3], y_score_b=a, metric="roc_auc")
    with pytest.raises(ValueError, match="y_score_a"):
        pe.compare_paired(y, y_score_a=[0.1, np.nan, 0.2, 0.3], y_score_b=a, metric="roc_auc")
    with pytest.raises(ValueError, match="class"):
        pe.compare_paired([1, 1, 1, 1], y_score_a=a, y_score_b=a, metric="roc_auc")


# ---------------------------------------------------------------- average precision, multiclass


def _weighted_ap(w: np.ndarray, positive: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Average precision of scores ``s`` under each row of weights ``w`` (draws x rows), as
    scikit-learn defines it: the sum over distinct thresholds, highest first, of the recall
    gained times the precision there."""
    order = np.argsort(-s, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(s[order]) != 0])
    tp = np.cumsum(np.add.reduceat(w[:, order] * positive[order], starts, axis=1), axis=1)
    fp = np.cumsum(np.add.reduceat(w[:, order] * ~positive[order], starts, axis=1), axis=1)
    recall = tp / tp[:, -1:]
    gained = np.diff(np.c_[np.zeros(len(w)), recall], axis=1)
    return (gained * tp / (tp + fp)).sum(axis=1)


def _weighted_auc(w: np.ndarray, positive: np.ndarray, s: np.ndarray) -> np.ndarray:
    """ROC AUC (ties count one half) of scores ``s`` under each row of weights ``w``."""
    order = np.argsort(s, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(s[order]) != 0])
    p = np.add.reduceat(w[:, order] * positive[order], starts, axis=1)
    q = np.add.reduceat(w[:, order] * ~positive[order], starts, axis=1)
    below = np.cumsum(q, axis=1) - q
    return (p * (below + 0.5 * q)).sum(axis=1) / (p.sum(axis=1) * q.sum(axis=1))


def _bootstrap_sd(statistic, n_rows: int, draws: int, seed: int) -> tuple[float, float]:
    """SD of ``statistic(weights)`` under Exp(1) row weights (brute force), and the standard
    error of that SD (normal theory, sd / sqrt(2 (draws - 1)))."""
    w = np.random.default_rng(seed).standard_exponential((draws, n_rows))
    sd = float(np.std(statistic(w), ddof=1))
    return sd, sd / math.sqrt(2 * (draws - 1))


@pytest.mark.parametrize("data_set", DATA_SETS[:4])
def test_paired_average_precision_matches_a_brute_force_shared_bootstrap(data_set) -> None:
    n, prevalence, d_a, d_b, rho = data_set
    rng = np.random.default_rng(n)
    y, a, b, _ = _pair(rng, n, prevalence, d_a, d_b, rho)
    # Coarse scores, so that ties are part of what is checked.
    a, b = np.round(a, 1), np.round(b, 1)
    cmp = pe.compare_paired(
        y, y_score_a=a, y_score_b=b, metric="average_precision", n_samples=4_000, rng=3
    )
    positive = y == 1
    assert cmp.a.observed == pytest.approx(average_precision_score(y, a), abs=1e-12)
    assert cmp.b.observed == pytest.approx(average_precision_score(y, b), abs=1e-12)
    sd, se = _bootstrap_sd(
        lambda w: _weighted_ap(w, positive, a) - _weighted_ap(w, positive, b), n, 4_000, 9
    )
    # Two independent estimates of the same SD, each with standard error ~ se: 4 SE apart at
    # most.
    assert abs(cmp.difference.std() - sd) < 4 * math.sqrt(2) * se, (cmp.difference.std(), sd)
    # The bootstrap's mean difference is the observed one to first order.
    assert abs(cmp.mean() - cmp.difference.observed) < 0.5 * cmp.std()


def test_paired_average_precision_is_narrower_than_independent() -> None:
    rng = np.random.default_rng(21)
    y, a, b, _ = _pair(rng, 1_500, 0.3, 1.4, 1.2, 0.8)
    paired = pe.compare_paired(y, y_score_a=a, y_score_b=b, metric="average_precision", rng=0)
    post_a = pe.ScoreSummary.from_scores(y, a).posterior("average_precision", rng=1)
    post_b = pe.ScoreSummary.from_scores(y, b).posterior("average_precision", rng=2)
    ratio = paired.difference.std() / pe.compare(post_a, post_b).difference.std()
    assert ratio < 0.75, ratio
    same = pe.compare_paired(y, y_score_a=a, y_score_b=a.copy(), metric="ap", rng=0)
    assert np.abs(same.difference.samples).max() < 1e-12


def _multiclass_pair(
    rng: np.random.Generator, n: int, k: int, rho: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Softmax scores of two models on k classes with correlated noise; the second model is
    a little weaker."""
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    common = rng.normal(size=(n, k))
    signal = np.eye(k)[y]

    def model(strength: float) -> np.ndarray:
        noise = math.sqrt(rho) * common + math.sqrt(1 - rho) * rng.normal(size=(n, k))
        logits = strength * signal + noise
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return y, model(1.6), model(1.3)


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_paired_multiclass_auc_matches_a_brute_force_shared_bootstrap(average: str) -> None:
    rng = np.random.default_rng(4)
    y, a, b = _multiclass_pair(rng, 900, 4, 0.6)
    cmp = pe.compare_paired(
        y, y_score_a=a, y_score_b=b, metric=f"roc_auc_{average}", n_samples=4_000, rng=1
    )
    assert cmp.metric == f"roc_auc_{average}"
    for post, scores in ((cmp.a, a), (cmp.b, b)):
        assert post.observed == pytest.approx(
            roc_auc_score(y, scores, multi_class="ovr", average=average), abs=1e-12
        )
    classes = [y == j for j in range(4)]

    def averaged(w: np.ndarray, s: np.ndarray) -> np.ndarray:
        values = np.array([_weighted_auc(w, c, s[:, j]) for j, c in enumerate(classes)])
        if average == "macro":
            return values.mean(axis=0)
        shares = np.array([(w * c).sum(axis=1) for c in classes])
        return (values * shares).sum(axis=0) / shares.sum(axis=0)

    sd, se = _bootstrap_sd(lambda w: averaged(w, a) - averaged(w, b), len(y), 3_000, 5)
    assert abs(cmp.difference.std() - sd) < 4 * math.sqrt(2) * se, (cmp.difference.std(), sd)
    # Paired: much narrower than the two models' own spreads combined independently.
    assert cmp.difference.std() < 0.8 * math.hypot(cmp.a.std(), cmp.b.std())


def test_paired_multiclass_class_auc_and_binary_matrices() -> None:
    rng = np.random.default_rng(8)
    y, a, b = _multiclass_pair(rng, 600, 3, 0.5)
    labels = np.array(["cat", "dog", "eel"])[y]
    cmp = pe.compare_paired(labels, y_score_a=a, y_score_b=b, metric="roc_auc[dog]", rng=0)
    assert cmp.metric == "roc_auc[dog]"
    assert cmp.a.observed == pytest.approx(roc_auc_score(y == 1, a[:, 1]), abs=1e-12)
    # Binary data as predict_proba gives them ((n, 2) matrices) equal the 1-D positive column.
    yb, sa, sb, _ = _pair(rng, 500, 0.4, 1.0, 0.8, 0.5)
    pa, pb = np.column_stack([1 - sa, sa]), np.column_stack([1 - sb, sb])
    as_matrices = pe.compare_paired(yb, y_score_a=pa, y_score_b=pb, metric="roc_auc", rng=2)
    as_columns = pe.compare_paired(yb, y_score_a=sa, y_score_b=sb, metric="roc_auc", rng=2)
    assert as_matrices.difference.observed == pytest.approx(as_columns.difference.observed)
    np.testing.assert_allclose(as_matrices.samples, as_columns.samples, atol=1e-12)
    with pytest.raises(ValueError, match="roc_auc_macro"):
        pe.compare_paired(y, y_score_a=a, y_score_b=b, metric="roc_auc")
    with pytest.raises(ValueError, match="same shape"):
        pe.compare_paired(y, y_score_a=a, y_score_b=b[:, :2], metric="roc_auc_macro")
    with pytest.raises(ValueError, match="both"):
        pe.compare_paired(y, y_score_a=a, y_score_b=b[:, 0], metric="roc_auc_macro")


def test_rank_models_by_average_precision_agrees_with_the_paired_comparison() -> None:
    rng = np.random.default_rng(30)
    y, a, b, _ = _pair(rng, 1_200, 0.25, 1.4, 1.1, 0.7)
    ranking = pe.rank_models(y, {"a": a, "b": b}, metric="average_precision", rng=4)
    paired = pe.compare_paired(y, y_score_a=a, y_score_b=b, metric="average_precision", rng=4)
    assert ranking.posterior("a").observed == pytest.approx(paired.a.observed)
    # The same kernel and seed stream: the same draws.
    np.testing.assert_allclose(ranking.posterior("a").samples, paired.a.samples)
    assert ranking.p_best()["a"] == pytest.approx(float(np.mean(paired.samples > 0)))
