"""Notebook rendering: every public result object has a ``_repr_html_`` that is well-formed
HTML with its summary table (and inline SVG where it fits), made with numpy only."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import probeval as pe

from ._html_check import check_html

DATA = pe.load_demo()
Y, A, B = DATA["y_true"][:2_000], DATA["score_a"][:2_000], DATA["score_b"][:2_000]


def _estimate() -> Any:
    estimator = pe.LabelFreeEstimator(metrics=["accuracy", "f1", "roc_auc"]).fit(
        Y[:1_000], A[:1_000]
    )
    return estimator.estimate(A[1_000:], y_true=Y[1_000:], n_chunks=3, rng=0, n_samples=2_000)


def _experiment() -> Any:
    experiment = pe.Experiment(["accuracy"], rope=(0.6, 1.0), n_samples=2_000)
    experiment.update(Y[:500], y_pred=A[:500] > 0.5)
    return experiment


def _folds() -> list[pe.ConfusionMatrix]:
    return [pe.ConfusionMatrix.from_scores(Y[i::5], A[i::5]) for i in range(5)]


#: (name, builder, at least this many tables, at least this many SVGs)
RESULTS: list[tuple[str, Callable[[], Any], int, int]] = [
    (
        "Posterior exact",
        lambda: pe.ConfusionMatrix.from_counts(tp=40, fp=9, tn=45, fn=6).posterior("accuracy"),
        1,
        1,
    ),
    (
        "Posterior samples",
        lambda: pe.ConfusionMatrix.from_counts(tp=40, fp=9, tn=45, fn=6).posterior("mcc", rng=0),
        1,
        1,
    ),
    ("Evaluation", lambda: pe.evaluate(Y, y_score=A, rng=0, n_samples=2_000), 2, 3),
    ("ConfusionMatrix", lambda: pe.ConfusionMatrix.from_scores(Y, A), 1, 0),
    ("Comparison", lambda: pe.compare_paired(Y, A > 0.5, B > 0.5, rope=0.01, rng=0), 1, 1),
    ("Decision", lambda: pe.decide(pe.compare_paired(Y, A > 0.5, B > 0.5, rope=0.01, rng=0)), 1, 0),
    (
        "Ranking",
        lambda: pe.rank_models(Y, {"a": A, "b": B}, metric="roc_auc", rng=0, n_samples=500),
        2,
        2,
    ),
    ("FoldSummary", lambda: pe.aggregate_folds(_folds(), metric="f1", rng=0), 2, 1),
    (
        "FoldComparison",
        lambda: pe.compare_folds(_folds(), _folds()[::-1], metric="f1", rng=0),
        1,
        1,
    ),
    ("LabelFreeEstimate", _estimate, 1, 0),
    ("LabelFreeEstimator", lambda: pe.LabelFreeEstimator().fit(Y, A), 0, 0),
    (
        "EnsembleReport",
        lambda: pe.ensemble_report(
            np.clip(A[None, :500] + np.random.default_rng(0).normal(0, 0.05, (4, 500)), 0, 1),
            n_samples=500,
        ),
        1,
        0,
    ),
    ("CalibrationReport", lambda: pe.calibration(Y, A, rng=0, n_samples=500), 2, 1),
    ("CurveReport", lambda: pe.curves(Y, A, rng=0, n_samples=300), 0, 2),
    (
        "DecisionCurve",
        lambda: pe.decision_curve(Y, A, value={"tp": 5, "fp": -1}, rng=0, n_samples=500),
        1,
        2,
    ),
    ("ScoreSummary", lambda: pe.ScoreSummary.from_scores(Y, A), 0, 0),
    (
        "SegmentEvaluation",
        lambda: pe.evaluate_by(Y, A > 0.5, by=DATA["segment"][:2_000], rng=0, n_samples=500),
        1,
        0,
    ),
    (
        "SegmentCounts",
        lambda: pe.SegmentCounts.from_rows(Y, A > 0.5, by=DATA["segment"][:2_000]),
        0,
        0,
    ),
    ("Experiment", _experiment, 1, 0),
    ("SamplePlan", lambda: pe.plan_sample_size("accuracy", 0.05, expected=0.8), 0, 0),
    ("LabellingPlan", lambda: pe.labelling_plan(A, 100, rng=0), 1, 0),
    ("Table", lambda: pe.evaluate(Y, A > 0.5, rng=0).summary(), 1, 0),
]


@pytest.mark.parametrize(("name", "build", "tables", "svgs"), RESULTS, ids=[r[0] for r in RESULTS])
def test_every_result_renders_in_a_notebook(
    name: str, build: Callable[[], Any], tables: int, svgs: int
) -> None:
    result = build()
    text = result._repr_html_()
    assert text.startswith('<div class="pe-result"><style>')
    counts = check_html(text)
    assert counts.get("table", 0) >= tables, (name, counts)
    assert counts.get("svg", 0) >= svgs, (name, counts)
    # The plain repr stays what it was: text.
    assert "<" not in repr(result)[:1]


def test_decisions_are_coloured_by_status() -> None:
    decision = pe.decide(pe.compare_paired(Y, A > 0.5, B > 0.5, rope=0.01, rng=0))
    text = decision._repr_html_()
    assert f">{decision.status}</span>" in text
    assert "pe-badge" in text


def test_rendering_imports_nothing_heavier_than_numpy() -> None:
    code = (
        "import sys, probeval as pe\n"
        "cm = pe.ConfusionMatrix.from_counts(tp=4, fp=1, tn=5, fn=2)\n"
        "pe.evaluate(cm, rng=0)._repr_html_()\n"
        "pe.curves([0, 1, 0, 1], [0.1, 0.9, 0.4, 0.6], rng=0)._repr_html_()\n"
        "heavy = [m for m in ('matplotlib', 'pandas', 'scipy', 'xarray') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
