"""Calls from many Python threads at once are safe and give exactly the serial results: the
core releases the GIL inside kernels and keeps no global mutable state."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

import probeval as pe

RNG = np.random.default_rng(0)
Y = RNG.integers(0, 2, 2000)
SCORE = np.clip(0.3 + 0.4 * Y + RNG.normal(0, 0.2, 2000), 0, 1)
ESTIMATOR = pe.LabelFreeEstimator(metrics=["f1", "roc_auc"]).fit(Y[:1000], SCORE[:1000])


def _call(i: int) -> Any:
    """One service-like request, fully determined by i."""
    kind = i % 5
    counts = {"tp": 50 + i, "fp": 10 + i % 7, "tn": 40 + i % 11, "fn": 5 + i % 3}
    if kind == 0:
        return pe.metric_interval("accuracy", **counts)
    if kind == 1:
        return tuple(pe.metric_summary("f1", **counts, n_samples=2000, rng=i).values())
    if kind == 2:
        ev = pe.evaluate(
            Y[: 200 + i],
            y_score=SCORE[: 200 + i],
            metrics=["mcc", "roc_auc"],
            n_samples=1000,
            rng=i,
        )
        return tuple(ev["mcc"].samples[:50]) + tuple(ev["roc_auc"].samples[:50])
    if kind == 3:
        result = ESTIMATOR.estimate(SCORE[1000:], n_chunks=3, n_samples=1000, rng=i)
        return tuple(result.posterior("roc_auc", 2).samples[:50])
    result = pe.evaluate_by(
        Y,
        SCORE > 0.5,
        by=np.arange(2000) % 7,
        metrics=["f1"],
        n_samples=500,
        rng=i,
        summaries_only=True,
    )
    return tuple(result["f1"]["hdi_low"])


def test_eight_threads_give_the_serial_results() -> None:
    calls = list(range(8 * 200))
    serial = [_call(i) for i in calls]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(_call, calls))
    assert threaded == serial
