"""Spec §10 — the loop as a transition system: ``apply(world, action) -> world``.

One action is one segment of the harness's driver between two awaited checkpoints (facts §4.2-
§4.5): ``BeginStep`` (steering drain, assembly), ``Compose`` (the waterfall), ``PreStep``
(pre-step, boundary snapshot, ``step/start``), ``Dispatch`` (agent/request, preparation, header
record, the request), ``Reply`` (chunks, ``assistant/message``), ``RunTools`` and ``PostStep``
(pressure, ``step/end``, continuation). Inputs that arrive while a segment is awaited — inject,
steer, cancel, dispose, assembly changes — are their own actions, enabled in those windows.
``enabled(world, action)`` is each action's guard; ``apply`` requires it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.derive import derive_messages
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    COMPACT_END,
    PROMPT_BLOCKED,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    STEP_END,
    STEP_START,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Replace,
    SurfaceOp,
)
from prefix_model.core.fork import check_fork, fork
from prefix_model.core.headers import (
    CHANGE,
    EpochHeader,
    LlmCallConfig,
    fold_request_header,
    header_to_json,
    is_valid_config,
)
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze_object, is_json_value
from prefix_model.core.log import Log
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
    Register,
    Reply,
    Resume,
    RunTools,
    SendPrompt,
    SetSystem,
    SetTools,
    Steer,
)
from prefix_model.loop.compaction import DEFAULT_SUMMARY, Compaction, compact_if_needed, compact_region
from prefix_model.loop.meter import estimate_message, measure
from prefix_model.loop.prompt import BLOCKED
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.stream import FAILED, assemble, check_stream, failure_of, tool_calls_of
from prefix_model.loop.waterfall import Composition, compose
from prefix_model.loop.world import INJECTED, AgentOptions, InjectThenPrepend, Instance, Listener, Mark, Phase, SentRequest, Session, Throw, World, waterfall_inputs

__all__ = ["enabled", "apply", "run", "next_turn", "PROMPT_PREFIX_DELIMITER"]

PROMPT_PREFIX_DELIMITER = "\n\n## My request:\n"  # L/loop.ts:96-99
_USER = FrozenMap({"kind": "user"})

# --- Small helpers over the world ---


def _text(text: str) -> FrozenMap:
    block: dict[str, JsonValue] = {"type": "text", "text": text}
    return FrozenMap(block)


def _emit(
    world: World, session_id: str, type: str, data: object, op: SurfaceOp | None = None, sources: tuple[int, ...] | None = None
) -> World:
    """Return ``world`` with one event appended to session ``session_id``'s log."""
    session = world.session(session_id)
    return world.with_session(replace(session, log=session.log.append(type, data, surface_op=op, source_event_seqs=sources)))


def _mark(world: World, instance: Instance, kind: str, value: JsonValue = None) -> World:
    at = len(world.session(instance.session_id).log.events)
    return replace(world, trace=world.trace + (Mark(instance.id, kind, at, value, instance.turn),))


def _set(world: World, instance_id: int, **changes: object) -> World:
    return world.with_instance(replace(world.instance(instance_id), **changes))  # type: ignore[arg-type]


@ensure(lambda result: result >= 1, "LOOP-4: turns are numbered from 1", enabled=ENABLED)
@ensure(
    lambda log, result: all(not isinstance(e.field("turn"), int) or e.field("turn") < result for e in log.events if e.type == TURN_START)
    or any(e.type == TURN_START and not isinstance(e.field("turn"), int) for e in log.events),
    "LOOP-4: the next turn is after every turn the log started",
    enabled=ENABLED,
)
def next_turn(log: Log) -> int:
    """Return the next turn number: the last ``turn/start``'s turn plus one (L/loop.ts:251-252)."""
    turns = [e.field("turn") for e in log.events if e.type == TURN_START]
    last = turns[-1] if turns else 0
    return (last if isinstance(last, int) else 0) + 1


def _sourced(text: str, source: FrozenMap, meta: FrozenMap | None) -> FrozenMap:
    """A produced message's data: ``{content, source, meta?}`` (L/agent.ts:300-306)."""
    fields: dict[str, object] = {"content": [_text(text)], "source": source}
    return freeze_object(fields | ({} if meta is None else {"meta": meta}))


def _end_turn(world: World, instance: Instance, reason: dict[str, object]) -> World:
    """Close the instance's open step (if any) and its turn; the driver then takes its inbox (``_next_turn``)."""
    if instance.step_open:
        world = _emit(world, instance.session_id, STEP_END, {"turn": instance.turn, "step": instance.step})
    world = _emit(world, instance.session_id, TURN_END, {"turn": instance.turn, "reason": reason})
    return _next_turn(world, world.instance(instance.id))


def _next_turn(world: World, instance: Instance) -> World:
    """The driver after ``turn/end``: steering the turn never drained joins the queued prompts, and the
    oldest of them opens the next turn at once; a disposed driver exits instead (L/loop.ts:202-283)."""
    if instance.disposed:
        return _set(world, instance.id, phase=Phase.DISPOSED, cancel=None, steering=(), queued=(), deferred=(), pending_calls=())
    queued = instance.queued + tuple(SendPrompt(instance.id, text) for text in instance.steering)
    world = _set(world, instance.id, phase=Phase.IDLE, cancel=None, steering=(), queued=queued[1:], deferred=(), pending_calls=(), continues=False)
    return _send_prompt(world, queued[0]) if queued else world


def _interrupted(world: World, instance: Instance) -> World:
    """End the turn at a checkpoint after a cancel or dispose (facts §4.7)."""
    kind = "disposed" if instance.disposed else "aborted"
    return _end_turn(_mark(world, instance, "interrupted"), instance, {"kind": kind})


def _drain_steering(world: World, instance: Instance) -> World:
    for text in instance.steering:
        # ``{turn, ...prepared.data}``: turn first (L/loop.ts:298-301); key order is JSON equality (JSON-4).
        data = {"turn": instance.turn, "content": [_text(text)], "source": _USER}
        world = _emit(world, instance.session_id, STEERING_MESSAGE, data, APPEND)
    return _set(world, instance.id, steering=())


def _new_instance(world: World, agent: str, session_id: str, options: AgentOptions, system: str, tools: tuple[JsonValue, ...]) -> World:
    instance = Instance(len(world.instances), agent, session_id, options, system, tools)
    return _mark(world.with_instance(instance), instance, "created")


# --- Guards ---


def _instance_ok(world: World, instance_id: int) -> bool:
    return 0 <= instance_id < len(world.instances) and not world.instance(instance_id).disposed


def _in_phase(world: World, instance_id: int, *phases: Phase) -> bool:
    # A disposed instance's driver still runs to its next checkpoint, which ends the turn (LOOP-6).
    return 0 <= instance_id < len(world.instances) and world.instance(instance_id).phase in phases


def _positions_ok(positions: tuple[int, int] | None, count: int) -> bool:
    return positions is None or 0 <= positions[0] <= positions[1] < count


def _pre_step_ok(world: World, action: PreStep) -> bool:
    # The listener's own replacement comes first, so the service sees the surface it left.
    count = len(world.log_of(action.instance).surface.nodes)
    own = action.replace
    if own is not None and not (_positions_ok((own.start, own.end), count) and _source_ok(own.source)):
        return False
    after = count if own is None else count - (own.end - own.start)
    return _positions_ok(action.compact, after)


def _source_ok(source: FrozenMap | None) -> bool:
    # A message source is a lossless-JSON object with a string kind (S/types.ts MessageSource).
    return source is None or (is_json_value(source) and isinstance(source.get("kind"), str))


def _contexts_ok(action: SendPrompt) -> bool:
    contexts = action.contexts + action.prompt_prefix
    return all(_source_ok(c.source) and (c.meta is None or is_json_value(c.meta)) for c in contexts)


def _config_ok(config: LlmCallConfig) -> bool:
    # What a request is built from must be something the log can record (HDR-2) once it names a provider and a
    # model; either may be missing, and the step then fails at agent/request (L/loop.ts:664-665, 688-690).
    return is_valid_config(replace(config, provider=config.provider or "-", model=config.model or "-"))


def _script_ok(listener: Listener) -> bool:
    # What a listener contributes and what it injects while composing must be something the log and a request can hold.
    injects = [c for c in listener.script if isinstance(c, InjectThenPrepend)]
    injects_ok = all(_source_ok(c.source) and (c.meta is None or is_json_value(c.meta)) for c in injects)
    return injects_ok and is_json_value(tuple(m for call in listener.script if not isinstance(call, Throw) for m in call.messages))


def _session_ids(world: World) -> tuple[str, ...]:
    return tuple(s.id for s in world.sessions)


@ensure(
    lambda world, action, result: not result or not isinstance(action, (Inject, Steer, Cancel, Dispose, SetSystem, SetTools, SendPrompt))
    or not world.instance(action.instance).disposed,
    "LOOP-6: after disposal no input is delivered",
    enabled=ENABLED,
)
def enabled(world: World, action: Action) -> bool:
    """Return whether ``action`` can happen in ``world`` (each action's guard, spec §10.1)."""
    match action:
        case Create(session_id=sid, tools=tools):
            return sid not in _session_ids(world) and is_json_value(tools)
        case ForkDrive(source_id=src, child_id=child, boundary=boundary, tools=tools):
            # The store forks only a live session (FORK-9): one an undisposed instance drives, or a disposed one still in
            # its turn — the disposal awaits the driver's exit before it detaches the session (L/index.ts:216-235).
            if not world.held(src) or not is_json_value(tools):
                return False
            return check_fork(world.session(src).log, boundary, child, _session_ids(world)) is None
        case Resume(session_id=sid, tools=tools):
            drivers = [i for i in world.instances if i.session_id == sid]
            return sid in _session_ids(world) and is_json_value(tools) and all(i.phase in (Phase.IDLE, Phase.DISPOSED) for i in drivers)
        case Register(listener=listener):
            return bool(listener.script) and _script_ok(listener) and listener.name not in {known.name for known in world.listeners}
        case MutateContribution(listener=name, messages=messages):
            return name in {known.name for known in world.listeners} and is_json_value(messages)
        case MountCompaction():
            return True
        case SendPrompt(instance=i, blocked=blocked, block_reason=why):
            # A reason is the block decision's: an allowed prompt has none to give (one spelling per prompt).
            return _instance_ok(world, i) and _contexts_ok(action) and (blocked or why == BLOCKED)
        case BeginStep(instance=i):
            return _in_phase(world, i, Phase.STEP_BEGIN)
        case Compose(instance=i):
            return _in_phase(world, i, Phase.COMPOSE)
        case PreStep(instance=i):
            return _in_phase(world, i, Phase.PRE_STEP) and _pre_step_ok(world, action)
        case Dispatch(instance=i, config=config):
            return _in_phase(world, i, Phase.REQUEST) and (config is None or _config_ok(config))
        case Reply(instance=i, stream=stream, more=more):
            # A stream the harness could assemble (STRM-1/2); an open stream goes on with more chunks.
            well_formed = stream is None or (is_json_value(stream) and check_stream(stream) is None)
            return _in_phase(world, i, Phase.STREAM) and well_formed and (stream is not None or not more)
        case RunTools(instance=i):
            return _in_phase(world, i, Phase.TOOLS)
        case PostStep(instance=i, compact=positions):
            return _in_phase(world, i, Phase.POST_STEP) and _positions_ok(positions, len(world.log_of(i).surface.nodes))
        case Inject(instance=i, source=source, meta=meta):
            return _instance_ok(world, i) and _source_ok(source) and (meta is None or is_json_value(meta))
        case SetTools(instance=i, tools=tools):
            return _instance_ok(world, i) and is_json_value(tools)
        case Steer(instance=i) | Cancel(instance=i) | Dispose(instance=i) | SetSystem(instance=i):
            return _instance_ok(world, i)
    return False


# --- Instances ---


def _create(world: World, action: Create) -> World:
    world = world.with_session(Session(action.session_id))
    return _new_instance(world, action.agent, action.session_id, action.options, action.system, action.tools)


def _fork_drive(world: World, action: ForkDrive, semantics: Semantics) -> World:
    # Fork copies events, never loop state: the child's driver is a brand-new instance (FORK-6).
    result = fork(world.session(action.source_id).log, action.source_id, action.boundary, action.child_id, _session_ids(world))
    world = world.with_session(Session(action.child_id, semantics.fork_seed(result.child), result.lineage))
    return _new_instance(world, action.agent, action.child_id, action.options, action.system, action.tools)


def _resume(world: World, action: Resume) -> World:
    # A restart ends every driver of the session without a trace; resume starts a new instance.
    for old in world.instances:
        if old.session_id == action.session_id and not old.disposed:
            world = _set(world, old.id, phase=Phase.DISPOSED, disposed=True)
    return _new_instance(world, action.agent, action.session_id, action.options, action.system, action.tools)


def _mutate(world: World, action: MutateContribution) -> World:
    def rewrite(listener: Listener) -> Listener:
        if listener.name != action.listener:
            return listener
        script = tuple(c if isinstance(c, Throw) else replace(c, messages=action.messages) for c in listener.script)
        return replace(listener, script=script)

    return replace(world, listeners=tuple(rewrite(listener) for listener in world.listeners))


# --- A turn ---


def _send_prompt(world: World, action: SendPrompt) -> World:
    instance = world.instance(action.instance)
    turn = next_turn(world.log_of(instance.id))
    source = {"kind": "message", "source": _USER}
    world = _emit(world, instance.session_id, TURN_START, {"turn": turn, "trigger": source})
    instance = replace(instance, turn=turn, step=0)
    if action.blocked:  # the hook's reason, on the durable record and the turn's end alike (L/loop.ts:376-378)
        world = _emit(world, instance.session_id, PROMPT_BLOCKED, {"content": [_text(action.text)], "source": _USER, "reason": action.block_reason})
        return _end_turn(world, instance, {"kind": "rejected", "reason": action.block_reason})
    data: dict[str, object] = {"content": [_text(action.text)], "source": _USER}
    if action.prompt_prefix:
        # Prompt-prefix contexts are baked into this one durable message, each named by its producer (L/loop.ts:107-131).
        baked = [_text(c.text) for c in action.prompt_prefix] + [_text(PROMPT_PREFIX_DELIMITER), _text(action.text)]
        named = [{"source": c.source} | ({} if c.meta is None else {"meta": c.meta}) for c in action.prompt_prefix]
        data = {"content": baked, "source": _USER, "envelope": {"displayContent": [_text(action.text)], "prefixContexts": named}}
    world = _emit(world, instance.session_id, USER_MESSAGE, data, APPEND)
    for context in action.contexts:  # through agent.inject, in the open turn (L/loop.ts:388-395)
        world = _emit(world, instance.session_id, USER_MESSAGE, _sourced(context.text, context.source, context.meta), APPEND)
    return world.with_instance(replace(instance, phase=Phase.STEP_BEGIN, cancel=None, continues=False, max_tokens=False))


def _schema(tool: JsonValue) -> JsonValue:
    """A registered tool as assembly collects it: its name, description and parameters, in that order (absent ones
    left out, as JSON text leaves out an undefined member)."""
    if not isinstance(tool, FrozenMap):
        return tool
    return FrozenMap({key: tool[key] for key in ("name", "description", "parameters") if key in tool})


def _begin_step(world: World, action: BeginStep, semantics: Semantics) -> World:
    instance = world.instance(action.instance)
    if instance.cancel is not None:
        return _interrupted(world, instance)
    retried = instance.retried
    instance = replace(instance, step=instance.step + 1, retried=False)
    world = world.with_instance(instance)
    if not retried:  # a retried step's steering was drained as its request failed; what came since waits (LOOP-9)
        world = _drain_steering(world, instance)
    instance = world.instance(instance.id)
    # Assembly renders the system prompt and the tool list: each schema rebuilt as {name, description, parameters},
    # so another key order or another member of a registered schema never reaches a header (system-prompt/src/
    # index.ts:359-363), the list sorted by name (facts addendum 6).
    tools = tuple(sorted(map(_schema, instance.tools), key=lambda t: str(t.get("name", "")) if isinstance(t, FrozenMap) else ""))
    prefix = None if semantics.recompose(instance) else instance.prefix
    compose_now = prefix is None and not semantics.compose_in_pre_step
    phase = Phase.COMPOSE if compose_now else Phase.PRE_STEP
    # Cordis collects a waterfall's listeners when it is dispatched (vendor/cordis/src/events.ts:163-174, 233-242): right
    # after assembly, with no await between (L/loop.ts:407-418), so a listener registered before Compose is not called.
    collected = tuple(listener.name for listener in world.listeners) if compose_now else None
    return world.with_instance(replace(instance, assembled=(instance.system, tools), prefix=prefix, phase=phase, collected=collected))


def _composition(world: World, instance: Instance, semantics: Semantics) -> tuple[World, Composition]:
    """Run the waterfall over the listeners it collected: count the calls, append the composing listeners' injects."""
    listeners = world.listeners if instance.collected is None else tuple(l for l in world.listeners if l.name in instance.collected)
    # Ghost: what each collected listener does on this call, in registration order (the PFX-8 oracle folds it).
    world = _mark(world, instance, "waterfall", waterfall_inputs(listeners))
    result = compose(semantics.listener_order(listeners), instance.agent, instance.disposed)
    counted = tuple(replace(l, calls=l.calls + 1) if l.name in result.called else l for l in world.listeners)
    world = replace(world, listeners=counted)
    for inject in result.injects:
        source = INJECTED if inject.source is None else inject.source
        world = _emit(world, instance.session_id, USER_MESSAGE, _sourced(inject.text, source, inject.meta), APPEND)
    return world, result


def _compose(world: World, instance_id: int, semantics: Semantics, then: Phase) -> World:
    """Compose the prefix; cache it unless the waterfall threw or was interrupted (facts §4.6-§4.8)."""
    world, result = _composition(world, world.instance(instance_id), semantics)
    world = _set(world, instance_id, collected=None)
    if result.cancelled:  # a listener called agent.cancel() while composing (L/agent.ts:386-423)
        world = _cancel(world, world.instance(instance_id))
    instance = world.instance(instance_id)
    if result.product is None:
        world = _mark(world, instance, "compose-failed")
        if instance.cancel is not None:  # a throw under a cancellation ends the turn as interrupted (L/loop.ts:614-622)
            return _interrupted(world, instance)
        # The thrown error's message chain (L/loop.ts:70-72, 614-622); a listener's error carries no string code.
        return _end_turn(world, instance, {"kind": "error", "step": instance.step, "message": result.error})
    if instance.cancel is not None:
        # The checkpoint after the waterfall throws before caching (L/loop.ts:421-423).
        if semantics.cache_interrupted:
            instance = replace(instance, prefix=result.product)
        world = _mark(world.with_instance(instance), instance, "compose-interrupted")
        return _interrupted(world, instance)
    world = _mark(world, instance, "composed", result.product)
    durable, cached = semantics.adopt(world.log_of(instance.id), result.product)
    for type, data in durable:  # what a design writes into the log instead of (or besides) caching
        world = _emit(world, instance.session_id, type, data, APPEND if type == USER_MESSAGE else None)
    world = _mark(world, instance, "cached", cached)  # ghost: what the instance's requests will carry
    return _set(world, instance.id, prefix=cached, phase=then)


def _land(world: World, instance: Instance, runs: tuple[Compaction, ...], semantics: Semantics) -> World:
    """Append what the compaction service appended, sending each summarizer call when it did (CB/region.ts:116-161)."""
    sid = instance.session_id
    for n, run in enumerate(runs):
        for event in run.log.events[len(world.session(sid).log.events) :]:
            closing = event.type == COMPACT_END and run.error is None and n == len(runs) - 1
            header = semantics.compaction_header(fold_request_header(world.log_of(instance.id).events)) if closing else None
            if header is not None:
                world = _emit(world, sid, REQUEST_HEADER, {"header": header_to_json(header), "reason": CHANGE})
            world = _emit(world, sid, event.type, event.data, event.surface_op, event.source_event_seqs)
            at = len(world.session(sid).log.events)
            if run.request is not None and at == run.sent_at:
                sent = SentRequest(instance.id, sid, instance.turn, instance.step, run.request, at, False)
                world = replace(world, requests=world.requests + (sent,))
        if run.error is None:
            world = _mark(world, instance, "compacted")
            world = _set(world, instance.id, prefix=semantics.after_compaction(world.instance(instance.id).prefix))
    return world


def _compact(world: World, instance: Instance, positions: tuple[int, int], reply: str, semantics: Semantics) -> tuple[World, str | None]:
    """A listener's ``compactRegion`` over surface positions [i, j]: the world after it and what it threw."""
    log = world.log_of(instance.id)
    run = compact_region(log, instance.turn, positions[0], positions[1], reply, world.compaction, instance.options.config(), instance.session_id)
    return _land(world, instance, (run,), semantics), run.error


def _plain_replace(world: World, instance: Instance, own: PlainReplace) -> World:
    """A listener's own replacement: a sourced ``user/message`` over the range, provenance the shadowed nodes (S/surface.ts:136-167)."""
    shadowed = world.log_of(instance.id).surface.nodes[own.start : own.end + 1]
    data = _sourced(own.text, own.source, None)
    return _emit(world, instance.session_id, USER_MESSAGE, data, Replace(shadowed[0], shadowed[-1]), shadowed)


def _listener_failed(world: World, instance: Instance, message: str) -> World:
    """A throwing pre-step or post-step listener fails the turn: ``{kind: error, step, message}`` (L/loop.ts:70-72, 523-533, 614-623)."""
    return _end_turn(world, world.instance(instance.id), {"kind": "error", "step": instance.step, "message": message})


def _pre_step(world: World, action: PreStep, semantics: Semantics) -> World:
    instance = world.instance(action.instance)
    if instance.cancel is not None:
        return _interrupted(world, instance)
    world = _mark(world, instance, "pre-step")
    if instance.prefix is None:  # only under compose_after_pre_step
        world = _compose(world, instance.id, semantics, Phase.PRE_STEP)
        if world.instance(instance.id).phase is not Phase.PRE_STEP:
            return world
    if action.replace is not None:
        world = _plain_replace(world, instance, action.replace)
    if action.compact is not None:
        reply = action.summaries[0] if action.summaries else DEFAULT_SUMMARY
        world, thrown = _compact(world, world.instance(instance.id), action.compact, reply, semantics)
        if thrown is not None:
            return _listener_failed(world, instance, thrown)
    instance = world.instance(instance.id)
    # Snapshot the boundary, then append step/start: nothing can come between (L/loop.ts:430-434).
    boundary = derive_messages(world.log_of(instance.id))
    world = _mark(world, instance, "boundary")
    world = _emit(world, instance.session_id, STEP_START, {"turn": instance.turn, "step": instance.step})
    return _set(world, instance.id, boundary=boundary, phase=Phase.REQUEST, continues=False)


def _config_seed(log: Log, instance: Instance) -> LlmCallConfig:
    """Return the config a request starts from (L/loop.ts:662-681, facts §2.8)."""
    folded = fold_request_header(log.events)
    if instance.logged_header and folded is not None:
        return folded.config
    seed = instance.options.config()
    if folded is not None and (folded.config.provider, folded.config.model) == (seed.provider, seed.model):
        seed = replace(seed, reasoning_effort=folded.config.reasoning_effort)
    return seed


def _record(world: World, instance: Instance, header: EpochHeader, semantics: Semantics) -> World:
    """Record the request's header by the rule of §5.2, before dispatch."""
    log, reason = semantics.record(world.log_of(instance.id), instance.logged_header, header)
    world = world.with_session(replace(world.session(instance.session_id), log=log))
    return _mark(world, instance, "record", reason)


def _dispatch(world: World, action: Dispatch, semantics: Semantics) -> World:
    instance = world.instance(action.instance)
    if instance.cancel is not None:
        return _interrupted(world, instance)
    log = world.log_of(instance.id)
    config = action.config if action.config is not None else _config_seed(log, instance)
    if not config.provider or not config.model:
        # Thrown before the call is prepared: no header, no request, the turn ends in error (L/loop.ts:688-690).
        # The harness names the agent by its id, which is its session's.
        unrouted = f'agent "{instance.session_id}" has no provider/model: set AgentOptions.provider and AgentOptions.model or supply both via the agent/request waterfall'
        return _end_turn(world, instance, {"kind": "error", "step": instance.step, "message": unrouted})
    prefix = semantics.sent_prefix(instance.prefix or (), world.listeners, instance.agent)
    system, tools = instance.assembled
    header = semantics.header(config, system, tools, prefix)
    world = _record(world, instance, header, semantics)
    instance = replace(world.instance(instance.id), logged_header=True)
    history = semantics.history(instance.boundary, world.log_of(instance.id))
    request = semantics.request(header, prefix, history, instance)
    sent = SentRequest(instance.id, instance.session_id, instance.turn, instance.step, request, len(world.log_of(instance.id).events))
    world = replace(world.with_instance(replace(instance, phase=Phase.STREAM)), requests=world.requests + (sent,))
    return _mark(world, instance, "dispatch")


def _reply_stream(action: Reply) -> tuple[FrozenMap, ...]:
    """Return the chunks of a reply: its own stream, or the ``block-end``s and ``finish`` of its text and calls."""
    if action.stream is not None:
        return action.stream
    blocks: list[dict[str, JsonValue]] = [{"type": "text", "text": action.text}] if action.text else []
    blocks += [{"type": "tool-call", "id": i, "name": n, "arguments": a} for i, n, a in action.tool_calls]
    finish = "tool-calls" if action.tool_calls else ("max-tokens" if action.max_tokens else "stop")
    chunks = [freeze_object({"type": "block-end", "index": n, "block": b}) for n, b in enumerate(blocks)]
    return (*chunks, freeze_object({"type": "finish", "reason": {"kind": finish}}))


def _step_chunks(log: Log) -> tuple[int, ...]:
    """Return the seqs of the open step's ``assistant/chunk`` events (all of them come after its ``step/start``)."""
    start = max(e.seq for e in log.events if e.type == STEP_START)
    return tuple(e.seq for e in log.events[start:] if e.type == ASSISTANT_CHUNK)


def _fail(world: World, instance: Instance, failure: FrozenMap, retry: bool) -> World:
    """Close the step of a failed request; retry with the next step or end the turn in error (LOOP-9)."""
    where = {"turn": instance.turn, "step": instance.step}
    world = _set(_emit(world, instance.session_id, STEP_END, where), instance.id, phase=Phase.STEP_BEGIN)
    if retry:  # the next step's steering is drained now, before that step's BeginStep (L/loop.ts:488-491, 400-405)
        world = _drain_steering(world, world.instance(instance.id))
        return _set(world, instance.id, retried=True)
    return _end_turn(world, world.instance(instance.id), {"kind": "error", "step": instance.step, "failure": failure})


def _reply(world: World, action: Reply) -> World:
    instance = world.instance(action.instance)
    if instance.cancel is not None:
        return _interrupted(world, instance)
    sid, where = instance.session_id, {"turn": instance.turn, "step": instance.step}
    # Each chunk is logged as it arrives, before the next is read (L/loop.ts:738-744).
    for chunk in _reply_stream(action) if action.failure is None or action.stream is not None else ():
        world = _emit(world, sid, ASSISTANT_CHUNK, where | {"chunk": chunk})
    if action.more:  # the stream is still open: a cancel or dispose may arrive before its next chunk
        return world
    if action.failure is not None:
        # The adapter's failure is {message, code} (LLM/adapter-failure.ts markLlmAdapterFailure); the
        # durable copy keeps its key order with the message rendered (L/loop.ts:75-78, 338-340).
        return _fail(world, instance, freeze_object({"message": action.failure_message, "code": action.failure}), action.retry)
    log = world.log_of(instance.id)
    chunks = _step_chunks(log)
    assembly = assemble(tuple(log.events[seq].field("chunk") for seq in chunks))
    failure = failure_of(assembly.finish) if assembly.finish.get("kind") in FAILED else None
    if failure is not None:  # a failure finish takes the thrown error's path (L/loop.ts:748-750)
        return _fail(world, instance, failure, action.retry)
    max_tokens = assembly.finish.get("kind") == "max-tokens"
    content = tuple(b for b in assembly.content if not (max_tokens and b.get("type") == "tool-call"))  # withoutToolCalls
    folded = fold_request_header(log.events)
    assert folded is not None
    provenance: dict[str, JsonValue] = {"provider": folded.config.provider, "model": folded.config.model}
    if assembly.replay_state is not None and content == assembly.content:  # a rewritten content drops it (L/loop.ts:823-828)
        provenance["replayState"] = assembly.replay_state
    data: dict[str, object] = where | {"content": content, "provenance": provenance}
    if assembly.usage is not None:
        data["usage"] = assembly.usage
    world = _emit(world, sid, ASSISTANT_MESSAGE, data, APPEND, chunks)
    calls = tool_calls_of(content)
    if calls:
        # The batch starts with the reply: nothing is awaited between the message and the first call's tool/call
        # (L/loop.ts:812-818, L/tool-calls.ts:148-152); the first body that runs is the first seam (RunTools). A call
        # whose tool is not registered has no body: it is answered at once, and the next call starts.
        world, pending = _start_calls(world, world.instance(instance.id), calls)
        if pending:
            return world.with_instance(replace(world.instance(instance.id), phase=Phase.TOOLS, pending_calls=pending, continues=True))
        return _end_batch(world, world.instance(instance.id))
    instance = world.instance(instance.id)
    # Steering drained after the response continues the turn (L/loop.ts:520-521, 546-559).
    world = _drain_steering(world, instance)
    # The turn's reason is kept across its steps: a later ordinary stop does not undo a max-tokens (L/loop.ts:320, 517-518).
    return _set(world, instance.id, phase=Phase.POST_STEP, max_tokens=instance.max_tokens or max_tokens, continues=bool(instance.steering))


# What a call met by a cancel records: the started one's output superseded (the tools package's canonical abort result,
# packages/core/tools/src/index.ts:1543-1553), each later one skipped before dispatch (L/tool-calls.ts:88-91, 217-226).
_ABORTED = ("Error: tool call aborted", "ABORTED")
_SKIPPED = ("Error: tool call aborted before dispatch", "ABORTED_BEFORE_DISPATCH")


def _registered(instance: Instance, name: str) -> bool:
    """Whether the instance's tool set holds a tool called ``name`` now: the registry is read as each call starts."""
    return any(isinstance(tool, FrozenMap) and tool.get("name") == name for tool in instance.tools)


def _failed_call(where: Mapping[str, int], call_id: str, text: str, name: str, code: str) -> dict[str, object]:
    # The registry's error result: the message in the `Error: ` envelope, {name, code} as its durable info
    # (packages/core/tools/src/index.ts:554-556, 1494-1501; L/tool-calls.ts:244-251).
    return {**where, "callId": call_id, "content": [_text(text)], "isError": True, "error": {"name": name, "code": code}}


def _unknown(where: Mapping[str, int], call_id: str, name: str) -> dict[str, object]:
    # ToolNotFoundError, thrown before the body when the registry has no such tool (index.ts:420-423, 1176-1177).
    return _failed_call(where, call_id, f'Error: unknown tool "{name}"', "ToolNotFoundError", "UNKNOWN_TOOL")


def _call_seq(world: World, sid: str, call_id: str) -> int:
    return next(e.seq for e in reversed(world.session(sid).log.events) if e.type == TOOL_CALL and e.field("callId") == call_id)


def _start_calls(world: World, instance: Instance, calls: tuple[tuple[str, str, str], ...]) -> tuple[World, tuple[tuple[str, str, str], ...]]:
    """Start the calls in order until one has a body to run; return the world and the calls left, that one first.

    Each call's tool/call is appended as it starts; one whose tool is gone is answered at once (no body, no seam).
    """
    sid, where = instance.session_id, {"turn": instance.turn, "step": instance.step}
    for index, (call_id, name, arguments) in enumerate(calls):
        world = _emit(world, sid, TOOL_CALL, where | {"callId": call_id, "name": name, "arguments": arguments})
        if _registered(instance, name):
            return world, calls[index:]
        world = _emit(world, sid, TOOL_RESULT, _unknown(where, call_id, name), APPEND, (_call_seq(world, sid, call_id),))
    return world, ()


def _run_tools(world: World, action: RunTools) -> World:
    instance = world.instance(action.instance)
    sid, where = instance.session_id, {"turn": instance.turn, "step": instance.step}
    bodies = 0  # outputs go to the calls whose body runs, in call order
    for index, (call_id, name, arguments) in enumerate(instance.pending_calls):
        if index:  # the first call's tool/call came with the reply (or with the unknown calls before it)
            world = _emit(world, sid, TOOL_CALL, where | {"callId": call_id, "name": name, "arguments": arguments})
        if instance.cancel is not None:  # the registry's tools run one at a time: the first call had started when the cancel came
            text, code = _SKIPPED if index else _ABORTED
            result = _failed_call(where, call_id, text, "AbortError", code)
        elif index and not _registered(instance, name):  # the first was looked up as it started; a later one now
            result = _unknown(where, call_id, name)
        else:
            output = action.outputs[bodies] if bodies < len(action.outputs) else f"{name} done"
            bodies += 1
            result = where | {"callId": call_id, "content": [_text(output)], "isError": False}
        world = _emit(world, sid, TOOL_RESULT, result, APPEND, (_call_seq(world, sid, call_id),))
    return _end_batch(world, world.instance(instance.id))


def _end_batch(world: World, instance: Instance) -> World:
    # Contexts accepted during the batch land after all of its results (L/agent.ts:371-384).
    for data in instance.deferred:
        world = _emit(world, instance.session_id, USER_MESSAGE, data, APPEND)
    world = _drain_steering(_set(world, instance.id, deferred=(), pending_calls=()), world.instance(instance.id))
    # Tool calls continue the turn; a cancel met by the batch ends it after post-step (L/loop.ts:519-541).
    return _set(world, instance.id, continues=True, phase=Phase.POST_STEP)


def _pressure(semantics: Semantics) -> Callable[[Log], int]:
    """The meter post-step asks, before and after each compaction: the design's price of a log (``Semantics.pressure``)."""

    def pressure(log: Log) -> int:
        measured = measure(log)
        prefix = (measured.header.message_prefix or ()) if measured.header is not None else ()
        return semantics.pressure(log, measured, sum(estimate_message(m) for m in prefix))

    return pressure


def _post_step(world: World, action: PostStep, semantics: Semantics) -> World:
    instance = world.instance(action.instance)
    log = world.log_of(instance.id)
    if instance.cancel is None and fold_request_header(log.events) is not None:
        # Pressure at post-step: the meter prices the latest routed header (with its prefix) once.
        pressure = _pressure(semantics)
        world = _mark(world, instance, "measured", pressure(log))
        # The service's pressure listener runs first, deciding by that meter; what it throws is logged and the turn goes
        # on (CB/index.ts:136-154).
        config = instance.options.config()
        runs, _logged = compact_if_needed(log, instance.turn, world.compaction, config, instance.session_id, action.summaries, pressure)
        world = _land(world, instance, runs, semantics)
        nodes = len(world.log_of(instance.id).surface.nodes)
        if action.compact is not None and _positions_ok(action.compact, nodes):  # a listener that finds fewer nodes calls nothing
            reply = action.summaries[len(runs)] if len(runs) < len(action.summaries) else DEFAULT_SUMMARY
            world, thrown = _compact(world, instance, action.compact, reply, semantics)
            if thrown is not None:
                return _listener_failed(world, instance, thrown)
    instance = world.instance(instance.id)
    if instance.cancel is not None:
        return _interrupted(world, instance)
    world = _emit(world, instance.session_id, STEP_END, {"turn": instance.turn, "step": instance.step})
    if instance.continues or instance.steering:
        return _set(world, instance.id, phase=Phase.STEP_BEGIN, continues=False)
    reason = {"kind": "max-tokens"} if instance.max_tokens else {"kind": "completed"}
    world = _emit(world, instance.session_id, TURN_END, {"turn": instance.turn, "reason": reason})
    return _next_turn(world, world.instance(instance.id))


# --- Inputs in any window ---


def _inject(world: World, action: Inject) -> World:
    instance = world.instance(action.instance)
    sid = instance.session_id
    source = INJECTED if action.source is None else action.source
    data = _sourced(action.text, source, action.meta)
    if instance.phase is Phase.TOOLS:
        return _set(world, instance.id, deferred=instance.deferred + (data,))
    if instance.turn_open:
        return _emit(world, sid, USER_MESSAGE, data, APPEND)
    # Idle: a one-shot injection turn, numbered after the log's last turn (L/agent.ts:319-355).
    turn = next_turn(world.log_of(instance.id))
    world = _emit(world, sid, TURN_START, {"turn": turn, "trigger": {"kind": "injection", "source": source}})
    world = _emit(world, sid, USER_MESSAGE, data, APPEND)
    return _emit(world, sid, TURN_END, {"turn": turn, "reason": {"kind": "completed"}})


def _cancel(world: World, instance: Instance) -> World:
    """``agent.cancel()``: the waiting prompts and steering are dropped; an open turn ends ``aborted`` at
    its next checkpoint (the first cause wins); an idle instance has nothing to cancel (L/agent.ts:386-423)."""
    if not instance.turn_open:
        return world
    return _set(world, instance.id, cancel=instance.cancel or "aborted", queued=(), steering=())


def _dispose(world: World, action: Dispose) -> World:
    instance = world.instance(action.instance)
    if instance.turn_open:
        # Disposal clears the inbox, steering included, before the turn winds down (L/agent.ts:496-497).
        return _set(world, instance.id, disposed=True, cancel="disposed", queued=(), steering=())
    return _set(world, instance.id, disposed=True, phase=Phase.DISPOSED)


@require(lambda world, action: enabled(world, action), "LOOP-1: an action happens only where its guard holds", enabled=ENABLED)
@ensure(
    lambda world, result: all(
        result.session(s.id).log.events[: len(s.log.events)] == s.log.events for s in world.sessions
    ),
    "LOG-4: the loop only ever appends to a session log",
    enabled=ENABLED,
)
@ensure(
    lambda world, result: result.requests[: len(world.requests)] == world.requests,
    "LOOP-2: requests once sent stay sent",
    enabled=ENABLED,
)
def apply(world: World, action: Action, semantics: Semantics = HARNESS) -> World:
    """Return the world after ``action`` (spec §10); ``semantics`` picks the design (HARNESS by default)."""
    match action:
        case Create():
            return _create(world, action)
        case ForkDrive():
            return _fork_drive(world, action, semantics)
        case Resume():
            return _resume(world, action)
        case Register(listener=listener):
            return replace(world, listeners=world.listeners + (replace(listener, calls=0),))
        case MountCompaction(policy=policy):
            return replace(world, compaction=policy)
        case MutateContribution():
            return _mutate(world, action)
        case SendPrompt(instance=i):
            if world.instance(i).turn_open:  # the inbox's queued FIFO (L/agent.ts:234-249)
                return _set(world, i, queued=world.instance(i).queued + (action,))
            return _send_prompt(world, action)
        case BeginStep():
            return _begin_step(world, action, semantics)
        case Compose(instance=i):
            return _compose(world, i, semantics, Phase.PRE_STEP)
        case PreStep():
            return _pre_step(world, action, semantics)
        case Dispatch():
            return _dispatch(world, action, semantics)
        case Reply():
            return _reply(world, action)
        case RunTools():
            return _run_tools(world, action)
        case PostStep():
            return _post_step(world, action, semantics)
        case Inject():
            return _inject(world, action)
        case Steer(instance=i, text=text):
            if world.instance(i).turn_open:
                return _set(world, i, steering=world.instance(i).steering + (text,))
            return _send_prompt(world, SendPrompt(i, text))  # idle: a waking ordinary turn (L/agent.ts:240-247)
        case Cancel(instance=i):
            return _cancel(world, world.instance(i))
        case Dispose():
            return _dispose(world, action)
        case SetSystem(instance=i, text=text):
            return _set(world, i, system=text)
        case SetTools(instance=i, tools=tools):
            return _set(world, i, tools=tools)
    raise AssertionError(f"unknown action {action!r}")


@ensure(
    lambda world, result: world is None or len(result.requests) >= len(world.requests),
    "LOOP-2: a run only adds requests",
    enabled=ENABLED,
)
def run(actions: tuple[Action, ...], semantics: Semantics = HARNESS, world: World | None = None) -> World:
    """Return the world after ``actions``, each applied where enabled (a disabled one is skipped)."""
    current = World() if world is None else world
    for action in actions:
        if enabled(current, action):
            current = apply(current, action, semantics)
    return current

