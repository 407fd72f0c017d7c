"""Spec §10 — the loop's state: sessions, loop instances, prefix listeners, requests sent.

A ``World`` is everything the loop transitions read and write (harness facts §4, Appendix A).
Each loop instance holds exactly the harness's per-instance state — the cached ``prefix``
(``TransmissionLog.sessionPrefix``) and ``logged_header`` (``loggedHeader``) — plus where its
driver stands (``phase``) and the turn-local work it carries. ``trace`` is ghost state: the
loop's milestones, kept only so the properties of §11 can name what happened when.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.events import REQUEST_HEADER
from prefix_model.core.fork import Lineage
from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import FrozenMap, JsonValue
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.requests import Request
from prefix_model.loop.compaction import CompactPolicy
from prefix_model.loop.prompt import SendPrompt

__all__ = [
    "Phase",
    "AgentOptions",
    "Prepend",
    "Append",
    "ShortCircuit",
    "Throw",
    "InjectThenPrepend",
    "CancelThenPrepend",
    "ListenerCall",
    "Listener",
    "Session",
    "Instance",
    "SentRequest",
    "Mark",
    "World",
    "EMPTY_WORLD",
    "text_message",
    "message_text",
    "INJECTED",
    "CALL_KINDS",
    "waterfall_inputs",
]

INJECTED = FrozenMap({"kind": "plugin", "plugin": ""})  # agent.inject's default source (L/agent.ts:287-296)


class Phase(Enum):
    """Where an instance's driver stands: the next loop segment it runs (facts §4.3-§4.5)."""

    IDLE = "idle"  # parked: no open turn
    STEP_BEGIN = "step-begin"  # next: step += 1, drain steering, assemble system and tools
    COMPOSE = "compose"  # next: the agent/session-prefix waterfall (prefix not cached)
    PRE_STEP = "pre-step"  # next: agent/pre-step, then boundary snapshot + step/start
    REQUEST = "request"  # step open: next agent/request, prepareCall, header record, dispatch
    STREAM = "stream"  # request sent: next the model's reply
    TOOLS = "tools"  # next: the tool batch of the reply
    POST_STEP = "post-step"  # next: agent/post-step (pressure), step/end, continuation
    DISPOSED = "disposed"  # gone: no further action


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """What an agent is created with: the route of its instance's first request (facts §2.8).

    The harness's options are a provider and a model, nothing else (A/types.ts:22-27): no effort, which a first
    request takes from the log or not at all.
    """

    provider: str = "mock"
    model: str = "mock-model"

    @ensure(
        lambda self, result: (result.provider, result.model) == (self.provider, self.model)
        and result.reasoning_effort is None and result.temperature is None and result.max_tokens is None and result.stop is None,
        "LOOP-10: an instance's first request starts from its agent options' route and nothing else",
        enabled=ENABLED,
    )
    def config(self) -> LlmCallConfig:
        """Return these options as a call config."""
        return LlmCallConfig(self.provider, self.model)


@ensure(lambda text, role, result: tuple(result) == ("role", "content") and result["role"] == role, "DER-2: a message is {role, content}", enabled=ENABLED)
@ensure(lambda text, result: _text_of(result) == text, "DER-2: its content is one text block holding the text", enabled=ENABLED)
def text_message(text: str, role: str = "user") -> FrozenMap:
    """Return ``{role, content: [{type: 'text', text}]}``."""
    block: dict[str, JsonValue] = {"type": "text", "text": text}
    fields: dict[str, JsonValue] = {"role": role, "content": (FrozenMap(block),)}
    return FrozenMap(fields)


# no contract: a reader of text blocks for display and for the system-prompt designs; the spec states nothing of it
def message_text(message: JsonValue) -> str:
    """Return the text blocks of a message, joined."""
    content = message.get("content") if isinstance(message, FrozenMap) else None
    blocks = content if isinstance(content, tuple) else ()
    return "".join(str(b.get("text", "")) for b in blocks if isinstance(b, FrozenMap))


def _text_of(message: FrozenMap) -> str | None:
    content = message.get("content")
    block = content[0] if isinstance(content, tuple) and len(content) == 1 else None
    return str(block.get("text")) if isinstance(block, FrozenMap) and block.get("type") == "text" else None


# --- What a prefix listener does on one call (facts §4.6, §4.8) ---


@dataclass(frozen=True, slots=True)
class Prepend:
    """``[...mine, ...await next()]``: the canonical contribution."""

    messages: tuple[FrozenMap, ...]


@dataclass(frozen=True, slots=True)
class Append:
    """``[...await next(), ...mine]``: reverses registration order on the wire."""

    messages: tuple[FrozenMap, ...]


@dataclass(frozen=True, slots=True)
class ShortCircuit:
    """Return ``mine`` without calling ``next()``: later listeners are not called."""

    messages: tuple[FrozenMap, ...]


@dataclass(frozen=True, slots=True)
class Throw:
    """Throw: the waterfall rejects and the turn ends in error; nothing is cached.

    The thrown error's ``message`` (None: ``session-prefix listener <name> threw``) and the messages
    of its ``cause`` chain, outermost first, each cause an ``Error`` of its own (PFX-9).
    """

    message: str | None = None
    causes: tuple[str, ...] = ()

    @ensure(lambda self, listener, result: self.message is not None or result.startswith(f"session-prefix listener {listener} threw"), "PFX-9: the default message names the listener", enabled=ENABLED)
    @ensure(lambda self, result: self.message is None or result.startswith(self.message or "Error"), "PFX-9: the chain starts with the thrown message", enabled=ENABLED)
    def rendered(self, listener: str) -> str:
        """Return what the harness logs for this error thrown by ``listener``: ``errorChain`` (LLM/error.ts:104-131).

        Each error shows its message (an empty one its name, ``Error``), then ``: `` and its cause's
        rendering, which is left out where it repeats the message verbatim.
        """
        chain = (f"session-prefix listener {listener} threw" if self.message is None else self.message, *self.causes)
        text = ""
        for message in reversed(chain):
            shown = message or "Error"
            text = shown if text in ("", shown) else f"{shown}: {text}"
        return text


@dataclass(frozen=True, slots=True)
class InjectThenPrepend:
    """Call ``agent.inject(text, {source, meta})`` while composing, then prepend: the inject joins the current request.

    ``source`` None is the harness's default ``{kind: 'plugin', plugin: ''}``; ``meta``, when given, joins the
    message, as for ``Inject`` (L/agent.ts:287-307).
    """

    text: str
    messages: tuple[FrozenMap, ...]
    source: FrozenMap | None = None
    meta: FrozenMap | None = None


@dataclass(frozen=True, slots=True)
class CancelThenPrepend:
    """Call ``agent.cancel()`` while composing, then prepend: the checkpoint after the waterfall ends the turn."""

    messages: tuple[FrozenMap, ...]


ListenerCall = Prepend | Append | ShortCircuit | Throw | InjectThenPrepend | CancelThenPrepend


@dataclass(frozen=True, slots=True)
class Listener:
    """An ``agent/session-prefix`` listener: global (``agent`` None) or scoped to one agent.

    Call k of the listener behaves as ``script[min(k, len(script) - 1)]``; ``calls`` counts them.
    """

    name: str
    agent: str | None
    script: tuple[ListenerCall, ...]
    calls: int = 0

    def __post_init__(self) -> None:
        if not self.script or self.calls < 0:
            raise ValueError("a listener has at least one scripted call and a non-negative call count")

    @ensure(lambda self, result: result in self.script, "PFX-8: a listener does what its script says", enabled=ENABLED)
    @ensure(
        lambda self, result: self.calls < len(self.script) or result is self.script[-1],
        "PFX-8: past the end of its script a listener repeats its last call",
        enabled=ENABLED,
    )
    def next_call(self) -> ListenerCall:
        """Return what this listener does on its next call."""
        return self.script[min(self.calls, len(self.script) - 1)]


CALL_KINDS: dict[type, str] = {
    Prepend: "prepend", Append: "append", ShortCircuit: "short-circuit", Throw: "throw",
    InjectThenPrepend: "inject-then-prepend", CancelThenPrepend: "cancel-then-prepend",
}  # fmt: skip
"""The name each kind of listener call is recorded under in a ``waterfall`` mark."""


@ensure(lambda listeners, result: len(result) == len(listeners), "PFX-8: one record per registered listener", enabled=ENABLED)
@ensure(
    lambda listeners, result: [r["name"] for r in result] == [l.name for l in listeners],
    "PFX-8: the records keep registration order",
    enabled=ENABLED,
)
def waterfall_inputs(listeners: tuple[Listener, ...]) -> tuple[FrozenMap, ...]:
    """Return what each registered listener does on its next call, in registration order: ``{name, agent, call, messages}``.

    Ghost state: the inputs of a waterfall, recorded before it runs, so that PFX-8 folds them on its
    own instead of trusting ``waterfall.compose`` (a throw records no messages).
    """
    records = []
    for listener in listeners:
        call = listener.next_call()
        fields: dict[str, JsonValue] = {"name": listener.name, "agent": listener.agent, "call": CALL_KINDS[type(call)]}
        if not isinstance(call, Throw):
            fields["messages"] = call.messages
        records.append(FrozenMap(fields))
    return tuple(records)


@dataclass(frozen=True, slots=True)
class Session:
    """A session: its id, its log and, for a fork's child, its lineage."""

    id: str
    log: Log = EMPTY_LOG
    lineage: Lineage | None = None


@dataclass(frozen=True, slots=True)
class Instance:
    """One loop instance (one driver run) and where it stands."""

    id: int
    agent: str
    session_id: str
    options: AgentOptions
    system: str = ""  # what system-prompt assembly renders at the next step
    tools: tuple[JsonValue, ...] = ()  # the tool schemas assembly returns at the next step
    prefix: tuple[JsonValue, ...] | None = None  # TransmissionLog.sessionPrefix
    logged_header: bool = False  # TransmissionLog.loggedHeader
    phase: Phase = Phase.IDLE
    turn: int = 0
    step: int = 0
    assembled: tuple[str, tuple[JsonValue, ...]] = ("", ())  # (system, tools) of the current step
    boundary: tuple[FrozenMap, ...] = ()  # the boundary snapshot of the open step
    # The listeners the step's waterfall collected when it was dispatched (BeginStep: assembly, then the waterfall with no
    # await between); one registered later joins the next composition. None: collected as the composition runs.
    collected: tuple[str, ...] | None = None
    # The step about to begin retries a failed request: the loop went on to it after the request-error waterfall with
    # no seam between, draining its steering on the way (L/loop.ts:488-491, 400-405); its BeginStep drains nothing.
    retried: bool = False
    cancel: str | None = None  # 'aborted' or 'disposed': the first cancellation request of the turn
    steering: tuple[str, ...] = ()  # steering items waiting for a checkpoint
    queued: tuple[SendPrompt, ...] = ()  # prompts sent while a turn runs, oldest first (the inbox's queued FIFO)
    deferred: tuple[FrozenMap, ...] = ()  # the data of injects waiting for the tool batch to settle
    pending_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments) of the reply's tool calls
    continues: bool = False  # the step's reply asks for another step (tool calls)
    max_tokens: bool = False  # a reply of the turn stopped at max tokens (reset when a turn opens)
    disposed: bool = False

    @property
    # no contract: one reading of the phase; that a disposed instance's open turn has the dispose pending is a fact of
    # the transitions (LOOP-6, tested), not of any Instance value
    def turn_open(self) -> bool:
        """Return whether this instance has an open turn."""
        return self.phase not in (Phase.IDLE, Phase.DISPOSED)

    @property
    @ensure(lambda self, result: not result or self.turn_open, "ENC-2: a step is open only inside an open turn", enabled=ENABLED)
    def step_open(self) -> bool:
        """Return whether this instance has an open step (after step/start, before step/end)."""
        return self.phase in (Phase.REQUEST, Phase.STREAM, Phase.TOOLS, Phase.POST_STEP)


@dataclass(frozen=True, slots=True)
class SentRequest:
    """A request as the adapter received it: who sent it, for which step, and the log length then."""

    instance_id: int
    session_id: str
    turn: int
    step: int
    request: Request
    log_length: int
    loop_request: bool = True  # False for an auxiliary call (the compaction summarizer)


@dataclass(frozen=True, slots=True)
class Mark:
    """A ghost milestone of one instance: ``kind`` at log length ``at``, with an optional value."""

    instance_id: int
    kind: str
    at: int
    value: JsonValue  # every mark is written by transitions._mark, which names all five fields
    turn: int


def _holds_header(log: Log) -> bool:
    return any(e.type == REQUEST_HEADER for e in log.events)


@dataclass(frozen=True, slots=True)
class World:
    """Everything the loop transitions read and write."""

    sessions: tuple[Session, ...] = ()
    instances: tuple[Instance, ...] = ()
    listeners: tuple[Listener, ...] = ()
    requests: tuple[SentRequest, ...] = ()
    trace: tuple[Mark, ...] = field(default=())
    compaction: CompactPolicy = CompactPolicy()  # the loaded basic compaction service's configuration

    def __post_init__(self) -> None:
        # Instances are numbered by position and drive existing sessions; session ids are unique.
        ids = [s.id for s in self.sessions]
        if len(set(ids)) != len(ids) or any(i.id != n or i.session_id not in ids for n, i in enumerate(self.instances)):
            raise ValueError("a world's instances are numbered by position and drive its sessions")
        # HDR-10: an instance that logged a header drives a log that holds one (O(n): contracts on only).
        if ENABLED and any(i.logged_header and not _holds_header(self.log_of(i.id)) for i in self.instances):
            raise ValueError("HDR-10: an instance that logged a header drives a log holding one")

    @require(lambda self, session_id: any(s.id == session_id for s in self.sessions), "LOOP-1: only a session of the world is looked up", enabled=ENABLED)
    @ensure(lambda session_id, result: result.id == session_id, "FORK-7: session ids are unique: the session returned is the one named", enabled=ENABLED)
    def session(self, session_id: str) -> Session:
        """Return the session named ``session_id``."""
        return next(s for s in self.sessions if s.id == session_id)

    @ensure(
        lambda self, session_id, result: not result or any(i.session_id == session_id for i in self.instances),
        "FORK-9: only a session some instance drives is held",
        enabled=ENABLED,
    )
    def held(self, session_id: str) -> bool:
        """Whether the harness's store still holds session ``session_id``: an instance not disposed drives it, or a
        disposed one is still in its turn (the disposal awaits the driver's exit before it lets the session go, whatever
        its log holds: L/index.ts:216-235, S/index.ts:765-773)."""
        return any(i.session_id == session_id and (not i.disposed or i.turn_open) for i in self.instances)

    @require(lambda self, instance_id: 0 <= instance_id < len(self.instances), "LOOP-1: only an instance of the world is looked up", enabled=ENABLED)
    @ensure(lambda instance_id, result: result.id == instance_id, "LOOP-1: instance n is the n-th created", enabled=ENABLED)
    def instance(self, instance_id: int) -> Instance:
        """Return instance ``instance_id``."""
        return self.instances[instance_id]

    @require(lambda self, instance_id: 0 <= instance_id < len(self.instances), "LOOP-1: only an instance of the world is looked up", enabled=ENABLED)
    @ensure(
        lambda self, instance_id, result: any(s.log is result and s.id == self.instances[instance_id].session_id for s in self.sessions),
        "LOG-4: an instance reads and writes the log of the session it drives",
        enabled=ENABLED,
    )
    def log_of(self, instance_id: int) -> Log:
        """Return the log of the session instance ``instance_id`` drives."""
        return self.session(self.instance(instance_id).session_id).log

    @ensure(lambda session, result: any(s is session for s in result.sessions), "LOG-4: the session is the world's now", enabled=ENABLED)
    @ensure(
        lambda self, session, result: [s for s in result.sessions if s.id != session.id] == [s for s in self.sessions if s.id != session.id]
        and [s.id for s in result.sessions][: len(self.sessions)] == [s.id for s in self.sessions],
        "LOG-4: every other session is kept, in its place",
        enabled=ENABLED,
    )
    def with_session(self, session: Session) -> World:
        """Return this world with ``session`` added or replaced."""
        others = tuple(s for s in self.sessions if s.id != session.id)
        ordered = others + (session,) if len(others) == len(self.sessions) else tuple(
            session if s.id == session.id else s for s in self.sessions
        )
        return replace(self, sessions=ordered)

    @require(lambda self, instance: 0 <= instance.id <= len(self.instances), "LOOP-1: an instance is replaced or is the next one created", enabled=ENABLED)
    @ensure(lambda instance, result: result.instances[instance.id] is instance, "LOOP-1: the instance is the world's now", enabled=ENABLED)
    @ensure(
        lambda self, instance, result: all(a is b for n, (a, b) in enumerate(zip(self.instances, result.instances)) if n != instance.id),
        "LOOP-1: every other instance is kept",
        enabled=ENABLED,
    )
    def with_instance(self, instance: Instance) -> World:
        """Return this world with ``instance`` added (its id is the next index) or replaced."""
        if instance.id == len(self.instances):
            return replace(self, instances=self.instances + (instance,))
        return replace(self, instances=tuple(instance if i.id == instance.id else i for i in self.instances))


EMPTY_WORLD = World()
