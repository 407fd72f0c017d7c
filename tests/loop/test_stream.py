"""Spec §10.3 — streamed replies: the chunks logged verbatim, the harness's assembly of them, a cancel mid-stream."""

from __future__ import annotations

import pytest
from prefix_model.core.events import ASSISTANT_CHUNK, ASSISTANT_MESSAGE, STEP_END, TURN_END
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, freeze_object, json_text
from prefix_model.examples.streams import text_stream, tool_call_stream
from prefix_model.loop.actions import Action, Cancel, Dispose, Reply, RunTools, SendPrompt
from prefix_model.loop.meter import measure
from prefix_model.loop.stream import assemble, check_stream, failure_of
from prefix_model.loop.transitions import enabled
from prefix_model.loop.world import Phase

from tests.loop.test_loop import clean, reason_of
from tests.loop_scripts import event_of, events_of, play, start, step, tool


def chunks(*values: dict[str, object]) -> tuple[FrozenMap, ...]:
    return tuple(freeze_object(v) for v in values)


def streamed(reply: Reply, *, tools: tuple[JsonValue, ...] = ()) -> tuple[Action, ...]:
    """Return a first turn whose only step answers with ``reply`` (stopping before what follows the reply)."""
    actions = (start(tools=tools), SendPrompt(0, "go"), *step(0, reply, compose=True))
    return actions[: actions.index(reply) + 1]


# --- Assembly (STRM-3) ---


@pytest.mark.spec("STRM-3")
def test_text_deltas_concatenate_until_a_block_end_which_wins() -> None:
    deltas = chunks({"type": "text-delta", "index": 0, "text": "he"}, {"type": "text-delta", "index": 0, "text": "llo"})
    assert assemble(deltas).content == (freeze({"type": "text", "text": "hello"}),)
    ended = deltas + chunks({"type": "block-end", "index": 0, "block": {"type": "text", "text": "HELLO"}}, {"type": "text-delta", "index": 0, "text": "!"})
    assert assemble(ended).content == (freeze({"type": "text", "text": "HELLO"}),)


@pytest.mark.spec("STRM-3")
def test_blocks_come_in_the_order_their_index_first_appears_not_by_index() -> None:
    stream = chunks(
        {"type": "block-start", "index": 1, "blockType": "reasoning"},
        {"type": "text-delta", "index": 0, "text": "answer"},
        {"type": "reasoning-delta", "index": 1, "text": "think"},
    )
    assert [b["type"] for b in assemble(stream).content] == ["reasoning", "text"]


@pytest.mark.spec("STRM-3")
def test_a_tool_call_takes_its_last_id_and_last_non_empty_name_and_joins_its_argument_deltas() -> None:
    stream = chunks(
        {"type": "tool-call-delta", "index": 0, "id": "a", "name": "echo", "argumentsDelta": '{"x"'},
        {"type": "tool-call-delta", "index": 0, "id": "b", "name": "", "argumentsDelta": ":1}"},
        {"type": "block-start", "index": 1, "blockType": "tool-call"},
    )
    assert json_text(assemble(stream).content) == (
        '[{"type":"tool-call","id":"b","name":"echo","arguments":"{\\"x\\":1}"},'
        '{"type":"tool-call","id":"call-1","name":"","arguments":""}]'
    )


@pytest.mark.spec("STRM-3")
def test_the_last_usage_and_the_last_finish_count_and_no_finish_is_a_stop() -> None:
    assert assemble(()).finish == freeze({"kind": "stop"}) and assemble(()).usage is None
    stream = chunks(
        {"type": "usage", "usage": {"inputTokens": 1}},
        {"type": "usage", "usage": {"inputTokens": 2}},
        {"type": "finish", "reason": {"kind": "stop"}, "replayState": {"r": 1}},
        {"type": "finish", "reason": {"kind": "max-tokens"}},
    )
    result = assemble(stream)
    assert (json_text(result.usage), json_text(result.finish), result.replay_state) == ('{"inputTokens":2}', '{"kind":"max-tokens"}', None)


# --- Well-formed streams (STRM-1, STRM-2) ---


@pytest.mark.spec("STRM-1", "STRM-2")
@pytest.mark.parametrize(
    ("chunk", "rule"),
    [
        ({"type": "text-delta", "text": "x"}, "STRM-1"),  # no index
        ({"type": "partial", "index": 0}, "STRM-1"),
        ({"type": "block-end", "index": 0, "block": "x"}, "STRM-1"),
        ({"type": "finish", "reason": {"kind": "error"}}, "STRM-1"),  # no failure LlmError accepts
        ({"type": "finish", "reason": {"kind": "aborted"}}, "STRM-1"),  # an aborted finish fails the request too
        ({"type": "usage", "usage": 5}, "STRM-1"),  # usage is an object
        ({"type": "finish", "reason": {"kind": 5}}, "STRM-1"),  # a finish's kind is a string
        ({"type": "tool-call-delta", "index": 0, "argumentsDelta": "{}"}, "STRM-1"),  # a tool call delta names its call
        ({"type": "tool-call-delta", "index": 0, "id": "c1"}, "STRM-1"),  # and carries its arguments' delta
        ({"type": "text-delta", "index": True, "text": "x"}, "STRM-1"),  # true is no index
        ({"type": "finish", "reason": {"kind": "error", "failure": {"message": "m", "code": "c", "status": 99}}}, "STRM-1"),
        ({"type": "block-start", "index": 0, "blockType": "image"}, "STRM-2"),  # never ended: cannot be assembled
    ],
)
def test_a_stream_the_harness_could_not_take_is_rejected(chunk: dict[str, object], rule: str) -> None:
    rejection = check_stream(chunks(chunk))
    assert rejection is not None and rejection.rule == rule


@pytest.mark.spec("STRM-1")
def test_the_harness_shaped_streams_are_well_formed_and_assemble_to_their_block() -> None:
    assert check_stream(text_stream("hi")) is None and check_stream(tool_call_stream("c1", "echo", '{"text":"ping"}', "ok")) is None
    assert [c["type"] for c in text_stream("hi")] == ["block-start", "text-delta", "text-delta", "block-end", "usage", "finish"]
    assert assemble(text_stream("hello", pieces=2)).content == (freeze({"type": "text", "text": "hello"}),)


@pytest.mark.spec("STRM-2")
@pytest.mark.parametrize("delta", ["text-delta", "reasoning-delta", "tool-call-delta"])
def test_a_block_that_deltas_build_needs_no_block_end(delta: str) -> None:
    # BlockAssembler assembles an open text, reasoning or tool-call block from its deltas (LLM/assembler.ts)
    assert check_stream(chunks({"type": delta, "index": 0, "text": "x", "id": "c1", "argumentsDelta": "{}"})) is None


@pytest.mark.spec("STRM-1", "LOOP-1")
def test_the_loop_refuses_a_malformed_stream_and_an_open_stream_without_chunks() -> None:
    world = play(streamed(Reply(0, "x"))[:-1])
    assert not enabled(world, Reply(0, stream=chunks({"type": "partial", "index": 0})))
    assert not enabled(world, Reply(0, more=True))
    assert enabled(world, Reply(0, stream=text_stream("x")))


# --- The loop (STRM-4, STRM-5) ---


@pytest.mark.spec("STRM-4")
def test_every_chunk_is_logged_verbatim_and_the_message_carries_their_seqs_and_the_usage() -> None:
    stream = text_stream("hey", usage={"inputTokens": 12, "outputTokens": 3})
    world = play(streamed(Reply(0, stream=stream)))
    logged = [e for e in events_of(world) if e.type == ASSISTANT_CHUNK]
    assert tuple(e.field("chunk") for e in logged) == stream
    assert all(json_text(e.data).startswith('{"turn":1,"step":1,"chunk":') for e in logged)
    message = event_of(world, ASSISTANT_MESSAGE)
    assert message.source_event_seqs == tuple(e.seq for e in logged)
    assert json_text(message.data) == (
        '{"turn":1,"step":1,"content":[{"type":"text","text":"hey"}],'
        '"provenance":{"provider":"mock","model":"mock-model"},"usage":{"inputTokens":12,"outputTokens":3}}'
    )


@pytest.mark.spec("STRM-4", "TOK-3")
def test_a_streamed_usage_anchors_the_meter() -> None:
    usage = {"inputTokens": 5000, "outputTokens": 3}
    world = play(streamed(Reply(0, stream=text_stream("hey", usage=usage))))
    measured = measure(world.session("s1").log)
    assert (measured.baseline, measured.baseline_tokens) == ("usage", 5003)


@pytest.mark.spec("STRM-4")
def test_a_replay_state_joins_the_provenance() -> None:
    stream = chunks({"type": "block-end", "index": 0, "block": {"type": "text", "text": "a"}}, {"type": "finish", "reason": {"kind": "stop"}, "replayState": {"cursor": 7}})
    provenance = event_of(play(streamed(Reply(0, stream=stream))), ASSISTANT_MESSAGE).field("provenance")
    assert json_text(provenance) == '{"provider":"mock","model":"mock-model","replayState":{"cursor":7}}'


@pytest.mark.spec("STRM-4")
def test_a_max_tokens_finish_keeps_the_replay_state_unless_it_cuts_a_tool_call() -> None:
    # The harness keeps replayState only beside the content it was assembled with (L/loop.ts:791-797, 823-828).
    finish: dict[str, object] = {"type": "finish", "reason": {"kind": "max-tokens"}, "replayState": {"cursor": 7}}
    plain = text_stream("ok")[:-1] + chunks(finish)
    cut = tool_call_stream("c1", "echo", '{"text":"ping"}', "ok")[:-1] + chunks(finish)
    kept, dropped = (play(streamed(Reply(0, stream=s), tools=(tool("echo"),))) for s in (plain, cut))
    assert json_text(event_of(kept, ASSISTANT_MESSAGE).field("provenance")) == '{"provider":"mock","model":"mock-model","replayState":{"cursor":7}}'
    assert json_text(event_of(dropped, ASSISTANT_MESSAGE).field("provenance")) == '{"provider":"mock","model":"mock-model"}'
    assert json_text(event_of(dropped, ASSISTANT_MESSAGE).field("content")) == '[{"type":"text","text":"ok"}]'


@pytest.mark.spec("STRM-4")
def test_streamed_tool_calls_are_run_and_a_max_tokens_finish_drops_them() -> None:
    call = tool_call_stream("c1", "echo", '{"text":"ping"}', "ok")
    world = play(streamed(Reply(0, stream=call), tools=(tool("echo"),)))
    assert world.instance(0).phase is Phase.TOOLS and world.instance(0).pending_calls == (("c1", "echo", '{"text":"ping"}'),)
    clean(play((RunTools(0, ("pong",)),), world))
    cut = call[:-1] + chunks({"type": "finish", "reason": {"kind": "max-tokens"}})
    world = play(streamed(Reply(0, stream=cut), tools=(tool("echo"),)))
    assert json_text(event_of(world, ASSISTANT_MESSAGE).field("content")) == '[{"type":"text","text":"ok"}]'
    assert world.instance(0).phase is Phase.POST_STEP and world.instance(0).max_tokens


@pytest.mark.spec("STRM-4", "LOOP-9")
def test_an_error_finish_fails_the_request_with_the_llm_error_failure() -> None:
    failure = {"requestId": "r1", "code": "overloaded", "message": "busy", "status": 529}
    stream = text_stream("par")[:3] + chunks({"type": "finish", "reason": {"kind": "error", "failure": failure}})
    world = clean(play(streamed(Reply(0, stream=stream))))
    assert json_text(reason_of(world)) == '{"kind":"error","step":1,"failure":{"message":"busy","code":"overloaded","status":529,"requestId":"r1"}}'
    assert [e.type for e in events_of(world)][-6:] == [ASSISTANT_CHUNK] * 4 + [STEP_END, TURN_END]
    assert failure_of(freeze({"kind": "error", "failure": {"message": "", "code": "c"}})) is None  # type: ignore[arg-type]


@pytest.mark.spec("STRM-5", "LOOP-6")
@pytest.mark.parametrize(("interrupt", "kind"), [(Cancel(0), "aborted"), (Dispose(0), "disposed")])
def test_an_interruption_mid_stream_keeps_the_chunks_logged_before_it(interrupt: Action, kind: str) -> None:
    partial = chunks({"type": "block-start", "index": 0, "blockType": "text"}, {"type": "text-delta", "index": 0, "text": "partial"})
    world = play(streamed(Reply(0, stream=partial, more=True)))
    assert world.instance(0).phase is Phase.STREAM
    world = clean(play((interrupt, Reply(0, stream=text_stream("ignored"))), world))
    types = [e.type for e in events_of(world)]
    assert types[-4:] == [ASSISTANT_CHUNK, ASSISTANT_CHUNK, STEP_END, TURN_END] and ASSISTANT_MESSAGE not in types
    assert reason_of(world)["kind"] == kind


@pytest.mark.spec("STRM-4")
def test_a_stream_in_two_parts_assembles_as_one() -> None:
    stream = text_stream("hello", pieces=5)
    whole = play(streamed(Reply(0, stream=stream)))
    split = play((Reply(0, stream=stream[3:]),), play(streamed(Reply(0, stream=stream[:3], more=True))))
    assert events_of(split) == events_of(whole)


M, C = {"message": "m"}, {"code": "c"}


@pytest.mark.spec("LOOP-9")
@pytest.mark.parametrize(
    ("facts", "kept"),
    [
        (M | C, True),  # nothing optional
        (M | C | {"status": 100}, True),  # the lowest HTTP status
        (M | C | {"status": 599}, True),
        (M | C | {"status": 600}, False),
        (M | C | {"providerRetryAfterMs": 1500}, True),
        (M | C | {"providerRetryAfterMs": 0.5}, True),  # a number, not only an integer, above 0
        (M | C | {"providerRetryAfterMs": 0}, False),
        (M | C | {"providerRetryAfterMs": True}, False),
        (M | C | {"requestId": "r1"}, True),
        (M | C | {"requestId": 5}, False),  # not a string
        (M | C | {"requestId": ""}, False),
    ],
    ids=["bare", "status-100", "status-599", "status-600", "retry-after", "retry-after-half", "retry-after-0", "retry-after-true", "request-id",
         "request-id-number", "request-id-empty"],  # fmt: skip
)
def test_a_failure_is_kept_as_llm_error_builds_it_or_refused_where_llm_error_throws(facts: dict[str, object], kept: bool) -> None:
    failure = failure_of(freeze_object({"kind": "error", "failure": facts}))
    assert (failure is not None) == kept
    if failure is not None:
        assert json_text(failure) == json_text(freeze(facts))  # message, code, then the optional facts in their order


@pytest.mark.spec("STRM-3")
def test_an_index_on_a_usage_or_finish_chunk_opens_no_block() -> None:
    stream = chunks(
        {"type": "text-delta", "index": 0, "text": "hi"},
        {"type": "usage", "index": 1, "usage": {"inputTokens": 3}},
        {"type": "finish", "index": 2, "reason": {"kind": "stop"}},
    )
    assert check_stream(stream) is None
    assert assemble(stream).content == (freeze({"type": "text", "text": "hi"}),)
    # Nor does one take part in the block its index names, even ahead of the block's first delta.
    for stray in ({"type": "usage", "index": 0, "usage": {"inputTokens": 3}}, {"type": "finish", "index": 0, "reason": {"kind": "stop"}}):
        assert assemble(chunks(stray, {"type": "text-delta", "index": 0, "text": "hi"})).content == (freeze({"type": "text", "text": "hi"}),)


@pytest.mark.spec("STRM-3")
def test_the_last_of_two_names_wins_and_reasoning_deltas_join_like_text() -> None:
    stream = chunks(
        {"type": "tool-call-delta", "index": 0, "id": "a", "name": "first", "argumentsDelta": "{"},
        {"type": "tool-call-delta", "index": 0, "id": "a", "name": "second", "argumentsDelta": "}"},
        {"type": "reasoning-delta", "index": 1, "text": "th"},
        {"type": "reasoning-delta", "index": 1, "text": "ink"},
    )
    assert json_text(assemble(stream).content) == (
        '[{"type":"tool-call","id":"a","name":"second","arguments":"{}"},{"type":"reasoning","text":"think"}]'
    )
