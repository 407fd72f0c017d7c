"""Spec §8 — the harness's in-memory event lines: one JSON event object per line, both ways, as values.

Reading mirrors ``JSON.parse`` (duplicate keys: the last value wins at the first key's place;
``-0`` stays negative zero and is then rejected, FMT-4); ``parse_event`` is the envelope's rules.
Writing puts the envelope keys in the order the harness writes them (type, seq, time, data,
sourceEventSeqs, surfaceOp) and every value in ``JSON.stringify`` form, so a harness-written line
reads and writes back byte for byte (FMT-3). Files are read at the edge (``edge/formats``).
"""

from __future__ import annotations

import json

from prefix_model.core.contracts import RejectedError, Rejection
from prefix_model.core.events import Event, Replace, SurfaceOp, is_safe_seq
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.formats.rules import MAX_LINE_BYTES, not_json, too_deep

__all__ = ["ENVELOPE_KEYS", "MAX_LINE_BYTES", "json_int", "parse_json_line", "parse_event", "event_to_json", "event_to_line"]

ENVELOPE_KEYS = ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs")


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_PAST_DOUBLES = 10**309  # an integer no double holds (the largest is below 1.8 * 10^308)


def json_int(text: str) -> int:
    """Return the integer a JSON integer token spells, or a stand-in of its sign past every double.

    ``int()`` refuses a token of more digits than ``sys.get_int_max_str_digits()`` (4300 by
    default). ``JSON.parse`` reads such a token, as any of more than 309 digits, as ±Infinity;
    the stand-in ±10^309 is past every double too, so the lossless rule rejects it as it rejects a
    400-digit integer (JSON-1), and a reading that only looks at types sees a number.
    """
    try:
        return int(text)
    except ValueError:
        return -_PAST_DOUBLES if text.startswith("-") else _PAST_DOUBLES


def _parse_int(text: str) -> int | float:
    # JSON.parse("-0") is negative zero, which the lossless rule then rejects (JSON-2).
    return -0.0 if text == "-0" else json_int(text)


def parse_json_line(text: str) -> JsonValue | Rejection:
    """Return the frozen JSON value of one line as ``JSON.parse`` reads it, or why it cannot be."""
    try:
        raw = json.loads(text, object_pairs_hook=dict, parse_constant=_reject_constant, parse_int=_parse_int)
        return freeze(raw)
    except RejectedError as error:
        return error.rejection
    except RecursionError:
        return too_deep()
    except ValueError as error:
        return not_json(str(error))


def _surface_op(value: JsonValue) -> SurfaceOp | Rejection:
    if isinstance(value, str):
        return value  # an unknown string is kept and rejected by SURF-3 in context
    if isinstance(value, FrozenMap) and set(value) == {"op", "start", "end"} and value["op"] == "replace":
        start, end = value["start"], value["end"]
        if is_safe_seq(start) and is_safe_seq(end):
            assert isinstance(start, int) and isinstance(end, int)
            return Replace(start, end)
    return Rejection("SURF-3", f"invalid surfaceOp {json_text(value)}")


def _source_seqs(value: JsonValue) -> tuple[int, ...] | Rejection:
    if not isinstance(value, tuple):
        return Rejection("SURF-7", "sourceEventSeqs must be an array")
    if not all(is_safe_seq(s) for s in value):
        return Rejection("SURF-7", "sourceEventSeqs must hold non-negative safe integers")
    return tuple(s for s in value if isinstance(s, int))


def parse_event(value: JsonValue) -> Event | Rejection:
    """Return the event a JSON envelope spells, or the envelope rule it breaks (LOG-1, LOG-2, LOG-3)."""
    if not isinstance(value, FrozenMap):
        return Rejection("LOG-1", "an event line must be a JSON object")
    extra = [k for k in value if k not in ENVELOPE_KEYS]
    if extra:
        return Rejection("LOG-1", f"unknown envelope key {extra[0]!r}")
    kind, seq, time = value.get("type"), value.get("seq"), value.get("time")
    if not isinstance(kind, str):
        return Rejection("LOG-1", "type must be a string")
    if "data" not in value:
        return Rejection("LOG-1", "data is missing")
    if not is_safe_seq(seq):
        return Rejection("LOG-2", f"seq {json_text(seq)} is not a non-negative safe integer")
    if not is_safe_seq(time):
        return Rejection("LOG-3", f"time {json_text(time)} is not a non-negative safe integer")
    assert isinstance(seq, int) and isinstance(time, int)
    op = _surface_op(value["surfaceOp"]) if "surfaceOp" in value else None
    sources = _source_seqs(value["sourceEventSeqs"]) if "sourceEventSeqs" in value else None
    if isinstance(op, Rejection):
        return op
    if isinstance(sources, Rejection):
        return sources
    return Event(kind, seq, time, value["data"], op, sources)


def event_to_json(event: Event) -> FrozenMap:
    """Return the event's JSON envelope in the harness's key order (FMT-3)."""
    fields: dict[str, JsonValue] = {"type": event.type, "seq": event.seq, "time": event.time, "data": event.data}
    if event.source_event_seqs is not None:
        fields["sourceEventSeqs"] = event.source_event_seqs
    if isinstance(event.surface_op, Replace):
        fields["surfaceOp"] = FrozenMap({"op": "replace", "start": event.surface_op.start, "end": event.surface_op.end})
    elif event.surface_op is not None:
        fields["surfaceOp"] = event.surface_op
    return FrozenMap(fields)


def event_to_line(event: Event) -> str:
    """Return the event as one harness log line, without the newline (FMT-3)."""
    return json_text(event_to_json(event))
