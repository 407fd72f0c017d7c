"""Spec §17 — ``prefix-model timeline``: one session drawn on one axis of event seqs, as SVG or an HTML page.

What is drawn comes from readers the command line already has: ``LogStream`` (the check's own
reader: both forms, zstd, a pipe) for the events, and ``check_log`` on the same bytes for the
findings and for how requests without a turn/step were matched; the capture is read again with
the check's capture reader only to place each request at its step. Nothing here judges: a
request is drawn as conforming when it was checked and the check found nothing in it (CLI-7).

Every lane draws at most ``MAX_DRAWN`` items — those with a finding first, then the rest spread
evenly — and says how many it left out; assistant chunks are counted per step, never drawn. The
file is written whole (a temporary file beside it, renamed) or not at all, and the same input
gives the same bytes: no clock, no random ids.
"""

from __future__ import annotations

import bisect
import html
import os
import re
import tempfile
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from prefix_model.formats.plain import PlainEvent, plain_text
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    COMPACT_END,
    COMPACT_START,
    COMPACT_SUMMARY,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    STEP_END,
    STEP_START,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Replace,
)
from prefix_model.edge.checker import Report, Unusable, check_log, rereadable
from prefix_model.edge.formats.capture import iter_capture
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.edge.formats.session_jsonl import LogStream, Unread

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

__all__ = ["TIMELINE_HELP", "LANES", "SWATCHES", "MAX_DRAWN", "CONTEXT", "MAX_WINDOWS", "TimelineError", "Drawn", "View", "output_format",
           "windows_around", "legend_html", "draw_timeline"]

MAX_DRAWN = 1000  # items per lane: a picture a browser opens at once, whatever the log's size
SVG, HTML = ".svg", ".html"

LANES: tuple[tuple[str, str], ...] = (
    ("turns", "one light blue bar per turn, turn/start to turn/end (its end reason in the tooltip); dashed: still open where "
              "the log ends; a red outline: a finding falls inside it"),  # fmt: skip
    ("steps", "one dark blue bar per step, step/start to step/end, with its assistant/chunk and tool/call counts (chunks are "
              "counted, not drawn); a red outline: a finding falls inside it"),  # fmt: skip
    ("compaction", "one orange band per compact/start .. compact/end"),
    ("headers", "one diamond per request/header, coloured by its reason (teal initial, yellow resume, red change, grey "
                "another), with its messagePrefix, shortened, and its message count"),  # fmt: skip
    ("surface", "a tick per message appended to the surface, coloured by its type (blue user, green assistant, orange tool "
                "result, purple steering, grey another); a purple square per replacement, and a bracket over the seqs it replaces"),  # fmt: skip
    ("requests", "one mark per captured request at the step it was matched to: a green circle conforms, a red square "
                 "has findings, a grey ring was not checked (auxiliary, another session, no such step)"),  # fmt: skip
    ("findings", "one red triangle per finding of `prefix-model check` on the same input, at its seq (or its request's "
                 "step), with a red guide line across the lanes; the finding's text is its tooltip"),  # fmt: skip
)

# Each lane's marks as the legend shows them: (shape, classes, label); the classes are the picture's own, so the colours agree.
SWATCHES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "turns": (("rect", "turn", "turn"), ("rect", "turn open", "open at the log's end"), ("rect", "turn flagged", "holds a finding")),
    "steps": (("rect", "step", "step"), ("rect", "step open", "open at the log's end"), ("rect", "step flagged", "holds a finding")),
    "compaction": (("rect", "compaction", "compaction"), ("rect", "compaction open", "open at the log's end"),
                   ("rect", "compaction flagged", "holds a finding")),  # fmt: skip
    "headers": (("polygon", "header initial", "initial"), ("polygon", "header resume", "resume"), ("polygon", "header change", "change"),
                ("polygon", "header reason-other", "another reason"), ("polygon", "header initial flagged", "at a finding")),  # fmt: skip
    "surface": (("line", "append user", "user message"), ("line", "append assistant", "assistant message"), ("line", "append tool", "tool result"),
                ("line", "append steering", "steering message"), ("line", "append other", "another type"),
                ("rect", "replace", "replacement"), ("path", "bracket", "the seqs it replaces")),  # fmt: skip
    "requests": (("circle", "request conforms", "conforms"), ("rect", "request violates", "has findings"),
                 ("circle", "request unchecked", "not checked")),  # fmt: skip
    "findings": (("polygon", "finding", "a finding"), ("line", "guide", "where it is, across the lanes")),
}
CONTEXT = 40  # seqs each side of --around's seq and of each finding's window
MAX_WINDOWS = 20  # --findings: windows drawn, the first ones in seq order; the rest are counted

TIMELINE_HELP = (
    """\
Draw one session on one horizontal timeline (x = event seq) so you can see where a request went
wrong. LOG, --requests and --session are read exactly as `prefix-model check` reads them (both
log forms, zstd, - for standard input), and every finding drawn is one `check` reports on the
same input. The format follows the suffix of --out: FILE.svg, or FILE.html (one self-contained
page: the SVG inline, a legend and the list of findings).

lanes:
"""
    + "".join(textwrap.fill(text, 96, initial_indent=f"  {name:<11} ", subsequent_indent=" " * 14) + "\n" for name, text in LANES)
    + f"""
Each mark's tooltip says what it is. A lane holding more than {MAX_DRAWN} items draws {MAX_DRAWN} (those
with findings first) and says how many it did not draw. The same input gives the same bytes.

A long log: --from SEQ and --to SEQ draw only those seqs (the check still reads the whole log;
the heading counts the findings outside); --around SEQ draws SEQ and --context N seqs each side
(default {CONTEXT}). --findings adds, below the picture, one window of --context seqs each side
around each finding (findings that close share one; the first {MAX_WINDOWS}), each with the id
window-K: in the picture a finding's marker links to its window, and in the page each finding of
the list links to it (without --findings, to its marker): one click from a finding to where it is.

example:
  prefix-model timeline --example --out example.html
  prefix-model timeline session.jsonl.zstd --requests adapter.jsonl --out where.svg
  prefix-model timeline big.jsonl.zstd --findings --out where.html        (jump to each finding)
  prefix-model timeline big.jsonl.zstd --around 18250 --context 100 --out there.svg
  zstdcat session.jsonl.zstd | prefix-model timeline - --out where.html

exit status: 0 written (also when the picture shows findings; one summary line on stdout); 2 unusable
input, an --out that is a directory or not .svg/.html, an unwritable --out, or a --from, --to or
--around outside the log (one line on stderr)
"""
)


class TimelineError(Exception):
    """A problem with the output (or a renamed input error) reported in one line, exit status 2."""


# --- text that survives any event field ---------------------------------------------------------

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # lone surrogates, controls, U+FFFE/F


def _clean(text: str) -> str:
    """Return ``text`` with every character XML cannot hold replaced by U+FFFD (never an encoding error)."""
    return _NOT_XML.sub("\ufffd", text)


def _cut(text: str, limit: int) -> str:
    """Return ``text`` in at most ``limit`` characters, an ellipsis saying it was cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if limit >= 2 else ""


_TITLE_LIMIT = 2000  # a tooltip, not a document: a finding's text is already shortened by the check


def _show(value: object) -> str:
    """A field's value as a label: an integer or string as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _cut(plain_text(value), 80)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _field(value: object, name: str) -> object:
    return value.get(name) if isinstance(value, dict) else None


def _brief(message: object) -> str:
    """A message in a few words: its role and its text blocks (compact JSON when it has no text)."""
    content = _field(message, "content")
    texts = [block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)] if isinstance(content, list) else []
    role = _field(message, "role")
    return f"{_show(role)}: " + (" ".join(texts) if texts else _show(content)) if role is not None else _show(message)


# --- what the log holds -------------------------------------------------------------------------


@dataclass(slots=True)
class _Span:
    """A turn, a step or a compaction: seqs ``start`` .. ``end`` (None: open where the log ends)."""

    start: int
    name: str
    end: int | None = None
    notes: list[str] = field(default_factory=list)
    key: tuple[int | None, int | None] = (None, None)  # a step's (turn, step)
    chunks: int = 0
    tools: int = 0


@dataclass(frozen=True, slots=True)
class _Mark:
    """A request/header: its seq, its reason's class, its label and its tooltip."""

    seq: int
    kind: str
    label: str
    title: str


class _Op(NamedTuple):
    """A surface op: one per message of the log, so a small tuple; its text is made only if it is drawn."""

    seq: int
    type: str
    op: object  # None: append; a Replace; else the surfaceOp as the log spells it


_SURFACE_CLASS = {USER_MESSAGE: "user", ASSISTANT_MESSAGE: "assistant", TOOL_RESULT: "tool", STEERING_MESSAGE: "steering"}
_SHARED = {kind: kind for kind in _SURFACE_CLASS}  # one string object per type, not one per event


class _Events:
    """The log as the picture needs it, gathered in one pass: spans, marks and counts (no event kept)."""

    def __init__(self) -> None:
        self.count = 0
        self.chunks = 0
        self.seed: tuple[str | None, int] | None = None  # a fork child's parent session and seed length (its persisted header)
        self.turns: list[_Span] = []
        self.steps: list[_Span] = []
        self.compactions: list[_Span] = []
        self.headers: list[_Mark] = []
        self.surface: list[_Op] = []
        self._turn: _Span | None = None
        self._step: _Span | None = None
        self._compaction: _Span | None = None

    def feed(self, event: PlainEvent) -> None:
        self.count += 1
        kind, seq = event.type, event.seq
        if kind == ASSISTANT_CHUNK:  # most of a log: counted in its step, never drawn
            self.chunks += 1
            if self._step is not None:
                self._step.chunks += 1
        elif kind == TURN_START:
            self._turn = self._open(self._turn, self.turns, _Span(seq, f"turn {_show(event.field('turn'))}"), seq)
        elif kind == TURN_END:
            self._step = self._close(self._step, seq, None)
            reason = event.field("reason")
            self._turn = self._close(self._turn, seq, f"ended {_show(_field(reason, 'kind') or reason)}")
        elif kind == STEP_START:
            turn, step = event.field("turn"), event.field("step")
            opened = _Span(seq, f"turn {_show(turn)} step {_show(step)}", key=(_int(turn), _int(step)))
            self._step = self._open(self._step, self.steps, opened, seq)
        elif kind == STEP_END:
            self._step = self._close(self._step, seq, None)
        elif kind == TOOL_CALL and self._step is not None:
            self._step.tools += 1
        elif kind == REQUEST_HEADER:
            self._header(event)
        elif kind == COMPACT_START:
            self._compaction = self._open(self._compaction, self.compactions, _Span(seq, "compaction"), seq)
        elif kind == COMPACT_SUMMARY and self._compaction is not None:
            self._compaction.notes.append(f"compact/summary at seq {seq}")
        elif kind == COMPACT_END:
            self._compaction = self._close(self._compaction, seq, None)
        if event.surface_op is not None:
            self._surface(event)

    @staticmethod
    def _open(current: _Span | None, spans: list[_Span], opened: _Span, seq: int) -> _Span:
        if current is not None:  # opened again before it closed: drawn up to here (the check says what it breaks)
            current.end = seq - 1
            current.notes.append(f"no end before seq {seq}")
        spans.append(opened)
        return opened

    @staticmethod
    def _close(current: _Span | None, seq: int, note: str | None) -> None:
        if current is not None:
            current.end = seq
            if note is not None:
                current.notes.append(note)

    def _header(self, event: PlainEvent) -> None:
        header, reason = event.field("header"), event.field("reason")
        prefix = _field(header, "messagePrefix")
        messages = prefix if isinstance(prefix, list) else []
        shown = " | ".join(_brief(m) for m in messages[:3]) + (" | …" if len(messages) > 3 else "")
        reason_text = _show(reason) if reason is not None else "(no reason)"
        title = (f"request/header seq {event.seq}: reason {reason_text}\nmessagePrefix: {len(messages)} message(s)"
                 + (f": {_cut(shown, 400)}" if shown else "") + f"\nmodel: {_show(_field(_field(header, 'config'), 'model'))}")  # fmt: skip
        kind = reason if reason in ("initial", "resume", "change") else "reason-other"
        self.headers.append(_Mark(event.seq, str(kind), f"{reason_text} · {len(messages)} msg\n{shown}", title))

    def _surface(self, event: PlainEvent) -> None:
        op = event.surface_op
        self.surface.append(_Op(event.seq, _SHARED.get(event.type, event.type), None if op == APPEND else op))


# --- the requests, where the check matched them -------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Request:
    index: int
    seq: int | None  # the start of the step it sits at; None: on no step
    status: str  # conforms | violates | unchecked
    label: str
    title: str


def _requests(capture: Path, report: Report, events: _Events, findings_of: Counter[int | None]) -> list[_Request]:
    """Place each captured request: at the step it names, else where the check matched it in order."""
    step_at: dict[tuple[int | None, int | None], int] = {}
    for step in events.steps:
        step_at.setdefault(step.key, step.start)
    in_order = {match.request: (match.turn, match.step) for match in report.in_order}
    placed = []
    for request in iter_capture(capture):
        named = request.named  # MATCH-1: the capture names the step (Captured.named, its one expression)
        key = (request.turn, request.step) if named else in_order.get(request.index, (None, None))
        seq = step_at.get(key)
        messages = request.fields.get("messages")
        found = findings_of[request.index]
        if not request.loop_request:
            status, why = "unchecked", "auxiliary (not an agent-loop request): not checked"
        elif report.session_id is not None and request.session_id not in (None, report.session_id):
            status, why, seq = "unchecked", f"session {_show(request.session_id)}, not this log's: not checked", None
        elif found:
            status, why = "violates", f"{found} finding(s)"
        elif seq is None:
            status, why = "unchecked", "matched to no step of the log"
        else:
            status, why = "conforms", "conforms"
        how = f"names turn {key[0]} step {key[1]}" if named else f"matched in order to turn {key[0]} step {key[1]}" if key[0] is not None else "names no step"
        count = len(messages) if isinstance(messages, list) else 0
        title = f"request {request.index} (capture line {request.line}): {how}; {count} message(s)\n{why}"
        mark = {"conforms": "✓", "violates": "✗"}.get(status, "–")
        placed.append(_Request(request.index, seq, status, f"#{request.index} {mark}", title))
    return placed


# --- choosing what to draw ----------------------------------------------------------------------

_T = TypeVar("_T")


def _pick(items: Sequence[_T], rank: Callable[[_T], int]) -> tuple[list[_T], int]:
    """Return at most ``MAX_DRAWN`` of ``items`` in their order, lowest rank first, a rank that overflows spread evenly; and how many were left out."""
    limit = MAX_DRAWN
    if len(items) <= limit:
        return list(items), 0
    tiers: dict[int, list[int]] = {}
    for index, item in enumerate(items):
        tiers.setdefault(rank(item), []).append(index)
    chosen: list[int] = []
    for tier in sorted(tiers):
        indexes, room = tiers[tier], limit - len(chosen)
        if room <= 0:
            break
        chosen += indexes if len(indexes) <= room else [indexes[k * len(indexes) // room] for k in range(room)]
    chosen.sort()
    return [items[i] for i in chosen], len(items) - len(chosen)


# --- drawing ------------------------------------------------------------------------------------

LEFT, GUTTER, RIGHT, TOP = 180, 110, 12, 24
MAX_PLOT, MIN_PLOT, MAX_PX = 6000.0, 480.0, 24.0  # the plot's width bounds, and the widest an event gets
CHAR = 6.6  # px per character of the 11 px monospace labels
_HEIGHTS = {"turns": 24, "steps": 30, "compaction": 22, "headers": 46, "surface": 30, "requests": 36, "findings": 42}

_STYLE = """
text{font-family:monospace;font-size:11px;fill:#222}
.lane-name{font-weight:bold}.note{fill:#b03a2e;font-size:10px}.muted{fill:#666;font-size:10px}
.lane-bg{fill:#fafafa;stroke:#e4e4e4}.axis{stroke:#888}
.turn{fill:#d6e4f0;stroke:#7f9cbf}.step{fill:#4a69bd;stroke:#1e3799}.step-label{fill:#fff;font-size:10px}
.open{stroke-dasharray:4 2;fill-opacity:.55}.flagged{stroke:#c0392b;stroke-width:2}
.compaction{fill:#f8c291;stroke:#e58e26}
.header{stroke:#333}.initial{fill:#38ada9}.resume{fill:#f6b93b}.change{fill:#e55039}.reason-other{fill:#aaa}
.append{stroke-width:1.5}.user{stroke:#6a89cc}.assistant{stroke:#20a35a}.tool{stroke:#e58e26}.steering{stroke:#8e44ad}.other{stroke:#888}
.replace{fill:#8e44ad;stroke:#5b2c6f}.bracket{stroke:#8e44ad;fill:none;stroke-width:1.5}
.request.conforms{fill:#27ae60;stroke:#1e8449}.request.violates{fill:#c0392b;stroke:#922b21}.request.unchecked{fill:#fff;stroke:#95a5a6;stroke-width:2}
.finding{fill:#c0392b;stroke:#7b241c}.guide{stroke:#c0392b;stroke-opacity:.35;stroke-dasharray:2 2}
"""


def _num(value: float) -> str:
    """A coordinate as SVG text: two decimals at most, so the bytes do not depend on float noise."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _plot_width(events: int) -> float:
    """The axis's width in pixels: ``MAX_PX`` an event, within ``MIN_PLOT``..``MAX_PLOT`` (bounded whatever the log's size)."""
    slots = max(events, 1)
    return min(max(slots * MAX_PX, MIN_PLOT), max(MAX_PLOT, MIN_PLOT))


class _Canvas:
    """An SVG tree with the seq axis: ``x(seq)`` and helpers that clean every text they are given."""

    def __init__(self, events: int, lanes: Sequence[str], heading: Sequence[str], first: int = 0) -> None:
        from xml.etree import ElementTree

        self._tree = ElementTree
        self.first, self.last = first, first + max(events, 1) - 1  # the seqs on the axis
        self.plot = _plot_width(events)
        self.scale = self.plot / max(events, 1)
        self.gutter = LEFT + self.plot + 8  # where what has no seq is drawn
        self.lane_y: dict[str, tuple[float, float]] = {}
        y = TOP + 14.0 * len(heading)
        for lane in lanes:
            self.lane_y[lane] = (y, y + _HEIGHTS[lane])
            y += _HEIGHTS[lane] + 4
        self.bottom = y
        self.width, self.height = LEFT + self.plot + GUTTER + RIGHT, y + 34
        self.root = self._tree.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": _num(self.width), "height": _num(self.height),
                                               "viewBox": f"0 0 {_num(self.width)} {_num(self.height)}"})  # fmt: skip
        self.add(self.root, "style", text=_STYLE)
        for k, line in enumerate(heading):  # the first line names the file, the others say what was read and found
            self.add(self.root, "text", {"class": "lane-name" if k == 0 else "muted", "x": "8", "y": _num(18 + 14 * k)}, text=line)

    @staticmethod
    def columns(events: int) -> int:
        """How many characters of the heading's small text fit across a picture of ``events`` events."""
        return int((LEFT + _plot_width(events) + GUTTER - 16) / 6.1)

    def x(self, seq: int) -> float:
        return LEFT + (seq - self.first + 0.5) * self.scale

    def span(self, start: int, end: int) -> tuple[float, float]:
        """The left edge and width of seqs ``start``..``end`` cut to the axis: at least one pixel wide."""
        start, end = max(start, self.first), min(end, self.last)
        left = LEFT + (start - self.first) * self.scale
        return left, max((end - start + 1) * self.scale, 1.0)

    def add(self, parent: Element, tag: str, attributes: dict[str, str] | None = None, text: str | None = None, title: str | None = None) -> Element:
        element = self._tree.SubElement(parent, tag, {k: _clean(v) for k, v in (attributes or {}).items()})
        if title is not None:  # the tooltip: the first child of the shape it describes
            self._tree.SubElement(element, "title").text = _clean(_cut(title, _TITLE_LIMIT))
        if text is not None:
            element.text = _clean(text)
        return element

    def label(self, parent: Element, x: float, y: float, text: str, room: float, kind: str = "") -> None:
        """Write ``text`` at (x, y), cut to the ``room`` pixels it has; nothing when not three characters fit."""
        fitted = _cut(text, int(room / CHAR))
        if len(fitted) >= 3:
            self.add(parent, "text", {"x": _num(x), "y": _num(y), **({"class": kind} if kind else {})}, text=fitted)

    def serialize(self) -> str:
        return self._tree.tostring(self.root, encoding="unicode")


@dataclass
class Drawn:
    """What a timeline holds: the counts the summary line says, and what each lane left out."""

    events: int
    steps: int
    headers: int
    requests: int
    findings: int
    omitted: dict[str, int]
    window: tuple[int, int] | None = None  # the seqs drawn (None: all)
    windows: int = 0  # windows drawn around findings

    def summary(self, out: Path) -> str:
        left_out = sum(self.omitted.values())
        drawn = f"seqs {self.window[0]}..{self.window[1]} drawn" if self.window is not None else "all seqs drawn"
        return (f"prefix-model timeline: wrote {out} ({self.events} events, {self.steps} steps, {self.headers} request/header, "
                f"{self.requests} requests, {self.findings} findings; {drawn}; " + (f"{left_out} items not drawn" if left_out else "nothing left out")
                + (f"; {self.windows} window(s) around findings)" if self.windows else ")"))  # fmt: skip


def _finding_seqs(report: Report, requests: list[_Request]) -> list[int | None]:
    """Where each finding is drawn: its seq, else its request's step (None: nowhere on the axis)."""
    placed = {r.index: r.seq for r in requests}
    return [f.seq if f.seq is not None else placed.get(f.request) if f.request is not None else None for f in report.findings]


class _Picture:
    """Lays out one session, or the seqs ``window`` of it: each lane draws its capped items, then says what it left out.

    ``anchors`` maps a finding's index to the ``id`` its marker links to (a window drawn around it);
    ``ids`` prefixes every ``id`` of this picture, so that several fit on one page; a window's
    ``label`` heads it in place of the file's name.
    """

    def __init__(self, name: str, report: Report, events: _Events, requests: list[_Request], captured: bool,
                 window: tuple[int, int] | None = None, ids: str = "", anchors: dict[int, str] | None = None, label: str = "") -> None:  # fmt: skip
        self.name, self.report, self.events, self.requests, self.captured = name, report, events, requests, captured
        self.window, self.ids, self.anchors, self.label = window, ids, anchors or {}, label
        self.first, self.last = window if window is not None else (0, max(events.count, 1) - 1)
        self.findings = report.findings
        self.finding_seq = _finding_seqs(report, requests)
        self._flagged = sorted(seq for seq in self.finding_seq if seq is not None)
        self.omitted: dict[str, int] = {}
        self.drawn_findings: set[int] = set()  # the findings (numbered from 1) this picture drew a marker for
        self.canvas = _Canvas(self.last - self.first + 1, [lane for lane, _ in LANES], self._heading(), self.first)

    def caption(self) -> str:
        """What a window is around: its seqs and each finding in it, by rule and seq."""
        found = dict.fromkeys(f"{f.rule} at seq {seq}" for f, seq in zip(self.findings, self.finding_seq) if seq is not None and self._in(seq))
        return _cut(f"seqs {self.first}..{self.last}: " + ", ".join(found), 300)

    def _in(self, seq: int | None) -> bool:
        """Whether ``seq`` is on this picture's axis (what has no seq is drawn in the gutter of every picture)."""
        return seq is None or self.first <= seq <= self.last

    def _has_finding(self, start: int, end: int | None) -> bool:
        last = end if end is not None else self.events.count - 1
        at = bisect.bisect_left(self._flagged, start)
        return at < len(self._flagged) and self._flagged[at] <= last

    def _backgrounds(self) -> None:
        """Every lane's band and name, under everything else (the guides included)."""
        group = self.canvas.add(self.canvas.root, "g", {"class": "lanes"})
        for lane, (top, bottom) in self.canvas.lane_y.items():
            self.canvas.add(group, "rect", {"class": "lane-bg", "x": _num(LEFT), "y": _num(top), "width": _num(self.canvas.plot), "height": _num(bottom - top)})
            self.canvas.add(group, "text", {"class": "lane-name", "x": "8", "y": _num(top + 13)}, text=lane)

    def _lane(self, lane: str) -> tuple[Element, float, float]:
        top, bottom = self.canvas.lane_y[lane]
        return self.canvas.add(self.canvas.root, "g", {"class": "lane", "id": f"{self.ids}lane-{lane}"}), top, bottom

    def _note(self, lane: str, group: Element, top: float, drawn: int, left_out: int, empty: str = "none") -> None:
        self.omitted[lane] = left_out
        if left_out:  # never a silent cut: the lane says it
            self.canvas.add(group, "text", {"class": "note", "x": "8", "y": _num(top + 26)}, text=f"… {left_out} more not drawn")
        if not drawn and not left_out:
            self.canvas.add(group, "text", {"class": "muted", "x": _num(LEFT + 6), "y": _num(top + 14)}, text=empty)

    def _heading(self) -> list[str]:
        """The file, then what was read and found, wrapped to the picture's width (four lines at most)."""
        report, width = self.report, _Canvas.columns(self.last - self.first + 1)
        form = report.form + (", zstd" if report.compressed else "")
        facts = [f"session {report.session_id}" if report.session_id else "no session named", f"{self.events.count} events",
                 f"{report.steps} steps", f"{self.events.chunks} assistant/chunk (counted per step)",
                 f"{len(self.requests)} requests ({report.requests_checked} checked)",
                 "conforms" if report.conforms else f"{len(self.findings)} finding(s): " + ", ".join(f"{r} {n}" for r, n in report.by_rule().items()),
                 f"at most {MAX_DRAWN} items drawn per lane"]  # fmt: skip
        if self.events.seed is not None:
            parent, length = self.events.seed
            facts.append(f"forked from {parent or 'a parent session'}: seqs 0..{length - 1} are its seed")
        if report.torn_tail:
            facts.append(f"torn tail tolerated at {report.torn_tail}")
        if report.open_turn:
            facts.append(f"ends inside {report.open_turn}")
        if self.window is not None:
            outside = sum(1 for seq in self.finding_seq if not self._in(seq))
            facts.insert(0, f"seqs {self.first}..{self.last} of 0..{max(self.events.count, 1) - 1}" + (f" ({outside} finding(s) outside)" if outside else ""))
        lines = [""]
        for fact in facts:
            joined = f"{lines[-1]}; {fact}" if lines[-1] else fact
            if len(joined) <= width or not lines[-1]:
                lines[-1] = joined
            else:
                lines.append(fact)
        shown = [_cut(line, width) for line in lines[:4]]
        if len(lines) > 4:
            shown[-1] = _cut(shown[-1], width - 2) + " …"
        first = f"{self.label}: {self.caption()}" if self.label else f"prefix-model timeline: {self.name} ({form})"
        return [_cut(first, int(width / 1.1)), *shown]

    def draw(self) -> None:
        self._backgrounds()
        self._guides()
        self._spans("turns", self.events.turns, "turn", 3, 18)
        self._spans("steps", self.events.steps, "step", 4, 22)
        self._spans("compaction", self.events.compactions, "compaction", 4, 14)
        self._headers()
        self._surface()
        self._requests()
        self._findings()
        self._axis()

    def _guides(self) -> None:
        """A thin line per drawn finding across every lane: where to look, whichever lane the cause is in."""
        canvas = self.canvas
        group = canvas.add(canvas.root, "g", {"class": "guides"})
        top, bottom = canvas.lane_y[LANES[0][0]][0], canvas.bottom
        seqs, _ = _pick(sorted({seq for seq in self.finding_seq if seq is not None and self._in(seq)}), lambda _: 0)
        for seq in seqs:
            x = _num(canvas.x(seq))
            canvas.add(group, "line", {"class": "guide", "x1": x, "x2": x, "y1": _num(top), "y2": _num(bottom)})

    def _spans(self, lane: str, spans: list[_Span], kind: str, inset: float, height: float) -> None:
        canvas = self.canvas
        group, top, _ = self._lane(lane)
        last = self.events.count - 1
        shown = [s for s in spans if s.start <= self.last and (s.end if s.end is not None else last) >= self.first]
        drawn, left_out = _pick(shown, lambda s: 0 if self._has_finding(s.start, s.end) else 1)
        for span in drawn:
            end = span.end if span.end is not None else last
            left, width = canvas.span(span.start, max(end, span.start))
            classes = [kind] + (["open"] if span.end is None else []) + (["flagged"] if self._has_finding(span.start, span.end) else [])
            counts = f"; {span.chunks} assistant/chunk, {span.tools} tool/call" if kind == "step" else ""
            title = f"{span.name}: seqs {span.start}..{'' if span.end is None else span.end}{counts}" + "".join(f"; {n}" for n in span.notes)
            if span.end is None:
                title += "; open where the log ends"
            canvas.add(group, "rect", {"class": " ".join(classes), "x": _num(left), "y": _num(top + inset), "width": _num(width),
                                       "height": _num(height), "data-seq": str(span.start)}, title=title)  # fmt: skip
            short = span.name.replace("turn ", "t").replace(" step ", " s") if kind == "step" else span.name
            canvas.label(group, max(left, LEFT) + 3, top + inset + height / 2 + 4, short, width - 4, "step-label" if kind == "step" else "")
        self._note(lane, group, top, len(drawn), left_out)

    def _headers(self) -> None:
        canvas = self.canvas
        group, top, _ = self._lane("headers")
        drawn, left_out = _pick([m for m in self.events.headers if self._in(m.seq)], lambda m: 0 if self._has_finding(m.seq, m.seq) else 1)
        for k, mark in enumerate(drawn):
            x, y = canvas.x(mark.seq), top + 11
            flagged = " flagged" if self._has_finding(mark.seq, mark.seq) else ""
            points = f"{_num(x)},{_num(y - 7)} {_num(x + 7)},{_num(y)} {_num(x)},{_num(y + 7)} {_num(x - 7)},{_num(y)}"
            canvas.add(group, "polygon", {"class": f"header {mark.kind}{flagged}", "points": points, "data-seq": str(mark.seq)}, title=mark.title)
            room = (canvas.x(drawn[k + 1].seq) - 10 if k + 1 < len(drawn) else LEFT + canvas.plot) - (x + 9)
            first, _, second = mark.label.partition("\n")
            canvas.label(group, x + 9, y + 4, first, room)
            canvas.label(group, x - 4, y + 22, second, room + 13, "muted")
        self._note("headers", group, top, len(drawn), left_out)

    def _surface(self) -> None:
        canvas = self.canvas
        group, top, bottom = self._lane("surface")
        drawn, left_out = _pick([o for o in self.events.surface if self._in(o.seq)], lambda o: 0 if self._has_finding(o.seq, o.seq) else 1 if isinstance(o.op, Replace) else 2)
        for seq, kind, op in drawn:
            x, shade = canvas.x(seq), _SURFACE_CLASS.get(kind, "other")
            if isinstance(op, Replace):
                if op.start <= self.last and op.end >= self.first:  # the bracket over what it replaces, where that is on the axis
                    left, width = canvas.span(op.start, max(op.end, op.start))
                    path = f"M{_num(left)},{_num(top + 10)} v-5 h{_num(width)} v5 M{_num(left + width / 2)},{_num(top + 5)} L{_num(x)},{_num(top + 16)}"
                    canvas.add(group, "path", {"class": "bracket", "d": path})
                title = f"{kind} seq {seq}: replaces seqs {op.start}..{op.end} on the surface"
                canvas.add(group, "rect", {"class": f"replace {shade}", "x": _num(x - 4), "y": _num(top + 14), "width": "8", "height": "8",
                                           "data-seq": str(seq)}, title=title)  # fmt: skip
            else:
                title = f"{kind} seq {seq}: " + ("append" if op is None else f"surfaceOp {_show(op)}")
                canvas.add(group, "line", {"class": f"append {shade}", "x1": _num(x), "x2": _num(x), "y1": _num(top + 12), "y2": _num(bottom - 4),
                                           "data-seq": str(seq)}, title=title)  # fmt: skip
        self._note("surface", group, top, len(drawn), left_out)

    def _requests(self) -> None:
        canvas = self.canvas
        group, top, _ = self._lane("requests")
        on_steps = [r for r in self.requests if r.seq is not None and self._in(r.seq)]
        drawn, left_out = _pick(on_steps, lambda r: 0 if r.status == "violates" else 1)
        y = top + 12
        for k, request in enumerate(drawn):
            assert request.seq is not None
            x = canvas.x(request.seq)
            attributes = {"class": f"request {request.status}", "data-request": str(request.index)}
            if request.status == "violates":
                canvas.add(group, "rect", attributes | {"x": _num(x - 5), "y": _num(y - 5), "width": "10", "height": "10"}, title=request.title)
            else:
                canvas.add(group, "circle", attributes | {"cx": _num(x), "cy": _num(y), "r": "5"}, title=request.title)
            room = (canvas.x(drawn[k + 1].seq or 0) if k + 1 < len(drawn) else LEFT + canvas.plot + 6) - x - 4
            canvas.label(group, x - 6, y + 18, request.label, room)
        elsewhere = [r for r in self.requests if r.seq is None]
        if elsewhere:  # one mark for all of them: they have no place on the axis
            counts = Counter(r.status for r in elsewhere)
            title = f"{len(elsewhere)} request(s) on no step of the log: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            title += "".join(f"\n{r.title}" for r in elsewhere[:20]) + (f"\n… {len(elsewhere) - 20} more" if len(elsewhere) > 20 else "")
            status = "violates" if counts["violates"] else "unchecked"
            x = canvas.gutter + 8
            canvas.add(group, "circle", {"class": f"request {status} elsewhere", "cx": _num(x), "cy": _num(y), "r": "5"}, title=title)
            canvas.label(group, x + 8, y + 4, f"{len(elsewhere)} on no step", GUTTER - 16)
        self._note("requests", group, top, len(drawn) + len(elsewhere), left_out, "none" if self.captured else "no capture (--requests) given")

    def _findings(self) -> None:
        canvas = self.canvas
        group, top, _ = self._lane("findings")
        indexed = [(n, finding, seq) for n, (finding, seq) in enumerate(zip(self.findings, self.finding_seq), 1) if self._in(seq)]
        picked, left_out = _pick(indexed, lambda _: 0)
        drawn = [(finding, seq) for _, finding, seq in picked]
        stacked: Counter[int | None] = Counter()
        self.drawn_findings = {n for n, _, _ in picked}
        for n, finding, seq in picked:
            x = canvas.x(seq) if seq is not None else canvas.gutter + 8
            row = stacked[seq] % 3  # up to three rows at one seq, each marker its own tooltip
            stacked[seq] += 1
            y = top + 10 + row * 11
            points = f"{_num(x)},{_num(y - 5)} {_num(x + 5)},{_num(y + 5)} {_num(x - 5)},{_num(y + 5)}"
            attributes = {"class": "finding", "points": points, "data-rule": finding.rule, "id": f"{self.ids}finding-{n}"}
            parent = canvas.add(group, "a", {"href": f"#{self.anchors[n]}"}) if n in self.anchors else group  # one click to its window
            canvas.add(parent, "polygon", attributes | ({"data-seq": str(seq)} if seq is not None else {}), title=str(finding))
        rules: dict[int | None, list[str]] = {}
        for finding, seq in drawn:
            named = rules.setdefault(seq, [])
            if finding.rule not in named:
                named.append(finding.rule)
        places = sorted((seq for seq in rules if seq is not None), key=int)
        for k, seq in enumerate(places):  # the rules found at a seq, beside its markers, as far as the next one
            x = canvas.x(seq)
            room = (canvas.x(places[k + 1]) if k + 1 < len(places) else LEFT + canvas.plot) - x - 10
            canvas.label(group, x + 8, top + 14, ", ".join(rules[seq]), room)
        if None in rules:
            canvas.label(group, canvas.gutter + 16, top + 14, "no seq: " + ", ".join(rules[None]), GUTTER - 16, "muted")
        self._note("findings", group, top, len(drawn), left_out, "none: the check found nothing")

    def _axis(self) -> None:
        canvas = self.canvas
        group = canvas.add(canvas.root, "g", {"class": "axis-group"})
        y = canvas.bottom + 4
        canvas.add(group, "line", {"class": "axis", "x1": _num(LEFT), "x2": _num(LEFT + canvas.plot), "y1": _num(y), "y2": _num(y)})
        every = _tick_every(canvas.scale)
        for seq in range(-(-self.first // every) * every, self.last + 1, every):
            x = _num(canvas.x(seq))
            canvas.add(group, "line", {"class": "axis", "x1": x, "x2": x, "y1": _num(y), "y2": _num(y + 4)})
            canvas.add(group, "text", {"x": x, "y": _num(y + 16), "text-anchor": "middle"}, text=str(seq))
        canvas.add(group, "text", {"class": "muted", "x": "8", "y": _num(y + 16)}, text="event seq")


def _tick_every(scale: float) -> int:
    """The seq step of the axis labels: 1, 2 or 5 times a power of ten, at least 64 px apart."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor * scale >= 64:
                return step * factor
        step *= 10


# --- the page -----------------------------------------------------------------------------------


def _swatch(shape: str, classes: str) -> str:
    """A 14 px inline SVG of one mark, drawn with the picture's own classes (its style sheet applies to the whole page)."""
    drawn = {"rect": '<rect x="1" y="2" width="12" height="10"', "line": '<line x1="7" x2="7" y1="1" y2="13"',
             "circle": '<circle cx="7" cy="7" r="5"', "polygon": '<polygon points="7,1 13,7 7,13 1,7"',
             "path": '<path d="M1,9 v-5 h12 v5"'}[shape]  # fmt: skip
    if classes == "finding":
        drawn = '<polygon points="7,2 12,12 2,12"'
    return f'<svg class="swatch" width="14" height="14" viewBox="0 0 14 14">{drawn} class="{classes}"/></svg>'


def legend_html() -> str:
    """The legend: each lane, what it shows, and a swatch of each kind of mark it draws."""
    rows = []
    for name, text in LANES:
        marks = " ".join(f'<span class="key">{_swatch(shape, classes)} {html.escape(label)}</span>' for shape, classes, label in SWATCHES[name])
        rows.append(f"<dt>{html.escape(name)}</dt><dd>{html.escape(text)}<br>{marks}</dd>")
    return f"<dl>{''.join(rows)}</dl>"


def _page(picture: _Picture, svg: str, windows: list[tuple[_Picture, str]], windows_left_out: int) -> str:
    """One self-contained HTML page: the SVG inline, the windows around findings, the legend, the findings (capped like a lane)."""

    def escape(text: str) -> str:
        return html.escape(_clean(text))

    report, findings = picture.report, picture.findings
    shown, left_out = findings[:MAX_DRAWN], len(findings) - min(len(findings), MAX_DRAWN)
    items = []
    for n, (finding, seq) in enumerate(zip(shown, picture.finding_seq), 1):
        target = picture.anchors.get(n) or (f"finding-{n}" if n in picture.drawn_findings else None)
        where = f"seq {seq}" if seq is not None else "no seq"
        jump = f'<a href="#{target}">{where}: show</a>' if target is not None else f"{where} (not in this picture)"
        items.append(f'<li id="listed-{n}">{jump}<pre>{escape(_cut(str(finding), _TITLE_LIMIT))}</pre></li>')
    rules = ", ".join(f"{rule} {count}" for rule, count in report.by_rule().items())
    listed = (f"<ol>{''.join(items)}</ol>" + (f"<p class=\"note\">… {left_out} more not listed</p>" if left_out else "")
              + f"<p>by rule: {escape(rules)}</p>") if findings else "<p>none: the check found nothing.</p>"  # fmt: skip
    around = "".join(f'<section id="window-{k}"><h3>{escape(w.caption())}</h3><div class="picture">{text}</div>'
                     '<p><a href="#findings">back to the findings</a></p></section>\n' for k, (w, text) in enumerate(windows, 1))  # fmt: skip
    if windows_left_out:
        around += f'<p class="note">… {windows_left_out} more windows not drawn</p>\n'
    title = escape(f"prefix-model timeline: {picture.name}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{title}</title>\n"
        "<style>body{font-family:sans-serif;margin:16px;color:#222}.picture{overflow-x:auto;border:1px solid #ddd}"
        "dt{font-weight:bold;font-family:monospace}pre{white-space:pre-wrap;margin:0}li{margin:4px 0}.note{color:#b03a2e}"
        ".key{white-space:nowrap;margin-right:12px;font-size:90%}.swatch{vertical-align:middle}</style>\n"
        f"</head>\n<body>\n<h1>{title}</h1>\n<div class=\"picture\">{svg}</div>\n"
        + (f"<h2>Around each finding</h2>\n{around}" if windows or windows_left_out else "")
        + f"<h2>Legend</h2>\n{legend_html()}\n<h2 id=\"findings\">Findings ({len(findings)})</h2>\n{listed}\n</body>\n</html>\n"
    )


# --- the command --------------------------------------------------------------------------------


def output_format(out: Path) -> str:
    """Return ``.svg`` or ``.html`` from ``out``'s suffix; raise ``TimelineError`` for another, or for a directory."""
    if out.is_dir():
        raise TimelineError(f"{out}: --out is a directory; name a file")
    suffix = out.suffix.lower()
    if suffix not in (SVG, HTML):
        raise TimelineError(f"{out}: --out must end in .svg or .html (the format follows the suffix)")
    return suffix


def _write(out: Path, data: bytes) -> None:
    """Write ``data`` to ``out`` whole or not at all: a temporary file in its directory, then a rename."""
    try:
        handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as error:
        raise TimelineError(f"{out}: cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(stream.fileno(), 0o666 & ~mask)  # the mode an ordinary new file gets, not mkstemp's 0600
            stream.write(data)
        os.replace(temporary, out)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise TimelineError(f"{out}: cannot write: {error.strerror or error}") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _renamed(error: LogReadError | Unusable, copies: dict[str, str]) -> Exception:
    """The error with a pipe's temporary copy called what the user gave (``/dev/stdin``, the FIFO's path)."""
    text = str(error)
    for copy, name in copies.items():
        text = text.replace(copy, name)
    return error if text == str(error) else TimelineError(text)


@dataclass(frozen=True)
class View:
    """Which seqs to draw (``--from``/``--to``, or ``--around`` with ``--context``) and whether to add a window per finding."""

    first: int | None = None
    last: int | None = None
    around: int | None = None
    context: int = CONTEXT
    findings: bool = False

    def window(self, count: int) -> tuple[int, int] | None:
        """The seqs drawn, within 0..count-1 (None: the whole log); ``TimelineError`` for one the log does not reach."""
        if self.around is None and self.first is None and self.last is None:
            return None
        end = max(count, 1) - 1
        if self.around is not None:
            if self.around > end:
                raise TimelineError(f"--around {self.around}: the log's last seq is {end}")
            return max(self.around - self.context, 0), min(self.around + self.context, end)
        self.check()
        first, last = self.first if self.first is not None else 0, self.last if self.last is not None else end
        if first > end:
            raise TimelineError(f"--from {first}: the log's last seq is {end}")
        return first, min(last, end)

    def check(self) -> None:
        """Raise ``TimelineError`` for a range that is empty whatever the log (before any is read)."""
        if self.first is not None and self.last is not None and self.first > self.last:
            raise TimelineError(f"--from {self.first} is after --to {self.last}")


def windows_around(seqs: Sequence[int | None], context: int, count: int, within: tuple[int, int]) -> list[tuple[int, int]]:
    """The windows of ``context`` seqs each side of each seq in ``within`` (none for a finding with no seq), those that overlap or touch merged."""
    merged: list[tuple[int, int]] = []
    end = max(count, 1) - 1
    for seq in sorted({seq for seq in seqs if seq is not None and within[0] <= seq <= within[1]}):
        first, last = max(seq - context, 0), min(seq + context, end)
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def _combined(pictures: list[tuple[str, _Picture]]) -> str:
    """Several pictures stacked in one SVG, each a nested ``<svg>`` with its ``id``."""
    from xml.etree import ElementTree

    width, height = max(p.canvas.width for _, p in pictures), sum(p.canvas.height + 16 for _, p in pictures)
    root = ElementTree.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": _num(width), "height": _num(height),
                                       "viewBox": f"0 0 {_num(width)} {_num(height)}"})  # fmt: skip
    y = 0.0
    for ident, picture in pictures:
        nested = picture.canvas.root
        nested.attrib.pop("xmlns", None)
        nested.attrib |= {"id": ident, "x": "0", "y": _num(y)}
        root.append(nested)
        y += picture.canvas.height + 16
    return ElementTree.tostring(root, encoding="unicode")


def draw_timeline(log: Path, requests: Path | None, session: str | None, out: Path, name: str | None = None, view: View = View()) -> Drawn:
    """Draw the session of ``log`` (with the capture ``requests``) into ``out``; return what it holds.

    ``view`` picks the seqs drawn and asks for a window around each finding (below the picture,
    each finding's marker a link to its window). ``log`` may be ``STDIN`` or any pipe: both files are read twice (the events, then the check),
    so a pipe is copied once to a temporary file first, as ``check`` does. Unreadable input raises
    ``LogReadError``, input the check cannot use ``Unusable`` (or ``TimelineError`` naming the pipe).
    """
    suffix = output_format(out)
    name = name if name is not None else str(log)
    copies: dict[str, str] = {}
    with ExitStack() as stack:
        readable = stack.enter_context(rereadable(log))
        capture = None if requests is None else stack.enter_context(rereadable(requests))
        copies |= {str(readable): name} if readable != log else {}
        copies |= {str(capture): str(requests)} if capture is not None and capture != requests else {}
        events = _Events()
        try:
            stream = LogStream(readable, name)
            for _, event in stream.plain_events(go_on=True):  # past a damaged line, as the check reads (CHK-4)
                if isinstance(event, Unread):
                    if event.final:
                        break
                    continue  # its finding is the check's
                events.feed(event)
            if stream.header is not None and stream.header.seed_length:
                events.seed = (stream.header.parent_session, stream.header.seed_length)
            window = view.window(events.count)  # a range the log does not reach: said before the check's work
            report = check_log(readable, capture, session)
            findings_of: Counter[int | None] = Counter(f.request for f in report.findings if f.request is not None)
            placed = _requests(capture, report, events, findings_of) if capture is not None else []
        except (LogReadError, Unusable) as error:
            raise _renamed(error, copies) from None
    spots: list[tuple[int, int]] = []
    anchors: dict[int, str] = {}
    if view.findings:
        seqs = _finding_seqs(report, placed)
        spots = windows_around(seqs, view.context, events.count, window if window is not None else (0, max(events.count, 1) - 1))
        for n, seq in enumerate(seqs, 1):
            k = next((k for k, (a, b) in enumerate(spots[:MAX_WINDOWS], 1) if seq is not None and a <= seq <= b), None)
            if k is not None:
                anchors[n] = f"window-{k}"
    picture = _Picture(name, report, events, placed, capture is not None, window, anchors=anchors)
    picture.draw()
    shown = [_Picture(name, report, events, placed, capture is not None, spot, ids=f"w{k}-", label=f"window {k}")
             for k, spot in enumerate(spots[:MAX_WINDOWS], 1)]
    for each in shown:
        each.draw()
    left_out = len(spots) - len(shown)
    if suffix == HTML:
        body = _page(picture, picture.canvas.serialize(), [(w, w.canvas.serialize()) for w in shown], left_out)
    else:
        svg = picture.canvas.serialize() if not shown else _combined([("overview", picture), *((f"window-{k}", w) for k, w in enumerate(shown, 1))])
        body = '<?xml version="1.0" encoding="utf-8"?>\n' + svg + "\n"
    _write(out, body.encode("utf-8"))
    return Drawn(events.count, len(events.steps), len(events.headers), len(placed), len(report.findings), picture.omitted, window, len(shown))

