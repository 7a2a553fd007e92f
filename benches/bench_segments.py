"""Many segments at once: 10,000 segments x 10,000 draws x 5 binary metrics, summaries only.

Run: ``python benches/bench_segments.py [--json out.json]``.

Each measurement runs in a fresh process (RAYON_NUM_THREADS set before the import), so that it
gets its own thread pool and its own peak-memory record. Reported: throughput in posterior
draws per second (segments x draws, each draw giving all 5 metrics), peak RSS growth of the
call (target <= 300 MB), and the speed-up from 1 to 2 threads (target >= 1.7x) with a digest
showing that both give identical results. Baseline for scale: the same work as a Python loop
of ``pe.evaluate`` calls (one per segment), timed on 200 segments and extrapolated.

The inputs are already a distribution, not one point: the 10,000 segments' counts are drawn
(seed 0) with rows U{50, ..., 5000}, positives Binomial(rows, 0.3), recall U(0.5, 0.95) and
false-positive rate U(0.02, 0.3), and one batched call covers them all, so its time is the
cost averaged over that distribution (per-segment percentiles do not exist inside one call).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from _harness import environment, save

SEGMENTS, DRAWS = 10_000, 10_000
METRICS = ["f1", "mcc", "kappa", "balanced_accuracy", "markedness"]  # all sampled


def counts() -> np.ndarray:
    rng = np.random.default_rng(0)
    n = rng.integers(50, 5000, SEGMENTS)
    tpr, fpr = rng.uniform(0.5, 0.95, SEGMENTS), rng.uniform(0.02, 0.3, SEGMENTS)
    positives = rng.binomial(n, 0.3)
    tp = rng.binomial(positives, tpr)
    fp = rng.binomial(n - positives, fpr)
    out = np.empty((SEGMENTS, 2, 2))
    out[:, 0, 0], out[:, 0, 1] = n - positives - fp, fp
    out[:, 1, 0], out[:, 1, 1] = positives - tp, tp
    return out


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def child(repeats: int) -> None:
    import probeval as pe

    matrices = counts()
    pe.evaluate_by(
        counts=matrices[:50], metrics=METRICS, n_samples=DRAWS, rng=0, summaries_only=True
    )
    with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
        clear.write("5")  # reset the high-water mark to the current RSS
    before = _status_kib("VmRSS")
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = pe.evaluate_by(
            counts=matrices, metrics=METRICS, n_samples=DRAWS, rng=0, summaries_only=True
        )
        seconds.append(time.perf_counter() - start)
    peak = _status_kib("VmHWM")
    digest = hashlib.sha256()
    for metric in METRICS:
        for values in result[metric].values():
            digest.update(np.ascontiguousarray(values).tobytes())
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_growth_mib": (peak - before) / 1024,
                "digest": digest.hexdigest(),
            }
        )
    )


def run(threads: int, repeats: int) -> dict[str, Any]:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(repeats)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def python_loop_seconds(n: int = 200) -> float:
    import probeval as pe

    matrices = counts()[:n]
    start = time.perf_counter()
    for s in range(n):
        ev = pe.evaluate(pe.ConfusionMatrix(matrices[s]), metrics=METRICS, n_samples=DRAWS, rng=s)
        for post in ev.values():
            post.summary()
    return (time.perf_counter() - start) * SEGMENTS / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    print(environment())
    results = {threads: run(threads, args.repeats) for threads in (1, 2)}
    one, two = (statistics.median(results[t]["seconds"]) for t in (1, 2))
    draws = SEGMENTS * DRAWS
    print(f"\n## {SEGMENTS:,} segments x {DRAWS:,} draws x {len(METRICS)} metrics, summaries only")
    for threads, seconds in ((1, one), (2, two)):
        r = results[threads]
        print(
            f"  {threads} thread(s): median {seconds:.2f} s, {draws / seconds / 1e6:.1f} M draws/s "
            f"({draws * len(METRICS) / seconds / 1e6:.0f} M metric values/s), peak RSS growth "
            f"{r['peak_growth_mib']:.0f} MiB (target <= 300 MB)"
        )
    same = results[1]["digest"] == results[2]["digest"]
    print(f"  1 -> 2 threads: {one / two:.2f}x (target >= 1.7x); identical results: {same}")
    loop = python_loop_seconds()
    print(
        f"  a Python loop of pe.evaluate per segment would take ~{loop:.0f} s ({loop / two:.0f}x)"
    )
    save(
        args.json,
        {
            "environment": environment(),
            "seconds": {"1": one, "2": two},
            "draws_per_second_2_threads": draws / two,
            "peak_growth_mib": {str(t): results[t]["peak_growth_mib"] for t in (1, 2)},
            "scaling": one / two,
            "identical": same,
            "python_loop_seconds": loop,
        },
    )


if __name__ == "__main__":
    main()
