"""evaluate_by: per-segment counts against numpy, summaries against the full posteriors and the
exact Beta, rows against counts, multiclass segments, and errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import probeval as pe

RNG = np.random.default_rng(0)
N = 20_000
SEGMENT = RNG.choice(["b", "a", "c", "d"], N)
Y = RNG.integers(0, 2, N)
PRED = (RNG.random(N) < 0.25 + 0.5 * Y).astype(int)
W = RNG.random(N) * 2


def test_counts_equal_numpy_and_rows_equal_counts() -> None:
    result = pe.evaluate_by(Y, PRED, by=SEGMENT, n_samples=2000, rng=3)
    assert result.segments.tolist() == ["a", "b", "c", "d"]
    for i, key in enumerate(result.segments):
        mask = key == SEGMENT
        expected = np.bincount(Y[mask] * 2 + PRED[mask], minlength=4).reshape(2, 2)
        np.testing.assert_array_equal(result.counts[i], expected)
    by_counts = pe.evaluate_by(
        counts=result.counts, segments=result.segments, n_samples=2000, rng=3
    )
    for metric in result:
        for stat in ("mean", "hdi_low", "hdi_high", "eti_low", "observed"):
            np.testing.assert_array_equal(result[metric][stat], by_counts[metric][stat])
    weighted = pe.evaluate_by(Y, PRED, by=SEGMENT, sample_weight=W, n_samples=500, rng=3)
    mask = SEGMENT == "c"
    expected = np.bincount(Y[mask] * 2 + PRED[mask], weights=W[mask], minlength=4).reshape(2, 2)
    np.testing.assert_allclose(weighted.counts[2], expected, rtol=1e-12)


def test_summaries_only_equal_the_full_posteriors() -> None:
    metrics = ["accuracy", "precision", "f1", "mcc", "kappa"]
    full = pe.evaluate_by(Y, PRED, by=SEGMENT, metrics=metrics, n_samples=3000, rng=5, ci=0.9)
    light = pe.evaluate_by(
        Y, PRED, by=SEGMENT, metrics=metrics, n_samples=3000, rng=5, ci=0.9, summaries_only=True
    )
    for metric in metrics:
        for stat in ("mean", "std", "median", "hdi_low", "hdi_high", "eti_low", "eti_high"):
            np.testing.assert_array_equal(full[metric][stat], light[metric][stat])
        for i, key in enumerate(full.segments):
            post = full.posterior(key, metric)
            assert post.hdi(0.9) == (full[metric]["hdi_low"][i], full[metric]["hdi_high"][i])
    with pytest.raises(ValueError, match="summaries only"):
        light.posterior("a", "f1")


def test_exact_and_sampled_metrics_agree_with_evaluate_per_segment() -> None:
    result = pe.evaluate_by(Y, PRED, by=SEGMENT, n_samples=20_000, rng=7)
    for i, key in enumerate(result.segments):
        mask = key == SEGMENT
        ev = pe.evaluate(Y[mask], PRED[mask], n_samples=20_000, rng=11)
        exact = ev["accuracy"]
        assert result["accuracy"]["hdi_low"][i] == exact.hdi()[0]  # same exact Beta
        assert result["accuracy"]["median"][i] == exact.median()
        f1 = ev["f1"]
        assert result["f1"]["observed"][i] == f1.observed
        # Independent draws: means within 5 Monte Carlo standard errors of their difference.
        assert abs(result["f1"]["mean"][i] - f1.mean()) < 5 * f1.std() * np.sqrt(2 / 20_000)
        assert result["f1"]["std"][i] == pytest.approx(f1.std(), rel=0.05)


def test_jaccard_is_the_same_exact_beta_as_in_evaluate() -> None:
    for prior in ("uniform", "jeffreys", 3.0):
        result = pe.evaluate_by(Y, PRED, by=SEGMENT, metrics=["jaccard"], prior=prior, rng=1)
        for i, key in enumerate(result.segments):
            mask = key == SEGMENT
            exact = pe.evaluate(Y[mask], PRED[mask], metrics=["jaccard"], prior=prior)["jaccard"]
            assert exact.exact
            assert result["jaccard"]["mean"][i] == pytest.approx(exact.mean(), rel=1e-14)
            assert result["jaccard"]["hdi_high"][i] == exact.hdi()[1]
            assert result.posterior(key, "jaccard").beta_params == exact.beta_params


def test_multiclass_segments_from_counts() -> None:
    counts = RNG.integers(0, 50, (6, 3, 3))
    result = pe.evaluate_by(
        counts=counts,
        labels=["x", "y", "z"],
        metrics=["accuracy", "f1_macro"],
        rng=1,
        n_samples=4000,
    )
    for s in range(6):
        cm = pe.ConfusionMatrix(counts[s], labels=["x", "y", "z"])
        assert result["accuracy"]["hdi_low"][s] == cm.posterior("accuracy").hdi()[0]
        f1 = cm.posterior("f1_macro", n_samples=4000, rng=2)
        assert abs(result["f1_macro"]["mean"][s] - f1.mean()) < 5 * f1.std() * np.sqrt(2 / 4000)
    assert result.posterior(3, "f1_macro").n_samples == 4000


def test_frames_tables_and_scores() -> None:
    frame = pd.DataFrame({"label": Y, "score": np.where(PRED == 1, 0.8, 0.2), "seg": SEGMENT})
    result = pe.evaluate_by(frame, y_true="label", y_score="score", by="seg", n_samples=500, rng=0)
    assert result.counts.sum() == N
    table = result.to_pandas()
    assert len(table) == 4 * len(result.metrics)
    assert list(table.columns[:4]) == ["segment", "metric", "n", "observed"]
    assert result.totals.dtype == np.int64
    assert repr(result).startswith("4 segments")
    data = result.to_dict()
    assert data["hdi_low"].shape == (4 * len(result.metrics),)


@pytest.mark.parametrize(
    ("call", "error", "fragment"),
    [
        (lambda: pe.evaluate_by(Y, PRED), TypeError, "by="),
        (lambda: pe.evaluate_by(Y, by=SEGMENT), TypeError, "y_pred or y_score"),
        (lambda: pe.evaluate_by(Y, PRED, by=SEGMENT[:10]), ValueError, "same length"),
        (lambda: pe.evaluate_by(counts=np.zeros((3, 2))), ValueError, "(n_segments, K, K)"),
        (lambda: pe.evaluate_by(counts=-np.ones((2, 2, 2))), ValueError, ">= 0"),
        (lambda: pe.evaluate_by(counts=np.ones((2, 2, 2)), segments=[1]), ValueError, "segments"),
        (lambda: pe.evaluate_by(counts=np.ones((2, 2, 2)), segments=[1, 1]), ValueError, "unique"),
        (lambda: pe.evaluate_by(counts=np.full((1, 2, 2), "a")), TypeError, "numbers"),
        (
            lambda: pe.evaluate_by(Y, PRED, by=SEGMENT, counts=np.ones((1, 2, 2))),
            TypeError,
            "not both",
        ),
        (
            lambda: pe.evaluate_by(counts=np.zeros((1, 2, 2)), prior=0, metrics=["f1"]),
            ValueError,
            "segment 0",
        ),
        (
            lambda: pe.evaluate_by(counts=np.ones((1, 2, 2)), metrics=["gini"]),
            ValueError,
            "unknown metric",
        ),
        (lambda: pe.evaluate_by(counts=np.ones((1, 2, 2)), ci=1.0), ValueError, "ci"),
        (lambda: pe.evaluate_by(counts=np.ones((1, 2, 2)), n_samples=0), ValueError, "n_samples"),
        (
            lambda: pe.evaluate_by(
                counts=np.ones((1, 2, 2)),
                prior=pe.ConfusionMatrix.from_counts(tp=1, fp=1, tn=1, fn=1).posterior("f1"),
            ),
            ValueError,
            "not a previous posterior",
        ),
        (
            lambda: pe.evaluate_by(counts=np.ones((2, 2, 2))).posterior(7, "f1"),
            KeyError,
            "no segment",
        ),
    ],
)
def test_bad_input(call: object, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error, match=None) as info:
        call()  # type: ignore[operator]
    assert fragment in str(info.value)
