"""Shared test configuration."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# Deterministic property tests with 200 examples per test: reproducible in CI, and enough to
# reach the corners (empty cells, tiny priors, huge counts) every run.
settings.register_profile(
    "probeval",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("probeval")


def _cost(item: pytest.Item) -> float:
    """How long a test runs, as far as its ``slow`` mark says: -1 for a fast one."""
    # A parametrized case's own mark sits beside its function's: the largest hint counts.
    marks = list(item.iter_markers("slow"))
    return max((float(mark.kwargs.get("minutes", 0)) for mark in marks), default=-1.0)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first, the longest leading (stable otherwise). With ``-n`` and one test handed
    out at a time (pyproject's addopts) the long simulations start at once and the fast tests
    fill in around them, which is longest-processing-time scheduling; in
    collection order one worker was left running the last coverage simulations alone while the
    other had nothing to do (about a quarter of the README test command's 48 minutes)."""
    items.sort(key=_cost, reverse=True)
