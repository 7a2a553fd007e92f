"""Splitting rows into chunks, as production monitoring tools do: by size, by number of chunks,
or by a period of a timestamp column."""

from __future__ import annotations

import datetime
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeval._util.equality import ValueEquality
from probeval._util.validation import (
    check_positive_int,
    describe,
    is_missing_value,
    missing_value_error,
)

__all__ = ["PERIODS", "Chunk", "make_chunks"]

#: Periods understood by ``period=``: hour, day, ISO week (Monday first, labelled like
#: "2024-W01"), month, quarter, year.
PERIODS = ("h", "D", "W", "M", "Q", "Y")


@dataclass(frozen=True, eq=False)
class Chunk(ValueEquality):
    """One chunk of rows: ``rows`` are its positions in the input."""

    index: int
    key: str
    rows: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.rows.shape[0])

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "key": self.key, "n_rows": self.n_rows}


#: A UTC offset at the end of an ISO string ("Z", "+02:00", "-0530", "+02").
_OFFSET = re.compile(r"(?:Z|[+-]\d{2}(?::?\d{2})?)$")

#: Years a timestamp may fall in: what Python's datetime and ISO strings can write.
YEARS = (1, 9999)


def _missing_at(values: np.ndarray, index: int) -> ValueError:
    return missing_value_error("timestamps", values, index, ": every row needs its time")


def _one_time(value: Any) -> Any:
    """One timestamp as naive datetime64[us] in its own wall-clock time; None if missing."""
    if is_missing_value(value):  # first: pandas' NaT is a datetime too
        return None
    if isinstance(value, datetime.datetime):  # pandas Timestamps too
        if value.tzinfo is not None:
            value = value.replace(tzinfo=None)  # the local time it shows, not UTC
        return np.datetime64(value, "us")
    if isinstance(value, datetime.date):
        return np.datetime64(value, "D").astype("datetime64[us]")
    if isinstance(value, str):
        return np.datetime64(_strip_offset(value), "us")
    if isinstance(value, np.datetime64):
        return value.astype("datetime64[us]")
    raise TypeError(f"not a datetime: {describe(value)}")


def _strip_offset(text: str) -> str:
    """An ISO string without its UTC offset: the wall-clock time it shows."""
    if len(text) > 16 and text[-3] == ":" and text[-6] in "+-":  # the usual "+02:00"
        return text[:-6]
    text = text.strip()
    return _OFFSET.sub("", text) if "T" in text or " " in text else text


def _iso_strings(times: np.ndarray) -> np.ndarray:
    """ISO strings parsed by numpy in bulk (a CSV column of millions), offsets dropped first;
    anything else comes back as it was, for the row-by-row conversion."""
    if times.dtype.kind == "O" and not all(isinstance(v, str) for v in times):
        return times
    for attempt in (times, None):
        if attempt is None:  # numpy refused or warned: drop the offsets and try again
            attempt = np.array([_strip_offset(v) for v in times.tolist()])
        try:
            with warnings.catch_warnings():
                # numpy reads an offset as UTC, with a warning: not the wall clock.
                warnings.simplefilter("error")
                parsed: np.ndarray = attempt.astype("datetime64[us]")
        except (TypeError, ValueError, OverflowError, Warning):
            continue
        return parsed
    return times


def wall_clock(timestamps: Any, n: int) -> np.ndarray:
    """Timestamps as naive datetime64 in their own wall-clock time: a time-zone-aware pandas
    column, datetime or ISO string with an offset is bucketed by the day (hour, week...) it
    shows where it was recorded, not by its UTC day. Durations, numbers (their unit would be a
    guess), missing values and years outside 1 ... 9999 are refused."""
    problem = (
        "timestamps must be datetimes (numpy datetime64, pandas, datetime objects or ISO "
        f"strings), got {describe(timestamps)}"
    )
    zone = getattr(timestamps, "tz", None)  # a pandas DatetimeIndex
    if zone is not None:
        timestamps = timestamps.tz_localize(None)
    elif getattr(getattr(timestamps, "dt", None), "tz", None) is not None:  # a pandas Series
        timestamps = timestamps.dt.tz_localize(None)
    if hasattr(timestamps, "to_numpy"):
        timestamps = timestamps.to_numpy()
    # A list stays objects: numpy would turn ["2026-01-01", nan] into two strings.
    times = np.array(timestamps, dtype=object) if isinstance(timestamps, list) else timestamps
    times = np.asarray(times)
    if times.dtype.kind == "m":
        raise TypeError(
            "timestamps must be points in time, got durations (timedelta64): add them to the "
            "start time they count from"
        )
    if times.dtype.kind in "biufc":
        raise TypeError(problem)
    if times.ndim != 1 or times.shape[0] != n:
        raise ValueError(f"timestamps must be one-dimensional with {n} values, got {times.shape}")
    if times.dtype.kind in "UO":
        times = _iso_strings(times)
    if times.dtype.kind != "M":
        converted = np.empty(n, dtype="datetime64[us]")
        for i, value in enumerate(times.tolist() if times.dtype.kind in "US" else times):
            try:
                one = _one_time(value)
            except (TypeError, ValueError, OverflowError) as error:
                raise TypeError(f"{problem}; at index {i}: {error}") from None
            if one is None:
                raise _missing_at(times, i)
            converted[i] = one
        times = converted
    if np.isnat(times).any():
        raise _missing_at(times, int(np.argmax(np.isnat(times))))
    years = times.astype("datetime64[Y]").astype(np.int64) + 1970
    outside = (years < YEARS[0]) | (years > YEARS[1])
    if outside.any():
        i = int(np.argmax(outside))
        raise ValueError(
            f"timestamps must fall in the years {YEARS[0]} to {YEARS[1]}, got {times[i]} at "
            f"index {i}"
        )
    return times


def _period_keys(timestamps: Any, period: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer period index of each row and a label per distinct index."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    times = wall_clock(timestamps, n)

    def as_dates(indices: np.ndarray, unit: str) -> np.ndarray:
        return np.unique(indices).astype(f"datetime64[{unit}]").astype(str)

    if period in ("h", "D"):
        keys = times.astype(f"datetime64[{period}]").astype(np.int64)
        return keys, as_dates(keys, period)
    if period == "W":
        days = times.astype("datetime64[D]").astype(np.int64)
        keys = np.floor_divide(days + 3, 7)  # 1970-01-01 was a Thursday: weeks from Monday
        mondays = np.unique(keys) * 7 - 3  # days since 1970-01-01
        epoch = datetime.date(1970, 1, 1)
        iso = [(epoch + datetime.timedelta(days=int(d))).isocalendar() for d in mondays]
        return keys, np.array([f"{year}-W{week:02d}" for year, week, _ in iso])
    months = times.astype("datetime64[M]").astype(np.int64)
    if period == "M":
        return months, as_dates(months, "M")
    if period == "Q":
        keys = np.floor_divide(months, 3)
        labels = np.array([f"{1970 + int(k) // 4}Q{int(k) % 4 + 1}" for k in np.unique(keys)])
        return keys, labels
    keys = np.floor_divide(months, 12)
    return keys, np.array([str(1970 + int(k)) for k in np.unique(keys)])


def make_chunks(
    n: int,
    *,
    chunk_size: Any = None,
    n_chunks: Any = None,
    period: Any = None,
    timestamps: Any = None,
) -> list[Chunk]:
    """Chunks of ``n`` rows: consecutive runs of ``chunk_size`` rows (the last may be smaller),
    ``n_chunks`` nearly equal consecutive runs, or one chunk per ``period`` of ``timestamps``
    (in time order; rows keep their input order within a period). At most one of the three;
    none gives a single chunk of all rows."""
    given = [
        name
        for name, v in (("chunk_size", chunk_size), ("n_chunks", n_chunks), ("period", period))
        if v is not None
    ]
    if len(given) > 1:
        raise ValueError(f"give at most one of chunk_size, n_chunks and period, got {given}")
    if timestamps is not None and period is None:
        raise ValueError("timestamps need a period=..., e.g. period='D' for daily chunks")
    everything = np.arange(n)
    if chunk_size is not None:
        size = check_positive_int("chunk_size", chunk_size)
        return [
            Chunk(i, str(i), everything[start : start + size])
            for i, start in enumerate(range(0, n, size))
        ]
    if n_chunks is not None:
        count = check_positive_int("n_chunks", n_chunks)
        if count > n:
            raise ValueError(f"n_chunks={count} exceeds the number of rows ({n})")
        return [Chunk(i, str(i), rows) for i, rows in enumerate(np.array_split(everything, count))]
    if period is not None:
        if timestamps is None:
            raise ValueError("period needs timestamps=... (one datetime per row)")
        keys, labels = _period_keys(timestamps, period, n)
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        ends = np.r_[starts[1:], n]
        return [
            Chunk(i, str(labels[i]), order[start:end])
            for i, (start, end) in enumerate(zip(starts, ends, strict=True))
        ]
    return [Chunk(0, "all", everything)]
