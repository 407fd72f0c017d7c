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
from prefix_model.core.events import Event, Replace, check_envelope
from prefix_model.core.surface import check_source_seqs, check_surface_op
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


def _surface_op(value: JsonValue) -> JsonValue | Replace:
    """Return the op a ``surfaceOp`` member spells: a replace as a ``Replace`` of its members as read, any other value as is.

    Only a reading: which ops are valid is SURF-3, stated once in ``core.surface.check_surface_op``.
    """
    if isinstance(value, FrozenMap) and set(value) == {"op", "start", "end"} and value["op"] == "replace":
        start, end = value["start"], value["end"]
        if isinstance(start, int) and isinstance(end, int):
            return Replace(start, end)
    return value


def parse_event(value: JsonValue) -> Event | Rejection:
    """Return the event a JSON envelope spells, or the envelope rule it breaks (LOG-1, LOG-2, LOG-3; SURF-3, SURF-7).

    What is about the JSON form (an object, of the envelope's keys, with ``data``) is judged here;
    the fields are judged by the core's rules as read: ``check_envelope`` (LOG-1..LOG-3),
    ``check_surface_op`` (SURF-3: an op that is no string; a string is judged in context by the
    surface step) and ``check_source_seqs`` (SURF-7).
    """
    if not isinstance(value, FrozenMap):
        return Rejection("LOG-1", "an event line must be a JSON object")
    extra = [k for k in value if k not in ENVELOPE_KEYS]
    if extra:
        return Rejection("LOG-1", f"unknown envelope key {extra[0]!r}")
    if "data" not in value:
        return Rejection("LOG-1", "data is missing")
    op = _surface_op(value["surfaceOp"]) if "surfaceOp" in value else None
    sources = value["sourceEventSeqs"] if "sourceEventSeqs" in value else None
    # The fields as read, typed as the checks below find them: a value that breaks them never leaves this function.
    event = Event(value.get("type"), value.get("seq"), value.get("time"), value["data"], op, sources)  # type: ignore[arg-type]
    found = check_envelope(event)
    if found is None and "surfaceOp" in value and not isinstance(op, str):
        found = check_surface_op(event.type, op)
    if found is None and "sourceEventSeqs" in value:
        found = check_source_seqs(sources)
    return event if found is None else found


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
