"""Label-free average precision: what asking for it adds to an estimate, and the point estimate
production tools give, same data, one run.

    pip install ".[bench]" && python benches/bench_labelfree_ap.py [--json out.json]

Task: a binary model's reference (labels and scores) and a production stream of chunks,
realized target, 10,000 draws per chunk and metric, fit included, summarised (mean, 95% HDI).
The cost depends on the stream (how many chunks, how long, how many bins the scores fill,
ties), so every contender runs over 8 streams (seed 2026): reference rows 10^U(4, 5),
10^U(1, 2) chunks (10 ... 100) of 10^U(3, 3.7) rows (1,000 ... 5,000), scores Beta(a, b)
with a U(0.2, 3) and b U(1, 10) (2% to 75% positives) and every other stream's rounded to 2
decimals; reported are p50 and p99.

* default metrics: the estimator's defaults (seven binary metrics and ROC AUC).
* default + average precision: the same with ``average_precision`` (the chunk's score slices,
  the quadrature, the realized noise and the drift's Jensen gap).
* point estimate: the score calibrated by isotonic regression on the reference and each
  chunk's rows counted as positives with weight p and negatives with weight 1 - p
  (scikit-learn's weighted average precision; NannyML's CBPE method), point values only.
* with labels (a backtest, ``y_true=``): default + average precision, each chunk also
  measured and given its with-labels posterior. That part alone, side by side: every chunk's
  with-labels AP posterior from the batched kernel the estimator calls
  (``_core.chunk_score_draws``: a few hundred bins, each bin's rows in their observed order)
  and from ``ScoreSummary`` at its 2,048 bins, chunk by chunk (the estimator's earlier path).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

import probeval as pe
from _harness import Report, environment, percentiles_ms, save
from probeval import _core

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tests._monitoring import expected_average_precision

DRAWS = 10_000


def stream(seed: int, rng: np.random.Generator) -> dict[str, Any]:
    """One stream drawn from the distribution in the docstring (its parameters from ``rng``,
    its rows from ``seed``)."""
    n_ref = int(10 ** rng.uniform(4, 5))
    chunks = int(10 ** rng.uniform(1, 2))
    rows = int(10 ** rng.uniform(3, 3.7))
    a, b = rng.uniform(0.2, 3), rng.uniform(1, 10)
    tied = seed % 2 == 1
    draw = np.random.default_rng(seed)

    def scores(n: int) -> np.ndarray:
        values = np.clip(draw.beta(a, b, n), 1e-6, 1 - 1e-6)
        return np.round(values, 2) if tied else values

    ref_scores = scores(n_ref)
    production = scores(chunks * rows)
    return {
        "ref_labels": (draw.random(n_ref) < ref_scores).astype(np.int64),
        "ref_scores": ref_scores,
        "scores": production,
        "labels": draw.random(production.shape[0]) < production,
        "chunks": chunks,
        "rows": rows,
    }


def estimate(d: dict[str, Any], metrics: list[str], labelled: bool = False) -> Any:
    estimator = pe.LabelFreeEstimator(metrics=metrics).fit(d["ref_labels"], d["ref_scores"])
    result = estimator.estimate(
        d["scores"],
        chunk_size=d["rows"],
        n_samples=DRAWS,
        rng=1,
        target="realized",
        y_true=d["labels"] if labelled else None,
    )
    return result.summary()


def chunk_ap_with_labels(d: dict[str, Any], batched: bool) -> None:
    """Every chunk's with-labels average precision posterior (measured value, draws, 95% HDI):
    ``batched``, the kernel ``estimate(y_true=...)`` calls now; otherwise chunk by chunk
    through ``ScoreSummary`` at its 2,048 bins, as the estimator did before."""
    starts = list(range(0, d["scores"].shape[0], d["rows"]))
    if batched:
        _, draws = _core.chunk_score_draws(
            d["scores"], d["labels"], starts, 128, DRAWS, 1, "average_precision"
        )
        for row in draws:
            pe.Posterior("average_precision", samples=row).hdi()
        return
    for start in starts:
        rows = slice(start, start + d["rows"])
        chunk = pe.ScoreSummary.from_scores(d["labels"][rows], d["scores"][rows])
        chunk.posterior("average_precision", n_samples=DRAWS, rng=start).hdi()


def point_estimate(d: dict[str, Any]) -> list[float]:
    from sklearn.isotonic import IsotonicRegression

    calibrator = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0)
    calibrator.fit(d["ref_scores"], d["ref_labels"])
    out = []
    for start in range(0, d["scores"].shape[0], d["rows"]):
        scores = d["scores"][start : start + d["rows"]]
        out.append(expected_average_precision(scores, calibrator.predict(scores)))
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
            f"{d['rows']:,}, {d['ref_labels'].mean():.1%} positives"
        )
    defaults = list(pe.LabelFreeEstimator().metrics)
    names = {
        "default metrics": lambda d: estimate(d, defaults),
        "default + average precision": lambda d: estimate(d, [*defaults, "average_precision"]),
        "point estimate (isotonic, weighted AP)": point_estimate,
        "with labels: default + average precision": lambda d: estimate(
            d, [*defaults, "average_precision"], labelled=True
        ),
        "with-labels AP of every chunk: batched kernel": lambda d: chunk_ap_with_labels(d, True),
        "with-labels AP of every chunk: ScoreSummary, 2,048 bins": lambda d: chunk_ap_with_labels(
            d, False
        ),
    }
    report = Report(
        f"over {len(inputs)} streams (10 ... 100 chunks of 1,000 ... 5,000 rows, "
        f"{DRAWS:,} draws, realized target)"
    )
    report.compare_over(names, inputs)
    report.print()
    ratios = {}
    for q in (50, 99):
        added = report.ratio("default + average precision", "default metrics", q)
        point = report.ratio(
            "default + average precision", "point estimate (isotonic, weighted AP)", q
        )
        labelled = report.ratio(
            "with-labels AP of every chunk: batched kernel",
            "with-labels AP of every chunk: ScoreSummary, 2,048 bins",
            q,
        )
        ratios[f"p{q}"] = {
            "with_ap/default": added,
            "with_ap/point": point,
            "with_labels_ap/score_summary": labelled,
        }
        print(
            f"p{q}: with average precision / default {added:.2f}x, / point estimate {point:.2f}x; "
            f"with-labels AP, batched / ScoreSummary {labelled:.2f}x"
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
