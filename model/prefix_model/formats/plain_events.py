"""The checker's event form: the envelope of §2 over a plain (unfrozen) ``data`` value.

``PlainEvent`` mirrors ``events.Event`` field for field; ``data`` is the plain value the fast
lane read (``plain_json``), and ``depth`` bounds its nesting. ``plain_event`` accepts only an
envelope that ``events_jsonl.parse_event`` accepts unchanged; for anything else it returns None
and the caller takes the spec's reader, whose ``Event`` converts with ``from_event``.
``to_event`` freezes one back when a spec function must judge it (rare: headers, replacements,
and whatever the fast rules do not vouch for).
"""

from __future__ import annotations

from typing import NamedTuple

from prefix_model.events import Event, Replace, SurfaceOp
from prefix_model.formats.events_jsonl import ENVELOPE_KEYS
from prefix_model.formats.plain_json import depth
from prefix_model.json_values import MAX_DEPTH, MAX_SAFE_INTEGER, JsonValue, freeze, thaw

__all__ = ["PlainEvent", "plain_event", "from_event", "to_event"]

_REPLACE_KEYS = {"op", "start", "end"}
_INT = {int}
_ENVELOPE = frozenset(ENVELOPE_KEYS)


class PlainEvent(NamedTuple):
    """One log event with plain JSON ``data`` (dicts, lists, scalars) and a bound on its nesting.

    A named tuple, not a frozen dataclass: one is built per line, and a tuple builds fastest.
    """

    type: str
    seq: int
    time: int
    data: object
    surface_op: SurfaceOp | None = None
    source_event_seqs: tuple[int, ...] | None = None
    depth: int = MAX_DEPTH

    def field(self, name: str) -> object:
        """Return ``data[name]``, or ``None`` when data is not an object or lacks the key."""
        data = self.data
        return data.get(name) if type(data) is dict else None


_new = tuple.__new__  # a named tuple's own __new__ is a Python function: one call more per line


def _safe(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def _surface_op(value: object) -> SurfaceOp | None:
    if type(value) is str:
        return value
    if type(value) is dict and value.keys() == _REPLACE_KEYS and value["op"] == "replace" and _safe(value["start"]) and _safe(value["end"]):
        return Replace(value["start"], value["end"])
    return None


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
        if type(op) is not str and (op := _surface_op(op)) is None:
            return None
    sources: tuple[int, ...] | None = None
    if "sourceEventSeqs" in value:
        raw = value["sourceEventSeqs"]
        if type(raw) is not list or (raw and not (set(map(type, raw)) == _INT and min(raw) >= 0 and max(raw) <= MAX_SAFE_INTEGER)):
            return None  # (the check in C: this runs for every surface event, over every source seq)
        sources = tuple(raw)
    return _new(PlainEvent, (kind, seq, time, data, op, sources, depth))


def from_event(event: Event) -> PlainEvent:
    """Return the plain form of a spec event (its data thawed)."""
    data = thaw(event.data)
    return PlainEvent(event.type, event.seq, event.time, data, event.surface_op, event.source_event_seqs, 1 + depth(data))


def to_event(event: PlainEvent) -> Event:
    """Return the spec event of a plain one (its data frozen, keys in JavaScript order)."""
    data: JsonValue = freeze(event.data)
    return Event(event.type, event.seq, event.time, data, event.surface_op, event.source_event_seqs)
