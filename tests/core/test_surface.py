"""Spec §3 — the surface fold: append and positional replace (SURF-1..SURF-11).

A surface is the ordered seqs of the current history nodes plus ``replaceGeneration``. The cases
follow the behaviours the harness pins in ST/surface.spec.ts (provenance validation, tool/result
rewrites, incremental fold = replay, nested positional replacement, replace semantics), written
afresh against the model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import icontract
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import ENABLED, RejectedError, Rejection
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_MESSAGE,
    STEERING_MESSAGE,
    SURFACE_TYPES,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    Event,
    Replace,
    is_surface_type,
)
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, freeze
from prefix_model.core.log import EMPTY_LOG, Log, seed_log
from prefix_model.core.surface import (
    EMPTY_SURFACE,
    Surface,
    apply_surface_event,
    check_provenance,
    check_surface_event,
    check_tool_result_rewrite,
    fold_surface,
    splice_nodes,
)
from prefix_model.formats.event_lines import parse_event

from proofs.bugs_detected import under_contracts_of
from tests.strategies import fewer_examples, log_only_events, logs, rejected_events

# --- Helpers -------------------------------------------------------------------------------------


def _user(text: str = "go") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def _assistant(text: str = "done") -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text else []
    return {"turn": 1, "step": 1, "content": content, "provenance": {"provider": "mock", "model": "m1"}}


def _tool_result(call_id: str = "c1", text: str = "pong", **extra: Any) -> dict[str, Any]:
    return {"turn": 1, "step": 1, "callId": call_id, "content": [{"type": "text", "text": text}], "isError": False, **extra}


_DATA: dict[str, dict[str, Any]] = {
    USER_MESSAGE: _user(),
    STEERING_MESSAGE: {**_user("steer"), "turn": 1},
    ASSISTANT_MESSAGE: _assistant(),
    TOOL_RESULT: _tool_result(),
}


def _messages(count: int) -> Log:
    """Return a log of ``count`` appended user messages: surface = (0, 1, ..., count - 1)."""
    log = EMPTY_LOG
    for index in range(count):
        log = log.append(USER_MESSAGE, _user(f"m{index}"), surface_op=APPEND)
    return log


def _replace(log: Log, start: int, end: int, sources: tuple[int, ...] | None = None, event_type: str = USER_MESSAGE, data: dict[str, Any] | None = None) -> Log:
    """Return ``log`` with a replacement of [start, end]; provenance defaults to the shadowed nodes."""
    if sources is None:
        i, j = log.surface.nodes.index(start), log.surface.nodes.index(end)
        sources = log.surface.nodes[i : j + 1]
    return log.append(event_type, data if data is not None else _user("summary"), surface_op=Replace(start, end), source_event_seqs=sources)


def _rule(log: Log, event_type: str, data: object, **kwargs: Any) -> str:
    """Return the rule ``log.append`` names when it rejects; fail if it accepts."""
    with pytest.raises(RejectedError) as raised:
        log.append(event_type, data, **kwargs)
    rejection = raised.value.rejection
    # SURF-10 (same failures for seed and fold): a seed of the same events names the same rule.
    event = Event(event_type, log.seq, kwargs.get("time", 0), freeze(data), kwargs.get("surface_op"), kwargs.get("source_event_seqs"))
    for replayed in (seed_log(log.events + (event,)), fold_surface(log.events + (event,))):
        assert isinstance(replayed, Rejection) and (replayed.rule, replayed.seq) == (rejection.rule, log.seq)
    return rejection.rule


# --- SURF-1: the empty surface --------------------------------------------------------------------


@pytest.mark.spec("SURF-1")
def test_empty_log_has_the_empty_surface() -> None:
    assert EMPTY_LOG.surface == EMPTY_SURFACE == Surface((), 0)
    assert fold_surface(()) == Surface((), 0)


@pytest.mark.spec("SURF-1", "DER-5")
@given(st.lists(log_only_events, max_size=8))
@fewer_examples(3)
def test_log_only_events_keep_the_surface_empty(pairs: list[tuple[str, Any]]) -> None:
    log = EMPTY_LOG
    for event_type, data in pairs:
        log = log.append(event_type, data)
    assert log.surface == Surface((), 0)
    assert fold_surface(log.events) == Surface((), 0)



@pytest.mark.spec("DER-5", "SURF-2")
@pytest.mark.parametrize("op", [APPEND, Replace(0, 0)], ids=["append", "replace"])
def test_a_log_only_event_carrying_a_surface_op_leaves_the_surface_unchanged(op: object) -> None:
    """The fold reads a surface op only on a surface-eligible type: on a log-only event it is no op at all."""
    surface = Surface((0,), 0)
    assert apply_surface_event(surface, Event("plugin/x", 1, 0, freeze({}), op)) == surface  # type: ignore[arg-type]

# --- SURF-2: append -------------------------------------------------------------------------------


@pytest.mark.spec("SURF-2")
def test_append_pushes_seqs_in_append_order_around_log_only_events() -> None:
    log = _messages(1).append(TOOL_CALL, {"turn": 1, "step": 1, "callId": "c1", "name": "echo", "arguments": "{}"})
    log = log.append(TOOL_RESULT, _tool_result(), surface_op=APPEND, source_event_seqs=(1,))
    log = log.append(ASSISTANT_MESSAGE, _assistant(""), surface_op=APPEND)
    log = log.append(STEERING_MESSAGE, _DATA[STEERING_MESSAGE], surface_op=APPEND)
    assert log.surface == Surface((0, 2, 3, 4), 0)


@pytest.mark.spec("SURF-2")
@given(logs(), st.sampled_from(SURFACE_TYPES))
@fewer_examples(3)
def test_append_adds_the_new_seq_as_the_last_node(log: Log, event_type: str) -> None:
    grown = log.append(event_type, _DATA[event_type], surface_op=APPEND)
    assert grown.surface == Surface(log.surface.nodes + (log.seq,), log.surface.replace_generation)


# --- SURF-3: the surfaceOp shape ------------------------------------------------------------------


@pytest.mark.spec("SURF-3")
@pytest.mark.parametrize("op", ["prepend", "", "Append", "replace"])
def test_invalid_surface_op_string(op: str) -> None:
    assert _rule(_messages(1), USER_MESSAGE, _user(), surface_op=op) == "SURF-3"


@pytest.mark.spec("SURF-3")
@pytest.mark.parametrize(
    ("start", "end"),
    [(-1, 0), (0, -1), (0, MAX_SAFE_INTEGER + 1), (True, 0)],
    ids=["negative-start", "negative-end", "unsafe-end", "bool-start"],
)
def test_invalid_replace_seqs(start: int, end: int) -> None:
    assert _rule(_messages(2), USER_MESSAGE, _user(), surface_op=Replace(start, end), source_event_seqs=(0, 1)) == "SURF-3"


@pytest.mark.spec("SURF-3")
@pytest.mark.parametrize(
    "op",
    [
        {"op": "replace", "start": 0},
        {"op": "replace", "start": 0, "end": 0, "extra": 1},
        {"op": "splice", "start": 0, "end": 0},
        {"op": "replace", "start": "0", "end": 0},
        {"op": "replace", "start": 0.5, "end": 0},
        {"op": "replace", "start": -1, "end": 0},
        5,
        None,
        ["replace", 0, 0],
    ],
    ids=["no-end", "extra-key", "wrong-op", "string-seq", "fractional-seq", "negative-seq", "number", "null", "array"],
)
def test_invalid_surface_op_in_a_read_envelope(op: object) -> None:
    line = freeze({"type": "user/message", "seq": 1, "time": 0, "data": _user(), "surfaceOp": op, "sourceEventSeqs": [0]})
    rejection = parse_event(line)
    assert isinstance(rejection, Rejection) and rejection.rule == "SURF-3"


@pytest.mark.spec("SURF-3", "SURF-7")
@pytest.mark.parametrize(
    ("member", "read", "held"),
    [
        ("surfaceOp", {"op": "replace", "start": -1, "end": 0}, {"surface_op": Replace(-1, 0), "source_event_seqs": (0,)}),
        ("surfaceOp", 5, {"surface_op": 5, "source_event_seqs": (0,)}),
        ("sourceEventSeqs", [0.5], {"surface_op": APPEND, "source_event_seqs": (0.5,)}),
        ("sourceEventSeqs", "0", {"surface_op": APPEND, "source_event_seqs": "0"}),
    ],
    ids=["replace-negative-start", "op-number", "fractional-source", "sources-string"],
)
def test_the_reader_and_the_surface_step_state_surface_op_and_provenance_shape_once(member: str, read: object, held: dict[str, Any]) -> None:
    """One statement of SURF-3 and SURF-7's shape: the reader's rejection of a member as read is the seed's of an event holding it."""
    fields = {"surfaceOp": "append", "sourceEventSeqs": [0]} | {member: read}
    rejection = parse_event(freeze({"type": "user/message", "seq": 1, "time": 0, "data": _user(), **fields}))
    event = Event(USER_MESSAGE, 1, 0, freeze(_user()), held["surface_op"], held["source_event_seqs"])
    seeded = seed_log(_messages(1).events + (event,))
    assert isinstance(rejection, Rejection) and isinstance(seeded, Rejection)
    assert (rejection.rule, rejection.reason) == (seeded.rule, seeded.reason)


@pytest.mark.spec("SURF-3")
def test_unknown_surface_op_string_read_from_a_line_is_rejected_by_the_seed() -> None:
    first = parse_event(freeze({"type": "user/message", "seq": 0, "time": 0, "data": _user(), "surfaceOp": "prepend"}))
    assert isinstance(first, Event)
    seeded = seed_log((first,))
    assert isinstance(seeded, Rejection) and seeded.rule == "SURF-3"


@pytest.mark.spec("SURF-3", "SURF-6")
def test_parse_event_reads_a_replace_op() -> None:
    line = freeze({"type": "user/message", "seq": 2, "time": 0, "data": _user(), "sourceEventSeqs": [0, 1], "surfaceOp": {"end": 1, "op": "replace", "start": 0}})
    event = parse_event(line)
    assert isinstance(event, Event) and event.surface_op == Replace(0, 1)
    seeded = seed_log(_messages(2).events + (event,))
    assert isinstance(seeded, Log) and seeded.surface == Surface((2,), 1)


# --- SURF-4 / SURF-5: what a replacement may name ----------------------------------------------------


@pytest.mark.spec("SURF-4")
def test_invalid_replace_of_seqs_that_are_not_current_nodes() -> None:
    log = _messages(3).append("plugin/x", {})  # seqs 0-2 on the surface, 3 log-only
    assert _rule(log, USER_MESSAGE, _user(), surface_op=Replace(3, 3), source_event_seqs=(3,)) == "SURF-4"  # log-only
    assert _rule(log, USER_MESSAGE, _user(), surface_op=Replace(9, 9), source_event_seqs=(0,)) == "SURF-4"  # never existed
    assert _rule(log, USER_MESSAGE, _user(), surface_op=Replace(0, 9), source_event_seqs=(0,)) == "SURF-4"  # end missing
    assert _rule(log, USER_MESSAGE, _user(), surface_op=Replace(9, 0), source_event_seqs=(0,)) == "SURF-4"  # start missing
    shadowed = _replace(log, 0, 1)  # seq 4 replaces 0 and 1
    assert _rule(shadowed, USER_MESSAGE, _user(), surface_op=Replace(1, 2), source_event_seqs=(1, 2)) == "SURF-4"
    assert _rule(shadowed, USER_MESSAGE, _user(), surface_op=Replace(4, 0), source_event_seqs=(0, 4)) == "SURF-4"
    assert _rule(EMPTY_LOG, USER_MESSAGE, _user(), surface_op=Replace(0, 0)) == "SURF-4"


@pytest.mark.spec("SURF-5")
def test_invalid_replace_with_start_after_end() -> None:
    log = _messages(3)
    assert _rule(log, USER_MESSAGE, _user(), surface_op=Replace(2, 0), source_event_seqs=(0, 1, 2)) == "SURF-5"
    assert _rule(log, USER_MESSAGE, _user(), surface_op=Replace(1, 0), source_event_seqs=(0, 1)) == "SURF-5"


# --- SURF-6: replace semantics ----------------------------------------------------------------------


@pytest.mark.spec("SURF-6")
@pytest.mark.parametrize(
    ("start", "end", "nodes"),
    [(0, 3, (4,)), (1, 2, (0, 4, 3)), (2, 2, (0, 1, 4, 3)), (0, 0, (4, 1, 2, 3)), (3, 3, (0, 1, 2, 4)), (1, 3, (0, 4))],
    ids=["whole", "middle", "single", "first", "last", "tail"],
)
def test_replace_swaps_the_inclusive_range_for_the_new_seq(start: int, end: int, nodes: tuple[int, ...]) -> None:
    log = _replace(_messages(4), start, end)
    assert log.surface == Surface(nodes, 1)
    assert fold_surface(log.events) == log.surface


@pytest.mark.spec("SURF-6")
@given(logs(), st.data())
@fewer_examples(3)
def test_replace_keeps_every_node_outside_the_range_in_order(log: Log, data: st.DataObject) -> None:
    nodes = log.surface.nodes
    if not nodes:
        log, nodes = _messages(1), (0,)
    i = data.draw(st.integers(0, len(nodes) - 1), label="i")
    j = data.draw(st.integers(i, len(nodes) - 1), label="j")
    replaced = _replace(log, nodes[i], nodes[j])
    assert replaced.surface.nodes == nodes[:i] + (log.seq,) + nodes[j + 1 :]
    assert replaced.surface.replace_generation == log.surface.replace_generation + 1
    kept = [n for n in replaced.surface.nodes if n != log.seq]
    assert kept == [n for n in nodes if n not in nodes[i : j + 1]]


@pytest.mark.spec("SURF-6")
@given(st.lists(st.integers(0, 99), min_size=1, max_size=12, unique=True), st.data())
def test_splice_nodes_collapses_the_range_to_one_node(nodes: list[int], data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(nodes) - 1))
    j = data.draw(st.integers(i, len(nodes) - 1))
    result = splice_nodes(tuple(nodes), i, j, 100)
    assert len(result) == len(nodes) - (j - i)
    assert result[i] == 100
    assert list(result[:i]) + list(result[i + 1 :]) == nodes[:i] + nodes[j + 1 :]



@pytest.mark.spec("SURF-6")
@pytest.mark.skipif(not ENABLED, reason="a contract's own check")
@pytest.mark.parametrize(
    ("wrong", "why"),
    [
        (lambda nodes, i, j, seq: nodes[:i] + (seq,) + tuple(reversed(nodes[j + 1 :])), "the nodes after the range reordered"),
        (lambda nodes, i, j, seq: tuple(reversed(nodes[:i])) + (seq,) + nodes[j + 1 :], "the nodes before the range reordered"),
    ],
    ids=["after", "before"],
)
def test_splice_nodes_contract_refuses_a_splice_that_reorders_either_side(wrong: Any, why: str) -> None:
    """Each side of the range is held to its order on its own: a splice keeping one side but not the other breaks SURF-6."""

    @under_contracts_of(splice_nodes)
    def spliced(nodes: tuple[int, ...], i: int, j: int, seq: int) -> tuple[int, ...]:
        result: tuple[int, ...] = wrong(nodes, i, j, seq)
        return result

    assert spliced((1, 2, 3), 1, 1, 9) == (1, 9, 3)  # one node each side: a reorder changes nothing
    with pytest.raises(icontract.ViolationError, match="SURF-6: every non-shadowed node keeps its order"):
        spliced((1, 2, 3, 4, 5, 6), 2, 3, 9)

@pytest.mark.spec("SURF-6")
def test_replace_generation_counts_every_committed_replacement() -> None:
    log = _messages(4)
    generations = []
    for start, end in [(0, 1), (2, 2), (4, 3)]:
        log = _replace(log, start, end)
        generations.append(log.surface.replace_generation)
    log = log.append(USER_MESSAGE, _user(), surface_op=APPEND).append("plugin/x", {})
    assert generations == [1, 2, 3]
    assert log.surface.replace_generation == 3


# --- SURF-7: provenance ------------------------------------------------------------------------------


@pytest.mark.spec("SURF-7")
@pytest.mark.parametrize("event_type", [USER_MESSAGE, STEERING_MESSAGE, TOOL_RESULT])
def test_invalid_empty_provenance_except_on_assistant_message(event_type: str) -> None:
    assert _rule(_messages(1), event_type, _DATA[event_type], surface_op=APPEND, source_event_seqs=()) == "SURF-7"


@pytest.mark.spec("SURF-7")
def test_assistant_message_accepts_empty_provenance() -> None:
    log = _messages(1).append(ASSISTANT_MESSAGE, _assistant(), surface_op=APPEND, source_event_seqs=())
    assert log.events[1].source_event_seqs == () and log.surface.nodes == (0, 1)


@pytest.mark.spec("SURF-7")
@pytest.mark.parametrize(
    "sources",
    [(-1,), (0, 0), (2,), (3,), (0, 2), (True,), (MAX_SAFE_INTEGER + 1,)],
    ids=["negative", "duplicate", "self", "forward", "self-among-earlier", "bool", "unsafe"],
)
@pytest.mark.parametrize("event_type", SURFACE_TYPES)
def test_invalid_provenance_seqs(event_type: str, sources: tuple[int, ...]) -> None:
    assert _rule(_messages(2), event_type, _DATA[event_type], surface_op=APPEND, source_event_seqs=sources) == "SURF-7"


@pytest.mark.spec("SURF-7")
def test_invalid_provenance_is_checked_before_coverage_on_a_replace() -> None:
    assert _rule(_messages(2), USER_MESSAGE, _user(), surface_op=Replace(0, 1), source_event_seqs=(0, 1, 1)) == "SURF-7"
    assert _rule(_messages(2), USER_MESSAGE, _user(), surface_op=Replace(0, 1), source_event_seqs=()) == "SURF-7"


@pytest.mark.spec("SURF-7")
@pytest.mark.parametrize("sources", ["0", {"0": 0}, [0.5], [-1], ["0"], [None]], ids=["string", "object", "fractional", "negative", "string-element", "null-element"])
def test_invalid_provenance_in_a_read_envelope(sources: object) -> None:
    line = freeze({"type": "user/message", "seq": 1, "time": 0, "data": _user(), "surfaceOp": "append", "sourceEventSeqs": sources})
    rejection = parse_event(line)
    assert isinstance(rejection, Rejection) and rejection.rule == "SURF-7"


@pytest.mark.spec("SURF-7")
def test_provenance_may_reference_any_earlier_event_in_any_order() -> None:
    log = _messages(2).append(TOOL_CALL, {"turn": 1, "step": 1, "callId": "c1", "name": "echo", "arguments": "{}"})
    log = log.append(TOOL_RESULT, _tool_result(), surface_op=APPEND, source_event_seqs=(2, 0))
    assert log.events[3].source_event_seqs == (2, 0)
    assert log.surface.nodes == (0, 1, 3)


# --- SURF-8: a replacement covers what it shadows ----------------------------------------------------


@pytest.mark.spec("SURF-8")
def test_invalid_replace_without_provenance() -> None:
    assert _rule(_messages(2), USER_MESSAGE, _user(), surface_op=Replace(0, 1)) == "SURF-8"
    assert _rule(_messages(2), ASSISTANT_MESSAGE, _assistant(), surface_op=Replace(0, 0)) == "SURF-8"


@pytest.mark.spec("SURF-8")
def test_invalid_replace_whose_provenance_misses_a_shadowed_node() -> None:
    assert _rule(_messages(3), USER_MESSAGE, _user(), surface_op=Replace(0, 2), source_event_seqs=(0, 2)) == "SURF-8"
    assert _rule(_messages(3), ASSISTANT_MESSAGE, _assistant(), surface_op=Replace(1, 1), source_event_seqs=()) == "SURF-8"


@pytest.mark.spec("SURF-8")
def test_replace_provenance_may_hold_more_than_the_shadowed_nodes() -> None:
    log = _messages(3).append("compact/start", {"turn": 1})
    log = _replace(log, 0, 1, sources=(3, 1, 0, 2))
    assert log.surface == Surface((4, 2), 1)


@pytest.mark.spec("SURF-7", "SURF-8")
def test_a_compaction_of_twenty_thousand_nodes_is_judged_node_by_node() -> None:
    """A large replacement's provenance: its sources in any order cover the nodes, and each node they miss is named, in surface order."""
    shadowed = tuple(range(1, 40_001, 2))  # 20,000 nodes: the odd seqs; the even ones are log-only
    covering = (40_001, 40_002, *reversed(shadowed), 40_000)  # compact/start, compact/summary, the nodes, one more earlier event

    def compaction(sources: tuple[int, ...] | None) -> Event:
        return Event(USER_MESSAGE, 40_003, 0, freeze(_user("summary")), Replace(1, 39_999), sources)

    assert check_provenance(compaction(covering), shadowed) is None
    dropped = shadowed[::1000]  # 20 of them, from the first to near the last
    kept = tuple(s for s in covering if s not in set(dropped))
    assert check_provenance(compaction(kept), shadowed) == Rejection("SURF-8", f"sourceEventSeqs must include every shadowed node; missing {list(dropped)}")
    assert check_provenance(compaction(kept), tuple(s for s in shadowed if s not in set(dropped))) is None
    found = check_provenance(compaction(None), shadowed)
    assert found is not None and found.rule == "SURF-8" and found.reason.endswith(f"missing {list(shadowed)}")
    repeated = check_provenance(compaction((*covering, shadowed[-1])), shadowed)
    assert repeated == Rejection("SURF-7", "sourceEventSeqs must not contain duplicates")


# --- SURF-9: tool/result rewrites ---------------------------------------------------------------------


def _tool_log() -> Log:
    """Return a log whose surface is user(0), tool/result(2, call c1), tool/result(4, call c2)."""
    log = _messages(1)
    for call_id in ("c1", "c2"):
        log = log.append(TOOL_CALL, {"turn": 1, "step": 1, "callId": call_id, "name": "echo", "arguments": "{}"})
        log = log.append(TOOL_RESULT, _tool_result(call_id, meta={"flag": True}), surface_op=APPEND, source_event_seqs=(log.seq - 1,))
    assert log.surface.nodes == (0, 2, 4)
    return log


@pytest.mark.spec("SURF-9")
def test_tool_result_rewrite_may_change_only_content() -> None:
    original = _tool_result("c1", meta={"flag": True})
    reordered = {key: original[key] for key in reversed(list(original))}
    reordered["content"] = [{"type": "text", "text": "[pruned]"}]
    log = _replace(_tool_log(), 2, 2, event_type=TOOL_RESULT, data=reordered)
    assert log.surface == Surface((0, 5, 4), 1)
    unchanged = _replace(_tool_log(), 4, 4, event_type=TOOL_RESULT, data=_tool_result("c2", meta={"flag": True}))
    assert unchanged.surface == Surface((0, 2, 5), 1)


@pytest.mark.spec("SURF-9")
@pytest.mark.parametrize(
    "data",
    [
        _tool_result("c9", meta={"flag": True}),
        {**_tool_result("c1", meta={"flag": True}), "isError": True},
        _tool_result("c1", meta={"flag": 1}),  # true is not 1 (JSON-5)
        _tool_result("c1"),
        _tool_result("c1", meta={"flag": True}, error={"name": "E", "code": "X"}),
        {**_tool_result("c1", meta={"flag": True}), "step": 2},
    ],
    ids=["callId", "isError", "meta-true-vs-1", "meta-dropped", "error-added", "step"],
)
def test_invalid_tool_result_rewrite_changing_more_than_content(data: dict[str, Any]) -> None:
    assert _rule(_tool_log(), TOOL_RESULT, data, surface_op=Replace(2, 2), source_event_seqs=(2,)) == "SURF-9"


@pytest.mark.spec("SURF-9")
def test_invalid_tool_result_rewrite_of_more_than_one_node() -> None:
    assert _rule(_tool_log(), TOOL_RESULT, _tool_result("c1", meta={"flag": True}), surface_op=Replace(2, 4), source_event_seqs=(2, 4)) == "SURF-9"


@pytest.mark.spec("SURF-9")
def test_invalid_tool_result_rewrite_of_a_non_tool_result() -> None:
    assert _rule(_tool_log(), TOOL_RESULT, _tool_result("c1"), surface_op=Replace(0, 0), source_event_seqs=(0,)) == "SURF-9"


@pytest.mark.spec("SURF-9", "SURF-6")
@pytest.mark.parametrize("event_type", [USER_MESSAGE, ASSISTANT_MESSAGE, STEERING_MESSAGE])
def test_other_types_may_replace_tool_results_and_ranges(event_type: str) -> None:
    log = _replace(_tool_log(), 2, 4, event_type=event_type, data=_DATA[event_type])
    assert log.surface == Surface((0, 5), 1)



def _tool_result_event(seq: int, data: object) -> Event:
    return Event(TOOL_RESULT, seq, 0, data, Replace(2, 2) if seq > 2 else APPEND, (2,) if seq > 2 else None)  # type: ignore[arg-type]


@pytest.mark.spec("SURF-9")
@pytest.mark.parametrize("original_data", [("not", "an object"), "text", None], ids=["array", "string", "null"])
def test_invalid_tool_result_rewrite_of_a_tool_result_whose_data_is_not_an_object(original_data: object) -> None:
    """A checker's index may hold events no append accepted: the rewrite rule refuses a non-object original, by SURF-9."""
    events = {2: _tool_result_event(2, original_data)}
    rewrite = _tool_result_event(5, freeze(_tool_result("c1")))
    assert check_tool_result_rewrite(rewrite, (2,), events) == Rejection("SURF-9", "tool/result data must be objects")
    both = {2: _tool_result_event(2, freeze(_tool_result("c1")))}
    assert check_tool_result_rewrite(_tool_result_event(5, original_data), (2,), both) == Rejection("SURF-9", "tool/result data must be objects")


@pytest.mark.spec("SURF-9", "JSON-1")
@pytest.mark.parametrize("value", [float("nan"), 2**60, object()], ids=["nan", "unsafe-int", "not-json"])
def test_invalid_tool_result_rewrite_of_a_tool_result_whose_data_is_not_json(value: object) -> None:
    """An original object holding a value that is no JSON value is refused by JSON-1, whatever the rewrite."""
    original = FrozenMap({**freeze(_tool_result("c1")), "meta": value})  # type: ignore[dict-item]
    events = {2: _tool_result_event(2, original)}
    rewrite = _tool_result_event(5, original)
    assert check_tool_result_rewrite(rewrite, (2,), events) == Rejection("JSON-1", "the rewritten tool/result's data is not a JSON value")


# --- SURF-10: the surface is a function of the events ----------------------------------------------------


@pytest.mark.spec("SURF-10")
@given(logs())
@fewer_examples(2)
def test_incremental_surface_equals_fold_surface_replay(log: Log) -> None:
    assert fold_surface(log.events) == log.surface
    surface = EMPTY_SURFACE
    for index, event in enumerate(log.events):
        assert check_surface_event(surface, event, log.events[:index]) is None
        surface = apply_surface_event(surface, event)
        assert fold_surface(log.events[: index + 1]) == surface
    assert surface == log.surface
    assert all(is_surface_type(log.events[n].type) for n in surface.nodes)
    assert len(set(surface.nodes)) == len(surface.nodes)


@pytest.mark.spec("SURF-10", "LOG-12")
@given(logs(max_events=12).flatmap(lambda log: st.tuples(st.just(log), rejected_events(log))))
@fewer_examples(3)
def test_fold_surface_and_seed_log_reject_the_same_event_with_the_same_rule(case: tuple[Log, tuple[Event, str]]) -> None:
    log, (event, rule) = case
    events = log.events + (event,)
    folded, seeded = fold_surface(events), seed_log(events)
    assert isinstance(folded, Rejection) and isinstance(seeded, Rejection)
    assert (folded.rule, folded.seq) == (seeded.rule, seeded.seq) == (rule, log.seq)


@pytest.mark.spec("SURF-10", "SURF-6")
def test_surface_retains_no_replacement_history() -> None:
    log = _replace(_replace(_messages(3), 0, 1), 3, 2)
    assert [f.name for f in dataclasses.fields(Surface)] == ["nodes", "replace_generation"]
    assert log.surface == Surface((4,), 2)
    assert seed_log(log.events) == log and fold_surface(log.events) == Surface((4,), 2)


# --- SURF-11: replacement is positional -----------------------------------------------------------------


@pytest.mark.spec("SURF-11")
def test_nested_replace_with_start_seq_greater_than_end_seq() -> None:
    log = _replace(_messages(3), 1, 1)  # seq 3 takes position 1: surface (0, 3, 2)
    assert log.surface.nodes == (0, 3, 2)
    nested = _replace(log, 3, 2)  # start seq 3 > end seq 2, positions 1 <= 2
    assert nested.surface == Surface((0, 4), 2)
    assert fold_surface(nested.events) == nested.surface
    assert isinstance(seed_log(nested.events), Log)


@pytest.mark.spec("SURF-11", "SURF-5")
def test_invalid_nested_replace_whose_positions_are_reversed() -> None:
    log = _replace(_messages(3), 1, 1)  # surface (0, 3, 2)
    assert _rule(log, USER_MESSAGE, _user(), surface_op=Replace(2, 3), source_event_seqs=(2, 3)) == "SURF-5"


@pytest.mark.spec("SURF-11")
def test_summary_of_a_summary_replaces_by_position() -> None:
    log = _replace(_messages(4), 0, 1)  # (4, 2, 3)
    log = log.append(USER_MESSAGE, _user("late"), surface_op=APPEND)  # (4, 2, 3, 5)
    log = _replace(log, 4, 3)  # (6, 5)
    assert log.surface == Surface((6, 5), 2)
    log = _replace(log, 6, 5)
    assert log.surface == Surface((7,), 3)
