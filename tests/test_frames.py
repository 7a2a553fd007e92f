"""Data frames as inputs: column names instead of arrays, for pandas and polars alike, without
probeval importing either."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import polars as pl
import pytest

import probeval as pe

RNG = np.random.default_rng(0)
N = 400
Y = RNG.integers(0, 2, N)
SCORE = np.clip(0.3 + 0.4 * Y + RNG.normal(0, 0.2, N), 0, 1)
PRED_B = (np.clip(0.35 + 0.3 * Y + RNG.normal(0, 0.25, N), 0, 1) > 0.5).astype(int)
DAYS = np.datetime64("2026-01-01") + RNG.integers(0, 60, N).astype("timedelta64[D]")
COLUMNS = {"label": Y, "proba": SCORE, "pred_b": PRED_B, "day": DAYS, "w": np.ones(N)}


@pytest.fixture(params=["pandas", "polars"])
def frame(request: pytest.FixtureRequest) -> object:
    return pd.DataFrame(COLUMNS) if request.param == "pandas" else pl.DataFrame(COLUMNS)


def test_evaluate_reads_columns(frame: object) -> None:
    from_frame = pe.evaluate(frame, y_true="label", y_score="proba", sample_weight="w", rng=3)
    from_arrays = pe.evaluate(Y, y_score=SCORE, sample_weight=np.ones(N), rng=3)
    assert list(from_frame) == list(from_arrays)
    for name in from_arrays:
        np.testing.assert_array_equal(from_frame[name].samples, from_arrays[name].samples)
    with pytest.raises(ValueError, match="'nope' is not a column"):
        pe.evaluate(frame, y_true="nope", y_score="proba")
    with pytest.raises(TypeError, match="name the label column"):
        pe.evaluate(frame, y_score="proba")
    # An integer can name a column too (frames with integer column names); this one has none.
    with pytest.raises(ValueError, match="y_true=3 is not a column"):
        pe.evaluate(frame, y_true=3, y_score="proba")
    with pytest.raises(TypeError, match="must be a column name"):
        pe.evaluate(frame, y_true=3.5, y_score="proba")


def test_integer_column_names_and_pyarrow_tables() -> None:
    # pandas with integer column names: by the integer, or by its text (as the CLI passes it).
    by_position = pd.DataFrame({0: Y, 1: SCORE})
    expected = pe.evaluate(Y, y_score=SCORE, metrics=["f1"], n_samples=200, rng=1)["f1"]
    for names in ((0, 1), ("0", "1")):
        got = pe.evaluate(
            by_position, y_true=names[0], y_score=names[1], metrics=["f1"], n_samples=200, rng=1
        )
        assert got["f1"] == expected
    # pyarrow: `columns` holds the data; the names come from `column_names`.
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"label": Y, "proba": SCORE})
    got = pe.evaluate(table, y_true="label", y_score="proba", metrics=["f1"], n_samples=200, rng=1)
    assert got["f1"] == expected
    with pytest.raises(ValueError, match=r"columns: 'label', 'proba'$"):
        pe.evaluate(table, y_true="nope", y_score="proba")


def test_compare_paired_reads_columns(frame: object) -> None:
    a = (SCORE > 0.5).astype(int)
    # A column name and an array can be mixed.
    c = pe.compare_paired(frame, y_true="label", y_pred_a=a, y_pred_b="pred_b", metric="f1", rng=1)
    d = pe.compare_paired(Y, a, PRED_B, metric="f1", rng=1)
    np.testing.assert_array_equal(c.samples, d.samples)


def test_label_free_estimator_reads_columns(frame: object) -> None:
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(
        frame, y_true="label", y_score="proba"
    )
    by_frame = estimator.estimate(
        frame, y_score="proba", y_true="label", period="M", timestamps="day", rng=2
    )
    by_array = estimator.estimate(SCORE, y_true=Y, period="M", timestamps=DAYS, rng=2)
    assert [c.key for c in by_frame.chunks] == [c.key for c in by_array.chunks]
    np.testing.assert_array_equal(
        by_frame.posterior("accuracy", 0).samples, by_array.posterior("accuracy", 0).samples
    )


def test_probeval_imports_neither_pandas_nor_polars() -> None:
    code = (
        "import sys, numpy as np, probeval as pe;"
        "pe.evaluate([0, 1, 1], [0, 1, 0], rng=0);"
        "print('pandas' in sys.modules, 'polars' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
