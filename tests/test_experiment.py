"""Experiments: sequential updating equals the pooled evaluation, decisions follow the HDI +
ROPE rule with the required precision, and the JSON form restores the experiment exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import probeval as pe

REFERENCE = pe.ConfusionMatrix.from_counts(tp=400, fp=40, tn=500, fn=60)


def _batches(seed: int, sizes: list[int], accuracy: float = 0.9) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        y = rng.random(n) < 0.46
        score = np.clip(np.where(y, rng.beta(5, 2, n), rng.beta(2, 5, n)), 0, 1)
        pred = np.where(rng.random(n) < accuracy, y, ~y)
        weight = rng.uniform(0.2, 3.0, n)
        out.append((y.astype(int), pred.astype(int), score, weight))
    return out


def _same(a: pe.Posterior, b: pe.Posterior) -> None:
    np.testing.assert_allclose(a.hdi(), b.hdi(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.mean(), b.mean(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.samples, b.samples, rtol=0, atol=1e-12)


METRICS = ["accuracy", "precision", "f1", "mcc", "balanced_accuracy"]


@pytest.mark.parametrize("weighted", [False, True])
def test_sequential_equals_pooled_counts(weighted: bool) -> None:
    batches = _batches(1, [120, 7, 900, 333])
    exp = pe.Experiment(METRICS, reference=REFERENCE, seed=11, n_samples=5_000)
    assert not exp.needs_rows
    for y, pred, _, w in batches:
        exp.update(y, pred, sample_weight=w if weighted else None)
    y, pred, _, w = (np.concatenate(parts) for parts in zip(*batches, strict=True))
    pooled = pe.evaluate(
        y, pred, metrics=METRICS, rng=11, n_samples=5_000, sample_weight=w if weighted else None
    )
    for metric in METRICS:
        _same(exp.posterior(metric), pooled[metric])
    assert exp.n == len(y)


def test_sequential_equals_pooled_multiclass() -> None:
    rng = np.random.default_rng(4)
    labels = ["cat", "dog", "eel"]
    exp = pe.Experiment(
        ["accuracy", "f1_macro", "mcc"], rope=(0.3, 1.0), labels=labels, seed=2, n_samples=4_000
    )
    ys, ps = [], []
    for n in (50, 400, 3):
        y = rng.choice(labels, n, p=[0.5, 0.3, 0.2])
        pred = np.where(rng.random(n) < 0.7, y, rng.choice(labels, n))
        ys.append(y)
        ps.append(pred)
        exp.update(y, pred)
    pooled = pe.evaluate(
        np.concatenate(ys),
        np.concatenate(ps),
        metrics=["accuracy", "f1_macro", "mcc"],
        labels=labels,
        rng=2,
        n_samples=4_000,
    )
    for metric in exp.metrics:
        _same(exp.posterior(metric), pooled[metric])


def test_sequential_equals_pooled_with_ranking_metrics() -> None:
    batches = _batches(2, [300, 41, 800])
    metrics = ["roc_auc", "average_precision", "recall"]
    exp = pe.Experiment(metrics, rope=(0.6, 1.0), seed=5, n_samples=3_000)
    assert exp.needs_rows
    for y, _, score, w in batches:
        exp.update(y, y_score=score, sample_weight=w)
    y, _, score, w = (np.concatenate(parts) for parts in zip(*batches, strict=True))
    pooled = pe.evaluate(y, y_score=score, metrics=metrics, rng=5, n_samples=3_000, sample_weight=w)
    for metric in metrics:
        _same(exp.posterior(metric), pooled[metric])


@pytest.fixture(scope="module")
def estimator() -> pe.LabelFreeEstimator:
    rng = np.random.default_rng(8)
    score = rng.beta(2, 3, 20_000)
    y = (rng.random(20_000) < score).astype(int)
    return pe.LabelFreeEstimator(metrics=["accuracy", "f1", "roc_auc"]).fit(y, score)


def test_sequential_equals_pooled_without_labels(estimator: pe.LabelFreeEstimator) -> None:
    rng = np.random.default_rng(9)
    exp = pe.Experiment(estimator=estimator, seed=3, n_samples=2_000)
    scores, known = [], []
    for n, share in ((2_000, 0.0), (500, 0.2), (3_000, 0.05)):
        s = rng.beta(2, 3, n)
        y = (rng.random(n) < s).astype(float)
        partial = np.where(rng.random(n) < share, y, np.nan)
        scores.append(s)
        known.append(partial)
        exp.update(y_true=partial if share else None, y_score=s)
    pooled = estimator.estimate(
        np.concatenate(scores), partial_labels=np.concatenate(known), n_samples=2_000, rng=3
    )
    for metric in exp.metrics:
        _same(exp.posterior(metric), pooled.posterior(metric))
    assert exp.summary()["n_labelled"][0] == int(np.isfinite(np.concatenate(known)).sum())
    # The default hypothesis: no worse than the estimator's reference data.
    reference = estimator.reference_posteriors(n_samples=2_000)
    assert exp.ropes["f1"] == (reference["f1"].hdi()[0], 1.0)


@pytest.mark.parametrize("mode", ["counts", "rows", "estimator"])
def test_json_round_trip_restores_the_experiment(
    mode: str, estimator: pe.LabelFreeEstimator, tmp_path: object
) -> None:
    batches = _batches(3, [200, 300, 150])
    if mode == "estimator":
        exp = pe.Experiment(estimator=estimator, seed=4, n_samples=1_000)
    elif mode == "rows":
        exp = pe.Experiment(["roc_auc", "accuracy"], rope=(0.6, 1), seed=4, n_samples=1_000)
    else:
        exp = pe.Experiment(["accuracy", "mcc"], reference=REFERENCE, seed=4, n_samples=1_000)

    def add(e: pe.Experiment, batch: tuple[np.ndarray, ...]) -> None:
        y, pred, score, _ = batch
        if mode == "estimator":
            e.update(y_true=np.where(np.arange(len(y)) % 3 == 0, y, None), y_score=score)
        elif mode == "rows":
            e.update(y, y_score=score)
        else:
            e.update(y, pred)

    for batch in batches[:2]:
        add(exp, batch)
    text = exp.to_json()
    json.loads(text)  # plain JSON
    restored = pe.Experiment.from_json(text)
    assert restored.status == exp.status
    assert restored.trajectory().to_dict() == exp.trajectory().to_dict()
    add(exp, batches[2])
    add(restored, batches[2])
    for metric in exp.metrics:
        _same(restored.posterior(metric), exp.posterior(metric))
    assert restored.summary().to_dict() == exp.summary().to_dict()


def test_status_follows_hdi_rope_and_precision() -> None:
    exp = pe.Experiment(["accuracy"], rope=(0.8, 1.0), precision=0.03, seed=0)
    rng = np.random.default_rng(0)
    history = []
    for _ in range(8):
        y = rng.random(400) < 0.5
        pred = np.where(rng.random(400) < 0.9, y, ~y)
        step = exp.update(y, pred)["accuracy"]
        post = exp.posterior("accuracy")
        decision = pe.decide(post, (0.8, 1.0), precision=0.03)
        assert step.hdi == post.hdi()
        assert step.decision == decision.status
        assert step.precision_reached == (step.width <= 0.03)
        expected = (
            decision.status if decision.final and decision.status != "undecided" else "ongoing"
        )
        assert step.status == expected
        history.append(step.status)
    assert history[0] == "ongoing"
    assert history[-1] == "accepted"
    assert exp.done


def test_rejected_when_worse_than_reference() -> None:
    exp = pe.Experiment(["accuracy", "fpr"], reference=REFERENCE, precision=0.05, seed=0)
    rng = np.random.default_rng(1)
    for _ in range(6):
        y = rng.random(500) < 0.46
        pred = np.where(rng.random(500) < 0.7, y, ~y)
        exp.update(y, pred)
    assert exp.status == {"accuracy": "rejected", "fpr": "rejected"}
    # fpr is lower-is-better: no worse means from 0 to the reference HDI's upper edge.
    low, high = exp.ropes["fpr"]
    assert low == 0.0
    assert high == pytest.approx(REFERENCE.posterior("fpr").hdi()[1], abs=1e-12)


def test_default_precision_is_the_assurance_precision() -> None:
    exp = pe.Experiment(["accuracy", "f1"], reference=REFERENCE, planned_n=800, seed=6)
    expected = pe.assurance_precision(
        "accuracy", 800, rope=exp.ropes["accuracy"], expected=REFERENCE
    )
    assert exp.precision["accuracy"] == pytest.approx(expected, abs=1e-12)
    default = pe.Experiment(["accuracy"], reference=REFERENCE, seed=6)
    assert default.precision["accuracy"] == pytest.approx(
        pe.assurance_precision(
            "accuracy", 1000, rope=default.ropes["accuracy"], expected=REFERENCE
        ),
        abs=1e-12,
    )
    assert pe.Experiment(["accuracy"], rope=(0.5, 1)).precision == {"accuracy": None}


def test_decide_reference_rope_respects_the_better_direction() -> None:
    post = REFERENCE.posterior("fnr")
    decision = pe.decide(post, reference=post)
    assert decision.rope == (0.0, post.hdi()[1])
    with pytest.raises(ValueError, match="no better direction"):
        pe.decide(REFERENCE.posterior("prevalence"), reference=REFERENCE.posterior("prevalence"))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, TypeError, "name the metrics"),
        ({"metrics": "accuracy"}, ValueError, "has no hypothesis"),
        ({"metrics": "accuracy", "rope": 0.1}, TypeError, "pair"),
        ({"metrics": "accuracy", "rope": {"f1": (0, 1)}}, ValueError, "not among"),
        ({"metrics": "accuracy", "rope": (0.9, 0.1)}, ValueError, "lo <= hi"),
        ({"metrics": "accuracy", "rope": (0, 1), "precision": 0}, ValueError, "precision"),
        ({"metrics": "accuracy", "reference": REFERENCE, "planned_n": 0}, ValueError, "planned_n"),
        ({"metrics": "accuracy", "rope": (0, 1), "seed": -1}, ValueError, "seed"),
        ({"metrics": "accuracy", "rope": (0, 1), "target": "x"}, ValueError, "target"),
        ({"metrics": "accuracy", "reference": "x"}, TypeError, "reference"),
        ({"metrics": "nope", "rope": (0, 1)}, ValueError, "nope"),
        ({"metrics": "accuracy", "rope": (0, 1), "estimator": 3}, TypeError, "estimator"),
        (
            {"metrics": "accuracy", "rope": (0, 1), "estimator": pe.LabelFreeEstimator()},
            ValueError,
            "fitted",
        ),
    ],
)
def test_bad_settings(kwargs: dict[str, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        pe.Experiment(**kwargs)  # type: ignore[arg-type]


def test_bad_batches_are_not_kept(estimator: pe.LabelFreeEstimator) -> None:
    exp = pe.Experiment(["accuracy"], rope=(0.5, 1), seed=0)
    with pytest.raises(TypeError, match="needs labels"):
        exp.update(y_score=np.array([0.2, 0.8]))
    with pytest.raises(ValueError, match="length"):
        exp.update([0, 1, 1], [0, 1])
    assert exp.n == 0
    assert exp.n_batches == 0
    with pytest.raises(ValueError, match="no data yet"):
        exp.posterior("accuracy")
    free = pe.Experiment(estimator=estimator, seed=0)
    with pytest.raises(TypeError, match="not y_pred"):
        free.update([0, 1], [0, 1], y_score=[0.2, 0.9])
    with pytest.raises(ValueError, match="y_score"):
        free.update(y_score=[0.2, 1.7])
    assert free.n == 0
    with pytest.raises(ValueError, match="format"):
        pe.Experiment.from_dict({"format": "x"})


def _plan_population() -> tuple[np.ndarray, np.ndarray, pe.LabellingPlan]:
    rng = np.random.default_rng(12)
    scores = rng.beta(0.4, 8, 20_000)
    truth = (rng.random(20_000) < scores).astype(int)
    plan = pe.labelling_plan(scores, 240, metric="precision", threshold=0.25, rng=3)
    return scores, truth, plan


@pytest.mark.parametrize("target", ["realized", "population"])
def test_design_batches_equal_the_plans_pooled_evaluation(target: str) -> None:
    _, truth, plan = _plan_population()
    exp = pe.Experiment(design=plan, rope=(0.05, 1.0), target=target, seed=8, n_samples=3_000)
    order = np.random.default_rng(1).permutation(plan.rows)
    for batch in np.array_split(order, 4):
        exp.update(truth[batch], rows=batch)
    assert exp.n == plan.budget
    pooled = plan.evaluate(truth[plan.rows], target=target, rng=8, n_samples=3_000)["precision"]
    np.testing.assert_allclose(exp.posterior("precision").samples, pooled.samples, atol=1e-12)
    again = pe.Experiment.from_json(exp.to_json())
    np.testing.assert_array_equal(
        again.posterior("precision").samples, exp.posterior("precision").samples
    )
    assert again.status == exp.status


def test_design_partial_labels_and_bad_batches() -> None:
    scores, truth, plan = _plan_population()
    exp = pe.Experiment(design=plan, rope=(0.05, 1.0), seed=8, n_samples=500)
    first = plan.rows[:100]
    exp.update(truth[first], rows=first)
    labels = np.full(plan.budget, None, dtype=object)
    labels[:100] = truth[first]
    expected = plan.evaluate(labels, target="population", rng=8, n_samples=500)["precision"]
    np.testing.assert_array_equal(exp.posterior("precision").samples, expected.samples)
    with pytest.raises(ValueError, match="already labelled"):
        exp.update(truth[first[:3]], rows=first[:3])
    outside = np.setdiff1d(np.arange(scores.size), plan.rows)[:2]
    with pytest.raises(ValueError, match="not in the plan"):
        exp.update(truth[outside], rows=outside)
    with pytest.raises(TypeError, match="experiment takes labels and their rows"):
        exp.update(truth[first], truth[first])
    with pytest.raises(TypeError, match="rows must be integer"):
        exp.update([1, 0], rows=[0.5, 1.5])
    with pytest.raises(TypeError, match="rows= goes with a design"):
        pe.Experiment(["accuracy"], rope=(0.5, 1.0)).update([1, 0], [1, 0], rows=[0, 1])
    with pytest.raises(TypeError, match="LabellingPlan"):
        pe.Experiment(design="plan", rope=(0.5, 1.0))
    assert exp.n == 100
