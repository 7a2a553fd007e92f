"""Reproducibility: the same rng gives bit-identical results on any number of threads."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import probeval as pe

# Draws span many 1,024-draw blocks so that threads really split the work.
_SCRIPT = """
import hashlib, numpy as np, probeval as pe
cm = pe.ConfusionMatrix.from_counts(tp=5285, fp=3184, tn=8000, fn=1000)
ev = pe.evaluate(cm, metrics=["accuracy", "f1", "mcc", "kappa"], n_samples=50_000, rng=123)
joint = pe.evaluate(cm, metrics=["precision", "f1"], joint=True, n_samples=30_001, rng=9)
rng = np.random.default_rng(0)
y = rng.integers(0, 2, 5000)
s = rng.random(5000) + 0.3 * y
auc = pe.ScoreSummary.from_scores(y, s).posteriors(n_samples=20_000, rng=4, max_bins=512)
k = rng.integers(0, 3, 3000)
p = rng.dirichlet([1, 1, 1], 3000)
mc = pe.evaluate(k, y_score=p, metrics=["roc_auc_macro", "average_precision[1]"],
                 n_samples=5_000, rng=5)
lf = pe.LabelFreeEstimator(metrics=["f1", "roc_auc"]).fit(y, np.clip(s / 1.3, 0, 1))
lf_pop = lf.estimate(np.clip(s / 1.3, 0, 1), n_chunks=3, n_samples=3_000, rng=6)
lf_real = lf.estimate(np.clip(s / 1.3, 0, 1), target="realized", chunk_size=2_000,
                      n_samples=2_100, rng=7)
labelfree = [r.posterior(m, c.index) for r in (lf_pop, lf_real) for c in r.chunks
             for m in r.metrics]
seg = pe.evaluate_by(counts=rng.integers(0, 300, (40, 2, 2)), metrics=["f1", "mcc", "recall"],
                    n_samples=3_000, rng=8, summaries_only=True)
ens = pe.ensemble_report(rng.random((4, 5000)), rng.integers(0, 2, 5000), n_samples=2000, rng=9)
h = hashlib.sha256()
for metric in seg:
    for values in seg[metric].values():
        h.update(np.ascontiguousarray(values).tobytes())
for values in ens.per_sample.values():
    h.update(np.ascontiguousarray(values).tobytes())
posteriors = (list(ev.values()) + list(joint.values()) + list(auc.values())
              + list(mc.values()) + labelfree)
for post in posteriors:
    h.update(np.ascontiguousarray(post.samples).tobytes())
    h.update(np.array(post.hdi(0.95)).tobytes())
print(h.hexdigest())
"""


def _digest(threads: int) -> str:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_identical_results_for_1_2_and_8_threads() -> None:
    digests = {threads: _digest(threads) for threads in (1, 2, 8)}
    assert len(set(digests.values())) == 1, digests


def test_same_seed_same_samples_and_different_seed_different_samples() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=5)
    a = cm.posterior("f1", rng=7).samples
    b = cm.posterior("f1", rng=7).samples
    c = cm.posterior("f1", rng=8).samples
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_generator_and_seed_sequence_inputs() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=5)
    gen = np.random.default_rng(5)
    first = cm.posterior("f1", rng=gen).samples
    second = cm.posterior("f1", rng=gen).samples  # the generator advanced
    assert not np.array_equal(first, second)
    again = cm.posterior("f1", rng=np.random.default_rng(5)).samples
    np.testing.assert_array_equal(first, again)
    seq = cm.posterior("f1", rng=np.random.SeedSequence(5)).samples
    np.testing.assert_array_equal(seq, cm.posterior("f1", rng=np.random.SeedSequence(5)).samples)
    bit = cm.posterior("f1", rng=np.random.PCG64(3)).samples
    np.testing.assert_array_equal(bit, cm.posterior("f1", rng=np.random.PCG64(3)).samples)


def test_a_metric_draws_the_same_samples_whatever_else_is_evaluated() -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=5)
    alone = pe.evaluate(cm, metrics=["f1"], rng=3)["f1"].samples
    together = pe.evaluate(cm, metrics=["mcc", "accuracy", "f1"], rng=3)["f1"].samples
    np.testing.assert_array_equal(alone, together)
    single = cm.posterior("accuracy", rng=3).samples
    in_eval = pe.evaluate(cm, metrics=["f1", "accuracy"], rng=3)["accuracy"].samples
    np.testing.assert_array_equal(single, in_eval)


@pytest.mark.parametrize("n", [1, 1023, 1024, 1025, 5000])
def test_more_draws_extend_the_same_sequence(n: int) -> None:
    cm = pe.ConfusionMatrix.from_counts(tp=50, fp=10, tn=40, fn=5)
    short = cm.posterior("mcc", n_samples=n, rng=1).samples
    long = cm.posterior("mcc", n_samples=6000, rng=1).samples
    np.testing.assert_array_equal(short, long[:n])
