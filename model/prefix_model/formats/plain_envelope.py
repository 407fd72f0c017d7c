"""The in-memory reader's fastest lane: one event line decoded by msgspec straight into its envelope.

A screen and a decoder only, never a rule of its own: ``envelope_event`` returns the event when
msgspec reads the line as a whole envelope (no unknown member, seq and time safe integers, a
surface op and source seqs as ``plain_event`` takes them) and the numbers are ones it keeps
exactly — the byte screen of ``plain_json`` finds no long digit run and no ``-0``, its float hook
no exponent, overflow or ``-0`` (JSON-1..3) — within JSON-7's depth. Anything else returns None
and the caller takes ``plain_loads`` and then the spec's reader. Its contract ties each event it
returns to the spec's ``parse_json_line`` and ``parse_event``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

from prefix_model.conformance.plain import PlainEvent, to_event
from prefix_model.core.contracts import ENABLED, Rejection, ensure
from prefix_model.core.events import Event
from prefix_model.core.json_values import MAX_DEPTH, MAX_SAFE_INTEGER, json_text
from prefix_model.formats.event_lines import event_to_json, parse_event, parse_json_line
from prefix_model.formats.plain_events import surface_op
from prefix_model.formats.plain_json import NotPlain, float_hook, needs_int_hook

__all__ = ["envelope_event", "envelope_events"]

_Safe = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    type: str
    seq: _Safe
    time: _Safe
    data: Any
    surfaceOp: Any = msgspec.UNSET  # noqa: N815  (the envelope's member name)
    sourceEventSeqs: list[_Safe] | msgspec.UnsetType = msgspec.UNSET  # noqa: N815


_decoder = msgspec.json.Decoder(_Envelope, float_hook=float_hook)
_decode, _decode_lines = _decoder.decode, _decoder.decode_lines
_new = tuple.__new__


def _spec_reads(raw: bytes, event: PlainEvent) -> bool:
    """Return whether the spec's reader reads ``raw`` as ``event``."""
    value = parse_json_line(raw.decode("utf-8"))
    if isinstance(value, Rejection):
        return False
    spec = parse_event(value)
    return isinstance(spec, Event) and json_text(event_to_json(spec)) == json_text(event_to_json(to_event(event)))


def _bound(raw: bytes) -> int | None:
    """A compact object line's nesting bound, at most JSON-7's; None for a line with spaces around, or one that may nest deeper."""
    if raw[:1] != b"{" or raw[-1:] != b"}":
        return None
    bound = len(raw) // 2 if len(raw) <= MAX_DEPTH else raw.count(b"[") + raw.count(b"{")
    return None if bound > MAX_DEPTH else bound


def _event(envelope: _Envelope, bound: int) -> PlainEvent | None:
    op = envelope.surfaceOp
    if op is msgspec.UNSET:
        op = None
    elif type(op) is not str and (op := surface_op(op)) is None:
        return None
    seqs = envelope.sourceEventSeqs
    sources = None if seqs is msgspec.UNSET else tuple(seqs)
    return _new(PlainEvent, (envelope.type, envelope.seq, envelope.time, envelope.data, op, sources, bound, None))


@ensure(
    lambda raw, result: result is None or _spec_reads(raw, result),
    "an event line the msgspec lane takes is one the spec's reader reads to the same event",
    enabled=ENABLED,
)
def envelope_event(raw: bytes) -> PlainEvent | None:
    """Return the event of a compact envelope line when msgspec reads it exactly; else None (ask the slower lanes)."""
    bound = _bound(raw)
    if bound is None or needs_int_hook(raw):  # spaces around, deep, or an integer to look at
        return None
    try:
        envelope = _decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, NotPlain, RecursionError):  # not UTF-8: msgspec raises the codec's error
        return None
    return _event(envelope, bound)


@ensure(
    lambda lines, result: result is None or result == [envelope_event(raw) for raw in lines],
    "a run of lines the msgspec lane takes at once is read line by line to the same events",
    enabled=ENABLED,
)
def envelope_events(lines: Sequence[bytes]) -> list[PlainEvent] | None:
    """Return the events of ``lines`` when ``envelope_event`` takes every one of them, read in one call; else None.

    One decoder call and one byte screen for the run, not one per line (most of the cost of a short line).
    Every line begins with ``{`` and ends with ``}`` and the decoder finds as many values as lines,
    so each value is its line's: a value that ran into the next line would have to end before a
    ``{`` where a value cannot begin, and a line holding two values would leave another none. The
    screen finds a long digit run or a ``-0`` in the run when it finds one in a line (a line's
    neighbours are a newline, like its ends).
    """
    block = b"\n".join(lines)
    if needs_int_hook(block):
        return None
    try:
        envelopes = _decode_lines(block)
    except (msgspec.DecodeError, UnicodeDecodeError, NotPlain, RecursionError):
        return None
    if len(envelopes) != len(lines):
        return None
    events = []
    for raw, envelope in zip(lines, envelopes):
        bound = _bound(raw)
        event = None if bound is None else _event(envelope, bound)
        if event is None:
            return None
        events.append(event)
    return events
