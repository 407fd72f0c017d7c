"""Spec §9 (CHK-2) — the fold's screens: "plainly fine", never a verdict of their own.

Each screen answers for the common case only: True means the spec's function finds nothing
(``envelope_ok`` ⇒ ``check_event`` and ``check_header_event`` pass; ``append_provenance_ok`` ⇒
``check_provenance`` passes), False means "ask the spec", which then decides. A rule the fold can
apply to its plain events directly is not screened but asked as is (``derive_event_message`` takes
either form of an event). Each screen states its relation as its contract, so with
contracts on (the test suite) every call is checked against the spec function it shortcuts;
``tests/conformance/test_plain_lane.py`` draws the inputs that probe both directions.
"""

from __future__ import annotations

from prefix_model.formats.plain import PlainEvent, to_event
from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.events import (
    ASSISTANT_MESSAGE,
    KNOWN_TYPES,
    LEGACY_HEADER_DELTA,
    LEGACY_MODE_SET,
    REQUEST_HEADER,
    SURFACE_TYPES,
    TOOL_RESULT,
    TURN_END,
    check_event,
)
from prefix_model.core.headers import check_header_event
from prefix_model.core.json_values import MAX_DEPTH, MAX_SAFE_INTEGER, check_lossless
from prefix_model.core.surface import check_provenance

__all__ = ["DEEP", "envelope_ok", "append_provenance_ok"]

DEEP = MAX_DEPTH - 8
"""A node or header nesting more than this may push an equal captured request past JSON-7's limit."""

_SURFACE = frozenset(SURFACE_TYPES)
_KNOWN = frozenset(KNOWN_TYPES)
_SPEC_ONLY = frozenset((REQUEST_HEADER, LEGACY_HEADER_DELTA, LEGACY_MODE_SET))


def _lossless(event: PlainEvent) -> bool:
    return event.depth <= MAX_DEPTH and check_lossless(event.data) is None


def _spec_accepts(event: PlainEvent) -> bool:
    frozen = to_event(event)
    return check_event(frozen, event.seq) is None and check_header_event(frozen) is None


@require(_lossless, "JSON-3: a screened event's data is lossless JSON (the readers hand over no other)", enabled=ENABLED)
@ensure(lambda event, result: not result or _spec_accepts(event), "CHK-2: a plainly fine envelope is one check_event and check_header_event accept", enabled=ENABLED)
def envelope_ok(event: PlainEvent) -> bool:
    """Return True only if ``check_event`` and ``check_header_event`` find nothing (LOG-5, LOG-6, LOG-11, LOG-13..15)."""
    kind, seq, time, data, op, sources = event[:6]  # one slice, not six attribute reads: a screen of every event
    if kind in _SPEC_ONLY or type(seq) is not int or type(time) is not int or not (0 <= seq <= MAX_SAFE_INTEGER and 0 <= time <= MAX_SAFE_INTEGER):
        return False  # data is lossless by construction: the fast lane's hooks, or thawed from a spec event
    if kind in _SURFACE:
        if op is None or type(data) is not dict or type(data.get("content")) is not list:
            return False
        if kind == TOOL_RESULT:
            return type(data.get("callId")) is str and type(data.get("isError")) is bool
        return kind != ASSISTANT_MESSAGE or type(data.get("provenance")) is dict
    if op is not None or sources is not None:
        return False
    if kind in _KNOWN and type(data) is not dict:
        return False
    if kind == TURN_END and type(data) is dict:
        reason = data.get("reason")
        return not (type(reason) is dict and reason.get("kind") == "aborted" and len(reason) != 1)
    return True


@require(_lossless, "JSON-3: a screened event's data is lossless JSON (the readers hand over no other)", enabled=ENABLED)
@ensure(
    lambda event, result: not result or check_provenance(to_event(event), ()) is None,
    "CHK-2: plainly fine provenance is provenance check_provenance accepts",
    enabled=ENABLED,
)
def append_provenance_ok(event: PlainEvent) -> bool:
    """Return True only if an append's ``sourceEventSeqs`` keep SURF-7 (reader-checked: safe integers)."""
    sources = event.source_event_seqs
    if sources is None:
        return True
    return (bool(sources) or event.type == ASSISTANT_MESSAGE) and len(set(sources)) == len(sources) and max(sources, default=-1) < event.seq
