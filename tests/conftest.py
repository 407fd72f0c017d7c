"""Shared test configuration: Hypothesis profiles and the ``spec`` marker.

Every test names the requirement IDs of ``spec/SPEC.md`` it exercises with
``@pytest.mark.spec("SURF-4", ...)``; ``test_traceability.py`` checks both directions.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spec(*ids): the spec/SPEC.md requirement IDs this test exercises")
