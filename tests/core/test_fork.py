"""§7 fork — a child seeded with the source's events through a ``turn/end`` (harness facts §1.6).

Pinned cases of ST/fork.spec.ts (empty source, default and explicit boundaries, every turn/end
reason, invalid and open-turn boundaries, a taken child id first) and LT/request-reconstruction's
resume anchor over a seeded log, plus properties over driven multi-turn logs.
"""

from __future__ import annotations

import dataclasses

import icontract
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import ENABLED, Rejection
from prefix_model.core.derive import derive_messages
from prefix_model.core.events import Event, Replace
from prefix_model.core.fork import Lineage, check_fork, fork
from prefix_model.core.headers import INITIAL, RESUME, EpochHeader, LlmCallConfig, fold_request_header, header_to_json
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, json_text
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.request_log import record_request_header
from prefix_model.core.requests import Request, reconstruct_request
from prefix_model.formats.event_lines import event_to_line

from tests.header_strategies import (
    MESSAGE_POOL,
    TOOL_POOL,
    TURN_END_REASONS,
    TurnPlan,
    assistant_message,
    canonical_headers,
    chunk,
    drive,
    obj,
    plugin_event,
    step_end,
    step_start,
    text,
    tool_call,
    tool_result,
    turn_end,
    turn_plans,
    turn_start,
    user_message,
)

H1 = EpochHeader(LlmCallConfig("mock", "mock"), "You are A.", (TOOL_POOL[0],), (MESSAGE_POOL[0],))
H2 = EpochHeader(LlmCallConfig("mock", "chat"), "You are A.", (TOOL_POOL[0],), (MESSAGE_POOL[2],))
COMPLETED = obj({"kind": "completed"})


def lines(events: tuple[Event, ...]) -> list[str]:
    """Return the events as harness lines: JSON text, so key order and true/1 count."""
    return [event_to_line(e) for e in events]


def rule(found: Rejection | None) -> str | None:
    return None if found is None else found.rule


def one_turn(log: Log, turn: int, logged: bool, header: EpochHeader = H1, reason: FrozenMap = COMPLETED) -> Log:
    """Append a turn with one tool step (its events: turn/start … turn/end)."""
    log = record_request_header(step_start(user_message(turn_start(log, turn), f"prompt {turn}"), turn, 1), logged, header)
    log = chunk(log, turn, 1, "{}")
    log = assistant_message(log, turn, 1, (obj({"type": "tool-call", "id": f"c{turn}", "name": "echo", "arguments": "{}"}),), (log.seq - 1,))
    log = tool_call(log, turn, 1, f"c{turn}")
    log = step_end(tool_result(log, turn, 1, f"c{turn}", log.seq - 1), turn, 1)
    return turn_end(log, turn, reason)


def source() -> Log:
    """Two closed turns, then an open third turn: turn/start, user/message, step/start."""
    log = one_turn(one_turn(EMPTY_LOG, 1, False), 2, True)
    return step_start(user_message(turn_start(log, 3), "open"), 3, 1)


def turn_end_seqs(log: Log) -> list[int]:
    return [e.seq for e in log.events if e.type == "turn/end"]


# --- FORK-1, FORK-2, FORK-5 the seed and the lineage -----------------------------------------


@pytest.mark.spec("FORK-2", "FORK-5")
def test_fork_of_an_empty_source_is_an_empty_child() -> None:
    assert check_fork(EMPTY_LOG, None, "child", ()) is None
    result = fork(EMPTY_LOG, "parent", None, "child", (), "/work")
    assert result.child.events == ()
    assert result.lineage == Lineage("parent", 0, "/work")


@pytest.mark.spec("FORK-1", "FORK-2", "FORK-5")
def test_fork_without_boundary_takes_the_whole_closed_source() -> None:
    closed = one_turn(one_turn(EMPTY_LOG, 1, False), 2, True)
    result = fork(closed, "parent", None, "child", ("parent",), "/repo")
    assert lines(result.child.events) == lines(closed.events)
    assert result.lineage == Lineage("parent", len(closed.events), "/repo")
    assert json_text(derive_messages(result.child)) == json_text(derive_messages(closed))


@pytest.mark.spec("FORK-1", "FORK-5")
def test_fork_at_an_earlier_turn_end_with_an_open_source_tail() -> None:
    log = source()
    first_end = turn_end_seqs(log)[0]
    result = fork(log, "parent", first_end, "child")
    assert len(result.child.events) == first_end + 1  # inclusive boundary
    assert lines(result.child.events) == lines(log.events[: first_end + 1])
    assert result.child.events[-1].type == "turn/end"
    assert result.lineage.seed_length == first_end + 1 and result.lineage.parent_session == "parent"
    assert result.lineage.cwd is None


@pytest.mark.spec("FORK-4", "FORK-1")
@pytest.mark.parametrize("reason", TURN_END_REASONS, ids=lambda r: json_text(r))
def test_fork_accepts_every_turn_end_reason(reason: FrozenMap) -> None:
    log = one_turn(EMPTY_LOG, 1, False, reason=reason)
    assert check_fork(log, log.seq - 1, "child", ()) is None
    result = fork(log, "parent", log.seq - 1, "child")
    assert json_text(result.child.events[-1].data) == json_text(obj({"turn": 1, "reason": reason}))


@pytest.mark.spec("FORK-5")
def test_fork_copies_headers_compaction_and_plugin_events_unchanged() -> None:
    log = one_turn(EMPTY_LOG, 1, False)
    log = plugin_event(user_message(turn_start(log, 2), "next"))
    shadowed = log.surface.nodes[:-1]
    log = log.append("compact/start", {"turn": 2})
    summary = {"content": [text("summary")], "source": {"kind": "plugin", "plugin": "compact"}}
    log = log.append("user/message", summary, surface_op=Replace(shadowed[0], shadowed[-1]), source_event_seqs=shadowed)
    log = log.append("compact/end", {"turn": 2})
    log = turn_end(log, 2, obj({"kind": "aborted"}))
    child = fork(log, "parent").child
    assert lines(child.events) == lines(log.events)
    assert {e.type for e in child.events} >= {"request/header", "session/title", "compact/start", "compact/end"}
    assert child.surface == log.surface
    folded = fold_request_header(child.events)
    assert folded is not None and json_text(header_to_json(folded)) == json_text(header_to_json(H1))


@pytest.mark.spec("FORK-5")
def test_fork_child_events_are_frozen() -> None:
    child = fork(one_turn(EMPTY_LOG, 1, False), "parent").child
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.events[0].type = "changed"  # type: ignore[misc]
    data = child.events[0].data
    assert isinstance(data, FrozenMap)
    with pytest.raises(AttributeError):
        data._items = {}


@pytest.mark.spec("FORK-5", "LOG-4")
def test_fork_child_appends_leave_the_source_unchanged() -> None:
    log = one_turn(EMPTY_LOG, 1, False)
    before = lines(log.events)
    child = one_turn(fork(log, "parent").child, 2, False, H2)
    assert lines(log.events) == before
    assert len(child.events) > len(log.events)


# --- FORK-3, FORK-4, FORK-7 rejections ------------------------------------------------------------


@pytest.mark.spec("FORK-3")
@pytest.mark.parametrize("boundary", [-1, -100, 1.5, 0.5, True, False, 10_000, MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, 2**64])
def test_invalid_boundary_negative_fractional_boolean_unsafe_or_past_end(boundary: object) -> None:
    log = source()
    assert rule(check_fork(log, boundary, "child", ())) == "FORK-3"  # type: ignore[arg-type]


@pytest.mark.spec("FORK-3")
def test_invalid_boundary_just_past_the_last_event() -> None:
    log = one_turn(EMPTY_LOG, 1, False)
    assert rule(check_fork(log, log.seq - 1, "child", ())) is None
    assert rule(check_fork(log, log.seq, "child", ())) == "FORK-3"
    assert rule(check_fork(EMPTY_LOG, 0, "child", ())) == "FORK-3"


def corrupted(log: Log, events: tuple[Event, ...]) -> Log:
    """Return a Log holding ``events`` as-is, bypassing every check (a corrupted in-memory log)."""
    bad = object.__new__(Log)
    object.__setattr__(bad, "events", events)
    object.__setattr__(bad, "surface", log.surface)
    return bad


@pytest.mark.spec("FORK-3")
def test_invalid_boundary_whose_event_seq_is_not_its_index() -> None:
    closed = one_turn(EMPTY_LOG, 1, False)
    bad = corrupted(closed, closed.events[:-1] + (Event("turn/end", 99, 0, obj({"turn": 1, "reason": COMPLETED})),))
    assert rule(check_fork(bad, len(bad.events) - 1, "child", ())) == "FORK-3"
    assert rule(check_fork(closed, len(closed.events) - 1, "child", ())) is None


@pytest.mark.spec("FORK-4")
@pytest.mark.parametrize(
    "event_type",
    ["turn/start", "step/start", "user/message", "assistant/message", "tool/call", "request/header", "assistant/chunk", "tool/result", "step/end"],
)
def test_invalid_boundary_inside_a_turn(event_type: str) -> None:
    log = source()
    seq = next(e.seq for e in log.events if e.type == event_type)
    assert rule(check_fork(log, seq, "child", ())) == "FORK-4"


@pytest.mark.spec("FORK-4", "FORK-2")
def test_invalid_default_boundary_of_a_source_with_an_open_turn() -> None:
    assert rule(check_fork(source(), None, "child", ())) == "FORK-4"
    assert rule(check_fork(plugin_event(EMPTY_LOG), None, "child", ())) == "FORK-4"


@pytest.mark.spec("FORK-7")
def test_invalid_taken_child_id() -> None:
    closed = one_turn(EMPTY_LOG, 1, False)
    assert rule(check_fork(closed, None, "taken", ("other", "taken"))) == "FORK-7"
    assert rule(check_fork(closed, None, "free", ("other", "taken"))) is None


@pytest.mark.spec("FORK-7", "FORK-3", "FORK-4")
@pytest.mark.parametrize("boundary", [-1, 1.5, 10_000, 0, None])
def test_invalid_taken_child_id_is_reported_before_the_boundary(boundary: object) -> None:
    log = source()  # boundary 0 is a turn/start, None is an open turn, the others are invalid seqs
    assert rule(check_fork(log, boundary, "child", ("child",))) == "FORK-7"  # type: ignore[arg-type]
    without_taken = check_fork(log, boundary, "free", ("child",))  # type: ignore[arg-type]
    assert rule(without_taken) in ("FORK-3", "FORK-4")


@pytest.mark.skipif(not ENABLED, reason="fork's precondition is a contract; contracts are off")
@pytest.mark.spec("FORK-4")
def test_invalid_fork_is_refused_by_fork_itself() -> None:
    with pytest.raises(icontract.ViolationError):
        fork(source(), "parent", 0, "child")


# --- FORK-6 no loop state is copied -------------------------------------------------------------


@pytest.mark.spec("FORK-6", "HDR-9")
def test_fork_child_first_record_is_resume_when_the_slice_holds_a_header() -> None:
    child = fork(one_turn(EMPTY_LOG, 1, False), "parent").child
    log = record_request_header(step_start(user_message(turn_start(child, 2), "in the child"), 2, 1), False, H1)
    assert [e.field("reason") for e in log.events if e.type == "request/header"] == [INITIAL, RESUME]
    request = reconstruct_request(log, 2, 1, "child")
    assert isinstance(request, Request) and json_text(request.header.message_prefix) == json_text(H1.message_prefix)


@pytest.mark.spec("FORK-6", "HDR-9")
def test_fork_child_first_record_is_initial_when_the_slice_holds_no_header() -> None:
    log = turn_end(user_message(turn_start(EMPTY_LOG, 1), "cancelled"), 1, obj({"kind": "aborted"}))
    child = fork(log, "parent").child
    assert fold_request_header(child.events) is None
    recorded = record_request_header(step_start(user_message(turn_start(child, 2), "go"), 2, 1), False, H1)
    assert recorded.events[-1].field("reason") == INITIAL


# --- Properties over driven logs ------------------------------------------------------------------


@pytest.mark.spec("FORK-1", "FORK-2", "FORK-3", "FORK-4", "FORK-5", "FORK-6")
@given(turn_plans(), st.booleans(), canonical_headers())
def test_fork_accepts_exactly_the_turn_ends_of_a_driven_log(plans: tuple[TurnPlan, ...], open_tail: bool, header: EpochHeader) -> None:
    log = drive(plans, open_tail).log
    default = check_fork(log, None, "child", ())  # the omitted boundary is the last event
    if not log.events:
        assert default is None and fork(log, "parent").child.events == ()
    else:
        assert rule(default) == rule(check_fork(log, len(log.events) - 1, "child", ()))
        assert rule(default) == (None if log.events[-1].type == "turn/end" else "FORK-4")
        assert open_tail == (default is not None)
    for boundary in range(-2, len(log.events) + 2):
        found = check_fork(log, boundary, "child", ("parent",))
        if not 0 <= boundary < len(log.events):
            assert rule(found) == "FORK-3"
        elif log.events[boundary].type != "turn/end":
            assert rule(found) == "FORK-4"
        else:
            assert found is None
    for boundary in turn_end_seqs(log):
        result = fork(log, "parent", boundary, "child", ("parent",), "/cwd")
        assert lines(result.child.events) == lines(log.events[: boundary + 1])
        assert result.lineage == Lineage("parent", boundary + 1, "/cwd")
        had_header = any(e.type == "request/header" for e in result.child.events)
        child = step_start(turn_start(result.child, 99), 99, 1)
        recorded = record_request_header(child, False, header)
        assert recorded.events[-1].field("reason") == (RESUME if had_header else INITIAL)
