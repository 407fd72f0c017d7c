"""Spec §13 — faulty variants: the design's rejected alternatives and likely bugs, as ``Semantics``.

Each variant is a subclass of ``Semantics`` overriding one choice point: the harness with one
design decision changed, readable beside the baseline it changes. ``WITNESS`` is one scripted session that
reaches every situation a variant needs (two scoped listeners, a cancelled composition, a late
inject, tools, a system and config change, a contribution mutated after composition, a
compaction, a resume, a fork, an agent with no listener); ``judge`` runs it under a variant and
reports which properties reject it. The stateful machines find the same variants on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from prefix_model.core.contracts import ENABLED, ensure
from prefix_model.core.derive import derive_messages
from prefix_model.core.events import REQUEST_HEADER, USER_MESSAGE
from prefix_model.core.headers import CHANGE, EpochHeader, LlmCallConfig, canonical_header, fold_request_header, header_equals, header_to_json
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, freeze_object
from prefix_model.core.log import Log, seed_log
from prefix_model.core.request_log import expected_reason
from prefix_model.core.requests import Request
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
from prefix_model.loop.meter import Measurement
from prefix_model.loop.properties import PROPERTIES, Violation, check_all
from prefix_model.loop.semantics import HARNESS, Durable, Semantics
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.waterfall import compose
from prefix_model.loop.world import INJECTED, Instance, Listener, Phase, Prepend, World, message_text, text_message

__all__ = ["Variant", "VARIANTS", "WITNESS", "Verdict", "semantics_of", "durable_copies", "system_with", "run_witness", "judge"]


@dataclass(frozen=True, slots=True)
class Variant:
    """A named faulty design: what it does, its semantics, and the IDs expected to reject it."""

    name: str
    summary: str
    semantics: Semantics
    expected: tuple[str, ...]


# --- Each faulty design: one choice point of ``Semantics`` overridden ---


# no contract: a rejected design's helper (the prefix as history), judged by the properties it breaks
def durable_copies(product: tuple[JsonValue, ...], source: FrozenMap = INJECTED) -> tuple[Durable, ...]:
    """Return each composed message as a durable ``user/message`` (``{content, source}``)."""
    return tuple((USER_MESSAGE, freeze_object({"content": m.get("content"), "source": source})) for m in product if isinstance(m, FrozenMap))


class PrefixAsHistory(Semantics):
    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        return durable_copies(product), product


class PrefixInReminder(Semantics):
    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        # The note's own example of message-shaped content: one durable user/message, the texts in a <system-reminder> envelope.
        if not product:
            return (), product
        wrapped = "<system-reminder>\n" + "\n".join(map(message_text, product)) + "\n</system-reminder>"
        return ((USER_MESSAGE, freeze_object({"content": [{"type": "text", "text": wrapped}], "source": INJECTED})),), product


class StaleOnNewInstance(Semantics):
    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        # A new instance over a log that already holds a prefix sends the logged one, not what its waterfall gave.
        folded = fold_request_header(log.events)
        return (), product if folded is None or folded.message_prefix is None else folded.message_prefix


SESSION_PREFIX = "session/prefix"  # the note's rejected "dedicated session event carrying the prefix"


class PrefixSessionEvent(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        # The header keeps the prefix, and a log-only event just before each snapshot holds it again: a second home.
        if expected_reason(log, logged, header) is not None and header.message_prefix is not None:
            log = log.append(SESSION_PREFIX, {"messagePrefix": header.message_prefix})
        return super().record(log, logged, header)


class ComposePerRequest(Semantics):
    def recompose(self, instance: Instance) -> bool:
        return True


class ComposePerTurn(Semantics):
    def recompose(self, instance: Instance) -> bool:
        return instance.step == 1


class CacheInterrupted(Semantics):
    cache_interrupted = True


def _bare(config: LlmCallConfig, system: str, tools: tuple[JsonValue, ...]) -> EpochHeader:
    return canonical_header(EpochHeader(config, system, tools, ()))


class PrefixNotLogged(Semantics):
    def header(self, config: LlmCallConfig, system: str, tools: tuple[JsonValue, ...], prefix: tuple[JsonValue, ...]) -> EpochHeader:
        return _bare(config, system, tools)

    def request(self, header: EpochHeader, prefix: tuple[JsonValue, ...], history: tuple[FrozenMap, ...], instance: Instance) -> Request:
        return Request(header, prefix + history, instance.session_id)


class PrefixAfterHistory(PrefixNotLogged):
    def request(self, header: EpochHeader, prefix: tuple[JsonValue, ...], history: tuple[FrozenMap, ...], instance: Instance) -> Request:
        return Request(header, history + prefix, instance.session_id)


# no contract: a rejected design's helper (the prefix in the system prompt), judged by the properties it breaks
def system_with(system: str, prefix: tuple[JsonValue, ...]) -> str:
    """Return the system prompt with each prefix message's text folded in, one paragraph each."""
    return "\n\n".join(filter(None, [system, *map(message_text, prefix)])) if prefix else system


class PrefixInSystem(Semantics):
    def header(self, config: LlmCallConfig, system: str, tools: tuple[JsonValue, ...], prefix: tuple[JsonValue, ...]) -> EpochHeader:
        return _bare(config, system_with(system, prefix), tools)


class NoResumeAnchor(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        return super().record(log, logged or fold_request_header(log.events) is not None, header)


class EmptyPrefixLogged(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        reason = expected_reason(log, logged, header)
        if reason is None or header.message_prefix is not None:
            return super().record(log, logged, header)
        data = {"header": dict(header_to_json(header)) | {"messagePrefix": ()}, "reason": reason}
        return log.append(REQUEST_HEADER, data), reason


class BoundaryAtDispatch(Semantics):
    def history(self, boundary: tuple[FrozenMap, ...], log: Log) -> tuple[FrozenMap, ...]:
        return derive_messages(log)


class ComposeInPreStep(Semantics):
    compose_in_pre_step = True


class ListenersReversed(Semantics):
    def listener_order(self, listeners: tuple[Listener, ...]) -> tuple[Listener, ...]:
        return tuple(reversed(listeners))


class CompactionDropsPrefix(Semantics):
    def after_compaction(self, prefix: tuple[JsonValue, ...] | None) -> tuple[JsonValue, ...] | None:
        return ()


class CompactionLogsHeader(Semantics):
    def compaction_header(self, header: EpochHeader | None) -> EpochHeader | None:
        # Re-logs the header in force without its prefix; before the first request there is none.
        return None if header is None else canonical_header(replace(header, message_prefix=None))


class MeterPrefixTimes(Semantics):
    def __init__(self, times: int) -> None:
        self.times = times

    def pressure(self, log: Log, measured: Measurement, prefix_price: int) -> int:
        return measured.total + (self.times - 1) * prefix_price


class ChangeIgnoresSystem(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        folded = fold_request_header(log.events)
        if logged and folded is not None and header_equals(replace(folded, system=header.system), header):
            return log, None
        return super().record(log, logged, header)


class CacheByReference(Semantics):
    def sent_prefix(self, cached: tuple[JsonValue, ...], listeners: tuple[Listener, ...], agent: str) -> tuple[JsonValue, ...]:
        return compose(listeners, agent).product or ()


class EffortFromOptions(Semantics):
    def request(self, header: EpochHeader, prefix: tuple[JsonValue, ...], history: tuple[FrozenMap, ...], instance: Instance) -> Request:
        # The agent's options name a route and no effort (A/types.ts:22-27): the request goes without one.
        config = replace(header.config, reasoning_effort=None, written=None)
        return super().request(replace(header, config=config), prefix, history, instance)


class ForkDropsHeaders(Semantics):
    def fork_seed(self, seed: Log) -> Log:
        # Blank the snapshots out, keeping every seq in place.
        blanked = seed_log(tuple(replace(e, type="fork/omitted", data=FrozenMap()) if e.type == REQUEST_HEADER else e for e in seed.events))
        assert isinstance(blanked, Log)
        return blanked


class HistoryWindow(Semantics):
    def __init__(self, size: int) -> None:
        self.size = size

    def history(self, boundary: tuple[FrozenMap, ...], log: Log) -> tuple[FrozenMap, ...]:
        return boundary[-self.size :]


class ChangeAlways(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        if expected_reason(log, logged, header) is not None:
            return super().record(log, logged, header)
        return log.append(REQUEST_HEADER, {"header": header_to_json(header), "reason": CHANGE}), CHANGE


VARIANTS: tuple[Variant, ...] = (
    Variant("prefix-as-history", "the prefix is written as durable user messages", PrefixAsHistory(), ("PFX-1",)),
    Variant("prefix-in-reminder", "the prefix's texts are written into history in a <system-reminder> envelope", PrefixInReminder(), ("PFX-1",)),
    Variant("prefix-second-home", "each snapshot's prefix is logged again in a session/prefix event", PrefixSessionEvent(), ("PFX-11",)),
    Variant("stale-on-new-instance", "a new instance over a logged prefix sends the logged one, not its own composition", StaleOnNewInstance(), ("PFX-12",)),
    Variant("compose-per-request", "the waterfall runs before every request", ComposePerRequest(), ("PFX-2",)),
    Variant("compose-per-turn", "the waterfall runs on every turn's first step", ComposePerTurn(), ("PFX-2",)),
    Variant("cache-interrupted", "a cancelled composition is cached", CacheInterrupted(), ("PFX-4",)),
    Variant("prefix-not-logged", "the header omits messagePrefix; the request still sends it", PrefixNotLogged(), ("REC-1", "PFX-3")),
    Variant("prefix-after-history", "the prefix is sent after the history", PrefixAfterHistory(), ("REC-1",)),
    Variant("prefix-in-system", "the prefix is folded into the system prompt", PrefixInSystem(), ("PFX-3",)),
    Variant("no-resume-anchor", "a new instance writes no unconditional anchor", NoResumeAnchor(), ("PFX-5",)),
    Variant("empty-prefix-logged", "an empty composition is logged as messagePrefix: []", EmptyPrefixLogged(), ("PFX-6",)),
    Variant("boundary-after-step-start", "the boundary is taken at dispatch, after step/start", BoundaryAtDispatch(), ("REC-1",)),
    Variant("compose-after-pre-step", "composition runs after agent/pre-step", ComposeInPreStep(), ("LOOP-3",)),
    Variant("listeners-reversed", "listeners are called in reverse registration order", ListenersReversed(), ("PFX-8",)),
    Variant("compaction-drops-prefix", "compaction rewrites the cached prefix", CompactionDropsPrefix(), ("PFX-2",)),
    Variant("compaction-logs-header", "compaction writes a header without the prefix", CompactionLogsHeader(), ("CMP-1",)),
    Variant("meter-misses-prefix", "post-step pressure leaves the prefix out", MeterPrefixTimes(0), ("TOK-1",)),
    Variant("meter-double-prefix", "post-step pressure counts the prefix twice", MeterPrefixTimes(2), ("TOK-1",)),
    Variant("no-change-on-system", "a system-prompt change writes no change snapshot", ChangeIgnoresSystem(), ("REC-1",)),
    Variant("cache-by-reference", "the cache aliases the listeners' objects", CacheByReference(), ("PFX-7",)),
    Variant("effort-from-options", "the request's reasoningEffort is the options' (they have none), not the header's", EffortFromOptions(), ("REC-2",)),
    Variant("fork-drops-headers", "a fork's seed loses the header snapshots", ForkDropsHeaders(), ("FORK-8",)),
    Variant("history-window", "requests send only the last 3 history messages", HistoryWindow(3), ("REC-3",)),
    Variant("change-always", "every later request writes a change snapshot", ChangeAlways(), ("HDR-15",)),
)
for _variant in VARIANTS:
    _variant.semantics.name = _variant.name


@ensure(lambda name, result: result.name == name, "VAR-1: the semantics of the variant of that name", enabled=ENABLED)
def semantics_of(name: str) -> Semantics:
    """Return the semantics of the variant named ``name`` (``session-prefix``: the harness's).

    :raises KeyError: for no such variant
    """
    if name == HARNESS.name:
        return HARNESS
    for variant in VARIANTS:
        if variant.name == name:
            return variant.semantics
    raise KeyError(name)


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



