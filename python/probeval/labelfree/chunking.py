"""Splitting rows into chunks, as production monitoring tools do: by size, by number of chunks,
or by a period of a timestamp column."""

from __future__ import annotations

import datetime
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeval._util.equality import ValueEquality
from probeval._util.validation import describe

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


def _count(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {describe(value)}")
    if int(value) < 1:
        raise ValueError(f"{name} must be a positive integer, got {int(value)}")
    return int(value)


def _period_keys(timestamps: Any, period: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer period index of each row and a label per distinct index."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    problem = TypeError(
        "timestamps must be datetimes (numpy datetime64, pandas, datetime objects or ISO "
        f"strings), got {describe(timestamps)}"
    )
    times = np.asarray(timestamps)
    # Numbers are not timestamps: their unit would be a guess.
    if times.dtype.kind in "biufc":
        raise problem
    if times.dtype.kind != "M":
        try:
            with np.errstate(all="ignore"):
                times = times.astype("datetime64[ns]")
        except (TypeError, ValueError, OverflowError) as error:
            raise problem from error
    if times.ndim != 1 or times.shape[0] != n:
        raise ValueError(f"timestamps must be one-dimensional with {n} values, got {times.shape}")
    if np.isnat(times).any():
        raise ValueError(
            f"timestamps must not contain NaT, found one at index {int(np.argmax(np.isnat(times)))}"
        )

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
        size = _count("chunk_size", chunk_size)
        return [
            Chunk(i, str(i), everything[start : start + size])
            for i, start in enumerate(range(0, n, size))
        ]
    if n_chunks is not None:
        count = _count("n_chunks", n_chunks)
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
