"""Ensembles (SPEC §2.5): every statistic against a brute-force implementation (the O(m² n)
pairwise jitter included), metrics of the ensemble-mean prediction against scikit-learn, group
gap coverage in simulation, and the bootstrap helper."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score

import probeval as pe


def _entropy(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -p * np.log2(p) - (1 - p) * np.log2(1 - p)
    return np.nan_to_num(terms, nan=0.0)


def _brute_force(proba: np.ndarray, threshold: float) -> dict[str, np.ndarray]:
    m, n = proba.shape
    labels = proba > threshold
    k = labels.sum(axis=0)
    jitter = np.zeros(n)
    for i in range(m):  # every pair of models, as the definition reads
        for j in range(i + 1, m):
            jitter += labels[i] != labels[j]
    jitter /= m * (m - 1) / 2
    aleatoric = _entropy(proba).mean(axis=0)
    predictive = _entropy(proba.mean(axis=0))
    q75, q25 = np.percentile(proba, [75, 25], axis=0)
    return {
        "label_stability": np.abs(k - (m - k)) / m,
        "jitter": jitter,
        "epistemic": proba.var(axis=0),
        "std": proba.std(axis=0),
        "aleatoric": aleatoric,
        "predictive_entropy": predictive,
        "mutual_information": predictive - aleatoric,
        "iqr": q75 - q25,
        "mean_proba": proba.mean(axis=0),
    }


@pytest.mark.parametrize(("m", "n", "seed"), [(2, 50, 0), (3, 200, 1), (10, 3000, 2), (25, 77, 3)])
def test_statistics_equal_brute_force(m: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    proba = rng.random((m, n))
    # Ties at the threshold, and probabilities of exactly 0 and 1.
    special = rng.random((m, n))
    proba[special < 0.1] = 0.5
    proba[(special >= 0.1) & (special < 0.15)] = 0.0
    proba[(special >= 0.15) & (special < 0.2)] = 1.0
    report = pe.ensemble_report(proba, threshold=0.5, rng=0)
    expected = _brute_force(proba, 0.5)
    for name, values in expected.items():
        np.testing.assert_allclose(report.per_sample[name], values, rtol=1e-12, atol=1e-12)
        if name in report.statistics:
            assert report.statistics[name] == pytest.approx(values.mean(), rel=1e-12, abs=1e-14)


def test_metrics_of_the_ensemble_mean_prediction() -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 3000)
    proba = np.clip(0.35 + 0.3 * y + rng.normal(0, 0.25, (7, 3000)), 0, 1)
    report = pe.ensemble_report(proba, y, rng=1)
    predicted = proba.mean(axis=0) > 0.5
    assert report.metrics["accuracy"].observed == pytest.approx(accuracy_score(y, predicted))
    assert report.metrics["f1"].observed == pytest.approx(f1_score(y, predicted))
    assert report.metrics["selection_rate"].observed == pytest.approx(predicted.mean())
    assert report.metrics["accuracy"].exact  # Beta posteriors where the model allows
    low, high = report.metrics["f1"].hdi()
    assert low < f1_score(y, predicted) < high
    # Without labels only the selection rate has a posterior.
    unlabelled = pe.ensemble_report(proba, rng=1)
    assert list(unlabelled.metrics) == ["selection_rate"]
    json.dumps(report.to_dict())
    assert "jitter" in repr(report)


def test_groups_and_their_statistics() -> None:
    rng = np.random.default_rng(5)
    n = 2000
    groups = rng.choice(["x", "y", "z"], n, p=[0.2, 0.5, 0.3])
    y = rng.integers(0, 2, n)
    proba = np.clip(0.3 + 0.4 * y + rng.normal(0, 0.2, (5, n)), 0, 1)
    report = pe.ensemble_report(proba, y, groups=groups, rng=2)
    assert {g.reference for g in report.gaps} == {"y"}  # the largest group by default
    for name, result in report.groups.items():
        mask = groups == name
        sub = pe.ensemble_report(proba[:, mask], y[mask], rng=3)
        for stat in ("jitter", "aleatoric", "iqr"):
            assert result.statistics[stat] == pytest.approx(sub.statistics[stat])
        assert result.metrics["accuracy"].observed == pytest.approx(
            sub.metrics["accuracy"].observed
        )
    chosen = pe.ensemble_report(proba, y, groups=groups, reference_group="x", rng=2)
    kinds = {(g.group, g.metric, g.kind) for g in chosen.gaps}
    assert ("y", "selection_rate", "ratio") in kinds  # disparate impact
    assert ("z", "equalized_odds", "max_abs") in kinds
    assert len(chosen.gaps) == 2 * (4 * 2 + 1)
    table = chosen.gaps_table()
    assert set(table["decision"]) <= {"accepted", "rejected", "undecided"}
    assert report.groups_table()["n"].sum() == n


def test_gap_posteriors_cover_the_true_gap() -> None:
    """Two groups with known true rates; each replication draws labels and predictions. The 95%
    HDI of the TPR difference, the FPR difference and the selection-rate ratio should cover the
    truth in 92-98% of 400 replications (binomial sd 1.1%)."""
    rng = np.random.default_rng(2026)
    truth = {"a": (0.8, 0.10), "b": (0.7, 0.15)}  # (TPR, FPR)
    prevalence = 0.4
    sizes = {"a": 600, "b": 400}

    def selection(group: str) -> float:
        tpr, fpr = truth[group]
        return prevalence * tpr + (1 - prevalence) * fpr

    expected = {
        ("tpr", "difference"): truth["b"][0] - truth["a"][0],
        ("fpr", "difference"): truth["b"][1] - truth["a"][1],
        ("selection_rate", "ratio"): selection("b") / selection("a"),
    }
    covered = dict.fromkeys(expected, 0)
    reps = 400
    for rep in range(reps):
        labels, predictions, groups = [], [], []
        for group, size in sizes.items():
            y = rng.random(size) < prevalence
            tpr, fpr = truth[group]
            predictions.append(np.where(y, rng.random(size) < tpr, rng.random(size) < fpr))
            labels.append(y)
            groups += [group] * size
        predicted = np.concatenate(predictions)
        proba = np.tile(np.where(predicted, 0.7, 0.3), (3, 1))  # three agreeing models
        report = pe.ensemble_report(
            proba,
            np.concatenate(labels),
            groups=groups,
            reference_group="a",
            n_samples=2000,
            rng=rep,
        )
        for gap in report.gaps:
            key = (gap.metric, gap.kind)
            if key in expected:
                low, high = gap.hdi
                covered[key] += low <= expected[key] <= high
    for key, count in covered.items():
        print(f"{key}: coverage {count / reps:.3f}")
        assert 0.92 <= count / reps <= 0.98, (key, count / reps)


def test_bootstrap_ensemble_with_scikit_learn() -> None:
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(0, 1, 300) > 0).astype(int)
    proba = pe.bootstrap_ensemble(
        LogisticRegression(), X[:200], y[:200], X[200:], n_estimators=8, rng=1
    )
    assert proba.shape == (8, 100)
    assert ((proba >= 0) & (proba <= 1)).all()
    again = pe.bootstrap_ensemble(
        LogisticRegression(), X[:200], y[:200], X[200:], n_estimators=8, rng=1
    )
    np.testing.assert_array_equal(proba, again)
    assert proba.std(axis=0).mean() > 0  # the members differ
    report = pe.ensemble_report(proba, y[200:], rng=0)
    assert 0 < report.statistics["epistemic"] < 0.05
