"""Direct calls for services: one metric's interval or summary from four counts, with as little
Python between the caller and the Rust core as correctness allows.

``metric_interval("accuracy", tp=.., fp=.., tn=.., fn=..)`` is the exact Beta HDI (or ETI) of a
proportion metric; ``metric_summary("f1", ...)`` is the posterior summary of any binary metric —
exact for proportions, from ``n_samples`` Dirichlet draws otherwise. Both are thread-safe (no
shared mutable state; the core releases the GIL) and give the same numbers as
``ConfusionMatrix.from_counts(...).posterior(metric)``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from . import _core
from ._random import derive, seed_from
from ._validation import (
    check_beta,
    check_ci,
    check_n_samples,
    check_real,
    check_zero_division,
)
from .metrics import MetricSpec, resolve_metric
from .priors import BINARY_CELL_INDEX, check_pseudo_counts

__all__ = ["metric_interval", "metric_summary"]

_ORDER = ("tp", "fp", "tn", "fn")


@functools.lru_cache(maxsize=256)
def _plan(metric: str) -> tuple[MetricSpec, tuple[tuple[int, ...], tuple[int, ...]] | None]:
    """The resolved metric and, for proportions, its success and failure cells (indices into
    (tp, fp, tn, fn)). Cached: services ask for the same few metrics again and again."""
    spec = resolve_metric(metric, (0, 1), binary=True)
    if spec.kernel != "binary":
        raise ValueError(f"{metric!r}: use a binary metric name (precision, f1, ...)")
    masks = spec.beta_masks(2)
    if masks is None:
        return spec, None
    success, failure = masks
    return spec, (_cells(success), _cells(failure))


def _cells(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(i for i, c in enumerate(_ORDER) if mask[BINARY_CELL_INDEX[c]])


def _count(name: str, value: Any) -> float:
    # Plain ints and floats skip the (slow) numbers.Real check: this is the hot path.
    number = float(value) if type(value) in (int, float) else check_real(name, value)
    if not (number >= 0 and number != math.inf):  # also rejects NaN
        raise ValueError(f"{name} must be a finite count >= 0, got {value!r}")
    return number


def _counts(tp: Any, fp: Any, tn: Any, fn: Any) -> tuple[float, float, float, float]:
    return _count("tp", tp), _count("fp", fp), _count("tn", tn), _count("fn", fn)


def _prior(prior: Any) -> float:
    value = check_real("prior", prior)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"prior must be a finite number >= 0, got {value!r}")
    check_pseudo_counts("prior", value)
    return value


def metric_interval(
    metric: str,
    *,
    tp: float,
    fp: float,
    tn: float = 0,
    fn: float = 0,
    ci: float = 0.95,
    kind: str = "hdi",
    prior: float = 1.0,
) -> tuple[float, float]:
    """The exact interval of a proportion metric's Beta(successes + prior, failures + prior)
    posterior: ``kind="hdi"`` (shortest) or ``"eti"`` (equal tails)."""
    spec, cells = _plan(metric)
    if cells is None:
        raise ValueError(
            f"{spec.name} has no exact Beta posterior; use metric_summary for its sampled interval"
        )
    counts = _counts(tp, fp, tn, fn)
    c = _prior(prior)
    a = sum(counts[i] for i in cells[0]) + c
    b = sum(counts[i] for i in cells[1]) + c
    if a == 0 and b == 0:
        raise ValueError(f"{spec.name}: no data and a zero prior: the posterior is improper")
    if kind == "hdi":
        return _core.beta_hdi(a, b, check_ci(ci))
    if kind == "eti":
        return _core.beta_eti(a, b, check_ci(ci))
    raise ValueError(f'kind must be "hdi" or "eti", got {kind!r}')


def metric_summary(
    metric: str,
    *,
    tp: float,
    fp: float,
    tn: float,
    fn: float,
    n_samples: int = 10_000,
    ci: float = 0.95,
    rng: Any = None,
    prior: float = 1.0,
    beta: float = 1.0,
    zero_division: Any = 0.0,
) -> dict[str, float]:
    """Mean, median, std and HDI of one metric's posterior from the four counts: exact for
    proportion metrics, else from ``n_samples`` Dirichlet(counts + prior) draws summarised in
    one pass in the core."""
    spec, cells = _plan(metric)
    counts = _counts(tp, fp, tn, fn)
    c = _prior(prior)
    level = check_ci(ci)
    if cells is not None:
        a = sum(counts[i] for i in cells[0]) + c
        b = sum(counts[i] for i in cells[1]) + c
        if a == 0 and b == 0:
            raise ValueError(f"{spec.name}: no data and a zero prior: the posterior is improper")
        low, high = _core.beta_hdi(a, b, level)
        median = float(_core.beta_ppf(np.array([0.5]), a, b)[0])
        total = a + b
        return {
            "mean": a / total,
            "median": median,
            "std": math.sqrt(a * b / (total * total * (total + 1.0))),
            "hdi_low": low,
            "hdi_high": high,
        }
    alpha = (counts[0] + c, counts[1] + c, counts[2] + c, counts[3] + c)
    n = check_n_samples(n_samples)
    seed = derive(seed_from(rng), 0)
    draws = _core.binary_metric_draws(
        alpha, [spec.name], n, seed, check_beta(beta), check_zero_division(zero_division)
    )
    mean, std, median, low, high = _core.sample_summary(draws[0], level)
    return {"mean": mean, "median": median, "std": std, "hdi_low": low, "hdi_high": high}
