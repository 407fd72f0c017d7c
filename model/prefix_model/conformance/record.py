"""Spec §5, §11 (CMP-1, HDR-9, HDR-15, PFX-3, PFX-6) — the fold's record arms: what the record rule leaves in the log.

A request/header snapshot is folded into the header in force (wholesale, as ``fold_request_header``
takes it) and judged against the one before it and its instance's anchor; one written between
compact/start and compact/end breaks CMP-1. The header in force is also what every later request
is compared with (``conformance.reconstruction``): its fields' compact texts are written here once
per header (``Expectation``).
"""

from __future__ import annotations

from prefix_model.formats.plain import PlainEvent, plain_text, to_event
from prefix_model.conformance.screens import DEEP
from prefix_model.conformance.state import Expectation, FoldState
from prefix_model.core.events import Event
from prefix_model.core.headers import CHANGE, INITIAL, EpochHeader, canonical_header, check_header_event, header_equals, header_of, is_canonical_header
from prefix_model.core.json_values import json_text, thaw
from prefix_model.core.requests import build_request, request_to_json

__all__ = ["compaction_starts", "compaction_ends", "header"]


# no contract: an arm of the fold; it only notes that a compaction is open (CMP-1 is judged by ``header``)
def compaction_starts(state: FoldState, line: int, event: PlainEvent) -> None:
    """Note that a compaction is open: a snapshot until its compact/end breaks CMP-1."""
    state.compacting = True


# no contract: an arm of the fold; it only notes that no compaction is open
def compaction_ends(state: FoldState, line: int, event: PlainEvent) -> None:
    """Note that the compaction closed."""
    state.compacting = False


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def header(state: FoldState, line: int, event: PlainEvent) -> None:
    """CMP-1, then a snapshot the envelope accepts (HDR-*: ``check_header_event``) folded and judged."""
    if state.compacting:
        state.find("CMP-1", "a request/header was written during compaction", event, line)
    frozen = to_event(event)
    if check_header_event(frozen) is None:
        _record(state, line, event, frozen)


def _record(state: FoldState, line: int, event: PlainEvent, frozen: Event) -> None:
    """HDR-9, HDR-15, PFX-3, PFX-6: what the record rule leaves in the log."""
    written = header_of(frozen)
    header = canonical_header(written)
    reason = frozen.field("reason")
    if not is_canonical_header(written):  # HDR-3's predicate: an empty field written where absence is canonical
        state.find("PFX-6", "the snapshot writes an empty system, tools or messagePrefix", event, line)
    if (reason == INITIAL) != (state.header is None):
        state.find("HDR-9", f"reason {json_text(reason)} with {'no' if state.header is None else 'a'} header earlier in the log", event, line)
    prefix = json_text(header.message_prefix or ())
    if reason == CHANGE:
        if state.header is not None and header_equals(state.header, header):
            state.find("HDR-15", "a change snapshot equal to the header in force", event, line)
        if state.anchor_prefix is not None and prefix != state.anchor_prefix:
            state.find("PFX-3", "a change snapshot carries another prefix than its instance's anchor", event, line,
                       path="/messagePrefix", expected=state.anchor_value, actual=header.message_prefix or ())  # fmt: skip
    else:
        state.anchor_prefix, state.anchor_value, state.anchor_seq = prefix, header.message_prefix or (), event.seq
        state.instances += 1
        state.previous.clear()  # no later step belongs to an earlier instance: keep one request, not one per instance
    state.header, state.header_seq = header, event.seq
    state.expected = _expectation(header, event.depth)
    if state.open_step is not None:
        state.open_step.header_seen = True


def _expectation(header: EpochHeader, depth: int) -> Expectation:
    fields = {k: plain_text(thaw(v)) for k, v in request_to_json(build_request(header, ())).items() if k != "messages"}
    items = [thaw(m) for m in header.message_prefix or ()]
    prefix = "".join(plain_text(m) + "," for m in items)
    return Expectation(header, fields, prefix, items, depth <= DEEP, frozenset(fields) | {"messages"})
