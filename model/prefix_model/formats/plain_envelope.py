"""The in-memory reader's fastest lane: event lines decoded by msgspec straight into their envelopes, a block at a time.

A screen and a decoder only, never a rule of its own: ``envelope_events`` returns the events when
msgspec reads each line as a whole envelope (no unknown member, seq and time safe integers, a
surface op and source seqs as ``plain_event`` takes them) and the numbers are ones it keeps
exactly — the byte screen of ``plain_json`` finds no long digit run and no ``-0``, its float hook
no exponent, overflow or ``-0`` (JSON-1..3) — within JSON-7's depth. Anything else returns None
and the caller takes ``plain_loads`` and then the spec's reader, line by line. Its contract ties each
event it returns to the spec's ``parse_json_line`` and ``parse_event``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

from prefix_model.formats.plain import PlainEvent, to_event
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
    sourceEventSeqs: tuple[_Safe, ...] | msgspec.UnsetType = msgspec.UNSET  # noqa: N815


_decode_lines = msgspec.json.Decoder(_Envelope, float_hook=float_hook).decode_lines
_new = tuple.__new__
_UNSET = msgspec.UNSET


def _spec_reads(raw: bytes, event: PlainEvent) -> bool:
    """Return whether the spec's reader reads ``raw`` as ``event``."""
    value = parse_json_line(raw.decode("utf-8"))
    if isinstance(value, Rejection):
        return False
    spec = parse_event(value)
    return isinstance(spec, Event) and json_text(event_to_json(spec)) == json_text(event_to_json(to_event(event)))


@ensure(
    lambda lines, result: result is None or (len(result) == len(lines) and all(_spec_reads(raw, event) for raw, event in zip(lines, result))),
    "each event line the msgspec lane takes is one the spec's reader reads to the same event",
    enabled=ENABLED,
)
def envelope_events(lines: Sequence[bytes]) -> list[PlainEvent] | None:
    """Return the events of compact envelope lines when msgspec reads every one of them exactly; else None (ask the slower lanes).

    One decoder call and one byte screen for all the lines (a block of the file), not one per
    line: most of the cost of a short line. Every line begins with ``{`` and ends with ``}`` and
    the decoder finds as many values as lines, so each value is its line's: a value that ran into
    the next line would have to go on at a ``{`` where no value can, and a line holding two values
    would leave another none. The screen finds a long digit run or a ``-0`` in the lines where it
    finds one in a line (a line's neighbours are newlines, like its ends).
    """
    block = b"\n".join(lines)
    if needs_int_hook(block):  # an integer to look at
        return None
    try:
        envelopes = _decode_lines(block)
    except (msgspec.DecodeError, UnicodeDecodeError, NotPlain, RecursionError):  # not UTF-8: msgspec raises the codec's error
        return None
    if len(envelopes) != len(lines):
        return None
    events = []
    for raw, envelope in zip(lines, envelopes):
        if raw[:1] != b"{" or raw[-1:] != b"}":  # spaces around: not the compact form
            return None
        bound = len(raw) // 2 if len(raw) <= MAX_DEPTH else raw.count(b"[") + raw.count(b"{")
        if bound > MAX_DEPTH:
            return None
        op = envelope.surfaceOp
        if op is _UNSET:
            op = None
        elif type(op) is not str and (op := surface_op(op)) is None:
            return None
        sources = envelope.sourceEventSeqs
        events.append(_new(PlainEvent, (envelope.type, envelope.seq, envelope.time, envelope.data, op, None if sources is _UNSET else sources, bound, None)))
    return events


def envelope_event(raw: bytes) -> PlainEvent | None:
    """Return the event of one compact envelope line when msgspec reads it exactly (``envelope_events``); else None."""
    events = envelope_events((raw,))
    return None if events is None else events[0]
