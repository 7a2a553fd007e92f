"""Latency of single calls from Python, as a service makes them.

Run: ``pip install ".[bench]" && python benches/bench_latency.py [--json out.json]``.

* Exact 95% interval of an accuracy posterior from four counts:
  ``pe.metric_interval`` (exact HDI) and ``ConfusionMatrix(...).posterior(...).hdi()`` vs
  scipy's ``beta.interval`` (the equal-tailed interval; scipy has no HDI). Target <= 20 us.
* F1 posterior from four counts, 10,000 draws, mean + 95% HDI: ``pe.metric_summary`` vs numpy
  (``Generator.dirichlet``, F1, sort and the shortest window). Target <= 1 ms.

Medians of interleaved, order-rotated repeats; each repeat times a batch of calls.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

import probeval as pe
from _harness import Report, environment, save

TP, FP, TN, FN = 5285, 3184, 8000, 1000


def numpy_f1_summary(rng: np.random.Generator) -> tuple[float, float, float]:
    p = rng.dirichlet([TP + 1, FP + 1, TN + 1, FN + 1], 10_000)
    f1 = np.sort(2 * p[:, 0] / (2 * p[:, 0] + p[:, 1] + p[:, 3]))
    k = int(np.ceil(0.95 * f1.size))
    i = int(np.argmin(f1[k - 1 :] - f1[: f1.size - k + 1]))
    return float(f1.mean()), float(f1[i]), float(f1[i + k - 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(environment())
    a, b = TP + TN + 1, FP + FN + 1

    interval = Report("exact 95% interval of an accuracy posterior from counts (per call)")
    interval.compare(
        {
            "pe.metric_interval (exact HDI)": lambda: pe.metric_interval(
                "accuracy", tp=TP, fp=FP, tn=TN, fn=FN
            ),
            "ConfusionMatrix.from_counts(...).posterior(...).hdi()": lambda: (
                pe.ConfusionMatrix.from_counts(tp=TP, fp=FP, tn=TN, fn=FN)
                .posterior("accuracy")
                .hdi()
            ),
            "scipy.stats.beta.interval (ETI)": lambda: stats.beta.interval(0.95, a, b),
        },
        repeats=args.repeats,
        number=500,
    )
    quick = interval.timings[0].median * 1e6
    interval.notes.append(f"pe.metric_interval: {quick:.1f} us (target <= 20 us)")
    interval.print()

    rng = np.random.default_rng(0)
    f1 = Report("F1 posterior from counts: 10,000 draws, mean and 95% HDI (per call)")
    f1.compare(
        {
            "pe.metric_summary": lambda: pe.metric_summary(
                "f1", tp=TP, fp=FP, tn=TN, fn=FN, n_samples=10_000, rng=1
            ),
            "numpy dirichlet + F1 + sort + window": lambda: numpy_f1_summary(rng),
        },
        repeats=args.repeats,
        number=20,
    )
    ours = f1.timings[0].median * 1e3
    ratio = f1.ratio("numpy dirichlet + F1 + sort + window", "pe.metric_summary")
    f1.notes.append(f"pe.metric_summary: {ours:.3f} ms (target <= 1 ms), {ratio:.1f}x numpy")
    f1.print()
    save(
        args.json,
        {
            "environment": environment(),
            "interval_us": {t.name: t.median * 1e6 for t in interval.timings},
            "f1_summary_ms": {t.name: t.median * 1e3 for t in f1.timings},
        },
    )


if __name__ == "__main__":
    main()
