"""Every public entry point rejects bad input with a clear error naming the parameter.

Each row: (id, call, exception type, a fragment the message must contain — the parameter's
name, or the phrase that tells the user what is wrong).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import probeval as pe

from ._classifiers import RateClassifier

CM = pe.ConfusionMatrix.from_counts(tp=5, fp=3, tn=8, fn=1)
Y = np.array([0, 1, 1, 0, 1])
P = np.array([0, 1, 0, 0, 1])
S = np.array([0.1, 0.9, 0.4, 0.2, 0.7])
POST = CM.posterior("f1", rng=0)
M3 = pe.ConfusionMatrix([[5, 1, 0], [2, 3, 1], [0, 0, 4]], labels=["a", "b", "c"])
EXACT = CM.posterior("accuracy")


def _ev(**kwargs: Any) -> Callable[[], Any]:
    return lambda: pe.evaluate(Y, P, **kwargs)


_RNG = np.random.default_rng(0)
REF_S = _RNG.random(400)
REF_Y = (_RNG.random(400) < REF_S).astype(int)
LF = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc"]).fit(REF_Y, REF_S)
LF_RESULT = LF.estimate(REF_S, n_chunks=2, n_samples=50, rng=0)
MC_S = _RNG.dirichlet([1.0, 1.0, 1.0], 400)
MC_Y = np.array([_RNG.choice(3, p=row) for row in MC_S])
MC = pe.LabelFreeEstimator(metrics=["accuracy", "roc_auc_macro"]).fit(MC_Y, MC_S)
STAMPS = np.datetime64("2024-01-01") + np.arange(400).astype("timedelta64[h]")


ENS = np.array([[0.1, 0.6, 0.5], [0.3, 0.8, 0.4]])
X2 = np.arange(40.0).reshape(20, 2)
Y2 = np.array([0, 1] * 10)

CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # folds
    (
        "aggregate_folds-not-a-sequence",
        lambda: pe.aggregate_folds(CM, metric="f1"),
        TypeError,
        "folds",
    ),
    (
        "compare_folds-rope",
        lambda: pe.compare_folds([0.1, 0.3], [0.2, 0.2], metric="f1", rope=-1),
        ValueError,
        "rope",
    ),
    # evaluate: arrays
    ("evaluate-length-mismatch", lambda: pe.evaluate(Y, P[:3]), ValueError, "same length"),
    ("evaluate-empty", lambda: pe.evaluate([], []), ValueError, "y_true must not be empty"),
    (
        "evaluate-2d-labels",
        lambda: pe.evaluate(Y.reshape(5, 1), P),
        ValueError,
        "y_true must be one-dimensional",
    ),
    ("evaluate-0d-labels", lambda: pe.evaluate(1, 1), ValueError, "y_true must be one-dimensional"),
    ("evaluate-string-labels-arg", lambda: pe.evaluate("01101", P), TypeError, "y_true"),
    ("evaluate-none-labels", lambda: pe.evaluate(None, P), TypeError, "y_true"),
    ("evaluate-missing-prediction", lambda: pe.evaluate(Y), TypeError, "y_pred or y_score"),
    (
        "evaluate-label-with-none",
        lambda: pe.evaluate(np.array([0, None, 1], dtype=object), [0, 1, 1]),
        ValueError,
        "y_true",
    ),
    ("evaluate-float-labels", lambda: pe.evaluate([0.5, 1.0], [0, 1]), ValueError, "y_true"),
    ("evaluate-nan-labels", lambda: pe.evaluate([np.nan, 1.0], [0, 1]), ValueError, "y_true"),
    (
        "evaluate-complex-labels",
        lambda: pe.evaluate(np.array([1j, 0]), [0, 1]),
        TypeError,
        "y_true",
    ),
    ("evaluate-ragged", lambda: pe.evaluate([[0, 1], [1]], [0, 1]), ValueError, "y_true"),
    (
        "evaluate-score-nan",
        lambda: pe.evaluate(Y, y_score=[0.1, np.nan, 0.3, 0.2, 0.9]),
        ValueError,
        "y_score",
    ),
    (
        "evaluate-score-inf",
        lambda: pe.evaluate(Y, y_score=[0.1, np.inf, 0.3, 0.2, 0.9]),
        ValueError,
        "y_score",
    ),
    (
        "evaluate-score-above-1",
        lambda: pe.evaluate(Y, y_score=[0.1, 1.2, 0.3, 0.2, 0.9]),
        ValueError,
        "y_score",
    ),
    (
        "evaluate-score-negative",
        lambda: pe.evaluate(Y, y_score=[-0.1, 0.2, 0.3, 0.2, 0.9]),
        ValueError,
        "y_score",
    ),
    (
        "evaluate-score-strings",
        lambda: pe.evaluate(Y, y_score=np.array(list("abcde"))),
        TypeError,
        "y_score",
    ),
    (
        "evaluate-score-object",
        lambda: pe.evaluate(Y, y_score=np.array([0.1, "x", 0.3, 0.2, 0.9], dtype=object)),
        TypeError,
        "y_score",
    ),
    ("evaluate-score-length", lambda: pe.evaluate(Y, y_score=S[:2]), ValueError, "same length"),
    (
        "evaluate-score-multiclass-truth",
        lambda: pe.evaluate([0, 1, 2], y_score=[0.1, 0.2, 0.3]),
        ValueError,
        "binary",
    ),
    (
        "evaluate-score-string-truth",
        lambda: pe.evaluate(["a", "b"], y_score=[0.1, 0.9]),
        ValueError,
        "pos_label",
    ),
    (
        "evaluate-string-labels-no-pos",
        lambda: pe.evaluate(["a", "b"], ["b", "b"]),
        ValueError,
        "pos_label",
    ),
    (
        "evaluate-bad-pos-label",
        lambda: pe.evaluate(["a", "b"], ["b", "b"], pos_label="c"),
        ValueError,
        "pos_label",
    ),
    ("evaluate-labels-missing-class", lambda: pe.evaluate(Y, P, labels=[0]), ValueError, "labels"),
    (
        "evaluate-labels-duplicate",
        lambda: pe.evaluate(Y, P, labels=[0, 0, 1]),
        ValueError,
        "labels",
    ),
    (
        "evaluate-labels-not-covering",
        lambda: pe.evaluate(Y, P, labels=[0, 2]),
        ValueError,
        "labels",
    ),
    ("evaluate-one-class", lambda: pe.evaluate(["a", "a"], ["a", "a"]), ValueError, "one class"),
    (
        "evaluate-mixed-types",
        lambda: pe.evaluate(np.array([1, "a"], dtype=object), np.array([1, "a"], dtype=object)),
        TypeError,
        "labels",
    ),
    # evaluate: options
    ("evaluate-n-samples-zero", _ev(n_samples=0), ValueError, "n_samples"),
    ("evaluate-n-samples-negative", _ev(n_samples=-5), ValueError, "n_samples"),
    ("evaluate-n-samples-float", _ev(n_samples=1.5), TypeError, "n_samples"),
    ("evaluate-n-samples-bool", _ev(n_samples=True), TypeError, "n_samples"),
    ("evaluate-n-samples-huge", _ev(n_samples=10**12), ValueError, "n_samples"),
    ("evaluate-n-samples-string", _ev(n_samples="100"), TypeError, "n_samples"),
    ("evaluate-unknown-metric", _ev(metrics=["f1", "auc_pr"]), ValueError, "unknown metric"),
    ("evaluate-metric-not-string", _ev(metrics=[1]), TypeError, "metric"),
    ("evaluate-metrics-empty", _ev(metrics=[]), ValueError, "metrics"),
    ("evaluate-metrics-dict", _ev(metrics={"f1": 1}), TypeError, "metrics"),
    ("Prior-negative", lambda: pe.Prior(-1), ValueError, "prior"),
    ("Prior-none", lambda: pe.Prior(None), TypeError, "prior"),
    ("Prior-unknown-name", lambda: pe.Prior("flat"), ValueError, "prior"),
    ("Prior-bool", lambda: pe.Prior(True), TypeError, "prior"),
    ("Prior-nan", lambda: pe.Prior(float("nan")), ValueError, "prior"),
    ("Prior-vector", lambda: pe.Prior(np.ones(3)), ValueError, "prior"),
    ("Prior-negative-cell", lambda: pe.Prior(-np.ones((2, 2))), ValueError, "prior"),
    ("Prior-tiny", lambda: pe.Prior(1e-320), ValueError, "prior"),
    ("Prior-data-negative", lambda: pe.Prior(1.0, -np.ones((2, 2))), ValueError, "prior.data"),
    (
        "Prior-data-shape",
        lambda: pe.Prior(np.ones((2, 2)), np.ones((3, 3))),
        ValueError,
        "prior.data",
    ),
    ("Prior-label", lambda: pe.Prior(1.0, label=3), TypeError, "label"),
    ("evaluate-prior-negative", _ev(prior=-1), ValueError, "prior"),
    ("evaluate-prior-nan", _ev(prior=float("nan")), ValueError, "prior"),
    ("evaluate-prior-inf", _ev(prior=float("inf")), ValueError, "prior"),
    ("evaluate-prior-name", _ev(prior="flat"), ValueError, "prior"),
    ("evaluate-prior-bool", _ev(prior=True), TypeError, "prior"),
    ("evaluate-prior-list-of-str", _ev(prior=["a", "b"]), TypeError, "prior"),
    ("evaluate-prior-shape", _ev(prior=np.ones((3, 3))), ValueError, "prior"),
    ("evaluate-prior-negative-cell", _ev(prior=np.array([[1, 1], [-1, 1]])), ValueError, "prior"),
    ("evaluate-prior-mapping-keys", _ev(prior={"tp": 1, "fp": 1}), ValueError, "prior"),
    (
        "evaluate-threshold-high",
        lambda: pe.evaluate(Y, y_score=S, threshold=1.5),
        ValueError,
        "threshold",
    ),
    (
        "evaluate-threshold-string",
        lambda: pe.evaluate(Y, y_score=S, threshold="0.5"),
        TypeError,
        "threshold",
    ),
    (
        "evaluate-threshold-nan",
        lambda: pe.evaluate(Y, y_score=S, threshold=float("nan")),
        ValueError,
        "threshold",
    ),
    ("evaluate-weight-negative", _ev(sample_weight=[1, 1, -1, 1, 1]), ValueError, "sample_weight"),
    ("evaluate-weight-length", _ev(sample_weight=[1, 1]), ValueError, "sample_weight"),
    ("evaluate-weight-nan", _ev(sample_weight=[1, 1, np.nan, 1, 1]), ValueError, "sample_weight"),
    ("evaluate-zero-division", _ev(zero_division=0.5), ValueError, "zero_division"),
    ("evaluate-zero-division-str", _ev(zero_division="skip"), TypeError, "zero_division"),
    ("evaluate-beta-zero", _ev(metrics=["fbeta"], beta=0), ValueError, "beta"),
    ("evaluate-beta-string", _ev(metrics=["fbeta"], beta="2"), TypeError, "beta"),
    ("evaluate-rng-string", _ev(rng="seed"), TypeError, "rng"),
    ("evaluate-rng-negative", _ev(rng=-1), ValueError, "rng"),
    ("evaluate-rng-float", _ev(rng=1.5), TypeError, "rng"),
    ("evaluate-cm-with-pred", lambda: pe.evaluate(CM, P), TypeError, "ConfusionMatrix"),
    (
        "evaluate-score-metric-on-counts",
        lambda: pe.evaluate(CM, metrics=["roc_auc"]),
        ValueError,
        "needs scores",
    ),
    (
        "evaluate-improper-prior",
        lambda: pe.evaluate(
            pe.ConfusionMatrix.from_counts(tp=0, fp=0, tn=1, fn=1), metrics=["precision"], prior=0
        ),
        ValueError,
        "improper",
    ),
    ("summary-ci-one", lambda: pe.evaluate(Y, P).summary(ci=1.0), ValueError, "ci"),
    ("summary-ci-zero", lambda: pe.evaluate(Y, P).summary(ci=0), ValueError, "ci"),
    ("summary-ci-string", lambda: pe.evaluate(Y, P).summary(ci="95%"), TypeError, "ci"),
    (
        "evaluation-missing-metric",
        lambda: pe.evaluate(Y, P, metrics=["f1"])["mcc"],
        KeyError,
        "mcc",
    ),
    # ConfusionMatrix
    (
        "counts-negative",
        lambda: pe.ConfusionMatrix.from_counts(tp=-1, fp=1, tn=1, fn=1),
        ValueError,
        "tp",
    ),
    (
        "counts-fraction",
        lambda: pe.ConfusionMatrix.from_counts(tp=1.5, fp=1, tn=1, fn=1),
        ValueError,
        "tp",
    ),
    (
        "counts-nan",
        lambda: pe.ConfusionMatrix.from_counts(tp=1, fp=float("nan"), tn=1, fn=1),
        ValueError,
        "fp",
    ),
    (
        "counts-inf",
        lambda: pe.ConfusionMatrix.from_counts(tp=1, fp=1, tn=float("inf"), fn=1),
        ValueError,
        "tn",
    ),
    (
        "counts-string",
        lambda: pe.ConfusionMatrix.from_counts(tp="5", fp=1, tn=1, fn=1),
        TypeError,
        "tp",
    ),
    (
        "counts-bool",
        lambda: pe.ConfusionMatrix.from_counts(tp=True, fp=1, tn=1, fn=1),
        TypeError,
        "tp",
    ),
    (
        "counts-overflow",
        lambda: pe.ConfusionMatrix.from_counts(tp=2**60, fp=1, tn=1, fn=1),
        ValueError,
        "tp",
    ),
    ("counts-missing", lambda: pe.ConfusionMatrix.from_counts(tp=1, fp=1, tn=1), TypeError, "fn"),
    (
        "counts-both-forms",
        lambda: pe.ConfusionMatrix.from_counts([[1, 1], [1, 1]], tp=1),
        TypeError,
        "not both",
    ),
    ("matrix-not-square", lambda: pe.ConfusionMatrix(np.ones((2, 3))), ValueError, "counts"),
    ("matrix-one-class", lambda: pe.ConfusionMatrix([[4]]), ValueError, "counts"),
    ("matrix-3d", lambda: pe.ConfusionMatrix(np.ones((2, 2, 2))), ValueError, "counts"),
    ("matrix-negative", lambda: pe.ConfusionMatrix([[1, -1], [1, 1]]), ValueError, "counts"),
    ("matrix-nan", lambda: pe.ConfusionMatrix([[1, np.nan], [1, 1]]), ValueError, "counts"),
    ("matrix-fraction", lambda: pe.ConfusionMatrix([[1, 0.5], [1, 1]]), ValueError, "counts"),
    ("matrix-strings", lambda: pe.ConfusionMatrix([["1", "2"], ["3", "4"]]), TypeError, "counts"),
    (
        "matrix-bools",
        lambda: pe.ConfusionMatrix([[True, False], [False, True]]),
        TypeError,
        "counts",
    ),
    (
        "matrix-huge-int",
        lambda: pe.ConfusionMatrix(np.array([[2**62, 1], [1, 1]], dtype=np.int64)),
        ValueError,
        "counts",
    ),
    ("matrix-string-arg", lambda: pe.ConfusionMatrix("1 2 3 4"), TypeError, "counts"),
    (
        "matrix-labels-length",
        lambda: pe.ConfusionMatrix([[1, 1], [1, 1]], labels=["a"]),
        ValueError,
        "labels",
    ),
    (
        "matrix-labels-duplicate",
        lambda: pe.ConfusionMatrix([[1, 1], [1, 1]], labels=["a", "a"]),
        ValueError,
        "labels",
    ),
    (
        "scores-bad-threshold",
        lambda: pe.ConfusionMatrix.from_scores(Y, S, threshold=-0.1),
        ValueError,
        "threshold",
    ),
    ("posterior-unknown-metric", lambda: CM.posterior("aucc"), ValueError, "unknown metric"),
    ("posterior-score-alias", lambda: CM.posterior("auc"), ValueError, "needs scores"),
    ("posterior-n-samples", lambda: CM.posterior("f1", n_samples=0), ValueError, "n_samples"),
    ("posterior-bad-prior", lambda: CM.posterior("f1", prior=-0.5), ValueError, "prior"),
    (
        "observed-bad-zero-division",
        lambda: CM.observed("precision", zero_division=2),
        ValueError,
        "zero_division",
    ),
    ("observed-metric-type", lambda: CM.observed(3), TypeError, "metric"),
    # Posterior
    ("hdi-ci-high", lambda: POST.hdi(1.0), ValueError, "ci"),
    ("hdi-ci-negative", lambda: POST.hdi(-0.5), ValueError, "ci"),
    ("hdi-ci-nan", lambda: POST.hdi(float("nan")), ValueError, "ci"),
    ("hdi-ci-string", lambda: EXACT.hdi("0.95"), TypeError, "ci"),
    ("eti-ci-high", lambda: EXACT.eti(2), ValueError, "ci"),
    ("interval-kind", lambda: POST.interval(0.9, "hpd"), ValueError, "kind"),
    ("quantile-out-of-range", lambda: POST.quantile(1.5), ValueError, "q"),
    ("quantile-nan", lambda: EXACT.quantile([0.5, np.nan]), ValueError, "q"),
    ("prob-above-string", lambda: POST.prob_above("0.5"), TypeError, "x"),
    ("prob-below-none", lambda: EXACT.prob_below(None), TypeError, "x"),
    ("from-samples-empty", lambda: pe.Posterior.from_samples([]), ValueError, "samples"),
    ("from-samples-nan", lambda: pe.Posterior.from_samples([0.1, np.nan]), ValueError, "samples"),
    (
        "from-samples-2d",
        lambda: pe.Posterior.from_samples(np.ones((2, 2)) * 0.5),
        ValueError,
        "samples",
    ),
    (
        "from-samples-bounds",
        lambda: pe.Posterior.from_samples([0.5], bounds=(1, 0)),
        ValueError,
        "bounds",
    ),
    ("from-samples-outside", lambda: pe.Posterior.from_samples([0.5, 2.0]), ValueError, "bounds"),
    ("from-beta-negative", lambda: pe.Posterior.from_beta(-1, 2), ValueError, "a"),
    ("from-beta-nan", lambda: pe.Posterior.from_beta(1, float("nan")), ValueError, "b"),
    ("from-beta-string", lambda: pe.Posterior.from_beta("1", 2), TypeError, "a"),
    (
        "from-beta-n-samples",
        lambda: pe.Posterior.from_beta(1, 2, n_samples=0),
        ValueError,
        "n_samples",
    ),
    # kde
    ("kde-empty", lambda: pe.kde([]), ValueError, "samples"),
    ("kde-nan", lambda: pe.kde([0.1, np.nan]), ValueError, "samples"),
    ("kde-bandwidth-name", lambda: pe.kde([0.1, 0.2], bandwidth="wide"), ValueError, "bandwidth"),
    ("kde-bandwidth-negative", lambda: pe.kde([0.1, 0.2], bandwidth=-1.0), ValueError, "bandwidth"),
    ("kde-grid-size-small", lambda: pe.kde([0.1, 0.2], grid_size=1), ValueError, "grid_size"),
    ("kde-grid-size-float", lambda: pe.kde([0.1, 0.2], grid_size=10.5), TypeError, "grid_size"),
    ("kde-bounds-reversed", lambda: pe.kde([0.1, 0.2], bounds=(1, 0)), ValueError, "bounds"),
    ("kde-bounds-scalar", lambda: pe.kde([0.1, 0.2], bounds=1), TypeError, "bounds"),
    ("kde-outside-bounds", lambda: pe.kde([0.1, 1.2], bounds=(0, 1)), ValueError, "bounds"),
    ("metric-info-unknown", lambda: pe.metric_info("accuracy_score"), ValueError, "unknown metric"),
    # multiclass names
    ("multi-bare-per-class", lambda: M3.posterior("recall"), ValueError, "per class"),
    (
        "multi-unknown-class",
        lambda: M3.posterior("recall[dog]"),
        ValueError,
        "no class is written 'dog'",
    ),
    ("multi-unknown-base", lambda: M3.posterior("gini[a]"), ValueError, "unknown per-class metric"),
    ("multi-unknown-average", lambda: M3.posterior("f1_harmonic"), ValueError, "unknown metric"),
    ("multi-average-whole", lambda: M3.posterior("accuracy_macro"), ValueError, "unknown metric"),
    ("multi-binary-only", lambda: M3.posterior("gmean"), ValueError, "binary data only"),
    ("multi-score-metric", lambda: M3.posterior("roc_auc"), ValueError, "needs scores"),
    (
        "multi-ambiguous-class",
        lambda: pe.ConfusionMatrix(np.eye(2) + 1, labels=[1, "1"]).posterior("f1[1]"),
        ValueError,
        "more than one class",
    ),
    (
        "multi-joint-mix",
        lambda: pe.evaluate(CM, metrics=["f1", "f1_macro"], joint=True),
        ValueError,
        "not a mix",
    ),
    (
        "multi-prior-shape",
        lambda: M3.posterior("f1_macro", prior=np.ones((2, 2))),
        ValueError,
        "prior",
    ),
    (
        "multi-prior-mapping",
        lambda: M3.posterior("f1_macro", prior={"tp": 1, "fp": 1, "tn": 1, "fn": 1}),
        ValueError,
        "binary",
    ),
    ("multi-fbeta-beta", lambda: M3.posterior("fbeta_macro", beta=-1), ValueError, "beta"),
    ("multi-metric-type", lambda: M3.observed(None), TypeError, "metric"),
    # inference
    ("compare-not-posterior", lambda: pe.compare(POST, 0.5), TypeError, "Posterior"),
    ("compare-rope-negative", lambda: pe.compare(POST, EXACT, rope=-0.1), ValueError, "rope"),
    (
        "compare-rope-reversed",
        lambda: pe.compare(POST, EXACT, rope=(0.1, -0.1)),
        ValueError,
        "rope",
    ),
    ("compare-rope-string", lambda: pe.compare(POST, EXACT, rope="0.1"), TypeError, "rope"),
    ("compare-rope-bool", lambda: pe.compare(POST, EXACT, rope=True), TypeError, "rope"),
    (
        "compare-rope-nan",
        lambda: pe.compare(POST, EXACT, rope=(float("nan"), 1.0)),
        ValueError,
        "rope",
    ),
    ("compare-n-samples", lambda: pe.compare(POST, EXACT, n_samples=0), ValueError, "n_samples"),
    ("compare-rng", lambda: pe.compare(POST, EXACT, rng="x"), TypeError, "rng"),
    (
        "compare-sample-lengths",
        lambda: pe.compare(
            pe.Posterior.from_samples([0.1, 0.2]), pe.Posterior.from_samples([0.1, 0.2, 0.3])
        ),
        ValueError,
        "samples",
    ),
    ("paired-lengths", lambda: pe.compare_paired(Y, P, P[:3]), ValueError, "same length"),
    ("paired-empty", lambda: pe.compare_paired([], [], []), ValueError, "y_true must not be empty"),
    (
        "paired-metric",
        lambda: pe.compare_paired(Y, P, P, metric="aucc"),
        ValueError,
        "unknown metric",
    ),
    (
        "paired-array-prior",
        lambda: pe.compare_paired(Y, P, P, prior=np.ones((2, 2))),
        ValueError,
        "prior",
    ),
    ("paired-negative-prior", lambda: pe.compare_paired(Y, P, P, prior=-1), ValueError, "prior"),
    (
        "paired-weights",
        lambda: pe.compare_paired(Y, P, P, sample_weight=[1, 2]),
        ValueError,
        "sample_weight",
    ),
    (
        "paired-string-labels",
        lambda: pe.compare_paired(["a", "b"], ["a", "a"], ["b", "b"], metric="f1"),
        ValueError,
        "pos_label",
    ),
    (
        "vs-random-not-matrix",
        lambda: pe.vs_random([[1, 2], [3, 4]], "f1"),
        TypeError,
        "ConfusionMatrix",
    ),
    ("vs-random-metric", lambda: pe.vs_random(CM, "f2"), ValueError, "unknown metric"),
    ("decide-no-rope", lambda: pe.decide(EXACT), TypeError, "rope"),
    ("decide-not-posterior", lambda: pe.decide([0.1, 0.2], rope=(0, 1)), TypeError, "Posterior"),
    ("decide-ci", lambda: pe.decide(EXACT, rope=(0, 1), ci=2), ValueError, "ci"),
    (
        "decide-precision",
        lambda: pe.decide(EXACT, rope=(0, 1), precision=-1),
        ValueError,
        "precision",
    ),
    ("decide-reference", lambda: pe.decide(EXACT, reference=0.5), TypeError, "reference"),
    ("hdi-samples", lambda: pe.hdi([], 0.9), ValueError, "samples"),
    ("hdi-ci", lambda: pe.hdi([0.1, 0.2], 1.2), ValueError, "ci"),
    ("eti-samples-nan", lambda: pe.eti([0.1, np.nan]), ValueError, "samples"),
    (
        "random-baseline-samples",
        lambda: pe.Posterior.from_samples([0.1]).random_baseline(),
        ValueError,
        "random baseline",
    ),
    # scores: ROC AUC and average precision
    (
        "scores-nan",
        lambda: pe.ScoreSummary.from_scores(Y, [0, 1, np.nan, 0, 1]),
        ValueError,
        "index 2",
    ),
    (
        "scores-inf",
        lambda: pe.ScoreSummary.from_scores(Y, [0, 1, np.inf, 0, 1]),
        ValueError,
        "y_score",
    ),
    ("scores-strings", lambda: pe.ScoreSummary.from_scores(Y, list("abcde")), TypeError, "y_score"),
    ("scores-length", lambda: pe.ScoreSummary.from_scores(Y, S[:4]), ValueError, "same length"),
    ("scores-empty", lambda: pe.ScoreSummary.from_scores([], []), ValueError, "must not be empty"),
    ("scores-2d", lambda: pe.ScoreSummary.from_scores(Y, S.reshape(5, 1)), ValueError, "y_score"),
    (
        "scores-multiclass",
        lambda: pe.ScoreSummary.from_scores([0, 1, 2], [0.1, 0.2, 0.3]),
        ValueError,
        "binary",
    ),
    (
        "scores-strings-no-pos",
        lambda: pe.ScoreSummary.from_scores(["a", "b"], [0.1, 0.2]),
        ValueError,
        "pos_label",
    ),
    (
        "scores-bad-pos-label",
        lambda: pe.ScoreSummary.from_scores(Y, S, pos_label=7),
        ValueError,
        "pos_label",
    ),
    (
        "scores-neg-weight",
        lambda: pe.ScoreSummary.from_scores(Y, S, sample_weight=[1, 1, -1, 1, 1]),
        ValueError,
        "sample_weight",
    ),
    (
        "scores-nan-weight",
        lambda: pe.ScoreSummary.from_scores(Y, S, sample_weight=[1, 1, np.nan, 1, 1]),
        ValueError,
        "sample_weight",
    ),
    (
        "summary-unsorted",
        lambda: pe.ScoreSummary([0.2, 0.1], [1, 0], [0, 1]),
        ValueError,
        "strictly increasing",
    ),
    (
        "summary-negative",
        lambda: pe.ScoreSummary([0.1, 0.2], [1, -1], [0, 1]),
        ValueError,
        "positives",
    ),
    (
        "summary-lengths",
        lambda: pe.ScoreSummary([0.1, 0.2], [1], [0, 1]),
        ValueError,
        "same length",
    ),
    (
        "summary-labels",
        lambda: pe.ScoreSummary([0.1], [1], [0], labels=(0, 1, 2)),
        ValueError,
        "labels",
    ),
    ("summary-nan-count", lambda: pe.ScoreSummary([0.1], [np.nan], [0]), ValueError, "positives"),
    (
        "summary-merge-type",
        lambda: pe.ScoreSummary.from_scores(Y, S).merge(CM),
        TypeError,
        "ScoreSummary",
    ),
    (
        "summary-add-type",
        lambda: pe.ScoreSummary.from_scores(Y, S) + 1,
        TypeError,
        "unsupported operand",
    ),
    ("summary-from-dict-type", lambda: pe.ScoreSummary.from_dict([1, 2]), TypeError, "dict"),
    (
        "summary-from-dict-keys",
        lambda: pe.ScoreSummary.from_dict({"values": [0.1]}),
        ValueError,
        "missing keys",
    ),
    (
        "summary-one-class-auc",
        lambda: pe.ScoreSummary.from_scores([1, 1], [0.1, 0.2]).roc_auc(),
        ValueError,
        "both classes",
    ),
    (
        "summary-one-class-posterior",
        lambda: pe.ScoreSummary.from_scores([0, 0], [0.1, 0.2]).posterior(),
        ValueError,
        "both classes",
    ),
    (
        "summary-metric",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior("f1"),
        ValueError,
        "not a score metric",
    ),
    (
        "summary-metric-unknown",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior("gini"),
        ValueError,
        "unknown metric",
    ),
    (
        "summary-metric-type",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior(3),
        TypeError,
        "metric names",
    ),
    (
        "summary-max-bins-1",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior(max_bins=1),
        ValueError,
        "max_bins",
    ),
    (
        "summary-max-bins-float",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior(max_bins=2.5),
        TypeError,
        "max_bins",
    ),
    (
        "summary-max-bins-bool",
        lambda: pe.ScoreSummary.from_scores(Y, S).binned(True),
        TypeError,
        "max_bins",
    ),
    (
        "summary-prior-negative",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior(prior=-1),
        ValueError,
        "score_prior",
    ),
    (
        "summary-prior-nan",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior(prior=np.nan),
        ValueError,
        "score_prior",
    ),
    (
        "summary-n-samples",
        lambda: pe.ScoreSummary.from_scores(Y, S).posterior(n_samples=0),
        ValueError,
        "n_samples",
    ),
    ("summary-rng", lambda: pe.ScoreSummary.from_scores(Y, S).posterior(rng="x"), TypeError, "rng"),
    (
        "evaluate-auc-without-scores",
        lambda: pe.evaluate(Y, P, metrics=["roc_auc"]),
        ValueError,
        "needs scores",
    ),
    (
        "evaluate-auc-average-binary",
        lambda: pe.evaluate(Y, y_score=S, metrics=["roc_auc_macro"]),
        ValueError,
        "binary data have one",
    ),
    ("evaluate-max-bins", lambda: pe.evaluate(Y, y_score=S, max_bins=0), ValueError, "max_bins"),
    (
        "evaluate-score-prior",
        lambda: pe.evaluate(Y, y_score=S, score_prior=-0.5),
        ValueError,
        "score_prior",
    ),
    (
        "evaluate-strings-scores",
        lambda: pe.evaluate(["a", "b", "a"], ["a", "b", "b"], y_score=[0.1, 0.9, 0.5]),
        ValueError,
        "pos_label",
    ),
    (
        "evaluate-score-columns",
        lambda: pe.evaluate([0, 1, 2], y_score=np.eye(3)[:, :2]),
        ValueError,
        "columns",
    ),
    (
        "evaluate-score-one-column",
        lambda: pe.evaluate([0, 1, 1], y_score=[[0.1], [0.2], [0.3]]),
        ValueError,
        "shape (n, K)",
    ),
    (
        "evaluate-score-rows",
        lambda: pe.evaluate([0, 1, 2], y_score=np.eye(3)[:2]),
        ValueError,
        "same length",
    ),
    (
        "evaluate-score-matrix-strings",
        lambda: pe.evaluate([0, 1], y_score=[["a", "b"], ["c", "d"]]),
        TypeError,
        "y_score",
    ),
    (
        "evaluate-score-matrix-nan",
        lambda: pe.evaluate([0, 1, 2], y_score=np.full((3, 3), np.nan)),
        ValueError,
        "row 0, column 0",
    ),
    (
        "evaluate-multiclass-plain-auc",
        lambda: pe.evaluate([0, 1, 2], y_score=np.eye(3), metrics=["roc_auc"]),
        ValueError,
        "one-vs-rest",
    ),
    (
        "evaluate-multiclass-class",
        lambda: pe.evaluate([0, 1, 2], y_score=np.eye(3), metrics=["roc_auc[9]"]),
        ValueError,
        "no class",
    ),
    (
        "evaluate-multiclass-prior",
        lambda: pe.evaluate([0, 1, 2], y_score=np.eye(3), score_prior=1.0),
        ValueError,
        "score_prior",
    ),
    (
        "evaluate-multiclass-missing",
        lambda: pe.evaluate([0, 1, 1], y_score=np.eye(3), labels=[0, 1, 2]),
        ValueError,
        "every class",
    ),
    (
        "evaluate-proba-pos-label",
        lambda: pe.evaluate([0, 1], y_score=np.eye(2), pos_label=5),
        ValueError,
        "pos_label",
    ),
    (
        "evaluate-multiclass-weights",
        lambda: pe.evaluate([0, 1, 2], y_score=np.eye(3), sample_weight=[1, 1]),
        ValueError,
        "sample_weight",
    ),
    # ensembles
    ("ens-1d", lambda: pe.ensemble_report([0.1, 0.9]), ValueError, "shape (n_models, n_samples)"),
    ("ens-one-model", lambda: pe.ensemble_report([[0.1, 0.9]]), ValueError, "at least 2 models"),
    (
        "ens-3d",
        lambda: pe.ensemble_report(np.zeros((2, 2, 2))),
        ValueError,
        "proba must have shape",
    ),
    ("ens-empty", lambda: pe.ensemble_report(np.zeros((2, 0))), ValueError, "1 sample"),
    (
        "ens-strings",
        lambda: pe.ensemble_report([["a", "b"], ["c", "d"]]),
        TypeError,
        "proba must hold numbers",
    ),
    ("ens-none", lambda: pe.ensemble_report(None), TypeError, "proba"),
    (
        "ens-nan",
        lambda: pe.ensemble_report([[0.1, np.nan], [0.2, 0.3]]),
        ValueError,
        "proba must hold probabilities",
    ),
    (
        "ens-range",
        lambda: pe.ensemble_report([[0.1, 1.2], [0.2, 0.3]]),
        ValueError,
        "model 0, sample 1",
    ),
    ("ens-threshold", lambda: pe.ensemble_report(ENS, threshold=2), ValueError, "threshold"),
    (
        "ens-labels-length",
        lambda: pe.ensemble_report(ENS, [0, 1]),
        ValueError,
        "y_true has 2 values",
    ),
    ("ens-labels-multiclass", lambda: pe.ensemble_report(ENS, [0, 1, 2]), ValueError, "binary"),
    (
        "ens-labels-strings",
        lambda: pe.ensemble_report(ENS, ["a", "b", "a"]),
        ValueError,
        "pos_label",
    ),
    (
        "ens-groups-length",
        lambda: pe.ensemble_report(ENS, groups=["a"]),
        ValueError,
        "groups has 1 values",
    ),
    (
        "ens-groups-nan",
        lambda: pe.ensemble_report(ENS, groups=[1.0, np.nan, 2.0]),
        ValueError,
        "groups",
    ),
    (
        "ens-reference",
        lambda: pe.ensemble_report(ENS, groups=["a", "b", "a"], reference_group="z"),
        ValueError,
        "reference_group",
    ),
    ("ens-rope", lambda: pe.ensemble_report(ENS, rope=-0.1), ValueError, "rope"),
    (
        "ens-ratio-rope",
        lambda: pe.ensemble_report(ENS, ratio_rope=(1.1, 1.3)),
        ValueError,
        "contain 1",
    ),
    (
        "ens-ratio-rope-type",
        lambda: pe.ensemble_report(ENS, ratio_rope=0.8),
        TypeError,
        "ratio_rope",
    ),
    ("ens-ci", lambda: pe.ensemble_report(ENS, ci=0), ValueError, "ci"),
    ("ens-n-samples", lambda: pe.ensemble_report(ENS, n_samples=-1), ValueError, "n_samples"),
    ("ens-rng", lambda: pe.ensemble_report(ENS, rng=1.5), TypeError, "rng"),
    (
        "boot-estimator",
        lambda: pe.bootstrap_ensemble(object(), [[1.0]], [1], [[1.0]]),
        TypeError,
        "estimator",
    ),
    (
        "boot-n",
        lambda: pe.bootstrap_ensemble(object(), [[1.0]], [1], [[1.0]], n_estimators=1),
        ValueError,
        "n_estimators",
    ),
    (
        "boot-n-type",
        lambda: pe.bootstrap_ensemble(object(), [[1.0]], [1], [[1.0]], n_estimators=2.0),
        TypeError,
        "n_estimators",
    ),
    (
        "boot-fraction",
        lambda: pe.bootstrap_ensemble(object(), [[1.0]], [1], [[1.0]], fraction=0),
        ValueError,
        "fraction",
    ),
    # label audits
    (
        "audit-more-wrong",
        lambda: pe.LabelAudit(10, 11, 10, 0),
        ValueError,
        "mislabelled_tp (11) exceeds reviewed_tp (10)",
    ),
    (
        "audit-more-wrong-fn",
        lambda: pe.LabelAudit(10, 1, 10, 0, reviewed_fn=3, mislabelled_fn=4),
        ValueError,
        "mislabelled_fn",
    ),
    ("audit-negative", lambda: pe.LabelAudit(-1, 0, 10, 0), ValueError, "reviewed_tp"),
    ("audit-negative-wrong", lambda: pe.LabelAudit(10, -2, 10, 0), ValueError, "mislabelled_tp"),
    ("audit-fraction", lambda: pe.LabelAudit(10.5, 1, 10, 0), ValueError, "reviewed_tp"),
    ("audit-nan", lambda: pe.LabelAudit(10, 1, np.nan, 0), ValueError, "reviewed_fp"),
    ("audit-string", lambda: pe.LabelAudit("10", 1, 10, 0), TypeError, "reviewed_tp"),
    ("audit-bool", lambda: pe.LabelAudit(10, True, 10, 0), TypeError, "mislabelled_tp"),
    (
        "audit-prior-zero",
        lambda: pe.LabelAudit(10, 1, 10, 0, prior_fp=(0, 1)),
        ValueError,
        "prior_fp",
    ),
    (
        "audit-prior-negative",
        lambda: pe.LabelAudit(10, 1, 10, 0, prior_tp=(1, -1)),
        ValueError,
        "prior_tp",
    ),
    (
        "audit-prior-inf",
        lambda: pe.LabelAudit(10, 1, 10, 0, prior_tn=(1, np.inf)),
        ValueError,
        "prior_tn",
    ),
    (
        "audit-prior-length",
        lambda: pe.LabelAudit(10, 1, 10, 0, prior_fn=(1, 2, 3)),
        TypeError,
        "prior_fn",
    ),
    ("audit-prior-scalar", lambda: pe.LabelAudit(10, 1, 10, 0, prior_fn=2), TypeError, "prior_fn"),
    (
        "audit-prior-string",
        lambda: pe.LabelAudit(10, 1, 10, 0, prior_fn="ab"),
        TypeError,
        "prior_fn",
    ),
    (
        "audit-prior-str-items",
        lambda: pe.LabelAudit(10, 1, 10, 0, prior_fn=("a", "b")),
        TypeError,
        "prior_fn[0]",
    ),
    (
        "audit-rate-cell",
        lambda: pe.LabelAudit(10, 1, 10, 0).rate_posterior("xx"),
        ValueError,
        "cell",
    ),
    ("audit-type", lambda: CM.posterior("f1", audit={"reviewed_tp": 3}), TypeError, "audit"),
    ("audit-evaluate-type", lambda: pe.evaluate(Y, P, audit=5), TypeError, "audit"),
    (
        "audit-multiclass",
        lambda: M3.posterior("accuracy", audit=pe.LabelAudit(10, 1, 10, 0)),
        ValueError,
        "binary",
    ),
    (
        "audit-class-name",
        lambda: CM.posterior("f1[1]", audit=pe.LabelAudit(10, 1, 10, 0)),
        ValueError,
        "binary metric names",
    ),
    (
        "audit-scores",
        lambda: pe.evaluate(Y, y_score=S, metrics=["roc_auc"], audit=pe.LabelAudit(10, 1, 10, 0)),
        ValueError,
        "cannot be corrected",
    ),
    # label-free estimation
    (
        "lf-fit-one-class-reference",
        lambda: pe.LabelFreeEstimator().fit([0, 0, 0, 0], [0.1, 0.4, 0.6, 0.9]),
        ValueError,
        "y_true holds only the class 0",
    ),
    (
        "lf-fit-summary-one-class",
        lambda: pe.LabelFreeEstimator().fit_summary(
            pe.ScoreSummary.from_scores([1, 1, 1], [0.2, 0.5, 0.9])
        ),
        ValueError,
        "y_true holds only the class 1",
    ),
    (
        "lf-payload-other-threshold",
        lambda: pe.LabelFreeEstimator.from_dict({**LF.to_dict(), "threshold": 0.9}),
        ValueError,
        "threshold=0.9 is not one of the bin edges",
    ),
    (
        "lf-payload-fewer-bins",
        lambda: pe.LabelFreeEstimator.from_dict({**LF.to_dict(), "n_bins": 3}),
        ValueError,
        "n_bins=3",
    ),
    (
        "lf-payload-null-edges",
        lambda: pe.LabelFreeEstimator.from_dict({**LF.to_dict(), "edges": None}),
        ValueError,
        "edges",
    ),
    (
        "lf-payload-short-positives",
        lambda: pe.LabelFreeEstimator.from_dict({**LF.to_dict(), "positives": [1.0, 2.0]}),
        ValueError,
        "positives must have one value per bin: 2 values",
    ),
    (
        "lf-payload-labels",
        lambda: pe.LabelFreeEstimator.from_dict({**LF.to_dict(), "labels": None}),
        ValueError,
        "labels",
    ),
    (
        "lf-mc-columns",
        lambda: MC.estimate(MC_S[:, :2]),
        ValueError,
        "y_score has 2 columns, but the estimator was fitted on 3 classes",
    ),
    (
        "lf-mc-not-probability",
        lambda: MC.estimate(MC_S * 2),
        ValueError,
        "y_score must hold probabilities in [0, 1]",
    ),
    (
        "lf-mc-nan",
        lambda: MC.estimate(np.where(MC_S > 0.9, np.nan, MC_S)),
        ValueError,
        "y_score must hold probabilities in [0, 1], found nan",
    ),
    (
        "lf-mc-strings",
        lambda: MC.estimate(np.full((3, 3), "a")),
        TypeError,
        "y_score must hold numbers",
    ),
    (
        "lf-mc-three-dimensional",
        lambda: MC.estimate(np.zeros((2, 3, 3))),
        ValueError,
        "y_score must be an (n, K) score matrix, got array of shape (2, 3, 3)",
    ),
    (
        "lf-mc-perfect",
        lambda: pe.LabelFreeEstimator(calibration="perfect").fit(MC_Y, MC_S),
        ValueError,
        'calibration="perfect" is for binary scores',
    ),
    (
        "lf-mc-labels-binary",
        lambda: pe.LabelFreeEstimator().fit(REF_Y, REF_S, labels=[0, 1]),
        ValueError,
        "labels=... names the columns of multiclass",
    ),
    (
        "lf-mc-partial-unknown-class",
        lambda: MC.estimate(MC_S, partial_labels=[5] * 400),
        ValueError,
        "partial_labels contains classes [5]",
    ),
    (
        "lf-mc-payload-edges",
        lambda: pe.LabelFreeEstimator.from_dict({**MC.to_dict(), "edges": [0.5, 0.2]}),
        ValueError,
        "edges",
    ),
    ("lf-n-bins-zero", lambda: pe.LabelFreeEstimator(n_bins=0), ValueError, "n_bins"),
    ("lf-n-bins-float", lambda: pe.LabelFreeEstimator(n_bins=2.5), TypeError, "n_bins"),
    ("lf-n-bins-bool", lambda: pe.LabelFreeEstimator(n_bins=True), TypeError, "n_bins"),
    ("lf-threshold", lambda: pe.LabelFreeEstimator(threshold=1.5), ValueError, "threshold"),
    ("lf-threshold-type", lambda: pe.LabelFreeEstimator(threshold="0.5"), TypeError, "threshold"),
    (
        "lf-metric-ap-multiclass",
        lambda: pe.LabelFreeEstimator(metrics=["average_precision"]).fit(MC_Y, MC_S),
        ValueError,
        "average_precision_macro",
    ),
    (
        "lf-metric-unknown",
        lambda: pe.LabelFreeEstimator(metrics=["gini"]),
        ValueError,
        "unknown metric",
    ),
    (
        "lf-metric-multiclass",
        # Multiclass names are resolved at fit, against the classes of the scores.
        lambda: pe.LabelFreeEstimator(metrics=["f1_macro"]).fit(REF_Y, REF_S),
        ValueError,
        "'f1_macro' name multiclass metrics, and these are binary scores",
    ),
    ("lf-metric-empty", lambda: pe.LabelFreeEstimator(metrics=[]), ValueError, "metrics"),
    (
        "lf-calibration",
        lambda: pe.LabelFreeEstimator(calibration="isotonic"),
        ValueError,
        "calibration",
    ),
    (
        "lf-within-bin",
        lambda: pe.LabelFreeEstimator(auc_within_bin="half"),
        ValueError,
        "auc_within_bin",
    ),
    ("lf-not-fitted", lambda: pe.LabelFreeEstimator().estimate(REF_S), ValueError, "not fitted"),
    ("lf-not-fitted-save", lambda: pe.LabelFreeEstimator().to_dict(), ValueError, "not fitted"),
    (
        "lf-fit-length",
        lambda: pe.LabelFreeEstimator().fit(REF_Y[:5], REF_S),
        ValueError,
        "same length",
    ),
    (
        "lf-fit-probabilities",
        lambda: pe.LabelFreeEstimator().fit([0, 1], [0.2, 1.2]),
        ValueError,
        "probabilities",
    ),
    (
        "lf-fit-nan",
        lambda: pe.LabelFreeEstimator().fit([0, 1], [0.2, np.nan]),
        ValueError,
        "y_score",
    ),
    (
        "lf-fit-multiclass",
        lambda: pe.LabelFreeEstimator().fit([0, 1, 2], [0.2, 0.5, 0.9]),
        ValueError,
        "binary",
    ),
    (
        "lf-fit-strings",
        lambda: pe.LabelFreeEstimator().fit(["a", "b"], [0.2, 0.5]),
        ValueError,
        "pos_label",
    ),
    ("lf-fit-empty", lambda: pe.LabelFreeEstimator().fit([], []), ValueError, "must not be empty"),
    ("lf-scores-range", lambda: LF.estimate([0.5, -0.1]), ValueError, "probabilities"),
    ("lf-scores-nan", lambda: LF.estimate([0.5, np.nan]), ValueError, "index 1"),
    ("lf-target", lambda: LF.estimate(REF_S, target="future"), ValueError, "target"),
    ("lf-y-true-length", lambda: LF.estimate(REF_S, y_true=REF_Y[:3]), ValueError, "same length"),
    (
        "lf-y-true-class",
        lambda: LF.estimate(REF_S[:3], y_true=[0, 1, 7]),
        ValueError,
        "did not have",
    ),
    ("lf-n-samples", lambda: LF.estimate(REF_S, n_samples=0), ValueError, "n_samples"),
    ("lf-ci", lambda: LF.estimate(REF_S, ci=1.0), ValueError, "ci"),
    ("lf-rng", lambda: LF.estimate(REF_S, rng="x"), TypeError, "rng"),
    ("lf-chunk-size", lambda: LF.estimate(REF_S, chunk_size=0), ValueError, "chunk_size"),
    ("lf-chunk-size-float", lambda: LF.estimate(REF_S, chunk_size=1.5), TypeError, "chunk_size"),
    ("lf-n-chunks-too-many", lambda: LF.estimate(REF_S[:3], n_chunks=5), ValueError, "n_chunks"),
    (
        "lf-two-chunkings",
        lambda: LF.estimate(REF_S, chunk_size=10, n_chunks=2),
        ValueError,
        "at most one",
    ),
    (
        "lf-stamps-durations",
        lambda: LF.estimate(REF_S[:2], period="D", timestamps=np.array([1, 2], "m8[D]")),
        TypeError,
        "durations",
    ),
    (
        "lf-stamps-out-of-range",
        lambda: LF.estimate(REF_S[:1], period="Y", timestamps=np.array(["12000-01-01"], "M8[D]")),
        ValueError,
        "years 1 to 9999",
    ),
    (
        "evaluate-zero-weights",
        lambda: pe.evaluate(Y, y_score=S, sample_weight=np.zeros(len(Y))),
        ValueError,
        "sample_weight is 0 for every row",
    ),
    (
        "evaluate-by-zero-weights",
        lambda: pe.evaluate_by(Y, y_score=S, by=Y, sample_weight=np.zeros(len(Y))),
        ValueError,
        "sample_weight is 0 for every row",
    ),
    (
        "compare-paired-zero-weights",
        lambda: pe.compare_paired(Y, Y, Y, sample_weight=np.zeros(len(Y))),
        ValueError,
        "sample_weight is 0 for every row",
    ),
    ("lf-period-no-stamps", lambda: LF.estimate(REF_S, period="D"), ValueError, "timestamps"),
    ("lf-stamps-no-period", lambda: LF.estimate(REF_S, timestamps=STAMPS), ValueError, "period"),
    (
        "lf-period-unknown",
        lambda: LF.estimate(REF_S, period="fortnight", timestamps=STAMPS),
        ValueError,
        "period",
    ),
    (
        "lf-stamps-length",
        lambda: LF.estimate(REF_S, period="D", timestamps=STAMPS[:5]),
        ValueError,
        "timestamps",
    ),
    (
        "lf-stamps-garbage",
        lambda: LF.estimate(REF_S, period="D", timestamps=["x"] * 400),
        TypeError,
        "timestamps",
    ),
    (
        "lf-stamps-nat",
        lambda: LF.estimate(
            REF_S[:2], period="D", timestamps=np.array(["2024-01-01", "NaT"], dtype="datetime64[D]")
        ),
        ValueError,
        "NaT",
    ),
    ("lf-result-metric", lambda: LF_RESULT.posterior("f1"), KeyError, "not estimated"),
    (
        "lf-result-chunk",
        lambda: LF_RESULT.posterior("accuracy", chunk=9),
        IndexError,
        "out of range",
    ),
    (
        "lf-result-chunk-key",
        lambda: LF_RESULT.posterior("accuracy", chunk="2024"),
        KeyError,
        "no chunk",
    ),
    (
        "lf-result-chunk-bool",
        lambda: LF_RESULT.posterior("accuracy", chunk=True),
        TypeError,
        "chunk",
    ),
    ("lf-from-dict-type", lambda: pe.LabelFreeEstimator.from_dict("x"), TypeError, "dict"),
    (
        "lf-from-dict-keys",
        lambda: pe.LabelFreeEstimator.from_dict({"format": "probeval.LabelFreeEstimator/2"}),
        ValueError,
        "lacks the key",
    ),
    (
        "lf-from-dict-observed",
        lambda: pe.LabelFreeEstimator.from_dict(
            {**LF.to_dict(), "reference_observed": np.array([[0.5]])}
        ),
        ValueError,
        "reference_observed must be a dict",
    ),
    (
        "lf-backtest-without-labels",
        lambda: LF_RESULT.backtest(),
        ValueError,
        "backtest needs each chunk's labels",
    ),
    (
        "lf-backtest-population-target",
        lambda: LF.estimate(REF_S, y_true=REF_Y, n_chunks=2, n_samples=50, rng=0).backtest(),
        ValueError,
        "target=\"realized\" estimates; this estimate has target='population'",
    ),
    (
        "lf-backtest-ci",
        lambda: LF.estimate(
            REF_S, y_true=REF_Y, target="realized", n_chunks=2, n_samples=50, rng=0
        ).backtest(ci=1.0),
        ValueError,
        "ci",
    ),
    (
        "lf-from-dict-multiclass-edges",
        lambda: pe.LabelFreeEstimator.from_dict({**MC.to_dict(), "edges": None}),
        ValueError,
        "edges must be a list of finite numbers",
    ),
    (
        "prior-pseudo-counts-one-class",
        lambda: pe.Prior(1.0).pseudo_counts(1),
        ValueError,
        "n_classes must be 2 or more, got 1",
    ),
    (
        "prior-pseudo-counts-too-many-classes",
        lambda: pe.Prior(1.0).pseudo_counts(10**7),
        MemoryError,
        "a prior for n_classes=10,000,000 needs",
    ),
    ("prior-updated-none", lambda: pe.Prior(1.0).updated(None), TypeError, "counts must hold"),
    (
        "density-svg-height",
        lambda: pe.Posterior.from_beta(2, 3, metric="accuracy", rng=0).density_svg(
            height=np.array([[0.5]])
        ),
        TypeError,
        "height must be a positive integer",
    ),
    (
        "density-svg-band",
        lambda: pe.Posterior.from_beta(2, 3, metric="accuracy", rng=0).density_svg(band=(0.9, 0.1)),
        ValueError,
        "band must satisfy lo <= hi",
    ),
    (
        "lf-from-dict-old-format",
        lambda: pe.LabelFreeEstimator.from_dict({"format": "probeval.LabelFreeEstimator/1"}),
        ValueError,
        "format",
    ),
    (
        "lf-method",
        lambda: pe.LabelFreeEstimator(method="bayes"),
        ValueError,
        "method",
    ),
    (
        "lf-periods-type",
        lambda: pe.LabelFreeEstimator().fit(
            [0, 1, 0, 1, 1, 0], [0.1, 0.9, 0.2, 0.8, 0.7, 0.3], periods=2.5
        ),
        TypeError,
        "periods",
    ),
    (
        "lf-periods-length",
        lambda: pe.LabelFreeEstimator().fit([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], periods=[1, 2]),
        ValueError,
        "periods",
    ),
    (
        "lf-periods-count",
        lambda: pe.LabelFreeEstimator().fit([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], periods=0),
        ValueError,
        "periods",
    ),
    (
        "lf-partial-labels-class",
        lambda: (
            pe.LabelFreeEstimator()
            .fit([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8])
            .estimate([0.2, 0.7], partial_labels=[2, None])
        ),
        ValueError,
        "partial_labels",
    ),
    (
        "lf-partial-labels-length",
        lambda: (
            pe.LabelFreeEstimator()
            .fit([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8])
            .estimate([0.2, 0.7], partial_labels=[1.0])
        ),
        ValueError,
        "partial_labels",
    ),
    (
        "lf-fit-summary-type",
        lambda: pe.LabelFreeEstimator().fit_summary(
            [pe.ScoreSummary.from_scores([0, 1], [0.2, 0.8]), "x"]
        ),
        TypeError,
        "ScoreSummary",
    ),
    (
        "lf-from-dict-edges",
        lambda: pe.LabelFreeEstimator.from_dict(
            {**LF.to_dict(), "edges": LF.to_dict()["edges"][::-1]}
        ),
        ValueError,
        "edges",
    ),
    (
        "lf-from-dict-counts",
        lambda: pe.LabelFreeEstimator.from_dict({**LF.to_dict(), "positives": [1.0]}),
        ValueError,
        "per bin",
    ),
    ("evaluate-prior-subnormal", _ev(prior=1e-310), ValueError, "prior"),
    ("evaluate-prior-astronomical", _ev(prior=1e200), ValueError, "prior"),
    ("from-beta-astronomical", lambda: pe.Posterior.from_beta(1e101, 2.0), ValueError, "a must"),
    (
        "score-prior-astronomical",
        lambda: pe.evaluate(Y, y_score=S, score_prior=1e200),
        ValueError,
        "score_prior",
    ),
    ("evaluate-prior-matrix-tiny", _ev(prior=np.full((2, 2), 1e-305)), ValueError, "prior"),
    (
        "metric-interval-prior-tiny",
        lambda: pe.metric_interval("precision", tp=3, fp=1, prior=1e-310),
        ValueError,
        "prior",
    ),
    ("from-beta-tiny-a", lambda: pe.Posterior.from_beta(1e-310, 2.0), ValueError, "a must"),
    ("from-beta-tiny-b", lambda: pe.Posterior.from_beta(2.0, 5e-324), ValueError, "b must"),
    ("posterior-pdf-str", lambda: POST.pdf(np.array(["0.5"])), TypeError, "x must"),
    ("posterior-cdf-complex", lambda: EXACT.cdf(np.array([0.5j])), TypeError, "x must"),
    ("posterior-quantile-date", lambda: EXACT.quantile(np.datetime64("2024")), TypeError, "q"),
    (
        "bootstrap-members-huge",
        lambda: pe.bootstrap_ensemble(RateClassifier(), X2, Y2, X2, n_estimators=10**9),
        ValueError,
        "n_estimators",
    ),
    (
        "bootstrap-fraction-huge",
        lambda: pe.bootstrap_ensemble(RateClassifier(), X2, Y2, X2, fraction=1e9),
        ValueError,
        "fraction",
    ),
    (
        "bootstrap-x-predict-0d",
        lambda: pe.bootstrap_ensemble(RateClassifier(), X2, Y2, 3.0),
        ValueError,
        "X_predict",
    ),
    (
        "bootstrap-y-2d",
        lambda: pe.bootstrap_ensemble(RateClassifier(), X2, Y2.reshape(-1, 1), X2),
        ValueError,
        "y must",
    ),
    ("cm-posterior-auc-macro", lambda: M3.posterior("roc_auc_macro"), ValueError, "needs scores"),
    (
        "multiclass-random-baseline",
        lambda: pe.evaluate(
            [0, 1, 2, 0], y_score=np.eye(3)[[0, 1, 2, 1]], metrics=["roc_auc_macro"], rng=0
        )["roc_auc_macro"].random_baseline(),
        ValueError,
        "random baseline",
    ),
]


# ---------------------------------------------------------------------------------------------
# Generated rows: every array parameter x every class of bad array, and every n_samples / ci
# parameter x every class of bad number. The expected error depends on what the parameter holds.

Y6 = np.array([0, 1, 1, 0, 1, 0])
P6 = np.array([0, 1, 0, 0, 1, 1])
S6 = np.array([0.1, 0.9, 0.4, 0.2, 0.7, 0.6])
BY6 = np.array(["a", "a", "b", "b", "c", "c"])
ENS6 = np.array([[0.1, 0.6, 0.5, 0.2, 0.3, 0.9], [0.3, 0.8, 0.4, 0.1, 0.2, 0.7]])

#: (id, parameter, what it holds, call with the value in that parameter)
ARRAY_PARAMETERS: list[tuple[str, str, str, Callable[[Any], Any]]] = [
    ("experiment", "y_true", "labels", lambda v: _experiment().update(v, P6)),
    ("experiment", "y_pred", "labels", lambda v: _experiment().update(Y6, v)),
    ("experiment", "y_score", "probabilities", lambda v: _experiment().update(Y6, y_score=v)),
    (
        "experiment",
        "sample_weight",
        "weights",
        lambda v: _experiment().update(Y6, P6, sample_weight=v),
    ),
    ("evaluate", "y_true", "labels", lambda v: pe.evaluate(v, P6)),
    ("evaluate", "y_pred", "labels", lambda v: pe.evaluate(Y6, v)),
    ("evaluate", "y_score", "probabilities", lambda v: pe.evaluate(Y6, y_score=v)),
    ("evaluate", "sample_weight", "weights", lambda v: pe.evaluate(Y6, P6, sample_weight=v)),
    (
        "evaluate-stratified",
        "strata",
        "labels",
        lambda v: pe.evaluate(Y6, P6, strata=v, sample_weight=np.ones(6)),
    ),
    ("labelling_plan", "y_score", "probabilities", lambda v: pe.labelling_plan(v, 3)),
    ("evaluate_by", "y_true", "labels", lambda v: pe.evaluate_by(v, P6, by=BY6, n_samples=9)),
    ("evaluate_by", "by", "labels", lambda v: pe.evaluate_by(Y6, P6, by=v, n_samples=9)),
    (
        "evaluate_by",
        "y_score",
        "probabilities",
        lambda v: pe.evaluate_by(Y6, y_score=v, by=BY6, n_samples=9),
    ),
    (
        "evaluate_by",
        "sample_weight",
        "weights",
        lambda v: pe.evaluate_by(Y6, P6, by=BY6, sample_weight=v, n_samples=9),
    ),
    ("from_predictions", "y_pred", "labels", lambda v: pe.ConfusionMatrix.from_predictions(Y6, v)),
    ("from_scores", "y_score", "probabilities", lambda v: pe.ConfusionMatrix.from_scores(Y6, v)),
    ("compare_paired", "y_pred_a", "labels", lambda v: pe.compare_paired(Y6, v, P6, n_samples=9)),
    ("compare_paired", "y_pred_b", "labels", lambda v: pe.compare_paired(Y6, P6, v, n_samples=9)),
    ("score_summary", "y_true", "labels", lambda v: pe.ScoreSummary.from_scores(v, S6)),
    ("score_summary", "y_score", "scores", lambda v: pe.ScoreSummary.from_scores(Y6, v)),
    ("calibration", "y_true", "labels", lambda v: pe.calibration(v, S6, n_samples=9)),
    ("curves", "y_true", "labels", lambda v: pe.curves(v, S6, n_samples=9)),
    ("curves", "y_score", "scores", lambda v: pe.curves(Y6, v, n_samples=9)),
    ("decision_curve", "y_true", "labels", lambda v: pe.decision_curve(v, S6, n_samples=9)),
    ("decision_curve", "y_score", "scores", lambda v: pe.decision_curve(Y6, v, n_samples=9)),
    ("calibration", "y_score", "probabilities", lambda v: pe.calibration(Y6, v, n_samples=9)),
    ("rank_models", "y_true", "labels", lambda v: pe.rank_models(v, [P6, P6], n_samples=9)),
    (
        "rank_models",
        "predictions['model_0']",
        "labels",
        lambda v: pe.rank_models(Y6, [v, P6], n_samples=9),
    ),
    (
        "rank_models_auc",
        "predictions['model_1']",
        "scores",
        lambda v: pe.rank_models(Y6, [S6, v], metric="roc_auc", n_samples=9),
    ),
    (
        "compare_paired_auc",
        "y_score_a",
        "scores",
        lambda v: pe.compare_paired(Y6, y_score_a=v, y_score_b=S6, metric="roc_auc", n_samples=9),
    ),
    (
        "compare_paired_auc",
        "y_score_b",
        "scores",
        lambda v: pe.compare_paired(Y6, y_score_a=S6, y_score_b=v, metric="roc_auc", n_samples=9),
    ),
    ("labelfree_fit", "y_score", "probabilities", lambda v: pe.LabelFreeEstimator().fit(Y6, v)),
    ("labelfree_estimate", "y_score", "probabilities", lambda v: LF.estimate(v, n_samples=9)),
    ("ensemble_report", "y_true", "labels", lambda v: pe.ensemble_report(ENS6, v, n_samples=9)),
    (
        "ensemble_report",
        "groups",
        "labels",
        lambda v: pe.ensemble_report(ENS6, groups=v, n_samples=9),
    ),
    ("hdi", "samples", "scores", lambda v: pe.hdi(v)),
    ("eti", "samples", "scores", lambda v: pe.eti(v)),
    ("kde", "samples", "scores", lambda v: pe.kde(v)),
    ("from_samples", "samples", "probabilities", lambda v: pe.Posterior.from_samples(v)),
]

_NUMERIC = ("probabilities", "weights", "scores")

#: (class id, value, {holds: expected error}) — holds missing from the mapping are not bad
#: for that class (e.g. strings are fine labels, 2**63 - 1 is a fine score).
ARRAY_CLASSES: list[tuple[str, Any, dict[str, type[Exception]]]] = [
    ("0d", np.array(1), dict.fromkeys(("labels", *_NUMERIC), ValueError)),
    ("2d", Y6.reshape(6, 1), dict.fromkeys(("labels", *_NUMERIC), ValueError)),
    ("empty", np.array([]), dict.fromkeys(("labels", *_NUMERIC), ValueError)),
    ("short", Y6[:4], dict.fromkeys(("labels", *_NUMERIC), ValueError)),
    ("nan", np.full(6, np.nan), dict.fromkeys(("labels", *_NUMERIC), ValueError)),
    ("inf", np.full(6, np.inf), dict.fromkeys(("labels", *_NUMERIC), ValueError)),
    (
        # A missing value is a ValueError everywhere, like NaN (one rule: it says so and
        # names the position).
        "object-with-none",
        np.array([0, None, 1, 0, 1, 0], dtype=object),
        dict.fromkeys(("labels", *_NUMERIC), ValueError),
    ),
    (
        "object-with-float32-nan",
        np.array([0, np.float32("nan"), 1, 0, 1, 0], dtype=object),
        dict.fromkeys(("labels", *_NUMERIC), ValueError),
    ),
    ("complex", Y6.astype(complex), dict.fromkeys(("labels", *_NUMERIC), TypeError)),
    ("str", np.array(list("011010")), dict.fromkeys(_NUMERIC, TypeError)),
    (
        "datetime",
        np.array(["2024-01-01"] * 6, dtype="datetime64[D]"),
        dict.fromkeys(_NUMERIC, TypeError),
    ),
    ("python-bigint", [2**70] * 6, dict.fromkeys(_NUMERIC, TypeError)),
    ("int64-max", np.full(6, 2**63 - 1, dtype=np.int64), {"probabilities": ValueError}),
    ("uint64-max", np.full(6, 2**64 - 1, dtype=np.uint64), {"probabilities": ValueError}),
    ("negative", -S6, {"probabilities": ValueError, "weights": ValueError}),
    ("dict", {"a": 1}, dict.fromkeys(("labels", *_NUMERIC), ValueError)),
]


if importlib.util.find_spec("pandas") is not None:  # pandas' own missing value, NA
    import pandas as pd

    ARRAY_CLASSES += [
        (
            "pandas-na-int64",
            pd.Series([0, pd.NA, 1, 0, 1, 0], dtype="Int64"),
            dict.fromkeys(("labels", *_NUMERIC), ValueError),
        ),
        (
            "pandas-na-boolean",
            pd.array([False, pd.NA, True, False, True, False], dtype="boolean"),
            dict.fromkeys(("labels", *_NUMERIC), ValueError),
        ),
        (
            "pandas-na-string",
            pd.Series(["0", pd.NA, "1", "0", "1", "0"], dtype="string"),
            {"labels": ValueError},
        ),
    ]


PLAN6 = pe.labelling_plan(S6, 4, metric="accuracy", n_bins=1, rng=0)


def _experiment() -> pe.Experiment:
    return pe.Experiment(["accuracy"], rope=(0.5, 1.0), n_samples=9, seed=0)


def _fixed(call: Callable[[Any], Any], value: Any) -> Callable[[], Any]:
    return lambda: call(value)


for _function, _parameter, _holds, _call in ARRAY_PARAMETERS:
    for _class, _value, _expected in ARRAY_CLASSES:
        standalone = _function in {
            "labelfree_estimate",
            "hdi",
            "eti",
            "kde",
            "from_samples",
            "labelling_plan",
        }
        if _holds in _expected and not (_class == "short" and standalone):
            CASES.append(
                (
                    f"generated-{_function}-{_parameter}-{_class}",
                    _fixed(_call, _value),
                    _expected[_holds],
                    _parameter,
                )
            )

#: Functions with an ``n_samples`` parameter, called with the value given.
N_SAMPLES_PARAMETERS: list[tuple[str, Callable[[Any], Any]]] = [
    ("evaluate", lambda v: pe.evaluate(Y6, P6, n_samples=v)),
    ("evaluate_by", lambda v: pe.evaluate_by(Y6, P6, by=BY6, n_samples=v)),
    ("compare", lambda v: pe.compare(POST, POST, n_samples=v)),
    ("compare_paired", lambda v: pe.compare_paired(Y6, P6, P6, n_samples=v)),
    ("rank_models", lambda v: pe.rank_models(Y6, [P6, Y6], n_samples=v)),
    ("aggregate_folds", lambda v: pe.aggregate_folds([CM, CM], metric="f1", n_samples=v)),
    ("compare_folds", lambda v: pe.compare_folds([0.1, 0.3], [0.2, 0.2], metric="f1", n_samples=v)),
    ("calibration", lambda v: pe.calibration(Y6, S6, n_samples=v)),
    ("curves", lambda v: pe.curves(Y6, S6, n_samples=v)),
    ("decision_curve", lambda v: pe.decision_curve(Y6, S6, n_samples=v)),
    (
        "compare_paired_auc",
        lambda v: pe.compare_paired(Y6, y_score_a=S6, y_score_b=S6, metric="roc_auc", n_samples=v),
    ),
    ("vs_random", lambda v: pe.vs_random(CM, "f1", n_samples=v)),
    ("metric_summary", lambda v: pe.metric_summary("f1", tp=3, fp=1, tn=4, fn=2, n_samples=v)),
    ("ensemble_report", lambda v: pe.ensemble_report(ENS6, n_samples=v)),
    ("labelfree_estimate", lambda v: LF.estimate(REF_S, n_samples=v)),
    (
        "score_summary_posterior",
        lambda v: pe.ScoreSummary.from_scores(Y6, S6).posterior(n_samples=v),
    ),
    ("from_beta", lambda v: pe.Posterior.from_beta(2.0, 3.0, n_samples=v)),
    ("experiment", lambda v: pe.Experiment(["accuracy"], rope=(0.5, 1.0), n_samples=v)),
    ("labelling_plan_evaluate", lambda v: PLAN6.evaluate(Y6[PLAN6.rows], n_samples=v)),
    (
        "segment_counts_evaluate",
        lambda v: pe.SegmentCounts.from_rows(Y6, P6, by=BY6).evaluate(n_samples=v),
    ),
]

N_SAMPLES_CLASSES: list[tuple[str, Any, type[Exception]]] = [
    ("huge", 10**12, ValueError),
    ("uint64-max", np.uint64(2**64 - 1), ValueError),
    ("zero", 0, ValueError),
    ("negative", -5, ValueError),
    ("float", 100.0, TypeError),
    ("bool", True, TypeError),
    ("str", "100", TypeError),
    ("array", np.array([100]), TypeError),
]

for _function, _call in N_SAMPLES_PARAMETERS:
    for _class, _value, _error in N_SAMPLES_CLASSES:
        CASES.append(
            (
                f"generated-{_function}-n_samples-{_class}",
                _fixed(_call, _value),
                _error,
                "n_samples",
            )
        )

#: Functions with a credible-mass parameter ``ci``.
CI_PARAMETERS: list[tuple[str, Callable[[Any], Any]]] = [
    ("summary", lambda v: EXACT.summary(ci=v)),
    ("hdi", lambda v: pe.hdi(S6, v)),
    ("eti", lambda v: pe.eti(S6, v)),
    ("posterior_hdi", lambda v: POST.hdi(v)),
    ("metric_interval", lambda v: pe.metric_interval("precision", tp=3, fp=1, ci=v)),
    ("metric_summary", lambda v: pe.metric_summary("f1", tp=3, fp=1, tn=4, fn=2, ci=v)),
    ("evaluate_by", lambda v: pe.evaluate_by(Y6, P6, by=BY6, n_samples=9, ci=v)),
    ("decide", lambda v: pe.decide(POST, rope=(0.0, 0.5), ci=v)),
    ("ensemble_report", lambda v: pe.ensemble_report(ENS6, n_samples=9, ci=v)),
    ("experiment", lambda v: pe.Experiment(["accuracy"], rope=(0.5, 1.0), ci=v)),
    ("assurance_precision", lambda v: pe.assurance_precision("accuracy", 9, rope=(0.5, 1), ci=v)),
    ("plan_sample_size", lambda v: pe.plan_sample_size("accuracy", 0.1, expected=0.8, ci=v)),
    ("calibration", lambda v: pe.calibration(Y6, S6, n_samples=9, ci=v)),
    ("roc_band", lambda v: pe.curves(Y6, S6, n_samples=9, rng=0).roc_band(v)),
    ("net_benefit_band", lambda v: pe.decision_curve(Y6, S6, n_samples=9).net_benefit_band(v)),
    ("fold_summary", lambda v: pe.aggregate_folds([CM, CM], metric="f1", n_samples=9).summary(v)),
    (
        "fold_comparison",
        lambda v: pe.compare_folds([0.1, 0.3], [0.2, 0.2], metric="f1", n_samples=9).summary(v),
    ),
]

CI_CLASSES: list[tuple[str, Any, type[Exception]]] = [
    ("zero", 0.0, ValueError),
    ("one", 1.0, ValueError),
    ("above-one", 1.5, ValueError),
    ("negative", -0.1, ValueError),
    ("nan", float("nan"), ValueError),
    ("str", "0.9", TypeError),
    ("bool", True, TypeError),
]

for _function, _call in CI_PARAMETERS:
    for _class, _value, _error in CI_CLASSES:
        CASES.append((f"generated-{_function}-ci-{_class}", _fixed(_call, _value), _error, "ci"))


@pytest.mark.parametrize(
    ("call", "error", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_rejected_with_a_named_parameter(
    call: Callable[[], Any], error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value), f"message {str(info.value)!r} does not mention {fragment!r}"


def test_table_size() -> None:
    print(f"bad-input cases: {len(CASES)}")
    assert len({c[0] for c in CASES}) == len(CASES)


def test_read_only_and_strided_arrays_are_accepted() -> None:
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1] * 3)
    s = np.linspace(0.05, 0.95, y.size)
    y_ro, s_ro = y.copy(), s.copy()
    y_ro.setflags(write=False)
    s_ro.setflags(write=False)
    a = pe.evaluate(y_ro, y_score=s_ro, rng=1)
    b = pe.evaluate(np.repeat(y, 2)[::2], y_score=np.repeat(s, 2)[::2], rng=1)
    for name in a:
        np.testing.assert_array_equal(a[name].samples, b[name].samples)
    strided = np.linspace(0, 1, 4000)[::2]
    assert pe.kde(strided).integral() == pytest.approx(1.0, abs=1e-3)


def test_mixed_type_labels_work_with_an_explicit_order() -> None:
    y_true = np.array([1, "a", "a", 1], dtype=object)
    y_pred = np.array([1, "a", 1, 1], dtype=object)
    cm = pe.ConfusionMatrix.from_predictions(y_true, y_pred, labels=["a", 1])
    assert cm.labels == ("a", 1)
    assert cm.cells() == (2.0, 1.0, 1.0, 0.0)
