"""Spec §14 — conformance as a fold: one pass over a log, its captured requests compared as they come.

``LogChecker.feed(line, event)`` folds one event and adds what it finds to ``findings``;
``finish`` ends the log. Its arms follow the spec: the envelope and the record rules of §2 and §5 (LOG-*, HDR-*,
PFX-6, CMP-1, as ``check_event``/``check_header_event`` and the record arm state them), the
enclosure of turns and steps (ENC-1..3), the surface (§3, the core's own ``surface_step`` and
``derive_event_message``, asked of the fold's plain events), then each step's
request: matched with the capture (MATCH-1, MATCH-2) and compared (REC-1, REC-2, REC-3). The loop's
log-visible properties (``loop.properties``) are "this fold finds nothing over the run".

The state — the live surface (each node's plain message and its compact text), the folded
header, the open step — is updated in place, so memory follows the surface, not the file. The
fold works on ``PlainEvent`` values and asks a screen (``conformance.screens``) whether the
common case is plainly fine; when it is not, the event or request is frozen and judged by the
spec's function. Each screen carries a contract stating that implication, checked at every call
when contracts are on (the test suite). A captured request that equals the expected one text for
text passes without being frozen; any other is frozen and compared field by field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
import itertools
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, overload

from prefix_model.conformance.findings import MISSING, Finding, Marker, differences, first_difference, key_order_only, listed
from prefix_model.conformance.instances import LOG_ONLY_READINGS, Anchor, Claim, judge
from prefix_model.conformance.plain import Known, PlainEvent, Spans, from_event, plain_text, to_event
from prefix_model.conformance.screens import DEEP, append_provenance_ok, envelope_ok
from prefix_model.core.contracts import ENABLED, Rejection, RejectedError, ensure, require  # RejectedError: Captured.exact's ``:raises:``
from prefix_model.core.derive import derive_event_message
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    COMPACT_END,
    COMPACT_START,
    REQUEST_HEADER,
    STEP_END,
    STEP_START,
    SURFACE_TYPES,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    Event,
    Replace,
    check_event,
    seq_gap,
)
from prefix_model.core.headers import CHANGE, INITIAL, EpochHeader, canonical_header, check_header_event, header_equals, header_of
from prefix_model.core.json_values import MAX_DEPTH, MAX_SAFE_INTEGER, FrozenMap, JsonValue, freeze, is_json_value, json_text, thaw
from prefix_model.core.requests import Request, build_request, is_step_number, request_to_json
from prefix_model.core.surface import surface_step

__all__ = ["Captured", "InOrder", "StepResult", "SurfaceNodes", "LogChecker", "check_events", "captured_request"]

_STEP_SCOPED = frozenset((ASSISTANT_CHUNK, ASSISTANT_MESSAGE, TOOL_CALL))
_SURFACE = frozenset(SURFACE_TYPES)
_STEP_EDGES = frozenset((STEP_START, ASSISTANT_CHUNK, STEP_END, TURN_END))  # the events ``_step_events`` acts on
_COMPANION_FIELDS = ("model", "system", "temperature", "maxTokens", "stop", "tools")
_SESSION_ID = frozenset(("sessionId",))  # REC-2 compares every field but the session id

_END = 2**63 - 1  # ``index``'s default stop: past any list's end, as list.index's own (sys.maxsize)


def _positions_agree(nodes: SurfaceNodes) -> bool:
    """Whether ``nodes``' positions by seq, when kept, are those of its list."""
    return nodes._at is None or nodes._at == {seq: position for position, seq in enumerate(nodes._seqs)}


class SurfaceNodes(Sequence[int]):
    """The live surface's nodes in order, with each one's position kept by seq: ``replacement_range`` finds a node without a scan.

    A list answers ``in`` and ``index`` by scanning it, so each replacement cost the surface's
    length: a tool/result rewritten every turn made the check quadratic in the surface. Here a
    rewrite costs O(1), and a replacement of k nodes O(k) plus the nodes after it (which the
    list's splice moves anyway). The answers are the list's: a seq that is no int, or one already
    on the surface (a log breaking LOG-2), stops the keeping, and the list's scan answers from then.
    """

    __slots__ = ("_seqs", "_at")

    def __init__(self, nodes: Iterable[int] = ()) -> None:
        self._seqs: list[int] = []
        self._at: dict[int, int] | None = {}
        if isinstance(nodes, SurfaceNodes):  # a fork's copy
            self._seqs, self._at = list(nodes._seqs), None if nodes._at is None else dict(nodes._at)
        else:
            for seq in nodes:
                self.append(seq)

    def __len__(self) -> int:
        return len(self._seqs)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index: int | slice) -> int | list[int]:
        return self._seqs[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._seqs)

    def __contains__(self, seq: object) -> bool:
        return seq in self._seqs if self._at is None or type(seq) is not int else seq in self._at

    @ensure(lambda self, value, result: self._seqs.index(value) == result, "CHK-2: the position list.index gives", enabled=ENABLED)
    def index(self, value: Any, start: int = 0, stop: int = _END) -> int:
        """Return the first position of ``value``, as ``list.index`` does.

        :raises ValueError: when ``value`` is no node (as ``list.index`` raises)
        """
        if self._at is None or type(value) is not int or start != 0 or stop != _END:
            return self._seqs.index(value, start, stop)
        position = self._at.get(value)
        if position is None:
            raise ValueError(f"{value} is not a node")
        return position

    @ensure(lambda self, seq: self._seqs[-1] == seq and _positions_agree(self), "CHK-2: the seq is the last node, its position kept", enabled=ENABLED)
    def append(self, seq: int) -> None:
        """Add ``seq`` as the last node."""
        self._keep(seq, len(self._seqs))
        self._seqs.append(seq)

    @require(lambda self, i, j: 0 <= i <= j < len(self), "SURF-5: start position ≤ end position, both current", enabled=ENABLED)
    @ensure(lambda self, i, seq: self._seqs[i] == seq and _positions_agree(self), "SURF-6: the seq takes the range's position, the positions kept", enabled=ENABLED)
    def splice(self, i: int, j: int, seq: int) -> None:
        """Replace the nodes at positions ``i..j`` (inclusive) by ``seq``, in place (``splice_nodes`` on a tuple)."""
        seqs, at = self._seqs, self._at
        if at is not None:
            for old in seqs[i : j + 1]:
                del at[old]
        seqs[i : j + 1] = [seq]
        self._keep(seq, i)
        if self._at is not None and j > i:  # the nodes after the range moved back
            for position in range(i + 1, len(seqs)):
                self._at[seqs[position]] = position

    def _keep(self, seq: int, position: int) -> None:
        at = self._at
        if at is None:
            return
        if type(seq) is not int or seq in at:
            self._at = None
        else:
            at[seq] = position


@dataclass(slots=True)  # not frozen: one is built per request, and a frozen one builds field by field through object.__setattr__
class Captured:
    """A captured request: its place in the capture, its plain request fields, the step it names and who sent it.

    The one type of a captured request, whether a capture line (``edge/formats/capture.py``,
    CAP-1) or a model-built request (``captured_request``). ``loop_request`` is False for an
    auxiliary call (such as the compaction summarizer) that reconstruction does not cover.
    """

    index: int
    line: int
    fields: dict[str, object]
    turn: int | None = None
    step: int | None = None
    source: str = "<capture>"
    # Its text nests at most MAX_DEPTH levels (else only ``exact`` can tell JSON-7); None: not counted yet (``read_whole`` counts).
    shallow: bool | None = True
    text: str = ""  # the capture line, when read from one
    spans: Spans = field(default_factory=dict)  # where each field's value sits in ``text`` (a compact line)
    instance: str | None = None  # the loop instance that sent it, where the capture names one (INST-1..3)
    loop_request: bool = True
    session_id: str | None = None
    # How a lossy value found by ``exact`` is reported: the capture reader names its file and line (CAP-1).
    refused: Callable[[Captured, Rejection], Exception] | None = None

    @require(lambda self, name: name in self.fields, "CHK-2: a field the request has (the caller compared the field names first)", enabled=ENABLED)
    @ensure(
        lambda self, name, want, result: result == (plain_text(self.fields[name]) == want),
        "CHK-2: a field's own text in the line passes only when it is the field's compact text",
        enabled=ENABLED,
    )
    def same(self, name: str, want: str) -> bool:
        """Return whether field ``name`` has the compact text ``want`` (its own text first: no re-encoding)."""
        span = self.spans.get(name)
        if span is not None and span[1] - span[0] == len(want) and self.text.startswith(want, span[0]):
            return True
        return plain_text(self.fields[name]) == want

    @property
    # no contract: MATCH-1's "names turn and step" is its one expression; a contract would restate it
    def named(self) -> bool:
        """Return whether the capture says which step sent it."""
        return self.turn is not None and self.step is not None

    # no contract: it returns nothing and judges through exact, which carries its own
    def read_whole(self) -> None:
        """Check what the reader left to the fold: JSON-7 for a value its text may nest too deep."""
        if self.shallow is None:  # a reader leaves the count to the few requests read whole (most are compared by text)
            self.shallow = self.text.count("[") + self.text.count("{") <= MAX_DEPTH
        if not self.shallow:
            self.exact()

    @ensure(lambda self, result: thaw(result) == self.fields, "JSON-3: the request frozen is its fields, nothing lost", enabled=ENABLED)
    def exact(self) -> FrozenMap:
        """Return the request frozen, as the spec compares it (``freeze`` raises on a lossy value).

        :raises RejectedError: when a value is not lossless JSON (or what ``refused`` makes of it)
        """
        try:
            value = freeze(self.fields)
        except RejectedError as error:
            if self.refused is None:
                raise
            raise self.refused(self, error.rejection) from None
        assert isinstance(value, FrozenMap)
        return value


class InOrder(NamedTuple):
    """A captured request that names no step, and the dispatching step it was matched to in order."""

    request: int
    line: int
    turn: int
    step: int


@dataclass(slots=True)
class StepResult:
    """One step of the log: where it starts, its instance, and how its request was resolved."""

    turn: int
    step: int
    start_seq: int
    instance: int
    boundary_nodes: int
    dispatched: bool | None = None  # True: a header or chunk proves it; None: cannot tell
    start_line: int | None = None  # the log line of its step/start
    # The boundary's nodes as (seq, message), kept where a replacement changed the nodes inside the step's header window
    # (REQ-3: the boundary is the nodes before step/start; REQ-4: the header is the one in force at the first chunk).
    boundary: tuple[tuple[int, object], ...] | None = None


@dataclass(slots=True)
class _Open:
    step: StepResult
    header_seen: bool = False
    resolved: bool = False


@dataclass(frozen=True, slots=True)
class _Expectation:
    """What every request sent under one header carries besides its history, as compact texts."""

    header: EpochHeader
    fields: dict[str, str]  # request field name -> text (every field but messages and sessionId)
    prefix: str  # the messagePrefix messages' texts, each followed by a comma
    prefix_items: list[object]  # the messagePrefix messages, plain
    shallow: bool  # nests little enough that an equal request nests within JSON-7's limit
    names: frozenset[str]  # the fields an expected request has (messages included; sessionId aside)


def _expectation(header: EpochHeader, depth: int) -> _Expectation:
    fields = {k: plain_text(thaw(v)) for k, v in request_to_json(build_request(header, ())).items() if k != "messages"}
    items = [thaw(m) for m in header.message_prefix or ()]
    prefix = "".join(plain_text(m) + "," for m in items)
    return _Expectation(header, fields, prefix, items, depth <= DEEP, frozenset(fields) | {"messages"})


@dataclass(slots=True)
class _Previous:
    """An instance's last compared request, for prompt-cache monotonicity (REC-3)."""

    request: Captured
    header: EpochHeader
    generation: int
    exact: bool  # it equals the request the log expects
    finding: int | None  # the index of its messages finding (REC-1) in ``findings``, if it has one


class _CaptureQueue:
    """The capture, read lazily in file order: the head is matched against the log's steps."""

    def __init__(self, captured: Iterable[Captured], taken: int = 0) -> None:
        self._source: Iterator[Captured] = iter(captured)
        self._head: Captured | None = None
        self._done = False  # the capture was seen to end: a step was matched against no request
        self.taken = taken  # requests popped so far

    def head(self) -> Captured | None:
        if self._head is None and not self._done:
            self._head = next(self._source, None)
            self._done = self._head is None
        return self._head

    def pop(self) -> Captured:
        head = self.head()
        assert head is not None
        self._head = None
        self.taken += 1
        return head


def _envelope_judged(self: LogChecker, line: int, event: PlainEvent) -> bool:
    """The first rule the spec's envelope and header checks find in ``event`` is among the findings at ``line``."""
    if event.depth > MAX_DEPTH:
        return True  # freeze refuses it (JSON-7): the readers never hand such an event over
    frozen = to_event(event)
    found = check_event(frozen, event.seq) or check_header_event(frozen)
    return found is None or any(f.rule == found.rule and f.line == line and f.seq == event.seq for f in reversed(self.findings))


@dataclass
class LogChecker:
    """Feed events in order with ``feed``; then ``finish``. Findings accumulate in ``findings``."""

    session_id: str | None = None
    captured: Iterable[Captured] = ()
    seed_length: int = 0  # a fork child's inherited events: their steps sent the parent's requests
    findings: list[Finding] = field(default_factory=list)
    steps: int = 0
    events: int = 0
    requests_checked: int = 0
    requests_unmatched: int = 0
    requests_by_step: int = 0  # matched by the turn/step they name
    requests_after_stop: int = 0  # left in the capture when the log's reading stopped (``finish(stopped=True)``)
    in_order: list[InOrder] = field(default_factory=list)  # the requests matched in order (they name no step), and where
    # Told of each step as its request resolves (REQ-4: at its first chunk or its end), while the fold's state is that
    # request's (``request_for``).
    resolved: Callable[[StepResult], None] | None = None
    # --- state ---
    _queue: _CaptureQueue = field(init=False)
    _next_seq: int = 0  # the seq the next event must have (LOG-2); past a gap, the one after the event that opened it
    _resync: bool = False  # a line that was no event came before: the next event may take the numbering up further on
    _run_reason: str = ""  # the first reason of the run of unreadable lines the last finding covers
    _nodes: SurfaceNodes = field(default_factory=lambda: SurfaceNodes())
    _live: dict[int, PlainEvent] = field(default_factory=dict)
    _messages: dict[int, dict[str, object] | None] = field(default_factory=dict)
    _pieces: list[str | None] = field(default_factory=list)  # per node: its message's text and a comma ("" for none); None until needed
    _filled: int = 0  # every piece before this position is known
    _head: tuple[_Expectation, int, int, str] | None = None  # the last messages head written: for whom, generation, boundary
    _known: tuple[_Expectation, int, int, list[object]] | None = None  # the last guessed messages: for whom, generation, boundary
    _deep_nodes: int = 0
    _generation: int = 0
    _header: EpochHeader | None = None
    _header_seq: int | None = None  # the seq of the snapshot that made ``_header``
    _expected: _Expectation | None = None
    _anchor_prefix: str | None = None
    _anchor_value: JsonValue = ()  # the anchor's prefix itself, for the finding
    _anchor_seq: int | None = None  # the seq of the last anchor snapshot
    # Per instance the capture names: the anchor its requests were sent under. A name is a new anchor's or an INST-3
    # finding's, so this grows with the log's anchors and the findings, never with the capture's length (CHK-2).
    _named: dict[str, Anchor] = field(default_factory=dict)
    _claim: Claim | None = None  # the newest anchor a named instance was sent under
    _instances: int = 0
    _open_turn: int | None = None
    _next_turn: int = 1
    _open_step: _Open | None = None
    _next_step: int = 1
    _pending_calls: set[str] = field(default_factory=set)
    _compacting: bool = False
    _in_order_blocked: bool = False
    _previous: dict[int, _Previous] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._queue = _CaptureQueue(self.captured)

    # no contract: a copy of the state, no rule; the loop properties' tests fold every prefix both ways and compare
    def fork(self, captured: Sequence[Captured]) -> LogChecker | None:
        """Return an unfinished copy of this fold that reads ``captured`` as its capture, or None where it cannot go on.

        ``captured`` must begin with the requests this fold was given (the very objects); the copy
        is then what a fold of the same events over ``captured`` would be, so feeding it the next
        events and finishing it finds what a fold of the whole log finds. That holds unless this
        fold found the capture exhausted (a step matched against no request, which a longer
        capture would have given one): then None, and the caller folds afresh.
        """
        if self._queue._done or self.resolved is not None:
            return None
        copy = replace(self, captured=captured)  # a new queue over all of ``captured`` (replaced below)
        for name, value in vars(self).items():
            if isinstance(value, (list, dict, set)):
                setattr(copy, name, type(value)(value))
            elif isinstance(value, SurfaceNodes):
                setattr(copy, name, SurfaceNodes(value))
        if self._open_step is not None:
            copy._open_step = _Open(replace(self._open_step.step), self._open_step.header_seen, self._open_step.resolved)
        copy._queue = _CaptureQueue(itertools.islice(captured, self._queue.taken, None), self._queue.taken)
        return copy

    # --- findings ---

    def _find(self, rule: str, message: str, event: PlainEvent | None = None, line: int | None = None, **more: object) -> None:
        seq = event.seq if event is not None else None
        self.findings.append(Finding(rule, message, seq=seq, line=line, **more))  # type: ignore[arg-type]

    # --- the pass ---

    @ensure(
        lambda self, line, rejection: self.findings[-1].rule == rejection.rule and line in (self.findings[-1].line, self.findings[-1].last_line),
        "CHK-4: a line that is no event is a finding of its rule at that line (or ends the run it joins)",
        enabled=ENABLED,
    )
    def unreadable(self, line: int, rejection: Rejection) -> None:
        """Report a line the reader could not make an event of, and go on: the next event may take the numbering up past it.

        Lines in a row that break one rule are one defect, one finding over their range (CHK-3).
        """
        last = self.findings[-1] if self._resync and self.findings else None
        if last is not None and last.rule == rejection.rule and last.seq is None and (last.last_line or last.line) == line - 1:
            count = line - (last.line or line) + 1
            self.findings[-1] = replace(last, last_line=line, message=f"{count} lines in a row are no event; the first: {self._run_reason}")
        else:
            self._find(rejection.rule, rejection.reason, None, line)
            self._run_reason = rejection.reason
        self._resync = True

    @ensure(
        lambda self, early, rejection: any(f.rule == rejection.rule and f.seq == early and f.message.startswith(rejection.reason) for f in self.findings),
        "CHK-3: lines out of order are one finding, at the event read early",
        enabled=ENABLED,
    )
    def out_of_order(self, line: int, early: int, rejection: Rejection) -> None:
        """Report the line where events read late begin: the gap event ``early`` opened was its lines out of order (CHK-4).

        One defect, one finding (CHK-3): the gap's LOG-2 finding at ``early`` becomes this one,
        naming the late line; the late lines are not folded (their places in the log were taken).
        """
        message = f"{rejection.reason} (the late events from line {line} on are not folded)"
        for at in range(len(self.findings) - 1, -1, -1):
            found = self.findings[at]
            if found.rule == rejection.rule and found.seq == early:
                self.findings[at] = replace(found, message=message)
                return
        self.findings.append(Finding(rejection.rule, message, seq=early, line=line))  # the gap was no finding (it followed an unreadable line)

    @ensure(_envelope_judged, "CHK-2: the rule check_event or check_header_event finds in an event is a finding at its line", enabled=ENABLED)
    def feed(self, line: int, event: PlainEvent) -> None:
        """Check one event at its place in the log and fold it, accumulating the findings in ``findings``.

        A seq other than the next is one LOG-2 finding, and the numbering goes on from the event's
        (so a gap is reported once, not at every event after it); after an unreadable line, a seq
        further on is no finding: that line may have held the events between.
        """
        self.events += 1
        expected, seq = self._next_seq, event.seq
        forward = type(seq) is int and seq > expected
        self._next_seq = seq + 1 if forward else expected + 1
        resync, self._resync = self._resync, False
        in_order = seq == expected
        if in_order and event.type == ASSISTANT_CHUNK and self._plain_chunk(event, expected):
            return
        if not envelope_ok(event):
            frozen = to_event(event)
            rejection = check_event(frozen, event.seq) or check_header_event(frozen)
            if rejection is not None:
                self._find(rejection.rule, rejection.reason, event, line)
        if not in_order and not (resync and forward):
            gap = seq_gap(event.seq, expected)
            self._find(gap.rule, gap.reason, event, line)
        self._enclosure(line, event)
        kind = event.type
        if kind == COMPACT_START or kind == COMPACT_END:
            self._compacting = kind == COMPACT_START
        elif kind == REQUEST_HEADER:
            if self._compacting:
                self._find("CMP-1", "a request/header was written during compaction", event, line)
            frozen = to_event(event)
            if check_header_event(frozen) is None:
                self._record(line, event, frozen)
        elif kind in _SURFACE:
            self._surface(line, event)
        if kind in _STEP_EDGES:
            self._step_events(line, event)

    @ensure(
        lambda event, expected, result: not result or (envelope_ok(event) and check_event(to_event(event), expected) is None),
        "CHK-2: a chunk folded on the screen is one the envelope rules and LOG-2 accept",
        enabled=ENABLED,
    )
    def _plain_chunk(self, event: PlainEvent, expected: int) -> bool:
        """Fold a chunk of the open step that every rule plainly passes (the most frequent event); else False.

        What ``feed`` would do for it, less the rules that cannot fire: ``envelope_ok`` holds,
        its seq is the next, it names the open step (ENC-3, asked of the enclosure arm's own ``_in_open_step``),
        and it dispatches that step.
        """
        open_step, data, time = self._open_step, event.data, event.time
        if open_step is None or type(data) is not dict or event.seq != expected or type(time) is not int or not 0 <= time <= MAX_SAFE_INTEGER:
            return False
        if event.surface_op is not None or event.source_event_seqs is not None or not self._in_open_step(data.get("turn"), data.get("step")):
            return False
        open_step.step.dispatched = True
        if not open_step.resolved:
            self._resolve_open()
        return True

    def _in_open_step(self, turn: object, step: object) -> bool:
        """ENC-3: whether an event naming ``turn`` and ``step`` names the open step (the chunk screen asks the same)."""
        open_step = self._open_step
        return open_step is not None and is_step_number(turn, open_step.step.turn) and is_step_number(step, open_step.step.step)

    def _in_open_turn(self, turn: object) -> bool:
        """ENC-1, ENC-2: whether an event naming ``turn`` names the open turn (JSON-5: ``true`` is no turn 1)."""
        return self._open_turn is not None and is_step_number(turn, self._open_turn)

    def _turn_state(self, expected: str = "expected the open turn") -> str:
        """Say, in words, which turn and step are open where an event does not fit them: ``expected`` then the open turn."""
        if self._open_turn is None:
            return "no turn is open"
        if self._open_step is not None:
            return f"step {self._open_step.step.step} of turn {self._open_turn} is still open"
        return f"{expected} {self._open_turn}"

    def _enclosure(self, line: int, event: PlainEvent) -> None:
        """ENC-1..ENC-3: every event sits in its turn and step (S/invariant.ts:55-155)."""
        data, kind = event.data, event.type
        # A field the event lacks is MISSING, shown as ``(missing)``: never as the null it is not (CHK-5).
        turn, step = (data.get("turn", MISSING), data.get("step", MISSING)) if type(data) is dict else (MISSING, MISSING)
        if kind == TURN_START:
            if self._open_turn is not None:
                self._find("ENC-1", f"turn/start {_text(turn)} while turn {self._open_turn} is open", event, line)
            if not is_step_number(turn, self._next_turn):
                self._find("ENC-1", f"turn/start expected turn {self._next_turn}, got {_text(turn)}", event, line)
            self._open_turn = turn if type(turn) is int else self._next_turn
            self._next_step = 1
        elif kind == TURN_END:
            if not self._in_open_turn(turn) or self._open_step is not None:
                self._find("ENC-1", f"turn/end {_text(turn)}: {self._turn_state()}", event, line)
            self._open_turn = None
            self._next_turn += 1
        elif kind == STEP_START:
            if not self._in_open_turn(turn) or self._open_step is not None or not is_step_number(step, self._next_step):
                self._find("ENC-2", f"step/start {_text(turn)}/{_text(step)}: {self._turn_state(f'expected step {self._next_step} of open turn')}", event, line)
        elif kind == STEP_END:
            if not self._in_open_step(turn, step):
                self._find("ENC-2", f"step/end {_text(turn)}/{_text(step)} does not close the open step", event, line)
            self._next_step += 1
        elif kind in _STEP_SCOPED or (kind == TOOL_RESULT and event.surface_op == APPEND):
            if not self._in_open_step(turn, step):
                self._find("ENC-3", f"{kind} names turn {_text(turn)} step {_text(step)}, not the open step", event, line)
            call = data.get("callId", MISSING) if type(data) is dict else MISSING
            if kind == TOOL_CALL and isinstance(call, str):
                self._pending_calls.add(call)
            elif kind == TOOL_RESULT and call not in self._pending_calls and not _not_started(event):
                self._find("ENC-3", f"tool/result for {_text(call)} with no tool/call in this step", event, line)
        elif self._open_turn is None:
            self._find("ENC-3", f"{kind} outside any open turn", event, line)

    def _record(self, line: int, event: PlainEvent, frozen: Event) -> None:
        """HDR-9, HDR-15, PFX-3, PFX-6: what the record rule leaves in the log."""
        header = canonical_header(header_of(frozen))
        reason = frozen.field("reason")
        raw = frozen.field("header")
        if isinstance(raw, FrozenMap) and any(raw.get(k) in ("", ()) for k in ("system", "tools", "messagePrefix")):
            self._find("PFX-6", "the snapshot writes an empty system, tools or messagePrefix", event, line)
        if (reason == INITIAL) != (self._header is None):
            self._find("HDR-9", f"reason {json_text(reason)} with {'no' if self._header is None else 'a'} header earlier in the log", event, line)
        prefix = json_text(header.message_prefix or ())
        if reason == CHANGE:
            if self._header is not None and header_equals(self._header, header):
                self._find("HDR-15", "a change snapshot equal to the header in force", event, line)
            if self._anchor_prefix is not None and prefix != self._anchor_prefix:
                self._find("PFX-3", "a change snapshot carries another prefix than its instance's anchor", event, line,
                           path="/messagePrefix", expected=self._anchor_value, actual=header.message_prefix or ())  # fmt: skip
        else:
            self._anchor_prefix, self._anchor_value, self._anchor_seq = prefix, header.message_prefix or (), event.seq
            self._instances += 1
            self._previous.clear()  # no later step belongs to an earlier instance: keep one request, not one per instance
        self._header, self._header_seq = header, event.seq
        self._expected = _expectation(header, event.depth)
        if self._open_step is not None:
            self._open_step.header_seen = True

    def _surface(self, line: int, event: PlainEvent) -> None:
        """The surface step (§3): the core's ``surface_step`` over the live nodes, a plainly fine append screened."""
        op = event.surface_op
        if op is None:
            return  # LOG-5, the envelope's rule, was found
        if op == APPEND and append_provenance_ok(event):
            self._push(event)
            return
        if isinstance(op, Replace):
            self._keep_boundary()  # the boundary's nodes may be about to change
        step = surface_step(self._nodes, to_event(event), _Lookup(self._live))
        if isinstance(step, Rejection):
            self._find(step.rule, step.reason, event, line)
        elif step is None:
            self._push(event)
        else:
            self._replace(event, *step)

    def _push(self, event: PlainEvent) -> None:
        self._nodes.append(event.seq)
        self._pieces.append(None)
        self._add_node(event)

    def _add_node(self, event: PlainEvent) -> None:
        self._messages[event.seq] = derive_event_message(event)
        self._live[event.seq] = event
        self._deep_nodes += event.depth > DEEP

    def _drop_node(self, seq: int) -> None:
        del self._messages[seq]
        self._deep_nodes -= self._live.pop(seq).depth > DEEP

    def _replace(self, event: PlainEvent, i: int, j: int) -> None:
        """Fold a replacement of the nodes at positions ``i..j`` that ``surface_step`` accepted (SURF-6)."""
        for seq in self._nodes[i : j + 1]:
            self._drop_node(seq)
        self._nodes.splice(i, j, event.seq)
        self._pieces[i : j + 1] = [None]
        self._filled = min(self._filled, i)
        self._add_node(event)
        self._generation += 1

    # --- steps and their requests ---

    def _step_events(self, line: int, event: PlainEvent) -> None:
        kind = event.type
        if kind == STEP_START:
            self._resolve_open()
            turn, step = event.field("turn"), event.field("step")
            result = StepResult(turn if type(turn) is int else -1, step if type(step) is int else -1,
                                event.seq, self._instances, len(self._nodes), start_line=line)  # fmt: skip
            self.steps += 1
            self._open_step = _Open(result)
        elif kind == ASSISTANT_CHUNK and self._open_step is not None:
            self._open_step.step.dispatched = True
            self._resolve_open()
        elif kind == STEP_END or kind == TURN_END:
            self._resolve_open()
            self._open_step = None
            self._pending_calls.clear()

    def _keep_boundary(self) -> None:
        """Keep the open step's boundary nodes, before a replacement inside its header window changes them."""
        open_step = self._open_step
        if open_step is None or open_step.resolved or open_step.step.boundary is not None:
            return
        open_step.step.boundary = tuple((seq, self._messages[seq]) for seq in self._nodes[: open_step.step.boundary_nodes])

    def _boundary(self, result: StepResult) -> Iterator[tuple[int, object]]:
        """The boundary nodes of step ``result`` as (seq, message): those kept at a replacement inside its window, else the nodes now."""
        if result.boundary is not None:
            return iter(result.boundary)
        messages = self._messages
        return ((seq, messages[seq]) for seq in self._nodes[: result.boundary_nodes])

    def _resolve_open(self) -> None:
        """Resolve the open step's request: its header is the fold now, its boundary the snapshot."""
        open_step = self._open_step
        if open_step is None or open_step.resolved:
            return
        open_step.resolved = True
        result = open_step.step
        result.instance = self._instances  # the step's own anchor sits after its step/start
        if open_step.header_seen:
            result.dispatched = True
        if self.resolved is not None:
            self.resolved(result)
        self._match(result)

    def _match(self, result: StepResult) -> None:
        """Match the capture's head with this step: requests naming it, else the next unnamed one."""
        key = (result.turn, result.step)
        took = False
        while (head := self._queue.head()) is not None and head.named and (head.turn, head.step) <= key:
            request = self._queue.pop()
            if (request.turn, request.step) < key:
                self._unmatched(request)
            else:
                self.requests_by_step += 1
                self._compare(result, request)
                took = True
        if took or head is None or head.named or self._in_order_blocked or result.start_seq < self.seed_length:
            return
        if result.dispatched is None and self._header is None:
            return  # no header in force and no chunk: the step sent nothing (a request is recorded first, L/loop.ts:707-713)
        if result.dispatched is None:
            self._in_order_blocked = True
            self.findings.append(Finding("MATCH-2", f"turn {result.turn} step {result.step} may or may not have sent a request "
                                         "(no header, no chunk); requests without turn/step are not matched past it",
                                         seq=result.start_seq))  # fmt: skip
            return
        request = self._queue.pop()
        self.in_order.append(InOrder(request.index, request.line, result.turn, result.step))
        self._compare(result, request)

    def _unmatched(self, request: Captured) -> None:
        """Count a request no step took; a named one is a MATCH-1 finding. Its value is still read whole (CAP-1)."""
        request.read_whole()
        self.requests_unmatched += 1
        if not request.named:
            return
        self.findings.append(Finding("MATCH-1", f"the log has no dispatching step turn {request.turn} step {request.step} "
                                     "where the capture's order puts this request", request=request.index, line=request.line))  # fmt: skip

    def _messages_head(self, expected: _Expectation, boundary: int) -> str:
        """Return the compact text of messagePrefix ++ the derivation of the first ``boundary`` nodes, less its ``]``."""
        last = self._head
        if last is not None and last[0] is expected and last[1] == self._generation and last[2] == boundary:
            return last[3]
        pieces, messages = self._pieces, self._messages
        for position in range(self._filled, boundary):  # each node's text is written once
            if pieces[position] is None:
                message = messages[self._nodes[position]]
                pieces[position] = "" if message is None else plain_text(message) + ","
        self._filled = max(self._filled, boundary)
        body = expected.prefix + "".join(pieces[:boundary])  # type: ignore[arg-type]  # filled above
        head = "[" + body[:-1]
        self._head = (expected, self._generation, boundary, head)
        return head

    @ensure(
        lambda result: result is None or plain_text(result[1])[:-1] == result[0],
        "CHK-2: the guessed history's text is its messages' compact text, less the closing bracket",
        enabled=ENABLED,
    )
    def known_messages(self) -> Known | None:
        """Return the messages a request sent now would carry: the capture reader's guess at the next request's history.

        A request extends the one before it until a replacement or a new header, so the reader
        decodes only what is new (``plain_members``); a wrong guess only costs a comparison. The
        last request's expected history serves when it is still the surface's (no text written
        again); else the whole surface.
        """
        expected, last = self._expected, self._head
        if expected is None:
            return None
        boundary = last[2] if last is not None and last[0] is expected and last[1] == self._generation else len(self._nodes)
        # The last guess's messages, while its nodes are still the surface's first (no replacement since, the same header).
        known = self._known
        if known is not None and known[0] is expected and known[1] == self._generation and known[2] <= boundary:
            start, covered = known[3], known[2]
        else:
            start, covered = expected.prefix_items, 0
        messages = self._messages
        items = start + [m for m in (messages[s] for s in self._nodes[covered:boundary]) if m is not None]  # a new list: none is written to
        self._known = (expected, self._generation, boundary, items)
        return self._messages_head(expected, boundary), items

    @ensure(
        lambda self, step, request, result: not result or not self._request_findings(step, request),
        "CHK-2: a request the text screen passes is one the field-by-field comparison (REC-1, REC-2) finds nothing in",
        enabled=ENABLED,
    )
    def _is_expected(self, step: StepResult, request: Captured) -> bool:
        """Return whether ``request`` is, text for text, the request the log expects (no finding possible)."""
        expected, fields = self._expected, request.fields
        assert expected is not None
        if not expected.shallow or self._deep_nodes or fields.keys() - _SESSION_ID != expected.names or step.boundary is not None:
            return False
        for name, text in expected.fields.items():
            if not request.same(name, text):
                return False
        return request.same("messages", self._messages_head(expected, step.boundary_nodes) + "]")

    def _where(self, result: StepResult, request: Captured) -> dict[str, Any]:
        """Return a request finding's places: the capture's request and line, the step that sent it, the header in force."""
        return {"request": request.index, "line": request.line, "seq": result.start_seq, "turn": result.turn, "step": result.step,
                "log_line": result.start_line, "header_seq": self._header_seq}  # fmt: skip

    def _compare(self, result: StepResult, request: Captured) -> None:
        self.requests_checked += 1
        if self._header is None:
            request.read_whole()
            self.findings.append(Finding("REC-1", "no request/header is in force at this step: the request cannot be reconstructed from the log",
                                         implies=("REC-2",), **self._where(result, request)))
            return
        exact = self._is_expected(result, request)
        if exact:
            self._monotonic(result, request, True, None)
        else:
            self._monotonic(result, request, *self._compare_exactly(result, request))
        if request.instance is not None and self._anchor_seq is not None:
            self._instance(result, request, request.instance)

    def _instance(self, result: StepResult, request: Captured, name: str) -> None:
        """INST-1..3: the request of instance ``name`` under the anchor in force, against the anchors its instance and others were sent under."""
        assert self._anchor_prefix is not None and self._anchor_seq is not None and self._header_seq is not None
        anchor = Anchor(self._instances, self._anchor_seq, self._anchor_prefix, self._anchor_value)
        broken = judge(name, anchor, self._header_seq, self._named.get(name), self._claim, self.seed_length)
        self._named[name] = anchor
        if self._claim is None or anchor.number > self._claim.anchor.number:
            self._claim = Claim(name, anchor, self._header_seq)
        if broken is None:
            return
        found = Finding(broken.rule, broken.message, implies=broken.implies, expected=broken.expected, actual=broken.actual,
                        expected_from=broken.expected_from, **self._where(result, request))  # fmt: skip
        # A new instance's first snapshot written as ``change``: the log alone judged it against the old instance (one defect, one finding).
        header_seq = self._header_seq
        log_only = (n for n, f in enumerate(self.findings) if f.seq == header_seq and f.request is None and f.rule in LOG_ONLY_READINGS)
        at = next(log_only, None) if broken.new_snapshot else None
        if at is None:
            self.findings.append(found)
        else:
            self.findings[at] = found

    @ensure(
        lambda self, result: (result is None) == (self._header is None), "REC-1: a request is implied only where a header is in force", enabled=ENABLED
    )
    @ensure(
        lambda self, result: result is None or (self._header is not None and header_equals(result.header, self._header) and result.session_id == self.session_id),
        "REC-1: the implied request is built from the header in force, for the log's session",
        enabled=ENABLED,
    )
    def request_for(self, step: StepResult) -> Request | None:
        """Return the request the log implies for ``step`` (None: no header in force), asked as it resolves (``resolved``)."""
        return None if self._header is None else self._expected_request(step)

    def _expected_request(self, result: StepResult) -> Request:
        assert self._header is not None
        boundary = tuple(freeze(m) for _, m in self._boundary(result) if m is not None)
        return build_request(self._header, tuple(m for m in boundary if isinstance(m, FrozenMap)), self.session_id)

    def _message_source(self, result: StepResult, index: int) -> int | None:
        """Return the seq of the event the expected request's message ``index`` comes from (the header's prefix, or a node)."""
        assert self._expected is not None
        if index < len(self._expected.prefix_items):
            return self._header_seq
        history = (s for s, m in self._boundary(result) if m is not None)
        return next(itertools.islice(history, index - len(self._expected.prefix_items), None), None)

    def _compare_exactly(self, result: StepResult, request: Captured) -> tuple[bool, int | None]:
        """Add the REC-1 and REC-2 findings of ``request``; return whether there were none, and the index of its messages finding."""
        found = self._request_findings(result, request)
        messages_at = next((len(self.findings) + n for n, f in enumerate(found) if f.rule == "REC-1" and (f.path or "").startswith("/messages/")), None)
        self.findings.extend(found)
        return not found, messages_at

    def _request_findings(self, result: StepResult, request: Captured) -> list[Finding]:
        """REC-1 and REC-2 on frozen values, field by field, one finding per defect.

        Each REC-1 difference is its own defect and implies REC-2; a REC-2 finding names only the
        fields no REC-1 finding covers.
        """
        expected, fields = request_to_json(self._expected_request(result)), request.exact()
        where = self._where(result, request)
        found: list[Finding] = []
        got_messages, want_messages = fields.get("messages"), expected["messages"]
        covered: set[str] = set()
        if not (isinstance(got_messages, tuple) and json_text(got_messages) == json_text(want_messages)):
            index, want, got = first_difference(want_messages, got_messages)
            covered.add("messages")
            found.append(Finding("REC-1", _explained("messages are not messagePrefix ++ the boundary derivation", "messages are messagePrefix ++ the boundary derivation", want_messages,
                                                     MISSING if got_messages is None else got_messages, "/messages"), path=f"/messages/{index}",
                                 expected=want, actual=got, implies=("REC-2",), expected_from=self._message_source(result, index), **where))  # fmt: skip
        for name in _COMPANION_FIELDS:
            want_value, got_value = expected.get(name), fields.get(name)
            if name == "tools":
                want_value, got_value = want_value or (), got_value or ()
            if json_text(want_value) != json_text(got_value):
                covered.add(name)
                # A field left out is shown as absent (MISSING), as REC-2 and a message show it, not as the null it compares as
                # (no tools is the empty list, and shown as one).
                want_shown = want_value if name in expected or name == "tools" else MISSING
                got_shown = got_value if name in fields or name == "tools" else MISSING
                found.append(Finding("REC-1", _explained(f"{name} differs from the folded header", f"{name} is the folded header's", want_shown, got_shown, f"/{name}"), path=f"/{name}", expected=want_shown,
                                     actual=got_shown, implies=("REC-2",), expected_from=self._header_seq, **where))  # fmt: skip
        names = [k for k in expected if k != "sessionId"] + [k for k in fields if k not in expected and k != "sessionId"]
        differing = [k for k in names if k not in covered and k != "messages" and json_text(expected.get(k)) != json_text(fields.get(k))]
        if differing:
            name = differing[0]
            whole = f"the request is not the one built from the fold and the boundary ({len(differing)} field(s) differ: {', '.join(differing)})"
            found.append(Finding("REC-2", _explained(whole, "the request is the one built from the fold and the boundary", expected.get(name, MISSING), fields.get(name, MISSING), f"/{name}"), path=f"/{name}",
                                 expected=expected.get(name, MISSING), actual=fields.get(name, MISSING),
                                 expected_from=self._header_seq if name in expected else None, **where))  # fmt: skip
        return found

    def _monotonic(self, result: StepResult, request: Captured, exact: bool, messages_finding: int | None) -> None:
        """REC-3: within an instance, with no replacement and no header change, requests extend.

        Two requests whose messages are each the expected ones extend by construction (same
        header, no replacement: the later boundary extends the earlier), so only a pair with a
        difference is compared, and a break is a consequence of the messages finding of one of the
        two: it joins that finding's ``implies`` (the later request's, else the earlier's).
        """
        assert self._header is not None
        previous = self._previous.get(result.instance)
        generation = self._generation if result.boundary is None else -1  # its history is from before the replacement
        self._previous[result.instance] = _Previous(request, self._header, generation, exact, messages_finding)
        if previous is None or (previous.exact and exact):
            return
        if previous.generation != self._generation or not header_equals(previous.header, self._header):
            return
        before, after = previous.request.exact().get("messages"), request.exact().get("messages")
        if isinstance(before, tuple) and isinstance(after, tuple) and json_text(after[: len(before)]) != json_text(before):
            cause = messages_finding if messages_finding is not None else previous.finding
            if cause is not None:
                implied = self.findings[cause].implies
                self.findings[cause] = replace(self.findings[cause], implies=implied if "REC-3" in implied else (*implied, "REC-3"))
                return
            index, want, got = first_difference(before, after[: len(before)])
            self.findings.append(Finding("REC-3", "the request does not extend the instance's previous request",
                                         path=f"/messages/{index}", expected=want, actual=got, **self._where(result, request)))  # fmt: skip

    @property
    # no contract: it reads the enclosure arm's open turn and step (ENC-1, ENC-2), its body one expression
    def open_at_end(self) -> tuple[int, int | None] | None:
        """Return the turn (and step) still open where the log ends — a crash the harness repairs on load — or None."""
        if self._open_turn is None:
            return None
        return self._open_turn, None if self._open_step is None else self._open_step.step.step

    @ensure(lambda self: _accounted(self), "MATCH-1/CHK-1: every captured request is checked, unmatched or counted after a stop", enabled=ENABLED)
    def finish(self, stopped: bool = False) -> None:
        """Resolve the last open step; report the captured requests no step took.

        ``stopped``: the log was read only up to a line nothing after which can be trusted; the
        requests left are for steps the check did not see, and are counted, not judged.
        """
        self._resolve_open()
        while self._queue.head() is not None:
            request = self._queue.pop()
            if stopped:
                request.read_whole()
                self.requests_after_stop += 1
            else:
                self._unmatched(request)


def _explained(statement: str, equal: str, expected: JsonValue | Marker, actual: JsonValue | Marker, path: str) -> str:
    """Return a request finding's message: ``statement`` with every difference named, or ``equal`` but for key order.

    Every difference is named, the first few by pointer (CHK-3: one finding per defect still, the
    places it covers listed). JSON text is compared (JSON-4, D-8): objects equal but for the order
    of their keys differ, and the message says so, with the order the harness writes (spec §8.2) —
    the expected object's, which the model builds in that order — against the capture's.
    """
    if expected is MISSING or actual is MISSING:
        return statement
    found = differences(expected, actual, path)  # type: ignore[arg-type]
    if key_order_only(found):
        first = found[0]
        where = f" ({listed(found)})" if len(found) > 1 else ""
        return (f"{equal} but for key order, and JSON text is compared (JSON-4): at {first.path} the harness writes the keys "
                f"{', '.join(first.expected_keys)} (spec §8.2), the capture {', '.join(first.actual_keys)}{where}")  # fmt: skip
    return statement if len(found) <= 1 else f"{statement} ({listed(found)})"


class _Lookup:
    """Index live events by seq, frozen on demand, as the tool-result rewrite rule reads them."""

    def __init__(self, live: dict[int, PlainEvent]) -> None:
        self._live = live

    def __getitem__(self, seq: int) -> Event:
        return to_event(self._live[seq])


def _text(value: object) -> str:
    """Return a plain value's ``JSON.stringify`` text for a finding's message, or ``(missing)`` for a field the event lacks."""
    return "(missing)" if value is MISSING else json_text(freeze(value))


def _not_started(event: PlainEvent) -> bool:
    error = event.field("error")
    return event.field("isError") is True and type(error) is dict and error.get("code") == "TOOL_NOT_STARTED"


def _accounted(checker: LogChecker) -> bool:
    """The capture is read to its end, and each request taken is counted once: checked, unmatched, or left after a stop."""
    counted = checker.requests_checked + checker.requests_unmatched + checker.requests_after_stop
    return checker._queue.head() is None and counted == checker._queue.taken


@require(lambda seed_length: seed_length >= 0, "FORK-1: a seed is a count of events", enabled=ENABLED)
@ensure(lambda result: _accounted(result), "MATCH-1/CHK-1: every captured request is checked or unmatched", enabled=ENABLED)
def check_events(
    events: Iterable[tuple[int, Event | PlainEvent]],
    captured: Iterable[Captured] = (),
    session_id: str | None = None,
    seed_length: int = 0,
) -> LogChecker:
    """Return a finished checker over ``events`` (line, event; spec events are thawed) and ``captured``."""
    checker = LogChecker(session_id, captured, seed_length=seed_length)
    for line, event in events:
        checker.feed(line, event if isinstance(event, PlainEvent) else from_event(event))
    checker.finish()
    return checker


@require(lambda request: is_json_value(request), "JSON-6: a model-built request is a frozen lossless value", enabled=ENABLED)
@ensure(lambda request, result: json_text(result.exact()) == json_text(request), "CAP-1: a model-built request is captured whole, key order included", enabled=ENABLED)
def captured_request(index: int, request: FrozenMap, turn: int | None = None, step: int | None = None, instance: str | None = None) -> Captured:
    """Return a model-built request as the capture would hold it (line ``index + 1``), sent by ``instance`` where named."""
    fields = thaw(request)
    assert isinstance(fields, dict)
    return Captured(index, index + 1, fields, turn, step, instance=instance)
