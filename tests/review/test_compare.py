"""§14.4 the comparison: each design fails exactly what the table says, each failure with a counterexample that replays."""

from __future__ import annotations

import pytest
from prefix_model.loop.semantics import HARNESS
from prefix_model.review.compare import FRESH, RULES, SURVIVES, judge_rule, shrink
from prefix_model.review.sessions import Segment, play, scenario

from tests.review_rows import row, rows

# One process computes the comparison for every test that reads it (make test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("review-rows")

# What `prefix-model review` printed for the default scenario (copied from its run, not reasoned out):
# a change to any design, property or the scenario that moves a verdict fails here.
TABLE: dict[str, tuple[str, ...]] = {
    "session-prefix": (FRESH,),
    "a-before-slot": ("PFX-2",),
    "a-after-slot": ("REC-1", "REC-2", "PFX-2", "PFX-3", "PFX-7", "PFX-12", "REC-3"),
    "b-system-section": ("PFX-11", "PFX-2", "PFX-3", "PFX-7", "PFX-12"),
    "c-durable-opener": ("PFX-1", "PFX-12", FRESH, SURVIVES),
    "d-compose-per-turn": ("PFX-2",),
    "e-through-pre-step": ("TOK-1", FRESH),
    "f-session-event": ("PFX-1", "PFX-11", "REC-1", "REC-2", "PFX-3", FRESH),
    "successor-585": ("PFX-1", "PFX-12", FRESH, SURVIVES),
    "successor-742": ("PFX-1", "PFX-2", "PFX-12", SURVIVES),
    "opencode-goose": ("REC-1", "REC-2", "PFX-2", "PFX-3", "PFX-7", "PFX-12"),
    "aider-langgraph": ("REC-1", "REC-2", "PFX-2", "PFX-3", "REC-3"),
    "codex-fragments": ("PFX-1", "PFX-2", "PFX-12", SURVIVES),
}


@pytest.mark.spec("REV-4")
def test_each_design_fails_exactly_the_properties_the_table_says() -> None:
    assert {r.design.key: r.failed for r in rows()} == TABLE
    assert [e.rule for r in rows() for e in r.counterexamples] == [rule for r in rows() for rule in r.failed]


@pytest.mark.spec("REV-4")
def test_every_counterexample_replays_and_fails_its_property() -> None:
    for r in rows():
        for example in r.counterexamples:
            again = play(r.design.semantics, (Segment("replay", (example.actions,)),))
            assert again.applied == example.actions, (r.design.key, example.rule)  # every action was enabled where it stood
            assert judge_rule(example.rule, again) == example.violations != ()
            assert example.shown and example.shown[0].startswith(("request", "(no request"))


@pytest.mark.spec("REV-4")
def test_the_harness_holds_on_the_scripts_that_break_the_others() -> None:
    """A counterexample is about its design: the same script under the harness keeps the §11 property."""
    harness_rules = {rule for rule, _ in RULES} - {FRESH}
    for r in rows()[1:]:
        for example in r.counterexamples:
            if example.rule in harness_rules:
                assert judge_rule(example.rule, play(HARNESS, (Segment("replay", (example.actions,)),))) == (), (r.design.key, example.rule)


@pytest.mark.spec("REV-4")
def test_shrink_finds_nothing_where_a_property_holds() -> None:
    full = row("session-prefix").played
    assert shrink(lambda trial: play(HARNESS, trial), "PFX-1", scenario(), full) is None
    found = shrink(lambda trial: play(HARNESS, trial), FRESH, scenario(), full)
    assert found is not None and found.segments[-1] == "turns after the change" and "skill added" in found.segments
