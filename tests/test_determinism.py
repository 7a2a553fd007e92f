"""Reproducibility: the same rng gives bit-identical results on any number of threads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import probeval as pe

# The workload covers every capability; its draws span many 1,024-draw blocks so that threads
# really split the work.
_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "determinism_digest.py"


def _digest(threads: int) -> str:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, str(_SCRIPT)], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_identical_results_for_1_2_and_8_threads_and_on_repeated_runs() -> None:
    digests = {f"{threads} threads": _digest(threads) for threads in (1, 2, 8)}
    digests["2 threads again"] = _digest(2)
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
