"""§14.1 the designs under review: small overrides of the harness's semantics; the harness keeps every property."""

from __future__ import annotations

import pytest
from prefix_model.loop.properties import check_all
from prefix_model.loop.semantics import CHOICE_POINTS, HARNESS, Semantics
from prefix_model.review.designs import DESIGNS, design_named
from prefix_model.review.sessions import play, scenario


def overridden(semantics: Semantics) -> list[str]:
    return [n for n in CHOICE_POINTS if getattr(type(semantics), n) is not getattr(Semantics, n)]


@pytest.mark.spec("REV-1")
def test_every_design_is_the_harness_or_a_small_override_of_it() -> None:
    assert DESIGNS[0].semantics is HARNESS and overridden(HARNESS) == []
    for design in DESIGNS[1:]:
        assert isinstance(design.semantics, Semantics) and 1 <= len(overridden(design.semantics)) <= 3, (design.key, overridden(design.semantics))
        assert design.semantics.name == design.key and design_named(design.key) is design
    assert len({d.key for d in DESIGNS}) == len(DESIGNS) == 13
    # No two designs are the same override (each reading is a different design).
    shapes = [(type(d.semantics).__mro__[:2], tuple(overridden(d.semantics))) for d in DESIGNS]
    assert len(set(shapes)) == len(shapes)


@pytest.mark.spec("REV-1")
def test_the_harness_keeps_every_property_on_every_cut_of_the_scenario() -> None:
    played = play(HARNESS, scenario())
    assert len(played.worlds) == len(scenario())
    for n, world in enumerate(played.worlds):
        assert [str(v) for v in check_all(world)] == [], scenario()[n].name
    # The scenario reaches what the review needs: a cancelled composition, a resume, a fork, a compaction.
    kinds = {m.kind for m in played.world.trace}
    assert {"compose-interrupted", "composed", "compacted"} <= kinds
    assert len(played.world.instances) == 3 and played.world.session("s2").lineage is not None


@pytest.mark.spec("REV-1")
def test_a_design_changes_what_the_loop_does_where_it_says() -> None:
    """Each durable design writes the opener into the history; each request-only one does not."""
    durable = {"c-durable-opener", "successor-585", "successor-742", "codex-fragments"}
    for design in DESIGNS:
        played = play(design.semantics, scenario()[:3])
        written = [e for e in played.world.session("s1").log.events if e.type == "user/message" and "<skill " in str(e.data)]
        assert bool(written) == (design.key in durable), design.key
