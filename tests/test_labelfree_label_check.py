"""The label check of a label-free estimate (``labels_*`` diagnostics, ``label_check``,
``label_alerts``): where production's labels put each chunk's calibration against where the
reference's drift expects it. Its pieces against closed forms and brute-force numpy; its
p-values against simulations where the reference's model holds (false alarms at their rate)
and where production moved beyond it (alarms)."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import probeval as pe
from probeval.labelfree.drift import (
    LabelConflict,
    conflict_p,
    prior_data_conflict,
    reference_error_var,
)
from probeval.labelfree.multiclass import MulticlassBins, class_shift_evidence
from tests._monitoring import (
    CHUNK,
    labelled_rows,
    simulate,
    simulated_multiclass_stream,
    simulated_streams,
)


def _partial(stream: Any, fraction: float, seed: int = 0) -> np.ndarray:
    """That share of the stream's production labels at random, the rest missing."""
    known = labelled_rows(stream, seed, fraction)
    if stream.scores.ndim == 2:  # multiclass: labels as objects, None where missing
        out = stream.labels.astype(object)
        out[~known] = None
        return np.asarray(out)
    return np.where(known, stream.labels.astype(float), np.nan)


def test_prior_data_conflict_is_the_normal_closed_form() -> None:
    """A normal prior and a normal likelihood on a fine grid: the difference of their means and
    the sum of their variances (plus each density's step², 12 each)."""
    grid = np.linspace(-3.0, 3.0, 6_001)
    centres = np.array([[0.1, 0.2, -0.4, 0.15], [-0.3, 0.05, 0.5, 0.3]])
    log_prior = np.stack([-0.5 * ((grid - m) / s) ** 2 for m, s in centres[:, :2]])
    log_likelihood = np.stack([-0.5 * ((grid - m) / s) ** 2 for m, s in centres[:, 2:]])
    difference, variance = prior_data_conflict(grid, log_prior, log_likelihood)
    step = grid[1] - grid[0]
    np.testing.assert_allclose(difference, centres[:, 2] - centres[:, 0], atol=1e-9)
    expected = centres[:, 1] ** 2 + centres[:, 3] ** 2 + step**2 / 6
    np.testing.assert_allclose(variance, expected, rtol=1e-6)


def test_reference_error_var_matches_a_draw_of_the_reference_rates() -> None:
    """The shift and tilt the labels read off the reference because its rates are estimates:
    against numpy drawing each bin's rate from its Beta (two prior rows at the bin's centre,
    as the core's rate) and reading the weighted shift and tilt off the draws. Rows per bin in
    the tens of thousands, so that the delta method's error is far below the Monte Carlo's;
    within 4 Monte Carlo standard errors of a variance (var · sqrt(2 / draws))."""
    rng = np.random.default_rng(0)
    rows = np.array([20_000, 40_000, 30_000, 25_000, 50_000, 30_000], dtype=float)
    rate = np.array([0.05, 0.15, 0.3, 0.5, 0.7, 0.9])
    positives = np.round(rows * rate)
    negatives = rows - positives
    centre = np.array([0.04, 0.16, 0.31, 0.49, 0.72, 0.88])
    labelled = np.array([30.0, 80.0, 50.0, 40.0, 90.0, 20.0])
    shift_var, tilt_var = reference_error_var(positives, negatives, centre, labelled)

    mean = (positives + 2 * centre) / (rows + 2)
    logit = np.log(mean / (1 - mean))
    draws = 200_000
    drawn = rng.beta(positives + 2 * centre, negatives + 2 * (1 - centre), (draws, rate.shape[0]))
    error = np.log(drawn / (1 - drawn)) - logit
    info = labelled * mean * (1 - mean)
    shift_weight = info / info.sum()
    apart = logit - shift_weight @ logit
    tilt_weight = info * apart / (info * apart**2).sum()
    for weight, value in ((shift_weight, shift_var), (tilt_weight, tilt_var)):
        sample = (error @ weight).var()
        assert abs(value - sample) < 4 * sample * math.sqrt(2 / draws), (value, sample)


def test_stream_z_is_standard_normal_under_its_own_model() -> None:
    """Chunks whose differences share a common part (the unseen drift, the reference's own
    rates) and have their own: the precision-weighted sum in sds of itself is N(0, 1) over
    many draws (mean and sd within 4 Monte Carlo standard errors), and without the common part
    counted it would not be. The p-values are scipy's two-sided normal ones."""
    rng = np.random.default_rng(1)
    variance = rng.uniform(0.01, 0.2, 12)
    common = 0.008
    reps = 20_000
    shared = rng.normal(0.0, math.sqrt(common), (reps, 1))
    own = rng.normal(0.0, np.sqrt(variance - common), (reps, 12))
    labelled = np.ones(12, dtype=bool)
    zs = np.array(
        [
            LabelConflict(labelled, d, variance, common, d, variance, 0.0).stream_z()
            for d in shared + own
        ]
    )
    se_mean, se_sd = 1 / math.sqrt(reps), 1 / math.sqrt(2 * reps)
    assert abs(zs[:, 0].mean()) < 4 * se_mean
    assert abs(zs[:, 0].std() - 1) < 4 * se_sd
    # The same draws with the shared part left out of the variance: too wide a spread.
    assert zs[:, 1].std() > 1 + 10 * se_sd
    z = np.array([-3.0, -0.5, 0.0, 1.2, 2.5])
    np.testing.assert_allclose(conflict_p([z]), 2 * stats.norm.sf(np.abs(z)), rtol=1e-12)
    both = conflict_p([z, z[::-1]])
    np.testing.assert_allclose(
        both, np.minimum(1, 2 * 2 * stats.norm.sf(np.maximum(np.abs(z), np.abs(z[::-1]))))
    )


def test_class_shift_evidence_matches_binomial_draws() -> None:
    """A chunk's known labels drawn at the reference's correct rates (20,000 draws): each
    class's shift beyond the common one has mean 0 and the variance the function gives,
    1 / w_j - 1 / sum(w), within 4 Monte Carlo sds; a class without labels is inf (nan-free
    otherwise), and a chunk without labels has none."""
    bins = MulticlassBins(
        n_classes=3,
        edges=np.linspace(0.1, 0.9, 5),
        predicted=np.array([0, 0, 1, 1, 2, 2]),
        correct=np.array([300.0, 900.0, 400.0, 1_200.0, 100.0, 250.0]),
        wrong=np.array([700.0, 100.0, 600.0, 300.0, 150.0, 40.0]),
        error_alpha=np.ones((6, 3)),
    )
    rate = (bins.correct + 0.5) / (bins.correct + bins.wrong + 1.0)
    known = np.array([40.0, 80.0, 30.0, 60.0, 10.0, 20.0])
    reps = 20_000
    right = np.random.default_rng(3).binomial(known.astype(int), rate, (reps, 6)).astype(float)
    counts = np.tile(known, (reps, 1))
    stats_ = (counts, counts, counts, right, known - right)
    residual, noise, beyond = class_shift_evidence(stats_, bins, 0.0)
    assert np.allclose(beyond, beyond[0])
    weight = 1.0 / noise[0]
    np.testing.assert_allclose(beyond[0], 1.0 / weight - 1.0 / weight.sum(), rtol=1e-12)
    se = beyond[0] * math.sqrt(2.0 / reps)
    assert (np.abs(residual.var(axis=0) - beyond[0]) < 4 * se).all()
    assert (np.abs(residual.mean(axis=0)) < 4 * np.sqrt(beyond[0] / reps)).all()
    # The third class's predictions unlabelled in one chunk, nothing labelled in another.
    right, wrong = right[:2].copy(), (known - right)[:2].copy()
    right[0, 4:], wrong[0, 4:] = 0.0, 0.0
    right[1], wrong[1] = 0.0, 0.0
    residual, noise, beyond = class_shift_evidence((counts[:2], 0, 0, right, wrong), bins, 0.1)
    assert np.isinf(noise[0, 2])
    assert np.isinf(beyond[0, 2])
    assert residual[0, 2] == 0.0
    assert np.isfinite(beyond[0, :2]).all()
    assert np.isinf(beyond[1]).all()
    # Labels on one class's predictions only: that class is the common shift, nothing beyond.
    right[0, 2:], wrong[0, 2:] = 0.0, 0.0
    _, noise, beyond = class_shift_evidence((counts[:2], 0, 0, right, wrong), bins, 0.1)
    assert np.isfinite(noise[0, 0])
    assert np.isinf(beyond[0]).all()


def test_conflict_p_skips_what_a_chunk_does_not_show() -> None:
    """A chunk whose labels show only some effects (a multiclass model's class without
    labelled predictions there): Bonferroni over the effects it shows, nan where none."""
    z = [np.array([2.0, np.nan, np.nan]), np.array([np.nan, 1.0, np.nan])]
    p = conflict_p(z)
    np.testing.assert_allclose(p[:2], 2 * stats.norm.sf([2.0, 1.0]), rtol=1e-12)
    assert np.isnan(p[2])
    z = [np.array([2.0]), np.array([-3.0]), np.array([0.5])]
    np.testing.assert_allclose(conflict_p(z), 3 * 2 * stats.norm.sf(3.0), rtol=1e-12)


#: A chunk's difference (logit) and its variance, as the label check takes them.
_DIFFERENCE, _VARIANCE = st.floats(-5, 5), st.floats(1e-6, 10)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.booleans(), _DIFFERENCE, _VARIANCE, _DIFFERENCE, _VARIANCE),
        min_size=1,
        max_size=30,
    ),
    common=st.floats(0, 20),
    seed=st.integers(0, 2**16),
)
def test_label_conflict_property(
    rows: list[tuple[bool, float, float, float, float]], common: float, seed: int
) -> None:
    """Any labelled chunks, differences, variances and shared part: each labelled chunk's z is
    its difference over its sd and the others' nan, the chunks together give a finite z (nan
    without a labelled chunk) whatever their order, and every p lies in [0, 1]."""
    labelled, shift, shift_var, tilt, tilt_var = (np.array(c) for c in zip(*rows, strict=True))
    conflict = LabelConflict(labelled, shift, shift_var, common, tilt, tilt_var, common)
    zs = conflict.chunk_z()
    np.testing.assert_allclose(zs[0][labelled], shift[labelled] / np.sqrt(shift_var[labelled]))
    assert np.isnan(zs[1][~labelled]).all()
    p = conflict_p(zs)
    assert ((p[labelled] >= 0) & (p[labelled] <= 1)).all()
    together = conflict.stream_z()
    if not labelled.any():
        assert all(math.isnan(z) for z in together)
        return
    assert all(math.isfinite(z) for z in together)
    order = np.random.default_rng(seed).permutation(labelled.shape[0])
    shuffled = LabelConflict(
        labelled[order], shift[order], shift_var[order], common, tilt[order], tilt_var[order]
    )
    np.testing.assert_allclose(shuffled.stream_z()[0], together[0], rtol=1e-9, atol=1e-12)
    assert 0 <= float(conflict_p([np.array(z) for z in together])) <= 1


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.booleans(),
            _DIFFERENCE,
            _VARIANCE,
            st.lists(
                st.tuples(_DIFFERENCE, st.one_of(_VARIANCE, st.just(math.inf))),
                min_size=2,
                max_size=2,
            ),
        ),
        min_size=1,
        max_size=20,
    ),
    common=st.floats(0, 5),
)
def test_label_conflict_with_classes_property(
    rows: list[tuple[bool, float, float, list[tuple[float, float]]]], common: float
) -> None:
    """A multiclass model's check: the shift, then each class (inf variance where a chunk has
    no label of its predictions). A class's z is nan where a chunk does not show it, the
    chunk's p lies in [0, 1] where it has labels, and the chunks together give a finite z per
    class that some labelled chunk shows, nan otherwise."""
    labelled = np.array([r[0] for r in rows])
    shift, shift_var = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
    classes = np.array([[c[0] for c in r[3]] for r in rows])
    classes_var = np.array([[c[1] for c in r[3]] for r in rows])
    conflict = LabelConflict(
        labelled,
        shift,
        shift_var,
        common,
        classes=classes,
        classes_var=classes_var,
        classes_common=np.full(2, common),
        class_names=("a", "b"),
    )
    zs = conflict.chunk_z()
    assert len(zs) == 3
    for j in range(2):
        shown = labelled & np.isfinite(classes_var[:, j])
        assert np.isfinite(zs[1 + j][shown]).all()
        assert np.isnan(zs[1 + j][~shown]).all()
    p = conflict_p(zs)
    assert ((p[labelled] >= 0) & (p[labelled] <= 1)).all()
    assert np.isnan(p[~labelled]).all()
    together = conflict.stream_z()
    for j in range(2):
        shown = (labelled & np.isfinite(classes_var[:, j])).any()
        assert math.isfinite(together[1 + j]) == shown


def test_labels_that_show_a_concept_shift_are_flagged() -> None:
    """5% of rows labelled in a stream whose P(y | score) moved by +0.25 logit everywhere: all
    chunks together flag it; without labels there is no check, with the pooled method none;
    the diagnostics say which chunks have labels, the JSON has the check."""
    stream = simulate("concept shift (+0.25 logit)", np.random.default_rng(3))
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(
        stream.ref_labels, stream.ref_scores
    )
    partial = _partial(stream, 0.05)
    partial[:CHUNK] = np.nan  # the first chunk has none
    result = estimator.estimate(
        stream.scores, chunk_size=CHUNK, partial_labels=partial, n_samples=200, rng=0
    )
    check = result.label_check()
    assert check is not None
    assert check["n_chunks"] == 11
    assert check["n_labelled"] == int(np.sum(~np.isnan(partial)))
    assert check["shift_z"] > 3
    assert check["p"] < 1e-3
    first, second = result.diagnostics(0), result.diagnostics(1)
    assert math.isnan(first["labels_p"])
    assert math.isnan(first["labels_shift_z"])
    assert 0 < second["labels_p"] <= 1
    assert math.isfinite(second["labels_tilt_z"])
    alerts = result.label_alerts(p=0.5)
    assert 0 not in alerts
    assert alerts == [
        i for i in range(len(result.chunks)) if result.diagnostics(i)["labels_p"] < 0.5
    ]
    labels_p = result.summary()["labels_p"]  # one row per chunk (one metric)
    assert np.isnan(labels_p[0])
    assert labels_p[-1] == result.diagnostics(len(result.chunks) - 1)["labels_p"]
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["label_check"]["p"] == check["p"]
    assert payload["chunks"][0]["diagnostics"]["labels_p"] is None

    unlabelled = estimator.estimate(stream.scores, chunk_size=CHUNK, n_samples=200, rng=0)
    assert "labels_p" not in unlabelled.summary().columns
    assert unlabelled.label_check() is None
    assert unlabelled.label_alerts() == []
    assert "labels_p" not in unlabelled.diagnostics(0)
    pooled = pe.LabelFreeEstimator(metrics=["accuracy"], method="pooled")
    pooled.fit(stream.ref_labels, stream.ref_scores)
    result = pooled.estimate(stream.scores, chunk_size=CHUNK, partial_labels=partial, rng=0)
    assert result.label_check() is None
    assert "labels_p" not in result.diagnostics(1)


def test_chunks_plot_hatches_the_chunks_whose_labels_disagree() -> None:
    pytest.importorskip("matplotlib")
    stream = simulate("concept shift (+0.25 logit)", np.random.default_rng(3), n_chunks=4)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(
        stream.ref_labels, stream.ref_scores
    )
    result = estimator.estimate(
        stream.scores, chunk_size=CHUNK, partial_labels=_partial(stream, 0.5), rng=0
    )
    assert result.label_alerts()
    axes = pe.plot.chunks(result, "accuracy")
    assert "labels unlike reference (p < 0.001)" in axes.get_legend_handles_labels()[1]


def test_multiclass_label_check_has_the_confidence_shift_and_each_class() -> None:
    """No tilt (the confidence calibration does not learn one), the common shift and each
    class's shift beyond it, in the diagnostics, the check of all chunks and its JSON."""
    stream = simulated_multiclass_stream((1.0, 1.0, 1.0), seed=0, chunks=3)
    partial = _partial(stream, 0.05)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(
        stream.ref_labels, stream.ref_scores
    )
    result = estimator.estimate(
        stream.scores, chunk_size=CHUNK, partial_labels=partial, n_samples=200, rng=0
    )
    check = result.label_check()
    assert check is not None
    assert math.isnan(check["tilt_z"])
    assert math.isfinite(check["shift_z"])
    diagnostics = result.diagnostics(0)
    assert math.isnan(diagnostics["labels_tilt_z"])
    assert 0 < diagnostics["labels_p"] <= 1
    names = [str(label) for label in np.unique(stream.ref_labels)]
    assert list(check["class_z"]) == names
    assert all(math.isfinite(z) for z in check["class_z"].values())
    for name in names:
        assert math.isfinite(diagnostics[f"labels_class_z[{name}]"])
    payload = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert set(payload["label_check"]["class_z"]) == set(names)


def test_multiclass_label_check_names_the_class_that_moved() -> None:
    """The rare class twice as common at the same scores, 5% labelled: its z stands out in
    the check of all chunks, and the CLI's warning names it."""
    from probeval.cli import _estimate_warnings

    stream = simulated_multiclass_stream((1.0, 1.0, 2.0), seed=0)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(
        stream.ref_labels, stream.ref_scores
    )
    result = estimator.estimate(
        stream.scores, chunk_size=CHUNK, partial_labels=_partial(stream, 0.05), rng=0
    )
    check = result.label_check()
    assert check is not None
    assert check["p"] < 1e-3
    rare = str(np.unique(stream.ref_labels)[-1])
    assert max(check["class_z"], key=lambda c: abs(check["class_z"][c])) == rare
    assert check["class_z"][rare] > 3
    assert any(f"class {rare} z +" in note for note in _estimate_warnings(result))


def test_cli_warns_when_the_labels_show_a_moved_calibration(tmp_path: Path) -> None:
    stream = simulate("concept shift (+0.25 logit)", np.random.default_rng(3), n_chunks=6)
    partial = _partial(stream, 0.2)

    def write(path: Path, labels: np.ndarray, scores: np.ndarray) -> Path:
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["y", "s"])
            writer.writerows(
                ("" if np.isnan(y) else int(y), s) for y, s in zip(labels, scores, strict=True)
            )
        return path

    reference = write(tmp_path / "ref.csv", stream.ref_labels.astype(float), stream.ref_scores)
    analysis = write(tmp_path / "prod.csv", partial, stream.scores)
    args = ["estimate", "--reference", str(reference), "--analysis", str(analysis)]
    args += ["--y-true", "y", "--y-score", "s", "--chunk-size", str(CHUNK), "--samples", "500"]
    run = subprocess.run(
        [sys.executable, "-m", "probeval", *args], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert "taken together show production's calibration moved" in run.stdout


# (scenario, binary): scenarios whose production moves as the reference's periods did.
_HELD = ["stable", "calibration drift", "covariate shift", "rare positives", "tilt drift (sd 0.1)"]


@pytest.mark.slow(minutes=2)
def test_label_check_false_alarms_and_alarms_in_simulation() -> None:
    """5% of rows labelled, 40 streams of 12 chunks per scenario.

    Where production moves as the reference's periods did (five scenarios, among them drift,
    covariate shift, rare positives and tilt drift), a chunk's p falls below 0.05 in at most
    5% of chunks plus 3 binomial sds (measured 0.033-0.065), and the streams' z's spread no
    wider than N(0, 1) allows (sd within 1 + 3 / sqrt(2 · 40); measured 0.77-1.15). With
    ``shift="label"`` a prevalence odds change of 3 is part of the model, not an alarm (chunks
    below 0.05: 0.058 measured), and so are labels missing by score (the highest 5% labelled:
    0.025). Where production moved beyond it: P(y | score) +0.25 logit
    in every chunk is flagged in at least 90% of streams at p < 0.001 (measured 100%); a
    ranking 10% steeper (slope times 1.1) moves the streams' tilt z to a mean above 1.5 (2.1
    measured; the chunks' own: 0.7). A multiclass model's: false alarms with and without drift
    and with ``shift="label"``, and a rare class twice as common flagged. The bounds on the
    alarms were set after measuring them."""
    reps, fraction = 40, 0.05
    chunk_bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / (12 * reps))
    spread_bound = 1 + 3 / math.sqrt(2 * reps)

    def checks(
        streams: list[Any], top: float | None = None, **kwargs: Any
    ) -> tuple[np.ndarray, list[dict[str, Any]]]:
        chunk_p, streams_check = [], []
        for stream in streams:
            estimator = pe.LabelFreeEstimator(metrics=["accuracy"], **kwargs)
            estimator.fit(stream.ref_labels, stream.ref_scores)
            partial = _partial(stream, fraction)
            if top is not None:  # each chunk's highest scores labelled instead
                partial = np.full(stream.labels.shape[0], np.nan)
                for start in range(0, stream.labels.shape[0], CHUNK):
                    order = start + np.argsort(-stream.scores[start : start + CHUNK])
                    rows = order[: int(top * CHUNK)]
                    partial[rows] = stream.labels[rows]
            result = estimator.estimate(
                stream.scores, chunk_size=CHUNK, partial_labels=partial, n_samples=100, rng=0
            )
            chunk_p += [result.diagnostics(i)["labels_p"] for i in range(len(result.chunks))]
            check = result.label_check()
            assert check is not None
            streams_check.append(check)
        return np.array(chunk_p), streams_check

    for scenario in _HELD:
        chunk_p, streams = checks(simulated_streams(scenario, reps))
        assert np.mean(chunk_p < 0.05) <= chunk_bound, scenario
        for key in ("shift_z", "tilt_z"):
            assert np.std([s[key] for s in streams]) <= spread_bound, (scenario, key)
    chunk_p, _ = checks(simulated_streams("prevalence odds x3", reps), shift="label")
    assert np.mean(chunk_p < 0.05) <= chunk_bound
    # Labels missing by score: the highest 5% of each chunk's scores labelled (measured 0.025).
    chunk_p, _ = checks(simulated_streams("stable", reps), top=0.05)
    assert np.mean(chunk_p < 0.05) <= chunk_bound
    # A multiclass model's confidence calibration, three classes, with and without drift
    # between periods (20 streams: 240 chunks; measured 0.042 and 0.062).
    for drift in (0.0, 0.12):
        chunk_p, _ = checks(
            [simulated_multiclass_stream((1.0, 1.0, 1.0), r, drift=drift) for r in range(20)]
        )
        assert np.mean(chunk_p < 0.05) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 240), drift
    # Its label shift read with shift="label", odds x3 for the rare class (measured 0.071;
    # 0.383 before the label shift's move of every bin was taken out of the common shift).
    chunk_p, _ = checks(
        [simulated_multiclass_stream((1.0, 1.0, 3.0), r) for r in range(20)], shift="label"
    )
    assert np.mean(chunk_p < 0.05) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 240)
    # The rare class twice as common at the same scores, which each class's check sees: all
    # chunks at p < 0.001 in 17 of 20 streams (9 of 20 with the common shift alone).
    _, streams = checks([simulated_multiclass_stream((1.0, 1.0, 2.0), r) for r in range(20)])
    assert np.mean([s["p"] < 1e-3 for s in streams]) >= 0.75

    _, streams = checks(simulated_streams("concept shift (+0.25 logit)", reps))
    assert np.mean([s["p"] < 1e-3 for s in streams]) >= 0.9
    steeper = [
        simulate("stable", np.random.default_rng(r), unseen=0.0, unseen_tilt=0.1)
        for r in range(reps)
    ]
    _, streams = checks(steeper)
    assert np.mean([s["tilt_z"] for s in streams]) > 1.5
