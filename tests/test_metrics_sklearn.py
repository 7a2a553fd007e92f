"""Observed (point) metric values and confusion matrices against scikit-learn."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

import probeval as pe


def _labels_from_counts(tp: int, fp: int, tn: int, fn: int) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.repeat([1, 0, 0, 1], [tp, fp, tn, fn])
    y_pred = np.repeat([1, 1, 0, 0], [tp, fp, tn, fn])
    return y_true, y_pred


def _random_counts(seed: int) -> tuple[int, int, int, int]:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 60, size=4)
    # A third of the cases have an empty cell, which exercises the zero-division paths.
    if seed % 3 == 0:
        counts[rng.integers(0, 4)] = 0
    if counts.sum() == 0:
        counts[0] = 1
    return tuple(int(c) for c in counts)  # type: ignore[return-value]


def _sklearn_values(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    kw = {"zero_division": 0.0}
    values = {
        "accuracy": skm.accuracy_score(y_true, y_pred),
        "precision": skm.precision_score(y_true, y_pred, **kw),
        "recall": skm.recall_score(y_true, y_pred, **kw),
        "f1": skm.f1_score(y_true, y_pred, **kw),
        "specificity": skm.recall_score(y_true, y_pred, pos_label=0, **kw),
        "npv": skm.precision_score(y_true, y_pred, pos_label=0, **kw),
        "jaccard": skm.jaccard_score(y_true, y_pred, **kw),
        "mcc": skm.matthews_corrcoef(y_true, y_pred),
    }
    both_classes = len(np.unique(y_true)) == 2
    if both_classes:
        values["balanced_accuracy"] = skm.balanced_accuracy_score(y_true, y_pred)
        values["informedness"] = skm.balanced_accuracy_score(y_true, y_pred, adjusted=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = skm.cohen_kappa_score(y_true, y_pred)
    if not math.isnan(kappa):
        values["kappa"] = kappa
    return values


@pytest.mark.parametrize("seed", range(60))
def test_observed_values_equal_scikit_learn(seed: int) -> None:
    tp, fp, tn, fn = _random_counts(seed)
    y_true, y_pred = _labels_from_counts(tp, fp, tn, fn)
    cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
    for name, expected in _sklearn_values(y_true, y_pred).items():
        assert cm.observed(name) == pytest.approx(expected, abs=1e-12), name
    for beta in (0.5, 2.0):
        expected = skm.fbeta_score(y_true, y_pred, beta=beta, zero_division=0.0)
        assert cm.observed("fbeta", beta=beta) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_likelihood_ratios_equal_scikit_learn_when_defined(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    tp, fp, tn, fn = (int(c) for c in rng.integers(1, 80, size=4))
    y_true, y_pred = _labels_from_counts(tp, fp, tn, fn)
    lr_pos, lr_neg = skm.class_likelihood_ratios(y_true, y_pred)
    cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
    assert cm.observed("positive_likelihood_ratio") == pytest.approx(lr_pos, rel=1e-12)
    assert cm.observed("negative_likelihood_ratio") == pytest.approx(lr_neg, rel=1e-12)
    assert cm.observed("diagnostic_odds_ratio") == pytest.approx(lr_pos / lr_neg, rel=1e-12)
    recall, specificity = tp / (tp + fn), tn / (tn + fp)
    assert cm.observed("gmean") == pytest.approx(math.sqrt(recall * specificity), rel=1e-12)
    assert cm.observed("prevalence") == pytest.approx((tp + fn) / (tp + fp + tn + fn))
    assert cm.observed("selection_rate") == pytest.approx((tp + fp) / (tp + fp + tn + fn))
    assert cm.observed("markedness") == pytest.approx(tp / (tp + fp) + tn / (tn + fn) - 1)


def test_zero_division_values() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=0, fp=0, tn=5, fn=3)  # no predicted positives
    assert cm.observed("precision") == 0.0
    assert cm.observed("precision", zero_division=1) == 1.0
    assert math.isnan(cm.observed("precision", zero_division=float("nan")))
    assert cm.observed("precision", zero_division="warn") == 0.0
    assert cm.observed("mcc") == 0.0  # scikit-learn's convention for an empty marginal
    y_true, y_pred = _labels_from_counts(0, 0, 5, 3)
    assert skm.precision_score(y_true, y_pred, zero_division=1.0) == 1.0
    assert skm.matthews_corrcoef(y_true, y_pred) == 0.0
    no_fp = pe.ConfusionMatrix.from_counts(tp=5, fp=0, tn=5, fn=2)
    assert no_fp.observed("positive_likelihood_ratio") == math.inf


@pytest.mark.parametrize("seed", range(10))
def test_confusion_matrix_from_predictions_equals_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    y_true = rng.integers(0, 2, n)
    y_pred = rng.integers(0, 2, n)
    weights = rng.random(n)
    cm = pe.ConfusionMatrix.from_predictions(y_true, y_pred)
    np.testing.assert_array_equal(cm.counts, skm.confusion_matrix(y_true, y_pred, labels=[0, 1]))
    weighted = pe.ConfusionMatrix.from_predictions(y_true, y_pred, sample_weight=weights)
    expected = skm.confusion_matrix(y_true, y_pred, labels=[0, 1], sample_weight=weights)
    np.testing.assert_allclose(weighted.counts, expected, rtol=1e-12)
    assert weighted.weighted
    assert weighted.observed("accuracy") == pytest.approx(
        skm.accuracy_score(y_true, y_pred, sample_weight=weights), rel=1e-12
    )


def test_string_labels_and_pos_label() -> None:
    y_true = np.array(["spam", "ham", "spam", "ham", "spam"])
    y_pred = np.array(["spam", "spam", "ham", "ham", "spam"])
    cm = pe.ConfusionMatrix.from_predictions(y_true, y_pred, pos_label="spam")
    assert cm.labels == ("ham", "spam")
    assert cm.cells() == (2.0, 1.0, 1.0, 1.0)
    assert cm.observed("precision") == pytest.approx(
        skm.precision_score(y_true, y_pred, pos_label="spam")
    )
    flipped = pe.ConfusionMatrix.from_predictions(y_true, y_pred, pos_label="ham")
    assert flipped.labels == ("spam", "ham")
    assert flipped.observed("precision") == pytest.approx(
        skm.precision_score(y_true, y_pred, pos_label="ham")
    )


def test_single_class_data_keep_both_binary_classes() -> None:
    cm = pe.ConfusionMatrix.from_predictions([1, 1, 1], [1, 0, 1])
    assert cm.labels == (0, 1)
    assert cm.cells() == (2.0, 0.0, 0.0, 1.0)
    bools = pe.ConfusionMatrix.from_predictions([True, False], [True, True])
    assert bools.labels == (False, True)
    signs = pe.ConfusionMatrix.from_predictions([-1, 1, 1], [-1, -1, 1])
    assert signs.labels == (-1, 1)
    assert signs.cells() == (1.0, 0.0, 1.0, 1.0)


def test_scores_are_positive_strictly_above_the_threshold() -> None:
    y_true = [0, 1, 1, 0, 1]
    scores = [0.5, 0.5, 0.51, 0.2, 0.9]
    cm = pe.ConfusionMatrix.from_scores(y_true, scores, threshold=0.5)
    assert cm.cells() == (2.0, 0.0, 2.0, 1.0)
    np.testing.assert_array_equal(
        cm.counts, skm.confusion_matrix(y_true, np.asarray(scores) > 0.5, labels=[0, 1])
    )
