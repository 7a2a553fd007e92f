"""Repeated calls do not leak: 10^5 calls through the Rust entry points grow the resident set
of a fresh process by no more than a few MB.

The calls run in a subprocess so that the test measures only them (not pytest's own growth),
after a warm-up that lets allocators, caches and numpy's small-array pools reach steady state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, os
    import numpy as np
    import probeval as pe

    PAGE = os.sysconf("SC_PAGE_SIZE")

    def rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * PAGE

    y = np.array([0, 1, 1, 0, 1, 0, 1, 1])
    p = np.array([0, 1, 0, 0, 1, 1, 1, 1])
    s = np.array([0.1, 0.9, 0.4, 0.2, 0.7, 0.6, 0.8, 0.55])
    by = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    cm = pe.ConfusionMatrix.from_counts(tp=40, fp=10, tn=35, fn=15)
    samples = np.random.default_rng(0).beta(5, 3, 256)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(
        (np.random.default_rng(1).random(400) < np.linspace(0, 1, 400)).astype(int),
        np.linspace(0, 1, 400),
    )

    calls = [
        lambda: pe.metric_interval("precision", tp=40, fp=10),
        lambda: pe.metric_summary("f1", tp=40, fp=10, tn=35, fn=15, n_samples=64, rng=1),
        lambda: cm.posterior("accuracy").hdi(),
        lambda: cm.posterior("mcc", n_samples=64, rng=2).summary(),
        lambda: pe.hdi(samples),
        lambda: pe.evaluate(y, p, n_samples=32, rng=3),
        lambda: pe.evaluate(y, y_score=s, metrics=["roc_auc"], n_samples=32, rng=4),
        lambda: pe.evaluate_by(y, p, by=by, n_samples=16, rng=5, summaries_only=True),
        lambda: estimator.estimate(s, n_samples=16, rng=6),
        lambda: pe.ensemble_report(np.vstack([s, s[::-1]]), y, n_samples=16, rng=7),
    ]

    def run(n: int) -> None:
        for i in range(n):
            calls[i % len(calls)]()
        # Errors travel through the same bindings: they must not leak either.
        for _ in range(n // 100):
            try:
                pe.metric_interval("precision", tp=-1, fp=1)
            except ValueError:
                pass

    run(5_000)
    before = rss()
    run(int(os.environ["N_CALLS"]))
    after = rss()
    print(json.dumps({"before": before, "after": after}))
    """
)


@pytest.mark.slow(minutes=3)
def test_repeated_calls_do_not_grow_the_resident_set() -> None:
    n_calls = 100_000
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "N_CALLS": str(n_calls)},
        timeout=600,
    )
    rss = json.loads(result.stdout)
    growth_mb = (rss["after"] - rss["before"]) / 2**20
    print(
        f"RSS {rss['before'] / 2**20:.1f} MiB -> {rss['after'] / 2**20:.1f} MiB after "
        f"{n_calls:,} calls: {growth_mb:+.2f} MiB"
    )
    assert growth_mb <= 4.0, f"RSS grew by {growth_mb:.2f} MiB over {n_calls:,} calls"
