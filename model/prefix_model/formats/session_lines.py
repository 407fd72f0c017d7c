"""Spec §8, spec/formats.md — the persisted form's lines as values: the header line and packed chunk rows.

The *persisted* form is what the JSONL persistence backend writes as ``session.jsonl`` or
``session.jsonl.zstd``: a ``{"type": "session", …}`` header line (FMT-10), then event lines
verbatim or packed chunk rows (FMT-8). This module states what those lines mean and which are
malformed, both ways (read and pack), and the legacy vocabulary the harness rejects at load
(LOG-7, LOG-8); ``edge/formats`` reads and writes the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from prefix_model.formats.plain import PlainEvent, to_event
from prefix_model.core.contracts import ENABLED, Rejection, ensure
from prefix_model.core.events import (
    ASSISTANT_CHUNK,
    LEGACY_HEADER_DELTA,
    LEGACY_MODE_SET,
    REQUEST_HEADER,
    Event,
    check_event,
    is_safe_seq,
)
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, JsonValue, freeze, json_text
from prefix_model.formats.event_lines import event_to_line

__all__ = [
    "SessionHeaderLine",
    "TornTail",
    "parse_header_line",
    "header_to_json",
    "header_to_line",
    "pack_chunk_runs",
    "expand_chunk_row",
    "plain_row_events",
    "record_to_line",
    "legacy_rejection",
    "is_number",
    "ZSTD_MAGIC",
    "ROW_TYPES",
    "LEGACY_TYPES",
    "SESSION_FORMAT_VERSION",
]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SESSION_FORMAT_VERSION = 0
ROW_TYPES = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
MIN_RUN = 3  # the harness's format constant: shorter runs stay one event per line
_LEGACY_RULES = ("LOG-7", "LOG-8")
LEGACY_TYPES = (LEGACY_HEADER_DELTA, LEGACY_MODE_SET, REQUEST_HEADER)

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


def is_number(value: JsonValue) -> bool:
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
    if not is_number(version):
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
    if not (is_number(data["turn"]) and is_number(data["step"]) and is_number(data["index"])):
        return _malformed(tag, "turn/step/index must be numbers")
    payload = data[payload_key]
    if not isinstance(payload, tuple) or not payload or not all(isinstance(p, str) for p in payload):
        return _malformed(tag, f"{payload_key} must be a non-empty string array")
    dt = data["dt"]
    if not isinstance(dt, tuple) or not all(_is_safe_integer(gap) for gap in dt):
        return _malformed(tag, "dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        # dt holds the gaps between members' times: one fewer than the members.
        return _malformed(tag, f"dt has {len(dt)} gap(s) where {len(payload)} {payload_key} need {len(payload) - 1}, one between each two")
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


def _expanded(kind: str, data: Mapping[str, object], members: Sequence[str], seq0: int, time0: int | float) -> Iterator[tuple[int, int | float, dict[str, object]]]:
    """Each member of a packed row as its chunk event's seq, time and data (plain): FMT-8's expansion, stated once for both readers."""
    gaps = cast(Sequence[int], data["dt"])
    time = time0
    for k, member in enumerate(members):
        if k:
            time += gaps[k - 1]
        yield seq0 + k, time, {"turn": data["turn"], "step": data["step"], "chunk": _member_chunk(kind, data, member)}


def expand_chunk_row(value: FrozenMap) -> tuple[Event, ...] | Rejection:
    """Return the ``assistant/chunk`` events a packed row stores, or why the row is malformed (FMT-8)."""
    tag = value.get("type")
    if not isinstance(tag, str) or tag not in ROW_TYPES:
        return Rejection("FMT-8", f"{json_text(tag)} is not a packed row type")
    checked = _check_row(value, tag)
    if isinstance(checked, Rejection):
        return checked
    data, members = checked
    rows = _expanded(_KIND_OF_ROW[tag], data, members, cast(int, value["seq0"]), cast(int, value["time0"]))
    return tuple(Event(ASSISTANT_CHUNK, seq, int(time), _frozen_body(body)) for seq, time, body in rows)


def _frozen_body(body: dict[str, object]) -> FrozenMap:
    """A member's chunk event data frozen: its values are the checked row's own (frozen) values."""
    fields = cast(dict[str, JsonValue], body)
    return FrozenMap({**fields, "chunk": FrozenMap(cast(dict[str, JsonValue], body["chunk"]))})


_ROW_ENVELOPE = frozenset(("type", "seq0", "time0", "data"))
_RUN_KEYS = frozenset(("turn", "step", "index", "dt", "texts"))
_CALL_KEYS, _NAMED_CALL_KEYS = frozenset(("turn", "step", "index", "id", "dt", "args")), frozenset(("turn", "step", "index", "id", "name", "dt", "args"))


def _plain_number(value: object) -> bool:
    return type(value) is int or type(value) is float


_new_event = tuple.__new__  # not PlainEvent(...): a named tuple's __new__ is a Python call per member


def _row_agrees(value: dict[str, object], events: list[PlainEvent]) -> bool:
    """Return whether ``expand_chunk_row`` reads the row ``value`` as exactly ``events``."""
    spec = expand_chunk_row(freeze(value))  # type: ignore[arg-type]  # a plain row: an object
    texts = [event_to_line(to_event(e)) for e in events]
    return not isinstance(spec, Rejection) and [event_to_line(e) for e in spec] == texts


@ensure(lambda value, result: result is None or _row_agrees(value, result), "a row the plain lane expands is one expand_chunk_row expands alike", enabled=ENABLED)
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
    events = []
    for seq, time, body in _expanded(_KIND_OF_ROW[tag], data, members, seq0, time0):
        if not 0 <= time <= MAX_SAFE_INTEGER:
            return None
        events.append(_new_event(PlainEvent, (ASSISTANT_CHUNK, seq, time, body, None, None, 3, None)))
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
    if not (is_number(data["turn"]) and is_number(data["step"])) or not isinstance(chunk, FrozenMap):
        return None
    if not is_number(chunk.get("index")):
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


def legacy_rejection(event: Event) -> Rejection | None:
    """Return LOG-7/LOG-8 when ``event`` is of the rejected legacy vocabulary (checked at load, PC:126-142)."""
    if event.type not in LEGACY_TYPES:
        return None  # only these types can break LOG-7 or LOG-8; the full check is the caller's
    rejection = check_event(event, event.seq)
    return rejection if rejection is not None and rejection.rule in _LEGACY_RULES else None

