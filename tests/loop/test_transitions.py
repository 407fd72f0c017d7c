"""§10.1 the guards (``enabled``), clause by clause, and the instance state a transition leaves.

``test_loop.py`` plays what the loop does; this file probes where it refuses. Each guard is a
conjunction of clauses, so each refused case breaks exactly one clause of an action that is
otherwise enabled (the case beside it, ``True``): a guard that skipped that clause, or joined its
clauses with ``or``, would accept it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from prefix_model.core.events import APPEND, COMPACT_END, COMPACT_START, COMPACT_SUMMARY, REQUEST_HEADER, STEP_START, TURN_END, TURN_START, USER_MESSAGE
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, freeze, json_text
from prefix_model.core.log import EMPTY_LOG
from prefix_model.loop.actions import Action, BeginStep, Cancel, Compose, Create, Dispatch, Dispose, ForkDrive, Inject, MountCompaction
from prefix_model.loop.actions import MutateContribution, PlainReplace, PostStep, PreStep, PromptContext, Register, Reply, Resume, RunTools, SendPrompt, Steer
from prefix_model.loop.compaction import CompactPolicy
from prefix_model.loop.transitions import enabled, next_turn, run
from prefix_model.loop.variants import semantics_of
from prefix_model.loop.world import AgentOptions, InjectThenPrepend, Listener, Phase, Prepend, Throw, World

from tests.loop_scripts import LONG_PROMPT, events_of, marks, msgs, play, prepend, start, thrower, tool, turn, types

UNSAFE = MAX_SAFE_INTEGER + 2  # 2^53 + 1: no double holds it, so it is not a JSON value (JSON-3)
NOT_JSON = FrozenMap({"kind": "plugin", "n": UNSAFE})
NO_KIND = FrozenMap({"plugin": "manual"})  # a message source needs a string kind
SOURCE = FrozenMap({"kind": "plugin", "plugin": "workspace"})


def _idle() -> World:
    return play((start(), Register(prepend("ctx", "<P>"))))


def _answered() -> World:
    """Instance 0 idle over s1 after one turn: two surface nodes (the prompt and the reply)."""
    return play(turn(0, "go", compose=True), _idle())


def _at_pre_step() -> World:
    """Instance 0 at pre-step of its second turn: three nodes."""
    return play((SendPrompt(0, "again"), BeginStep(0)), _answered())


def _at_post_step() -> World:
    return play(turn(0, "go", compose=True)[:-1], _idle())


CASES: list[tuple[str, Callable[[], World], Action, bool]] = [
    # PreStep: the listener's own replacement (positions, then its source), then the service's range.
    ("replace", _at_pre_step, PreStep(0, replace=PlainReplace(0, 1, "mine")), True),
    ("replace without a kind", _at_pre_step, PreStep(0, replace=PlainReplace(0, 1, "mine", NO_KIND)), False),
    ("replace reversed", _at_pre_step, PreStep(0, replace=PlainReplace(1, 0, "mine")), False),
    ("replace past the end", _at_pre_step, PreStep(0, replace=PlainReplace(0, 3, "mine")), False),
    ("compact", _at_pre_step, PreStep(0, compact=(0, 1)), True),
    ("compact reversed", _at_pre_step, PreStep(0, compact=(1, 0)), False),
    ("compact before the start", _at_pre_step, PreStep(0, compact=(-1, 0)), False),
    ("compact what the replacement removed", _at_pre_step, PreStep(0, replace=PlainReplace(0, 1, "mine"), compact=(1, 2)), False),
    ("post-step compact", _at_post_step, PostStep(0, compact=(0, 1)), True),
    ("post-step compact reversed", _at_post_step, PostStep(0, compact=(1, 0)), False),
    ("post-step compact past the end", _at_post_step, PostStep(0, compact=(0, 2)), False),
    # SendPrompt: each context's source and meta.
    ("contexts", _idle, SendPrompt(0, "x", contexts=(PromptContext("c", meta=FrozenMap({"k": 1})),), prompt_prefix=(PromptContext("p"),)), True),
    ("context meta not JSON", _idle, SendPrompt(0, "x", contexts=(PromptContext("c", meta=NOT_JSON),)), False),
    ("prefix context without a kind", _idle, SendPrompt(0, "x", prompt_prefix=(PromptContext("p", NO_KIND),)), False),
    ("prompt to no instance", _idle, SendPrompt(1, "x"), False),
    # SendPrompt: a block reason is the block decision's, so only a blocked prompt gives one.
    ("blocked with its reason", _idle, SendPrompt(0, "x", blocked=True, block_reason="policy: no shell"), True),
    ("a reason without a block", _idle, SendPrompt(0, "x", block_reason="policy: no shell"), False),
    # Create, ForkDrive, Resume: a new session id and tools the log can record; the options are a route, maybe empty.
    ("create", _idle, Create("main", "s2", tools=(tool("echo"),)), True),
    ("create tools not JSON", _idle, Create("main", "s2", tools=(UNSAFE,)), False),
    ("create without a model", _idle, Create("main", "s2", AgentOptions(model="")), True),  # its requests fail until one is named
    ("create over a session", _idle, Create("main", "s1"), False),
    ("fork", _answered, ForkDrive("s1", "s2", None, "main"), True),
    ("fork from no session", _answered, ForkDrive("s9", "s2", None, "main"), False),
    ("fork tools not JSON", _answered, ForkDrive("s1", "s2", None, "main", tools=(UNSAFE,)), False),
    ("fork without a provider", _answered, ForkDrive("s1", "s2", None, "main", AgentOptions(provider="")), True),
    ("fork onto its own id", _answered, ForkDrive("s1", "s1", None, "main"), False),
    ("fork past the log", _answered, ForkDrive("s1", "s2", 99, "main"), False),
    ("resume", _answered, Resume("s1", "main"), True),
    ("resume a disposed driver's session", lambda: play((Dispose(0),), _answered()), Resume("s1", "main"), True),
    ("resume while a driver runs", _at_pre_step, Resume("s1", "main"), False),
    ("resume no session", _answered, Resume("s9", "main"), False),
    ("resume tools not JSON", _answered, Resume("s1", "main", tools=(UNSAFE,)), False),
    # Register and MutateContribution: a named, scripted listener of JSON messages.
    ("register", _idle, Register(prepend("other", "<Q>")), True),
    ("register a name twice", _idle, Register(prepend("ctx", "<Q>")), False),
    ("register messages not JSON", _idle, Register(Listener("other", None, (Prepend((NOT_JSON,)),))), False),
    # A composing listener's inject: its source, when given, has a kind; its meta is JSON (as for Inject).
    ("register an inject with source and meta", _idle, Register(Listener("other", None, (InjectThenPrepend("n", msgs("<Q>"), SOURCE, FrozenMap({"k": 1})),))), True),
    ("register an inject without a kind", _idle, Register(Listener("other", None, (InjectThenPrepend("n", msgs("<Q>"), NO_KIND),))), False),
    ("register an inject meta not JSON", _idle, Register(Listener("other", None, (InjectThenPrepend("n", msgs("<Q>"), None, NOT_JSON),))), False),
    ("mutate", _idle, MutateContribution("ctx", msgs("<Q>")), True),
    ("mutate no listener", _idle, MutateContribution("nobody", msgs("<Q>")), False),
    ("mutate messages not JSON", _idle, MutateContribution("ctx", (NOT_JSON,)), False),
    # Inject: a source with a kind, JSON meta.
    ("inject", _idle, Inject(0, "note"), True),
    ("inject with source and meta", _idle, Inject(0, "note", FrozenMap({"kind": "plugin", "plugin": "notes"}), FrozenMap({"k": 1})), True),
    ("inject meta not JSON", _idle, Inject(0, "note", None, NOT_JSON), False),
    ("inject source without a kind", _idle, Inject(0, "note", NO_KIND), False),
]


@pytest.mark.spec("LOOP-1")
@pytest.mark.parametrize(("case", "world", "action", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_clause_of_a_guard_refuses_on_its_own(case: str, world: Callable[[], World], action: Action, expected: bool) -> None:
    assert enabled(world(), action) is expected, case


@pytest.mark.spec("LOOP-1")
def test_what_is_no_action_is_never_enabled() -> None:
    assert enabled(_idle(), "SendPrompt(0, 'x')") is False  # type: ignore[arg-type]


@pytest.mark.spec("FORK-6", "LOOP-12")
def test_a_fork_and_a_resume_drive_their_new_instance_with_the_system_and_tools_they_name() -> None:
    echo = (tool("echo"),)
    forked = play((ForkDrive("s1", "s2", None, "main", system="the child's", tools=echo),), _answered())
    resumed = play((Resume("s1", "main", system="the restart's", tools=echo),), _answered())
    for world, session_id, system in ((forked, "s2", "the child's"), (resumed, "s1", "the restart's")):
        new = world.instances[-1]
        assert (new.id, new.session_id, new.system, new.tools) == (1, session_id, system, echo)


@pytest.mark.spec("CMP-2", "LOOP-2")
def test_the_summarizer_call_is_sent_by_its_instance_in_its_step_once_the_bracket_opened() -> None:
    base = play((start(), *turn(0, LONG_PROMPT, compose=True), start("other", "s2"), SendPrompt(0, "again"), BeginStep(0)))
    landed = play((PreStep(0, compact=(0, 1), summaries=("short",)),), base)
    (summarizer,) = [r for r in landed.requests if not r.loop_request]
    opened = types(landed).index(COMPACT_START)
    assert (summarizer.instance_id, summarizer.session_id, summarizer.turn, summarizer.step, summarizer.log_length) == (0, "s1", 2, 1, opened + 1)
    assert len(marks(landed, 0, "compacted")) == 1
    refused = play((PreStep(0, compact=(0, 1), summaries=("  ",)),), base)  # a blank summary: the bracket closes with the error
    assert len([r for r in refused.requests if not r.loop_request]) == 1 and marks(refused, 0, "compacted") == ()


@pytest.mark.spec("LOOP-4")
def test_the_next_turn_follows_the_last_turn_start_not_the_last_event() -> None:
    started = EMPTY_LOG.append(TURN_START, freeze({"turn": 3, "trigger": {"kind": "message"}}))
    answered = started.append(USER_MESSAGE, freeze({"content": [], "source": {"kind": "user"}}), surface_op=APPEND)
    assert (next_turn(EMPTY_LOG), next_turn(started), next_turn(answered)) == (1, 4, 4)
    unnumbered = EMPTY_LOG.append(TURN_START, freeze({"turn": "three", "trigger": {"kind": "message"}}))
    assert next_turn(unnumbered) == 1  # a turn the log did not number counts as none


@pytest.mark.spec("LOOP-1")
def test_run_applies_what_is_enabled_under_its_semantics_from_its_world() -> None:
    """``run`` (the variants' driver) skips a disabled action where ``play`` would fail on it."""
    late = semantics_of("compose-after-pre-step")  # its step goes BeginStep -> PreStep: Compose is not enabled there
    script = (Dispatch(0), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0))
    base = play((start(), Register(prepend("ctx", "<P>"))))
    assert run(script, late, base) == play((SendPrompt(0, "go"), BeginStep(0), PreStep(0), Dispatch(0)), base, late)
    assert run(script, world=base) == play(script[1:], base)  # the harness composes before pre-step
    assert run((start(),)) == play((start(),))


@pytest.mark.spec("LOOP-6", "TOK-1")
def test_a_post_step_under_a_cancel_prices_and_compacts_nothing() -> None:
    replied = play((start(), *turn(0, LONG_PROMPT, LONG_PROMPT, compose=True)[:-1], MountCompaction(CompactPolicy(context_window=200))))
    uncancelled = play((PostStep(0),), replied)
    assert marks(uncancelled, 0, "measured") and COMPACT_START in types(uncancelled)  # pressed: it measures and compacts
    cancelled = play((Cancel(0), PostStep(0, compact=(0, 1))), replied)
    assert marks(cancelled, 0, "measured") == marks(replied, 0, "measured") and COMPACT_START not in types(cancelled)
    assert json_text(events_of(cancelled)[-1].field("reason")) == '{"kind":"aborted"}'


@pytest.mark.spec("CMP-1", "VAR-1")
def test_a_design_that_logs_a_header_at_compaction_writes_it_just_before_compact_end_of_a_landed_one() -> None:
    """The choice point ``compaction_header`` (§13): where the loop puts what a design returns there."""
    design = semantics_of("compaction-logs-header")
    base = play((start(), *turn(0, LONG_PROMPT, LONG_PROMPT, compose=True), SendPrompt(0, "again"), BeginStep(0)), semantics=design)
    before = len(types(base))
    landed = play((PreStep(0, compact=(0, 1), summaries=("short",)),), base, design)
    assert types(landed)[before:] == (COMPACT_START, COMPACT_SUMMARY, USER_MESSAGE, REQUEST_HEADER, COMPACT_END, STEP_START)
    refused = play((PreStep(0, compact=(0, 1), summaries=("  ",)),), base, design)
    assert types(refused)[before:] == (COMPACT_START, COMPACT_END, TURN_END)  # a refused compaction logs none


@pytest.mark.spec("LOOP-3", "VAR-1")
def test_a_design_composing_at_pre_step_ends_the_turn_there_when_a_listener_throws() -> None:
    design = semantics_of("compose-after-pre-step")
    world = play((start(), Register(thrower("boom")), SendPrompt(0, "go"), BeginStep(0), PreStep(0)), semantics=design)
    assert types(world) == (TURN_START, USER_MESSAGE, TURN_END) and world.instance(0).phase is Phase.IDLE
    assert json_text(events_of(world)[-1].field("reason")) == '{"kind":"error","step":1,"message":"session-prefix listener boom threw"}'


@pytest.mark.spec("LOOP-6")
@pytest.mark.parametrize(("interrupt", "kind"), [(Cancel(0), "aborted"), (Dispose(0), "disposed")])
def test_a_batch_met_by_a_cancel_records_abort_results_and_runs_post_step_first(interrupt: Action, kind: str) -> None:
    calls = (("c1", "echo", "{}"), ("c2", "echo", "{}"))
    head = (start(tools=(tool("echo"),)), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=calls))
    world = play((*head, interrupt, RunTools(0, ("x", "y"))))
    results = [e for e in world.log_of(0).events if e.type == "tool/result"]
    assert [json_text(e.data) for e in results] == [
        '{"turn":1,"step":1,"callId":"c1","content":[{"type":"text","text":"Error: tool call aborted"}],"isError":true,'
        '"error":{"name":"AbortError","code":"ABORTED"}}',
        '{"turn":1,"step":1,"callId":"c2","content":[{"type":"text","text":"Error: tool call aborted before dispatch"}],"isError":true,'
        '"error":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}}',
    ]
    assert world.instance(0).phase is Phase.POST_STEP  # post-step runs before the checkpoint
    world = play((PostStep(0),), world)
    assert types(world)[-2:] == ("step/end", "turn/end") and json_text(world.log_of(0).events[-1].data) == f'{{"turn":1,"reason":{{"kind":"{kind}"}}}}'
    untouched = play((*head, RunTools(0, ("x", "y"))))
    assert [e.field("isError") for e in untouched.log_of(0).events if e.type == "tool/result"] == [False, False]


# --- §10.1's guard table: one row per action of the language ---


def guard_rows(text: str) -> list[str]:
    """Return the action named by each row of §10.1's `action | enabled when` table, in order."""
    section = text[text.index("\n### 10.1 Transitions") :]
    section = section[: section.index("\n- **LOOP-1**")]
    return re.findall(r"^\| `(\w+)` \| (?=\S)", section, re.MULTILINE)


@pytest.mark.spec("LOOP-1")
def test_every_action_of_the_language_has_one_guard_row_in_the_spec() -> None:
    from pathlib import Path
    from typing import get_args

    spec = (Path(__file__).resolve().parents[2] / "spec" / "SPEC.md").read_text(encoding="utf-8")
    actions = [cls.__name__ for cls in get_args(Action)]
    rows = guard_rows(spec)
    assert sorted(rows) == sorted(actions) and len(rows) == len(set(rows))
    # The check can fail: a row left out is missed.
    assert sorted(guard_rows(spec.replace("| `SetTools` |", "| SetTools |"))) != sorted(actions)


@pytest.mark.spec("LOOP-5")
def test_a_blocked_prompt_logs_its_hooks_own_reason_on_prompt_blocked_and_turn_end() -> None:
    world = play((SendPrompt(0, "rm -rf /", blocked=True, block_reason="policy: no shell"),), _idle())
    blocked, end = events_of(world)[-2:]
    assert json_text(blocked.data) == '{"content":[{"type":"text","text":"rm -rf /"}],"source":{"kind":"user"},"reason":"policy: no shell"}'
    assert json_text(end.field("reason")) == '{"kind":"rejected","reason":"policy: no shell"}'
    plain = events_of(play((SendPrompt(0, "rm -rf /", blocked=True),), _idle()))
    assert plain[-2].field("reason") == "blocked"  # no reason of its own: the model's


@pytest.mark.spec("PFX-9")
def test_a_listener_that_throws_its_own_error_ends_the_turn_with_its_message_chain() -> None:
    own = Listener("net", None, (Throw("prefix fetch failed", ("connect ECONNREFUSED",)),))
    world = play((start(), Register(own), SendPrompt(0, "go"), BeginStep(0), Compose(0)))
    assert json_text(events_of(world)[-1].field("reason")) == '{"kind":"error","step":1,"message":"prefix fetch failed: connect ECONNREFUSED"}'


@pytest.mark.spec("PFX-10", "LOOP-7")
def test_a_composing_listeners_inject_carries_its_own_source_and_meta() -> None:
    own = Listener("ws", None, (InjectThenPrepend("workspace note", msgs("<W>"), SOURCE, FrozenMap({"k": 1})),))
    world = play((start(), Register(own), SendPrompt(0, "go"), BeginStep(0), Compose(0)))
    injected = events_of(world)[-1]
    assert injected.type == USER_MESSAGE and injected.surface_op == APPEND
    assert json_text(injected.data) == '{"content":[{"type":"text","text":"workspace note"}],"source":{"kind":"plugin","plugin":"workspace"},"meta":{"k":1}}'
    default = events_of(play((start(), Register(Listener("ws", None, (InjectThenPrepend("n", msgs("<W>")),))), SendPrompt(0, "go"), BeginStep(0), Compose(0))))
    assert json_text(default[-1].data) == '{"content":[{"type":"text","text":"n"}],"source":{"kind":"plugin","plugin":""}}'


@pytest.mark.spec("FORK-9", "LOOP-1")
def test_a_session_whose_drivers_are_all_disposed_cannot_be_forked_until_a_resume_drives_it() -> None:
    """Found by prefix-model fuzz through the real harness: a disposed session's store entry is gone (S/index.ts:1031-1035)."""
    world = run((Create("main", "s1"), Dispose(0)))
    assert not enabled(world, ForkDrive("s1", "s2", None, "main"))  # an empty log, its one driver disposed
    busy = run((Create("main", "s1"), Inject(0, "note"), Dispose(0)))
    assert busy.session("s1").log.events and not enabled(busy, ForkDrive("s1", "s2", None, "main"))  # events do not keep it
    resumed = run((Resume("s1", "main"),), world=busy)
    assert enabled(resumed, ForkDrive("s1", "s2", None, "main"))
    assert enabled(run((Create("main", "s1"),)), ForkDrive("s1", "s2", None, "main"))  # live and empty: forks to an empty child


@pytest.mark.spec("LOOP-6")
def test_a_dispose_in_a_turn_drops_the_steering_waiting_for_a_checkpoint() -> None:
    """Found by prefix-model fuzz through the real harness (seed 11, script 2778): disposal clears the inbox, steering
    included (L/agent.ts:496-497), so the turn winds down with no steering/message."""
    world = run((Create("main", "s1"), SendPrompt(0, "go"), BeginStep(0), Steer(0, "late"), Dispose(0)))
    assert world.instance(0).disposed and world.instance(0).turn_open and world.instance(0).steering == ()
    ended = run((Compose(0),), world=world)
    assert "steering/message" not in types(ended) and events_of(ended)[-1].type == TURN_END


@pytest.mark.spec("FORK-9", "LOOP-1")
def test_a_session_whose_disposed_driver_is_still_in_its_turn_can_be_forked_until_the_turn_ends() -> None:
    """Found by prefix-model fuzz through the real harness (D-20 (g)): the disposal awaits the driver's exit before it
    detaches the session (L/index.ts:216-235), so the store still holds it while the driver's turn runs."""
    world = run((Create("main", "s1"), Inject(0, "note"), SendPrompt(0, "go"), Dispose(0)))  # disposed at turn 2's opening
    at_first_end = ForkDrive("s1", "s2", 2, "main")  # seq 2: the one-shot injection turn's turn/end
    assert world.instance(0).disposed and world.instance(0).turn_open and enabled(world, at_first_end)
    child = run((at_first_end,), world=world).session("s2")
    assert [e.type for e in child.log.events] == ["turn/start", "user/message", "turn/end"]
    ended = run((BeginStep(0),), world=world)  # the checkpoint ends the turn disposed: the driver is gone, so is the entry
    assert events_of(ended)[-1].type == TURN_END and not ended.instance(0).turn_open and not enabled(ended, at_first_end)
