"""Label-free estimation of a multiclass model: cost against the binary estimator, and against
the one-vs-rest point-estimate method, same data, one run.

    pip install ".[bench]" && python benches/bench_labelfree_multiclass.py [--json out.json]

Task: fit on reference rows (labels and scores) and estimate every chunk of production scores,
10,000 draws per chunk and metric, summarised (mean, 95% HDI, "no worse than the reference"
decision). Multiclass: the default metrics (accuracy, balanced accuracy, macro precision,
recall and F1, MCC, kappa, macro and weighted ROC AUC), and the same plus macro average
precision (its one-vs-rest draws: what asking for it adds). Binary: the binary estimator's
defaults (seven metrics and ROC AUC) on binary data of the same sizes.

* The issue's case: 60,000 + 60,000 rows, K = 3, 10 chunks, 7 rounds.
* Over 8 data sets (seed 2026): reference and production rows 10^U(4, 5) each, K uniform in
  3 ... 10, chunks 5 ... 20, every other data set's scores rounded to 2 decimals; p50 and p99.
* With labels (a backtest): every chunk's with-labels macro and weighted ROC AUC and macro
  AP posteriors as ``estimate(y_true=...)`` draws them (each class on coarse bins that keep the
  rows' order, joined across classes) against the earlier way (AUC on 32 bins whose rows
  count as tied, AP on ``evaluate``'s 2,048).
* The alternative: the one-vs-rest point estimate (isotonic calibration per class on the
  reference, renormalised; expected confusion matrix and soft-label AUC; numpy and
  scikit-learn), point values only, on the same multiclass data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

import probeval as pe
from _harness import Report, environment, percentiles_ms, save
from probeval.base.metrics import DEFAULT_MULTICLASS, DEFAULT_MULTICLASS_SCORES, MetricSpec
from probeval.labels.scores import multiclass_score_posteriors

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests._monitoring import one_vs_rest_point_estimate

DRAWS = 10_000
WITH_AP = [*DEFAULT_MULTICLASS, *DEFAULT_MULTICLASS_SCORES, "average_precision_macro"]


def multiclass_data(
    seed: int, n_ref: int, n_prod: int, k: int, chunks: int, decimals: int | None
) -> dict[str, Any]:
    """Calibrated (n, K) scores (softmax of normal logits) with labels drawn from them."""
    rng = np.random.default_rng(seed)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        logits = rng.normal(0.0, 1.6, (n, k))
        scores = np.exp(logits - logits.max(axis=1, keepdims=True))
        scores /= scores.sum(axis=1, keepdims=True)
        if decimals is not None:
            scores = np.round(scores, decimals)
        labels = (rng.random(n)[:, None] > np.cumsum(scores, axis=1)).sum(axis=1)
        return np.minimum(labels, k - 1), scores

    ref_labels, ref_scores = draw(n_ref)
    labels, scores = draw(n_prod)
    binary_ref = rng.beta(1.3, 2.0, n_ref)
    binary = rng.beta(1.3, 2.0, n_prod)
    if decimals is not None:
        binary_ref, binary = np.round(binary_ref, decimals), np.round(binary, decimals)
    return {
        "ref_labels": ref_labels,
        "ref_scores": ref_scores,
        "scores": scores,
        "labels": labels,
        "chunks": chunks,
        "binary_ref_scores": binary_ref,
        "binary_ref_labels": rng.random(n_ref) < binary_ref,
        "binary_scores": binary,
    }


def run_multiclass(d: dict[str, Any], metrics: list[str] | None = None) -> Any:
    estimator = pe.LabelFreeEstimator(metrics=metrics).fit(d["ref_labels"], d["ref_scores"])
    result = estimator.estimate(d["scores"], n_chunks=d["chunks"], n_samples=DRAWS, rng=1)
    return result.summary()


def run_binary(d: dict[str, Any]) -> Any:
    estimator = pe.LabelFreeEstimator().fit(d["binary_ref_labels"], d["binary_ref_scores"])
    result = estimator.estimate(d["binary_scores"], n_chunks=d["chunks"], n_samples=DRAWS, rng=1)
    return result.summary()


def with_labels_ranking(d: dict[str, Any], ordered: bool) -> None:
    """A backtest's with-labels posteriors of macro and weighted ROC AUC and macro AP, every
    chunk (those with every class): ``ordered``, as ``estimate(y_true=...)`` draws them now
    (each class on coarse bins in order, joined); otherwise as before (AUC on 32 bins, AP on
    ``evaluate``'s 2,048, two calls)."""
    k = d["scores"].shape[1]
    specs = [
        MetricSpec("roc_auc_macro", "roc_auc", "scores", "macro"),
        MetricSpec("roc_auc_weighted", "roc_auc", "scores", "weighted"),
        MetricSpec("average_precision_macro", "average_precision", "scores", "macro"),
    ]
    for rows in np.array_split(np.arange(d["scores"].shape[0]), d["chunks"]):
        codes, scores = d["labels"][rows], d["scores"][rows]
        if np.bincount(codes, minlength=k).min() == 0:
            continue
        weights = np.ones(codes.shape[0])
        calls = (
            [(specs, None, (32, 128))]
            if ordered
            else [(specs[:2], 32, None), (specs[2:], 2048, None)]
        )
        for wanted, bins, coarse in calls:
            posts = multiclass_score_posteriors(
                codes,
                scores,
                weights,
                wanted,
                max_bins=bins,
                n_samples=DRAWS,
                seed=1,
                ordered=coarse,
            )
            for post in posts.values():
                post.hdi()


def run_one_vs_rest(d: dict[str, Any]) -> Any:
    parts = np.array_split(np.arange(d["scores"].shape[0]), d["chunks"])
    return [
        one_vs_rest_point_estimate(d["ref_labels"], d["ref_scores"], d["scores"][rows])
        for rows in parts
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    args = parser.parse_args()
    print(environment())
    fixed = Report("60,000 + 60,000 rows, K = 3, 10 chunks, 10,000 draws (fit + estimate)")
    case = multiclass_data(0, 60_000, 60_000, 3, 10, None)
    fixed.compare(
        {
            "probeval multiclass": lambda: run_multiclass(case),
            "probeval multiclass + macro AP": lambda: run_multiclass(case, WITH_AP),
            "probeval binary": lambda: run_binary(case),
            "one-vs-rest point estimate": lambda: run_one_vs_rest(case),
        },
        repeats=7,
    )
    fixed.print()
    print(f"multiclass / binary: {fixed.ratio('probeval multiclass', 'probeval binary'):.2f}x")
    added = fixed.ratio("probeval multiclass + macro AP", "probeval multiclass")
    print(f"with macro average precision / without: {added:.2f}x")

    rng = np.random.default_rng(2026)
    inputs = [
        multiclass_data(
            100 + i,
            int(10 ** rng.uniform(4, 5)),
            int(10 ** rng.uniform(4, 5)),
            int(rng.integers(3, 11)),
            int(rng.integers(5, 21)),
            2 if i % 2 else None,
        )
        for i in range(8)
    ]
    over = Report("over 8 data sets (rows 10^U(4, 5), K 3 ... 10, 5 ... 20 chunks)")
    over.compare_over(
        {
            "probeval multiclass": run_multiclass,
            "probeval multiclass + macro AP": lambda d: run_multiclass(d, WITH_AP),
            "probeval binary": run_binary,
            "one-vs-rest point estimate": run_one_vs_rest,
            "with-labels AUC and AP per chunk: ordered (now)": lambda d: with_labels_ranking(
                d, True
            ),
            "with-labels AUC and AP per chunk: 32 / 2,048 bins (before)": lambda d: (
                with_labels_ranking(d, False)
            ),
        },
        inputs,
    )
    over.print()
    for q in (50, 99):
        binary = over.ratio("probeval multiclass", "probeval binary", q)
        baseline = over.ratio("probeval multiclass", "one-vs-rest point estimate", q)
        added = over.ratio("probeval multiclass + macro AP", "probeval multiclass", q)
        labelled = over.ratio(
            "with-labels AUC and AP per chunk: ordered (now)",
            "with-labels AUC and AP per chunk: 32 / 2,048 bins (before)",
            q,
        )
        print(
            f"p{q}: multiclass / binary {binary:.2f}x, multiclass / one-vs-rest {baseline:.2f}x, "
            f"with macro AP / without {added:.2f}x; with-labels ranking now / before "
            f"{labelled:.2f}x"
        )
    payload = {
        "environment": environment(),
        "issue_case_ms": {t.name: percentiles_ms(t) for t in fixed.timings},
        "over_inputs_ms": {t.name: percentiles_ms(t) for t in over.timings},
    }
    save(args.json, payload)


if __name__ == "__main__":
    main()
