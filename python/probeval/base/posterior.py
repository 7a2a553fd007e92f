"""The posterior distribution of one performance metric."""

from __future__ import annotations

import math
from typing import Any, Literal, Protocol, overload

import numpy as np

from probeval import _core
from probeval._util.arrays import LabelledDraws
from probeval._util.equality import ValueEquality
from probeval._util.html import HtmlRepr, density_svg, escape, format_cell, key_values
from probeval._util.jsonable import json_dict
from probeval._util.rng import seed_from
from probeval._util.validation import (
    as_float_1d,
    check_ci,
    check_interval,
    check_memory,
    check_n_samples,
    check_positive_int,
    check_real,
    describe,
)
from probeval.base.intervals import beta_region, density_region
from probeval.base.kde import KDE, kde
from probeval.base.metrics import f1_of_jaccard, jaccard_of_f1
from probeval.base.priors import MAX_PSEUDO_COUNT, MIN_PSEUDO_COUNT, Prior

__all__ = ["Posterior"]


class Origin(Protocol):
    """Where a posterior came from, so that it can be redrawn with an independent stream and,
    where defined, produce the posterior a random classifier would have on the same data."""

    @property
    def has_random_baseline(self) -> bool: ...

    def posterior(self, n_samples: int, seed: int, *, random: bool = False) -> Posterior: ...


def _as_points(x: Any, name: str = "x") -> tuple[np.ndarray, bool]:
    """Evaluation points as a contiguous float64 array, and whether the input was a scalar.
    NaN is an error, not a silent NaN result."""
    raw = np.asarray(x) if not isinstance(x, (str, bytes, dict)) else None
    if raw is None or raw.dtype.kind not in "biufO":
        # Strings, complex numbers and dates are not points on the metric's axis.
        raise TypeError(f"{name} must be a number or an array of numbers, got {describe(x)}")
    try:
        array = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a number or an array of numbers, got {describe(x)}"
        ) from None
    if np.isnan(array).any():
        raise ValueError(f"{name} must not contain NaN, got {describe(x)}")
    scalar = array.ndim == 0
    return np.ascontiguousarray(array.reshape(-1)), scalar


def _shape_like(values: np.ndarray, scalar: bool, template: Any) -> Any:
    if scalar:
        return float(values[0])
    return values.reshape(np.shape(template))


class Posterior(HtmlRepr, LabelledDraws, ValueEquality):
    """Posterior distribution of one performance metric.

    A posterior holds samples, and — for proportion metrics such as accuracy, precision or
    recall — the exact Beta distribution they come from (for F1, the exact law
    F1 = 2J / (1 + J) with the Jaccard index J Beta-distributed). It is lazy: an exact
    posterior draws no samples until :attr:`samples` is used, and its mean, median, mode,
    quantiles, intervals, density and tail probabilities are exact
    (``cm.posterior("accuracy").hdi()`` takes microseconds). Posteriors without a closed form
    summarise their samples; their density and mode come from a boundary-reflected Gaussian KDE.

    Build one with :meth:`ConfusionMatrix.posterior`, :func:`evaluate`, :meth:`from_samples`
    or :meth:`from_beta`.
    """

    __slots__ = (
        "_beta",
        "_bounds",
        "_f1",
        "_kde",
        "_n_samples",
        "_next_prior",
        "_origin",
        "_samples",
        "_seed",
        "metric",
        "observed",
    )
    _not_compared = ("_kde",)

    def __init__(
        self,
        metric: str,
        *,
        samples: np.ndarray | None = None,
        beta: tuple[float, float] | None = None,
        f1_of_beta: bool = False,
        observed: float = math.nan,
        n_samples: int = 10_000,
        seed: int | None = None,
        bounds: tuple[float, float] = (0.0, 1.0),
        next_prior: Prior | None = None,
        origin: Origin | None = None,
    ) -> None:
        if samples is None and beta is None:
            raise ValueError("a Posterior needs samples or Beta parameters")
        self.metric = metric
        self.observed = float(observed)
        self._beta = beta
        # The metric is F1 = 2J / (1 + J) of J ~ Beta(*beta), not the Beta variable itself.
        self._f1 = bool(f1_of_beta and beta is not None)
        self._bounds = bounds
        self._n_samples = int(samples.shape[0]) if samples is not None else n_samples
        self._seed = seed
        self._kde: KDE | None = None
        self._next_prior = next_prior
        self._origin = origin
        if samples is not None:
            samples.setflags(write=False)
        self._samples = samples

    def _compared_state(self) -> dict[str, Any]:
        # An exact posterior's samples are a cache: its seed and n_samples define them.
        compared = super()._compared_state()
        if self._beta is not None:
            compared.pop("_samples", None)
        return compared

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_samples(
        cls,
        samples: Any,
        *,
        metric: str = "metric",
        bounds: tuple[float, float] | None = (0.0, 1.0),
        observed: float = math.nan,
    ) -> Posterior:
        """Wrap posterior samples computed elsewhere (bounds=None for an unbounded quantity)."""
        values = as_float_1d("samples", samples).copy()
        low, high = (-math.inf, math.inf) if bounds is None else bounds
        low = check_real("bounds[0]", low)
        high = check_real("bounds[1]", high)
        if not low < high:
            raise ValueError(f"bounds must satisfy low < high, got {bounds!r}")
        if values.min() < low or values.max() > high:
            raise ValueError(f"samples lie outside bounds ({low}, {high})")
        return cls(metric, samples=values, observed=observed, bounds=(low, high))

    @classmethod
    def from_beta(
        cls,
        a: float,
        b: float,
        *,
        metric: str = "metric",
        n_samples: int = 10_000,
        rng: Any = None,
        observed: float = math.nan,
    ) -> Posterior:
        """An exact Beta(a, b) posterior (a, b >= 0, not both 0)."""
        a_ = check_real("a", a)
        b_ = check_real("b", b)
        for name, value in (("a", a_), ("b", b_)):
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
            if 0 < value < MIN_PSEUDO_COUNT or value > MAX_PSEUDO_COUNT:
                raise ValueError(
                    f"{name} must be 0 or between {MIN_PSEUDO_COUNT:g} and "
                    f"{MAX_PSEUDO_COUNT:g}, got {value!r}"
                )
        if a_ == 0 and b_ == 0:
            raise ValueError("Beta(0, 0) is improper; at least one parameter must be > 0")
        n = check_n_samples(n_samples)
        return cls(metric, beta=(a_, b_), n_samples=n, seed=seed_from(rng), observed=observed)

    # ------------------------------------------------------------------ properties

    @property
    def exact(self) -> bool:
        """True when summaries are exact (the posterior is a known Beta distribution)."""
        return self._beta is not None

    @property
    def beta_params(self) -> tuple[float, float] | None:
        """(a, b) of the Beta distribution behind an exact posterior, or None: the metric's own
        for proportion metrics, the Jaccard index J's for F1 (whose law is that of 2J / (1 + J);
        see :attr:`exact_law`)."""
        return self._beta

    @property
    def exact_law(self) -> str | None:
        """The exact distribution, in words (None for a sampled posterior)."""
        if self._beta is None:
            return None
        a, b = self._beta
        if self._f1:
            return f"2J / (1 + J), J ~ Beta({a:g}, {b:g})"
        return f"Beta({a:g}, {b:g})"

    @property
    def bounds(self) -> tuple[float, float]:
        """Support of the metric."""
        return self._bounds

    @property
    def n_samples(self) -> int:
        return self._n_samples

    @property
    def samples(self) -> np.ndarray:
        """Posterior samples (read-only). Drawn on first access for exact posteriors."""
        if self._samples is None:
            assert self._beta is not None
            seed = self._seed if self._seed is not None else seed_from(None)
            draws = self._exact_draws(self._n_samples, seed)
            draws.setflags(write=False)
            self._samples = draws
        return self._samples

    # ------------------------------------------------------------------ point summaries

    def _exact_draws(self, n_samples: int, seed: int) -> np.ndarray:
        assert self._beta is not None
        check_memory(
            n_samples,
            request=f"n_samples={n_samples:,} for {self.metric}",
            alternative="ask for fewer n_samples (an exact posterior needs none for its summaries)",
        )
        draws = _core.beta_draws(self._beta[0], self._beta[1], n_samples, seed)
        if self._f1:
            draws = f1_of_jaccard(draws)
        return draws

    def mean(self) -> float:
        """Posterior mean."""
        if self._beta is not None and self._f1:
            return _core.f1_mean_var(*self._beta)[0]
        if self._beta is not None:
            a, b = self._beta
            return a / (a + b)
        return float(np.mean(self.samples))

    def var(self) -> float:
        """Posterior variance."""
        if self._beta is not None and self._f1:
            return _core.f1_mean_var(*self._beta)[1]
        if self._beta is not None:
            a, b = self._beta
            s = a + b
            return a * b / (s * s * (s + 1.0))
        if np.isinf(self.samples).any():
            return math.inf  # mass at infinity: np.var would say nan
        return float(np.var(self.samples))

    def std(self) -> float:
        """Posterior standard deviation."""
        return math.sqrt(self.var())

    def median(self) -> float:
        """Posterior median."""
        return float(self.quantile(0.5))

    def mode(self) -> float:
        """Posterior mode: exact for Beta posteriors, else the maximum of the KDE."""
        if self._beta is not None and self._f1:
            return float(_core.f1_mode(*self._beta))
        if self._beta is not None:
            return float(_core.beta_mode(*self._beta))
        return self.kde().mode

    def quantile(self, q: Any) -> Any:
        """Quantile(s) ``q`` in [0, 1]: exact for Beta posteriors, else numpy's linear rule."""
        points, scalar = _as_points(q, "q")
        if (points < 0).any() or (points > 1).any():
            raise ValueError(f"q must be in [0, 1], got {describe(q)}")
        if self._beta is not None:
            values = _core.beta_ppf(points, *self._beta)
            if self._f1:
                values = f1_of_jaccard(values)
        else:
            values = _core.sample_quantiles(self.samples, points)
        return _shape_like(np.asarray(values), scalar, q)

    # ------------------------------------------------------------------ intervals

    @overload
    def hdi(self, ci: float = ..., *, multimodal: Literal[False] = ...) -> tuple[float, float]: ...

    @overload
    def hdi(self, ci: float = ..., *, multimodal: Literal[True]) -> list[tuple[float, float]]: ...

    def hdi(
        self, ci: float = 0.95, *, multimodal: bool = False
    ) -> tuple[float, float] | list[tuple[float, float]]:
        """Highest-density interval: the shortest interval holding probability ``ci``.

        Exact for Beta posteriors; for samples, the shortest window of ceil(ci * n) sorted
        samples (the leftmost on ties). With ``multimodal=True``, the highest-density region as
        a list of intervals instead (from the exact density of a Beta posterior, from the KDE
        otherwise) — several when the posterior has separated modes.
        """
        ci = check_ci(ci)
        if self._beta is not None and self._f1:
            # F1's exact density is unimodal (both Beta parameters >= 1): one interval.
            interval = _core.f1_hdi(self._beta[0], self._beta[1], ci)
            return [interval] if multimodal else interval
        if multimodal:
            if self._beta is not None:
                return beta_region(self._beta[0], self._beta[1], ci)
            return density_region(self.kde(grid_size=4096), ci, self.samples)
        if self._beta is not None:
            return _core.beta_hdi(self._beta[0], self._beta[1], ci)
        return _core.sample_hdi(self.samples, ci)

    def eti(self, ci: float = 0.95) -> tuple[float, float]:
        """Equal-tailed interval: the (1 - ci)/2 and (1 + ci)/2 quantiles."""
        ci = check_ci(ci)
        if self._beta is not None:
            low, high = _core.beta_eti(self._beta[0], self._beta[1], ci)
            return (f1_of_jaccard(low), f1_of_jaccard(high)) if self._f1 else (low, high)
        return _core.sample_eti(self.samples, ci)

    def interval(self, ci: float = 0.95, kind: str = "hdi") -> tuple[float, float]:
        """``hdi`` or ``eti`` by name."""
        if kind == "hdi":
            return self.hdi(ci)
        if kind == "eti":
            return self.eti(ci)
        raise ValueError(f'kind must be "hdi" or "eti", got {kind!r}')

    def width(self, ci: float = 0.95) -> float:
        """Width of the HDI: the metric's uncertainty."""
        low, high = self.hdi(ci)
        return high - low

    # ------------------------------------------------------------------ distribution

    def kde(self, *, bandwidth: str | float = "scott", grid_size: int = 512) -> KDE:
        """Gaussian KDE of the samples, reflected at the metric's bounds."""
        if bandwidth == "scott" and grid_size == 512 and self._kde is not None:
            return self._kde
        estimate = kde(self.samples, bounds=self._bounds, bandwidth=bandwidth, grid_size=grid_size)
        if bandwidth == "scott" and grid_size == 512:
            self._kde = estimate
        return estimate

    def pdf(self, x: Any) -> Any:
        """Density at ``x``: exact for Beta posteriors, from the KDE otherwise."""
        points, scalar = _as_points(x)
        if self._beta is not None and self._f1:
            # Density of F1 = 2J/(1+J): J's density times dJ/dF1 = (1 + J)^2 / 2.
            inside = (points >= 0.0) & (points <= 1.0)
            jaccard = jaccard_of_f1(np.where(inside, points, 0.0))
            density = _core.beta_pdf(jaccard, *self._beta) * (1.0 + jaccard) ** 2 / 2.0
            values = np.where(inside, density, 0.0)
        elif self._beta is not None:
            values = _core.beta_pdf(points, *self._beta)
        else:
            values = self.kde()(points)
        return _shape_like(np.asarray(values), scalar, x)

    def cdf(self, x: Any) -> Any:
        """P(metric <= x)."""
        points, scalar = _as_points(x)
        if self._beta is not None:
            values = _core.beta_cdf(self._beta_scale(points), *self._beta)
        else:
            ordered = np.sort(self.samples)
            values = np.searchsorted(ordered, points, side="right") / ordered.shape[0]
        return _shape_like(np.asarray(values, dtype=np.float64), scalar, x)

    def prob_above(self, x: float) -> float:
        """P(metric > x)."""
        value = check_real("x", x)
        if self._beta is not None:
            return float(_core.beta_sf(self._beta_scale(np.array([value])), *self._beta)[0])
        return float(np.mean(self.samples > value))

    def prob_below(self, x: float) -> float:
        """P(metric < x)."""
        value = check_real("x", x)
        if self._beta is not None:
            return float(_core.beta_cdf(self._beta_scale(np.array([value])), *self._beta)[0])
        return float(np.mean(self.samples < value))

    def _beta_scale(self, points: np.ndarray) -> np.ndarray:
        """Metric values as values of the Beta variable behind an exact posterior: themselves,
        or for F1 the Jaccard index F1 / (2 - F1) (F1 clipped to its range [0, 1] first, as the
        map is increasing there only)."""
        if not self._f1:
            return points
        return np.asarray(jaccard_of_f1(np.clip(points, 0.0, 1.0)))

    # ------------------------------------------------------------------ reporting

    def summary(self, ci: float = 0.95) -> dict[str, Any]:
        """Observed value, mean, median, std, HDI and its width, in a dict."""
        ci = check_ci(ci)
        if self._beta is not None:
            low, high = self.hdi(ci)
            mean, median, std = self.mean(), self.median(), self.std()
        else:
            # One pass over the samples for all four statistics.
            mean, std, median, low, high = _core.sample_summary(self.samples, ci)
        return {
            "metric": self.metric,
            "observed": self.observed,
            "mean": mean,
            "median": median,
            "std": std,
            "hdi_low": low,
            "hdi_high": high,
            "width": high - low,
            "exact": self.exact,
        }

    def to_dict(self, ci: float = 0.95) -> dict[str, Any]:
        """Strict JSON description (summary plus the Beta parameters when exact); an unknown
        observed value (a posterior without labels) is None."""
        result = self.summary(ci)
        result["ci"] = check_ci(ci)
        result["n_samples"] = self._n_samples
        if self._beta is not None:
            result["beta_a"], result["beta_b"] = self._beta
        return json_dict(result)

    def random_baseline(self, *, n_samples: int | None = None, rng: Any = None) -> Posterior:
        """The posterior of the same metric for a random classifier on the same data.

        The random classifier keeps the true-class totals and spreads each class evenly over
        the predicted classes (:meth:`ConfusionMatrix.random_baseline`); prior, ``beta`` and
        ``zero_division`` are this posterior's own.
        """
        if self._origin is None or not self._origin.has_random_baseline:
            raise ValueError(
                f"{self.metric}: this posterior has no random baseline (posteriors from a "
                "confusion matrix or from binary scores have one)"
            )
        n = self._n_samples if n_samples is None else check_n_samples(n_samples)
        return self._origin.posterior(n, seed_from(rng), random=True)

    def _draw_independent(self, n_samples: int, seed: int) -> np.ndarray:
        """Fresh samples from a stream of its own (for comparisons), or the samples held."""
        if self._origin is not None:
            return self._origin.posterior(n_samples, seed).samples
        if self._beta is not None:
            return self._exact_draws(n_samples, seed)
        samples = self.samples
        if samples.shape[0] != n_samples:
            raise ValueError(
                f"{self.metric}: {samples.shape[0]} samples held, {n_samples} needed; posteriors "
                "built from samples can only be compared with the same number of samples"
            )
        return samples

    def as_prior(self) -> Prior:
        """The prior for the next batch of data (sequential updating)."""
        if self._next_prior is None:
            raise ValueError(
                "this posterior cannot serve as a prior: only posteriors computed from a "
                "confusion matrix (without a label audit) can"
            )
        return self._next_prior

    def _draws(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        return {self.metric: ((), self.samples)}, {}, {self.metric: self.observed}

    def density_svg(
        self, *, band: tuple[float, float] | None = None, width: int = 180, height: int = 40
    ) -> str:
        """A small inline SVG of the density (numpy only): the 95% HDI shaded, the observed
        value marked, ``band`` (e.g. a ROPE) behind it; empty when the posterior is a point."""
        band = None if band is None else check_interval("band", band)
        width = check_positive_int("width", width)
        height = check_positive_int("height", height)
        try:
            low, high = (float(v) for v in self.quantile([0.001, 0.999]))
            if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
                return ""
            grid = np.linspace(low, high, 80)
            density = np.asarray(self.pdf(grid), dtype=np.float64)
            hdi = self.hdi(0.95)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return ""
        return density_svg(
            grid,
            density,
            hdi=hdi,
            marks=[(self.observed, "#e07b00")],
            band=band,
            width=width,
            height=height,
        )

    def _html(self) -> str:
        try:
            summary = self.summary(0.95)
        except ValueError:
            return f"<pre>{escape(repr(self))}</pre>"
        kind = f"exact {self.exact_law}" if self.exact else f"{self._n_samples:,} samples"
        shown = {
            "observed": summary["observed"],
            "mean": summary["mean"],
            "std": summary["std"],
            "95% HDI": f"[{format_cell(summary['hdi_low'])}, {format_cell(summary['hdi_high'])}]",
            "posterior": kind,
        }
        return (
            f"<h4>posterior of {escape(self.metric)}</h4>{self.density_svg(width=240, height=56)}"
            f"{key_values(shown)}"
        )

    def __repr__(self) -> str:
        try:
            low, high = self.hdi(0.95)
            body = f"mean={self.mean():.4f}, 95% HDI=[{low:.4f}, {high:.4f}]"
        except ValueError:
            body = "undefined"
        kind = f"exact {self.exact_law}" if self.exact else f"{self._n_samples} samples"
        observed = "" if math.isnan(self.observed) else f"observed={self.observed:.4f}, "
        return f"Posterior({self.metric}: {observed}{body}, {kind})"
