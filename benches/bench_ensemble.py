"""Ensemble statistics of a (100 models x 1,000,000 samples) probability matrix: probeval vs numpy.

Run: ``pip install ".[bench]" && python benches/bench_ensemble.py [--json out.json]``.

Both compute every per-sample statistic of SPEC §2.5 (label stability, jitter, epistemic and
aleatoric uncertainty, predictive entropy, mutual information, std, IQR) and their means. The
numpy contender is written with care: it works on blocks of 50,000 samples (so its temporaries
stay small), uses the closed-form jitter, one ``np.percentile`` call for both quartiles and
``np.log2`` under ``errstate`` for the entropies. The statistics agree on the README's
100 x 1,000,000 matrix (800 MB). Costs depend on the shape (the per-sample sorts for the IQR
grow with the number of models) and the values, so the timing runs over 6 matrices (seed 2026):
models 10**U(0.7, 2.3) (5 ... 200), samples such that the matrix holds 10**U(7, 7.7) values, model
noise sd U(0.01, 0.3) around a per-sample base probability; each is built outside the timings,
one at a time. Reported are p50 and p99 over the matrices. Target: probeval >= 3x on 2 cores.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

import probeval as pe
from _harness import Report, environment, percentiles_ms, save

M, N = 100, 1_000_000
BLOCK = 50_000


def matrix(models: int, samples: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.random(samples)
    return np.clip(base + rng.normal(0, noise, (models, samples)), 0, 1)


class Matrices(Sequence[np.ndarray]):
    """The timed matrices, built on first use and only the latest kept (each up to 400 MB)."""

    def __init__(self, size: int) -> None:
        rng = np.random.default_rng(2026)
        self.shapes = []
        for _ in range(size):
            models = int(10 ** rng.uniform(0.7, 2.3))
            samples = int(10 ** rng.uniform(7, 7.7)) // models
            self.shapes.append((models, samples, rng.uniform(0.01, 0.3)))
        self.cached: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.shapes)

    @overload
    def __getitem__(self, index: int) -> np.ndarray: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[np.ndarray]: ...
    def __getitem__(self, index: int | slice) -> np.ndarray | Sequence[np.ndarray]:
        if isinstance(index, slice):
            raise TypeError("Matrices are built one at a time")
        if index >= len(self):
            raise IndexError(index)
        if self.cached is None or self.cached[0] != index:
            self.cached = None  # free the previous matrix first
            self.cached = (index, matrix(*self.shapes[index], seed=index))
        return self.cached[1]


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
    args = parser.parse_args()
    print(environment())
    proba = matrix(M, N, 0.1, seed=0)  # 800 MB

    ours = pe.ensemble_report(proba, n_samples=100, rng=0)
    theirs = numpy_statistics(proba)
    for name, values in theirs.items():
        # mutual information subtracts two entropies: a few ulps of their size.
        np.testing.assert_allclose(ours.per_sample[name], values, rtol=1e-9, atol=1e-12)
    print("all statistics agree")
    del proba, ours, theirs

    inputs = Matrices(6)
    shapes = ", ".join(f"{m} x {n:,}" for m, n, _ in inputs.shapes)
    report = Report(f"ensemble statistics over {len(inputs)} matrices ({shapes})")
    ours_name, numpy_name = "probeval ensemble_report", "numpy, blocks of 50,000 samples"
    report.compare_over(
        {
            ours_name: lambda p: pe.ensemble_report(p, n_samples=100, rng=0),
            numpy_name: numpy_statistics,
        },
        inputs,
    )
    ratio, ratio_99 = report.ratio(numpy_name, ours_name), report.ratio(numpy_name, ours_name, 99)
    report.notes.append(f"probeval is p50 {ratio:.1f}x, p99 {ratio_99:.1f}x faster (target >= 3x)")
    report.print()
    payload: dict[str, Any] = {
        "environment": environment(),
        "ms": {t.name: percentiles_ms(t) for t in report.timings},
        "ratio_vs_numpy": {"p50": ratio, "p99": ratio_99},
    }
    save(args.json, payload)


if __name__ == "__main__":
    main()
