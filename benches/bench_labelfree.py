"""Label-free estimation: probeval's LabelFreeEstimator vs nannyml's CBPE, same data, one run.

Run in a separate environment (nannyml pins its own dependency versions):

    python -m venv /tmp/bench-nannyml && . /tmp/bench-nannyml/bin/activate
    pip install ".[bench-nannyml]" && python benches/bench_labelfree.py [--json out.json]

Task: reference rows (scores + labels) and production rows (scores only) of a calibrated binary
model, split into chunks, metrics ROC AUC and F1, fit included. The agreement check runs on the
README's case (50,000 + 50,000 rows, 10 chunks, scores Beta(1.3, 2)). Costs depend on the data
(sizes, chunks, tied scores), so the timing runs over 6 data sets (seed 2026): reference and
production rows 10**U(4, 5) each, chunks uniform in 5 ... 20, scores Beta(a, b) with a, b
U(0.5, 3), every other data set's scores rounded to 2 decimals; reported are p50 and p99.

* probeval: fit, then 10,000 posterior draws per chunk and metric, summarised (mean, 95% HDI)
  with a "no worse than reference" decision per chunk and metric.
* nannyml 0.13.1 CBPE: fit, then estimate (a point estimate per chunk with a +-3 sigma band and
  alerts).

Target: probeval >= 10x faster while producing full posteriors.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

import probeval as pe
from _harness import Report, environment, percentiles_ms, save

N = 50_000
CHUNKS = 10
DRAWS = 10_000


def data(
    seed: int,
    n_ref: int = N,
    n_prod: int = N,
    shape: tuple[float, float] = (1.3, 2.0),
    chunks: int = CHUNKS,
    decimals: int | None = None,
) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    ref = rng.beta(*shape, n_ref)
    prod = rng.beta(*shape, n_prod)
    if decimals is not None:
        ref, prod = np.round(ref, decimals), np.round(prod, decimals)
    return {
        "ref_scores": ref,
        "ref_labels": (rng.random(n_ref) < ref).astype(np.int64),
        "scores": prod,
        "labels": (rng.random(n_prod) < prod).astype(np.int64),
        "chunks": chunks,
    }


def data_sets(size: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(2026)
    return [
        data(
            100 + i,
            int(10 ** rng.uniform(4, 5)),
            int(10 ** rng.uniform(4, 5)),
            (rng.uniform(0.5, 3), rng.uniform(0.5, 3)),
            int(rng.integers(5, 21)),
            2 if i % 2 else None,
        )
        for i in range(size)
    ]


def run_probeval(d: dict[str, Any], seed: int) -> Any:
    estimator = pe.LabelFreeEstimator(metrics=["roc_auc", "f1"])
    estimator.fit(d["ref_labels"], d["ref_scores"])
    result = estimator.estimate(d["scores"], n_chunks=d["chunks"], n_samples=DRAWS, rng=seed)
    return result, result.summary()


def frames(d: dict[str, Any]) -> tuple[Any, Any]:
    """nannyml's reference and analysis data frames."""
    import pandas as pd

    reference = pd.DataFrame(
        {
            "y_pred_proba": d["ref_scores"],
            "y_pred": (d["ref_scores"] > 0.5).astype(int),
            "y_true": d["ref_labels"],
        }
    )
    analysis = pd.DataFrame(
        {"y_pred_proba": d["scores"], "y_pred": (d["scores"] > 0.5).astype(int)}
    )
    return reference, analysis


def run_nannyml(d: dict[str, Any]) -> Any:
    import nannyml as nml

    reference, analysis = frames(d)
    cbpe = nml.CBPE(
        y_pred_proba="y_pred_proba",
        y_pred="y_pred",
        y_true="y_true",
        problem_type="classification_binary",
        metrics=["roc_auc", "f1"],
        chunk_number=d["chunks"],
    )
    cbpe.fit(reference)
    return cbpe.estimate(analysis).to_df()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    args = parser.parse_args()
    # nannyml sends usage statistics over the network unless told not to; that would time the
    # network (or its DNS failures on an offline machine), not the estimator.
    os.environ["NML_DISABLE_USAGE_LOGGING"] = "1"
    try:
        import nannyml as nml
    except ImportError:
        sys.exit(
            "nannyml is not installed: this benchmark needs its own environment, see the "
            "module docstring (pip install '.[bench-nannyml]')"
        )
    print(environment(), "nannyml", nml.__version__)
    d = data(0)
    # Same chunks, comparable answers: check before timing.
    ours, _ = run_probeval(d, 1)
    theirs = run_nannyml(d)
    print("\nper-chunk estimates (probeval posterior mean / nannyml CBPE / realized):")
    for metric in ("roc_auc", "f1"):
        column = theirs[(metric, "value")].to_numpy()
        diffs = []
        for chunk in range(CHUNKS):
            rows = ours.chunks[chunk].rows
            labels, scores = d["labels"][rows], d["scores"][rows]
            ev = pe.evaluate(labels, y_score=scores, metrics=[metric], n_samples=10, rng=0)
            realized = ev[metric].observed
            mean = ours.posterior(metric, chunk).mean()
            diffs.append((abs(mean - realized), abs(column[chunk] - realized)))
            if chunk < 3:
                print(
                    f"  {metric} chunk {chunk}: {mean:.4f} / {column[chunk]:.4f} / {realized:.4f}"
                )
        mae = np.mean(diffs, axis=0)
        print(f"  {metric} mean |estimate - realized|: probeval {mae[0]:.4f}, nannyml {mae[1]:.4f}")

    inputs = data_sets(6)
    report = Report(
        f"label-free: roc_auc + f1, fit included, over {len(inputs)} data sets "
        "(1e4 ... 1e5 reference and production rows, 5 ... 20 chunks)"
    )
    ours_name = f"probeval fit + estimate ({DRAWS:,} draws/chunk/metric) + summary"
    nannyml_name = "nannyml 0.13.1 CBPE fit + estimate"
    report.compare_over(
        {ours_name: lambda data: run_probeval(data, 2), nannyml_name: run_nannyml}, inputs
    )
    ratio = {q: report.ratio(nannyml_name, ours_name, q) for q in (50, 99)}
    report.notes.append(
        f"probeval is p50 {ratio[50]:.1f}x, p99 {ratio[99]:.1f}x faster (target >= 10x)"
    )
    report.print()
    save(
        args.json,
        {
            "environment": environment(),
            "ms": {t.name: percentiles_ms(t) for t in report.timings},
            "ratio_vs_nannyml": ratio,
        },
    )


if __name__ == "__main__":
    main()
