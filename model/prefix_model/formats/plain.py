"""Spec §8 — the conformance fold's event form: the envelope of §2 over a plain (unfrozen) ``data``.

``PlainEvent`` mirrors ``core.events.Event`` field for field; ``data`` is a plain JSON value
(dicts, lists, scalars) and ``depth`` bounds its nesting. The readers build them from lines
(``edge.formats.plain_events``) or from spec events (``from_event``); ``to_event`` freezes one
back when a spec function must judge it. ``plain_text`` is the compact text two plain values are
compared by.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import NamedTuple

import msgspec

from prefix_model.core.contracts import ENABLED, RejectedError, ensure, require  # RejectedError: to_event's ``:raises:`` (CrossHair reads it here)
from prefix_model.core.events import Event, SurfaceOp
from prefix_model.core.json_values import MAX_DEPTH, JsonValue, freeze, is_json_value, json_text, thaw

__all__ = ["PlainEvent", "from_event", "to_event", "plain_text", "depth", "Spans", "Known"]


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
    spec: tuple[Event, object] | None = None  # (the spec event, its thawed data) of ``from_event``: freezing again would rebuild it

    # no contract: ``Event.field`` over a plain ``data``, its body one expression (a contract would restate it)
    def field(self, name: str) -> object:
        """Return ``data[name]``, or ``None`` when data is not an object or lacks the key."""
        data = self.data
        return data.get(name) if type(data) is dict else None


_json_text: Callable[[object], str] = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_msgspec_text = msgspec.json.Encoder().encode


@ensure(lambda value, result: json.loads(result) == value, "JSON-1: the text reads back as the value (equal texts, equal values)", enabled=ENABLED)
def plain_text(value: object) -> str:
    """The compact text of a plain value (finite numbers: the readers' hooks let no other in); equal texts mean equal JSON values.

    msgspec writes it six times faster than the json module (the fold writes every node's message
    once); a string with a lone surrogate, which UTF-8 cannot hold, is written by the json module,
    whose text then holds that surrogate — text msgspec never writes, so the two never collide.
    Either way the text is compared, never judged: a text that is not the capture's own sends
    the comparison to the exact path.
    """
    try:
        return _msgspec_text(value).decode()
    except UnicodeEncodeError:
        return _json_text(value)


@ensure(lambda value, result: (result == 0) == (not isinstance(value, (dict, list))), "JSON-7: only an array or object nests", enabled=ENABLED)
def depth(value: object) -> int:
    """Return how many arrays and objects ``value`` nests (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


Spans = dict[str, tuple[int, int]]
"""Where each member's value sits in the line's text: ``text[start:end]`` (a compact line's own text)."""

Known = tuple[str, list[object]]
"""A guess at a ``messages`` array: a plain list, and its compact text without the closing bracket
(``plain_text(items)[:-1]``: ``[`` and the elements)."""


def _same_envelope(event: Event, plain: PlainEvent) -> bool:
    return (plain.type, plain.seq, plain.time, plain.surface_op, plain.source_event_seqs) == (
        event.type, event.seq, event.time, event.surface_op, event.source_event_seqs)  # fmt: skip


@require(lambda event: is_json_value(event.data), "JSON-1: a spec event's data is a JSON value", enabled=ENABLED)
@ensure(lambda event, result: _same_envelope(event, result), "LOG-1: the plain form keeps the event's envelope", enabled=ENABLED)
@ensure(lambda event, result: json_text(freeze(result.data)) == json_text(event.data), "JSON-4: its data freezes back to the event's, key order included", enabled=ENABLED)
def from_event(event: Event) -> PlainEvent:
    """Return the plain form of a spec event (its data thawed)."""
    data = thaw(event.data)
    return PlainEvent(event.type, event.seq, event.time, data, event.surface_op, event.source_event_seqs, 1 + depth(data), (event, data))


def _unchanged(event: PlainEvent, spec: Event, data: object) -> bool:
    """Return whether ``event`` is still what ``from_event(spec)`` made, not a ``_replace``-d copy (its data: the very object)."""
    return (event.data is data and event.type == spec.type and event.seq == spec.seq and event.time == spec.time
            and event.surface_op == spec.surface_op and event.source_event_seqs == spec.source_event_seqs)  # fmt: skip


@ensure(lambda event, result: _same_envelope(result, event), "LOG-1: the spec event keeps the plain one's envelope", enabled=ENABLED)
@ensure(lambda event, result: json_text(freeze(event.data)) == json_text(result.data), "JSON-4: its data is the plain data frozen", enabled=ENABLED)
def to_event(event: PlainEvent) -> Event:
    """Return the spec event of a plain one (its data frozen, keys in JavaScript order).

    :raises RejectedError: when the data is not lossless JSON (``freeze``)
    """
    if event.spec is not None and _unchanged(event, *event.spec):
        return event.spec[0]
    data: JsonValue = freeze(event.data)
    return Event(event.type, event.seq, event.time, data, event.surface_op, event.source_event_seqs)
