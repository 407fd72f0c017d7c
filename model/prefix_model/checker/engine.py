"""Spec §14 — the conformance engine: one pass over a log, its requests compared as they come.

This is the fast tier of the model (design §3, "two tiers"): mutable lists inside, the spec's
rules outside. Per event it runs the core's envelope and header checks and its own list-based
surface fold (the spec's tuple fold is quadratic on long logs); the live surface, its derived
messages and the folded header are all it keeps, so memory follows the surface, not the file.
Each step's request is resolved when its header is known (its first chunk, its ``step/end``, or
anything that would change its boundary) and compared then with the captured request matched to
it. ``tests/test_checker_differential.py`` holds it to the spec on generated runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from prefix_model.checker.findings import Finding, first_difference, shorten
from prefix_model.contracts import Rejection
from prefix_model.derive import derive_event_message
from prefix_model.events import (
    APPEND,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    COMPACT_END,
    COMPACT_START,
    REQUEST_HEADER,
    STEP_END,
    STEP_START,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    Event,
    Replace,
    check_event,
    is_safe_seq,
    is_surface_type,
)
from prefix_model.headers import CHANGE, INITIAL, EpochHeader, canonical_header, check_header_event, header_equals, header_of
from prefix_model.json_values import FrozenMap, json_text
from prefix_model.requests import Request, build_request, request_to_json
from prefix_model.surface import _check_provenance, _check_tool_result_rewrite

__all__ = ["Captured", "StepResult", "LogChecker", "check_events"]

_STEP_SCOPED = (ASSISTANT_CHUNK, ASSISTANT_MESSAGE, TOOL_CALL)
_COMPANION_FIELDS = ("model", "system", "temperature", "maxTokens", "stop", "tools")


@dataclass(frozen=True, slots=True)
class Captured:
    """A request from the capture, as the checker needs it."""

    index: int
    line: int
    fields: FrozenMap
    turn: int | None
    step: int | None


@dataclass(slots=True)
class StepResult:
    """One step of the log: where it starts, its instance, and how its request was resolved."""

    turn: int
    step: int
    start_seq: int
    instance: int
    boundary_nodes: int
    dispatched: bool | None = None  # True: a header or chunk proves it; None: cannot tell
    expected: Request | None = None
    matched: int | None = None  # capture index


@dataclass(slots=True)
class _Open:
    step: StepResult
    header_seen: bool = False
    resolved: bool = False


@dataclass
class LogChecker:
    """Feed events in order with ``feed``; then ``finish``. Findings accumulate in ``findings``."""

    session_id: str | None = None
    captured: tuple[Captured, ...] = ()
    seed_length: int = 0  # a fork child's inherited events: their steps sent the parent's requests
    findings: list[Finding] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    events: int = 0
    requests_checked: int = 0
    # --- state ---
    _nodes: list[int] = field(default_factory=list)
    _messages: dict[int, FrozenMap | None] = field(default_factory=dict)
    _live: dict[int, Event] = field(default_factory=dict)
    _texts: dict[int, str] = field(default_factory=dict)
    _generation: int = 0
    _header: EpochHeader | None = None
    _anchor_prefix: str | None = None
    _instances: int = 0
    _open_turn: int | None = None
    _next_turn: int = 1
    _open_step: _Open | None = None
    _next_step: int = 1
    _pending_calls: set[str] = field(default_factory=set)
    _compacting: bool = False
    _by_step: dict[tuple[int, int], list[Captured]] = field(default_factory=dict)
    _in_order: list[Captured] = field(default_factory=list)
    _in_order_blocked: bool = False
    _previous: dict[int, tuple[Captured, Request, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for request in self.captured:
            if request.turn is not None and request.step is not None:
                self._by_step.setdefault((request.turn, request.step), []).append(request)
            else:
                self._in_order.append(request)
        self._in_order.reverse()  # pop() takes the earliest

    # --- findings ---

    def _find(self, rule: str, message: str, event: Event | None = None, line: int | None = None, **more: object) -> None:
        seq = event.seq if event is not None else None
        self.findings.append(Finding(rule, message, seq=seq, line=line, **more))  # type: ignore[arg-type]

    # --- the pass ---

    def feed(self, line: int, event: Event) -> None:
        """Check one event at its place in the log and fold it."""
        self.events += 1
        rejection = check_event(event, event.seq) or check_header_event(event)
        if rejection is not None:
            self._find(rejection.rule, rejection.reason, event, line)
        if event.seq != self.events - 1:
            self._find("LOG-2", f"seq {event.seq} is not contiguous; expected {self.events - 1}", event, line)
        self._enclosure(line, event)
        if event.type in (COMPACT_START, COMPACT_END):
            self._compacting = event.type == COMPACT_START
        if event.type == REQUEST_HEADER and self._compacting:
            self._find("CMP-1", "a request/header was written during compaction", event, line)
        if event.type == REQUEST_HEADER and check_header_event(event) is None:
            self._record(line, event)
        if is_surface_type(event.type):
            self._surface(line, event)
        self._step_events(line, event)

    def _enclosure(self, line: int, event: Event) -> None:
        """ENC-1..ENC-3: every event sits in its turn and step (S/invariant.ts:55-155)."""
        turn, step = event.field("turn"), event.field("step")
        if event.type == TURN_START:
            if self._open_turn is not None:
                self._find("ENC-1", f"turn/start {turn} while turn {self._open_turn} is open", event, line)
            if turn != self._next_turn:
                self._find("ENC-1", f"turn/start expected turn {self._next_turn}, got {json_text(turn)}", event, line)
            self._open_turn = turn if isinstance(turn, int) else self._next_turn
            self._next_step = 1
        elif event.type == TURN_END:
            if self._open_turn != turn or self._open_step is not None:
                self._find("ENC-1", f"turn/end {json_text(turn)} does not close the open turn {self._open_turn} (step open: {self._open_step is not None})", event, line)
            self._open_turn = None
            self._next_turn += 1
        elif event.type == STEP_START:
            if self._open_turn != turn or self._open_step is not None or step != self._next_step:
                self._find("ENC-2", f"step/start {json_text(turn)}/{json_text(step)}: expected step {self._next_step} of open turn {self._open_turn}", event, line)
        elif event.type == STEP_END:
            if self._open_step is None or (self._open_step.step.turn, self._open_step.step.step) != (turn, step):
                self._find("ENC-2", f"step/end {json_text(turn)}/{json_text(step)} does not close the open step", event, line)
            self._next_step += 1
        elif event.type in _STEP_SCOPED or (event.type == TOOL_RESULT and event.surface_op == APPEND):
            open_step = self._open_step
            if open_step is None or (open_step.step.turn, open_step.step.step) != (turn, step):
                self._find("ENC-3", f"{event.type} names turn {json_text(turn)} step {json_text(step)}, not the open step", event, line)
            call = event.field("callId")
            if event.type == TOOL_CALL and isinstance(call, str):
                self._pending_calls.add(call)
            elif event.type == TOOL_RESULT and call not in self._pending_calls and not _not_started(event):
                self._find("ENC-3", f"tool/result for {json_text(call)} with no tool/call in this step", event, line)
        elif self._open_turn is None:
            self._find("ENC-3", f"{event.type} outside any open turn", event, line)

    def _record(self, line: int, event: Event) -> None:
        """HDR-9, HDR-15, PFX-3, PFX-6: what the record rule leaves in the log."""
        header = canonical_header(header_of(event))
        reason = event.field("reason")
        raw = event.field("header")
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
                           expected=shorten(self._anchor_prefix), actual=shorten(prefix))  # fmt: skip
        else:
            self._anchor_prefix = prefix
            self._instances += 1
        self._header = header
        if self._open_step is not None:
            self._open_step.header_seen = True

    def _surface(self, line: int, event: Event) -> None:
        op = event.surface_op
        if op == APPEND:
            found = _check_provenance(event, ())
            if found is None:
                self._push(event)
        elif isinstance(op, Replace):
            self._resolve_open("a replacement")
            found = self._replace(event, op)
        elif op is not None:
            found = Rejection("SURF-3", f"{event.type} carries an invalid surfaceOp {op!r}")
        else:
            found = None  # check_event already reported the missing marker
        if found is not None:
            self._find(found.rule, found.reason, event, line)

    def _push(self, event: Event) -> None:
        self._nodes.append(event.seq)
        self._live[event.seq] = event
        self._messages[event.seq] = derive_event_message(event)

    def _replace(self, event: Event, op: Replace) -> Rejection | None:
        if not (is_safe_seq(op.start) and is_safe_seq(op.end)):
            return Rejection("SURF-3", "replace start and end must be non-negative safe integer seqs")
        if op.start not in self._live or op.end not in self._live:
            return Rejection("SURF-4", f"replace range {op.start}..{op.end} is not on the surface")
        i, j = self._nodes.index(op.start), self._nodes.index(op.end)
        if i > j:
            return Rejection("SURF-5", f"replace start seq {op.start} is after end seq {op.end}")
        shadowed = tuple(self._nodes[i : j + 1])
        found = _check_provenance(event, shadowed) or _check_tool_result_rewrite(event, shadowed, _Lookup(self._live))  # type: ignore[arg-type]
        if found is not None:
            return found
        for seq in shadowed:
            del self._live[seq], self._messages[seq]
            self._texts.pop(seq, None)
        self._nodes[i : j + 1] = [event.seq]
        self._live[event.seq] = event
        self._messages[event.seq] = derive_event_message(event)
        self._generation += 1
        return None

    # --- steps and their requests ---

    def _step_events(self, line: int, event: Event) -> None:
        if event.type == STEP_START:
            self._resolve_open("the next step/start")
            turn, step = event.field("turn"), event.field("step")
            result = StepResult(turn if isinstance(turn, int) else -1, step if isinstance(step, int) else -1,
                                event.seq, self._instances, len(self._nodes))  # fmt: skip
            self.steps.append(result)
            self._open_step = _Open(result)
        elif event.type == ASSISTANT_CHUNK and self._open_step is not None:
            self._open_step.step.dispatched = True
            self._resolve_open("its first chunk")
        elif event.type in (STEP_END, TURN_END):
            self._resolve_open("its end")
            self._open_step = None
            self._pending_calls.clear()

    def _resolve_open(self, why: str) -> None:
        """Resolve the open step's request: its header is the fold now, its boundary the snapshot."""
        open_step = self._open_step
        if open_step is None or open_step.resolved:
            return
        open_step.resolved = True
        result = open_step.step
        result.instance = self._instances  # the step's own anchor sits after its step/start
        if open_step.header_seen:
            result.dispatched = True
        if self._header is None:
            return
        boundary = tuple(m for m in (self._messages[s] for s in self._nodes[: result.boundary_nodes]) if m is not None)
        result.expected = build_request(self._header, boundary, self.session_id)
        self._match(result)

    def _match(self, result: StepResult) -> None:
        named = self._by_step.pop((result.turn, result.step), [])
        if named:
            for request in named:
                self._compare(result, request)
            return
        if not self._in_order or self._in_order_blocked or result.start_seq < self.seed_length:
            return
        if result.dispatched is None:
            self._in_order_blocked = True
            self.findings.append(Finding("MATCH-2", f"turn {result.turn} step {result.step} may or may not have sent a request "
                                         "(no header, no chunk); requests without turn/step are not matched past it",
                                         seq=result.start_seq))  # fmt: skip
            return
        self._compare(result, self._in_order.pop())

    def _node_text(self, seq: int) -> str | None:
        """Return the JSON text of a live node's message, computed once per node."""
        message = self._messages[seq]
        if message is None:
            return None
        text = self._texts.get(seq)
        if text is None:
            text = self._texts[seq] = json_text(message)
        return text

    def _expected_messages_text(self, result: StepResult) -> str:
        assert result.expected is not None
        prefix = [json_text(m) for m in (result.expected.header.message_prefix or ())]
        nodes = [t for t in (self._node_text(s) for s in self._nodes[: result.boundary_nodes]) if t is not None]
        return "[" + ",".join(prefix + nodes) + "]"

    def _compare(self, result: StepResult, request: Captured) -> None:
        assert result.expected is not None
        result.matched = request.index
        self.requests_checked += 1
        expected = request_to_json(result.expected)
        where = {"request": request.index, "seq": result.start_seq, "line": request.line}
        got_messages, want_messages = request.fields.get("messages"), expected["messages"]
        messages_equal = isinstance(got_messages, tuple) and json_text(got_messages) == self._expected_messages_text(result)
        if not messages_equal:
            index, want, got = first_difference(want_messages, got_messages)
            self.findings.append(Finding("REC-1", "messages are not messagePrefix ++ the boundary derivation",
                                         path=f"messages[{index}]", expected=want, actual=got, **where))
        for name in _COMPANION_FIELDS:
            want_value, got_value = expected.get(name), request.fields.get(name)
            if name == "tools":
                want_value, got_value = want_value or (), got_value or ()
            if json_text(want_value) != json_text(got_value):
                self.findings.append(Finding("REC-1", f"{name} differs from the folded header", path=name,
                                             expected=shorten(json_text(want_value)), actual=shorten(json_text(got_value)), **where))
        names = [k for k in expected if k != "sessionId"] + [k for k in request.fields if k not in expected and k != "sessionId"]
        differing = [k for k in names if (not messages_equal if k == "messages" else json_text(expected.get(k)) != json_text(request.fields.get(k)))]
        if differing:
            name = differing[0]
            self.findings.append(Finding("REC-2", f"the request is not the one built from the fold and the boundary "
                                         f"({len(differing)} field(s) differ: {', '.join(differing)})", path=name,
                                         expected=shorten(json_text(expected.get(name))), actual=shorten(json_text(request.fields.get(name))), **where))  # fmt: skip
        self._monotonic(result, request)

    def _monotonic(self, result: StepResult, request: Captured) -> None:
        """REC-3: within an instance, with no replacement and no header change, requests extend."""
        assert result.expected is not None
        previous = self._previous.get(result.instance)
        self._previous[result.instance] = (request, result.expected, self._generation)
        if previous is None:
            return
        earlier, earlier_expected, generation = previous
        if generation != self._generation or not header_equals(earlier_expected.header, result.expected.header):
            return
        before, after = earlier.fields.get("messages"), request.fields.get("messages")
        if isinstance(before, tuple) and isinstance(after, tuple) and json_text(after[: len(before)]) != json_text(before):
            index, want, got = first_difference(before, after[: len(before)])
            self.findings.append(Finding("REC-3", "the request does not extend the instance's previous request",
                                         request=request.index, line=request.line, seq=result.start_seq,
                                         path=f"messages[{index}]", expected=want, actual=got))  # fmt: skip

    def finish(self) -> None:
        """Resolve the last open step; report captured requests no step took."""
        self._resolve_open("the end of the log")
        for (turn, step), requests in sorted(self._by_step.items()):
            for request in requests:
                self.findings.append(Finding("MATCH-1", f"the log has no dispatching step turn {turn} step {step}",
                                             request=request.index, line=request.line))  # fmt: skip

    @property
    def unmatched_in_order(self) -> int:
        """Return how many requests without turn/step no step took."""
        return len(self._in_order)


class _Lookup:
    """Index live events by seq, as the tool-result rewrite rule reads them."""

    def __init__(self, live: dict[int, Event]) -> None:
        self._live = live

    def __getitem__(self, seq: int) -> Event:
        return self._live[seq]


def _not_started(event: Event) -> bool:
    error = event.field("error")
    return event.field("isError") is True and isinstance(error, FrozenMap) and error.get("code") == "TOOL_NOT_STARTED"


def check_events(
    events: Iterable[tuple[int, Event]], captured: tuple[Captured, ...] = (), session_id: str | None = None, seed_length: int = 0
) -> LogChecker:
    """Return a finished checker over ``events`` (line, event) and ``captured``."""
    checker = LogChecker(session_id, captured, seed_length=seed_length)
    for line, event in events:
        checker.feed(line, event)
    checker.finish()
    return checker

