"""Shared test configuration: Hypothesis profiles and the ``spec`` marker.

Every test names the requirement IDs of ``spec/SPEC.md`` it exercises with
``@pytest.mark.spec("SURF-4", ...)``; ``test_traceability.py`` checks both directions.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants
from prefix_model.edge.checker import Report

# The timeout of every child process a test runs: only a guard against a hang, never a verdict on speed (CI runs on a
# loaded machine: `variants` with contracts on took over 60 s at a load average of 11 on 2 cores).
HANG = 600

# Hypothesis draws about 5 % of its choices from the literals of every local module loaded in
# sys.modules (providers._get_local_constants, since 6.131). A derandomized run then depends on
# which modules the run happened to import (one test module alone, or the whole suite) and on any
# literal edited anywhere in the repository: measured, the loop machine's ci run differed between
# its module alone (118 examples) and the whole suite (115), and a rule and a variant went
# unreached only in the latter. The collection is switched off, so a run depends on its test only.
assert callable(getattr(providers, "_get_local_constants", None)), "Hypothesis changed: re-check the local-constants switch"
_NO_LOCAL_CONSTANTS = Constants()
providers._get_local_constants = lambda: _NO_LOCAL_CONSTANTS

# Every --json report a test produces in this process must be valid under its schema (SPEC CLI-6):
# Report.as_json is wrapped once, here, so no report escapes the contract unchecked.
REPORT_SCHEMA = jsonschema.Draft202012Validator(json.loads((Path(__file__).resolve().parent.parent / "spec" / "schema" / "check-report.schema.json").read_text(encoding="utf-8")))
_report_as_json = Report.as_json


def _validated_report(self: Report, max_findings: int | None = None) -> dict[str, object]:
    produced = _report_as_json(self, max_findings)
    REPORT_SCHEMA.validate(json.loads(json.dumps(produced)))  # as --json prints it
    return produced


Report.as_json = _validated_report  # type: ignore[method-assign]

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
# `make thorough`: a fixed (derandomized) run, larger than ci, in a stated time (Makefile); the loop machine's sizes are
# tests/loop_machine.py's. `make thorough-long`: random seeds (printed on failure; --hypothesis-seed replays one), no bound.
settings.register_profile(
    "thorough", derandomize=True, database=None, deadline=None, print_blob=True, max_examples=500, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough-long", max_examples=2000, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spec(*ids): the spec/SPEC.md requirement IDs this test exercises")
