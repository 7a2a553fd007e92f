"""The label shift model (``LabelFreeEstimator(shift="label")``) next to the default on real
streams with a label shift dialled in: coverage of the realized value by the 95% HDI / mean
absolute error, per metric, 5,000-row chunks, 2,000 draws.

    pip install ".[test]" && pip install --no-deps nannyml==0.13.1
    python benches/bench_label_shift.py [--odds 1.5 --odds 0.67] [--labels 0.05] [--json out.json]

Streams (tests/_monitoring.py): the 2013 New York flights (departure-delay model), ACS
employment in Massachusetts, NannyML's car loan; each production stretch of 7,500 rows keeps
its rows with a probability by their label, so that its prevalence odds are ``--odds`` times
its own while each class's scores stay the real ones (``with_label_shift``). Odds 1: the
streams as they are, where the label shift model is the wrong one.
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
    METRICS,
    car_loan,
    employment,
    evaluate_stream,
    flights,
    with_label_shift,
)

from _harness import save


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--odds", type=float, action="append")
    parser.add_argument("--labels", type=float, default=0.0)
    parser.add_argument("--json")
    args = parser.parse_args()
    odds_list = args.odds or [1.0, 1.5, 0.67]
    start = time.perf_counter()
    rows: dict[str, Any] = {}
    print(f"{'stream':44s} {'shift':9s} {'chunks':>6s} " + " ".join(f"{m:>14s}" for m in METRICS))
    for name, load in (
        ("flights departure", lambda: flights("departure")),
        ("ACS employment", employment),
        ("car loan (NannyML)", car_loan),
    ):
        stream = load()
        for odds in odds_list:
            shifted = stream if odds == 1.0 else with_label_shift(stream, odds)
            for shift in ("covariate", "label"):
                run = evaluate_stream(shifted, {"shift": shift}, label_fraction=args.labels)
                cells = {
                    m: [float(np.mean(run[m]["covered"])), float(np.mean(run[m]["error"]))]
                    for m in METRICS
                }
                rows[f"{name} x{odds:g} / {shift}"] = cells
                text = " ".join(f"{c[0]:5.2f} / {c[1]:6.4f}" for c in cells.values())
                chunks = len(run["accuracy"]["covered"])
                print(f"{name + f' x{odds:g}':44s} {shift:9s} {chunks:6d} {text}", flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")
    save(args.json, rows)


if __name__ == "__main__":
    main()
