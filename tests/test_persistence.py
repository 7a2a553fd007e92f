"""Every result type survives pickle, copy and deepcopy, and compares equal afterwards.

Results get saved to disk, sent to Dask workers and cached; a copy must be equal to its
original (``==`` compares the data, arrays and NaN included), work the same, and differ from a
result computed with other data or another seed.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import probeval as pe

RNG = np.random.default_rng(0)
Y = RNG.integers(0, 2, 2_000)
S = np.clip(0.7 * RNG.random(2_000) + 0.3 * Y, 0, 1)
P = (S > 0.5).astype(int)
K = RNG.integers(0, 3, 1_500)
PK = RNG.dirichlet(np.ones(3), 1_500)
BY = RNG.integers(0, 3, 2_000)
CM = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=5)
ESTIMATOR = pe.LabelFreeEstimator(metrics=["accuracy", "f1", "roc_auc"]).fit(Y, S)


def builders(seed: int) -> dict[str, Callable[[], Any]]:
    """Each result type, built with the given seed."""
    return {
        "Posterior (exact)": lambda: CM.posterior("accuracy", rng=seed),
        "Posterior (sampled)": lambda: CM.posterior("mcc", n_samples=200, rng=seed),
        "Evaluation": lambda: pe.evaluate(Y, P, n_samples=200, rng=seed),
        "Evaluation (scores)": lambda: pe.evaluate(
            Y, y_score=S, metrics=["roc_auc", "f1"], n_samples=200, rng=seed
        ),
        "Evaluation (multiclass scores)": lambda: pe.evaluate(
            K, y_score=PK, metrics=["roc_auc_macro", "f1_macro"], n_samples=200, rng=seed
        ),
        "Comparison": lambda: pe.compare_paired(Y, P, 1 - P, n_samples=200, rng=seed),
        "Decision": lambda: pe.decide(CM.posterior("mcc", n_samples=200, rng=seed), rope=0.5),
        "SegmentEvaluation": lambda: pe.evaluate_by(Y, P, by=BY, n_samples=200, rng=seed),
        "SegmentEvaluation (summaries)": lambda: pe.evaluate_by(
            Y, P, by=BY, n_samples=200, rng=seed, summaries_only=True
        ),
        "SegmentEvaluation (multiclass)": lambda: pe.evaluate_by(
            K, K, by=BY[:1_500], n_samples=200, rng=seed
        ),
        "LabelFreeEstimate": lambda: ESTIMATOR.estimate(
            S, n_chunks=2, n_samples=200, rng=seed, y_true=Y
        ),
        "EnsembleReport": lambda: pe.ensemble_report(
            np.vstack([S, S[::-1], P]), Y, groups=BY, n_samples=200, rng=seed
        ),
        "KDE": lambda: pe.kde(CM.posterior("mcc", n_samples=200, rng=seed).samples),
    }


FIXED = {
    "ConfusionMatrix": CM,
    "LabelFreeEstimator": ESTIMATOR,
    "ScoreSummary": pe.ScoreSummary.from_scores(Y, S),
    "LabelAudit": pe.LabelAudit(reviewed_tp=20, mislabelled_tp=1, reviewed_fp=10, mislabelled_fp=2),
    "Prior": pe.Prior(np.ones((2, 2)), label="one per cell"),
    "MetricInfo": pe.metric_info("f1"),
}

COPIES: dict[str, Callable[[Any], Any]] = {
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


def every_result() -> list[tuple[str, Any]]:
    built = [(name, build()) for name, build in builders(1).items()]
    return built + list(FIXED.items())


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize(("name", "result"), every_result())
def test_a_copy_compares_equal_to_its_original(name: str, result: Any, how: str) -> None:
    copied = COPIES[how](result)
    assert copied == result, name
    assert (copied != result) is False


@pytest.mark.parametrize("name", list(builders(1)))
def test_results_from_another_seed_are_not_equal(name: str) -> None:
    # An exact posterior's seed decides the samples it would draw: part of its value too.
    assert builders(1)[name]() != builders(2)[name]()
    assert builders(1)[name]() == builders(1)[name]()


def test_an_unpickled_result_works_like_the_original() -> None:
    estimate = builders(1)["LabelFreeEstimate"]()
    back = pickle.loads(pickle.dumps(estimate))
    assert str(back.summary()) == str(estimate.summary())
    assert back.decision("f1", 1) == estimate.decision("f1", 1)
    segments = builders(1)["SegmentEvaluation"]()
    again = pickle.loads(pickle.dumps(segments))
    assert again.posterior(1, "mcc") == segments.posterior(1, "mcc")
    assert again.posterior(2, "precision").hdi() == segments.posterior(2, "precision").hdi()


@settings(max_examples=50, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(1, 50),
        elements=st.floats(-1e300, 1e300, allow_nan=False),
    )
)
def test_any_posterior_from_samples_round_trips(samples: np.ndarray) -> None:
    post = pe.Posterior.from_samples(samples, bounds=None)
    assert pickle.loads(pickle.dumps(post)) == post
    assert copy.deepcopy(post) == post
    reversed_samples = samples[::-1].copy()
    if not np.array_equal(samples, reversed_samples):
        assert pe.Posterior.from_samples(reversed_samples, bounds=None) != post
