"""Small builders for loop scripts (spec §10): steps, turns, listeners, and readers of a world.

A script is a tuple of ``actions``; ``play`` applies it strictly (every action must be enabled,
so a script that silently stops matching the loop fails loudly instead of being skipped, as
``loop.run`` would). The readers return JSON text or plain tuples so tests assert on data.
"""

from __future__ import annotations

from prefix_model.core.events import REQUEST_HEADER, Event
from prefix_model.core.headers import EpochHeader, LlmCallConfig, header_of
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.loop.actions import (
    Action,
    BeginStep,
    Compose,
    Create,
    Dispatch,
    PostStep,
    PreStep,
    Reply,
    RunTools,
    SendPrompt,
)
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.world import (
    Append,
    InjectThenPrepend,
    Listener,
    ListenerCall,
    Mark,
    Prepend,
    SentRequest,
    ShortCircuit,
    Throw,
    World,
    text_message,
)

__all__ = [
    "LONG_PROMPT",
    "msg",
    "msgs",
    "tool",
    "prepend",
    "appending",
    "short_circuit",
    "thrower",
    "injecting",
    "scripted",
    "step",
    "turn",
    "start",
    "play",
    "types",
    "event_of",
    "events_of",
    "headers_of",
    "header_events",
    "requests_of",
    "loop_requests",
    "marks",
    "texts",
    "CONFIG",
]

CONFIG = LlmCallConfig("mock", "mock-model")
# A prompt long enough that the compaction service's framed summary is smaller than it (CMP-6).
LONG_PROMPT = "go " * 150


# --- Messages and tools ---


def msg(text: str, role: str = "user") -> FrozenMap:
    """Return a one-text-block message."""
    return text_message(text, role)


def msgs(*words: str) -> tuple[FrozenMap, ...]:
    """Return one user message per word."""
    return tuple(msg(w) for w in words)


def tool(name: str) -> JsonValue:
    """Return a tool schema named ``name``."""
    return freeze({"name": name, "description": f"the {name} tool", "parameters": {"type": "object"}})


# --- Listener factories (each call of a listener follows its script; the last entry repeats) ---


def prepend(name: str, *words: str, agent: str | None = None) -> Listener:
    """A listener that always returns ``[...mine, ...await next()]``."""
    return Listener(name, agent, (Prepend(msgs(*words)),))


def appending(name: str, *words: str, agent: str | None = None) -> Listener:
    """A listener that always returns ``[...await next(), ...mine]``."""
    return Listener(name, agent, (Append(msgs(*words)),))


def short_circuit(name: str, *words: str, agent: str | None = None) -> Listener:
    """A listener that returns ``mine`` without calling ``next()``."""
    return Listener(name, agent, (ShortCircuit(msgs(*words)),))


def thrower(name: str, agent: str | None = None) -> Listener:
    """A listener that always throws."""
    return Listener(name, agent, (Throw(),))


def injecting(name: str, injected: str, *words: str, agent: str | None = None) -> Listener:
    """A listener that calls ``agent.inject(injected)`` while composing, then prepends ``words``."""
    return Listener(name, agent, (InjectThenPrepend(injected, msgs(*words)),))


def scripted(name: str, *calls: ListenerCall, agent: str | None = None) -> Listener:
    """A listener whose k-th call does ``calls[k]`` (the last one repeats)."""
    return Listener(name, agent, calls)


# --- Scripts ---


def step(i: int, reply: str | Reply = "ok", *, compose: bool = False, outputs: tuple[str, ...] = (), config: LlmCallConfig | None = None) -> tuple[Action, ...]:
    """Return one step of instance ``i``: begin, [compose], pre-step, dispatch, the reply, [tools], post-step.

    A failed reply ends the step itself, so no ``PostStep`` follows it.
    """
    answer = Reply(i, text=reply) if isinstance(reply, str) else reply
    actions: list[Action] = [BeginStep(i)]
    if compose:
        actions.append(Compose(i))
    actions += [PreStep(i), Dispatch(i, config), answer]
    if answer.failure is not None:
        return tuple(actions)
    if answer.tool_calls:
        actions.append(RunTools(i, outputs))
    actions.append(PostStep(i))
    return tuple(actions)


def turn(i: int, prompt: str, *replies: str | Reply, compose: bool = False) -> tuple[Action, ...]:
    """Return a prompt turn of instance ``i`` with one step per reply (the first composes if asked)."""
    actions: list[Action] = [SendPrompt(i, prompt)]
    for index, reply in enumerate(replies or ("ok",)):
        actions += step(i, reply, compose=compose and index == 0)
    return tuple(actions)


def start(agent: str = "main", session_id: str = "s1", *, system: str = "", tools: tuple[JsonValue, ...] = ()) -> Create:
    """Return the ``Create`` of an agent over a fresh session."""
    return Create(agent, session_id, system=system, tools=tools)


def play(actions: tuple[Action, ...], world: World | None = None, semantics: Semantics = HARNESS) -> World:
    """Apply every action in order; fail on the first one that is not enabled."""
    current = World() if world is None else world
    for index, action in enumerate(actions):
        assert enabled(current, action), f"action {index} is not enabled: {action!r}"
        current = apply(current, action, semantics)
    return current


# --- Readers ---


def events_of(world: World, session_id: str = "s1") -> tuple[Event, ...]:
    """Return the events of session ``session_id``."""
    return world.session(session_id).log.events


def types(world: World, session_id: str = "s1") -> tuple[str, ...]:
    """Return the event types of session ``session_id``, in order."""
    return tuple(e.type for e in events_of(world, session_id))


def event_of(world: World, kind: str, session_id: str = "s1", index: int = 0) -> Event:
    """Return the ``index``-th event of type ``kind``."""
    return [e for e in events_of(world, session_id) if e.type == kind][index]


def header_events(world: World, session_id: str = "s1") -> tuple[Event, ...]:
    """Return the ``request/header`` events of a session."""
    return tuple(e for e in events_of(world, session_id) if e.type == REQUEST_HEADER)


def headers_of(world: World, session_id: str = "s1") -> tuple[tuple[str, EpochHeader], ...]:
    """Return (reason, header) of each ``request/header`` of a session."""
    return tuple((str(e.field("reason")), header_of(e)) for e in header_events(world, session_id))


def requests_of(world: World, instance_id: int) -> tuple[SentRequest, ...]:
    """Return the loop requests instance ``instance_id`` sent."""
    return tuple(r for r in world.requests if r.instance_id == instance_id and r.loop_request)


def loop_requests(world: World) -> tuple[SentRequest, ...]:
    """Return every loop request (auxiliary calls left out)."""
    return tuple(r for r in world.requests if r.loop_request)


def marks(world: World, instance_id: int, kind: str | None = None) -> tuple[Mark, ...]:
    """Return instance ``instance_id``'s trace marks (of one kind)."""
    return tuple(m for m in world.trace if m.instance_id == instance_id and (kind is None or m.kind == kind))


def texts(messages: tuple[JsonValue, ...]) -> tuple[str, ...]:
    """Return each message as ``role:text|text`` (non-text blocks by their JSON)."""
    out = []
    for message in messages:
        assert isinstance(message, FrozenMap)
        content = message.get("content")
        blocks = content if isinstance(content, tuple) else ()
        parts = [str(b["text"]) if isinstance(b, FrozenMap) and b.get("type") == "text" else json_text(b) for b in blocks]
        out.append(f"{message.get('role')}:{'|'.join(parts)}")
    return tuple(out)
