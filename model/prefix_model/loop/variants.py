"""Spec §13 — faulty variants: the design's rejected alternatives and likely bugs, as ``Semantics``.

Each variant changes one design choice of ``HARNESS``. ``WITNESS`` is one scripted session that
reaches every situation a variant needs (two scoped listeners, a cancelled composition, a late
inject, tools, a system and config change, a contribution mutated after composition, a
compaction, a resume, a fork, an agent with no listener); ``judge`` runs it under a variant and
reports which properties reject it. The stateful machines find the same variants on their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, ensure
from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import freeze
from prefix_model.loop.actions import (
    Action,
    BeginStep,
    Cancel,
    Compose,
    Create,
    Dispatch,
    ForkDrive,
    Inject,
    MutateContribution,
    PostStep,
    PreStep,
    Register,
    Reply,
    Resume,
    RunTools,
    SendPrompt,
    SetSystem,
)
from prefix_model.loop.properties import PROPERTIES, Violation, check_all
from prefix_model.loop.semantics import Semantics
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.world import Listener, Phase, Prepend, World, text_message

__all__ = ["Variant", "VARIANTS", "WITNESS", "Verdict", "run_witness", "judge"]


@dataclass(frozen=True, slots=True)
class Variant:
    """A named faulty design: what it does, its semantics, and the IDs expected to reject it."""

    name: str
    summary: str
    semantics: Semantics
    expected: tuple[str, ...]


VARIANTS: tuple[Variant, ...] = (
    Variant("prefix-as-history", "the prefix is written as durable user messages", Semantics(prefix_as_history=True), ("PFX-1",)),
    Variant("compose-per-request", "the waterfall runs before every request", Semantics(compose_scope="request"), ("PFX-2",)),
    Variant("compose-per-turn", "the waterfall runs on every turn's first step", Semantics(compose_scope="turn"), ("PFX-2",)),
    Variant("cache-interrupted", "a cancelled composition is cached", Semantics(cache_interrupted=True), ("PFX-4",)),
    Variant("prefix-not-logged", "the header omits messagePrefix; the request still sends it", Semantics(log_prefix=False), ("REC-1", "PFX-3")),
    Variant("prefix-after-history", "the prefix is sent after the history", Semantics(prefix_place="after-history"), ("REC-1",)),
    Variant("prefix-in-system", "the prefix is folded into the system prompt", Semantics(prefix_place="system"), ("PFX-3",)),
    Variant("no-resume-anchor", "a new instance writes no unconditional anchor", Semantics(anchor_new_instance=False), ("PFX-5",)),
    Variant("empty-prefix-logged", "an empty composition is logged as messagePrefix: []", Semantics(log_empty_prefix=True), ("PFX-6",)),
    Variant("boundary-after-step-start", "the boundary is taken at dispatch, after step/start", Semantics(boundary_at_dispatch=True), ("REC-1",)),
    Variant("compose-after-pre-step", "composition runs after agent/pre-step", Semantics(compose_after_pre_step=True), ("LOOP-3",)),
    Variant("listeners-reversed", "listeners are called in reverse registration order", Semantics(reverse_listeners=True), ("PFX-8",)),
    Variant("compaction-drops-prefix", "compaction rewrites the cached prefix", Semantics(compaction_drops_prefix=True), ("PFX-2",)),
    Variant("compaction-logs-header", "compaction writes a header without the prefix", Semantics(compaction_logs_header=True), ("CMP-1",)),
    Variant("meter-misses-prefix", "post-step pressure leaves the prefix out", Semantics(meter_prefix_times=0), ("TOK-1",)),
    Variant("meter-double-prefix", "post-step pressure counts the prefix twice", Semantics(meter_prefix_times=2), ("TOK-1",)),
    Variant("no-change-on-system", "a system-prompt change writes no change snapshot", Semantics(change_ignores_system=True), ("REC-1",)),
    Variant("cache-by-reference", "the cache aliases the listeners' objects", Semantics(cache_by_reference=True), ("PFX-7",)),
    Variant("effort-from-options", "the request's reasoningEffort is the options', not the header's", Semantics(effort_from_header=False), ("REC-2",)),
    Variant("fork-drops-headers", "a fork's seed loses the header snapshots", Semantics(fork_copies_headers=False), ("FORK-8",)),
    Variant("history-window", "requests send only the last 3 history messages", Semantics(history_window=3), ("REC-3",)),
    Variant("change-always", "every later request writes a change snapshot", Semantics(change_always=True), ("HDR-15",)),
)

_CATALOG = Listener("catalog", "main", (Prepend((text_message("<prefix catalog v1>"),)),))
_BASELINE = Listener("baseline", "main", (Prepend((text_message("<prefix baseline v1>"),)),))
_TOOLS = freeze([{"name": "echo", "description": "echo back", "parameters": {"type": "object"}}])
assert isinstance(_TOOLS, tuple)


def _step(instance: int, *reply: Action) -> tuple[Action, ...]:
    return (BeginStep(instance), PreStep(instance), Dispatch(instance), *reply, PostStep(instance))


WITNESS: tuple[Action, ...] = (
    Register(_CATALOG),
    Register(_BASELINE),
    Create("main", "s1", system="You are careful.", tools=_TOOLS),
    # A composition cancelled while the waterfall is awaited, then a turn that recomposes.
    SendPrompt(0, "first, " + "read the whole plan; " * 25), BeginStep(0), Cancel(0), Compose(0),
    SendPrompt(0, "say ping"), BeginStep(0), Compose(0), PreStep(0),
    Inject(0, "late context"),  # between step/start and the header: the next request's, not this one's
    Dispatch(0), Reply(0, tool_calls=(("c1", "echo", '{"text":"ping"}'),)), RunTools(0, ("echo: ping",)), PostStep(0),
    SetSystem(0, "You are very careful."),
    *_step(0, Reply(0, text="ping")),
    MutateContribution("catalog", (text_message("<prefix catalog v2>"),)),
    SendPrompt(0, "more"), BeginStep(0), PreStep(0), Dispatch(0, LlmCallConfig("mock", "mock-model", "max")),
    Reply(0, tool_calls=(("c2", "echo", '{"text":"more"}'),)), RunTools(0, ("echo: more",)), PostStep(0),
    *_step(0, Reply(0, text="more")),
    SendPrompt(0, "compact"), BeginStep(0), PreStep(0, compact=(0, 4)), Dispatch(0), Reply(0, text="ok"), PostStep(0),
    # A restart: the new instance recomposes (catalog is v2 now) and anchors with 'resume'.
    Resume("s1", "main", system="You are very careful.", tools=_TOOLS),
    SendPrompt(1, "resumed"), BeginStep(1), Compose(1), PreStep(1), Dispatch(1), Reply(1, text="back"), PostStep(1),
    # A fork driven by a new agent, and an agent that no listener contributes to.
    ForkDrive("s1", "s2", None, "main"),
    SendPrompt(2, "forked"), BeginStep(2), Compose(2), PreStep(2), Dispatch(2), Reply(2, text="child"), PostStep(2),
    Create("solo", "s3"),
    SendPrompt(3, "alone"), BeginStep(3), Compose(3), PreStep(3), Dispatch(3), Reply(3, text="hi"), PostStep(3),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the properties say of one variant's witness run."""

    variant: str
    rejected_by: tuple[str, ...]
    expected: tuple[str, ...]
    first: str

    @property
    # no contract: it is VAR-1's verdict itself (every expected ID among those that rejected), nothing beyond its body
    def detected(self) -> bool:
        """Return whether every expected property rejected the variant."""
        return all(rule in self.rejected_by for rule in self.expected)


def _drives_every_session(result: World) -> bool:
    """The witness's situations are all reached: its three sessions exist, each driven, s2 a fork of s1."""
    sessions = {s.id: s for s in result.sessions}
    forked = sessions.get("s2")
    return (sorted(sessions) == ["s1", "s2", "s3"] and {i.session_id for i in result.instances} == set(sessions)
            and forked is not None and forked.lineage is not None and forked.lineage.parent_session == "s1")  # fmt: skip


@ensure(_drives_every_session, "VAR-1: the witness run reaches every session it scripts under any semantics", enabled=ENABLED)
@ensure(lambda result: any(r.loop_request for r in result.requests), "VAR-1: the witness run sends loop requests", enabled=ENABLED)
def run_witness(semantics: Semantics) -> World:
    """Return the world after the witness script under ``semantics`` (every action must be enabled)."""
    world = World()
    for action in WITNESS:
        stuck = getattr(action, "instance", len(world.instances))
        if not enabled(world, action) and stuck < len(world.instances) and world.instance(stuck).phase is Phase.COMPOSE:
            world = apply(world, Compose(stuck), semantics)  # a variant that composes where the harness does not
        if enabled(world, action):  # a variant may skip a segment (e.g. compose inside pre-step)
            world = apply(world, action, semantics)
    return world


@ensure(
    lambda variant, result: (result.variant, result.expected) == (variant.name, variant.expected),
    "VAR-1: a verdict is of the variant judged, against the IDs it names",
    enabled=ENABLED,
)
@ensure(
    lambda result: list(result.rejected_by) == sorted(set(result.rejected_by)) and set(result.rejected_by) <= {rule for rule, _ in PROPERTIES}
    and (result.first == "") == (not result.rejected_by),
    "VAR-1: a variant is rejected by property IDs, each named once; the first violation is shown when there is one",
    enabled=ENABLED,
)
def judge(variant: Variant) -> Verdict:
    """Return which properties reject ``variant`` on the witness run."""
    violations: tuple[Violation, ...] = check_all(run_witness(variant.semantics))
    rules = tuple(sorted({v.rule for v in violations}))
    return Verdict(variant.name, rules, variant.expected, str(violations[0]) if violations else "")



