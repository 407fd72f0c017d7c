"""The conformance-vector catalogue (spec/vectors.md §2). Pure: no I/O, no clock, no randomness.

Two kinds of case, each with a stable slug id and the requirement IDs it exercises:

- a **scenario** — an action script (the ``actions.py`` alphabet) the model runs under the
  harness's semantics; the vector holds the script and what the run shows (every session's
  events and every request sent). A scenario may name actions the loop must *refuse* (their
  guard does not hold, LOOP-1).
- a **log case** — a log in the in-memory event form, optionally with a requests capture, that
  a conforming checker must accept (``valid``) or reject naming ``requirement``. Each is made from
  a scenario's run by one targeted mutation, or is a faulty variant's witness run (§13). A log
  case with a ``file`` is a log file in the persisted form (``persisted.py``) that a conforming
  reader must read to exactly ``log`` (and its torn tail), or reject naming ``requirement``.

Everything here is computed from the model: no expected value is written by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.core.requests import request_to_json
from prefix_model.edge.vectors import FORMAT_VERSION, VECTOR_SCHEMA
from prefix_model.edge.vectors.codec import action_to_json, expected_of, layout, obj
from prefix_model.edge.vectors.persisted import FileCase, clocked, file_cases, in_memory_rows
from prefix_model.examples.streams import text_stream, tool_call_stream
from prefix_model.formats.event_lines import event_to_json
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
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.variants import VARIANTS, WITNESS, run_witness
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

__all__ = [
    "Scenario",
    "LogCase",
    "Case",
    "ScriptError",
    "scenarios",
    "play",
    "world_of",
    "log_cases",
    "catalogue",
    "PENDING_MODEL_BUGS",
    "pending_cases",
    "case_to_json",
    "case_text",
    "CASE_LAYOUT",
    "log_lines",
    "capture_lines",
]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A valid case: an action script, the actions the loop must refuse, and what it exercises."""

    id: str
    description: str
    requirements: tuple[str, ...]
    actions: tuple[Action, ...]
    refused: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class LogCase:
    """A log (and capture) for a checker: accepted when ``requirement`` is None, else rejected by it."""

    id: str
    description: str
    requirements: tuple[str, ...]
    session: str
    log: tuple[str, ...]
    capture: tuple[str, ...] | None
    requirement: str | None = None
    provenance: FrozenMap = field(default_factory=FrozenMap)
    file: FrozenMap | None = None  # the log file as stored (persisted.text_file, zstd_file); ``log`` is then what it reads to
    torn_tail: int | None = None  # with ``file``, valid: the line of the tolerated torn tail (FMT-7)

    @property
    def valid(self) -> bool:
        """Return whether a conforming checker must accept this log."""
        return self.requirement is None


Case = Scenario | LogCase


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
_LONG = "read the plan, then carry it out step by step; " * 10  # long enough that a summary of it is smaller (CMP-6)


def _finish_error(code: str, message: str, status: int) -> FrozenMap:
    return FrozenMap({"type": "finish", "reason": FrozenMap({"kind": "error", "failure": FrozenMap({"message": message, "code": code, "status": status})})})


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
    actions: list[Action] = [BeginStep(i), Compose(i)] if compose else [BeginStep(i)]
    actions += [PreStep(i, pre), Dispatch(i, config), answer]
    if answer.failure is not None:
        return tuple(actions)
    if answer.tool_calls or outputs:  # a streamed reply's calls are in its chunks: the outputs say there are some
        actions.append(RunTools(i, outputs))
    return tuple(actions + [PostStep(i, post)])


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


@cache
def scenarios() -> tuple[Scenario, ...]:
    """Return every scenario, in catalogue order (ids are unique)."""
    fork_head = (DOCS, Create("main", "s1"), *_turn(0, "plan the work", compose=True), *_turn(0, "do it"))
    first_end = _seq(fork_head, "s1", "turn/end")
    a_step_start = _seq(fork_head, "s1", "step/start", 1)
    twice_head = (DOCS, Create("main", "s1"), *_turn(0, _LONG, compose=True), *_turn(0, "two"))
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
            ("PFX-1", "PFX-3", "DER-8", "REQ-2", "REC-1", "REC-2", "HDR-12"),
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
                *_step(0, Reply(0, tool_calls=(_call("c1", "x"),)), compose=True, outputs=("x",)), *_step(0, Reply(0, text="done")),
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
                *_step(0, Reply(0, tool_calls=(_call("c1", "a"), _call("c2", "b"))), compose=True, outputs=("a", "b")),
                *_step(0, Reply(0, text="echoed a and b")),
            ),
        ),  # fmt: skip
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
                SendPrompt(0, "second"), BeginStep(0), PreStep(0), Dispatch(0), Cancel(0), Reply(0, text="partial"),
                *_turn(0, "third"),
            ),
        ),  # fmt: skip
        Scenario(
            "cancel/before-dispatch",
            "A cancel after step/start, before the request: the step closes with no header and no request.",
            ("LOOP-6",),
            (
                DOCS, Create("main", "s1"), *_turn(0, "first", compose=True),
                SendPrompt(0, "second"), BeginStep(0), PreStep(0), Cancel(0), Dispatch(0), *_turn(0, "third"),
            ),
        ),  # fmt: skip
        Scenario(
            "resume/same-prefix",
            "A resumed instance recomposes the same prefix and anchors with an unconditional resume snapshot equal to the fold.",
            ("PFX-5", "HDR-9", "REC-1"),
            (DOCS, Create("main", "s1"), *_turn(0, "before", compose=True), Resume("s1", "main"), *_turn(1, "after", compose=True)),
        ),
        Scenario(
            "resume/changed-prefix",
            "A resumed instance recomposes a changed prefix; its resume anchor carries the new prefix and later requests use it.",
            ("PFX-5", "HDR-9", "HDR-11", "HDR-7"),
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
            "compaction/post-step-listener",
            "A post-step listener calls compactRegion inside the turn, after the tool batch; the next step's request is the prefix and the compacted history.",
            ("CMP-1", "CMP-2", "SURF-6", "SURF-8", "DER-6"),
            (
                DOCS, Create("main", "s1", tools=ECHO), *_turn(0, _LONG, compose=True), SendPrompt(0, "two"),
                *_step(0, Reply(0, tool_calls=(_call("c1", "x"),)), outputs=("x",), post=(0, 4)), *_step(0, Reply(0, text="done")),
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
                SendPrompt(0, _LONG), *_step(0, Reply(0, tool_calls=(_call("c1", "x"),)), outputs=("x",)), *_step(0, Reply(0, text="done")),
                SendPrompt(0, "more"), BeginStep(0), PreStep(0, compact=(3, 4)),
            ),
        ),  # fmt: skip
        Scenario(
            "compaction/pressure",
            "The service mounted over a 1000-token model: post-step usage of 810 is at the 800 threshold, the head is compacted leaving a 160-token tail, the meter falls below it, and the next turn's request starts with the checkpoint.",
            ("CMP-5", "CMP-3", "CMP-4", "CMP-2", "CMP-6", "TOK-3"),
            (
                MountCompaction(CompactPolicy(context_window=1000)), DOCS, Create("main", "s1"),
                SendPrompt(0, "a" * 800), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, stream=text_stream("b" * 800, pieces=4)),
                PostStep(0, summaries=("checkpoint summary",)), *_turn(0, "next"),
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
                BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=(_call("c1", "x"),)),
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
                Create("main", "s1", tools=ECHO), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0),
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
                SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=(_call("c1", "x"),)),
                Inject(0, "note two", _NOTES, FrozenMap({"n": 2})), RunTools(0, ("x",)), PostStep(0), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
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
            "steering/mid-turn",
            "Steering is drained after a tool batch, at the top of a step, and after a response, which forces another step.",
            ("LOOP-8",),
            (
                Create("main", "s1", tools=ECHO), SendPrompt(0, "start"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0),
                Reply(0, tool_calls=(_call("c1", "x"),)), Steer(0, "steer during tools"), RunTools(0, ("x",)), PostStep(0),
                Steer(0, "steer before step 2"), BeginStep(0), PreStep(0), Dispatch(0), Steer(0, "steer while streaming"),
                Reply(0, text="noted"), PostStep(0), *_step(0, Reply(0, text="done")),
            ),
        ),  # fmt: skip
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
                Create("main", "s1"), Create("main", "s2"), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0),
                Cancel(0), Dispose(0), Reply(0, text="late"), SendPrompt(0, "again"), Dispose(1), SendPrompt(1, "hello"),
            ),
            refused=(10, 12),
        ),  # fmt: skip
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
                Create("main", "s1"), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0),
                Reply(0, stream=text_stream("partial")[:2], more=True), Cancel(0), Reply(0, stream=text_stream("partial")[2:]),
                SendPrompt(0, "again"), *_step(0, Reply(0, stream=text_stream("done", pieces=2))),
            ),
        ),  # fmt: skip
        Scenario(
            "stream/error-finish",
            "A stream that finishes with an error after partial text fails the request as a thrown error does: the chunks stay, the step closes, the turn ends with the LlmError failure.",
            ("STRM-4", "LOOP-9"),
            (
                Create("main", "s1"), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0),
                Reply(0, stream=(*text_stream("par")[:3], _finish_error("overloaded", "the provider is busy", 529))),
            ),
        ),  # fmt: skip
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
            "inbox/queued-prompts",
            "What the running turn does not take waits in the inbox: a prompt sent during a turn opens the next turn when it ends; steering an error leaves undrained opens a fresh turn after it; a cancel drops what waits, and steering after it opens a fresh turn; idle, a steer is an ordinary turn and a cancel does nothing.",
            ("LOOP-13", "LOOP-4", "LOOP-6"),
            (
                Create("main", "s1"), SendPrompt(0, "first"), BeginStep(0), Compose(0), SendPrompt(0, "second"), PreStep(0), Dispatch(0),
                Reply(0, text="one"), PostStep(0), BeginStep(0), PreStep(0), Dispatch(0), Steer(0, "steer me"),
                Reply(0, failure="overloaded", failure_message="busy"), *_step(0, Reply(0, text="steered")),
                SendPrompt(0, "go"), BeginStep(0), Steer(0, "dropped steer"), SendPrompt(0, "dropped prompt"), Cancel(0),
                Steer(0, "after the cancel"), PreStep(0), *_step(0, Reply(0, text="fresh")),
                Cancel(0), Steer(0, "wake up"), *_step(0, Reply(0, text="awake")),
            ),
        ),  # fmt: skip
        Scenario(
            "variants/witness",
            "The faulty-variant witness run (spec §13): two scoped listeners, a cancelled composition, a late inject, tools, system and config changes, a mutated contribution, a compaction, a resume, a fork, an agent with no listener.",
            ("VAR-1", "PFX-1", "PFX-2", "PFX-3", "PFX-4", "PFX-5", "PFX-7", "PFX-8", "CMP-1", "CMP-2", "FORK-8", "REC-1", "REC-2",
             "REC-3", "HDR-15", "LOOP-3", "LOOP-7", "LOOP-10", "LOOP-12"),
            WITNESS,
        ),  # fmt: skip
    )


@cache
def world_of(scenario_id: str) -> World:
    """Return the world after the scenario named ``scenario_id`` (run once per process)."""
    return play(next(s for s in scenarios() if s.id == scenario_id))


# --- Logs and captures of a run ---

Events = tuple[FrozenMap, ...]
Lines = tuple[str, ...]


def _events(world: World, session: str) -> Events:
    return tuple(event_to_json(e) for e in world.session(session).log.events)


def _capture(world: World, session: str, named: bool = True) -> Events:
    """Return the session's requests as capture lines: the request, then turn and step (CAP-1)."""
    lines = []
    for sent in world.requests:
        if sent.session_id != session:
            continue
        fields = dict(request_to_json(sent.request))
        if named:
            fields |= {"turn": sent.turn, "step": sent.step}
        if not sent.loop_request:
            fields["agentLoopRequest"] = False
        lines.append(FrozenMap(fields))
    return tuple(lines)


def _text(values: Events) -> Lines:
    return tuple(json_text(v) for v in values)


def log_lines(world: World, session: str) -> Lines:
    """Return the session's log as in-memory event lines (FMT-3), as a checker reads it."""
    return _text(_events(world, session))


def capture_lines(world: World, session: str) -> Lines:
    """Return the session's requests as capture lines naming turn and step (CAP-1)."""
    return _text(_capture(world, session))


# --- Targeted mutations of a scenario's log or capture ---

Path = tuple[str | int, ...]
Edit = Callable[[Events], Events]
_DROP = object()  # an edit result that removes the key or element


def _edit(value: JsonValue, path: Path, change: Callable[[JsonValue], object]) -> object:
    """Return ``value`` with the member at ``path`` changed (or dropped when ``change`` returns ``_DROP``)."""
    if not path:
        return change(value)
    head, rest = path[0], path[1:]
    if isinstance(value, FrozenMap) and isinstance(head, str):
        fields = dict(value)
        item = _edit(value.get(head), rest, change)
        if item is _DROP:
            del fields[head]
        else:
            fields[head] = freeze(item)
        return FrozenMap(fields)
    assert isinstance(value, tuple) and isinstance(head, int)
    item = _edit(value[head], rest, change)
    return value[:head] + (() if item is _DROP else (freeze(item),)) + value[head + 1 :]


def _edited(value: FrozenMap, path: Path, change: Callable[[JsonValue], object]) -> FrozenMap:
    """Return the object ``value`` with the member at ``path`` changed or dropped."""
    result = _edit(value, path, change)
    assert isinstance(result, FrozenMap)
    return result


def _index(events: Events, kind: str, nth: int = 0) -> int:
    return [n for n, e in enumerate(events) if e.get("type") == kind][nth]


def _on(kind: str, path: Path, change: Callable[[JsonValue], object], nth: int = 0) -> Edit:
    """Edit the ``nth`` event of type ``kind`` at ``path``."""

    def edit(events: Events) -> Events:
        n = _index(events, kind, nth)
        return events[:n] + (_edited(events[n], path, change),) + events[n + 1 :]

    return edit


def _on_line(index: int, path: Path, change: Callable[[JsonValue], object]) -> Edit:
    """Edit capture line ``index`` at ``path``."""
    return lambda lines: lines[:index] + (_edited(lines[index], path, change),) + lines[index + 1 :]


def _rotate(messages: JsonValue) -> object:
    """Move the first message (the prefix) after the others."""
    assert isinstance(messages, tuple)
    return messages[1:] + messages[:1]


def _set(item: JsonValue) -> Callable[[JsonValue], object]:
    return lambda _: item


def _drop(_: JsonValue) -> object:
    return _DROP


def _then(*edits: Edit) -> Edit:
    def edit(events: Events) -> Events:
        for one in edits:
            events = one(events)
        return events

    return edit


def _insert_before_last(*new: FrozenMap) -> Edit:
    """Insert events (their seqs assigned) before the log's last event, which moves up."""

    def edit(events: Events) -> Events:
        start = len(events) - 1
        placed = tuple(_edited(e, ("seq",), _set(start + k)) for k, e in enumerate(new))
        return events[:-1] + placed + (_edited(events[-1], ("seq",), _set(start + len(new))),)

    return edit


def _header_of(events: Events, nth: int) -> JsonValue:
    data = events[_index(events, "request/header", nth)]["data"]
    assert isinstance(data, FrozenMap)
    return data["header"]


def _number_line(events: Events, index: int, text: str) -> Lines:
    """Return the log's lines with event ``index``'s data given a key ``weight`` whose number text is ``text``."""
    marked = _edited(events[index], ("data", "weight"), _set(0))
    lines = list(_text(events))
    lines[index] = json_text(marked).replace('"weight":0', f'"weight":{text}')
    return tuple(lines)


@dataclass(frozen=True, slots=True)
class _Mutant:
    id: str
    base: str
    requirement: str | None
    requirements: tuple[str, ...]
    description: str
    log: Edit | None = None
    capture_edit: Edit | None = None
    raw: Callable[[Events], Lines] | None = None  # the log's lines made from its events, for edits JSON cannot hold
    capture: bool = False  # whether the case carries the requests capture
    named: bool = True  # whether capture lines name turn and step
    wrapper: bool = False  # capture lines in the recorder's {index, capture, request} form
    session: str = "s1"


def _tool_result_rewrite(events: Events) -> Events:
    n = _index(events, "tool/result")
    original = events[n]
    data = _edit(original["data"], ("content",), _set((FrozenMap({"type": "text", "text": "a (redacted)"}),)))
    assert isinstance(data, FrozenMap)
    seq = original["seq"]
    fields: dict[str, JsonValue] = {"type": "tool/result", "seq": 0, "time": 0, "data": data, "sourceEventSeqs": (seq,),
                                    "surfaceOp": FrozenMap({"op": "replace", "start": seq, "end": seq})}  # fmt: skip
    return _insert_before_last(FrozenMap(fields))(events)


def _plugin_records(events: Events) -> Events:
    note = FrozenMap({"type": "plugin/note", "seq": 0, "time": 0, "data": FrozenMap({"note": "a plugin's own record"})})
    context = freeze({"type": "context/message", "seq": 0, "time": 0, "data": {"content": [{"type": "text", "text": "a type only older design notes name (SPEC D-1)"}]}})
    assert isinstance(context, FrozenMap)
    return _insert_before_last(note, context)(events)


def _clock(events: Events) -> Events:
    return tuple(_edited(e, ("time",), _set(1767225600000 + 7 * n)) for n, e in enumerate(events))


def _duplicate_type(events: Events) -> Lines:
    lines = list(_text(events))
    lines[0] = '{"type":"plugin/ghost",' + lines[0][1:]
    return tuple(lines)


def _as_lines(edit: Callable[[list[str]], None]) -> Callable[[Events], Lines]:
    def raw(events: Events) -> Lines:
        lines = list(_text(events))
        edit(lines)
        return tuple(lines)

    return raw


_ANY_PREFIX = (FrozenMap({"role": "user", "content": (FrozenMap({"type": "text", "text": "<prefix from elsewhere>"}),)}),)
_SYSTEM_CHANGE = "header/system-change-between-steps"
FILE_BASE = "stream/text-tools-usage"  # the log files' session: two turns, a two-step first turn, streamed text and tool-call deltas that pack


def _mutants() -> tuple[_Mutant, ...]:
    nl, tc, cp = "loop/no-listener", "loop/tool-calls-multi-step", "compaction/pre-step"
    return (
        # Logs a conforming checker must accept.
        _Mutant("log/unknown-types-accepted", nl, None, ("LOG-9", "LOG-12", "FMT-1", "MATCH-1"),
                "a plugin's own event type and the retired context/message are log-only records", _plugin_records, capture=True),
        _Mutant("log/tool-result-rewrite", tc, None, ("SURF-9", "SURF-3", "SURF-6", "SURF-8", "DER-6", "JSON-5"),
                "a tool/result replaces the first tool/result, changing only its content", _tool_result_rewrite, capture=True),
        _Mutant("log/real-clock-times", nl, None, ("LOG-3", "JSON-3"), "events carry epoch-millisecond times", _clock, capture=True),
        _Mutant("log/duplicate-keys-last-wins", nl, None, ("FMT-4",),
                'the first line spells "type" twice; JSON.parse keeps the last value', raw=_duplicate_type, capture=True),
        _Mutant("log/capture-in-order", tc, None, ("MATCH-2", "REC-1", "REC-3"),
                "capture lines name no turn or step: matched in order to the dispatching steps", capture=True, named=False),
        _Mutant("log/capture-recorder-wrapper", tc, None, ("CAP-1", "MATCH-1"),
                "capture lines in the harness recorder's {index, capture, request} form", capture=True, wrapper=True),
        # The envelope and the event vocabulary (§2).
        _Mutant("invalid/log-1/unknown-envelope-key", nl, "LOG-1", ("LOG-1",), "turn/start carries an extra envelope key",
                _on("turn/start", ("extra",), _set(True))),
        _Mutant("invalid/log-2/seq-gap", nl, "LOG-2", ("LOG-2",), "the first assistant/chunk is left out; later seqs keep their values",
                lambda events: events[:4] + events[5:]),
        _Mutant("invalid/log-3/negative-time", nl, "LOG-3", ("LOG-3",), "step/start has time -1", _on("step/start", ("time",), _set(-1))),
        _Mutant("invalid/log-5/surface-op-missing", nl, "LOG-5", ("LOG-5",), "the user/message has no surfaceOp",
                _on("user/message", ("surfaceOp",), _drop)),
        _Mutant("invalid/log-6/surface-op-on-log-only", nl, "LOG-6", ("LOG-6",), 'turn/start carries surfaceOp "append"',
                _on("turn/start", ("surfaceOp",), _set("append"))),
        _Mutant("invalid/log-7/header-delta", nl, "LOG-7", ("LOG-7",), "the snapshot is a legacy request/header-delta",
                _on("request/header", ("type",), _set("request/header-delta"))),
        _Mutant("invalid/log-7/mode-set", nl, "LOG-7", ("LOG-7",), "the snapshot is a legacy mode/set", _on("request/header", ("type",), _set("mode/set"))),
        _Mutant("invalid/log-8/fallback-reason", nl, "LOG-8", ("LOG-8",), 'the snapshot\'s reason is the legacy "fallback"',
                _on("request/header", ("data", "reason"), _set("fallback"))),
        _Mutant("invalid/log-11/data-not-an-object", nl, "LOG-11", ("LOG-11",), "step/end data is an array",
                _on("step/end", ("data",), _set((1, 1)))),
        _Mutant("invalid/log-13/assistant-without-provenance", nl, "LOG-13", ("LOG-13",), "the assistant/message has no provenance",
                _on("assistant/message", ("data", "provenance"), _drop)),
        _Mutant("invalid/log-14/aborted-with-extra-key", "cancel/during-compose-then-new-turn", "LOG-14", ("LOG-14",),
                "the aborted turn/end reason also names a step", _on("turn/end", ("data", "reason", "step"), _set(1))),
        _Mutant("invalid/log-15/content-not-an-array", nl, "LOG-15", ("LOG-15",), "the user/message content is a string",
                _on("user/message", ("data", "content"), _set("hello"))),
        _Mutant("invalid/json-1/infinite-number", nl, "JSON-1", ("JSON-1",), "turn/start data holds 1e400, which reads as Infinity",
                raw=lambda events: _number_line(events, 0, "1e400")),
        _Mutant("invalid/json-2/negative-zero", nl, "JSON-2", ("JSON-2",), "turn/start data holds -0",
                raw=lambda events: _number_line(events, 0, "-0")),
        _Mutant("invalid/fmt-1/not-json", nl, "FMT-1", ("FMT-1",), "the fifth line is cut short",
                raw=_as_lines(lambda lines: lines.__setitem__(4, lines[4][:30]))),
        _Mutant("invalid/fmt-1/empty-line", nl, "FMT-1", ("FMT-1",), "the fifth line is empty", raw=_as_lines(lambda lines: lines.__setitem__(4, ""))),
        _Mutant("invalid/fmt-8/packed-row-in-memory-form", FILE_BASE, "FMT-8", ("FMT-8", "FMT-6"),
                "the log of streamed replies written in the persisted form without its header line: "
                "packed rows among in-memory event lines", raw=in_memory_rows),
        # The surface (§3).
        _Mutant("invalid/surf-3/unknown-surface-op", tc, "SURF-3", ("SURF-3",), 'a tool/result has surfaceOp "prepend"',
                _on("tool/result", ("surfaceOp",), _set("prepend"))),
        _Mutant("invalid/surf-3/replace-with-extra-key", cp, "SURF-3", ("SURF-3",), "the compaction's replace op has an extra key",
                _on("user/message", ("surfaceOp", "extra"), _set(0), nth=3)),
        _Mutant("invalid/surf-4/replace-start-not-on-surface", cp, "SURF-4", ("SURF-4",), "the compaction replaces from seq 0 (turn/start)",
                _on("user/message", ("surfaceOp", "start"), _set(0), nth=3)),
        _Mutant("invalid/surf-5/replace-start-after-end", cp, "SURF-5", ("SURF-5",), "the compaction's start and end are swapped",
                _then(_on("user/message", ("surfaceOp", "start"), _set(10), nth=3), _on("user/message", ("surfaceOp", "end"), _set(1), nth=3))),
        _Mutant("invalid/surf-7/source-not-earlier", tc, "SURF-7", ("SURF-7",), "a tool/result names itself as its source",
                lambda events: _on("tool/result", ("sourceEventSeqs",), _set((events[_index(events, "tool/result")]["seq"],)))(events)),
        _Mutant("invalid/surf-8/provenance-misses-shadowed", cp, "SURF-8", ("SURF-8",), "the compaction's provenance leaves out the last shadowed node",
                _on("user/message", ("sourceEventSeqs", 4), _drop, nth=3)),
        _Mutant("invalid/surf-9/tool-result-replaces-messages", cp, "SURF-9", ("SURF-9",), "the compaction summary is written as a tool/result",
                _then(_on("user/message", ("data", "callId"), _set("c1"), nth=3), _on("user/message", ("data", "isError"), _set(False), nth=3),
                      _on("user/message", ("type",), _set("tool/result"), nth=3))),
        # Headers (§5) and the record rule (§11).
        _Mutant("invalid/hdr-1/header-without-config", nl, "HDR-1", ("HDR-1",), "the snapshot has no config",
                _on("request/header", ("data", "header"), _set(FrozenMap({"system": "You are careful."})))),
        _Mutant("invalid/hdr-2/empty-provider", nl, "HDR-2", ("HDR-2",), "the snapshot's provider is empty",
                _on("request/header", ("data", "header", "config", "provider"), _set(""))),
        _Mutant("invalid/hdr-9/first-snapshot-not-initial", nl, "HDR-9", ("HDR-9", "PFX-5"), 'the first snapshot says "resume"',
                _on("request/header", ("data", "reason"), _set("resume"))),
        _Mutant("invalid/hdr-9/resume-anchor-says-initial", "resume/same-prefix", "HDR-9", ("HDR-9", "PFX-5"),
                'the resumed instance\'s anchor says "initial" though the log holds a header', _on("request/header", ("data", "reason"), _set("initial"), nth=1)),
        _Mutant("invalid/hdr-13/start-reason", nl, "HDR-13", ("HDR-13",), 'the snapshot\'s reason is "start"',
                _on("request/header", ("data", "reason"), _set("start"))),
        _Mutant("invalid/hdr-15/change-equal-to-fold", _SYSTEM_CHANGE, "HDR-15", ("HDR-15", "HDR-10"),
                "the change snapshot repeats the header in force", lambda events: _on("request/header", ("data", "header"), _set(_header_of(events, 0)), nth=1)(events)),
        _Mutant("invalid/pfx-3/change-carries-another-prefix", _SYSTEM_CHANGE, "PFX-3", ("PFX-3", "PFX-2"),
                "the change snapshot carries another prefix than the instance's anchor",
                _on("request/header", ("data", "header", "messagePrefix"), _set(_ANY_PREFIX), nth=1)),
        _Mutant("invalid/pfx-6/empty-message-prefix", nl, "PFX-6", ("PFX-6", "HDR-12"), "the snapshot writes messagePrefix: []",
                _on("request/header", ("data", "header", "messagePrefix"), _set(()))),
        # Enclosure (§14).
        _Mutant("invalid/enc-1/turn-end-closes-another-turn", nl, "ENC-1", ("ENC-1",), "turn/end names turn 2", _on("turn/end", ("data", "turn"), _set(2))),
        _Mutant("invalid/enc-2/step-end-closes-another-step", nl, "ENC-2", ("ENC-2",), "step/end names step 2", _on("step/end", ("data", "step"), _set(2))),
        _Mutant("invalid/enc-3/chunk-outside-its-step", nl, "ENC-3", ("ENC-3",), "an assistant/chunk names step 2", _on("assistant/chunk", ("data", "step"), _set(2))),
        _Mutant("invalid/enc-3/tool-result-without-call", tc, "ENC-3", ("ENC-3",), "a tool/result answers a call id no tool/call made",
                _on("tool/result", ("data", "callId"), _set("c9"))),
        # Requests against the log (§11, §14).
        _Mutant("invalid/rec-1/prefix-dropped", tc, "REC-1", ("REC-1", "REQ-2"), "the first captured request leaves the prefix out",
                capture_edit=_on_line(0, ("messages", 0), _drop), capture=True),
        _Mutant("invalid/rec-1/history-before-prefix", tc, "REC-1", ("REC-1", "REQ-2"), "the second captured request sends the prefix after the history",
                capture_edit=_on_line(1, ("messages",), _rotate), capture=True),
        _Mutant("invalid/rec-2/provider-differs", tc, "REC-2", ("REC-2",), "the second captured request names another provider",
                capture_edit=_on_line(1, ("provider",), _set("other")), capture=True),
        _Mutant("invalid/match-1/step-not-in-log", tc, "MATCH-1", ("MATCH-1",), "a captured request names turn 9",
                capture_edit=_on_line(1, ("turn",), _set(9)), capture=True),
        _Mutant("invalid/match-2/ambiguous-step", "cancel/before-dispatch", "MATCH-2", ("MATCH-2",),
                "capture lines name no step, and a cancelled step left no header and no chunk", capture=True, named=False),
        _Mutant("invalid/cap-1/not-a-request", tc, "CAP-1", ("CAP-1",), "a capture line is not a request",
                capture_edit=lambda capture: capture + (FrozenMap({"hello": "world"}),), capture=True),
    )  # fmt: skip


def _wrapped(world: World, session: str) -> Events:
    """Return the session's requests in the recorder's wrapper form (spec/formats.md §5)."""
    events = world.session(session).log.events
    lines = []
    for index, sent in enumerate(r for r in world.requests if r.session_id == session):
        start = max(e.seq for e in events[: sent.log_length] if e.type == "step/start")
        capture: dict[str, JsonValue] = {"agentLoopRequest": sent.loop_request, "sessionId": session,
                   "lastStepStart": FrozenMap({"seq": start, "turn": sent.turn, "step": sent.step})}  # fmt: skip
        lines.append(FrozenMap({"index": index, "capture": FrozenMap(capture), "request": request_to_json(sent.request)}))
    return tuple(lines)


def _mutant_case(mutant: _Mutant, world: World) -> LogCase:
    events = _events(world, mutant.session)
    if mutant.log is not None:
        events = mutant.log(events)
    lines = mutant.raw(events) if mutant.raw is not None else _text(events)
    capture: Lines | None = None
    if mutant.capture:
        values = _wrapped(world, mutant.session) if mutant.wrapper else _capture(world, mutant.session, mutant.named)
        capture = _text(mutant.capture_edit(values) if mutant.capture_edit is not None else values)
    provenance = obj({"kind": "mutation", "from": mutant.base, "session": mutant.session, "mutation": mutant.description})
    what = "accept" if mutant.requirement is None else f"reject with {mutant.requirement}"
    description = f"{mutant.description[:1].upper()}{mutant.description[1:]} (from {mutant.base}): a conforming checker must {what}."
    return LogCase(mutant.id, description, mutant.requirements, mutant.session, lines, capture, mutant.requirement, provenance)


# --- Faulty variants (§13) that a checker sees in a log and its capture ---

# variant name -> (session of the witness run, the requirement a checker must report); the variants
# not listed leave no trace a log-and-capture checker can see (their properties need the loop's own
# state: a composition, a listener's order, the meter) and are caught by replaying scenarios instead.
VARIANT_CASES: tuple[tuple[str, str, str], ...] = (
    ("compose-per-request", "s1", "PFX-3"),
    ("compose-per-turn", "s1", "PFX-3"),
    ("prefix-not-logged", "s1", "REC-1"),
    ("prefix-after-history", "s1", "REC-1"),
    ("no-resume-anchor", "s1", "PFX-3"),
    ("empty-prefix-logged", "s3", "PFX-6"),
    ("boundary-after-step-start", "s1", "REC-1"),
    ("compaction-drops-prefix", "s1", "PFX-3"),
    ("compaction-logs-header", "s1", "CMP-1"),
    ("no-change-on-system", "s1", "REC-1"),
    ("cache-by-reference", "s1", "PFX-3"),
    ("effort-from-options", "s1", "REC-2"),
    ("history-window", "s1", "REC-3"),
    ("change-always", "s1", "HDR-15"),
)


def _variant_case(name: str, session: str, requirement: str) -> LogCase:
    variant = next(v for v in VARIANTS if v.name == name)
    world = run_witness(variant.semantics)
    provenance = obj({"kind": "variant", "variant": name, "from": "variants/witness", "session": session})
    description = (f"The witness run under the faulty variant {name!r} ({variant.summary}), session {session}: "
                   f"a conforming checker must reject it with {requirement}.")  # fmt: skip
    log, capture = _text(_events(world, session)), _text(_capture(world, session))
    return LogCase(f"invalid/variant/{name}", description, (requirement, "VAR-1"), session, log, capture, requirement, provenance)


# --- Log files in the persisted form (persisted.py): one scenario's session, streamed and written ---


def _file_case(made: FileCase, base: str, session: str) -> LogCase:
    events = clocked(_events(world_of(base), session))
    if made.requirement is None:
        assert made.kept is not None
        torn = "" if made.torn_tail is None else f", and report a torn tail at line {made.torn_tail}"
        count = f"all {made.kept}" if made.kept == len(events) else f"the first {made.kept} of the {len(events)}"
        what = f"read it to {count} events{torn}"
    else:
        what = f"reject it with {made.requirement}"
    description = f"The session of {base} (its replies streamed), {made.mutation}: a conforming reader must {what}."
    mutation = f"the session on a clock; {made.mutation}"
    provenance = obj({"kind": "mutation", "from": base, "session": session, "mutation": mutation})
    log = _text(events[: made.kept]) if made.kept is not None else ()
    return LogCase(made.id, description, made.requirements, session, log, None, made.requirement, provenance, made.file, made.torn_tail)


@cache
def log_cases() -> tuple[LogCase, ...]:
    """Return every log case: targeted mutations of scenario runs, the faulty variants' witness runs, then log files."""
    mutated = tuple(_mutant_case(m, world_of(m.base)) for m in _mutants())
    files = tuple(_file_case(f, FILE_BASE, "s1") for f in file_cases(_events(world_of(FILE_BASE), "s1"), "s1"))
    return mutated + tuple(_variant_case(*entry) for entry in VARIANT_CASES) + files


# Cases the model itself gets wrong today: a model bug, reported and not worked around. They stay
# out of the catalogue until the model is fixed; tests/edge/test_vectors.py fails as soon as one of them
# passes, so that its entry is removed (and the case published) when the fix lands.
PENDING_MODEL_BUGS: dict[str, str] = {}  # case id -> why the model gets it wrong; both fixed bugs are published


def pending_cases() -> tuple[LogCase, ...]:
    """Return the cases held back by ``PENDING_MODEL_BUGS``, sorted by id."""
    return tuple(sorted((c for c in log_cases() if c.id in PENDING_MODEL_BUGS), key=lambda c: c.id))


def catalogue() -> tuple[Case, ...]:
    """Return every published case, sorted by id (ids are unique; pending cases left out)."""
    cases: tuple[Case, ...] = scenarios() + tuple(c for c in log_cases() if c.id not in PENDING_MODEL_BUGS)
    ids = [c.id for c in scenarios() + log_cases()]
    if len(set(ids)) != len(ids):
        raise ScriptError(f"duplicate case ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return tuple(sorted(cases, key=lambda c: c.id))


# --- A case as the vector file holds it ---

CASE_LAYOUT: tuple[tuple[str, ...], ...] = (
    (), ("actions",), ("log",), ("capture",), ("file",), ("file", "lines"),
    ("expected",), ("expected", "sessions"), ("expected", "sessions", "*"), ("expected", "requests"),
)  # fmt: skip


def _id_order(rule: str) -> tuple[str, int]:
    family, _, number = rule.rpartition("-")
    return family, int(number)


def case_to_json(case: Case) -> FrozenMap:
    """Return the JSON of ``case`` (spec/vectors.md §3; spec/schema/vector.schema.json)."""
    requirements: tuple[str, ...] = tuple(sorted(set(case.requirements), key=_id_order))
    fields: dict[str, JsonValue] = {
        "schema": VECTOR_SCHEMA, "formatVersion": FORMAT_VERSION, "id": case.id, "description": case.description,
        "requirements": requirements,
    }  # fmt: skip
    if isinstance(case, Scenario):
        fields |= {"valid": True, "actions": tuple(action_to_json(a) for a in case.actions), "expected": expected_of(world_of(case.id))}
        if case.refused:
            fields["refused"] = tuple(sorted(case.refused))
        return obj(fields)
    fields |= {"valid": case.valid, "session": case.session, "provenance": case.provenance}
    if case.file is None or case.valid:
        fields["log"] = case.log
    if case.file is not None:
        fields["file"] = case.file
        if case.valid:
            fields["tornTail"] = case.torn_tail
    if case.capture is not None:
        fields["capture"] = case.capture
    if case.requirement is not None:
        fields["requirement"] = case.requirement
    return obj(fields)


def case_text(case: Case) -> str:
    """Return the bytes of ``case``'s file, as text: the layout of every vector file (spec/vectors.md §3)."""
    return layout(case_to_json(case), CASE_LAYOUT)
