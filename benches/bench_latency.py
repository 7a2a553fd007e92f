"""Latency of single calls from Python, as a service makes them.

Run: ``pip install ".[bench]" && python benches/bench_latency.py [--json out.json]``.

* Exact 95% interval of an accuracy posterior from four counts:
  ``pe.metric_interval`` (exact HDI) and ``ConfusionMatrix(...).posterior(...).hdi()`` vs
  scipy's ``beta.interval`` (the equal-tailed interval; scipy has no HDI). Target <= 20 us.
* A sampled posterior (MCC) from four counts, 10,000 draws, mean + 95% HDI:
  ``pe.metric_summary`` vs numpy (``Generator.dirichlet``, MCC, sort and the shortest window).
  Target <= 1 ms.
* F1 from four counts, mean + 95% HDI: ``pe.metric_summary`` (exact, no draws) vs the same numpy
  recipe with 10,000 draws — what a user without an exact F1 law does.

Medians of interleaved, order-rotated repeats; each repeat times a batch of calls.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

import probeval as pe
from _harness import Report, environment, save

TP, FP, TN, FN = 5285, 3184, 8000, 1000


def numpy_summary(rng: np.random.Generator, metric: str) -> tuple[float, float, float]:
    p = rng.dirichlet([TP + 1, FP + 1, TN + 1, FN + 1], 10_000)
    tp, fp, tn, fn = p.T
    if metric == "f1":
        values = 2 * tp / (2 * tp + fp + fn)
    else:
        values = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    values = np.sort(values)
    k = int(np.ceil(0.95 * values.size))
    i = int(np.argmin(values[k - 1 :] - values[: values.size - k + 1]))
    return float(values.mean()), float(values[i]), float(values[i + k - 1])


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
    mcc = Report("MCC posterior from counts: 10,000 draws, mean and 95% HDI (per call)")
    mcc.compare(
        {
            "pe.metric_summary": lambda: pe.metric_summary(
                "mcc", tp=TP, fp=FP, tn=TN, fn=FN, n_samples=10_000, rng=1
            ),
            "numpy dirichlet + MCC + sort + window": lambda: numpy_summary(rng, "mcc"),
        },
        repeats=args.repeats,
        number=20,
    )
    ours = mcc.timings[0].median * 1e3
    ratio = mcc.ratio("numpy dirichlet + MCC + sort + window", "pe.metric_summary")
    mcc.notes.append(f"pe.metric_summary: {ours:.3f} ms (target <= 1 ms), {ratio:.1f}x numpy")
    mcc.print()

    f1 = Report("F1 posterior from counts: mean and 95% HDI (per call)")
    f1.compare(
        {
            "pe.metric_summary (exact)": lambda: pe.metric_summary(
                "f1", tp=TP, fp=FP, tn=TN, fn=FN
            ),
            "numpy dirichlet (10,000 draws) + F1 + sort + window": lambda: numpy_summary(rng, "f1"),
        },
        repeats=args.repeats,
        number=100,
    )
    ratio = f1.ratio(
        "numpy dirichlet (10,000 draws) + F1 + sort + window", "pe.metric_summary (exact)"
    )
    ours = f1.timings[0].median * 1e6
    f1.notes.append(f"pe.metric_summary (exact F1): {ours:.1f} us, {ratio:.0f}x numpy")
    f1.print()
    save(
        args.json,
        {
            "environment": environment(),
            "interval_us": {t.name: t.median * 1e6 for t in interval.timings},
            "mcc_summary_ms": {t.name: t.median * 1e3 for t in mcc.timings},
            "f1_summary_ms": {t.name: t.median * 1e3 for t in f1.timings},
        },
    )


if __name__ == "__main__":
    main()
