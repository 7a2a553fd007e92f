"""rank_models: rank posteriors of several models on the same rows, checked against a brute-force
numpy draw of the same joint Dirichlet, against compare_paired for two models, and for ROC AUC
against the paired ROC AUC."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import probeval as pe

RNG = np.random.default_rng(11)
N = 1_500
Y = RNG.integers(0, 2, N)
MODELS = {
    name: np.where(RNG.random(N) < q, Y, 1 - Y)
    for name, q in (("weak", 0.78), ("mid", 0.80), ("close", 0.805), ("strong", 0.84))
}


def _brute_force(metric: str, draws: int, seed: int) -> np.ndarray:
    """The joint Dirichlet drawn by numpy: cells (y, prediction of each model), prior 1 per
    model cell spread as c / 2^(M - 1) over the joint cells."""
    preds = np.array(list(MODELS.values()))
    m = preds.shape[0]
    bits = np.vstack([Y, preds])
    codes = (bits * (1 << np.arange(m + 1))[:, None]).sum(axis=0)
    alpha = np.bincount(codes, minlength=1 << (m + 1)) + 1.0 / (1 << (m - 1))
    shares = np.random.default_rng(seed).dirichlet(alpha, draws)
    cells = np.arange(1 << (m + 1))
    truth = (cells & 1).astype(bool)
    out = np.empty((m, draws))
    for j in range(m):
        says = ((cells >> (j + 1)) & 1).astype(bool)
        tp = shares[:, truth & says].sum(axis=1)
        fp = shares[:, ~truth & says].sum(axis=1)
        fn = shares[:, truth & ~says].sum(axis=1)
        tn = shares[:, ~truth & ~says].sum(axis=1)
        out[j] = (tp + tn) if metric == "accuracy" else 2 * tp / (2 * tp + fp + fn)
    return out


@pytest.mark.parametrize("metric", ["accuracy", "f1"])
def test_rank_probabilities_agree_with_brute_force(metric: str) -> None:
    draws = 40_000
    ranking = pe.rank_models(Y, MODELS, metric=metric, n_samples=draws, rng=2)
    probabilities = ranking.rank_probabilities()
    np.testing.assert_allclose(probabilities.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-12)
    brute = _brute_force(metric, draws, seed=5)
    brute_ranks = np.argsort(np.argsort(-brute, axis=0), axis=0) + 1
    for r in range(1, len(MODELS) + 1):
        expected = (brute_ranks == r).mean(axis=1)
        # Two independent Monte Carlo estimates of each probability: 4 standard errors.
        se = np.sqrt(np.maximum(expected * (1 - expected), 1e-4) * 2 / draws)
        assert np.all(np.abs(probabilities[:, r - 1] - expected) <= 4 * se), (r, expected)
    for j, name in enumerate(MODELS):
        post = ranking.posterior(name)
        se = brute[j].std() / np.sqrt(draws)
        assert post.mean() == pytest.approx(brute[j].mean(), abs=5 * se)
        assert post.std() == pytest.approx(brute[j].std(), rel=0.03)


def test_each_model_keeps_its_own_posterior_and_two_models_match_compare_paired() -> None:
    ranking = pe.rank_models(Y, MODELS, metric="f1", n_samples=40_000, rng=3)
    for name, pred in MODELS.items():
        alone = pe.evaluate(Y, pred, metrics="f1", rng=4)["f1"]
        assert ranking.posterior(name).mean() == pytest.approx(alone.mean(), abs=1e-3)
        assert ranking.posterior(name).std() == pytest.approx(alone.std(), rel=0.03)
    pair = pe.rank_models(
        Y, {"a": MODELS["mid"], "b": MODELS["close"]}, metric="f1", n_samples=40_000, rng=5
    )
    paired = pe.compare_paired(Y, MODELS["mid"], MODELS["close"], metric="f1", rng=6)
    p = float((paired.difference.samples > 0).mean())
    se = np.sqrt(p * (1 - p) * (1 / 40_000 + 1 / paired.difference.samples.size))
    assert pair.p_best()["a"] == pytest.approx(p, abs=4 * se)
    np.testing.assert_allclose(pair.p_better() + pair.p_better().T + np.eye(2), 1.0, atol=1e-12)


def test_roc_auc_ranks_share_row_weights() -> None:
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 800)
    common = rng.normal(size=800)
    scores = {f"s{d}": d * y + 0.8 * common + 0.6 * rng.normal(size=800) for d in (0.8, 1.0, 1.1)}
    ranking = pe.rank_models(y, scores, metric="roc_auc", n_samples=20_000, rng=1)
    for name, s in scores.items():
        assert ranking.posterior(name).mean() == pytest.approx(roc_auc_score(y, s), abs=0.003)
    paired = pe.compare_paired(
        y,
        y_score_a=scores["s1.0"],
        y_score_b=scores["s1.1"],
        metric="roc_auc",
        n_samples=20_000,
        rng=2,
    )
    difference = ranking.samples[1] - ranking.samples[2]
    assert difference.std() == pytest.approx(paired.difference.std(), rel=0.05)
    p = float((paired.difference.samples > 0).mean())
    assert ranking.p_better()[1, 2] == pytest.approx(p, abs=4 * np.sqrt(p * (1 - p) / 10_000))


def test_lower_is_better_metrics_rank_the_lowest_first_and_rope() -> None:
    ranking = pe.rank_models(Y, MODELS, metric="fpr", rope=0.01, rng=0)
    best = max(ranking.p_best(), key=ranking.p_best().get)
    fpr = {k: ((v == 1) & (Y == 0)).sum() / (Y == 0).sum() for k, v in MODELS.items()}
    assert best == min(fpr, key=fpr.get)
    rope = ranking.p_rope()
    np.testing.assert_allclose(np.diag(rope), 1.0)
    assert np.all(ranking.p_better() + ranking.p_better().T + rope <= 1.0 + 1e-12)
    table = ranking.summary()
    assert next(iter(table["model"])) == best
    assert set(ranking.to_dict()) >= {"rank_probabilities", "p_better", "p_rope", "summary"}


def test_rank_models_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 2 models"):
        pe.rank_models(Y, {"a": Y})
    with pytest.raises(TypeError, match="dict of model name"):
        pe.rank_models(Y, "abc")
    with pytest.raises(ValueError, match="same length"):
        pe.rank_models(Y, [Y, Y[:10]])
    with pytest.raises(ValueError, match="no better direction"):
        pe.rank_models(Y, [Y, Y], metric="prevalence")
    with pytest.raises(ValueError, match="binary"):
        pe.rank_models([0, 1, 2], [[0, 1, 2], [0, 1, 1]])
    with pytest.raises(ValueError, match="rope"):
        pe.rank_models(Y, [Y, Y], rope=-1)
    with pytest.raises(ValueError, match="classes not in y_true"):
        pe.rank_models([0, 1, 0], [[0, 1, 0], [0, 1, 2]])
    with pytest.raises(KeyError, match="no model"):
        pe.rank_models(Y, [Y, Y], rng=0, n_samples=9).posterior("x")
