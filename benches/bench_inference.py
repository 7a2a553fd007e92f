"""Inference on posterior samples: the KDE and sample intervals on 1,000,000 samples.

Run: ``pip install ".[bench]" && python benches/bench_inference.py [--json out.json]``.

* KDE of 1,000,000 samples on 512 grid points: probeval (linear binning + FFT, reflection at
  the bounds) vs scipy.stats.gaussian_kde with the same bandwidth evaluated on the same grid.
  Target: <= 15 ms median.
* HDI and ETI of 1,000,000 samples: probeval vs the numpy way (sort, then the shortest window;
  quantiles). Target: <= 15 ms each.

Sorting and binning costs depend on the samples' shape, so probeval and numpy are timed over 8
posteriors (seed 2026): 1,000,000 draws of Beta(a, b) with a, b = 10**U(0, 3.5) (flat, skewed,
piled up at a bound); reported are p50 and p99. scipy's KDE takes seconds per call and is timed
once, on the first of them.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from scipy import stats

import probeval as pe
from _harness import Report, environment, percentiles_ms, save

N = 1_000_000


def sample_sets(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(2026)
    return [rng.beta(*(10 ** rng.uniform(0, 3.5, 2)), N) for _ in range(size)]


def numpy_hdi(samples: np.ndarray, ci: float = 0.95) -> tuple[float, float]:
    ordered = np.sort(samples)
    k = int(np.ceil(ci * ordered.size))
    widths = ordered[k - 1 :] - ordered[: ordered.size - k + 1]
    i = int(np.argmin(widths))
    return float(ordered[i]), float(ordered[i + k - 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    args = parser.parse_args()
    print(environment())
    inputs = sample_sets(8)

    kde = Report(f"Gaussian KDE of {N:,} samples on 512 grid points, over {len(inputs)} posteriors")
    kde.compare_over(
        {
            "probeval kde (bounds=(0, 1))": lambda x: pe.kde(x, bounds=(0, 1)),
            "probeval kde (unbounded)": pe.kde,
        },
        inputs,
        number=5,
    )
    first = inputs[0]
    grid = pe.kde(first).grid
    scipy_kde = stats.gaussian_kde(first, bw_method=pe.kde(first).bandwidth / first.std(ddof=1))
    kde.add("scipy gaussian_kde, same bandwidth (first input)", lambda: scipy_kde(grid), repeats=1)
    scipy_s = kde.timings[-1].median
    p50_ms, p99_ms = (kde.timings[0].percentile(q) * 1e3 for q in (50, 99))
    kde.notes.append(
        f"probeval: p50 {p50_ms:.1f} ms, p99 {p99_ms:.1f} ms (target <= 15 ms); scipy is "
        f"{scipy_s / kde.timings[1].seconds[0]:.0f}x slower on the first input"
    )
    kde.print()

    intervals = Report(f"intervals of {N:,} samples, over {len(inputs)} posteriors")
    intervals.compare_over(
        {
            "probeval hdi": lambda x: pe.hdi(x, 0.95),
            "numpy sort + shortest window": numpy_hdi,
            "probeval eti": lambda x: pe.eti(x, 0.95),
            "numpy quantile": lambda x: np.quantile(x, [0.025, 0.975]),
        },
        inputs,
        number=3,
    )
    hdi, eti = intervals.timings[0], intervals.timings[2]
    intervals.notes.append(
        f"hdi p50 {hdi.percentile(50) * 1e3:.1f} ms, p99 {hdi.percentile(99) * 1e3:.1f} ms; "
        f"eti p50 {eti.percentile(50) * 1e3:.1f} ms, p99 {eti.percentile(99) * 1e3:.1f} ms "
        "(targets <= 15 ms)"
    )
    intervals.notes.append(
        f"hdi {intervals.ratio('numpy sort + shortest window', 'probeval hdi'):.1f}x faster "
        f"than numpy at p50; eti {intervals.ratio('numpy quantile', 'probeval eti'):.1f}x"
    )
    intervals.print()
    payload: dict[str, Any] = {
        "environment": environment(),
        "kde_ms": {t.name: percentiles_ms(t) for t in kde.timings[:2]},
        "kde_scipy_first_input_ms": scipy_s * 1e3,
        "intervals_ms": {t.name: percentiles_ms(t) for t in intervals.timings},
    }
    save(args.json, payload)


if __name__ == "__main__":
    main()
