"""Corrected precision under audited mislabelling: 1,000,000 draws, probeval vs numpy.

Run: ``pip install ".[bench]" && python benches/bench_audit.py [--json out.json]``.

The generative model (SPEC §2.6) of the README's worked example: TP = 5,285, FP = 3,184;
reviewers found 7 of 100 TPs and 31 of 100 FPs mislabelled. Each draw: m_TP, m_FP from their
Beta posteriors, corrected counts TP*, FP*, then precision ~ Beta(TP* + 1, FP* + 1).
numpy: the same three vectorised Beta draws with array parameters. Target: >= 5x.
"""

from __future__ import annotations

import argparse

import numpy as np

import probeval as pe
from _harness import Report, environment, save

N = 1_000_000
TP, FP, TN, FN = 5285, 3184, 8000, 1000


def numpy_corrected_precision(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m_tp = rng.beta(7 + 1, 100 - 7 + 1, N)
    m_fp = rng.beta(31 + 1, 100 - 31 + 1, N)
    tp = TP * (1 - m_tp) + FP * m_fp
    fp = FP * (1 - m_fp) + TP * m_tp
    return rng.beta(tp + 1, fp + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write results to this JSON file")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    print(environment())
    cm = pe.ConfusionMatrix.from_counts(tp=TP, fp=FP, tn=TN, fn=FN)
    audit = pe.LabelAudit(reviewed_tp=100, mislabelled_tp=7, reviewed_fp=100, mislabelled_fp=31)

    def ours(seed: int) -> np.ndarray:
        return cm.posterior("precision", audit=audit, n_samples=N, rng=seed).samples

    a, b = ours(1), numpy_corrected_precision(2)
    print(f"mean {a.mean():.5f} vs {b.mean():.5f}; sd {a.std():.5f} vs {b.std():.5f}")
    assert abs(a.mean() - b.mean()) < 5 * b.std() * np.sqrt(2 / N)
    report = Report(f"corrected precision, {N:,} draws")
    report.compare(
        {
            "probeval cm.posterior(audit=...)": lambda: ours(3),
            "numpy (three vectorised Beta draws)": lambda: numpy_corrected_precision(4),
        },
        repeats=args.repeats,
    )
    ratio = report.ratio("numpy (three vectorised Beta draws)", "probeval cm.posterior(audit=...)")
    report.notes.append(f"probeval is {ratio:.1f}x faster (target >= 5x)")
    report.print()
    save(
        args.json,
        {
            "environment": environment(),
            "ms": {t.name: t.median * 1e3 for t in report.timings},
            "ratio_vs_numpy": ratio,
        },
    )


if __name__ == "__main__":
    main()
