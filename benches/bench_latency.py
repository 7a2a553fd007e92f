"""Latency of single calls from Python, as a service makes them, over realistic inputs.

Run: ``pip install ".[bench]" && python benches/bench_latency.py [--json out.json]``.

The cost of an exact interval depends on the counts (the Beta shapes), so every contender is
timed on the same stream of count quadruples and reported as p50 / p99 / max over them, never at
one input. The inputs: a total drawn log-uniformly from 10 … 10¹², an accuracy drawn uniformly
from 0.01 … 0.99, and each side (correct, wrong) split between its two cells by a fraction
uniform in 0.01 … 0.99 (rounded to whole counts; seed 2026).

* Exact 95% interval of an accuracy posterior from four counts: ``pe.metric_interval`` (exact
  HDI), ``Posterior.hdi()`` on an exact posterior built beforehand, and the whole
  ``ConfusionMatrix.from_counts(...).posterior(...).hdi()``; against scipy's exact equal-tailed
  interval (scipy has no HDI) through ``scipy.special.betaincinv`` (its fastest path) and
  ``scipy.stats.beta.interval``. Targets: ``metric_interval`` p50 <= 6 us, p99 <= 15 us;
  ``Posterior.hdi()`` p50 <= 8 us.
* A sampled posterior (MCC) from four counts, 10,000 draws, mean + 95% HDI:
  ``pe.metric_summary`` vs numpy (``Generator.dirichlet``, MCC, sort and the shortest window).
  Target <= 1 ms.
* F1 from four counts, mean + 95% HDI: ``pe.metric_summary`` (exact, no draws) vs the same numpy
  recipe with 10,000 draws — what a user without an exact F1 law does.

Each input is timed with a few back-to-back calls (their mean), the contenders in a rotating
order per input; the exact intervals are timed head to head against scipy's fastest exact path,
the slower ways to the same interval in a second pass over the same inputs.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import special, stats

import probeval as pe
from _harness import Report, environment, save


def count_inputs(n: int, seed: int = 2026) -> list[tuple[int, int, int, int]]:
    """``n`` (tp, fp, tn, fn) quadruples from the distribution in the module docstring."""
    rng = np.random.default_rng(seed)
    total = 10.0 ** rng.uniform(1, 12, n)
    correct = np.round(total * rng.uniform(0.01, 0.99, n))
    wrong = np.round(total) - correct
    tp = np.round(correct * rng.uniform(0.01, 0.99, n))
    fp = np.round(wrong * rng.uniform(0.01, 0.99, n))
    return [
        (int(a), int(b), int(c - a), int(d - b))
        for a, b, c, d in zip(tp, fp, correct, wrong, strict=True)
    ]


def numpy_summary(
    rng: np.random.Generator, counts: tuple[int, int, int, int], metric: str
) -> tuple[float, float, float]:
    tp_c, fp_c, tn_c, fn_c = counts
    p = rng.dirichlet([tp_c + 1, fp_c + 1, tn_c + 1, fn_c + 1], 10_000)
    tp, fp, tn, fn = p.T
    if metric == "f1":
        values = 2 * tp / (2 * tp + fp + fn)
    else:
        values = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    values = np.sort(values)
    k = int(np.ceil(0.95 * values.size))
    i = int(np.argmin(values[k - 1 :] - values[: values.size - k + 1]))
    return float(values.mean()), float(values[i]), float(values[i + k - 1])


def _percentiles(report: Report) -> dict[str, dict[str, float]]:
    return {
        t.name: {f"p{q}_us": t.percentile(q) * 1e6 for q in (50, 99, 100)} for t in report.timings
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--inputs", type=int, default=3000, help="count quadruples per timing")
    args = parser.parse_args()
    print(environment())
    counts = count_inputs(args.inputs)

    def accuracy_shapes(c: tuple[int, int, int, int]) -> tuple[float, float]:
        return c[0] + c[2] + 1.0, c[1] + c[3] + 1.0

    posteriors = {
        c: pe.ConfusionMatrix.from_counts(tp=c[0], fp=c[1], tn=c[2], fn=c[3]).posterior("accuracy")
        for c in counts
    }
    interval = Report(
        f"exact 95% interval of an accuracy posterior from counts, over {len(counts)} inputs"
    )
    interval.compare_over(
        {
            "pe.metric_interval (exact HDI)": lambda c: pe.metric_interval(
                "accuracy", tp=c[0], fp=c[1], tn=c[2], fn=c[3]
            ),
            "scipy.special.betaincinv (ETI)": lambda c: special.betaincinv(
                *accuracy_shapes(c), (0.025, 0.975)
            ),
        },
        counts,
        number=3,
    )
    # The slower paths separately: interleaved with the two above, their churn (100 us of
    # object creation, scipy's distribution machinery) would leave the caches cold for them.
    interval.compare_over(
        {
            "Posterior.hdi() (exact posterior built beforehand)": lambda c: posteriors[c].hdi(),
            "ConfusionMatrix.from_counts(...).posterior(...).hdi()": lambda c: (
                pe.ConfusionMatrix.from_counts(tp=c[0], fp=c[1], tn=c[2], fn=c[3])
                .posterior("accuracy")
                .hdi()
            ),
            "scipy.stats.beta.interval (ETI)": lambda c: stats.beta.interval(
                0.95, *accuracy_shapes(c)
            ),
        },
        counts,
        number=3,
    )
    quick = interval.timings[0]
    interval.notes.append(
        f"pe.metric_interval: p50 {quick.percentile(50) * 1e6:.1f} us, "
        f"p99 {quick.percentile(99) * 1e6:.1f} us (targets <= 6 / <= 15 us); "
        f"Posterior.hdi(): p50 {interval.timings[2].percentile(50) * 1e6:.1f} us (<= 8 us)"
    )
    for q in (50, 99):
        ratio = interval.ratio(
            "scipy.special.betaincinv (ETI)", "pe.metric_interval (exact HDI)", q
        )
        interval.notes.append(f"scipy betaincinv / pe.metric_interval at p{q}: {ratio:.1f}x")
    interval.print()

    rng = np.random.default_rng(0)
    sampled = counts[: max(1, len(counts) // 10)]
    mcc = Report(
        f"MCC posterior from counts: 10,000 draws, mean and 95% HDI, over {len(sampled)} inputs"
    )
    mcc.compare_over(
        {
            "pe.metric_summary": lambda c: pe.metric_summary(
                "mcc", tp=c[0], fp=c[1], tn=c[2], fn=c[3], n_samples=10_000, rng=1
            ),
            "numpy dirichlet + MCC + sort + window": lambda c: numpy_summary(rng, c, "mcc"),
        },
        sampled,
    )
    ours = mcc.timings[0]
    mcc.notes.append(
        f"pe.metric_summary: p50 {ours.percentile(50) * 1e3:.3f} ms, p99 "
        f"{ours.percentile(99) * 1e3:.3f} ms (target <= 1 ms); numpy / probeval "
        f"{mcc.ratio('numpy dirichlet + MCC + sort + window', 'pe.metric_summary'):.1f}x at p50, "
        f"{mcc.ratio('numpy dirichlet + MCC + sort + window', 'pe.metric_summary', 99):.1f}x "
        "at p99"
    )
    mcc.print()

    f1 = Report(f"F1 posterior from counts: mean and 95% HDI, over {len(sampled)} inputs")
    numpy_f1 = "numpy dirichlet (10,000 draws) + F1 + sort + window"
    f1.compare_over(
        {
            "pe.metric_summary (exact)": lambda c: pe.metric_summary(
                "f1", tp=c[0], fp=c[1], tn=c[2], fn=c[3]
            ),
            numpy_f1: lambda c: numpy_summary(rng, c, "f1"),
        },
        sampled,
    )
    ours = f1.timings[0]
    f1.notes.append(
        f"pe.metric_summary (exact F1): p50 {ours.percentile(50) * 1e6:.1f} us, p99 "
        f"{ours.percentile(99) * 1e6:.1f} us; numpy / probeval "
        f"{f1.ratio(numpy_f1, 'pe.metric_summary (exact)'):.0f}x at p50, "
        f"{f1.ratio(numpy_f1, 'pe.metric_summary (exact)', 99):.0f}x at p99"
    )
    f1.print()
    save(
        args.json,
        {
            "environment": environment(),
            "inputs": "total 10**U(1, 12), accuracy U(0.01, 0.99), cell splits U(0.01, 0.99)",
            "interval": _percentiles(interval),
            "mcc_summary": _percentiles(mcc),
            "f1_summary": _percentiles(f1),
        },
    )


if __name__ == "__main__":
    main()
