"""The fast lane's event reader: a decoded line to the conformance fold's ``PlainEvent``.

``plain_event`` accepts only an envelope that ``events_jsonl.parse_event`` accepts unchanged;
for anything else it returns None and the caller takes the spec's reader, whose ``Event``
converts with ``formats.plain.from_event``.
"""

from __future__ import annotations

from prefix_model.formats.plain import PlainEvent, to_event
from prefix_model.core.contracts import ENABLED, ensure
from prefix_model.core.events import Event, Replace, SurfaceOp
from prefix_model.core.json_values import MAX_SAFE_INTEGER, freeze, json_text
from prefix_model.formats.event_lines import ENVELOPE_KEYS, event_to_json, parse_event

__all__ = ["plain_event", "surface_op"]

_REPLACE_KEYS = {"op", "start", "end"}
_INT = {int}
_ENVELOPE = frozenset(ENVELOPE_KEYS)


_new = tuple.__new__  # a named tuple's own __new__ is a Python function: one call more per line


def _safe(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def surface_op(value: object) -> SurfaceOp | None:
    """Return the surface op a plain ``surfaceOp`` member spells as ``parse_event`` takes it as is, else None."""
    if type(value) is str:
        return value
    if type(value) is dict and value.keys() == _REPLACE_KEYS and value["op"] == "replace" and _safe(value["start"]) and _safe(value["end"]):
        return Replace(value["start"], value["end"])
    return None


def _spec_parses(value: object, event: PlainEvent) -> bool:
    """Return whether the spec's ``parse_event`` reads the envelope ``value`` as ``event``."""
    spec = parse_event(freeze(value))
    return isinstance(spec, Event) and json_text(event_to_json(spec)) == json_text(event_to_json(to_event(event)))


@ensure(
    lambda value, result: result is None or _spec_parses(value, result),
    "an envelope the plain lane takes is one parse_event reads to the same event",
    enabled=ENABLED,
)
def plain_event(value: object, depth: int) -> PlainEvent | None:
    """Return the event a plain envelope spells when the spec's ``parse_event`` takes it as is, else None."""
    if type(value) is not dict or not value.keys() <= _ENVELOPE:
        return None
    try:
        kind, seq, time, data = value["type"], value["seq"], value["time"], value["data"]
    except KeyError:
        return None
    if type(kind) is not str or type(seq) is not int or type(time) is not int or not (0 <= seq <= MAX_SAFE_INTEGER and 0 <= time <= MAX_SAFE_INTEGER):
        return None
    op: SurfaceOp | None = None
    if "surfaceOp" in value:
        op = value["surfaceOp"]
        if type(op) is not str and (op := surface_op(op)) is None:
            return None
    sources: tuple[int, ...] | None = None
    if "sourceEventSeqs" in value:
        raw = value["sourceEventSeqs"]
        if type(raw) is not list or (raw and not (set(map(type, raw)) == _INT and min(raw) >= 0 and max(raw) <= MAX_SAFE_INTEGER)):
            return None  # (the check in C: this runs for every surface event, over every source seq)
        sources = tuple(raw)
    return _new(PlainEvent, (kind, seq, time, data, op, sources, depth, None))


