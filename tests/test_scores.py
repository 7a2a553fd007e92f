"""ROC AUC and average precision from scores: point values against scikit-learn, posterior
spread against DeLong, binned against the exact per-row bootstrap, HDI coverage, merging,
edge cases and multiclass one-vs-rest."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.metrics import average_precision_score, roc_auc_score

import probeval as pe
from probeval import _core


def _binormal(rng: np.random.Generator, auc: float, n_pos: int, n_neg: int) -> tuple:
    """Scores of a binormal model with population ROC AUC ``auc``."""
    shift = math.sqrt(2.0) * stats.norm.ppf(auc)
    y = np.r_[np.ones(n_pos, dtype=int), np.zeros(n_neg, dtype=int)]
    s = np.r_[rng.normal(shift, 1.0, n_pos), rng.normal(0.0, 1.0, n_neg)]
    return y, s, shift


def _delong_se(y: np.ndarray, s: np.ndarray) -> float:
    """DeLong's standard error of the empirical AUC (midranks, Sun & Xu's formulation)."""
    pos, neg = s[y == 1], s[y == 0]
    m, n = len(pos), len(neg)
    ranks = stats.rankdata(np.r_[pos, neg])
    v10 = (ranks[:m] - stats.rankdata(pos)) / n
    v01 = 1.0 - (ranks[m:] - stats.rankdata(neg)) / m
    return math.sqrt(v10.var(ddof=1) / m + v01.var(ddof=1) / n)


# --------------------------------------------------------------------------- point values


@pytest.mark.parametrize("seed", range(30))
def test_point_values_equal_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000))
    y = rng.integers(0, 2, n)
    y[0], y[-1] = 0, 1  # both classes
    kind = seed % 3
    if kind == 0:  # probabilities with many ties
        s = np.round(rng.random(n) * 0.6 + 0.3 * y, 2)
    elif kind == 1:  # logits (negative values allowed)
        s = rng.normal(size=n) + y
    else:  # a handful of distinct scores
        s = rng.integers(0, 5, n).astype(float) + y * rng.integers(0, 2, n)
    w = rng.random(n) * 3 if seed % 2 else None
    summary = pe.ScoreSummary.from_scores(y, s, sample_weight=w)
    assert summary.roc_auc() == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    expected_ap = average_precision_score(y, s, sample_weight=w)
    assert summary.average_precision() == pytest.approx(expected_ap, abs=1e-12)


def test_ties_get_half_credit() -> None:
    # One positive and one negative at the same score: AUC 1/2; plus a clean win: 3/4.
    summary = pe.ScoreSummary.from_scores([0, 1], [0.4, 0.4])
    assert summary.roc_auc() == 0.5
    summary = pe.ScoreSummary.from_scores([0, 1, 1, 0], [0.4, 0.4, 0.9, 0.1])
    # Pairs: (0.4 vs 0.4) = 1/2, (0.4 vs 0.1) = 1, (0.9 vs both) = 2 -> 3.5 / 4.
    assert summary.roc_auc() == 0.875


def test_evaluate_reports_score_metrics_and_summary() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 500)
    s = np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0, 1)
    ev = pe.evaluate(y, y_score=s, rng=1, n_samples=4000)
    assert list(ev)[-2:] == ["roc_auc", "average_precision"]
    assert ev["roc_auc"].observed == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert ev["auc"] is ev["roc_auc"]  # aliases
    assert ev["ap"] is ev["average_precision"]
    assert ev.scores == pe.ScoreSummary.from_scores(y, s)
    assert ev["roc_auc"].mean() == pytest.approx(roc_auc_score(y, s), abs=0.01)
    table = ev.summary()
    assert "roc_auc" in list(table["metric"])
    json.dumps(ev.to_dict())
    # With predictions, scores may be any real numbers (here: logits).
    logits = np.log(s + 1e-3) - np.log(1 - s + 1e-3)
    ev = pe.evaluate(y, y_pred=s > 0.5, y_score=logits, metrics=["f1", "roc_auc"], rng=1)
    assert ev["roc_auc"].observed == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    # predict_proba's two columns: the positive class's column is used.
    two = np.column_stack([1 - s, s])
    ev2 = pe.evaluate(y, y_score=two, metrics=["accuracy", "roc_auc"], rng=1)
    assert ev2["roc_auc"].observed == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert ev2.confusion == pe.ConfusionMatrix.from_scores(y, s)


def test_same_rng_same_draws_and_seeds_are_independent_of_other_metrics() -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 800)
    s = rng.random(800) * 0.7 + 0.3 * y
    a = pe.evaluate(y, y_score=s, rng=11, n_samples=3000)
    b = pe.evaluate(y, y_score=s, metrics=["roc_auc"], rng=11, n_samples=3000)
    np.testing.assert_array_equal(a["roc_auc"].samples, b["roc_auc"].samples)
    direct = pe.ScoreSummary.from_scores(y, s).posterior("roc_auc", rng=11, n_samples=3000)
    assert not np.array_equal(direct.samples, a["accuracy"].samples)


# --------------------------------------------------------------------------- posteriors


@pytest.mark.parametrize("auc", [0.6, 0.7, 0.8, 0.9, 0.95])
def test_posterior_sd_matches_delong(auc: float) -> None:
    rng = np.random.default_rng(int(auc * 100))
    y, s, _ = _binormal(rng, auc, 300, 700)
    post = pe.ScoreSummary.from_scores(y, s).posterior("roc_auc", n_samples=20_000, rng=2)
    se = _delong_se(y, s)
    # The two agree to first order; the MC error of a 20k-draw sd is 0.5%.
    assert post.std() == pytest.approx(se, rel=0.10)
    assert post.mean() == pytest.approx(roc_auc_score(y, s), abs=0.2 * se)


@pytest.mark.parametrize("auc", [0.7, 0.92])
def test_binned_mean_matches_exact_per_row_bootstrap(auc: float) -> None:
    rng = np.random.default_rng(17)
    y, s, _ = _binormal(rng, auc, 6000, 14000)  # 20,000 distinct scores -> 2048 bins
    summary = pe.ScoreSummary.from_scores(y, s)
    assert summary.binned().n_distinct <= 2048 < summary.n_distinct
    binned = summary.posterior("roc_auc", n_samples=20_000, rng=3)
    # An independent code path: per-row Exp(1) weights over the distinct scores.
    _, inverse = np.unique(s, return_inverse=True)
    per_row = _core.auc_draws_per_row(
        inverse.astype(np.uint32), y == 1, np.ones(len(y)), summary.n_distinct, 4000, 5
    )
    exact = summary.posterior("roc_auc", max_bins=None, n_samples=4000, rng=4)
    mc = 5 * per_row[0].std() / math.sqrt(4000)
    assert abs(binned.mean() - per_row[0].mean()) < 0.002
    assert abs(exact.mean() - per_row[0].mean()) < mc
    assert exact.std() == pytest.approx(per_row[0].std(), rel=0.06)
    assert binned.std() == pytest.approx(per_row[0].std(), rel=0.06)
    # Average precision too (its prevalence differs slightly: Beta(n+ + 1, n- + 1)).
    ap_binned = summary.posterior("average_precision", n_samples=20_000, rng=3)
    assert abs(ap_binned.mean() - per_row[1].mean()) < 0.002


def _true_average_precision(shift: float, prevalence: float) -> float:
    """Population AP of the binormal model: E over positives of the precision at their score."""

    t = np.linspace(shift - 12.0, shift + 12.0, 48_001)
    tpr, fpr = stats.norm.sf(t - shift), stats.norm.sf(t)
    precision = prevalence * tpr / (prevalence * tpr + (1 - prevalence) * fpr)
    return float(integrate.trapezoid(stats.norm.pdf(t - shift) * precision, t))


def test_hdi_coverage_of_the_true_auc() -> None:
    """Draw data from a binormal model with known AUC; the 95% HDI should cover it ~95% of
    the time. 500 replications: a binomial sd of 1%, so 92-98% is a 3-sd band."""
    rng = np.random.default_rng(2026)
    reps, covered_auc, covered_ap = 500, 0, 0
    for rep in range(reps):
        true_auc = float(rng.uniform(0.6, 0.95))
        y, s, shift = _binormal(rng, true_auc, 300, 700)
        posts = pe.ScoreSummary.from_scores(y, s).posteriors(n_samples=2000, rng=rep)
        low, high = posts["roc_auc"].hdi(0.95)
        covered_auc += low <= true_auc <= high
        if rep < 200:  # AP's truth needs an integral: fewer replications
            true_ap = _true_average_precision(shift, 0.3)
            low, high = posts["average_precision"].hdi(0.95)
            covered_ap += low <= true_ap <= high
    print(f"coverage: AUC {covered_auc / reps:.3f}, AP {covered_ap / 200:.3f}")
    assert 0.92 <= covered_auc / reps <= 0.98, covered_auc / reps
    # 200 replications: sd 1.5%; a 3-sd band.
    assert 0.905 <= covered_ap / 200 <= 0.995, covered_ap / 200


# --------------------------------------------------------------------------- ScoreSummary


def test_merging_parts_equals_summarising_everything() -> None:
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 3000)
    s = np.round(rng.random(3000), 3)
    w = rng.random(3000)
    whole = pe.ScoreSummary.from_scores(y, s, sample_weight=w)
    parts = [
        pe.ScoreSummary.from_scores(y[i : i + 700], s[i : i + 700], sample_weight=w[i : i + 700])
        for i in range(0, 3000, 700)
    ]
    merged = parts[0].merge(*parts[1:])
    np.testing.assert_array_equal(merged.values, whole.values)
    np.testing.assert_allclose(merged.positives, whole.positives, rtol=1e-12)
    np.testing.assert_allclose(merged.negatives, whole.negatives, rtol=1e-12)
    assert sum(parts[1:], parts[0]).roc_auc() == pytest.approx(whole.roc_auc(), abs=1e-12)
    # A part with one class only is fine to hold and merge.
    only_pos = pe.ScoreSummary.from_scores([1, 1], [0.2, 0.9])
    only_neg = pe.ScoreSummary.from_scores([0], [0.5])
    assert (only_pos + only_neg).roc_auc() == 0.5
    with pytest.raises(ValueError, match="need both classes"):
        only_pos.roc_auc()


def test_round_trip_and_repr() -> None:
    summary = pe.ScoreSummary.from_scores(["a", "b", "b"], [0.1, 0.7, 0.2], pos_label="b")
    assert summary.labels == ("a", "b")
    data = json.loads(json.dumps(summary.to_dict()))
    assert pe.ScoreSummary.from_dict(data) == summary
    assert "3 distinct scores" in repr(summary)
    with pytest.raises(ValueError, match="different classes"):
        summary + pe.ScoreSummary.from_scores([0, 1], [0.1, 0.2])


def test_constant_scores_are_a_point_mass_at_one_half() -> None:
    summary = pe.ScoreSummary.from_scores([0, 1, 1, 0, 1], [0.3] * 5)
    posts = summary.posteriors(n_samples=1000, rng=1)
    assert np.all(posts["roc_auc"].samples == 0.5)
    assert posts["roc_auc"].hdi() == (0.5, 0.5)
    # Average precision is the prevalence: its posterior is Beta(n+ + 1, n- + 1).
    assert posts["average_precision"].observed == pytest.approx(0.6)
    assert posts["average_precision"].mean() == pytest.approx(4 / 7, abs=0.01)


def test_single_class_is_an_error_when_asked_and_a_warning_by_default() -> None:
    with pytest.raises(ValueError, match="need both classes"):
        pe.evaluate([1, 1, 1], y_score=[0.2, 0.6, 0.9], metrics=["roc_auc"])
    with pytest.warns(UserWarning, match="one class only"):
        ev = pe.evaluate([1, 1, 1], y_score=[0.2, 0.6, 0.9], rng=0)
    assert "roc_auc" not in ev
    assert "recall" in ev


def test_nan_scores_name_the_index() -> None:
    with pytest.raises(ValueError, match=r"y_score has a missing value \(NaN\) at index 2"):
        pe.ScoreSummary.from_scores([0, 1, 1], [0.1, 0.2, np.nan])
    with pytest.raises(ValueError, match=r"row 1, column 0"):
        pe.evaluate([0, 1, 2], y_score=[[0.2, 0.3, 0.5], [np.inf, 0, 0], [0, 0, 1]])


def test_compare_two_models_auc_and_random_baseline() -> None:
    rng = np.random.default_rng(5)
    y, s_good, _ = _binormal(rng, 0.85, 300, 700)
    _, s_weak, _ = _binormal(rng, 0.7, 300, 700)
    a = pe.ScoreSummary.from_scores(y, s_good).posterior(rng=1)
    b = pe.ScoreSummary.from_scores(y, s_weak).posterior(rng=1)
    comparison = pe.compare(a, b, rng=2)
    assert comparison.p_direction > 0.99
    assert comparison.random is not None  # AUC posteriors know their random baseline
    baseline = a.random_baseline(rng=3)
    assert baseline.observed == pytest.approx(0.5)
    assert baseline.mean() == pytest.approx(0.5, abs=0.005)
    assert pe.vs_random is not None


# --------------------------------------------------------------------------- multiclass


def _multiclass(seed: int, n: int = 1500, k: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += rng.uniform(0.5, 2.0)
    p = np.exp(logits)
    p = np.round(p / p.sum(axis=1, keepdims=True), 3)  # rounded: ties within columns
    p[:, -1] = 1.0 - p[:, :-1].sum(axis=1)  # rows still sum to 1, as scikit-learn demands
    return y, p


@pytest.mark.parametrize("seed", range(6))
def test_multiclass_point_values_equal_sklearn(seed: int) -> None:
    y, p = _multiclass(seed, k=3 + seed % 3)
    w = np.random.default_rng(seed).random(len(y)) if seed % 2 else None
    metrics = [
        "roc_auc_macro",
        "roc_auc_weighted",
        "average_precision_macro",
        "average_precision_weighted",
        "roc_auc[1]",
    ]
    ev = pe.evaluate(y, y_score=p, metrics=metrics, sample_weight=w, n_samples=500, rng=0)
    kw = {"sample_weight": w, "multi_class": "ovr"}
    assert ev["roc_auc_macro"].observed == pytest.approx(roc_auc_score(y, p, **kw), abs=1e-12)
    weighted = roc_auc_score(y, p, average="weighted", **kw)
    assert ev["roc_auc_weighted"].observed == pytest.approx(weighted, abs=1e-12)
    ap = average_precision_score(y, p, sample_weight=w)
    assert ev["average_precision_macro"].observed == pytest.approx(ap, abs=1e-12)
    ap_w = average_precision_score(y, p, sample_weight=w, average="weighted")
    assert ev["average_precision_weighted"].observed == pytest.approx(ap_w, abs=1e-12)
    one = roc_auc_score(y == 1, p[:, 1], sample_weight=w)
    assert ev["roc_auc[1]"].observed == pytest.approx(one, abs=1e-12)


def _numpy_shared_bootstrap(y: np.ndarray, p: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Independent oracle: one Exp(1) weight per row shared by all classes; macro ROC AUC by
    the weighted Mann-Whitney statistic with midranks."""
    rng = np.random.default_rng(seed)
    k = p.shape[1]
    out = np.empty(draws)
    for d in range(draws):
        w = rng.exponential(size=len(y))
        aucs = []
        for j in range(k):
            order = np.argsort(p[:, j], kind="stable")
            score, weight, positive = p[order, j], w[order], y[order] == j
            _, start = np.unique(score, return_index=True)
            pos = np.add.reduceat(np.where(positive, weight, 0.0), start)
            neg = np.add.reduceat(np.where(positive, 0.0, weight), start)
            below = np.cumsum(neg) - neg
            aucs.append(np.sum(pos * (below + 0.5 * neg)) / (pos.sum() * neg.sum()))
        out[d] = np.mean(aucs)
    return out


def test_multiclass_macro_posterior_matches_a_numpy_shared_weight_bootstrap() -> None:
    y, p = _multiclass(21, n=600, k=3)
    ev = pe.evaluate(y, y_score=p, metrics=["roc_auc_macro"], n_samples=20_000, rng=1)
    oracle = _numpy_shared_bootstrap(y, p, 2000, 2)
    post = ev["roc_auc_macro"]
    se = oracle.std() / math.sqrt(2000) + post.std() / math.sqrt(20_000)
    assert abs(post.mean() - oracle.mean()) < 4 * se
    # sd of an sd estimate from 2000 draws: ~1.6% of it.
    assert post.std() == pytest.approx(oracle.std(), rel=0.06)


def test_multiclass_per_class_posterior_is_the_binary_one_vs_rest_bootstrap() -> None:
    y, p = _multiclass(22, n=1200, k=4)
    ev = pe.evaluate(y, y_score=p, metrics=["roc_auc[2]"], n_samples=20_000, rng=1)
    binary = pe.ScoreSummary.from_scores(y == 2, p[:, 2]).posterior(n_samples=20_000, rng=2)
    assert ev["roc_auc[2]"].mean() == pytest.approx(binary.mean(), abs=4 * binary.std() / 100)
    assert ev["roc_auc[2]"].std() == pytest.approx(binary.std(), rel=0.04)


def test_multiclass_label_handling() -> None:
    y, p = _multiclass(23, n=300, k=3)
    names = np.array(["cat", "dog", "eel"])[y]
    ev = pe.evaluate(names, y_score=p, metrics=["roc_auc[dog]", "accuracy"], rng=0)
    assert ev["roc_auc[dog]"].observed == pytest.approx(roc_auc_score(y == 1, p[:, 1]), abs=1e-12)
    # Predictions default to the column of the highest score.
    predicted = np.array(["cat", "dog", "eel"])[p.argmax(axis=1)]
    assert ev.confusion == pe.ConfusionMatrix.from_predictions(names, predicted)
    with pytest.raises(ValueError, match="columns"):
        pe.evaluate(y[y < 2], y_score=p[y < 2], metrics=["roc_auc_macro"])
    with pytest.raises(ValueError, match="one-vs-rest"):
        pe.evaluate(y, y_score=p, metrics=["roc_auc"])
    # A missing class can be named through labels, but its AUC stays undefined.
    with pytest.raises(ValueError, match="every class"):
        pe.evaluate(y[y < 2], y_score=p[y < 2], labels=[0, 1, 2], metrics=["roc_auc_macro"])


@pytest.mark.parametrize(
    ("seed", "n", "k", "small_class"),
    [(40, 300, 3, False), (41, 1500, 4, False), (42, 3000, 5, True), (43, 400, 10, False)],
)
def test_multiclass_default_posterior_matches_the_exact_per_row_bootstrap(
    seed: int, n: int, k: int, small_class: bool
) -> None:
    """The default kernel draws each class on its own bins and joins the classes by a copula
    with the shared-weight bootstrap's correlations; max_bins=None runs that bootstrap row by
    row. Tolerances are 4 Monte Carlo standard errors at 20,000 draws each: sd ratio
    sqrt(2 / (2 N)) = 0.7%, mean 0.01 sd, correlation (1 - r^2) sqrt(2 / N)."""
    rng = np.random.default_rng(seed)
    y, p = _multiclass(seed, n=n, k=k)
    if small_class:  # class 0 keeps a tenth of its rows: ~60 rows, 2%
        y = np.where((y == 0) & (rng.random(n) > 0.1), 1 + rng.integers(0, k - 1, n), y)
    metrics = ["roc_auc_macro", "roc_auc_weighted", "average_precision_macro", "roc_auc[0]"]
    metrics += ["roc_auc[1]"]
    draws = 20_000
    joined = pe.evaluate(y, y_score=p, metrics=metrics, n_samples=draws, rng=1)
    exact = pe.evaluate(y, y_score=p, metrics=metrics, n_samples=draws, rng=2, max_bins=None)
    # Average precision's per-class prevalence follows the binary posterior (Beta(n+ + 1,
    # n- + 1), SPEC 2.3) in the default kernel and the rows' own shares row by row; its spread
    # is compared where the classes are not tiny.
    spread = metrics if not small_class else [m for m in metrics if "precision" not in m]
    for name in spread:
        assert joined[name].std() == pytest.approx(exact[name].std(), rel=4 * 0.0071), name
    for name in ["roc_auc_macro", "roc_auc_weighted", "roc_auc[0]"]:
        tolerance = 4 * exact[name].std() * math.sqrt(2 / draws)
        assert joined[name].mean() == pytest.approx(exact[name].mean(), abs=tolerance), name
    if n >= 1500:  # the copula's correlations are first-order ones: compared at size
        pairs = [(ev["roc_auc[0]"].samples, ev["roc_auc[1]"].samples) for ev in (joined, exact)]
        (r_joined, r_exact) = (np.corrcoef(a, b)[0, 1] for a, b in pairs)
        assert r_joined == pytest.approx(r_exact, abs=4 * (1 - r_exact**2) * math.sqrt(2 / draws))


@pytest.mark.parametrize(("seed", "k", "at_least"), [(30, 3, 1.2), (31, 5, 1.1), (32, 8, 1.05)])
def test_shared_row_weights_widen_the_macro_posterior(seed: int, k: int, at_least: float) -> None:
    """Per-class AUCs drawn independently would understate the macro average's spread: the
    classes share their rows. (Measured ratios 1.31, 1.18, 1.10; sd estimates from 20,000
    draws are good to ~0.5%, so these bounds fail only if the dependence is lost.)"""
    y, p = _multiclass(seed, n=2000, k=k)
    ev = pe.evaluate(y, y_score=p, metrics=["roc_auc_macro"], n_samples=20_000, rng=1)
    independent = [
        pe.ScoreSummary.from_scores(y == j, p[:, j]).posterior(n_samples=20_000, rng=10 + j)
        for j in range(k)
    ]
    sd_independent = np.mean([post.samples for post in independent], axis=0).std()
    assert ev["roc_auc_macro"].std() > at_least * sd_independent


def test_average_precision_survives_a_subnormal_weight() -> None:
    """A top bin whose weight is subnormal used to underflow its true-positive mass to 0, make
    its precision 0 / 0 and the average precision 1.0 (scikit-learn: 0.5)."""
    y, s, w = np.array([0, 1, 1]), np.array([0.0, 0.0, 1.0]), np.array([1.0, 1.0, 5e-324])
    expected = average_precision_score(y, s, sample_weight=w)
    summary = pe.ScoreSummary.from_scores(y, s, sample_weight=w)
    assert summary.average_precision() == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.5)
