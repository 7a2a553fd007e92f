"""Corrected precision under audited mislabelling: 1,000,000 draws, probeval vs numpy.

Run: ``pip install ".[bench]" && python benches/bench_audit.py [--json out.json]``.

The generative model (SPEC §2.6): reviewers re-check samples of the TPs and FPs and count the
mislabelled ones. Each draw: m_TP, m_FP from their Beta posteriors, corrected counts TP*, FP*,
then precision ~ Beta(TP* + 1, FP* + 1). numpy: the same three vectorised Beta draws with array
parameters. Beta samplers cost more at some shapes than others, so the timing runs over 24
inputs (seed 2026): TP and FP 10**U(1, 6), reviewed 10**U(1, 3) of each (at most all of them),
mislabelled rates U(0, 0.4); reported are p50 and p99 over the inputs. Target: >= 5x.
"""

from __future__ import annotations

import argparse

import numpy as np

import probeval as pe
from _harness import Report, environment, percentiles_ms, save

N = 1_000_000
#: (TP, FP, reviewed TPs, mislabelled among them, reviewed FPs, mislabelled among them)
Audited = tuple[int, int, int, int, int, int]


def audited_inputs(size: int) -> list[Audited]:
    rng = np.random.default_rng(2026)
    out = []
    for _ in range(size):
        tp, fp = (int(10 ** rng.uniform(1, 6)) for _ in range(2))
        reviewed = [min(count, int(10 ** rng.uniform(1, 3))) for count in (tp, fp)]
        wrong = [int(r * rng.uniform(0, 0.4)) for r in reviewed]
        out.append((tp, fp, reviewed[0], wrong[0], reviewed[1], wrong[1]))
    return out


def numpy_corrected_precision(case: Audited, seed: int) -> np.ndarray:
    tp0, fp0, reviewed_tp, wrong_tp, reviewed_fp, wrong_fp = case
    rng = np.random.default_rng(seed)
    m_tp = rng.beta(wrong_tp + 1, reviewed_tp - wrong_tp + 1, N)
    m_fp = rng.beta(wrong_fp + 1, reviewed_fp - wrong_fp + 1, N)
    tp = tp0 * (1 - m_tp) + fp0 * m_fp
    fp = fp0 * (1 - m_fp) + tp0 * m_tp
    return rng.beta(tp + 1, fp + 1)


def probeval_corrected_precision(case: Audited, seed: int) -> np.ndarray:
    tp, fp, reviewed_tp, wrong_tp, reviewed_fp, wrong_fp = case
    cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=1000, fn=1000)
    audit = pe.LabelAudit(
        reviewed_tp=reviewed_tp,
        mislabelled_tp=wrong_tp,
        reviewed_fp=reviewed_fp,
        mislabelled_fp=wrong_fp,
    )
    return cm.posterior("precision", audit=audit, n_samples=N, rng=seed).samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    args = parser.parse_args()
    print(environment())
    inputs = audited_inputs(24)
    # The two draw the same posterior: check on every input before timing.
    for case in inputs:
        a, b = probeval_corrected_precision(case, 1), numpy_corrected_precision(case, 2)
        assert abs(a.mean() - b.mean()) < 5 * b.std() * np.sqrt(2 / N), (case, a.mean(), b.mean())
    ours, numpy_name = "probeval cm.posterior(audit=...)", "numpy (three vectorised Beta draws)"
    report = Report(f"corrected precision, {N:,} draws, over {len(inputs)} audited matrices")
    report.compare_over(
        {
            ours: lambda case: probeval_corrected_precision(case, 3),
            numpy_name: lambda case: numpy_corrected_precision(case, 4),
        },
        inputs,
    )
    ratio, ratio_99 = report.ratio(numpy_name, ours), report.ratio(numpy_name, ours, 99)
    report.notes.append(f"probeval is p50 {ratio:.1f}x, p99 {ratio_99:.1f}x faster (target >= 5x)")
    report.print()
    save(
        args.json,
        {
            "environment": environment(),
            "ms": {t.name: percentiles_ms(t) for t in report.timings},
            "ratio_vs_numpy": {"p50": ratio, "p99": ratio_99},
        },
    )


if __name__ == "__main__":
    main()
