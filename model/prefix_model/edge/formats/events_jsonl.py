"""Spec §8 — the harness's in-memory event lines: one JSON event object per line, both ways.

Reading mirrors ``JSON.parse`` (duplicate keys: the last value wins at the first key's place;
``-0`` stays negative zero and is then rejected, FMT-4) and the Session constructor's seed rules
(every rule of §2 and §3, LOG-12). Anything unreadable is a ``LogReadError`` naming the file, the
line and the rule — never another exception (FMT-2). Writing puts the envelope keys in the order
the harness writes them (type, seq, time, data, sourceEventSeqs, surfaceOp) and every value in
``JSON.stringify`` form, so a harness-written line reads and writes back byte for byte (FMT-3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from prefix_model.core.contracts import RejectedError, Rejection
from prefix_model.core.events import Event, Replace, SurfaceOp, is_safe_seq
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.core.log import Log, seed_log

__all__ = ["LogReadError", "parse_json_line", "parse_event", "event_to_json", "event_to_line", "read_log", "read_log_lines"]

ENVELOPE_KEYS = ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs")
MAX_LINE_BYTES = 64 * 1024 * 1024


class LogReadError(Exception):
    """An input that cannot be read as a harness log: file, line (1-based; None for the whole file), rule, reason."""

    def __init__(self, path: str, line: int | None, rule: str, reason: str) -> None:
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {rule}: {reason}")
        self.path, self.line, self.rule, self.reason = path, line, rule, reason


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _parse_int(text: str) -> int | float:
    # JSON.parse("-0") is negative zero, which the lossless rule then rejects (JSON-2).
    return -0.0 if text == "-0" else int(text)


def parse_json_line(text: str) -> JsonValue | Rejection:
    """Return the frozen JSON value of one line as ``JSON.parse`` reads it, or why it cannot be."""
    try:
        raw = json.loads(text, object_pairs_hook=dict, parse_constant=_reject_constant, parse_int=_parse_int)
        return freeze(raw)
    except RejectedError as error:
        return error.rejection
    except RecursionError:
        return Rejection("FMT-5", "JSON nesting is too deep to read")
    except ValueError as error:
        return Rejection("FMT-1", f"not JSON: {error}")


def _surface_op(value: JsonValue) -> SurfaceOp | Rejection:
    if isinstance(value, str):
        return value  # an unknown string is kept and rejected by SURF-3 in context
    if isinstance(value, FrozenMap) and set(value) == {"op", "start", "end"} and value["op"] == "replace":
        start, end = value["start"], value["end"]
        if is_safe_seq(start) and is_safe_seq(end):
            assert isinstance(start, int) and isinstance(end, int)
            return Replace(start, end)
    return Rejection("SURF-3", f"invalid surfaceOp {json_text(value)}")


def _source_seqs(value: JsonValue) -> tuple[int, ...] | Rejection:
    if not isinstance(value, tuple):
        return Rejection("SURF-7", "sourceEventSeqs must be an array")
    if not all(is_safe_seq(s) for s in value):
        return Rejection("SURF-7", "sourceEventSeqs must hold non-negative safe integers")
    return tuple(s for s in value if isinstance(s, int))


def parse_event(value: JsonValue) -> Event | Rejection:
    """Return the event a JSON envelope spells, or the envelope rule it breaks (LOG-1, LOG-2, LOG-3)."""
    if not isinstance(value, FrozenMap):
        return Rejection("LOG-1", "an event line must be a JSON object")
    extra = [k for k in value if k not in ENVELOPE_KEYS]
    if extra:
        return Rejection("LOG-1", f"unknown envelope key {extra[0]!r}")
    kind, seq, time = value.get("type"), value.get("seq"), value.get("time")
    if not isinstance(kind, str):
        return Rejection("LOG-1", "type must be a string")
    if "data" not in value:
        return Rejection("LOG-1", "data is missing")
    if not is_safe_seq(seq):
        return Rejection("LOG-2", f"seq {json_text(seq)} is not a non-negative safe integer")
    if not is_safe_seq(time):
        return Rejection("LOG-3", f"time {json_text(time)} is not a non-negative safe integer")
    assert isinstance(seq, int) and isinstance(time, int)
    op = _surface_op(value["surfaceOp"]) if "surfaceOp" in value else None
    sources = _source_seqs(value["sourceEventSeqs"]) if "sourceEventSeqs" in value else None
    if isinstance(op, Rejection):
        return op
    if isinstance(sources, Rejection):
        return sources
    return Event(kind, seq, time, value["data"], op, sources)


def event_to_json(event: Event) -> FrozenMap:
    """Return the event's JSON envelope in the harness's key order (FMT-3)."""
    fields: dict[str, JsonValue] = {"type": event.type, "seq": event.seq, "time": event.time, "data": event.data}
    if event.source_event_seqs is not None:
        fields["sourceEventSeqs"] = event.source_event_seqs
    if isinstance(event.surface_op, Replace):
        fields["surfaceOp"] = FrozenMap({"op": "replace", "start": event.surface_op.start, "end": event.surface_op.end})
    elif event.surface_op is not None:
        fields["surfaceOp"] = event.surface_op
    return FrozenMap(fields)


def event_to_line(event: Event) -> str:
    """Return the event as one harness log line, without the newline (FMT-3)."""
    return json_text(event_to_json(event))


def read_log_lines(lines: Iterable[bytes], path: str) -> Log:
    """Return the log that byte ``lines`` hold; raise ``LogReadError`` at the first unreadable line."""
    events: list[Event] = []
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise LogReadError(path, number, "FMT-5", f"line longer than {MAX_LINE_BYTES} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LogReadError(path, number, "FMT-1", f"not UTF-8 ({error.reason} at byte {error.start})") from None
        if not text.strip():
            raise LogReadError(path, number, "FMT-1", "empty line")
        parsed = parse_json_line(text)
        if number == 1 and isinstance(parsed, FrozenMap) and parsed.get("type") == "session":
            raise LogReadError(path, number, "FMT-6", "a persisted session.jsonl header line; this reader takes the in-memory event form")
        event = parsed if isinstance(parsed, Rejection) else parse_event(parsed)
        if isinstance(event, Rejection):
            raise LogReadError(path, number, event.rule, event.reason)
        events.append(event)
    if not events:
        raise LogReadError(path, 1, "FMT-1", "no event in the file")
    log = seed_log(tuple(events))
    if isinstance(log, Rejection):
        line = None if log.seq is None else log.seq + 1  # seq = index, so event seq N is line N + 1
        raise LogReadError(path, line, log.rule, log.reason)
    return log


def _lines(handle: Iterable[bytes]) -> Iterable[bytes]:
    for raw in handle:
        yield raw[:-1] if raw.endswith(b"\n") else raw


def read_log(path: str | Path) -> Log:
    """Return the log in the in-memory event-line file at ``path`` (FMT-1..FMT-6)."""
    name = str(path)
    try:
        with open(path, "rb") as handle:
            return read_log_lines(_lines(handle), name)
    except OSError as error:
        raise LogReadError(name, None, "FMT-1", error.strerror or str(error)) from None
