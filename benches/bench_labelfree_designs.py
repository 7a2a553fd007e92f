"""Label-free coverage on real data beyond one train / reference / production split: the 2013
New York flights under 24 designs (or ACS employment under 12, the flights at departure under 12
or IMDB's films under 12), default settings, realized target.

    pip install ".[test]" && python benches/bench_labelfree_designs.py [--labels 0.05] \
        [--data acs|departures|movies] [--unseen-drift 0.12] [--alerts] [--label-draws 20]

A design is the model's inputs (the departure delay, or only the schedule and the weather at the
origin), what counts as late (arrival more than 15 or 45 minutes late), which two months are the
reference (March-April, May-June or July-August; the model is fitted on the two months before,
production is every month after) and the model (logistic regression or histogram gradient boosting):
``tests/_monitoring.flights``. Production chunks of 5,000 flights. With ``--data acs``: ACS
employment in Massachusetts 2015-2018 (NannyML's people; ``pip install --no-deps nannyml==0.13.1``)
with a model of ours, by what it knows of a person besides age (all NannyML ships, education, or
demographics only), the model, and whether 2015 or 2016 is the reference
(``tests/_monitoring.employment_design``), chunks of 5,000 people. With ``--data departures``: the
flights seen at departure, a family held out from the settings' tuning (measured first after they
were chosen): P(departure more than 15 or 60 minutes late) or P(cancelled) from the schedule and the
weather, March-April or May-June the reference, either model
(``tests/_monitoring.departure_design``). With ``--data movies``: IMDB's films to 2005, a family
from another field measured once after the settings were chosen: P(rated at least 6, 6.5 or 7) from
votes, length, budget, genres and MPAA rating, either model, two splits of the years
(``tests/_monitoring.movies_design``; ``pip install ".[bench-movies]"``). Per design and metric:
coverage of the realized value by the 95% HDI / mean absolute error; then over all designs' chunks
the coverage, the mean and sd of z = (realized - posterior mean) / posterior sd (sd 1: intervals as
wide as the errors; above 1: too narrow), without labels and with a fraction ``--labels`` of each
chunk's rows labelled at random, and the pooled calibration (the earlier algorithm,
``method="pooled"``) beside them. ``--unseen-drift``: the estimator's ``unseen_drift`` in place of
its default (the pooled calibration has none), to see what a larger allowance buys on a stream
family (docs/labelfree-record.md, *How far production moved on ACS*). ``--alerts``: whether the
chunks' alerts tell the ones whose intervals miss, per run over all designs' chunks: coverage of the
chunks whose ``score_shift_p`` (and, with labels, ``labels_p``) is below 0.001 or 0.05 against the
rest, and how many of the misses (chunk x metric) were alerted (docs/labelfree.md, *When to distrust
an estimate*). ``--label-draws N``: the labelled run over N draws of which rows are labelled (seed
1,000 k for the k-th; the first is the single draw's), pooled: a design's 5-6 chunks share their
labels' course through time, so one draw of the labels can be lucky or not for every metric at once.

The benchmark asks how the estimate holds when production runs further from its reference than
the bundled streams do (a summer reference for an autumn production): it is a measurement, not a
target any setting was tuned on.
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
    alert_lines,
    departure_designs,
    employment_designs,
    evaluate_stream,
    flights_designs,
    movies_designs,
)

from _harness import save


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=float, default=0.05)
    parser.add_argument("--draws", type=int, default=2_000)
    families = ["flights", "acs", "departures", "movies"]
    parser.add_argument("--data", choices=families, default="flights")
    parser.add_argument("--unseen-drift", type=float, default=None, metavar="SD")
    parser.add_argument("--alerts", action="store_true")
    parser.add_argument("--label-draws", type=int, default=1, metavar="N")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.label_draws < 1:
        parser.error(f"--label-draws: at least 1, got {args.label_draws}")
    start = time.perf_counter()
    chosen = {} if args.unseen_drift is None else {"unseen_drift": args.unseen_drift}
    runs = [("pooled", {"method": "pooled"}, 0.0), ("no labels", chosen, 0.0)]
    if args.labels:
        runs.append((f"{args.labels:.0%} labelled", chosen, args.labels))
    totals: dict[str, dict[str, dict[str, list[float]]]] = {
        label: {m: {"covered": [], "error": [], "z": []} for m in METRICS} for label, _, _ in runs
    }
    chunks: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in runs}
    rows: dict[str, Any] = {}
    print(f"{'design':62s} {'run':>12s} " + " ".join(f"{m:>14s}" for m in METRICS))
    if args.data == "acs":
        streams = employment_designs()
    elif args.data == "departures":
        streams = departure_designs()
    elif args.data == "movies":
        streams = movies_designs()
    else:
        streams = flights_designs()
    for stream in streams:
        for label, kwargs, fraction in runs:
            draws = [
                evaluate_stream(
                    stream,
                    kwargs,
                    seed=1_000 * draw,
                    n_samples=args.draws,
                    label_fraction=fraction,
                    chunks=chunks[label],
                )
                for draw in range(args.label_draws if fraction else 1)
            ]
            result = {
                m: {key: [v for one in draws for v in one[m][key]] for key in draws[0][m]}
                for m in METRICS
            }
            for m in METRICS:
                for key in ("covered", "error", "z"):
                    totals[label][m][key] += result[m][key]
            means = {
                m: [float(np.mean(result[m]["covered"])), float(np.mean(result[m]["error"]))]
                for m in METRICS
            }
            rows[f"{stream.name} / {label}"] = means
            cells = " ".join(f"{c:5.2f} / {e:.4f}" for c, e in means.values())
            print(f"{stream.name:62s} {label:>12s} {cells}", flush=True)
    for label, _, _ in runs:
        print(f"\nall {len(streams)} designs, {label}:")
        for m in METRICS:
            part = totals[label][m]
            z = np.asarray(part["z"])
            print(
                f"  {m:9s} chunks {len(part['covered'])} coverage {np.mean(part['covered']):.3f} "
                f"MAE {np.mean(part['error']):.4f} z mean {z.mean():+.2f} sd {z.std():.2f}"
            )
            rows[f"all designs / {label} / {m}"] = {
                "coverage": float(np.mean(part["covered"])),
                "mae": float(np.mean(part["error"])),
                "z_mean": float(z.mean()),
                "z_sd": float(z.std()),
            }
        if args.alerts and label != "pooled":
            print("\n".join(alert_lines(chunks[label])))
    print(f"({time.perf_counter() - start:.0f} s)")
    save(args.json, rows)


if __name__ == "__main__":
    main()
