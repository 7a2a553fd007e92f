"""Property-based tests: random and hostile inputs to every public entry point.

Valid inputs must give finite results within each metric's range; invalid ones must raise one
of the documented exception types — never crash, hang, return NaN silently or leak a panic.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score as ap_score
from sklearn.metrics import roc_auc_score

import probeval as pe
from probeval import _core
from probeval._util.jsonable import json_safe
from probeval.base.metrics import BINARY_METRICS

from ._classifiers import RateClassifier
from ._html_check import check_html

DOCUMENTED = (ValueError, TypeError, KeyError)

counts = st.integers(min_value=0, max_value=10**12)
priors = st.one_of(
    st.floats(min_value=1e-3, max_value=50.0), st.sampled_from(["uniform", "jeffreys"])
)
metric_lists = st.lists(st.sampled_from(BINARY_METRICS), min_size=1, max_size=6, unique=True)
hostile = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.floats(allow_nan=True), max_size=4),
    st.just(np.array([[0.5]])),
    st.just(object()),
)


def _check_posterior(post: pe.Posterior) -> None:
    low, high = post.bounds
    mean = post.mean()
    hdi = post.hdi(0.9)
    assert math.isfinite(mean) or post.metric.endswith(("ratio", "odds_ratio"))
    assert low <= hdi[0] <= hdi[1] <= high
    samples = post.samples
    assert not np.isnan(samples).any()
    assert samples.min() >= low
    assert samples.max() <= high


@given(
    tp=counts,
    fp=counts,
    tn=counts,
    fn=counts,
    metrics=metric_lists,
    prior=priors,
    joint=st.booleans(),
)
def test_posteriors_of_any_counts_are_finite_and_in_range(
    tp: int, fp: int, tn: int, fn: int, metrics: list[str], prior: Any, joint: bool
) -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
    ev = pe.evaluate(cm, metrics=metrics, prior=prior, joint=joint, n_samples=300, rng=0)
    for post in ev.values():
        _check_posterior(post)


@given(
    data=st.data(),
    k=st.integers(2, 8),
    prior=priors,
    joint=st.booleans(),
)
def test_multiclass_posteriors_of_any_counts_are_finite_and_in_range(
    data: st.DataObject, k: int, prior: Any, joint: bool
) -> None:
    cells = data.draw(st.lists(counts, min_size=k * k, max_size=k * k))
    cm = pe.ConfusionMatrix(np.array(cells).reshape(k, k))
    names = data.draw(
        st.lists(
            st.sampled_from(
                ["accuracy", "balanced_accuracy", "mcc", "kappa"]
                + [
                    f"{b}_{a}"
                    for b in ("precision", "recall", "f1", "jaccard", "npv")
                    for a in ("macro", "weighted", "micro")
                ]
                + [
                    f"{b}[{i}]"
                    for b in ("precision", "recall", "specificity", "f1")
                    for i in range(k)
                ]
            ),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    # With two classes the first four are binary names, the others multiclass-style ones, and
    # joint=True refuses to mix the two kernels (documented).
    binary_style = {"accuracy", "balanced_accuracy", "mcc", "kappa"}
    if k == 2 and joint and 0 < len(binary_style.intersection(names)) < len(names):
        with pytest.raises(ValueError, match="not a mix"):
            pe.evaluate(cm, metrics=names, prior=prior, joint=joint, n_samples=200, rng=0)
        return
    ev = pe.evaluate(cm, metrics=names, prior=prior, joint=joint, n_samples=200, rng=0)
    for post in ev.values():
        low, high = post.bounds
        assert np.isfinite(post.samples).all()
        assert post.samples.min() >= low
        assert post.samples.max() <= high
        hdi = post.hdi(0.9)
        assert low <= hdi[0] <= hdi[1] <= high


@given(
    y=st.lists(st.integers(0, 1), min_size=1, max_size=60),
    data=st.data(),
    threshold=st.floats(0.0, 1.0),
)
def test_evaluate_on_random_labels_and_scores(
    y: list[int], data: st.DataObject, threshold: float
) -> None:
    scores = data.draw(st.lists(st.floats(0.0, 1.0), min_size=len(y), max_size=len(y)))
    weights = data.draw(st.none() | st.lists(st.floats(0.0, 5.0), min_size=len(y), max_size=len(y)))
    if weights is not None and not any(weights):
        with pytest.raises(ValueError, match="sample_weight is 0 for every row"):
            pe.evaluate(y, y_score=scores, sample_weight=weights)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = pe.evaluate(
            y, y_score=scores, threshold=threshold, sample_weight=weights, n_samples=200, rng=1
        )
    # The one warning there may be: scores of one class have no ROC AUC (documented).
    for warning in caught:
        assert "holds one class only" in str(warning.message), warning.message
    w = [1.0] * len(y) if weights is None else weights
    if len({label for label, weight in zip(y, w, strict=True) if weight > 0}) == 2:
        assert not caught  # both classes carry weight
    expected_total = sum(weights) if weights is not None else len(y)
    assert ev.confusion.total == pytest.approx(expected_total, rel=1e-12, abs=1e-12)
    for post in ev.values():
        _check_posterior(post)


@given(
    a=st.floats(1e-3, 1e12),
    b=st.floats(1e-3, 1e12),
    ci=st.floats(0.01, 0.999),
)
def test_exact_beta_intervals_are_ordered_and_hold_their_mass(
    a: float, b: float, ci: float
) -> None:
    low, high = _core.beta_hdi(a, b, ci)
    assert 0.0 <= low <= high <= 1.0
    lower, upper = _core.beta_eti(a, b, ci)
    assert 0.0 <= lower <= upper <= 1.0
    below = _core.beta_cdf(np.array([low]), a, b)[0]
    above = _core.beta_sf(np.array([high]), a, b)[0]
    pdf = _core.beta_pdf(np.array([low, high]), a, b)
    # Mass within the resolution of the end points (density times a few ulps).
    resolution = float(np.sum(np.where(np.isfinite(pdf), pdf, 0.0)) * 8 * np.spacing(1.0)) + 1e-9
    if low > 0.0 and high < 1.0:
        assert abs(1.0 - below - above - ci) <= resolution


@given(samples=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=300), ci=st.floats(0.01, 0.99))
def test_sample_hdi_matches_brute_force(samples: list[float], ci: float) -> None:
    data = np.array(samples)
    low, high = _core.sample_hdi(data, ci)
    ordered = np.sort(data)
    n = len(ordered)
    k = max(1, min(n, math.ceil(ci * n - 1e-9 * max(ci * n, 1))))
    widths = ordered[k - 1 :] - ordered[: n - k + 1]
    i = int(np.argmin(widths))
    assert (low, high) == (ordered[i], ordered[i + k - 1])


@given(samples=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=200), grid=st.integers(2, 600))
def test_kde_is_a_density(samples: list[float], grid: int) -> None:
    estimate = pe.kde(samples, grid_size=grid)
    assert np.all(estimate.density >= 0)
    if estimate.grid.shape[0] == 1:  # point mass: no resolvable spread
        assert estimate.bandwidth == 0.0
        assert np.isinf(estimate.density[0])
        return
    assert np.isfinite(estimate.density).all()
    assert (
        min(samples) - 5 * estimate.bandwidth
        <= estimate.mode
        <= max(samples) + 5 * estimate.bandwidth
    )
    if grid >= 200:
        # Coarse output grids under-resolve narrow bumps; fine ones integrate to 1.
        assert abs(estimate.integral() - 1.0) < 0.02


@given(value=hostile)
def test_hostile_values_for_every_parameter_of_evaluate(value: Any) -> None:
    y = [0, 1, 1, 0]
    calls = [
        lambda: pe.evaluate(value, [0, 1, 1, 1]),
        lambda: pe.evaluate(y, value),
        lambda: pe.evaluate(y, y_score=value),
        lambda: pe.evaluate(y, y, n_samples=value),
        lambda: pe.evaluate(y, y, prior=value),
        lambda: pe.evaluate(y, y, metrics=value),
        lambda: pe.evaluate(y, y, rng=value),
        lambda: pe.evaluate(y, y, sample_weight=value),
        lambda: pe.evaluate(y, y_score=[0.1, 0.9, 0.8, 0.3], threshold=value),
        lambda: pe.evaluate(y, y, zero_division=value),
        lambda: pe.evaluate(y, y).summary(ci=value),
        lambda: pe.evaluate(y, y_score=[0.1, 0.9, 0.8, 0.3], max_bins=value),
        lambda: pe.evaluate(y, y_score=[0.1, 0.9, 0.8, 0.3], score_prior=value),
        lambda: pe.evaluate([0, 1, 2], y_score=value),
    ]
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


@given(value=hostile)
def test_hostile_values_for_confusion_matrix_and_posterior(value: Any) -> None:
    post = pe.ConfusionMatrix.from_counts(tp=3, fp=1, tn=4, fn=2).posterior("f1", rng=0)
    calls = [
        lambda: pe.ConfusionMatrix.from_counts(tp=value, fp=1, tn=1, fn=1),
        lambda: pe.ConfusionMatrix(value),
        lambda: pe.ConfusionMatrix.from_predictions(value, value),
        lambda: pe.ConfusionMatrix.from_scores([0, 1], value),
        lambda: post.hdi(value),
        lambda: post.eti(value),
        lambda: post.quantile(value),
        lambda: post.prob_above(value),
        lambda: post.pdf(value),
        lambda: pe.Posterior.from_samples(value),
        lambda: pe.Posterior.from_beta(value, 1.0),
        lambda: pe.kde(value),
        lambda: pe.kde([0.1, 0.2], bandwidth=value),
        lambda: pe.kde([0.1, 0.2], grid_size=value),
    ]
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


@given(
    d=st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=200),
    eps=st.floats(0.0, 0.5),
)
def test_comparison_probabilities_are_consistent(d: list[float], eps: float) -> None:
    diff = np.array(d)
    a = pe.Posterior.from_samples(diff, bounds=None)
    b = pe.Posterior.from_samples(np.zeros_like(diff), bounds=None)
    c = pe.compare(a, b, rope=eps)
    for value in (c.p_direction, c.p_rope, c.p_sig, c.p_sig_pos, c.p_sig_neg):
        assert 0.0 <= value <= 1.0
    assert c.p_rope + c.p_sig_pos + c.p_sig_neg == pytest.approx(1.0)
    assert c.p_direction >= 0.5 or np.mean(diff == 0) > 0
    decision = c.decide(0.9)
    assert decision.status in ("accepted", "rejected", "undecided")


@given(
    samples=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=300),
    ci=st.floats(0.05, 0.99),
)
def test_multimodal_regions_are_ordered_and_disjoint(samples: list[float], ci: float) -> None:
    regions = pe.hdi(samples, ci, multimodal=True, bounds=(0, 1))
    assert regions
    flat = [v for region in regions for v in region]
    assert flat == sorted(flat)
    assert flat[0] >= 0.0
    assert flat[-1] <= 1.0


@given(
    metric=st.sampled_from([*BINARY_METRICS, "roc_auc", "average_precision", "not_a_metric"]),
    samples=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=200),
    ci=st.one_of(st.floats(0.01, 0.999), hostile),
)
def test_no_worse_rope_spans_from_the_reference_edge_to_the_best_value(
    metric: str, samples: list[float], ci: Any
) -> None:
    """Any reference posterior: a ROPE inside the metric's bounds, from the reference HDI's worse
    edge to the best value; a metric with no better direction or a bad ``ci`` is refused."""
    reference = pe.Posterior(metric, samples=np.array(samples))
    try:
        low, high = pe.no_worse_rope(reference, ci)
    except DOCUMENTED:
        return
    hdi = reference.hdi(ci)
    assert 0.0 <= low <= high <= 1.0
    better = pe.metric_info(metric).better if metric in pe.available_metrics() else "higher"
    assert (low, high) == ((hdi[0], 1.0) if better == "higher" else (0.0, hdi[1]))


@given(value=hostile)
def test_hostile_values_for_no_worse_rope(value: Any) -> None:
    with contextlib.suppress(*DOCUMENTED):
        pe.no_worse_rope(value)


@given(value=hostile)
def test_hostile_values_for_inference(value: Any) -> None:
    a = pe.ConfusionMatrix.from_counts(tp=3, fp=1, tn=4, fn=2).posterior("f1", rng=0)
    calls = [
        lambda: pe.compare(a, a, rope=value),
        lambda: pe.compare(a, value),
        lambda: pe.compare(a, a, n_samples=value),
        lambda: pe.decide(a, rope=value),
        lambda: pe.decide(a, rope=(0, 1), precision=value),
        lambda: pe.decide(a, rope=(0, 1), ci=value),
        lambda: pe.compare_paired([0, 1, 1], [0, 1, 0], value),
        lambda: pe.compare_paired([0, 1, 1], [0, 1, 0], [1, 1, 0], metric=value),
        lambda: pe.hdi(value),
        lambda: pe.hdi([0.1, 0.5, 0.9], value, multimodal=True),
    ]
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


@given(value=hostile)
def test_hostile_values_for_score_summaries(value: Any) -> None:
    summary = pe.ScoreSummary.from_scores([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3])
    calls = [
        lambda: pe.ScoreSummary.from_scores(value, [0.1, 0.2]),
        lambda: pe.ScoreSummary.from_scores([0, 1], value),
        lambda: pe.ScoreSummary.from_scores([0, 1], [0.1, 0.2], sample_weight=value),
        lambda: pe.ScoreSummary.from_scores([0, 1], [0.1, 0.2], pos_label=value),
        lambda: pe.ScoreSummary(value, [1.0], [0.0]),
        lambda: pe.ScoreSummary([0.5], value, [0.0]),
        lambda: pe.ScoreSummary.from_dict(value),
        lambda: summary.merge(value),
        lambda: summary.binned(value),
        lambda: summary.observed(value),
        lambda: summary.posterior(value),
        lambda: summary.posterior(max_bins=value),
        lambda: summary.posterior(prior=value),
        lambda: summary.posterior(n_samples=value),
        lambda: summary.posterior(rng=value),
    ]
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


score_lists = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0, 0.5, 1.0])),
        st.floats(0.0, 10.0),
    ),
    min_size=1,
    max_size=80,
)


@given(rows=score_lists, cut=st.integers(0, 80), max_bins=st.one_of(st.none(), st.integers(2, 9)))
def test_score_summaries_match_sklearn_merge_and_stay_in_range(
    rows: list[tuple[int, float, float]], cut: int, max_bins: int | None
) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score

    y = np.array([r[0] for r in rows])
    s = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    whole = pe.ScoreSummary.from_scores(y, s, sample_weight=w)
    cut = min(cut, len(rows))
    if 0 < cut < len(rows):
        a = pe.ScoreSummary.from_scores(y[:cut], s[:cut], sample_weight=w[:cut])
        b = pe.ScoreSummary.from_scores(y[cut:], s[cut:], sample_weight=w[cut:])
        merged = a + b
        np.testing.assert_array_equal(merged.values, whole.values)
        np.testing.assert_allclose(merged.positives, whole.positives, rtol=1e-12, atol=1e-12)
    pos, neg = w[y == 1].sum(), w[y == 0].sum()
    if not (whole.n_positives > 0 and whole.n_negatives > 0):
        with pytest.raises(ValueError, match="both classes"):
            whole.posterior()
        return
    if pos > 1e-9 * (pos + neg) and neg > 1e-9 * (pos + neg):
        # scikit-learn's own sums lose weights below ~1e-16 of the total, so compare away
        # from that corner.
        auc = roc_auc_score(y, s, sample_weight=w)
        assert whole.roc_auc() == pytest.approx(auc, abs=1e-9)
        ap = average_precision_score(y, s, sample_weight=w)
        assert whole.average_precision() == pytest.approx(ap, abs=1e-9)
    binned = whole.binned(max_bins)
    assert binned.n_positives == pytest.approx(whole.n_positives)
    for post in whole.posteriors(max_bins=max_bins, n_samples=300, rng=2).values():
        _check_posterior(post)


@given(
    classes=st.lists(st.integers(0, 2), min_size=3, max_size=40),
    max_bins=st.sampled_from([None, 2, 5, 2048]),
    data=st.data(),
)
def test_multiclass_score_posteriors_are_finite_and_in_range(
    classes: list[int], max_bins: int | None, data: st.DataObject
) -> None:
    n = len(classes)
    flat = data.draw(st.lists(st.floats(0.0, 1.0), min_size=3 * n, max_size=3 * n))
    scores = np.array(flat).reshape(n, 3)
    weights = data.draw(st.none() | st.lists(st.floats(0.0, 5.0), min_size=n, max_size=n))
    metrics = ["roc_auc_macro", "roc_auc_weighted", "average_precision[1]", "accuracy"]
    w = np.ones(n) if weights is None else np.array(weights)
    present = np.bincount(classes, weights=w, minlength=3) > 0
    call = lambda: pe.evaluate(  # noqa: E731
        classes,
        y_score=scores,
        labels=[0, 1, 2],
        metrics=metrics,
        sample_weight=weights,
        max_bins=max_bins,
        n_samples=200,
        rng=3,
    )
    if not present.all():  # a class without rows (or without weight): no one-vs-rest AUC
        # (no weight at all: nothing to evaluate)
        with pytest.raises(ValueError, match=r"every class|has no rows|0 for every row"):
            call()
        return
    ev = call()
    for post in ev.values():
        _check_posterior(post)


@pytest.mark.parametrize("max_bins", [None, 2, 5, 2048])
def test_a_class_held_by_one_row_of_tiny_weight(max_bins: int | None) -> None:
    """Found by a longer hypothesis run: class 2's only row weighs 2.5e-10, which leaves the
    joined quantities' correlation badly conditioned; its factor without pivoting broke down
    ("correlation must be positive semi-definite"). Every bin count now gives finite
    posteriors on the observed values, those scikit-learn measures."""
    classes = [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    scores = np.zeros((11, 3))
    scores[9, 1] = scores[9, 2] = 1.0
    weights = [2.541693916774489e-10, 0, 0, 0, 0, 0, 0, 0, 1.0, 1.0, 2.5]
    ev = pe.evaluate(
        classes,
        y_score=scores,
        labels=[0, 1, 2],
        metrics=["roc_auc_macro", "roc_auc_weighted", "average_precision[1]"],
        sample_weight=weights,
        max_bins=max_bins,
        n_samples=200,
        rng=3,
    )
    for post in ev.values():
        _check_posterior(post)
    y = np.array(classes)
    per_class = [roc_auc_score(y == c, scores[:, c], sample_weight=weights) for c in range(3)]
    assert ev["roc_auc_macro"].observed == pytest.approx(np.mean(per_class), abs=1e-12)
    ap = ap_score(y == 1, scores[:, 1], sample_weight=weights)
    assert ev["average_precision[1]"].observed == pytest.approx(ap, abs=1e-12)


@given(
    classes=st.lists(st.integers(0, 2), min_size=3, max_size=40),
    weighted=st.booleans(),
    data=st.data(),
)
def test_ordered_multiclass_score_posteriors_are_finite_and_in_range(
    classes: list[int], weighted: bool, data: st.DataObject
) -> None:
    """The coarse-bins-in-order kernel of a multiclass backtest (label-free ``y_true=``), on
    any scores (ties, equal rows), weights and classes: finite draws in range, the exact
    values at the counts."""
    from probeval.base.metrics import MetricSpec
    from probeval.labels.scores import multiclass_score_posteriors

    n = len(classes)
    flat = data.draw(st.lists(st.floats(0.0, 1.0), min_size=3 * n, max_size=3 * n))
    scores = np.array(flat).reshape(n, 3)
    codes = np.array(classes)
    weights = (
        np.array(data.draw(st.lists(st.floats(0.01, 5.0), min_size=n, max_size=n)))
        if weighted
        else np.ones(n)
    )
    specs = [
        MetricSpec("roc_auc_macro", "roc_auc", "scores", "macro"),
        MetricSpec("roc_auc[1]", "roc_auc", "scores", "class", 1),
        MetricSpec("average_precision_weighted", "average_precision", "scores", "weighted"),
        MetricSpec("average_precision[2]", "average_precision", "scores", "class", 2),
    ]
    call = lambda ordered: multiclass_score_posteriors(  # noqa: E731
        codes, scores, weights, specs, max_bins=None, n_samples=200, seed=3, ordered=ordered
    )
    if len(set(classes)) < 3:
        with pytest.raises(ValueError, match="every class"):
            call((4, 8))
        return
    exact, ordered = call(None), call((4, 8))
    for spec in specs:
        _check_posterior(ordered[spec.name])
        assert ordered[spec.name].observed == exact[spec.name].observed


@given(
    reference=st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), min_size=1, max_size=60),
    production=st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), min_size=1, max_size=60),
    labelled=st.booleans(),
    n_bins=st.integers(1, 12),
    threshold=st.floats(0.0, 1.0),
    target=st.sampled_from(["population", "realized"]),
    calibration=st.sampled_from(["reference", "perfect"]),
    chunk_size=st.one_of(st.none(), st.integers(1, 20)),
    unseen_drift=st.floats(0.0, 2.0),
    drift_per_shift=st.floats(0.0, 2.0),
    shift=st.sampled_from(["covariate", "label"]),
)
def test_label_free_estimates_are_finite_and_in_range(
    reference: list[tuple[float, bool]],
    production: list[tuple[float, bool]],
    labelled: bool,
    n_bins: int,
    threshold: float,
    target: str,
    calibration: str,
    chunk_size: int | None,
    unseen_drift: float,
    drift_per_shift: float,
    shift: str,
) -> None:
    options = {
        "n_bins": n_bins,
        "threshold": threshold,
        "metrics": ["accuracy", "f1", "mcc", "roc_auc", "fpr", "average_precision"],
        "calibration": calibration,
        "unseen_drift": unseen_drift,
        "drift_per_shift": drift_per_shift,
        "shift": shift,
    }
    if shift == "label" and calibration == "perfect":
        # A label shift moves the reference's calibration: none to move.
        with pytest.raises(ValueError, match='calibration="reference"'):
            pe.LabelFreeEstimator(**options)
        return
    estimator = pe.LabelFreeEstimator(**options)
    labels = [r[1] for r in reference]
    if len(set(labels)) == 1:
        # A reference of one class cannot calibrate anything: refused at fit.
        with pytest.raises(ValueError, match="holds only the class"):
            estimator.fit(labels, [r[0] for r in reference])
        return
    estimator.fit(labels, [r[0] for r in reference])
    scores = np.array([r[0] for r in production])
    truth = np.array([r[1] for r in production]) if labelled else None
    result = estimator.estimate(
        scores, target=target, chunk_size=chunk_size, n_samples=100, rng=1, y_true=truth
    )
    assert sum(c.n_rows for c in result.chunks) == len(scores)
    for chunk in result.chunks:
        assert result.bin_counts(chunk.index).sum() == chunk.n_rows
        for name in result.metrics:
            _check_posterior(result.posterior(name, chunk.index))
        if truth is None:
            continue
        # With labels: the ranking metrics' measured values (scikit-learn's) and posteriors.
        y, s = truth[chunk.rows], scores[chunk.rows]
        for name, oracle in (("roc_auc", roc_auc_score), ("average_precision", ap_score)):
            with_labels = result.realized_posterior(name, chunk.index)
            if y.all() or not y.any():
                assert with_labels is None
                continue
            assert with_labels is not None
            _check_posterior(with_labels)
            assert result.realized(name, chunk.index) == pytest.approx(oracle(y, s), abs=1e-12)
    # The backtest: a labelled, realized estimate's; anything else refused by name.
    if truth is None or target != "realized":
        with pytest.raises(ValueError, match=r"y_true|realized"):
            result.backtest()
    else:
        table = result.backtest()
        assert list(table["metric"]) == result.metrics
        assert np.all((table["n_chunks"] >= 0) & (table["n_chunks"] <= len(result.chunks)))
        for column in ("coverage", "mae", "z_mean", "z_sd"):
            values = np.asarray(table[column], dtype=np.float64)
            defined = table["n_chunks"] > (1 if column == "z_sd" else 0)
            assert not np.isinf(values).any(), column
            assert np.all(np.isnan(values[~defined])), column
        coverage = np.asarray(table["coverage"], dtype=np.float64)
        assert np.all(np.isnan(coverage) | ((coverage >= 0) & (coverage <= 1)))
        # The JSON payload's copy: None where the table says nan.
        payload = result.to_dict()["backtest"]
        for row, name in enumerate(result.metrics):
            for column in ("coverage", "mae", "z_mean", "z_sd"):
                value = float(table[column][row])
                assert (payload[name][column] is None) == np.isnan(value), (name, column)
    # Round trip through JSON keeps the estimator.
    again = pe.LabelFreeEstimator.from_dict(estimator.to_dict())
    np.testing.assert_array_equal(again.bin_edges, estimator.bin_edges)


@given(
    reference=st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), min_size=2, max_size=80),
    production=st.lists(
        st.tuples(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, np.nan])),
        min_size=1,
        max_size=80,
    ),
    periods=st.one_of(
        st.none(), st.integers(1, 12), st.lists(st.integers(0, 3), min_size=80, max_size=80)
    ),
    n_bins=st.integers(1, 12),
    threshold=st.floats(0.0, 1.0),
    target=st.sampled_from(["population", "realized"]),
    chunk_size=st.one_of(st.none(), st.integers(1, 20)),
    unseen_drift=st.floats(0.0, 2.0),
    coarse=st.booleans(),
    shift=st.sampled_from(["covariate", "label"]),
)
def test_label_free_estimates_with_partial_labels_and_periods_are_finite(
    reference: list[tuple[float, bool]],
    production: list[tuple[float, float]],
    periods: int | list[int] | None,
    n_bins: int,
    threshold: float,
    target: str,
    chunk_size: int | None,
    unseen_drift: float,
    coarse: bool,
    shift: str,
) -> None:
    """The paths labels open (production's course and tilt, the bins' offsets) and declared
    periods, on any scores (ties, a tenth's steps), any mix of known and missing labels: finite
    posteriors in range and finite diagnostics."""
    ref_scores = np.array([r[0] for r in reference])
    ref_labels = np.array([r[1] for r in reference])
    scores = np.array([p[0] for p in production])
    partial = np.array([p[1] for p in production])
    if coarse:
        ref_scores, scores = np.round(ref_scores, 1), np.round(scores, 1)
    if len(set(ref_labels.tolist())) == 1:
        return  # refused at fit (test_label_free_estimates_are_finite_and_in_range)
    declared: int | np.ndarray | None = None
    if isinstance(periods, list):
        declared = np.array(periods[: len(reference)])
    elif periods is not None:
        declared = min(periods, len(reference))
    estimator = pe.LabelFreeEstimator(
        n_bins=n_bins,
        threshold=threshold,
        unseen_drift=unseen_drift,
        metrics=["accuracy", "precision", "recall", "f1", "roc_auc", "average_precision"],
        shift=shift,
    ).fit(ref_labels, ref_scores, periods=declared)
    result = estimator.estimate(
        scores, target=target, chunk_size=chunk_size, n_samples=100, rng=1, partial_labels=partial
    )
    assert sum(c.n_rows for c in result.chunks) == len(scores)
    for chunk in result.chunks:
        for name in result.metrics:
            _check_posterior(result.posterior(name, chunk.index))
        diagnostics = result.diagnostics(chunk.index)
        has_labels = diagnostics["n_labelled"] > 0
        for key, value in diagnostics.items():
            # The label check is there for the chunks with labels, and only for them.
            expected = has_labels or not key.startswith("labels_")
            assert math.isfinite(value) == expected, (key, value)
        if "labels_p" in diagnostics and has_labels:
            assert 0.0 <= diagnostics["labels_p"] <= 1.0
    check = result.label_check()
    if check is not None:
        assert check["n_labelled"] == int(np.sum(~np.isnan(partial)))
        assert 0.0 <= check["p"] <= 1.0
        assert math.isfinite(check["shift_z"])
    # Strict JSON throughout: diagnostics without a value, and the estimates' unknown
    # observed values, are null, not NaN.
    json.dumps(result.to_dict(), allow_nan=False)


PAYLOAD = (
    pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc"])
    .fit([0, 1] * 50, np.linspace(0.01, 0.99, 100))
    .to_dict()
)


@given(key=st.sampled_from(sorted(PAYLOAD)), value=hostile)
def test_a_tampered_payload_is_refused_or_works(key: str, value: Any) -> None:
    _check_tampered_payload(PAYLOAD, key, value, np.array([0.2, 0.7]))


def _check_tampered_payload(payload: dict[str, Any], key: str, value: Any, scores: Any) -> None:
    # Each key of a saved estimator replaced by a hostile value: a clear error, or (if the
    # value happens to be valid) an estimator that estimates.
    try:
        estimator = pe.LabelFreeEstimator.from_dict({**payload, key: value})
    except (ValueError, TypeError):
        return
    _check_posterior(estimator.estimate(scores, n_samples=50, rng=1).posterior("accuracy"))


def _multiclass_payload() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    scores = rng.dirichlet(np.ones(3), size=150)
    labels = np.array([rng.choice(3, p=row) for row in scores])
    return (
        pe.LabelFreeEstimator(metrics=["accuracy", "f1_macro", "roc_auc_macro"])
        .fit(labels, scores)
        .to_dict()
    )


MULTICLASS_PAYLOAD = _multiclass_payload()
MULTICLASS_SCORES = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]])


@given(key=st.sampled_from(sorted(MULTICLASS_PAYLOAD)), value=hostile)
def test_a_tampered_multiclass_payload_is_refused_or_works(key: str, value: Any) -> None:
    # The same for a multiclass estimator's payload (its own keys; the one-vs-rest parts are
    # binary payloads, checked above).
    _check_tampered_payload(MULTICLASS_PAYLOAD, key, value, MULTICLASS_SCORES)


@given(value=hostile)
def test_hostile_values_for_label_free_estimation(value: Any) -> None:
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit([0, 1, 1, 0], [0.1, 0.9, 0.6, 0.3])
    calls = [
        lambda: pe.LabelFreeEstimator(n_bins=value),
        lambda: pe.LabelFreeEstimator(threshold=value),
        lambda: pe.LabelFreeEstimator(metrics=value),
        lambda: pe.LabelFreeEstimator(calibration=value),
        lambda: pe.LabelFreeEstimator(unseen_drift=value),
        lambda: pe.LabelFreeEstimator(drift_per_shift=value),
        lambda: pe.LabelFreeEstimator(shift=value),
        lambda: pe.LabelFreeEstimator().fit(value, [0.5]),
        lambda: pe.LabelFreeEstimator().fit([1], value),
        lambda: estimator.estimate(value),
        lambda: estimator.estimate([0.5], target=value),
        lambda: estimator.estimate([0.5], chunk_size=value),
        lambda: estimator.estimate([0.5], n_chunks=value),
        lambda: estimator.estimate([0.5], period="D", timestamps=value),
        lambda: estimator.estimate([0.5], period=value, timestamps=[np.datetime64("2024-01-01")]),
        lambda: estimator.estimate([0.5], y_true=value),
        lambda: pe.LabelFreeEstimator.from_dict(value),
    ]
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


MULTICLASS_FITTED = pe.LabelFreeEstimator.from_dict(MULTICLASS_PAYLOAD)
MULTICLASS_LABEL_SHIFT = pe.LabelFreeEstimator.from_dict({**MULTICLASS_PAYLOAD, "shift": "label"})


@given(
    production=st.lists(
        st.tuples(
            st.tuples(*[st.floats(0.01, 1.0)] * 3),
            st.one_of(st.none(), st.sampled_from([0, 1, 2])),
        ),
        min_size=1,
        max_size=60,
    ),
    chunk_size=st.sampled_from([None, 7, 25]),
    shift=st.sampled_from(["covariate", "label"]),
)
def test_multiclass_label_check_with_any_partial_labels(
    production: list[tuple[tuple[float, float, float], int | None]],
    chunk_size: int | None,
    shift: str,
) -> None:
    """A multiclass model's label check on any scores and any mix of known and missing labels:
    each chunk's ``labels_p`` lies in [0, 1] exactly where it has labels (nan elsewhere), its
    classes' z's are finite or nan (a class none of whose labelled rows it predicted), the
    check of all chunks counts every label, and ``to_dict()`` is strict JSON."""
    scores = np.array([row for row, _ in production])
    scores /= scores.sum(axis=1, keepdims=True)
    partial = np.array([label for _, label in production], dtype=object)
    estimator = MULTICLASS_FITTED if shift == "covariate" else MULTICLASS_LABEL_SHIFT
    result = estimator.estimate(
        scores, chunk_size=chunk_size, partial_labels=partial, n_samples=50, rng=1
    )
    known = int(sum(label is not None for label in partial))
    for chunk in result.chunks:
        diagnostics = result.diagnostics(chunk.index)
        if not known:  # no label anywhere: no check
            assert not any(key.startswith("labels_") for key in diagnostics)
            continue
        labelled = diagnostics["n_labelled"] > 0
        assert (0.0 <= diagnostics["labels_p"] <= 1.0) == labelled
        classes = [v for k, v in diagnostics.items() if k.startswith("labels_class_z[")]
        assert len(classes) == 3
        assert all(math.isnan(z) or (labelled and math.isfinite(z)) for z in classes)
    check = result.label_check()
    assert (check is None) == (known == 0)
    if check is not None:
        assert check["n_labelled"] == known
        assert 0.0 <= check["p"] <= 1.0
    json.dumps(result.to_dict(), allow_nan=False)


@given(value=hostile)
def test_hostile_values_for_multiclass_label_free_estimation(value: Any) -> None:
    calls = [
        lambda: pe.LabelFreeEstimator().fit([0, 1, 2, 1], value),
        lambda: pe.LabelFreeEstimator().fit(value, MULTICLASS_SCORES),
        lambda: MULTICLASS_FITTED.estimate(value),
        lambda: MULTICLASS_FITTED.estimate(MULTICLASS_SCORES, y_true=value),
        lambda: MULTICLASS_FITTED.estimate(MULTICLASS_SCORES, partial_labels=value),
        lambda: MULTICLASS_FITTED.estimate(MULTICLASS_SCORES, target=value),
        lambda: MULTICLASS_FITTED.estimate(MULTICLASS_SCORES, chunk_size=value),
        lambda: MULTICLASS_LABEL_SHIFT.estimate(value),
        lambda: MULTICLASS_LABEL_SHIFT.estimate(MULTICLASS_SCORES, partial_labels=value),
    ]
    # A valid draw count runs the estimate (up to 10^8 draws): only refusals are tested here.
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        calls.append(lambda: MULTICLASS_FITTED.estimate(MULTICLASS_SCORES, n_samples=value))
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


@given(
    tp=counts,
    fp=counts,
    tn=counts,
    fn=counts,
    reviewed=st.lists(st.integers(0, 10**9), min_size=4, max_size=4),
    fractions=st.lists(st.floats(0.0, 1.0), min_size=4, max_size=4),
    prior=st.tuples(st.floats(1e-3, 100.0), st.floats(1e-3, 100.0)),
    metrics=metric_lists,
    joint=st.booleans(),
)
def test_audited_posteriors_are_finite_and_in_range(
    tp: int,
    fp: int,
    tn: int,
    fn: int,
    reviewed: list[int],
    fractions: list[float],
    prior: tuple[float, float],
    metrics: list[str],
    joint: bool,
) -> None:
    wrong = [int(r * f) for r, f in zip(reviewed, fractions, strict=True)]
    audit = pe.LabelAudit(
        reviewed[0],
        wrong[0],
        reviewed[1],
        wrong[1],
        reviewed[2],
        wrong[2],
        reviewed[3],
        wrong[3],
        prior_tp=prior,
        prior_fp=prior[::-1],
    )
    cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
    ev = pe.evaluate(cm, metrics=metrics, audit=audit, joint=joint, n_samples=100, rng=2)
    for post in ev.values():
        _check_posterior(post)


@given(value=hostile)
def test_hostile_values_for_label_audits(value: Any) -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=3, fp=1, tn=4, fn=2)
    calls = [
        lambda: pe.LabelAudit(value, 0, 10, 1),
        lambda: pe.LabelAudit(10, value, 10, 1),
        lambda: pe.LabelAudit(10, 0, 10, 1, reviewed_tn=value),
        lambda: pe.LabelAudit(10, 0, 10, 1, prior_tp=value),
        lambda: pe.LabelAudit(10, 0, 10, 1).rate_posterior(value),
        lambda: cm.posterior("f1", audit=value),
        lambda: pe.evaluate(cm, audit=value),
    ]
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


@given(
    m=st.integers(2, 6),
    data=st.data(),
    threshold=st.floats(0.0, 1.0),
    with_labels=st.booleans(),
    with_groups=st.booleans(),
)
def test_ensemble_reports_are_finite_and_in_range(
    m: int, data: st.DataObject, threshold: float, with_labels: bool, with_groups: bool
) -> None:
    n = data.draw(st.integers(1, 30))
    values = data.draw(
        st.lists(
            st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, threshold])),
            min_size=m * n,
            max_size=m * n,
        )
    )
    proba = np.array(values).reshape(m, n)
    y = data.draw(st.lists(st.booleans(), min_size=n, max_size=n)) if with_labels else None
    groups = (
        data.draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n)) if with_groups else None
    )
    report = pe.ensemble_report(proba, y, threshold=threshold, groups=groups, n_samples=100, rng=1)
    for name in ("label_stability", "jitter", "aleatoric", "predictive_entropy", "iqr", "std"):
        values_ = report.per_sample[name]
        assert np.isfinite(values_).all()
        assert (values_ >= 0).all()
        assert (values_ <= 1 + 1e-12).all()
    assert (report.per_sample["mutual_information"] >= 0).all()
    for post in report.metrics.values():
        _check_posterior(post)
    for gap in report.gaps:
        low, high = gap.hdi
        assert low <= high
        assert np.isfinite([low, high]).all()


X = np.arange(40.0).reshape(20, 2)
Y = np.array([0, 1] * 10)


@given(value=hostile)
def test_hostile_values_for_ensembles(value: Any) -> None:
    proba = np.array([[0.2, 0.7, 0.5], [0.4, 0.9, 0.1]])
    calls = [
        lambda: pe.ensemble_report(value),
        lambda: pe.ensemble_report(proba, value),
        lambda: pe.ensemble_report(proba, threshold=value),
        lambda: pe.ensemble_report(proba, groups=value),
        lambda: pe.ensemble_report(proba, groups=["a", "b", "a"], reference_group=value),
        lambda: pe.ensemble_report(proba, rope=value),
        lambda: pe.ensemble_report(proba, ratio_rope=value),
        lambda: pe.ensemble_report(proba, ci=value),
        lambda: pe.ensemble_report(proba, n_samples=value),
        lambda: pe.bootstrap_ensemble(RateClassifier(), X, Y, X, n_estimators=value),
        lambda: pe.bootstrap_ensemble(RateClassifier(), X, Y, X, fraction=value),
        lambda: pe.bootstrap_ensemble(RateClassifier(), value, Y, X),
        lambda: pe.bootstrap_ensemble(RateClassifier(), X, value, X),
        lambda: pe.bootstrap_ensemble(RateClassifier(), X, Y, value),
        lambda: pe.bootstrap_ensemble(value, X, Y, X),
    ]
    for call in calls:
        with contextlib.suppress(*DOCUMENTED):
            call()


def _check_result(result: Any) -> None:
    """A call that did not raise must return something usable: no NaN where a value is due."""
    if isinstance(result, pe.Posterior):
        _check_posterior(result)
    elif isinstance(result, tuple) and all(isinstance(v, float) for v in result):
        assert not any(math.isnan(v) for v in result)
    elif isinstance(result, dict):
        for value in result.values():
            if isinstance(value, float):
                assert not math.isnan(value)


def _attempt(*calls: Any) -> None:
    for call in calls:
        try:
            result = call()
        except DOCUMENTED:
            continue
        _check_result(result)


@given(value=hostile)
def test_hostile_values_for_quick_paths(value: Any) -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=3, fp=1, tn=4, fn=2)
    _attempt(
        lambda: pe.metric_interval("precision", tp=value, fp=1),
        lambda: pe.metric_interval("precision", tp=3, fp=1, ci=value),
        lambda: pe.metric_interval("precision", tp=3, fp=1, prior=value),
        lambda: pe.metric_interval("precision", tp=3, fp=1, kind=value),
        lambda: pe.metric_interval(value, tp=3, fp=1),
        lambda: pe.metric_summary("f1", tp=3, fp=1, tn=value, fn=2, n_samples=100, rng=0),
        lambda: pe.metric_summary("f1", tp=3, fp=1, tn=4, fn=2, n_samples=value, rng=0),
        lambda: pe.metric_summary("f1", tp=3, fp=1, tn=4, fn=2, n_samples=100, beta=value),
        lambda: pe.metric_summary("f1", tp=3, fp=1, tn=4, fn=2, n_samples=100, rng=value),
        lambda: pe.vs_random(cm, "f1", rope=value, n_samples=200, rng=0),
        lambda: pe.vs_random(cm, value, n_samples=200, rng=0),
        lambda: pe.vs_random(value, "f1", n_samples=200, rng=0),
        lambda: pe.eti(value),
        lambda: pe.eti([0.1, 0.5, 0.9], value),
        lambda: pe.metric_info(value),
    )


@given(value=hostile)
def test_hostile_values_for_segments(value: Any) -> None:
    y = [0, 1, 1, 0, 1, 0]
    p = [0, 1, 0, 0, 1, 1]
    by = ["a", "a", "b", "b", "c", "c"]
    counts = pe.SegmentCounts.from_rows(y, p, by=by)
    _attempt(
        lambda: pe.evaluate_by(value, p, by=by, n_samples=50, rng=0),
        lambda: pe.evaluate_by(y, value, by=by, n_samples=50, rng=0),
        lambda: pe.evaluate_by(y, p, by=value, n_samples=50, rng=0),
        lambda: pe.evaluate_by(y, p, by=by, n_samples=value, rng=0),
        lambda: pe.evaluate_by(y, p, by=by, n_samples=50, prior=value),
        lambda: pe.evaluate_by(y, p, by=by, n_samples=50, ci=value),
        lambda: pe.evaluate_by(y, p, by=by, n_samples=50, metrics=value),
        lambda: pe.evaluate_by(counts=value, n_samples=50, rng=0),
        lambda: pe.evaluate_by(counts=counts.counts, segments=value, n_samples=50, rng=0),
        lambda: pe.SegmentCounts.from_dict(value),
        lambda: pe.SegmentCounts(value, [0, 1], counts.counts),
        lambda: counts + value,
    )


@given(
    cells=st.lists(st.tuples(counts, counts, counts, counts).map(list), min_size=1, max_size=12),
    metrics=metric_lists,
    prior=priors,
)
def test_segment_summaries_are_finite_and_in_range(
    cells: list[list[int]], metrics: list[str], prior: Any
) -> None:
    matrices = np.array([[[tn, fp], [fn, tp]] for tp, fp, tn, fn in cells], dtype=float)
    result = pe.evaluate_by(
        counts=matrices, metrics=metrics, prior=prior, n_samples=200, rng=0, summaries_only=True
    )
    for name in metrics:
        info = pe.metric_info(name)
        table = result[name]
        low, high = info.lower, info.upper
        for key in ("mean", "hdi_low", "hdi_high"):
            values = table[key]
            finite = values[np.isfinite(values)]
            assert not np.isnan(values).any(), (name, key, values)
            assert (finite >= low - 1e-12).all(), (name, key)
            assert (finite <= high + 1e-12).all(), (name, key)
        assert (table["hdi_low"] <= table["hdi_high"]).all()


@given(
    tp=counts, fp=counts, prior=st.floats(min_value=1e-3, max_value=50.0), ci=st.floats(0.01, 0.999)
)
def test_metric_interval_is_an_ordered_probability_interval(
    tp: int, fp: int, prior: float, ci: float
) -> None:
    for kind in ("hdi", "eti"):
        low, high = pe.metric_interval("precision", tp=tp, fp=fp, prior=prior, ci=ci, kind=kind)
        assert 0.0 <= low <= high <= 1.0


@given(value=hostile)
def test_hostile_values_for_result_objects(value: Any) -> None:
    """Methods of the objects probeval returns validate their arguments like the functions."""
    y = [0, 1, 1, 0, 1, 0]
    pred = [0, 1, 0, 0, 1, 1]
    ev = pe.evaluate(y, pred, n_samples=100, rng=0)
    post = ev["f1"]
    comparison = pe.compare(post, ev["accuracy"], n_samples=100, rng=1)
    segments = pe.evaluate_by(y, pred, by=["a", "a", "b", "b", "c", "c"], n_samples=50, rng=2)
    cm = pe.ConfusionMatrix.from_predictions(y, pred)
    _attempt(
        lambda: ev[value],
        lambda: ev.summary(ci=value),
        lambda: ev.get(value),
        lambda: post.interval(value),
        lambda: post.width(value),
        lambda: post.prob_below(value),
        lambda: post.cdf(value),
        lambda: post.kde(bandwidth=value),
        lambda: post.random_baseline(n_samples=value),
        lambda: post.interval(0.9, kind=value),
        lambda: comparison.hdi(value),
        lambda: comparison.eti(value),
        lambda: comparison.decide(value),
        lambda: comparison.summary(ci=value),
        lambda: segments.posterior(value, "f1"),
        lambda: segments.posterior("a", value),
        lambda: cm.observed(value),
        lambda: cm.posterior(value),
        lambda: cm.posterior("f1", prior=value, n_samples=50),
        lambda: cm.posterior("f1", n_samples=50, zero_division=value),
        lambda: comparison.decide(0.9, precision=value),
        lambda: pe.ConfusionMatrix.from_dict(value),
        lambda: pe.Prior(value).dirichlet(np.ones((2, 2))),
    )


LF_FITTED = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc"]).fit(
    [0, 1] * 50, np.linspace(0.01, 0.99, 100)
)
LF_ESTIMATE = LF_FITTED.estimate(np.linspace(0.05, 0.95, 40), n_chunks=2, n_samples=50, rng=0)
LF_BACKTEST = LF_FITTED.estimate(
    np.linspace(0.05, 0.95, 40),
    y_true=np.arange(40) % 2,
    target="realized",
    n_chunks=2,
    n_samples=50,
    rng=0,
)
DECISION_CURVE = pe.decision_curve(
    [0, 1, 1, 0, 1, 0], [0.1, 0.8, 0.6, 0.4, 0.9, 0.3], n_samples=50, rng=0
)


def _experiment_with_a_batch() -> pe.Experiment:
    exp = pe.Experiment(["accuracy"], rope=(0.5, 1.0), n_samples=50, seed=0)
    exp.update([0, 1, 1, 0], [0, 1, 0, 0])
    return exp


EXPERIMENT = _experiment_with_a_batch()


def _diagnostics_of_chunk(chunk: Any) -> dict[str, float] | None:
    # A chunk index out of range is an IndexError, as a sequence's (tests/test_bad_input.py).
    try:
        return LF_ESTIMATE.diagnostics(chunk)
    except IndexError as error:
        if "out of range" not in str(error):
            raise
        return None


@given(value=hostile)
def test_hostile_values_for_the_other_methods(value: Any) -> None:
    """The methods the tests above do not reach: label-free results and the fitted
    estimator's reference, decision-curve values, an experiment's trajectory, a posterior's
    density sketch, priors."""
    post = LF_ESTIMATE.reference_posterior("accuracy")
    _attempt(
        lambda: LF_ESTIMATE.score_shift_alerts(p=value),
        lambda: LF_ESTIMATE.label_alerts(p=value),
        lambda: _diagnostics_of_chunk(value),
        lambda: LF_ESTIMATE.reference_posterior(value),
        lambda: LF_ESTIMATE.to_pandas(ci=value),
        lambda: LF_BACKTEST.backtest(ci=value),
        lambda: LF_FITTED.reference_posteriors(value, n_samples=50),
        lambda: LF_FITTED.reference_posteriors(["accuracy"], n_samples=value),
        lambda: LF_FITTED.reference_posteriors(["f1"], n_samples=50, beta=value),
        lambda: LF_FITTED.reference_posteriors(["precision"], n_samples=50, zero_division=value),
        lambda: pe.LabelFreeEstimator().fit_summary(value),
        lambda: DECISION_CURVE.value_at(value),
        lambda: EXPERIMENT.trajectory(value),
        lambda: post.density_svg(band=value),
        lambda: post.density_svg(width=value),
        lambda: post.density_svg(height=value),
        lambda: pe.Prior(1.0).updated(value),
        # A per-cell prior: a valid but large K would allocate K x K (the memory guard's).
        lambda: pe.Prior(np.full((3, 3), 0.5)).pseudo_counts(value),
    )


@given(
    batches=st.lists(
        st.lists(
            st.tuples(st.booleans(), st.booleans(), st.floats(0.0, 5.0)), min_size=1, max_size=30
        ),
        min_size=1,
        max_size=5,
    ),
    metric=st.sampled_from(["accuracy", "f1", "mcc", "recall"]),
    rope=st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)).map(sorted),
    precision=st.one_of(st.none(), st.floats(1e-3, 1.0)),
)
def test_experiments_equal_their_pooled_evaluation(
    batches: list[list[tuple[bool, bool, float]]],
    metric: str,
    rope: list[float],
    precision: float | None,
) -> None:
    rows = [row for batch in batches for row in batch]
    if sum(w for _, _, w in rows) == 0:
        return
    exp = pe.Experiment([metric], rope=tuple(rope), precision=precision, seed=1, n_samples=200)
    for batch in batches:
        y, pred, w = (np.array(column) for column in zip(*batch, strict=True))
        if w.sum() == 0:
            with contextlib.suppress(ValueError):  # a batch of zero weight is refused
                exp.update(y, pred, sample_weight=w)
            continue
        step = exp.update(y, pred, sample_weight=w)[metric]
        assert step.status in ("accepted", "rejected", "ongoing")
        assert step.hdi[0] <= step.hdi[1]
    if exp.n_batches == 0:
        return
    kept = [b for b in batches if sum(w for _, _, w in b) > 0]
    y, pred, w = (np.array(column) for column in zip(*[r for b in kept for r in b], strict=True))
    pooled = pe.evaluate(y, pred, metrics=[metric], sample_weight=w, rng=1, n_samples=200)[metric]
    _check_posterior(exp.posterior(metric))
    np.testing.assert_allclose(exp.posterior(metric).hdi(), pooled.hdi(), rtol=0, atol=1e-12)
    assert pe.Experiment.from_json(exp.to_json()).status == exp.status


@given(value=hostile)
def test_hostile_values_for_experiments_and_planning(value: Any) -> None:
    calls = [
        lambda: pe.Experiment(value, rope=(0.5, 1.0)),
        lambda: pe.Experiment(["accuracy"], rope=value),
        lambda: pe.Experiment(["accuracy"], rope=(0.5, 1.0), precision=value),
        lambda: pe.Experiment(["accuracy"], reference=value),
        lambda: pe.Experiment(["accuracy"], rope=(0.5, 1.0), planned_n=value),
        lambda: pe.Experiment(["accuracy"], rope=(0.5, 1.0), seed=value),
        lambda: pe.Experiment(["accuracy"], rope=(0.5, 1.0), prior=value, n_samples=9).update(
            [0, 1], [0, 1]
        ),
        lambda: pe.Experiment(["accuracy"], rope=(0.5, 1.0), n_samples=9).update(value, [0, 1]),
        lambda: pe.Experiment.from_dict(value),
        lambda: pe.Experiment.from_json(str(value)),
        lambda: pe.assurance_precision("accuracy", value, rope=(0.5, 1.0)),
        lambda: pe.assurance_precision("accuracy", 10, rope=value),
        lambda: pe.assurance_precision("accuracy", 10, rope=(0.5, 1.0), expected=value),
        lambda: pe.assurance_precision("accuracy", 10, rope=(0.5, 1.0), assurance=value),
        lambda: pe.plan_sample_size(value, 0.1, expected=0.8),
        lambda: pe.plan_sample_size("accuracy", value, expected=0.8),
        lambda: pe.plan_sample_size("accuracy", 0.1, expected=value, n_max=1_000),
        lambda: pe.plan_sample_size("accuracy", 0.1, expected=0.8, n_max=value),
    ]
    # A valid simulation count runs a (slow) simulated plan: only refusals are tested here.
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        calls.append(
            lambda: pe.plan_sample_size("f1", 0.3, expected=CM_PLAN, n_sims=value, n_max=100)
        )
    for call in calls:
        with contextlib.suppress(*DOCUMENTED, OSError):
            result = call()
            if isinstance(result, float):
                assert 0.0 < result <= 1.0


CM_PLAN = pe.ConfusionMatrix.from_counts(tp=30, fp=3, tn=60, fn=7)


@given(
    metric=st.sampled_from(["accuracy", "precision", "recall", "specificity"]),
    width=st.floats(0.02, 0.6),
    expected=st.one_of(
        st.floats(0.02, 0.98),
        st.tuples(st.floats(1.0, 300.0), st.floats(1.0, 300.0)),
    ),
    assurance=st.floats(0.05, 0.99),
    ci=st.floats(0.5, 0.99),
)
# Found by CI (2026-12-03): a skewed design near 0.015, where a rule that checked a reach of
# some sqrt(n) sizes beyond the crossing planned sizes that larger ones missed.
@example(metric="accuracy", width=0.0234375, expected=(2.0, 129.0), assurance=0.3125, ci=0.75)
@example(metric="accuracy", width=0.03, expected=0.85, assurance=0.8, ci=0.95)
@example(metric="accuracy", width=0.3125, expected=0.9375, assurance=0.875, ci=0.875)
def test_exact_sample_plans_start_where_every_larger_size_reaches_the_assurance(
    metric: str,
    width: float,
    expected: float | tuple[float, float],
    assurance: float,
    ci: float,
) -> None:
    """A rate's plan is exact (a value or a Beta posterior as the design): its curve's
    probabilities are probabilities, and the planned size is the smallest from which every
    size reaches the assurance: the size before it misses, and every size from it to twice
    it (up to 2,000 more) reaches it, each probability computed on its own (the probability
    saw-tooths with the size, so the bisection's crossing alone is not the answer)."""
    from probeval.experiment.planning import _as_design, _BetaLaw, _exact_probability

    design: float | pe.Posterior = (
        pe.Posterior.from_beta(*expected, metric=metric, rng=0)
        if isinstance(expected, tuple)
        else expected
    )
    plan = pe.plan_sample_size(metric, width, expected=design, assurance=assurance, ci=ci)
    data = plan.to_dict()
    sizes, probability = np.asarray(data["curve_n"]), np.asarray(data["curve_probability"])
    assert np.all((probability >= 0.0) & (probability <= 1.0 + 1e-12))
    assert np.all(np.diff(sizes) > 0)
    assert plan.n is not None
    # The curve: the bisection's sizes, 24 spread out and the plan's own (not the sizes the
    # saw-tooth check read, hundreds near a large n).
    assert plan.n in sizes
    assert sizes.size <= 80
    law = _as_design(metric, design, None, None)
    assert isinstance(law, _BetaLaw)
    reached = [
        _exact_probability(m, width, law, ci) >= assurance
        for m in range(max(1, plan.n - 1), plan.n + min(plan.n, 2_000) + 1)
    ]
    assert all(reached[1:] if plan.n > 1 else reached)
    assert plan.n == 1 or not reached[0]


@given(
    scores=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=200),
    budget=st.integers(1, 300),
    metric=st.sampled_from(["precision", "recall", "f1", "accuracy", "npv", "mcc"]),
    threshold=st.floats(0.0, 0.99),
    n_bins=st.integers(1, 12),
    labels_seed=st.integers(0, 2**32 - 1),
)
def test_labelling_plans_are_valid_samples_with_proper_posteriors(
    scores: list[float],
    budget: int,
    metric: str,
    threshold: float,
    n_bins: int,
    labels_seed: int,
) -> None:
    y_score = np.array(scores)
    try:
        plan = pe.labelling_plan(y_score, budget, metric=metric, threshold=threshold, n_bins=n_bins)
    except ValueError as error:
        if "does not depend on any stratum" not in str(error):
            raise
        return
    # Rows are distinct, within the population, at most the budget, in their strata.
    assert len(set(plan.rows.tolist())) == plan.budget <= budget
    assert plan.rows.max() < y_score.size
    assert sum(plan.allocation.values()) == plan.budget
    for h, n in plan.allocation.items():
        assert 0 <= n <= plan.stratum_sizes[h]
    predicted = (y_score[plan.rows] > plan.threshold).astype(int)
    expected = [plan.stratum_predictions[h] for h in plan.strata.tolist()]
    assert predicted.tolist() == expected
    truth = np.random.default_rng(labels_seed).random(plan.budget) < y_score[plan.rows]
    for target in ("realized", "population"):
        try:
            post = plan.evaluate(truth.astype(int), target=target, n_samples=200, rng=0)[metric]
        except ValueError as error:
            if "depends on strata with no labelled row" not in str(error):
                raise
            continue
        _check_posterior(post)


@given(
    rows=st.lists(
        st.tuples(st.booleans(), st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(0, 5)),
        min_size=2,
        max_size=60,
    ),
    rope=st.floats(0.0, 0.5),
    metric=st.sampled_from(["roc_auc", "average_precision"]),
)
def test_paired_auc_is_a_proper_pair_of_posteriors(
    rows: list[tuple[bool, float, float, float]], rope: float, metric: str
) -> None:
    y, a, b, w = (np.array(c) for c in zip(*rows, strict=True))
    try:
        cmp = pe.compare_paired(
            y,
            y_score_a=a,
            y_score_b=b,
            metric=metric,
            rope=rope,
            sample_weight=w,
            n_samples=200,
            rng=0,
        )
    except ValueError as error:  # one class only, or no weight on a class
        if not any(word in str(error) for word in ("binary", "class", "weight")):
            raise
        return
    for post in (cmp.a, cmp.b):
        _check_posterior(post)
    diff = cmp.difference.samples
    assert np.all((diff >= -1.0) & (diff <= 1.0))
    assert 0.0 <= cmp.p_rope <= 1.0


@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 2),
            st.lists(st.floats(0, 1), min_size=3, max_size=3),
            st.lists(st.floats(0, 1), min_size=3, max_size=3),
        ),
        min_size=3,
        max_size=50,
    ),
    metric=st.sampled_from(["roc_auc_macro", "roc_auc_weighted", "average_precision_macro"]),
)
def test_paired_multiclass_scores_give_proper_posteriors(
    rows: list[tuple[int, list[float], list[float]]], metric: str
) -> None:
    y = np.array([r[0] for r in rows])
    a, b = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
    try:
        cmp = pe.compare_paired(y, y_score_a=a, y_score_b=b, metric=metric, n_samples=200, rng=0)
    except ValueError as error:  # fewer than three classes among the rows
        if not any(word in str(error) for word in ("columns", "binary", "class")):
            raise
        return
    for post in (cmp.a, cmp.b):
        _check_posterior(post)
    same = pe.compare_paired(y, y_score_a=a, y_score_b=a, metric=metric, n_samples=50, rng=0)
    assert np.all(same.difference.samples == 0.0)


@given(
    rows=st.lists(
        st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()),
        min_size=1,
        max_size=80,
    ),
    metric=st.sampled_from(["accuracy", "f1", "mcc", "fpr", "precision"]),
    rope=st.floats(0.0, 0.3),
    prior=st.sampled_from([None, 0.0, 0.5, 2.0]),
)
def test_rank_posteriors_are_proper(
    rows: list[tuple[bool, bool, bool, bool]], metric: str, rope: float, prior: float | None
) -> None:
    y, a, b, c = (np.array(col) for col in zip(*rows, strict=True))
    try:
        ranking = pe.rank_models(
            y,
            {"a": a, "b": b, "c": c},
            metric=metric,
            rope=rope,
            prior=prior,
            n_samples=300,
            rng=0,
        )
    except ValueError as error:  # prior 0 with an empty cell, or one-class labels
        if not any(w in str(error) for w in ("binary", "prior", "class")):
            raise
        return
    probabilities = ranking.rank_probabilities()
    np.testing.assert_allclose(probabilities.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-12)
    assert not np.isnan(ranking.samples).any()
    assert np.all(ranking.p_better() + ranking.p_better().T + ranking.p_rope() <= 1 + 1e-12)
    ranks = ranking.expected_rank()
    assert sorted(ranks) == ["a", "b", "c"]
    assert all(1.0 <= r <= 3.0 for r in ranks.values())
    assert sum(ranks.values()) == pytest.approx(6.0)


@given(
    rows=st.lists(st.tuples(st.booleans(), st.floats(0.0, 1.0)), min_size=1, max_size=80),
    n_bins=st.integers(1, 15),
    strategy=st.sampled_from(["quantile", "uniform"]),
)
def test_calibration_reports_are_proper(
    rows: list[tuple[bool, float]], n_bins: int, strategy: str
) -> None:
    y, s = (np.array(c) for c in zip(*rows, strict=True))
    report = pe.calibration(y, s, n_bins=n_bins, strategy=strategy, n_samples=200, rng=0)
    table = report.bins()
    assert sum(table["n"]) == len(rows)
    low, high = np.asarray(table["hdi_low"]), np.asarray(table["hdi_high"])
    assert np.all((low >= 0) & (low <= high) & (high <= 1))
    for post in (report.ece, report.ece_perfect, report.brier):
        assert np.all((post.samples >= 0) & (post.samples <= 1))
    assert np.all(np.isfinite(report.log_loss.samples))
    assert 0.0 <= report.p_miscalibrated <= 1.0


@given(
    rows=st.lists(
        st.tuples(st.booleans(), st.floats(-1e3, 1e3), st.floats(0.0, 3.0)), min_size=2, max_size=80
    ),
    level=st.floats(0.01, 0.99),
    operating=st.one_of(st.just(math.nan), st.floats(-0.5, 1.5)),
)
def test_curve_bands_are_proper(
    rows: list[tuple[bool, float, float]], level: float, operating: float
) -> None:
    y, s, w = (np.array(c) for c in zip(*rows, strict=True))
    try:
        report = pe.curves(y, s, sample_weight=w, n_samples=100, rng=0)
    except ValueError as error:  # one class only (or no weight on one)
        if "both classes" not in str(error) and "weight" not in str(error):
            raise
        return
    for band in (report.roc_band(level), report.pr_band(level)):
        low, median, high = (np.asarray(band[k]) for k in ("low", "median", "high"))
        assert np.all((low >= 0) & (low <= median + 1e-12) & (median <= high + 1e-12))
        assert np.all(high <= 1 + 1e-12)
    for name, read in (
        ("precision", report.recall_at_precision),
        ("recall", report.precision_at_recall),
    ):
        if not 0.0 < operating < 1.0:
            with pytest.raises(ValueError, match=f"{name} must be strictly between 0 and 1"):
                read(operating)
            continue
        post = read(operating)
        assert np.all((post.samples >= 0) & (post.samples <= 1))
    assert 0.0 <= report.p_operating_point(0.0, precision=0.5, recall=0.5) <= 1.0


@given(
    values=st.lists(
        st.tuples(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60)),
        min_size=2,
        max_size=8,
    ),
    method=st.sampled_from(["random", "fixed", "correlated_t"]),
    metric=st.sampled_from(["accuracy", "f1", "mcc", "fpr"]),
)
def test_fold_aggregates_are_proper(
    values: list[tuple[int, int, int, int]], method: str, metric: str
) -> None:
    folds = [pe.ConfusionMatrix.from_counts(tp=a, fp=b, tn=c, fn=d) for a, b, c, d in values]
    summary = pe.aggregate_folds(folds, metric=metric, method=method, n_samples=300, rng=0)
    _check_posterior(summary.posterior)
    if summary.predictive is not None:
        _check_posterior(summary.predictive)
    if summary.tau is not None:
        assert np.all(summary.tau.samples >= 0)
    heterogeneity = summary.heterogeneity
    assert math.isnan(heterogeneity["i2"]) or 0.0 <= heterogeneity["i2"] <= 1.0


@given(
    a=st.lists(st.floats(0, 1), min_size=2, max_size=12),
    shift=st.floats(-0.2, 0.2),
    rope=st.floats(0.0, 0.1),
)
def test_fold_comparisons_are_proper(a: list[float], shift: float, rope: float) -> None:
    b = [min(1.0, max(0.0, x + shift)) for x in a]
    cmp = pe.compare_folds(a, b, metric="accuracy", rope=rope, n_samples=300, rng=0)
    assert not np.isnan(cmp.samples).any()
    assert sum(cmp.probs()) == pytest.approx(1.0)
    low, high = cmp.hdi(0.9)
    assert low <= high


@given(
    rows=st.lists(
        st.tuples(st.booleans(), st.floats(0.0, 1.0), st.floats(0.0, 3.0)), min_size=2, max_size=80
    ),
    value=st.tuples(*(st.floats(-100, 100) for _ in range(4))),
    prior=st.sampled_from([None, 0.0, 0.5]),
)
def test_decision_curves_are_proper(
    rows: list[tuple[bool, float, float]],
    value: tuple[float, float, float, float],
    prior: float | None,
) -> None:
    y, s, w = (np.array(c) for c in zip(*rows, strict=True))
    matrix = dict(zip(("tp", "fp", "tn", "fn"), value, strict=True))
    try:
        curve = pe.decision_curve(
            y, s, value=matrix, prior=prior, sample_weight=w, n_samples=100, rng=0
        )
    except ValueError as error:  # one class only (or no weight on one)
        if "both classes" not in str(error) and "weight" not in str(error):
            raise
        return
    lowest, highest = min(value), max(value)
    draws = curve.value_band()
    assert np.all(np.asarray(draws["low"]) >= lowest - 1e-9)
    assert np.all(np.asarray(draws["high"]) <= highest + 1e-9)
    assert sum(curve.p_optimal()["p_optimal"]) == pytest.approx(1.0)
    assert np.all(curve.regret(float(curve.thresholds[0])).samples >= -1e-12)
    band = curve.net_benefit_band()
    assert np.all(np.asarray(band["high"]) <= 1.0 + 1e-12)
    assert not np.isnan(np.asarray(band["median"])).any()
    threshold = float(curve.thresholds[len(curve.thresholds) // 2])
    benefit = curve.net_benefit(threshold).samples
    assert np.all(np.isfinite(benefit) & (benefit <= 1.0 + 1e-12))
    assert np.all(np.isin(curve.best_threshold().samples, curve.thresholds))
    best = curve.best_value().samples
    assert np.all((best >= lowest - 1e-9) & (best <= highest + 1e-9))


@given(
    samples=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=200),
    observed=st.one_of(st.just(math.nan), st.floats(0.0, 1.0)),
    title=st.text(max_size=30),
)
def test_reports_of_any_posterior_are_well_formed(
    samples: list[float], observed: float, title: str
) -> None:
    post = pe.Posterior("accuracy", samples=np.array(samples), observed=observed)
    check_html(post._repr_html_())
    page = pe.report(post, title=title or None, figures=False)
    check_html(page[len("<!DOCTYPE html>") :])


@given(samples=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=100))
def test_draws_reach_xarray_unchanged(samples: list[float]) -> None:
    post = pe.Posterior("x", samples=np.array(samples), bounds=(-np.inf, np.inf))
    dataset = post.to_xarray()
    np.testing.assert_array_equal(dataset["x"].values[0], np.array(samples))


@given(
    scores=st.lists(
        st.sampled_from([0.0, 0.05, 0.2, 0.2, 0.5, 0.51, 0.7, 0.7, 0.7, 0.93, 1.0])
        | st.floats(0.0, 1.0),
        min_size=0,
        max_size=120,
    ),
    cuts=st.lists(st.integers(0, 120), max_size=3),
    edges=st.lists(st.floats(0.01, 0.99), min_size=0, max_size=5, unique=True),
    per_bin=st.integers(1, 6),
)
def test_average_precision_score_slices_follow_the_rows(
    scores: list[float], cuts: list[int], edges: list[float], per_bin: int
) -> None:
    """The label-free average precision's slices of each chunk's rows in each bin, against a
    row-by-row description: shares add up to 1 in every occupied bin, no tie is split, one
    slice per distinct score where a bin has at most ``per_bin`` of them, slices in score
    order with their rows' mean and span; and the chunk statistics' spread of the bin's
    scores (mean absolute difference over pairs of distinct rows) and the share of the
    Mann-Whitney variance their ties leave."""
    from probeval.labelfree.estimator import _score_slices

    values = np.array(scores, dtype=float)
    starts = sorted({0, *(min(c, values.shape[0]) for c in cuts)})
    inner = np.array(sorted(edges))
    share, mean, span = _score_slices(values, starts, inner, per_bin)
    k = inner.shape[0] + 1
    calibration = (
        inner,
        np.ones(k),
        np.ones(k),
        np.full(k, 0.5),
        np.zeros(k),
        np.zeros(0),
        np.zeros(0),
        1.0,
    )
    stats = _core.labelfree_chunk_stats(calibration, values, starts, False)
    spread, ties = np.asarray(stats[5]), np.asarray(stats[6])
    bounds = [*starts[1:], values.shape[0]]
    for c, (start, stop) in enumerate(zip(starts, bounds, strict=True)):
        chunk = values[start:stop]
        bins = np.searchsorted(inner, chunk, side="left")
        for b in range(inner.shape[0] + 1):
            rows = np.sort(chunk[bins == b])
            if rows.size == 0:
                assert np.all(share[c, b] == 0)
                continue
            assert share[c, b].sum() == pytest.approx(1.0)
            m = rows.size
            differences = np.abs(rows[:, None] - rows[None, :]).sum() / max(m * (m - 1), 1)
            assert spread[c, b] == pytest.approx(differences, abs=1e-12)
            runs = np.unique(rows, return_counts=True)[1].astype(float)
            left = 1 - ((runs**3 - runs).sum() / (m**3 - m)) if m > 1 else 1.0
            assert ties[c, b] == pytest.approx(left, abs=1e-12)
            # Rebuild the rows from the slices: consecutive runs of the sorted rows.
            counts = np.rint(share[c, b] * rows.size).astype(int)
            pieces = np.split(rows, np.cumsum(counts)[:-1])
            distinct = np.unique(rows).size
            for j, piece in enumerate(pieces):
                if piece.size == 0:
                    continue
                assert mean[c, b, j] == pytest.approx(piece.mean(), abs=1e-12)
                assert span[c, b, j] == pytest.approx(piece.max() - piece.min(), abs=1e-12)
                if distinct <= per_bin:
                    assert span[c, b, j] == 0.0
            for left, right in itertools.pairwise([p for p in pieces if p.size]):
                assert left.max() < right.min()  # ties stay in one slice


_JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.floats(allow_nan=True, allow_infinity=True).map(np.float64),
    st.integers(-100, 100).map(np.int64),
)


def _plain_json(value: Any) -> Any:
    """What ``json_safe`` promises, written out independently (a test oracle)."""
    if isinstance(value, dict):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(v) for v in value]
    if isinstance(value, (np.floating, float)) and not isinstance(value, bool):
        number = float(value)
        if number != number:
            return None
        return number if abs(number) != math.inf else ("inf" if number > 0 else "-inf")
    if isinstance(value, np.integer):
        return int(value)
    return value


@given(
    value=st.recursive(
        _JSON_LEAVES,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.tuples(inner, inner),
            st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 9)), inner, max_size=4),
        ),
        max_leaves=20,
    )
)
def test_json_safe_gives_strict_json_of_anything_a_result_holds(value: Any) -> None:
    """Any nesting of dicts, lists and tuples of numbers (numpy's included, NaN and infinities),
    strings and None becomes strict JSON that reads back as the same plain values."""
    safe = json_safe(value)
    text = json.dumps(safe, allow_nan=False)
    assert json.loads(text) == _plain_json(value)


def test_json_safe_turns_arrays_into_lists() -> None:
    arrays = json_safe({"a": np.array([[1.0, np.nan], [np.inf, -np.inf]])})
    assert arrays == {"a": [[1.0, None], ["inf", "-inf"]]}
