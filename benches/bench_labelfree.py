"""Label-free estimation: probeval's LabelFreeEstimator vs nannyml's CBPE, same data, one run.

Run in a separate environment (nannyml pins its own dependency versions):

    python -m venv /tmp/bench-nannyml && . /tmp/bench-nannyml/bin/activate
    pip install ".[bench-nannyml]" && python benches/bench_labelfree.py [--json out.json]

Task: 50,000 reference rows (scores + labels) and 50,000 production rows (scores only) of a
calibrated binary model, 10 chunks, metrics ROC AUC and F1, fit included.

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
from _harness import Report, environment, save

N = 50_000
CHUNKS = 10
DRAWS = 10_000


def data(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = rng.beta(1.3, 2.0, N)
    prod = rng.beta(1.3, 2.0, N)
    return {
        "ref_scores": ref,
        "ref_labels": (rng.random(N) < ref).astype(np.int64),
        "scores": prod,
        "labels": (rng.random(N) < prod).astype(np.int64),
    }


def run_probeval(d: dict[str, np.ndarray], seed: int) -> Any:
    estimator = pe.LabelFreeEstimator(metrics=["roc_auc", "f1"])
    estimator.fit(d["ref_labels"], d["ref_scores"])
    result = estimator.estimate(d["scores"], n_chunks=CHUNKS, n_samples=DRAWS, rng=seed)
    return result, result.summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    # nannyml sends usage statistics over the network unless told not to; that would time the
    # network (or its DNS failures on an offline machine), not the estimator.
    os.environ["NML_DISABLE_USAGE_LOGGING"] = "1"
    try:
        import nannyml as nml
        import pandas as pd
    except ImportError:
        sys.exit(
            "nannyml is not installed: this benchmark needs its own environment, see the "
            "module docstring (pip install '.[bench-nannyml]')"
        )
    print(environment(), "nannyml", nml.__version__)
    d = data(0)
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

    def run_nannyml() -> Any:
        cbpe = nml.CBPE(
            y_pred_proba="y_pred_proba",
            y_pred="y_pred",
            y_true="y_true",
            problem_type="classification_binary",
            metrics=["roc_auc", "f1"],
            chunk_number=CHUNKS,
        )
        cbpe.fit(reference)
        return cbpe.estimate(analysis).to_df()

    # Same chunks, comparable answers: check before timing.
    ours, _ = run_probeval(d, 1)
    theirs = run_nannyml()
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

    report = Report(
        f"label-free: {N:,} reference + {N:,} production rows, {CHUNKS} chunks, roc_auc + f1, "
        "fit included"
    )
    report.compare(
        {
            f"probeval fit + estimate ({DRAWS:,} draws/chunk/metric) + summary": lambda: (
                run_probeval(d, 2)
            ),
            "nannyml 0.13.1 CBPE fit + estimate": run_nannyml,
        },
        repeats=args.repeats,
    )
    names = [t.name for t in report.timings]
    ratio = report.ratio(names[1], names[0])
    report.notes.append(f"probeval is {ratio:.1f}x faster (target >= 10x)")
    report.print()
    save(
        args.json,
        {
            "environment": environment(),
            "ms": {t.name: t.median * 1e3 for t in report.timings},
            "ratio_vs_nannyml": ratio,
        },
    )


if __name__ == "__main__":
    main()
