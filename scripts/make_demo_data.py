"""Generate the bundled demo dataset ``python/probeval/data/demo.csv`` (committed).

A credit-risk-like binary classifier over 16 weeks, two models scored on the same rows:

* ``score_a`` is calibrated: labels are drawn as Bernoulli(score_a).
* ``score_b`` is a noisier model whose errors are correlated with model A's (same latent risk),
  so a paired comparison is much sharper than an independent one.
* Weeks 9-16 ("analysis" period) drift towards riskier applicants: the label-free estimate
  should track the realized metrics there.
* ``segment`` is a group column (three regions) for the fairness report.

Run ``python scripts/make_demo_data.py`` to regenerate; the output is deterministic for a given
numpy version (the committed file is the reference).
"""

from __future__ import annotations

import csv
from datetime import date, timedelta
from pathlib import Path

import numpy as np

N_ROWS = 8000
WEEKS = 16
OUT = Path(__file__).resolve().parents[1] / "python" / "probeval" / "data" / "demo.csv"


def main() -> None:
    rng = np.random.default_rng(20261121)
    week = np.sort(rng.integers(0, WEEKS, N_ROWS))
    day = week * 7 + rng.integers(0, 7, N_ROWS)
    segment = rng.choice(["north", "south", "west"], size=N_ROWS, p=[0.5, 0.3, 0.2])
    drift = np.where(week >= WEEKS // 2, 0.25 * (week - WEEKS // 2 + 1) / (WEEKS // 2), 0.0)
    offset = np.select([segment == "north", segment == "south"], [-0.2, 0.1], 0.3)
    latent = rng.normal(-0.9 + offset + drift, 1.3)
    score_a = 1.0 / (1.0 + np.exp(-latent))
    y_true = (rng.random(N_ROWS) < score_a).astype(int)
    latent_b = 0.8 * latent + rng.normal(0.0, 0.75, N_ROWS) - 0.1
    score_b = 1.0 / (1.0 + np.exp(-latent_b))
    start = date(2026, 1, 5)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["row_id", "date", "period", "segment", "y_true", "score_a", "score_b"])
        for i in range(N_ROWS):
            period = "reference" if week[i] < WEEKS // 2 else "analysis"
            writer.writerow(
                [
                    i,
                    (start + timedelta(days=int(day[i]))).isoformat(),
                    period,
                    segment[i],
                    y_true[i],
                    f"{score_a[i]:.4f}",
                    f"{score_b[i]:.4f}",
                ]
            )
    print(f"wrote {N_ROWS} rows to {OUT}")


if __name__ == "__main__":
    main()
