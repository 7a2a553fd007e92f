"""Binary posteriors with labels: probeval against hand-written numpy and prob-conf-mat 0.4.0.

Run: ``pip install ".[bench]" && python benches/bench_binary.py [--json out.json]``.
All contenders run in the same process, one after another, with medians over repeated runs.

1. 1,000,000 draws of (accuracy, precision, recall, f1, mcc) from TP=5285, FN=1000, FP=3184,
   TN=8000 — probeval's fused kernel vs numpy (``rng.dirichlet`` + vectorised metrics, as the
   issue specifies, and a faster ``standard_gamma`` variant that skips the normalisation).
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
from _harness import Report, environment, save

TP, FN, FP, TN = 5285, 1000, 3184, 8000
CM = pe.ConfusionMatrix.from_counts(tp=TP, fp=FP, tn=TN, fn=FN)
FIVE = ["accuracy", "precision", "recall", "f1", "mcc"]


def numpy_dirichlet(n: int, seed: int) -> dict[str, np.ndarray]:
    """The obvious careful numpy version: one Dirichlet draw per sample, vectorised metrics."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.array([TP, FP, TN, FN], dtype=float) + 1.0, size=n)
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


def numpy_gamma(n: int, seed: int) -> dict[str, np.ndarray]:
    """A faster numpy variant: unnormalised gammas (every metric is scale-invariant)."""
    rng = np.random.default_rng(seed)
    alpha = np.array([TP, FP, TN, FN], dtype=float) + 1.0
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


def probeval_joint(n: int, seed: int) -> list[np.ndarray]:
    ev = pe.evaluate(CM, metrics=FIVE, n_samples=n, joint=True, rng=seed)
    return [ev[m].samples for m in FIVE]


def probeval_default(n: int, seed: int) -> list[np.ndarray]:
    # Default mode: accuracy, precision, recall sampled from their exact Betas, f1 and mcc
    # from one Dirichlet; asking for every metric's samples forces all the draws.
    ev = pe.evaluate(CM, metrics=FIVE, n_samples=n, rng=seed)
    return [ev[m].samples for m in FIVE]


def pcm_evaluation(n: int, seed: int) -> dict[str, tuple[float, Any]]:
    import prob_conf_mat as pcm
    from prob_conf_mat.stats.hdi_estimation import hdi_estimator

    study = pcm.Study(seed=seed, num_samples=n, ci_probability=0.95)
    study.add_experiment(
        "model/a",
        confusion_matrix=[[TN, FP], [FN, TP]],
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


def probeval_evaluation(n: int, seed: int, joint: bool) -> dict[str, tuple[float, Any]]:
    ev = pe.evaluate(CM, metrics=["f1", "accuracy", "mcc"], n_samples=n, rng=seed, joint=joint)
    return {m: (ev[m].median(), ev[m].hdi(0.95)) for m in ev}


def probeval_summary_table(n: int, seed: int) -> Any:
    """The one-call way: the summary table holds every metric's median and HDI."""
    ev = pe.evaluate(CM, metrics=["f1", "accuracy", "mcc"], n_samples=n, rng=seed)
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
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    r = args.repeats
    results: dict[str, Any] = {"environment": environment()}
    print(results["environment"])

    draws = Report("1,000,000 draws of accuracy, precision, recall, f1, mcc")
    draws.compare(
        {
            "numpy rng.dirichlet + metrics": lambda: numpy_dirichlet(1_000_000, 1),
            "numpy standard_gamma + metrics": lambda: numpy_gamma(1_000_000, 1),
            "probeval joint=True": lambda: probeval_joint(1_000_000, 1),
            "probeval default": lambda: probeval_default(1_000_000, 1),
        },
        repeats=r,
    )
    ratio = draws.ratio("numpy rng.dirichlet + metrics", "probeval joint=True")
    ratio_gamma = draws.ratio("numpy standard_gamma + metrics", "probeval joint=True")
    draws.notes.append(f"speed-up vs numpy dirichlet: {ratio:.1f}x (target >= 4x)")
    draws.notes.append(f"speed-up vs numpy standard_gamma: {ratio_gamma:.1f}x")
    draws.print()

    evaluation = Report("f1 + accuracy + mcc, 100,000 samples, median and 95% HDI")
    evaluation.compare(
        {
            "prob-conf-mat 0.4.0": lambda: pcm_evaluation(100_000, 1),
            "probeval (exact accuracy)": lambda: probeval_evaluation(100_000, 1, False),
            "probeval joint=True (all sampled)": lambda: probeval_evaluation(100_000, 1, True),
            "probeval ev.summary() table": lambda: probeval_summary_table(100_000, 1),
        },
        repeats=6 * r,
    )
    ratio_pcm = evaluation.ratio("prob-conf-mat 0.4.0", "probeval (exact accuracy)")
    ratio_pcm_joint = evaluation.ratio("prob-conf-mat 0.4.0", "probeval joint=True (all sampled)")
    evaluation.notes.append(f"speed-up vs prob-conf-mat: {ratio_pcm:.0f}x (target >= 15x)")
    ratio_table = evaluation.ratio("prob-conf-mat 0.4.0", "probeval ev.summary() table")
    evaluation.notes.append(
        f"speed-up vs prob-conf-mat, everything sampled: {ratio_pcm_joint:.0f}x"
    )
    evaluation.notes.append(f"speed-up vs prob-conf-mat, summary table: {ratio_table:.0f}x")
    evaluation.print()

    wall_s, own_s = import_overhead()
    extra_ms = own_s * 1e3
    print("\n## import time (fresh interpreters, medians of 15)")
    print(f"  probeval's cumulative import time after numpy (-X importtime): {extra_ms:.1f} ms")
    print(f"  wall-clock difference of the two imports: {wall_s * 1e3:.1f} ms (noisy)")
    print("  target: <= 50 ms on top of numpy")

    results.update(
        {
            "draws_ms": {t.name: t.median * 1e3 for t in draws.timings},
            "evaluation_ms": {t.name: t.median * 1e3 for t in evaluation.timings},
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
