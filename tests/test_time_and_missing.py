"""Timestamps across the representable range and in time zones, and one rule for missing values
in every array parameter (issue 25, items 1 and 2)."""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import probeval as pe
from probeval.labelfree.chunking import PERIODS, make_chunks, wall_clock

ZONES = st.integers(-14 * 60, 14 * 60).map(
    lambda minutes: datetime.timezone(datetime.timedelta(minutes=minutes))
)
MOMENTS = st.datetimes(
    min_value=datetime.datetime(1, 1, 2), max_value=datetime.datetime(9999, 12, 30)
)


def _expected_key(moment: datetime.datetime, period: str) -> str:
    """The period a wall-clock time falls in, written with the standard library."""
    if period == "h":
        return f"{moment.date().isoformat()}T{moment.hour:02d}"
    if period == "D":
        return moment.date().isoformat()
    if period == "W":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    if period == "M":
        return f"{moment.year:04d}-{moment.month:02d}"
    if period == "Q":
        return f"{moment.year}Q{(moment.month - 1) // 3 + 1}"
    return str(moment.year)


def _key(timestamps: Any, period: str) -> str:
    chunks = make_chunks(1, period=period, timestamps=timestamps)
    assert len(chunks) == 1
    return chunks[0].key


@settings(max_examples=300, deadline=None)
@given(moment=MOMENTS, zone=st.none() | ZONES, period=st.sampled_from(PERIODS))
def test_periods_are_those_of_the_wall_clock_across_the_range(
    moment: datetime.datetime, zone: datetime.timezone | None, period: str
) -> None:
    """A datetime (naive or with any UTC offset), its ISO string and numpy's datetime64 all
    fall in the period their own wall clock shows, for every year from 1 to 9999 (no wrap at
    the nanosecond range's 1677-2262)."""
    if period == "W" and moment.isocalendar()[0] in (0, 10000):
        return  # the ISO week of 0001-01-01 and 9999-12-31 belongs to a year outside the range
    local = moment.replace(tzinfo=zone)
    expected = _expected_key(moment, period)
    assert _key([local], period) == expected
    assert _key(np.array([local.isoformat()]), period) == expected
    assert _key([local.isoformat(sep=" ")], period) == expected
    assert _key(np.array([np.datetime64(moment, "s")]), period) == expected


def test_pandas_time_zones_bucket_by_local_day() -> None:
    """The issue's case: New York minutes from 20:00 on 2026-03-01; the local days have
    240 / 1440 / 1440 / 1440 / 440 rows (UTC days would give 1440 / 1440 / 1440 / 680)."""
    pd = pytest.importorskip("pandas")
    index = pd.date_range("2026-03-01 20:00", periods=5000, freq="min", tz="America/New_York")
    for stamps in (index, pd.Series(index), list(index)):
        chunks = make_chunks(5000, period="D", timestamps=stamps)
        assert [c.n_rows for c in chunks] == [240, 1440, 1440, 1440, 440]
        assert chunks[0].key == "2026-03-01"


@pytest.mark.parametrize(
    ("stamps", "error", "fragment"),
    [
        (np.array([1, 2], dtype="timedelta64[D]"), TypeError, "durations"),
        (np.array(["12000-01-01", "2026-01-01"], dtype="datetime64[D]"), ValueError, "years 1"),
        (np.array(["-0001-01-01", "2026-01-01"], dtype="datetime64[D]"), ValueError, "years 1"),
        (np.array(["2026-01-01", "NaT"], dtype="datetime64[s]"), ValueError, "(NaT) at index 1"),
        (["2026-01-01", None], ValueError, "missing value (None) at index 1"),
        (["2026-01-01", float("nan")], ValueError, "missing value (NaN) at index 1"),
        (["2026-01-01", "next tuesday"], TypeError, "at index 1"),
        (np.array([1.5, 2.5]), TypeError, "must be datetimes"),
    ],
)
def test_what_cannot_be_a_time_is_refused(stamps: Any, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        wall_clock(stamps, 2)


def test_the_cli_buckets_offsets_by_their_own_day(tmp_path: Any) -> None:
    """'+02:00' strings in a CSV: a row at 00:30 local time belongs to that local day, not to
    the UTC day before (which the data do not even contain)."""
    from probeval.cli import main

    rng = np.random.default_rng(3)
    ref = tmp_path / "ref.csv"
    scores = rng.random(400)
    lines = ["label,score"] + [f"{int(rng.random() < s)},{s:.4f}" for s in scores]
    ref.write_text("\n".join(lines) + "\n", encoding="utf-8")
    analysis = tmp_path / "analysis.csv"
    rows = ["score,time"] + [
        f"{s:.4f},2026-05-0{1 + i % 2}T00:30:00+02:00" for i, s in enumerate(scores[:100])
    ]
    analysis.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "out.json"
    args = ["estimate", "--reference", str(ref), "--analysis", str(analysis), "--y-true"]
    args += ["label", "--y-score", "score", "--period", "D", "--timestamp", "time"]
    args += ["--format", "json", "--samples", "200"]
    import contextlib
    import io
    import json

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(args) == 0
    out.write_text(buffer.getvalue(), encoding="utf-8")
    keys = [c["key"] for c in json.loads(buffer.getvalue())["result"]["chunks"]]
    assert keys == ["2026-05-01", "2026-05-02"]


# ------------------------------------------------------------------------------ missing values


def _rng_data(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    scores = rng.random(n)
    return (rng.random(n) < scores).astype(int), scores


def _with_missing(values: np.ndarray, index: int, kind: str) -> Any:
    """The values with one missing entry, the way users' data hold one."""
    pd = pytest.importorskip("pandas") if kind.startswith("pandas") else None
    if kind == "nan":
        out = values.astype(np.float64)
        out[index] = np.nan
        return out
    if kind == "none":
        out = values.astype(object)
        out[index] = None
        return out
    if kind == "float32 nan":
        out = values.astype(object)
        out[index] = np.float32("nan")
        return out
    assert pd is not None
    if kind == "pandas NA, boolean":
        series = pd.Series(values.astype(bool), dtype="boolean")
        series[index] = pd.NA
        return series
    if kind == "pandas NA, string":
        series = pd.Series(values.astype(str), dtype="string")
        series[index] = pd.NA
        return series
    if kind == "pandas NA, Float64":
        series = pd.Series(values.astype(float), dtype="Float64")
        series[index] = pd.NA
        return series
    raise AssertionError(kind)


KINDS = ["nan", "none", "float32 nan", "pandas NA, boolean", "pandas NA, string"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "call",
    [
        lambda y, s: pe.evaluate(y, y_score=s),
        lambda y, s: pe.evaluate(y, y_pred=(s > 0.5).astype(int)),
        lambda y, s: pe.ConfusionMatrix.from_predictions(y, (s > 0.5).astype(int)),
        lambda y, s: pe.evaluate_by(y, y_score=s, by=np.arange(len(s)) % 2),
        lambda y, s: pe.LabelFreeEstimator().fit(y, s),
    ],
    ids=["evaluate", "evaluate-pred", "confusion", "evaluate_by", "labelfree-fit"],
)
def test_a_missing_label_is_named_with_its_position(kind: str, call: Any) -> None:
    y, s = _rng_data()
    labels = _with_missing(y, 7, kind)
    with pytest.raises(ValueError, match=r"y_true has a missing value \(.*\) at index 7"):
        call(labels, s)


@pytest.mark.parametrize("kind", ["nan", "none", "float32 nan", "pandas NA, Float64"])
def test_a_missing_score_is_named_with_its_position(kind: str) -> None:
    y, s = _rng_data()
    scores = _with_missing(s, 5, kind)
    with pytest.raises(ValueError, match=r"y_score has a missing value \(.*\) at index 5"):
        pe.evaluate(y, y_score=scores)


@pytest.mark.parametrize("kind", ["nan", "none", "pandas NA, string"])
def test_a_missing_segment_key_is_an_error_like_any_other(kind: str) -> None:
    """NaN, None and NA in ``by`` were a segment of their own (or an error for None only)."""
    y, s = _rng_data()
    by = _with_missing(np.arange(len(s)) % 3, 11, kind)
    with pytest.raises(ValueError, match=r"by has a missing value \(.*\) at index 11"):
        pe.evaluate_by(y, y_score=s, by=by)


def test_pandas_nullable_columns_without_na_are_plain_numbers() -> None:
    """The NA check must not turn a nullable column that has no NA into objects: a "Float64"
    array or series of scores is scores (numpy reads it as float64)."""
    pd = pytest.importorskip("pandas")
    y, s = _rng_data()
    expected = pe.evaluate(y, y_score=s, metrics=["roc_auc"], rng=0)["roc_auc"].samples
    for scores in (pd.array(s, dtype="Float64"), pd.Series(s, dtype="Float64")):
        got = pe.evaluate(y, y_score=scores, metrics=["roc_auc"], rng=0)["roc_auc"].samples
        np.testing.assert_array_equal(got, expected)
    labels = pd.array(y, dtype="Int64")
    got = pe.evaluate(labels, y_score=s, metrics=["roc_auc"], rng=0)["roc_auc"].samples
    np.testing.assert_array_equal(got, expected)
