"""Multiclass confusion matrices: point values against scikit-learn, posteriors against
analytic Beta marginals and a brute-force numpy model, K up to 1,000."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

import probeval as pe

KS_ALPHA = 1e-3


def _random_labels(seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Labels over K = 3..20 classes where some classes are never predicted and (sometimes)
    some never occur, from a random confusion structure."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 21))
    n = int(rng.integers(20, 400))
    y_true = rng.integers(0, k, n)
    correct = rng.random(n) < rng.uniform(0.3, 0.9)
    never_predicted = rng.choice(k, size=int(rng.integers(1, max(2, k // 3))), replace=False)
    allowed = np.setdiff1d(np.arange(k), never_predicted)
    y_pred = np.where(correct, y_true, rng.choice(allowed, n))
    y_pred = np.where(np.isin(y_pred, never_predicted), allowed[0], y_pred)
    if seed % 4 == 0:  # a class that never occurs at all
        gone = int(rng.integers(0, k))
        y_true = np.where(y_true == gone, (gone + 1) % k, y_true)
        y_pred = np.where(y_pred == gone, (gone + 1) % k, y_pred)
    return y_true, y_pred, k


@pytest.mark.parametrize("seed", range(40))
def test_observed_values_equal_scikit_learn(seed: int) -> None:
    y_true, y_pred, k = _random_labels(seed)
    labels = list(range(k))
    cm = pe.ConfusionMatrix.from_predictions(y_true, y_pred, labels=labels)
    np.testing.assert_array_equal(cm.counts, skm.confusion_matrix(y_true, y_pred, labels=labels))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for average in ("macro", "weighted", "micro"):
            p, r, f, _ = skm.precision_recall_fscore_support(
                y_true, y_pred, labels=labels, average=average, zero_division=0
            )
            assert cm.observed(f"precision_{average}") == pytest.approx(p, abs=1e-12)
            assert cm.observed(f"recall_{average}") == pytest.approx(r, abs=1e-12)
            assert cm.observed(f"f1_{average}") == pytest.approx(f, abs=1e-12)
            fb = skm.fbeta_score(
                y_true, y_pred, beta=2, labels=labels, average=average, zero_division=0
            )
            assert cm.observed(f"fbeta_{average}", beta=2) == pytest.approx(fb, abs=1e-12)
            jac = skm.jaccard_score(y_true, y_pred, labels=labels, average=average, zero_division=0)
            assert cm.observed(f"jaccard_{average}") == pytest.approx(jac, abs=1e-12)
        p, r, f, _ = skm.precision_recall_fscore_support(
            y_true, y_pred, labels=labels, average=None, zero_division=0
        )
        for i in range(k):
            assert cm.observed(f"precision[{i}]") == pytest.approx(p[i], abs=1e-12)
            assert cm.observed(f"recall[{i}]") == pytest.approx(r[i], abs=1e-12)
            assert cm.observed(f"f1[{i}]") == pytest.approx(f[i], abs=1e-12)
        assert cm.observed("accuracy") == pytest.approx(
            skm.accuracy_score(y_true, y_pred), abs=1e-12
        )
        assert cm.observed("mcc") == pytest.approx(skm.matthews_corrcoef(y_true, y_pred), abs=1e-12)
        assert cm.observed("kappa") == pytest.approx(
            skm.cohen_kappa_score(y_true, y_pred), abs=1e-12
        )
        assert cm.observed("balanced_accuracy") == pytest.approx(
            skm.balanced_accuracy_score(y_true, y_pred), abs=1e-12
        )


def test_per_class_specificity_and_npv_by_hand() -> None:
    counts = np.array([[5, 1, 0], [2, 3, 1], [0, 0, 4]])
    cm = pe.ConfusionMatrix(counts, labels=["a", "b", "c"])
    # Class b: TP 3, FP 1, FN 3, TN = 16 - 6 - 4 + 3 = 9.
    assert cm.observed("specificity[b]") == pytest.approx(9 / 10)
    assert cm.observed("npv[b]") == pytest.approx(9 / 12)
    assert cm.observed("fpr[b]") == pytest.approx(1 / 10)
    # Micro specificity pools TN and FP over classes: ((K-2) s + c) / ((K-1) s).
    assert cm.observed("specificity_micro") == pytest.approx((16 + 12) / 32)


def test_string_labels_stable_order_and_labels_argument() -> None:
    y_true = ["cat", "dog", "bird", "cat", "dog", "bird", "cat"]
    y_pred = ["cat", "cat", "bird", "cat", "dog", "dog", "bird"]
    cm = pe.ConfusionMatrix.from_predictions(y_true, y_pred)
    assert cm.labels == ("bird", "cat", "dog")
    ordered = pe.ConfusionMatrix.from_predictions(y_true, y_pred, labels=["dog", "cat", "bird"])
    assert ordered.labels == ("dog", "cat", "bird")
    np.testing.assert_array_equal(
        ordered.counts, skm.confusion_matrix(y_true, y_pred, labels=["dog", "cat", "bird"])
    )
    assert cm.observed("recall[cat]") == pytest.approx(
        skm.recall_score(y_true, y_pred, labels=["cat"], average=None)[0]
    )
    ev = pe.evaluate(y_true, y_pred, rng=0)
    assert ev.metrics == [
        "accuracy",
        "balanced_accuracy",
        "precision_macro",
        "recall_macro",
        "f1_macro",
        "mcc",
        "kappa",
    ]
    assert ev["F1_MACRO"] is ev["f1_macro"]
    with pytest.raises(ValueError, match="no class is written 'cow'"):
        cm.observed("recall[cow]")
    with pytest.raises(ValueError, match="per class"):
        cm.observed("f1")
    with pytest.raises(ValueError, match="binary data only"):
        cm.observed("diagnostic_odds_ratio")


COUNTS = np.array([[40, 5, 2, 1], [6, 30, 4, 0], [1, 3, 25, 6], [0, 2, 5, 20]])
CM4 = pe.ConfusionMatrix(COUNTS)


#: prior=1 for K = 4: 1 pseudo-count on each diagonal cell, 1/3 on every other cell (each
#: class's recall and precision get Beta(1, 1) as their prior).
PRIOR4 = np.full((4, 4), 1 / 3) + np.eye(4) * (1 - 1 / 3)


@pytest.mark.parametrize(
    ("name", "success", "failure"),
    [
        # Under Dirichlet(C + PRIOR4): a Beta of summed cells, each with its pseudo-count.
        ("precision[1]", 30 + 1, (5 + 3 + 2) + 1),
        ("recall[2]", 25 + 1, (1 + 3 + 6) + 1),
        ("accuracy", 115 + 4, 35 + 12 / 3),
        ("precision_micro", 115 + 4, 35 + 12 / 3),
        ("f1_micro", 115 + 4, 35 + 12 / 3),
    ],
)
@pytest.mark.parametrize("joint", [True, False])
def test_proportions_are_the_dirichlets_beta_marginals(
    name: str, success: float, failure: float, joint: bool
) -> None:
    """One model for every metric, joint or not: the exact laws are the Dirichlet's marginals,
    and micro-F1 (= accuracy) has accuracy's law, not the F1 transform of it."""
    post = CM4.posterior(name, joint=joint, prior=1, n_samples=40_000, rng=3)
    assert post.beta_params == pytest.approx((success, failure), rel=1e-15)
    assert post.exact_law.startswith("Beta(")
    assert stats.kstest(post.samples, stats.beta(success, failure).cdf).pvalue > KS_ALPHA


def test_exact_laws_of_per_class_proportions_and_f1() -> None:
    # Specificity of class 0: TN = the 9 cells outside row 0 and column 0 (95 counts; 3
    # diagonal pseudo-counts of 1 and 6 of 1/3), FP = the rest of column 0 (7; 3 x 1/3).
    assert CM4.posterior("specificity[0]", prior=1).beta_params == pytest.approx((95 + 5, 7 + 1))
    # Per-class F1 is 2J / (1 + J) of the Jaccard index J ~ Beta(TP + 1, FP + FN + 2).
    post = CM4.posterior("f1[2]", prior=1, rng=0)
    assert post.exact_law == "2J / (1 + J), J ~ Beta(26, 23)"
    assert CM4.posterior("jaccard[2]", prior=1).beta_params == pytest.approx((26, 23))
    assert not CM4.posterior("f1_macro", rng=0).exact


def test_per_class_f1_law_matches_the_dirichlet_draws() -> None:
    exact = CM4.posterior("f1[2]", n_samples=40_000, rng=1)
    drawn = pe.evaluate(CM4, metrics=["f1[2]", "mcc"], joint=True, n_samples=40_000, rng=2)
    assert stats.ks_2samp(exact.samples, drawn["f1[2]"].samples).pvalue > KS_ALPHA


def test_macro_f1_matches_a_numpy_implementation() -> None:
    n = 40_000
    ours = CM4.posterior("f1_macro", prior=1, n_samples=n, rng=5).samples
    rng = np.random.default_rng(6)
    g = rng.standard_gamma((COUNTS + PRIOR4)[:, :, None], size=(4, 4, n))
    diag = np.einsum("iin->in", g)
    f1 = 2 * diag / (g.sum(axis=0) + g.sum(axis=1))
    reference = f1.mean(axis=0)
    assert stats.ks_2samp(ours, reference).pvalue > KS_ALPHA
    mcc_ours = CM4.posterior("mcc", prior=1, n_samples=n, rng=5).samples
    s = g.sum(axis=(0, 1))
    c = np.einsum("iin->n", g)
    t, p = g.sum(axis=1), g.sum(axis=0)
    mcc_ref = (c * s - (t * p).sum(axis=0)) / np.sqrt(
        (s**2 - (p * p).sum(axis=0)) * (s**2 - (t * t).sum(axis=0))
    )
    assert stats.ks_2samp(mcc_ours, mcc_ref).pvalue > KS_ALPHA


def test_binary_data_through_the_multiclass_path_agree_with_the_binary_kernel() -> None:
    """The same 2 x 2 Dirichlet through both kernels: the metric distributions agree."""
    from probeval import _core

    tp, fp, tn, fn = 60, 15, 80, 20
    alpha_cells = (tp + 1.0, fp + 1.0, tn + 1.0, fn + 1.0)
    alpha_matrix = np.array([[tn, fp], [fn, tp]], dtype=float) + 1.0
    n = 40_000
    pairs = [
        ("f1", ("f1", "class", 1)),
        ("precision", ("precision", "class", 1)),
        ("specificity", ("specificity", "class", 1)),
        ("mcc", ("mcc", "", 0)),
        ("kappa", ("kappa", "", 0)),
        ("balanced_accuracy", ("balanced_accuracy", "", 0)),
    ]
    binary = _core.binary_metric_draws(alpha_cells, [b for b, _ in pairs], n, 11)
    multiclass = _core.multiclass_metric_draws(
        alpha_matrix, alpha_matrix - 1.0, [m for _, m in pairs], n, 12
    )
    for (name, _), a, b in zip(pairs, binary, multiclass, strict=True):
        assert stats.ks_2samp(a, b).pvalue > KS_ALPHA, name
    cm = pe.ConfusionMatrix.from_counts(tp=tp, fp=fp, tn=tn, fn=fn)
    ev = pe.evaluate(cm, metrics=["f1[1]", "f1[0]", "f1_macro"], joint=True, rng=3)
    np.testing.assert_allclose(
        ev["f1_macro"].samples, 0.5 * (ev["f1[1]"].samples + ev["f1[0]"].samples), rtol=1e-12
    )
    assert cm.observed("f1[1]") == pytest.approx(cm.observed("f1"))
    assert cm.observed("precision[0]") == pytest.approx(cm.observed("npv"))


def test_joint_refuses_to_mix_kernels() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=60, fp=15, tn=80, fn=20)
    with pytest.raises(ValueError, match="not a mix"):
        pe.evaluate(cm, metrics=["f1", "f1_macro"], joint=True)
    ev = pe.evaluate(cm, metrics=["f1", "f1_macro"], rng=0)  # fine when not joint
    assert set(ev) == {"f1", "f1_macro"}


def test_random_baseline() -> None:
    baseline = CM4.random_baseline()
    np.testing.assert_allclose(baseline.counts.sum(axis=1), COUNTS.sum(axis=1))
    np.testing.assert_allclose(
        baseline.counts, np.repeat(COUNTS.sum(axis=1, keepdims=True) / 4, 4, axis=1)
    )
    assert baseline.weighted
    assert baseline.labels == CM4.labels
    # A random classifier's accuracy is the mean of 1/K-th of each row: exactly 1/K.
    assert baseline.observed("accuracy") == pytest.approx(0.25)
    assert baseline.observed("mcc") == pytest.approx(0.0, abs=1e-12)
    assert baseline.observed("kappa") == pytest.approx(0.0, abs=1e-12)
    binary = pe.ConfusionMatrix.from_counts(tp=60, fp=15, tn=80, fn=20).random_baseline()
    assert binary.cells() == (40.0, 47.5, 47.5, 40.0)


def test_one_thousand_classes_work_with_memory_linear_in_cells() -> None:
    import tracemalloc

    k = 1000
    rng = np.random.default_rng(0)
    counts = np.diag(rng.integers(5, 50, k)) + (rng.random((k, k)) < 0.002) * rng.integers(
        1, 5, (k, k)
    )
    cm = pe.ConfusionMatrix(counts)
    tracemalloc.start()
    ev = pe.evaluate(cm, metrics=["f1_macro", "accuracy", "mcc"], n_samples=16, rng=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    for name in ("f1_macro", "accuracy", "mcc"):
        assert np.isfinite(ev[name].samples).all()
    # One K x K matrix of Dirichlet parameters is 8 MB; (draws x K x K) would be 128 MB.
    assert peak < 64 * 2**20, f"peak traced memory {peak / 2**20:.1f} MiB"
    assert abs(ev["accuracy"].mean() - cm.observed("accuracy")) < 0.05


def test_multiclass_draws_are_identical_for_any_thread_count() -> None:
    import os
    import subprocess
    import sys

    script = (
        "import hashlib, numpy as np, probeval as pe\n"
        "cm = pe.ConfusionMatrix(np.arange(25).reshape(5, 5) + 1)\n"
        "ev = pe.evaluate(cm, metrics=['f1_macro', 'mcc', 'recall[3]'], n_samples=20_000, rng=4)\n"
        "print(hashlib.sha256(b''.join(p.samples.tobytes() for p in ev.values())).hexdigest())\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env=dict(os.environ, RAYON_NUM_THREADS=str(threads)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for threads in (1, 2, 8)
    }
    assert len(outputs) == 1


def test_metric_info_describes_every_multiclass_name_evaluate_returns() -> None:
    y = np.array([0, 1, 2, 2, 1, 0, 2, 1])
    scores = np.eye(3)[[0, 1, 2, 1, 1, 0, 2, 0]] * 0.8 + 0.2 / 3
    names = ["f1_macro", "precision_weighted", "recall_micro", "recall[2]", "mcc", "roc_auc_macro"]
    ev = pe.evaluate(y, y_score=scores, metrics=names, n_samples=200, rng=0)
    for name, post in ev.items():
        info = pe.metric_info(name)
        assert info.name == name
        assert info.bounds == post.bounds
        assert info.needs_scores == name.startswith("roc_auc")
        assert info.beta_cells is None or name == "mcc"
    for bad in ("accuracy_macro", "roc_auc_micro", "nope[1]"):
        with pytest.raises(ValueError, match="unknown metric"):
            pe.metric_info(bad)
