"""Label-free estimation when labels arrive: what the labels add to the estimate's cost, and the
per-chunk evaluation a user would otherwise run, same data, one run.

    pip install ".[bench]" && python benches/bench_labelfree_labels.py [--json out.json]

Task: a binary model's reference (labels and scores) and a production stream of chunks, the
metrics ROC AUC, F1 and precision, 10,000 draws per chunk and metric, fit included, summarised
(mean, 95% HDI). The cost depends on the stream (how many chunks, how long, how many labels,
tied scores), so every contender runs over 8 streams (seed 2026): reference rows 10^U(4, 5),
10^U(1, 2.3) chunks (10 ... 200) of 10^U(3, 3.7) rows (1,000 ... 5,000), scores Beta(a, b) with
a, b U(0.5, 3) and every other stream's rounded to 2 decimals, production's calibration moved
by a log-odds shift U(-0.4, 0.4) from a chunk U(0, 1) of the way in, a share U(0.01, 0.2) of
each chunk's rows labelled at random; reported are p50 and p99.

* no labels: ``estimate(scores)``, the label-free estimate itself.
* partial labels: ``estimate(scores, partial_labels=...)``, the labelled rows updating every
  chunk's calibration (production's course through time learned from all chunks' labels).
* every label (a backtest): ``estimate(scores, y_true=...)``, each chunk also reporting its
  realized value and with-labels posterior (the batched AUC kernel).
* The alternative to the last: ``pe.evaluate(y_true, y_score=...)`` per chunk, the with-labels
  posteriors one chunk at a time.

Target (issue 17): what the labels add costs at most as much as the estimate itself (ratio to
"no labels" at most 2).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import probeval as pe
from _harness import Report, environment, percentiles_ms, save

DRAWS = 10_000
METRICS = ["roc_auc", "f1", "precision"]


def stream(seed: int, rng: np.random.Generator) -> dict[str, Any]:
    """One stream's reference and production, drawn from the distribution in the docstring
    (its parameters from ``rng``, its rows from ``seed``)."""
    n_ref = int(10 ** rng.uniform(4, 5))
    chunks = int(10 ** rng.uniform(1, 2.3))
    rows = int(10 ** rng.uniform(3, 3.7))
    a, b = rng.uniform(0.5, 3, 2)
    tied = seed % 2 == 1
    shift, start, fraction = rng.uniform(-0.4, 0.4), rng.uniform(0, 1), rng.uniform(0.01, 0.2)
    draw = np.random.default_rng(seed)

    def scores(n: int) -> np.ndarray:
        values = np.clip(draw.beta(a, b, n), 1e-6, 1 - 1e-6)
        return np.round(values, 2) if tied else values

    ref_scores = scores(n_ref)
    prod = scores(chunks * rows)
    logit = np.log(np.clip(prod, 1e-6, 1 - 1e-6) / np.clip(1 - prod, 1e-6, 1))
    moved = np.arange(prod.shape[0]) >= int(start * prod.shape[0])
    truth = 1 / (1 + np.exp(-(logit + shift * moved)))
    labels = (draw.random(prod.shape[0]) < truth).astype(np.float64)
    partial = np.where(draw.random(prod.shape[0]) < fraction, labels, np.nan)
    return {
        "ref_labels": (draw.random(n_ref) < ref_scores).astype(np.int64),
        "ref_scores": ref_scores,
        "scores": prod,
        "labels": labels.astype(np.int64),
        "partial": partial,
        "chunks": chunks,
        "rows": rows,
    }


def estimate(d: dict[str, Any], **labels: Any) -> Any:
    estimator = pe.LabelFreeEstimator(metrics=METRICS).fit(d["ref_labels"], d["ref_scores"])
    result = estimator.estimate(
        d["scores"], chunk_size=d["rows"], n_samples=DRAWS, rng=1, target="realized", **labels
    )
    return result.summary()


def evaluate_per_chunk(d: dict[str, Any]) -> Any:
    out = []
    for start in range(0, d["scores"].shape[0], d["rows"]):
        part = slice(start, start + d["rows"])
        ev = pe.evaluate(
            d["labels"][part], y_score=d["scores"][part], metrics=METRICS, n_samples=DRAWS, rng=1
        )
        out.append(ev.summary())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--streams", type=int, default=8)
    args = parser.parse_args()
    print(environment())
    rng = np.random.default_rng(2026)
    inputs = [stream(100 + i, rng) for i in range(args.streams)]
    for d in inputs:
        print(
            f"  stream: {d['ref_scores'].shape[0]:,} reference rows, {d['chunks']} chunks of "
            f"{d['rows']:,}, {np.isfinite(d['partial']).mean():.1%} labelled"
        )
    names = {
        "no labels": lambda d: estimate(d),
        "partial labels": lambda d: estimate(d, partial_labels=d["partial"]),
        "every label (y_true)": lambda d: estimate(d, y_true=d["labels"]),
        "pe.evaluate per chunk": evaluate_per_chunk,
    }
    report = Report(
        f"over {len(inputs)} streams (10 ... 200 chunks of 1,000 ... 5,000 rows, "
        f"{DRAWS:,} draws, {', '.join(METRICS)})"
    )
    report.compare_over(names, inputs)
    report.print()
    ratios = {}
    for q in (50, 99):
        partial = report.ratio("partial labels", "no labels", q)
        full = report.ratio("every label (y_true)", "no labels", q)
        loop = report.ratio("pe.evaluate per chunk", "every label (y_true)", q)
        ratios[f"p{q}"] = {"partial/none": partial, "y_true/none": full, "loop/y_true": loop}
        print(
            f"p{q}: partial labels / no labels {partial:.2f}x, y_true / no labels {full:.2f}x, "
            f"per-chunk evaluate / y_true {loop:.2f}x"
        )
    save(
        args.json,
        {
            "environment": environment(),
            "over_inputs_ms": {t.name: percentiles_ms(t) for t in report.timings},
            "ratios": ratios,
        },
    )


if __name__ == "__main__":
    main()
