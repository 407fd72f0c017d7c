"""Small, realistic faults in when or how the prefix is composed, ordered or kept, each served over the adapter protocol.

``python tests/adapters/planted_adapter.py NAME`` serves the model with fault NAME planted; the
ones listed in ``FOUND_BY_A_CAMPAIGN`` pass every published vector but the cases a campaign found for
them and the project adopted (tests/edge/test_fuzz.py checks that), so, before those, only a generated
campaign found them:

- ``recompose-from-turn-4``: the cached prefix expires: from the fourth turn on every turn composes anew;
- ``scoped-first``: the waterfall calls the listeners scoped to the agent before the global ones;
- ``empty-not-cached``: an empty composition is not cached, so the next step composes again;
- ``tools-by-name``: the record rule compares tool lists by their names only;
- ``key-order-blind``: the record rule compares headers as values, key order ignored, where the harness compares
  their JSON text (a schema whose parameters list their keys in another order is no change to it);
- ``model-ignored``, ``provider-ignored``, ``max-tokens-ignored``, ``temperature-ignored``, ``stop-ignored``: the
  record rule compares request configs without that field; ``stop-as-set``: stop lists as sets; ``system-trimmed``:
  system prompts trimmed; ``tool-description-ignored``: tool schemas without their descriptions;
- ``falsy-dropped``: a header drops a temperature or maxTokens of 0; ``empty-stop-dropped``: an empty stop list;
  ``stop-deduplicated``: a stop sequence the list repeats;
  ``medium-effort-dropped``: a medium reasoning effort, taken for a provider's default;
- ``locale-sorted``: assembly sorts tools case-insensitively; ``merged-fold``: the record rule's baseline merges
  snapshots; ``seen-before``: the record rule logs no change for a header equal to any earlier snapshot;
  ``tools-seen-before``, ``config-seen-before``: nor for one whose tools (or request config) alone changed, to
  those an earlier snapshot held;
  ``whole-config-inherited``: a first request on the logged route starts from the whole logged config, not its
  reasoning effort alone; ``prefix-rebuilt``: each composed message rebuilt as ``{role, content}``;
  ``text-blocks-only``: each composed message keeps its text blocks only; ``system-first``: a composition's system
  messages moved before the others; ``empty-dropped``: a composed message with no block dropped;
- ``duplicates-dropped``: a composition that contributes the same message twice sends it once;
- ``fork-reuses-logged``: a fork's new instance takes the prefix of the seed's last header instead of composing;
- ``resume-reuses-logged``: a resumed instance takes the prefix of the log's last header instead of composing;
- ``anchor-skipped-when-unchanged``: a resumed or forked instance logs no anchor when its header equals the log's
  folded one (a plain restart: same agent, options, system, tools and prefix);
- ``register-recomposes``, ``mount-recomposes``, ``create-recomposes``, ``dispose-recomposes``, ``resume-recomposes``,
  ``fork-recomposes``: every cached prefix dropped when a listener registers, a compaction service mounts, another
  instance is created, resumed or forked, or one is disposed, so each instance composes again at its next step;
- ``steering-stacked``, ``deferred-stacked``, ``queued-stacked``: what waits (steering, the injects a tool batch defers,
  the prompts queued behind a turn) taken newest first; ``steering-first``: a tool batch's end drains the steering
  before the injects it deferred; ``steering-before-queued``: the steering a turn never drained goes before the prompts
  queued behind it when the turn ends; ``contexts-reversed``: a prompt's separate contexts injected newest first;
- ``replay-state-dropped-at-max-tokens``: an answer cut short at max tokens logged without its finish's replay state,
  where the harness drops it only where a cut tool call rewrote the content;
- ``reasoning-unpriced``: the meter prices a reasoning block at nothing; ``retain-strict``: the compacted range leaves
  a tail priced past ``retainTokens``, not one that reaches them; ``tail-unbalanced``: that tail not moved back to a
  cut no tool call crosses, so the service's range splits a call from its result and is refused;
  ``pressure-when-cancelled``: the service's post-step listener compacts on a cancelled or disposed step;
  ``equal-summary-taken``: a summary priced, framed, exactly at the shadowed content is taken, not refused;
  ``first-usage-kept``: a stream's first usage chunk kept, not its last; ``cancel-lost-on-throw``: a listener's cancel
  lost where a later listener throws; ``every-listener-called``: the listeners after a short-circuit called all the
  same;
- ``usage-below-estimate-anchors``: a provider's usage anchors the meter even below the estimate of its request;
  ``usage-anchored-at-the-answer``: a usage anchor's surface taken when the answer lands, not at the step's start;
- ``empty-answer-kept``: an answer with no block (an empty reply) derived as an assistant message of empty content,
  where the harness derives it to nothing, so every later request sends it; ``empty-answer-priced``: the meter
  projects such an answer to that message and prices it at its role framing, where the harness prices a node that
  projects to nothing at 0; ``tool-name-one-token``: the meter prices a tool call's name as one token, whatever its
  length; ``first-header-priced``: post-step pressure prices the session's first routed header, not its latest;
  ``prefix-priced-as-json``: the meter prices the header's prefix as the JSON text of the list, as it prices the tools;
- ``threshold-unfloored``: the service compares the pressure with the window times the threshold ratio unfloored;
  ``threshold-rounded``: it rounds that product to the nearest integer; ``retain-unfloored`` and ``retain-rounded``:
  the same of the retained tail's window times its ratio; ``blank-by-python-strip``: a summary is blank
  when Python's ``str.strip`` leaves nothing, not JavaScript's ``trim``; ``blank-untrimmed``: only an empty summary is
  blank;
- ``provider-defaulted``: an agent with a model but no provider routed by the default provider, where the harness's
  requests and its summarizer find no route; ``effort-on-the-model-alone``: a first request takes the logged
  reasoning effort where its model alone is the log's, its provider another; ``latest-effort-kept``: the latest effort
  any snapshot held, where the folded header holds none;
- ``disposed-takes-inputs``: an input to a disposed instance (inject, steer, cancel, dispose, a system or tool
  change) is taken and dropped instead of refused; only a campaign's hostile steps (FUZZ-10) send one.

``last-message-dropped`` drops the last message of every request it sends, whatever put it there: the steer of a
steered step and a composing listener's inject go missing alike (how a signature tells them apart, FUZZ-8).

``later-step-or-fork-not-sent`` sends no request from a step after a turn's first, nor from a fork's child: two
causes behind one signature (``Dispatch: replies differ at /sent``), which a campaign must report apart (FUZZ-3).

``own-layout`` is no fault of the requests: it answers each reply's events of a session in reverse
order, a log layout that differs by design, and ``own-layout+NAME`` does so with fault NAME planted
(what ``fuzz --compare requests`` must see through, and still find).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from types import ModuleType
from dataclasses import replace
from typing import Any

from prefix_model.core.derive import derive_event_message
from prefix_model.core.events import ASSISTANT_CHUNK, ASSISTANT_MESSAGE, REQUEST_HEADER, STEP_END, STEP_START, Event
from prefix_model.core.headers import CHANGE, EpochHeader, LlmCallConfig, canonical_header, fold_request_header, header_equals, header_of, header_to_json
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, thaw
from prefix_model.core.log import EMPTY_LOG, Log, append_event, seed_log
from prefix_model.core.request_log import header_event
from prefix_model.core.requests import boundary_log
from prefix_model.edge.runner.server import Failed, Server, serve
from prefix_model.loop.actions import Dispatch, PostStep, SendPrompt
from prefix_model.loop import compaction, meter, transitions
from prefix_model.loop.compaction import CompactPolicy, tail_start
from prefix_model.loop.meter import Measurement, surface_tokens
from prefix_model.loop.semantics import Durable, Semantics
from prefix_model.loop.stream import Assembly
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.waterfall import Composition, active_listeners
from prefix_model.loop.world import AgentOptions, Instance, Listener, Prepend, ShortCircuit, World
from prefix_model.vectors.codec import CodecError, action_from_json, action_to_json


class RecomposeFromTurn4(Semantics):
    def recompose(self, instance: Instance) -> bool:
        return instance.turn >= 4 and instance.step == 1


class RecomposeFromTurn6(Semantics):
    def recompose(self, instance: Instance) -> bool:
        return instance.turn >= 6 and instance.step == 1


class ShortCircuitIgnored(Semantics):
    def listener_order(self, listeners: tuple[Listener, ...]) -> tuple[Listener, ...]:
        return tuple(replace(x, script=tuple(Prepend(c.messages) if isinstance(c, ShortCircuit) else c for c in x.script)) for x in listeners)


class DuplicatesDropped(Semantics):
    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        kept: list[JsonValue] = []
        for message in product:
            if message not in kept:
                kept.append(message)
        return (), tuple(kept)


class ScopedFirst(Semantics):
    def listener_order(self, listeners: tuple[Listener, ...]) -> tuple[Listener, ...]:
        return tuple(x for x in listeners if x.agent is not None) + tuple(x for x in listeners if x.agent is None)


class EmptyNotCached(Semantics):
    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        return (), (product if product else None)  # type: ignore[return-value]  # None: nothing cached, the fault


def _tool_names(tools: tuple[JsonValue, ...] | None) -> list[str]:
    return sorted(str(t.get("name")) for t in tools or () if isinstance(t, FrozenMap))


class ToolsByName(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        folded = fold_request_header(log.events)
        if logged and folded is not None and replace(folded, tools=header.tools) == header and _tool_names(folded.tools) == _tool_names(header.tools):
            return log, None
        return super().record(log, logged, header)


class KeyOrderBlind(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        folded = fold_request_header(log.events)
        if logged and folded is not None and header_to_json(folded) == header_to_json(header):  # a FrozenMap's == ignores order
            return log, None
        return super().record(log, logged, header)


class RecordSlip(Semantics):
    """The record rule compares the two headers after ``seen`` (which forgets what the slip does not compare)."""

    def __init__(self, seen: Callable[[EpochHeader], EpochHeader]) -> None:
        self.seen = seen

    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        folded = fold_request_header(log.events)
        if logged and folded is not None and header_equals(self.seen(folded), self.seen(header)):
            return log, None
        return super().record(log, logged, header)


def _config_without(field: str) -> Callable[[EpochHeader], EpochHeader]:
    forgotten: dict[str, Any] = {field: None}
    return lambda header: replace(header, config=replace(header.config, **forgotten))


def _stop_as_set(header: EpochHeader) -> EpochHeader:
    stop = header.config.stop
    return replace(header, config=replace(header.config, stop=None if stop is None else tuple(sorted(stop))))


def _system_trimmed(header: EpochHeader) -> EpochHeader:
    return replace(header, system=(header.system or "").strip() or None)


def _tool_descriptions_forgotten(header: EpochHeader) -> EpochHeader:
    kept = tuple(FrozenMap({k: v for k, v in t.items() if k != "description"}) if isinstance(t, FrozenMap) else t for t in header.tools or ())
    return replace(header, tools=kept or None)


class HeaderSlip(Semantics):
    """The header a request is built from passes through ``built`` first."""

    def __init__(self, built: Callable[[LlmCallConfig, tuple[JsonValue, ...]], tuple[LlmCallConfig, tuple[JsonValue, ...]]]) -> None:
        self.built = built

    def header(self, config: LlmCallConfig, system: str, tools: tuple[JsonValue, ...], prefix: tuple[JsonValue, ...]) -> EpochHeader:
        config, tools = self.built(config, tools)
        return super().header(config, system, tools, prefix)


def _falsy_dropped(config: LlmCallConfig, tools: tuple[JsonValue, ...]) -> tuple[LlmCallConfig, tuple[JsonValue, ...]]:
    return replace(config, temperature=config.temperature or None, max_tokens=config.max_tokens or None), tools


def _stop_deduplicated(config: LlmCallConfig, tools: tuple[JsonValue, ...]) -> tuple[LlmCallConfig, tuple[JsonValue, ...]]:
    return replace(config, stop=None if config.stop is None else tuple(dict.fromkeys(config.stop))), tools


def _empty_stop_dropped(config: LlmCallConfig, tools: tuple[JsonValue, ...]) -> tuple[LlmCallConfig, tuple[JsonValue, ...]]:
    return replace(config, stop=config.stop or None), tools


def _medium_effort_dropped(config: LlmCallConfig, tools: tuple[JsonValue, ...]) -> tuple[LlmCallConfig, tuple[JsonValue, ...]]:
    return (replace(config, reasoning_effort=None) if config.reasoning_effort == "medium" else config), tools


def _locale_sorted(config: LlmCallConfig, tools: tuple[JsonValue, ...]) -> tuple[LlmCallConfig, tuple[JsonValue, ...]]:
    return config, tuple(sorted(tools, key=lambda t: str(t.get("name", "")).lower() if isinstance(t, FrozenMap) else ""))


class MergedFold(Semantics):
    """The record rule's baseline merges each snapshot's absent members from the ones before it (HDR-7: wholesale)."""

    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        if not logged:
            return super().record(log, logged, header)
        merged: EpochHeader | None = None
        for event in log.events:
            if event.type == REQUEST_HEADER:
                latest = header_of(event)
                merged = latest if merged is None else replace(
                    latest,
                    system=latest.system if latest.system is not None else merged.system,
                    tools=latest.tools if latest.tools is not None else merged.tools,
                    message_prefix=latest.message_prefix if latest.message_prefix is not None else merged.message_prefix,
                )
        if merged is not None and header_equals(merged, header):
            return log, None
        return append_event(log, header_event(log, canonical_header(header), CHANGE)), CHANGE


class Normalized(Semantics):
    """The composed messages pass through ``normalized`` as a whole before they are cached."""

    def __init__(self, normalized: Callable[[tuple[JsonValue, ...]], tuple[JsonValue, ...]]) -> None:
        self.normalized = normalized

    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        return (), self.normalized(product)


def _each(rebuilt: Callable[[FrozenMap], FrozenMap]) -> Callable[[tuple[JsonValue, ...]], tuple[JsonValue, ...]]:
    """A normalization that passes each composed message through ``rebuilt``."""
    return lambda product: tuple(rebuilt(m) if isinstance(m, FrozenMap) else m for m in product)


def _is_system(message: JsonValue) -> bool:
    return isinstance(message, FrozenMap) and message.get("role") == "system"


def _system_first(product: tuple[JsonValue, ...]) -> tuple[JsonValue, ...]:
    return tuple(m for m in product if _is_system(m)) + tuple(m for m in product if not _is_system(m))


def _empty_dropped(product: tuple[JsonValue, ...]) -> tuple[JsonValue, ...]:
    return tuple(m for m in product if not (isinstance(m, FrozenMap) and m.get("content") == ()))


def _role_and_content(message: FrozenMap) -> FrozenMap:
    return FrozenMap({k: message[k] for k in ("role", "content") if k in message})


def _text_blocks_only(message: FrozenMap) -> FrozenMap:
    content = message.get("content")
    texts = tuple(b for b in content if isinstance(b, FrozenMap) and b.get("type") == "text") if isinstance(content, tuple) else content
    return FrozenMap({k: (texts if k == "content" else v) for k, v in message.items()})


class EmptyAnswerKept(Semantics):
    """An ``assistant/message`` with no block derived as an assistant message of empty content, where the harness derives
    it to nothing (DER-3): the history each request sends is the surface before the step's ``step/start``, every node
    derived by the spec's own projection but an empty answer, which is kept."""

    def history(self, boundary: tuple[FrozenMap, ...], log: Log) -> tuple[FrozenMap, ...]:
        start = max(event.seq for event in log.events if event.type == STEP_START)
        kept: list[FrozenMap] = []
        for event in (log.events[seq] for seq in log.surface.nodes if seq < start):
            message = derive_event_message(event)
            if message is None and event.type == ASSISTANT_MESSAGE:
                message = FrozenMap({"role": "assistant", "content": (), "provenance": event.field("provenance")})
            if message is not None:
                kept.append(message)
        return tuple(kept)


class AnchorSkippedWhenUnchanged(Semantics):
    """A new instance logs no anchor when its header equals the one its log folds to (a plain restart)."""

    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        if not logged and fold_request_header(log.events) == header:
            return log, None
        return super().record(log, logged, header)


class SeenBefore(Semantics):
    """The record rule logs no change for a header equal to any snapshot the log holds, not only the latest (a set of
    the headers seen, where the harness compares with the fold alone); with ``field``, for a header that differs from
    the fold in that field alone, to a value a snapshot holds (a set of the tool lists logged, say)."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field

    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        snapshots = [header_of(e) for e in log.events if e.type == REQUEST_HEADER]
        folded = fold_request_header(log.events)
        if self.field is not None and folded is not None:
            snapshots = [replace(folded, **{self.field: getattr(snapshot, self.field)}) for snapshot in snapshots]
        if logged and any(header_equals(snapshot, header) for snapshot in snapshots):
            return log, None
        return super().record(log, logged, header)


class BeforeApply(Server):
    """A fault that changes what an ``apply`` acts on: ``before`` returns the world and the action to apply instead."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        return world, action

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        action = params.get("action") if method == "apply" else None
        if isinstance(action, dict):
            self.adapter.world, action = self.before(self.adapter.world, action)
            params = params | {"action": action}
        return super().handle(method, params)


class WholeConfigInherited(BeforeApply):
    """An instance's first request, on the route its log folds to, starts from the whole logged config (temperature,
    max tokens and stop too), where the harness takes the logged reasoning effort alone (L/loop.ts:664-681)."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        i = action.get("instance")
        if action.get("action") == "Dispatch" and action.get("config") is None and isinstance(i, int) and 0 <= i < len(world.instances):
            folded, route = fold_request_header(world.log_of(i).events), world.instance(i).options.config()
            if not world.instance(i).logged_header and folded is not None and (folded.config.provider, folded.config.model) == (route.provider, route.model):
                seeded = thaw(action_to_json(Dispatch(i, folded.config)))
                assert isinstance(seeded, dict)
                return world, seeded
        return world, action


class Patched(Server):
    """The model with one public name of ``module`` (a function, a method of a class, a constant) replaced by
    ``faulty(original)`` while each request is handled (restored after it, so an in-process caller keeps the model's)."""

    def __init__(self, module: ModuleType | type, function: str, faulty: Callable[[Any], Any], name: str) -> None:
        super().__init__(name=name)
        self.module, self.function, self.faulty = module, function, faulty

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        original = getattr(self.module, self.function)
        setattr(self.module, self.function, self.faulty(original))
        try:
            return super().handle(method, params)
        finally:
            setattr(self.module, self.function, original)


def _unreasoned(priced: Callable[[JsonValue], int]) -> Callable[[JsonValue], int]:
    """The meter's content price with every reasoning block left out (the harness prices it as text, TM:352-372)."""
    return lambda blocks: priced(tuple(b for b in blocks if not (isinstance(b, FrozenMap) and b.get("type") == "reasoning")) if isinstance(blocks, tuple) else blocks)


def _first_usage(assembled: Callable[[tuple[JsonValue, ...]], Assembly]) -> Callable[[tuple[JsonValue, ...]], Assembly]:
    """The loop's assembler with a stream's first usage chunk kept, not its last (LLM/assembler.ts keeps the last)."""

    def first(chunks: tuple[JsonValue, ...]) -> Assembly:
        usages = [c.get("usage") for c in chunks if isinstance(c, FrozenMap) and c.get("type") == "usage"]
        return replace(assembled(chunks), usage=usages[0]) if usages else assembled(chunks)

    return first


def _cancel_lost(composed: Callable[..., Composition]) -> Callable[..., Composition]:
    """The waterfall's result with a listener's cancel lost where a later listener threw: the turn ends in error, where
    the harness's cancel (``agent.cancel()``, called before the throw) ends it aborted (PFX-9)."""

    def run(listeners: tuple[Listener, ...], agent: str, disposed: bool = False) -> Composition:
        result = composed(listeners, agent, disposed)
        return replace(result, cancelled=False) if result.product is None else result

    return run


def _every_listener_called(composed: Callable[..., Composition]) -> Callable[..., Composition]:
    """The waterfall calls every listener and keeps a short-circuit's messages as the product: the listeners after it
    run (their injects land, their calls count), where the harness never calls them (PFX-8)."""

    def run(listeners: tuple[Listener, ...], agent: str, disposed: bool = False) -> Composition:
        result, chain = composed(listeners, agent, disposed), active_listeners(listeners, agent)
        if result.product is None or len(result.called) == len(chain):
            return result  # it threw, or no listener cut the chain short
        rest = composed(chain[len(result.called) :], agent, disposed)
        return replace(result, injects=result.injects + rest.injects, called=result.called + rest.called, cancelled=result.cancelled or rest.cancelled)

    return run


def _empty_answer_priced(derived: Callable[[Event], JsonValue]) -> Callable[[Event], JsonValue]:
    """The meter's projection of an answer with no block as an assistant message of empty content, priced at its role
    framing, where the harness prices a node that projects to no message at 0 (TM:305-308)."""

    def project(event: Event) -> JsonValue:
        message = derived(event)
        return FrozenMap({"role": "assistant", "content": ()}) if message is None and event.type == ASSISTANT_MESSAGE else message

    return project


def _name_one_token(priced: Callable[[JsonValue], int]) -> Callable[[JsonValue], int]:
    """The meter's content price with a tool call's name priced as one token whatever its length (an identifier taken
    for one token), where the harness prices it as text, a token per four UTF-16 units begun (TM:352-372)."""

    def one(block: JsonValue) -> JsonValue:
        if isinstance(block, FrozenMap) and block.get("type") == "tool-call" and block.get("name"):
            return FrozenMap({k: ("x" if k == "name" else v) for k, v in block.items()})  # a name of one unit
        return block

    return lambda blocks: priced(tuple(one(b) for b in blocks) if isinstance(blocks, tuple) else blocks)


def _first_header_priced(measured: Callable[..., Measurement]) -> Callable[..., Measurement]:
    """The loop's meter pricing the session's first routed header where the harness's fold keeps the latest (TM:116-147):
    a system prompt, tools or prefix changed since the first request are priced as they first were."""

    def first(log: Log) -> Measurement:
        header = next((header_of(e) for e in log.events if e.type == REQUEST_HEADER), None)
        return measured(log) if header is None else measured(log, header)

    return first


def _prefix_priced_as_json(priced: Callable[[EpochHeader | None], int]) -> Callable[[EpochHeader | None], int]:
    """The meter's header price with the prefix priced as one JSON block, as the tools are, where the harness prices each
    prefix message as a message, its blocks and role framing (TM:378-389)."""

    def as_json(header: EpochHeader | None) -> int:
        if header is None or not header.message_prefix:
            return priced(header)
        return priced(replace(header, message_prefix=None)) + priced(EpochHeader(header.config, None, header.message_prefix))

    return as_json


def _rounded(product: float) -> int:
    """JavaScript's ``Math.round``: half up."""
    return math.floor(product + 0.5)


def _budget(taken: Callable[[float], int], retained: bool = False) -> Callable[[Callable[[CompactPolicy], tuple[int, int] | None]], Callable[[CompactPolicy], tuple[int, int] | None]]:
    """The service's budgets with the threshold (or, ``retained``, the kept tail's ratio share) taken of the window times
    its ratio by ``taken``, where the harness floors both (CB/config.ts:144-146): a pressure or a tail priced at the floor
    of a fractional product then falls on the other side of it."""

    def faulty(budgets: Callable[[CompactPolicy], tuple[int, int] | None]) -> Callable[[CompactPolicy], tuple[int, int] | None]:
        def budgeted(policy: CompactPolicy) -> tuple[int, int] | None:
            floored = budgets(policy)
            if floored is None or policy.context_window is None:
                return floored
            threshold, retain = floored
            if not retained:
                threshold = taken(policy.context_window * policy.threshold_ratio)
            elif policy.retain_tokens is None:
                retain = taken(policy.context_window * policy.retain_ratio)
            return (threshold, retain) if retain < threshold else None

        return budgeted

    return faulty


def _tail_unbalanced(selected: Callable[[Log, int], tuple[int, int] | None]) -> Callable[[Log, int], tuple[int, int] | None]:
    """The compacted range ends where the kept tail's price reaches ``retainTokens``, not moved back to a cut no tool call
    crosses (CB/region.ts:34-70): compactRegion refuses a range that splits a call from its result, so the service never
    compacts where that tail starts inside a tool's span."""

    def unbalanced(log: Log, retain_tokens: int) -> tuple[int, int] | None:
        keep = tail_start(log, retain_tokens)
        return None if keep == 0 else (0, keep - 1)

    return unbalanced


def _past_retain(start: Callable[[Log, int], int]) -> Callable[[Log, int], int]:
    """The kept tail priced until it is past ``retainTokens``, not until it reaches them (CB/region.ts:34-70)."""
    return lambda log, retain_tokens: start(log, retain_tokens + 1)


def _equal_taken(refusal: Callable[[CompactPolicy, str, int], str | None]) -> Callable[[CompactPolicy, str, int], str | None]:
    """A summary priced, framed, exactly at the shadowed content taken, where the harness refuses it (CB/region.ts:134-143):
    refused at the shadowed tokens but not at one more, its price is those tokens."""

    def taken_at_equality(policy: CompactPolicy, reply: str, tokens: int) -> str | None:
        refused = refusal(policy, reply, tokens)
        return None if refused is not None and refusal(policy, reply, tokens + 1) is None else refused

    return taken_at_equality


class EffortOnTheModelAlone(BeforeApply):
    """An instance's first request takes the logged reasoning effort where its route's model alone is the log's, where
    the harness compares provider and model both (L/loop.ts:664-681)."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        i = action.get("instance")
        if action.get("action") == "Dispatch" and action.get("config") is None and isinstance(i, int) and 0 <= i < len(world.instances):
            folded, route = fold_request_header(world.log_of(i).events), world.instance(i).options.config()
            if not world.instance(i).logged_header and folded is not None and route.provider and folded.config.model == route.model:
                seeded = thaw(action_to_json(Dispatch(i, replace(route, reasoning_effort=folded.config.reasoning_effort))))
                assert isinstance(seeded, dict)
                return world, seeded
        return world, action


class LatestEffortKept(BeforeApply):
    """An instance's first request on the logged route takes the latest reasoning effort any snapshot held, where the
    harness takes the folded header's, the latest snapshot's, none included (L/loop.ts:664-681)."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        i = action.get("instance")
        if action.get("action") == "Dispatch" and action.get("config") is None and isinstance(i, int) and 0 <= i < len(world.instances):
            events, route = world.log_of(i).events, world.instance(i).options.config()
            folded = fold_request_header(events)
            if world.instance(i).logged_header or folded is None or (folded.config.provider, folded.config.model) != (route.provider, route.model):
                return world, action
            efforts = [header_of(e).config.reasoning_effort for e in events if e.type == REQUEST_HEADER]
            kept = next((effort for effort in reversed(efforts) if effort is not None), None)
            seeded = thaw(action_to_json(Dispatch(i, replace(route, reasoning_effort=kept))))
            assert isinstance(seeded, dict)
            return world, seeded
        return world, action


class ProviderDefaulted(BeforeApply):
    """An agent created, resumed or forked with a model but no provider routed by the default provider, where the
    harness leaves the route empty: its requests throw, and a compaction before one is routed has no summarizer
    (L/loop.ts:688-690; CB/summarizer.ts:111-121)."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        options = action.get("options")
        if action.get("action") in ("Create", "Resume", "ForkDrive") and isinstance(options, dict) and options.get("model") and not options.get("provider"):
            return world, action | {"options": options | {"provider": AgentOptions().provider}}
        return world, action


class PressureWhenCancelled(BeforeApply):
    """The compaction service's post-step listener compacts under pressure on a step cancelled or disposed: it does
    not return on the aborted signal, as the harness's does (CB/index.ts:136-141). What it lands is what the model
    lands on that step uncancelled, up to its ``step/end``; the step then ends as the cancel has it."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        i = action.get("instance")
        if action.get("action") != "PostStep" or not isinstance(i, int) or not 0 <= i < len(world.instances):
            return world, action
        post, instance = action_from_json(freeze(action)), world.instance(i)
        if instance.cancel is None or not isinstance(post, PostStep) or not enabled(world, post):
            return world, action
        uncancelled = apply(world.with_instance(replace(instance, cancel=None)), PostStep(i, None, post.summaries))
        sid, shown = instance.session_id, len(world.session(instance.session_id).log.events)
        events = uncancelled.session(sid).log.events
        landed = seed_log(events[: next(n for n in range(shown, len(events)) if events[n].type == STEP_END)])
        assert isinstance(landed, Log)  # a prefix of the model's own log
        return replace(world.with_session(replace(world.session(sid), log=landed)), requests=uncancelled.requests), action


class ReusesLogged(Server):
    """After ``action``, the new instance holds its log's last logged prefix as if it had composed it."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action = action

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        action = params.get("action") if method == "apply" else None
        if isinstance(action, dict) and action.get("action") == self.action:
            world = self.adapter.world
            instance = world.instances[-1]
            folded = fold_request_header(world.log_of(instance.id).events)
            if folded is not None and folded.message_prefix is not None:
                self.adapter.world = world.with_instance(replace(instance, prefix=folded.message_prefix))
        return result


class OwnLayout(Server):
    """The model's requests, its events laid out its own way: each reply's events of a session in reverse order."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        if method == "apply":
            result = result | {"appended": {session: events[::-1] for session, events in result["appended"].items()}}
        return result
class LastMessageDropped(Server):
    """Every request sent without its last message."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        if method == "apply":
            sent = [r | {"request": r["request"] | {"messages": r["request"]["messages"][:-1]}} for r in result["sent"]]
            result = result | {"sent": sent}
        return result


class LaterStepOrForkNotSent(Server):
    """Two faults behind one signature: no request is sent from a step after a turn's first, nor from a fork's child."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        action = params.get("action") if method == "apply" else None
        if isinstance(action, dict) and action.get("action") == "Dispatch" and result["sent"]:
            world = self.adapter.world
            instance = world.instance(action["instance"])
            if instance.step > 1 or world.session(instance.session_id).lineage is not None:
                result = result | {"sent": []}
        return result


class DisposedTakesInputs(Server):
    """An input to a disposed instance answered as applied, appending nothing, where the model refuses it (LOOP-6)."""

    INPUTS = frozenset({"Inject", "Steer", "Cancel", "Dispose", "SetSystem", "SetTools"})

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().handle(method, params)
        except Failed as failed:
            action = params.get("action") if method == "apply" else None
            instances = self.adapter.world.instances
            if failed.error["code"] != "refused" or not isinstance(action, dict) or action.get("action") not in self.INPUTS:
                raise
            target = action.get("instance")
            if not isinstance(target, int) or not 0 <= target < len(instances) or not instances[target].disposed:
                raise
            return {"appended": {}, "sent": []}


class StaleMarked(Semantics):
    """Each instance marked ``stale`` drops its cached prefix at its next step and composes again."""

    def __init__(self) -> None:
        self.stale: set[int] = set()

    def recompose(self, instance: Instance) -> bool:
        stale = instance.id in self.stale
        self.stale.discard(instance.id)
        return stale


class RecomposesAfter(Server):
    """After each ``action`` applied, every instance composes again at its next step: a cache dropped by what the action
    changed (a listener registered, a compaction service mounted), where the harness keeps each instance's prefix."""

    def __init__(self, action: str, name: str) -> None:
        self.marked = StaleMarked()
        super().__init__(self.marked, name)
        self.action = action

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "reset":
            self.marked.stale.clear()
        result = super().handle(method, params)
        action = params.get("action") if method == "apply" else None
        if isinstance(action, dict) and action.get("action") == self.action:
            self.marked.stale.update(instance.id for instance in self.adapter.world.instances)
        return result


class Stacked(Server):
    """Each input that comes to wait in ``waiting`` (an instance's steering, the injects its tool batch defers, or the
    prompts queued behind its turn) goes in front of those already waiting, where the harness queues it behind them:
    what waits is taken newest first."""

    def __init__(self, waiting: str, name: str) -> None:
        super().__init__(name=name)
        self.waiting = waiting

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        before = {instance.id: len(getattr(instance, self.waiting)) for instance in self.adapter.world.instances}
        result = super().handle(method, params)
        world = self.adapter.world
        for instance in world.instances:
            waiting = getattr(instance, self.waiting)
            if instance.id in before and len(waiting) == before[instance.id] + 1:
                world = world.with_instance(replace(instance, **{self.waiting: waiting[-1:] + waiting[:-1]}))
        self.adapter.world = world
        return result


class SteeringFirst(Server):
    """A tool batch's end drains the steering before the injects it deferred, where the harness lands the injects first
    (its batch's ``finally``): the deferred injects are taken out before ``RunTools`` and injected after it."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        action = params.get("action") if method == "apply" else None
        if not (isinstance(action, dict) and action.get("action") == "RunTools" and isinstance(action.get("instance"), int)):
            return super().handle(method, params)
        world = self.adapter.world
        if not 0 <= action["instance"] < len(world.instances):
            return super().handle(method, params)
        instance = world.instance(action["instance"])
        deferred = instance.deferred if instance.steering else ()
        self.adapter.world = world.with_instance(replace(instance, deferred=instance.deferred[len(deferred) :]))
        result = super().handle(method, params)
        for data in map(thaw, deferred):
            assert isinstance(data, dict)
            inject = {"action": "Inject", "instance": instance.id, "text": data["content"][0]["text"], "source": data["source"], "meta": data.get("meta")}
            for session, events in super().handle("apply", {"action": inject})["appended"].items():
                result["appended"][session] = result["appended"].get(session, []) + events
        return result


class SteeringBeforeQueued(BeforeApply):
    """At a turn's end, the steering it never drained goes before the prompts queued behind it, where the harness queues
    it after them (L/loop.ts:202-283): where the action ends a turn that holds both, it is applied to the instance with
    its steering moved to the front of its queue."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        try:
            decoded = action_from_json(freeze(action))
        except CodecError:
            return world, action
        if not enabled(world, decoded):
            return world, action
        after = apply(world, decoded)
        for instance in world.instances:
            ended = after.instance(instance.id).turn != instance.turn or not after.instance(instance.id).turn_open
            if instance.turn_open and instance.steering and instance.queued and ended:
                steered = tuple(SendPrompt(instance.id, text) for text in instance.steering)
                world = world.with_instance(replace(instance, steering=(), queued=steered + instance.queued))
        return world, action


class ContextsReversed(BeforeApply):
    """A prompt's separate contexts injected newest first, where the harness injects them in the order the prompt-submit
    listener gave them (L/loop.ts:388-395): each ``SendPrompt`` is applied with its contexts reversed."""

    def before(self, world: World, action: dict[str, Any]) -> tuple[World, dict[str, Any]]:
        if action.get("action") == "SendPrompt" and isinstance(action.get("contexts"), list):
            return world, action | {"contexts": action["contexts"][::-1]}
        return world, action


def _last_answer(log: Log) -> Event | None:
    return next((event for event in reversed(log.events) if event.type == ASSISTANT_MESSAGE), None)


class UsageBelowEstimateAnchors(Semantics):
    """A provider's usage anchors the meter even where its sum is below the estimate of its request, where the harness
    keeps the estimate then (TOK-3): a usage that undercounts lowers the pressure."""

    def pressure(self, log: Log, measured: Measurement, prefix_price: int) -> int:
        answer = _last_answer(log)
        usage = None if answer is None else answer.field("usage")
        if measured.baseline != "estimated" or measured.header is None or not isinstance(usage, FrozenMap):
            return measured.total
        counted = sum(v for k, v in usage.items() if k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens") and type(v) is int)
        return max(0, counted + measured.surface_delta)


class UsageAnchoredAtTheAnswer(Semantics):
    """A usage anchor's surface taken when the answer lands, where the harness takes the surface at the step's start
    plus the answer (TOK-3): what landed while the request was out (an inject) is then counted as if the usage held it."""

    def pressure(self, log: Log, measured: Measurement, prefix_price: int) -> int:
        answer = _last_answer(log)
        if measured.baseline != "usage" or answer is None:
            return measured.total
        return max(0, measured.baseline_tokens + surface_tokens(log) - surface_tokens(boundary_log(log, answer.seq + 1)))


def _cut_short(log: Log, message_at: int) -> bool:
    """Whether the step of the ``assistant/message`` at ``message_at`` finished at max tokens (its last finish chunk)."""
    start = max(event.seq for event in log.events[:message_at] if event.type == STEP_START)
    chunks = [event.field("chunk") for event in log.events[start:message_at] if event.type == ASSISTANT_CHUNK]
    finishes = [chunk for chunk in chunks if isinstance(chunk, FrozenMap) and chunk.get("type") == "finish"]
    reason = finishes[-1].get("reason") if finishes else None
    return isinstance(reason, FrozenMap) and reason.get("kind") == "max-tokens"


class ReplayDroppedAtMaxTokens(Server):
    """An answer cut short at max tokens loses its finish's replay state, where the harness drops it only where a cut
    tool call rewrote the content (STRM-4): the ``assistant/message`` is logged, kept and derived without it."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        world = self.adapter.world
        for session_id, events in result.get("appended", {}).items():
            for shown in events:
                provenance = shown.get("data", {}).get("provenance") if shown.get("type") == ASSISTANT_MESSAGE else None
                session = world.session(session_id)
                if not (isinstance(provenance, dict) and "replayState" in provenance and _cut_short(session.log, shown["seq"])):
                    continue
                del provenance["replayState"]
                log = EMPTY_LOG
                for event in session.log.events:
                    if event.seq == shown["seq"]:
                        data = thaw(event.data)
                        assert isinstance(data, dict)
                        event = replace(event, data=freeze({**data, "provenance": provenance}))
                    log = append_event(log, event)
                world = world.with_session(replace(session, log=log))
        self.adapter.world = world
        return result


SEMANTICS: dict[str, Semantics] = {
    "recompose-from-turn-4": RecomposeFromTurn4(),
    "recompose-from-turn-6": RecomposeFromTurn6(),
    "short-circuit-ignored": ShortCircuitIgnored(),
    "duplicates-dropped": DuplicatesDropped(),
    "scoped-first": ScopedFirst(),
    "empty-not-cached": EmptyNotCached(),
    "tools-by-name": ToolsByName(),
    "key-order-blind": KeyOrderBlind(),
    "model-ignored": RecordSlip(_config_without("model")),
    "provider-ignored": RecordSlip(_config_without("provider")),
    "max-tokens-ignored": RecordSlip(_config_without("max_tokens")),
    "temperature-ignored": RecordSlip(_config_without("temperature")),
    "stop-ignored": RecordSlip(_config_without("stop")),
    "stop-as-set": RecordSlip(_stop_as_set),
    "system-trimmed": RecordSlip(_system_trimmed),
    "tool-description-ignored": RecordSlip(_tool_descriptions_forgotten),
    "falsy-dropped": HeaderSlip(_falsy_dropped),
    "empty-stop-dropped": HeaderSlip(_empty_stop_dropped),
    "stop-deduplicated": HeaderSlip(_stop_deduplicated),
    "medium-effort-dropped": HeaderSlip(_medium_effort_dropped),
    "locale-sorted": HeaderSlip(_locale_sorted),
    "merged-fold": MergedFold(),
    "seen-before": SeenBefore(),
    "tools-seen-before": SeenBefore("tools"),
    "config-seen-before": SeenBefore("config"),
    "prefix-rebuilt": Normalized(_each(_role_and_content)),
    "text-blocks-only": Normalized(_each(_text_blocks_only)),
    "system-first": Normalized(_system_first),
    "empty-dropped": Normalized(_empty_dropped),
    "anchor-skipped-when-unchanged": AnchorSkippedWhenUnchanged(),
    "empty-answer-kept": EmptyAnswerKept(),
    "usage-below-estimate-anchors": UsageBelowEstimateAnchors(),
    "usage-anchored-at-the-answer": UsageAnchoredAtTheAnswer(),
}
SERVERS = {"fork-reuses-logged": "ForkDrive", "resume-reuses-logged": "Resume"}
RECOMPOSES_AFTER = {
    "register-recomposes": "Register", "mount-recomposes": "MountCompaction", "create-recomposes": "Create", "dispose-recomposes": "Dispose",
    "resume-recomposes": "Resume", "fork-recomposes": "ForkDrive",
}
PATCHED: dict[str, tuple[ModuleType | type, str, Callable[[Any], Any]]] = {
    "reasoning-unpriced": (meter, "estimate_content", _unreasoned),
    "retain-strict": (compaction, "tail_start", _past_retain),
    "tail-unbalanced": (compaction, "select_range", _tail_unbalanced),
    "equal-summary-taken": (compaction, "summary_refusal", _equal_taken),
    "first-usage-kept": (transitions, "assemble", _first_usage),  # the loop's own reference to the assembler
    "cancel-lost-on-throw": (transitions, "compose", _cancel_lost),
    "every-listener-called": (transitions, "compose", _every_listener_called),
    "empty-answer-priced": (meter, "derive_event_message", _empty_answer_priced),  # the meter's own reference
    "tool-name-one-token": (meter, "estimate_content", _name_one_token),
    "first-header-priced": (transitions, "measure", _first_header_priced),  # the loop's own reference to the meter
    "prefix-priced-as-json": (meter, "estimate_header", _prefix_priced_as_json),
    "threshold-unfloored": (CompactPolicy, "budgets", _budget(math.ceil)),  # an integer pressure against the product
    "threshold-rounded": (CompactPolicy, "budgets", _budget(_rounded)),
    "retain-unfloored": (CompactPolicy, "budgets", _budget(math.ceil, retained=True)),
    "retain-rounded": (CompactPolicy, "budgets", _budget(_rounded, retained=True)),
    "blank-by-python-strip": (compaction, "JS_WHITESPACE", lambda js: None),  # str.strip(None): Python's white space
    "blank-untrimmed": (compaction, "JS_WHITESPACE", lambda js: ""),  # str.strip(""): nothing stripped
}
STACKED = {"steering-stacked": "steering", "deferred-stacked": "deferred", "queued-stacked": "queued"}
# The faults that are a server of their own, by name (the first two are not in the catalogue: see the docstring).
OWN_SERVERS: dict[str, Callable[..., Server]] = {
    "last-message-dropped": LastMessageDropped, "later-step-or-fork-not-sent": LaterStepOrForkNotSent,
    "steering-first": SteeringFirst, "replay-state-dropped-at-max-tokens": ReplayDroppedAtMaxTokens,
    "whole-config-inherited": WholeConfigInherited, "steering-before-queued": SteeringBeforeQueued,
    "contexts-reversed": ContextsReversed, "pressure-when-cancelled": PressureWhenCancelled,
    "provider-defaulted": ProviderDefaulted, "effort-on-the-model-alone": EffortOnTheModelAlone, "latest-effort-kept": LatestEffortKept,
}
PLANTED = (
    *SEMANTICS, *SERVERS, *RECOMPOSES_AFTER, *STACKED, "steering-first", "replay-state-dropped-at-max-tokens", "disposed-takes-inputs",
    *PATCHED, "whole-config-inherited", "steering-before-queued", "contexts-reversed", "pressure-when-cancelled", "provider-defaulted",
    "effort-on-the-model-alone", "latest-effort-kept",
)
# Each fault a campaign found where every vector passed, with the found cases since adopted that it fails (the others
# fail some hand-written vector).
_KEY_ORDER = "fuzz/parameters-in-another-key-order-are-a-tool-change"
_PROVENANCE = "fuzz/a-contributed-assistant-message-keeps-its-provenance"
_PLUGIN_BLOCK = "fuzz/a-block-of-a-plugin-type-is-priced-by-its-json-text"  # its prefix messages hold blocks and provenance
_RETAIN = "fuzz/the-kept-tail-stops-at-the-node-that-reaches-retain-tokens"  # its surface holds two steers
_RETAIN_FLOOR = "fuzz/the-retained-tail-is-the-floor-of-window-times-ratio"
_EQUAL_SUMMARY = "fuzz/a-summary-priced-at-the-shadowed-content-is-refused"  # its prefix holds reasoning and a plugin's block
_TOOLS_BACK = "fuzz/a-tool-list-back-to-one-logged-before-is-a-change"
_CONFIG_BACK = "fuzz/a-request-config-back-to-one-logged-before-is-a-change"
_BLANK = "compaction/a-blank-summary-is-blank-as-javascript-trims"  # found by reading the harness; campaigns find both since
_IN_PLACE = "fuzz/a-composition-is-sent-as-contributed-an-empty-message-and-a-later-system-one-in-place"
FOUND_BY_A_CAMPAIGN: dict[str, tuple[str, ...]] = {
    "tools-by-name": (_KEY_ORDER, "fuzz/a-tool-description-change-alone-is-a-change"),
    "key-order-blind": (_KEY_ORDER,),
    "model-ignored": ("fuzz/a-model-change-alone-is-a-change",),
    "provider-ignored": ("fuzz/a-provider-change-alone-is-a-change",),
    "duplicates-dropped": (),
    "disposed-takes-inputs": (),
    "max-tokens-ignored": ("fuzz/a-max-tokens-change-alone-is-a-change",),
    "temperature-ignored": ("fuzz/a-temperature-change-alone-is-a-change",),
    "stop-ignored": (
        "fuzz/a-stop-change-alone-is-a-change", "fuzz/stop-sequences-in-another-order-are-a-change", "fuzz/a-stop-sequence-repeated-is-a-change",
    ),
    "stop-as-set": ("fuzz/stop-sequences-in-another-order-are-a-change",),
    "system-trimmed": ("fuzz/a-system-prompt-change-of-a-line-break-is-a-change",),
    "tool-description-ignored": ("fuzz/a-tool-description-change-alone-is-a-change",),
    "falsy-dropped": (  # the other cases' shrunk configs hold a 0 too
        "fuzz/a-temperature-of-zero-is-recorded-and-sent", "fuzz/an-empty-stop-list-is-recorded-and-sent", "fuzz/a-model-change-alone-is-a-change",
        "fuzz/a-max-tokens-change-alone-is-a-change", "fuzz/a-stop-change-alone-is-a-change", "fuzz/a-temperature-change-alone-is-a-change",
        "fuzz/tools-are-sorted-by-code-unit", "fuzz/a-medium-reasoning-effort-is-recorded-and-sent",
    ),
    "empty-stop-dropped": ("fuzz/an-empty-stop-list-is-recorded-and-sent", "fuzz/a-stop-change-alone-is-a-change"),
    "medium-effort-dropped": ("fuzz/a-medium-reasoning-effort-is-recorded-and-sent",),
    "locale-sorted": ("fuzz/tools-are-sorted-by-code-unit",),
    "merged-fold": ("fuzz/the-fold-takes-the-latest-snapshot-wholesale",),
    "prefix-rebuilt": (_PROVENANCE, _PLUGIN_BLOCK),
    "text-blocks-only": (_PROVENANCE, _PLUGIN_BLOCK, "fuzz/a-contributed-message-keeps-every-block", _IN_PLACE, _EQUAL_SUMMARY),
    "system-first": (_IN_PLACE,),
    "empty-dropped": (_IN_PLACE,),
    "register-recomposes": ("fuzz/a-listener-registered-after-a-composition-leaves-the-cached-prefix-as-it-is",),
    "mount-recomposes": ("fuzz/a-compaction-service-mounted-after-a-composition-leaves-the-cached-prefix-as-it-is",),
    "steering-stacked": ("fuzz/steering-is-drained-in-the-order-it-was-sent", _RETAIN),
    "deferred-stacked": ("fuzz/injects-deferred-by-a-tool-batch-land-in-the-order-they-were-made",),
    "queued-stacked": ("fuzz/prompts-queued-behind-a-turn-are-taken-oldest-first",),
    "steering-first": ("fuzz/injects-deferred-by-a-tool-batch-land-before-the-steering-drained-after-it",),
    "empty-answer-kept": ("fuzz/an-empty-answer-stays-on-the-surface-and-sends-no-message",),
    "replay-state-dropped-at-max-tokens": ("fuzz/an-answer-cut-short-at-max-tokens-keeps-its-replay-state",),
    "usage-below-estimate-anchors": ("fuzz/a-usage-below-the-estimate-leaves-the-meter-at-the-estimate",),
    "usage-anchored-at-the-answer": (  # the surface when the answer lands prices the answer as logged, a cut call gone
        "fuzz/a-usage-anchors-the-meter-at-the-surface-of-the-step-s-start", "fuzz/a-usage-anchor-prices-the-tool-call-a-max-tokens-finish-cut",
    ),
    "create-recomposes": ("fuzz/an-instance-created-after-a-composition-leaves-the-cached-prefix-as-it-is",),
    "dispose-recomposes": ("fuzz/an-instance-disposed-after-a-composition-leaves-the-cached-prefix-as-it-is",),
    "resume-recomposes": ("fuzz/an-instance-resumed-after-a-composition-leaves-the-cached-prefix-as-it-is",),
    "fork-recomposes": ("fuzz/a-fork-driven-after-a-composition-leaves-the-cached-prefix-as-it-is",),
    # A tool list or a config back to an earlier snapshot is a header back to it.
    "seen-before": ("fuzz/a-header-back-to-an-earlier-snapshot-is-a-change", _TOOLS_BACK, _CONFIG_BACK),
    "tools-seen-before": (_TOOLS_BACK,),
    "config-seen-before": (_CONFIG_BACK,),
    "whole-config-inherited": ("fuzz/a-resumed-instance-takes-only-the-logged-reasoning-effort",),
    "reasoning-unpriced": ("fuzz/a-reasoning-block-is-priced-as-its-text", _EQUAL_SUMMARY),  # its prefix holds reasoning
    "retain-strict": (_RETAIN, _RETAIN_FLOOR),  # the latter's tail is priced exactly at the floor
    "equal-summary-taken": (_EQUAL_SUMMARY,),
    "first-usage-kept": ("fuzz/a-stream-metered-twice-carries-its-last-usage",),
    "steering-before-queued": ("fuzz/steering-a-turn-never-drained-queues-after-the-prompts-waiting",),
    "cancel-lost-on-throw": ("fuzz/a-composition-that-throws-after-a-listener-cancelled-ends-the-turn-aborted",),
    "every-listener-called": ("fuzz/a-listener-that-does-not-call-next-silences-the-later-ones",),
    "stop-deduplicated": ("fuzz/a-stop-sequence-repeated-is-a-change",),
    "contexts-reversed": ("fuzz/a-prompt-s-separate-contexts-land-in-the-order-given",),
    "empty-answer-priced": ("fuzz/an-empty-answer-is-priced-at-nothing",),
    "tail-unbalanced": ("fuzz/the-kept-tail-starts-at-a-cut-no-tool-call-crosses",),
    "pressure-when-cancelled": ("fuzz/a-cancelled-step-is-not-compacted-under-pressure",),
    "tool-name-one-token": ("fuzz/a-tool-call-s-name-is-priced-by-its-length",),
    "first-header-priced": ("fuzz/post-step-pressure-prices-the-latest-routed-header",),
    "prefix-priced-as-json": ("fuzz/the-prefix-is-priced-message-by-message",),
    "threshold-unfloored": ("fuzz/the-threshold-is-the-floor-of-window-times-ratio",),
    "threshold-rounded": ("fuzz/the-threshold-is-the-floor-of-window-times-ratio",),
    "retain-unfloored": (_RETAIN_FLOOR,),
    "retain-rounded": (_RETAIN_FLOOR,),
    "blank-by-python-strip": (_BLANK,),
    "blank-untrimmed": (_BLANK,),
    "provider-defaulted": ("fuzz/an-agent-with-a-model-but-no-provider-has-no-route",),
    "effort-on-the-model-alone": ("fuzz/a-resumed-instance-on-another-provider-takes-no-logged-reasoning-effort",),
    "latest-effort-kept": ("fuzz/a-resumed-instance-takes-the-reasoning-effort-of-the-latest-snapshot-none-included",),
}
# The ones the campaign test runs in full (found, shrunk, saved, the saved case failing them); the others' campaigns
# are measured by bench/fault_hunt.py.
# With the seed whose first 60 scripts find each (a record rule blind to a tool change shows only where the tools
# change alone, which some seeds' first scripts never do; bench/fault_hunt.py measures one seed for every fault).
CAMPAIGN_TESTED = {"tools-by-name": 0, "key-order-blind": 6, "model-ignored": 2, "duplicates-dropped": 15, "disposed-takes-inputs": 2}


def server(name: str) -> Server:
    """The model's server with fault ``name`` planted."""
    if name.startswith("own-layout"):
        planted = name.removeprefix("own-layout").removeprefix("+")
        return OwnLayout(SEMANTICS[planted], name) if planted else OwnLayout(name=name)
    if name == "disposed-takes-inputs":
        return DisposedTakesInputs()
    if name in RECOMPOSES_AFTER:
        return RecomposesAfter(RECOMPOSES_AFTER[name], name)
    if name in STACKED:
        return Stacked(STACKED[name], name)
    if name in OWN_SERVERS:
        return OWN_SERVERS[name](name=name)
    if name in PATCHED:
        return Patched(*PATCHED[name], name=name)
    return ReusesLogged(SERVERS[name]) if name in SERVERS else Server(SEMANTICS[name], name)


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout, server(sys.argv[1])))
