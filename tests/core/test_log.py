"""Spec §2 — the event envelope and the append-only log (LOG-1..LOG-15).

Rejections are asserted by rule ID: ``Log.append`` raises ``RejectedError`` (its
``.rejection.rule``), ``seed_log`` and ``check_event`` return a ``Rejection``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import RejectedError, Rejection
from prefix_model.core.derive import derive_messages
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_MESSAGE,
    KNOWN_TYPES,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    SURFACE_TYPES,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Event,
    Replace,
    check_event,
    is_surface_type,
)
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.core.log import EMPTY_LOG, Log, check_append, seed_log
from prefix_model.formats.event_lines import parse_event

from tests.strategies import LOG_ONLY_TYPES, UNKNOWN_TYPES, fewer_examples, json_values, logs, obj, rejected_events

# --- Helpers -------------------------------------------------------------------------------------


def _user(text: str = "go") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def _assistant(text: str = "done") -> dict[str, Any]:
    return {"turn": 1, "step": 1, "content": [{"type": "text", "text": text}], "provenance": {"provider": "mock", "model": "m1"}}


def _tool_result(call_id: str = "c1") -> dict[str, Any]:
    return {"turn": 1, "step": 1, "callId": call_id, "content": [{"type": "text", "text": "pong"}], "isError": False}


def _header(reason: str = "initial") -> dict[str, Any]:
    return {"header": {"config": {"provider": "mock", "model": "m1"}}, "reason": reason}


# The data each known type needs to be accepted (with a surfaceOp where it must carry one).
_VALID_DATA: dict[str, dict[str, Any]] = {
    "turn/start": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}},
    "turn/end": {"turn": 1, "reason": {"kind": "completed"}},
    "step/start": {"turn": 1, "step": 1},
    "step/end": {"turn": 1, "step": 1},
    "user/message": _user(),
    "prompt/blocked": {"content": [], "source": {"kind": "user"}, "reason": "veto"},
    "assistant/chunk": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "d"}},
    "assistant/message": _assistant(),
    "tool/call": {"turn": 1, "step": 1, "callId": "c1", "name": "echo", "arguments": "{}"},
    "tool/result": _tool_result(),
    "steering/message": {**_user("steer"), "turn": 1},
    "todo/write": {"todos": []},
    "request/header": _header(),
    "compact/start": {"turn": 1},
    "compact/summary": {"summary": "s", "shadowedRange": {"start": 0, "end": 0}, "shadowedSeqs": [0], "shadowedTokenCount": 1, "provider": "mock", "model": "m1"},
    "compact/end": {"turn": 1},
}


def _append_known(log: Log, event_type: str) -> Log:
    return log.append(event_type, _VALID_DATA[event_type], surface_op=APPEND if is_surface_type(event_type) else None)


def _rule_of_append(log: Log, event_type: str, data: object, **kwargs: Any) -> str:
    """Return the rule ``log.append`` names when it rejects; fail if it accepts."""
    with pytest.raises(RejectedError) as raised:
        log.append(event_type, data, **kwargs)
    return raised.value.rejection.rule


def _seed_rule(events: tuple[Event, ...]) -> Rejection:
    seeded = seed_log(events)
    assert isinstance(seeded, Rejection), "the seed was accepted"
    return seeded


def _event(event_type: str, seq: int, data: object, op: Any = None, sources: Any = None, time: int = 0) -> Event:
    return Event(event_type, seq, time, freeze(data), op, sources)


# --- LOG-1: the envelope (reader) -----------------------------------------------------------------


@pytest.mark.spec("LOG-1")
def test_parse_event_accepts_the_six_envelope_keys() -> None:
    line = freeze({"type": "user/message", "seq": 0, "time": 5, "data": _user(), "sourceEventSeqs": [], "surfaceOp": "append"})
    event = parse_event(line)
    assert isinstance(event, Event)
    assert (event.type, event.seq, event.time, event.surface_op, event.source_event_seqs) == ("user/message", 0, 5, "append", ())


@pytest.mark.spec("LOG-1")
@pytest.mark.parametrize(
    "line",
    [
        [1, 2],
        "an event",
        {"type": "turn/start", "seq": 0, "time": 0, "data": {}, "id": "x"},
        {"type": 7, "seq": 0, "time": 0, "data": {}},
        {"seq": 0, "time": 0, "data": {}},
        {"type": "turn/start", "seq": 0, "time": 0},
    ],
    ids=["array", "string", "extra-key", "type-not-string", "type-missing", "data-missing"],
)
def test_invalid_envelope_shape(line: object) -> None:
    rejection = parse_event(freeze(line))
    assert isinstance(rejection, Rejection) and rejection.rule == "LOG-1"


@pytest.mark.spec("LOG-1", "LOG-9")
def test_parse_event_keeps_data_of_any_json_kind() -> None:
    event = parse_event(freeze({"type": "plugin/x", "seq": 0, "time": 0, "data": None}))
    assert isinstance(event, Event) and event.data is None
    assert isinstance(seed_log((event,)), Log)


# --- LOG-2: seq = index ---------------------------------------------------------------------------


@pytest.mark.spec("LOG-2")
@given(logs())
@fewer_examples(3)
def test_append_assigns_seq_equal_to_index(log: Log) -> None:
    assert [e.seq for e in log.events] == list(range(len(log.events)))
    assert log.seq == len(log.events)
    grown = log.append("plugin/x", {})
    assert grown.events[-1].seq == len(log.events)


@pytest.mark.spec("LOG-2")
@pytest.mark.parametrize("seq", [1, -1, 2**53, True], ids=["gap", "negative", "unsafe", "bool"])
def test_invalid_seq(seq: int) -> None:
    event = _event("plugin/x", seq, {})
    rejection = check_event(event, 0)
    assert rejection is not None and rejection.rule == "LOG-2"
    assert _seed_rule((event,)).rule == "LOG-2"


@pytest.mark.spec("LOG-2", "LOG-12")
def test_invalid_seed_with_a_seq_gap_names_the_offending_index() -> None:
    events = (_event(TURN_START, 0, _VALID_DATA[TURN_START]), _event("plugin/x", 2, {}))
    rejection = _seed_rule(events)
    assert (rejection.rule, rejection.seq) == ("LOG-2", 1)


@pytest.mark.spec("LOG-2")
@pytest.mark.parametrize("seq", [-1, 1.5, 2**53], ids=["negative", "fractional", "unsafe"])
def test_invalid_seq_in_a_read_envelope(seq: object) -> None:
    rejection = parse_event(freeze({"type": "plugin/x", "seq": seq, "time": 0, "data": {}}))
    assert isinstance(rejection, Rejection) and rejection.rule == "LOG-2"


# --- LOG-3: time ------------------------------------------------------------------------------------


@pytest.mark.spec("LOG-3")
@pytest.mark.parametrize("time", [-1, 2**53, True], ids=["negative", "unsafe", "bool"])
def test_invalid_time(time: int) -> None:
    assert _rule_of_append(EMPTY_LOG, "plugin/x", {}, time=time) == "LOG-3"
    assert _seed_rule((_event("plugin/x", 0, {}, time=time),)).rule == "LOG-3"


@pytest.mark.spec("LOG-3")
@pytest.mark.parametrize("time", [-1, 0.5, "0", None], ids=["negative", "fractional", "string", "null"])
def test_invalid_time_in_a_read_envelope(time: object) -> None:
    rejection = parse_event(freeze({"type": "plugin/x", "seq": 0, "time": time, "data": {}}))
    assert isinstance(rejection, Rejection) and rejection.rule == "LOG-3"


@pytest.mark.spec("LOG-3")
def test_append_accepts_time_zero_and_the_largest_safe_integer() -> None:
    log = EMPTY_LOG.append("plugin/x", {}, time=0).append("plugin/x", {}, time=2**53 - 1)
    assert [e.time for e in log.events] == [0, 2**53 - 1]


# --- LOG-4: append returns a new log ----------------------------------------------------------------


@pytest.mark.spec("LOG-4")
@given(logs(), st.sampled_from(["plugin/x", USER_MESSAGE]))
@fewer_examples(3)
def test_append_leaves_the_old_log_and_its_events_unchanged(log: Log, event_type: str) -> None:
    events, surface = log.events, log.surface
    grown = log.append(event_type, _user() if event_type == USER_MESSAGE else {}, surface_op=APPEND if event_type == USER_MESSAGE else None)
    assert grown is not log
    assert log.events is events and log.surface == surface
    assert grown.events[: len(events)] == events
    assert all(new is old for new, old in zip(grown.events, events))


@pytest.mark.spec("LOG-4", "JSON-6")
def test_append_detaches_data_from_the_callers_dict() -> None:
    data = _user("original")
    log = EMPTY_LOG.append("plugin/x", {}).append(USER_MESSAGE, data, surface_op=APPEND, source_event_seqs=(0,))
    data["content"][0]["text"] = "mutated"
    data["content"].append({"type": "text", "text": "more"})
    data["source"] = "gone"
    assert json_text(derive_messages(log)) == '[{"role":"user","content":[{"type":"text","text":"original"}]}]'
    assert json_text(log.events[1].data) == json_text(freeze(_user("original")))


@pytest.mark.spec("LOG-4", "JSON-6", "SURF-7")
def test_append_detaches_provenance_from_the_callers_list() -> None:
    sources = [0]
    log = EMPTY_LOG.append("plugin/x", {}).append(USER_MESSAGE, _user(), surface_op=APPEND, source_event_seqs=sources)  # type: ignore[arg-type]
    sources[0] = 9
    sources.append(5)
    assert log.events[1].source_event_seqs == (0,)
    assert isinstance(seed_log(log.events), Log)


# --- LOG-5 / LOG-6: surface markers -----------------------------------------------------------------


@pytest.mark.spec("LOG-5")
def test_surface_types_are_exactly_the_four_message_types() -> None:
    assert set(SURFACE_TYPES) == {"user/message", "assistant/message", "tool/result", "steering/message"}
    assert [t for t in KNOWN_TYPES if is_surface_type(t)] == [USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT, STEERING_MESSAGE]
    assert not any(is_surface_type(t) for t in UNKNOWN_TYPES + ("User/Message", "user/message ", "request/header"))
    assert set(KNOWN_TYPES) == set(SURFACE_TYPES) | set(LOG_ONLY_TYPES)  # the strategies cover every known type


@pytest.mark.spec("LOG-5")
@pytest.mark.parametrize("event_type", SURFACE_TYPES)
def test_invalid_surface_event_without_surface_op(event_type: str) -> None:
    assert _rule_of_append(EMPTY_LOG, event_type, _VALID_DATA[event_type]) == "LOG-5"
    assert _rule_of_append(EMPTY_LOG.append("plugin/x", {}), event_type, _VALID_DATA[event_type], source_event_seqs=(0,)) == "LOG-5"
    assert _seed_rule((_event(event_type, 0, _VALID_DATA[event_type]),)).rule == "LOG-5"


@pytest.mark.spec("LOG-6", "LOG-9")
@pytest.mark.parametrize("event_type", [t for t in KNOWN_TYPES if not is_surface_type(t)] + list(UNKNOWN_TYPES))
def test_invalid_log_only_event_with_surface_markers(event_type: str) -> None:
    data = _VALID_DATA.get(event_type, {})
    base = EMPTY_LOG.append("plugin/x", {})
    assert _rule_of_append(base, event_type, data, surface_op=APPEND) == "LOG-6"
    assert _rule_of_append(base, event_type, data, surface_op=Replace(0, 0), source_event_seqs=(0,)) == "LOG-6"
    assert _rule_of_append(base, event_type, data, source_event_seqs=(0,)) == "LOG-6"
    assert _rule_of_append(base, event_type, data, source_event_seqs=()) == "LOG-6"
    assert _seed_rule((_event("plugin/x", 0, {}), _event(event_type, 1, data, sources=(0,)))).rule == "LOG-6"


@pytest.mark.spec("LOG-6", "LOG-5")
@pytest.mark.parametrize("event_type", KNOWN_TYPES)
def test_append_accepts_every_known_type_with_its_markers(event_type: str) -> None:
    log = _append_known(EMPTY_LOG, event_type)
    event = log.events[0]
    assert (event.surface_op is not None) == is_surface_type(event_type)
    assert log.surface.nodes == ((0,) if is_surface_type(event_type) else ())


# --- LOG-7 / LOG-8: legacy vocabulary ---------------------------------------------------------------


@pytest.mark.spec("LOG-7", "LOG-10")
@pytest.mark.parametrize("event_type", ["request/header-delta", "mode/set"])
def test_invalid_legacy_event_type(event_type: str) -> None:
    log = _append_known(EMPTY_LOG, TURN_START)
    assert _rule_of_append(log, event_type, {"delta": {}}) == "LOG-7"
    assert _rule_of_append(log, event_type, "any data") == "LOG-7"
    assert len(log.events) == 1
    rejection = _seed_rule((log.events[0], _event(event_type, 1, {})))
    assert (rejection.rule, rejection.seq) == ("LOG-7", 1)


@pytest.mark.spec("LOG-7")
def test_invalid_legacy_event_type_at_load() -> None:
    line = freeze({"type": "mode/set", "seq": 0, "time": 0, "data": {"mode": "plan"}})
    event = parse_event(line)
    assert isinstance(event, Event)
    assert _seed_rule((event,)).rule == "LOG-7"


@pytest.mark.spec("LOG-8")
def test_invalid_fallback_header_reason() -> None:
    assert _rule_of_append(EMPTY_LOG, REQUEST_HEADER, _header("fallback")) == "LOG-8"
    assert _seed_rule((_event(REQUEST_HEADER, 0, _header("fallback")),)).rule == "LOG-8"


@pytest.mark.spec("LOG-8")
@pytest.mark.parametrize("reason", ["initial", "resume", "change"])
def test_append_accepts_the_three_header_reasons(reason: str) -> None:
    log = EMPTY_LOG.append(REQUEST_HEADER, _header(reason))
    assert log.events[0].field("reason") == reason


@pytest.mark.spec("LOG-8")
def test_fallback_is_only_legacy_on_a_request_header() -> None:
    log = EMPTY_LOG.append("plugin/x", {"reason": "fallback"})
    assert log.events[0].field("reason") == "fallback"


# --- LOG-9: unknown types ----------------------------------------------------------------------------


@pytest.mark.spec("LOG-9", "LOG-11")
@given(st.sampled_from(UNKNOWN_TYPES), json_values(max_leaves=6))
@fewer_examples(2)
def test_append_accepts_unknown_types_with_any_data_as_log_only(event_type: str, data: JsonValue) -> None:
    log = EMPTY_LOG.append(USER_MESSAGE, _user(), surface_op=APPEND).append(event_type, data)
    assert log.events[1].type == event_type and log.events[1].data == data
    assert log.surface.nodes == (0,)
    assert derive_messages(log) == derive_messages(log.append(event_type, data))


# --- LOG-10: a rejected append changes nothing --------------------------------------------------------


@pytest.mark.spec("LOG-10", "LOG-12")
@given(logs(max_events=12).flatmap(lambda log: st.tuples(st.just(log), rejected_events(log))))
@fewer_examples(3)
def test_invalid_append_raises_naming_the_rule_and_leaves_the_log_unchanged(case: tuple[Log, tuple[Event, str]]) -> None:
    log, (event, rule) = case
    events, surface = log.events, log.surface
    rejection = check_append(log, event)
    assert rejection is not None and rejection.rule == rule
    if event.seq == log.seq:  # append assigns the seq itself, so only a seq rejection cannot be appended
        with pytest.raises(RejectedError) as raised:
            log.append(event.type, event.data, time=event.time, surface_op=event.surface_op, source_event_seqs=event.source_event_seqs)
        assert raised.value.rejection.rule == rule
    assert log.events is events and log.surface == surface
    # LOG-12: the seed of the same events breaks the same rule at the same place.
    seeded = seed_log(events + (event,))
    assert isinstance(seeded, Rejection) and (seeded.rule, seeded.seq) == (rule, len(events))


# --- LOG-11 / LOG-13 / LOG-14 / LOG-15: data shapes ---------------------------------------------------


@pytest.mark.spec("LOG-11")
@pytest.mark.parametrize("event_type", KNOWN_TYPES)
@pytest.mark.parametrize("data", [None, "text", 1, [], [{"content": []}]], ids=["null", "string", "number", "empty-array", "array"])
def test_invalid_non_object_data_of_a_known_type(event_type: str, data: object) -> None:
    op = APPEND if is_surface_type(event_type) else None
    assert _rule_of_append(EMPTY_LOG, event_type, data, surface_op=op) == "LOG-11"
    assert _seed_rule((_event(event_type, 0, data, op),)).rule == "LOG-11"


@pytest.mark.spec("LOG-13")
@pytest.mark.parametrize("provenance", [None, "mock", ["mock", "m1"]], ids=["absent", "string", "array"])
def test_invalid_assistant_message_without_a_provenance_object(provenance: object) -> None:
    data = _assistant()
    if provenance is None:
        del data["provenance"]
    else:
        data["provenance"] = provenance
    assert _rule_of_append(EMPTY_LOG, ASSISTANT_MESSAGE, data, surface_op=APPEND) == "LOG-13"
    assert _seed_rule((_event(ASSISTANT_MESSAGE, 0, data, APPEND),)).rule == "LOG-13"


@pytest.mark.spec("LOG-14")
def test_invalid_aborted_turn_end_with_extra_reason_keys() -> None:
    data = {"turn": 1, "reason": {"kind": "aborted", "message": "cancelled"}}
    assert _rule_of_append(EMPTY_LOG, TURN_END, data) == "LOG-14"
    assert _seed_rule((_event(TURN_END, 0, data),)).rule == "LOG-14"


@pytest.mark.spec("LOG-14")
@pytest.mark.parametrize(
    "reason",
    [
        {"kind": "aborted"},
        {"kind": "completed"},
        {"kind": "error", "step": 2, "message": "boom", "code": "E"},
        {"kind": "rejected", "reason": "veto"},
        {"kind": "interrupted"},
    ],
    ids=["aborted", "completed", "error", "rejected", "interrupted"],
)
def test_append_accepts_turn_end_reasons(reason: dict[str, Any]) -> None:
    log = EMPTY_LOG.append(TURN_END, {"turn": 1, "reason": reason})
    assert log.events[0].field("reason") == freeze(reason)


@pytest.mark.spec("LOG-15")
@pytest.mark.parametrize("event_type", SURFACE_TYPES)
@pytest.mark.parametrize("content", [None, "go", {"type": "text"}], ids=["absent", "string", "object"])
def test_invalid_surface_event_without_a_content_array(event_type: str, content: object) -> None:
    data = dict(_VALID_DATA[event_type])
    if content is None:
        del data["content"]
    else:
        data["content"] = content
    assert _rule_of_append(EMPTY_LOG, event_type, data, surface_op=APPEND) == "LOG-15"
    assert _seed_rule((_event(event_type, 0, data, APPEND),)).rule == "LOG-15"


@pytest.mark.spec("LOG-15")
@pytest.mark.parametrize(
    ("field", "value"),
    [("callId", None), ("callId", 1), ("isError", None), ("isError", 0), ("isError", "false")],
    ids=["callId-absent", "callId-number", "isError-absent", "isError-zero", "isError-string"],
)
def test_invalid_tool_result_fields(field: str, value: object) -> None:
    data = _tool_result()
    if value is None:
        del data[field]
    else:
        data[field] = value
    assert _rule_of_append(EMPTY_LOG, TOOL_RESULT, data, surface_op=APPEND) == "LOG-15"


@pytest.mark.spec("LOG-15", "DER-3")
def test_append_accepts_an_assistant_message_with_empty_content() -> None:
    log = EMPTY_LOG.append(ASSISTANT_MESSAGE, {**_assistant(), "content": []}, surface_op=APPEND)
    assert log.surface.nodes == (0,)


# --- LOG-12: seeds obey the rules of append ------------------------------------------------------------


@pytest.mark.spec("LOG-12")
@given(logs())
@fewer_examples(3)
def test_seed_log_of_a_logs_events_is_that_log(log: Log) -> None:
    seeded = seed_log(log.events)
    assert isinstance(seeded, Log)
    assert seeded == log and seeded.surface == log.surface


@pytest.mark.spec("LOG-12")
@given(logs(max_events=12), st.data())
@fewer_examples(3)
def test_seed_log_accepts_every_prefix_and_agrees_with_append(log: Log, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(log.events)))
    seeded = seed_log(log.events[:cut])
    assert isinstance(seeded, Log)
    replayed = EMPTY_LOG
    for event in log.events[:cut]:
        replayed = replayed.append(event.type, event.data, time=event.time, surface_op=event.surface_op, source_event_seqs=event.source_event_seqs)
    assert replayed == seeded and replayed.surface == seeded.surface


@pytest.mark.spec("LOG-12", "LOG-11")
def test_invalid_seed_reports_the_first_broken_event() -> None:
    events = (
        _event(USER_MESSAGE, 0, _user(), APPEND),
        _event("plugin/x", 1, "any"),
        _event(TURN_END, 2, "not an object"),
        _event(USER_MESSAGE, 3, _user()),
    )
    rejection = _seed_rule(events)
    assert (rejection.rule, rejection.seq) == ("LOG-11", 2)
    assert isinstance(seed_log(events[:2]), Log)


@pytest.mark.spec("LOG-12", "JSON-1", "JSON-2")
@pytest.mark.parametrize(("data", "rule"), [(math.nan, "JSON-1"), (obj(x=math.inf), "JSON-1"), (obj(x=-0.0), "JSON-2")], ids=["nan", "nested-inf", "negative-zero"])
def test_invalid_seed_event_with_lossy_data(data: JsonValue, rule: str) -> None:
    assert _rule_of_append(EMPTY_LOG, "plugin/x", data) == rule
    assert _seed_rule((Event("plugin/x", 0, 0, data),)).rule == rule


@pytest.mark.spec("LOG-12")
def test_seed_log_of_no_events_is_the_empty_log() -> None:
    assert seed_log(()) == EMPTY_LOG


@pytest.mark.spec("LOG-4", "JSON-6")
def test_log_and_event_are_immutable() -> None:
    log = EMPTY_LOG.append(USER_MESSAGE, _user(), surface_op=APPEND)
    with pytest.raises(AttributeError):
        setattr(log, "events", ())
    with pytest.raises(AttributeError):
        setattr(log.events[0], "type", "plugin/x")
    assert isinstance(log.events, tuple) and log.events[0].type == USER_MESSAGE


@pytest.mark.spec("LOG-1", "LOG-2", "JSON-3")
def test_check_event_names_each_envelope_rule_with_its_reason() -> None:
    """Each envelope rule's rejection, rule and reason in their places (the reader usually refuses these lines before)."""
    assert check_event(Event(5, 0, 0, FrozenMap()), 0) == Rejection("LOG-1", "type must be a string")  # type: ignore[arg-type]
    assert check_event(Event(TURN_START, 3, 0, FrozenMap({"turn": 1})), 0) == Rejection("LOG-2", "seq 3 is not contiguous; expected 0")
    beyond = Event(TURN_START, 0, 0, FrozenMap({"turn": 1, "n": 2**53 + 1}))  # an integer no double holds
    assert check_event(beyond, 0) == Rejection("JSON-3", "data holds a number not in its double form")


@pytest.mark.spec("LOG-1", "LOG-2", "LOG-3")
@pytest.mark.parametrize(
    "fields",
    [{"type": 7, "seq": 0, "time": 0}, {"type": "plugin/x", "seq": -1, "time": 0}, {"type": "plugin/x", "seq": 0, "time": "0"}, {"type": "plugin/x", "seq": 0, "time": 2**53}],
    ids=["type", "seq", "time-string", "time-unsafe"],
)
def test_the_reader_and_check_event_state_an_envelope_field_rule_once(fields: dict[str, object]) -> None:
    """One statement of LOG-1..LOG-3: the reader's rejection of a field as read is check_event's of an event holding it."""
    read = parse_event(freeze({**fields, "data": {}}))
    held = check_event(Event(fields["type"], fields["seq"], fields["time"], FrozenMap()), 0)  # type: ignore[arg-type]
    assert isinstance(read, Rejection) and read == held


@pytest.mark.spec("LOG-3")
def test_an_event_appended_without_a_time_has_time_0() -> None:
    assert EMPTY_LOG.append(TURN_START, {"turn": 1}).events[-1].time == 0
