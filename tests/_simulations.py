"""Simulated classifiers for coverage studies: realistic truths, not draws from the prior.

Drawing the truth from the model's own prior makes every prior look calibrated; these
classifiers have long-tailed class sizes, recalls around 0.8 and errors concentrated on a few
classes, as real multiclass models do. Shared by ``tests/test_multiclass_coherence.py`` and
``scripts/multiclass_prior_study.py``.
"""

from __future__ import annotations

import numpy as np


def draw_classifier(k: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A classifier's cell probabilities (K x K, rows = true class) and a sample size."""
    decay = rng.uniform(0.5, 2.0)
    prevalence = np.arange(1, k + 1, dtype=float) ** -decay
    prevalence = rng.permutation(prevalence / prevalence.sum())
    recall = rng.beta(8.0, 2.0, size=k)
    conditional = np.empty((k, k))
    for i in range(k):
        errors = rng.dirichlet(np.full(k - 1, 0.3))
        conditional[i] = np.insert(errors * (1.0 - recall[i]), i, recall[i])
    n = int(np.exp(rng.uniform(np.log(20 * k), np.log(200 * k))))
    return prevalence[:, None] * conditional, n


def per_class(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True recall, precision and F1 of every class (nan where undefined)."""
    diag = np.diag(p)
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return diag / rows, diag / cols, 2 * diag / (rows + cols)


def whole_matrix(p: np.ndarray) -> dict[str, float]:
    """True accuracy, Cohen's kappa and multiclass MCC of cell probabilities p."""
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    accuracy = float(np.trace(p))
    chance = float(rows @ cols)
    kappa = (accuracy - chance) / (1 - chance)
    mcc = (accuracy - chance) / np.sqrt((1 - cols @ cols) * (1 - rows @ rows))
    return {"accuracy": accuracy, "kappa": kappa, "mcc": float(mcc)}
