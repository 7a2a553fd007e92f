"""Plain, strict JSON values: what every result's ``to_dict()`` returns and the CLI prints."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["json_dict", "json_safe"]


def json_safe(value: Any) -> Any:
    """``value`` with numpy scalars and arrays made plain Python, NaN made None and infinities
    the strings "inf" / "-inf", recursively through dicts (keys made str), lists and tuples.

    JSON has no NaN or infinity: ``json.dumps`` writes them as bare ``NaN`` / ``Infinity`` by
    default, which JavaScript's ``JSON.parse`` and most other readers refuse. A posterior
    without labels has no observed value, so NaN reaches results in ordinary use.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    return value


def json_dict(mapping: Mapping[Any, Any]) -> dict[str, Any]:
    """:func:`json_safe` of a mapping, typed as the dict it returns."""
    return {str(k): json_safe(v) for k, v in mapping.items()}
