"""Input validation for every public entry point.

Each check names the parameter and shows the offending value, so that a user who passes the wrong
thing learns what to fix from one line. Public functions call these once, at the boundary; the
Rust core re-checks only cheap invariants.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Largest count a float64 holds exactly (2**53); counts beyond it would silently lose precision.
MAX_EXACT_COUNT = float(2**53)
#: Largest number of posterior samples per metric (8 bytes each: 800 MB).
MAX_SAMPLES = 100_000_000


def describe(value: Any, limit: int = 60) -> str:
    """Short repr of a user value for an error message."""
    if isinstance(value, np.ndarray):
        text = f"array of shape {value.shape} and dtype {value.dtype}"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_missing_value(value: Any) -> bool:
    """The one rule for a missing value, in every array parameter: None, a NaN of any float
    type, pandas' NA and NaT, numpy's NaT."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    # pandas.NA and pandas.NaT, without importing pandas.
    return type(value).__name__ in ("NAType", "NaTType")


def missing_mask(array: np.ndarray) -> np.ndarray:
    """Which values of an array are missing (see :func:`is_missing_value`)."""
    kind = array.dtype.kind
    if kind in "fc":
        mask: np.ndarray = np.isnan(array)
        return mask
    if kind in "mM":
        mask = np.isnat(array)
        return mask
    if kind == "O":
        flat = array.ravel()
        mask = np.fromiter((is_missing_value(v) for v in flat), bool, flat.shape[0])
        return mask.reshape(array.shape)
    return np.zeros(array.shape, dtype=bool)


def first_missing(array: np.ndarray) -> int | None:
    """Flat index of the first missing value of an array, if any."""
    if array.dtype.kind not in "fcmMO":
        return None
    found = np.flatnonzero(missing_mask(array))
    return int(found[0]) if found.size else None


def missing_value_error(name: str, array: np.ndarray, index: int, hint: str = "") -> ValueError:
    """The error for a missing value: it says so, names the parameter and the position."""
    value = array.ravel()[index]
    if isinstance(value, (float, np.floating)):
        shown = "NaN"
    elif isinstance(value, (np.datetime64, np.timedelta64)):
        shown = "NaT"
    else:
        shown = repr(value)
    return ValueError(f"{name} has a missing value ({shown}) at index {index}{hint}")


def _is_real_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_real(name: str, value: Any) -> float:
    """A real scalar (bools and strings are rejected)."""
    if type(value) is float:
        # The common case first: the abstract-base-class check below costs a microsecond.
        return value
    if not _is_real_number(value):
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large for a float64, got {describe(value)}") from None


def check_finite(name: str, value: Any) -> float:
    number = check_real(name, value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {number!r}")
    return number


def check_positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    number = check_finite(name, value)
    if number < 0 or (number == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {number!r}")
    return number


def check_open_unit(name: str, value: Any) -> float:
    """A probability strictly between 0 and 1 (e.g. ``ci``)."""
    number = check_real(name, value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {number!r}")
    return number


def check_ci(ci: Any) -> float:
    return check_open_unit("ci", ci)


def check_threshold(threshold: Any) -> float:
    number = check_real("threshold", threshold)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {number!r}")
    return number


def check_n_samples(n_samples: Any, name: str = "n_samples") -> int:
    if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {describe(n_samples)}")
    number = int(n_samples)
    if number < 1:
        raise ValueError(f"{name} must be at least 1, got {number}")
    if number > MAX_SAMPLES:
        raise ValueError(f"{name} must be at most {MAX_SAMPLES:,}, got {number:,}")
    return number


def check_positive_int(name: str, value: Any, *, maximum: int | None = None) -> int:
    """``value`` as an int >= 1 (and <= ``maximum`` when given); bools are refused."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {describe(value)}")
    number = int(value)
    if number < 1:
        raise ValueError(f"{name} must be a positive integer, got {number}")
    if maximum is not None and number > maximum:
        raise ValueError(f"{name} must be at most {maximum:,}, got {number:,}")
    return number


def check_zero_division(value: Any) -> float:
    """scikit-learn's ``zero_division``: 0, 1 or nan (``"warn"`` behaves as 0)."""
    if isinstance(value, str) and value == "warn":
        return 0.0
    number = check_real("zero_division", value)
    if not (number in (0.0, 1.0) or math.isnan(number)):
        raise ValueError(f'zero_division must be 0, 1, nan or "warn", got {value!r}')
    return number


def check_beta(beta: Any) -> float:
    number = check_finite("beta", beta)
    if number <= 0:
        raise ValueError(f"beta (of the F-beta score) must be > 0, got {number!r}")
    return number


def as_1d(name: str, values: Any) -> np.ndarray:
    """A non-empty one-dimensional array (any dtype; lists and pandas/polars series accepted)."""
    if values is None:
        raise TypeError(f"{name} is required, got None")
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be array-like, got the string {describe(values)}")
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty")
    return array


def as_float_1d(name: str, values: Any) -> np.ndarray:
    """A non-empty 1-d float64 array of finite values (NaN, None or NA: a missing value)."""
    if _has_pandas_na(values):
        values = values.to_numpy(dtype=object)
    array = as_1d(name, values)
    if array.dtype.kind == "O":  # None or NA among objects (numeric NaN: below, in one pass)
        missing = first_missing(array)
        if missing is not None:
            raise missing_value_error(name, array, missing)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.float64)
    if not np.isfinite(array).all():
        index = int(np.flatnonzero(~np.isfinite(array))[0])
        if np.isnan(array[index]):
            raise missing_value_error(name, array, index)
        raise ValueError(f"{name} must be finite, found {float(array[index])!r} at index {index}")
    return array


def as_probabilities(name: str, values: Any) -> np.ndarray:
    """Scores that must be probabilities: finite and within [0, 1]."""
    array = as_float_1d(name, values)
    low, high = float(array.min()), float(array.max())
    if low < 0.0 or high > 1.0:
        bad = low if low < 0.0 else high
        raise ValueError(f"{name} must be probabilities in [0, 1], found {bad!r}")
    return array


def as_labels(name: str, values: Any, *, role: str = "label") -> np.ndarray:
    """Class labels (or segment keys: ``role``): a non-empty 1-d array of hashable values
    without missing values (:func:`is_missing_value`)."""
    if _has_pandas_na(values):  # pandas nullable arrays ("boolean", "string", "Int64")
        values = values.to_numpy(dtype=object)
    array = as_1d(name, values)
    missing = first_missing(array)
    if missing is not None:
        raise missing_value_error(name, array, missing, f": every row needs a {role}")
    if array.dtype.kind == "f":
        if not np.isfinite(array).all():
            raise ValueError(f"{name} must be finite (inf is not a label)")
        if not np.all(array == np.round(array)):
            raise ValueError(
                f"{name} holds non-integer numbers; class labels must be integers, "
                "strings or booleans (pass scores as y_score)"
            )
    elif array.dtype.kind == "c":
        raise TypeError(f"{name} must not be complex")
    elif array.dtype.kind == "O":
        for value in array:
            try:
                hash(value)
            except TypeError:
                raise TypeError(f"{name} contains an unhashable value {describe(value)}") from None
    return array


def _has_pandas_na(values: Any) -> bool:
    """A pandas series or extension array holding a missing value (checked without pandas):
    read as objects, its pandas.NA is found and reported like any other missing value. One
    without any stays as it is (numpy reads a "Float64" array without NA as float64)."""
    if isinstance(values, np.ndarray):
        return False
    if not type(getattr(values, "dtype", None)).__module__.startswith("pandas"):
        return False
    isna = getattr(values, "isna", None)
    return callable(isna) and bool(np.asarray(isna()).any())


def as_weights(name: str, values: Any, n: int) -> np.ndarray:
    array = as_float_1d(name, values)
    if array.shape[0] != n:
        raise ValueError(f"{name} has length {array.shape[0]} but the labels have length {n}")
    if (array < 0).any():
        raise ValueError(f"{name} must be >= 0, found {float(array.min())!r}")
    return array


def check_some_weight(name: str, values: Any) -> None:
    """Weights of data used whole (an evaluation, a comparison) must not all be 0: there would
    be nothing to evaluate, and the posterior would be the prior's. (A part of the data, such as
    one partition of a Dask frame, may weigh nothing; the sum over the parts may not.)"""
    array = as_float_1d(name, values)
    if array.size and not np.any(array):
        raise ValueError(
            f"{name} is 0 for every row: no row carries weight, so there is nothing to evaluate"
        )


def check_same_length(**arrays: np.ndarray) -> None:
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name} has {length}" for name, length in lengths.items())
        raise ValueError(f"inputs must have the same length: {detail}")


def as_count(name: str, value: Any) -> float:
    """One cell count: a whole number in [0, 2**53]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a whole number, got {describe(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if number < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    if number != math.floor(number):
        raise ValueError(
            f"{name} must be a whole number, got {value!r} "
            "(weighted counts come from from_predictions(..., sample_weight=...))"
        )
    if number > MAX_EXACT_COUNT or (isinstance(value, numbers.Integral) and int(value) > 2**53):
        raise ValueError(f"{name} must be at most 2**53 (exact in float64), got {value!r}")
    return number


def as_count_matrix(name: str, values: Any, *, whole: bool = True) -> np.ndarray:
    """A square K x K (K >= 2) matrix of non-negative counts, as float64."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a square array of counts, got {describe(values)}")
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if array.dtype.kind == "b" or array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold numbers, got dtype {array.dtype}")
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square K x K array, got shape {array.shape}")
    if array.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 classes, got shape {array.shape}")
    if array.dtype.kind in "iu" and array.size and int(array.max()) > 2**53:
        raise ValueError(f"{name} has counts above 2**53 (not exact in float64)")
    matrix = np.array(array, dtype=np.float64)
    if not np.isfinite(matrix).all():
        raise ValueError(f"{name} must be finite")
    if (matrix < 0).any():
        raise ValueError(f"{name} must be >= 0, found {float(matrix.min())!r}")
    if whole and not np.all(matrix == np.floor(matrix)):
        raise ValueError(
            f"{name} must hold whole numbers "
            "(weighted counts come from from_predictions(..., sample_weight=...))"
        )
    if (matrix > MAX_EXACT_COUNT).any():
        raise ValueError(f"{name} has counts above 2**53 (not exact in float64)")
    return matrix


def as_name_list(name: str, values: Any) -> list[str]:
    """A string or a sequence of strings, as a list."""
    if isinstance(values, str):
        return [values]
    if not isinstance(values, Sequence) and not isinstance(values, np.ndarray):
        raise TypeError(f"{name} must be a string or a list of strings, got {describe(values)}")
    items = list(values)
    if not items:
        raise ValueError(f"{name} must not be empty")
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must contain strings, got {describe(item)}")
    return items


Interval = tuple[float, float]


def check_interval(name: str, value: Any) -> Interval:
    """A pair ``(lo, hi)`` of real numbers with lo <= hi."""
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lo, hi), got {describe(value)}") from None
    low = check_real(f"{name}[0]", low)
    high = check_real(f"{name}[1]", high)
    if math.isnan(low) or math.isnan(high) or low > high:
        raise ValueError(f"{name} must satisfy lo <= hi, got ({low!r}, {high!r})")
    return (low, high)


def check_rope(rope: Any) -> Interval:
    """A ROPE: a half-width ``eps >= 0`` (meaning [-eps, eps]) or a pair ``(lo, hi)``."""
    if isinstance(rope, (bool, np.bool_)):
        raise TypeError(f"rope must be a number >= 0 or a pair (lo, hi), got {rope!r}")
    if isinstance(rope, numbers.Real):
        eps = check_positive("rope", rope, allow_zero=True)
        return (-eps, eps)
    try:
        low, high = rope
    except (TypeError, ValueError):
        raise TypeError(
            f"rope must be a number >= 0 or a pair (lo, hi), got {describe(rope)}"
        ) from None
    low = check_real("rope[0]", low)
    high = check_real("rope[1]", high)
    if math.isnan(low) or math.isnan(high) or low > high:
        raise ValueError(f"rope must satisfy lo <= hi, got {rope!r}")
    return (low, high)


#: Requests below this many bytes are not checked against the free memory (reading it costs
#: tens of microseconds, and such a request fits anywhere probeval runs).
MEMORY_CHECK_FROM = 64 * 2**20


def available_memory() -> int | None:
    """Bytes this process can still allocate, or None when the platform does not say.

    The least of the machine's available memory (``MemAvailable`` plus free swap), the
    control group's limit less its usage (a container's ``--memory``), and the address-space
    limit (``ulimit -v``, ``RLIMIT_AS``) less the address space in use. Only Linux reports all
    three; elsewhere only the address-space limit is known.
    """
    limits = []
    meminfo = _read_fields("/proc/meminfo")
    if "MemAvailable" in meminfo:
        limits.append((meminfo["MemAvailable"] + meminfo.get("SwapFree", 0)) * 1024)
    cgroup = _cgroup_room()
    if cgroup is not None:
        limits.append(cgroup)
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        soft = -1
    if soft not in (-1, getattr(resource, "RLIM_INFINITY", -1)):
        in_use = _read_fields("/proc/self/status").get("VmSize", 0) * 1024
        limits.append(max(soft - in_use, 0))
    return min(limits) if limits else None


def _read_fields(path: str) -> dict[str, int]:
    """``Name: value kB`` lines of a /proc file as {name: value}; empty if unreadable."""
    fields = {}
    try:
        with open(path) as f:
            for line in f:
                name, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    fields[name] = int(parts[0])
    except OSError:
        pass
    return fields


def _cgroup_room() -> int | None:
    """Bytes left under this process's cgroup v2 memory limit, None if it has none."""
    try:
        with open("/proc/self/cgroup") as f:
            path = next(line[3:].strip() for line in f if line.startswith("0::"))
        base = "/sys/fs/cgroup" + path.rstrip("/")
        with open(f"{base}/memory.max") as f:
            limit = f.read().strip()
        with open(f"{base}/memory.current") as f:
            current = int(f.read())
    except (OSError, StopIteration, ValueError):
        return None
    return None if limit == "max" else max(int(limit) - current, 0)


def format_bytes(n: float) -> str:
    """``3.2 GiB``-style size for messages."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check_memory(n_values: int, *, request: str, alternative: str) -> None:
    """Fail up front, with a ``MemoryError`` that says what to do instead, when a request's
    ``n_values`` doubles cannot fit in the memory still available (see
    :func:`available_memory`), rather than be killed by the operating system halfway.

    ``request`` names the parameters that set the size (``"n_samples=10000000 for 5 metrics"``);
    ``alternative`` says how to ask for less (``"pass summaries_only=True"``).
    """
    needed = 8 * n_values
    if needed < MEMORY_CHECK_FROM:
        return
    room = available_memory()
    if room is not None and needed > room:
        raise MemoryError(
            f"{request} needs {format_bytes(needed)} ({n_values:,} values), but only "
            f"{format_bytes(room)} of memory is available; {alternative}"
        )


_VALUE_CELLS = ("tp", "fp", "tn", "fn")


def check_value_matrix(name: str, value: Any) -> tuple[float, float, float, float]:
    """A value (or, negated, cost) per confusion cell as (v_TP, v_FP, v_TN, v_FN): a dict with
    keys among tp, fp, tn, fn (missing ones are 0), or a 2 x 2 array-like laid out as
    scikit-learn's confusion matrix, ``[[tn, fp], [fn, tp]]`` (rows: the true class)."""
    if isinstance(value, dict):
        unknown = sorted(str(k) for k in value if k not in _VALUE_CELLS)
        if unknown:
            raise ValueError(f"{name} has keys {unknown}; the cells are {', '.join(_VALUE_CELLS)}")
        if not value:
            raise ValueError(f"{name} must give the value of at least one cell")
        cells = [check_finite(f"{name}[{k!r}]", value.get(k, 0.0)) for k in _VALUE_CELLS]
        return cells[0], cells[1], cells[2], cells[3]
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a dict or a 2 x 2 array, got {describe(value)}")
    try:
        matrix = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a dict or a 2 x 2 array, got {describe(value)}") from None
    if matrix.shape != (2, 2):
        raise ValueError(f"{name} must be 2 x 2 ([[tn, fp], [fn, tp]]), got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise ValueError(f"{name} must be finite, got {describe(value)}")
    return float(matrix[1, 1]), float(matrix[0, 1]), float(matrix[0, 0]), float(matrix[1, 0])
