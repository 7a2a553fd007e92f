"""Data frames as inputs: ``evaluate(df, y_true="label", y_score="proba")``.

Any object with ``columns`` (or pyarrow's ``column_names``) and item access by column name works
(pandas, polars, pyarrow tables, a dict-like wrapper); neither pandas nor polars is ever imported
here. Column names may be strings or integers; ``"0"`` also finds a column named 0.
"""

from __future__ import annotations

import numbers
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


def _columns(frame: Any) -> list[Any]:
    """The frame's column names, as the frame holds them (strings, integers, ...)."""
    names = getattr(frame, "column_names", None)  # pyarrow: ``columns`` holds the data
    if names is None:
        columns = frame.columns
        names = columns() if callable(columns) else columns
    return list(names)


def _is_name(value: Any) -> bool:
    """A value that can name a column: a string or an integer (not a bool)."""
    return isinstance(value, (str, numbers.Integral)) and not isinstance(value, (bool, np.bool_))


def _is_score_columns(frame: Any, value: Any) -> bool:
    """Whether ``value`` names a multiclass model's score columns: a list or tuple of at least
    two names, strings (then each must be a column) or integers that are all columns (else the
    integers are taken as values)."""
    if not (isinstance(value, (list, tuple)) and len(value) >= 2):
        return False
    if all(isinstance(v, str) for v in value):
        return True
    names = _columns(frame)
    return all(_is_name(v) and _find(names, v) is not None for v in value)


def _find(columns: list[Any], name: Any) -> Any:
    """The column ``name`` refers to: the one equal to it (a string to a string, an integer to
    an integer), else the one whose text is ``name`` (``"0"`` for a column named 0, as the
    command line passes it); None if there is none or the text is ambiguous."""
    for c in columns:
        if _is_name(c) and isinstance(c, str) == isinstance(name, str) and c == name:
            return c
    if isinstance(name, str):
        matches = [c for c in columns if str(c) == name]
        if len(matches) == 1:
            return matches[0]
    return None


def column(frame: Any, name: Any, parameter: str) -> np.ndarray:
    """Column ``name`` of ``frame`` as a numpy array."""
    if not _is_name(name):
        raise TypeError(
            f"with a data frame, {parameter} must be a column name, got {describe(name)}"
        )
    columns = _columns(frame)
    found = _find(columns, name)
    if found is None:
        shown = ", ".join(repr(c) for c in columns[:20])
        more = "" if len(columns) <= 20 else f", ... ({len(columns)} columns)"
        raise ValueError(
            f"{parameter}={name!r} is not a column of the data; columns: {shown}{more}"
        )
    return np.asarray(frame[found])


def resolve(frame: Any, **arguments: Any) -> dict[str, Any]:
    """Replace every column name among the arguments (a string, or an integer for frames with
    integer column names) by the frame's column (None stays None, arrays stay arrays)."""
    resolved = {}
    for parameter, value in arguments.items():
        if parameter == "y_score" and _is_score_columns(frame, value):
            # Multiclass scores: one column per class, in class order.
            resolved[parameter] = np.column_stack(
                [column(frame, name, parameter) for name in value]
            )
            continue
        if _is_name(value):
            resolved[parameter] = column(frame, value, parameter)
        elif value is not None and np.ndim(value) == 0:
            raise TypeError(
                f"with a data frame, {parameter} must be a column name or an array, got "
                f"{describe(value)}"
            )
        else:
            resolved[parameter] = value
    return resolved
