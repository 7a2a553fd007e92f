"""Random-state handling: every random function takes ``rng=`` and passes one 64-bit seed down.

``rng`` may be None, an int, a :class:`numpy.random.Generator`, a
:class:`~numpy.random.BitGenerator` or a :class:`~numpy.random.SeedSequence` (SPEC 7).
It is normalised with :func:`numpy.random.default_rng`, one 64-bit seed is drawn from it, and
the Rust core derives every block's stream from that seed — so the same ``rng`` gives
bit-identical results on any number of threads. Passing a Generator advances it, as with any
numpy function.
"""

from __future__ import annotations

import functools
import numbers
import os
from typing import Any, cast

import numpy as np

from probeval import _core
from probeval._util.validation import describe

RNGLike = None | int | np.random.Generator | np.random.BitGenerator | np.random.SeedSequence


def seed_from(rng: Any) -> int:
    """Draw the 64-bit seed that drives one random computation."""
    accepted = (
        numbers.Integral,
        np.random.Generator,
        np.random.BitGenerator,
        np.random.SeedSequence,
    )
    if isinstance(rng, (bool, np.bool_)) or not (rng is None or isinstance(rng, accepted)):
        raise TypeError(
            "rng must be None, an int, a numpy Generator, BitGenerator or SeedSequence, "
            f"got {describe(rng)}"
        )
    if rng is None:
        # Fresh OS entropy, as default_rng(None) would use, without building a generator.
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(rng, numbers.Integral):
        if int(rng) < 0:
            raise ValueError(f"rng must be a non-negative integer seed, got {int(rng)}")
        return _seed_of_int(int(rng))
    generator = np.random.default_rng(cast(Any, rng))
    return int(generator.integers(0, 2**64, dtype=np.uint64))


@functools.lru_cache(maxsize=4096)
def _seed_of_int(seed: int) -> int:
    """default_rng(seed)'s first 64-bit draw, cached: integer seeds recur in services."""
    return int(np.random.default_rng(seed).integers(0, 2**64, dtype=np.uint64))


def derive(seed: int, key: int) -> int:
    """Seed of sub-task ``key`` (same splitting as the Rust core's block streams)."""
    return int(_core.derive_seed(seed, key))
