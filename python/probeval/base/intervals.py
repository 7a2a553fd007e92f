"""Credible intervals of posterior samples: HDI, ETI and the multimodal highest-density region.

* :func:`hdi` — the highest-density interval: the shortest window holding ``ceil(ci * n)`` of
  the sorted samples, the leftmost one on ties (ArviZ-compatible up to that rounding rule).
  Computed by selection on the two tails, never by a full sort: 10⁶ samples take ~5 ms.
* :func:`eti` — the equal-tailed interval, numpy's linear quantiles at (1 ± ci) / 2.
* ``multimodal=True`` — the highest-density *region*: the points whose density is above a
  level chosen so that the region holds probability ``ci``, returned as a list of intervals.
  For samples the level follows Hyndman (1996): the (1 - ci) quantile of the KDE evaluated at
  the samples themselves, so the region holds a fraction ``ci`` of the samples even where the
  KDE oversmooths (Scott's rule does for well-separated modes); its ends are where the KDE
  crosses that level, interpolated on a fine grid. For Beta posteriors the region comes from
  exact cell masses of the density.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from probeval import _core
from probeval._util.validation import as_float_1d, check_ci
from probeval.base.kde import KDE, kde

__all__ = ["eti", "hdi"]

Interval = tuple[float, float]


def hdi(
    samples: Any,
    ci: float = 0.95,
    *,
    multimodal: bool = False,
    bounds: tuple[float | None, float | None] | None = None,
) -> Interval | list[Interval]:
    """Highest-density interval of samples (or, with ``multimodal=True``, region).

    Parameters
    ----------
    samples : array-like
        One-dimensional finite samples.
    ci : float
        Probability the interval holds, in (0, 1).
    multimodal : bool
        Return the highest-density region as a list of intervals (from a boundary-reflected
        KDE) instead of the single shortest interval.
    bounds : (low, high), optional
        Support of the quantity, used by the KDE of the multimodal region.

    Returns
    -------
    (low, high) or list of (low, high)
    """
    x = as_float_1d("samples", samples)
    ci = check_ci(ci)
    if multimodal:
        return density_region(kde(x, bounds=bounds, grid_size=4096), ci, x)
    return _core.sample_hdi(x, ci)


def eti(samples: Any, ci: float = 0.95) -> Interval:
    """Equal-tailed interval of samples: the (1 - ci)/2 and (1 + ci)/2 quantiles."""
    x = as_float_1d("samples", samples)
    return _core.sample_eti(x, check_ci(ci))


def density_region(estimate: KDE, ci: float, samples: np.ndarray) -> list[Interval]:
    """Highest-density region from a KDE of ``samples`` (Hyndman's level, see module doc)."""
    if estimate.grid.shape[0] == 1:  # a point mass
        point = float(estimate.grid[0])
        return [(point, point)]
    level = float(np.quantile(estimate(samples), 1.0 - ci))
    grid, density = estimate.grid, estimate.density
    above = density >= level
    padded = np.concatenate(([False], above, [False])).astype(np.int8)
    changes = np.flatnonzero(np.diff(padded))
    regions = []
    for start, stop in zip(changes[0::2], changes[1::2], strict=True):
        low = _crossing(grid, density, level, start - 1, start) if start > 0 else grid[0]
        last = stop - 1
        high = _crossing(grid, density, level, last, stop) if stop < grid.shape[0] else grid[-1]
        regions.append((float(low), float(high)))
    return regions


def _crossing(grid: np.ndarray, density: np.ndarray, level: float, i: int, j: int) -> float:
    """Where the density crosses ``level`` between grid points i and j (linearly)."""
    d0, d1 = density[i], density[j]
    if d1 == d0:
        return float(grid[j])
    fraction = (level - d0) / (d1 - d0)
    return float(grid[i] + fraction * (grid[j] - grid[i]))


def cell_region(edges: np.ndarray, masses: np.ndarray, ci: float) -> list[Interval]:
    """Highest-density region from grid cells [edges[i], edges[i+1]] with the given masses:
    take cells in order of decreasing average density until they hold ``ci`` of the total,
    then merge neighbouring cells into intervals."""
    widths = np.diff(edges)
    heights = np.divide(masses, widths, out=np.zeros_like(masses), where=widths > 0)
    order = np.argsort(-heights, kind="stable")
    cumulative = np.cumsum(masses[order])
    total = cumulative[-1]
    if total <= 0:
        return [(float(edges[0]), float(edges[-1]))]
    needed = int(np.searchsorted(cumulative, ci * total)) + 1
    chosen = np.zeros(masses.shape[0], dtype=bool)
    chosen[order[:needed]] = True
    # Runs of chosen cells become intervals.
    padded = np.concatenate(([False], chosen, [False])).astype(np.int8)
    changes = np.flatnonzero(np.diff(padded))
    starts, stops = changes[0::2], changes[1::2]
    return [(float(edges[a]), float(edges[b])) for a, b in zip(starts, stops, strict=True)]


def beta_region(a: float, b: float, ci: float, grid_size: int = 4096) -> list[Interval]:
    """Highest-density region of Beta(a, b) from exact cell masses on a fine grid.

    Unimodal Betas give one interval (their exact HDI is :func:`probeval._core.beta_hdi`);
    U-shaped ones (a, b < 1) give one interval at each end.
    """
    if a == 0 or b == 0:  # point mass
        point = 0.0 if a == 0 else 1.0
        return [(point, point)]
    low, high = (
        _core.beta_ppf(np.array([1e-12]), a, b)[0],
        _core.beta_isf(np.array([1e-12]), a, b)[0],
    )
    if a < 1:
        low = 0.0
    if b < 1:
        high = 1.0
    edges = np.linspace(low, high, grid_size + 1)
    below = _core.beta_cdf(edges, a, b)
    above = _core.beta_sf(edges, a, b)
    # Cell masses from whichever tail is smaller at each edge, to keep both ends accurate.
    masses = np.where(below[1:] < 0.5, below[1:] - below[:-1], above[:-1] - above[1:])
    return cell_region(edges, np.maximum(masses, 0.0), ci)
