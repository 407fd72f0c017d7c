"""The engine's fast judgements on plain events: "plainly fine", never a verdict of its own.

Each function answers for the common case only, and soundly: True means the spec's function
would find nothing (``envelope_ok`` ⇒ ``check_event`` and ``check_header_event`` pass;
``append_provenance_ok`` ⇒ ``_check_provenance`` passes), False means "ask the spec", which then
decides — so every finding the engine reports is worded by the spec's own rule.
``derive_plain`` is ``derive.derive_event_message`` over plain values (thaw commutes with it).
``tests/test_plain_rules.py`` holds each one to its spec counterpart on generated events.
"""

from __future__ import annotations

from prefix_model.events import (
    ASSISTANT_MESSAGE,
    KNOWN_TYPES,
    LEGACY_HEADER_DELTA,
    LEGACY_MODE_SET,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    SURFACE_TYPES,
    TOOL_RESULT,
    TURN_END,
    USER_MESSAGE,
)
from prefix_model.formats.plain_events import PlainEvent
from prefix_model.json_values import MAX_DEPTH, MAX_SAFE_INTEGER

__all__ = ["DEEP", "envelope_ok", "append_provenance_ok", "derive_plain"]

DEEP = MAX_DEPTH - 8
"""A node or header nesting more than this may push an equal captured request past JSON-7's limit."""

_SURFACE = frozenset(SURFACE_TYPES)
_KNOWN = frozenset(KNOWN_TYPES)
_SPEC_ONLY = frozenset((REQUEST_HEADER, LEGACY_HEADER_DELTA, LEGACY_MODE_SET))


def envelope_ok(event: PlainEvent) -> bool:
    """Return True only if ``check_event`` and ``check_header_event`` find nothing (LOG-5, LOG-6, LOG-11, LOG-13..15)."""
    kind, data, seq, time = event.type, event.data, event.seq, event.time
    if kind in _SPEC_ONLY or type(seq) is not int or type(time) is not int or not (0 <= seq <= MAX_SAFE_INTEGER and 0 <= time <= MAX_SAFE_INTEGER):
        return False  # data is lossless by construction: the fast lane's hooks, or thawed from a spec event
    if kind in _SURFACE:
        if event.surface_op is None or type(data) is not dict or type(data.get("content")) is not list:
            return False
        if kind == TOOL_RESULT:
            return type(data.get("callId")) is str and type(data.get("isError")) is bool
        return kind != ASSISTANT_MESSAGE or type(data.get("provenance")) is dict
    if event.surface_op is not None or event.source_event_seqs is not None:
        return False
    if kind in _KNOWN and type(data) is not dict:
        return False
    if kind == TURN_END and type(data) is dict:
        reason = data.get("reason")
        return not (type(reason) is dict and reason.get("kind") == "aborted" and len(reason) != 1)
    return True


def append_provenance_ok(event: PlainEvent) -> bool:
    """Return True only if an append's ``sourceEventSeqs`` keep SURF-7 (reader-checked: safe integers)."""
    sources = event.source_event_seqs
    if sources is None:
        return True
    return (bool(sources) or event.type == ASSISTANT_MESSAGE) and len(set(sources)) == len(sources) and max(sources, default=-1) < event.seq


def derive_plain(event: PlainEvent) -> dict[str, object] | None:
    """Return the plain message a history node projects to, or None (DER-2, DER-3, DER-4, DER-5)."""
    kind = event.type
    if kind == USER_MESSAGE or kind == STEERING_MESSAGE:
        return {"role": "user", "content": event.field("content")}
    if kind == ASSISTANT_MESSAGE:
        content = event.field("content")
        if content == []:
            return None
        return {"role": "assistant", "content": content, "provenance": event.field("provenance")}
    if kind == TOOL_RESULT:
        block = {"type": "tool-result", "toolCallId": event.field("callId"), "content": event.field("content"), "isError": event.field("isError")}
        return {"role": "user", "content": [block]}
    return None
