"""Spec §8, spec/formats.md — reading any harness log file in one streaming pass, and writing the persisted form.

Two forms exist. The *in-memory* form is one event per line (``events_jsonl``). The *persisted*
form is what the JSONL persistence backend writes as ``session.jsonl`` or ``session.jsonl.zstd``:
a ``{"type": "session", …}`` header line (FMT-10), then event lines verbatim or packed chunk rows
(FMT-8), optionally as concatenated zstd frames (FMT-9), with a tolerated torn tail (FMT-7).

``LogStream(path)`` reads either form, plain or zstd, with memory bounded by the longest line
(``MAX_LINE_BYTES``) plus the longest packed run: it never holds the log. It yields
``(line, event)`` in seq order — ``line`` is the 1-based physical line of the (decompressed) text
that stores the event — and records the header, the form, the encoding and a tolerated torn tail.
Envelope rules (LOG-1..LOG-3, SURF-3, SURF-7), contiguous seqs and the legacy vocabulary
(LOG-7, LOG-8) are checked here, as the harness checks them at load; every other rule of §2 and
§3 is the caller's, over the events (``log.check_append``). Anything unreadable is a
``LogReadError`` naming the file, the line and the rule — never another exception (FMT-2).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from io import BufferedReader
from itertools import chain, count
from operator import attrgetter
from pathlib import Path
from typing import Literal, cast, overload

from prefix_model.conformance import vacuity
from prefix_model.formats.plain import PlainEvent, from_event
from prefix_model.core.contracts import Rejection
from prefix_model.core.events import TURN_END, Event, check_envelope, seq_gap
from prefix_model.core.json_values import FrozenMap, json_text
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.edge.formats.frames import Frames, Line, LineFilter, Run, plain_runs, split_runs, zstd_chunks
from prefix_model.formats import rules
from prefix_model.formats.event_lines import json_int, parse_event, parse_json_line
from prefix_model.formats.plain_envelope import envelope_event, envelope_events
from prefix_model.formats.plain_events import plain_event
from prefix_model.formats.plain_json import NotPlain, plain_loads
from prefix_model.formats.session_lines import (
    LEGACY_TYPES,
    ROW_TYPES,
    ZSTD_MAGIC,
    SessionHeaderLine,
    TornTail,
    expand_chunk_row,
    is_number,
    legacy_rejection,
    parse_header_line,
    plain_row_events,
)

__all__ = ["LogStream", "Unread", "iter_log_events", "MEMORY", "PERSISTED"]

MEMORY, PERSISTED = "memory", "persisted"
_READ_SIZE = 1 << 16
_SPEC_READ = frozenset((*ROW_TYPES, *LEGACY_TYPES))  # lines the in-memory fast loop leaves to the general path
_TYPE, _SEQ = attrgetter("type"), attrgetter("seq")

# --- lines to events ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Hole:
    """A persisted line that ends the readable prefix (FMT-7): unreadable, a malformed row, or a seq gap."""

    reason: str
    is_turn_end: bool = False  # a readable turn/end line with the wrong seq


@dataclass(frozen=True, slots=True)
class Unread:
    """A line a reading that goes on (``plain_events(go_on=True)``) could not make an event of.

    ``final``: nothing after it can be trusted (a seq that goes back collides with events already
    read; a damaged committed region of the persisted form), so the reading ends there.
    """

    rejection: Rejection
    final: bool = False
    early: int | None = None  # lines out of order: the seq of the event read before this line's (its gap's finding becomes this one)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _loose_parse(text: str) -> object:
    """Return ``JSON.parse(text)`` as plain values, or None when it is not JSON (RecursionError when too deep)."""
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=json_int)
    except ValueError:
        return None


class LogStream:
    """One streaming read of a harness log file, in either form, plain or zstd.

    Iterating yields ``(line, event)`` in seq order and fills in, as it goes: ``form`` ('memory' or
    'persisted'; '' before the first line is read), ``compressed``, ``header`` (persisted form),
    ``events_read``, ``torn_tail`` (a tolerated torn tail, FMT-7) and ``finished`` (the whole file
    was read without error). Each iteration starts a fresh pass over the file. An unreadable file
    raises ``LogReadError`` from the iteration — possibly after some events were yielded, which
    then do not form a log.
    """

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = str(path) if name is None else name  # what errors call the file
        self._go_on = False
        self._reset()

    def _reset(self) -> None:
        self.header: SessionHeaderLine | None = None
        self.form = ""
        self.compressed = False
        self.torn_tail: TornTail | None = None
        self.events_read = 0
        # The last gap an event skipped in the in-memory form: (the next seq missing in it, its end — the seq of the event
        # that skipped it —, its start). Lines that fill it in order came out of order; any other seq going back collides.
        self._gap: tuple[int, int, int] | None = None
        self.finished = False
        self._frames = Frames()
        self._only = LineFilter()  # set while the torn-tail rule scans for a turn/end

    def __iter__(self) -> Iterator[tuple[int, Event]]:
        self._reset()
        self._go_on = False
        return cast(Iterator[tuple[int, Event]], self._read(plain=False))

    @overload
    def plain_events(self, go_on: Literal[False] = False) -> Iterator[tuple[int, PlainEvent]]: ...
    @overload
    def plain_events(self, go_on: Literal[True]) -> Iterator[tuple[int, PlainEvent | Unread]]: ...

    def plain_events(self, go_on: bool = False) -> Iterator[tuple[int, PlainEvent]] | Iterator[tuple[int, PlainEvent | Unread]]:
        """Iterate like ``iter(self)``, yielding the checker's ``PlainEvent`` form.

        A line the fast lane reads as is (``plain_json``, ``plain_event``: the common case) is
        never frozen; any other line takes the spec's path, with the same events and errors.
        With ``go_on``, an event line that cannot be read is yielded as ``Unread`` and the reading
        goes on, and a seq past the next one is yielded as it is (the checker reports the gap);
        the file as a whole (its first line, its bytes) is still a ``LogReadError``.
        """
        self._reset()
        self._go_on = go_on
        return cast(Iterator[tuple[int, PlainEvent | Unread]], self._read(plain=True))

    def read_header(self) -> SessionHeaderLine | None:
        """Read only the first line (the first frame of a zstd log): set ``form``, ``compressed`` and
        ``header``, and return the header (None for the in-memory form). Raises ``LogReadError`` like
        iterating does when the first line is unusable; later lines are not read.
        """
        self._reset()
        try:
            with open(self.path, "rb") as handle:
                run = next(self._runs(handle), None)
                first = None if run is None else next(run.lines())
                if first is None:
                    raise self._fail(None, rules.empty_file())
                self._detect_form(first)
        except OSError as error:
            raise self._fail(None, rules.unreadable(error.strerror or str(error))) from None
        return self.header

    def session_id(self) -> str | None:
        """Return the session id the persisted header names (None for the in-memory form); reads only the header."""
        header = self.read_header()
        return None if header is None else header.id

    def _runs(self, handle: BufferedReader) -> Iterator[Run]:
        # Peek, not read: a plain log may come from a pipe; only zstd needs a seekable file.
        self.compressed = handle.peek(len(ZSTD_MAGIC))[: len(ZSTD_MAGIC)] == ZSTD_MAGIC
        if self.compressed:
            return split_runs(zstd_chunks(handle, self.name, self._frames), self.name, self._only)
        return plain_runs(handle, self.name, self._only)

    def _detect_form(self, first: Line) -> None:
        if self._is_header(first):
            self.form = PERSISTED
        elif self.compressed:
            raise self._fail(1, rules.zstd_without_header_frame())
        else:
            self.form = MEMORY

    def _fail(self, line: int | None, rejection: Rejection) -> LogReadError:
        return LogReadError.of(self.name, line, rejection)

    def _read(self, plain: bool) -> Iterator[tuple[int, Event | PlainEvent | Unread]]:
        try:
            with open(self.path, "rb") as handle:
                runs = self._runs(handle)
                run = next(runs, None)
                if run is None:
                    raise self._fail(None, rules.empty_file())
                lines = run.lines()
                first = next(lines)
                self._detect_form(first)
                if self.form == PERSISTED:
                    yield from self._persisted(first, chain(lines, chain.from_iterable(r.lines() for r in runs)), plain)
                else:
                    yield from self._memory(chain((run,), runs), plain)
        except OSError as error:
            raise self._fail(None, rules.unreadable(error.strerror or str(error))) from None
        except RecursionError:  # a hostile line in a scan that does not freeze values
            raise self._fail(None, rules.too_deep()) from None
        self.finished = True

    def _text(self, line: Line) -> str:
        try:
            return line.raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self._fail(line.number, rules.not_utf8(error.reason, error.start)) from None

    def _is_header(self, first: Line) -> bool:
        text = self._text(first)
        try:
            loose = _loose_parse(text)
        except RecursionError:
            raise self._fail(1, rules.too_deep()) from None
        if not (isinstance(loose, dict) and loose.get("type") == "session"):
            return False
        if not first.terminated:
            raise self._fail(1, rules.header_without_newline())
        value = parse_json_line(text)
        header = value if isinstance(value, Rejection) else parse_header_line(value)
        if isinstance(header, Rejection):
            raise self._fail(1, rules.unusable_header(header.reason))
        self.header = header
        return True

    def _emit(self, number: int, event: Event, plain: bool) -> tuple[int, Event | PlainEvent]:
        legacy = legacy_rejection(event)
        if legacy is not None:
            raise self._fail(number, legacy)
        self.events_read += 1
        return number, from_event(event) if plain else event

    def _fast(self, line: Line) -> list[PlainEvent] | None:
        """Return the events a complete persisted line stores when the fast lane reads them as the spec would; else None.

        (The in-memory form's loop reads its lines inline.)
        """
        if not line.terminated:
            return None
        fast = envelope_event(line.raw)
        if fast is not None and fast.type not in _SPEC_READ:
            return [fast] if fast.seq == self.events_read else None
        try:
            value, bound = plain_loads(line.raw)
        except NotPlain:
            return None
        if type(value) is not dict:
            return None
        kind = value.get("type")
        if kind in ROW_TYPES:
            return plain_row_events(value, self.events_read)
        if kind in LEGACY_TYPES:  # legacy vocabulary (LOG-7, LOG-8): judged by the spec's reader
            return None
        event = plain_event(value, bound)
        if event is None or event.seq != self.events_read:
            return None
        return [event]

    # -- the in-memory form: every line an event with the next seq ------------------------------

    def _memory(self, runs: Iterator[Run], plain: bool) -> Iterator[tuple[int, Event | PlainEvent | Unread]]:
        unread, last_unread = 0, 0  # lines in a row that were no event, and the last of them (the fast lane resets nothing)
        for run in runs:
            # The fast lane's commonest case: a block of plain event lines, decoded in one call, all in seq order
            # (checked in C: no Python step per line here); else the block goes line by line.
            read = envelope_events(run.bodies) if plain else None
            if read is not None and _SPEC_READ.isdisjoint(map(_TYPE, read)):
                first = self.events_read
                if list(map(_SEQ, read)) == list(range(first, first + len(read))):
                    self.events_read += len(read)
                    yield from zip(count(run.number + 1), read)
                    continue
            for line in run.lines():
                if plain:
                    # The fast lane's common case, inline (this loop runs once per event): a plain event line,
                    # decoded into its envelope by msgspec, else by the json scanner.
                    fast = envelope_event(line.raw)
                    if fast is not None and fast.seq == self.events_read and fast.type not in _SPEC_READ:
                        self.events_read += 1
                        yield line.number, fast
                        continue
                    try:
                        value, bound = plain_loads(line.raw)
                    except NotPlain:
                        value = None
                    if type(value) is dict and value.get("type") not in _SPEC_READ:
                        fast = plain_event(value, bound)
                        if fast is not None and fast.seq == self.events_read:
                            self.events_read += 1
                            yield line.number, fast
                            continue
                try:
                    event = self._memory_event(line)
                    if event.seq != self.events_read:
                        gap = seq_gap(event.seq, self.events_read)
                        if not self._go_on:
                            raise self._fail(line.number, gap)
                        if event.seq < self.events_read:
                            late = self._late(event.seq)
                            if late is None:  # it collides with an event already read
                                yield line.number, Unread(gap, final=True)
                                return
                            if late[1]:  # the first line of the gap: one finding for the lines out of order
                                yield line.number, Unread(rules.lines_out_of_order(late[0], event.seq), early=late[0])
                            continue  # not folded: its place in the log is taken
                        self._gap = (self.events_read, event.seq, self.events_read)  # the events between are missing, or come later
                        self.events_read = event.seq  # the checker reports the gap
                    item = self._emit(line.number, event, plain)
                except LogReadError as error:
                    if not self._go_on:
                        raise
                    # The next event may take the numbering up where this line left it (the checker resynchronises).
                    yield line.number, Unread(Rejection(error.rule, error.reason))
                    unread, last_unread = unread + 1 if last_unread == line.number - 1 else 1, line.number
                    if unread == vacuity.MAX_UNREAD_RUN:  # a run this long is no damaged log but no log: bounded time and findings
                        yield line.number, Unread(vacuity.unread_run(unread), final=True)
                        return
                    continue
                yield item

    def _late(self, seq: int) -> tuple[int, bool] | None:
        """Return (the seq read early, whether ``seq`` is its gap's first) where ``seq`` fills the last gap in order; else None."""
        gap = self._gap
        if gap is None or seq != gap[0] or seq >= gap[1]:
            return None
        self._gap = (seq + 1, gap[1], gap[2])
        return gap[1], seq == gap[2]

    def _memory_event(self, line: Line) -> Event:
        """Return the event an in-memory line spells (the spec's reader); raise for any other line."""
        text = self._text(line)
        if not text.strip():
            raise self._fail(line.number, rules.empty_line())
        value = parse_json_line(text)
        if isinstance(value, FrozenMap) and value.get("type") in ROW_TYPES:
            raise self._fail(line.number, rules.row_outside_persisted())
        event = value if isinstance(value, Rejection) else parse_event(value)
        if isinstance(event, Rejection):
            raise self._fail(line.number, event)
        return event

    # -- the persisted form: the torn-tail rule (FMT-7) -----------------------------------------

    def _decode(self, line: Line) -> tuple[Event, ...] | _Hole:
        """Return the events a persisted line stores, or the hole it is; raise for an unreadable event."""
        if not line.terminated:
            return _Hole("the final line has no newline (a torn record)")
        try:
            text = line.raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return _Hole(f"not UTF-8 ({error.reason} at byte {error.start})")
        value = parse_json_line(text)
        if isinstance(value, Rejection):
            if rules.is_syntax_error(value):
                return _Hole(value.reason if text.strip() else "empty line")
            raise self._fail(line.number, value)
        expected = self.events_read
        if isinstance(value, FrozenMap) and value.get("type") in ROW_TYPES:
            events = expand_chunk_row(value)
            if isinstance(events, Rejection):
                return _Hole(events.reason)
            if events[0].seq != expected:
                return _Hole(f"seq gap: expected {expected}, the row starts at {events[0].seq}")
            for event in events:
                found = check_envelope(event)  # a member's time is time0 plus the gaps: LOG-3 may fail
                if found is not None:
                    raise self._fail(line.number, Rejection(found.rule, f"packed member seq {event.seq}: {found.reason}"))
            return events
        if not isinstance(value, FrozenMap) or "seq" not in value:
            return _Hole(f"seq gap: expected {expected}, the line has no seq")
        seq = value["seq"]
        if not (is_number(seq) and seq == expected):
            return _Hole(f"seq gap: expected {expected}, got {json_text(seq)}", value.get("type") == TURN_END)
        parsed = parse_event(value)
        if isinstance(parsed, Rejection):
            raise self._fail(line.number, parsed)
        return (parsed,)

    def _seqs_held(self, line: Line) -> int:
        """Return how many seqs from the next one ``line`` held, when its events broke an envelope rule; 0 when it cannot be passed.

        One event line at the next seq held that seq. A packed row that expands (FMT-8) at the
        next seq, but whose members' times break LOG-3, held its members' seqs: the row is read
        again (a rare line), so the next line's seq is checked against the row's end.
        """
        text = line.raw.decode("utf-8", "replace")
        try:
            value = _loose_parse(text)
        except RecursionError:
            return 0
        if not isinstance(value, dict):
            return 0
        if value.get("type") in ROW_TYPES:
            row = parse_json_line(text)
            events = expand_chunk_row(row) if isinstance(row, FrozenMap) else None
            return len(events) if isinstance(events, tuple) and events[0].seq == self.events_read else 0
        return 1 if type(value.get("seq")) is int and value["seq"] == self.events_read else 0

    def _persisted(self, header: Line, lines: Iterator[Line], plain: bool) -> Iterator[tuple[int, Event | PlainEvent | Unread]]:
        last = header.number
        for line in lines:
            fast = self._fast(line) if plain else None
            if fast is not None:
                for member in fast:
                    self.events_read += 1
                    yield line.number, member
                last = line.number
                continue
            try:
                decoded = self._decode(line)
                emitted = None if isinstance(decoded, _Hole) else [self._emit(line.number, event, plain) for event in decoded]
            except LogReadError as error:
                if not self._go_on:
                    raise
                # A line at the next seq whose events break an envelope rule can be passed: it held their seqs (CHK-4).
                held = self._seqs_held(line)
                yield line.number, Unread(Rejection(error.rule, error.reason), final=not held)
                if not held:
                    return
                self.events_read += held
                last = line.number
                continue
            if emitted is None:
                assert isinstance(decoded, _Hole)
                try:
                    self._end_at_hole(line, decoded, lines)
                except LogReadError as error:
                    if not self._go_on:
                        raise
                    yield line.number, Unread(Rejection(error.rule, error.reason), final=True)  # the lines after it were scanned, not read
                return
            yield from emitted
            last = line.number
        if self._frames.torn_at is not None:
            # Every line of the incomplete final frame read cleanly, but the frame itself is torn.
            self.torn_tail = TornTail(last + 1, f"the file ends inside the zstd frame at byte {self._frames.torn_at}")

    def _end_at_hole(self, hole_line: Line, hole: _Hole, rest: Iterator[Line]) -> None:
        """Decide a hole: corruption when a readable turn/end follows it (or is it), else a torn tail."""
        if not hole.is_turn_end:
            self._only.needles = _TURN_END_SPELLINGS
        later = hole_line.number if hole.is_turn_end else _first_turn_end(rest, self.name)
        if later is not None:
            where = "the line itself is" if later == hole_line.number else f"line {later} is"
            raise self._fail(hole_line.number, rules.corrupt_committed_region(hole.reason, where))
        if self.compressed and hole_line.framed:
            raise self._fail(hole_line.number, rules.torn_record_in_frame(hole.reason))
        self.torn_tail = TornTail(hole_line.number, hole.reason)


_TURN_END_SPELLINGS = (b"turn/end", b"\\")  # a line that can spell the type: the literal, or an escape


def _first_turn_end(lines: Iterator[Line], name: str) -> int | None:
    """Return the first complete line that ``JSON.parse`` reads as a ``turn/end`` event, if any.

    Reads as the harness reads (``buffer.toString('utf8')`` replaces bad bytes); a packed row never
    holds a turn/end. Only lines that can spell the type (the literal, or an escape) are parsed.
    """
    for line in lines:
        if not line.terminated or not any(spelling in line.raw for spelling in _TURN_END_SPELLINGS):
            continue
        try:
            value = _loose_parse(line.raw.decode("utf-8", "replace"))
        except RecursionError:
            raise LogReadError.of(name, line.number, rules.too_deep()) from None
        if isinstance(value, dict) and value.get("type") == TURN_END:
            return line.number
    return None


def iter_log_events(path: str | Path) -> Iterator[tuple[int, Event]]:
    """Yield ``(line, event)`` of any harness log file in seq order (see ``LogStream`` for the details)."""
    return iter(LogStream(path))
