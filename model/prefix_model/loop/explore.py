"""Spec §10.5 — bounded exhaustive exploration of the loop: breadth first over a small stated alphabet.

Every state the alphabet reaches within ``depth`` actions is visited once, every property of §11
is checked in it, and a violation comes back as the shortest action script that reaches it (BFS
parent pointers), replayable by ``transitions.apply``. The explorer states no rule: moves are
offered from the alphabet and kept only where ``transitions.enabled`` holds; worlds come from
``transitions.apply``; verdicts from ``properties.check_all``.

States are told apart by a 16-byte blake2b digest of a canonical encoding of everything the
transitions and the properties read: each session's id, lineage and events, each instance, the
listeners, the compaction policy, the ghost trace per instance and the requests per session (in
order), and the alphabet's remaining budgets. The order in which marks and requests of *different*
instances interleave is left out: no transition and no property reads it. The encoding is
``repr`` of frozen values (str and int reprs are not salted, and no encoded value holds a set),
so counts are the same in every process.

Pure: no clock, no I/O. Timing, progress and printing live in ``edge/explore.py``.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import astuple, dataclass, field, replace
from functools import cache

from prefix_model.core.contracts import ENABLED, ensure
from prefix_model.core.events import COMPACT_END, REQUEST_HEADER, TURN_END, TURN_START, Event
from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze
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
    PostStep,
    PreStep,
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
from prefix_model.loop.memo import Memo
from prefix_model.loop.properties import Violation, check_all
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.world import (
    EMPTY_WORLD,
    Append,
    CancelThenPrepend,
    InjectThenPrepend,
    Listener,
    ListenerCall,
    Mark,
    Prepend,
    SentRequest,
    Session,
    ShortCircuit,
    Throw,
    World,
    text_message,
)

__all__ = [
    "BEHAVIOURS",
    "Root",
    "ROOTS",
    "ROOT_NAMES",
    "PROMPTS",
    "BUDGETS",
    "ACTION_KINDS",
    "EXTRA_KINDS",
    "SEEDED_BUDGET",
    "OUTCOMES",
    "ALPHABET_TEXT",
    "action_kind",
    "step",
    "Budget",
    "Node",
    "roots",
    "moves",
    "fingerprint",
    "outcomes",
    "OUTCOME_REQUIREMENTS",
    "requirements_of",
    "REFUSAL_REQUIREMENTS",
    "Found",
    "Exploration",
    "explore",
    "expand",
    "root_nodes",
    "Search",
    "replay",
]

# --- The stated alphabet ---

_LONG = "please read the whole plan first; " * 12  # long enough that its compaction's summary is smaller (CMP-6)
PROMPTS: tuple[str, ...] = ("hello", _LONG)
_L1 = Listener("L1", None, (Prepend((text_message("<prefix L1 v1>"),)),))  # global, always prepends
_MINE = (text_message("<prefix L2 v1>"),)
_DRIFTED = (text_message("<prefix L2 v2>"),)
_MUTATED = (text_message("<prefix L2 v3>"),)
# What the second listener (scoped to agent "main") does: one fresh root of the exploration each, but
# "drift", which only the seeded root uses (a drift shows only in a second instance's composition).
BEHAVIOURS: tuple[tuple[str, tuple[ListenerCall, ...]], ...] = (
    ("prepend", (Prepend(_MINE),)),
    ("append", (Append(_MINE),)),
    ("short-circuit", (ShortCircuit(_MINE),)),
    ("throw-once", (Throw(), Prepend(_MINE))),
    ("inject", (InjectThenPrepend("listener note", _MINE),)),
    ("cancel-once", (CancelThenPrepend(_MINE), Prepend(_MINE))),
    ("drift", (Prepend(_MINE), Prepend(_DRIFTED))),  # its content changes between its first call and the next
)
_TOOLS: tuple[JsonValue, ...] = (freeze({"name": "echo", "description": "echo back", "parameters": {"type": "object"}}),)
_OTHER_TOOLS: tuple[JsonValue, ...] = _TOOLS + (freeze({"name": "read", "description": "read a file", "parameters": {"type": "object"}}),)
_SYSTEM = "You are careful."
# A whole turn of agent "main" over s1: a seeded root starts after it, so that what follows a turn
# (a second turn of the same instance, a resume, a fork) lies within a small depth.
_TURN: tuple[Action, ...] = (SendPrompt(0, "hello"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, text="done"), PostStep(0))


@dataclass(frozen=True, slots=True)
class Root:
    """One root of the exploration: what listener L2 does, and whether s1 already holds a whole turn."""

    name: str
    behaviour: str  # a name of BEHAVIOURS
    seeded: bool = False  # the setup ends with _TURN


# Fresh roots first, then seeded ones: within every level the states of shorter setups come first
# (so the first violation found at a level has a shortest script).
ROOTS: tuple[Root, ...] = (*(Root(name, name) for name, _ in BEHAVIOURS if name != "drift"), Root("drift-after-turn", "drift", seeded=True))
ROOT_NAMES: tuple[str, ...] = tuple(root.name for root in ROOTS)


def _replies(instance: int) -> tuple[Reply, ...]:
    return (
        Reply(instance, text="done"),
        Reply(instance, tool_calls=(("c1", "echo", "{}"),)),
        Reply(instance, failure="overloaded", retry=True),
        Reply(instance, failure="overloaded"),
    )


def _extra_replies(instance: int) -> tuple[Reply, ...]:
    return (Reply(instance, text="cut", max_tokens=True), _usage_reply(instance))


def _usage_reply(instance: int) -> Reply:
    """A text reply whose stream reports the provider's usage: the meter's next measure is anchored by it (TOK-3)."""
    chunks = (
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "counted"}},
        {"type": "usage", "usage": {"inputTokens": 90, "outputTokens": 10}},
        {"type": "finish", "reason": {"kind": "stop"}},
    )
    return Reply(instance, stream=tuple(FrozenMap({k: freeze(v) for k, v in c.items()}) for c in chunks))


@dataclass(frozen=True, slots=True)
class Budget:
    """What a run may still use of the alphabet's once-only inputs."""

    queued: int = 1  # a prompt sent while a turn is open (it waits in the inbox)
    cancels: int = 1
    disposes: int = 1
    injects: int = 1
    compactions: int = 1
    changes: int = 1  # a request whose agent/request listener changes the config
    resumes: int = 1
    forks: int = 1
    # One more input of a seeded root's run, of the "extras" (0 at a fresh root): a Steer, a SetSystem,
    # a SetTools, a prompt the prompt-submit hook blocks, a reply stopped at max tokens, a reply that
    # reports usage, a MutateContribution of L2, or the compaction service mounted with a small window.
    extras: int = 0

BUDGETS = Budget()  # a fresh root's
SEEDED_BUDGET = Budget(queued=0, cancels=0, injects=0, compactions=0, disposes=0, resumes=2, extras=1)  # a seeded root's
_CHANGED = LlmCallConfig("mock", "mock-model", "max")  # a reasoning effort the options do not set
_COMPACT = (0, 0)  # compactRegion over the first surface node: the long prompt compacts, the short one is refused
# A window the long prompt's turn exceeds (threshold 0.8 x 200 tokens), so post-step's pressure listener compacts
# (and is refused: with 32 tokens retained, the region it may cut is smaller than a framed summary).
_SMALL_WINDOW = MountCompaction(CompactPolicy(context_window=200))
_MUTATE = MutateContribution("L2", _MUTATED)


ALPHABET_TEXT = f"""\
The alphabet. Roots: listener L1 (global) prepends "<prefix L1 v1>"; listener L2 (scoped to agent
"main") does one of {", ".join(name for name, _ in BEHAVIOURS if name != "drift")} ("-once": on its first call only,
then it prepends); agent "main" drives session s1 (a system prompt, one tool). Then, for every
instance, in every window where the model's guard allows it: BeginStep, Compose, PreStep, Dispatch,
Reply (text, a tool call, a failure with a retry, a failure without), RunTools, PostStep; the
prompts "hello" and a long one (idle: a new turn; during a turn: queued, once per run); and, once
per run each: a Cancel, a Dispose, an Inject, a compaction of surface node 0 (PreStep or PostStep;
the long prompt compacts, the short one is refused), a Dispatch whose agent/request listener sets
reasoningEffort "max", and — once s1 has ended a turn — a Resume of s1 by agent "main" and a
ForkDrive of s1 at its end to s2, driven by agent "aux" (only L1 contributes there).
The seeded root drift-after-turn starts after a whole turn of s1 (prompt "hello", one step, reply
"done"), with an L2 whose content drifts ("<prefix L2 v1>" on its first call, "<prefix L2 v2>" on
every later one): a resumed instance composes what the log does not hold. Its runs have no queued
prompt, Cancel, Dispose, Inject or compaction of node 0, two Resumes, and one extra: a reply
stopped at max tokens, a reply that reports usage, a prompt the prompt-submit hook blocks, a Steer,
a SetSystem, a SetTools, a MutateContribution of L2 ("<prefix L2 v3>"), or the compaction service
mounted with a 200-token window (post-step's pressure listener then compacts in the long prompt's
turn, refused: the framed summary is not smaller than the region it may cut).
"""


@ensure(
    lambda result: all(len(setup) in (3, 3 + len(_TURN)) and isinstance(setup[2], Create) for setup in result),
    "EXP-1: a root's setup is its two registrations and its instance (then, seeded, a whole turn)",
    enabled=ENABLED,
)
def roots(names: tuple[str, ...] | None = None) -> tuple[tuple[Action, ...], ...]:
    """Return the setup script of each root (of ROOTS, in its order): both listeners registered, agent "main" over session s1, then a seeded root's turn."""
    scripts = dict(BEHAVIOURS)
    return tuple(
        (Register(_L1), Register(Listener("L2", "main", scripts[root.behaviour])), Create("main", "s1", system=_SYSTEM, tools=_TOOLS))
        + (_TURN if root.seeded else ())
        for root in _chosen(names)
    )


def _chosen(names: tuple[str, ...] | None) -> tuple[Root, ...]:
    return tuple(root for root in ROOTS if names is None or root.name in names)


@dataclass(frozen=True, slots=True)
class Node:
    """One state of the exploration: a world and the budgets its run has left."""

    world: World
    budget: Budget = BUDGETS


@cache
def _instance_moves(i: int, budget: Budget, turn_open: bool) -> tuple[Action, ...]:
    """The alphabet's moves for instance ``i`` given what the budget still allows (built once, shared by every state)."""
    moves: list[Action] = [BeginStep(i), Compose(i), PreStep(i)]
    moves += [PreStep(i, compact=_COMPACT)] if budget.compactions else []
    moves += [Dispatch(i)] + ([Dispatch(i, config=_CHANGED)] if budget.changes else [])
    moves += [*_replies(i), *(_extra_replies(i) if budget.extras else ()), RunTools(i), PostStep(i)]
    moves += [PostStep(i, compact=_COMPACT)] if budget.compactions else []
    if budget.queued or not turn_open:  # a prompt during a turn waits in the inbox: once per run
        moves += [SendPrompt(i, text) for text in PROMPTS]
        moves += [SendPrompt(i, "hello", blocked=True)] if budget.extras else []
    moves += [Inject(i, "workspace note")] if budget.injects else []
    moves += [Steer(i, "steer note"), SetSystem(i, "You are brief."), SetTools(i, _OTHER_TOOLS)] if budget.extras else []
    moves += [Cancel(i)] if budget.cancels else []
    moves += [Dispose(i)] if budget.disposes else []
    return tuple(moves)


_RESUME = Resume("s1", "main", system=_SYSTEM, tools=_TOOLS)
_FORK = ForkDrive("s1", "s2", None, "aux", system=_SYSTEM, tools=_TOOLS)


def _candidates(node: Node) -> Iterator[Action]:
    """Every move of the alphabet in ``node``, in a fixed order, before the guard."""
    budget, world = node.budget, node.world
    for i, instance in enumerate(world.instances):
        yield from _instance_moves(i, budget, instance.turn_open)
    if budget.extras:
        yield _MUTATE
        yield _SMALL_WINDOW
    # A restart or a fork once s1 has ended a turn: before that either is a new instance over an empty log.
    if (budget.resumes or budget.forks) and any(e.type == TURN_END for e in world.session("s1").log.events):
        if budget.resumes:
            yield _RESUME
        if budget.forks:
            yield _FORK


def _spent(node: Node, action: Action) -> Budget:
    budget = node.budget
    match action:
        case SendPrompt(blocked=True) | Steer() | SetSystem() | SetTools() | MutateContribution() | MountCompaction():
            return replace(budget, extras=budget.extras - 1)
        case Reply(stream=stream, max_tokens=cut) if stream is not None or cut:
            return replace(budget, extras=budget.extras - 1)
        case SendPrompt(instance=i) if node.world.instance(i).turn_open:
            return replace(budget, queued=budget.queued - 1)
        case Inject():
            return replace(budget, injects=budget.injects - 1)
        case Cancel():
            return replace(budget, cancels=budget.cancels - 1)
        case Dispose():
            return replace(budget, disposes=budget.disposes - 1)
        case PreStep(compact=c) | PostStep(compact=c) if c is not None:
            return replace(budget, compactions=budget.compactions - 1)
        case Dispatch(config=c) if c is not None:
            return replace(budget, changes=budget.changes - 1)
        case Resume():
            return replace(budget, resumes=budget.resumes - 1)
        case ForkDrive():
            return replace(budget, forks=budget.forks - 1)
    return budget


@ensure(lambda node, result: all(enabled(node.world, a) for a in result), "EXP-1: the model's guard decides every move", enabled=ENABLED)
@ensure(lambda result: len(set(result)) == len(result), "EXP-1: each move is offered once", enabled=ENABLED)
def moves(node: Node) -> tuple[Action, ...]:
    """Return the alphabet's moves enabled in ``node`` (the model's guard decides), in a fixed order."""
    return tuple(a for a in _candidates(node) if enabled(node.world, a))


@ensure(lambda result: min(astuple(result.budget)) >= 0, "EXP-1: no once-only input is used past its budget", enabled=ENABLED)
def step(node: Node, action: Action, semantics: Semantics = HARNESS) -> Node:
    """Return the node after ``action`` (which must be one of ``moves(node)``)."""
    return Node(apply(node.world, action, semantics), _spent(node, action))


ACTION_KINDS: tuple[str, ...] = (
    "BeginStep", "Compose", "PreStep", "PreStep+compact", "Dispatch", "Dispatch+config",
    "Reply:text", "Reply:tool-call", "Reply:failure+retry", "Reply:failure", "Reply:max-tokens", "Reply:usage",
    "RunTools", "PostStep", "PostStep+compact", "SendPrompt", "SendPrompt:blocked", "Inject", "Steer", "SetSystem", "SetTools",
    "Cancel", "Dispose", "MutateContribution", "MountCompaction", "Resume", "ForkDrive",
)  # fmt: skip


# The kinds only the extras budget offers (a seeded root's): a fresh root never takes them.
EXTRA_KINDS: tuple[str, ...] = ("Reply:max-tokens", "Reply:usage", "SendPrompt:blocked", "Steer", "SetSystem", "SetTools", "MutateContribution", "MountCompaction")


@ensure(lambda result: result in ACTION_KINDS, "EXP-1: every action counted is of a kind the report lists", enabled=ENABLED)
def action_kind(action: Action) -> str:
    """Return the class of ``action`` the report counts (its type, and for a reply or compaction which one)."""
    match action:
        case Reply(stream=stream) if stream is not None:
            return "Reply:usage"
        case Reply(failure=None, max_tokens=True):
            return "Reply:max-tokens"
        case Reply(failure=None, tool_calls=calls):
            return "Reply:tool-call" if calls else "Reply:text"
        case SendPrompt(blocked=True):
            return "SendPrompt:blocked"
        case Reply(retry=retry):
            return "Reply:failure+retry" if retry else "Reply:failure"
        case PreStep(compact=c) | PostStep(compact=c) if c is not None:
            return f"{type(action).__name__}+compact"
        case Dispatch(config=c) if c is not None:
            return "Dispatch+config"
    return type(action).__name__


# --- Fingerprints ---

# Frozen values shared between states are encoded once (a memo per encoding, by identity).
_reprs: Memo[bytes] = Memo(1_000_000)
_sessions: Memo[bytes] = Memo(1_000_000)
_request_groups: Memo[bytes] = Memo(1_000_000)
_trace_groups: Memo[bytes] = Memo(1_000_000)


def _enc(value: object) -> bytes:
    """Return ``repr(value)`` encoded."""
    return _reprs.of(value, _repr_bytes)


def _repr_bytes(value: object) -> bytes:
    return repr(value).encode()


def _digest(parts: Iterable[bytes]) -> bytes:
    """blake2b-16 over the parts, each length-prefixed (so the encoding of a sequence is unambiguous)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(len(part).to_bytes(4, "little"))
        digest.update(part)
    return digest.digest()


def _session_part(session: Session) -> bytes:
    """A session's id, lineage and events (a session left unchanged by a move is the same object, encoded once)."""
    return _sessions.of(session, lambda s: _digest((s.id.encode(), _enc(s.lineage), *map(_enc, s.log.events))))


def _grouped(memo: Memo[bytes], values: tuple[SentRequest, ...] | tuple[Mark, ...], owner: Callable[[object], object]) -> bytes:
    """The values of each owner in order, owners sorted: how different owners' values interleave is not encoded."""

    def encode(values: tuple[SentRequest, ...] | tuple[Mark, ...]) -> bytes:
        groups: dict[object, list[bytes]] = {}
        for value in values:
            groups.setdefault(owner(value), []).append(_enc(value))
        ordered = sorted(groups.items(), key=lambda kv: repr(kv[0]))
        return _digest(repr(k).encode() + _digest(parts) for k, parts in ordered)

    return memo.of(values, encode)


@ensure(lambda result: len(result) == 16, "EXP-1: a state's fingerprint is 16 bytes of blake2b", enabled=ENABLED)
def fingerprint(node: Node) -> bytes:
    """Return the 16-byte blake2b digest of ``node``'s canonical encoding."""
    world = node.world
    parts = (
        *map(_session_part, world.sessions), *map(_enc, world.instances), _enc(world.listeners), _enc(world.compaction),
        _grouped(_request_groups, world.requests, lambda r: r.session_id),  # type: ignore[attr-defined]
        _grouped(_trace_groups, world.trace, lambda m: m.instance_id),  # type: ignore[attr-defined]
        repr(node.budget).encode(),
    )  # fmt: skip
    return _digest(parts)


# --- Outcome classes ---

OUTCOMES: tuple[str, ...] = (
    "no-op",
    "turn opened by a prompt", "turn opened from the inbox", "one-shot injection turn", "prompt queued",
    "inject appended", "inject deferred behind tools", "deferred inject landed",
    "composed", "composition interrupted", "composition threw", "listener inject",
    "header: initial", "header: resume", "header: change", "header: unchanged (not logged)",
    "request sent", "reply: assistant message", "reply: tool calls run", "retry after failure",
    "compaction done", "compaction refused", "pressure measured",
    "turn end: completed", "turn end: error", "turn end: aborted", "turn end: disposed", "turn end: rejected", "turn end: max-tokens",
    "instance created", "instance disposed", "session forked", "session resumed",
)  # fmt: skip

# The requirements an outcome class exercises: what a campaign (``prefix-model fuzz``) reports as reached.
OUTCOME_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "no-op": (),
    "turn opened by a prompt": ("LOOP-4",),
    "turn opened from the inbox": ("LOOP-13",),
    "one-shot injection turn": ("LOOP-4", "LOOP-7"),
    "prompt queued": ("LOOP-13",),
    "inject appended": ("LOOP-7",),
    "inject deferred behind tools": ("LOOP-7",),
    "deferred inject landed": ("LOOP-7",),
    "composed": ("LOOP-3", "PFX-2", "PFX-8"),
    "composition interrupted": ("PFX-4",),
    "composition threw": ("PFX-9",),
    "listener inject": ("PFX-10",),
    "header: initial": ("HDR-9", "PFX-3", "PFX-5"),
    "header: resume": ("PFX-3", "PFX-5"),
    "header: change": ("HDR-15", "LOOP-12"),
    "header: unchanged (not logged)": ("HDR-15",),
    "request sent": ("LOOP-3", "REC-1", "REC-2", "REC-3"),
    "reply: assistant message": ("STRM-1", "STRM-2"),
    "reply: tool calls run": ("LOOP-6", "STRM-2"),
    "retry after failure": ("LOOP-9",),
    "compaction done": ("CMP-1", "CMP-2"),
    "compaction refused": ("CMP-6",),
    "pressure measured": ("CMP-5", "TOK-1", "TOK-3"),
    "turn end: completed": ("ENC-2",),
    "turn end: error": ("LOOP-9", "PFX-9"),
    "turn end: aborted": ("LOOP-6",),
    "turn end: disposed": ("LOOP-6",),
    "turn end: rejected": ("LOOP-5",),
    "turn end: max-tokens": ("STRM-4",),
    "instance created": ("PFX-5",),
    "instance disposed": ("LOOP-6",),
    "session forked": ("FORK-1", "FORK-8"),
    "session resumed": ("PFX-5",),
}


REFUSAL_REQUIREMENTS: tuple[str, ...] = ("LOOP-1",)  # what a refused action exercises: its guard


@ensure(lambda outcome, result: outcome not in OUTCOMES or outcome in OUTCOME_REQUIREMENTS, "EXP-1: every outcome class names what it exercises", enabled=ENABLED)
def requirements_of(outcome: str) -> tuple[str, ...]:
    """Return the requirement IDs an outcome class exercises (none for a class outside the catalogue)."""
    return OUTCOME_REQUIREMENTS.get(outcome, ())


def _new_events(before: World, after: World) -> tuple[Event, ...]:
    """The events a transition appended (a fork's copied seed is not appended: it is "session forked")."""
    old = {s.id: len(s.log.events) for s in before.sessions}
    return tuple(e for s in after.sessions if s.id in old for e in s.log.events[old[s.id] :])


@ensure(lambda result: all(o in OUTCOMES for o in result), "every outcome class is in the catalogue", enabled=ENABLED)
def outcomes(before: World, after: World, action: Action) -> tuple[str, ...]:
    """Return the outcome classes of one transition, from what it appended and changed (sorted, each once)."""
    found: set[str] = set()
    events = _new_events(before, after)
    marks: tuple[Mark, ...] = after.trace[len(before.trace) :]
    types = [e.type for e in events]
    for event in events:
        if event.type == TURN_START:
            trigger = event.field("trigger")
            kind = trigger.get("kind") if isinstance(trigger, FrozenMap) else None
            if kind == "injection":
                found.add("one-shot injection turn")
            else:
                found.add("turn opened from the inbox" if TURN_END in types[: types.index(TURN_START)] else "turn opened by a prompt")
        elif event.type == TURN_END:
            reason = event.field("reason")
            kind = reason.get("kind") if isinstance(reason, FrozenMap) else None
            found.add(f"turn end: {kind}")
        elif event.type == REQUEST_HEADER:
            found.add(f"header: {event.field('reason')}")
        elif event.type == COMPACT_END:
            found.add("compaction refused" if event.field("error") is not None else "compaction done")
    kinds = {m.kind: m for m in marks}
    labels = {"composed": "composed", "compose-interrupted": "composition interrupted", "compose-failed": "composition threw",
              "dispatch": "request sent", "measured": "pressure measured", "created": "instance created"}  # fmt: skip
    found |= {label for kind, label in labels.items() if kind in kinds}
    if "record" in kinds and kinds["record"].value is None:
        found.add("header: unchanged (not logged)")
    if "composed" in kinds or "compose-interrupted" in kinds or "compose-failed" in kinds:
        if "user/message" in types and isinstance(action, Compose):
            found.add("listener inject")
    match action:
        case SendPrompt(instance=i) if len(after.instance(i).queued) > len(before.instance(i).queued):
            found.add("prompt queued")
        case Inject(instance=i):
            if len(after.instance(i).deferred) > len(before.instance(i).deferred):
                found.add("inject deferred behind tools")
            elif "one-shot injection turn" not in found:
                found.add("inject appended")
        case RunTools(instance=i):
            found.add("reply: tool calls run")
            if before.instance(i).deferred:
                found.add("deferred inject landed")
        case Reply(retry=True) if after.instance(action.instance).phase.value == "step-begin":
            found.add("retry after failure")
        case Reply() if "assistant/message" in types:
            found.add("reply: assistant message")
    if any(a.disposed and not b.disposed for a, b in zip(after.instances, before.instances)):
        found.add("instance disposed")
    if isinstance(action, ForkDrive):
        found.add("session forked")
    if isinstance(action, Resume):
        found.add("session resumed")
    if not found and after == before:
        found.add("no-op")
    return tuple(sorted(found))


# --- The search ---


@dataclass(frozen=True, slots=True)
class Found:
    """A violation and the shortest script that reaches it (setup included), with its depth."""

    violations: tuple[Violation, ...]
    script: tuple[Action, ...]
    depth: int


@dataclass(slots=True)
class Exploration:
    """What a bounded exploration saw: counts per level, per action kind and outcome class, and a violation if any."""

    depth: int  # the bound asked for
    states: int = 0  # distinct states, roots included
    transitions: int = 0  # moves applied (every enabled move of every state expanded)
    reached: int = 0  # the deepest level holding a state
    levels: list[int] = field(default_factory=list)  # distinct states first reached at each depth
    actions: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    found: Found | None = None
    visited: set[bytes] = field(default_factory=set)  # every state's fingerprint (the edge measures its size)

    # no contract: a view of the counters it names, which explore's EXP-1 contract holds to the states
    def as_counts(self) -> dict[str, object]:
        """Return the deterministic counts (what ``proofs/explore-counts.json`` records per bound)."""
        return {
            "states": self.states,
            "transitions": self.transitions,
            "levels": list(self.levels),
            "actions": {k: self.actions[k] for k in ACTION_KINDS},
            # A class outside the catalogue is counted too (the catalogue's contract rejects it when contracts are on).
            "outcomes": {k: self.outcomes[k] for k in OUTCOMES} | {k: n for k, n in sorted(self.outcomes.items()) if k not in OUTCOMES},
        }


Progress = Callable[[int, int], None]  # (depth being expanded, distinct states so far)
_ROOT = -1


@ensure(lambda behaviours, result: tuple(setup for setup, _ in result) == roots(behaviours), "EXP-1: one node per root, built by its setup", enabled=ENABLED)
def root_nodes(behaviours: tuple[str, ...] | None, semantics: Semantics = HARNESS) -> tuple[tuple[tuple[Action, ...], Node], ...]:
    """Return each root's setup script and the node it builds."""
    built = []
    for root, setup in zip(_chosen(behaviours), roots(behaviours)):
        world = EMPTY_WORLD
        for action in setup:
            world = apply(world, action, semantics)
        built.append((setup, Node(world, SEEDED_BUDGET if root.seeded else BUDGETS)))
    return tuple(built)


# no contract: a generator of moves(), step() and outcomes(), whose contracts hold each item it yields
def expand(node: Node, semantics: Semantics = HARNESS) -> Iterator[tuple[Action, Node, tuple[str, ...]]]:
    """Yield every move of ``node``, the node it leads to, and the transition's outcome classes."""
    for action in moves(node):
        child = step(node, action, semantics)
        yield action, child, outcomes(node.world, child.world, action)


class Search:
    """The search's bookkeeping: the visited fingerprints, and per state its parent, the move that reached it, its depth.

    States are numbered in the order they are first reached; a root's setup is kept with it.
    """

    __slots__ = ("result", "_parents", "_taken", "_table", "_seen", "_setups")

    def __init__(self, result: Exploration) -> None:
        self.result = result
        self._parents = array("q")
        self._taken = array("l")  # an index into ``_seen``; _ROOT for a root
        self._table: dict[Action, int] = {}
        self._seen: list[Action] = []
        self._setups: dict[int, tuple[Action, ...]] = {}

    @ensure(lambda self, result: result is None or result == self.result.states - 1, "EXP-1: states are numbered in the order first reached", enabled=ENABLED)
    def add(self, key: bytes, parent: int, action: Action | tuple[Action, ...], level: int) -> int | None:
        """Record a state first reached at ``level`` (``action``: the move, or a root's setup); None if already visited."""
        if key in self.result.visited:
            return None
        self.result.visited.add(key)
        index = len(self._parents)
        self._parents.append(parent)
        if isinstance(action, tuple):
            self._taken.append(_ROOT)
            self._setups[index] = action
        else:
            self._taken.append(self._table.setdefault(action, len(self._table)))
            if len(self._seen) < len(self._table):
                self._seen.append(action)
        result = self.result
        result.states += 1
        while len(result.levels) <= level:
            result.levels.append(0)
        result.levels[level] += 1
        result.reached = max(result.reached, level)
        return index

    # no contract: explore's EXP-2 contract replays the script of every violation it reports
    def script(self, index: int) -> tuple[Action, ...]:
        """Return the script that reaches state ``index``: its root's setup, then the moves along the parent pointers."""
        path: list[Action] = []
        while self._taken[index] != _ROOT:
            path.append(self._seen[self._taken[index]])
            index = self._parents[index]
        return self._setups[index] + tuple(reversed(path))

    # no contract: it adds one to the counters its arguments name
    def count(self, action: Action, labels: tuple[str, ...]) -> None:
        """Count one transition: its action kind and its outcome classes."""
        self.result.transitions += 1
        self.result.actions[action_kind(action)] += 1
        self.result.outcomes.update(labels)


@ensure(lambda result: result.states == sum(result.levels) == len(result.visited), "EXP-1: each state is counted once, at its depth", enabled=ENABLED)
@ensure(
    lambda depth, semantics, result: result.found is None
    or (result.found.depth <= depth and check_all(replay(result.found.script, semantics)) == result.found.violations),
    "EXP-2: the script of a violation replays to the same violations",
    enabled=ENABLED,
)
def explore(
    depth: int,
    semantics: Semantics = HARNESS,
    behaviours: tuple[str, ...] | None = None,
    progress: Progress | None = None,
) -> Exploration:
    """Explore every state within ``depth`` moves of the roots; stop at a violation with a shortest script.

    States are checked when first reached, level by level. Fresh roots come before seeded ones and
    the search keeps that order within every level, so the first violating state found at a level
    has the shortest script of its level; a violation found below a seeded root (its setup is a
    whole turn longer) is kept while a shorter script can still be found at a later level. Per state
    the search keeps its fingerprint, its parent's index and the move that reached it (an index into
    a table of the moves seen).
    """
    search = Search(Exploration(depth))
    result = search.result
    frontier: list[tuple[int, Node]] = []
    built = root_nodes(behaviours, semantics)
    shortest = min((len(setup) for setup, _ in built), default=0)

    def discovered(node: Node, parent: int, action: Action | tuple[Action, ...], level: int) -> None:
        index = search.add(fingerprint(node), parent, action, level)
        if index is None:
            return
        frontier.append((index, node))
        if progress is not None and result.states % 1024 == 0:
            progress(level, result.states)
        violations = check_all(node.world)
        if violations:
            script = search.script(index)
            if result.found is None or len(script) < len(result.found.script):
                result.found = Found(violations, script, level)

    def settled(level: int) -> bool:
        """Whether no state at ``level`` or deeper can have a shorter script than the violation found."""
        return result.found is not None and len(result.found.script) <= shortest + level

    for setup, node in built:
        discovered(node, _ROOT, setup, 0)
        if settled(0):
            return result
    for level in range(depth):
        if settled(level + 1):
            return result
        current, frontier = frontier, []
        if progress is not None:
            progress(level, result.states)
        for index, node in current:
            for action, child, labels in expand(node, semantics):
                search.count(action, labels)
                discovered(child, index, action, level + 1)
                if settled(level + 1):
                    return result
        if not frontier:
            break
    return result


# no contract: apply() in order, refusing a disabled action; apply's and enabled's contracts hold each step
def replay(script: tuple[Action, ...], semantics: Semantics = HARNESS) -> World:
    """Return the world after ``script``, every action applied strictly (each must be enabled)."""
    world = EMPTY_WORLD
    for action in script:
        if not enabled(world, action):
            raise ValueError(f"not enabled: {action!r}")
        world = apply(world, action, semantics)
    return world
