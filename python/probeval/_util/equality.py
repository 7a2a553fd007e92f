"""Value equality for result objects: equal when their state is, arrays and NaN included.

A result that went through ``pickle`` or ``copy.deepcopy`` must compare equal to the original.
The default ``==`` of a class is identity, and a dataclass's compares numpy arrays with
``==``, which raises; :class:`ValueEquality` compares the state field by field instead.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def same(a: Any, b: Any) -> bool:
    """Whether two values hold the same data: arrays elementwise (NaN equal to NaN, same shape
    and dtype kind), containers item by item, floats with NaN equal to NaN, anything else by
    its own ``==``."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        nan_aware = a.dtype.kind in "fc"
        return bool(np.array_equal(a, b, equal_nan=nan_aware))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    return bool(a == b)


def state(obj: Any) -> dict[str, Any]:
    """Every attribute of ``obj`` (``__dict__`` and ``__slots__`` of its classes), without
    those its class lists in ``_not_compared`` (caches)."""
    skip = getattr(type(obj), "_not_compared", ())
    values = {k: v for k, v in getattr(obj, "__dict__", {}).items() if k not in skip}
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in skip and name != "__dict__" and hasattr(obj, name):
                values[name] = getattr(obj, name)
    return values


class ValueEquality:
    """Mixin: ``==`` compares the state (see :func:`same`); such objects are not hashable."""

    __slots__ = ()
    #: Attributes left out of the comparison (lazily filled caches).
    _not_compared: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return same(self._compared_state(), other._compared_state())

    def _compared_state(self) -> dict[str, Any]:
        return state(self)

    __hash__ = None  # type: ignore[assignment]
