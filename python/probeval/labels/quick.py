"""Direct calls for services: one metric's interval or summary from four counts, with as little
Python between the caller and the Rust core as correctness allows.

``metric_interval("accuracy", tp=.., fp=.., tn=.., fn=..)`` is the exact HDI (or ETI) of a
proportion metric, of jaccard or of F1; ``metric_summary("mcc", ...)`` is the posterior summary
of any binary metric — exact for those, from ``n_samples`` Dirichlet draws otherwise. Both are
thread-safe (no shared mutable state; the core releases the GIL) and give the same numbers as
``ConfusionMatrix.from_counts(...).posterior(metric)``.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from probeval import _core
from probeval._util.rng import derive, seed_from
from probeval._util.validation import (
    MAX_EXACT_COUNT,
    check_beta,
    check_ci,
    check_memory,
    check_n_samples,
    check_real,
    check_zero_division,
)
from probeval.base.metrics import (
    BINARY_CELL_INDEX,
    ExactLaw,
    MetricSpec,
    f1_of_jaccard,
    resolve_metric,
)
from probeval.base.priors import check_pseudo_counts

__all__ = ["metric_interval", "metric_summary"]

_ORDER = ("tp", "fp", "tn", "fn")


class _Plan(NamedTuple):
    """What a metric name means for these direct calls, resolved once per name."""

    spec: MetricSpec
    #: The exact law (None for a sampled metric) and its success and failure cells as indices
    #: into (tp, fp, tn, fn).
    law: ExactLaw | None
    success: tuple[int, ...]
    failure: tuple[int, ...]
    #: Pseudo-counts per side: one per cell for a Dirichlet marginal, else one per side.
    success_prior: int
    failure_prior: int
    marginal: bool
    is_f1: bool


@functools.lru_cache(maxsize=256)
def _plan(metric: str) -> _Plan:
    """Resolve ``metric``. Cached: services ask for the same few metrics again and again."""
    spec = resolve_metric(metric, (0, 1), binary=True)
    if spec.kernel != "binary":
        raise ValueError(f"{metric!r}: use a binary metric name (precision, f1, ...)")
    law = spec.exact_law(2)
    if law is None:
        return _Plan(spec, None, (), (), 0, 0, False, False)
    success, failure = _cells(law.success), _cells(law.failure)
    marginal = law.marginal
    return _Plan(
        spec,
        law,
        success,
        failure,
        len(success) if marginal else 1,
        len(failure) if marginal else 1,
        marginal,
        law.kind == "f1",
    )


def _exact_params(
    plan: _Plan, counts: tuple[float, float, float, float], c: float
) -> tuple[float, float] | None:
    """Beta parameters behind the exact posterior, or None when the metric is sampled. A
    proportion adds the prior once per side; the Jaccard index, a Dirichlet marginal, adds it
    once per cell — as :meth:`ConfusionMatrix.posterior` does."""
    spec, law, success, failure, success_prior, failure_prior, marginal, _ = plan
    if law is None:
        return None
    # c is a float, so each sum is a float even when the counts are ints (exact below 2**53).
    a = c * success_prior
    for i in success:
        a += counts[i]
    b = c * failure_prior
    for i in failure:
        b += counts[i]
    if marginal and not law.admits(a, b):
        return None
    if a == 0 and b == 0:
        raise ValueError(f"{spec.name}: no data and a zero prior: the posterior is improper")
    return a, b


def _cells(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(i for i, c in enumerate(_ORDER) if mask[BINARY_CELL_INDEX[c]])


def _count(name: str, value: Any) -> float:
    number = check_real(name, value)
    if not (number >= 0 and number != math.inf):  # also rejects NaN
        raise ValueError(f"{name} must be a finite count >= 0, got {value!r}")
    if number > MAX_EXACT_COUNT:
        raise ValueError(f"{name} must be at most 2**53 (exact in float64), got {value!r}")
    return number


_PLAIN = (int, float)


def _counts(tp: Any, fp: Any, tn: Any, fn: Any) -> tuple[float, float, float, float]:
    """The four counts, as given when they are plain valid numbers (ints are summed exactly and
    turned into floats by the arithmetic that follows), else each checked for a message that
    names the culprit."""
    if (
        type(tp) in _PLAIN
        and type(fp) in _PLAIN
        and type(tn) in _PLAIN
        and type(fn) in _PLAIN
        # NaN fails these comparisons, and the bound keeps counts exact in float64.
        and 0 <= tp <= MAX_EXACT_COUNT
        and 0 <= fp <= MAX_EXACT_COUNT
        and 0 <= tn <= MAX_EXACT_COUNT
        and 0 <= fn <= MAX_EXACT_COUNT
    ):
        return tp, fp, tn, fn
    return _count("tp", tp), _count("fp", fp), _count("tn", tn), _count("fn", fn)


def _prior(prior: Any) -> float:
    value = check_real("prior", prior)
    if value != 1.0:  # the default needs no further check
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
    """The exact interval of a metric's posterior: ``kind="hdi"`` (shortest) or ``"eti"``
    (equal tails). For a proportion metric it is that of Beta(successes + prior,
    failures + prior); for jaccard, of its Dirichlet marginal Beta(TP + prior,
    FP + FN + 2 prior); for F1 = 2J / (1 + J), of the same J (exact when both of J's parameters
    are at least 1)."""
    plan = _plan(metric)
    counts = _counts(tp, fp, tn, fn)
    params = _exact_params(plan, counts, _prior(prior))
    if params is None:
        raise ValueError(
            f"{plan.spec.name} has no exact posterior here; use metric_summary for its sampled "
            "interval"
        )
    a, b = params
    if kind != "hdi" and kind != "eti":
        raise ValueError(f'kind must be "hdi" or "eti", got {kind!r}')
    level = check_ci(ci)
    if plan.is_f1:
        if kind == "hdi":
            return _core.f1_hdi(a, b, level)
        low, high = _core.beta_eti(a, b, level)
        return f1_of_jaccard(low), f1_of_jaccard(high)
    return _core.beta_hdi(a, b, level) if kind == "hdi" else _core.beta_eti(a, b, level)


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
    proportion metrics, jaccard and F1 (see :func:`metric_interval`), else from ``n_samples``
    Dirichlet(counts + prior) draws summarised in one pass in the core."""
    plan = _plan(metric)
    spec = plan.spec
    counts = _counts(tp, fp, tn, fn)
    c = _prior(prior)
    level = check_ci(ci)
    # Every argument is checked, even those an exact posterior does not use.
    n = check_n_samples(n_samples)
    beta_value, zero_value = check_beta(beta), check_zero_division(zero_division)
    params = _exact_params(plan, counts, c)
    seed = derive(seed_from(rng), 0) if params is None or rng is not None else 0
    if params is not None and plan.is_f1:
        a, b = params
        mean, var = _core.f1_mean_var(a, b)
        low, high = _core.f1_hdi(a, b, level)
        j = float(_core.beta_ppf(np.array([0.5]), a, b)[0])
        return {
            "mean": mean,
            "median": f1_of_jaccard(j),
            "std": math.sqrt(var),
            "hdi_low": low,
            "hdi_high": high,
        }
    if params is not None:
        a, b = params
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
    check_memory(
        n, request=f"n_samples={n:,} for {spec.name}", alternative="ask for fewer n_samples"
    )
    draws = _core.binary_metric_draws(alpha, [spec.name], n, seed, beta_value, zero_value)
    mean, std, median, low, high = _core.sample_summary(draws[0], level)
    return {"mean": mean, "median": median, "std": std, "hdi_low": low, "hdi_high": high}
