"""Behaviour of the public API: construction, evaluation, priors, summaries, conversions."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import probeval as pe
from probeval import _core

CM = pe.ConfusionMatrix.from_counts(tp=5285, fp=3184, tn=8000, fn=1000)


def test_public_names() -> None:
    for name in pe.__all__:
        assert hasattr(pe, name), name
    assert pe.__version__ == "0.1.0"
    from importlib.metadata import version

    assert version("probeval") == pe.__version__


def test_rust_and_python_catalogues_agree() -> None:
    from probeval.base.metrics import BINARY_METRICS

    assert tuple(_core.binary_metric_names()) == BINARY_METRICS


def test_unknown_metric_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown metric 'f2'") as info:
        CM.posterior("f2")
    for name in ("accuracy", "balanced_accuracy", "diagnostic_odds_ratio", "ppv (precision)"):
        assert name in str(info.value)


def test_aliases_resolve() -> None:
    assert CM.posterior("ppv").metric == "precision"
    assert CM.posterior("TPR").metric == "recall"
    assert CM.posterior("sensitivity").metric == "recall"
    assert CM.posterior("tnr").metric == "specificity"
    ev = pe.evaluate(CM, metrics=["ppv", "f1"], rng=0)
    assert ev["precision"] is ev["ppv"]
    assert ev.metrics == ["precision", "f1"]


def test_evaluate_from_labels_scores_and_counts_agree() -> None:
    y_true = np.repeat([1, 0, 0, 1], [52, 31, 80, 10])
    y_pred = np.repeat([1, 1, 0, 0], [52, 31, 80, 10])
    scores = np.where(y_pred == 1, 0.8, 0.3)
    from_labels = pe.evaluate(y_true, y_pred, rng=1)
    from_scores = pe.evaluate(y_true, y_score=scores, rng=1)
    from_counts = pe.evaluate(pe.ConfusionMatrix.from_counts(tp=52, fp=31, tn=80, fn=10), rng=1)
    for name in from_labels:
        np.testing.assert_array_equal(from_labels[name].samples, from_scores[name].samples)
        np.testing.assert_array_equal(from_labels[name].samples, from_counts[name].samples)
    assert from_labels.metrics == [
        "accuracy",
        "precision",
        "recall",
        "specificity",
        "f1",
        "mcc",
        "balanced_accuracy",
    ]


def test_summary_table() -> None:
    ev = pe.evaluate(CM, metrics=["accuracy", "f1"], rng=0)
    table = ev.summary(ci=0.9)
    assert table.columns == [
        "metric",
        "observed",
        "mean",
        "median",
        "std",
        "hdi_low",
        "hdi_high",
        "width",
    ]
    assert list(table["metric"]) == ["accuracy", "f1"]
    low, high = ev["f1"].hdi(0.9)
    assert table["hdi_low"][1] == low
    assert table["hdi_high"][1] == high
    assert table["width"][1] == pytest.approx(high - low)
    text = str(table)
    assert "accuracy" in text
    assert "hdi_low" in text
    assert "90% HDI" in text
    records = table.to_dict("records")
    assert records[0]["metric"] == "accuracy"
    assert table.to_csv().splitlines()[0] == ",".join(table.columns)
    assert len(table) == 2


def test_to_dict_is_json_serialisable_and_to_pandas_works() -> None:
    ev = pe.evaluate(CM, metrics=["accuracy", "mcc"], rng=0)
    payload = json.loads(json.dumps(ev.to_dict()))
    assert payload["metrics"]["accuracy"]["beta_a"] == 13286
    assert payload["confusion"]["tp"] == 5285
    frame = ev.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.index) == ["accuracy", "mcc"]
    assert frame.loc["mcc", "observed"] == pytest.approx(CM.observed("mcc"))


def test_proportion_metrics_get_beta_with_prior_per_side_and_joint_gets_marginals() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=10, fp=4, tn=20, fn=6)
    assert cm.posterior("accuracy").beta_params == (31.0, 11.0)
    assert cm.posterior("accuracy", prior="jeffreys").beta_params == (30.5, 10.5)
    assert cm.posterior("accuracy", joint=True).beta_params == (32.0, 12.0)
    assert cm.posterior("precision", prior=0.5, joint=True).beta_params == (10.5, 4.5)
    per_cell = np.array([[2.0, 1.0], [0.5, 3.0]])  # [[TN, FP], [FN, TP]]
    assert cm.posterior("precision", prior=per_cell).beta_params == (13.0, 5.0)
    assert cm.posterior("accuracy", prior=per_cell).beta_params == (35.0, 11.5)
    mapping = {"tp": 3.0, "fp": 1.0, "tn": 2.0, "fn": 0.5}
    assert cm.posterior("recall", prior=mapping).beta_params == (13.0, 6.5)


def test_sequential_updating_equals_pooling() -> None:
    day1 = pe.ConfusionMatrix.from_counts(tp=30, fp=8, tn=50, fn=12)
    day2 = pe.ConfusionMatrix.from_counts(tp=25, fp=15, tn=41, fn=4)
    pooled = day1 + day2
    metrics = ["accuracy", "precision", "f1", "mcc"]
    for joint in (False, True):
        ev1 = pe.evaluate(day1, metrics=metrics, prior="jeffreys", joint=joint, rng=1)
        sequential = pe.evaluate(day2, metrics=metrics, prior=ev1, joint=joint, rng=2)
        together = pe.evaluate(pooled, metrics=metrics, prior="jeffreys", joint=joint, rng=2)
        for name in metrics:
            assert sequential[name].beta_params == together[name].beta_params
            np.testing.assert_array_equal(sequential[name].samples, together[name].samples)
    # A posterior of one metric works as a prior too, and so does the Prior object.
    post = day1.posterior("accuracy")
    assert (
        day2.posterior("accuracy", prior=post).beta_params
        == pooled.posterior("accuracy").beta_params
    )
    prior = ev1.as_prior()
    assert "absorbed=100" in repr(prior)
    assert day2.posterior("f1", prior=prior, rng=0).mean() == pytest.approx(
        pooled.posterior("f1", prior="jeffreys", rng=0).mean()
    )


def test_lazy_exact_posterior_and_sampled_posterior_methods() -> None:
    acc = CM.posterior("accuracy", rng=0)
    assert acc.exact
    assert acc._samples is None
    assert isinstance(acc.quantile(0.5), float)
    assert acc.quantile([0.1, 0.9]).shape == (2,)
    assert acc.pdf(np.array([[0.75, 0.76]])).shape == (1, 2)
    assert acc.cdf(0.7604) == pytest.approx(stats.beta.cdf(0.7604, 13286, 4185), rel=1e-9)
    assert acc.width() == pytest.approx(acc.hdi()[1] - acc.hdi()[0])
    assert acc.interval(0.9, "eti") == acc.eti(0.9)
    mcc = CM.posterior("mcc", rng=0)
    assert not mcc.exact
    assert mcc.beta_params is None
    samples = mcc.samples
    assert not samples.flags.writeable
    assert mcc.mean() == pytest.approx(samples.mean())
    assert mcc.std() == pytest.approx(samples.std())
    assert mcc.median() == pytest.approx(np.median(samples))
    assert mcc.prob_above(0.534) == pytest.approx(np.mean(samples > 0.534))
    assert mcc.cdf(0.534) == pytest.approx(np.mean(samples <= 0.534))
    low, high = mcc.eti(0.9)
    assert low == pytest.approx(np.quantile(samples, 0.05))
    assert high == pytest.approx(np.quantile(samples, 0.95))
    assert abs(mcc.mode() - mcc.mean()) < mcc.std()
    summary = mcc.summary()
    assert summary["metric"] == "mcc"
    assert summary["exact"] is False
    assert "Posterior(mcc:" in repr(mcc)
    assert "10000 samples" in repr(mcc)
    assert "exact Beta" in repr(acc)


def test_posterior_constructors() -> None:
    post = pe.Posterior.from_samples([0.1, 0.2, 0.3, 0.25], metric="custom")
    assert post.mean() == pytest.approx(0.2125)
    unbounded = pe.Posterior.from_samples([-3.0, 2.0, 5.0], bounds=None)
    assert unbounded.bounds == (-math.inf, math.inf)
    beta = pe.Posterior.from_beta(3, 7, rng=1)
    assert beta.beta_params == (3.0, 7.0)
    assert beta.hdi() == _core.beta_hdi(3.0, 7.0, 0.95)
    with pytest.raises(ValueError, match="outside bounds"):
        pe.Posterior.from_samples([0.5, 1.5])
    with pytest.raises(ValueError, match="improper"):
        pe.Posterior.from_beta(0, 0)
    with pytest.raises(ValueError, match="cannot serve as a prior"):
        post.as_prior()


def test_confusion_matrix_basics() -> None:
    cm = pe.ConfusionMatrix([[8000, 3184], [1000, 5285]])
    assert cm == CM
    assert cm.cells() == (5285.0, 3184.0, 8000.0, 1000.0)
    assert cm.total == 17469
    assert (cm + cm).tp == 10570
    assert json.loads(json.dumps(cm.to_dict()))["fn"] == 1000
    assert repr(cm) == "ConfusionMatrix(tp=5285, fp=3184, tn=8000, fn=1000, labels=(0, 1))"
    assert not cm.counts.flags.writeable
    three = pe.ConfusionMatrix(np.eye(3, dtype=int) * 5)
    assert three.n_classes == 3
    assert not three.is_binary
    with pytest.raises(ValueError, match="per class: say how to combine the classes"):
        three.posterior("precision")
    with pytest.raises(ValueError, match="binary data only"):
        three.posterior("positive_likelihood_ratio")
    # Parts with different classes add up over the union of the classes (sorted).
    part1 = pe.ConfusionMatrix([[5, 1], [2, 7]], labels=["cat", "eel"])
    part2 = pe.ConfusionMatrix([[3, 0, 1], [0, 4, 0], [1, 0, 2]], labels=["cat", "dog", "eel"])
    total = part1 + part2
    assert total.labels == ("cat", "dog", "eel")
    np.testing.assert_array_equal(total.counts, [[8, 0, 2], [0, 4, 0], [3, 0, 9]])
    assert pe.ConfusionMatrix.from_dict(total.to_dict()) == total


def test_score_metrics_are_refused_on_a_confusion_matrix() -> None:
    with pytest.raises(ValueError, match="needs scores"):
        CM.posterior("roc_auc")


def test_kde_matches_scipy_and_keeps_mass_inside_bounds() -> None:
    rng = np.random.default_rng(0)
    samples = rng.beta(30, 10, 100_000)
    ours = pe.kde(samples, bounds=None, grid_size=512)
    reference = stats.gaussian_kde(samples, bw_method="scott")
    exact = reference(ours.grid)
    assert np.max(np.abs(ours.density - exact)) < 1e-3 * exact.max()
    # A posterior piled up at 1: reflection keeps the density integrating to 1 on [0, 1].
    piled = rng.beta(2000, 3, 100_000)
    bounded = pe.kde(piled, bounds=(0, 1))
    assert bounded.grid[-1] == 1.0
    assert bounded.integral() == pytest.approx(1.0, abs=1e-3)
    assert pe.kde(piled, bounds=None).grid[-1] > 1.0
    assert pe.kde([0.5, 0.5, 0.5]).mode == 0.5  # a point mass


def test_every_result_object_has_repr_and_strict_json_to_dict() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=40, fp=10, tn=45, fn=5)
    ev = pe.evaluate(cm, metrics=["f1", "accuracy"], rng=0)
    post = ev["f1"]
    cmp = pe.compare(post, cm.posterior("f1", rng=1), rope=0.01, rng=2)
    objects = [cm, ev, post, ev["accuracy"], cmp, cmp.decide(), post.kde(), ev.as_prior()]
    for obj in objects:
        assert repr(obj)
        # Strict JSON: no NaN or Infinity, which JSON readers other than Python's refuse.
        json.dumps(obj.to_dict(), allow_nan=False)


def test_to_dict_is_strict_json_where_values_are_undefined() -> None:
    """Results whose values are undefined or unknown (no predicted positives, a calibration
    bin without rows, a label-free posterior with no observed value, a chunk without labels)
    still give strict JSON, with null in those places."""
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(20, dtype=int), np.ones(3, dtype=int)]
    scores = np.r_[rng.uniform(0.0, 0.3, 20), rng.uniform(0.2, 0.4, 3)]  # nothing above 0.5
    never = np.zeros(23, dtype=int)
    reference = rng.random(4_000)
    estimator = pe.LabelFreeEstimator().fit(rng.random(4_000) < reference, reference)
    production = rng.random(3_000)
    partial = np.where(np.arange(3_000) < 1_500, (rng.random(3_000) < production) * 1.0, np.nan)
    estimate = estimator.estimate(production, n_chunks=2, partial_labels=partial, rng=0)
    blind = estimator.estimate(production, n_chunks=2, rng=0)
    results = {
        "evaluate": pe.evaluate(y, y_score=scores, metrics=["precision", "mcc", "roc_auc"], rng=0),
        "calibration": pe.calibration(y, scores, rng=0),
        "curves": pe.curves(y, scores, rng=0),
        "decision_curve": pe.decision_curve(y, scores, rng=0),
        "compare_paired": pe.compare_paired(
            y_pred_a=never, y_pred_b=(scores > 0.2).astype(int), y_true=y, metric="precision", rng=0
        ),
        "rank_models": pe.rank_models(y, {"a": never, "b": never}, metric="precision", rng=0),
        "label-free posterior": blind.posterior("precision", chunk=0),
        "label-free estimate": blind,
        "label-free estimate, partial labels": estimate,
    }
    for name, result in results.items():
        payload = result.to_dict()
        text = json.dumps(payload, allow_nan=False)
        assert json.loads(text) == payload, name
    assert results["label-free posterior"].to_dict()["observed"] is None
    chunks = results["label-free estimate, partial labels"].to_dict()["chunks"]
    assert chunks[0]["diagnostics"]["labels_p"] is not None
    assert chunks[1]["diagnostics"]["labels_p"] is None
