"""Spec §6 — the loop-built request and its reconstruction from a log.

A loop request is built FROM its canonical header (harness L/loop.ts:716-731): provider, model,
reasoningEffort?, ``messages = messagePrefix ++ boundary``, system?, tools?, temperature?,
maxTokens?, stop?, sessionId (REQ-1, REQ-2). The boundary of step (t, s) is the derivation of
every event strictly before its ``step/start`` (REQ-3); its header is the fold of the events
before the step's first ``assistant/chunk``, or through the step's end when it streamed nothing
(REQ-4, harness facts §2.7).
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, Rejection, ensure, require
from prefix_model.core.derive import Message, derive_messages
from prefix_model.core.events import ASSISTANT_CHUNK, STEP_END, STEP_START, TURN_END, Event
from prefix_model.core.headers import EpochHeader, fold_request_header, is_canonical_header
from prefix_model.core.json_values import FrozenMap, JsonValue
from prefix_model.core.log import Log
from prefix_model.core.surface import EMPTY_SURFACE, apply_surface_event

__all__ = [
    "Request", "StepSpan", "build_request", "request_to_json", "is_step_number", "find_step", "boundary_log", "reconstruct_request",
    "no_such_step", "no_header_in_force",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Request:
    """A loop-built request: its canonical header, its messages and the session id."""

    header: EpochHeader
    messages: tuple[JsonValue, ...]
    session_id: str | None = None
    purpose: str | None = None  # set only on auxiliary calls: the compaction summarizer's "compaction"


@dataclass(frozen=True, slots=True)
class StepSpan:
    """Where step (turn, step) sits in a log: its ``step/start`` and the end of its header window."""

    turn: int
    step: int
    start_seq: int
    header_until: int  # exclusive seq bound of the events whose fold is the step's header


@require(lambda header: is_canonical_header(header), "REQ-1: a request is built from a canonical header", enabled=ENABLED)
@ensure(
    lambda header, boundary, result: result.messages == (header.message_prefix or ()) + boundary,
    "REQ-2: messages are the header's messagePrefix, then the boundary derivation",
    enabled=ENABLED,
)
def build_request(header: EpochHeader, boundary: tuple[Message, ...], session_id: str | None = None) -> Request:
    """Return the request the loop sends for ``header`` over ``boundary`` (REQ-1, REQ-2)."""
    return Request(header, (header.message_prefix or ()) + boundary, session_id)


@ensure(
    lambda request, result: tuple(result)[:2] == ("provider", "model") and result["messages"] == request.messages,
    "REQ-1: provider and model lead; messages are the request's",
    enabled=ENABLED,
)
def request_to_json(request: Request) -> FrozenMap:
    """Return the request's JSON with the harness's field names, in the loop's order (REQ-1)."""
    config, header = request.header.config, request.header
    fields: dict[str, JsonValue] = {"provider": config.provider, "model": config.model}
    if config.reasoning_effort is not None:
        fields["reasoningEffort"] = config.reasoning_effort
    fields["messages"] = request.messages
    optional: tuple[tuple[str, JsonValue], ...] = (
        ("system", header.system),
        ("tools", header.tools),
        ("temperature", config.temperature),
        ("maxTokens", config.max_tokens),
        ("stop", config.stop),
    )
    fields.update((name, value) for name, value in optional if value is not None)
    if request.session_id is not None:
        fields["sessionId"] = request.session_id
    if request.purpose is not None:
        fields["purpose"] = request.purpose
    return FrozenMap(fields)


def _names(event: Event, turn: int, step: int) -> bool:
    """Return whether ``event`` names step (turn, step)."""
    return is_step_number(event.field("turn"), turn) and is_step_number(event.field("step"), step)


def is_step_number(value: object, expected: int) -> bool:
    """Return whether a turn or step field ``value`` is the number ``expected``; JSON-5: ``true`` is not ``1``."""
    return isinstance(value, int) and not isinstance(value, bool) and value == expected


@ensure(lambda result: result.rule == "REQ-5", "REQ-5: a step the log does not hold is reported as such", enabled=ENABLED)
def no_such_step(turn: int, step: int) -> Rejection:
    """Return the rejection of reconstructing step (turn, step) of a log that has no ``step/start`` for it (REQ-5)."""
    return Rejection("REQ-5", f"the log has no step/start for turn {turn} step {step}")


@ensure(lambda result: result.rule == "REQ-5", "REQ-5: a step with no header in force is reported as such", enabled=ENABLED)
def no_header_in_force(turn: int, step: int) -> Rejection:
    """Return the rejection of reconstructing step (turn, step) where no ``request/header`` is in force (REQ-5)."""
    return Rejection("REQ-5", f"no request/header is in force for turn {turn} step {step}")


@ensure(
    lambda log, result: isinstance(result, Rejection)
    or (log.events[result.start_seq].type == STEP_START and result.start_seq < result.header_until <= len(log.events)),
    "REQ-3/REQ-4: a step starts at its step/start and its header window follows it",
    enabled=ENABLED,
)
def find_step(log: Log, turn: int, step: int) -> StepSpan | Rejection:
    """Return where step (turn, step) sits in ``log``, or why it does not exist (REQ-5)."""
    starts = [e.seq for e in log.events if e.type == STEP_START and _names(e, turn, step)]
    if not starts:
        return no_such_step(turn, step)
    start = starts[-1]
    until = len(log.events)
    for event in log.events[start + 1 :]:
        if event.type == ASSISTANT_CHUNK and _names(event, turn, step):
            until = event.seq
            break
        if event.type in (STEP_END, TURN_END, STEP_START):
            until = event.seq + 1 if event.type == STEP_END else event.seq
            break
    return StepSpan(turn, step, start, until)


@require(lambda log, before_seq: 0 <= before_seq <= len(log.events), "REQ-3: a boundary is a position in the log", enabled=ENABLED)
@ensure(lambda log, before_seq, result: result.events == log.events[:before_seq], "REQ-3: the boundary holds exactly the earlier events", enabled=ENABLED)
def boundary_log(log: Log, before_seq: int) -> Log:
    """Return the log of the events strictly before ``before_seq`` (a step's boundary)."""
    surface = EMPTY_SURFACE
    for event in log.events[:before_seq]:
        surface = apply_surface_event(surface, event)
    return Log(log.events[:before_seq], surface)


@ensure(
    lambda result: isinstance(result, Rejection)
    or result.messages[: len(result.header.message_prefix or ())] == (result.header.message_prefix or ()),
    "REQ-2: the prefix leads the messages",
    enabled=ENABLED,
)
def reconstruct_request(log: Log, turn: int, step: int, session_id: str | None = None) -> Request | Rejection:
    """Return the request step (turn, step) of ``log`` must have sent (REQ-2, REQ-3, REQ-4, REQ-5)."""
    span = find_step(log, turn, step)
    if isinstance(span, Rejection):
        return span
    header = fold_request_header(log.events[: span.header_until])
    if header is None:
        return no_header_in_force(turn, step)
    return build_request(header, derive_messages(boundary_log(log, span.start_seq)), session_id)
