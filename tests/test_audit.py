"""Unreliable labels (SPEC §2.6): the fused kernel against a brute-force numpy implementation of
the same generative model, convergence to the plain posterior, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import probeval as pe

COUNTS = {"tp": 5285, "fp": 3184, "tn": 8000, "fn": 1000}
N = 200_000


def _numpy_model(
    counts: dict[str, float], audit: pe.LabelAudit, metric: str, n: int, seed: int
) -> np.ndarray:
    """The generative model written out with numpy: rates, corrected cells, then the metric
    (proportions from their own Beta with a (1, 1) prior, the rest from Dirichlet(cells* + 1))."""
    rng = np.random.default_rng(seed)
    rates = {}
    for cell in ("tp", "fp", "tn", "fn"):
        if audit.audited(cell):
            reviewed = getattr(audit, f"reviewed_{cell}")
            wrong = getattr(audit, f"mislabelled_{cell}")
            a, b = getattr(audit, f"prior_{cell}")
            rates[cell] = rng.beta(wrong + a, reviewed - wrong + b, n)
        else:
            rates[cell] = np.zeros(n)
    tp, fp, tn, fn = (counts[c] for c in ("tp", "fp", "tn", "fn"))
    tp_ = tp * (1 - rates["tp"]) + fp * rates["fp"]
    fp_ = fp * (1 - rates["fp"]) + tp * rates["tp"]
    tn_ = tn * (1 - rates["tn"]) + fn * rates["fn"]
    fn_ = fn * (1 - rates["fn"]) + tn * rates["tn"]
    if metric == "precision":
        return rng.beta(tp_ + 1, fp_ + 1)
    if metric == "recall":
        return rng.beta(tp_ + 1, fn_ + 1)
    if metric == "accuracy":
        return rng.beta(tp_ + tn_ + 1, fp_ + fn_ + 1)
    g = [rng.gamma(cell + 1.0) for cell in (tp_, fp_, tn_, fn_)]
    assert metric == "f1"
    return 2 * g[0] / (2 * g[0] + g[1] + g[3])


AUDITS = {
    "tp-fp": pe.LabelAudit(reviewed_tp=100, mislabelled_tp=7, reviewed_fp=100, mislabelled_fp=31),
    "all-cells": pe.LabelAudit(
        reviewed_tp=100,
        mislabelled_tp=7,
        reviewed_fp=100,
        mislabelled_fp=31,
        reviewed_tn=200,
        mislabelled_tn=9,
        reviewed_fn=50,
        mislabelled_fn=12,
    ),
    "informative-priors": pe.LabelAudit(
        reviewed_tp=40,
        mislabelled_tp=2,
        reviewed_fp=40,
        mislabelled_fp=10,
        reviewed_fn=30,
        mislabelled_fn=3,
        prior_tp=(1, 30),
        prior_fp=(5, 5),
        prior_fn=(0.5, 0.5),
    ),
}


@pytest.mark.parametrize("audit_name", list(AUDITS))
@pytest.mark.parametrize("metric", ["precision", "recall", "f1", "accuracy"])
def test_kernel_agrees_with_brute_force_numpy(audit_name: str, metric: str) -> None:
    audit = AUDITS[audit_name]
    cm = pe.ConfusionMatrix.from_counts(**COUNTS)
    ours = cm.posterior(metric, audit=audit, n_samples=N, rng=1).samples
    theirs = _numpy_model(COUNTS, audit, metric, N, 2)
    sd = theirs.std()
    # Means: 5 standard errors of a difference of two independent means.
    assert abs(ours.mean() - theirs.mean()) < 5 * sd * math.sqrt(2 / N)
    # Spread: a sample sd has relative standard error sqrt((kurtosis - 1) / (4 N)).
    kurtosis = np.mean((theirs - theirs.mean()) ** 4) / sd**4
    relative_se = math.sqrt((kurtosis - 1) / (4 * N))
    assert ours.std() == pytest.approx(sd, rel=5 * math.sqrt(2) * relative_se)
    # Tails: the 2.5% and 97.5% quantiles, within 5 standard errors of a sample quantile.
    for q in (0.025, 0.975):
        density = np.mean(np.abs(theirs - np.quantile(theirs, q)) < sd / 20) / (sd / 10)
        se = math.sqrt(q * (1 - q) / N) / density
        assert abs(np.quantile(ours, q) - np.quantile(theirs, q)) < 5 * math.sqrt(2) * se


def test_clean_and_huge_audits_converge_to_the_plain_posterior() -> None:
    cm = pe.ConfusionMatrix.from_counts(**COUNTS)
    clean = pe.LabelAudit(
        reviewed_tp=10**12, mislabelled_tp=0, reviewed_fp=10**12, mislabelled_fp=0
    )
    for metric in ("precision", "recall", "accuracy"):
        plain = cm.posterior(metric)
        audited = cm.posterior(metric, audit=clean, n_samples=100_000, rng=3)
        assert audited.mean() == pytest.approx(plain.mean(), abs=5 * plain.std() / 300)
        assert audited.std() == pytest.approx(plain.std(), rel=0.02)
        assert audited.hdi() == pytest.approx(plain.hdi(), abs=plain.std() / 20)
    plain_f1 = cm.posterior("f1", n_samples=100_000, rng=4)
    audited_f1 = cm.posterior("f1", audit=clean, n_samples=100_000, rng=5)
    assert audited_f1.mean() == pytest.approx(plain_f1.mean(), abs=5 * plain_f1.std() / 300)
    assert audited_f1.std() == pytest.approx(plain_f1.std(), rel=0.02)


def test_worked_example_moves_and_widens_precision() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=5285, fp=3184, tn=8000, fn=1000)
    audit = pe.LabelAudit(reviewed_tp=100, mislabelled_tp=7, reviewed_fp=100, mislabelled_fp=31)
    plain = cm.posterior("precision")
    audited = cm.posterior("precision", audit=audit, rng=0)
    # Corrected counts at the posterior mean rates (8/102 and 32/102).
    m_tp, m_fp = 8 / 102, 32 / 102
    tp = 5285 * (1 - m_tp) + 3184 * m_fp
    fp = 3184 * (1 - m_fp) + 5285 * m_tp
    assert audited.mean() == pytest.approx(tp / (tp + fp), abs=0.005)
    assert audited.width() > 4 * plain.width()
    assert audited.observed == plain.observed  # the labels' own value, uncorrected
    # The audit's rate posteriors are exact Betas.
    rate = audit.rate_posterior("fp")
    assert rate.beta_params == (32.0, 70.0)
    assert rate.observed == pytest.approx(0.31)


def test_evaluate_with_an_audit() -> None:
    y = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 1] * 50)
    p = np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 0] * 50)
    audit = pe.LabelAudit(reviewed_tp=20, mislabelled_tp=1, reviewed_fp=10, mislabelled_fp=4)
    ev = pe.evaluate(y, p, audit=audit, rng=0, n_samples=2000)
    assert set(ev) >= {"precision", "f1", "mcc"}
    assert not ev["precision"].exact
    # Scores add no AUC when the labels are audited (the audit corrects the matrix only).
    scores = np.where(p == 1, 0.8, 0.2)
    ev = pe.evaluate(y, y_score=scores, audit=audit, rng=0, n_samples=500)
    assert "roc_auc" not in ev
    with pytest.raises(ValueError, match="cannot be corrected"):
        pe.evaluate(y, y_score=scores, audit=audit, metrics=["roc_auc"])
    # Comparisons redraw audited posteriors from their own streams; no random baseline.
    a = pe.ConfusionMatrix.from_predictions(y, p).posterior("f1", audit=audit, rng=1)
    comparison = pe.compare(a, a, rng=2)
    assert comparison.random is None
    with pytest.raises(ValueError, match="random baseline"):
        a.random_baseline()
    with pytest.raises(ValueError, match="cannot serve as a prior"):
        a.as_prior()
