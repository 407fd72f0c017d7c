"""The scenario catalogue (spec/vectors.md §2): action scripts the model runs. Pure: no I/O, no clock, no randomness.

A scenario is an action script (the ``actions.py`` alphabet) that the model runs under the
harness's semantics, with the actions the loop must *refuse* (their guard does not hold, LOOP-1)
and the requirement IDs it exercises. The catalogue is data: one short function per theme,
built with the script builders below; ``cases.py`` turns each run into a vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, freeze_object, json_text
from prefix_model.examples.streams import failed_finish, text_stream, tool_call_stream, with_replay_state
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
from prefix_model.loop.compaction import CompactPolicy
from prefix_model.loop.meter import measure
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.variants import WITNESS
from prefix_model.loop.world import (
    AgentOptions,
    Append,
    CancelThenPrepend,
    InjectThenPrepend,
    Listener,
    ListenerCall,
    Prepend,
    ShortCircuit,
    Throw,
    World,
    text_message,
)

__all__ = ["EDGE_KEYS", "EDGE_NUMBERS", "EDGE_TEXT", "Scenario", "ScriptError", "edge_tools", "play", "scenarios"]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A valid case: an action script, the actions the loop must refuse, and what it exercises."""

    id: str
    description: str
    requirements: tuple[str, ...]
    actions: tuple[Action, ...]
    refused: tuple[int, ...] = ()


class ScriptError(AssertionError):
    """A scenario that no longer runs as written: an action enabled or refused against its script."""


def play(scenario: Scenario) -> World:
    """Run ``scenario`` strictly: every action not listed as refused must be enabled, and every refused one not."""
    world = World()
    for index, action in enumerate(scenario.actions):
        allowed = enabled(world, action)
        if allowed == (index in scenario.refused):
            what = "is enabled but listed as refused" if allowed else "is not enabled"
            raise ScriptError(f"{scenario.id}: action {index} {what}: {action!r}")
        if allowed:
            world = apply(world, action, HARNESS)
    return world


# --- Script builders ---


def _m(text: str, role: str = "user") -> FrozenMap:
    return text_message(text, role)


def _p(*texts: str) -> Prepend:
    return Prepend(tuple(_m(t) for t in texts))


def _listener(name: str, *calls: ListenerCall, agent: str | None = None) -> Register:
    return Register(Listener(name, agent, calls))


def _tool(name: str) -> JsonValue:
    return freeze({"name": name, "description": f"the {name} tool", "parameters": {"type": "object"}})


def _call(call_id: str, text: str) -> tuple[str, str, str]:
    return (call_id, "echo", json_text(FrozenMap({"text": text})))


ECHO = (_tool("echo"),)
_NOTES = FrozenMap({"kind": "plugin", "plugin": "notes"})  # a producer's message source
_RULES = FrozenMap({"kind": "plugin", "plugin": "rules"})
_MANUAL = FrozenMap({"kind": "plugin", "plugin": "manual"})
_WORKSPACE = FrozenMap({"kind": "plugin", "plugin": "workspace"})
_LONG = "read the plan, then carry it out step by step; " * 10  # long enough that a summary of it is smaller (CMP-6)


def _failed_finish(code: str, message: str, status: int, kind: str = "error", **facts: JsonValue) -> FrozenMap:
    return failed_finish(kind, {"message": message, "code": code, "status": status, **facts})


_USAGE_810 = {"inputTokens": 700, "cacheReadTokens": 50, "cacheWriteTokens": 30, "outputTokens": 30}  # each count decides the threshold
_ODD_CHUNKS = tuple(
    freeze_object(chunk)
    for chunk in (
        {"type": "block-start", "index": 1, "blockType": "text"},
        {"type": "reasoning-delta", "index": 0, "text": "thin"},
        {"type": "text-delta", "index": 1, "text": "hel"},
        {"type": "reasoning-delta", "index": 0, "text": "king"},
        {"type": "usage", "index": 3, "usage": {"inputTokens": 7, "outputTokens": 3}},
        {"type": "text-delta", "index": 1, "text": "lo"},
        {"type": "block-end", "index": 1, "block": {"type": "text", "text": "hello"}},
        {"type": "text-delta", "index": 1, "text": " straggler"},
        {"type": "block-end", "index": 1, "block": {"type": "text", "text": "closed twice"}},
        {"type": "tool-call-delta", "index": 2, "id": "draft", "name": "echo", "argumentsDelta": '{"text":'},
        {"type": "tool-call-delta", "index": 2, "id": "c9", "name": "", "argumentsDelta": '"x"}'},
        {"type": "finish", "index": 4, "reason": {"kind": "tool-calls"}},
    )
)


def _until_reply(
    i: int, *, compose: bool = False, pre: tuple[int, int] | None = None, config: LlmCallConfig | None = None
) -> tuple[Action, ...]:
    """A step up to its reply: begin, [compose], pre-step, dispatch; a script goes on from there by hand."""
    begin: tuple[Action, ...] = (BeginStep(i), Compose(i)) if compose else (BeginStep(i),)
    return (*begin, PreStep(i, pre), Dispatch(i, config))


def _step(
    i: int,
    reply: Reply | None = None,
    *,
    compose: bool = False,
    outputs: tuple[str, ...] = (),
    config: LlmCallConfig | None = None,
    pre: tuple[int, int] | None = None,
    post: tuple[int, int] | None = None,
) -> tuple[Action, ...]:
    """One step: begin, [compose], pre-step, dispatch, the reply, [tools], post-step (a failed reply ends the step itself)."""
    answer = reply if reply is not None else Reply(i, text="ok")
    actions: list[Action] = [*_until_reply(i, compose=compose, pre=pre, config=config), answer]
    if answer.failure is not None:
        return tuple(actions)
    if answer.tool_calls or outputs:  # a streamed reply's calls are in its chunks: the outputs say there are some
        actions.append(RunTools(i, outputs))
    return tuple(actions + [PostStep(i, post)])


def _echo_step(i: int, *texts: str, compose: bool = False, post: tuple[int, int] | None = None) -> tuple[Action, ...]:
    """A step whose reply calls the echo tool once per text (call ids c1, c2, ...), then runs the calls."""
    calls = tuple(_call(f"c{n}", text) for n, text in enumerate(texts, 1))
    return _step(i, Reply(i, tool_calls=calls), compose=compose, outputs=texts, post=post)


def _turn(i: int, prompt: str, *replies: str, compose: bool = False) -> tuple[Action, ...]:
    """A prompt turn with one text step per reply; the first step composes when asked."""
    actions: list[Action] = [SendPrompt(i, prompt)]
    for n, text in enumerate(replies or ("ok",)):
        actions += _step(i, Reply(i, text=text), compose=compose and n == 0)
    return tuple(actions)


def _seq(actions: tuple[Action, ...], session: str, type: str, nth: int = 0) -> int:
    """Return the seq of the ``nth`` event of ``type`` in ``session`` after ``actions``."""
    world = play(Scenario("(prefix)", "", (), actions))
    return [e.seq for e in world.session(session).log.events if e.type == type][nth]


DOCS = _listener("docs", _p("<prefix docs v1>"))
DOCS_TWICE = _listener("docs", _p("<prefix docs v1>"), _p("<prefix docs v2>"))  # a recomposition would show v2

# Every scenario's own requirements; BASE is what any loop run exercises and is listed once.
BASE = (
    "LOOP-1", "LOOP-2", "LOOP-3", "LOOP-4", "LOG-1", "LOG-2", "LOG-4", "LOG-5", "LOG-6", "LOG-11", "LOG-13", "LOG-15",
    "SURF-1", "SURF-2", "SURF-7", "SURF-10", "DER-1", "DER-2", "DER-3", "DER-5", "DER-7", "HDR-1", "HDR-2", "HDR-3",
    "HDR-4", "HDR-7", "HDR-8", "HDR-9", "HDR-12", "HDR-13", "REQ-1", "REQ-2", "REQ-3", "REQ-4", "PFX-6", "REC-1", "REC-2",
    "ENC-1", "ENC-2", "ENC-3", "FMT-3", "JSON-1", "JSON-3", "JSON-4",
)  # fmt: skip


# --- The catalogue, a section a theme ---


def _composition_scenarios() -> tuple[Scenario, ...]:
    """Composing the prefix: no listener, once for two turns, in listener order, a listener injecting or cancelling; tool steps."""
    return (
        Scenario(
            "loop/no-listener",
            "One prompt, one step, no session-prefix listener: the anchor snapshot has no messagePrefix and the request is the bare derivation.",
            BASE,
            (Create("main", "s1"), SendPrompt(0, "hello"), *_step(0, Reply(0, text="hi"), compose=True)),
        ),
        Scenario(
            "prefix/one-listener",
            "One global listener: its message leads the request, the anchor snapshot records it, and it never enters the history.",
            ("PFX-1", "PFX-11", "PFX-3", "DER-8", "REQ-2", "REC-1", "REC-2", "HDR-12"),
            (DOCS, Create("main", "s1"), *_turn(0, "hello", "hi", compose=True)),
        ),
        Scenario(
            "loop/compose-once-two-turns",
            "Two turns of one instance: the prefix is composed once (the listener's second call would differ), no second snapshot, and the second request extends the first.",
            ("PFX-2", "HDR-10", "REC-3", "LOOP-4", "DER-7"),
            (DOCS_TWICE, Create("main", "s1"), *_turn(0, "first", compose=True), *_turn(0, "second")),
        ),
        Scenario(
            "prefix/two-prepend-registration-order",
            "Two listeners prepending: the prefix is in registration order.",
            ("PFX-8",),
            (_listener("a", _p("<prefix a>")), _listener("b", _p("<prefix b>")), Create("main", "s1"), *_turn(0, "go", compose=True)),
        ),
        Scenario(
            "prefix/append-reverses",
            "Two listeners appending after next(): the prefix is in reverse registration order.",
            ("PFX-8",),
            (
                _listener("a", Append((_m("<prefix a>"),))), _listener("b", Append((_m("<prefix b>"),))),
                Create("main", "s1"), *_turn(0, "go", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "prefix/short-circuit",
            "A listener that does not call next() silences the later ones.",
            ("PFX-8",),
            (
                _listener("a", ShortCircuit((_m("<prefix a>"),))), _listener("b", _p("<prefix b>")),
                Create("main", "s1"), *_turn(0, "go", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "prefix/inject-while-composing",
            "A listener injects while composing: the inject lands before step/start, in the first request's history, not only the second's.",
            ("PFX-10", "REQ-3", "LOOP-7", "PFX-1"),
            (
                _listener("notes", InjectThenPrepend("context from a composing listener", (_m("<prefix notes>"),))),
                Create("main", "s1", tools=ECHO), SendPrompt(0, "go"),
                *_echo_step(0, "x", compose=True), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
        Scenario(
            "prefix/inject-own-source-while-composing",
            "A composing listener injects with its own source and meta: the message carries them, lands before step/start and joins the first request.",
            ("PFX-10", "LOOP-7"),
            (
                _listener("workspace", InjectThenPrepend("workspace: 3 files changed", (_m("<prefix workspace>"),), _WORKSPACE, FrozenMap({"files": 3}))),
                _listener("rules", InjectThenPrepend("rules reloaded", (_m("<prefix rules>"),), _RULES)),
                Create("main", "s1"), *_turn(0, "go", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "prefix/registered-after-the-step-began",
            "A listener registered after BeginStep is not called by that step's composition (the waterfall collected its listeners as the step began), so its inject and prefix are missing from the first request; the next instance composes with it.",
            ("PFX-8", "PFX-10", "PFX-2"),
            (
                _listener("rules", _p("<prefix rules>")),
                Create("main", "s1"), SendPrompt(0, "go"), BeginStep(0),
                _listener("late", InjectThenPrepend("late note", (_m("<prefix late>"),))),
                Compose(0), PreStep(0), Dispatch(0), Reply(0, text="ok"), PostStep(0),
                Resume("s1", "main"), *_turn(1, "again", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "prefix/cancel-while-composing",
            "A listener cancels the turn while composing: the checkpoint after the waterfall ends it aborted with no step, header or request, and nothing is cached; the next turn recomposes.",
            ("PFX-4", "LOOP-6", "LOOP-3"),
            (
                _listener("canceller", CancelThenPrepend((_m("<prefix v1>"),)), _p("<prefix v2>")),
                Create("main", "s1"), SendPrompt(0, "first"), BeginStep(0), Compose(0), *_turn(0, "second", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "loop/tool-calls-multi-step",
            "A turn of two steps: tool calls, their results, then the answer; the tool list is sorted by name.",
            ("DER-4", "SURF-7", "ENC-3", "REC-3", "LOOP-12", "HDR-10"),
            (
                DOCS, Create("main", "s1", tools=(_tool("zeta"), _tool("echo"))), SendPrompt(0, "echo twice"),
                *_echo_step(0, "a", "b", compose=True),
                *_step(0, Reply(0, text="echoed a and b")),
            ),
        ),  # fmt: skip
    )


def _cancel_scenarios() -> tuple[Scenario, ...]:
    """A cancel at each point of a turn: while composing, while a listener throws, mid-stream, before the request, during tools."""
    disposed = (
        Create("main", "s1", tools=ECHO), SendPrompt(0, "go"), *_until_reply(0, compose=True),
        Reply(0, tool_calls=(_call("c1", "x"),)), Dispose(0), RunTools(0, ("x",)), PostStep(0),
    )  # fmt: skip
    return (
        Scenario(
            "cancel/during-compose-then-new-turn",
            "A cancel while the waterfall is awaited ends the turn aborted and caches nothing; the next turn recomposes.",
            ("PFX-4", "LOOP-6", "LOG-14"),
            (
                DOCS_TWICE, Create("main", "s1"), SendPrompt(0, "first"), BeginStep(0), Cancel(0), Compose(0),
                *_turn(0, "second", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "cancel/during-compose-listener-throws",
            "A listener throws while a cancel is pending: the turn ends aborted, not in error; the next turn recomposes.",
            ("PFX-9", "PFX-4", "LOOP-6"),
            (
                _listener("flaky", Throw(), _p("<prefix flaky>")), Create("main", "s1"), SendPrompt(0, "first"), BeginStep(0), Cancel(0), Compose(0),
                *_turn(0, "second", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "cancel/mid-stream-then-new-turn",
            "A cancel while the reply streams closes the step and aborts the turn; the cached prefix is kept for the next turn.",
            ("PFX-4", "LOOP-6"),
            (
                DOCS_TWICE, Create("main", "s1"), *_turn(0, "first", compose=True),
                SendPrompt(0, "second"), *_until_reply(0), Cancel(0), Reply(0, text="partial"),
                *_turn(0, "third"),
            ),
        ),  # fmt: skip
        Scenario(
            "cancel/during-tools",
            "A cancel while the first of two tool calls runs: its output is superseded by the abort result, the second is skipped before dispatch, post-step still runs, and only then the step closes and the turn ends aborted; the next turn goes on.",
            ("LOOP-6",),
            (
                Create("main", "s1", tools=ECHO), SendPrompt(0, "go"), *_until_reply(0, compose=True),
                Reply(0, tool_calls=(_call("c1", "x"), _call("c2", "y"))), Cancel(0), RunTools(0, ("x", "y")), PostStep(0),
                *_turn(0, "again"),
            ),
        ),  # fmt: skip
        Scenario(
            "cancel/dispose-during-tools",
            "A dispose while a tool call runs: its output is superseded by the abort result, post-step still runs, then the step closes and the turn ends disposed; the disposed instance takes no prompt.",
            ("LOOP-6",),
            (*disposed, SendPrompt(0, "again")),
            refused=(len(disposed),),
        ),
        Scenario(
            "cancel/before-dispatch",
            "A cancel after step/start, before the request: the step closes with no header and no request.",
            ("LOOP-6",),
            (
                DOCS, Create("main", "s1"), *_turn(0, "first", compose=True),
                SendPrompt(0, "second"), BeginStep(0), PreStep(0), Cancel(0), Dispatch(0), *_turn(0, "third"),
            ),
        ),  # fmt: skip
    )


def _resume_scenarios() -> tuple[Scenario, ...]:
    """A new instance over an existing log: the same or a changed prefix, the reasoning effort it carries."""
    same = (DOCS, Create("main", "s1"), *_turn(0, "before", compose=True), Resume("s1", "main"), *_turn(1, "after", compose=True))
    return (
        Scenario(
            "resume/same-prefix",
            "A resumed instance recomposes the same prefix and anchors with an unconditional resume snapshot equal to the fold; the driver it replaced takes no prompt.",
            ("PFX-5", "HDR-9", "REC-1", "LOOP-6"),
            (*same, SendPrompt(0, "to the replaced driver")),
            refused=(len(same),),
        ),
        Scenario(
            "resume/changed-prefix",
            "A resumed instance recomposes a changed prefix; its resume anchor carries the new prefix and later requests use it.",
            ("PFX-5", "PFX-12", "HDR-9", "HDR-11", "HDR-7"),
            (
                DOCS_TWICE, Create("main", "s1"), *_turn(0, "before", compose=True),
                Resume("s1", "main"), *_turn(1, "after", "again", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "resume/effort-carried",
            "A new instance's first request starts from its options, carrying the log's reasoningEffort when provider and model match.",
            ("LOOP-10", "HDR-5", "PFX-5"),
            (
                Create("main", "s1"), SendPrompt(0, "think"), *_step(0, compose=True, config=LlmCallConfig("mock", "mock-model", "high")),
                Resume("s1", "main"), *_turn(1, "same model", compose=True),
                Resume("s1", "main", options=AgentOptions("mock", "other-model")), *_turn(2, "other model", compose=True),
            ),
        ),  # fmt: skip
    )


def _compaction_scenarios() -> tuple[Scenario, ...]:
    """Compaction by the hook, by a listener, twice, refused, under pressure, and a listener's own replacement."""
    twice_head = (DOCS, Create("main", "s1"), *_turn(0, _LONG, compose=True), *_turn(0, "two"))
    return (
        Scenario(
            "compaction/pre-step",
            "Compaction by the pre-step hook: a replacing summary with provenance, an auxiliary summarizer call, no header; the next request is the prefix and the compacted history.",
            ("CMP-1", "CMP-2", "SURF-4", "SURF-5", "SURF-6", "SURF-8", "DER-6", "REQ-2"),
            (
                DOCS, Create("main", "s1"), *_turn(0, _LONG, compose=True), *_turn(0, "two"),
                SendPrompt(0, "three"), *_step(0, pre=(0, 2)),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/summarizer-follows-the-header",
            "A request config routes the turn to another model; a later pre-step compaction asks the summarizer on the logged header's route, not on the agent's options.",
            ("CMP-2", "CMP-1"),
            (
                DOCS, Create("main", "s1"), SendPrompt(0, _LONG), *_step(0, Reply(0, text="ok"), compose=True, config=LlmCallConfig("mock", "mock-large")),
                *_turn(0, "two"), SendPrompt(0, "three"), *_step(0, pre=(0, 2)),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/post-step-listener",
            "A post-step listener calls compactRegion inside the turn, after the tool batch; the next step's request is the prefix and the compacted history.",
            ("CMP-1", "CMP-2", "SURF-6", "SURF-8", "DER-6"),
            (
                DOCS, Create("main", "s1", tools=ECHO), *_turn(0, _LONG, compose=True), SendPrompt(0, "two"),
                *_echo_step(0, "x", post=(0, 4)), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/twice-by-position",
            "A second compaction replaces a range that starts at the first summary: start seq after end seq, positions in order.",
            ("SURF-11", "SURF-4", "SURF-5", "SURF-6", "CMP-2"),
            (*twice_head, SendPrompt(0, "three"), *_step(0, pre=(0, 2)), SendPrompt(0, "four"), *_step(0, pre=(0, 1))),
        ),
        Scenario(
            "compaction/refused",
            "A listener's compactRegion over a short region: the framed summary is not smaller, so compact/end carries the error, the summarizer was asked, and the turn ends in error before step/start; an unbalanced range is refused before compact/start.",
            ("CMP-6", "CMP-4", "CMP-2"),
            (
                DOCS, Create("main", "s1", tools=ECHO), *_turn(0, "go", compose=True),
                SendPrompt(0, "again"), BeginStep(0), PreStep(0, compact=(0, 1), summaries=("a summary no shorter than go and ok",)),
                SendPrompt(0, _LONG), *_echo_step(0, "x"), *_step(0, Reply(0, text="done")),
                SendPrompt(0, "more"), BeginStep(0), PreStep(0, compact=(3, 4)),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/a-blank-summary-is-blank-as-javascript-trims",
            "A pre-step compactRegion whose summary is U+001C U+0085 (blank to Python's str.strip, not to JavaScript's trim) is taken; a later one whose summary is U+FEFF (which trim removes) is blank: compact/end carries the error and the turn ends in error.",
            ("CMP-6", "CMP-2"),
            (
                DOCS, Create("main", "s1"), *_turn(0, _LONG, compose=True), *_turn(0, "two"),
                SendPrompt(0, "three"), BeginStep(0), PreStep(0, compact=(0, 2), summaries=("\x1c\x85",)), Dispatch(0), Reply(0, text="ok"),
                PostStep(0), SendPrompt(0, _LONG), *_step(0), SendPrompt(0, "four"), BeginStep(0), PreStep(0, compact=(0, 2), summaries=("\ufeff",)),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/positions-off-the-surface",
            "A listener's compactRegion at pre-step and at post-step naming positions no surface of three nodes admits (an end before its start, an end past the last node) is refused, as a call the service would reject; the step goes on without it.",
            ("LOOP-1",),
            (
                DOCS, Create("main", "s1"), *_turn(0, "go", compose=True), SendPrompt(0, "again"), BeginStep(0),
                PreStep(0, compact=(1, 0)), PreStep(0, compact=(0, 3)), PreStep(0), Dispatch(0), Reply(0, text="ok"),
                PostStep(0, compact=(2, 1)), PostStep(0, compact=(0, 4)), PostStep(0),
            ),
            refused=(11, 12, 16, 17),
        ),  # fmt: skip
        Scenario(
            "compaction/post-step-refused",
            "A post-step listener's compactRegion over a short region: the framed summary is not smaller, so compact/end carries the error, the step closes and the turn ends in error with the thrown message; the next turn goes on.",
            ("CMP-6", "CMP-4"),
            (
                DOCS, Create("main", "s1"), *_turn(0, "go", compose=True), SendPrompt(0, "again"),
                BeginStep(0), PreStep(0), Dispatch(0), Reply(0, text="ok"),
                PostStep(0, compact=(0, 1), summaries=("a summary no shorter than go and ok",)), *_turn(0, "more"),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/pressure",
            "The service mounted over a 1000-token model: post-step usage of 810 is at the 800 threshold, the head is compacted leaving a 160-token tail, the meter falls below it, and the next turn's request starts with the checkpoint.",
            ("CMP-5", "CMP-3", "CMP-4", "CMP-2", "CMP-6", "TOK-3"),
            (
                MountCompaction(CompactPolicy(context_window=1000)), DOCS, Create("main", "s1"),
                SendPrompt(0, "a" * 800), *_until_reply(0, compose=True), Reply(0, stream=text_stream("b" * 800, pieces=4)),
                PostStep(0, summaries=("checkpoint summary",)), *_turn(0, "next"),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/usage-pressure",
            "Pressure from the provider's usage: its four counts (700 input, 50 cache read, 30 cache write, 30 output) reach the 800 threshold where the estimate (about 330) does not; the head is compacted, the meter goes on from the usage anchor plus the surface's change and falls below it.",
            ("TOK-3", "CMP-5", "CMP-3", "CMP-2"),
            (
                MountCompaction(CompactPolicy(context_window=1000)), Create("main", "s1"), *_turn(0, _LONG, compose=True),
                SendPrompt(0, "b" * 800), *_until_reply(0), Reply(0, stream=text_stream("ok", usage=_USAGE_810)),
                PostStep(0, summaries=("checkpoint summary",)), *_turn(0, "next"),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/pressure-nothing-to-cut",
            "Pressure over a surface whose retained tail reaches back to its head: the service finds no range, writes nothing, and the turn and the next go on.",
            ("CMP-4", "CMP-5"),
            (MountCompaction(CompactPolicy(context_window=1000)), Create("main", "s1"), *_turn(0, "b" * 3400, compose=True), *_turn(0, "next")),
        ),
        Scenario(
            "compaction/pressure-summary-refused",
            "Pressure that cuts a head too small for its summary: the framed summary is not smaller, compact/end carries the error, the service's listener logs it and the turn goes on.",
            ("CMP-5", "CMP-6"),
            (
                MountCompaction(CompactPolicy(context_window=1000)), Create("main", "s1"), *_turn(0, "hi", compose=True),
                *_turn(0, "b" * 3400), *_turn(0, "next"),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/listener-replace",
            "A pre-step listener replaces two nodes with its own user/message (source and provenance its own, no compact events), then the service compacts what it left.",
            ("CMP-7", "SURF-8", "CMP-2"),
            (
                DOCS, Create("main", "s1"), *_turn(0, "go", "hey", compose=True), *_turn(0, _LONG),
                SendPrompt(0, "again"), BeginStep(0), PreStep(0, compact=(1, 2), replace=PlainReplace(0, 1, "earlier: go/hey", _MANUAL)),
                Dispatch(0), Reply(0, text="ok"), PostStep(0),
            ),
        ),  # fmt: skip
    )


def _fork_scenarios() -> tuple[Scenario, ...]:
    """Forks driven by new instances, and the forks the loop refuses."""
    fork_head = (DOCS, Create("main", "s1"), *_turn(0, "plan the work", compose=True), *_turn(0, "do it"))
    empty = (Create("main", "s1"), ForkDrive("s1", "s2", None, "main"), *_turn(1, "hello", compose=True))
    open_turn = (*empty, SendPrompt(0, "go"), *_until_reply(0, compose=True)[:-1])  # s1 ends at a step/start
    first_end = _seq(fork_head, "s1", "turn/end")
    a_step_start = _seq(fork_head, "s1", "step/start", 1)
    in_turn = (Create("main", "s1"), *_turn(0, "plan the work", compose=True), SendPrompt(0, "go on"), Dispose(0))
    in_turn_end = _seq(in_turn, "s1", "turn/end")
    return (
        Scenario(
            "fork/new-agent",
            "Forks at a turn/end and at the end, each driven by a new instance that recomposes and anchors with resume; forks at a non-turn/end, beyond the log, or onto a taken id are refused.",
            ("FORK-1", "FORK-2", "FORK-3", "FORK-4", "FORK-5", "FORK-6", "FORK-7", "FORK-8", "LOG-12", "PFX-5", "HDR-9"),
            (
                *fork_head,
                ForkDrive("s1", "s2", first_end, "reviewer"), *_turn(1, "review the plan", compose=True),
                ForkDrive("s1", "s3", None, "main"), *_turn(2, "carry on", compose=True),
                ForkDrive("s1", "s4", a_step_start, "main"), ForkDrive("s1", "s4", 100000, "main"), ForkDrive("s1", "s2", None, "main"),
            ),
            refused=(len(fork_head) + 16, len(fork_head) + 17, len(fork_head) + 18),
        ),  # fmt: skip
        Scenario(
            "fork/source-disposed",
            "A session whose only driver is disposed cannot be forked, events or not (its store entry is gone); a resume drives it again and the fork goes through.",
            ("FORK-9", "FORK-2", "LOOP-1"),
            (
                Create("main", "s1"), Dispose(0), ForkDrive("s1", "s2", None, "main"),
                Create("main", "s3"), *_turn(1, "hello", compose=True), Dispose(1), ForkDrive("s3", "s4", None, "main"),
                Resume("s3", "main"), ForkDrive("s3", "s4", None, "main"), *_turn(3, "go on", compose=True),
            ),
            refused=(2, 4 + len(_turn(1, "hello", compose=True)) + 1),
        ),  # fmt: skip
        Scenario(
            "fork/source-disposed-in-its-turn",
            "A session whose only driver is disposed while its turn is open can still be forked at a turn/end (the disposal awaits the driver's exit before the store lets the session go), though not at its end, inside the open turn; once the driver's checkpoint ends the turn, a fork of it is refused.",
            ("FORK-9", "FORK-2", "FORK-5", "LOOP-1", "LOOP-6"),
            (
                *in_turn, ForkDrive("s1", "s3", None, "main"), ForkDrive("s1", "s2", in_turn_end, "main"),
                *_turn(1, "review the plan", compose=True), BeginStep(0), ForkDrive("s1", "s4", in_turn_end, "main"),
            ),
            refused=(len(in_turn), len(in_turn) + 3 + len(_turn(1, "review the plan", compose=True))),
        ),  # fmt: skip
        Scenario(
            "fork/empty-and-open-turn",
            "A fork of an empty session is an empty child, driven like a new one; a fork at the end of a session inside an open turn (its last event a step/start) is refused, and so is a fork of a session that does not exist.",
            ("FORK-2", "FORK-4", "FORK-8", "LOOP-1"),
            (*open_turn, ForkDrive("s1", "s3", None, "main"), ForkDrive("no-such-session", "s4", None, "main")),
            refused=(len(open_turn), len(open_turn) + 1),
        ),  # fmt: skip
    )


def _header_scenarios() -> tuple[Scenario, ...]:
    """What the request/header snapshots record: an empty composition, system, tools and config changes."""
    return (
        Scenario(
            "prefix/empty-composition",
            "A listener contributes nothing: the snapshot has no messagePrefix and the request is the bare derivation.",
            ("PFX-6", "HDR-3"),
            (_listener("quiet", Prepend(())), Create("main", "s1"), *_turn(0, "go", "and again", compose=True)),
        ),
        Scenario(
            "header/system-change-between-steps",
            "A system-prompt change between steps logs one change snapshot at the next step; removing it logs a snapshot without system.",
            ("LOOP-12", "HDR-10", "HDR-14", "HDR-15", "HDR-6", "HDR-3"),
            (
                DOCS, Create("main", "s1", system="You are terse.", tools=ECHO), SendPrompt(0, "look"),
                *_until_reply(0, compose=True), Reply(0, tool_calls=(_call("c1", "x"),)),
                SetSystem(0, "You are thorough."), RunTools(0, ("x",)), PostStep(0), *_step(0, Reply(0, text="seen")),
                SetSystem(0, ""), *_turn(0, "again"),
            ),
        ),  # fmt: skip
        Scenario(
            "header/tools-change-between-turns",
            "A tool-set change takes effect at the next step: one change snapshot with the tools sorted by name.",
            ("LOOP-12", "HDR-6", "HDR-10", "HDR-15", "JSON-5"),
            (
                DOCS, Create("main", "s1", tools=(_tool("zeta"),)), *_turn(0, "one", compose=True),
                SetTools(0, (_tool("zeta"), _tool("alpha"))), *_turn(0, "two"),
            ),
        ),  # fmt: skip
        Scenario(
            "header/config-change-sticks",
            "A request-config change at agent/request logs a change snapshot and sticks for later requests, which log nothing.",
            ("LOOP-10", "HDR-2", "HDR-5", "HDR-10", "HDR-11", "HDR-15", "JSON-3"),
            (
                DOCS, Create("main", "s1"), *_turn(0, "one", compose=True), SendPrompt(0, "two"),
                *_step(0, config=LlmCallConfig("mock", "mock-model", "max", 0.5, 1024, ("END",))), *_turn(0, "three"),
            ),
        ),  # fmt: skip
    )


def _inject_scenarios() -> tuple[Scenario, ...]:
    """Injects: before the request, into an idle instance, during a tool batch, with their producer's source and meta."""
    return (
        Scenario(
            "inject/between-step-start-and-header",
            "An inject after step/start and before the request joins the next request, not this one.",
            ("LOOP-7", "REQ-3", "REC-1"),
            (
                DOCS, Create("main", "s1", tools=ECHO), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0),
                Inject(0, "late context"), Dispatch(0), Reply(0, tool_calls=(_call("c1", "x"),)), RunTools(0, ("x",)), PostStep(0),
                *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
        Scenario(
            "inject/idle-one-shot-turn",
            "An inject into an idle instance is a one-shot injection turn, numbered after the log's last turn.",
            ("LOOP-7", "LOOP-4"),
            (DOCS, Create("main", "s1"), *_turn(0, "one", compose=True), Inject(0, "note while idle"), *_turn(0, "two")),
        ),
        Scenario(
            "inject/during-tools-deferred",
            "An inject during a tool batch waits for all of its results.",
            ("LOOP-7",),
            (
                Create("main", "s1", tools=ECHO), SendPrompt(0, "go"), *_until_reply(0, compose=True),
                Reply(0, tool_calls=(_call("c1", "x"), _call("c2", "y"))), Inject(0, "context during tools"), RunTools(0, ("x", "y")),
                PostStep(0), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
        Scenario(
            "inject/sources-and-meta",
            "Injects carry their producer's source and meta: an idle one opens a one-shot turn under that source, one during a tool batch keeps them after the results.",
            ("LOOP-7",),
            (
                Create("main", "s1", tools=ECHO), Inject(0, "note one", _NOTES, FrozenMap({"n": 1})),
                SendPrompt(0, "go"), *_until_reply(0, compose=True), Reply(0, tool_calls=(_call("c1", "x"),)),
                Inject(0, "note two", _NOTES, FrozenMap({"n": 2})), RunTools(0, ("x",)), PostStep(0), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
    )


def _prompt_scenarios() -> tuple[Scenario, ...]:
    """What a prompt carries and when it is blocked, and steering drained mid-turn."""
    return (
        Scenario(
            "prompt/prompt-prefix-context",
            "Prompt-prefix contexts are baked into the prompt's user/message with an envelope naming each producer (and its meta); a separate context follows as its own message with its source and meta.",
            ("LOOP-11", "DER-2"),
            (DOCS, Create("main", "s1"),
             SendPrompt(0, "fix the bug", contexts=(PromptContext("aside", _NOTES, FrozenMap({"n": 1})),),
                        prompt_prefix=(PromptContext("baked one", _RULES, FrozenMap({"rule": 1})), PromptContext("baked two", _RULES))),
             *_step(0, compose=True)),
        ),  # fmt: skip
        Scenario(
            "prompt/blocked-then-allowed",
            "A blocked prompt writes turn/start, prompt/blocked and a rejected turn/end with no composition; the next prompt composes.",
            ("LOOP-5", "LOOP-4", "PFX-4"),
            (DOCS_TWICE, Create("main", "s1"), SendPrompt(0, "rm -rf /", blocked=True), *_turn(0, "list the files", compose=True)),
        ),
        Scenario(
            "prompt/blocked-with-own-reason",
            "A prompt-submit hook blocks with its own reason: prompt/blocked and the rejected turn/end carry it as given; an allowed prompt gives no reason.",
            ("LOOP-5", "LOOP-1"),
            (
                DOCS, Create("main", "s1"), SendPrompt(0, "rm -rf /", blocked=True, block_reason="policy: shell commands need approval"),
                SendPrompt(0, "list the files", block_reason="not blocked"), *_turn(0, "list the files", compose=True),
            ),
            refused=(3,),
        ),  # fmt: skip
        Scenario(
            "steering/mid-turn",
            "Steering is drained after a tool batch, at the top of a step, and after a response, which forces another step.",
            ("LOOP-8",),
            (
                Create("main", "s1", tools=ECHO), SendPrompt(0, "start"), *_until_reply(0, compose=True),
                Reply(0, tool_calls=(_call("c1", "x"),)), Steer(0, "steer during tools"), RunTools(0, ("x",)), PostStep(0),
                Steer(0, "steer before step 2"), *_until_reply(0), Steer(0, "steer while streaming"),
                Reply(0, text="noted"), PostStep(0), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
    )


def _agent_scenarios() -> tuple[Scenario, ...]:
    """Listeners scoped to two agents, then what an instance goes through: failed requests, a throwing or changed listener, disposal."""
    return (
        Scenario(
            "prefix/two-agents-scoped",
            "Two agents: each composes the global listener and its own scoped one, never the other's.",
            ("PFX-8",),
            (
                _listener("global", _p("<prefix global>")), _listener("alpha-only", _p("<prefix alpha>"), agent="alpha"),
                _listener("beta-only", _p("<prefix beta>"), agent="beta"), Create("alpha", "s1"), Create("beta", "s2"),
                *_turn(0, "alpha here", compose=True), *_turn(1, "beta here", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "loop/request-error-retry",
            "A failed request closes its step; the retry is the next step and an unchanged header is not logged again.",
            ("LOOP-9", "REQ-4", "HDR-10"),
            (
                DOCS, Create("main", "s1"), SendPrompt(0, "go"),
                *_step(0, Reply(0, failure="overloaded", retry=True), compose=True), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
        Scenario(
            "loop/request-error-retry-drains-steering",
            "A steer sent during a failed step is drained as the request fails and the turn goes on to the retry (no seam between); one sent after that waits for the retried step's response, and forces a step.",
            ("LOOP-9", "LOOP-8"),
            (
                DOCS, Create("main", "s1"), SendPrompt(0, "go"), *_until_reply(0, compose=True), Steer(0, "during"),
                Reply(0, failure="overloaded", retry=True), Steer(0, "after"), *_step(0, Reply(0, text="retried")), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
        Scenario(
            "loop/request-error-no-retry",
            "A failed request without a retry ends the turn with an error naming the step; the next turn goes on.",
            ("LOOP-9", "REQ-4"),
            (DOCS, Create("main", "s1"), SendPrompt(0, "go"), *_step(0, Reply(0, failure="bad_request"), compose=True), *_turn(0, "again")),
        ),
        Scenario(
            "prefix/throw-then-recover",
            "A listener throws: the turn ends in error at step 1, an inject made before the throw stays, nothing is cached; the next turn recomposes.",
            ("PFX-9", "PFX-10", "PFX-4"),
            (
                _listener("notes", InjectThenPrepend("note from the composing listener", (_m("<prefix notes>"),))),
                _listener("flaky", Throw(), _p("<prefix flaky>")), Create("main", "s1"),
                SendPrompt(0, "first"), BeginStep(0), Compose(0), *_turn(0, "second", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "prefix/throw-own-error",
            "A listener throws its own errors: each turn/end carries the thrown message with its cause chain as the harness renders it (an empty message shows the name Error, a cause repeating its wrapper is left out); the third call composes.",
            ("PFX-9", "PFX-4"),
            (
                _listener(
                    "index", Throw("prefix fetch failed", ("connect ECONNREFUSED 127.0.0.1:443",)), Throw("", ("quota exceeded",)),
                    Throw("index stale", ("index stale",)), _p("<prefix index>"),
                ),
                Create("main", "s1"), SendPrompt(0, "first"), BeginStep(0), Compose(0), SendPrompt(0, "second"), BeginStep(0), Compose(0),
                SendPrompt(0, "third"), BeginStep(0), Compose(0), *_turn(0, "fourth", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "prefix/mutate-after-compose",
            "A listener changes its contribution after composition: requests keep the prefix as composed; a resumed instance composes the new one.",
            ("PFX-7", "JSON-6", "PFX-2", "PFX-5"),
            (
                DOCS, Create("main", "s1"), *_turn(0, "one", compose=True), MutateContribution("docs", (_m("<prefix docs v2>"),)),
                *_turn(0, "two"), Resume("s1", "main"), *_turn(1, "three", compose=True),
            ),
        ),  # fmt: skip
        Scenario(
            "loop/dispose-mid-turn",
            "Dispose after a cancel ends the open turn disposed at the next checkpoint; an idle dispose writes nothing; a disposed instance takes no prompt.",
            ("LOOP-6", "LOOP-1"),
            (
                Create("main", "s1"), Create("main", "s2"), SendPrompt(0, "go"), *_until_reply(0, compose=True),
                Cancel(0), Dispose(0), Reply(0, text="late"), SendPrompt(0, "again"), Dispose(1), SendPrompt(1, "hello"),
            ),
            refused=(10, 12),
        ),  # fmt: skip
    )


def _stream_scenarios() -> tuple[Scenario, ...]:
    """Streamed replies: chunks, tool-call deltas and usage; a cancel mid-stream; a stream finishing in error."""
    return (
        Scenario(
            "stream/text-tools-usage",
            "Replies streamed as the harness's mock adapter streams them: every chunk logged verbatim, a tool call whose arguments arrive in two deltas, usage on each assistant/message.",
            ("STRM-1", "STRM-3", "STRM-4", "LOOP-12"),
            (
                DOCS, Create("main", "s1", tools=ECHO), SendPrompt(0, "look"),
                *_step(0, Reply(0, stream=tool_call_stream("c1", "echo", _call("c1", "x")[2], "let me see", pieces=4)), compose=True, outputs=("x",)),
                *_step(0, Reply(0, stream=text_stream("seen it", pieces=3, usage={"inputTokens": 40, "outputTokens": 2}))),
                SetSystem(0, "Answer briefly."), SendPrompt(0, "again"), *_step(0, Reply(0, stream=text_stream("ok again", pieces=2))),
            ),
        ),  # fmt: skip
        Scenario(
            "stream/cancel-mid-stream",
            "A cancel while the reply streams: the chunks logged before it stay, the step closes and the turn ends aborted with no assistant/message; the next turn streams whole.",
            ("STRM-5", "LOOP-6"),
            (
                Create("main", "s1"), SendPrompt(0, "go"), *_until_reply(0, compose=True),
                Reply(0, stream=text_stream("partial")[:2], more=True), Cancel(0), Reply(0, stream=text_stream("partial")[2:]),
                SendPrompt(0, "again"), *_step(0, Reply(0, stream=text_stream("done", pieces=2))),
            ),
        ),  # fmt: skip
        Scenario(
            "stream/error-finish",
            "A stream that finishes with an error after partial text fails the request as a thrown error does: the chunks stay, the step closes, the turn ends with the LlmError failure.",
            ("STRM-4", "LOOP-9"),
            (
                Create("main", "s1"), SendPrompt(0, "go"), *_until_reply(0, compose=True),
                Reply(0, stream=(*text_stream("par")[:3], _failed_finish("overloaded", "the provider is busy", 529))),
            ),
        ),  # fmt: skip
        Scenario(
            "stream/aborted-finish",
            "A stream whose finish is aborted fails the request as an error finish does: the chunks stay, the step closes, the turn ends with the LlmError failure.",
            ("STRM-4", "LOOP-9"),
            (
                Create("main", "s1"), SendPrompt(0, "go"), *_until_reply(0, compose=True),
                Reply(0, stream=(*text_stream("par")[:3], _failed_finish("aborted", "the provider stopped", 499, kind="aborted"))),
            ),
        ),  # fmt: skip
        Scenario(
            "stream/odd-chunks",
            "Chunks as BlockAssembler takes them: blocks in the order their index first appears (1 before 0), a reasoning block that never ends assembled from its deltas, an index on usage and finish opening no block, after a block's first block-end its deltas and a second block-end ignored, and an open tool call taking its last id and its last non-empty name.",
            ("STRM-1", "STRM-2", "STRM-3", "STRM-4"),
            (
                Create("main", "s1", tools=ECHO), SendPrompt(0, "think"), *_step(0, Reply(0, stream=_ODD_CHUNKS), compose=True, outputs=("x",)),
                *_turn(0, "again"),
            ),
        ),
        Scenario(
            "stream/replay-state",
            "A finish chunk's replayState is kept in the assistant/message's provenance while the content is what was assembled, and dropped at max tokens, where the tool call is cut from the content.",
            ("STRM-3", "STRM-4"),
            (
                Create("main", "s1", tools=ECHO), SendPrompt(0, "go"),
                *_step(0, Reply(0, stream=with_replay_state(text_stream("kept", pieces=2), "r1")), compose=True),
                SendPrompt(0, "again"),
                *_step(0, Reply(0, stream=with_replay_state(tool_call_stream(*_call("c1", "x"), text="cut"), "r2", "max-tokens"))),
                SendPrompt(0, "last"), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
        Scenario(
            "stream/error-finish-every-fact",
            "A stream that finishes with an error carrying every optional fact LlmError keeps (status, a fractional retry-after, a request id), in its order: the turn ends with that failure whole.",
            ("STRM-4", "LOOP-9"),
            (
                Create("main", "s1"), SendPrompt(0, "go"), *_until_reply(0, compose=True),
                Reply(0, stream=(_failed_finish("RATE_LIMIT", "slow down", 429, requestId="req-7", providerRetryAfterMs=0.5),)),
            ),
        ),  # fmt: skip
    )


def _guard_scenarios() -> tuple[Scenario, ...]:
    """Where the loop stops short or refuses: max tokens, actions outside their window, the inbox of what waits."""
    return (
        Scenario(
            "loop/max-tokens",
            "A reply that stops at max tokens ends the turn with reason max-tokens.",
            ("LOOP-9",),
            (Create("main", "s1"), SendPrompt(0, "write a lot"), *_step(0, Reply(0, text="truncat", max_tokens=True), compose=True)),
        ),
        Scenario(
            "loop/guards-refuse",
            "Segments outside their window are refused: a dispatch before step/start, a reply before the request, a dispatch when idle, a taken session id.",
            ("LOOP-1",),
            (
                Create("main", "s1"), SendPrompt(0, "a"), BeginStep(0), Compose(0), Dispatch(0), PreStep(0), Reply(0, text="early"),
                Dispatch(0), Reply(0, text="ok"), PostStep(0), Dispatch(0), Create("main", "s1"),
            ),
            refused=(4, 6, 10, 11),
        ),  # fmt: skip
        Scenario(
            "loop/no-provider-model",
            "An agent created without provider and model: its first request throws at agent/request (step/end, then turn/end in error naming the agent; no header, no request); a request config supplying both routes the next turn, and the turn after it starts from the logged header.",
            ("LOOP-1", "LOOP-10", "HDR-9", "HDR-11"),
            (
                Create("main", "s1", options=AgentOptions(provider="", model="")), SendPrompt(0, "who routes me?"),
                *_until_reply(0, compose=True), SendPrompt(0, "route me"),
                *_step(0, Reply(0, text="routed"), config=LlmCallConfig("mock", "mock-model")), *_turn(0, "again"),
            ),
        ),  # fmt: skip
        Scenario(
            "loop/a-provider-without-a-model",
            "An agent created with a provider but no model: its first request throws at agent/request as one with neither does (either missing is no route: step/end, then turn/end in error naming the agent; no header, no request).",
            ("LOOP-10",),
            (Create("main", "s1", options=AgentOptions(provider="mock", model="")), SendPrompt(0, "who routes me?"), *_until_reply(0, compose=True)),
        ),  # fmt: skip
        Scenario(
            "loop/a-request-config-without-a-model",
            "A routed agent whose request config names a provider but no model, then a model but no provider: each request throws at agent/request as an agent with no route does (step/end, then turn/end in error naming the agent; no header, no request); the next turn, with no config, is routed by the agent's options.",
            ("LOOP-10", "LOOP-1"),
            (
                Create("main", "s1"), SendPrompt(0, "go"), *_until_reply(0, compose=True, config=LlmCallConfig("mock", "")),
                SendPrompt(0, "again"), *_until_reply(0, config=LlmCallConfig("", "mock-model")), *_turn(0, "third"),
            ),
        ),  # fmt: skip
        Scenario(
            "inbox/queued-prompts",
            "What the running turn does not take waits in the inbox: a prompt sent during a turn opens the next turn when it ends; steering an error leaves undrained opens a fresh turn after it; a cancel drops what waits, and steering after it opens a fresh turn; idle, a steer is an ordinary turn and a cancel does nothing.",
            ("LOOP-13", "LOOP-4", "LOOP-6"),
            (
                Create("main", "s1"), SendPrompt(0, "first"), BeginStep(0), Compose(0), SendPrompt(0, "second"), PreStep(0), Dispatch(0),
                Reply(0, text="one"), PostStep(0), *_until_reply(0), Steer(0, "steer me"),
                Reply(0, failure="overloaded", failure_message="busy"), *_step(0, Reply(0, text="steered")),
                SendPrompt(0, "go"), BeginStep(0), Steer(0, "dropped steer"), SendPrompt(0, "dropped prompt"), Cancel(0),
                Steer(0, "after the cancel"), PreStep(0), *_step(0, Reply(0, text="fresh")),
                Cancel(0), Steer(0, "wake up"), *_step(0, Reply(0, text="awake")),
            ),
        ),  # fmt: skip
    )


# JSON's edges (JSON-3, JSON-4): numbers JavaScript prints with a fraction, an exponent or past 2^53, strings
# that need escapes, and keys JavaScript orders first (canonical array indices: "2", "10", "4294967294"; not
# "01", "-1", "1e3" or "4294967295"), in a tool schema, an inject's meta, a prompt and a request config.
EDGE_NUMBERS = (
    0.1, 0.1 + 0.2, 1 / 3, -0.5, 1e-6, 1e-7, -1e-7, 5e-324, 1.7976931348623157e308, 1.5e300,
    123456789012345680000.0, 1e21, -1e21, 2**53, 2**53 + 2, 100.0,
)  # fmt: skip
EDGE_TEXT = 'a "quoted" word, a back\\slash, a tab\t, a bell\u0007, a line\u2028separator, caf\u00e9 and \U0001f600'
EDGE_KEYS = ("10", "b", "2", "01", "4294967295", "-1", "a", "4294967294", "1e3")


def _gauge(pad: str) -> JsonValue:
    """A tool whose schema holds every edge value; ``pad`` tunes the length of its JSON text."""
    properties: dict[str, dict[str, object]] = {key: {"type": "number", "description": key + (pad if key == "b" else "")} for key in EDGE_KEYS}
    properties["10"] = {"type": "number", "minimum": -3.25, "maximum": 1e21, "multipleOf": 1e-7, "examples": list(EDGE_NUMBERS)}
    parameters = {"type": "object", "properties": properties, "required": ["10", "2"], "additionalProperties": False, "nullable": None, "strict": True}
    return freeze({"name": "gauge", "description": EDGE_TEXT, "parameters": parameters})


# A schema without a fraction: its text is the one JSON text a fast path could write, non-ASCII and all.
_NOTE = freeze({"name": "note", "description": "caf\u00e9 \U0001f600 \u2028 \u00fc\u00df", "parameters": {"type": "object", "required": [], "x-flags": [True, False, None]}})


def edge_tools(pad: str) -> tuple[JsonValue, ...]:
    """The tools of the value scenarios: echo, the edge values' gauge (``pad`` tunes its text's length), and a note."""
    return (*ECHO, _gauge(pad), _NOTE)


_EDGE_META = FrozenMap({key: freeze(value) for key, value in zip(EDGE_KEYS, (*EDGE_NUMBERS[5:13], {"1": [1e-7, "\u2028"]}))})
_EDGE_CONFIG = LlmCallConfig("mock", "mock-model", None, 0.1 + 0.2, 4096, ("\n\n", '"END"'))


def _pressure_edges(pad: str, *, above: bool) -> tuple[Action, ...]:
    """A step priced by the meter's estimate (tools as JSON text), under a threshold at its total or one above it."""
    tools = edge_tools(pad)
    head = (Create("main", "s1", tools=tools), SendPrompt(0, EDGE_TEXT + " " + _LONG), *_until_reply(0, compose=True, config=_EDGE_CONFIG))
    body = (Inject(0, EDGE_TEXT, _NOTES, _EDGE_META), Reply(0, text=EDGE_TEXT), PostStep(0, summaries=("checkpoint",)))
    total = measure(play(Scenario("(pricing)", "", (), (*head, *body[:2]))).session("s1").log).total
    policy = CompactPolicy(context_window=total + (1 if above else 0), threshold_ratio=1, retain_tokens=8)
    return (MountCompaction(policy), *head, *body, *_turn(0, "go on"))


def _value_scenarios() -> tuple[Scenario, ...]:
    """JSON's edges through the loop: the text JavaScript writes of numbers, strings and keys, which the meter prices."""
    return (
        Scenario(
            "values/json-edges-at-threshold",
            "A tool schema, a config, an inject's meta, a prompt and a reply holding JSON's edges: fractions, exponents, "
            "integers past 2^53, escapes, integer-like keys. The meter prices the tools by their JSON text: at a threshold "
            "equal to its estimate the post-step compacts, so a text one character shorter would not.",
            ("JSON-3", "JSON-4", "TOK-1", "TOK-2", "CMP-5", "HDR-6", "LOOP-7", "LOOP-10"),
            _pressure_edges("xxx", above=False),  # the tools' text is 4n + 1 UTF-16 units long: one fewer is a token less
        ),
        Scenario(
            "values/json-edges-below-threshold",
            "The same edges under a threshold one token above the estimate: nothing compacts, so a text one character longer would.",
            ("JSON-3", "JSON-4", "TOK-1", "TOK-2", "CMP-5"),
            _pressure_edges("xx", above=True),  # 4n units: one more is a token more
        ),
    )


def _witness_scenarios() -> tuple[Scenario, ...]:
    """The faulty-variant witness run (spec §13) as a scenario."""
    return (
        Scenario(
            "variants/witness",
            "The faulty-variant witness run (spec §13): two scoped listeners, a cancelled composition, a late inject, tools, system and config changes, a mutated contribution, a compaction, a resume, a fork, an agent with no listener.",
            ("VAR-1", "PFX-1", "PFX-2", "PFX-3", "PFX-4", "PFX-5", "PFX-7", "PFX-8", "PFX-11", "PFX-12", "CMP-1", "CMP-2", "FORK-8",
             "REC-1", "REC-2", "REC-3", "HDR-15", "LOOP-3", "LOOP-7", "LOOP-10", "LOOP-12"),
            WITNESS,
        ),  # fmt: skip
    )


# The sections in catalogue order, which is not by id: prefix/ and loop/ scenarios return in later
# sections. A new scenario goes at the end of the section of its theme.
_SECTIONS = (
    _composition_scenarios, _cancel_scenarios, _resume_scenarios, _compaction_scenarios, _fork_scenarios, _header_scenarios,
    _inject_scenarios, _prompt_scenarios, _agent_scenarios, _stream_scenarios, _guard_scenarios, _witness_scenarios,
    _value_scenarios,
)  # fmt: skip


@cache
def scenarios() -> tuple[Scenario, ...]:
    """Return every scenario, in catalogue order (ids are unique)."""
    return tuple(scenario for section in _SECTIONS for scenario in section())
