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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from io import BufferedReader
from itertools import chain
from pathlib import Path
from typing import IO, NamedTuple, cast

import zstandard

from prefix_model.conformance.plain import PlainEvent, from_event
from prefix_model.core.contracts import Rejection
from prefix_model.core.events import (
    ASSISTANT_CHUNK,
    LEGACY_HEADER_DELTA,
    LEGACY_MODE_SET,
    REQUEST_HEADER,
    TURN_END,
    Event,
    check_event,
    is_safe_seq,
)
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, JsonValue, json_text
from prefix_model.edge.formats.events_jsonl import MAX_LINE_BYTES, LogReadError, event_to_line, parse_event, parse_json_line
from prefix_model.edge.formats.plain_events import plain_event
from prefix_model.edge.formats.plain_json import NotPlain, plain_loads

__all__ = [
    "SessionHeaderLine",
    "TornTail",
    "LogStream",
    "iter_log_events",
    "parse_header_line",
    "header_to_json",
    "header_to_line",
    "pack_chunk_runs",
    "expand_chunk_row",
    "plain_row_events",
    "record_to_line",
    "write_persisted",
    "persisted_frames",
    "zstd_frame",
    "ZSTD_MAGIC",
    "ROW_TYPES",
    "SESSION_FORMAT_VERSION",
]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SESSION_FORMAT_VERSION = 0
ROW_TYPES = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
MIN_RUN = 3  # the harness's format constant: shorter runs stay one event per line
MEMORY, PERSISTED = "memory", "persisted"
_READ_SIZE = 1 << 16
_LEGACY_RULES = ("LOG-7", "LOG-8")
_LEGACY_TYPES = (LEGACY_HEADER_DELTA, LEGACY_MODE_SET, REQUEST_HEADER)
_SPEC_READ = frozenset((*ROW_TYPES, *_LEGACY_TYPES))  # lines the in-memory fast loop leaves to the general path

TEXT_DELTA, REASONING_DELTA, TOOL_CALL_DELTA = "text-delta", "reasoning-delta", "tool-call-delta"
_ROW_OF_KIND = {TEXT_DELTA: "text-chunks", REASONING_DELTA: "reasoning-chunks", TOOL_CALL_DELTA: "tool-call-chunks"}
_KIND_OF_ROW = {row: kind for kind, row in _ROW_OF_KIND.items()}


# --- the header line (FMT-10) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionHeaderLine:
    """The persisted form's first line: the session's immutable metadata (J/format.ts HeaderLine)."""

    version: int
    id: str
    created_at: int
    cwd: str | None = None
    parent_session: str | None = None
    seed_length: int | None = None
    delegation_depth: int = 0


@dataclass(frozen=True, slots=True)
class TornTail:
    """Where the preserved log ends in a tolerated torn tail: the first line not read, and why (FMT-7)."""

    line: int
    reason: str


def _is_number(value: JsonValue) -> bool:
    """Return whether ``value`` is what JavaScript's ``typeof value === 'number'`` accepts."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_safe_integer(value: object) -> bool:
    """Return whether ``value`` passes JavaScript's ``Number.isSafeInteger``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not value.is_integer():
        return False
    return abs(value) <= MAX_SAFE_INTEGER


def _has_keys(value: FrozenMap, *keys: str) -> bool:
    """Return whether ``value`` has exactly ``keys`` (any order) — the harness's ``hasExactKeys``."""
    return len(value) == len(keys) and all(k in value for k in keys)


def parse_header_line(value: JsonValue) -> SessionHeaderLine | Rejection:
    """Return the session header a parsed first line spells, or why it is unusable (FMT-10)."""
    if not isinstance(value, FrozenMap) or value.get("type") != "session":
        return Rejection("FMT-10", 'the first line is not a {"type": "session", …} header')
    version, ident = value.get("version"), value.get("id")
    created, depth = value.get("createdAt"), value.get("delegationDepth")
    if not _is_number(version):
        return Rejection("FMT-10", "header version must be a number")
    if not isinstance(ident, str):
        return Rejection("FMT-10", "header id must be a string")
    if not is_safe_seq(created):
        return Rejection("FMT-10", "header createdAt must be a non-negative safe integer")
    if not is_safe_seq(depth):
        return Rejection("FMT-10", "header delegationDepth must be a non-negative safe integer")
    cwd, parent, seed = value.get("cwd"), value.get("parentSession"), value.get("seedLength")
    if "cwd" in value and not isinstance(cwd, str):
        return Rejection("FMT-10", "header cwd must be a string when present")
    if "parentSession" in value and not isinstance(parent, str):
        return Rejection("FMT-10", "header parentSession must be a string when present")
    if "seedLength" in value and not is_safe_seq(seed):
        return Rejection("FMT-10", "header seedLength must be a non-negative safe integer when present")
    if version != SESSION_FORMAT_VERSION or not isinstance(version, int):
        return Rejection("FMT-10", f"unsupported session format version {json_text(version)} (only {SESSION_FORMAT_VERSION} is read)")
    assert isinstance(created, int) and isinstance(depth, int)
    return SessionHeaderLine(
        version=version,
        id=ident,
        created_at=created,
        cwd=cwd if isinstance(cwd, str) else None,
        parent_session=parent if isinstance(parent, str) else None,
        seed_length=seed if isinstance(seed, int) else None,
        delegation_depth=depth,
    )


def header_to_json(header: SessionHeaderLine) -> FrozenMap:
    """Return the header line's JSON in the harness's key order (J/format.ts toHeaderLine)."""
    fields: dict[str, JsonValue] = {"type": "session", "version": header.version, "id": header.id, "createdAt": header.created_at}
    optional = (("cwd", header.cwd), ("parentSession", header.parent_session), ("seedLength", header.seed_length))
    fields.update((name, value) for name, value in optional if value is not None)
    fields["delegationDepth"] = header.delegation_depth
    return FrozenMap(fields)


def header_to_line(header: SessionHeaderLine) -> str:
    """Return the header as the persisted form's first line, without the newline."""
    return json_text(header_to_json(header))


# --- packed chunk rows (FMT-8) ------------------------------------------------------------------


def _malformed(tag: str, why: str) -> Rejection:
    return Rejection("FMT-8", f"malformed {tag} row: {why}")


def _check_run_data(tag: str, data: FrozenMap, payload_key: str) -> tuple[str, ...] | Rejection:
    if not (_is_number(data["turn"]) and _is_number(data["step"]) and _is_number(data["index"])):
        return _malformed(tag, "turn/step/index must be numbers")
    payload = data[payload_key]
    if not isinstance(payload, tuple) or not payload or not all(isinstance(p, str) for p in payload):
        return _malformed(tag, f"{payload_key} must be a non-empty string array")
    dt = data["dt"]
    if not isinstance(dt, tuple) or not all(_is_safe_integer(gap) for gap in dt):
        return _malformed(tag, "dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        return _malformed(tag, f"dt length {len(dt)} does not match {len(payload)} members")
    return tuple(p for p in payload if isinstance(p, str))


def _check_row(value: FrozenMap, tag: str) -> tuple[FrozenMap, tuple[str, ...]] | Rejection:
    """Return a row's data and members, or the first way it is malformed (S/chunk-rows.ts validateRow)."""
    if not _has_keys(value, "type", "seq0", "time0", "data"):
        return _malformed(tag, "envelope must be exactly {type, seq0, time0, data}")
    seq0, time0, data = value["seq0"], value["time0"], value["data"]
    if not is_safe_seq(seq0):
        return _malformed(tag, "seq0 must be a non-negative safe integer")
    if not _is_safe_integer(time0):
        return _malformed(tag, "time0 must be a safe integer")
    if not isinstance(data, FrozenMap):
        return _malformed(tag, "data must be an object")
    if tag == "tool-call-chunks":
        named = _has_keys(data, "turn", "step", "index", "id", "name", "dt", "args")
        if not named and not _has_keys(data, "turn", "step", "index", "id", "dt", "args"):
            return _malformed(tag, "data must be exactly {turn, step, index, id, name?, dt, args}")
        if not isinstance(data["id"], str) or (named and not isinstance(data["name"], str)):
            return _malformed(tag, "id (and name when present) must be strings")
        members = _check_run_data(tag, data, "args")
    else:
        if not _has_keys(data, "turn", "step", "index", "dt", "texts"):
            return _malformed(tag, "data must be exactly {turn, step, index, dt, texts}")
        members = _check_run_data(tag, data, "texts")
    if isinstance(members, Rejection):
        return members
    assert isinstance(seq0, int) and isinstance(time0, (int, float))
    if not _is_safe_integer(seq0 + len(members) - 1):
        return _malformed(tag, "member seqs must stay safe integers")
    time = time0
    for gap in cast(tuple[int, ...], data["dt"]):
        time += gap
        if not _is_safe_integer(time):
            return _malformed(tag, "member times must stay safe integers")
    return data, members


def _member_chunk(kind: str, data: Mapping[str, object], member: str) -> dict[str, object]:
    """Return the chunk of one member of a packed row: the run's fields, then the member's text (S/chunk-rows.ts)."""
    chunk: dict[str, object] = {"type": kind, "index": data["index"]}
    if kind == TOOL_CALL_DELTA:
        chunk["id"] = data["id"]
        if "name" in data:
            chunk["name"] = data["name"]
        chunk["argumentsDelta"] = member
    else:
        chunk["text"] = member
    return chunk


def expand_chunk_row(value: FrozenMap) -> tuple[Event, ...] | Rejection:
    """Return the ``assistant/chunk`` events a packed row stores, or why the row is malformed (FMT-8)."""
    tag = value.get("type")
    if not isinstance(tag, str) or tag not in ROW_TYPES:
        return Rejection("FMT-8", f"{json_text(tag)} is not a packed row type")
    checked = _check_row(value, tag)
    if isinstance(checked, Rejection):
        return checked
    data, members = checked
    kind = _KIND_OF_ROW[tag]
    seq0, time = cast(int, value["seq0"]), cast(int, value["time0"])
    gaps = cast(tuple[int, ...], data["dt"])
    events: list[Event] = []
    for k, member in enumerate(members):
        if k > 0:
            time += gaps[k - 1]
        chunk = cast(dict[str, JsonValue], _member_chunk(kind, data, member))
        body = FrozenMap({"turn": data["turn"], "step": data["step"], "chunk": FrozenMap(chunk)})
        events.append(Event(ASSISTANT_CHUNK, seq0 + k, int(time), body))
    return tuple(events)


_ROW_ENVELOPE = frozenset(("type", "seq0", "time0", "data"))
_RUN_KEYS = frozenset(("turn", "step", "index", "dt", "texts"))
_CALL_KEYS, _NAMED_CALL_KEYS = frozenset(("turn", "step", "index", "id", "dt", "args")), frozenset(("turn", "step", "index", "id", "name", "dt", "args"))


def _plain_number(value: object) -> bool:
    return type(value) is int or type(value) is float


_new_event = tuple.__new__  # not PlainEvent(...): a named tuple's __new__ is a Python call per member


def plain_row_events(value: dict[str, object], expected_seq: int) -> list[PlainEvent] | None:
    """Return the chunk events of a plain packed row starting at ``expected_seq`` when ``expand_chunk_row``
    would return them unchanged and every member time is valid (LOG-3); else None: the spec's path decides.
    """
    tag, seq0, time0, data = value.get("type"), value.get("seq0"), value.get("time0"), value.get("data")
    if value.keys() != _ROW_ENVELOPE or seq0 != expected_seq or type(seq0) is not int or seq0 < 0 or type(time0) is not int or type(data) is not dict:
        return None
    if tag == "tool-call-chunks":
        named = data.keys() == _NAMED_CALL_KEYS
        if not (named or data.keys() == _CALL_KEYS) or type(data["id"]) is not str or (named and type(data["name"]) is not str):
            return None
        members = data["args"]
    elif tag in ROW_TYPES:
        if data.keys() != _RUN_KEYS:
            return None
        members = data["texts"]
    else:
        return None
    gaps, turn, step, index = data["dt"], data["turn"], data["step"], data["index"]
    if not (_plain_number(turn) and _plain_number(step) and _plain_number(index) and type(members) is list and members and type(gaps) is list):
        return None
    if len(gaps) != len(members) - 1 or not all(type(m) is str for m in members) or not all(type(g) is int for g in gaps):
        return None
    kind = _KIND_OF_ROW[tag]
    events, time = [], time0
    for k, member in enumerate(members):
        if k:
            time += gaps[k - 1]
        if not 0 <= time <= MAX_SAFE_INTEGER:
            return None
        chunk = _member_chunk(kind, data, member)
        events.append(_new_event(PlainEvent, (ASSISTANT_CHUNK, seq0 + k, time, {"turn": turn, "step": step, "chunk": chunk}, None, None, 3)))
    if seq0 + len(members) - 1 > MAX_SAFE_INTEGER or any(abs(g) > MAX_SAFE_INTEGER for g in gaps):
        return None
    return events


def _delta_kind(event: Event) -> str | None:
    """Return the delta kind of an event the packer may pack, else None (S/chunk-rows.ts classify)."""
    if event.type != ASSISTANT_CHUNK or event.surface_op is not None or event.source_event_seqs is not None:
        return None
    if not (_is_safe_integer(event.seq) and event.seq >= 0 and _is_safe_integer(event.time)):
        return None
    data = event.data
    if not isinstance(data, FrozenMap) or not _has_keys(data, "turn", "step", "chunk"):
        return None
    chunk = data["chunk"]
    if not (_is_number(data["turn"]) and _is_number(data["step"])) or not isinstance(chunk, FrozenMap):
        return None
    if not _is_number(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind == TEXT_DELTA or kind == REASONING_DELTA:
        return kind if _has_keys(chunk, "type", "index", "text") and isinstance(chunk["text"], str) else None
    if kind == TOOL_CALL_DELTA:
        shaped = _has_keys(chunk, "type", "index", "id", "argumentsDelta") or (
            _has_keys(chunk, "type", "index", "id", "name", "argumentsDelta") and isinstance(chunk["name"], str)
        )
        return kind if shaped and isinstance(chunk["id"], str) and isinstance(chunk["argumentsDelta"], str) else None
    return None


def _chunk(event: Event) -> FrozenMap:
    return cast(FrozenMap, cast(FrozenMap, event.data)["chunk"])


def _continues(prev: Event, nxt: Event, kind: str) -> bool:
    """Return whether ``nxt`` extends a run ending in ``prev`` (S/chunk-rows.ts continues)."""
    if nxt.seq != prev.seq + 1 or not _is_safe_integer(nxt.time - prev.time):
        return False
    a, b = cast(FrozenMap, prev.data), cast(FrozenMap, nxt.data)
    if a["turn"] != b["turn"] or a["step"] != b["step"] or _chunk(prev)["index"] != _chunk(nxt)["index"]:
        return False
    if kind != TOOL_CALL_DELTA:
        return True
    x, y = _chunk(prev), _chunk(nxt)
    return x["id"] == y["id"] and ("name" in x) == ("name" in y) and x.get("name") == y.get("name")


def _row(kind: str, run: Sequence[Event]) -> FrozenMap:
    """Return the packed row of a run of at least ``MIN_RUN`` uniform delta events (buildRow)."""
    first, data = run[0], cast(FrozenMap, run[0].data)
    chunk = _chunk(first)
    fields: dict[str, JsonValue] = {
        "turn": data["turn"],
        "step": data["step"],
        "index": chunk["index"],
        "dt": tuple(int(run[i + 1].time - run[i].time) for i in range(len(run) - 1)),
    }
    if kind == TOOL_CALL_DELTA:
        fields["id"] = chunk["id"]
        if "name" in chunk:
            fields["name"] = chunk["name"]
        fields["args"] = tuple(_chunk(e)["argumentsDelta"] for e in run)
    else:
        fields["texts"] = tuple(_chunk(e)["text"] for e in run)
    return FrozenMap({"type": _ROW_OF_KIND[kind], "seq0": int(first.seq), "time0": int(first.time), "data": FrozenMap(fields)})


def pack_chunk_runs(events: Iterable[Event]) -> Iterator[Event | FrozenMap]:
    """Yield one batch's storage records: each run of ≥3 packable delta chunks as one row, the rest verbatim (FMT-8)."""
    kind: str | None = None
    run: list[Event] = []
    for event in events:
        k = _delta_kind(event)
        if k is not None and k == kind and run and _continues(run[-1], event, k):
            run.append(event)
            continue
        if kind is not None and len(run) >= MIN_RUN:
            yield _row(kind, run)
        else:
            yield from run
        kind, run = (k, [event]) if k is not None else (None, [])
        if k is None:
            yield event
    if kind is not None and len(run) >= MIN_RUN:
        yield _row(kind, run)
    else:
        yield from run


def record_to_line(record: Event | FrozenMap) -> str:
    """Return one storage record (an event or a packed row) as its line, without the newline."""
    return event_to_line(record) if isinstance(record, Event) else json_text(record)


# --- bytes to lines -----------------------------------------------------------------------------


class _Chunk(NamedTuple):
    data: bytes
    framed: bool  # decoded from a complete zstd frame
    boundary: bool = False  # marks the end of the complete frames (no data)


class _Line(NamedTuple):
    number: int
    raw: bytes
    terminated: bool  # ends in a newline; a final line without one is a torn record
    framed: bool  # its newline was decoded from a complete zstd frame


class _Bounded:
    """A read-only view of ``size`` bytes of ``handle`` from its current position."""

    def __init__(self, handle: IO[bytes], size: int) -> None:
        self._handle, self._left = handle, size

    def read(self, size: int = -1) -> bytes:
        want = self._left if size < 0 else min(size, self._left)
        data = self._handle.read(want)
        self._left -= len(data)
        return data


_new_line = tuple.__new__


_BLOCK = 1 << 16


def _plain_lines(handle: IO[bytes], name: str) -> Iterator[_Line]:
    """Yield the lines of an uncompressed file, never holding more than one bounded line (FMT-5).

    Read in blocks split in C (a readline per line costs twice as much).
    """
    return _split_lines((_Chunk(block, False) for block in iter(partial(handle.read, _BLOCK), b"")), name)


def _frame_end(handle: IO[bytes], start: int, size: int, name: str) -> int | None:
    """Return where the zstd frame at ``start`` ends, or None when the file ends inside it (J/zstd.ts scan)."""

    def take(count: int) -> bytes | None:
        data = handle.read(count)
        return data if len(data) == count else None

    handle.seek(start)
    magic = take(4)
    if magic is None:
        return None
    if magic != ZSTD_MAGIC:
        raise LogReadError(name, None, "FMT-9", f"invalid zstd frame magic at byte {start}")
    descriptor_bytes = take(1)
    if descriptor_bytes is None:
        return None
    descriptor = descriptor_bytes[0]
    if descriptor & 0x18:
        raise LogReadError(name, None, "FMT-9", f"reserved zstd frame-header bit set at byte {start + 4}")
    single_segment = bool(descriptor & 0x20)
    content_size_flag = descriptor >> 6
    dictionary_bytes = (0, 1, 2, 4)[descriptor & 0x03]
    content_size_bytes = (1 if single_segment else 0) if content_size_flag == 0 else 1 << content_size_flag
    offset = start + 5 + (0 if single_segment else 1) + dictionary_bytes + content_size_bytes
    while True:
        if offset + 3 > size:
            return None
        handle.seek(offset)
        block = take(3)
        assert block is not None
        header = int.from_bytes(block, "little")
        block_type = (header >> 1) & 0x03
        if block_type == 3:
            raise LogReadError(name, None, "FMT-9", f"reserved zstd block type at byte {offset}")
        offset += 3 + (1 if block_type == 1 else header >> 3)
        if offset > size:
            return None
        if header & 1:
            break
    if descriptor & 0x04:
        offset += 4
    return offset if offset <= size else None


def _read_frame(handle: IO[bytes], start: int, end: int, name: str, *, complete: bool) -> Iterator[bytes]:
    """Yield the plaintext of the frame in ``[start, end)``; a torn frame yields what decodes, then stops."""
    handle.seek(start)
    reader = zstandard.ZstdDecompressor().stream_reader(
        cast(IO[bytes], _Bounded(handle, end - start)), read_size=_READ_SIZE, read_across_frames=False
    )
    try:
        while data := reader.read(_READ_SIZE):
            yield data
    except zstandard.ZstdError as error:
        if complete:
            raise LogReadError(name, None, "FMT-9", f"zstd frame at byte {start} failed to decode: {error}") from None
        # An incomplete final frame is recovered as far as it decodes (J/index.ts readZstdPrefix).


class _Frames:
    """What a zstd read found out about its frames: where an incomplete final frame starts."""

    __slots__ = ("torn_at",)

    def __init__(self) -> None:
        self.torn_at: int | None = None


def _zstd_chunks(handle: IO[bytes], name: str, frames: _Frames) -> Iterator[_Chunk]:
    """Yield the plaintext of concatenated zstd frames, tagged complete/torn (FMT-9)."""
    size = handle.seek(0, 2)
    start, index = 0, 0
    while start < size:
        end = _frame_end(handle, start, size, name)
        if end is None:
            if index == 0:
                raise LogReadError(name, None, "FMT-9", "the file ends inside its first zstd frame (no complete header frame)")
            frames.torn_at = start
            yield _Chunk(b"", True, boundary=True)
            for data in _read_frame(handle, start, size, name, complete=False):
                yield _Chunk(data, False)
            return
        if index == 0:
            header = b""
            for data in _read_frame(handle, start, end, name, complete=True):
                header += data
                if len(header) > MAX_LINE_BYTES + 1:
                    raise LogReadError(name, 1, "FMT-5", f"line longer than {MAX_LINE_BYTES} bytes")
            if not header.endswith(b"\n") or header.count(b"\n") != 1:
                raise LogReadError(name, None, "FMT-9", "the first zstd frame must hold exactly the session header line")
            yield _Chunk(header, True)
        else:
            for data in _read_frame(handle, start, end, name, complete=True):
                yield _Chunk(data, True)
        start, index = end, index + 1
    yield _Chunk(b"", True, boundary=True)


def _split_lines(chunks: Iterable[_Chunk], name: str) -> Iterator[_Line]:
    """Yield the lines of a byte stream, never holding more than one line (FMT-5 beyond the cap).

    Each chunk is split in C; a line that runs past the bound is refused before more of it is
    held. A line is ``framed`` when its newline came from a complete zstd frame.
    """
    number, pending, pending_size = 0, list[bytes](), 0  # the pieces of a line that spans chunks
    for chunk in chunks:
        if chunk.boundary:
            if pending:
                raise LogReadError(name, number + 1, "FMT-9", "the complete zstd frames end inside a line")
            continue
        data, framed = chunk.data, chunk.framed
        if b"\n" not in data:
            pending.append(data)
            pending_size += len(data)
        else:
            lines = data.split(b"\n")
            if pending:
                lines[0] = b"".join(pending) + lines[0]
            tail = lines.pop()
            for body in lines:
                number += 1
                if len(body) > MAX_LINE_BYTES:
                    raise LogReadError(name, number, "FMT-5", f"line longer than {MAX_LINE_BYTES} bytes")
                yield _new_line(_Line, (number, body, True, framed))
            pending, pending_size = ([tail], len(tail)) if tail else ([], 0)
        if pending_size > MAX_LINE_BYTES:
            raise LogReadError(name, number + 1, "FMT-5", f"line longer than {MAX_LINE_BYTES} bytes")
    if pending:
        yield _new_line(_Line, (number + 1, b"".join(pending), False, False))


# --- lines to events ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Hole:
    """A persisted line that ends the readable prefix (FMT-7): unreadable, a malformed row, or a seq gap."""

    reason: str
    is_turn_end: bool = False  # a readable turn/end line with the wrong seq


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _loose_parse(text: str) -> object:
    """Return ``JSON.parse(text)`` as plain values, or None when it is not JSON (RecursionError when too deep)."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return None


def _legacy(event: Event) -> Rejection | None:
    """Return LOG-7/LOG-8 when ``event`` is of the rejected legacy vocabulary (checked at load, PC:126-142)."""
    if event.type not in _LEGACY_TYPES:
        return None  # only these types can break LOG-7 or LOG-8; the full check is the caller's
    rejection = check_event(event, event.seq)
    return rejection if rejection is not None and rejection.rule in _LEGACY_RULES else None


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
        self._reset()

    def _reset(self) -> None:
        self.header: SessionHeaderLine | None = None
        self.form = ""
        self.compressed = False
        self.torn_tail: TornTail | None = None
        self.events_read = 0
        self.finished = False
        self._frames = _Frames()

    def __iter__(self) -> Iterator[tuple[int, Event]]:
        self._reset()
        return cast(Iterator[tuple[int, Event]], self._read(plain=False))

    def plain_events(self) -> Iterator[tuple[int, PlainEvent]]:
        """Iterate like ``iter(self)``, yielding the checker's ``PlainEvent`` form.

        A line the fast lane reads as is (``plain_json``, ``plain_event``: the common case) is
        never frozen; any other line takes the spec's path, with the same events and errors.
        """
        self._reset()
        return cast(Iterator[tuple[int, PlainEvent]], self._read(plain=True))

    def read_header(self) -> SessionHeaderLine | None:
        """Read only the first line (the first frame of a zstd log): set ``form``, ``compressed`` and
        ``header``, and return the header (None for the in-memory form). Raises ``LogReadError`` like
        iterating does when the first line is unusable; later lines are not read.
        """
        self._reset()
        try:
            with open(self.path, "rb") as handle:
                first = next(self._lines(handle), None)
                if first is None:
                    raise self._fail(None, "FMT-1", "the file is empty: no event and no header")
                self._detect_form(first)
        except OSError as error:
            raise self._fail(None, "FMT-1", error.strerror or str(error)) from None
        return self.header

    def session_id(self) -> str | None:
        """Return the session id the persisted header names (None for the in-memory form); reads only the header."""
        header = self.read_header()
        return None if header is None else header.id

    def _lines(self, handle: BufferedReader) -> Iterator[_Line]:
        # Peek, not read: a plain log may come from a pipe; only zstd needs a seekable file.
        self.compressed = handle.peek(len(ZSTD_MAGIC))[: len(ZSTD_MAGIC)] == ZSTD_MAGIC
        if self.compressed:
            return _split_lines(_zstd_chunks(handle, self.name, self._frames), self.name)
        return _plain_lines(handle, self.name)

    def _detect_form(self, first: _Line) -> None:
        if self._is_header(first):
            self.form = PERSISTED
        elif self.compressed:
            raise self._fail(1, "FMT-9", "a zstd log must begin with a frame holding the session header line")
        else:
            self.form = MEMORY

    def _fail(self, line: int | None, rule: str, reason: str) -> LogReadError:
        return LogReadError(self.name, line, rule, reason)

    def _read(self, plain: bool) -> Iterator[tuple[int, Event | PlainEvent]]:
        try:
            with open(self.path, "rb") as handle:
                lines = self._lines(handle)
                first = next(lines, None)
                if first is None:
                    raise self._fail(None, "FMT-1", "the file is empty: no event and no header")
                self._detect_form(first)
                if self.form == PERSISTED:
                    yield from self._persisted(first, lines, plain)
                else:
                    yield from self._memory(first, lines, plain)
        except OSError as error:
            raise self._fail(None, "FMT-1", error.strerror or str(error)) from None
        except RecursionError:  # a hostile line in a scan that does not freeze values
            raise self._fail(None, "FMT-5", "JSON nesting is too deep to read") from None
        self.finished = True

    def _text(self, line: _Line, rule: str) -> str:
        try:
            return line.raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self._fail(line.number, rule, f"not UTF-8 ({error.reason} at byte {error.start})") from None

    def _is_header(self, first: _Line) -> bool:
        text = self._text(first, "FMT-1")
        try:
            loose = _loose_parse(text)
        except RecursionError:
            raise self._fail(1, "FMT-5", "JSON nesting is too deep to read") from None
        if not (isinstance(loose, dict) and loose.get("type") == "session"):
            return False
        if not first.terminated:
            raise self._fail(1, "FMT-10", "the session header line has no newline")
        value = parse_json_line(text)
        header = value if isinstance(value, Rejection) else parse_header_line(value)
        if isinstance(header, Rejection):
            raise self._fail(1, "FMT-10", f"unusable session header: {header.reason}")
        self.header = header
        return True

    def _emit(self, number: int, event: Event, plain: bool) -> tuple[int, Event | PlainEvent]:
        legacy = _legacy(event)
        if legacy is not None:
            raise self._fail(number, legacy.rule, legacy.reason)
        self.events_read += 1
        return number, from_event(event) if plain else event

    def _fast(self, line: _Line) -> list[PlainEvent] | None:
        """Return the events a complete persisted line stores when the fast lane reads them as the spec would; else None.

        (The in-memory form's loop reads its lines inline.)
        """
        if not line.terminated:
            return None
        try:
            value, bound = plain_loads(line.raw)
        except NotPlain:
            return None
        if type(value) is not dict:
            return None
        kind = value.get("type")
        if kind in ROW_TYPES:
            return plain_row_events(value, self.events_read)
        if kind in _LEGACY_TYPES:  # legacy vocabulary (LOG-7, LOG-8): judged by the spec's reader
            return None
        event = plain_event(value, bound)
        if event is None or event.seq != self.events_read:
            return None
        return [event]

    # -- the in-memory form: every line an event with the next seq ------------------------------

    def _memory(self, first: _Line, rest: Iterator[_Line], plain: bool) -> Iterator[tuple[int, Event | PlainEvent]]:
        for line in chain((first,), rest):
            if plain:
                # The fast lane's common case, inline (this loop runs once per event): a plain event line.
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
            text = self._text(line, "FMT-1")
            if not text.strip():
                raise self._fail(line.number, "FMT-1", "empty line")
            value = parse_json_line(text)
            if isinstance(value, FrozenMap) and value.get("type") in ROW_TYPES:
                raise self._fail(line.number, "FMT-8", "a packed chunk row appears only in the persisted form")
            event = value if isinstance(value, Rejection) else parse_event(value)
            if isinstance(event, Rejection):
                raise self._fail(line.number, event.rule, event.reason)
            if event.seq != self.events_read:
                raise self._fail(line.number, "LOG-2", f"seq {event.seq} is not contiguous; expected {self.events_read}")
            yield self._emit(line.number, event, plain)

    # -- the persisted form: the torn-tail rule (FMT-7) -----------------------------------------

    def _decode(self, line: _Line) -> tuple[Event, ...] | _Hole:
        """Return the events a persisted line stores, or the hole it is; raise for an unreadable event."""
        if not line.terminated:
            return _Hole("the final line has no newline (a torn record)")
        try:
            text = line.raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return _Hole(f"not UTF-8 ({error.reason} at byte {error.start})")
        value = parse_json_line(text)
        if isinstance(value, Rejection):
            if value.rule == "FMT-1":
                return _Hole(value.reason if text.strip() else "empty line")
            raise self._fail(line.number, value.rule, value.reason)
        expected = self.events_read
        if isinstance(value, FrozenMap) and value.get("type") in ROW_TYPES:
            events = expand_chunk_row(value)
            if isinstance(events, Rejection):
                return _Hole(events.reason)
            if events[0].seq != expected:
                return _Hole(f"seq gap: expected {expected}, the row starts at {events[0].seq}")
            for event in events:
                if not is_safe_seq(event.time):
                    raise self._fail(line.number, "LOG-3", f"packed member seq {event.seq} has time {event.time}, not a non-negative safe integer")
            return events
        if not isinstance(value, FrozenMap) or "seq" not in value:
            return _Hole(f"seq gap: expected {expected}, the line has no seq")
        seq = value["seq"]
        if not (_is_number(seq) and seq == expected):
            return _Hole(f"seq gap: expected {expected}, got {json_text(seq)}", value.get("type") == TURN_END)
        parsed = parse_event(value)
        if isinstance(parsed, Rejection):
            raise self._fail(line.number, parsed.rule, parsed.reason)
        return (parsed,)

    def _persisted(self, header: _Line, lines: Iterator[_Line], plain: bool) -> Iterator[tuple[int, Event | PlainEvent]]:
        last = header.number
        for line in lines:
            fast = self._fast(line) if plain else None
            if fast is not None:
                for member in fast:
                    self.events_read += 1
                    yield line.number, member
                last = line.number
                continue
            decoded = self._decode(line)
            if isinstance(decoded, _Hole):
                self._end_at_hole(line, decoded, lines)
                return
            for event in decoded:
                yield self._emit(line.number, event, plain)
            last = line.number
        if self._frames.torn_at is not None:
            # Every line of the incomplete final frame read cleanly, but the frame itself is torn.
            self.torn_tail = TornTail(last + 1, f"the file ends inside the zstd frame at byte {self._frames.torn_at}")

    def _end_at_hole(self, hole_line: _Line, hole: _Hole, rest: Iterator[_Line]) -> None:
        """Decide a hole: corruption when a readable turn/end follows it (or is it), else a torn tail."""
        later = hole_line.number if hole.is_turn_end else _first_turn_end(rest, self.name)
        if later is not None:
            where = "the line itself is" if later == hole_line.number else f"line {later} is"
            raise self._fail(hole_line.number, "FMT-7", f"corrupt committed region: {hole.reason}; {where} a turn/end")
        if self.compressed and hole_line.framed:
            raise self._fail(hole_line.number, "FMT-9", f"a complete zstd frame holds a torn record: {hole.reason}")
        self.torn_tail = TornTail(hole_line.number, hole.reason)


def _first_turn_end(lines: Iterator[_Line], name: str) -> int | None:
    """Return the first complete line that ``JSON.parse`` reads as a ``turn/end`` event, if any.

    Reads as the harness reads (``buffer.toString('utf8')`` replaces bad bytes); a packed row never
    holds a turn/end. Only lines that can spell the type (the literal, or an escape) are parsed.
    """
    for line in lines:
        if not line.terminated or (b"turn/end" not in line.raw and b"\\" not in line.raw):
            continue
        try:
            value = _loose_parse(line.raw.decode("utf-8", "replace"))
        except RecursionError:
            raise LogReadError(name, line.number, "FMT-5", "JSON nesting is too deep to read") from None
        if isinstance(value, dict) and value.get("type") == TURN_END:
            return line.number
    return None


def iter_log_events(path: str | Path) -> Iterator[tuple[int, Event]]:
    """Yield ``(line, event)`` of any harness log file in seq order (see ``LogStream`` for the details)."""
    return iter(LogStream(path))


# --- writing the persisted form -----------------------------------------------------------------


def _batch_lines(events: Iterable[Event], pack_chunks: bool) -> Iterator[bytes]:
    records: Iterable[Event | FrozenMap] = pack_chunk_runs(events) if pack_chunks else events
    for record in records:
        yield (record_to_line(record) + "\n").encode("utf-8")


def _part(pieces: Iterable[bytes], compressor: zstandard.ZstdCompressor | None) -> Iterator[bytes]:
    """Yield ``pieces`` as they are, or as one zstd frame of ``compressor`` (nothing for no pieces)."""
    if compressor is None:
        yield from pieces
        return
    frame, wrote = compressor.compressobj(), False
    for piece in pieces:
        yield frame.compress(piece)
        wrote = True
    if wrote:
        yield frame.flush()


def _compressor() -> zstandard.ZstdCompressor:
    return zstandard.ZstdCompressor(level=3, write_checksum=True)


def zstd_frame(data: bytes) -> bytes:
    """Return ``data`` as one checksummed zstd frame, as the writer frames the header line (FMT-9)."""
    return _compressor().compress(data)


def _parts(header: SessionHeaderLine, groups: Iterable[Iterable[Event]], pack_chunks: bool, compress: bool) -> Iterator[Iterator[bytes]]:
    """Yield the persisted file's parts in order, each as the pieces it is written in: the header line
    (one checksummed zstd frame when ``compress``), then each batch (one frame per non-empty batch)."""
    compressor = _compressor()
    head = (header_to_line(header) + "\n").encode("utf-8")
    yield iter((zstd_frame(head) if compress else head,))
    for group in groups:
        yield _part(_batch_lines(group, pack_chunks), compressor if compress else None)


def persisted_frames(
    header: SessionHeaderLine, batches: Iterable[Iterable[Event]], *, pack_chunks: bool = True, compress: bool = False
) -> tuple[bytes, ...]:
    """Return the bytes ``write_persisted`` writes for ``batches``, one element per non-empty part: the
    header line, then each batch — each one zstd frame when ``compress`` (FMT-9). Pure; holds the file."""
    parts = (b"".join(part) for part in _parts(header, batches, pack_chunks, compress))
    return tuple(part for part in parts if part)


def write_persisted(
    path: str | Path,
    header: SessionHeaderLine,
    events: Iterable[Event],
    *,
    pack_chunks: bool = True,
    compress: bool = False,
    batches: Iterable[Iterable[Event]] | None = None,
) -> Path:
    """Write a persisted-form log as the harness's JSONL backend lays it out; return ``path``.

    The header line first; then the batches — ``events`` as the first, then each of ``batches`` —
    events verbatim, delta-chunk runs packed per batch when ``pack_chunks`` (FMT-8). With
    ``compress``, one checksummed zstd frame for the header line and one per non-empty batch
    (FMT-9). Events are written as given, not checked; a batch is streamed, never held.
    """
    groups: Iterable[Iterable[Event]] = [events] if batches is None else [events, *batches]
    target = Path(path)
    with open(target, "wb") as handle:
        for part in _parts(header, groups, pack_chunks, compress):
            for piece in part:
                handle.write(piece)
    return target
