"""The label shift model (``LabelFreeEstimator(shift="label")``) next to the default on
simulated label shifts and on real streams with a label shift dialled in: coverage of the
realized value by the 95% HDI / mean absolute error, per metric, 5,000-row chunks, 2,000 draws.

    pip install ".[test]" && pip install --no-deps nannyml==0.13.1
    python benches/bench_label_shift.py [--reps 20] [--odds 1.5 --odds 0.67] [--labels 0.05]
        [--json out.json]

Simulations (``tests/_monitoring.LABEL_SHIFTS``, ``--reps`` streams of 12 chunks each): larger
and smaller prevalence odds, rare positives, a label shift on top of calibration or tilt
drift; the default, the label shift model, and the label shift model with ``--labels`` of
each chunk's rows labelled (5% unless given).

Streams (tests/_monitoring.py): the 2013 New York flights (departure-delay model), ACS
employment in Massachusetts, NannyML's car loan; each production stretch of 7,500 rows keeps
its rows with a probability by their label, so that its prevalence odds are ``--odds`` times
its own while each class's scores stay the real ones (``with_label_shift``). Odds 1: the
streams as they are, where the label shift model is the wrong one. ``--labels`` labels that
share of the real streams' rows too (none unless given).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tests._monitoring import (
    LABEL_SHIFTS,
    METRICS,
    car_loan,
    employment,
    evaluate_stream,
    flights,
    simulated_streams,
    with_label_shift,
)

from _harness import save


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--odds", type=float, action="append")
    parser.add_argument("--labels", type=float, default=None)
    parser.add_argument("--json")
    args = parser.parse_args()
    odds_list = args.odds or [1.0, 1.5, 0.67]
    start = time.perf_counter()
    rows: dict[str, Any] = {}
    print(f"{'stream':44s} {'shift':9s} {'chunks':>6s} " + " ".join(f"{m:>14s}" for m in METRICS))

    def report(name: str, shift: str, runs: list[dict[str, dict[str, list[float]]]]) -> None:
        cells = {
            m: [
                float(np.mean([c for r in runs for c in r[m]["covered"]])),
                float(np.mean([e for r in runs for e in r[m]["error"]])),
            ]
            for m in METRICS
        }
        rows[f"{name} / {shift}"] = cells
        text = " ".join(f"{c[0]:5.2f} / {c[1]:6.4f}" for c in cells.values())
        chunks = sum(len(r["accuracy"]["covered"]) for r in runs)
        print(f"{name:44s} {shift:9s} {chunks:6d} {text}", flush=True)

    fraction = 0.05 if args.labels is None else args.labels
    for scenario in LABEL_SHIFTS:
        streams = simulated_streams(scenario, args.reps)
        for shift, labels in (("covariate", 0.0), ("label", 0.0), ("label", fraction)):
            runs = [
                evaluate_stream(s, {"shift": shift}, seed=i, label_fraction=labels)
                for i, s in enumerate(streams)
            ]
            report(scenario, shift if not labels else f"{shift} +{labels:.0%}", runs)
    for name, load in (
        ("flights departure", lambda: flights("departure")),
        ("ACS employment", employment),
        ("car loan (NannyML)", car_loan),
    ):
        stream = load()
        for odds in odds_list:
            shifted = stream if odds == 1.0 else with_label_shift(stream, odds)
            for shift in ("covariate", "label"):
                run = evaluate_stream(shifted, {"shift": shift}, label_fraction=args.labels or 0.0)
                report(f"{name} x{odds:g}", shift, [run])
    print(f"({time.perf_counter() - start:.0f} s)")
    save(args.json, rows)


if __name__ == "__main__":
    main()
