"""Label-free estimation for multiclass scores: the model against a brute-force numpy draw of
the same model, centring at large n for every metric name, string and integer labels, binary
input through the matrix path, partial labels, persistence, frames, properties, and coverage
over simulated replications (slow)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import f1_score

import probeval as pe
from probeval import _core
from probeval.labelfree.estimator import DEFAULT_MULTICLASS
from probeval.labelfree.multiclass import (
    _CLASS_WALK_SHARE,
    _CLASS_WALK_START_VAR,
    _CLASS_WALK_STEP_VAR,
    _class_walk_moments,
    _class_walk_moved_prior,
    _class_walk_share_prior,
    _class_walks,
    _mean_preserving_offset,
    _own_class_tau,
    _tilt_mode,
    chunk_class_shifts,
    chunk_error_tilts,
    class_shift_sd,
    drifting_error_alpha,
    error_alpha_from_scores,
    error_movement,
    error_share_spread,
    fit_bins,
    move_shares,
    pseudo_scores,
    score_share_moments,
    tilt_class_correlation,
)
from tests._monitoring import (
    assert_realized_is_label_noise,
    class_moved,
    expected_metrics,
    metrics_of_expectations,
    score_orders,
    simulate_multiclass,
)

ALL_NAMES = [
    "accuracy",
    "balanced_accuracy",
    "mcc",
    "kappa",
    "precision_macro",
    "recall_macro",
    "f1_macro",
    "precision_weighted",
    "recall_weighted",
    "f1_weighted",
    "f1_micro",
    "specificity_macro",
    "jaccard_macro",
    "npv_macro",
    "fpr_macro",
    "fnr_macro",
    "fdr_macro",
    "false_omission_rate_macro",
    "recall[0]",
    "precision[2]",
    "f1[1]",
    "roc_auc_macro",
    "roc_auc_weighted",
    "roc_auc[0]",
    "roc_auc[2]",
    "average_precision_macro",
    "average_precision_weighted",
    "average_precision[2]",
]


@pytest.mark.parametrize("method", ["hierarchical", "pooled"])
def test_every_metric_is_centred_on_the_realized_value_at_large_n(method: str) -> None:
    """200,000 reference rows and a 200,000-row chunk of calibrated scores: every metric's
    label-free mean sits within 4 posterior sds (realized target: the reference's uncertainty
    and the chunk's label noise, 0.001-0.006 here) of the value the chunk's labels give. The
    default's unseen drift moves each class's log-odds, and with them the rare class's (9% of
    rows) own precision and average precision: posterior sds 0.016 and 0.013 (pooled: 0.005);
    over the drift's prior its precision moves by sd 0.015 (the expected value over 400,000
    rows, each prior move's own)."""
    rng = np.random.default_rng(3)
    y_ref, s_ref = simulate_multiclass(rng, 200_000, 3)
    y, s = simulate_multiclass(rng, 200_000, 3)
    estimator = pe.LabelFreeEstimator(metrics=ALL_NAMES, method=method).fit(y_ref, s_ref)
    result = estimator.estimate(s, y_true=y, target="realized", n_samples=1_000, rng=1)
    for name in ALL_NAMES:
        post, realized = result.posterior(name), result.realized(name)
        assert realized is not None
        moved_by_prior = name in ("precision[2]", "average_precision[2]")
        widest = 0.02 if moved_by_prior and method == "hierarchical" else 0.01
        assert post.std() < widest, (name, post.std())
        assert abs(post.mean() - realized) < 4 * post.std(), (name, post.mean(), realized)
    # The realized values are scikit-learn's.
    assert result.realized("f1_macro") == pytest.approx(
        f1_score(y, s.argmax(axis=1), average="macro"), abs=1e-12
    )


def test_unseen_drift_widens_each_metric_as_the_exact_class_moves_do() -> None:
    """The default's unseen drift is each class's log-odds moving by eⱼ ~ N(0, 0.08²/2) at the
    same scores. Oracle: the exact expected metrics of a 50,000-row chunk of calibrated scores
    under 2,000 such moves (P(y = j | s) ∝ sⱼ e^eⱼ, row by row, no bins). The width the drift
    adds to the population posterior, √(sd² - sd²(``unseen_drift=0``)), matches the sd of those
    metrics within 4 Monte Carlo standard errors (the oracle's sd from 2,000 moves, each
    posterior's from 20,000 draws). The chunk comes from a population whose scores moved
    (:data:`_MOVED_SPREAD`), where the unseen drift applies. Measured ratios: accuracy 1.02,
    macro F1 1.06, class 2's and class 0's precision 0.98 and 1.02, their recall 1.02 and 1.00
    (with the chunk from the reference's population, before the drift applied only where the
    scores moved: 0.99, 0.94, 0.99, 1.03, 0.97, 1.03). With the classes'
    common move on the confidence calibration and an independent tilt of the error shares
    (the code before): 0.99, 2.55, 0.25, 0.25. With the moves drawn once but a bin's error
    shares tilted by the whole move (every row's share moving as the bin's mean share does):
    the recalls 1.20 and 1.08, macro F1 1.08."""
    names = ["accuracy", "f1_macro", "precision[2]", "precision[0]", "recall[0]", "recall[2]"]
    rng = np.random.default_rng(3)
    y_ref, s_ref = simulate_multiclass(rng, 200_000, 3)
    # Another population (the unseen drift applies where production's scores moved).
    _, s = simulate_multiclass(rng, 50_000, 3, spread=_MOVED_SPREAD)
    predicted = s.argmax(axis=1)
    moves = np.random.default_rng(1).normal(0.0, 0.08 / np.sqrt(2.0), (2_000, 3))
    # The expected confusion matrix under each move: rows (draws, predicted, true).
    matrix = np.stack(
        [np.stack([class_moved(s[predicted == c], e).sum(axis=0) for c in range(3)]) for e in moves]
    )
    diag = np.diagonal(matrix, axis1=1, axis2=2)
    precision, recall = diag / matrix.sum(axis=2), diag / matrix.sum(axis=1)
    exact = {
        "accuracy": diag.sum(axis=1) / len(s),
        "f1_macro": (2 * precision * recall / (precision + recall)).mean(axis=1),
        "precision[2]": precision[:, 2],
        "precision[0]": precision[:, 0],
        "recall[0]": recall[:, 0],
        "recall[2]": recall[:, 2],
    }
    n = 20_000
    sds = {}
    for unseen in (0.0, 0.08):
        estimator = pe.LabelFreeEstimator(metrics=names, unseen_drift=unseen).fit(y_ref, s_ref)
        result = estimator.estimate(s, n_samples=n, rng=1)
        sds[unseen] = {name: result.posterior(name).std() for name in names}
    for name in names:
        full, without = sds[0.08][name], sds[0.0][name]
        added = math.sqrt(full**2 - without**2)
        truth = exact[name].std()
        # Relative standard errors: a sample variance's sd is s²√(2/n) for near-normal draws.
        added_se = math.sqrt(2.0 / n * (full**4 + without**4)) / (2.0 * added**2)
        truth_se = 1.0 / math.sqrt(2.0 * len(moves))
        print(f"{name:13s} added / exact {added / truth:.2f}")
        assert abs(added / truth - 1.0) < 4.0 * math.hypot(added_se, truth_se), (
            name,
            added,
            truth,
        )


def _label_noise_oracle(
    scores: np.ndarray, draws: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Brute force of what the realized target stands for: accuracy, macro F1, macro ROC AUC
    and macro average precision of the chunk over ``draws`` label vectors drawn from each
    row's scores (calibrated: P(y = j | s) = s_j) for these very scores."""
    n, k = scores.shape
    labels = (rng.random((draws, n, 1)) > scores.cumsum(axis=1)[None]).sum(axis=2)
    return _metrics_of_labels(np.minimum(labels, k - 1), scores)


def _metrics_of_labels(labels: np.ndarray, scores: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, macro F1, macro ROC AUC and macro average precision of each row of
    ``labels`` (label vectors, draws x n) for one chunk's continuous scores (n x k): plain
    numpy, no ties."""
    draws, n = labels.shape
    k = scores.shape[1]
    predicted = scores.argmax(axis=1)
    cells = (labels * k + predicted).ravel() + k * k * np.repeat(np.arange(draws), n)
    matrix = np.bincount(cells, minlength=draws * k * k).reshape(draws, k, k)
    hits = np.einsum("dkk->dk", matrix)
    f1 = 2 * hits / (matrix.sum(axis=1) + matrix.sum(axis=2))
    aucs, aps = [], []
    for c in range(k):
        positive = labels == c
        count = positive.sum(axis=1)
        wins = positive @ rankdata(scores[:, c]) - count * (count + 1) / 2
        aucs.append(wins / (count * (n - count)))
        # Average precision: the precision at each positive, from the top score down (the
        # scores are continuous: no ties).
        ranked = positive[:, np.argsort(-scores[:, c], kind="stable")]
        precision_at = ranked.cumsum(axis=1) / np.arange(1, n + 1)
        aps.append((ranked * precision_at).sum(axis=1) / count)
    return {
        "accuracy": hits.sum(axis=1) / n,
        "f1_macro": f1.mean(axis=1),
        "roc_auc_macro": np.mean(aucs, axis=0),
        "average_precision_macro": np.mean(aps, axis=0),
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings", [{"method": "pooled"}, {"method": "hierarchical", "unseen_drift": 0.0}]
)
def test_realized_posterior_is_the_labels_own_noise_given_the_scores(
    settings: dict[str, Any],
) -> None:
    """The binary test's twin (tests/test_labelfree.py): K = 3 calibrated scores, a fresh
    10^6-row reference per chunk (so the chunks' errors are independent), 10 chunks of 5,000
    rows. The realized posterior's sd over the sd of the chunk's metrics over labels drawn for
    its very scores (brute force, 2,000 label vectors; 4,000 posterior draws: Monte Carlo
    error 1.9% per chunk) is held within four standard errors of 1 on average, and its mean
    within four standard errors (from the chunks' spread) of the oracle's mean. Measured: sd
    ratio 1.001-1.005, offsets -0.007 to -0.056 sds (pooled); 1.010-1.012 and -0.016 to
    -0.035 (hierarchical: a drift learned from 200 windows is not exactly 0; -0.031 before
    the one-vs-rest calibrations followed the scores' level). Macro AP 1.0074 / +0.007 and
    1.0124 / -0.033."""
    rng = np.random.default_rng(11)
    names = ["accuracy", "f1_macro", "roc_auc_macro", "average_precision_macro"]
    n_draws, n_oracle, chunks = 4_000, 2_000, 10
    pairs: list[tuple[Any, dict[str, np.ndarray]]] = []
    for chunk in range(chunks):
        estimator = pe.LabelFreeEstimator(metrics=names, **settings)
        estimator.fit(*simulate_multiclass(rng, 1_000_000, 3))
        _, scores = simulate_multiclass(rng, 5_000, 3)
        oracle = _label_noise_oracle(scores, n_oracle, rng)
        result = estimator.estimate(scores, target="realized", n_samples=n_draws, rng=chunk)
        pairs.append((result, oracle))
    assert_realized_is_label_noise(pairs, n_draws, n_oracle)


def _pooled_matrix_draws(
    bins: Any,
    u: np.ndarray,
    n: int,
    g: np.random.Generator,
    mean: np.ndarray | None = None,
    sd: np.ndarray | None = None,
) -> np.ndarray:
    """numpy draws (n, K, K) of method "pooled"'s population confusion matrix: bin weights w ~
    Dirichlet(n_b + width_b), correct rates r_b ~ Beta(correct + 2p, wrong + 2(1 - p)) (p: the
    reference's correct rate), error shares φ_b ~ Dirichlet(A_b m_b e^g / Σ m_b e^g), g ~ N(mean,
    sd²) per class and draw (no tilt without ``mean``)."""
    k = bins.n_classes
    counts = np.bincount(bins.bin_of(u), minlength=bins.n_bins)
    edges = np.concatenate([[0.0], bins.edges, [1.0]])
    w = g.dirichlet(counts + np.diff(edges), n)
    # The rate prior: two rows' weight centred on the reference's correct rate.
    rate = (bins.correct.sum() + 1) / (bins.correct.sum() + bins.wrong.sum() + 2)
    r = g.beta(bins.correct + 2 * rate, bins.wrong + 2 * (1 - rate), (n, bins.n_bins))
    tilt = None if mean is None or sd is None else mean + sd * g.standard_normal((n, k))
    matrix = np.zeros((n, k, k))
    for b in range(bins.n_bins):
        c = bins.predicted[b]
        others = np.flatnonzero(np.arange(k) != c)
        alpha = bins.error_alpha[b, others]
        if tilt is None:
            phi = g.dirichlet(alpha, n)
        else:
            tilted = alpha * np.exp(tilt[:, others])
            phi = g.standard_gamma(alpha.sum() * tilted / tilted.sum(axis=1, keepdims=True))
            phi /= phi.sum(axis=1, keepdims=True)
        matrix[:, c, c] += w[:, b] * r[:, b]
        matrix[:, others, c] += (w[:, b] * (1 - r[:, b]))[:, None] * phi
    return matrix


def test_population_draws_match_a_numpy_draw_of_the_same_model() -> None:
    """Method "pooled", population target: per draw, bin weights w ~ Dirichlet(n_b + width_b),
    correct rates r_b ~ Beta(correct + 2p, wrong + 2(1 - p)) (p: the reference's correct rate),
    error shares φ_b ~ Dirichlet(alpha_b);
    the K x K matrix and macro F1 by numpy. Means and sds agree within 4 Monte Carlo standard
    errors (20,000 draws each)."""
    rng = np.random.default_rng(5)
    k = 4
    y_ref, s_ref = simulate_multiclass(rng, 8_000, k)
    _, s = simulate_multiclass(rng, 3_000, k)
    estimator = pe.LabelFreeEstimator(
        n_bins=4, metrics=["accuracy", "f1_macro", "recall[3]"], method="pooled"
    ).fit(y_ref, s_ref)
    n = 20_000
    result = estimator.estimate(s, n_samples=n, rng=2)
    bins, _, _ = fit_bins(s_ref, y_ref, 4)
    _, u = pseudo_scores(s)
    matrix = _pooled_matrix_draws(bins, u, n, np.random.default_rng(7))
    diag = np.diagonal(matrix, axis1=1, axis2=2)
    precision = diag / matrix.sum(axis=1)
    recall = diag / matrix.sum(axis=2)
    oracle = {
        "accuracy": diag.sum(axis=1),
        "f1_macro": (2 * precision * recall / (precision + recall)).mean(axis=1),
        "recall[3]": recall[:, 3],
    }
    for name, values in oracle.items():
        draws = result.posterior(name).samples
        sd = values.std()
        assert abs(draws.mean() - values.mean()) < 4 * sd * np.sqrt(2 / n), name
        # sd of a sample sd ≈ sd / sqrt(2 n) for near-normal draws; doubled for the pair.
        assert abs(draws.std() - sd) < 4 * sd / np.sqrt(n), name


def test_tilted_error_shares_match_a_numpy_draw_of_the_same_model() -> None:
    """The core's common tilt of the error shares against numpy: per draw g ~ N(μ, σ²) per
    class, every bin's shares φ_b ~ Dirichlet(A_b m_b e^g / Σ m_b e^g), bin weights and
    correct rates as in the pooled oracle above (population target, no drift). Means and sds of
    per-class recall and macro F1 agree within 4 Monte Carlo standard errors (20,000 draws
    each); the tilt moves them by far more than that."""
    rng = np.random.default_rng(15)
    k = 3
    y_ref, s_ref = simulate_multiclass(rng, 8_000, k)
    _, s = simulate_multiclass(rng, 3_000, k)
    names = ["recall[0]", "recall[2]", "f1_macro"]
    estimator = pe.LabelFreeEstimator(n_bins=4, metrics=names, method="pooled").fit(y_ref, s_ref)
    bins, _, _ = fit_bins(s_ref, y_ref, 4)
    _, u = pseudo_scores(s)
    calibration = estimator._calibration_args()
    stats = _core.labelfree_chunk_stats(calibration, np.ascontiguousarray(u), [0], False, None)
    mean, sd = np.array([0.4, 0.0, -0.5]), np.array([0.3, 0.1, 0.6])
    n = 20_000
    specs = [spec.core_spec() for spec in estimator._state()["specs"]]
    args = (calibration, stats, bins.predicted.tolist(), bins.error_alpha)
    known = np.zeros((1, bins.n_bins, k))
    tilt = np.stack([mean, sd])[None]
    draws = _core.labelfree_estimate_multiclass(
        *args, known, specs, "population", n, 3, 1.0, 0.0, None, tilt
    )[0]
    plain = _core.labelfree_estimate_multiclass(*args, known, specs, "population", n, 3)[0]
    matrix = _pooled_matrix_draws(bins, u, n, np.random.default_rng(8), mean, sd)
    diag = np.diagonal(matrix, axis1=1, axis2=2)
    precision = diag / matrix.sum(axis=1)
    recall = diag / matrix.sum(axis=2)
    oracle = [recall[:, 0], recall[:, 2], (2 * precision * recall / (precision + recall)).mean(1)]
    for name, values, got in zip(names, oracle, draws, strict=True):
        spread = values.std()
        assert abs(got.mean() - values.mean()) < 4 * spread * np.sqrt(2 / n), name
        assert abs(got.std() - spread) < 4 * spread / np.sqrt(n), name
    # Errors pushed towards class 0 and away from class 2: class 0's recall falls, class 2's
    # rises, each by many Monte Carlo errors.
    assert draws[0].mean() < plain[0].mean() - 20 * draws[0].std() / np.sqrt(n)
    assert draws[1].mean() > plain[1].mean() + 20 * draws[1].std() / np.sqrt(n)
    # The same parameters given per chunk: the same draws. Of the wrong shape: named.
    own = (calibration, stats, bins.predicted.tolist(), bins.error_alpha[None].copy())
    np.testing.assert_array_equal(
        _core.labelfree_estimate_multiclass(
            *own, known, specs, "population", n, 3, 1.0, 0.0, None, tilt
        )[0],
        draws,
    )
    for bad_alpha in (
        np.repeat(bins.error_alpha[None], 2, axis=0),
        bins.error_alpha[None, :-1],
        bins.error_alpha[None, None],
        bins.error_alpha[0],
    ):
        with pytest.raises(ValueError, match="error_alpha"):
            _core.labelfree_estimate_multiclass(
                *args[:3], np.ascontiguousarray(bad_alpha), known, specs, "population", 10, 3
            )
    with pytest.raises(ValueError, match="error_tilt must have shape"):
        _core.labelfree_estimate_multiclass(
            *args, known, specs, "population", 10, 3, 1.0, 0.0, None, tilt[:, :1]
        )
    with pytest.raises(ValueError, match="sds >= 0"):
        _core.labelfree_estimate_multiclass(
            *args, known, specs, "population", 10, 3, 1.0, 0.0, None, -tilt
        )
    # A class shift goes with a drift (method "hierarchical"); one of the wrong shape is named.
    from probeval.labelfree.chunking import make_chunks

    hierarchical = pe.LabelFreeEstimator(n_bins=4, metrics=names).fit(y_ref, s_ref)
    drift, _ = hierarchical._drift_args(
        hierarchical._drift_for(make_chunks(u.shape[0], n_chunks=1))
    )
    assert drift is not None
    shift = (np.zeros((1, bins.n_bins)), np.zeros((1, k)))

    def refused(match: str, *optional: Any) -> None:
        """The core refuses these arguments after ``zero_division`` with ``match``."""
        with pytest.raises(ValueError, match=match):
            _core.labelfree_estimate_multiclass(
                *args, known, specs, "population", 10, 3, 1.0, 0.0, *optional
            )

    for bad in ((shift[0][:, :1], shift[1]), (shift[0], np.zeros((2, k)))):
        refused("class_shift needs offsets of shape", drift, None, bad)
    refused("class shift needs", drift, None, (shift[0], -1 - shift[1]))
    # The classes' moves go with a class shift; their loading and move shares are shaped by
    # the bins and chunks, their sd finite and >= 0.
    loading, share = np.zeros((bins.n_bins, k)), np.ones((1, bins.n_bins, k))
    for moves, message in (
        ((0.05, loading[:, :1], share), "loading of shape"),
        ((0.05, loading, share[:, :1]), "move shares of shape"),
        ((-0.05, loading, share), "class moves need"),
        ((0.05, loading, -share), "move shares must be finite"),
    ):
        refused(message, drift, None, shift, None, moves)
    refused(
        "class_moves needs drift_args and class_shift",
        drift,
        None,
        None,
        None,
        (0.05, loading, share),
    )


def test_a_multiclass_backtest_is_the_same_for_string_and_integer_labels() -> None:
    """The backtest of a multiclass estimate (realized target, labels for every row): per
    metric as the binary one's (tests/test_labelfree.py), identical whatever the labels'
    type, with per-class metrics named by class."""
    rng = np.random.default_rng(14)
    y_ref, s_ref = simulate_multiclass(rng, 6_000, 3)
    y, s = simulate_multiclass(rng, 6_000, 3)
    names = np.array(["ant", "bee", "cat"])
    tables = []
    for ref_labels, labels, metric in (
        (y_ref, y, "precision[2]"),
        (names[y_ref], names[y], "precision[cat]"),
    ):
        estimator = pe.LabelFreeEstimator(metrics=["accuracy", "f1_macro", metric])
        result = estimator.fit(ref_labels, s_ref).estimate(
            s, y_true=labels, target="realized", n_chunks=3, n_samples=1_000, rng=2
        )
        tables.append(result.backtest())
        covered = []
        for c in range(3):
            low, high = result.posterior(metric, c).hdi()
            value = result.realized(metric, c)
            assert value is not None
            covered.append(low <= value <= high)
        assert tables[-1]["coverage"][2] == pytest.approx(np.mean(covered))
    int_table, str_table = tables
    assert list(str_table["metric"]) == ["accuracy", "f1_macro", "precision[cat]"]
    for column in ("n_chunks", "coverage", "mae", "z_mean", "z_sd"):
        np.testing.assert_array_equal(int_table[column], str_table[column])


def test_string_and_integer_labels_give_identical_results() -> None:
    rng = np.random.default_rng(11)
    y_ref, s_ref = simulate_multiclass(rng, 6_000, 3)
    y, s = simulate_multiclass(rng, 4_000, 3)
    names = np.array(["ant", "bee", "cat"])
    partial = np.where(rng.random(y.shape[0]) < 0.1, y, -1)
    by_int = pe.LabelFreeEstimator().fit(y_ref, s_ref)
    by_str = pe.LabelFreeEstimator().fit(names[y_ref], s_ref)
    one = by_int.estimate(
        s,
        y_true=y,
        partial_labels=np.where(partial < 0, np.nan, partial),
        n_chunks=2,
        rng=4,
        n_samples=2_000,
    )
    other = by_str.estimate(
        s,
        y_true=names[y],
        partial_labels=np.where(partial < 0, None, names[np.maximum(partial, 0)]),
        n_chunks=2,
        rng=4,
        n_samples=2_000,
    )
    assert one.metrics == other.metrics
    for chunk in range(2):
        for name in one.metrics:
            np.testing.assert_array_equal(
                one.posterior(name, chunk).samples, other.posterior(name, chunk).samples
            )
            assert one.realized(name, chunk) == other.realized(name, chunk)
    # Class names in per-class metrics follow the labels.
    named = pe.LabelFreeEstimator(
        metrics=["recall[bee]", "roc_auc[cat]", "average_precision[ant]"]
    ).fit(names[y_ref], s_ref)
    numbered = pe.LabelFreeEstimator(
        metrics=["recall[1]", "roc_auc[2]", "average_precision[0]"]
    ).fit(y_ref, s_ref)
    a = named.estimate(s, y_true=names[y], rng=0, n_samples=500)
    b = numbered.estimate(s, y_true=y, rng=0, n_samples=500)
    for mine, theirs in zip(a.metrics, b.metrics, strict=True):
        np.testing.assert_array_equal(a.posterior(mine).samples, b.posterior(theirs).samples)
        assert a.realized(mine) == b.realized(theirs)


def test_two_columns_are_the_binary_estimator() -> None:
    rng = np.random.default_rng(2)
    s_ref = rng.beta(1.3, 2.0, 5_000)
    y_ref = rng.random(5_000) < s_ref
    s = rng.beta(1.3, 2.0, 3_000)
    binary = pe.LabelFreeEstimator().fit(y_ref, s_ref).estimate(s, n_chunks=2, rng=3)
    matrix = pe.LabelFreeEstimator().fit(y_ref, np.column_stack([1 - s_ref, s_ref]))
    two = matrix.estimate(np.column_stack([1 - s, s]), n_chunks=2, rng=3)
    for name in binary.metrics:
        np.testing.assert_array_equal(
            binary.posterior(name, 1).samples, two.posterior(name, 1).samples
        )


@pytest.mark.parametrize(("reviewed", "seed"), [("surest", 300), ("least sure", 400)])
def test_labels_missing_by_confidence_give_unbiased_estimates(reviewed: str, seed: int) -> None:
    """Labels that arrive depending on the confidence: each chunk's surest 5% of predictions
    reviewed first, or its least sure. Every labelled row sits at one end of its bin, where
    the rate of right predictions is not the bin's: taken as the bin's, those labels moved
    accuracy by +0.011 (surest, 5 standard errors) and -0.005 (least sure, 4) here, +0.047
    and -0.014 over five stable 12-chunk streams. The core places them by the reference's
    finer confidence calibration, as it does a binary score's: over 24 streams x 3 chunks,
    the mean error is within 3 standard errors of 0."""
    errors = []
    for rep in range(24):
        rng = np.random.default_rng(seed + rep)
        y_ref, s_ref = simulate_multiclass(rng, 30_000, 3)
        y, s = simulate_multiclass(rng, 15_000, 3)
        confidence = s.max(axis=1)
        partial = np.full(y.shape[0], np.nan)
        for start in range(0, y.shape[0], 5_000):
            part = confidence[start : start + 5_000]
            if reviewed == "surest":
                chosen = part >= np.quantile(part, 0.95)
            else:
                chosen = part <= np.quantile(part, 0.05)
            rows = start + np.flatnonzero(chosen)
            partial[rows] = y[rows]
        result = (
            pe.LabelFreeEstimator(metrics=["accuracy"])
            .fit(y_ref, s_ref)
            .estimate(
                s,
                partial_labels=partial,
                target="realized",
                chunk_size=5_000,
                n_samples=1_000,
                rng=rep,
            )
        )
        for chunk in result.chunks:
            truth = np.mean(np.argmax(s[chunk.rows], axis=1) == y[chunk.rows])
            errors.append(result.posterior("accuracy", chunk.index).mean() - truth)
    array = np.asarray(errors)
    se = array.std(ddof=1) / np.sqrt(array.shape[0])
    print(f"{reviewed}: mean error {array.mean():+.4f}, se {se:.4f}")
    assert abs(array.mean()) < 3 * se + 1e-4


def test_confidence_sub_bins_restart_their_monotone_fit_at_each_class() -> None:
    """The multiclass fit's finer calibration (:func:`confidence_summary`): each predicted
    class's rows get sub-bins of their own, in proportion to its rows, holding exactly its
    right and wrong predictions; the monotone fit restarts where each class begins. Each
    bin's ``label_move`` then matches scikit-learn's isotonic fit of each class's sub-bins on
    their own (the rate falls back from one class's surest predictions to the next's least
    sure: one fit over all classes would pool across them)."""
    from probeval import _core

    rng = np.random.default_rng(17)
    k = 3
    y_ref, s_ref = simulate_multiclass(rng, 30_000, k)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(y_ref, s_ref)
    fine = estimator._fine_calibration()
    assert fine is not None
    values, pos, neg, restarts = fine
    predicted, _ = pseudo_scores(s_ref)
    right = predicted == y_ref
    owner = np.ceil(values * k - 1e-9).astype(int) - 1
    starts = [0, *restarts, values.size]
    assert len(restarts) == k - 1
    for c in range(k):
        part = slice(starts[c], starts[c + 1])
        assert np.all(owner[part] == c)
        assert values[part][-1] == (c + 1.0) / k  # up to the class's boundary
        assert pos[part].sum() == right[predicted == c].sum()
        assert neg[part].sum() == (~right[predicted == c]).sum()
        share = (predicted == c).mean()
        assert abs((starts[c + 1] - starts[c]) - 256 * share) <= 2
    block, first = np.zeros(values.size, dtype=int), 0
    for c in range(k):
        part = slice(starts[c], starts[c + 1])
        rows = pos[part] + neg[part]
        fitted = IsotonicRegression().fit_transform(
            np.arange(rows.size), pos[part] / rows, sample_weight=rows
        )
        block[part] = first + np.concatenate([[0], np.cumsum(np.diff(fitted) != 0)])
        first = block[part][-1] + 1
    rows = pos + neg
    rate = (np.bincount(block, pos) + 0.5) / (np.bincount(block, rows) + 1.0)
    y, s = simulate_multiclass(rng, 5_000, k)
    chunk_predicted, chunk_u = pseudo_scores(s)
    sure = s.max(axis=1) >= np.quantile(s.max(axis=1), 0.9)
    known = np.where(sure, (chunk_predicted == y).astype(float), np.nan)
    stats = _core.labelfree_chunk_stats(
        estimator._calibration_args(), chunk_u, [0], False, known, fine
    )
    bins = estimator._state()["bins"]
    which = bins.bin_of(chunk_u)
    sub = block[np.minimum(np.searchsorted(values, chunk_u, side="left"), values.size - 1)]
    moved = 0
    for i in range(bins.n_bins):
        mine, theirs = (which == i) & sure, which == i
        if not mine.any():
            assert stats[7][0, i] == 0.0
            continue
        at, over_all = rate[sub[mine]].mean(), rate[sub[theirs]].mean()
        want = np.log(at / (1 - at)) - np.log(over_all / (1 - over_all))
        np.testing.assert_allclose(stats[7][0, i], want, rtol=1e-9, atol=1e-12)
        moved += abs(want) > 0.05
    assert moved >= k  # every class's surest bin


def test_fully_labelled_chunk_is_counted_exactly() -> None:
    rng = np.random.default_rng(8)
    y_ref, s_ref = simulate_multiclass(rng, 6_000, 3)
    y, s = simulate_multiclass(rng, 2_000, 3)
    estimator = pe.LabelFreeEstimator(metrics=["accuracy", "f1_macro", "kappa"])
    result = estimator.fit(y_ref, s_ref).estimate(
        s, y_true=y, partial_labels=y, target="realized", rng=1, n_samples=500
    )
    for name in result.metrics:
        draws = result.posterior(name).samples
        assert np.all(draws == draws[0]), name
        assert draws[0] == pytest.approx(result.realized(name), abs=1e-12), name
    assert result.diagnostics()["n_labelled"] == 2_000


def test_partial_labels_move_a_shifted_chunk_towards_the_truth() -> None:
    """Production errors twice as often as the reference (labels relabelled at random): 10% of
    the chunk's labels pull the accuracy estimate most of the way to the realized value."""
    rng = np.random.default_rng(21)
    y_ref, s_ref = simulate_multiclass(rng, 20_000, 3)
    y, s = simulate_multiclass(rng, 5_000, 3)
    flip = rng.random(y.shape[0]) < 0.2
    y = np.where(flip, rng.integers(0, 3, y.shape[0]), y)
    estimator = pe.LabelFreeEstimator().fit(y_ref, s_ref)
    partial = np.where(rng.random(y.shape[0]) < 0.1, y, np.nan)
    before = estimator.estimate(s, y_true=y, target="realized", rng=1, n_samples=2_000)
    after = estimator.estimate(
        s, y_true=y, partial_labels=partial, target="realized", rng=1, n_samples=2_000
    )
    truth = before.realized("accuracy")
    assert truth is not None
    gap_before = abs(before.posterior("accuracy").mean() - truth)
    gap_after = abs(after.posterior("accuracy").mean() - truth)
    assert gap_after < 0.5 * gap_before, (gap_before, gap_after)
    low, high = after.posterior("accuracy").hdi(0.95)
    assert low <= truth <= high


def test_a_few_labels_do_not_blow_the_intervals_up() -> None:
    """Three stable 60,000-row K = 3 streams, labels at random: 10 and 250 labels make the accuracy
    HDIs 0.086 and 0.039 wide on average, 3.21 and 1.47 times as wide as none (.0267; mean
    widths over the streams' chunks). With labels the unseen drift goes and production's
    movement is left to them: a mixture with mass ``CONFIDENCE_NOT_MOVED`` on "no chunk moved",
    plus each class's walk, whose mass on some class having moved is a quarter of a moved
    population's here, as the scores look like the reference's
    (:func:`~probeval.labelfree.drift.movement_prior_scale`; with the full mass whatever the
    scores, 0.118 and 0.050 wide, 4.41 and 1.87 times as wide as none; with the mixture's
    scaled too, 2.08 and 1.18 times, at a cost on the flights: ``_drift_args``). When the
    mixture's mass was 0.7, the prior on movement counted twice: 3.80 and 1.84 times. Before
    the confidence calibration's tilt turned around its bins' information-weighted centre the
    widths were .0419 without labels, 0.123 and 0.060 with (2.93 and 1.43 times): every width
    fell, the unlabelled one most, so the ratios rose."""
    width: dict[int, list[float]] = {0: [], 10: [], 250: []}
    for stream in range(3):
        rng = np.random.default_rng(100 + stream)
        y_ref, s_ref = simulate_multiclass(rng, 20_000, 3)
        y, s = simulate_multiclass(rng, 60_000, 3)
        estimator = pe.LabelFreeEstimator(metrics=["accuracy"]).fit(y_ref, s_ref)
        for n_labels in width:
            known = np.full(y.shape[0], np.nan)
            rows = np.random.default_rng(stream).choice(y.shape[0], n_labels, replace=False)
            known[rows] = y[rows]
            result = estimator.estimate(
                s,
                chunk_size=5_000,
                target="realized",
                rng=0,
                n_samples=2_000,
                partial_labels=known if n_labels else None,
            )
            width[n_labels] += [
                float(np.diff(result.posterior("accuracy", c.index).hdi(0.95))[0])
                for c in result.chunks
            ]
    mean = {n: float(np.mean(w)) for n, w in width.items()}
    assert mean[10] < 0.095, mean
    assert mean[250] < 0.043, mean
    assert mean[10] / mean[0] < 3.5, mean
    assert mean[250] / mean[0] < 1.6, mean


def test_labels_show_a_class_that_moved_alone() -> None:
    """A stable reference, then a production whose classes' log-odds at the same scores moved
    by (+0.6, 0, -0.3) (a concept shift of some classes), 20% of rows labelled, six 5,000-row
    chunks: the class shift and the error tilt learn how far production moved from the
    labels, so the realized precision and recall of class 0 are covered and close (measured
    over 12 such streams: 0.96 / .0095 and 0.99 / .0096 with the class walk, 0.96 / .0133 and
    1.00 / .0099 before it; without the class shift, precision 0.00 / .0830; without the tilt
    learning production's movement, recall 0.31 / .0318)."""
    rng = np.random.default_rng(31)
    y_ref, s_ref = simulate_multiclass(rng, 20_000, 3)
    y, s = simulate_multiclass(rng, 30_000, 3, shift=np.array([0.6, 0.0, -0.3]))
    partial = np.where(rng.random(y.shape[0]) < 0.2, y.astype(float), np.nan)
    names = ["precision[0]", "recall[0]"]
    estimator = pe.LabelFreeEstimator(metrics=names).fit(y_ref, s_ref)
    result = estimator.estimate(
        s, y_true=y, partial_labels=partial, target="realized", chunk_size=5_000, rng=3
    )
    label_free = estimator.estimate(s, y_true=y, target="realized", chunk_size=5_000, rng=3)
    for name in names:
        covered, errors, before = [], [], []
        for chunk in result.chunks:
            truth = result.realized(name, chunk.index)
            assert truth is not None
            low, high = result.posterior(name, chunk.index).hdi(0.95)
            covered.append(low <= truth <= high)
            errors.append(abs(result.posterior(name, chunk.index).mean() - truth))
            before.append(abs(label_free.posterior(name, chunk.index).mean() - truth))
        assert np.mean(covered) >= 5 / 6, (name, covered)
        assert np.mean(errors) < 0.3 * np.mean(before), (name, errors, before)


def test_class_shift_sd_recovers_each_classs_own_movement() -> None:
    """Period sums whose bins' correct rates move by a common shift N(0, 0.3²) per period and,
    per predicted class, by N(0, s²): the learned sd lands near s (s = 0.25) and near 0 for
    s = 0 (the common shift taken out); a single predicted class, or two periods, give 0."""
    rng = np.random.default_rng(33)
    periods, bins, k = 40, 12, 3
    predicted = np.arange(bins) % k
    logit = rng.normal(1.0, 0.8, bins)
    for s, low, high in ((0.25, 0.17, 0.33), (0.0, 0.0, 0.04)):
        sums = np.zeros((periods, bins, 5))
        for p in range(periods):
            moved = logit + rng.normal(0, 0.3) + rng.normal(0.0, s, k)[predicted]
            sums[p, :, 0] = 400.0
            sums[p, :, 1] = rng.binomial(400, 1 / (1 + np.exp(-moved)))
        value = class_shift_sd(sums, predicted, k)
        assert value.shape == (k,)
        assert np.all((low <= value) & (value <= high)), (s, value)
    assert not class_shift_sd(sums, np.zeros(bins, dtype=np.int64), k).any()
    assert not class_shift_sd(sums[:2], predicted, k).any()


def test_a_class_that_moves_further_gets_its_own_shift_sd() -> None:
    """Period sums whose predicted classes move by N(0, 0.1²), N(0, 0.1²) and N(0, 0.6²) per
    period beyond the common shift (40 periods): the third class's sd lands near 0.4 (its
    residual around the three classes' mean move, two thirds of its own) and the others keep
    the common one, below it; where all three move by N(0, 0.3²) all three share it. Then
    the test itself on one class's residuals (:func:`_own_class_tau`): a spread of 0.8
    against a common 0.2 passes it, one of 0.2 does not, and an own τ below the common one
    never replaces it."""
    rng = np.random.default_rng(5)
    periods, bins, k = 40, 12, 3
    predicted = np.arange(bins) % k
    logit = rng.normal(1.0, 0.8, bins)

    def sums_for(sds: np.ndarray) -> np.ndarray:
        sums = np.zeros((periods, bins, 5))
        for p in range(periods):
            moved = logit + rng.normal(0, 0.3) + rng.normal(0.0, sds)[predicted]
            sums[p, :, 0] = 400.0
            sums[p, :, 1] = rng.binomial(400, 1 / (1 + np.exp(-moved)))
        return sums

    value = class_shift_sd(sums_for(np.array([0.1, 0.1, 0.6])), predicted, k)
    assert 0.3 <= value[2] <= 0.5, value
    assert value[0] == value[1] < value[2], value
    alike = class_shift_sd(sums_for(np.array([0.3, 0.3, 0.3])), predicted, k)
    assert alike[0] == alike[1] == alike[2], alike
    noise = np.full(30, 0.01)
    wide = rng.normal(0.0, np.sqrt(0.8**2 + 0.01), 30)
    narrow = rng.normal(0.0, np.sqrt(0.2**2 + 0.01), 30)
    assert _own_class_tau(wide, noise, 0.2) > 0.5
    assert _own_class_tau(narrow, noise, 0.2) == 0.2
    assert _own_class_tau(wide, noise, 5.0) == 5.0


@pytest.mark.parametrize("k", [3, 5])
def test_a_class_shift_and_its_error_tilt_move_together_under_label_shift(k: int) -> None:
    """A reference of twelve periods whose classes' prevalences move (P(y = j | s) ∝ s_j e^λ_j,
    λ_j ~ N(0, 0.35²) per period): a period with more rows of class j has both more right
    predictions of j and more mistakes that are j, and every class's two moves come out
    correlated (measured over seeds 0-7: lowest 0.35 at K = 3, 0.55 at K = 5; mean 0.66 and
    0.77); a reference whose classes do not move learns no class shift, and gets 0."""
    for seed in range(3):
        for sd in (0.35, 0.0):
            rng = np.random.default_rng(seed)
            parts = [
                simulate_multiclass(rng, 5_000, k, shift=rng.normal(0.0, sd, k) if sd else None)
                for _ in range(12)
            ]
            periods = np.repeat(np.arange(12), 5_000)
            y, s = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
            state = pe.LabelFreeEstimator().fit(y, s, periods=periods)._state()
            bins = state["bins"]
            spread, tilt_sd = error_movement(state["period_errors"], bins.error_alpha)
            class_sd = class_shift_sd(state["period_sums"], bins.predicted, k)
            rho = tilt_class_correlation(
                state["period_sums"], state["period_errors"], bins, spread, tilt_sd, class_sd
            )
            if sd:
                assert rho.min() > 0.3, (seed, rho)
                assert rho.mean() > 0.5, (seed, rho)
            else:
                assert not class_sd.any(), (seed, class_sd)
                assert not rho.any(), (seed, rho)


def test_class_shifts_keep_each_rate_and_learn_from_labels() -> None:
    """The mean-preserving offset against numerical integration (scipy), and a chunk's class
    shift: the prior without labels; with labels that say class 1's predictions are right less
    often than the reference's, a negative mean for class 1 and a narrower sd."""
    from scipy import integrate, special

    rate = np.array([0.05, 0.5, 0.8, 0.97])
    sd = np.array([0.3, 0.6, 0.4, 1.0])
    mu = _mean_preserving_offset(rate, sd)
    for r, s, m in zip(rate, sd, mu, strict=True):
        mean, _ = integrate.quad(
            lambda z, r=r, s=s, m=m: (
                special.expit(special.logit(r) + m + s * z)
                * np.exp(-z * z / 2)
                / np.sqrt(2 * np.pi)
            ),
            -12,
            12,
        )
        assert mean == pytest.approx(r, abs=1e-7)
    rng = np.random.default_rng(34)
    y, scores = simulate_multiclass(rng, 6_000, 3)
    bins, _, _ = fit_bins(scores, y, 4)
    b = bins.n_bins
    zeros = np.zeros((2, b))
    right, wrong = zeros.copy(), zeros.copy()
    own = bins.predicted == 1
    right[1, own], wrong[1, own] = 40.0, 60.0
    rate_of = (bins.correct + 0.5) / (bins.correct + bins.wrong + 1.0)
    right[1, ~own] = np.round(100 * rate_of[~own])
    wrong[1, ~own] = 100 - right[1, ~own]
    centring = _mean_preserving_offset(rate_of, np.full(b, 0.3))
    offset, class_sd = chunk_class_shifts(
        0.3, (zeros + 100, zeros, zeros, zeros, zeros), bins, 0.05
    )
    np.testing.assert_array_equal(class_sd, np.full((2, 3), 0.3))
    np.testing.assert_allclose(offset, np.stack([centring, centring]))
    stats = (zeros + 100, zeros, zeros, right, wrong)
    offset, class_sd = chunk_class_shifts(0.3, stats, bins, 0.05)
    assert np.all(class_sd[1] < 0.3)
    assert np.all(offset[1, own] < centring[own] - 0.2)
    # The chunk without labels learns from its neighbour's, less surely.
    assert np.all(offset[1, own] < offset[0, own])
    assert np.all(offset[0, own] < centring[own])
    assert class_sd[0, 1] > class_sd[1, 1]


def test_walk_moments_match_the_gaussian_posterior() -> None:
    """The class walk's Kalman filter and smoother against the same Gaussian model written
    out in full (numpy): per chunk x_c = mu_c + e_c, the levels' covariance s0 + q min(i, j),
    three chunks of seven without labels; means, variances and the log marginal likelihood's
    differences between hyperparameter points."""
    rng = np.random.default_rng(35)
    n, own = 7, 0.04
    residual = rng.normal(0.0, 0.4, n)
    noise = rng.uniform(0.01, 0.2, n)
    noise[[1, 4, 5]] = np.inf
    start, step = np.array([0.0, 0.09, 0.5, 0.0]), np.array([0.0, 0.01, 0.0, 0.04])
    means, variances, log_likelihood = _class_walk_moments(residual, noise, own, start, step)
    seen = np.isfinite(noise)
    index = np.arange(n)
    dense = []
    for g in range(start.shape[0]):
        levels = start[g] + step[g] * np.minimum.outer(index, index)
        x = levels + own * np.eye(n)
        y = x[np.ix_(seen, seen)] + np.diag(noise[seen])
        cross = x[:, seen]
        solve = np.linalg.solve(y, residual[seen])
        np.testing.assert_allclose(means[:, g], cross @ solve, atol=1e-12)
        posterior = np.diag(x) - np.einsum("ij,ji->i", cross, np.linalg.solve(y, cross.T))
        np.testing.assert_allclose(variances[:, g], posterior, atol=1e-12)
        dense.append(-0.5 * (np.linalg.slogdet(y)[1] + residual[seen] @ solve))
    np.testing.assert_allclose(log_likelihood - log_likelihood[0], np.array(dense) - dense[0])


def test_labels_show_a_class_that_moved_from_some_chunk_on() -> None:
    """Per-chunk estimates of a class's shift as the labels give them (noise sd 0.12, as 400
    labels of a class give), the class moving by -0.2 logit from the seventh of twelve chunks
    on (the card tiers' second class after their concept shift), 200 streams: the walk's
    error is well below each chunk's own labels' (measured .059 against .095) and its normal
    95% intervals cover 0.91 of the chunks (a step is the hardest case of a walk); a stable
    class stays near 0 (.003 against .093)."""
    rng = np.random.default_rng(36)
    truth = np.where(np.arange(12) >= 6, -0.2, 0.0)
    noise = np.full(12, 0.12**2)
    for moved, ratio in ((truth, 0.7), (np.zeros(12), 0.1)):
        errors_walk, errors_own, covered = [], [], []
        for _ in range(200):
            residual = moved + rng.normal(0.0, 0.12, 12)
            mean, var = (a[:, 0] for a in _class_walks(residual[:, None], noise[:, None], 0.0))
            errors_walk.append(np.abs(mean - moved).mean())
            errors_own.append(np.abs(residual - moved).mean())
            covered.append(np.mean(np.abs(mean - moved) <= 1.96 * np.sqrt(var)))
        assert np.mean(errors_walk) < ratio * np.mean(errors_own)
        assert np.mean(covered) >= 0.85


def test_class_walks_match_enumerating_which_classesclass_moved() -> None:
    """The classes' walks against the same model summed over which classes moved (2^K
    indicator vectors, each with its prior from the share π's), each class's moments those of
    its (s0, q) posterior given that it moved, or of s0 = q = 0 given that it stayed."""
    rng = np.random.default_rng(38)
    n, k, own = 9, 3, 0.01
    residual = rng.normal(0.0, 1.0, (n, k)) * np.array([0.1, 0.4, 0.6]) + np.array([0.3, 0, -0.2])
    noise = rng.uniform(0.02, 0.4, (n, k))
    noise[rng.random((n, k)) < 0.3] = np.inf
    noise[0] = 0.1
    mean, var = _class_walks(residual, noise, math.sqrt(own))
    moved_prior = _class_walk_moved_prior(n)
    share, share_prior = _CLASS_WALK_SHARE, _class_walk_share_prior()
    parts = []
    for j in range(k):
        m, v, log_likelihood = _class_walk_moments(
            residual[:, j], noise[:, j], own, _CLASS_WALK_START_VAR, _CLASS_WALK_STEP_VAR
        )
        likelihood = np.exp(log_likelihood)
        posterior = moved_prior * likelihood / (moved_prior @ likelihood)
        parts.append(
            {
                False: (likelihood[0], m[:, 0], v[:, 0] + m[:, 0] ** 2),
                True: (moved_prior @ likelihood, m @ posterior, (v + m**2) @ posterior),
            }
        )
    first, second, total = np.zeros((n, k)), np.zeros((n, k)), 0.0
    for moved in itertools.product([False, True], repeat=k):
        count = sum(moved)
        weight = float(share_prior @ (share**count * (1.0 - share) ** (k - count)))
        for j in range(k):
            weight *= parts[j][moved[j]][0]
        total += weight
        for j in range(k):
            first[:, j] += weight * parts[j][moved[j]][1]
            second[:, j] += weight * parts[j][moved[j]][2]
    np.testing.assert_allclose(mean, first / total, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(var, second / total - (first / total) ** 2, rtol=1e-8, atol=1e-12)


def test_classes_that_moved_make_a_rare_class_movement_likelier() -> None:
    """Twelve chunks; two common classes known to within 0.15 logit per chunk, a rare one to
    within 0.55; 200 streams per case. The share of classes that moved is learned from all
    three: when the common ones moved (+0.5, -0.3), the rare one's move of -0.4 is found better
    than from its own labels alone (measured error .183 against .228, normal-interval coverage
    0.83 against 0.70); when none moved, the rare one stays nearer 0 (.014 against .025). The
    price is paid where the classes disagree: a rare class that stayed while the others moved
    (.050 against .021), or one that moved alone (.255 against .220, coverage 0.60 against
    0.74)."""
    rng = np.random.default_rng(37)
    sds = np.array([0.15, 0.15, 0.55])
    cases = [
        ([0.5, -0.3], -0.4, True),
        ([0.0, 0.0], 0.0, True),
        ([0.5, -0.3], 0.0, False),
        ([0.0, 0.0], -0.4, False),
    ]
    for others, rare, better in cases:
        truth = np.array([*others, rare])
        together, alone = [], []
        for _ in range(200):
            residual = truth + rng.normal(0.0, 1.0, (12, 3)) * sds
            noise = np.tile(sds**2, (12, 1))
            mean, _ = _class_walks(residual, noise, 0.0)
            own, _ = _class_walks(residual[:, 2:], noise[:, 2:], 0.0)
            together.append(np.abs(mean[:, 2] - rare).mean())
            alone.append(np.abs(own[:, 0] - rare).mean())
        assert bool(np.mean(together) < 0.9 * np.mean(alone)) is better, (others, rare)


def test_save_and_load_give_identical_estimates(tmp_path: Any) -> None:
    rng = np.random.default_rng(4)
    y_ref, s_ref = simulate_multiclass(rng, 5_000, 4)
    _, s = simulate_multiclass(rng, 2_000, 4)
    labels = np.array(["a", "b", "c", "d"])
    estimator = pe.LabelFreeEstimator(
        metrics=["accuracy", "f1[b]", "roc_auc_macro", "average_precision_weighted"]
    )
    estimator.fit(labels[y_ref], s_ref, periods=5)
    path = tmp_path / "multiclass.json"
    estimator.save(path)
    loaded = pe.LabelFreeEstimator.load(path)
    first = estimator.estimate(s, rng=9, n_samples=1_000, n_chunks=2)
    second = loaded.estimate(s, rng=9, n_samples=1_000, n_chunks=2)
    assert first == second
    assert first.decision("accuracy", 1) == second.decision("accuracy", 1)
    # The surest predictions labelled: placed in their bins by the kept finer calibration.
    sure = s.max(axis=1) > np.quantile(s.max(axis=1), 0.9)
    partial = np.where(sure, labels[np.argmax(s, axis=1)], None)
    placed = [
        one.estimate(s, partial_labels=partial, rng=9, n_samples=500, n_chunks=2)
        for one in (estimator, loaded)
    ]
    assert placed[0] == placed[1]
    for bad in ([0], [3, 2], [10**6], [0.5]):
        saved = estimator.to_dict()
        saved["reference_confidence"] = {**saved["reference_confidence"], "restarts": bad}
        with pytest.raises(ValueError, match="restarts"):
            pe.LabelFreeEstimator.from_dict(saved)
    # Saved before the finer calibration was kept: labelled rows taken as their bins' rows.
    unplaced = estimator.to_dict()
    del unplaced["reference_confidence"]
    assert (
        pe.LabelFreeEstimator.from_dict(unplaced).estimate(
            s, partial_labels=partial, rng=9, n_samples=500, n_chunks=2
        )
        != placed[0]
    )
    broken = {**estimator.to_dict(), "error_alpha": [[1.0, 2.0]]}
    with pytest.raises(ValueError, match="error_alpha"):
        pe.LabelFreeEstimator.from_dict(broken)
    negative = -np.asarray(estimator.to_dict()["period_errors"]) - 1.0
    for bad in ([[[1.0]]], negative.tolist()):
        with pytest.raises(ValueError, match="period_errors"):
            pe.LabelFreeEstimator.from_dict({**estimator.to_dict(), "period_errors": bad})
    # Average precision asked of one-vs-rest estimators that do not estimate it.
    without = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc_macro"])
    tampered = without.fit(labels[y_ref], s_ref).to_dict()
    tampered["metrics"] = ["accuracy", "roc_auc_macro", "average_precision_macro"]
    with pytest.raises(ValueError, match="average_precision"):
        pe.LabelFreeEstimator.from_dict(tampered)
    # Saved before the error shares' movement was kept: the reference's shares, as then.
    old = {**estimator.to_dict(), "period_errors": None}
    del old["period_errors"]
    assert pe.LabelFreeEstimator.from_dict(old).estimate(s, rng=9, n_samples=100, n_chunks=2)
    with pytest.raises(ValueError, match="score_shares"):
        pe.LabelFreeEstimator.from_dict({**estimator.to_dict(), "score_shares": [[-1.0]]})
    # Saved before the reference's score shares were kept: no tilt from the chunks' scores.
    older = estimator.to_dict()
    del older["score_shares"]
    plain = pe.LabelFreeEstimator.from_dict(older)
    assert plain.estimate(s, rng=9, n_samples=100, n_chunks=2)


def test_dirichlet_multinomial_matches_scipy() -> None:
    """The core's log-likelihood of cells of counts under Dirichlet(A m) shares, plus the
    multinomial coefficients it leaves out, is scipy's Dirichlet-multinomial log-pmf summed
    over the cells; a share of 0 with no count in it is left out. Bad input is a ValueError."""
    from scipy import stats
    from scipy.special import gammaln

    rng = np.random.default_rng(3)
    counts = rng.integers(0, 40, (12, 4)).astype(np.float64)
    counts[:, 2] = 0.0
    shares = rng.dirichlet(np.ones(4), 12)
    shares[:, 2] = 0.0
    shares /= shares.sum(axis=1, keepdims=True)
    precisions = np.array([0.7, 5.0, 80.0, 3_000.0])
    got = _core.dirichlet_multinomial_log_likelihood(counts, shares, precisions)
    n = counts.sum(axis=1)
    coefficient = (gammaln(n + 1) - gammaln(counts + 1).sum(axis=1)).sum()
    keep = [0, 1, 3]
    for value, a in zip(got, precisions, strict=True):
        expected = sum(
            stats.dirichlet_multinomial.logpmf(row[keep], a * m[keep], int(total))
            for row, m, total in zip(counts, shares, n, strict=True)
        )
        assert value + coefficient == pytest.approx(expected, rel=1e-10, abs=1e-8)
    with pytest.raises(ValueError, match="same shape"):
        _core.dirichlet_multinomial_log_likelihood(counts, shares[:, :3], precisions)
    with pytest.raises(ValueError, match="precisions"):
        _core.dirichlet_multinomial_log_likelihood(counts, shares, np.array([0.0]))
    with pytest.raises(ValueError, match="finite"):
        _core.dirichlet_multinomial_log_likelihood(-counts, shares, precisions)


def test_error_share_spread_recovers_the_periods_movement() -> None:
    """Periods whose error shares in each bin are drawn from Dirichlet(A m): E[1 / (A + 1)]
    lands near the truth for A = 10 and 40, and near 0 for shares that never move (plain
    multinomial periods); too few periods give 0. The widened Dirichlet keeps each bin's mean
    and has the variance m(1 - m) (1 / (N + 1) + v)."""
    rng = np.random.default_rng(8)
    periods, bins, k = 12, 20, 3
    m = rng.dirichlet(np.full(k, 4.0), bins)
    alpha = m * 5_000.0
    for a in (10.0, 40.0, None):
        counts = np.empty((periods, bins, k))
        for p in range(periods):
            for b in range(bins):
                shares = m[b] if a is None else rng.dirichlet(a * m[b])
                counts[p, b] = rng.multinomial(400, shares)
        v = error_share_spread(counts, alpha)
        if a is None:
            assert v < 0.002, v
        else:
            assert 0.7 / (a + 1) < v < 1.4 / (a + 1), (a, v)
    assert error_share_spread(counts[:2], alpha) == 0.0
    widened = drifting_error_alpha(alpha, 0.05)
    total = widened.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(widened / total, m)
    variance = widened / total * (1 - widened / total) / (total + 1)
    np.testing.assert_allclose(variance, m * (1 - m) * (1 / 5_001.0 + 0.05))
    assert drifting_error_alpha(alpha, 0.0) is alpha
    # A bin lighter than the prior's own weight (a hand-made saved estimator) stays a valid
    # Dirichlet: positive shares, the same mean.
    light = drifting_error_alpha(np.array([[0.0, 0.05, 0.05]]), 0.2)
    assert np.all(light[0, 1:] > 0)
    np.testing.assert_allclose(light[0, 1:] / light.sum(), [0.5, 0.5])


def _tilted_periods(
    rng: np.random.Generator, m: np.ndarray, sd: np.ndarray, periods: int, errors: int
) -> np.ndarray:
    """Wrong predictions per period, bin and true class: each period's shares m ∘ e^g
    normalised, g ~ N(0, sd²) per class, common to every bin."""
    counts = np.empty((periods, *m.shape))
    for p in range(periods):
        tilted = m * np.exp(rng.normal(0.0, sd))
        tilted /= tilted.sum(axis=1, keepdims=True)
        for b in range(m.shape[0]):
            counts[p, b] = rng.multinomial(errors, tilted[b])
    return counts


def test_error_movement_tells_a_common_tilt_from_each_bins_own() -> None:
    """Periods whose every bin's error shares tilt together by g ~ N(0, sd²): the learned sds
    land near the truth (the contrast's: a class that never moves still shows the others'
    mean), and each bin's own spread comes out near 0, where error_share_spread alone, blind
    to the common part, takes it for each bin's own movement. Shares that move per bin only
    (Dirichlet(40 m)) keep their spread and learn no tilt."""
    rng = np.random.default_rng(21)
    bins, k = 30, 3
    m = rng.dirichlet(np.full(k, 4.0), bins)
    m[np.arange(bins), np.arange(bins) % k] = 0.0
    m /= m.sum(axis=1, keepdims=True)
    alpha = m * 5_000.0
    truth = np.array([0.4, 0.0, 0.2])
    counts = _tilted_periods(rng, m, truth, 40, 300)
    spread, sd = error_movement(counts, alpha)
    # sd of the centred contrast g_j - mean(g): what the shares can show.
    contrast = np.sqrt(np.diag((np.eye(k) - 1 / k) @ np.diag(truth**2) @ (np.eye(k) - 1 / k)))
    np.testing.assert_allclose(sd, contrast, rtol=0.35, atol=0.03)
    assert spread < 0.002 < error_share_spread(counts, alpha), spread
    own = np.empty((40, bins, k))
    for p in range(40):
        for b in range(bins):
            own[p, b] = rng.multinomial(300, rng.dirichlet(40 * m[b] + 1e-12))
    spread, sd = error_movement(own, alpha)
    assert 0.7 / 41 < spread < 1.4 / 41, spread
    assert np.all(sd < 0.06), sd
    assert np.all(error_movement(counts[:2], alpha)[1] == 0.0)


def test_tilt_mode_recovers_a_tilt_with_its_noise() -> None:
    """The maximum-likelihood tilt of one period's counts, centred, lands on the centred truth;
    over 300 periods its spread matches the variances it reports (within 20%). With a prior
    N(-sd²/2, sd²) (E[e^g] = 1) and labels, a chunk's tilt is pulled towards them and narrower
    than the prior; without labels it is the prior."""
    rng = np.random.default_rng(22)
    bins, k = 12, 4
    m = rng.dirichlet(np.full(k, 3.0), bins)
    m[np.arange(bins), np.arange(bins) % k] = 0.0
    m /= m.sum(axis=1, keepdims=True)
    gamma = np.array([0.5, -0.2, 0.0, -0.3])
    tilted = m * np.exp(gamma)
    tilted /= tilted.sum(axis=1, keepdims=True)
    fits = [
        _tilt_mode(np.stack([rng.multinomial(200, row) for row in tilted]), m, None, 0.0)
        for _ in range(300)
    ]
    estimates = np.array([f[0] for f in fits])
    np.testing.assert_allclose(estimates.mean(axis=0), gamma - gamma.mean(), atol=0.02)
    np.testing.assert_allclose(
        estimates.std(axis=0), np.sqrt(np.mean([f[1] for f in fits], axis=0)), rtol=0.2
    )
    sd = np.array([0.3, 0.3, 0.0, 0.3])
    known = np.zeros((2, bins, k))
    known[1] = np.stack([rng.multinomial(40, row) for row in tilted])
    np.testing.assert_array_equal(chunk_error_tilts(sd, known[:1], m, 0.0)[0], [-(sd**2) / 2, sd])
    tilts = chunk_error_tilts(sd, known, m, 0.0)
    # The labelled chunk shows production tilted further than the prior allowed: every
    # chunk's prior widens (the unlabelled one's mean stays at -v/2), the labelled chunk's
    # posterior is narrower than that and leans to class 0.
    np.testing.assert_allclose(tilts[0, 0], -(tilts[0, 1] ** 2) / 2)
    assert np.all(tilts[0, 1] > sd)
    assert np.all(tilts[1, 1] < tilts[0, 1])
    assert tilts[1, 0, 0] > tilts[1, 0, 1] + 0.3


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(3, 5),
    n=st.integers(1, 60),
    groups=st.integers(1, 3),
    seed=st.integers(0, 10**6),
)
def test_score_share_moments_are_each_bins_means_of_the_rows_other_shares(
    k: int, n: int, groups: int, seed: int
) -> None:
    """Per group and bin, the mean over its rows of each row's scores of the classes it did
    not predict, over their sum (rows with only the predicted class's score count as zeros),
    and the mean of their squares, against a loop over the rows; ties and zero scores
    included; and the same rows named by index into the scores (``rows``), in another
    order."""
    rng = np.random.default_rng(seed)
    y_ref, s_ref = simulate_multiclass(rng, 400, k)
    bins, _, _ = fit_bins(s_ref, y_ref, 4)
    scores = np.round(rng.dirichlet(np.full(k, 0.5), n), 1)
    scores[0] = np.eye(k)[0]
    predicted, u = pseudo_scores(scores)
    group = rng.integers(0, groups, n)
    means, squares, rows = score_share_moments(bins, u, predicted, scores, group, groups)
    which = bins.bin_of(u)
    want_means, want_rows = np.zeros((groups, bins.n_bins, k)), np.zeros((groups, bins.n_bins))
    want_squares = np.zeros_like(want_means)
    for row in range(n):
        other = scores[row].copy()
        other[predicted[row]] = 0.0
        if other.sum() > 0:
            want_means[group[row], which[row]] += other / other.sum()
            want_squares[group[row], which[row]] += (other / other.sum()) ** 2
        want_rows[group[row], which[row]] += 1
    want_means /= np.maximum(want_rows, 1.0)[:, :, None]
    want_squares /= np.maximum(want_rows, 1.0)[:, :, None]
    np.testing.assert_allclose(means, want_means, atol=1e-12)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_allclose(squares, want_squares, atol=1e-12)
    # Each bin's move share lies between its correct rate (rows as unlike as can be) and 1.
    kappa = move_shares(bins, means, squares)
    correct = (bins.correct + 0.5) / (bins.correct + bins.wrong + 1.0)
    assert (kappa >= correct[None, :, None] - 1e-12).all()
    assert (kappa <= 1.0 + 1e-12).all()
    # The same rows named by index into the scores, in another order.
    order = rng.permutation(n)
    means, _, rows = score_share_moments(
        bins, u[order], predicted[order], scores, group[order], groups, rows=order
    )
    np.testing.assert_allclose(means, want_means, atol=1e-12)
    np.testing.assert_array_equal(rows, want_rows)


def test_error_shares_follow_where_the_other_scoresclass_moved() -> None:
    """A chunk drawn like the reference keeps each bin's error parameters (within the noise of
    its rows' mean shares, at most 0.5 / sqrt(rows) a sd, at the same total weight); one whose
    rows put more of their other scores on class 0 moves every bin's errors towards class 0,
    by the ratio of the rows' mean shares; and when the
    errors follow the scores, the estimates of the recall of class 0 (more of the wrong
    predictions are its rows) and of class 2 (fewer) move towards their expected values
    (against the same estimator without the score shares; precision does not depend on it)."""
    rng = np.random.default_rng(8)
    y_ref, s_ref = simulate_multiclass(rng, 20_000, 3)
    bins, _, _ = fit_bins(s_ref, y_ref, 10)
    assert bins.score_shares is not None
    _, same = simulate_multiclass(rng, 5_000, 3)
    logits = np.log(same)
    logits[:, 0] += 0.8  # class 0 a likelier second choice (and first, now and then)
    moved = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    m = bins.error_alpha / bins.error_alpha.sum(axis=1, keepdims=True)
    offsets, counts = [], []
    for scores in (same, moved):
        predicted, u = pseudo_scores(scores)
        shares, _, rows = score_share_moments(bins, u, predicted, scores)
        counts.append(rows[0])
        alpha = error_alpha_from_scores(bins, shares)[0]
        np.testing.assert_allclose(alpha.sum(axis=1), bins.error_alpha.sum(axis=1))
        offsets.append(alpha / alpha.sum(axis=1, keepdims=True) - m)
        # Calibrated scores: a wrong prediction is class j with the row's share of j among the
        # other classes, so each bin's shares move by the ratio of the mean shares.
        seen = (bins.score_shares > 0) & (shares[0] > 0)
        ratio = np.where(seen, shares[0], 1.0) / np.where(seen, bins.score_shares, 1.0)
        want = m * ratio / (m * ratio).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(alpha / alpha.sum(axis=1, keepdims=True), want)
    assert (np.abs(offsets[0]) * np.sqrt(counts[0])[:, None] < 2.0).all(), offsets[0]
    others = bins.predicted != 0
    towards = [
        np.average(o[others, 0], weights=c[others]) for o, c in zip(offsets, counts, strict=True)
    ]
    # Rows-weighted over the bins (sd about 0.007 for the chunk like the reference).
    assert abs(towards[0]) < 0.02, towards
    assert towards[1] > 0.04, towards
    # A class the reference's rows gave next to no score moves its share ten-fold at most,
    # and shares of 1e-300 against 1 overflow nothing.
    tiny = dataclasses.replace(bins, score_shares=np.where(m > 0, 1e-300, 0.0))
    alpha = error_alpha_from_scores(tiny, np.where(m > 0, 1.0, 0.0)[None])[0]
    assert np.all(np.isfinite(alpha))
    np.testing.assert_allclose(alpha.sum(axis=1), bins.error_alpha.sum(axis=1))
    np.testing.assert_allclose(alpha, bins.error_alpha)  # every class ten-fold: no move
    # Bins predicting 1 or 2: class 0 had the rows' other scores (share 1), the remaining
    # class 1e-300; the chunk's rows share them equally. Class 0's share halves, the other's
    # grows ten-fold (not 1e300-fold): twenty times the odds.
    lopsided = np.where(m > 0, 1e-300, 0.0)
    lopsided[:, 0] = np.where(m[:, 0] > 0, 1.0, 0.0)
    moved_alpha = error_alpha_from_scores(
        dataclasses.replace(bins, score_shares=lopsided), np.where(m > 0, 0.5, 0.0)[None]
    )[0]
    assert np.all(np.isfinite(moved_alpha))
    for b in np.flatnonzero(others):
        j = 3 - int(bins.predicted[b])  # the class neither predicted nor 0
        before = bins.error_alpha[b, j] / bins.error_alpha[b, 0]
        assert moved_alpha[b, j] / moved_alpha[b, 0] == pytest.approx(20.0 * before)
    # Population target: the expected confusion matrix of these scores is the truth.
    predicted = moved.argmax(axis=1)
    matrix = np.stack([moved[predicted == i].sum(axis=0) for i in range(3)], axis=1)
    truth = {f"recall[{j}]": matrix[j, j] / matrix[j].sum() for j in (0, 2)}
    names = list(truth)
    estimator = pe.LabelFreeEstimator(metrics=names).fit(y_ref, s_ref)
    saved = estimator.to_dict()
    del saved["score_shares"]  # as a fit saved before the shares were kept: the reference's
    plain = pe.LabelFreeEstimator.from_dict(saved)
    result = estimator.estimate(moved, rng=2, n_samples=4_000)
    before = plain.estimate(moved, rng=2, n_samples=4_000)
    for name in names:
        gap = abs(result.posterior(name).mean() - truth[name])
        assert gap < abs(before.posterior(name).mean() - truth[name]), (name, gap)


def test_labels_that_say_nothing_leave_the_error_tilt_alone() -> None:
    """A chunk's one known wrong prediction, or a few in each of five chunks drawn from the
    reference's own shares, cannot show production's error shares moving: every chunk's tilt
    prior stays N(-sd²/2, sd²). (τ's posterior mean of τ² added the prior's 0.89 there, and a
    stable stream with 10 labels got macro F1 intervals twice as wide.)"""
    rng = np.random.default_rng(22)
    bins, k = 12, 4
    m = rng.dirichlet(np.full(k, 3.0), bins)
    m[np.arange(bins), np.arange(bins) % k] = 0.0
    m /= m.sum(axis=1, keepdims=True)
    sd = np.array([0.3, 0.3, 0.0, 0.3])
    untouched = [-(sd**2) / 2, sd]
    known = np.zeros((2, bins, k))
    known[1, 3, 0] = 1
    np.testing.assert_array_equal(chunk_error_tilts(sd, known, m, 0.0)[0], untouched)
    for _ in range(50):
        known = np.zeros((6, bins, k))
        for c in range(1, 6):
            for b in rng.integers(0, bins, 3):
                known[c, b] += rng.multinomial(1, m[b])
        np.testing.assert_array_equal(chunk_error_tilts(sd, known, m, 0.0)[0], untouched)


@settings(max_examples=40, deadline=None)
@given(
    periods=st.integers(0, 6),
    bins=st.integers(1, 4),
    k=st.integers(3, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_error_share_spread_property(periods: int, bins: int, k: int, seed: int) -> None:
    """Any counts (zeros, empty periods, a class never an error) give a finite v in [0, 1/2]
    and a widened Dirichlet with the same shares; with the common tilt, a spread in [0, 1/2],
    finite tilt sds >= 0 and chunk tilts whose sds are at most the prior's."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 30, (periods, bins, k)).astype(np.float64) * rng.integers(0, 2)
    alpha = rng.integers(0, 50, (bins, k)).astype(np.float64) + 0.5 * rng.random((bins, k))
    alpha[:, 0] = 0.0
    counts[..., 0] = 0.0
    v = error_share_spread(counts, alpha)
    assert 0.0 <= v <= 0.5
    widened = drifting_error_alpha(alpha, v)
    assert np.all(np.isfinite(widened))
    assert np.all(widened >= 0)
    np.testing.assert_allclose(
        widened / widened.sum(axis=1, keepdims=True), alpha / alpha.sum(axis=1, keepdims=True)
    )
    spread, sd = error_movement(counts, alpha)
    assert 0.0 <= spread <= 0.5
    assert sd.shape == (k,)
    assert np.all(np.isfinite(sd))
    assert np.all(sd >= 0)
    prior = sd + 0.1 * rng.random(k)
    known = counts if periods else np.zeros((1, bins, k))
    tilts = chunk_error_tilts(prior, known, alpha, spread)
    assert np.all(np.isfinite(tilts))
    assert np.all(tilts[:, 1] >= 0)
    # The same parameters given per chunk: the same tilts; each chunk's own (moved towards a
    # class): still finite, and the widened Dirichlet keeps each chunk's shares.
    per_chunk = np.repeat(alpha[None], known.shape[0], axis=0)
    np.testing.assert_array_equal(chunk_error_tilts(prior, known, per_chunk, spread), tilts)
    per_chunk[..., 1] *= 1.0 + rng.random((known.shape[0], 1))
    assert np.all(np.isfinite(chunk_error_tilts(prior, known, per_chunk, spread)))
    widened = drifting_error_alpha(per_chunk, v)
    np.testing.assert_allclose(
        widened / np.maximum(widened.sum(axis=2, keepdims=True), 1e-300),
        per_chunk / np.maximum(per_chunk.sum(axis=2, keepdims=True), 1e-300),
    )
    # Chunks without labels get the prior, widened by what the labelled ones show, centred at
    # -v/2; with labels, at most that wide.
    unlabelled = known.sum(axis=(1, 2)) == 0
    wide = np.sqrt(np.maximum(-2.0 * tilts[unlabelled, 0], 0.0))
    np.testing.assert_allclose(tilts[unlabelled, 1], wide, atol=1e-12)
    assert np.all(tilts[unlabelled, 1] >= prior - 1e-12)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(20, 400),
    k=st.integers(3, 5),
    chunks=st.integers(1, 4),
    sd=st.floats(0.0, 2.0),
    seed=st.integers(0, 2**32 - 1),
)
# A class shift sd of one denormal: the correlation once divided by it and overflowed.
@example(n=20, k=3, chunks=3, sd=5e-324, seed=0)
def test_class_shift_property(n: int, k: int, chunks: int, sd: float, seed: int) -> None:
    """Any reference and labelled counts (none, a few, a bin all right or all wrong, some
    chunks without) give a finite class shift: offsets finite, sds ``sd`` when no chunk has
    labels and finite >= 0 otherwise, and a finite learned sd >= 0 from any period sums."""
    rng = np.random.default_rng(seed)
    scores = rng.dirichlet(np.ones(k), n)
    y = rng.integers(0, k, n)
    bins, _, _ = fit_bins(scores, y, 3)
    b = bins.n_bins
    # Some chunks labelled, some not (each chunk's labels kept or dropped).
    keep = rng.integers(0, 2, (chunks, 1))
    right = rng.integers(0, 5, (chunks, b)).astype(np.float64) * keep * rng.integers(0, 2)
    wrong = rng.integers(0, 5, (chunks, b)).astype(np.float64) * keep * rng.integers(0, 2)
    counts = right + wrong + rng.integers(0, 50, (chunks, b))
    stats = (counts, np.zeros((chunks, b)), np.zeros((chunks, b)), right, wrong)
    offset, class_sd = chunk_class_shifts(sd, stats, bins, 0.1)
    assert offset.shape == (chunks, b)
    assert class_sd.shape == (chunks, k)
    assert np.all(np.isfinite(offset))
    assert np.all(np.isfinite(class_sd))
    assert np.all(class_sd >= 0)
    if not (right + wrong).any():
        np.testing.assert_allclose(class_sd, sd, atol=1e-12)
    sums = np.stack([counts, right, counts, counts, right], axis=-1)
    learned = class_shift_sd(sums, bins.predicted, k)
    assert learned.shape == (k,)
    assert np.all((learned >= 0.0) & (learned <= 2.0 * np.sqrt(2.0)))
    # The two moves' correlation from the same periods and any of their errors: finite and
    # within its bounds, 0 without a class shift.
    errors = rng.integers(0, 20, (chunks, b, k)).astype(np.float64)
    errors[:, np.arange(b), bins.predicted] = 0.0
    tilt_sd = rng.uniform(0.0, 1.0, k)
    rho = tilt_class_correlation(sums, errors, bins, 0.01, tilt_sd, sd)
    assert rho.shape == (k,)
    assert np.all(np.abs(rho) <= 0.9)
    assert not tilt_class_correlation(sums, errors, bins, 0.01, tilt_sd, 0.0).any()


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.integers(1, 30),
    sd=st.floats(0.0, 2.0),
    scale=st.floats(1e-3, 50.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_class_walk_property(chunks: int, sd: float, scale: float, seed: int) -> None:
    """Any residuals (up to 50 logit apart) and label noise (some chunks without labels, at
    least one with) give finite means and variances >= 0; the variances are at most the walk's
    own prior's where a chunk has labels of its own."""
    rng = np.random.default_rng(seed)
    residual = rng.normal(0.0, scale, chunks)
    noise = rng.uniform(1e-4, 4.0, chunks)
    noise[rng.random(chunks) < 0.5] = np.inf
    noise[rng.integers(0, chunks)] = rng.uniform(1e-4, 4.0)
    mean, var = (a[:, 0] for a in _class_walks(residual[:, None], noise[:, None], sd))
    assert mean.shape == var.shape == (chunks,)
    assert np.all(np.isfinite(mean))
    assert np.all(np.isfinite(var))
    assert np.all(var >= 0)


def test_data_frame_score_columns() -> None:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    y_ref, s_ref = simulate_multiclass(rng, 4_000, 3)
    _, s = simulate_multiclass(rng, 1_000, 3)
    frame = pd.DataFrame({"label": y_ref, "p0": s_ref[:, 0], "p1": s_ref[:, 1], "p2": s_ref[:, 2]})
    production = pd.DataFrame({"p0": s[:, 0], "p1": s[:, 1], "p2": s[:, 2]})
    by_frame = pe.LabelFreeEstimator().fit(frame, y_true="label", y_score=["p0", "p1", "p2"])
    by_array = pe.LabelFreeEstimator().fit(y_ref, s_ref)
    assert by_frame.estimate(production, y_score=["p0", "p1", "p2"], rng=1) == by_array.estimate(
        s, rng=1
    )


def test_bad_multiclass_input_is_named() -> None:
    rng = np.random.default_rng(1)
    y_ref, s_ref = simulate_multiclass(rng, 3_000, 3)
    estimator = pe.LabelFreeEstimator().fit(y_ref, s_ref)
    with pytest.raises(ValueError, match="3 classes"):
        estimator.estimate(np.full((5, 2), 0.5))
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\].*row 0, column 1"):
        estimator.estimate(np.array([[0.2, 1.5, 0.1]]))
    with pytest.raises(ValueError, match="perfect"):
        pe.LabelFreeEstimator(calibration="perfect").fit(y_ref, s_ref)
    with pytest.raises(ValueError, match="pos_label"):
        pe.LabelFreeEstimator().fit(y_ref, s_ref, pos_label=1)
    with pytest.raises(ValueError, match="4 columns but there are 3 classes"):
        pe.LabelFreeEstimator().fit(y_ref, np.column_stack([s_ref, s_ref[:, :1]]) / 2)
    with pytest.raises(ValueError, match="no rows of the class 3"):
        pe.LabelFreeEstimator().fit(
            y_ref, np.column_stack([s_ref, np.zeros(3_000)]), labels=[0, 1, 2, 3]
        )
    with pytest.raises(ValueError, match="per class"):
        pe.LabelFreeEstimator(metrics=["precision"]).fit(y_ref, s_ref)
    with pytest.raises(ValueError, match="no class is written 'dog'"):
        pe.LabelFreeEstimator(metrics=["recall[dog]"]).fit(y_ref, s_ref)
    with pytest.raises(ValueError, match="multiclass metrics"):
        pe.LabelFreeEstimator(metrics=["f1_macro"]).fit([0, 1, 0, 1], [0.2, 0.8, 0.3, 0.6])
    with pytest.raises(ValueError, match="classes \\[7\\]"):
        estimator.estimate(s_ref[:10], y_true=[7] * 10)


@settings(max_examples=25, deadline=None)
@given(
    k=st.integers(3, 6),
    n_ref=st.integers(30, 400),
    n=st.integers(1, 300),
    seed=st.integers(0, 2**32 - 1),
    target=st.sampled_from(["population", "realized"]),
    method=st.sampled_from(["hierarchical", "pooled", "label shift"]),
    coarse=st.booleans(),
)
def test_estimates_are_finite_and_bounded(
    k: int, n_ref: int, n: int, seed: int, target: str, method: str, coarse: bool
) -> None:
    shift = "label" if method == "label shift" else "covariate"
    method = "hierarchical" if method == "label shift" else method
    rng = np.random.default_rng(seed)
    y_ref, s_ref = simulate_multiclass(rng, n_ref, k)
    y_ref[:k] = np.arange(k)  # every class in the reference
    _, s = simulate_multiclass(rng, n, k)
    if coarse:  # tied, coarse scores
        s_ref, s = np.round(s_ref, 1), np.round(s, 1)
    names = [*DEFAULT_MULTICLASS, "roc_auc_macro", "roc_auc_weighted", "average_precision_macro"]
    estimator = pe.LabelFreeEstimator(n_bins=3, method=method, metrics=names, shift=shift)
    estimator.fit(y_ref, s_ref)
    partial = np.where(rng.random(n) < 0.3, rng.integers(0, k, n), -1).astype(float)
    partial[partial < 0] = np.nan
    result = estimator.estimate(
        s, target=target, partial_labels=partial, n_samples=64, rng=1, chunk_size=100
    )
    for chunk in range(len(result)):
        for name in result.metrics:
            post = result.posterior(name, chunk)
            low, high = post.bounds
            assert np.all(np.isfinite(post.samples)), name
            assert np.all((post.samples >= low) & (post.samples <= high)), name


def test_chunks_plot_draws_a_multiclass_metric() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(12)
    y_ref, s_ref = simulate_multiclass(rng, 4_000, 3)
    y, s = simulate_multiclass(rng, 3_000, 3)
    result = pe.LabelFreeEstimator().fit(y_ref, s_ref).estimate(s, y_true=y, n_chunks=3, rng=0)
    for name in ("f1_macro", "roc_auc_macro"):
        ax = pe.plot.chunks(result, name)
        assert name in ax.get_ylabel() or name in ax.get_title()


def test_ranking_metrics_alone_and_with_labels() -> None:
    """Only ROC AUC asked for (no confusion-matrix metric): estimated, and the realized value
    of a backtest is scikit-learn's one-vs-rest macro AUC."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(13)
    y_ref, s_ref = simulate_multiclass(rng, 5_000, 3)
    y, s = simulate_multiclass(rng, 2_000, 3)
    estimator = pe.LabelFreeEstimator(metrics=["roc_auc_macro", "roc_auc[1]"])
    result = estimator.fit(y_ref, s_ref).estimate(s, y_true=y, rng=0, n_samples=500)
    assert result.metrics == ["roc_auc_macro", "roc_auc[1]"]
    assert result.realized("roc_auc_macro") == pytest.approx(
        roc_auc_score(y, s, multi_class="ovr", average="macro"), abs=1e-12
    )
    assert result.realized("roc_auc[1]") == pytest.approx(roc_auc_score(y == 1, s[:, 1]), abs=1e-12)
    post = result.realized_posterior("roc_auc_macro")
    assert post is not None
    assert abs(post.mean() - result.realized("roc_auc_macro")) < 4 * post.std()


@pytest.mark.parametrize(("k", "rows", "tie"), [(3, 2_000, None), (4, 3_000, 0.05)])
def test_with_labels_ranking_posteriors_match_the_per_row_bootstrap(
    k: int, rows: int, tie: float | None
) -> None:
    """A backtest's with-labels one-vs-rest ROC AUC and average precision posteriors (each
    class on coarse bins that keep the rows' order, joined across classes by the
    shared-weight bootstrap's correlations) against ``evaluate(max_bins=None)``: the exact
    per-row bootstrap with one weight per row shared by every class, another kernel. Per class,
    macro and weighted: sds within Monte Carlo error (1 / sqrt(n) for a ratio), means within it
    plus 0.05 sd (average precision's prevalence is Beta(P + 1, N + 1) here, the rows' own
    share there: measured up to 0.042 sd at 500 rows, 0.027 here; 20 chunks with the macro
    averages took 14.7 s with labels before, when AUC's 32 bins counted their rows as tied and
    its draws sat 0.03-0.11 sd low, against 7.5 s now)."""
    rng = np.random.default_rng(k + rows)
    y_ref, s_ref = simulate_multiclass(rng, 5_000, k)
    y, s = simulate_multiclass(rng, rows, k)
    if tie:
        s = np.round(s / tie) * tie
    names = [
        "roc_auc_macro",
        "roc_auc_weighted",
        "roc_auc[0]",
        f"roc_auc[{k - 1}]",
        "average_precision_macro",
        "average_precision_weighted",
        f"average_precision[{k - 1}]",
    ]
    n = 20_000
    estimator = pe.LabelFreeEstimator(metrics=names).fit(y_ref, s_ref)
    result = estimator.estimate(s, y_true=y, n_samples=n, rng=1)
    exact = pe.evaluate(y, y_score=s, metrics=names, max_bins=None, n_samples=n, rng=5)
    for name in names:
        post, want = result.realized_posterior(name), exact[name]
        assert post is not None
        assert result.realized(name) == pytest.approx(want.observed, abs=1e-12)
        assert post.std() / want.std() == pytest.approx(1.0, abs=5 / np.sqrt(n)), name
        assert abs(post.mean() - want.mean()) < (0.05 + 4 * np.sqrt(2 / n)) * want.std(), name


def test_auc_correlation_matches_the_bootstrap() -> None:
    """The influence-function correlation of the classes' one-vs-rest AUCs against a
    brute-force bootstrap (600 resamples of 3,000 rows, scikit-learn's AUC): within 0.15 per
    entry (a correlation's Monte Carlo sd over 600 resamples is at most 0.04)."""
    from sklearn.metrics import roc_auc_score

    from probeval.labelfree.multiclass import auc_correlation

    rng = np.random.default_rng(17)
    y, s = simulate_multiclass(rng, 3_000, 4)
    boot = np.empty((600, 4))
    for b in range(600):
        rows = rng.integers(0, 3_000, 3_000)
        boot[b] = [roc_auc_score(y[rows] == k, s[rows, k]) for k in range(4)]
    expected = np.corrcoef(boot, rowvar=False)
    measured = auc_correlation(y, s)
    np.testing.assert_allclose(measured, expected, atol=0.15)
    # The errors really are correlated here: the check is not of a near-identity matrix.
    assert np.abs(expected - np.eye(4)).max() > 0.2


def test_auc_coupling_is_the_correlation_of_a_sampling_part_plus_a_drift_part() -> None:
    """Brute force: draws that are a sampling part (correlated as ``sampling``) plus an
    independent drift part (classes correlated at 0.5), each class's variance split as given;
    their correlation matrix against :func:`auc_coupling`'s, within 0.01 (200,000 draws: a
    correlation's Monte Carlo sd is below 0.003)."""
    from probeval.labelfree.multiclass import auc_coupling

    sampling = np.array([[1.0, 0.7, -0.1], [0.7, 1.0, 0.2], [-0.1, 0.2, 1.0]])
    sampling_var = np.array([4e-5, 1e-4, 2e-5])
    drift_var = np.array([6e-5, 0.0, 8e-5])
    drift = np.full((3, 3), 0.5) + 0.5 * np.eye(3)
    rng = np.random.default_rng(3)
    n = 200_000
    part_s = rng.multivariate_normal(
        np.zeros(3), sampling * np.sqrt(np.outer(sampling_var, sampling_var)), n
    )
    part_d = rng.multivariate_normal(
        np.zeros(3), drift * np.sqrt(np.outer(drift_var, drift_var)), n
    )
    expected = np.corrcoef(part_s + part_d, rowvar=False)
    got = auc_coupling(sampling, sampling_var + drift_var, sampling_var, 0.5)
    np.testing.assert_allclose(got, expected, atol=0.01)
    # No drift: the sampling correlation itself; all drift: the drift correlation.
    total = sampling_var + drift_var
    np.testing.assert_allclose(auc_coupling(sampling, total, total, 0.5), sampling)
    np.testing.assert_allclose(auc_coupling(sampling, total, np.zeros(3), 0.5), drift)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda k: st.tuples(
            st.lists(st.floats(0.0, 1e-3), min_size=k, max_size=k),
            st.lists(st.floats(0.0, 1.5), min_size=k, max_size=k),
            st.integers(0, 2**32 - 1),
            st.floats(-1.0, 1.0),
        )
    )
)
def test_auc_coupling_is_a_correlation_matrix(case: Any) -> None:
    """Any split of any variances (zeros, a sampling part above the total) and any drift
    correlation a K-class matrix can hold: symmetric, unit diagonal, entries in [-1, 1],
    positive semi-definite (so the copula can take it)."""
    from probeval.labelfree.multiclass import auc_coupling

    total, ratio, seed, rho = case
    k = len(total)
    total = np.array(total)
    rho = max(rho, -1.0 / (k - 1))
    root = np.random.default_rng(seed).standard_normal((k, k + 1))
    cov = root @ root.T
    sampling = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    got = auc_coupling(sampling, total, total * np.array(ratio), rho)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, got.T)
    np.testing.assert_array_equal(np.diag(got), 1.0)
    assert np.abs(got).max() <= 1.0 + 1e-12
    assert np.linalg.eigvalsh(got).min() >= -1e-9


def test_macro_auc_draws_carry_the_classes_drift_together() -> None:
    """The macro ROC AUC's draws have the sd that :func:`auc_coupling` gives the classes' draws:
    each class's sampling variance from the pooled method's draws (the same bins, no drift),
    the rest drift correlated at 0.5 — with a drift (unseen_drift=0.5) that makes this sd 1.06x
    the sampling correlation's alone (a shift of the classes' log-odds moves their AUCs little;
    the chunk from a population that moved, where the unseen drift applies).
    Within 3% (20,000 draws; a rank copula); the pooled method's own macro draws follow the
    sampling correlation."""
    from probeval.labelfree.multiclass import AUC_DRIFT_CORRELATION, auc_coupling

    rng = np.random.default_rng(41)
    y_ref, s_ref = simulate_multiclass(rng, 20_000, 3)
    _, s = simulate_multiclass(rng, 5_000, 3, spread=_MOVED_SPREAD)
    names = ["roc_auc_macro", "roc_auc[0]", "roc_auc[1]", "roc_auc[2]"]

    def draws(method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        estimator = pe.LabelFreeEstimator(metrics=names, method=method, unseen_drift=0.5)
        result = estimator.fit(y_ref, s_ref).estimate(s, n_samples=20_000, rng=2)
        per_class = np.stack([result.posterior(f"roc_auc[{c}]").samples for c in range(3)])
        macro = result.posterior("roc_auc_macro").samples
        np.testing.assert_allclose(per_class.mean(axis=0), macro, rtol=0, atol=1e-15)
        return per_class, macro, estimator._state()["auc_correlation"]

    pooled, pooled_macro, sampling = draws("pooled")
    sd = pooled.std(axis=1)
    assert pooled_macro.std() == pytest.approx(np.sqrt(sd @ sampling @ sd) / 3, rel=0.03)
    moved, macro, _ = draws("hierarchical")
    total = moved.var(axis=1)
    coupling = auc_coupling(sampling, total, pooled.var(axis=1), AUC_DRIFT_CORRELATION)
    sd = np.sqrt(total)
    assert macro.std() == pytest.approx(np.sqrt(sd @ coupling @ sd) / 3, rel=0.03)
    assert macro.std() > 1.04 * np.sqrt(sd @ sampling @ sd) / 3


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6).map(lambda v: v / 6), st.booleans()), min_size=1, max_size=40
    )
)
def test_class_counts_around_each_row_are_the_binary_searches(rows: list[Any]) -> None:
    """The AUC correlation's counts of each class below / at most each row's score (one sort,
    tie groups) against ``searchsorted`` into each class's sorted scores; heavy ties."""
    from probeval.labelfree.multiclass import _class_counts_around

    s = np.array([v for v, _ in rows])
    positive = np.array([p for _, p in rows])
    neg, pos = np.sort(s[~positive]), np.sort(s[positive])
    want = [
        np.searchsorted(neg, s, "left"),
        np.searchsorted(neg, s, "right"),
        np.searchsorted(pos, s, "left"),
        np.searchsorted(pos, s, "right"),
    ]
    for got, expected in zip(_class_counts_around(s, positive), want, strict=True):
        np.testing.assert_array_equal(got, expected)


class _MovedOracle:
    """``expected_metrics(scores, class_moved(scores, shift))`` for many shifts of the same
    scores, with what does not depend on the shift done once: the rows grouped by predicted
    class, and each class's scores in order. P(y = j | s) = s_j e^shift_j / D(s) with
    D(s) = sum_i s_i e^shift_i, so a shift costs one pass over the rows, not a sort and a
    gather of every class (0.8 s per million-row replication at K = 10 before)."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = scores
        k = scores.shape[1]
        predicted = scores.argmax(axis=1)
        by_predicted = np.argsort(predicted, kind="stable")
        self.grouped = scores[by_predicted]
        self.group_sizes = np.bincount(predicted, minlength=k)
        self.denominator_rows = by_predicted
        self.orders = score_orders(scores)
        self.sorted = [scores[order, j] for j, order in enumerate(self.orders)]

    def __call__(self, shift: np.ndarray | None) -> dict[str, float]:
        k = self.scores.shape[1]
        factor = np.ones(k) if shift is None else np.exp(shift)
        denominator = self.scores @ factor
        # np.take: the same values as fancy indexing, in half the time.
        truth = self.grouped * (factor / np.take(denominator, self.denominator_rows)[:, None])
        bounds = np.concatenate([[0], np.cumsum(self.group_sizes)])
        # matrix[j, i]: expected rows of class j predicted i.
        matrix = np.stack([truth[bounds[i] : bounds[i + 1]].sum(axis=0) for i in range(k)], axis=1)
        positives = [
            self.sorted[j] * factor[j] / np.take(denominator, order)
            for j, order in enumerate(self.orders)
        ]
        return metrics_of_expectations(matrix, positives)


def test_moved_oracle_is_the_expected_metrics_of_the_moved_scores() -> None:
    """The coverage test's fast truth against :func:`expected_metrics` of the moved
    probabilities themselves (summation order aside)."""
    _, scores = simulate_multiclass(np.random.default_rng(5), 50_000, 4)
    oracle = _MovedOracle(scores)
    for shift in (None, np.array([0.3, -0.2, 0.0, 0.5]), np.array([-1.0, 0.0, 0.1, 0.0])):
        want = expected_metrics(scores, class_moved(scores, shift))
        got = oracle(shift)
        for name, value in want.items():
            assert got[name] == pytest.approx(value, rel=1e-12), (name, shift)


#: A production population that moved (:func:`_coverage`): the logits' sd, 1.6 in the reference.
#: It opens the unseen drift (:func:`~probeval.labelfree.drift.unseen_share`) in every one of 20
#: replications at K = 3 and K = 10; the reference's own population opened it in 1 of 20 at
#: K = 3 (a share of 0.04) and none at K = 10.
_MOVED_SPREAD = 1.4


def _coverage(
    k: int, method: str, reps: int, *, unseen_drift: float = 0.08, drifted: bool = False
) -> dict[str, dict[str, float]]:
    """Share of replications whose 95% HDI covers the population value (the expected value
    over 10^6 rows of the same model) and the chunk's realized value: a fresh 20,000-row
    reference and a 5,000-row chunk of calibrated scores per replication; ``drifted``: the
    chunk is another population (its classes told apart less sharply: logits' sd 1.4, the
    reference's 1.6, which its bin counts show) whose classes' log-odds moved by shifts drawn
    from N(0, ``unseen_drift``² / 2), the estimator's unseen-drift prior (two classes: a shift
    of sd ``unseen_drift``)."""
    names = ["accuracy", "f1_macro", "roc_auc_macro", "average_precision_macro"]
    spread = _MOVED_SPREAD if drifted else 1.6
    _, s_big = simulate_multiclass(np.random.default_rng(99), 1_000_000, k, spread=spread)
    oracle = _MovedOracle(s_big)
    still = oracle(None)
    covered: dict[str, dict[str, list[bool]]] = {
        t: {m: [] for m in names} for t in ("population", "realized")
    }
    for rep in range(reps):
        rng = np.random.default_rng(rep)
        shift = rng.normal(0.0, unseen_drift / np.sqrt(2.0), k) if drifted else None
        y_ref, s_ref = simulate_multiclass(rng, 20_000, k)
        y, s = simulate_multiclass(rng, 5_000, k, shift=shift, spread=spread)
        population = still if shift is None else oracle(shift)
        estimator = pe.LabelFreeEstimator(
            metrics=names, method=method, unseen_drift=unseen_drift
        ).fit(y_ref, s_ref)
        # The chunk's own values, from its labels (numpy; the estimator's `realized` values
        # equal scikit-learn's, tested above). The draws do not depend on y_true.
        realized = {name: float(v[0]) for name, v in _metrics_of_labels(y[None], s).items()}
        for target in covered:
            result = estimator.estimate(s, target=target, n_samples=1_000, rng=rep)
            truths = population if target == "population" else realized
            for name in names:
                low, high = result.posterior(name).hdi(0.95)
                covered[target][name].append(bool(low <= truths[name] <= high))
    return {t: {m: float(np.mean(v)) for m, v in c.items()} for t, c in covered.items()}


# Each case's minutes on a slow two-core machine, so that the suite starts the longest first.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("k", "method", "unseen_drift", "drifted"),
    [
        pytest.param(3, "pooled", 0.08, False, marks=pytest.mark.slow(minutes=2)),
        pytest.param(3, "hierarchical", 0.08, False, marks=pytest.mark.slow(minutes=3)),
        pytest.param(3, "hierarchical", 0.08, True, marks=pytest.mark.slow(minutes=5)),
        pytest.param(10, "pooled", 0.08, False, marks=pytest.mark.slow(minutes=5)),
        pytest.param(10, "hierarchical", 0.08, False, marks=pytest.mark.slow(minutes=7)),
        pytest.param(10, "hierarchical", 0.08, True, marks=pytest.mark.slow(minutes=13)),
    ],
)
def test_coverage_over_400_replications(
    k: int, method: str, unseen_drift: float, drifted: bool
) -> None:
    """400 replications (binomial sd of a 95% coverage: 1.1%). On calibrated streams the pooled
    method and the default cover 92-98% (the default's unseen drift applies only where the
    chunk's scores show another population, :func:`~probeval.labelfree.drift.unseen_share`:
    none of these chunks, so it reads as ``unseen_drift=0`` did); the default covers at least
    92% of chunks from a population that moved (:data:`_MOVED_SPREAD`) and whose classes'
    log-odds moved by the unseen drift it allows for (drawn from its prior). Measured
    2026-12-02 (population / realized; accuracy, macro F1, macro AUC):

    ============================  =================  =================
    K = 3                         population         realized
    ============================  =================  =================
    pooled                        .927 / .948 / .938 .948 / .950 / .950
    default, not moving           .978 / .970 / .945 .950 / .968 / .963
    default, moved                .963 / .950 / .978 .953 / .973 / .968
    ============================  =================  =================

    K = 10: pooled .943 / .945 / .950 and .945 / .950 / .955; not moving .968 / .963 / .968
    and .950 / .960 / .968; moved .953 / .958 / .985 and .955 / .948 / .965. Before the
    unseen drift followed the scores, the default covered the chunks that did not move .990 /
    .978 / .948 and .965 / .968 / .968 (K = 10: .988 / .973 / .953 and .965 / .963 / .955),
    and the moved ones (their scores as the reference's) .953 / .973 / .955 and .968 / .983 /
    .965 (K = 10: .948 / .950 / .950 and .943 / .938 / .945). Macro AUC of moved populations
    sits high (.978, .985): their one-vs-rest calibrations also get the further shift of a
    chunk whose scores moved (``drift_per_shift``). How each model change moved these rows:
    docs/labelfree-record.md ("Multiclass models").
    Macro average precision: K = 3 pooled .960 / .945, not moving .975 / .955, moved 1.000 /
    .993; K = 10 pooled .968 / .963, not moving .955 / .970, moved .998 / .963 (HDI ends from
    1,000 draws carry Monte Carlo error: a build whose draws differ in their last digits moves
    these by up to .008). On the moved K = 10 streams of before, the one-vs-rest macro AUC sat
    low (mean 0.30 posterior sds, the pooled method's 0.38), which held that cell at .932
    before the classes' drift was coupled."""
    result = _coverage(k, method, 400, unseen_drift=unseen_drift, drifted=drifted)
    for target, values in result.items():
        print(
            f"K={k:2d} {method:12s} unseen {unseen_drift:g} drifted {drifted!s:5s} {target:10s} "
            + " ".join(f"{name} {value:.3f}" for name, value in values.items())
        )
    for target, values in result.items():
        for name, value in values.items():
            assert value >= 0.92, (method, target, name, value)
            if not drifted:
                assert value <= 0.98, (method, target, name, value)


def test_bin_table_is_in_terms_of_predicted_class_and_confidence() -> None:
    rng = np.random.default_rng(12)
    y, s = simulate_multiclass(rng, 6_000, 3)
    names = np.array(["low", "mid", "top"])
    table = pe.LabelFreeEstimator(n_bins=5).fit(names[y], s).bin_table
    assert set(table["predicted"]) == {"low", "mid", "top"}
    assert table["correct"].sum() + table["wrong"].sum() == 6_000
    predicted, confidence = s.argmax(axis=1), s.max(axis=1)
    for row in table.rows():
        c = list(names).index(row["predicted"])
        # Bins are (low, high]; 1e-9 absorbs the rounding of the edges' back-transform.
        inside = (
            (predicted == c)
            & (confidence > row["confidence_low"] + 1e-9)
            & (confidence <= row["confidence_high"] + 1e-9)
        )
        # The bin's counts are the reference rows predicted c with a confidence in its range.
        assert inside.sum() == pytest.approx(row["correct"] + row["wrong"])
        assert (y[inside] == c).sum() == pytest.approx(row["correct"])
        assert row[f"wrong_is[{row['predicted']}]"] == 0.0
        assert sum(row[f"wrong_is[{n}]"] for n in names) == pytest.approx(1.0)
    # Integer labels: the same table but for the class names.
    ints = pe.LabelFreeEstimator(n_bins=5).fit(y, s).bin_table
    assert ints["correct"].tolist() == table["correct"].tolist()
    assert ints["confidence_low"].tolist() == table["confidence_low"].tolist()


def _class_period_sums(rng: np.random.Generator, sd: float) -> np.ndarray:
    """Period sums (5 periods x 10 bins, 400 rows each, one distinct score per bin) of a rare
    class whose bins' logit rates deviate by N(0, sd) afresh in every period."""
    rate = 1.0 / (1.0 + np.exp(-np.linspace(-4.5, -0.5, 10)))
    logit = np.log(rate / (1 - rate))[None, :] + rng.normal(0.0, sd, (5, 10))
    rows = np.full((5, 10), 400.0)
    positives = rng.binomial(400, 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    return np.stack([rows, positives, rows * rate, rows * rate**2, positives * rate], axis=-1)


@pytest.mark.parametrize("sd", [0.0, 0.3])
def test_classes_share_the_sd_of_the_bins_deviations(sd: float) -> None:
    """Ten rare classes' calibrations learned together: one sd of the bins' own deviations,
    close to the true one when there is one (0.28-0.31 over four seeds at sd 0.3), and smaller
    than each class's own estimate on a stable stream (0.01-0.04 together, 0.05-0.07 one by
    one). Each class keeps its own shift and tilt, learned with the others whether any moves
    (:func:`test_classes_learn_together_whether_their_calibrations_move`): none of these ten
    does, so each class's shift sd falls (0.009 alone, under 0.001 together, at sd 0)."""
    from probeval.labelfree.drift import learn_drift, learn_drifts

    parts = [_class_period_sums(np.random.default_rng(40 + c), sd) for c in range(10)]
    alone = [learn_drift(part) for part in parts]
    together = learn_drifts(parts, [1.0] * 10)
    assert len({drift.bin_sd for drift in together}) == 1
    for one, joint in zip(alone, together, strict=True):
        assert joint.shift_sd <= one.shift_sd
        assert joint.tilt_sd <= one.tilt_sd
        if sd == 0.0:
            assert joint.shift_sd < 1e-3
    shared = together[0].bin_sd
    if sd == 0.0:
        assert shared < 0.05
        assert shared < np.mean([drift.bin_sd for drift in alone])
    else:
        assert shared == pytest.approx(sd, abs=0.06)


@pytest.mark.parametrize("seed", range(4))
def test_classes_learn_together_whether_their_calibrations_move(seed: int) -> None:
    """The classes' shift and tilt sds once it is learned from all of them whether any moves
    (prior STILL_PRIOR that none does, otherwise each its own spike and slab) against the same
    model summed out on the grid of every pair of sds: two classes, each with its periods'
    restricted likelihood, one of them still and the other moving by 0.5 logit (seed 0, 1) or
    both still."""
    from probeval.labelfree.drift import STILL_PRIOR, _together_still, tau_posterior

    rng = np.random.default_rng(seed)
    noise = [rng.uniform(0.001, 0.02, 6) for _ in range(2)]
    moves = [0.0, 0.5 if seed < 2 else 0.0]
    effects = [rng.normal(0.0, np.sqrt(u + m**2)) for u, m in zip(noise, moves, strict=True)]
    alone = [tau_posterior(e, u) for e, u in zip(effects, noise, strict=True)]
    together = _together_still([(one, one) for one in alone])
    grid = alone[0][0]
    own = np.full(grid.shape[0], (1 - STILL_PRIOR) / (grid.shape[0] - 1))
    own[0] = STILL_PRIOR
    likelihood = [weight / own for _, weight in alone]
    joint = (1 - STILL_PRIOR) * np.outer(own, own)
    joint[0, 0] += STILL_PRIOR
    joint *= np.outer(likelihood[0], likelihood[1])
    joint /= joint.sum()
    for c, marginal in enumerate((joint.sum(axis=1), joint.sum(axis=0))):
        got = together[c]
        assert got is not None
        for e in range(2):
            np.testing.assert_allclose(got[e][1], marginal, rtol=1e-9, atol=1e-15)
    # A class that moves keeps its own sd; still ones lose what five periods left possible.
    sd = [float(np.sqrt((grid**2 * t[0][1]).sum())) for t in together if t is not None]
    sd_alone = [float(np.sqrt((grid**2 * w).sum())) for _, w in alone]
    assert sd[0] < sd_alone[0]
    if seed < 2:
        assert sd[1] == pytest.approx(sd_alone[1], rel=1e-3)


@given(
    masses=st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=0, max_size=6),
    seed=st.integers(0, 2**16),
)
def test_classes_learn_together_property(masses: list[float | None], seed: int) -> None:
    """Any calibrations' τ posteriors (some absent): each result is a distribution on the same
    grid, its mass at 0 no less than before; a calibration that cannot be still (no mass at 0)
    leaves every other one as it was."""
    from probeval.labelfree.drift import _together_still

    rng = np.random.default_rng(seed)
    grid = np.linspace(0.0, 2.0, 8)

    def posterior(at_zero: float) -> tuple[np.ndarray, np.ndarray]:
        rest = rng.dirichlet(np.ones(7)) * (1.0 - at_zero)
        return grid, np.concatenate([[at_zero], rest])

    taus = [None if m is None else (posterior(m), posterior(m)) for m in masses]
    together = _together_still(taus)
    assert len(together) == len(taus)
    never_still = any(m == 0.0 for m in masses if m is not None)
    for before, after in zip(taus, together, strict=True):
        assert (before is None) == (after is None)
        if before is None or after is None:
            continue
        for (g0, w0), (g1, w1) in zip(before, after, strict=True):
            np.testing.assert_array_equal(g0, g1)
            assert np.all(w1 >= 0.0)
            assert w1.sum() == pytest.approx(1.0)
            assert w1[0] >= w0[0] - 1e-12
            if never_still:
                np.testing.assert_allclose(w1, w0, rtol=0, atol=1e-12)
