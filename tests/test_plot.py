"""Plots render with the Agg backend to non-trivial PNGs, draw on a given ``ax``, reject wrong
inputs, and the committed gallery is what scripts/make_gallery.py draws today."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
from matplotlib.figure import Figure

import probeval as pe

from ._scripts import load_script

# probeval.plot draws on matplotlib Figures directly (never pyplot), so the Agg canvas renders
# them whatever backend is configured.

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(0)
Y = RNG.integers(0, 2, 3000)
SCORE = np.clip(0.3 + 0.4 * Y + RNG.normal(0, 0.2, 3000), 0, 1)
PRED_B = (np.clip(0.35 + 0.3 * Y + RNG.normal(0, 0.25, 3000), 0, 1) > 0.5).astype(int)


def _check_png(path: Path) -> None:
    assert path.stat().st_size > 5_000
    image = mpimg.imread(path)
    assert image.ndim == 3
    assert image[..., :3].std() > 0.05  # not a blank canvas


def _save(figure: Figure, path: Path) -> Path:
    figure.savefig(path, dpi=70)
    return path


def _experiment() -> pe.Experiment:
    exp = pe.Experiment(["accuracy", "f1"], rope=(0.6, 1.0), precision=0.05, seed=0)
    for rows in np.array_split(np.arange(3000), 6):
        exp.update(Y[rows], y_score=SCORE[rows])
    return exp


def test_every_plot_renders(tmp_path: Path) -> None:
    ev = pe.evaluate(Y, y_score=SCORE, rng=0)
    cmp = pe.compare_paired(Y, SCORE > 0.5, PRED_B, metric="f1", rope=0.01, rng=0)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc"]).fit(Y[:1500], SCORE[:1500])
    result = estimator.estimate(SCORE[1500:], y_true=Y[1500:], n_chunks=4, rng=0)
    drawn = {
        "posterior": pe.plot.posterior(ev["mcc"], rope=0.05).figure,
        "exact": pe.plot.posterior(ev["accuracy"]).figure,
        "grid": pe.plot.posteriors(ev, ncols=4),
        "updates": pe.plot.updates(Y, SCORE > 0.5, metric="recall").figure,
        "updates_scores": pe.plot.updates(
            Y, y_score=SCORE, metric="roc_auc", steps=(50, 3000)
        ).figure,
        "compare": pe.plot.compare(cmp).figure,
        "chunks": pe.plot.chunks(result, "roc_auc").figure,
        "trajectory": pe.plot.trajectory(_experiment(), "f1").figure,
        "reliability": pe.plot.reliability(pe.calibration(Y, SCORE, rng=0)).figure,
        "roc": pe.plot.curve(pe.curves(Y, SCORE, n_samples=200, rng=0)).figure,
        "pr": pe.plot.curve(pe.curves(Y, SCORE, n_samples=200, rng=0), "pr").figure,
        "ranks": pe.plot.ranks(
            pe.rank_models(Y, {"a": SCORE > 0.5, "b": PRED_B, "c": SCORE > 0.6}, rng=0)
        ).figure,
        "net_benefit": pe.plot.decision_curve(pe.decision_curve(Y, SCORE, rng=0)).figure,
        "value": pe.plot.decision_curve(
            pe.decision_curve(Y, SCORE, value={"tp": 5, "fp": -1}, rng=0), "value"
        ).figure,
    }
    for name, figure in drawn.items():
        _check_png(_save(figure, tmp_path / f"{name}.png"))


def test_plots_draw_on_a_given_axes() -> None:
    figure = Figure()
    left, right = figure.subplots(1, 2)
    post = pe.ConfusionMatrix.from_counts(tp=40, fp=10, tn=45, fn=5).posterior("f1", rng=0)
    assert pe.plot.posterior(post, ax=left) is left
    cmp = pe.compare_paired(Y, SCORE > 0.5, PRED_B, rng=0)
    assert pe.plot.compare(cmp, ax=right) is right
    assert len(left.lines) >= 2  # the density and the median


def test_wrong_inputs_are_rejected() -> None:
    with pytest.raises(TypeError, match="needs a Posterior"):
        pe.plot.posterior([0.1, 0.2])
    with pytest.raises(TypeError, match="needs a Comparison"):
        pe.plot.compare("x")
    with pytest.raises(TypeError, match="needs a LabelFreeEstimate"):
        pe.plot.chunks({}, "f1")
    with pytest.raises(ValueError, match="steps must include"):
        pe.plot.updates(Y[:5], Y[:5], steps=(10,))
    with pytest.raises(ValueError, match="only Posteriors"):
        pe.plot.posteriors({"a": 1})
    with pytest.raises(TypeError, match="needs a CurveReport"):
        pe.plot.curve({})
    with pytest.raises(ValueError, match="kind"):
        pe.plot.curve(pe.curves(Y, SCORE, n_samples=20, rng=0), "det")
    with pytest.raises(TypeError, match="needs a CalibrationReport"):
        pe.plot.reliability({})
    with pytest.raises(TypeError, match="needs a Ranking"):
        pe.plot.ranks({})
    with pytest.raises(TypeError, match="needs a DecisionCurve"):
        pe.plot.decision_curve({})
    with pytest.raises(ValueError, match="kind"):
        pe.plot.decision_curve(pe.decision_curve(Y, SCORE, n_samples=20, rng=0), "roc")
    with pytest.raises(TypeError, match="needs an Experiment"):
        pe.plot.trajectory("x")
    with pytest.raises(ValueError, match="no batch yet"):
        pe.plot.trajectory(pe.Experiment(["f1"], rope=(0.5, 1.0)))
    with pytest.raises(ValueError, match="metric must be one of"):
        pe.plot.trajectory(_experiment(), "mcc")
    with pytest.raises(ValueError, match="ncols"):
        pe.plot.posteriors([pe.Posterior.from_beta(2, 3)], ncols=0)


def test_committed_gallery_is_current(tmp_path: Path) -> None:
    module = load_script("make_gallery")
    for fresh in module.build(tmp_path):
        committed = ROOT / "docs" / "gallery" / fresh.name
        assert committed.exists(), f"{committed} is missing: run scripts/make_gallery.py"
        new, old = mpimg.imread(fresh), mpimg.imread(committed)
        assert new.shape == old.shape, f"{fresh.name} changed size: run scripts/make_gallery.py"
        # Identical renders, up to anti-aliasing noise from another matplotlib build.
        differing = np.mean(np.abs(new - old).max(axis=-1) > 0.1)
        assert differing < 0.002, f"{fresh.name} is out of date: run scripts/make_gallery.py"
