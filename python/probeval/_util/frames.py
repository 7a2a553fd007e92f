"""Data frames as inputs: ``evaluate(df, y_true="label", y_score="proba")``.

Any object with ``columns`` and item access by column name works (pandas, polars, pyarrow
tables, a dict-like wrapper); neither pandas nor polars is ever imported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from probeval._util.validation import describe


def is_frame(data: Any) -> bool:
    """True for a data frame: something with ``columns`` that is not an array."""
    return (
        data is not None
        and not isinstance(data, np.ndarray)
        and hasattr(data, "columns")
        and hasattr(data, "__getitem__")
    )


def _names(frame: Any) -> list[str]:
    columns = frame.columns
    return [str(c) for c in (columns() if callable(columns) else columns)]


def column(frame: Any, name: Any, parameter: str) -> np.ndarray:
    """Column ``name`` of ``frame`` as a numpy array."""
    if not isinstance(name, str):
        raise TypeError(
            f"with a data frame, {parameter} must be a column name, got {describe(name)}"
        )
    names = _names(frame)
    if name not in names:
        shown = ", ".join(repr(n) for n in names[:20])
        more = "" if len(names) <= 20 else f", ... ({len(names)} columns)"
        raise ValueError(
            f"{parameter}={name!r} is not a column of the data; columns: {shown}{more}"
        )
    return np.asarray(frame[name])


def resolve(frame: Any, **arguments: Any) -> dict[str, Any]:
    """Replace every string argument by the frame's column of that name (None stays None,
    arrays stay arrays)."""
    resolved = {}
    for parameter, value in arguments.items():
        if isinstance(value, str):
            resolved[parameter] = column(frame, value, parameter)
        elif value is not None and np.ndim(value) == 0:
            raise TypeError(
                f"with a data frame, {parameter} must be a column name or an array, got "
                f"{describe(value)}"
            )
        else:
            resolved[parameter] = value
    return resolved
