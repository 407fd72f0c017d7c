"""§14 — the conformance engine agrees with the spec's properties, request by request.

The engine (fast tier, log-only) and ``properties.py`` (spec tier, with the loop's ghost trace)
judge the same runs: the witness under the harness's semantics and under every faulty variant.
For every loop request, the engine finds a REC-1 (or REC-2) violation exactly when the spec's
property names that request.
"""

from __future__ import annotations

import re

import pytest

from prefix_model.checker.engine import Captured, check_events
from prefix_model.properties import reconstructible_companion, reconstructible_full
from prefix_model.requests import request_to_json
from prefix_model.semantics import HARNESS, Semantics
from prefix_model.variants import VARIANTS, run_witness
from prefix_model.world import World

CASES = [("harness", HARNESS)] + [(v.name, v.semantics) for v in VARIANTS]


def engine_verdicts(world: World, rule: str) -> set[int]:
    """Return the world-wide indexes of loop requests the engine finds violating ``rule``."""
    loop = [r for r in world.requests if r.loop_request]
    flagged: set[int] = set()
    for session in world.sessions:
        mine = [(n, r) for n, r in enumerate(loop) if r.session_id == session.id]
        captured = tuple(Captured(k, k + 1, request_to_json(r.request), r.turn, r.step) for k, (_, r) in enumerate(mine))
        checker = check_events(((e.seq + 1, e) for e in session.log.events), captured, session.id)
        flagged |= {mine[f.request][0] for f in checker.findings if f.rule == rule and f.request is not None}
    return flagged


def spec_verdicts(world: World, rule: str) -> set[int]:
    check = reconstructible_companion if rule == "REC-1" else reconstructible_full
    return {int(m.group(1)) for v in check(world) if (m := re.search(r"request (\d+)", v.detail))}


@pytest.mark.spec("REC-1", "REC-2", "VAR-1")
@pytest.mark.parametrize(("name", "semantics"), CASES, ids=[c[0] for c in CASES])
def test_engine_and_spec_flag_the_same_requests(name: str, semantics: Semantics) -> None:
    world = run_witness(semantics)
    for rule in ("REC-1", "REC-2"):
        assert engine_verdicts(world, rule) == spec_verdicts(world, rule), rule
