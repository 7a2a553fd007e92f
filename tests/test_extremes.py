"""Extreme but valid inputs: huge counts, empty cells, one observation, a thousand classes, and
scores exactly at the threshold and at 0 and 1. Each must give finite results in range that
agree with an independent calculation — not an error, not NaN."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import probeval as pe
from probeval.base.metrics import BINARY_METRICS

HUGE = 10**12


def _in_range(post: pe.Posterior) -> None:
    info = pe.metric_info(post.metric)
    samples = post.samples
    assert np.isfinite(samples).all(), post.metric
    assert samples.min() >= info.lower
    assert samples.max() <= info.upper


def test_counts_of_a_trillion_give_exact_and_sampled_posteriors_at_the_observed_value() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=HUGE, fp=HUGE // 3, tn=2 * HUGE, fn=HUGE // 7)
    ev = pe.evaluate(cm, metrics=list(BINARY_METRICS), n_samples=2000, rng=0)
    for name, post in ev.items():
        _in_range(post)
        observed = cm.observed(name)
        if np.isfinite(observed):
            # With 10^12 observations the posterior SD is ~1e-6: the mean is the observed value.
            assert post.mean() == pytest.approx(observed, rel=1e-5, abs=1e-5), name
    a, b = HUGE + 1, HUGE // 3 + 1
    low, high = pe.metric_interval("precision", tp=HUGE, fp=HUGE // 3, kind="eti")
    expected = stats.beta.interval(0.95, a, b)
    assert low == pytest.approx(expected[0], rel=1e-9)
    assert high == pytest.approx(expected[1], rel=1e-9)


def test_trillion_counts_per_segment_and_in_label_audits() -> None:
    counts = np.array([[[2 * HUGE, HUGE], [HUGE, 3 * HUGE]], [[0, 0], [0, 0]]], dtype=float)
    result = pe.evaluate_by(counts=counts, metrics=["precision", "f1"], n_samples=500, rng=0)
    assert result["precision"]["mean"][0] == pytest.approx(0.75, abs=1e-5)
    # The empty segment falls back to the prior: Beta(1, 1) has mean 1/2.
    assert result["precision"]["mean"][1] == pytest.approx(0.5, abs=0.05)
    for table in result.values():
        assert np.isfinite(table["mean"]).all()


def test_all_zero_cells_give_the_prior_or_a_clear_error() -> None:
    empty = pe.ConfusionMatrix.from_counts(tp=0, fp=0, tn=0, fn=0)
    post = empty.posterior("accuracy")
    assert post.beta_params == (1.0, 1.0)
    assert post.mean() == pytest.approx(0.5)
    ev = pe.evaluate(empty, n_samples=4000, rng=1)
    for post in ev.values():
        _in_range(post)
    with pytest.raises(ValueError, match="improper"):
        empty.posterior("accuracy", prior="haldane").mean()
    # One empty cell among non-empty ones is ordinary data.
    one_empty = pe.ConfusionMatrix.from_counts(tp=7, fp=0, tn=5, fn=2)
    precision = one_empty.posterior("precision")
    assert precision.beta_params == (8.0, 1.0)
    assert precision.hdi(0.95)[1] == 1.0


def test_a_single_observation() -> None:
    ev = pe.evaluate([1], [1], labels=[0, 1], n_samples=4000, rng=2)
    assert ev["accuracy"].beta_params == (2.0, 1.0)
    for post in ev.values():
        _in_range(post)
    summary = pe.ScoreSummary.from_scores([1], [0.7], labels=[0, 1])
    with pytest.raises(ValueError, match="both classes"):
        summary.posterior(n_samples=100, rng=0)
    segments = pe.evaluate_by([1], [0], by=["only"], labels=[0, 1], n_samples=100, rng=0)
    assert segments.n_segments == 1
    assert np.isfinite(segments["accuracy"]["mean"]).all()


def test_one_thousand_classes_give_finite_macro_and_per_class_posteriors() -> None:
    k = 1000
    rng = np.random.default_rng(3)
    y = rng.integers(0, k, 20_000)
    pred = np.where(rng.random(y.size) < 0.7, y, rng.integers(0, k, y.size))
    ev = pe.evaluate(y, pred, metrics=["accuracy", "f1_macro", "recall[999]"], n_samples=64, rng=4)
    for post in ev.values():
        _in_range(post)
    # The default prior for K classes: 0.5 per class on the diagonal and 0.5 over the rest of
    # each row, so accuracy ~ Beta(correct + K / 2, wrong + K / 2) — with 20 rows per class the
    # per-class priors add up to a visible pull towards 1/2 (documented in the README).
    correct = float(np.sum(y == pred))
    a, b = ev["accuracy"].beta_params
    assert a == pytest.approx(correct + k / 2)
    assert b == pytest.approx(y.size - correct + k / 2)
    assert ev["accuracy"].mean() == pytest.approx(np.mean(y == pred), abs=0.02)
    by = pe.evaluate_by(y, pred, by=y % 2, metrics=["accuracy"], n_samples=64, rng=4)
    assert np.isfinite(by["accuracy"]["mean"]).all()


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 1.0])
def test_scores_exactly_at_the_threshold_are_negative_on_every_path(threshold: float) -> None:
    y = np.array([0, 1, 1, 0, 1, 0, 1, 0])
    scores = np.array([threshold, threshold, 1.0, 0.0, threshold, 0.0, 1.0, 1.0])
    expected = (scores > threshold).astype(int)
    cm = pe.ConfusionMatrix.from_scores(y, scores, threshold=threshold)
    reference = pe.ConfusionMatrix.from_predictions(y, expected, labels=[0, 1])
    assert cm.cells() == reference.cells()
    ev = pe.evaluate(y, y_score=scores, threshold=threshold, metrics=["accuracy"], rng=0)
    assert ev["accuracy"].observed == pytest.approx(np.mean(y == expected))
    seg = pe.evaluate_by(y, y_score=scores, by=np.zeros(8), threshold=threshold, n_samples=9)
    assert seg["accuracy"]["observed"][0] == pytest.approx(np.mean(y == expected))
    ensemble = pe.ensemble_report(np.vstack([scores, scores]), y, threshold=threshold, n_samples=9)
    assert ensemble.confusion is not None
    assert ensemble.confusion.observed("accuracy") == pytest.approx(np.mean(y == expected))


def test_scores_of_exactly_zero_and_one() -> None:
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 2000)
    hard = y.astype(float)  # a perfect classifier with scores exactly 0 and 1
    ev = pe.evaluate(y, y_score=hard, metrics=["roc_auc", "average_precision", "f1"], rng=6)
    assert ev["roc_auc"].observed == 1.0
    for post in ev.values():
        _in_range(post)
    ties = np.zeros(y.size)  # every score tied at 0: AUC exactly 1/2
    assert pe.evaluate(y, y_score=ties, metrics=["roc_auc"], rng=6)["roc_auc"].observed == 0.5
    estimator = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc"]).fit(y, hard)
    estimate = estimator.estimate(np.r_[np.zeros(500), np.ones(500)], n_samples=500, rng=7)
    for name in ("accuracy", "roc_auc"):
        post = estimate.posterior(name)
        _in_range(post)
        assert post.mean() > 0.95, name


@pytest.mark.parametrize(
    "labels",
    [
        np.array([0, 2**64 - 1], dtype=np.uint64),
        np.array([-(2**63), 2**63 - 1], dtype=np.int64),
        np.array([False, True]),
        np.array([2**70, 2**71], dtype=object),
    ],
    ids=["uint64-extremes", "int64-extremes", "bool", "python-bigints"],
)
def test_extreme_integer_labels_are_ordinary_labels(labels: np.ndarray) -> None:
    index = np.array([0, 1, 1, 0, 1, 0, 1, 1])
    pred_index = np.array([0, 1, 0, 0, 1, 1, 1, 1])
    plain = [getattr(v, "item", lambda v=v: v)() for v in labels]
    cm = pe.ConfusionMatrix.from_predictions(labels[index], labels[pred_index], pos_label=labels[1])
    assert list(cm.labels) == plain
    reference = pe.ConfusionMatrix.from_predictions(index, pred_index)
    assert cm.cells() == reference.cells()
