"""Class labels: which classes the data hold, their order, and each row's class index.

Every entry point that takes labels (``evaluate``, comparisons, segments, label-free estimation,
the Dask helpers) resolves and encodes them here, so that one set of rules decides the class
order: the user's ``labels=``, else the sorted classes, with the standard binary sets
(0/1, False/True, -1/1) filled in and ``pos_label`` moved last.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from probeval._util.validation import describe

__all__ = ["encode", "is_standard_binary", "observed_classes", "python_value", "resolve_labels"]

#: Standard binary label sets, negative class first (scikit-learn's default pos_label=1).
_STANDARD_BINARY = ((0, 1), (False, True), (-1, 1))


def _same_value(a: Any, b: Any) -> bool:
    """Equal, and both booleans or both not (so True does not stand in for the integer 1)."""
    try:
        return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)
    except (TypeError, ValueError):
        return False


def python_value(value: Any) -> Any:
    """numpy scalars to plain Python values (stable, JSON-friendly labels)."""
    return value.item() if isinstance(value, np.generic) else value


def _distinct(array: np.ndarray) -> np.ndarray:
    """Sorted distinct values; O(n) for integers of a small range (labels usually are)."""
    if array.dtype.kind in "biu" and array.size:
        # Work in a lossless 64-bit type of the same signedness: uint64 labels near 2**64
        # must not overflow an int64 conversion.
        wide = array.astype(np.uint64 if array.dtype.kind == "u" else np.int64)
        low, high = wide.min(), wide.max()
        if int(high) - int(low) < 1 << 16:
            offsets = (wide - low).astype(np.int64)
            present = np.flatnonzero(np.bincount(offsets, minlength=int(high - low) + 1))
            distinct: np.ndarray = (present.astype(wide.dtype) + low).astype(array.dtype)
            return distinct
    return np.unique(array)


def observed_classes(*arrays: np.ndarray) -> list[Any]:
    """The distinct values in the arrays: sorted when they can be, else in first-seen order."""
    values: set[Any] = set()
    for array in arrays:
        try:
            values.update(python_value(v) for v in _distinct(array))
        except TypeError:  # np.unique sorts: mixed types such as 1 and "a" do not
            values.update(python_value(v) for v in array.tolist())
    try:
        return sorted(values)
    except TypeError:
        return list(values)


def _check_orderable(classes: list[Any]) -> None:
    try:
        sorted(classes)
    except TypeError:
        raise TypeError(
            f"labels of mixed, unorderable types {sorted(map(repr, classes))}; pass labels=[...] "
            "to fix the class order"
        ) from None


def is_standard_binary(order: list[Any]) -> bool:
    return any(
        len(order) == 2 and all(_same_value(a, b) for a, b in zip(order, standard, strict=True))
        for standard in _STANDARD_BINARY
    )


def resolve_labels(classes: list[Any], labels: Any, pos_label: Any) -> list[Any]:
    """The class order: user labels, else sorted classes (binary standard sets filled in)."""
    if labels is None:
        _check_orderable(classes)
    if labels is not None:
        listed = labels if isinstance(labels, (list, tuple)) else np.asarray(labels).tolist()
        order = [python_value(v) for v in listed]
        if len(order) < 2:
            raise ValueError(f"labels must list at least 2 classes, got {describe(labels)}")
        if len(set(order)) != len(order):
            raise ValueError(f"labels must be unique, got {describe(labels)}")
        missing = [c for c in classes if c not in order]
        if missing:
            raise ValueError(f"the data contain classes {missing!r} that are not in labels")
    else:
        order = list(classes)
        if len(order) <= 2:
            for standard in _STANDARD_BINARY:
                if all(any(_same_value(c, s) for s in standard) for c in order):
                    order = list(standard)
                    break
    if pos_label is not None:
        if len(order) != 2:
            raise ValueError(f"pos_label needs binary data, found {len(order)} classes")
        if pos_label not in order:
            raise ValueError(f"pos_label={pos_label!r} is not one of the classes {order!r}")
        order = [c for c in order if c != pos_label] + [pos_label]
    if len(order) < 2:
        raise ValueError(
            f"only one class ({order[0]!r}) is present; pass labels=[...] listing both classes"
        )
    return order


def encode(values: np.ndarray, order: list[Any]) -> np.ndarray:
    """Index of each value in ``order``."""
    position = {c: i for i, c in enumerate(order)}
    try:
        uniques = _distinct(values)
        # Every value is one of the uniques: a binary search finds it (faster than the
        # argsort behind np.unique's return_inverse).
        index = np.searchsorted(uniques, values)
    except TypeError:  # mixed, unorderable types (labels= fixed their order): look each up
        return np.fromiter((position[v] for v in values.tolist()), dtype=np.intp, count=len(values))
    lookup = np.array([position[python_value(u)] for u in uniques], dtype=np.intp)
    return lookup[index]
