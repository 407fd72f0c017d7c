"""§11 the properties — each one holds on a clean run and rejects a world that breaks it.

For every entry of ``properties.PROPERTIES``: a scripted harness run (prefix listeners, a tool
step, a compaction, a fork driven by a new agent) breaks nothing, and worlds built from it with
``dataclasses.replace`` — one edit of the log, the requests sent, an instance or the ghost trace —
each break exactly the property they target. This shows every property able to fail on its own,
independently of the loop and of the stateful machines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cache
from types import SimpleNamespace
from typing import Any, cast

import icontract
import pytest
from prefix_model.core.events import APPEND, KNOWN_TYPES, REQUEST_HEADER
from prefix_model.core.headers import CHANGE, RESUME, fold_request_header, header_to_json
from prefix_model.core.json_values import freeze
from prefix_model.core.log import Log, seed_log
from prefix_model.core.requests import boundary_log
from prefix_model.examples.streams import text_stream
from prefix_model.loop.actions import Action, BeginStep, Compose, Dispatch, ForkDrive, MountCompaction, PostStep, PreStep, Register, Reply, SendPrompt
from prefix_model.loop.compaction import CompactPolicy
from prefix_model.loop import properties, world_fold
from prefix_model.loop.properties import PROPERTIES, Check, Violation, check_all
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.transitions import run
from prefix_model.loop.variants import VARIANTS, WITNESS
from prefix_model.loop.world import Mark, SentRequest, World

from tests.loop_machine import LoopMachine, refold_afresh
from tests.loop_scripts import LONG_PROMPT, msg, msgs, play, prepend, start, tool, turn

CHECKS: dict[str, Check] = dict(PROPERTIES)


@cache
def base() -> World:
    """A harness run that reaches every situation the properties read."""
    script: tuple[Action, ...] = (
        Register(prepend("a", "<A>")),
        Register(prepend("b", "<B>", agent="main")),
        start(system="sys", tools=(tool("echo"),)),
        *turn(0, LONG_PROMPT, Reply(0, tool_calls=(("c1", "echo", "{}"),)), "done", compose=True),
        SendPrompt(0, "again"), BeginStep(0), PreStep(0, compact=(0, 2)), Dispatch(0), Reply(0, text="ok"), PostStep(0),
        ForkDrive("s1", "s2", None, "main"),
        *turn(1, "branch", compose=True),
    )  # fmt: skip
    return play(script)


# --- Edits that each break one property ---


def _log(world: World, session_id: str = "s1") -> Log:
    return world.session(session_id).log


def _with_log(world: World, log: Log, session_id: str = "s1") -> World:
    return world.with_session(replace(world.session(session_id), log=log))


def _rewrite_header(world: World, data: dict[str, object]) -> World:
    """Return ``world`` with s1's first ``request/header`` carrying ``data`` instead."""
    events = _log(world).events
    first = next(e.seq for e in events if e.type == REQUEST_HEADER)
    seeded = seed_log(tuple(replace(e, data=freeze(data)) if e.seq == first else e for e in events))
    assert isinstance(seeded, Log)
    return _with_log(world, seeded)


def _with_request(world: World, index: int, change: Callable[[SentRequest], SentRequest]) -> World:
    return replace(world, requests=tuple(change(r) if k == index else r for k, r in enumerate(world.requests)))


def _with_marks(world: World, change: Callable[[tuple[Mark, ...]], tuple[Mark, ...]]) -> World:
    return replace(world, trace=change(world.trace))


def _swap(trace: tuple[Mark, ...], a: str, b: str) -> tuple[Mark, ...]:
    """Swap the first ``a`` and ``b`` marks of instance 0 (their kinds, keeping positions)."""
    ia = next(k for k, m in enumerate(trace) if m.instance_id == 0 and m.kind == a)
    ib = next(k for k, m in enumerate(trace) if m.instance_id == 0 and m.kind == b)
    out = list(trace)
    out[ia], out[ib] = trace[ib], trace[ia]
    return tuple(out)


def _drop_first(trace: tuple[Mark, ...], instance: int, kind: str) -> tuple[Mark, ...]:
    index = next(k for k, m in enumerate(trace) if m.instance_id == instance and m.kind == kind)
    return trace[:index] + trace[index + 1 :]


def _map_marks(trace: tuple[Mark, ...], instance: int, kind: str, change: Callable[[Mark], Mark], first_only: bool = True) -> tuple[Mark, ...]:
    out, done = [], False
    for m in trace:
        if m.instance_id == instance and m.kind == kind and not (first_only and done):
            out.append(change(m))
            done = True
        else:
            out.append(m)
    return tuple(out)


def prefix_written_as_history(world: World) -> World:
    log = _log(world).append("user/message", {"content": [{"type": "text", "text": "<A>"}], "source": {"kind": "user"}}, surface_op=APPEND)
    return _with_log(world, log)


def system_differs_on_the_wire(world: World) -> World:
    return _with_request(world, 0, lambda r: replace(r, request=replace(r.request, header=replace(r.request.header, system="other"))))


def prefix_missing_on_the_wire(world: World) -> World:
    return _with_request(world, 0, lambda r: replace(r, request=replace(r.request, messages=r.request.messages[2:])))


def effort_differs_on_the_wire(world: World) -> World:
    def change(r: SentRequest) -> SentRequest:
        config = replace(r.request.header.config, reasoning_effort="max")
        return replace(r, request=replace(r.request, header=replace(r.request.header, config=config)))

    return _with_request(world, 0, change)


def second_request_drops_history(world: World) -> World:
    return _with_request(world, 1, lambda r: replace(r, request=replace(r.request, messages=r.request.messages[:2] + r.request.messages[3:])))


def composed_twice(world: World) -> World:
    return _with_marks(world, lambda t: t + (Mark(0, "composed", len(_log(world).events), world.instance(0).prefix, 2),))


def cached_prefix_changed(world: World) -> World:
    return world.with_instance(replace(world.instance(0), prefix=msgs("<other>")))


def snapshot_without_the_prefix(world: World) -> World:
    header = fold_request_header(_log(world).events[:4])
    assert header is not None
    return _rewrite_header(world, {"header": header_to_json(replace(header, message_prefix=None)), "reason": "initial"})


def pre_step_before_composition(world: World) -> World:
    return _with_marks(world, lambda t: _swap(t, "composed", "pre-step"))


def dispatch_without_record(world: World) -> World:
    return _with_marks(world, lambda t: _drop_first(t, 0, "record"))


def boundary_not_before_step_start(world: World) -> World:
    return _with_marks(world, lambda t: _map_marks(t, 0, "boundary", lambda m: replace(m, at=m.at - 1)))


def interrupted_composition_cached(world: World) -> World:
    return _with_marks(world, lambda t: t + (Mark(0, "compose-interrupted", len(_log(world).events), None, 3),))


def child_anchor_not_resume(world: World) -> World:
    return _with_marks(world, lambda t: _map_marks(t, 1, "record", lambda m: replace(m, value=CHANGE)))


def child_sent_without_composing(world: World) -> World:
    return _with_marks(world, lambda t: tuple(m for m in t if not (m.instance_id == 1 and m.kind in ("composed", "waterfall"))))


def empty_prefix_written(world: World) -> World:
    header = {"config": {"provider": "mock", "model": "mock-model"}, "system": "sys", "messagePrefix": []}
    return _with_log(world, _log(world).append("request/header", {"header": header, "reason": CHANGE}))


def another_prefix_sent(world: World) -> World:
    return _with_request(world, 0, lambda r: replace(r, request=replace(r.request, messages=(msg("<Z>"),) + r.request.messages[1:])))


def oracle_disagrees(world: World) -> World:
    # The listeners' recorded calls in the other order: folded, they give <B> then <A>, not the <A>, <B> composed.
    return _with_marks(world, lambda t: _map_marks(t, 0, "waterfall", lambda m: replace(m, value=tuple(reversed(m.value)))))  # type: ignore[arg-type]


def _appended(world: World, type: str, data: dict[str, object], op: object = None, session_id: str = "s1") -> World:
    return _with_log(world, _log(world, session_id).append(type, data, surface_op=op), session_id)  # type: ignore[arg-type]


def _said(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def prefix_in_a_reminder(world: World) -> World:
    return _appended(world, "user/message", _said("<system-reminder>\n<A>\n<B>\n</system-reminder>"), APPEND)


def prefix_split_across_messages(world: World) -> World:
    # "<A>" cut in two, each half its own message: neither message holds it, the history does.
    return _appended(_appended(world, "user/message", _said("<"), APPEND), "user/message", _said("A>"), APPEND)


def prefix_in_an_assistant_reply(world: World) -> World:
    data = {"turn": 3, "step": 1, "content": [{"type": "reasoning", "text": "recall: <B>"}], "provenance": {"provider": "mock", "model": "mock-model"}}
    return _appended(world, "assistant/message", data, APPEND)


def composition_wrote_a_marker(world: World) -> World:
    # The caching seen one event later: the event after the composition is then one it appended (a durable trace).
    return _with_marks(world, lambda t: _map_marks(t, 0, "cached", lambda m: replace(m, at=m.at + 1)))


def prefix_in_a_session_event(world: World) -> World:
    return _appended(world, "session/prefix", {"opener": [{"role": "user", "note": "<A>"}]})


def prefix_in_a_message_meta(world: World) -> World:
    return _appended(world, "user/message", {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}, "meta": {"seen": "< A >"}}, APPEND)


def prefix_in_the_system_prompt(world: World) -> World:
    header = fold_request_header(_log(world).events)
    assert header is not None
    return _appended(world, "request/header", {"header": header_to_json(replace(header, system="sys <B>")), "reason": CHANGE})


def stale_prefix_sent(world: World) -> World:
    # The fork's instance sends (and logs) the prefix as composed, but its own composition was another.
    return _with_marks(world, lambda t: _map_marks(t, 1, "composed", lambda m: replace(m, value=msgs("<A2>", "<B>"))))


def empty_composition_but_a_logged_prefix_sent(world: World) -> World:
    return _with_marks(world, lambda t: _map_marks(t, 1, "composed", lambda m: replace(m, value=())))


def header_inside_compaction(world: World) -> World:
    header = fold_request_header(_log(world).events)
    assert header is not None
    log = _log(world).append("compact/start", {"turn": 3}).append("request/header", {"header": header_to_json(header), "reason": CHANGE})
    return _with_log(world, log)


def child_seed_differs(world: World) -> World:
    child = world.session("s2")
    assert child.lineage is not None
    return world.with_session(replace(child, lineage=replace(child.lineage, seed_length=len(child.log.events))))


def pressure_off_by_one(world: World) -> World:
    return _with_marks(world, lambda t: _map_marks(t, 0, "measured", lambda m: replace(m, value=int(str(m.value)) + 1)))


def identical_change_snapshot(world: World) -> World:
    header = fold_request_header(_log(world).events)
    assert header is not None
    return _with_log(world, _log(world).append("request/header", {"header": header_to_json(header), "reason": CHANGE}))


BREAKS = [
    pytest.param("PFX-1", prefix_written_as_history, marks=pytest.mark.spec("PFX-1")),
    pytest.param("PFX-1", prefix_in_a_reminder, marks=pytest.mark.spec("PFX-1")),
    pytest.param("PFX-1", prefix_split_across_messages, marks=pytest.mark.spec("PFX-1")),
    pytest.param("PFX-1", prefix_in_an_assistant_reply, marks=pytest.mark.spec("PFX-1")),
    pytest.param("PFX-1", composition_wrote_a_marker, marks=pytest.mark.spec("PFX-1")),
    pytest.param("PFX-11", prefix_in_a_session_event, marks=pytest.mark.spec("PFX-11")),
    pytest.param("PFX-11", prefix_in_a_message_meta, marks=pytest.mark.spec("PFX-11")),
    pytest.param("PFX-11", prefix_in_the_system_prompt, marks=pytest.mark.spec("PFX-11")),
    pytest.param("REC-1", system_differs_on_the_wire, marks=pytest.mark.spec("REC-1")),
    pytest.param("REC-1", prefix_missing_on_the_wire, marks=pytest.mark.spec("REC-1")),
    pytest.param("REC-2", effort_differs_on_the_wire, marks=pytest.mark.spec("REC-2")),
    pytest.param("REC-3", second_request_drops_history, marks=pytest.mark.spec("REC-3")),
    pytest.param("PFX-2", composed_twice, marks=pytest.mark.spec("PFX-2")),
    pytest.param("PFX-2", cached_prefix_changed, marks=pytest.mark.spec("PFX-2")),
    pytest.param("PFX-3", snapshot_without_the_prefix, marks=pytest.mark.spec("PFX-3")),
    pytest.param("LOOP-3", pre_step_before_composition, marks=pytest.mark.spec("LOOP-3")),
    pytest.param("LOOP-3", dispatch_without_record, marks=pytest.mark.spec("LOOP-3")),
    pytest.param("LOOP-3", boundary_not_before_step_start, marks=pytest.mark.spec("LOOP-3")),
    pytest.param("PFX-4", interrupted_composition_cached, marks=pytest.mark.spec("PFX-4")),
    pytest.param("PFX-5", child_anchor_not_resume, marks=pytest.mark.spec("PFX-5")),
    pytest.param("PFX-5", child_sent_without_composing, marks=pytest.mark.spec("PFX-5")),
    pytest.param("PFX-6", empty_prefix_written, marks=pytest.mark.spec("PFX-6")),
    pytest.param("PFX-7", another_prefix_sent, marks=pytest.mark.spec("PFX-7")),
    pytest.param("PFX-12", stale_prefix_sent, marks=pytest.mark.spec("PFX-12")),
    pytest.param("PFX-12", empty_composition_but_a_logged_prefix_sent, marks=pytest.mark.spec("PFX-12")),
    pytest.param("PFX-8", oracle_disagrees, marks=pytest.mark.spec("PFX-8")),
    pytest.param("CMP-1", header_inside_compaction, marks=pytest.mark.spec("CMP-1")),
    pytest.param("FORK-8", child_seed_differs, marks=pytest.mark.spec("FORK-8")),
    pytest.param("TOK-1", pressure_off_by_one, marks=pytest.mark.spec("TOK-1")),
    pytest.param("HDR-15", identical_change_snapshot, marks=pytest.mark.spec("HDR-15")),
]


def _rules(world: World, rule: str) -> set[str]:
    return {v.rule for v in CHECKS[rule](world)}


@pytest.mark.spec("PFX-1", "PFX-11", "REC-1", "REC-2", "REC-3", "PFX-2", "PFX-3", "LOOP-3", "PFX-4", "PFX-5", "PFX-6", "PFX-7", "PFX-12", "PFX-8", "CMP-1", "FORK-8", "TOK-1", "HDR-15")
def test_every_property_holds_on_a_clean_harness_run_and_on_the_empty_world() -> None:
    world = base()
    assert [r.turn for r in world.requests if r.loop_request] == [1, 1, 2, 3]  # the situations are reached
    assert any(not r.loop_request for r in world.requests) and world.session("s2").lineage is not None
    for rule, check in PROPERTIES:
        assert check(world) == (), rule
        assert check(World()) == (), rule
    assert check_all(world) == ()


@pytest.mark.parametrize(("rule", "edit"), BREAKS)
def test_a_world_breaking_one_property_is_rejected_by_that_property(rule: str, edit: Callable[[World], World]) -> None:
    broken = edit(base())
    assert _rules(broken, rule) == {rule}
    assert rule in {v.rule for v in check_all(broken)}


@pytest.mark.spec("PFX-1", "PFX-11", "REC-1", "REC-2", "REC-3", "PFX-2", "PFX-3", "LOOP-3", "PFX-4", "PFX-5", "PFX-6", "PFX-7", "PFX-12", "PFX-8", "CMP-1", "FORK-8", "TOK-1", "HDR-15")
def test_every_property_has_a_world_that_breaks_it() -> None:
    broken = {p.values[0] for p in BREAKS}
    assert broken == set(CHECKS) and len(CHECKS) == len(PROPERTIES) == 18


@pytest.mark.spec("REC-1", "REC-2")
def test_the_full_reconstruction_is_stronger_than_the_companion() -> None:
    # The companion (like L/invariant.ts) does not compare reasoningEffort; the full property does.
    broken = effort_differs_on_the_wire(base())
    assert CHECKS["REC-1"](broken) == () and _rules(broken, "REC-2") == {"REC-2"}


@pytest.mark.spec("PFX-1")
def test_a_prefix_message_composed_for_another_session_is_no_leak_in_this_one() -> None:
    world = base()
    forked = next(i.id for i in world.instances if i.session_id == "s2")
    only_s2 = msg("<composed for s2 only>")
    traced = _with_marks(world, lambda t: _map_marks(t, forked, "composed", lambda m: replace(m, value=(only_s2,))))
    said = _log(traced).append("user/message", {"content": [{"type": "text", "text": "<composed for s2 only>"}], "source": {"kind": "user"}}, surface_op=APPEND)
    in_s1 = _with_log(traced, said)
    assert CHECKS["PFX-1"](in_s1) == ()  # s1's drivers never composed it: a user may say what another session's prefix says
    mine = _with_marks(in_s1, lambda t: _map_marks(t, 0, "composed", lambda m: replace(m, value=(*m.value, only_s2))))  # type: ignore[misc]
    [violation] = CHECKS["PFX-1"](mine)
    assert str(violation) == f"PFX-1: {violation.detail}" and violation.detail == "session s1: composed text in history: <composedfors2only>"


def recached_differently(world: World) -> World:
    return _with_marks(world, lambda t: t + (Mark(0, "cached", len(_log(world).events), msgs("<other>"), 3),))


def first_record_not_logged(world: World) -> World:
    return _with_marks(world, lambda t: _map_marks(t, 1, "record", lambda m: replace(m, value=None)))


@pytest.mark.spec("LOOP-3", "PFX-4", "PFX-8", "PFX-2", "PFX-5")
@pytest.mark.parametrize(
    ("rule", "edit", "detail"),
    [
        ("LOOP-3", pre_step_before_composition, "instance 0: pre-step ran before the prefix was composed"),
        ("PFX-4", interrupted_composition_cached, "instance 0 cached an interrupted composition"),
        ("PFX-8", oracle_disagrees, "instance 0: composition is not registration order"),
        ("PFX-2", cached_prefix_changed, "instance 0: the cached prefix changed after composition"),
        ("PFX-2", recached_differently, "instance 0: the cached prefix changed after composition"),
        ("PFX-5", child_anchor_not_resume, "instance 1: first record wrote 'change', not an anchor 'resume'"),
        ("PFX-5", first_record_not_logged, "instance 1: first record wrote None, not an anchor 'resume'"),
    ],
)
def test_a_violation_names_the_instance_that_broke_the_rule_and_only_it(rule: str, edit: Callable[[World], World], detail: str) -> None:
    # Each edit breaks instance 0's (or the fork's instance 1's) marks alone: judged against another
    # instance's marks, the property would name the wrong instance or none.
    assert [v.detail for v in CHECKS[rule](edit(base()))] == [detail]


# --- PFX-8 and TOK-1 judge the loop against oracles of their own: a bug inside the function under test is seen ---


def _base_script() -> tuple[Action, ...]:
    return (
        Register(prepend("a", "<A>")),
        Register(prepend("b", "<B>", agent="main")),
        start(system="sys", tools=(tool("echo"),)),
        *turn(0, LONG_PROMPT, Reply(0, tool_calls=(("c1", "echo", "{}"),)), "done", compose=True),
    )


@pytest.mark.spec("TOK-1")
def test_a_meter_whose_estimate_forgets_the_prefix_is_caught_though_the_loop_prices_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefix_model.loop import meter, transitions

    assert not hasattr(properties, "measure") and not hasattr(properties, "estimate_header")  # the property does not ask the meter
    assert CHECKS["TOK-1"](play(_base_script())) == ()

    measure = meter.measure

    def misread(log: Log, override: Any = None) -> meter.Measurement:  # the prefix left out of the header's price
        header = fold_request_header(log.events)
        return measure(log, None if header is None else replace(header, message_prefix=None))

    for module in (meter, transitions):  # the meter's bug, wherever the meter is called from
        monkeypatch.setattr(module, "measure", misread)
    assert _rules(play(_base_script()), "TOK-1") == {"TOK-1"}


@pytest.mark.spec("PFX-8")
def test_a_waterfall_that_prepends_an_appending_listener_is_caught_though_the_loop_composes_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefix_model.loop import transitions, waterfall
    from prefix_model.loop.world import Append, Listener, Prepend

    assert not hasattr(properties, "compose")  # the property does not ask the waterfall
    script = (Register(Listener("a", None, (Append(msgs("<A>")),))), *_base_script()[1:])
    right = play(script)
    assert [m.value for m in right.trace if m.kind == "composed"] == [msgs("<B>", "<A>")] and CHECKS["PFX-8"](right) == ()

    compose = waterfall.compose

    def misplaced(listeners: tuple[Listener, ...], agent: str, disposed: bool = False) -> waterfall.Composition:  # every contribution prepended
        return compose(tuple(replace(l, script=tuple(Prepend(c.messages) if isinstance(c, Append) else c for c in l.script)) for l in listeners), agent, disposed)

    for module in (waterfall, transitions):  # the waterfall's bug, wherever it is called from
        monkeypatch.setattr(module, "compose", misplaced)
    assert _rules(play(script), "PFX-8") == {"PFX-8"}


@pytest.mark.spec("REC-1")
def test_a_fold_finding_names_the_log_line_of_its_step_as_a_file_of_the_log_would_hold_it() -> None:
    [violation] = CHECKS["REC-1"](prefix_missing_on_the_wire(base()))
    step_start = next(e.seq for e in _log(base()).events if e.type == "step/start")
    assert f"turn 1 step 1: log line {step_start + 1}, seq {step_start} |" in violation.detail  # line n holds seq n - 1


@pytest.mark.spec("REC-1", "REC-2", "REC-3", "PFX-6", "CMP-1", "HDR-15")
def test_the_fold_properties_are_named_as_the_proofs_list_them() -> None:
    assert [CHECKS[rule].__name__ for rule in ("REC-1", "REC-2", "REC-3", "PFX-6", "CMP-1", "HDR-15")] == ["rec_1", "rec_2", "rec_3", "pfx_6", "cmp_1", "hdr_15"]


@pytest.mark.spec("TOK-1", "TOK-3")
def test_pressure_under_a_usage_anchor_is_the_providers_count_not_the_estimate() -> None:
    usage = Reply(0, stream=text_stream("ok", usage={"inputTokens": 5000, "outputTokens": 10}))
    world = play((start(), MountCompaction(CompactPolicy(context_window=100_000)), SendPrompt(0, "hello"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), usage, PostStep(0)))
    [measured] = [m for m in world.trace if m.kind == "measured"]
    assert measured.value == 5010  # the usage anchor, no surface since: far from the header's and the surface's estimate
    assert CHECKS["TOK-1"](world) == ()
    assert _rules(pressure_off_by_one(world), "TOK-1") == {"TOK-1"}


@pytest.mark.spec("PFX-5", "HDR-9")
def test_the_anchor_check_reads_the_log_not_the_instance_kind() -> None:
    world = base()
    assert [m.value for m in world.trace if m.instance_id == 1 and m.kind == "record"][0] == RESUME
    assert CHECKS["PFX-5"](child_anchor_not_resume(world))[0].rule == "PFX-5"


# --- each property's own contracts: they can fail (a broken property under the real one's contracts) ---


def _broken(check: Check, rule: str) -> Check:
    """Return a property that always reports ``rule``, under the contracts of ``check``."""
    from proofs.bugs_detected import broken_twin, under_contracts_of

    @under_contracts_of(check)
    def always(world: World) -> tuple[Violation, ...]:
        return (Violation(rule, "planted"),)

    return always


@pytest.mark.spec("PFX-1", "PFX-11", "REC-1", "REC-2", "PFX-2", "PFX-3", "LOOP-3", "PFX-4", "PFX-5", "PFX-6", "PFX-7", "PFX-12", "PFX-8", "CMP-1", "FORK-8", "TOK-1", "REC-3", "HDR-15")
@pytest.mark.parametrize(("rule", "check"), PROPERTIES, ids=[rule for rule, _ in PROPERTIES])
def test_a_property_that_names_another_rule_breaks_its_contract(rule: str, check: Check) -> None:
    world = _subjects()
    assert check(world) == ()  # the real one holds here, and its contracts with it
    with pytest.raises(icontract.ViolationError, match=f"{rule}: every violation the property reports names {rule}"):
        _broken(check, "XYZ-0")(world)
    assert _broken(check, rule)(world) == (Violation(rule, "planted"),)  # the world has what the property judges


@pytest.mark.spec("PFX-1", "PFX-11", "REC-1", "REC-2", "PFX-2", "PFX-3", "LOOP-3", "PFX-4", "PFX-5", "PFX-6", "PFX-7", "PFX-12", "PFX-8", "CMP-1", "FORK-8", "TOK-1", "REC-3", "HDR-15")
@pytest.mark.parametrize(("rule", "check"), PROPERTIES, ids=[rule for rule, _ in PROPERTIES])
def test_a_property_broken_where_it_has_nothing_to_judge_breaks_its_contract(rule: str, check: Check) -> None:
    # The empty world, and a turn just opened: an instance, its 'created' mark and two events, none a
    # subject of any property (no composition, record, request, snapshot, fork or measurement yet).
    opened = play((start(), SendPrompt(0, "hi")))
    assert [m.kind for m in opened.trace] == ["created"] and len(_log(opened).events) == 2 and opened.requests == ()
    for world in (World(), opened):
        with pytest.raises(icontract.ViolationError, match=f"{rule}: .* only where "):
            _broken(check, rule)(world)


@pytest.mark.spec("VAR-1")
def test_check_all_reports_the_properties_in_their_order() -> None:
    from proofs.bugs_detected import broken_twin, under_contracts_of

    @under_contracts_of(check_all)
    def reversed_order(world: World) -> tuple[Violation, ...]:
        return (Violation("HDR-15", "planted"), Violation("PFX-1", "planted"))

    @under_contracts_of(check_all)
    def unknown_rule(world: World) -> tuple[Violation, ...]:
        return (Violation("XYZ-0", "planted"),)

    for broken in (reversed_order, unknown_rule):
        with pytest.raises(icontract.ViolationError, match="VAR-1: every violation is one of a property of PROPERTIES"):
            broken(World())


@cache
def _subjects() -> World:
    """A world holding every property's subject: compositions, records, an interrupted composition, a fork, a measurement."""
    from prefix_model.loop.semantics import HARNESS
    from prefix_model.loop.variants import run_witness

    world = run_witness(HARNESS)
    kinds = {m.kind for m in world.trace}
    assert {"composed", "record", "pre-step", "dispatch", "boundary", "compose-interrupted", "waterfall", "measured"} <= kinds
    assert any(s.lineage is not None for s in world.sessions) and any(r.loop_request for r in world.requests)
    return world


# --- The fold goes on from world to world (world_fold.session_fold): what it finds is what one pass finds ---


def _worlds(semantics: Semantics) -> Iterator[World]:
    """Every world of the witness script under ``semantics``, in turn (an action a variant disables is skipped)."""
    world = World()
    for action in WITNESS:
        world = run((action,), semantics, world)
        yield world


@pytest.mark.spec("REC-1", "REC-2", "REC-3", "PFX-6", "CMP-1", "HDR-15")
def test_the_fold_resumed_from_world_to_world_finds_what_one_pass_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    went_on: list[bool] = []
    resumed = world_fold._resumed

    def counted(*args: Any) -> Any:
        found = resumed(*args)
        went_on.append(found is not None)
        return found

    monkeypatch.setattr(world_fold, "_resumed", counted)
    worlds_with_findings = 0
    # The harness, and variants whose runs the fold finds fault with from their first request and at a header (the machine's
    # teardown compares both ways at the end of every example it runs)
    faulty = ("prefix-after-history", "change-always")
    for semantics in (HARNESS, *(v.semantics for v in VARIANTS if v.name in faulty)):
        worlds = list(_worlds(semantics))
        for n, world in enumerate(worlds, 1):
            for session in world.sessions:
                found = world_fold.session_fold(world, session)  # each world in turn, as the machine judges them
                if n % 5 == 0 or n == len(worlds):  # one pass costs the whole log: compared at every fifth world and the last
                    assert found == world_fold.session_fold(world, session, resume=False), (semantics, n, session.id)
                    worlds_with_findings += bool(found)
    # Not vacuous: the faulty variants' runs give findings, and most folds went on from the world before.
    assert worlds_with_findings > 10 and went_on.count(True) > 0.8 * len(went_on), (worlds_with_findings, went_on.count(True), len(went_on))


@pytest.mark.spec("REC-1")
def test_a_fold_that_forgets_what_it_found_when_it_goes_on_fails_the_machines_teardown(monkeypatch: pytest.MonkeyPatch) -> None:
    resumed = world_fold._resumed

    def forgetful(*args: Any) -> Any:
        found = resumed(*args)
        if found is not None:
            found[0].findings.clear()
        return found

    monkeypatch.setattr(world_fold, "_resumed", forgetful)
    variant = next(v for v in VARIANTS if v.name == "prefix-after-history")
    for world in _worlds(variant.semantics):  # as the machine judges each world in turn
        for session in world.sessions:
            world_fold.session_fold(world, session)
    with pytest.raises(AssertionError, match="the fold resumed from world to world found"):
        refold_afresh(cast(LoopMachine, SimpleNamespace(world=world, violated=False)))


# --- §11's split: what an implementation must show, and how; what is model-internal ---


def evidence_rows(spec: str) -> dict[str, tuple[str, str]]:
    """Return §11's table: per property ID, (how an implementation shows it, its model-internal part)."""
    chapter = spec[spec.index("\n## 11. ") : spec.index("\n### 11.1 ")]
    rows = re.findall(r"^\| ([A-Z]+-\d+)(?: \(§[\d.]+\))? \| ([^|]+) \| ([^|]+) \|$", chapter, re.MULTILINE)
    assert len(rows) == len({r[0] for r in rows}), "one row per property"
    return {rule: (shown.strip(), internal.strip()) for rule, shown, internal in rows}


def subsection_ids(spec: str, heading: str) -> set[str]:
    start = spec.index(f"\n### {heading}")
    end = min(i for i in (spec.find("\n### ", start + 1), spec.find("\n## ", start + 1)) if i != -1)
    return set(re.findall(r"^- \*\*([A-Z]+-\d+)\*\* —", spec[start:end], re.MULTILINE))


@pytest.mark.spec("VAR-1", "VEC-3")
def test_every_property_says_how_an_implementation_shows_it_and_what_is_model_internal() -> None:
    from pathlib import Path

    from prefix_model.vectors.adopted import adopted_scenarios
    from prefix_model.vectors.scenarios import scenarios

    spec = (Path(__file__).resolve().parents[2] / "spec" / "SPEC.md").read_text(encoding="utf-8")
    rows = evidence_rows(spec)
    shown, internal = subsection_ids(spec, "11.1 "), subsection_ids(spec, "11.2 ")
    checked = {rule for rule, _ in PROPERTIES}
    assert sorted(rows) == sorted(checked | shown | internal), "a row for every property checked and every requirement of §11"
    assert not shown & internal and len(shown) >= 10 and internal
    for rule, (how, hidden) in rows.items():
        assert set(re.findall(r"\b(log|capture|vectors)\b", how)), f"{rule}: shown by neither log, capture nor vectors"
        assert rule not in internal or hidden != "—", f"{rule} is model-internal but names no internal part"
    # The scenarios it names (`id`, or `prefix*` for several) are vectors that exist; an event type is no scenario.
    named = {s for how, _ in rows.values() for s in re.findall(r"`([a-z]+/[a-z-]*\*?)`", how) if s not in KNOWN_TYPES}
    ids = {s.id for s in (*scenarios(), *adopted_scenarios())}  # the hand-written scenarios and the adopted scripts
    missing = {n for n in named if not (n in ids or (n.endswith("*") and any(i.startswith(n[:-1]) for i in ids)))}
    assert len(named) >= 8 and missing == set(), missing
    # The check can fail: a property left out of the table.
    assert sorted(evidence_rows(spec.replace("| HDR-15 |", "| HDR 15 |"))) != sorted(checked | shown | internal)
