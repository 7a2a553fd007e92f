"""Inference on posterior samples: the KDE and sample intervals on 1,000,000 samples.

Run: ``pip install ".[bench]" && python benches/bench_inference.py [--json out.json]``.

* KDE of 1,000,000 samples on 512 grid points: probeval (linear binning + FFT, reflection at
  the bounds) vs scipy.stats.gaussian_kde with the same bandwidth evaluated on the same grid.
  Target: <= 15 ms median.
* HDI and ETI of 1,000,000 samples: probeval vs the numpy way (sort, then the shortest window;
  quantiles). Target: <= 15 ms each.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from scipy import stats

import probeval as pe
from _harness import Report, environment, save

N = 1_000_000


def numpy_hdi(samples: np.ndarray, ci: float = 0.95) -> tuple[float, float]:
    ordered = np.sort(samples)
    k = int(np.ceil(ci * ordered.size))
    widths = ordered[k - 1 :] - ordered[: ordered.size - k + 1]
    i = int(np.argmin(widths))
    return float(ordered[i]), float(ordered[i + k - 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    print(environment())
    samples = np.random.default_rng(0).beta(2000, 3, N)  # a posterior piled up near 1
    ours = pe.kde(samples, bounds=(0, 1), grid_size=512)
    factor = ours.bandwidth / samples.std(ddof=1)
    scipy_kde = stats.gaussian_kde(samples, bw_method=factor)

    kde = Report(f"Gaussian KDE of {N:,} samples on 512 grid points")
    kde.add(
        "probeval kde (bounds=(0, 1))", lambda: pe.kde(samples, bounds=(0, 1)), repeats=args.repeats
    )
    kde.add("probeval kde (unbounded)", lambda: pe.kde(samples), repeats=args.repeats)
    kde.add("scipy gaussian_kde, same bandwidth", lambda: scipy_kde(ours.grid), repeats=1, warmup=0)
    ratio = kde.ratio("scipy gaussian_kde, same bandwidth", "probeval kde (unbounded)")
    median_ms = kde.timings[0].median * 1e3
    kde.notes.append(
        f"probeval: {median_ms:.1f} ms (target <= 15 ms); scipy is {ratio:.0f}x slower"
    )
    kde.print()

    intervals = Report(f"intervals of {N:,} samples")
    intervals.compare(
        {
            "probeval hdi": lambda: pe.hdi(samples, 0.95),
            "numpy sort + shortest window": lambda: numpy_hdi(samples),
            "probeval eti": lambda: pe.eti(samples, 0.95),
            "numpy quantile": lambda: np.quantile(samples, [0.025, 0.975]),
        },
        repeats=args.repeats,
    )
    hdi_ms = intervals.timings[0].median * 1e3
    eti_ms = intervals.timings[2].median * 1e3
    intervals.notes.append(f"hdi {hdi_ms:.1f} ms, eti {eti_ms:.1f} ms (targets <= 15 ms)")
    intervals.notes.append(
        f"hdi {intervals.ratio('numpy sort + shortest window', 'probeval hdi'):.1f}x faster "
        f"than numpy; eti {intervals.ratio('numpy quantile', 'probeval eti'):.1f}x"
    )
    intervals.print()
    payload: dict[str, Any] = {
        "environment": environment(),
        "kde_ms": {t.name: t.median * 1e3 for t in kde.timings},
        "kde_ratio_vs_scipy": ratio,
        "intervals_ms": {t.name: t.median * 1e3 for t in intervals.timings},
    }
    save(args.json, payload)


if __name__ == "__main__":
    main()
