"""Shared test configuration: Hypothesis profiles and the ``spec`` marker.

Every test names the requirement IDs of ``spec/SPEC.md`` it exercises with
``@pytest.mark.spec("SURF-4", ...)``; ``test_traceability.py`` checks both directions.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants

# Hypothesis draws about 5 % of its choices from the literals of every local module loaded in
# sys.modules (providers._get_local_constants, since 6.131). A derandomized run then depends on
# which modules the run happened to import (one test module alone, or the whole suite) and on any
# literal edited anywhere in the repository: measured, the loop machine's ci run differed between
# its module alone (118 examples) and the whole suite (115), and a rule and a variant went
# unreached only in the latter. The collection is switched off, so a run depends on its test only.
assert callable(getattr(providers, "_get_local_constants", None)), "Hypothesis changed: re-check the local-constants switch"
_NO_LOCAL_CONSTANTS = Constants()
providers._get_local_constants = lambda: _NO_LOCAL_CONSTANTS

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
