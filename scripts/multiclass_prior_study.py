"""Which default prior should a K-class confusion matrix get? Coverage of 95% HDIs, measured.

The multiclass model is one Dirichlet over the K x K cells. Its per-cell pseudo-count decides
how much the prior pulls small classes: with 1 per cell, every proportion metric of a class
carries K - 1 pseudo-counts of failures, so a class of 4 rows all classified right gets a
posterior recall near 0.36 at K = 10. This script draws realistic classifiers (long-tailed class
sizes, recalls around 0.8, errors concentrated on a few classes) — not truths from the prior,
which would make every prior look calibrated — and measures how often the 95% HDI covers the
true per-class recall and precision of small classes (at most 10 rows in the sample) and the
true macro-F1, at K = 3, 10 and 50.

Run: ``python scripts/multiclass_prior_study.py [--replications 400] [--candidates ...]``.
Candidates (see :func:`prior_for`): ``cell:c`` or ``cell:c/K`` pseudo-counts in every cell,
``row:w`` (or ``row:w/K``) pseudo-counts per true-class row (half on the diagonal), and
``before``, the default of probeval 0.1.0 (proportions Beta(s + 1, f + 1), other metrics
Dirichlet(1 per cell); run it with that version installed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import probeval as pe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests._simulations import draw_classifier, per_class, whole_matrix


def prior_for(candidate: str, k: int) -> float | np.ndarray:
    """``before``: 1 (the old default); ``cell:c`` or ``cell:c/K``: c (or c / K) pseudo-counts in
    every cell; ``row:w``: w pseudo-counts per true-class row, half on the diagonal and half
    spread evenly over the K - 1 other cells (so recall and precision of every class get a
    Beta(w/2, w/2) prior, whatever K)."""
    if candidate == "before":
        return 1.0
    kind, _, value = candidate.partition(":")
    if kind == "cell":
        c = float(value[:-2]) / k if value.endswith("/K") else float(value)
        return np.full((k, k), c)
    if kind == "row":
        w = float(value[:-2]) / k if value.endswith("/K") else float(value)
        prior = np.full((k, k), w / 2 / (k - 1))
        np.fill_diagonal(prior, w / 2)
        return prior
    raise ValueError(f"unknown candidate {candidate!r}")


def study(k: int, candidate: str, replications: int, seed: int) -> dict[str, tuple[int, int]]:
    """Hits and trials per target for one K and one candidate prior."""
    rng = np.random.default_rng([seed, k])
    tallies = {
        "recall, class <= 10 rows": [0, 0],
        "precision, class <= 10 rows": [0, 0],
        "recall, class > 10 rows": [0, 0],
        "f1_macro": [0, 0],
        "accuracy": [0, 0],
        "kappa": [0, 0],
        "mcc": [0, 0],
    }
    labels = list(range(k))
    for rep in range(replications):
        p, n = draw_classifier(k, rng)
        counts = rng.multinomial(n, p.ravel()).reshape(k, k).astype(float)
        cm = pe.ConfusionMatrix(counts, labels=labels)
        # A candidate is one Dirichlet over the cells; its proportion metrics are that
        # Dirichlet's exact Beta marginals. "before" is the old default (per-metric
        # Beta(s + 1, f + 1) next to a Dirichlet with 1 per cell).
        prior = prior_for(candidate, k)
        rows = counts.sum(axis=1)
        small = [i for i in range(k) if 1 <= rows[i] <= 10]
        large = [i for i in range(k) if rows[i] > 10]
        names = [f"recall[{i}]" for i in small + large] + [f"precision[{i}]" for i in small]
        names += ["f1_macro", "accuracy", "kappa", "mcc"]
        ev = pe.evaluate(cm, metrics=names, prior=prior, n_samples=2000, rng=rep)
        recall, precision, f1 = per_class(p)
        # The estimand of f1_macro: classes with neither rows nor predictions in the sample
        # count as 0 (scikit-learn's zero_division), in the observed value and the posterior.
        undefined = (rows + counts.sum(axis=0)) == 0
        target_f1 = float(np.where(undefined, 0.0, f1).mean())
        for i in small + large:
            key = "recall, class <= 10 rows" if i in small else "recall, class > 10 rows"
            low, high = ev[f"recall[{i}]"].hdi()
            tallies[key][0] += low <= recall[i] <= high
            tallies[key][1] += 1
        for i in small:
            low, high = ev[f"precision[{i}]"].hdi()
            tallies["precision, class <= 10 rows"][0] += low <= precision[i] <= high
            tallies["precision, class <= 10 rows"][1] += 1
        targets = {"f1_macro": target_f1, **whole_matrix(p)}
        for name, target in targets.items():
            low, high = ev[name].hdi()
            tallies[name][0] += low <= target <= high
            tallies[name][1] += 1
    return {key: (hits, trials) for key, (hits, trials) in tallies.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=400)
    parser.add_argument("--classes", type=int, nargs="+", default=[3, 10, 50])
    parser.add_argument(
        "--candidates",
        nargs="+",
        default=["cell:1", "cell:2/K", "row:2", "row:1", "row:0.5", "row:4/K"],
    )
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    print(f"95% HDI coverage over {args.replications} simulated classifiers per K")
    print("| K | prior | target | coverage | trials |")
    print("| --- | --- | --- | --- | --- |")
    for k in args.classes:
        for candidate in args.candidates:
            start = time.perf_counter()
            result = study(k, candidate, args.replications, args.seed)
            seconds = time.perf_counter() - start
            for target, (hits, trials) in result.items():
                coverage = hits / trials if trials else float("nan")
                print(f"| {k} | {candidate} | {target} | {coverage:.3f} | {trials} |")
            print(f"<!-- {seconds:.1f} s -->", flush=True)


if __name__ == "__main__":
    main()
