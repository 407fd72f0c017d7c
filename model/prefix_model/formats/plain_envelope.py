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

from typing import Annotated, Any

import msgspec

from prefix_model.formats.plain import PlainEvent, to_event
from prefix_model.core.contracts import ENABLED, Rejection, ensure
from prefix_model.core.events import Event
from prefix_model.core.json_values import MAX_DEPTH, MAX_SAFE_INTEGER, json_text
from prefix_model.formats.event_lines import event_to_json, parse_event, parse_json_line
from prefix_model.formats.plain_events import surface_op
from prefix_model.formats.plain_json import NotPlain, float_hook, needs_int_hook

__all__ = ["envelope_event"]

_Safe = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    type: str
    seq: _Safe
    time: _Safe
    data: Any
    surfaceOp: Any = msgspec.UNSET  # noqa: N815  (the envelope's member name)
    sourceEventSeqs: list[_Safe] | msgspec.UnsetType = msgspec.UNSET  # noqa: N815


_decode = msgspec.json.Decoder(_Envelope, float_hook=float_hook).decode
_new = tuple.__new__


def _spec_reads(raw: bytes, event: PlainEvent) -> bool:
    """Return whether the spec's reader reads ``raw`` as ``event``."""
    value = parse_json_line(raw.decode("utf-8"))
    if isinstance(value, Rejection):
        return False
    spec = parse_event(value)
    return isinstance(spec, Event) and json_text(event_to_json(spec)) == json_text(event_to_json(to_event(event)))


@ensure(
    lambda raw, result: result is None or _spec_reads(raw, result),
    "an event line the msgspec lane takes is one the spec's reader reads to the same event",
    enabled=ENABLED,
)
def envelope_event(raw: bytes) -> PlainEvent | None:
    """Return the event of a compact envelope line when msgspec reads it exactly; else None (ask the slower lanes)."""
    if raw[:1] != b"{" or raw[-1:] != b"}" or needs_int_hook(raw):  # spaces around, or an integer to look at
        return None
    bound = len(raw) // 2 if len(raw) <= MAX_DEPTH else raw.count(b"[") + raw.count(b"{")
    if bound > MAX_DEPTH:
        return None
    try:
        envelope = _decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, NotPlain, RecursionError):  # not UTF-8: msgspec raises the codec's error
        return None
    op = envelope.surfaceOp
    if op is msgspec.UNSET:
        op = None
    elif type(op) is not str and (op := surface_op(op)) is None:
        return None
    seqs = envelope.sourceEventSeqs
    sources = None if seqs is msgspec.UNSET else tuple(seqs)
    return _new(PlainEvent, (envelope.type, envelope.seq, envelope.time, envelope.data, op, sources, bound, None))
