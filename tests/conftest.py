"""Shared test configuration."""

from __future__ import annotations

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
