"""Log files in the persisted form for the vectors (spec/vectors.md §2, spec/formats.md §1-§4). Pure.

A file case starts from the log of a scenario whose replies the model streams as the harness's
mock adapter does (block-start, deltas, block-end, usage, finish: spec §10.3), with times taken
from a clock with uneven gaps. That log is written by the model's own writer
(``formats.persisted_form.persisted_frames``) as the JSONL backend writes it: the header line, then one
batch per turn (the backend flushes at every ``turn/end``), delta runs packed into rows, plain or
as zstd frames. A case is that file, or that file damaged in
one place; what a conforming reader must read from it (the events before the damage, the line of
the tolerated torn tail) follows from where the damage was made, and the generator's re-check
holds the model's reader to it.

A file is carried in a case as ``{"encoding": "text", "lines": [...], "finalNewline": b}`` (its
lines, each followed by a newline except, when ``finalNewline`` is false, the last) or, for zstd,
``{"encoding": "zstd", "base64": "..."}``: the file's bytes in standard base64 (RFC 4648 §4).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass

from prefix_model.core.contracts import Rejection
from prefix_model.core.events import Event
from prefix_model.core.json_values import FrozenMap, json_text
from prefix_model.formats.persisted_form import persisted_frames, zstd_frame
from prefix_model.formats.event_lines import parse_event, parse_json_line
from prefix_model.formats.session_lines import SESSION_FORMAT_VERSION, SessionHeaderLine, header_to_json

__all__ = [
    "CLOCK_START",
    "FileError",
    "FileCase",
    "clocked",
    "turn_batches",
    "session_header",
    "text_file",
    "zstd_file",
    "file_bytes",
    "in_memory_rows",
    "file_cases",
]

Events = tuple[FrozenMap, ...]
Lines = tuple[str, ...]
CLOCK_START = 1767225600000  # 2026-01-01T00:00:00Z in epoch ms: the header's createdAt and the first event's time


class FileError(ValueError):
    """A case's ``file`` that does not spell a file."""


def clocked(events: Events, start: int = CLOCK_START) -> Events:
    """Return the events on a clock from ``start`` whose gaps run 0, 1, 2, 3, 0, … ms (so packed rows hold uneven ``dt``)."""
    return tuple(FrozenMap(dict(e) | {"time": start + sum(k % 4 for k in range(n))}) for n, e in enumerate(events))


def turn_batches(events: Events) -> tuple[Events, ...]:
    """Return the events in the batches the backend flushes: each ending at a ``turn/end`` (the rest, if any, last)."""
    ends = [n + 1 for n, e in enumerate(events) if e["type"] == "turn/end"]
    bounds = [0, *ends] + ([len(events)] if not ends or ends[-1] != len(events) else [])
    return tuple(events[a:b] for a, b in zip(bounds, bounds[1:]))


def session_header(session: str) -> SessionHeaderLine:
    """Return the header line the file cases are written with."""
    return SessionHeaderLine(SESSION_FORMAT_VERSION, session, CLOCK_START, cwd="/home/dev/project", delegation_depth=0)


def _as_event(value: FrozenMap) -> Event:
    event = parse_event(value)
    assert not isinstance(event, Rejection), event
    return event


def _frames(session: str, batches: tuple[Events, ...], compress: bool) -> tuple[bytes, ...]:
    return persisted_frames(session_header(session), [[_as_event(e) for e in b] for b in batches], compress=compress)


# --- a file as a case holds it ---


def text_file(lines: Lines, final_newline: bool = True) -> FrozenMap:
    """Return a plain file as a case holds it: its lines, and whether the last one ends in a newline."""
    return FrozenMap({"encoding": "text", "finalNewline": final_newline, "lines": lines})


def zstd_file(data: bytes) -> FrozenMap:
    """Return a zstd file as a case holds it: its bytes in standard base64."""
    return FrozenMap({"base64": base64.b64encode(data).decode("ascii"), "encoding": "zstd"})


def file_bytes(file: Mapping[str, object]) -> bytes:
    """Return the bytes of a case's ``file`` (plain JSON or frozen); raise ``FileError`` when it spells none."""
    encoding = file.get("encoding")
    if encoding == "text":
        lines, final = file.get("lines"), file.get("finalNewline")
        if not (isinstance(lines, (list, tuple)) and all(isinstance(x, str) for x in lines) and isinstance(final, bool)):
            raise FileError('a text file needs "lines" (strings) and "finalNewline" (a boolean)')
        text = "\n".join(str(x) for x in lines) + ("\n" if final and lines else "")
        return text.encode("utf-8")
    if encoding == "zstd":
        data = file.get("base64")
        if not isinstance(data, str):
            raise FileError('a zstd file needs "base64" (a string)')
        try:
            return base64.b64decode(data, validate=True)
        except ValueError as error:
            raise FileError(f"base64: {error}") from None
    raise FileError(f"unknown file encoding {encoding!r}")


def _split(frames: tuple[bytes, ...]) -> Lines:
    text = b"".join(frames).decode("utf-8")
    assert text.endswith("\n")
    return tuple(text[:-1].split("\n"))


def in_memory_rows(events: Events) -> Lines:
    """Return the log written in the persisted form without its header line: packed rows as in-memory lines (FMT-8)."""
    return _split(_frames("", turn_batches(clocked(events)), False))[1:]


# --- the file cases ---


@dataclass(frozen=True, slots=True)
class FileCase:
    """One file case before it is a ``LogCase``: the file, and what a conforming reader makes of it.

    ``kept`` is the number of events a conforming reader reads (None: it must reject the file with
    ``requirement``); ``torn_tail`` the 1-based line of the tolerated torn tail, if any.
    """

    id: str
    requirements: tuple[str, ...]
    mutation: str
    file: FrozenMap
    kept: int | None
    torn_tail: int | None = None
    requirement: str | None = None


def _seq_on(lines: Lines, number: int) -> int:
    """Return the seq of the event on 1-based line ``number`` (an event line, not a row)."""
    value = json.loads(lines[number - 1])
    assert isinstance(value, dict) and isinstance(value.get("seq"), int), lines[number - 1]
    return int(value["seq"])


def _line_of(lines: Lines, kind: str, nth: int = 0) -> int:
    """Return the 1-based number of the ``nth`` line of event type ``kind``."""
    return [n for n, line in enumerate(lines, 1) if json.loads(line).get("type") == kind][nth]


def _replaced(lines: Lines, number: int, *new: str) -> Lines:
    return lines[: number - 1] + new + lines[number:]


def _flip_last_byte(frame: bytes) -> bytes:
    return frame[:-1] + bytes((frame[-1] ^ 0xFF,))


def file_cases(events: Events, session: str) -> tuple[FileCase, ...]:
    """Return the file cases made from the ``events`` of ``session`` (two turns at least, a tool call, a packable text)."""
    log = clocked(events)
    batches = turn_batches(log)
    assert len(batches) >= 2 and all(b[-1]["type"] == "turn/end" for b in batches), "the base log must end two turns"
    plain, framed = _frames(session, batches, False), _frames(session, batches, True)
    lines = _split(plain)
    rows = [n for n, line in enumerate(lines, 1) if json.loads(line)["type"] in ("text-chunks", "tool-call-chunks")]
    assert {json.loads(lines[n - 1])["type"] for n in rows} == {"text-chunks", "tool-call-chunks"}, "the base log must pack both kinds"
    turn_end_1 = _line_of(lines, "turn/end")
    step_2 = _line_of(lines, "step/start", 1)
    assert step_2 < turn_end_1, "the base log's first turn must have two steps"
    header_2 = _line_of(lines, "request/header", -1)  # turn 2's snapshot: an event line after turn 1's turn/end
    assert header_2 > turn_end_1
    cut = lines[header_2 - 1][: len(lines[header_2 - 1]) // 2]  # the line written only in part
    first_frame_lines = len(_split(plain[:2]))  # the header and turn 1: what the complete frames hold
    header = header_to_json(session_header(session))
    assert lines[0] == json_text(header)
    bad_headers = (
        ("header-version-1", 'the header line says "version":1', FrozenMap(dict(header) | {"version": 1})),
        ("header-without-id", "the header line has no id", header.without("id")),
    )
    whole = len(log)
    return (
        FileCase("persisted/packed-rows", ("FMT-3", "FMT-6", "FMT-8", "FMT-10"),
                 "written in the persisted form, plain (the header line, then every event verbatim or in a packed row)",
                 text_file(lines), whole),
        FileCase("persisted/zstd-frames", ("FMT-6", "FMT-8", "FMT-9", "FMT-10"),
                 "written in the persisted form, zstd (the header line in its own frame, then one frame per turn)",
                 zstd_file(b"".join(framed)), whole),
        FileCase("persisted/torn-final-line", ("FMT-7",),
                 f"written in the persisted form and cut inside line {header_2}, in turn 2 (no newline after it)",
                 text_file(lines[: header_2 - 1] + (cut,), final_newline=False), _seq_on(lines, header_2), header_2),
        FileCase("persisted/unterminated-turn-end", ("FMT-7",),
                 "written in the persisted form without the newline after the last line, a complete turn/end",
                 text_file(lines, final_newline=False), whole - 1, len(lines)),
        FileCase("persisted/hole-after-last-turn-end", ("FMT-7",),
                 f"written in the persisted form up to turn 2's step/end, line {header_2} (after turn 1's turn/end) cut short",
                 text_file(_replaced(lines[:-1], header_2, cut)), _seq_on(lines, header_2), header_2),
        # Half of turn 2's frame: its one compressed block is incomplete, so no decoder gets a line out
        # of it, and readers that recover a torn frame as far as it decodes (formats.md §6) agree.
        FileCase("persisted/zstd-torn-final-frame", ("FMT-7", "FMT-9"),
                 "written in the persisted form, zstd, and cut in the middle of the last frame (turn 2)",
                 zstd_file(b"".join(framed[:-1]) + framed[-1][: len(framed[-1]) // 2]), len(batches[0]), first_frame_lines + 1),
        FileCase("invalid/fmt-7/hole-before-turn-end", ("FMT-7",),
                 f"written in the persisted form with line {header_2} cut short; turn 2's turn/end follows it",
                 text_file(_replaced(lines, header_2, cut)), None, requirement="FMT-7"),
        FileCase("invalid/fmt-7/seq-gap-before-turn-end", ("FMT-7",),
                 f"written in the persisted form without line {step_2}, turn 1's second step/start; later lines keep their seqs and a turn/end follows",
                 text_file(_replaced(lines, step_2)), None, requirement="FMT-7"),
        FileCase("invalid/fmt-7/seq-gap-at-turn-end", ("FMT-7",),
                 f"written in the persisted form without line {turn_end_1 - 1}, so the first line with the wrong seq is turn 1's turn/end itself",
                 text_file(_replaced(lines, turn_end_1 - 1)), None, requirement="FMT-7"),
        FileCase("invalid/fmt-7/malformed-row-before-turn-end", ("FMT-7", "FMT-8"),
                 f"written in the persisted form with the packed row on line {rows[0]} given one dt entry too many",
                 text_file(_replaced(lines, rows[0], _longer_dt(lines[rows[0] - 1]))), None, requirement="FMT-7"),
        FileCase("invalid/fmt-9/one-frame", ("FMT-9",),
                 "written in the persisted form, zstd, as one frame holding the header line and every event",
                 zstd_file(zstd_frame(b"".join(plain))), None, requirement="FMT-9"),
        FileCase("invalid/fmt-9/no-header-frame", ("FMT-9",),
                 "written in the persisted form, zstd, without the header line's frame",
                 zstd_file(b"".join(framed[1:])), None, requirement="FMT-9"),
        FileCase("invalid/fmt-9/checksum-mismatch", ("FMT-9",),
                 "written in the persisted form, zstd, with the last byte of turn 1's frame (its content checksum) inverted",
                 zstd_file(framed[0] + _flip_last_byte(framed[1]) + b"".join(framed[2:])), None, requirement="FMT-9"),
        FileCase("invalid/fmt-9/complete-frame-ends-mid-line", ("FMT-9", "FMT-7"),
                 "written in the persisted form, zstd, with the last frame (complete) ending without the newline of its last line",
                 zstd_file(b"".join(framed[:-1]) + zstd_frame(plain[-1][:-1])), None, requirement="FMT-9"),
        *(FileCase(f"invalid/fmt-10/{slug}", ("FMT-10",), f"written in the persisted form, but {what}",
                   text_file(_replaced(lines, 1, json_text(bad))), None, requirement="FMT-10") for slug, what, bad in bad_headers),
        FileCase("invalid/fmt-10/header-without-newline", ("FMT-10",),
                 "written as the persisted form's header line alone, without its newline",
                 text_file(lines[:1], final_newline=False), None, requirement="FMT-10"),
    )  # fmt: skip


def _longer_dt(line: str) -> str:
    """Return a packed row's line with one more ``dt`` entry than its members allow (FMT-8: a hole)."""
    row = parse_json_line(line)
    assert isinstance(row, FrozenMap) and isinstance(data := row["data"], FrozenMap) and isinstance(dt := data["dt"], tuple)
    return json_text(FrozenMap(dict(row) | {"data": FrozenMap(dict(data) | {"dt": (*dt, 1)})}))
