"""§13 the faulty variants — every rejected design is caught on the witness run; the harness is not.

``judge`` runs ``variants.WITNESS`` under each variant's semantics and reports which properties
reject it (VAR-1). The verdicts are computed once per session: the witness run is the costly part.
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from prefix_model.core.json_values import json_text
from prefix_model.core.requests import request_to_json
from prefix_model.edge import cli
from prefix_model.loop import variants
from prefix_model.loop.properties import PROPERTIES, check_all
from prefix_model.loop.semantics import CHOICE_POINTS, HARNESS, Semantics
from prefix_model.loop.variants import VARIANTS, WITNESS, Verdict, judge, run_witness
from prefix_model.loop.world import Phase, World

from tests.loop_scripts import play

IDS = [v.name for v in VARIANTS]


@cache
def verdict(name: str) -> Verdict:
    return judge(next(v for v in VARIANTS if v.name == name))


@cache
def _harness_witness() -> World:
    return run_witness(HARNESS)


@pytest.mark.spec("VAR-1")
def test_the_harness_passes_every_property_on_the_witness_run() -> None:
    world = _harness_witness()
    assert [str(v) for v in check_all(world)] == []
    # The witness reaches what the variants need: a cancelled composition, a resume, a fork, a
    # compaction, an agent without a listener, and every instance parked at the end.
    kinds = {m.kind for m in world.trace}
    assert {"compose-interrupted", "composed", "compacted", "measured"} <= kinds
    assert len(world.instances) == 4 and world.session("s2").lineage is not None
    assert all(i.phase in (Phase.IDLE, Phase.DISPOSED) for i in world.instances)


@pytest.mark.parametrize("name", IDS)
@pytest.mark.spec("VAR-1")
def test_every_variant_is_rejected_by_every_property_it_names(name: str) -> None:
    result = verdict(name)
    assert result.detected, f"{name}: expected {result.expected}, rejected by {result.rejected_by}"
    assert set(result.expected) <= set(result.rejected_by) and result.first != ""


@pytest.mark.spec("VAR-1")
def test_the_catalog_is_well_formed() -> None:
    names = [v.name for v in VARIANTS]
    known = {rule for rule, _ in PROPERTIES}
    assert len(names) == len(set(names)) and len(VARIANTS) >= 20
    for variant in VARIANTS:
        assert variant.expected and set(variant.expected) <= known, variant.name
        # One design choice each: a placement is the header and the request together, so at most two points.
        assert 1 <= len(_overridden(variant)) <= 2, f"{variant.name} overrides {_overridden(variant)}"
    # Every property is the expected rejector of some variant, except those only the machines exercise.
    expected = {rule for v in VARIANTS for rule in v.expected}
    assert expected <= known and len(expected) >= 12


def _overridden(variant: variants.Variant) -> list[str]:
    return [n for n in CHOICE_POINTS if getattr(type(variant.semantics), n) is not getattr(Semantics, n)]


@pytest.mark.spec("VAR-1")
def test_each_choice_point_has_a_variant() -> None:
    covered = {n for v in VARIANTS for n in _overridden(v)}
    assert covered == set(CHOICE_POINTS)


@pytest.mark.spec("VAR-1")
def test_a_variant_is_found_by_name() -> None:
    assert variants.semantics_of("session-prefix") is HARNESS
    assert all(variants.semantics_of(v.name) is v.semantics and v.semantics.name == v.name for v in VARIANTS)


def test_a_design_shows_as_its_class_and_name() -> None:
    """What a failing property's report and Hypothesis print for the semantics a run used."""
    assert repr(HARNESS) == "<Semantics session-prefix>"
    assert all(repr(v.semantics) == f"<{type(v.semantics).__name__} {v.name}>" for v in VARIANTS)


def _has_variants_command() -> bool:
    parser = cli.build_parser()
    for action in parser._actions:  # argparse keeps its subcommands here
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and "variants" in choices:
            return True
    return False


VARIANTS_CLI = pytest.mark.skipif(not _has_variants_command(), reason="`prefix-model variants` is not there yet: the lead is adding it (CLI-4)")


@pytest.fixture
def cached_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serve the CLI the verdicts this module already computed (the witness runs are the slow part).

    The CLI imports them from ``prefix_model.loop.variants`` when the command runs, so they are served there.
    """
    monkeypatch.setattr(variants, "judge", lambda variant: verdict(variant.name))
    monkeypatch.setattr(variants, "run_witness", lambda semantics: _harness_witness() if semantics == HARNESS else run_witness(semantics))


@VARIANTS_CLI
@pytest.mark.usefixtures("cached_verdicts")
@pytest.mark.spec("CLI-4", "VAR-1")
def test_the_variants_command_prints_each_variant_and_its_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["variants"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name in IDS:
        [line] = [l for l in lines if l.split() and l.split()[0] == name]
        assert "rejected" in line.split() and "UNDETECTED" not in line
        assert all(rule in line for rule in verdict(name).rejected_by)


@VARIANTS_CLI
@pytest.mark.usefixtures("cached_verdicts")
@pytest.mark.spec("CLI-4", "VAR-1")
def test_the_variants_command_prints_one_json_object_per_variant(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["variants", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert [r["variant"] for r in records] == IDS
    for record in records:
        assert record["rejected"] is True
        assert record["rejectedBy"] == list(verdict(record["variant"]).rejected_by)
        assert set(record["expected"]) <= set(record["rejectedBy"])


@pytest.mark.spec("VAR-1", "LOOP-1")
def test_every_witness_action_is_enabled_where_it_stands_under_the_harness() -> None:
    # run_witness skips a disabled action for the variants' sake; under HARNESS none is skipped.
    world = play(WITNESS)
    assert json_text(tuple(request_to_json(r.request) for r in world.requests)) == json_text(
        tuple(request_to_json(r.request) for r in _harness_witness().requests)
    )


@pytest.mark.spec("VAR-1")
def test_a_verdict_and_the_witness_state_what_they_judge() -> None:
    import icontract

    from proofs.bugs_detected import broken_twin

    variant = VARIANTS[0]
    other = broken_twin(judge, lambda variant: Verdict("another", (), variant.expected, ""))
    with pytest.raises(icontract.ViolationError, match="VAR-1: a verdict is of the variant judged"):
        other(variant)
    unsorted = broken_twin(judge, lambda variant: Verdict(variant.name, ("PFX-2", "PFX-1"), variant.expected, "PFX-2: x"))
    with pytest.raises(icontract.ViolationError, match="VAR-1: a variant is rejected by property IDs, each named once"):
        unsorted(variant)
    silent = broken_twin(judge, lambda variant: Verdict(variant.name, ("PFX-1",), variant.expected, ""))
    with pytest.raises(icontract.ViolationError, match="the first violation is shown when there is one"):
        silent(variant)
    nothing = broken_twin(run_witness, lambda semantics: World())
    with pytest.raises(icontract.ViolationError, match="VAR-1: the witness run"):
        nothing(HARNESS)
    no_fork = broken_twin(run_witness, lambda semantics: _unforked(run_witness(semantics)))
    with pytest.raises(icontract.ViolationError, match="VAR-1: the witness run reaches every session it scripts"):
        no_fork(HARNESS)


def _unforked(world: World) -> World:
    from dataclasses import replace

    return replace(world, sessions=tuple(replace(s, lineage=None) for s in world.sessions))
