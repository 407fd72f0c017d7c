"""§10 the loop — scripted runs that pin each harness behaviour the model expresses.

Each test plays a short action script through ``loop.apply`` (strictly: every action must be
enabled) and asserts on the log, the requests the adapter received and the ghost trace. The
behaviours are those of harness facts §6 (LT/interception.spec.ts, LT/cancel.spec.ts,
LT/request-reconstruction.spec.ts), §3.6-§3.8, §4, Appendix B and the Addendum; the tests are
written from those facts, not from the harness's code. Every run also passes every property.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import icontract
import pytest
from prefix_model.core.derive import derive_messages
from prefix_model.core.events import (
    COMPACT_END,
    COMPACT_START,
    COMPACT_SUMMARY,
    PROMPT_BLOCKED,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    STEP_END,
    STEP_START,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Replace,
)
from prefix_model.core.headers import CHANGE, INITIAL, RESUME, LlmCallConfig, header_to_json
from prefix_model.core.json_values import FrozenMap, freeze, json_text
from prefix_model.core.requests import boundary_log, reconstruct_request, request_to_json
from prefix_model.examples.streams import text_stream
from prefix_model.loop.actions import (
    Action,
    BeginStep,
    Cancel,
    Compose,
    Create,
    Dispatch,
    Dispose,
    ForkDrive,
    Inject,
    MountCompaction,
    MutateContribution,
    PlainReplace,
    PostStep,
    PreStep,
    PromptContext,
    Register,
    Reply,
    Resume,
    RunTools,
    SendPrompt,
    SetSystem,
    SetTools,
    Steer,
)
from prefix_model.loop.compaction import CompactPolicy, balanced_cuts, frame_summary
from prefix_model.loop.meter import estimate_header, estimate_message, measure, surface_tokens
from prefix_model.loop.properties import check_all
from prefix_model.loop.transitions import PROMPT_PREFIX_DELIMITER, apply, enabled
from prefix_model.loop.world import AgentOptions, Append, CancelThenPrepend, Instance, Listener, Phase, Prepend, Throw, World, text_message

from tests.loop_scripts import (
    LONG_PROMPT,
    appending,
    event_of,
    events_of,
    header_events,
    headers_of,
    injecting,
    loop_requests,
    marks,
    msg,
    msgs,
    play,
    prepend,
    requests_of,
    scripted,
    short_circuit,
    start,
    step,
    texts,
    thrower,
    tool,
    turn,
    types,
)

ECHO_CALL = ("c1", "echo", '{"text":"ping"}')




def clean(world: World) -> World:
    """Return ``world`` after asserting that it breaks no property of §11."""
    assert [str(v) for v in check_all(world)] == []
    return world


def reason_of(world: World, session_id: str = "s1", index: int = -1) -> FrozenMap:
    """Return the reason of a ``turn/end`` (the last by default)."""
    ends = [e for e in events_of(world, session_id) if e.type == TURN_END]
    reason = ends[index].field("reason")
    assert isinstance(reason, FrozenMap)
    return reason


def turn_types(world: World, turn_number: int, session_id: str = "s1") -> tuple[str, ...]:
    """Return the event types from turn ``turn_number``'s ``turn/start`` through its ``turn/end``."""
    events = events_of(world, session_id)
    first = next(e.seq for e in events if e.type == TURN_START and e.field("turn") == turn_number)
    last = next(e.seq for e in events if e.type == TURN_END and e.field("turn") == turn_number)
    return tuple(e.type for e in events[first : last + 1])


def header_json(world: World, index: int, session_id: str = "s1") -> str:
    """Return the JSON text of the ``index``-th snapshot's header object."""
    return json_text(header_events(world, session_id)[index].field("header"))


def calls(world: World, name: str) -> int:
    """Return how many times listener ``name`` was called."""
    return next(listener.calls for listener in world.listeners if listener.name == name)


# --- Composition: once per instance, before pre-step, in registration order (LT/interception.spec.ts) ---


@pytest.mark.spec("PFX-2", "PFX-3", "REC-1", "REC-3")
def test_one_composition_serves_three_requests_over_two_turns_with_one_header_carrying_the_prefix() -> None:
    world = clean(
        play(
            (
                Register(prepend("ctx", "<P>")),
                start(tools=(tool("echo"),)),
                *turn(0, "go", Reply(0, tool_calls=(ECHO_CALL,)), "done", compose=True),
                *turn(0, "again", "ok"),
            )
        )
    )
    sent = requests_of(world, 0)
    assert [(r.turn, r.step) for r in sent] == [(1, 1), (1, 2), (2, 1)]
    assert len(marks(world, 0, "composed")) == 1 and calls(world, "ctx") == 1
    assert all(texts(r.request.messages)[:2] == ("user:<P>", "user:go") for r in sent)
    assert [reason for reason, _ in headers_of(world)] == [INITIAL]
    assert json_text(headers_of(world)[0][1].message_prefix) == json_text(msgs("<P>"))
    # The derivation after the prefix starts at the real prompt; nothing of the prefix is history.
    assert texts(derive_messages(world.session("s1").log))[0] == "user:go"
    # Each request extends the one before it (the prompt cache's view).
    for earlier, later in zip(sent, sent[1:]):
        assert later.request.messages[: len(earlier.request.messages)] == earlier.request.messages


@pytest.mark.spec("LOOP-3", "PFX-1")
def test_the_prefix_is_composed_after_the_prompt_and_before_the_first_pre_step() -> None:
    world = play((Register(prepend("ctx", "<P>")), start(), SendPrompt(0, "go"), BeginStep(0)))
    assert world.instance(0).phase is Phase.COMPOSE and world.instance(0).prefix is None
    before = len(events_of(world))
    world = play((Compose(0),), world)
    # Composition itself appends nothing to the log, and it ran before any step/start.
    assert len(events_of(world)) == before and STEP_START not in types(world)
    world = clean(play((PreStep(0), Dispatch(0), Reply(0, text="ok"), PostStep(0)), world))
    kinds = [m.kind for m in marks(world, 0)]
    assert kinds.index("composed") < kinds.index("pre-step") < kinds.index("boundary") < kinds.index("record") < kinds.index("dispatch")
    assert types(world)[:4] == (TURN_START, USER_MESSAGE, STEP_START, REQUEST_HEADER)
    assert json_text(headers_of(world)[0][1].message_prefix) == json_text(world.instance(0).prefix)


@pytest.mark.spec("PFX-8")
def test_prepend_listeners_reach_the_wire_in_registration_order() -> None:
    world = clean(play((Register(prepend("a", "<A>")), Register(prepend("b", "<B>")), start(), *turn(0, "go", compose=True))))
    assert texts(requests_of(world, 0)[0].request.messages) == ("user:<A>", "user:<B>", "user:go")


@pytest.mark.spec("PFX-8")
def test_append_listeners_reach_the_wire_in_reverse_registration_order() -> None:
    world = clean(play((Register(appending("a", "<A>")), Register(appending("b", "<B>")), start(), *turn(0, "go", compose=True))))
    assert texts(requests_of(world, 0)[0].request.messages) == ("user:<B>", "user:<A>", "user:go")


@pytest.mark.spec("PFX-8")
def test_global_and_agent_scoped_listeners_interleave_by_registration_and_other_agents_are_not_called() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("scoped-main", "<M1>", agent="main")),
        Register(prepend("global", "<G>")),
        Register(prepend("scoped-other", "<X>", agent="other")),
        Register(prepend("scoped-main-2", "<M2>", agent="main")),
        start(),
        *turn(0, "go", compose=True),
    )
    world = clean(play(script))
    assert texts(requests_of(world, 0)[0].request.messages) == ("user:<M1>", "user:<G>", "user:<M2>", "user:go")
    assert [calls(world, n) for n in ("scoped-main", "global", "scoped-other", "scoped-main-2")] == [1, 1, 0, 1]


@pytest.mark.spec("PFX-8")
def test_a_listener_registered_after_the_step_began_is_called_by_the_next_composition_only() -> None:
    # The waterfall collects its listeners as the step begins (no await between assembly and it); a late one waits.
    world = play((Register(prepend("a", "<A>")), start(), SendPrompt(0, "go"), BeginStep(0), Register(prepend("late", "<L>")), Compose(0)))
    assert [calls(world, n) for n in ("a", "late")] == [1, 0]
    world = clean(play((PreStep(0), Dispatch(0), Reply(0, text="ok"), PostStep(0), *turn(0, "again")), world))
    assert [texts(r.request.messages)[:2] for r in requests_of(world, 0)] == [("user:<A>", "user:go")] * 2  # cached: no recomposition
    world = clean(play((Resume("s1", "main"), *turn(1, "resumed", compose=True)), world))
    assert texts(requests_of(world, 1)[0].request.messages)[:2] == ("user:<A>", "user:<L>") and calls(world, "late") == 1


@pytest.mark.spec("PFX-8")
def test_a_non_delegating_listener_silences_the_later_ones() -> None:
    world = clean(play((Register(prepend("a", "<A>")), Register(short_circuit("s", "<S>")), Register(prepend("c", "<C>")), start(), *turn(0, "go", compose=True))))
    assert texts(requests_of(world, 0)[0].request.messages) == ("user:<A>", "user:<S>", "user:go")
    assert [calls(world, n) for n in ("a", "s", "c")] == [1, 1, 0]


@pytest.mark.parametrize("listeners", [(), (prepend("empty"),)], ids=["no-listener", "empty-contribution"])
@pytest.mark.spec("PFX-6")
def test_no_contribution_means_no_message_prefix_key_and_a_bare_derivation(listeners: tuple[Listener, ...]) -> None:
    world = clean(play((*(Register(listener) for listener in listeners), start(system="sys"), *turn(0, "go", compose=True), *turn(0, "again"))))
    assert header_json(world, 0) == '{"config":{"provider":"mock","model":"mock-model"},"system":"sys"}'
    log = world.session("s1").log
    for sent in requests_of(world, 0):
        boundary = max(e.seq for e in log.events[: sent.log_length] if e.type == STEP_START)
        assert json_text(sent.request.messages) == json_text(derive_messages(boundary_log(log, boundary)))
        assert "messagePrefix" not in json_text(request_to_json(sent.request))


@pytest.mark.spec("PFX-7")
def test_mutating_a_contribution_after_composition_changes_no_request() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<P v1>")),
        start(),
        *turn(0, "go", compose=True),
        *turn(0, "two"),
    )
    world = play(script)
    before = [json_text(request_to_json(r.request)) for r in world.requests]
    world = clean(play((MutateContribution("ctx", msgs("<P v2>")), *turn(0, "three")), world))
    # The recorded requests are untouched, and later ones still carry the prefix as composed.
    assert [json_text(request_to_json(r.request)) for r in world.requests[:2]] == before
    assert texts(world.requests[2].request.messages)[0] == "user:<P v1>"
    assert len(header_events(world)) == 1 and calls(world, "ctx") == 1


@pytest.mark.spec("PFX-2", "PFX-5")
def test_a_listener_registered_after_composition_reaches_only_the_next_instance() -> None:
    world = play((Register(prepend("first", "<F>")), start(), *turn(0, "go", compose=True), Register(prepend("late", "<L>")), *turn(0, "two")))
    assert calls(world, "late") == 0 and texts(world.requests[1].request.messages)[0] == "user:<F>"
    world = clean(play((Resume("s1", "main"), *turn(1, "three", compose=True)), world))
    assert calls(world, "late") == 1 and texts(world.requests[2].request.messages)[:2] == ("user:<F>", "user:<L>")
    assert [reason for reason, _ in headers_of(world)] == [INITIAL, RESUME]


# --- Cancellation and disposal (LT/cancel.spec.ts) ---


@pytest.mark.spec("LOOP-6", "PFX-4", "PFX-3", "LOOP-4")
def test_cancel_inside_composition_sends_nothing_and_the_next_turn_recomposes_with_the_fresh_prefix() -> None:
    listener = scripted("ctx", Prepend(msgs("<P stale>")), Prepend(msgs("<P fresh>")))
    world = play((Register(listener), start(), SendPrompt(0, "first"), BeginStep(0), Cancel(0), Compose(0)))
    assert turn_types(world, 1) == (TURN_START, USER_MESSAGE, TURN_END)
    assert json_text(reason_of(world)) == '{"kind":"aborted"}'
    assert world.requests == () and world.instance(0).prefix is None and world.instance(0).phase is Phase.IDLE
    world = clean(play(turn(0, "second", compose=True), world))
    assert calls(world, "ctx") == 2
    [(reason, header)] = headers_of(world)
    assert reason == INITIAL and json_text(header.message_prefix) == json_text(msgs("<P fresh>"))
    # The cancelled turn's prompt stays history and reaches the next request (Addendum 5).
    assert texts(world.requests[0].request.messages) == ("user:<P fresh>", "user:first", "user:second")
    assert [e.field("turn") for e in events_of(world) if e.type == TURN_START] == [1, 2]


@pytest.mark.spec("PFX-4", "LOOP-6", "LOOP-13")
def test_a_listener_that_cancels_while_composing_ends_the_turn_before_its_step_and_caches_nothing() -> None:
    canceller = scripted("canceller", CancelThenPrepend(msgs("<P v1>")), Prepend(msgs("<P v2>")))
    world = play((Register(canceller), Register(prepend("after", "<A>")), start(), SendPrompt(0, "first"), BeginStep(0), SendPrompt(0, "waiting"), Compose(0)))
    # The later listener still ran (the waterfall goes on); the checkpoint after it ends the turn; the waiting prompt is dropped.
    assert calls(world, "canceller") == 1 and calls(world, "after") == 1
    assert turn_types(world, 1) == (TURN_START, USER_MESSAGE, TURN_END) and json_text(reason_of(world)) == '{"kind":"aborted"}'
    assert world.requests == () and world.instance(0).prefix is None and world.instance(0).queued == ()
    world = clean(play(turn(0, "second", compose=True), world))
    assert texts(world.requests[0].request.messages) == ("user:<P v2>", "user:<A>", "user:first", "user:second")


@pytest.mark.spec("PFX-9", "LOOP-6")
def test_a_listener_that_throws_under_a_pending_cancel_ends_the_turn_aborted_not_in_error() -> None:
    for interrupt, kind in ((Cancel(0), "aborted"), (Dispose(0), "disposed")):
        world = clean(play((Register(scripted("flaky", Throw(), Prepend(msgs("<P>")))), start(), SendPrompt(0, "go"), BeginStep(0), interrupt, Compose(0))))
        assert json_text(reason_of(world)) == f'{{"kind":"{kind}"}}' and world.instance(0).prefix is None
    world = clean(play((Register(thrower("bad")), start(), SendPrompt(0, "go"), BeginStep(0), Cancel(0), Compose(0), SendPrompt(0, "again"), BeginStep(0), Compose(0))))
    assert reason_of(world, index=0)["kind"] == "aborted" and reason_of(world)["kind"] == "error"  # no cancel pending: an error


@pytest.mark.spec("LOOP-6", "PFX-4")
def test_dispose_inside_composition_ends_the_turn_disposed_and_retires_the_instance() -> None:
    world = clean(play((Register(prepend("ctx", "<P>")), start(), SendPrompt(0, "go"), BeginStep(0), Dispose(0), Compose(0))))
    assert json_text(reason_of(world)) == '{"kind":"disposed"}'
    assert turn_types(world, 1) == (TURN_START, USER_MESSAGE, TURN_END)
    assert world.requests == () and world.instance(0).phase is Phase.DISPOSED and world.instance(0).prefix is None
    assert not enabled(world, SendPrompt(0, "again"))


@pytest.mark.spec("LOOP-6")
def test_a_dispose_after_a_cancel_records_disposed() -> None:
    world = clean(play((Register(prepend("ctx", "<P>")), start(), SendPrompt(0, "go"), BeginStep(0), Cancel(0), Dispose(0), Compose(0))))
    assert json_text(reason_of(world)) == '{"kind":"disposed"}'


@pytest.mark.spec("LOOP-6")
def test_an_idle_dispose_writes_nothing() -> None:
    world = play((start(), *turn(0, "go", compose=True)))
    length = len(events_of(world))
    world = clean(play((Dispose(0),), world))
    assert len(events_of(world)) == length and world.instance(0).phase is Phase.DISPOSED


@pytest.mark.parametrize(("interrupt", "kind"), [(Cancel(0), "aborted"), (Dispose(0), "disposed")])
@pytest.mark.spec("LOOP-6", "PFX-4")
def test_an_interrupt_after_step_start_closes_the_step_and_sends_nothing(interrupt: Action, kind: str) -> None:
    world = clean(play((Register(prepend("ctx", "<P>")), start(), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), interrupt, Dispatch(0))))
    assert turn_types(world, 1) == (TURN_START, USER_MESSAGE, STEP_START, STEP_END, TURN_END)
    assert json_text(reason_of(world)) == json_text(FrozenMap({"kind": kind}))
    assert world.requests == () and header_events(world) == ()
    assert json_text(world.instance(0).prefix) == json_text(msgs("<P>"))  # a successful composition stays cached


@pytest.mark.spec("PFX-4", "PFX-5")
def test_after_an_interrupted_step_the_next_turn_reuses_the_cached_prefix_and_writes_the_anchor() -> None:
    listener = scripted("ctx", Prepend(msgs("<P1>")), Prepend(msgs("<P2>")))
    script: tuple[Action, ...] = (Register(listener), start(), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Cancel(0), Dispatch(0))
    world = play(script)
    world = clean(play((SendPrompt(0, "again"), *step(0)), world))  # no Compose: the prefix is cached
    assert calls(world, "ctx") == 1
    [(reason, header)] = headers_of(world)
    assert reason == INITIAL and json_text(header.message_prefix) == json_text(msgs("<P1>"))


WINDOWS: tuple[tuple[str, tuple[Action, ...], tuple[Action, ...], int], ...] = (
    # (window, actions up to it, the segments after it, requests sent before the cancel)
    ("turn-start", (SendPrompt(0, "go"),), (BeginStep(0),), 0),
    ("session-prefix", (SendPrompt(0, "go"), BeginStep(0)), (Compose(0),), 0),
    ("pre-step", (SendPrompt(0, "go"), BeginStep(0), Compose(0)), (PreStep(0),), 0),
    ("request", (SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0)), (Dispatch(0),), 0),
    ("stream", (SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0)), (Reply(0, text="x"),), 1),
    # a batch the cancel meets records its calls, and post-step runs before the checkpoint
    ("tool", (SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=(ECHO_CALL,))), (RunTools(0), PostStep(0)), 1),
    ("post-step", (SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, text="x")), (PostStep(0),), 1),
)


@pytest.mark.parametrize(("window", "before", "segments", "sent"), WINDOWS, ids=[w[0] for w in WINDOWS])
@pytest.mark.spec("LOOP-6")
def test_a_cancel_in_any_window_ends_the_turn_aborted_at_the_next_checkpoint_with_balanced_steps(
    window: str, before: tuple[Action, ...], segments: tuple[Action, ...], sent: int
) -> None:
    world = clean(play((Register(prepend("ctx", "<P>")), start(tools=(tool("echo"),)), *before, Cancel(0), *segments)))
    assert json_text(reason_of(world)) == '{"kind":"aborted"}' and world.instance(0).phase is Phase.IDLE
    kinds = types(world)
    assert kinds.count(STEP_START) == kinds.count(STEP_END) and kinds[-1] == TURN_END
    assert len(world.requests) == sent
    # The cache survives an interruption after a successful composition, and only then.
    assert (world.instance(0).prefix is None) == (window in ("turn-start", "session-prefix"))


@pytest.mark.spec("LOOP-7", "REC-1")
def test_an_inject_while_the_waterfall_is_awaited_is_in_the_current_request() -> None:
    world = clean(play((Register(prepend("ctx", "<P>")), start(), SendPrompt(0, "go"), BeginStep(0), Inject(0, "meanwhile"), *step(0, compose=True)[1:])))
    assert texts(world.requests[0].request.messages) == ("user:<P>", "user:go", "user:meanwhile")


# --- Prompt submission (LT/interception.spec.ts) ---


@pytest.mark.spec("LOOP-11")
def test_prompt_submit_contexts_become_separate_plugin_messages_visible_in_the_request() -> None:
    world = clean(play((Register(prepend("ctx", "<P>")), start(), SendPrompt(0, "go", contexts=(PromptContext("ctx one"), PromptContext("ctx two"))), *step(0, compose=True))))
    assert turn_types(world, 1)[:4] == (TURN_START, USER_MESSAGE, USER_MESSAGE, USER_MESSAGE)
    sources = [json_text(e.field("source")) for e in events_of(world) if e.type == USER_MESSAGE]
    assert sources == ['{"kind":"user"}', '{"kind":"plugin","plugin":"context"}', '{"kind":"plugin","plugin":"context"}']
    assert texts(world.requests[0].request.messages) == ("user:<P>", "user:go", "user:ctx one", "user:ctx two")


@pytest.mark.spec("LOOP-11")
def test_prompt_prefix_contexts_are_baked_into_the_prompt_with_the_delimiter_block_and_an_envelope() -> None:
    world = clean(play((start(), SendPrompt(0, "do it", prompt_prefix=(PromptContext("rule A"), PromptContext("rule B")), contexts=(PromptContext("aside"),)), *step(0, compose=True))))
    assert PROMPT_PREFIX_DELIMITER == "\n\n## My request:\n"
    prompt = event_of(world, USER_MESSAGE)
    assert json_text(prompt.data) == (
        '{"content":[{"type":"text","text":"rule A"},{"type":"text","text":"rule B"},'
        '{"type":"text","text":"\\n\\n## My request:\\n"},{"type":"text","text":"do it"}],'
        '"source":{"kind":"user"},'
        '"envelope":{"displayContent":[{"type":"text","text":"do it"}],'
        '"prefixContexts":[{"source":{"kind":"plugin","plugin":"context"}},{"source":{"kind":"plugin","plugin":"context"}}]}}'
    )
    # No separate message for the baked contexts; the separate one follows the prompt.
    users = [e for e in events_of(world) if e.type == USER_MESSAGE]
    assert len(users) == 2 and json_text(users[1].field("content")) == '[{"type":"text","text":"aside"}]'
    messages = world.requests[0].request.messages
    assert json_text(messages[0]) == json_text(FrozenMap({"role": "user", "content": prompt.field("content")}))


@pytest.mark.spec("LOOP-5", "LOOP-4")
def test_a_blocked_prompt_is_a_rejected_zero_step_turn_and_the_next_prompt_is_independent() -> None:
    world = play((Register(prepend("ctx", "<P>")), start(), SendPrompt(0, "forbidden", blocked=True)))
    assert turn_types(world, 1) == (TURN_START, "prompt/blocked", TURN_END)
    assert reason_of(world)["kind"] == "rejected"
    assert world.requests == () and calls(world, "ctx") == 0 and marks(world, 0, "composed") == ()
    world = clean(play(turn(0, "fine", compose=True), world))
    assert reason_of(world)["kind"] == "completed" and calls(world, "ctx") == 1
    assert [(r.turn, r.step) for r in world.requests] == [(2, 1)]
    assert texts(world.requests[0].request.messages) == ("user:<P>", "user:fine")


# --- Inject (facts §3.6, LT/request-reconstruction.spec.ts:326) ---


@pytest.mark.spec("LOOP-7", "LOOP-4")
def test_an_idle_inject_is_a_one_shot_turn_and_the_next_prompt_is_numbered_after_it() -> None:
    world = play((Register(prepend("ctx", "<P>")), start(), *turn(0, "go", compose=True), Inject(0, "note")))
    assert turn_types(world, 2) == (TURN_START, USER_MESSAGE, TURN_END)
    assert json_text(event_of(world, TURN_START, index=1).field("trigger")) == '{"kind":"injection","source":{"kind":"plugin","plugin":""}}'
    assert reason_of(world)["kind"] == "completed"
    world = clean(play(turn(0, "next"), world))
    assert [e.field("turn") for e in events_of(world) if e.type == TURN_START] == [1, 2, 3]
    assert [(r.turn, r.step) for r in world.requests] == [(1, 1), (3, 1)]
    assert texts(world.requests[1].request.messages)[-2:] == ("user:note", "user:next")
    assert calls(world, "ctx") == 1  # an injection turn runs no step, so no composition either


@pytest.mark.spec("LOOP-14")
def test_a_tool_batch_starts_with_the_reply_and_each_later_call_starts_at_the_tools() -> None:
    calls_ = (("c1", "echo", "{}"), ("c2", "echo", "{}"))
    head: tuple[Action, ...] = (start(tools=(tool("echo"),)), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0))
    replied = play((*head, Reply(0, tool_calls=calls_)))
    before = len(events_of(play(head)))
    assert [e.type for e in events_of(replied)[before:]] == ["assistant/chunk"] * 3 + ["assistant/message", "tool/call"]
    first = events_of(replied)[-1]
    assert first.field("callId") == "c1" and replied.instances[0].phase is Phase.TOOLS
    ran = events_of(play((RunTools(0, ("r1", "r2")),), replied))[len(events_of(replied)) :]
    assert [(e.type, e.field("callId"), e.source_event_seqs) for e in ran] == [
        ("tool/result", "c1", (first.seq,)), ("tool/call", "c2", None), ("tool/result", "c2", (first.seq + 2,))
    ]  # fmt: skip


def _unknown(call_id: str, name: str) -> tuple[str, str, bool, str]:
    return ("tool/result", call_id, True, f'Error: unknown tool "{name}"')


def _results(world: World, since: int) -> list[tuple[str, str, bool, str]]:
    """The tool/call and tool/result events after ``since``: type, call id, isError, the result's text."""
    shown = [e for e in events_of(world)[since:] if e.type in ("tool/call", "tool/result")]
    content = [e.field("content") if e.type == "tool/result" else () for e in shown]
    text = ["".join(str(b.get("text")) for b in c if isinstance(b, FrozenMap)) if isinstance(c, tuple) else "" for c in content]
    return [(e.type, str(e.field("callId")), e.field("isError") is True, t) for e, t in zip(shown, text, strict=True)]


@pytest.mark.spec("LOOP-14")
def test_a_call_whose_tool_a_set_tools_dropped_before_the_reply_is_answered_unknown_with_it() -> None:
    # Found through the harness (D-20 (d)): the registry is read as each call starts, not at assembly.
    calls_ = (("c1", "read", "{}"), ("c2", "echo", "{}"))
    head: tuple[Action, ...] = (start(tools=(tool("read"), tool("echo"))), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0))
    dropped = play((*head, SetTools(0, (tool("echo"),)), Reply(0, tool_calls=calls_)))
    since = len(events_of(play(head)))
    assert _results(dropped, since) == [("tool/call", "c1", False, ""), _unknown("c1", "read"), ("tool/call", "c2", False, "")]
    result = next(e for e in events_of(dropped) if e.type == "tool/result")
    assert json_text(result.field("error")) == '{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}'
    assert dropped.instances[0].phase is Phase.TOOLS  # c2's body is the seam, and takes the first output
    ran = play((RunTools(0, ("r2",)),), dropped)
    assert _results(ran, len(events_of(dropped))) == [("tool/result", "c2", False, "r2")]
    # None held: the batch ends with the reply, and there is no RunTools.
    gone = play((*head, SetTools(0, ()), Reply(0, tool_calls=calls_)))
    assert _results(gone, since)[-2:] == [("tool/call", "c2", False, ""), _unknown("c2", "echo")]
    assert gone.instances[0].phase is Phase.POST_STEP and not enabled(gone, RunTools(0))


@pytest.mark.spec("LOOP-14")
def test_a_later_call_whose_tool_a_set_tools_dropped_while_the_first_ran_is_answered_unknown() -> None:
    calls_ = (("c1", "echo", "{}"), ("c2", "read", "{}"), ("c3", "echo", "{}"))
    script: tuple[Action, ...] = (
        start(tools=(tool("read"), tool("echo"))), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0),
        Reply(0, tool_calls=calls_), SetTools(0, (tool("echo"),)),
    )  # fmt: skip
    replied = play(script)
    ran = play((RunTools(0, ("r1", "r3")),), replied)
    assert _results(ran, len(events_of(replied))) == [
        ("tool/result", "c1", False, "r1"), ("tool/call", "c2", False, ""), _unknown("c2", "read"),
        ("tool/call", "c3", False, ""), ("tool/result", "c3", False, "r3"),
    ]  # fmt: skip


@pytest.mark.spec("LOOP-7")
def test_an_inject_during_a_tool_batch_lands_after_every_result() -> None:
    calls_ = (("c1", "echo", "{}"), ("c2", "echo", "{}"))
    script: tuple[Action, ...] = (
        start(tools=(tool("echo"),)),
        SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=calls_),
        Inject(0, "tool context"), RunTools(0, ("r1", "r2")), PostStep(0),
        *step(0, "done"),
    )  # fmt: skip
    world = clean(play(script))
    tail = [e.type for e in events_of(world) if e.type in ("tool/call", "tool/result", USER_MESSAGE)]
    assert tail == [USER_MESSAGE, "tool/call", "tool/result", "tool/call", "tool/result", USER_MESSAGE]
    assert texts(world.requests[1].request.messages)[-1] == "user:tool context"


@pytest.mark.spec("LOOP-7", "REC-1", "LOOP-3")
def test_an_inject_after_step_start_is_in_the_next_request_not_the_current_one() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<P>")), start(),
        SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Inject(0, "late"), Dispatch(0), Reply(0, text="answer"), PostStep(0),
        *turn(0, "next"),
    )  # fmt: skip
    world = clean(play(script))
    first, second = world.requests
    assert texts(first.request.messages) == ("user:<P>", "user:go")
    # The late inject sits between step/start and the header (Addendum 1), and ahead of the answer in history (Addendum 2).
    assert types(world)[2:5] == (STEP_START, USER_MESSAGE, REQUEST_HEADER)
    assert texts(second.request.messages) == ("user:<P>", "user:go", "user:late", "assistant:answer", "user:next")


# --- New instances: resume and fork (LT/request-reconstruction.spec.ts:107, :375) ---


def _first_turn(system: str = "sys") -> tuple[Action, ...]:
    return (Register(prepend("ctx", "<P>")), start(system=system, tools=(tool("echo"),)), *turn(0, "go", compose=True))


@pytest.mark.spec("PFX-5", "LOOP-4", "HDR-9")
def test_a_resumed_instance_recomposes_and_anchors_with_resume_even_when_byte_identical() -> None:
    world = play(_first_turn())
    world = clean(play((Resume("s1", "main", system="sys", tools=(tool("echo"),)), *turn(1, "again", compose=True)), world))
    assert [reason for reason, _ in headers_of(world)] == [INITIAL, RESUME]
    assert header_json(world, 0) == header_json(world, 1)
    assert len(marks(world, 1, "composed")) == 1 and calls(world, "ctx") == 2
    assert world.instance(0).phase is Phase.DISPOSED
    assert [(r.instance_id, r.turn, r.step) for r in world.requests] == [(0, 1, 1), (1, 2, 1)]
    # Prefix-extension continuity across the restart.
    first, second = world.requests
    assert second.request.messages[: len(first.request.messages)] == first.request.messages


@pytest.mark.spec("PFX-5", "FORK-8", "HDR-9")
def test_a_fork_driven_by_a_new_agent_copies_the_events_and_anchors_with_resume() -> None:
    world = play(_first_turn())
    world = clean(play((ForkDrive("s1", "s2", None, "main", system="sys", tools=(tool("echo"),)),), world))
    assert events_of(world, "s2") == events_of(world, "s1")
    child = world.instance(1)
    assert (child.session_id, child.prefix, child.logged_header, child.phase) == ("s2", None, False, Phase.IDLE)
    world = clean(play(turn(1, "branch", compose=True), world))
    assert [reason for reason, _ in headers_of(world, "s2")] == [INITIAL, RESUME]
    assert header_json(world, 0, "s2") == header_json(world, 1, "s2")
    assert [e.field("turn") for e in events_of(world, "s2") if e.type == TURN_START] == [1, 2]
    assert len(events_of(world, "s1")) < len(events_of(world, "s2"))  # the parent is untouched


@pytest.mark.spec("PFX-5", "HDR-9")
def test_a_session_whose_first_instance_never_recorded_a_header_gets_an_initial_anchor_later() -> None:
    script: tuple[Action, ...] = (start(), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Cancel(0), Dispatch(0))
    world = clean(play((*script, Resume("s1", "main"), *turn(1, "again", compose=True))))
    assert [reason for reason, _ in headers_of(world)] == [INITIAL]


@pytest.mark.spec("LOOP-10")
def test_a_new_instance_starts_from_its_options_and_carries_the_logged_effort_only_for_the_same_model() -> None:
    world = play((start(), SendPrompt(0, "go"), *step(0, compose=True, config=LlmCallConfig("mock", "mock-model", "max"))))
    same = clean(play((Resume("s1", "main"), *turn(1, "again", compose=True)), world))
    assert [(r, h.config.reasoning_effort) for r, h in headers_of(same)] == [(INITIAL, "max"), (RESUME, "max")]
    assert same.requests[-1].request.header.config.reasoning_effort == "max"
    other = clean(play((Resume("s1", "main", AgentOptions("mock", "other-model")), *turn(1, "again", compose=True)), world))
    resumed = headers_of(other)[-1][1].config
    assert (resumed.model, resumed.reasoning_effort) == ("other-model", None)


@pytest.mark.spec("LOOP-10", "LOOP-1")
def test_a_request_without_provider_or_model_is_neither_recorded_nor_sent_and_ends_the_turn_in_error() -> None:
    unrouted = 'agent "s1" has no provider/model: set AgentOptions.provider and AgentOptions.model or supply both via the agent/request waterfall'
    opening = (SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0))
    routed = LlmCallConfig("mock", "mock-model")
    scripts = [
        (Create("main", "s1", AgentOptions(provider="")), *opening, Dispatch(0)),
        (Create("main", "s1", AgentOptions(model="")), *opening, Dispatch(0)),
        (start(), *opening, Dispatch(0, LlmCallConfig("", "mock-model"))),  # an agent/request listener drops the provider
        (start(), *opening, Dispatch(0, LlmCallConfig("mock", ""))),
    ]
    for script in scripts:
        world = clean(play(script))
        assert [e.type for e in events_of(world)] == [TURN_START, USER_MESSAGE, STEP_START, STEP_END, TURN_END], script
        assert events_of(world)[-1].field("reason") == freeze({"kind": "error", "step": 1, "message": unrouted})
        assert world.requests == () and world.instances[0].phase is Phase.IDLE
    # A config naming both routes the agent; the next turn starts from the logged header, not the empty options.
    unset = (Create("main", "s1", AgentOptions("", "")), *opening, Dispatch(0), SendPrompt(0, "again"), *step(0, config=routed), *turn(0, "more"))
    world = clean(play(unset))
    assert [(r.request.header.config.provider, r.request.header.config.model) for r in world.requests] == [("mock", "mock-model")] * 2
    assert [reason for reason, _ in headers_of(world)] == [INITIAL]


@pytest.mark.spec("LOOP-10")
def test_a_config_change_sticks_for_later_turns() -> None:
    hot = LlmCallConfig("mock", "mock-model", temperature=0.2)
    script: tuple[Action, ...] = (
        start(),
        *turn(0, "one", compose=True),
        SendPrompt(0, "two"), *step(0, config=hot),
        *turn(0, "three"),
    )  # fmt: skip
    world = clean(play(script))
    assert [reason for reason, _ in headers_of(world)] == [INITIAL, CHANGE]
    assert [r.request.header.config.temperature for r in world.requests] == [None, 0.2, 0.2]


# --- Assembly: system prompt and tools (LT/request-reconstruction.spec.ts:302, Addendum 6) ---


@pytest.mark.spec("LOOP-12", "HDR-15", "PFX-3")
def test_identical_re_renders_log_nothing_and_a_system_change_logs_one_full_change_snapshot() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<P>")),
        start(system="You are A.", tools=(tool("echo"),)),
        *turn(0, "one", compose=True),
        SetSystem(0, "You are A."),
        *turn(0, "two"),
        SetSystem(0, "You are B."),
        *turn(0, "three", Reply(0, tool_calls=(ECHO_CALL,)), "done"),
    )
    world = clean(play(script))
    assert [reason for reason, _ in headers_of(world)] == [INITIAL, CHANGE]
    change = headers_of(world)[1][1]
    assert change.system == "You are B." and json_text(change.message_prefix) == json_text(msgs("<P>"))
    assert json_text(change.tools) == json_text((tool("echo"),))
    assert [r.request.header.system for r in world.requests] == ["You are A.", "You are A.", "You are B.", "You are B."]
    # History is preserved across the change.
    assert texts(world.requests[2].request.messages)[:4] == ("user:<P>", "user:one", "assistant:ok", "user:two")


@pytest.mark.spec("LOOP-12")
def test_an_assembly_change_during_a_step_takes_effect_at_the_next_step() -> None:
    script: tuple[Action, ...] = (
        start(system="old", tools=(tool("echo"),)),
        SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0),
        SetSystem(0, "new"), SetTools(0, (tool("echo"), tool("add"))),
        Dispatch(0), Reply(0, tool_calls=(ECHO_CALL,)), RunTools(0), PostStep(0),
        *step(0, "done"),
    )  # fmt: skip
    world = clean(play(script))
    first, second = world.requests
    assert (first.request.header.system, len(first.request.header.tools or ())) == ("old", 1)
    assert (second.request.header.system, len(second.request.header.tools or ())) == ("new", 2)
    assert [reason for reason, _ in headers_of(world)] == [INITIAL, CHANGE]


@pytest.mark.spec("LOOP-12", "HDR-15")
def test_the_same_tools_registered_in_another_order_log_no_change() -> None:
    script: tuple[Action, ...] = (
        start(tools=(tool("echo"), tool("add"))),
        *turn(0, "one", compose=True),
        SetTools(0, (tool("add"), tool("echo"))),
        *turn(0, "two"),
    )
    world = clean(play(script))
    assert [reason for reason, _ in headers_of(world)] == [INITIAL]
    assert world.requests[0].request.header == world.requests[1].request.header


@pytest.mark.spec("LOOP-12")
def test_tools_are_sorted_by_name_in_the_header_and_the_request() -> None:
    world = clean(play((start(tools=(tool("echo"), tool("add"), tool("bash"))), *turn(0, "go", compose=True))))
    names = [t["name"] for t in headers_of(world)[0][1].tools or () if isinstance(t, FrozenMap)]
    assert names == ["add", "bash", "echo"]
    assert json_text(request_to_json(world.requests[0].request)["tools"]) == json_text(headers_of(world)[0][1].tools)


@pytest.mark.spec("LOOP-12", "HDR-15")
def test_a_schema_is_collected_as_name_description_parameters_whatever_its_registered_key_order_and_members() -> None:
    registered = freeze({"parameters": {"type": "object", "b": 1, "a": 2}, "x-extra": True, "description": "d", "name": "echo"})
    world = clean(play((start(tools=(registered,)), *turn(0, "one", compose=True))))
    assert json_text(headers_of(world)[0][1].tools) == '[{"name":"echo","description":"d","parameters":{"type":"object","b":1,"a":2}}]'
    # The same schema in its collected order is no change; its parameters' own key order is (JSON text, HDR-15).
    again = clean(play((SetTools(0, (freeze({"name": "echo", "description": "d", "parameters": {"type": "object", "b": 1, "a": 2}}),)), *turn(0, "two")), world))
    assert [reason for reason, _ in headers_of(again)] == [INITIAL]
    reordered = clean(play((SetTools(0, (freeze({"name": "echo", "description": "d", "parameters": {"a": 2, "b": 1, "type": "object"}}),)), *turn(0, "two")), world))
    assert [reason for reason, _ in headers_of(reordered)] == [INITIAL, CHANGE]
    # A schema without a description has none in the header.
    bare = clean(play((start(tools=(freeze({"parameters": {}, "name": "grep"}),)), *turn(0, "go", compose=True))))
    assert json_text(headers_of(bare)[0][1].tools) == '[{"name":"grep","parameters":{}}]'


# --- Request failures, throwing listeners, steering ---


@pytest.mark.spec("LOOP-9", "LOOP-4")
def test_a_failed_request_with_retry_continues_with_the_next_step_and_logs_no_new_header() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<P>")),
        start(),
        SendPrompt(0, "go"),
        *step(0, Reply(0, failure="overloaded", retry=True), compose=True),
        *step(0, "ok"),
    )
    world = clean(play(script))
    assert turn_types(world, 1) == (
        TURN_START, USER_MESSAGE, STEP_START, REQUEST_HEADER, STEP_END,
        STEP_START, "assistant/chunk", "assistant/chunk", "assistant/message", STEP_END, TURN_END,
    )  # fmt: skip
    assert [(r.turn, r.step) for r in world.requests] == [(1, 1), (1, 2)]
    assert calls(world, "ctx") == 1 and reason_of(world)["kind"] == "completed"


@pytest.mark.spec("LOOP-9", "LOOP-8")
def test_a_retry_drains_its_steering_as_the_request_fails_and_a_later_steer_waits_for_the_response() -> None:
    until_reply = step(0, Reply(0, failure="overloaded", retry=True), compose=True)[:-1]
    world = play((start(), SendPrompt(0, "go"), *until_reply, Steer(0, "during")))
    before = len(events_of(world))
    world = play((Reply(0, failure="overloaded", retry=True),), world)
    assert types(world)[before:] == (STEP_END, STEERING_MESSAGE)  # no seam between the failure and the retry's drain
    world = play((Steer(0, "after"), BeginStep(0)), world)
    assert types(world)[-1] == STEERING_MESSAGE and world.instance(0).steering == ("after",)  # the BeginStep drains nothing
    world = clean(play((PreStep(0), Dispatch(0), Reply(0, text="retried"), PostStep(0), *step(0, "done")), world))
    assert texts(world.requests[1].request.messages) == ("user:go", "user:during")
    assert texts(world.requests[2].request.messages)[-2:] == ("assistant:retried", "user:after")


@pytest.mark.spec("LOOP-9")
def test_a_failed_request_without_retry_ends_the_turn_in_error_with_its_step() -> None:
    world = clean(play((start(), SendPrompt(0, "go"), *step(0, Reply(0, failure="overloaded", failure_message="busy"), compose=True))))
    assert json_text(reason_of(world)) == '{"kind":"error","step":1,"failure":{"message":"busy","code":"overloaded"}}'
    assert turn_types(world, 1)[-3:] == (REQUEST_HEADER, STEP_END, TURN_END)
    assert world.instance(0).phase is Phase.IDLE


@pytest.mark.spec("PFX-9")
def test_a_throwing_listener_ends_the_turn_in_error_at_its_step_and_the_next_turn_recomposes() -> None:
    world = play((Register(scripted("flaky", Throw(), Prepend(msgs("<P>")))), start(), SendPrompt(0, "go"), BeginStep(0), Compose(0)))
    reason = reason_of(world)
    assert (reason["kind"], reason["step"]) == ("error", 1) and set(reason) == {"kind", "step", "message"}
    assert turn_types(world, 1) == (TURN_START, USER_MESSAGE, TURN_END)  # failed "at step 1" with no step/start
    assert world.requests == () and world.instance(0).prefix is None
    world = clean(play(turn(0, "again", compose=True), world))
    assert calls(world, "flaky") == 2 and texts(world.requests[0].request.messages) == ("user:<P>", "user:go", "user:again")


@pytest.mark.spec("PFX-9", "PFX-10")
def test_injects_made_before_a_throw_stay_in_history() -> None:
    world = play((Register(injecting("early", "workspace note", "<W>")), Register(thrower("bad")), start(), SendPrompt(0, "go"), BeginStep(0), Compose(0)))
    assert turn_types(world, 1) == (TURN_START, USER_MESSAGE, USER_MESSAGE, TURN_END)
    assert reason_of(world)["kind"] == "error"
    assert texts(derive_messages(world.session("s1").log)) == ("user:go", "user:workspace note")


@pytest.mark.spec("PFX-10", "PFX-1")
def test_a_composing_listeners_inject_is_in_the_current_request_but_its_prefix_is_not_history() -> None:
    world = clean(play((Register(injecting("ws", "workspace note", "<W>")), start(), *turn(0, "go", compose=True))))
    assert texts(world.requests[0].request.messages) == ("user:<W>", "user:go", "user:workspace note")
    injected = [e for e in events_of(world) if e.type == USER_MESSAGE][1]
    assert json_text(injected.field("source")) == '{"kind":"plugin","plugin":""}'
    assert "user:<W>" not in texts(derive_messages(world.session("s1").log))


@pytest.mark.spec("LOOP-8")
def test_steering_waiting_at_the_top_of_a_step_is_drained_before_the_boundary() -> None:
    script: tuple[Action, ...] = (
        start(tools=(tool("echo"),)),
        *turn(0, "go", Reply(0, tool_calls=(ECHO_CALL,)), compose=True)[:-1],  # stop before the PostStep
    )
    world = play(script)
    world = clean(play((PostStep(0), Steer(0, "use add"), *step(0, "done")), world))
    second = world.requests[1]
    assert texts(second.request.messages)[-1] == "user:use add"
    steer = event_of(world, "steering/message")
    assert json_text(steer.data) == '{"turn":1,"content":[{"type":"text","text":"use add"}],"source":{"kind":"user"}}'


@pytest.mark.spec("LOOP-8")
def test_steering_during_a_tool_batch_is_drained_after_the_results_and_joins_the_next_request() -> None:
    script: tuple[Action, ...] = (
        start(tools=(tool("echo"),)),
        SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=(ECHO_CALL,)),
        Steer(0, "hurry"), RunTools(0), PostStep(0), *step(0, "done"),
    )  # fmt: skip
    world = clean(play(script))
    assert [e.type for e in events_of(world)][8:10] == ["tool/result", "steering/message"]
    assert texts(world.requests[1].request.messages)[-1] == "user:hurry"


@pytest.mark.spec("LOOP-8")
def test_steering_during_composition_lands_after_the_response() -> None:
    script: tuple[Action, ...] = (start(), SendPrompt(0, "go"), BeginStep(0), Steer(0, "also this"), Compose(0), PreStep(0), Dispatch(0), Reply(0, text="answer"))
    world = play(script)
    assert texts(world.requests[0].request.messages) == ("user:go",)
    assert [e.type for e in events_of(world)][-2:] == ["assistant/message", "steering/message"]


@pytest.mark.spec("LOOP-8")
def test_a_max_tokens_step_ends_its_turn_max_tokens_even_when_steering_forced_a_later_step_that_stopped() -> None:
    # The harness sets the turn's reason from a step's finish and never resets it (L/loop.ts:320, 517-518).
    script: tuple[Action, ...] = (start(), SendPrompt(0, "go"), BeginStep(0), Steer(0, "more"), Compose(0), PreStep(0), Dispatch(0))
    world = play((*script, Reply(0, text="cut", max_tokens=True), PostStep(0), *step(0, "done")))
    assert event_of(world, "turn/end").field("reason") == FrozenMap({"kind": "max-tokens"})
    world = play((*turn(0, "again"),), world)  # the next turn starts afresh
    assert events_of(world)[-1].field("reason") == FrozenMap({"kind": "completed"})


@pytest.mark.spec("LOOP-8")
def test_steering_arriving_while_the_model_answers_forces_another_step() -> None:
    script: tuple[Action, ...] = (start(), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Steer(0, "and also"), Reply(0, text="answer"), PostStep(0))
    world = play(script)
    # The steered step is answered: the turn continues with step 2 whose request ends with the steering.
    assert world.instance(0).phase is Phase.STEP_BEGIN
    world = play(step(0, "second answer"), world)
    assert texts(world.requests[1].request.messages)[-2:] == ("assistant:answer", "user:and also")


@pytest.mark.spec("LOOP-8")
def test_steering_that_arrives_during_post_step_forces_another_step() -> None:
    script: tuple[Action, ...] = (start(), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, text="answer"), Steer(0, "more"), PostStep(0))
    world = play(script)
    assert world.instance(0).phase is Phase.STEP_BEGIN and TURN_END not in types(world)
    world = clean(play(step(0, "again"), world))
    assert [(r.turn, r.step) for r in world.requests] == [(1, 1), (1, 2)]
    assert texts(world.requests[1].request.messages)[-1] == "user:more"


# --- Compaction (LT/request-reconstruction.spec.ts:269, CBT:571, CBT:825, Addendum 7) ---


def _compacting_world(where: str, summary: str = "the gist") -> World:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<P>")),
        start(system="sys", tools=(tool("echo"),)),
        *turn(0, LONG_PROMPT, Reply(0, tool_calls=(ECHO_CALL,)), "done", compose=True),
        SendPrompt(0, "again"),
    )
    world = play(script)
    if where == "pre-step":
        return play((BeginStep(0), PreStep(0, compact=(0, 2), summaries=(summary,)), Dispatch(0), Reply(0, text="ok"), PostStep(0)), world)
    world = play((BeginStep(0), PreStep(0), Dispatch(0), Reply(0, text="ok"), PostStep(0, compact=(0, 2), summaries=(summary,))), world)
    return play(turn(0, "after"), world)


FRAMED = f"user:{CompactPolicy().preamble}\n\n<compacted-summary>|the gist|</compacted-summary>"


@pytest.mark.parametrize("where", ["pre-step", "post-step"])
@pytest.mark.spec("CMP-1", "CMP-2", "PFX-2")
def test_compaction_writes_the_replace_shape_and_no_header_and_the_next_request_is_prefix_then_summary(where: str) -> None:
    world = clean(_compacting_world(where))
    events = events_of(world)
    begin = event_of(world, COMPACT_START)
    summary, replacing, end = events[begin.seq + 1], events[begin.seq + 2], events[begin.seq + 3]
    assert (summary.type, replacing.type, end.type) == (COMPACT_SUMMARY, USER_MESSAGE, COMPACT_END)
    assert json_text(begin.data) == '{"turn":2}' and json_text(end.data) == '{"turn":2}'
    # Surface positions 0..2 are the long prompt, the tool-call answer and its result: seqs 1, 6, 8.
    assert json_text(summary.field("summary")) == '[{"type":"text","text":"the gist"}]'
    assert json_text(summary.field("shadowedRange")) == '{"start":1,"end":8}'
    assert json_text(summary.field("shadowedSeqs")) == "[1,6,8]"
    assert (summary.field("provider"), summary.field("model"), summary.field("maxTokens")) == ("mock", "mock-model", 8192)
    assert replacing.surface_op == Replace(1, 8)
    assert replacing.source_event_seqs == (begin.seq, begin.seq + 1, 1, 6, 8)
    assert json_text(replacing.field("source")) == '{"kind":"plugin","plugin":"compact"}'
    assert [reason for reason, _ in headers_of(world)] == [INITIAL]
    assert json_text(world.instance(0).prefix) == json_text(msgs("<P>"))
    after = loop_requests(world)[-1]
    assert texts(after.request.messages)[:2] == ("user:<P>", FRAMED)
    assert after.request.header.system == "sys"


@pytest.mark.spec("CMP-2", "CMP-6")
def test_the_summarizer_call_resends_the_prefix_is_not_a_loop_request_and_names_its_purpose() -> None:
    world = clean(_compacting_world("pre-step"))
    [aux] = [r for r in world.requests if not r.loop_request]
    assert texts(aux.request.messages)[0] == "user:<P>"
    assert texts(aux.request.messages)[1] == f"user:{LONG_PROMPT}" and texts(aux.request.messages)[-1] == f"user:{CompactPolicy().instruction}"
    assert len(aux.request.messages) == 5  # prefix + three shadowed projections + instruction
    wire = request_to_json(aux.request)
    assert tuple(wire) == ("provider", "model", "messages", "system", "tools", "maxTokens", "sessionId", "purpose")
    assert (wire["maxTokens"], wire["purpose"]) == (8192, "compaction")
    # Sent right after compact/start (CB/region.ts:116-128).
    assert events_of(world)[aux.log_length - 1].type == COMPACT_START


@pytest.mark.parametrize("where", ["pre-step", "post-step"])
@pytest.mark.spec("CMP-6", "CMP-2")
def test_a_summary_not_smaller_than_the_region_is_refused_and_the_turn_ends_in_error(where: str) -> None:
    world = play((start(), *turn(0, "go", "hey", compose=True), SendPrompt(0, "again"), BeginStep(0)))
    if where == "pre-step":
        world = clean(play((PreStep(0, compact=(0, 1), summaries=("S" * 40,)),), world))
    else:
        world = clean(play((PreStep(0), Dispatch(0), Reply(0, text="ok"), PostStep(0, compact=(0, 1), summaries=("S" * 40,))), world))
    tail = events_of(world)[-3 if where == "pre-step" else -4 :]
    framed = estimate_message(FrozenMap({"role": "user", "content": frame_summary(CompactPolicy(), (FrozenMap({"type": "text", "text": "S" * 40}),))}))
    error = f"summary is not smaller than the shadowed content ({framed} estimated framed tokens >= 18)"
    assert tail[0].type == COMPACT_START and json_text(tail[1].data) == json_text(FrozenMap({"turn": 2, "error": error}))
    assert json_text(tail[-1].data) == json_text(freeze({"turn": 2, "reason": {"kind": "error", "step": 1, "message": error}}))
    assert STEP_START not in turn_types(world, 2) or where == "post-step"
    assert len([r for r in world.requests if not r.loop_request]) == 1  # the summarizer was asked all the same


@pytest.mark.spec("CMP-4")
def test_a_range_that_splits_a_tool_call_from_its_result_is_refused_before_the_bracket() -> None:
    world = play((start(tools=(tool("echo"),)), *turn(0, LONG_PROMPT, Reply(0, tool_calls=(ECHO_CALL,)), "done", compose=True), SendPrompt(0, "again"), BeginStep(0)))
    world = clean(play((PreStep(0, compact=(0, 1)),), world))
    last = events_of(world)[-1]
    assert COMPACT_START not in turn_types(world, 2)
    assert last.field("reason") == freeze({"kind": "error", "step": 1, "message": "compactRegion: end seq 6 is not a balanced boundary (would split a step, or the step is still open)"})
    assert balanced_cuts(world.session("s1").log) == (True, True, False, True, True, True)


@pytest.mark.spec("CMP-5", "CMP-4", "TOK-3")
def test_pressure_at_post_step_compacts_the_head_and_keeps_a_priced_tail() -> None:
    # The shape of the recorded harness session compact-pressure: window 1000, threshold 800, tail 160.
    world = play((MountCompaction(CompactPolicy(context_window=1000)), start()))
    world = clean(play((SendPrompt(0, "a" * 800), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, text="b" * 800, stream=text_stream("b" * 800, usage={"inputTokens": 10, "outputTokens": 800})),
                        PostStep(0, summaries=("checkpoint summary",))), world))  # fmt: skip
    summary = event_of(world, COMPACT_SUMMARY)
    assert json_text(summary.field("shadowedSeqs")) == "[1]" and summary.field("shadowedTokenCount") == 208
    assert types(world)[-3:] == (COMPACT_END, STEP_END, TURN_END)
    below = play((MountCompaction(CompactPolicy(context_window=1100)), start()))
    below = clean(play((SendPrompt(0, "a" * 800), *step(0, Reply(0, text="b" * 800, stream=text_stream("b" * 800, usage={"inputTokens": 10, "outputTokens": 800})), compose=True)), below))
    assert COMPACT_START not in types(below)  # 810 < floor(1100 * 0.8)


@pytest.mark.spec("CMP-5")
def test_pressure_that_cannot_get_below_the_threshold_is_logged_and_the_turn_goes_on() -> None:
    world = play((MountCompaction(CompactPolicy(context_window=1000, compaction_retries=0)), start()))
    long_reply = Reply(0, text="b" * 800, stream=text_stream("b" * 800, usage={"inputTokens": 900, "outputTokens": 800}))
    world = clean(play((SendPrompt(0, "a" * 800), *step(0, long_reply, compose=True)), world))
    assert types(world).count(COMPACT_END) == 1 and event_of(world, TURN_END).field("reason") == freeze({"kind": "completed"})
    assert measure(world.session("s1").log).total >= 800  # one attempt, still above: the service threw, the listener logged it


@pytest.mark.spec("CMP-7", "SURF-8")
def test_a_pre_step_listener_may_replace_the_surface_itself_without_compact_events() -> None:
    manual = FrozenMap({"kind": "plugin", "plugin": "manual"})
    world = play((start(), *turn(0, "go", "hey", compose=True), SendPrompt(0, "again"), BeginStep(0)))
    world = clean(play((PreStep(0, replace=PlainReplace(0, 1, "earlier: go/hey", manual)), Dispatch(0), Reply(0, text="ok"), PostStep(0)), world))
    replacing = next(e for e in events_of(world) if e.field("source") == manual)
    assert replacing.surface_op == Replace(1, 6) and replacing.source_event_seqs == (1, 6) and COMPACT_START not in types(world)
    assert texts(loop_requests(world)[-1].request.messages) == ("user:earlier: go/hey", "user:again")


# --- The loop as a whole ---


@pytest.mark.spec("REC-2", "REC-1")
def test_every_request_is_the_one_its_final_log_reconstructs() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<P>")),
        start(system="sys", tools=(tool("echo"),)),
        *turn(0, "go", Reply(0, tool_calls=(ECHO_CALL,)), "done", compose=True),
        SendPrompt(0, "again"), *step(0, config=LlmCallConfig("mock", "mock-model", "max", temperature=0.5, stop=("END",))),
        Resume("s1", "main", system="sys 2"), *turn(1, "resumed", compose=True),
    )  # fmt: skip
    world = clean(play(script))
    assert len(world.requests) == 4
    for sent in world.requests:
        rebuilt = reconstruct_request(world.session(sent.session_id).log, sent.turn, sent.step, sent.session_id)
        assert not isinstance(rebuilt, Exception) and json_text(request_to_json(rebuilt)) == json_text(request_to_json(sent.request))  # type: ignore[arg-type]


# --- The inbox: prompts and steering the running turn does not take ---


def trigger_texts(world: World, session_id: str = "s1") -> tuple[str, ...]:
    """Return the prompt of each turn (its first ``user/message`` or ``prompt/blocked``), in turn order."""
    events, out = events_of(world, session_id), []
    for start_event in (e for e in events if e.type == TURN_START):
        first = next(e for e in events[start_event.seq :] if e.type in (USER_MESSAGE, PROMPT_BLOCKED))
        content = first.field("content")
        assert isinstance(content, tuple) and isinstance(content[-1], FrozenMap)
        out.append(str(content[-1]["text"]))
    return tuple(out)


@pytest.mark.spec("LOOP-13", "LOOP-4")
def test_a_prompt_sent_during_a_turn_waits_and_opens_the_next_turn_when_it_ends() -> None:
    world = play((start(), SendPrompt(0, "first"), BeginStep(0), Compose(0), SendPrompt(0, "second"), SendPrompt(0, "third", blocked=True)))
    assert types(world) == (TURN_START, USER_MESSAGE) and world.instance(0).queued == (SendPrompt(0, "second"), SendPrompt(0, "third", blocked=True))
    world = clean(play((PreStep(0), Dispatch(0), Reply(0, text="one"), PostStep(0)), world))
    # turn/end of turn 1, then turn 2 opens at once under the waiting prompt; the blocked one waits behind it.
    assert turn_types(world, 1)[-1] == TURN_END and types(world)[-2:] == (TURN_START, USER_MESSAGE)
    assert world.instance(0).phase is Phase.STEP_BEGIN and world.instance(0).queued == (SendPrompt(0, "third", blocked=True),)
    world = clean(play(step(0, "two"), world))
    assert turn_types(world, 3) == (TURN_START, PROMPT_BLOCKED, TURN_END) and world.instance(0).phase is Phase.IDLE
    assert trigger_texts(world) == ("first", "second", "third") and [r.turn for r in world.requests] == [1, 2]


@pytest.mark.spec("LOOP-13")
def test_steering_a_turn_ends_without_draining_becomes_a_prompt_after_the_queued_ones() -> None:
    world = play((start(), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Steer(0, "steer me"), SendPrompt(0, "queued")))
    world = clean(play((Reply(0, failure="overloaded"),), world))
    assert reason_of(world, index=0)["kind"] == "error" and STEERING_MESSAGE not in types(world)
    assert world.instance(0).queued == (SendPrompt(0, "steer me"),)
    world = clean(play((*step(0, "q"), *step(0, "s")), world))
    assert trigger_texts(world) == ("go", "queued", "steer me") and world.instance(0).phase is Phase.IDLE


@pytest.mark.spec("LOOP-13", "LOOP-6")
def test_a_cancel_drops_what_waits_and_steering_after_it_opens_a_fresh_turn() -> None:
    script: tuple[Action, ...] = (
        start(), SendPrompt(0, "go"), BeginStep(0), Steer(0, "dropped steer"), SendPrompt(0, "dropped prompt"),
        Cancel(0), Cancel(0), Steer(0, "after the cancel"), Compose(0),
    )  # fmt: skip
    world = clean(play(script))
    assert reason_of(world, index=0)["kind"] == "aborted" and trigger_texts(world) == ("go", "after the cancel")
    assert world.instance(0).phase is Phase.STEP_BEGIN and world.instance(0).queued == ()


@pytest.mark.spec("LOOP-13")
def test_idle_a_steer_is_an_ordinary_turn_and_a_cancel_does_nothing() -> None:
    idle = play((start(), *turn(0, "one", compose=True)))
    assert apply(idle, Cancel(0)) == idle
    world = clean(play((Steer(0, "wake up"), *step(0, "ok")), idle))
    assert trigger_texts(world) == ("one", "wake up") and STEERING_MESSAGE not in types(world)
    assert event_of(world, TURN_START, index=1).field("trigger") == event_of(world, TURN_START).field("trigger")


@pytest.mark.spec("LOOP-13", "LOOP-6")
def test_a_disposed_driver_never_opens_the_waiting_turn() -> None:
    world = clean(play((start(), SendPrompt(0, "go"), BeginStep(0), SendPrompt(0, "later"), Dispose(0), Compose(0))))
    assert reason_of(world)["kind"] == "disposed" and trigger_texts(world) == ("go",)
    assert world.instance(0).phase is Phase.DISPOSED and world.instance(0).queued == ()


@pytest.mark.spec("LOOP-1")
def test_an_action_outside_its_guard_is_refused() -> None:
    world = play((start(),))
    for action in (Dispatch(0), Compose(0), BeginStep(0), Reply(0), RunTools(0), PostStep(0), SendPrompt(5, "x"), Steer(5, "x"), Cancel(5), Create("main", "s1")):
        assert not enabled(world, action)
        with pytest.raises(icontract.ViolationError, match="LOOP-1"):
            apply(world, action)
    assert not enabled(play((SendPrompt(0, "go"), BeginStep(0), Compose(0)), world), PreStep(0, compact=(0, 1)))  # one node only


@pytest.mark.spec("LOOP-2")
def test_the_loop_only_appends_to_logs_and_to_the_requests_sent() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<P>")), start(tools=(tool("echo"),)),
        *turn(0, LONG_PROMPT, Reply(0, tool_calls=(ECHO_CALL,)), "done", compose=True),
        SendPrompt(0, "again"), BeginStep(0), PreStep(0, compact=(0, 2)), Dispatch(0), Reply(0, text="ok"), PostStep(0),
        ForkDrive("s1", "s2", None, "main"), Inject(1, "in the child"),
    )  # fmt: skip
    world = World()
    for action in script:
        after = apply(world, action)
        for session in world.sessions:
            assert after.session(session.id).log.events[: len(session.log.events)] == session.log.events
        assert after.requests[: len(world.requests)] == world.requests
        world = after
    clean(world)


@pytest.mark.spec("PFX-1")
def test_no_composed_prefix_message_ever_becomes_history() -> None:
    world = clean(play((*_first_turn(), Resume("s1", "main"), *turn(1, "again", compose=True), ForkDrive("s1", "s2", None, "main"), *turn(2, "x", compose=True))))
    for session_id in ("s1", "s2"):
        history = {json_text(m) for m in derive_messages(world.session(session_id).log)}
        assert json_text(msg("<P>")) not in history


# --- Appendix B: the worked trace end to end ---


@pytest.mark.spec("LOOP-3", "LOOP-4", "PFX-3", "PFX-5", "REC-1", "REC-2", "TOK-1")
def test_the_worked_trace_of_appendix_b() -> None:
    contributor = scripted("ctx", Prepend(msgs("P")), Prepend(msgs("P2")))
    instance_one: tuple[Action, ...] = (
        Register(contributor),
        start(tools=(tool("echo"),)),
        SendPrompt(0, "go"),
        *step(0, Reply(0, tool_calls=(ECHO_CALL,)), compose=True, outputs=("ping",)),
        *step(0, "done"),
    )
    world = play(instance_one)
    assert types(world) == (
        TURN_START, USER_MESSAGE, STEP_START, REQUEST_HEADER, "assistant/chunk", "assistant/chunk", "assistant/message",
        "tool/call", "tool/result", STEP_END, STEP_START, "assistant/chunk", "assistant/chunk", "assistant/message",
        STEP_END, TURN_END,
    )  # fmt: skip
    events = events_of(world)
    assert events[3].field("reason") == INITIAL
    assert header_json(world, 0) == json_text(header_to_json(headers_of(world)[0][1]))
    assert json_text(headers_of(world)[0][1].message_prefix) == json_text(msgs("P"))
    assert events[6].source_event_seqs == (4, 5) and events[8].source_event_seqs == (7,)
    assert world.session("s1").log.surface.nodes == (1, 6, 8, 13)
    one, two = world.requests
    assert texts(one.request.messages) == ("user:P", "user:go")
    assert texts(two.request.messages)[:2] == ("user:P", "user:go") and len(two.request.messages) == 4
    # Post-step of step 1 priced seq 3's header (with P) once, plus the surface.
    measured = marks(world, 0, "measured")[0]
    at = boundary_log(world.session("s1").log, measured.at)
    assert measured.value == estimate_header(headers_of(world)[0][1]) + surface_tokens(at)

    # Instance 2, after a restart: the contributor now returns [P2].
    world = clean(play((Resume("s1", "main", tools=(tool("echo"),)), *turn(1, "again", compose=True)), world))
    resumed = events_of(world)[16:]
    assert [e.type for e in resumed][:4] == [TURN_START, USER_MESSAGE, STEP_START, REQUEST_HEADER]
    assert json_text(resumed[0].data) == '{"turn":2,"trigger":{"kind":"message","source":{"kind":"user"}}}'
    assert resumed[3].field("reason") == RESUME
    assert json_text(headers_of(world)[1][1].message_prefix) == json_text(msgs("P2"))
    assert json_text(headers_of(world)[0][1].message_prefix) == json_text(msgs("P"))  # seq 3 still holds P
    assert events_of(world)[3] == events[3]
    three = world.requests[2]
    assert texts(three.request.messages)[0] == "user:P2" and "user:P" not in texts(three.request.messages)
    assert texts(three.request.messages)[1:] == texts(derive_messages(world.session("s1").log))[: len(three.request.messages) - 1]


@pytest.mark.spec("D-17", "LOOP-1", "STRM-1", "STRM-2")
def test_the_inputs_outside_the_harness_types_are_outside_the_model_domain() -> None:
    running = play((start(), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0)))
    assert enabled(running, SendPrompt(0, "another"))  # queued (LOOP-13)
    assert not enabled(running, Inject(0, "note", FrozenMap({"plugin": "notes"})))  # no kind: not a MessageSource
    unknown = (FrozenMap({"type": "partial", "index": 0}),)
    assert not enabled(running, Reply(0, stream=unknown))  # not a StreamChunk
    left_open = (FrozenMap({"type": "block-start", "index": 0, "blockType": "image"}),)
    assert not enabled(running, Reply(0, stream=left_open))  # no block deltas can build
    assert enabled(running, Reply(0, text="ok"))


# --- the world's own contracts (world.py): each shown able to fail by a broken twin under the same contracts ---


def _twin(original: object) -> Callable[[Callable[..., object]], Callable[..., object]]:
    from proofs.bugs_detected import broken_twin

    return lambda variant: broken_twin(original, variant)


def _two_sessions() -> World:
    from prefix_model.loop.semantics import HARNESS
    from prefix_model.loop.variants import run_witness

    world = run_witness(HARNESS)
    assert len(world.sessions) >= 2 and len(world.instances) >= 2
    return world


@pytest.mark.spec("LOOP-1", "FORK-7", "LOG-4")
def test_the_worlds_lookups_name_what_exists_and_return_what_they_name() -> None:
    world = _two_sessions()
    for bad in (lambda: world.instance(len(world.instances)), lambda: world.instance(-1), lambda: world.log_of(-1)):
        with pytest.raises(icontract.ViolationError, match="LOOP-1: only an instance of the world is looked up"):
            bad()
    with pytest.raises(icontract.ViolationError, match="LOOP-1: only a session of the world is looked up"):
        world.session("no-such-session")
    with pytest.raises(icontract.ViolationError, match="LOOP-1: an instance is replaced or is the next one created"):
        world.with_instance(Instance(len(world.instances) + 1, "main", "s1", AgentOptions()))

    first_instance = _twin(World.instance)(lambda self, instance_id: self.instances[0])
    with pytest.raises(icontract.ViolationError, match="LOOP-1: instance n is the n-th created"):
        first_instance(world, 1)
    first_session = _twin(World.session)(lambda self, session_id: self.sessions[0])
    with pytest.raises(icontract.ViolationError, match="FORK-7: session ids are unique"):
        first_session(world, world.sessions[1].id)
    other_log = _twin(World.log_of)(lambda self, instance_id: self.sessions[-1].log)
    with pytest.raises(icontract.ViolationError, match="LOG-4: an instance reads and writes the log of the session it drives"):
        other_log(world, 0)


@pytest.mark.spec("LOG-4", "LOOP-1")
def test_the_worlds_updates_keep_everything_else() -> None:
    world = _two_sessions()
    session = replace(world.sessions[1], log=world.sessions[0].log)
    only = _twin(World.with_session)(lambda self, session: replace(self, sessions=tuple(reversed([session if s.id == session.id else s for s in self.sessions]))))
    with pytest.raises(icontract.ViolationError, match="LOG-4: every other session is kept, in its place"):
        only(world, session)
    unchanged = _twin(World.with_session)(lambda self, session: self)
    with pytest.raises(icontract.ViolationError, match="LOG-4: the session is the world's now"):
        unchanged(world, session)
    instance = replace(world.instances[1], system="changed")
    swapped = _twin(World.with_instance)(lambda self, instance: self)
    with pytest.raises(icontract.ViolationError, match="LOOP-1: the instance is the world's now"):
        swapped(world, instance)
    dropped = _twin(World.with_instance)(lambda self, instance: replace(self, instances=tuple(instance if i.id == instance.id else replace(i, system="lost") for i in self.instances)))
    with pytest.raises(icontract.ViolationError, match="LOOP-1: every other instance is kept"):
        dropped(world, instance)


@pytest.mark.spec("LOOP-10", "DER-2", "PFX-8", "ENC-2")
def test_the_worlds_values_state_their_rules() -> None:
    effort = _twin(AgentOptions.config)(lambda self: LlmCallConfig(self.provider, self.model, "high"))
    with pytest.raises(icontract.ViolationError, match="LOOP-10: an instance's first request starts from its agent options"):
        effort(AgentOptions())
    rerouted = _twin(AgentOptions.config)(lambda self: LlmCallConfig(self.model, self.provider))
    with pytest.raises(icontract.ViolationError, match="LOOP-10"):
        rerouted(AgentOptions("p", "m"))
    assert AgentOptions("p", "m").config() == LlmCallConfig("p", "m")
    assistant = _twin(text_message)(lambda text, role="user": FrozenMap({"role": "assistant", "content": (FrozenMap({"type": "text", "text": text}),)}))
    with pytest.raises(icontract.ViolationError, match="DER-2: a message is"):
        assistant("hi", "user")
    empty = _twin(text_message)(lambda text, role="user": FrozenMap({"role": role, "content": ()}))
    with pytest.raises(icontract.ViolationError, match="DER-2: its content is one text block"):
        empty("hi", "user")
    listener = Listener("l", None, (Prepend(()), Append(())), calls=5)
    first = _twin(Listener.next_call)(lambda self: self.script[0])
    with pytest.raises(icontract.ViolationError, match="PFX-8: past the end of its script a listener repeats its last call"):
        first(listener)
    foreign = _twin(Listener.next_call)(lambda self: Throw())
    with pytest.raises(icontract.ViolationError, match="PFX-8: a listener does what its script says"):
        foreign(replace(listener, calls=0))
    open_step = _twin(Instance.step_open)(lambda self: True)
    with pytest.raises(icontract.ViolationError, match="ENC-2: a step is open only inside an open turn"):
        open_step(Instance(0, "main", "s1", AgentOptions()))
