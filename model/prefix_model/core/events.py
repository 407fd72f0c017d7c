"""Spec §2 — the event envelope and the event vocabulary of the session log.

An event is ``type``, ``seq``, ``time`` and ``data``; only the four surface-eligible types carry
``surfaceOp`` and ``sourceEventSeqs`` (harness S/types.ts:398-418). Event types are open strings:
an unknown type is a log-only record (LOG-9). ``check_event`` returns the first envelope rule an
event breaks, as a value; it never raises.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, Rejection, ensure
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, JsonValue, check_lossless, is_json_value, json_text

__all__ = [
    "seq_gap",
    "TURN_START",
    "TURN_END",
    "STEP_START",
    "STEP_END",
    "USER_MESSAGE",
    "PROMPT_BLOCKED",
    "ASSISTANT_CHUNK",
    "ASSISTANT_MESSAGE",
    "TOOL_CALL",
    "TOOL_RESULT",
    "STEERING_MESSAGE",
    "TODO_WRITE",
    "REQUEST_HEADER",
    "COMPACT_START",
    "COMPACT_SUMMARY",
    "COMPACT_END",
    "LEGACY_HEADER_DELTA",
    "LEGACY_MODE_SET",
    "SURFACE_TYPES",
    "KNOWN_TYPES",
    "APPEND",
    "Replace",
    "SurfaceOp",
    "Event",
    "is_surface_type",
    "is_safe_seq",
    "check_envelope",
    "check_event",
]

TURN_START = "turn/start"
TURN_END = "turn/end"
STEP_START = "step/start"
STEP_END = "step/end"
USER_MESSAGE = "user/message"
PROMPT_BLOCKED = "prompt/blocked"
ASSISTANT_CHUNK = "assistant/chunk"
ASSISTANT_MESSAGE = "assistant/message"
TOOL_CALL = "tool/call"
TOOL_RESULT = "tool/result"
STEERING_MESSAGE = "steering/message"
TODO_WRITE = "todo/write"
REQUEST_HEADER = "request/header"
COMPACT_START = "compact/start"
COMPACT_SUMMARY = "compact/summary"
COMPACT_END = "compact/end"
LEGACY_HEADER_DELTA = "request/header-delta"
LEGACY_MODE_SET = "mode/set"

# A tuple, not a frozenset: membership by ``==`` keeps strings symbolic for CrossHair (toolchain.md).
SURFACE_TYPES: tuple[str, ...] = (USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT, STEERING_MESSAGE)
KNOWN_TYPES: tuple[str, ...] = (
    TURN_START, TURN_END, STEP_START, STEP_END, USER_MESSAGE, PROMPT_BLOCKED, ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE, TOOL_CALL, TOOL_RESULT, STEERING_MESSAGE, TODO_WRITE, REQUEST_HEADER,
    COMPACT_START, COMPACT_SUMMARY, COMPACT_END,
)  # fmt: skip

APPEND = "append"


@dataclass(frozen=True, slots=True)
class Replace:
    """The positional surface replacement ``{op: 'replace', start, end}`` (seqs, inclusive)."""

    start: int
    end: int


SurfaceOp = str | Replace


@dataclass(frozen=True, slots=True)
class Event:
    """One log entry: the envelope of harness S/types.ts:398-418 with frozen JSON ``data``."""

    type: str
    seq: int
    time: int
    data: JsonValue
    surface_op: SurfaceOp | None = None
    source_event_seqs: tuple[int, ...] | None = None

    def field(self, name: str) -> JsonValue:
        """Return ``data[name]``, or ``None`` when data is not an object or lacks the key."""
        return self.data.get(name) if isinstance(self.data, FrozenMap) else None


def is_surface_type(event_type: str) -> bool:
    """Return whether ``event_type`` is one of the four surface-eligible types (LOG-5)."""
    return any(event_type == t for t in SURFACE_TYPES)


def is_safe_seq(value: object) -> bool:
    """Return whether ``value`` is a non-negative safe integer (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SAFE_INTEGER


def _check_legacy(event: Event) -> Rejection | None:
    if event.type == LEGACY_HEADER_DELTA:
        return Rejection("LOG-7", "legacy event type request/header-delta is rejected")
    if event.type == LEGACY_MODE_SET:
        return Rejection("LOG-7", "legacy event type mode/set is rejected")
    if event.type == REQUEST_HEADER and event.field("reason") == "fallback":
        return Rejection("LOG-8", "legacy request/header reason 'fallback' is rejected")
    return None


def _check_markers(event: Event) -> Rejection | None:
    if is_surface_type(event.type):
        if event.surface_op is None:
            return Rejection("LOG-5", f"surface-eligible {event.type} requires a surfaceOp")
        return None
    if event.surface_op is not None:
        return Rejection("LOG-6", f"{event.type} is not surface-eligible and cannot carry surfaceOp")
    if event.source_event_seqs is not None:
        return Rejection("LOG-6", f"{event.type} is not surface-eligible and cannot carry sourceEventSeqs")
    return None


def _check_known_shape(event: Event) -> Rejection | None:
    if any(event.type == t for t in KNOWN_TYPES) and not isinstance(event.data, FrozenMap):
        return Rejection("LOG-11", f"{event.type} data must be a JSON object")
    if is_surface_type(event.type) and not isinstance(event.field("content"), tuple):
        return Rejection("LOG-15", f"{event.type} data.content must be an array of content blocks")
    if event.type == TOOL_RESULT and not (isinstance(event.field("callId"), str) and isinstance(event.field("isError"), bool)):
        return Rejection("LOG-15", "tool/result data needs a string callId and a boolean isError")
    if event.type == ASSISTANT_MESSAGE and not isinstance(event.field("provenance"), FrozenMap):
        return Rejection("LOG-13", "assistant/message must carry a provenance object")
    if event.type == TURN_END:
        reason = event.field("reason")
        if isinstance(reason, FrozenMap) and reason.get("kind") == "aborted" and len(reason) != 1:
            return Rejection("LOG-14", "an aborted turn/end reason carries no key besides kind")
    return None


@ensure(lambda result: result.rule == "LOG-2", "LOG-2: a seq other than the next is a LOG-2 rejection", enabled=ENABLED)
def seq_gap(seq: object, expected_seq: int) -> Rejection:
    """Return the rejection of an event at seq ``seq`` where the log's next seq is ``expected_seq`` (LOG-2)."""
    return Rejection("LOG-2", f"seq {seq} is not contiguous; expected {expected_seq}")


def shown(value: object) -> str:
    """Return ``value`` as a rejection shows it: a JSON value (not a string) in JSON text, anything else by ``repr``.

    Not in ``__all__``: a helper of the core's rejection messages (``core.surface`` words SURF-3 with it), no rule.
    """
    if isinstance(value, Replace):  # as the line spells it (harness S/types.ts): a rejection names the op it was given
        value = FrozenMap({"op": "replace", "start": value.start, "end": value.end})
    return repr(value) if isinstance(value, str) or not is_json_value(value) else json_text(value)  # type: ignore[arg-type]


@ensure(
    lambda event, result: result is None or result.rule in ("LOG-1", "LOG-2", "LOG-3"),
    "LOG-1..LOG-3: the envelope's own fields: a string type, safe integer seq and time",
    enabled=ENABLED,
)
def check_envelope(event: Event, expected_seq: int | None = None) -> Rejection | None:
    """Return the first rule the envelope's own fields break, if any: ``type`` a string (LOG-1), ``seq`` a
    non-negative safe integer and, given ``expected_seq``, that one (LOG-2), ``time`` a non-negative safe integer (LOG-3).

    The one statement of these rules: ``check_event`` asks it of an event at its place, the
    readers (``formats.event_lines``) of an envelope as read, its fields as the line spells them.
    """
    if not isinstance(event.type, str):
        return Rejection("LOG-1", "type must be a string")
    if not is_safe_seq(event.seq):
        return Rejection("LOG-2", f"seq {shown(event.seq)} is not a non-negative safe integer")
    if expected_seq is not None and event.seq != expected_seq:
        return seq_gap(event.seq, expected_seq)
    if not is_safe_seq(event.time):
        return Rejection("LOG-3", f"time {shown(event.time)} is not a non-negative safe integer")
    return None


@ensure(
    lambda event, result: result is None or is_safe_seq(event.seq) or result.rule == "LOG-2",
    "LOG-2: an event whose seq is not a non-negative safe integer is rejected",
    enabled=ENABLED,
)
def check_event(event: Event, expected_seq: int) -> Rejection | None:
    """Return the first envelope rule ``event`` breaks at position ``expected_seq``, if any.

    Spec: LOG-1, JSON-1, LOG-2, LOG-3, LOG-5, LOG-6, LOG-7, LOG-8, LOG-11, LOG-13, LOG-14, LOG-15.
    """
    found = check_envelope(event, expected_seq)
    if found is not None:
        return found
    if not is_json_value(event.data):
        return check_lossless(event.data) or Rejection("JSON-3", "data holds a number not in its double form")
    return _check_legacy(event) or _check_markers(event) or _check_known_shape(event)
