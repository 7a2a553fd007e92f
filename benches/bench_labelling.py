"""Labels needed for a given HDI width of precision: a labelling plan (stratified, Neyman
allocation) next to a simple random sample, same populations, one run.

    pip install ".[test]" && python benches/bench_labelling.py [--reps 30] [--json out.json]

Populations: 500,000 scored rows of a rare-positive model, scores Beta(0.4, 8) and labels with
P(y | s) = s ** 1.4 (the scores are not calibrated: the plan's allocation assumes they are, the
posterior does not), threshold 0.25: 2.0 % positives, 2.5 % predicted positive. For budgets
100 ... 51,200 labels, ``--reps`` fresh populations each, the mean 95% HDI width of precision
(population target: the realized one of a plan that labels every predicted positive is exact,
which would flatter it) for:

* plan: ``pe.labelling_plan(scores, budget, metric="precision")`` then ``plan.evaluate``;
* uniform: a simple random sample of ``budget`` rows, ``pe.evaluate`` (what is done today);
* uniform, post-stratified: the same random sample analysed with the plan's strata and their
  sizes (``evaluate(strata=..., stratum_sizes=...)``): the strongest use of a random sample.

Reported: the labels each needs for a mean width of 0.05 (interpolated on the log-log curve) and
the ratio; the coverage of the realized precision by the plan's 95% HDI (realized target) over
400 populations of 50,000 rows at a budget of 300.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

import probeval as pe

N = 500_000
THRESHOLD = 0.25
BUDGETS = (100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200)
TARGET_WIDTH = 0.05


def population(seed: int, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scores = rng.beta(0.4, 8.0, n)
    truth = rng.random(n) < scores**1.4
    return scores, truth


def widths(budget: int, reps: int) -> dict[str, float]:
    out: dict[str, list[float]] = {"plan": [], "uniform": [], "uniform, post-stratified": []}
    for rep in range(reps):
        scores, truth = population(10_000 * budget + rep)
        predicted = scores > THRESHOLD
        plan = pe.labelling_plan(scores, budget, metric="precision", threshold=THRESHOLD, rng=rep)
        # The population target for all three: the same question, so the widths compare.
        post = plan.evaluate(
            truth[plan.rows].astype(int), target="population", n_samples=4_000, rng=rep
        )
        out["plan"].append(float(np.diff(post["precision"].hdi())[0]))
        rows = np.random.default_rng(rep).choice(N, budget, replace=False)
        if predicted[rows].any():
            plain = pe.evaluate(truth[rows], predicted[rows], metrics="precision", rng=rep)
            out["uniform"].append(float(np.diff(plain["precision"].hdi())[0]))
        else:
            out["uniform"].append(1.0)  # no predicted positive labelled: precision unknown
        # The plan's strata for every row, to post-stratify the random sample.
        stratum = np.full(N, -1)
        for h, (low, high) in plan.score_ranges.items():
            side = predicted if plan.stratum_predictions[h] == 1 else ~predicted
            stratum[side & (scores >= low) & (scores <= high)] = h
        chosen = rows[predicted[rows]]
        if chosen.size:
            sizes = {h: plan.stratum_sizes[h] for h in np.unique(stratum[chosen]).tolist()}
            # Strata the random sample missed are left out (their rows count as unseen).
            post_strat = pe.evaluate(
                truth[chosen],
                predicted[chosen],
                metrics="precision",
                strata=stratum[chosen],
                stratum_sizes=sizes,
                n_samples=4_000,
                rng=rep,
            )
            out["uniform, post-stratified"].append(float(np.diff(post_strat["precision"].hdi())[0]))
        else:
            out["uniform, post-stratified"].append(1.0)
    return {k: float(np.mean(v)) for k, v in out.items()}


def labels_for(curve: dict[int, float], width: float) -> float:
    """Budget at which the mean width crosses ``width`` (log-log interpolation)."""
    budgets = np.array(sorted(curve), dtype=float)
    values = np.array([curve[int(b)] for b in budgets])
    below = np.flatnonzero(values <= width)
    if below.size == 0:
        return float("inf")
    i = int(below[0])
    if i == 0:
        return float(budgets[0])
    x0, x1 = np.log(budgets[i - 1]), np.log(budgets[i])
    y0, y1 = np.log(values[i - 1]), np.log(values[i])
    return float(np.exp(x0 + (np.log(width) - y0) * (x1 - x0) / (y1 - y0)))


def coverage(reps: int) -> tuple[float, float]:
    hits, widths_seen = 0, []
    for rep in range(reps):
        scores, truth = population(1_000 + rep, 50_000)
        plan = pe.labelling_plan(scores, 300, metric="precision", threshold=THRESHOLD, rng=rep)
        post = plan.evaluate(truth[plan.rows].astype(int), n_samples=2_000, rng=rep)["precision"]
        predicted = scores > THRESHOLD
        value = truth[predicted].mean()
        low, high = post.hdi()
        hits += low <= value <= high
        widths_seen.append(high - low)
    return hits / reps, float(np.mean(widths_seen))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--coverage-reps", type=int, default=400)
    parser.add_argument("--json")
    args = parser.parse_args()
    start = time.perf_counter()
    curves: dict[str, dict[int, float]] = {}
    print(f"{'labels':>7s} {'plan':>8s} {'uniform':>8s} {'uniform, post-stratified':>26s}")
    for budget in BUDGETS:
        row = widths(budget, args.reps)
        for name, value in row.items():
            curves.setdefault(name, {})[budget] = value
        print(
            f"{budget:7d} {row['plan']:8.4f} {row['uniform']:8.4f} "
            f"{row['uniform, post-stratified']:26.4f}"
        )
    needed = {name: labels_for(curve, TARGET_WIDTH) for name, curve in curves.items()}
    print(f"\nlabels for a mean 95% HDI width of {TARGET_WIDTH} (precision, 2% prevalence):")
    for name, value in needed.items():
        print(f"  {name:26s} {value:8.0f}  ratio plan / this = {needed['plan'] / value:.3f}")
    cov, mean_width = coverage(args.coverage_reps)
    print(
        f"\ncoverage of the realized precision by the plan's 95% HDI, budget 300: {cov:.3f} over "
        f"{args.coverage_reps} populations (mean width {mean_width:.4f})"
    )
    print(f"({time.perf_counter() - start:.0f} s)")
    if args.json:
        result: dict[str, Any] = {
            "curves": {k: {str(b): v for b, v in c.items()} for k, c in curves.items()},
            "labels_needed": needed,
            "coverage": cov,
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)


if __name__ == "__main__":
    main()
