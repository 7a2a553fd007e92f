"""The label shift model (``LabelFreeEstimator(shift="label")``) next to the default on
simulated label shifts and on real streams with a label shift dialled in: coverage of the
realized value by the 95% HDI / mean absolute error, per metric, 5,000-row chunks, 2,000 draws.

    pip install ".[test]" && pip install --no-deps nannyml==0.13.1
    python benches/bench_label_shift.py [--reps 20] [--odds 1.5 --odds 0.67] [--labels 0.05]
        [--multiclass] [--cost] [--json out.json]

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

``--multiclass``: the same for a multiclass model instead, on accuracy, macro F1, the rare
class's recall and precision, and macro ROC AUC (``tests/_monitoring.MULTICLASS_METRICS``):
simulated K = 3 label shifts (``MULTICLASS_LABEL_SHIFTS``, one under a calibration drift), and
the flights' three arrival classes (departure-delay model; May-August, before its September
concept shift) and NannyML's card tiers (before its concept shift) as they are and with one
class's odds x 1.5 or x 0.67.

``--cost``: the time of ``estimate`` (default metrics, 10,000 draws) with ``shift="label"``
against the default, one run, over 8 data sets (seed 2026) of each kind: binary, reference
10^U(4, 5) rows, 5 to 60 chunks of 10^U(2.7, 3.7) rows, prevalence odds 10^U(-0.5, 0.5);
multiclass likewise with K uniform in 3 ... 8 and one class's odds moved; p50 and p99 per
data set (``Report.compare_over``).
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
    MULTICLASS_LABEL_SHIFTS,
    MULTICLASS_METRICS,
    car_loan,
    card_tiers,
    employment,
    evaluate_multiclass_stream,
    evaluate_stream,
    flights,
    flights_multiclass,
    kept_by_label,
    label_shifted_multiclass,
    multiclass_with_label_shift,
    simulated_multiclass_stream,
    simulated_streams,
    with_label_shift,
)

from _harness import Report, save


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--odds", type=float, action="append")
    parser.add_argument("--labels", type=float, default=None)
    parser.add_argument("--multiclass", action="store_true")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    odds_list = args.odds or [1.0, 1.5, 0.67]
    if args.cost:
        save(args.json, cost())
        return
    start = time.perf_counter()
    rows: dict[str, Any] = {}
    metrics = MULTICLASS_METRICS if args.multiclass else METRICS
    print(f"{'stream':44s} {'shift':9s} {'chunks':>6s} " + " ".join(f"{m:>14s}" for m in metrics))

    def report(name: str, shift: str, runs: list[dict[str, dict[str, list[float]]]]) -> None:
        cells = {
            m: [
                float(np.mean([c for r in runs for c in r[m]["covered"]])),
                float(np.mean([e for r in runs for e in r[m]["error"]])),
            ]
            for m in metrics
        }
        rows[f"{name} / {shift}"] = cells
        text = " ".join(f"{c[0]:5.2f} / {c[1]:6.4f}" for c in cells.values())
        chunks = sum(len(r["accuracy"]["covered"]) for r in runs)
        print(f"{name:44s} {shift:9s} {chunks:6d} {text}", flush=True)

    fraction = 0.05 if args.labels is None else args.labels
    if args.multiclass:
        multiclass(args, fraction, odds_list, report)
        print(f"({time.perf_counter() - start:.0f} s)")
        save(args.json, rows)
        return
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


def cost_inputs(multiclass: bool) -> list[dict[str, Any]]:
    """The ``--cost`` data sets (see the module's docstring)."""
    from tests._monitoring import simulate_multiclass

    import probeval as pe

    rng = np.random.default_rng(2026 + multiclass)
    out = []
    for _ in range(8):
        n_ref = int(10 ** rng.uniform(4, 5))
        chunks, rows = int(rng.integers(5, 61)), int(10 ** rng.uniform(2.7, 3.7))
        if multiclass:
            k = int(rng.integers(3, 9))
            odds = np.ones(k)
            odds[rng.integers(k)] = 10 ** rng.uniform(-0.5, 0.5)
            labels, scores = simulate_multiclass(rng, n_ref, k)
            _, production = label_shifted_multiclass(rng, chunks * rows, k, odds)
        else:
            scores = rng.beta(1.3, 2.0, n_ref)
            labels = rng.random(n_ref) < scores
            many = rng.beta(1.3, 2.0, 4 * chunks * rows)
            kept = kept_by_label(
                rng.random(many.shape[0]) < many, 10 ** rng.uniform(-0.5, 0.5), rng
            )
            production = many[kept][: chunks * rows]
        fitted = {
            shift: pe.LabelFreeEstimator(shift=shift).fit(labels, scores)
            for shift in ("covariate", "label")
        }
        out.append({"fitted": fitted, "scores": production, "rows": rows})
    return out


def cost() -> dict[str, Any]:
    """The ``--cost`` runs: p50 and p99 of each shift's time over the data sets."""
    out: dict[str, Any] = {}
    for multiclass_data in (False, True):
        kind = "multiclass" if multiclass_data else "binary"
        inputs = cost_inputs(multiclass_data)
        report = Report(f"estimate, {kind}: shift='label' against the default (10,000 draws)")

        def timed(shift: str) -> Any:
            return lambda d: d["fitted"][shift].estimate(
                d["scores"], chunk_size=d["rows"], n_samples=10_000, rng=0
            )

        report.compare_over({s: timed(s) for s in ("covariate", "label")}, inputs)
        ratios = [report.ratio("label", "covariate", q) for q in (50, 99)]
        report.notes.append(f"label / covariate: p50 {ratios[0]:.2f}x, p99 {ratios[1]:.2f}x")
        report.print()
        out[kind] = {"p50": ratios[0], "p99": ratios[1]}
    return out


def multiclass(args: Any, fraction: float, odds_list: list[float], report: Any) -> None:
    """The ``--multiclass`` runs (see the module's docstring)."""
    for scenario, (odds, drift) in MULTICLASS_LABEL_SHIFTS.items():
        streams = [
            simulated_multiclass_stream(odds, seed, drift=drift) for seed in range(args.reps)
        ]
        for shift, labels in (("covariate", 0.0), ("label", 0.0), ("label", fraction)):
            runs = [
                evaluate_multiclass_stream(s, {"shift": shift}, seed=i, label_fraction=labels)
                for i, s in enumerate(streams)
            ]
            report(scenario, shift if not labels else f"{shift} +{labels:.0%}", runs)
    for name, load, moved in (
        ("flights, 3 classes", flights_multiclass, lambda s: s.month >= 9),
        ("card tiers (NannyML)", card_tiers, lambda s: s.month == 1),
    ):
        stream = load()
        for odds in odds_list:
            # The first class's odds moved (flights: early arrivals; cards: prepaid).
            class_odds = (odds, 1.0, 1.0)
            shifted = stream if odds == 1.0 else multiclass_with_label_shift(stream, class_odds)
            before = ~moved(shifted)
            for shift in ("covariate", "label"):
                run = evaluate_multiclass_stream(
                    shifted, {"shift": shift}, label_fraction=args.labels or 0.0, keep=before
                )
                report(f"{name} x{odds:g}", shift, [run])


if __name__ == "__main__":
    main()
