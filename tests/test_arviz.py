"""Posterior draws to ArviZ and xarray: the draws arrive unchanged, with sensible dimensions,
and ArviZ's own summaries agree with probeval's."""

from __future__ import annotations

import math

import arviz
import numpy as np
import pytest
import xarray

import probeval as pe

DATA = pe.load_demo()
Y, A, B = DATA["y_true"], DATA["score_a"], DATA["score_b"]


def test_posterior_round_trips_through_arviz() -> None:
    post = pe.ConfusionMatrix.from_counts(tp=40, fp=9, tn=45, fn=6).posterior("mcc", rng=0)
    data = post.to_arviz()
    values = data.posterior["mcc"]
    assert values.dims == ("chain", "draw")
    np.testing.assert_array_equal(values.values.ravel(), post.samples)
    assert float(data.observed_data["mcc"]) == pytest.approx(post.observed)
    # ArviZ's HDI of the same draws is probeval's (both: the narrowest interval of the draws).
    low, high = arviz.hdi(data, hdi_prob=0.95)["mcc"].values
    assert (low, high) == pytest.approx(post.hdi(0.95), abs=2e-3)
    summary = arviz.summary(data, hdi_prob=0.95, kind="stats")
    assert summary.loc["mcc", "mean"] == pytest.approx(post.mean(), abs=1e-3)


def test_evaluation_has_one_variable_per_metric() -> None:
    ev = pe.evaluate(Y, y_score=A, metrics=["accuracy", "f1", "roc_auc"], rng=0, n_samples=2_000)
    dataset = ev.to_xarray()
    assert isinstance(dataset, xarray.Dataset)
    assert set(dataset.data_vars) == {"accuracy", "f1", "roc_auc"}
    for name in dataset.data_vars:
        np.testing.assert_array_equal(dataset[name].values[0], ev[name].samples)
    assert dataset.attrs["probeval_result"] == "Evaluation"


def test_label_free_chunks_are_a_dimension() -> None:
    estimator = pe.LabelFreeEstimator(metrics=["accuracy", "f1"]).fit(Y[:4_000], A[:4_000])
    result = estimator.estimate(A[4_000:], y_true=Y[4_000:], n_chunks=4, rng=0, n_samples=1_000)
    data = result.to_arviz()
    accuracy = data.posterior["accuracy"]
    assert accuracy.dims == ("chain", "draw", "chunk")
    assert accuracy.shape == (1, 1_000, 4)
    np.testing.assert_array_equal(
        accuracy.sel(chunk="2").values[0], result.posterior("accuracy", 2).samples
    )
    realized = data.observed_data["accuracy_realized"].values
    assert realized[1] == pytest.approx(result.realized("accuracy", 1))
    means = arviz.summary(data, var_names=["accuracy"], kind="stats")["mean"].to_numpy()
    expected = [result.posterior("accuracy", i).mean() for i in range(4)]
    np.testing.assert_allclose(means, expected, atol=1e-3)


def test_rankings_comparisons_and_folds_convert() -> None:
    ranking = pe.rank_models(Y, {"a": A, "b": B}, metric="roc_auc", n_samples=500, rng=0)
    ranks = ranking.to_xarray()["rank"]
    assert ranks.dims == ("chain", "draw", "model")
    assert list(ranks.coords["model"].values) == ["a", "b"]
    cmp = pe.compare_paired(Y, A > 0.5, B > 0.5, metric="f1", rng=0)
    data = cmp.to_arviz()
    np.testing.assert_allclose(
        data.posterior["difference"].values[0],
        data.posterior["a"].values[0] - data.posterior["b"].values[0],
    )
    folds = [pe.ConfusionMatrix.from_scores(Y[i::5], A[i::5]) for i in range(5)]
    summary = pe.aggregate_folds(folds, metric="f1", rng=0)
    assert set(summary.to_xarray().data_vars) == {"mean", "new_fold", "tau"}
    fold_cmp = pe.compare_folds(folds, folds[::-1], metric="f1", rng=0)
    assert math.isclose(float(fold_cmp.to_xarray()["difference"].mean()), fold_cmp.mean())


def test_a_missing_xarray_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "xarray", None)
    post = pe.ConfusionMatrix.from_counts(tp=4, fp=1, tn=5, fn=2).posterior("f1", rng=0)
    with pytest.raises(ImportError, match=r"probeval\[arviz\]"):
        post.to_xarray()
