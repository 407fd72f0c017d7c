"""Spec §4 — ``derive_messages``: the history projected from the surface (DER-1..DER-8).

Generated logs carry a marker in every message content (``#<seq> ...``, see
``tests/strategies.py``), so a property can tell which event each derived message came from
without trusting the model's own projection. ``_expected_messages`` is an independent, list-based
replay of the surface and the projection rules of harness-facts §3.2, used as an oracle.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import RejectedError, Rejection
from prefix_model.core.derive import derive_event_message, derive_messages
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_MESSAGE,
    KNOWN_TYPES,
    LEGACY_HEADER_DELTA,
    LEGACY_MODE_SET,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    TOOL_RESULT,
    USER_MESSAGE,
    Event,
    Replace,
    is_surface_type,
)
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text, thaw
from prefix_model.core.log import EMPTY_LOG, Log, seed_log

from tests.strategies import (
    PREFIX_MARKER,
    UNKNOWN_TYPES,
    LogScript,
    Step,
    build_log,
    fewer_examples,
    log_only_steps,
    log_scripts,
    logs,
)

# --- Helpers -------------------------------------------------------------------------------------


def _content(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _user(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": _content(text), "source": {"kind": "user"}, **extra}


def _assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"turn": 1, "step": 1, "content": _content(text) if text else [], "provenance": {"provider": "mock", "model": "m1"}, **extra}


def _tool_result(call_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"turn": 1, "step": 1, "callId": call_id, "content": _content(text), "isError": False, **extra}


def _header(prefix_text: str) -> dict[str, Any]:
    prefix = [{"role": "user", "content": _content(prefix_text)}]
    return {"header": {"config": {"provider": "mock", "model": "m1"}, "system": "sys", "messagePrefix": prefix}, "reason": "initial"}


def _texts(messages: tuple[FrozenMap, ...]) -> str:
    return json_text(messages)


_MARKER = re.compile(r"#(\d+) ")


def _markers(value: JsonValue) -> list[int]:
    """Return the seq markers of the texts in ``value``, in document order."""
    return [int(found) for found in _MARKER.findall(json_text(value))]


def _projects(event: Event) -> bool:
    """Return whether a surface node projects to a message (everything but an empty assistant/message)."""
    return not (event.type == ASSISTANT_MESSAGE and event.field("content") == ())


def _expected_messages(events: tuple[Event, ...]) -> list[dict[str, Any]]:
    """Return the derivation by an independent replay: a plain list of seqs and plain dicts."""
    nodes: list[int] = []
    for event in events:
        if event.type not in (USER_MESSAGE, STEERING_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT):
            continue
        if isinstance(event.surface_op, Replace):
            i, j = nodes.index(event.surface_op.start), nodes.index(event.surface_op.end)
            nodes[i : j + 1] = [event.seq]
        else:
            nodes.append(event.seq)
    messages: list[dict[str, Any]] = []
    for seq in nodes:
        kind, data = events[seq].type, thaw(events[seq].data)
        assert isinstance(data, dict)
        if kind in (USER_MESSAGE, STEERING_MESSAGE):
            messages.append({"role": "user", "content": data["content"]})
        elif kind == ASSISTANT_MESSAGE and data["content"]:
            messages.append({"role": "assistant", "content": data["content"], "provenance": data["provenance"]})
        elif kind == TOOL_RESULT:
            block = {"type": "tool-result", "toolCallId": data["callId"], "content": data["content"], "isError": data["isError"]}
            messages.append({"role": "user", "content": [block]})
    return messages


def _without_log_only(script: LogScript) -> LogScript:
    """Return ``script`` without its log-only steps; provenance naming them is dropped."""
    kept = {step.label for step in script if not step.is_log_only}
    result: list[Step] = []
    for step in script:
        if step.is_log_only:
            continue
        sources = step.sources
        if sources is not None:
            sources = tuple(label for label in sources if label in kept)
            if not sources and step.type != ASSISTANT_MESSAGE:
                sources = None  # an append only (a replace still names what it shadows)
        result.append(dataclasses.replace(step, sources=sources))
    return tuple(result)


# --- DER-1: one message per surface node, in surface order ---------------------------------------


@pytest.mark.spec("DER-1", "DER-2", "DER-3", "DER-4", "DER-6")
@given(logs())
@fewer_examples(2)
def test_derive_messages_equals_an_independent_replay_and_projection(log: Log) -> None:
    assert json_text(derive_messages(log)) == json_text(freeze(_expected_messages(log.events)))


@pytest.mark.spec("DER-1", "DER-3")
@given(logs())
@fewer_examples(3)
def test_derive_messages_projects_each_node_once_in_surface_order(log: Log) -> None:
    messages = derive_messages(log)
    projecting = [n for n in log.surface.nodes if _projects(log.events[n])]
    assert len(messages) == len(projecting)
    assert [_markers(m)[0] for m in messages] == projecting  # every message opens with its seq's marker


@pytest.mark.spec("DER-1")
def test_derive_messages_of_the_empty_log_is_empty() -> None:
    assert derive_messages(EMPTY_LOG) == ()


@pytest.mark.spec("DER-1", "JSON-6")
@given(logs())
@fewer_examples(4)
def test_derived_messages_have_known_roles_and_are_frozen(log: Log) -> None:
    events, before = log.events, json_text(derive_messages(log))
    for message in derive_messages(log):
        assert isinstance(message, FrozenMap)
        assert message["role"] in ("user", "assistant")
        assert isinstance(message["content"], tuple)
        with pytest.raises(TypeError):
            message["role"] = "system"  # type: ignore[index]
        with pytest.raises(AttributeError):
            setattr(message, "_items", {})
    assert log.events is events and json_text(derive_messages(log)) == before


# --- DER-2 / DER-3 / DER-4: projection of each node ------------------------------------------------


@pytest.mark.spec("DER-2")
def test_user_message_projects_to_role_and_content_only() -> None:
    data = _user("go", source={"kind": "plugin", "plugin": "goal"}, meta={"k": 1}, envelope={"displayContent": _content("shown"), "prefixContexts": []})
    log = EMPTY_LOG.append(USER_MESSAGE, data, surface_op=APPEND)
    assert _texts(derive_messages(log)) == '[{"role":"user","content":[{"type":"text","text":"go"}]}]'


@pytest.mark.spec("DER-2")
def test_steering_message_projects_like_a_user_message() -> None:
    log = EMPTY_LOG.append(STEERING_MESSAGE, _user("steer", turn=3, meta=None), surface_op=APPEND)
    assert _texts(derive_messages(log)) == '[{"role":"user","content":[{"type":"text","text":"steer"}]}]'


@pytest.mark.spec("DER-2")
def test_user_content_is_projected_verbatim() -> None:
    content = [{"type": "image", "data": "AAA=", "mimeType": "image/png"}, {"z": 1, "a": [True, None, 1.5]}, {"type": "text", "text": ""}]
    log = EMPTY_LOG.append(USER_MESSAGE, {"content": content, "source": {"kind": "user"}}, surface_op=APPEND)
    (message,) = derive_messages(log)
    assert json_text(message["content"]) == json_text(freeze(content)) == '[{"type":"image","data":"AAA=","mimeType":"image/png"},{"z":1,"a":[true,null,1.5]},{"type":"text","text":""}]'


@pytest.mark.spec("DER-3")
def test_assistant_message_projects_role_content_and_provenance() -> None:
    data = _assistant("done", usage={"inputTokens": 3, "outputTokens": 1})
    data["provenance"] = {"provider": "mock", "model": "m1", "replayState": {"id": "r"}}
    log = EMPTY_LOG.append(ASSISTANT_MESSAGE, data, surface_op=APPEND)
    expected = '[{"role":"assistant","content":[{"type":"text","text":"done"}],"provenance":{"provider":"mock","model":"m1","replayState":{"id":"r"}}}]'
    assert _texts(derive_messages(log)) == expected


@pytest.mark.spec("DER-3")
def test_empty_assistant_message_stays_on_the_surface_and_projects_nothing() -> None:
    log = EMPTY_LOG.append(USER_MESSAGE, _user("go"), surface_op=APPEND)
    log = log.append(ASSISTANT_MESSAGE, _assistant("", usage={"outputTokens": 0}), surface_op=APPEND)
    assert log.surface.nodes == (0, 1)
    assert derive_event_message(log.events[1]) is None
    assert _texts(derive_messages(log)) == '[{"role":"user","content":[{"type":"text","text":"go"}]}]'


@pytest.mark.spec("DER-4")
def test_tool_result_projects_to_a_user_tool_result_block() -> None:
    data = _tool_result("c7", "pong", error={"name": "ToolError", "code": "E"}, meta={"ms": 3})
    data["isError"] = True
    log = EMPTY_LOG.append(TOOL_RESULT, data, surface_op=APPEND)
    expected = '[{"role":"user","content":[{"type":"tool-result","toolCallId":"c7","content":[{"type":"text","text":"pong"}],"isError":true}]}]'
    assert _texts(derive_messages(log)) == expected


# --- DER-5: nothing else projects; log-only events never matter ---------------------------------------


@pytest.mark.spec("DER-5")
@pytest.mark.parametrize("event_type", [t for t in KNOWN_TYPES if not is_surface_type(t)] + list(UNKNOWN_TYPES) + [LEGACY_HEADER_DELTA, LEGACY_MODE_SET])
def test_derive_event_message_of_a_log_only_type_is_nothing(event_type: str) -> None:
    data = freeze({"content": _content("#0 looks like a message"), "role": "user", "callId": "c1", "isError": False, "provenance": {}})
    assert derive_event_message(Event(event_type, 0, 0, data)) is None


@pytest.mark.spec("DER-5", "DER-8")
@given(log_scripts(max_events=12), st.lists(st.integers(0, 16), max_size=6), st.data())
@fewer_examples(2)
def test_log_only_events_never_change_the_derivation_wherever_interleaved(script: LogScript, positions: list[int], data: st.DataObject) -> None:
    bare = _without_log_only(script)
    interleaved = list(bare)
    for index, position in enumerate(positions):
        step = data.draw(log_only_steps(-1 - index))  # fresh labels: nothing refers to these steps
        interleaved.insert(min(position, len(interleaved)), step)
    expected = json_text(derive_messages(build_log(script)))
    assert json_text(derive_messages(build_log(bare))) == expected
    assert json_text(derive_messages(build_log(interleaved))) == expected


@pytest.mark.spec("DER-5")
def test_log_only_events_between_messages_do_not_change_the_derivation() -> None:
    plain = EMPTY_LOG.append(USER_MESSAGE, _user("go"), surface_op=APPEND).append(ASSISTANT_MESSAGE, _assistant("ok"), surface_op=APPEND)
    noisy = EMPTY_LOG.append("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}})
    noisy = noisy.append(USER_MESSAGE, _user("go"), surface_op=APPEND).append("session/title", {"title": "go"})
    noisy = noisy.append("step/start", {"turn": 1, "step": 1}).append(REQUEST_HEADER, _header("prefix"))
    noisy = noisy.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "ok"}})
    noisy = noisy.append(ASSISTANT_MESSAGE, _assistant("ok"), surface_op=APPEND, source_event_seqs=(5,))
    noisy = noisy.append("step/end", {"turn": 1, "step": 1}).append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert json_text(derive_messages(noisy)) == json_text(derive_messages(plain))


# --- DER-6: shadowed nodes never appear ---------------------------------------------------------------


@pytest.mark.spec("DER-6")
@given(logs())
@fewer_examples(3)
def test_shadowed_nodes_never_appear_in_the_derivation(log: Log) -> None:
    current = set(log.surface.nodes)
    shadowed = {e.seq for e in log.events if is_surface_type(e.type) and e.seq not in current}
    assert not shadowed & set(_markers(derive_messages(log)))


@pytest.mark.spec("DER-6", "SURF-6")
def test_replacement_removes_the_shadowed_messages_and_takes_their_place() -> None:
    log = EMPTY_LOG
    for text in ("first", "second", "third"):
        log = log.append(USER_MESSAGE, _user(text), surface_op=APPEND)
    log = log.append(USER_MESSAGE, _user("summary"), surface_op=Replace(0, 1), source_event_seqs=(0, 1))
    text = _texts(derive_messages(log))
    assert "first" not in text and "second" not in text
    assert text == '[{"role":"user","content":[{"type":"text","text":"summary"}]},{"role":"user","content":[{"type":"text","text":"third"}]}]'


@pytest.mark.spec("DER-6", "DER-4")
def test_tool_result_rewrite_replaces_the_projected_content() -> None:
    log = EMPTY_LOG.append(TOOL_RESULT, _tool_result("c1", "a long output"), surface_op=APPEND)
    log = log.append(TOOL_RESULT, _tool_result("c1", "[pruned]"), surface_op=Replace(0, 0), source_event_seqs=(0,))
    text = _texts(derive_messages(log))
    assert "a long output" not in text and '"text":"[pruned]"' in text


# --- DER-7: deterministic, and equal for a seed replay ---------------------------------------------------


@pytest.mark.spec("DER-7", "LOG-12")
@given(logs())
@fewer_examples(3)
def test_derive_messages_is_deterministic_and_equal_for_a_seed_replay(log: Log) -> None:
    first = json_text(derive_messages(log))
    assert json_text(derive_messages(log)) == first
    seeded = seed_log(log.events)
    assert isinstance(seeded, Log)
    assert json_text(derive_messages(seeded)) == first
    rebuilt = seed_log(tuple(Event(e.type, e.seq, e.time, freeze(thaw(e.data)), e.surface_op, e.source_event_seqs) for e in log.events))
    assert isinstance(rebuilt, Log) and json_text(derive_messages(rebuilt)) == first


@pytest.mark.spec("DER-7")
@given(log_scripts(max_events=12), st.data())
@fewer_examples(3)
def test_derive_messages_of_a_seeded_prefix_equals_the_log_built_to_that_point(script: LogScript, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(script)))
    built = build_log(script[:cut])
    seeded = seed_log(build_log(script).events[:cut])
    assert isinstance(seeded, Log)
    assert json_text(derive_messages(seeded)) == json_text(derive_messages(built))


# --- DER-8: the prefix can never be history ----------------------------------------------------------------


@pytest.mark.spec("DER-8")
@given(logs())
@fewer_examples(3)
def test_no_request_header_is_ever_a_node_and_the_prefix_never_derives(log: Log) -> None:
    assert all(log.events[n].type != REQUEST_HEADER for n in log.surface.nodes)
    assert PREFIX_MARKER not in json_text(derive_messages(log))


@pytest.mark.spec("DER-8")
def test_derivation_starts_with_the_real_prompt_even_with_a_prefix_in_force() -> None:
    log = EMPTY_LOG.append(USER_MESSAGE, _user("go"), surface_op=APPEND).append("step/start", {"turn": 1, "step": 1})
    log = log.append(REQUEST_HEADER, _header("PREFIX-TEXT"))
    (first,) = derive_messages(log)
    assert json_text(first) == '{"role":"user","content":[{"type":"text","text":"go"}]}'
    assert "PREFIX-TEXT" not in json_text(derive_messages(log))


@pytest.mark.spec("DER-8", "LOG-6", "SURF-4")
def test_invalid_attempts_to_put_a_request_header_on_the_surface() -> None:
    log = EMPTY_LOG.append(REQUEST_HEADER, _header("PREFIX-TEXT")).append(USER_MESSAGE, _user("go"), surface_op=APPEND)
    with pytest.raises(RejectedError) as as_node:
        log.append(REQUEST_HEADER, _header("PREFIX-TEXT"), surface_op=APPEND)
    assert as_node.value.rejection.rule == "LOG-6"
    with pytest.raises(RejectedError) as replaced:
        log.append(USER_MESSAGE, _user("summary"), surface_op=Replace(0, 1), source_event_seqs=(0, 1))
    assert replaced.value.rejection.rule == "SURF-4"
    seeded = seed_log((Event(REQUEST_HEADER, 0, 0, freeze(_header("PREFIX-TEXT")), APPEND),))
    assert isinstance(seeded, Rejection) and seeded.rule == "LOG-6"


@pytest.mark.spec("DER-8", "DER-5")
def test_derive_event_message_of_a_request_header_is_nothing() -> None:
    event = Event(REQUEST_HEADER, 0, 0, freeze(_header("PREFIX-TEXT")))
    assert derive_event_message(event) is None


@pytest.mark.spec("DER-5", "DER-3")
def test_replacing_with_an_empty_assistant_message_removes_the_range_from_the_derivation() -> None:
    log = EMPTY_LOG.append(USER_MESSAGE, _user("go"), surface_op=APPEND).append(USER_MESSAGE, _user("more"), surface_op=APPEND)
    log = log.append(ASSISTANT_MESSAGE, _assistant(""), surface_op=Replace(0, 1), source_event_seqs=(0, 1))
    assert log.surface.nodes == (2,)
    assert derive_messages(log) == ()
