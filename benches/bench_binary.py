"""Binary posteriors with labels: probeval against hand-written numpy and prob-conf-mat 0.4.0.

Run: ``pip install ".[bench]" && python benches/bench_binary.py [--json out.json]``.
All contenders run in the same process, interleaved, their order rotated per input.

Sampling costs depend on the counts (gamma samplers slow down at small shapes), so 1 and 2 are
timed over a distribution of confusion matrices, not one: 16 (section 1) and 48 (section 2)
count quadruples (seed 2026) with total 10**U(2, 7), prevalence U(0.05, 0.95), recall and
specificity U(0.5, 0.99); reported are p50 and p99 of the per-input times.

1. 1,000,000 draws of (accuracy, precision, recall, f1, mcc) — probeval's fused kernel vs numpy
   (``rng.dirichlet`` + vectorised metrics, as the issue specifies, and a faster
   ``standard_gamma`` variant that skips the normalisation).
2. The same evaluation a user runs: f1, accuracy and mcc with 100,000 samples, each with its
   median and 95% HDI — probeval vs prob-conf-mat 0.4.0.
3. ``import probeval`` on top of ``import numpy``.

The latency of exact intervals, whose cost depends on the counts, is timed over a distribution
of counts by ``bench_latency.py``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

import probeval as pe
from _harness import Report, environment, percentiles_ms, save

FIVE = ["accuracy", "precision", "recall", "f1", "mcc"]
Counts = tuple[int, int, int, int]  # TP, FP, TN, FN


def count_inputs(size: int) -> list[Counts]:
    """The timed inputs: total 10**U(2, 7), prevalence U(0.05, 0.95), recall and specificity
    U(0.5, 0.99)."""
    rng = np.random.default_rng(2026)
    out = []
    for _ in range(size):
        total = int(10 ** rng.uniform(2, 7))
        positives = max(1, round(total * rng.uniform(0.05, 0.95)))
        negatives = max(1, total - positives)
        tp = round(positives * rng.uniform(0.5, 0.99))
        tn = round(negatives * rng.uniform(0.5, 0.99))
        out.append((tp, negatives - tn, tn, positives - tp))
    return out


def numpy_dirichlet(counts: Counts, n: int, seed: int) -> dict[str, np.ndarray]:
    """The obvious careful numpy version: one Dirichlet draw per sample, vectorised metrics."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.array(counts, dtype=float) + 1.0, size=n)
    tp, fp, tn, fn = np.ascontiguousarray(p.T)
    pred_pos = tp + fp
    pos = tp + fn
    return {
        "accuracy": tp + tn,
        "precision": tp / pred_pos,
        "recall": tp / pos,
        "f1": 2 * tp / (pred_pos + pos),
        "mcc": (tp * tn - fp * fn) / np.sqrt(pred_pos * pos * (tn + fp) * (tn + fn)),
    }


def numpy_gamma(counts: Counts, n: int, seed: int) -> dict[str, np.ndarray]:
    """A faster numpy variant: unnormalised gammas (every metric is scale-invariant)."""
    rng = np.random.default_rng(seed)
    alpha = np.array(counts, dtype=float) + 1.0
    tp, fp, tn, fn = rng.standard_gamma(alpha[:, None], size=(4, n))
    total = tp + fp + tn + fn
    pred_pos = tp + fp
    pos = tp + fn
    return {
        "accuracy": (tp + tn) / total,
        "precision": tp / pred_pos,
        "recall": tp / pos,
        "f1": 2 * tp / (pred_pos + pos),
        "mcc": (tp * tn - fp * fn) / np.sqrt(pred_pos * pos * (tn + fp) * (tn + fn)),
    }


def matrix(counts: Counts) -> pe.ConfusionMatrix:
    tp, fp, tn, fn = counts
    return pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)


def probeval_joint(counts: Counts, n: int, seed: int) -> list[np.ndarray]:
    ev = pe.evaluate(matrix(counts), metrics=FIVE, n_samples=n, joint=True, rng=seed)
    return [ev[m].samples for m in FIVE]


def probeval_default(counts: Counts, n: int, seed: int) -> list[np.ndarray]:
    # Default mode: accuracy, precision, recall sampled from their exact Betas, f1 and mcc
    # from one Dirichlet; asking for every metric's samples forces all the draws.
    ev = pe.evaluate(matrix(counts), metrics=FIVE, n_samples=n, rng=seed)
    return [ev[m].samples for m in FIVE]


def pcm_evaluation(counts: Counts, n: int, seed: int) -> dict[str, tuple[float, Any]]:
    import prob_conf_mat as pcm
    from prob_conf_mat.stats.hdi_estimation import hdi_estimator

    tp, fp, tn, fn = counts
    study = pcm.Study(seed=seed, num_samples=n, ci_probability=0.95)
    study.add_experiment(
        "model/a",
        confusion_matrix=[[tn, fp], [fn, tp]],
        prevalence_prior=1,
        confusion_prior=1,
    )
    out = {}
    for metric in ("f1@binary", "acc", "mcc"):
        study.add_metric(metric)
    for metric in ("f1@binary", "acc", "mcc"):
        values = study.get_metric_samples(metric, "model/a", "posterior").values[:, 0]
        out[metric] = (float(np.median(values)), hdi_estimator(values, 0.95))
    return out


def probeval_evaluation(
    counts: Counts, n: int, seed: int, joint: bool
) -> dict[str, tuple[float, Any]]:
    metrics = ["f1", "accuracy", "mcc"]
    ev = pe.evaluate(matrix(counts), metrics=metrics, n_samples=n, rng=seed, joint=joint)
    return {m: (ev[m].median(), ev[m].hdi(0.95)) for m in ev}


def probeval_summary_table(counts: Counts, n: int, seed: int) -> Any:
    """The one-call way: the summary table holds every metric's median and HDI."""
    ev = pe.evaluate(matrix(counts), metrics=["f1", "accuracy", "mcc"], n_samples=n, rng=seed)
    return ev.summary(0.95)


def import_overhead(repeats: int = 15) -> tuple[float, float]:
    """(median wall time of ``import numpy, probeval`` minus ``import numpy`` in fresh
    interpreters, median of probeval's own cumulative time from ``-X importtime``), in seconds.
    The second is immune to the noise of starting processes on a busy machine."""

    def wall(code: str) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    def self_reported() -> float:
        times = []
        for _ in range(repeats):
            out = subprocess.run(
                [sys.executable, "-X", "importtime", "-c", "import numpy, probeval"],
                capture_output=True,
                text=True,
                check=True,
            )
            line = [row for row in out.stderr.splitlines() if row.rstrip().endswith("| probeval")][
                -1
            ]
            times.append(int(line.split("|")[1]) / 1e6)
        return statistics.median(times)

    return wall("import numpy, probeval") - wall("import numpy"), self_reported()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    args = parser.parse_args()
    results: dict[str, Any] = {"environment": environment()}
    print(results["environment"])

    draws = Report("1,000,000 draws of accuracy, precision, recall, f1, mcc, over 16 matrices")
    draws.compare_over(
        {
            "numpy rng.dirichlet + metrics": lambda c: numpy_dirichlet(c, 1_000_000, 1),
            "numpy standard_gamma + metrics": lambda c: numpy_gamma(c, 1_000_000, 1),
            "probeval joint=True": lambda c: probeval_joint(c, 1_000_000, 1),
            "probeval default": lambda c: probeval_default(c, 1_000_000, 1),
        },
        count_inputs(16),
    )
    ratio = draws.ratio("numpy rng.dirichlet + metrics", "probeval joint=True")
    ratio_gamma = draws.ratio("numpy standard_gamma + metrics", "probeval joint=True")
    ratio_99 = draws.ratio("numpy rng.dirichlet + metrics", "probeval joint=True", 99)
    draws.notes.append(
        f"speed-up vs numpy dirichlet: p50 {ratio:.1f}x, p99 {ratio_99:.1f}x (target >= 4x)"
    )
    draws.notes.append(f"speed-up vs numpy standard_gamma: p50 {ratio_gamma:.1f}x")
    draws.print()

    evaluation = Report("f1 + accuracy + mcc, 100,000 samples, median and 95% HDI, 48 matrices")
    evaluation.compare_over(
        {
            "prob-conf-mat 0.4.0": lambda c: pcm_evaluation(c, 100_000, 1),
            "probeval (exact accuracy)": lambda c: probeval_evaluation(c, 100_000, 1, False),
            "probeval joint=True (all sampled)": lambda c: probeval_evaluation(c, 100_000, 1, True),
            "probeval ev.summary() table": lambda c: probeval_summary_table(c, 100_000, 1),
        },
        count_inputs(48),
    )
    exact, pcm_name = "probeval (exact accuracy)", "prob-conf-mat 0.4.0"
    ratio_pcm = evaluation.ratio(pcm_name, exact)
    ratio_pcm_99 = evaluation.ratio(pcm_name, exact, 99)
    ratio_pcm_joint = evaluation.ratio(pcm_name, "probeval joint=True (all sampled)")
    evaluation.notes.append(
        f"speed-up vs prob-conf-mat: p50 {ratio_pcm:.0f}x, p99 {ratio_pcm_99:.0f}x (target >= 15x)"
    )
    ratio_table = evaluation.ratio(pcm_name, "probeval ev.summary() table")
    evaluation.notes.append(
        f"speed-up vs prob-conf-mat, everything sampled: p50 {ratio_pcm_joint:.0f}x"
    )
    evaluation.notes.append(f"speed-up vs prob-conf-mat, summary table: p50 {ratio_table:.0f}x")
    evaluation.print()

    wall_s, own_s = import_overhead()
    extra_ms = own_s * 1e3
    print("\n## import time (fresh interpreters, medians of 15)")
    print(f"  probeval's cumulative import time after numpy (-X importtime): {extra_ms:.1f} ms")
    print(f"  wall-clock difference of the two imports: {wall_s * 1e3:.1f} ms (noisy)")
    print("  target: <= 50 ms on top of numpy")

    results.update(
        {
            "draws_ms": {t.name: percentiles_ms(t) for t in draws.timings},
            "evaluation_ms": {t.name: percentiles_ms(t) for t in evaluation.timings},
            "ratio_vs_numpy_dirichlet": ratio,
            "ratio_vs_numpy_gamma": ratio_gamma,
            "ratio_vs_prob_conf_mat": ratio_pcm,
            "ratio_vs_prob_conf_mat_all_sampled": ratio_pcm_joint,
            "ratio_vs_prob_conf_mat_summary_table": ratio_table,
            "import_overhead_ms": extra_ms,
        }
    )
    save(args.json, results)


if __name__ == "__main__":
    main()
