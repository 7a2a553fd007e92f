"""Multiclass posteriors: probeval against prob-conf-mat 0.4.0 and hand-written numpy.

Run: ``pip install ".[bench]" && python benches/bench_multiclass.py [--json out.json]``.

The task (issue 3): a 10-class confusion matrix, macro-F1 with 100,000 posterior samples, its
median and 95% HDI; prior 1 per cell (prob-conf-mat: prevalence and confusion priors 1).
Timings are taken over a distribution of matrices, not one: 24 matrices (seed 2026) with
observations 10**U(2, 6), class prevalences Dirichlet(4), accuracy U(0.5, 0.95) with the errors
spread by Dirichlet(0.5); small counts mean small gamma shapes, which cost gamma samplers more.
Contenders are interleaved, their order rotated per matrix; reported are p50 and p99 of the
per-matrix times. Peak memory: each contender runs once, on the fixed 10,000-observation
matrix, in a fresh subprocess; reported is how much its peak RSS grew over the RSS after its
imports (tracemalloc cannot see Rust allocations, and the libraries' own import footprints
differ by 100 MB).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

import numpy as np

from _harness import Report, environment, percentiles_ms, save

K, N_OBS, N_SAMPLES, N_MATRICES = 10, 10_000, 100_000, 24


def confusion(
    rng: np.random.Generator | None = None, n_obs: int = N_OBS, error: float = 0.22
) -> np.ndarray:
    """A 10-class matrix: uneven classes, accuracy about 1 - error. Without a generator: the
    fixed 10,000-observation matrix (~78% accuracy) of the memory comparison."""
    rng = np.random.default_rng(2026) if rng is None else rng
    prevalence = rng.dirichlet(np.full(K, 4.0))
    counts = np.zeros((K, K), dtype=np.int64)
    for i, row_total in enumerate(rng.multinomial(n_obs, prevalence)):
        confusions = rng.dirichlet(np.full(K, 0.5)) * error
        confusions[i] = 0.0
        p = confusions.copy()
        p[i] = 1.0 - confusions.sum()
        counts[i] = rng.multinomial(row_total, p / p.sum())
    return counts


def matrices() -> list[np.ndarray]:
    """The timed inputs: observations 10**U(2, 6), accuracy U(0.5, 0.95)."""
    rng = np.random.default_rng(2026)
    return [
        confusion(rng, int(10 ** rng.uniform(2, 6)), rng.uniform(0.05, 0.5))
        for _ in range(N_MATRICES)
    ]


def numpy_hdi(samples: np.ndarray, ci: float = 0.95) -> tuple[float, float]:
    ordered = np.sort(samples)
    k = int(np.ceil(ci * ordered.size))
    widths = ordered[k - 1 :] - ordered[: ordered.size - k + 1]
    i = int(np.argmin(widths))
    return float(ordered[i]), float(ordered[i + k - 1])


def run_numpy(counts: np.ndarray, seed: int) -> tuple[float, tuple[float, float]]:
    """standard_gamma over all K x K cells (unnormalised: F1 is scale-free) + macro-F1."""
    rng = np.random.default_rng(seed)
    g = rng.standard_gamma((counts + 1.0)[:, :, None], size=(K, K, N_SAMPLES))
    diagonal = np.einsum("iin->in", g)
    f1 = 2.0 * diagonal / (g.sum(axis=0) + g.sum(axis=1))
    macro = f1.mean(axis=0)
    return float(np.median(macro)), numpy_hdi(macro)


def run_pcm(counts: np.ndarray, seed: int) -> tuple[float, tuple[float, float]]:
    import prob_conf_mat as pcm
    from prob_conf_mat.stats.hdi_estimation import hdi_estimator

    study = pcm.Study(seed=seed, num_samples=N_SAMPLES, ci_probability=0.95)
    study.add_experiment("model/a", confusion_matrix=counts, prevalence_prior=1, confusion_prior=1)
    study.add_metric("f1@macro")
    values = study.get_metric_samples("f1@macro", "model/a", "posterior").values[:, 0]
    return float(np.median(values)), hdi_estimator(values, 0.95)


def run_probeval(counts: np.ndarray, seed: int) -> tuple[float, tuple[float, float]]:
    import probeval as pe

    # 1 per cell, as the others: probeval's scalar prior spreads c over a class's K - 1 errors.
    prior = np.ones(counts.shape)
    post = pe.ConfusionMatrix(counts).posterior(
        "f1_macro", prior=prior, n_samples=N_SAMPLES, rng=seed
    )
    return post.median(), post.hdi(0.95)


CONTENDERS = {"numpy": run_numpy, "prob-conf-mat 0.4.0": run_pcm, "probeval": run_probeval}


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def child(name: str) -> None:
    """Run one contender once in this fresh process and report peak-RSS growth (MiB).

    getrusage's ru_maxrss would be useless here: Linux carries it across fork and exec, so a
    child starts with its parent's high-water mark. VmHWM belongs to this address space, and
    writing 5 to /proc/self/clear_refs resets it to the current RSS after the imports.
    """
    counts = confusion()
    if name == "prob-conf-mat 0.4.0":
        import prob_conf_mat  # noqa: F401
        from prob_conf_mat.stats.hdi_estimation import hdi_estimator  # noqa: F401
    elif name == "probeval":
        import probeval  # noqa: F401
    with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
        clear.write("5")
    before = _status_kib("VmRSS")
    result = CONTENDERS[name](counts, 1)
    after = _status_kib("VmHWM")
    print(
        json.dumps({"peak_growth_mib": (after - before) / 1024, "result": [result[0], *result[1]]})
    )


def peak_memory(name: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", name], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(environment())
    inputs = matrices()
    sizes = sorted(int(m.sum()) for m in inputs)
    print(f"{len(inputs)} 10-class matrices, {sizes[0]:,} ... {sizes[-1]:,} observations")
    report = Report(f"macro-F1, {N_SAMPLES:,} samples, median and 95% HDI, over the matrices")
    report.compare_over({name: (lambda m, f=f: f(m, 1)) for name, f in CONTENDERS.items()}, inputs)
    ratios = {
        (other, q): report.ratio(other, "probeval", q)
        for other in ("prob-conf-mat 0.4.0", "numpy")
        for q in (50, 99)
    }
    for other, target in (("prob-conf-mat 0.4.0", 6), ("numpy", 4)):
        p50, p99 = ratios[other, 50], ratios[other, 99]
        report.notes.append(
            f"speed-up vs {other}: p50 {p50:.1f}x, p99 {p99:.1f}x (target >= {target}x)"
        )
    ratio_pcm, ratio_numpy = ratios["prob-conf-mat 0.4.0", 50], ratios["numpy", 50]
    report.print()
    memory = {name: peak_memory(name) for name in CONTENDERS}
    print("\n## peak memory growth of the computation (fresh process each)")
    for name, m in memory.items():
        median, low, high = m["result"]
        summary = f"median {median:.4f}, HDI [{low:.4f}, {high:.4f}]"
        print(f"  {name:22s} {m['peak_growth_mib']:8.1f} MiB   ({summary})")
    memory_ratio = (
        memory["probeval"]["peak_growth_mib"] / memory["prob-conf-mat 0.4.0"]["peak_growth_mib"]
    )
    print(f"  probeval / prob-conf-mat: {memory_ratio:.3f} (target <= 0.25)")
    save(
        args.json,
        {
            "environment": environment(),
            "time_ms": {t.name: percentiles_ms(t) for t in report.timings},
            "ratio_vs_prob_conf_mat": ratio_pcm,
            "ratio_vs_numpy": ratio_numpy,
            "peak_growth_mib": {name: m["peak_growth_mib"] for name, m in memory.items()},
            "memory_ratio_vs_prob_conf_mat": memory_ratio,
        },
    )


if __name__ == "__main__":
    main()
