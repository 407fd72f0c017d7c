"""§6 requests — the loop request built from its header, and its reconstruction from a log.

Covers the parts of LT/request-reconstruction.spec.ts and LT/invariant.spec.ts that need no
running loop (harness facts §2.7, §4.4-§4.5, §4.11, §6, Addendum, Appendix B), the real recorded
harness log in ``shared/reference/example-real-log``, and the reconstruction theorem as a property
over driven logs: what a step sent at dispatch time is what ``reconstruct_request`` reads back.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import Rejection
from prefix_model.core.derive import derive_messages
from prefix_model.core.events import Replace
from prefix_model.core.headers import CHANGE, INITIAL, RESUME, EpochHeader, LlmCallConfig, fold_request_header, header_to_json
from prefix_model.core.json_values import FrozenMap, freeze, json_text
from prefix_model.core.log import EMPTY_LOG, Log, seed_log
from prefix_model.core.request_log import record_request_header
from prefix_model.core.requests import Request, StepSpan, boundary_log, build_request, find_step, reconstruct_request, request_to_json
from prefix_model.edge.formats.events_jsonl import read_log, read_log_lines

from tests.header_strategies import (
    MESSAGE_POOL,
    TOOL_POOL,
    TurnPlan,
    assistant_message,
    canonical_headers,
    chunk,
    drive,
    foreign_header,
    inject,
    obj,
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
from tests.reference import REAL_LOG_DIR

EXAMPLE = REAL_LOG_DIR
P, P2 = MESSAGE_POOL[0], MESSAGE_POOL[2]
ECHO = TOOL_POOL[0]
CONFIG = LlmCallConfig("mock", "mock")
H1 = EpochHeader(CONFIG, "You are A.", (ECHO,), (P,))
COMPLETED = obj({"kind": "completed"})

FULL_ORDER = ["provider", "model", "reasoningEffort", "messages", "system", "tools", "temperature", "maxTokens", "stop", "sessionId"]


def header_text(header: EpochHeader | None) -> str:
    return "none" if header is None else json_text(header_to_json(header))


def reconstructed(log: Log, turn: int, step: int, session_id: str | None = "s") -> Request:
    request = reconstruct_request(log, turn, step, session_id)
    assert isinstance(request, Request), request
    return request


def messages_text(log: Log, turn: int, step: int) -> str:
    return json_text(reconstructed(log, turn, step).messages)


def user(words: str) -> str:
    return json_text(obj({"role": "user", "content": [text(words)]}))


def answer(content: object) -> str:
    return json_text(obj({"role": "assistant", "content": content, "provenance": {"provider": "mock", "model": "mock"}}))


def as_list(*items: str) -> str:
    return "[" + ",".join(items) + "]"


TOOL_CALL_MESSAGE = answer([{"type": "tool-call", "id": "c1", "name": "echo", "arguments": "{}"}])
TOOL_RESULT_MESSAGE = json_text(
    obj({"role": "user", "content": [{"type": "tool-result", "toolCallId": "c1", "content": [text("echo: ping")], "isError": False}]})
)


def tool_step_tail(log: Log, turn: int, step: int) -> Log:
    """Stream one chunk, answer with a tool call ``c1``, run it, and end the step."""
    log = chunk(log, turn, step, "{}")
    log = assistant_message(log, turn, step, (obj({"type": "tool-call", "id": "c1", "name": "echo", "arguments": "{}"}),), (log.seq - 1,))
    log = tool_call(log, turn, step, "c1")
    log = tool_result(log, turn, step, "c1", log.seq - 1)
    return step_end(log, turn, step)


def text_step_tail(log: Log, turn: int, step: int, words: str) -> Log:
    log = chunk(log, turn, step, words)
    log = assistant_message(log, turn, step, (text(words),), (log.seq - 1,))
    return step_end(log, turn, step)


# --- The real recorded harness log -----------------------------------------------------------


def example() -> tuple[Log, list[dict[str, object]]]:
    if not (EXAMPLE / "events.jsonl").is_file() or not (EXAMPLE / "requests.jsonl").is_file():
        pytest.skip(f"the shared example log is absent: {EXAMPLE} (events.jsonl, requests.jsonl)")
    lines = (EXAMPLE / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    return read_log(EXAMPLE / "events.jsonl"), [json.loads(line) for line in lines if line]


def capture_of(record: dict[str, object]) -> dict[str, object]:
    capture = record["capture"]
    assert isinstance(capture, dict)
    return capture


def step_of(capture: dict[str, object]) -> tuple[int, int, int]:
    last = capture["lastStepStart"]
    assert isinstance(last, dict)
    return int(last["seq"]), int(last["turn"]), int(last["step"])


@pytest.mark.spec("REQ-1", "REQ-2", "REQ-3", "REQ-4")
def test_reconstruct_request_reproduces_every_captured_request_of_the_real_log() -> None:
    log, records = example()
    assert records
    for record in records:
        capture = capture_of(record)
        _, turn, step = step_of(capture)
        session_id = capture["sessionId"]
        assert isinstance(session_id, str)
        request = reconstruct_request(log, turn, step, session_id)
        assert isinstance(request, Request), request
        assert json_text(request_to_json(request)) == json_text(freeze(record["request"]))


@pytest.mark.spec("REQ-3", "REQ-4")
def test_reconstruct_request_of_the_real_log_agrees_with_the_dispatch_time_rules() -> None:
    log, records = example()
    for record in records:
        capture = capture_of(record)
        start, turn, step = step_of(capture)
        length = capture["logLengthAtSend"]
        assert isinstance(length, int)
        span = find_step(log, turn, step)
        assert isinstance(span, StepSpan) and span.start_seq == start
        at_dispatch = log.events[:length]
        # the invariant's rules: the whole log's fold at dispatch, the LAST step/start as boundary
        assert header_text(fold_request_header(at_dispatch)) == header_text(reconstructed(log, turn, step).header)
        assert max(e.seq for e in at_dispatch if e.type == "step/start") == start
        headers = [e.seq for e in at_dispatch if e.type == "request/header"]
        assert headers[-1] == capture["lastRequestHeaderSeq"]


# --- REQ-1 the request's fields and their order ----------------------------------------------


@pytest.mark.spec("REQ-1")
def test_request_to_json_orders_every_field_as_the_loop_builds_it() -> None:
    header = EpochHeader(LlmCallConfig("mock", "chat", "max", 0.5, 4096, ("END",)), "You are A.", (ECHO,), (P,))
    request = request_to_json(build_request(header, (), "sid"))
    assert list(request) == FULL_ORDER
    assert json_text(request["stop"]) == '["END"]'
    assert json_text(request["tools"]) == json_text((ECHO,))


@pytest.mark.spec("REQ-1")
def test_request_to_json_omits_absent_optional_fields() -> None:
    request = request_to_json(build_request(EpochHeader(CONFIG), (), "sid"))
    assert json_text(request) == '{"provider":"mock","model":"mock","messages":[],"sessionId":"sid"}'


@pytest.mark.spec("REQ-1")
def test_request_to_json_keeps_a_zero_temperature() -> None:
    request = request_to_json(build_request(EpochHeader(LlmCallConfig("p", "m", temperature=0, max_tokens=0)), (), "sid"))
    assert json_text(request) == '{"provider":"p","model":"m","messages":[],"temperature":0,"maxTokens":0,"sessionId":"sid"}'


@pytest.mark.spec("REQ-1", "REQ-2")
@given(canonical_headers(), st.lists(st.sampled_from(MESSAGE_POOL), max_size=3).map(tuple))
def test_request_to_json_carries_exactly_the_header_fields(header: EpochHeader, boundary: tuple[FrozenMap, ...]) -> None:
    request = request_to_json(build_request(header, boundary, "sid"))
    present = list(request)
    assert present == [k for k in FULL_ORDER if k in present]
    config = header.config
    expected: dict[str, object] = {
        "provider": config.provider,
        "model": config.model,
        "reasoningEffort": config.reasoning_effort,
        "system": header.system,
        "tools": header.tools,
        "temperature": config.temperature,
        "maxTokens": config.max_tokens,
        "stop": config.stop,
        "sessionId": "sid",
    }
    for key, value in expected.items():
        assert (key in request) == (value is not None)
        if value is not None:
            assert json_text(request[key]) == json_text(freeze(value))
    assert json_text(request["messages"]) == json_text((header.message_prefix or ()) + boundary)


# --- REQ-2 the prefix first, ahead of history ----------------------------------------------


@pytest.mark.spec("REQ-2")
def test_build_request_puts_the_prefix_ahead_of_the_boundary() -> None:
    log = step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1)
    log = record_request_header(log, False, H1)
    messages = messages_text(log, 1, 1)
    assert messages == as_list(json_text(P), user("go"))
    boundary = derive_messages(boundary_log(log, 2))
    assert messages != json_text(boundary)  # boundary only: the prefix is missing
    assert messages != json_text(boundary + (P,))  # boundary + prefix: the prefix is behind history


@pytest.mark.spec("REQ-2")
@given(canonical_headers(), st.lists(st.sampled_from(("go", "more", "again")), max_size=3))
def test_build_request_messages_are_prefix_then_boundary(header: EpochHeader, prompts: list[str]) -> None:
    log = turn_start(EMPTY_LOG, 1)
    for words in prompts:
        log = user_message(log, words)
    log = record_request_header(step_start(log, 1, 1), False, header)
    request = reconstructed(log, 1, 1)
    prefix = header.message_prefix or ()
    assert json_text(request.messages) == as_list(*[json_text(m) for m in prefix], *[user(w) for w in prompts])
    if prefix and prompts:
        assert json_text(request.messages) != json_text(derive_messages(log) + prefix)


@pytest.mark.spec("REQ-2", "DER-8")
def test_reconstruct_request_prefix_never_enters_history() -> None:
    header = EpochHeader(CONFIG, None, None, MESSAGE_POOL[:3])
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, header)
    log = text_step_tail(log, 1, 1, "done")
    assert json_text(derive_messages(log)) == as_list(user("go"), answer([text("done")]))
    assert messages_text(log, 1, 1) == as_list(*[json_text(m) for m in MESSAGE_POOL[:3]], user("go"))


# --- REQ-3 the boundary is the derivation before step/start ------------------------------------


@pytest.mark.spec("REQ-3")
def test_reconstruct_request_inject_after_step_start_is_in_the_next_request_only() -> None:
    log = step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1)
    log = inject(log, "late context")  # e.g. inject() while agent/request decides the config
    log = record_request_header(log, False, H1)
    assert log.events[3].type == "user/message" and log.events[4].type == "request/header"
    log = tool_step_tail(log, 1, 1)
    log = step_start(log, 1, 2)
    log = record_request_header(log, True, H1)
    log = text_step_tail(log, 1, 2, "done")
    assert messages_text(log, 1, 1) == as_list(json_text(P), user("go"))
    # the late inject sits AHEAD of the answer of the step it arrived in (not "previous + answer")
    assert messages_text(log, 1, 2) == as_list(json_text(P), user("go"), user("late context"), TOOL_CALL_MESSAGE, TOOL_RESULT_MESSAGE)


@pytest.mark.spec("REQ-3")
def test_reconstruct_request_inject_before_step_start_is_in_this_request() -> None:
    log = inject(user_message(turn_start(EMPTY_LOG, 1), "go"), "early context")
    log = record_request_header(step_start(log, 1, 1), False, H1)
    assert messages_text(log, 1, 1) == as_list(json_text(P), user("go"), user("early context"))


@pytest.mark.spec("REQ-3", "REQ-4")
def test_reconstruct_request_ignores_everything_appended_after_dispatch() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    at_dispatch = request_to_json(reconstructed(log, 1, 1))
    later = foreign_header(tool_step_tail(log, 1, 1), EpochHeader(CONFIG, "You are B."), CHANGE)
    later = turn_end(inject(later, "after"), 1, COMPLETED)
    assert json_text(request_to_json(reconstructed(later, 1, 1))) == json_text(at_dispatch)


@pytest.mark.spec("REQ-3", "REQ-4")
def test_reconstruct_request_sees_a_pre_step_compaction_without_a_new_header() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    log = turn_end(tool_step_tail(log, 1, 1), 1, COMPLETED)
    log = user_message(turn_start(log, 2), "next")
    shadowed = log.surface.nodes[:-1]  # everything before "next"
    log = log.append("compact/start", {"turn": 2})
    summary = {"content": [text("summary")], "source": {"kind": "plugin", "plugin": "compact"}}
    log = log.append("user/message", summary, surface_op=Replace(shadowed[0], shadowed[-1]), source_event_seqs=shadowed)
    log = log.append("compact/end", {"turn": 2})
    log = record_request_header(step_start(log, 2, 1), True, H1)
    assert messages_text(log, 2, 1) == as_list(json_text(P), user("summary"), user("next"))
    assert [e.field("reason") for e in log.events if e.type == "request/header"] == [INITIAL]


# --- REQ-4 the header in force for a step -------------------------------------------------------


@pytest.mark.spec("REQ-4", "HDR-10")
def test_reconstruct_request_system_prompt_change_is_used_from_its_step_on() -> None:
    h_b = EpochHeader(CONFIG, "You are B.", (ECHO,), (P,))
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    log = tool_step_tail(log, 1, 1)
    log = record_request_header(step_start(log, 1, 2), True, h_b)
    log = turn_end(text_step_tail(log, 1, 2, "done"), 1, COMPLETED)
    log = record_request_header(step_start(user_message(turn_start(log, 2), "next"), 2, 1), True, h_b)
    log = text_step_tail(log, 2, 1, "ok")
    assert [e.field("reason") for e in log.events if e.type == "request/header"] == [INITIAL, CHANGE]
    assert [reconstructed(log, t, s).header.system for t, s in ((1, 1), (1, 2), (2, 1))] == ["You are A.", "You are B.", "You are B."]
    first, second = messages_text(log, 1, 1), messages_text(log, 1, 2)
    assert second.startswith(first[:-1] + ",")  # history preserved: the second request extends the first


@pytest.mark.spec("REQ-4", "HDR-10")
def test_reconstruct_request_retry_after_a_request_error_reuses_the_unchanged_header() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    log = step_end(log, 1, 1)  # the provider call failed: no chunk
    log = step_start(log, 1, 2)  # retry with the next step number
    retry = record_request_header(log, True, H1)
    assert len(retry.events) == len(log.events)  # the header is not logged again when unchanged
    log = turn_end(text_step_tail(retry, 1, 2, "done"), 1, COMPLETED)
    failed, retried = reconstructed(log, 1, 1), reconstructed(log, 1, 2)
    assert header_text(failed.header) == header_text(retried.header) == header_text(H1)
    assert json_text(failed.messages) == json_text(retried.messages) == as_list(json_text(P), user("go"))
    span = find_step(log, 1, 1)
    assert isinstance(span, StepSpan) and span.header_until == 5  # through the failed step's step/end


@pytest.mark.spec("REQ-4")
def test_reconstruct_request_header_written_after_the_first_chunk_belongs_to_later_steps() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    log = chunk(log, 1, 1, "{}")
    plugin_config = EpochHeader(LlmCallConfig("mock", "mock", temperature=0.2), "You are A.", (ECHO,), (P,))
    log = foreign_header(log, plugin_config, CHANGE)
    log = assistant_message(log, 1, 1, (obj({"type": "tool-call", "id": "c1", "name": "echo", "arguments": "{}"}),), (log.seq - 2,))
    log = tool_result(tool_call(log, 1, 1, "c1"), 1, 1, "c1", log.seq)
    log = step_start(step_end(log, 1, 1), 1, 2)
    log = record_request_header(log, True, plugin_config)  # config sticks: the loop seeds from the log's fold
    assert header_text(reconstructed(log, 1, 1).header) == header_text(H1)
    assert header_text(reconstructed(log, 1, 2).header) == header_text(plugin_config)
    assert json_text(request_to_json(reconstructed(log, 1, 2))["temperature"]) == "0.2"


@pytest.mark.spec("REQ-4")
def test_reconstruct_request_an_open_step_uses_the_whole_log() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    span = find_step(log, 1, 1)
    assert isinstance(span, StepSpan) and (span.start_seq, span.header_until) == (2, 4)


@pytest.mark.spec("REQ-4", "REQ-1")
def test_reconstruct_request_carries_a_logged_effort_change() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    log = tool_step_tail(log, 1, 1)
    effort = EpochHeader(LlmCallConfig("mock", "mock", "max"), "You are A.", (ECHO,), (P,))
    log = record_request_header(step_start(log, 1, 2), True, effort)
    request = request_to_json(reconstructed(log, 1, 2, "sid"))
    assert list(request)[:4] == ["provider", "model", "reasoningEffort", "messages"]
    assert request["reasoningEffort"] == "max"
    assert "reasoningEffort" not in request_to_json(reconstructed(log, 1, 1))


# --- REQ-5 a missing step or header is a Rejection ---------------------------------------------


@pytest.mark.spec("REQ-5")
@pytest.mark.parametrize("turn, step", [(1, 2), (2, 1), (0, 0), (-1, 1)])
def test_invalid_reconstruction_of_a_step_that_does_not_exist(turn: int, step: int) -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    found = reconstruct_request(log, turn, step)
    assert isinstance(found, Rejection) and found.rule == "REQ-5"
    span = find_step(log, turn, step)
    assert isinstance(span, Rejection) and span.rule == "REQ-5"


@pytest.mark.spec("REQ-5")
def test_invalid_reconstruction_of_a_blocked_turn() -> None:
    blocked = {"content": [text("no")], "source": {"kind": "user"}, "reason": "policy"}
    log = turn_end(turn_start(EMPTY_LOG, 1).append("prompt/blocked", blocked), 1, obj({"kind": "rejected", "reason": "policy"}))
    found = reconstruct_request(log, 1, 1)
    assert isinstance(found, Rejection) and found.rule == "REQ-5"
    assert isinstance(reconstruct_request(EMPTY_LOG, 1, 1), Rejection)


@pytest.mark.spec("REQ-5", "REQ-4")
def test_invalid_reconstruction_of_a_step_with_no_header_in_force() -> None:
    # cancelled during model preparation: a step/start, but no request/header anywhere
    log = step_end(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), 1, 1)
    log = turn_end(log, 1, obj({"kind": "aborted"}))
    found = reconstruct_request(log, 1, 1)
    assert isinstance(found, Rejection)
    assert found.rule == "REQ-5"


@pytest.mark.spec("REQ-5", "JSON-5")
def test_invalid_reconstruction_of_a_step_named_by_booleans() -> None:
    log = turn_start(EMPTY_LOG, 1).append("step/start", {"turn": True, "step": True})
    log = foreign_header(log, H1, INITIAL)
    found = reconstruct_request(log, 1, 1)
    assert isinstance(found, Rejection) and found.rule == "REQ-5"


@pytest.mark.spec("REQ-2", "REQ-3", "HDR-9", "HDR-10")
def test_reconstruct_request_within_one_instance_each_request_extends_the_previous() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    log = tool_step_tail(log, 1, 1)
    log = record_request_header(step_start(log, 1, 2), True, H1)
    log = turn_end(text_step_tail(log, 1, 2, "done"), 1, COMPLETED)
    log = record_request_header(step_start(user_message(turn_start(log, 2), "next"), 2, 1), True, H1)
    log = turn_end(text_step_tail(log, 2, 1, "ok"), 2, COMPLETED)
    assert [e.field("reason") for e in log.events if e.type == "request/header"] == [INITIAL]
    texts = [messages_text(log, t, s) for t, s in ((1, 1), (1, 2), (2, 1))]
    for earlier, later in zip(texts, texts[1:]):
        assert later.startswith(earlier[:-1] + ",")
    assert texts[2] == as_list(json_text(P), user("go"), TOOL_CALL_MESSAGE, TOOL_RESULT_MESSAGE, answer([text("done")]), user("next"))


@pytest.mark.spec("REQ-1", "REQ-2")
def test_reconstruct_request_tells_apart_diverging_messages_and_model() -> None:
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    expected = json_text(request_to_json(reconstructed(log, 1, 1)))
    boundary = derive_messages(boundary_log(log, 2))
    other_model = EpochHeader(LlmCallConfig("mock", "chat"), H1.system, H1.tools, H1.message_prefix)
    assert json_text(request_to_json(build_request(other_model, boundary, "s"))) != expected
    assert json_text(request_to_json(build_request(H1, boundary + boundary, "s"))) != expected
    assert json_text(request_to_json(build_request(H1, boundary, "s"))) == expected


# --- Appendix B: the worked trace ----------------------------------------------------------


@pytest.mark.spec("REQ-2", "REQ-3", "REQ-4", "HDR-9", "HDR-10")
def test_reconstruct_request_worked_trace_across_a_resume() -> None:
    # instance 1: prefix [P], tool echo; "go" → tool call → "done"
    log = record_request_header(step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1), False, H1)
    assert log.events[3].field("reason") == INITIAL
    log = tool_step_tail(log, 1, 1)
    log = record_request_header(step_start(log, 1, 2), True, H1)  # equal to the fold: no header event
    log = turn_end(text_step_tail(log, 1, 2, "done"), 1, COMPLETED)
    # instance 2 (resume): the contributor now returns [P2]
    h2 = EpochHeader(CONFIG, "You are A.", (ECHO,), (P2,))
    log = record_request_header(step_start(user_message(turn_start(log, 2), "again"), 2, 1), False, h2)
    log = turn_end(text_step_tail(log, 2, 1, "ok"), 2, COMPLETED)
    assert [e.field("reason") for e in log.events if e.type == "request/header"] == [INITIAL, RESUME]
    history = [user("go"), TOOL_CALL_MESSAGE, TOOL_RESULT_MESSAGE]
    assert messages_text(log, 1, 1) == as_list(json_text(P), user("go"))
    assert messages_text(log, 1, 2) == as_list(json_text(P), *history)
    assert messages_text(log, 2, 1) == as_list(json_text(P2), *history, answer([text("done")]), user("again"))
    # P is gone from the wire, but the log still holds it on the instance-1 anchor at seq 3
    anchor = log.events[3].field("header")
    assert isinstance(anchor, FrozenMap) and json_text(anchor["messagePrefix"]) == json_text((P,))


# --- The reconstruction theorem over driven logs ------------------------------------------------


@pytest.mark.spec("REQ-2", "REQ-3", "REQ-4", "REQ-5", "HDR-9")
@given(turn_plans())
def test_reconstruct_request_equals_what_each_step_sent(plans: tuple[TurnPlan, ...]) -> None:
    driven = drive(plans)
    log = driven.log
    for (turn, step), sent in driven.sent.items():
        request = reconstructed(log, turn, step)
        assert header_text(request.header) == header_text(sent.header)
        assert json_text(request.messages) == json_text(sent.messages)
        at_dispatch = seed_log(log.events[: sent.dispatch_length])
        assert isinstance(at_dispatch, Log)
        assert header_text(fold_request_header(at_dispatch.events)) == header_text(sent.header)
        assert json_text(request_to_json(reconstructed(at_dispatch, turn, step))) == json_text(request_to_json(request))
    for turn, plan in enumerate(plans, start=1):
        if plan.kind != "steps":
            found = reconstruct_request(log, turn, 1)
            assert isinstance(found, Rejection) and found.rule == "REQ-5"
    assert all(len(anchors) <= 1 for anchors in driven.anchors)


def _log_of(*events: tuple[str, dict[str, object]]) -> Log:
    """A log of ``(type, data)`` events, read as a file's lines are (seq = position)."""
    lines = [json.dumps({"seq": n, "time": 1, "type": kind, "data": data}).encode() for n, (kind, data) in enumerate(events)]
    return read_log_lines(lines, "<test>")


_DONE = {"kind": "completed"}


@pytest.mark.spec("REQ-4", "REQ-5")
def test_find_step_takes_the_last_start_of_a_step_and_a_turn_end_closes_its_window() -> None:
    """Turn 2 step 1 started twice (a retry), then ended by turn/end: the last start, the window up to the turn/end."""
    log = _log_of(("turn/start", {"turn": 1}), ("turn/end", {"turn": 1, "reason": _DONE}), ("turn/start", {"turn": 2}),
                  ("step/start", {"turn": 2, "step": 1}), ("step/end", {"turn": 2, "step": 1}), ("step/start", {"turn": 2, "step": 1}),
                  ("turn/end", {"turn": 2, "reason": _DONE}), ("turn/start", {"turn": 3}))  # fmt: skip
    span = find_step(log, 2, 1)
    assert span == StepSpan(2, 1, 5, 6) and not isinstance(span, Rejection) and (span.turn, span.step) == (2, 1)


@pytest.mark.spec("REQ-4")
def test_find_step_closes_a_window_at_the_next_step_start_and_at_the_steps_own_chunk() -> None:
    no_end = _log_of(("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}), ("step/start", {"turn": 1, "step": 2}),
                     ("turn/end", {"turn": 1, "reason": _DONE}))  # fmt: skip
    assert find_step(no_end, 1, 1) == StepSpan(1, 1, 1, 2)  # a step with no end and no chunk: up to the next step/start
    chunked = _log_of(("turn/start", {"turn": 1}), ("turn/end", {"turn": 1, "reason": _DONE}), ("turn/start", {"turn": 2}),
                      ("step/start", {"turn": 2, "step": 1}),
                      ("assistant/chunk", {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "delta": "hi"}}),
                      ("step/end", {"turn": 2, "step": 1}))  # fmt: skip
    assert find_step(chunked, 2, 1) == StepSpan(2, 1, 3, 4)  # its first chunk (turn 2, step 1: not step 2 of turn 1) ends it


@pytest.mark.spec("REQ-5", "JSON-5")
@pytest.mark.parametrize("field", ["turn", "step"])
def test_a_step_start_naming_true_is_not_step_1_of_turn_1(field: str) -> None:
    data: dict[str, object] = {"turn": 1, "step": 1}
    data[field] = True
    log = _log_of(("turn/start", {"turn": 1}), ("step/start", data))
    assert find_step(log, 1, 1) == Rejection("REQ-5", "the log has no step/start for turn 1 step 1")


@pytest.mark.spec("REQ-5")
def test_the_REQ_5_errors_name_the_turn_and_the_step_each_in_its_place() -> None:
    log = _log_of(("turn/start", {"turn": 1}), ("turn/end", {"turn": 1, "reason": _DONE}), ("turn/start", {"turn": 2}),
                  ("step/start", {"turn": 2, "step": 1}), ("step/end", {"turn": 2, "step": 1}))  # fmt: skip
    assert reconstruct_request(log, 2, 1) == Rejection("REQ-5", "no request/header is in force for turn 2 step 1")
    assert find_step(log, 2, 3) == Rejection("REQ-5", "the log has no step/start for turn 2 step 3")
