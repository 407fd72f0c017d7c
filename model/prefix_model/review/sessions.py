"""Spec §14.2 — the sessions every design runs: one generated scenario, in named segments.

``scenario(turns)`` builds the segments: a cancelled first composition, turns with tool calls,
a skill added mid-session, a resume after an offline change, a fork, and a compaction that covers
the opener. ``play`` runs segments under a design as the variants' witness runs (a design may
compose where the harness does not; an action a design left disabled is skipped) and records, per
request, what the opener was when it was sent — the ghost the staleness measure reads. It also
returns the actions it applied, so a counterexample replays with ``loop.transitions.run``.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.json_values import FrozenMap, JsonValue, freeze
from prefix_model.loop.actions import (
    Action,
    BeginStep,
    Cancel,
    Compose,
    Create,
    Dispatch,
    ForkDrive,
    MutateContribution,
    PostStep,
    PreStep,
    Register,
    Reply,
    Resume,
    RunTools,
    SendPrompt,
)
from prefix_model.loop.semantics import Semantics
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.waterfall import compose
from prefix_model.loop.world import Listener, Phase, Prepend, World, message_text, text_message

__all__ = ["Chunk", "Segment", "Played", "OPENER_TAG", "skills", "scenario", "play"]

OPENER_TAG = "<skill "  # every opener message's text starts so; no other message's does
SYSTEM = "You are careful."
_TOOLS = freeze([{"name": "echo", "description": "echo back", "parameters": {"type": "object"}}])
assert isinstance(_TOOLS, tuple)
TOOLS: tuple[JsonValue, ...] = _TOOLS


def skills(*names: str) -> tuple[FrozenMap, ...]:
    """Return the opener for ``names``: one ``<system-reminder>``-like message per skill."""
    return tuple(text_message(f"{OPENER_TAG}{n}: how and when to use {n}>") for n in names)


Chunk = tuple[Action, ...]  # what a counterexample keeps or leaves out whole: a turn, or one action


@dataclass(frozen=True, slots=True)
class Segment:
    """A named piece of the scenario: what happens, as chunks of actions."""

    name: str
    chunks: tuple[Chunk, ...]

    @property
    def actions(self) -> tuple[Action, ...]:
        """Return the segment's actions in order."""
        return tuple(a for chunk in self.chunks for a in chunk)


def _step(i: int, reply: Reply, tools: bool) -> tuple[Action, ...]:
    return (BeginStep(i), PreStep(i), Dispatch(i), reply, *((RunTools(i, ("echo: ok",)),) if tools else ()), PostStep(i))


def _turn(i: int, text: str, tools: bool) -> tuple[Action, ...]:
    """A turn: with ``tools``, a tool call then the answer (two steps); else one step."""
    first = Reply(i, tool_calls=((f"c-{text}", "echo", '{"text":"ok"}'),)) if tools else Reply(i, text=f"re: {text}")
    rest = _step(i, Reply(i, text=f"done: {text}"), False) if tools else ()
    return (SendPrompt(i, text), *_step(i, first, tools), *rest)


def scenario(turns: int = 2) -> tuple[Segment, ...]:
    """Return the review's scenario with ``turns`` turns in each stretch (the first of each with a tool call)."""

    def stretch(i: int, label: str) -> tuple[Chunk, ...]:
        return tuple(_turn(i, f"{label} {n + 1}", tools=n == 0) for n in range(turns))

    listener = Listener("skills", None, (Prepend(skills("alpha", "beta")),))
    return (
        Segment("start", ((Register(listener), Create("main", "s1", system=SYSTEM, tools=TOOLS)),)),
        Segment("cancelled first composition", ((SendPrompt(0, "first"), BeginStep(0), Cancel(0), Compose(0)),)),
        Segment("turns", stretch(0, "task")),
        Segment("skill added", ((MutateContribution("skills", skills("alpha", "beta", "gamma")),),)),
        Segment("turns after the change", stretch(0, "more")),
        Segment("offline change", ((MutateContribution("skills", skills("alpha", "beta", "gamma", "delta")),),)),
        Segment("resume", ((Resume("s1", "main", system=SYSTEM, tools=TOOLS),), *stretch(1, "resumed"))),
        Segment("fork", ((ForkDrive("s1", "s2", None, "main", system=SYSTEM, tools=TOOLS),), *stretch(2, "forked"))),
        Segment("compaction over the opener", ((SendPrompt(1, "compact"), BeginStep(1), PreStep(1, compact=(0, -1)), Dispatch(1),
                                                Reply(1, text="compacted"), PostStep(1)), *stretch(1, "after"))),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Played:
    """A run: the world at the end, the actions applied, and per loop request the opener then in force."""

    world: World
    applied: tuple[Action, ...]
    openers: tuple[tuple[str, ...], ...]  # per entry of world.requests: the opener texts a listener read then
    ends: tuple[int, ...]  # after each segment, how many actions had been applied
    worlds: tuple[World, ...]  # the world after each segment

    def upto(self, segments: int) -> Played:
        """Return this run cut after its first ``segments`` segments."""
        world = self.worlds[segments - 1] if segments else World()
        applied = self.applied[: self.ends[segments - 1]] if segments else ()
        return Played(world, applied, self.openers[: len(world.requests)], self.ends[:segments], self.worlds[:segments])


def _resolve(world: World, action: Action) -> Action:
    """The scenario's symbolic compaction: ``compact=(0, -1)`` covers the surface up to the new prompt."""
    if isinstance(action, PreStep) and action.compact == (0, -1) and 0 <= action.instance < len(world.instances):
        nodes = len(world.log_of(action.instance).surface.nodes)
        return PreStep(action.instance, compact=(0, max(0, nodes - 2)))
    return action


def _opener_now(world: World, instance: int) -> tuple[str, ...]:
    product = compose(world.listeners, world.instance(instance).agent).product or ()
    return tuple(message_text(m) for m in product)


def play(semantics: Semantics, segments: tuple[Segment, ...]) -> Played:
    """Return the run of ``segments`` under ``semantics``."""
    world = World()
    applied: list[Action] = []
    openers: list[tuple[str, ...]] = []
    ends: list[int] = []
    worlds: list[World] = []
    for segment in segments:
        for planned in segment.actions:
            action = _resolve(world, planned)
            stuck = getattr(action, "instance", len(world.instances))
            if not enabled(world, action) and stuck < len(world.instances) and world.instance(stuck).phase is Phase.COMPOSE:
                world = apply(world, Compose(stuck), semantics)  # a design that composes where the harness does not
                applied.append(Compose(stuck))
                action = _resolve(world, planned)  # the composition may have written to the surface
            if enabled(world, action):
                before = len(world.requests)
                world = apply(world, action, semantics)
                applied.append(action)
                openers += [_opener_now(world, r.instance_id) for r in world.requests[before:]]
        ends.append(len(applied))
        worlds.append(world)
    return Played(world, tuple(applied), tuple(openers), tuple(ends), tuple(worlds))


def opener_texts(value: JsonValue) -> tuple[str, ...]:
    """Return every opener text inside ``value`` (message content blocks, or a system string's paragraphs)."""
    if isinstance(value, str):
        return tuple(p for p in value.split("\n\n") if p.startswith(OPENER_TAG))
    if isinstance(value, FrozenMap):
        return tuple(t for v in value.values() for t in opener_texts(v))
    if isinstance(value, tuple):
        return tuple(t for v in value for t in opener_texts(v))
    return ()
