"""Ensemble statistics of a (100 models x 1,000,000 samples) probability matrix: probeval vs numpy.

Run: ``pip install ".[bench]" && python benches/bench_ensemble.py [--json out.json]``.

Both compute every per-sample statistic of SPEC §2.5 (label stability, jitter, epistemic and
aleatoric uncertainty, predictive entropy, mutual information, std, IQR) and their means. The
numpy contender is written with care: it works on blocks of 50,000 samples (so its temporaries
stay small), uses the closed-form jitter, one ``np.percentile`` call for both quartiles and
``np.log2`` under ``errstate`` for the entropies. The matrix (800 MB) is built once, outside
the timings. Target: probeval >= 3x on 2 cores.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import probeval as pe
from _harness import Report, environment, save

M, N = 100, 1_000_000
BLOCK = 50_000


def entropy_bits(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -p * np.log2(p) - (1 - p) * np.log2(1 - p)
    return np.where((p > 0) & (p < 1), h, 0.0)


def numpy_statistics(proba: np.ndarray, threshold: float = 0.5) -> dict[str, np.ndarray]:
    m, n = proba.shape
    names = (
        "label_stability",
        "jitter",
        "epistemic",
        "std",
        "aleatoric",
        "predictive_entropy",
        "mutual_information",
        "iqr",
    )
    out = {name: np.empty(n) for name in names}
    for start in range(0, n, BLOCK):
        p = proba[:, start : start + BLOCK]
        part = slice(start, start + p.shape[1])
        k = (p > threshold).sum(axis=0)
        mean = p.mean(axis=0)
        var = p.var(axis=0)
        aleatoric = entropy_bits(p).mean(axis=0)
        predictive = entropy_bits(mean)
        q75, q25 = np.percentile(p, [75, 25], axis=0)
        out["label_stability"][part] = np.abs(2 * k - m) / m
        out["jitter"][part] = 2 * k * (m - k) / (m * (m - 1))
        out["epistemic"][part] = var
        out["std"][part] = np.sqrt(var)
        out["aleatoric"][part] = aleatoric
        out["predictive_entropy"][part] = predictive
        out["mutual_information"][part] = predictive - aleatoric
        out["iqr"][part] = q75 - q25
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(environment())
    rng = np.random.default_rng(0)
    base = rng.random(N)
    proba = np.clip(base + rng.normal(0, 0.1, (M, N)), 0, 1)  # 800 MB

    ours = pe.ensemble_report(proba, n_samples=100, rng=0)
    theirs = numpy_statistics(proba)
    for name, values in theirs.items():
        # mutual information subtracts two entropies: a few ulps of their size.
        np.testing.assert_allclose(ours.per_sample[name], values, rtol=1e-9, atol=1e-12)
    print("all statistics agree")

    report = Report(f"ensemble statistics, {M} models x {N:,} samples")
    report.compare(
        {
            "probeval ensemble_report": lambda: pe.ensemble_report(proba, n_samples=100, rng=0),
            "numpy, blocks of 50,000 samples": lambda: numpy_statistics(proba),
        },
        repeats=args.repeats,
    )
    ratio = report.ratio("numpy, blocks of 50,000 samples", "probeval ensemble_report")
    report.notes.append(f"probeval is {ratio:.1f}x faster (target >= 3x)")
    report.print()
    payload: dict[str, Any] = {
        "environment": environment(),
        "ms": {t.name: t.median * 1e3 for t in report.timings},
        "ratio_vs_numpy": ratio,
    }
    save(args.json, payload)


if __name__ == "__main__":
    main()
