"""Spec §9 — conformance as a fold: one pass over a log, its captured requests compared as they come.

``LogChecker.feed(line, event)`` folds one event and adds what it finds to ``findings``;
``finish`` ends the log. The rules are judged by arms, one module per family of the spec:

- the envelope and the numbering (§2: LOG-*, HDR-* as ``check_event``/``check_header_event`` state
  them; LOG-2's gaps, CHK-4's unreadable and late lines): here, in ``feed``;
- the enclosure of turns and steps (ENC-1..3): ``conformance.enclosure``;
- the record rule (CMP-1, HDR-9, HDR-15, PFX-3, PFX-6): ``conformance.record``;
- the surface (§3, the core's own ``surface_step`` and ``derive_event_message``, asked of the
  fold's plain events): ``conformance.live``;
- each step's request, resolved and matched with the capture (MATCH-1, MATCH-2):
  ``conformance.matching``; and compared (REC-1..3, INST-1..3): ``conformance.reconstruction``.

``ARMS`` is the dispatch: per event type, the arms that judge it, in the order their findings are
written; a reader finds there where each event's rules are judged. The loop's log-visible
properties (``loop.properties``) are "this fold finds nothing over the run".

The state (``conformance.state``) — the live surface (each node's plain message and its compact
text), the folded header, the open step — is updated in place, so memory follows the surface, not
the file. The fold works on ``PlainEvent`` values and asks a screen (``conformance.screens``)
whether the common case is plainly fine; when it is not, the event or request is frozen and judged
by the spec's function. Each screen carries a contract stating that implication, checked at every
call when contracts are on (the test suite). A captured request that equals the expected one text
for text passes without being frozen; any other is frozen and compared field by field.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from prefix_model.conformance import enclosure, live, matching, record
from prefix_model.conformance.captured import Captured
from prefix_model.conformance.findings import Finding
from prefix_model.conformance.nodes import SurfaceNodes
from prefix_model.formats.plain import Known, PlainEvent, from_event, plain_text, to_event
from prefix_model.conformance.reconstruction import expected_request
from prefix_model.conformance.screens import envelope_ok
from prefix_model.conformance.state import CaptureQueue, FoldState, OpenStep, StepResult
from prefix_model.core.contracts import ENABLED, Rejection, ensure, require
from prefix_model.core.events import (
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    COMPACT_END,
    COMPACT_START,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    STEP_END,
    STEP_START,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Event,
    check_event,
    seq_gap,
)
from prefix_model.core.headers import check_header_event, header_equals
from prefix_model.core.json_values import MAX_DEPTH, MAX_SAFE_INTEGER
from prefix_model.core.requests import Request

__all__ = ["LogChecker", "check_events", "ARMS"]

Arm = Callable[[FoldState, int, PlainEvent], None]

# The dispatch: per event type, the arms that judge it after the envelope and the numbering, in the order their findings
# are written. The enclosure's arm comes first (ENC-1..3), then the type's own family: the surface (§3), the record rule
# (CMP-1, HDR-*, PFX-*), the steps and their requests (MATCH-*, then REC-*, INST-*). A type no row names — the other
# events, an unknown type included (a log-only record, LOG-9; a legacy one is LOG-7's, found by the envelope's check) —
# needs only an open turn (ELSEWHERE).
ARMS: dict[str, tuple[Arm, ...]] = {
    TURN_START: (enclosure.turn_start,),  # ENC-1
    TURN_END: (enclosure.turn_end, matching.step_closes),  # ENC-1; an open step's request resolved
    STEP_START: (enclosure.step_start, matching.step_opens),  # ENC-2; the step opens (REQ-3: its boundary)
    STEP_END: (enclosure.step_end, matching.step_closes),  # ENC-2; its request resolved (MATCH-*, REC-*, INST-*)
    ASSISTANT_CHUNK: (enclosure.in_step, matching.dispatches),  # ENC-3; REQ-4: its request resolved at the first chunk
    ASSISTANT_MESSAGE: (enclosure.in_step, live.surface),  # ENC-3; SURF-*
    TOOL_CALL: (enclosure.tool_call,),  # ENC-3
    TOOL_RESULT: (enclosure.tool_result, live.surface),  # ENC-3 (an append answers a call); SURF-* (a rewrite too)
    USER_MESSAGE: (enclosure.in_turn, live.surface),  # ENC-3; SURF-*
    STEERING_MESSAGE: (enclosure.in_turn, live.surface),  # ENC-3; SURF-*
    COMPACT_START: (enclosure.in_turn, record.compaction_starts),  # ENC-3; CMP-1's window opens
    COMPACT_END: (enclosure.in_turn, record.compaction_ends),  # ENC-3; CMP-1's window closes
    REQUEST_HEADER: (enclosure.in_turn, record.header),  # ENC-3; CMP-1, HDR-9, HDR-15, PFX-3, PFX-6
}
ELSEWHERE: tuple[Arm, ...] = (enclosure.in_turn,)  # ENC-3


def _envelope_judged(self: LogChecker, line: int, event: PlainEvent) -> bool:
    """The first rule the spec's envelope and header checks find in ``event`` is among the findings at ``line``."""
    if event.depth > MAX_DEPTH:
        return True  # freeze refuses it (JSON-7): the readers never hand such an event over
    frozen = to_event(event)
    found = check_event(frozen, event.seq) or check_header_event(frozen)
    return found is None or any(f.rule == found.rule and f.line == line and f.seq == event.seq for f in reversed(self.findings))


class LogChecker(FoldState):
    """Feed events in order with ``feed``; then ``finish``. Findings accumulate in ``findings``."""

    # no contract: a copy of the state, no rule; the loop properties' tests fold every prefix both ways and compare
    def fork(self, captured: Sequence[Captured]) -> LogChecker | None:
        """Return an unfinished copy of this fold that reads ``captured`` as its capture, or None where it cannot go on.

        ``captured`` must begin with the requests this fold was given (the very objects); the copy
        is then what a fold of the same events over ``captured`` would be, so feeding it the next
        events and finishing it finds what a fold of the whole log finds. That holds unless this
        fold found the capture exhausted (a step matched against no request, which a longer
        capture would have given one): then None, and the caller folds afresh.
        """
        if self.queue.done or self.resolved is not None:
            return None
        copy = replace(self, captured=captured)  # a new queue over all of ``captured`` (replaced below)
        for name, value in vars(self).items():
            if isinstance(value, (list, dict, set)):
                setattr(copy, name, type(value)(value))
            elif isinstance(value, SurfaceNodes):
                setattr(copy, name, SurfaceNodes(value))
        if self.open_step is not None:
            copy.open_step = OpenStep(replace(self.open_step.step), self.open_step.header_seen, self.open_step.resolved)
        copy.queue = CaptureQueue(itertools.islice(captured, self.queue.taken, None), self.queue.taken)
        return copy

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
        last = self.findings[-1] if self.resync and self.findings else None
        if last is not None and last.rule == rejection.rule and last.seq is None and (last.last_line or last.line) == line - 1:
            count = line - (last.line or line) + 1
            self.findings[-1] = replace(last, last_line=line, message=f"{count} lines in a row are no event; the first: {self.run_reason}")
        else:
            self.find(rejection.rule, rejection.reason, None, line)
            self.run_reason = rejection.reason
        self.resync = True

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
        expected, seq = self.next_seq, event.seq
        forward = type(seq) is int and seq > expected
        self.next_seq = seq + 1 if forward else expected + 1
        resync, self.resync = self.resync, False
        in_order = seq == expected
        if in_order and event.type == ASSISTANT_CHUNK and self._plain_chunk(event, expected):
            return
        if not envelope_ok(event):
            frozen = to_event(event)
            rejection = check_event(frozen, event.seq) or check_header_event(frozen)
            if rejection is not None:
                self.find(rejection.rule, rejection.reason, event, line)
        if not in_order and not (resync and forward):
            gap = seq_gap(event.seq, expected)
            self.find(gap.rule, gap.reason, event, line)
        for arm in ARMS.get(event.type, ELSEWHERE):
            arm(self, line, event)

    @ensure(
        lambda event, expected, result: not result or (envelope_ok(event) and check_event(to_event(event), expected) is None),
        "CHK-2: a chunk folded on the screen is one the envelope rules and LOG-2 accept",
        enabled=ENABLED,
    )
    def _plain_chunk(self, event: PlainEvent, expected: int) -> bool:
        """Fold a chunk of the open step that every rule plainly passes (the most frequent event); else False.

        What ``feed`` would do for it, less the rules that cannot fire: ``envelope_ok`` holds,
        its seq is the next, it names the open step (ENC-3, asked of the enclosure arm's own ``in_open_step``),
        and it dispatches that step.
        """
        open_step, data, time = self.open_step, event.data, event.time
        if open_step is None or type(data) is not dict or event.seq != expected or type(time) is not int or not 0 <= time <= MAX_SAFE_INTEGER:
            return False
        if event.surface_op is not None or event.source_event_seqs is not None or not enclosure.in_open_step(self, data.get("turn"), data.get("step")):
            return False
        open_step.step.dispatched = True
        if not open_step.resolved:
            matching.resolve_open(self)
        return True

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
        return live.known(self)

    @ensure(
        lambda self, result: (result is None) == (self.header is None), "REC-1: a request is implied only where a header is in force", enabled=ENABLED
    )
    @ensure(
        lambda self, result: result is None or (self.header is not None and header_equals(result.header, self.header) and result.session_id == self.session_id),
        "REC-1: the implied request is built from the header in force, for the log's session",
        enabled=ENABLED,
    )
    def request_for(self, step: StepResult) -> Request | None:
        """Return the request the log implies for ``step`` (None: no header in force), asked as it resolves (``resolved``)."""
        return None if self.header is None else expected_request(self, step)

    @property
    # no contract: it reads the enclosure arm's open turn and step (ENC-1, ENC-2), its body one expression
    def open_at_end(self) -> tuple[int, int | None] | None:
        """Return the turn (and step) still open where the log ends — a crash the harness repairs on load — or None."""
        if self.open_turn is None:
            return None
        return self.open_turn, None if self.open_step is None else self.open_step.step.step

    @ensure(lambda self: _accounted(self), "MATCH-1/CHK-1: every captured request is checked, unmatched or counted after a stop", enabled=ENABLED)
    def finish(self, stopped: bool = False) -> None:
        """Resolve the last open step; report the captured requests no step took.

        ``stopped``: the log was read only up to a line nothing after which can be trusted; the
        requests left are for steps the check did not see, and are counted, not judged.
        """
        matching.resolve_open(self)
        while self.queue.head() is not None:
            request = self.queue.pop()
            if stopped:
                request.read_whole()
                self.requests_after_stop += 1
            else:
                matching.unmatched(self, request)


def _accounted(checker: LogChecker) -> bool:
    """The capture is read to its end, and each request taken is counted once: checked, unmatched, or left after a stop."""
    counted = checker.requests_checked + checker.requests_unmatched + checker.requests_after_stop
    return checker.queue.head() is None and counted == checker.queue.taken


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
