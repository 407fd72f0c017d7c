"""§9 the fold's arms one at a time: a captured request's text screen, the enclosure and matching
arms on logs the loop never writes, and the text lane taking the common case.

Each log is the witness run's (the harness's semantics) with a few events changed in place (a
dropped one becomes a log-only ``todo/write`` at its seq, so that no other rule fires); the
expected findings are read off that change.
"""

from __future__ import annotations

import json

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import cache
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.conformance import reconstruction
from prefix_model.conformance.findings import MISSING, Finding
from prefix_model.conformance.captured import Captured, captured_request
from prefix_model.conformance.fold import LogChecker, check_events
from prefix_model.conformance.nodes import SurfaceNodes
from prefix_model.conformance.state import StepResult
from prefix_model.formats.plain import PlainEvent, from_event, plain_text
from prefix_model.conformance.state import FoldState
from prefix_model.core.contracts import RejectedError, Rejection
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    COMPACT_END,
    COMPACT_START,
    REQUEST_HEADER,
    STEP_END,
    STEP_START,
    TODO_WRITE,
    TOOL_RESULT,
    TURN_END,
    USER_MESSAGE,
    Event,
    Replace,
)
from prefix_model.core.json_values import MAX_DEPTH, FrozenMap, freeze_object, thaw
from prefix_model.core.requests import request_to_json
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.variants import VARIANTS, run_witness
from prefix_model.loop.world import SentRequest, World


@cache
def witness() -> World:
    return run_witness(HARNESS)


def _events(session: str) -> tuple[Event, ...]:
    return witness().session(session).log.events


def _numbered(events: Iterable[Event]) -> tuple[tuple[int, Event], ...]:
    """Each event on line seq + 1."""
    return tuple((e.seq + 1, e) for e in events)


def _blank(event: Event) -> Event:
    """The event at its seq made a log-only ``todo/write``: it leaves the turn's surface, steps and requests alone."""
    return replace(event, type=TODO_WRITE, data=freeze_object({"todos": []}), surface_op=None, source_event_seqs=None)


def _with(event: Event, **data: object) -> Event:
    assert isinstance(event.data, FrozenMap)
    return replace(event, data=freeze_object(dict(event.data) | data))


def _sent(session: str) -> list[SentRequest]:
    return [r for r in witness().requests if r.loop_request and r.session_id == session]


def _unnamed(session: str) -> tuple[Captured, ...]:
    return tuple(captured_request(n, request_to_json(r.request)) for n, r in enumerate(_sent(session)))


def _named(session: str) -> tuple[Captured, ...]:
    return tuple(captured_request(n, request_to_json(r.request), r.turn, r.step) for n, r in enumerate(_sent(session)))


def _feed(checker: LogChecker, events: Iterable[Event]) -> None:
    """Feed ``events`` to an unfinished fold, each on line seq + 1."""
    for line, event in _numbered(events):
        checker.feed(line, from_event(event))


def _moved(events: Iterable[Event], by: int) -> list[Event]:
    """``events`` renumbered ``by`` seqs on, their sourceEventSeqs with them."""
    return [replace(e, seq=e.seq + by, source_event_seqs=None if e.source_event_seqs is None else tuple(s + by for s in e.source_event_seqs)) for e in events]


def _step(session: str, kind: str, turn: int, step: int) -> int:
    """Return the position of the ``kind`` event of ``turn``/``step`` in the session's log."""
    return next(n for n, e in enumerate(_events(session)) if e.type == kind and (e.field("turn"), e.field("step")) == (turn, step))


@pytest.mark.spec("CHK-2")
def test_a_fields_own_text_in_the_line_is_taken_and_nothing_else_is() -> None:
    text = '{"model":"m1","n":1}'
    request = Captured(0, 1, {"model": "m1", "n": 1}, text=text, spans={"model": (9, 13), "n": (18, 19)})
    assert request.same("model", '"m1"') and request.same("n", "1")
    # Not a prefix of the field's text, not the empty text, not what follows the field in the line.
    assert not request.same("model", '"m') and not request.same("model", "") and not request.same("n", "}")
    assert not request.same("n", "2")
    assert Captured(0, 1, {"model": "m1"}).same("model", '"m1"')  # no line: the field's compact text


@pytest.mark.parametrize(("turn", "step", "named"), [(1, 1, True), (1, None, False), (None, 1, False), (None, None, False)])
@pytest.mark.spec("MATCH-1", "MATCH-2")
def test_a_capture_names_its_step_only_with_both_turn_and_step(turn: int | None, step: int | None, named: bool) -> None:
    assert Captured(0, 1, {}, turn, step).named is named


@pytest.mark.spec("ENC-3")
def test_an_assistant_message_of_another_step_is_an_ENC_3_finding() -> None:
    events = list(_events("s3"))
    at = next(n for n, e in enumerate(events) if e.type == ASSISTANT_MESSAGE)
    events[at] = _with(events[at], step=2)
    assert [(f.rule, f.seq) for f in check_events(_numbered(events)).findings] == [("ENC-3", at)]


@pytest.mark.spec("ENC-1", "ENC-3")
def test_a_turn_end_closes_the_open_step_and_forgets_its_tool_calls() -> None:
    """Turn 2's first step calls c1 and its turn ends with the step open; a result for c1 in turn 3 answers nothing of its step."""
    events = list(_events("s1"))
    for n in range(_step("s1", STEP_END, 2, 1), _step("s1", STEP_END, 2, 2) + 1):  # step 1's end and all of step 2
        events[n] = _blank(events[n])
    late = _step("s1", TOOL_RESULT, 3, 1)
    events[late] = _with(events[late], callId="c1")
    turn_end = next(n for n, e in enumerate(events) if e.type == TURN_END and e.field("turn") == 2)
    assert [(f.rule, f.seq) for f in check_events(_numbered(events)).findings] == [("ENC-1", turn_end), ("ENC-3", late)]


@pytest.mark.spec("MATCH-2")
def test_a_step_shown_dispatched_only_by_chunks_off_the_fast_screen_takes_its_request() -> None:
    """Turn 3's second step writes no header: its chunks prove it sent, even when each is out of seq (LOG-2)."""
    events = _events("s1")
    first = _step("s1", ASSISTANT_CHUNK, 3, 2)
    assert events[first + 1].type == ASSISTANT_CHUNK
    numbered = [(e.seq + 1, e) for e in events]
    # Each of the step's two chunks a seq ahead of the one expected: off the chunk screen, folded by the full arm.
    shifted = [(line, replace(e, seq=e.seq + (1 if n == first else 2 if n > first else 0))) for n, (line, e) in enumerate(numbered)]
    reported: list[tuple[int, int, bool | None]] = []
    checker = LogChecker("s1", _unnamed("s1"), resolved=lambda s: reported.append((s.turn, s.step, s.dispatched)))
    for line, event in shifted:
        checker.feed(line, from_event(event))
    checker.finish()
    assert [f.rule for f in checker.findings] == ["LOG-2", "LOG-2"]
    assert [(m.turn, m.step) for m in checker.in_order] == [(r.turn, r.step) for r in _sent("s1")]
    assert (3, 2, True) in reported


@pytest.mark.spec("MATCH-2")
def test_a_step_with_no_header_and_no_chunk_stops_the_matching_in_order() -> None:
    """Turn 3's second step without its chunks may or may not have sent: the requests after it are not guessed at."""
    events = list(_events("s1"))
    first = _step("s1", ASSISTANT_CHUNK, 3, 2)
    events[first], events[first + 1] = _blank(events[first]), _blank(events[first + 1])
    checker = check_events(_numbered(events), _unnamed("s1"), "s1")
    assert [(f.rule, f.seq) for f in checker.findings] == [("MATCH-2", _step("s1", STEP_START, 3, 2))]
    matched = [(m.turn, m.step) for m in checker.in_order]
    assert matched == [(2, 1), (2, 2), (3, 1)] and checker.requests_unmatched == len(_sent("s1")) - 3


@pytest.mark.spec("JSON-7", "MATCH-1")
def test_a_request_no_step_takes_is_still_read_whole() -> None:
    nested: object = "leaf"
    for _ in range(MAX_DEPTH + 1):
        nested = [nested]
    deep = Captured(0, 1, {"messages": nested}, 9, 9, shallow=False)
    with pytest.raises(RejectedError):
        check_events(_numbered(_events("s3")), (deep,), "s3")


@pytest.mark.spec("JSON-7", "CAP-1")
def test_a_request_its_reader_left_uncounted_is_counted_when_read_whole() -> None:
    nested: object = "leaf"
    for _ in range(MAX_DEPTH + 1):
        nested = [nested]
    fields: dict[str, object] = {"messages": nested}
    deep = Captured(0, 1, fields, 9, 9, shallow=None, text=json.dumps(fields, separators=(",", ":")))  # as the capture reader leaves it
    with pytest.raises(RejectedError):
        check_events(_numbered(_events("s3")), (deep,), "s3")
    flat = Captured(0, 1, {"messages": []}, 9, 9, shallow=None, text='{"messages":[]}')
    flat.read_whole()
    assert flat.shallow is True


@pytest.mark.spec("CHK-2", "REC-1", "REC-2")
def test_every_request_of_a_conforming_run_passes_on_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The text lane takes the common case: no request of the witness run is compared field by field."""
    slow: list[int] = []
    compare = reconstruction._compare_exactly

    def counted(state: FoldState, result: StepResult, request: Captured) -> tuple[bool, int | None]:
        slow.append(request.index)
        return compare(state, result, request)

    monkeypatch.setattr(reconstruction, "_compare_exactly", counted)
    for session in ("s1", "s2", "s3"):
        named = _named(session)
        checker = check_events(((e.seq + 1, e) for e in _events(session)), named, session, seed_length=_seed(session))
        assert checker.findings == [] and checker.requests_checked == len(named) > 0, session
    assert slow == []


def _seed(session: str) -> int:
    lineage = witness().session(session).lineage
    return 0 if lineage is None else lineage.seed_length


@pytest.mark.spec("CHK-1", "MATCH-1", "MATCH-2")
def test_the_fold_counts_what_it_read_and_how_each_request_was_matched() -> None:
    events, sent = _events("s1"), _sent("s1")
    for capture, by_step in ((_named("s1"), len(sent)), (_unnamed("s1"), 0)):
        checker = check_events(_numbered(events), capture, "s1")
        counts = (checker.events, checker.steps, checker.requests_checked, checker.requests_by_step, len(checker.in_order), checker.requests_unmatched)
        assert counts == (len(events), sum(e.type == STEP_START for e in events), len(sent), by_step, len(sent) - by_step, 0)


@pytest.mark.spec("LOG-2")
def test_a_log_is_numbered_from_0() -> None:
    events = _events("s3")
    later = [(e.seq + 1, replace(e, seq=e.seq + 1)) for e in events]
    assert [(f.rule, f.line) for f in check_events(later).findings] == [("LOG-2", 1)]


@pytest.mark.spec("CHK-2")
def test_the_feed_contract_wants_the_spec_rule_itself_at_the_events_line() -> None:
    import icontract

    from proofs.bugs_detected import broken_twin

    bad_seq = from_event(_events("s3")[0])._replace(seq=-1)  # LOG-2: no safe non-negative integer
    renamed = broken_twin(LogChecker.feed, lambda self, line, event: self.findings.append(Finding("LOG-1", "renamed", seq=event.seq, line=line)))
    with pytest.raises(icontract.ViolationError, match="CHK-2: the rule check_event or check_header_event finds in an event is a finding at its line"):
        renamed(LogChecker(), 1, bad_seq)


def with_data(event: Event, **fields: object) -> Event:
    """Return ``event`` with ``fields`` set in its data."""
    data = event.data
    assert isinstance(data, FrozenMap)
    return replace(event, data=freeze_object({**data, **fields}))


@pytest.mark.spec("ENC-2")
def test_a_step_outside_any_turn_is_told_the_step_it_should_have_been() -> None:
    start = next(e for e in _events("s3") if e.type == STEP_START)
    found = check_events([(1, replace(start, seq=0))]).findings
    assert [(f.rule, f.message) for f in found] == [("ENC-2", "step/start 1/1: no turn is open")]  # not Python's "open turn None"
    turn_start = next(e for e in _events("s3") if e.type == "turn/start")
    found = check_events([(1, turn_start), (2, replace(with_data(start, step=2), seq=1))]).findings
    assert [(f.rule, f.message) for f in found] == [("ENC-2", "step/start 1/2: expected step 1 of open turn 1")]
    found = check_events([(1, turn_start), (2, replace(start, seq=1)), (3, replace(start, seq=2))]).findings
    assert [(f.rule, f.message) for f in found] == [("ENC-2", "step/start 1/1: step 1 of turn 1 is still open")]


@pytest.mark.spec("ENC-1")
def test_a_turn_end_that_closes_nothing_says_what_is_open_in_words() -> None:
    turn_start, start, end = (next(e for e in _events("s3") if e.type == kind) for kind in ("turn/start", STEP_START, "turn/end"))
    found = check_events([(1, replace(end, seq=0))]).findings
    assert [(f.rule, f.message) for f in found] == [("ENC-1", "turn/end 1: no turn is open")]
    found = check_events([(1, turn_start), (2, replace(start, seq=1)), (3, replace(end, seq=2))]).findings
    assert [(f.rule, f.message) for f in found] == [("ENC-1", "turn/end 1: step 1 of turn 1 is still open")]
    found = check_events([(1, turn_start), (2, replace(with_data(end, turn=2), seq=1))]).findings
    assert [(f.rule, f.message) for f in found] == [("ENC-1", "turn/end 2: expected the open turn 1")]


def _fold_of(events: Iterable[Event], captured: tuple[Captured, ...]) -> tuple[object, ...]:
    checker = LogChecker("s1", captured)
    _feed(checker, events)
    checker.finish()
    return _outcome(checker)


def _fold_findings(events: Iterable[Event], captured: tuple[Captured, ...]) -> list[Finding]:
    checker = LogChecker("s1", captured)
    _feed(checker, events)
    checker.finish()
    return checker.findings


def _outcome(checker: LogChecker) -> tuple[object, ...]:
    return ([str(f) for f in checker.findings], checker.events, checker.steps, checker.requests_checked, checker.requests_unmatched, checker.requests_by_step)


@pytest.mark.spec("CHK-2", "REC-1", "REC-3", "INST-2")
def test_a_fork_of_an_unfinished_fold_goes_on_as_the_fold_of_the_longer_capture_and_leaves_the_first_alone() -> None:
    """As the loop properties use it: a fold over a log so far and the requests sent so far, forked when more were sent."""
    events, sent = _events("s1"), _sent("s1")
    requests = []
    for n, r in enumerate(sent):
        fields = request_to_json(r.request)
        if n == 2:  # one request off the log: findings, and the REC-3 state of its instance, to carry over
            fields = freeze_object(dict(fields) | {"system": "another system prompt"})
        requests.append(captured_request(n, fields, r.turn, r.step, "main"))  # one instance named: turn 5's resume is INST-2
    whole = _fold_of(events, tuple(requests))
    assert "INST-2" in {f.rule for f in _fold_findings(events, tuple(requests))}
    forked = 0
    for cut in range(len(events) + 1):
        given = tuple(q for q, r in zip(requests, sent) if r.log_length <= cut)
        checker = LogChecker("s1", given)
        _feed(checker, events[:cut])
        copy = checker.fork(tuple(requests))
        if copy is None:
            continue
        forked += 1
        for line, event in _numbered(events[cut:]):
            copy.feed(line, from_event(event))
            checker.feed(line, from_event(event))  # the first fold goes on too: nothing of it is shared with the copy
        copy.finish()
        checker.finish()
        assert _outcome(copy) == whole, cut
        assert _outcome(checker) == _fold_of(events, given), cut
    assert 0 < forked < len(events)  # where the capture so far ran out before the cut, the fold cannot fork


@pytest.mark.spec("CHK-2")
def test_a_fold_that_saw_its_capture_end_or_reports_each_step_does_not_fork() -> None:
    events = _events("s3")
    exhausted = LogChecker("s3")
    for line, event in _numbered(events):
        exhausted.feed(line, from_event(event))  # its step is matched against no request: the capture has ended
    assert exhausted.fork(_unnamed("s3")) is None
    assert LogChecker("s3").fork(()) is not None
    assert LogChecker("s3", resolved=lambda step: None).fork(()) is None


@pytest.mark.spec("CHK-2", "ENC-3")
def test_a_fork_keeps_its_own_pending_tool_calls() -> None:
    """Forked between c1's call and its result: the first fold closing its step leaves the copy's call pending."""
    events, sent = _events("s1"), _sent("s1")
    result = _step("s1", TOOL_RESULT, 2, 1)
    requests = _named("s1")
    # Given one request more than were sent by the cut: a capture seen to end cannot fork.
    checker = LogChecker("s1", requests[: 1 + sum(r.log_length <= result for r in sent)])
    _feed(checker, events[:result])
    copy = checker.fork(requests)
    assert copy is not None
    step_end = events[result + 1]
    checker.feed(result + 1, from_event(replace(step_end, seq=result)))  # the first fold's step ends without the result
    _feed(copy, events[result:])
    copy.finish()
    assert _outcome(copy) == _fold_of(events, requests)


@pytest.mark.spec("CHK-4", "CHK-3")
def test_lines_in_a_row_that_are_no_event_are_one_finding_over_their_range() -> None:
    checker = LogChecker()
    checker.feed(1, from_event(_events("s3")[0])._replace(seq=-1))  # an event's own finding first (LOG-2, with its seq)
    for line in (2, 3, 4):
        checker.unreadable(line, Rejection("LOG-1", f"line {line} is no JSON"))
    checker.unreadable(6, Rejection("LOG-1", "line 6 is no JSON"))  # not in a row with 4
    checker.unreadable(7, Rejection("JSON-1", "line 7 holds a lone surrogate"))  # another rule
    checker.feed(8, from_event(_events("s3")[0]))
    checker.unreadable(9, Rejection("JSON-1", "line 9 holds a lone surrogate"))  # an event between: a new run
    found = [(f.rule, f.line, f.last_line, f.message) for f in checker.findings]
    assert [f[:2] for f in found if f[1] in (1, 8)] == [("LOG-2", 1), ("LOG-2", 1), ("LOG-2", 8), ("ENC-1", 8)]  # the events' own
    assert [f for f in found if f[1] not in (1, 8)] == [
        ("LOG-1", 2, 4, "3 lines in a row are no event; the first: line 2 is no JSON"),
        ("LOG-1", 6, None, "line 6 is no JSON"),
        ("JSON-1", 7, None, "line 7 holds a lone surrogate"),
        ("JSON-1", 9, None, "line 9 holds a lone surrogate"),
    ]


@pytest.mark.spec("LOG-2")
def test_past_a_seq_that_goes_back_the_numbering_goes_on_from_the_one_expected() -> None:
    events = list(_events("s3"))
    events[3] = replace(events[3], seq=2)  # a repeated seq: one finding, the next event is in order again
    assert [(f.rule, f.line, f.message) for f in check_events(_numbered(events)).findings] == [("LOG-2", 3, "seq 2 is not contiguous; expected 3")]


@pytest.mark.spec("CMP-1")
def test_a_header_written_between_compact_start_and_end_is_a_CMP_1_finding() -> None:
    events = list(_events("s1"))
    start = next(n for n, e in enumerate(events) if e.type == COMPACT_START)
    end = next(n for n, e in enumerate(events) if e.type == COMPACT_END)
    header = next(e for e in reversed(events[:start]) if e.type == REQUEST_HEADER)
    inside = [*events[:end], replace(header, seq=end), *(replace(e, seq=e.seq + 1) for e in events[end:])]
    after = [*events[: end + 1], replace(header, seq=end + 1), *(replace(e, seq=e.seq + 1) for e in events[end + 1 :])]
    found = [(f.rule, f.seq, f.message) for f in check_events(_numbered(inside)).findings if f.rule == "CMP-1"]
    assert found == [("CMP-1", end, "a request/header was written during compaction")]
    assert not [f for f in check_events(_numbered(after)).findings if f.rule == "CMP-1"]


@pytest.mark.spec("CHK-2")
def test_every_chunk_of_a_conforming_run_is_folded_on_the_chunk_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunk screen takes the common case: each chunk of the witness run, in order and in its step, passes it."""
    taken: list[bool] = []
    screen = LogChecker._plain_chunk

    def counted(self: LogChecker, event: PlainEvent, expected: int) -> bool:
        taken.append(screen(self, event, expected))
        return taken[-1]

    monkeypatch.setattr(LogChecker, "_plain_chunk", counted)
    events = _events("s1")
    assert check_events(_numbered(events)).findings == []
    assert taken == [True] * sum(e.type == ASSISTANT_CHUNK for e in events)


@pytest.mark.spec("MATCH-2", "REQ-4")
def test_each_step_is_reported_at_its_first_chunk_dispatched_by_its_header_or_that_chunk() -> None:
    events = _events("s1")
    reported: list[tuple[int, int, bool | None, int]] = []
    checker = LogChecker("s1", resolved=lambda s: reported.append((s.turn, s.step, s.dispatched, checker.events)))
    _feed(checker, events)
    checker.finish()
    steps = [(r.turn, r.step) for r in _sent("s1")]  # each step sent a request; two of them wrote no header
    first_chunks = [_step("s1", ASSISTANT_CHUNK, *step) + 1 for step in steps]  # events read by then
    assert reported == [(*step, True, read) for step, read in zip(steps, first_chunks)]
    assert steps == [(e.field("turn"), e.field("step")) for e in events if e.type == STEP_START]


@pytest.mark.parametrize("turn", [2, True])
@pytest.mark.spec("ENC-1", "JSON-5")
def test_a_turn_end_naming_another_turn_is_an_ENC_1_finding(turn: object) -> None:
    events = list(_events("s3"))
    events[-1] = _with(events[-1], turn=turn)
    assert [(f.rule, f.seq) for f in check_events(_numbered(events)).findings] == [("ENC-1", len(events) - 1)]


@pytest.mark.spec("ENC-1")
def test_a_turn_opened_under_another_number_is_one_finding_and_its_events_belong_to_it() -> None:
    events = [_with(e, turn=5) if isinstance(e.data, FrozenMap) and "turn" in e.data else e for e in _events("s3")]
    assert [(f.rule, f.seq) for f in check_events(_numbered(events)).findings] == [("ENC-1", 0)]


@pytest.mark.spec("ENC-3")
def test_an_event_outside_any_turn_is_an_ENC_3_finding_at_its_line() -> None:
    events = [*_events("s3"), _blank(replace(_events("s3")[1], seq=len(_events("s3"))))]
    found = [(f.rule, f.seq, f.line, f.message) for f in check_events(_numbered(events)).findings]
    assert found == [("ENC-3", len(events) - 1, len(events), "todo/write outside any open turn")]


@pytest.mark.parametrize(("field", "empty"), [("system", ""), ("tools", []), ("messagePrefix", [])])
@pytest.mark.spec("PFX-6")
def test_a_snapshot_writing_an_empty_field_is_a_PFX_6_finding(field: str, empty: object) -> None:
    events = list(_events("s3"))
    at = next(n for n, e in enumerate(events) if e.type == REQUEST_HEADER)
    header = events[at].field("header")
    assert isinstance(header, FrozenMap)
    events[at] = _with(events[at], header=freeze_object(dict(header) | {field: empty}))
    assert [(f.rule, f.seq) for f in check_events(_numbered(events)).findings if f.rule == "PFX-6"] == [("PFX-6", at)]


def _headers() -> list[int]:
    return [n for n, e in enumerate(_events("s1")) if e.type == REQUEST_HEADER]


def _record_findings(events: list[Event], rule: str) -> list[tuple[str, int | None, int | None, str]]:
    return [(f.rule, f.seq, f.line, f.message) for f in check_events(_numbered(events)).findings if f.rule == rule]


@pytest.mark.spec("HDR-9")
def test_a_snapshot_whose_reason_contradicts_the_log_before_it_is_an_HDR_9_finding() -> None:
    first, second = _headers()[:2]
    events = list(_events("s1"))
    events[first], events[second] = _with(events[first], reason="change"), _with(events[second], reason="initial")
    assert _record_findings(events, "HDR-9") == [
        ("HDR-9", first, first + 1, 'reason "change" with no header earlier in the log'),
        ("HDR-9", second, second + 1, 'reason "initial" with a header earlier in the log'),
    ]


@pytest.mark.spec("HDR-15")
def test_a_change_snapshot_equal_to_the_header_in_force_is_an_HDR_15_finding() -> None:
    first, second = _headers()[:2]
    events = list(_events("s1"))
    events[second] = _with(events[second], header=events[first].field("header"))
    assert _record_findings(events, "HDR-15") == [("HDR-15", second, second + 1, "a change snapshot equal to the header in force")]


@pytest.mark.spec("PFX-3")
def test_a_change_snapshot_with_another_prefix_than_its_anchor_is_a_PFX_3_finding() -> None:
    first, second = _headers()[:2]
    events = list(_events("s1"))
    header = events[second].field("header")
    assert isinstance(header, FrozenMap) and header.get("messagePrefix")
    other = freeze_object(dict(header) | {"messagePrefix": [{"role": "user", "content": [{"type": "text", "text": "<another>"}]}]})
    events[second] = _with(events[second], header=other)
    found = [f for f in check_events(_numbered(events)).findings if f.rule == "PFX-3"]
    anchor = events[first].field("header")
    assert isinstance(anchor, FrozenMap)
    assert [(f.seq, f.path, f.expected, f.actual) for f in found] == [(second, "/messagePrefix", anchor.get("messagePrefix"), other.get("messagePrefix"))]


@pytest.mark.spec("SURF-7")
def test_an_appended_message_citing_itself_is_a_SURF_7_finding() -> None:
    events = list(_events("s3"))
    at = next(n for n, e in enumerate(events) if e.type == ASSISTANT_MESSAGE)
    events[at] = replace(events[at], source_event_seqs=(at,))
    found = [(f.rule, f.seq, f.line, f.message) for f in check_events(_numbered(events)).findings]
    assert found == [("SURF-7", at, at + 1, f"sourceEventSeqs must reference earlier events: {at} >= {at}")]


@pytest.mark.spec("SURF-3")
def test_an_unknown_surface_op_is_a_SURF_3_finding() -> None:
    events = list(_events("s3"))
    events[1] = replace(events[1], surface_op="bogus")  # what a foreign log may hold
    found = [(f.rule, f.seq, f.line, f.message) for f in check_events(_numbered(events)).findings]
    assert found == [("SURF-3", 1, 2, "user/message carries an invalid surfaceOp 'bogus'")]


@pytest.mark.spec("DER-1")
def test_a_node_that_derives_no_message_is_folded_and_sends_nothing() -> None:
    events = list(_events("s3"))
    at = next(n for n, e in enumerate(events) if e.type == ASSISTANT_MESSAGE)
    events[at] = _with(events[at], content=[])  # an empty reply: on the surface, in no request
    assert check_events(_numbered(events)).findings == []


@pytest.mark.spec("MATCH-2")
def test_a_step_whose_header_was_written_sent_its_request_without_a_chunk() -> None:
    """Turn 2's second step writes a header: with its chunks gone it still takes its request in order."""
    events = list(_events("s1"))
    first = _step("s1", ASSISTANT_CHUNK, 2, 2)
    assert events[first - 1].type == REQUEST_HEADER
    events[first], events[first + 1] = _blank(events[first]), _blank(events[first + 1])
    checker = check_events(_numbered(events), _unnamed("s1"), "s1")
    assert checker.findings == [] and [(m.turn, m.step) for m in checker.in_order] == [(r.turn, r.step) for r in _sent("s1")]


def _implied(events: list[Event], session: str = "s1") -> list[tuple[int, int, FrozenMap]]:
    """Each step's request as the log implies it (turn, step, request), read off a first fold."""
    implied: list[tuple[int, int, FrozenMap]] = []

    def take(step: StepResult) -> None:
        request = checker.request_for(step)
        if request is not None:
            implied.append((step.turn, step.step, request_to_json(request)))

    checker = LogChecker(session, resolved=take)
    _feed(checker, events)
    checker.finish()
    return implied


def _surface_findings(events: list[Event]) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.seq, f.message) for f in check_events(_numbered(events)).findings if f.rule.startswith("SURF")]


def _compaction() -> int:
    """The position of the witness compaction's replacement (a user/message over nodes 1..12 of s1)."""
    return next(n for n, e in enumerate(_events("s1")) if isinstance(e.surface_op, Replace))


@pytest.mark.spec("SURF-4")
def test_a_replacement_ending_off_the_surface_is_a_SURF_4_finding() -> None:
    events, at = list(_events("s1")), _compaction()
    op = events[at].surface_op
    assert isinstance(op, Replace) and events[op.end + 1].surface_op is None  # the next seq is no node
    events[at] = replace(events[at], surface_op=Replace(op.start, op.end + 1))
    assert _surface_findings(events) == [("SURF-4", at, f"replace end seq {op.end + 1} is not on the surface")]


@pytest.mark.spec("SURF-8")
def test_a_replacement_not_citing_its_last_shadowed_node_is_a_SURF_8_finding() -> None:
    events, at = list(_events("s1")), _compaction()
    op, cited = events[at].surface_op, events[at].source_event_seqs
    assert isinstance(op, Replace) and cited is not None and cited[-1] == op.end
    events[at] = replace(events[at], source_event_seqs=cited[:-1])
    assert _surface_findings(events) == [("SURF-8", at, f"sourceEventSeqs must include every shadowed node; missing [{op.end}]")]


@pytest.mark.spec("SURF-9")
def test_a_tool_result_may_rewrite_a_live_tool_result_and_nothing_else() -> None:
    events = list(_events("s1"))
    result, prompt = _step("s1", TOOL_RESULT, 3, 1), next(n for n, e in enumerate(events) if e.type == USER_MESSAGE and e.field("turn") is None and n > _compaction())
    pruned = _with(events[result], content=[{"type": "text", "text": "pruned"}])

    def rewrite(target: int) -> Event:
        return replace(pruned, seq=len(events), surface_op=Replace(target, target), source_event_seqs=(target,))

    assert _surface_findings([*events, rewrite(result)]) == []
    assert _surface_findings([*events, rewrite(prompt)]) == [("SURF-9", len(events), "a tool/result replacement must target a current tool/result")]


@pytest.mark.spec("MATCH-1", "MATCH-2")
def test_a_request_naming_its_step_leaves_the_next_unnamed_one_to_the_next_step() -> None:
    sent = _sent("s1")
    first, second = sent[0], sent[1]
    capture = (captured_request(0, request_to_json(first.request), first.turn, first.step), captured_request(1, request_to_json(second.request)))
    checker = check_events(_numbered(_events("s1")), capture, "s1")
    assert checker.findings == [] and checker.requests_by_step == 1
    assert [(m.request, m.turn, m.step) for m in checker.in_order] == [(1, second.turn, second.step)]


@pytest.mark.spec("MATCH-2", "REC-1")
def test_with_no_header_in_force_a_step_without_a_chunk_sent_nothing_and_one_with_a_chunk_did() -> None:
    events = list(_events("s3"))
    header = next(n for n, e in enumerate(events) if e.type == REQUEST_HEADER)
    events[header] = _blank(events[header])
    silent = [_blank(e) if e.type == ASSISTANT_CHUNK else e for e in events]
    checker = check_events(_numbered(silent), _unnamed("s3"), "s3")
    assert (checker.findings, checker.requests_checked, checker.requests_unmatched) == ([], 0, 1)
    checker = check_events(_numbered(events), _unnamed("s3"), "s3")
    assert [(f.rule, f.request) for f in checker.findings] == [("REC-1", 0)] and checker.requests_checked == 1


@pytest.mark.spec("MATCH-1")
def test_a_request_naming_a_step_the_log_lacks_is_a_MATCH_1_finding_at_its_line() -> None:
    sent = _sent("s3")[0]
    ghost = captured_request(0, request_to_json(sent.request), sent.turn, sent.step + 1)
    found = [(f.rule, f.request, f.line, f.message) for f in check_events(_numbered(_events("s3")), (ghost,), "s3").findings]
    expected = f"the log has no dispatching step turn {sent.turn} step {sent.step + 1} where the capture's order puts this request"
    assert found == [("MATCH-1", 0, 1, expected)]


@pytest.mark.spec("CHK-2", "SURF-4")
def test_the_guessed_history_after_a_replacement_is_the_requests_history() -> None:
    """s3 with its prompt replaced before the step (one replacement, one node): the guess at each chunk is what was sent."""
    events = _events("s3")
    summary = replace(events[1], seq=2, surface_op=Replace(1, 1), source_event_seqs=(1,))
    log = [events[0], events[1], summary, *_moved(events[2:], 1)]
    [(turn, step, request)] = _implied(log, "s3")
    checker = LogChecker("s3", (captured_request(0, request, turn, step),))
    guesses = []
    for line, event in _numbered(log):
        checker.feed(line, from_event(event))
        if event.type == ASSISTANT_CHUNK:
            guesses.append(checker.known_messages())
    checker.finish()
    assert checker.findings == [] and checker.requests_checked == 1
    messages = thaw(request.get("messages"))
    assert isinstance(messages, list) and guesses == [(plain_text(messages)[:-1], messages)] * 2


@pytest.mark.parametrize("earlier", [False, True])
@pytest.mark.parametrize("second", ["exact", "another system prompt"])
@pytest.mark.spec("REC-3", "CHK-3")
def test_a_broken_extension_joins_the_messages_finding_of_the_earlier_request(second: str, earlier: bool) -> None:
    """Turn 3's two requests share a header: the first sends a message too many; the second is exact, or has another
    system prompt; with or without a finding in an earlier request (a finding's place in the list is no flag)."""
    sent, captured = _sent("s1"), []
    first = next(n for n, r in enumerate(sent) if (r.turn, r.step) == (3, 1))
    assert (sent[first + 1].turn, sent[first + 1].step) == (3, 2) and sent[first].request.header == sent[first + 1].request.header
    for n, r in enumerate(sent):
        fields = cast(dict[str, object], thaw(request_to_json(r.request)))
        if n == first:
            fields["messages"] = [*cast(list[object], fields["messages"]), {"role": "user", "content": [{"type": "text", "text": "extra"}]}]
        if n == first + 1 and second != "exact":
            fields["system"] = second
        if n == 0 and earlier:
            fields["system"] = "an unrelated system prompt"
        captured.append(Captured(n, n + 1, fields, r.turn, r.step))
    found = [(f.rule, f.request, f.path, f.implies) for f in check_events(_numbered(_events("s1")), captured, "s1").findings]
    extra = len(cast(list[object], captured[first].fields["messages"])) - 1
    later = [] if second == "exact" else [("REC-1", first + 1, "/system", ("REC-2",))]
    before = [("REC-1", 0, "/system", ("REC-2",))] if earlier else []
    assert found == [*before, ("REC-1", first, f"/messages/{extra}", ("REC-2", "REC-3")), *later]


@pytest.mark.parametrize(("name", "value", "implied"), [("topP", 0.9, MISSING), ("provider", "another-provider", "mock")])
@pytest.mark.spec("REC-2")
def test_a_field_other_than_the_log_implies_is_a_REC_2_finding_with_both_values(name: str, value: object, implied: object) -> None:
    sent = _sent("s3")[0]
    fields = cast(dict[str, object], thaw(request_to_json(sent.request)))
    assert fields.get(name, MISSING) == implied
    found = check_events(_numbered(_events("s3")), (Captured(0, 1, fields | {name: value}, sent.turn, sent.step),), "s3").findings
    assert [(f.rule, f.path, f.expected, f.actual) for f in found] == [("REC-2", f"/{name}", implied, value)]
    assert f"(1 field(s) differ: {name})" in found[0].message


@pytest.mark.spec("CHK-1")
def test_where_the_log_ends_inside_a_turn_the_fold_says_which_turn_and_step() -> None:
    events = _events("s3")
    step_end = next(n for n, e in enumerate(events) if e.type == STEP_END)
    ends = {len(events): None, len(events) - 1: (1, None), step_end: (1, 1)}
    for length, open_at_end in ends.items():
        assert check_events(_numbered(events[:length])).open_at_end == open_at_end, length


@pytest.mark.spec("CHK-1", "CHK-4")
def test_requests_left_where_the_reading_stopped_are_counted_not_judged() -> None:
    events, sent = _events("s1"), _sent("s1")
    stop = _step("s1", STEP_START, 3, 1)
    checker = LogChecker("s1", _named("s1"))
    _feed(checker, events[:stop])
    checker.finish(stopped=True)
    done = sum(r.log_length <= stop for r in sent)
    assert (checker.requests_checked, checker.requests_after_stop, checker.requests_unmatched, checker.findings) == (done, len(sent) - done, 0, [])


@pytest.mark.parametrize(("is_error", "code", "found"), [(True, "TOOL_NOT_STARTED", []), (False, "TOOL_NOT_STARTED", ["ENC-3"]), (True, "FAILED", ["ENC-3"])])
@pytest.mark.spec("ENC-3")
def test_a_result_for_no_call_of_its_step_is_an_ENC_3_finding_unless_it_is_a_synthetic_not_started_error(is_error: bool, code: str, found: list[str]) -> None:
    events = list(_events("s1"))
    at = _step("s1", TOOL_RESULT, 3, 1)
    events[at] = _with(events[at], callId="c9", isError=is_error, error={"code": code, "message": "never started"})
    assert [f.rule for f in check_events(_numbered(events)).findings] == found


@pytest.mark.spec("MATCH-2", "FORK-1")
def test_with_no_seed_a_step_at_seq_0_takes_its_request_in_order() -> None:
    """s3 from its step/start on (its turn/start and prompt cut off): no event is a seed's, so the step's request is matched."""
    events = _events("s3")
    start = next(n for n, e in enumerate(events) if e.type == STEP_START)
    checker = check_events(_numbered(_moved(events[start:], -start)), _unnamed("s3"), "s3")
    assert [(m.turn, m.step) for m in checker.in_order] == [(1, 1)] and checker.requests_unmatched == 0


def _answers(nodes: SurfaceNodes | list[int], probes: range) -> list[tuple[bool, int | None]]:
    """What ``replacement_range`` asks of a node list, for each probe: ``in``, and ``index`` (None for a ValueError)."""
    found: list[tuple[bool, int | None]] = []
    for probe in probes:
        try:
            position: int | None = nodes.index(probe)
        except ValueError:
            position = None
        found.append((probe in nodes, position))
    return found


_NODE_OPS = st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 60), st.integers(0, 60), st.integers(0, 20)), max_size=40)


@pytest.mark.spec("CHK-2", "SURF-6")
@given(_NODE_OPS)
def test_the_checkers_nodes_answer_as_a_list_of_their_seqs(ops: list[tuple[bool, bool, int, int, int]]) -> None:
    """The fold's nodes keep each one's position by seq (no scan per replacement); every answer is a plain list's.

    Through appends and splices of fresh seqs (as a log numbers them) and of repeated ones (a log
    breaking LOG-2), and in a fork's copy, which goes on apart from its original.
    """
    nodes, plain, probes = SurfaceNodes(), list[int](), range(-1, 100)
    for n, (splice, fresh, a, b, repeated) in enumerate(ops):
        seq = 21 + n if fresh else repeated  # fresh seqs are 21..60, repeated ones 0..20
        if splice and plain:
            i, j = sorted((a % len(plain), b % len(plain)))
            nodes.splice(i, j, seq)
            plain[i : j + 1] = [seq]
        else:
            nodes.append(seq)
            plain.append(seq)
        assert list(nodes) == plain and len(nodes) == len(plain) and nodes[:] == plain and _answers(nodes, probes) == _answers(plain, probes)
    copy = SurfaceNodes(nodes)
    copy.append(99)
    assert _answers(copy, probes) == _answers([*plain, 99], probes) and _answers(nodes, probes) == _answers(plain, probes)


# --- §9 instances: a capture naming the instance that sent each request (INST-1..INST-3) ---


def _as_sent(world: World, session: str, name: Callable[[SentRequest], str | None]) -> tuple[Captured, ...]:
    """The session's loop requests as a capture naming each one's step and the instance ``name`` says."""
    sent = [r for r in world.requests if r.loop_request and r.session_id == session]
    return tuple(captured_request(n, request_to_json(r.request), r.turn, r.step, name(r)) for n, r in enumerate(sent))


def _own(sent: SentRequest) -> str:
    return f"instance-{sent.instance_id}"


def _instance_check(world: World, session: str, name: Callable[[SentRequest], str | None], events: Iterable[Event] | None = None) -> LogChecker:
    log = world.session(session)
    seed = log.lineage.seed_length if log.lineage is not None else 0
    return check_events(_numbered(log.log.events if events is None else events), _as_sent(world, session, name), session, seed)


@pytest.mark.spec("INST-1", "INST-2", "INST-3")
def test_the_witness_run_with_each_request_naming_its_instance_draws_no_finding() -> None:
    """Four instances over three sessions — a resume with another prefix, a fork child that anchors anew: each sent under its own anchor."""
    world = witness()
    assert len({r.instance_id for r in world.requests}) == 4
    for session in world.sessions:
        checker = _instance_check(world, session.id, _own)
        assert checker.findings == [] and checker.requests_checked > 0, session.id


@pytest.mark.spec("INST-2", "INST-1", "CHK-3", "PFX-2")
def test_one_instance_sent_under_a_second_anchor_with_another_prefix_is_one_INST_2_finding() -> None:
    """s1's capture says one instance sent every request: the resume snapshot of turn 5 is that instance recomposing (v1 to v2)."""
    world, events = witness(), _events("s1")
    anchors = [e for e in events if e.type == REQUEST_HEADER and e.field("reason") != "change"]
    prefixes = [cast(FrozenMap, e.field("header")).get("messagePrefix") for e in anchors]
    assert len(anchors) == 2 and prefixes[0] != prefixes[1]
    found = _instance_check(world, "s1", lambda r: "main").findings
    late = next(n for n, r in enumerate(_sent("s1")) if r.instance_id == 1)
    assert [(f.rule, f.implies, f.request, f.header_seq, f.expected, f.actual, f.expected_from) for f in found] == [
        ("INST-2", ("INST-1",), late, anchors[1].seq, prefixes[0], prefixes[1], anchors[0].seq)
    ]
    assert f"second anchor (seq {anchors[1].seq})" in found[0].message and f"its own (seq {anchors[0].seq})" in found[0].message
    # Once per anchor: a second request under it is no second finding; what the log alone cannot tell, it does not tell.
    assert check_events(_numbered(events), _named("s1"), "s1").findings == []
    assert _instance_check(world, "s1", lambda r: None).findings == []


@pytest.mark.spec("INST-1")
def test_one_instance_sent_under_a_second_anchor_with_its_own_prefix_is_an_INST_1_finding() -> None:
    from prefix_model.vectors.cases import world_of

    world = world_of("resume/same-prefix")
    assert _instance_check(world, "s1", _own).findings == []
    found = _instance_check(world, "s1", lambda r: "main").findings
    assert [(f.rule, f.implies, f.request, f.turn) for f in found] == [("INST-1", (), 1, 2)]
    assert "'main' is sent under a second anchor (seq 12) after its own (seq 3)" in found[0].message


@pytest.mark.spec("INST-3", "PFX-3", "CHK-3")
def test_a_new_instance_under_an_earlier_instances_anchor_is_INST_3_in_place_of_the_log_only_PFX_3() -> None:
    """The no-resume-anchor variant: the resumed instance writes its new prefix as a change snapshot."""
    variant = next(v for v in VARIANTS if v.name == "no-resume-anchor")
    world = run_witness(variant.semantics)
    snapshot = next(e for e in world.session("s1").log.events if e.type == REQUEST_HEADER and (e.field("reason"), e.seq) == ("change", 52))
    alone = check_events(_numbered(world.session("s1").log.events), _as_sent(world, "s1", lambda r: None), "s1").findings
    assert [(f.rule, f.seq, f.request) for f in alone] == [("PFX-3", snapshot.seq, None)]
    found = _instance_check(world, "s1", _own).findings
    first = next(n for n, r in enumerate(_sent("s1")) if r.instance_id == 1)
    assert [(f.rule, f.request, f.header_seq) for f in found] == [("INST-3", first, snapshot.seq)]
    assert "which instance 'instance-0' was sent under" in found[0].message


@pytest.mark.spec("INST-3", "HDR-15", "CHK-3")
def test_a_new_instances_first_snapshot_written_as_a_change_equal_to_the_fold_is_INST_3_in_place_of_HDR_15() -> None:
    from prefix_model.vectors.cases import world_of

    world = world_of("resume/same-prefix")
    events = list(world.session("s1").log.events)
    at = [n for n, e in enumerate(events) if e.type == REQUEST_HEADER][1]
    events[at] = _with(events[at], reason="change")
    assert [f.rule for f in _instance_check(world, "s1", lambda r: None, events).findings] == ["HDR-15"]
    assert [(f.rule, f.request, f.header_seq) for f in _instance_check(world, "s1", _own, events).findings] == [("INST-3", 1, at)]


@pytest.mark.spec("INST-3", "FORK-1")
def test_a_fork_child_sent_under_the_anchor_of_its_seed_is_an_INST_3_finding() -> None:
    """s2's child writes its first snapshot as a change: its request goes out under the parent's anchor it inherited."""
    world, events = witness(), list(_events("s2"))
    seed = world.session("s2").lineage
    own = [n for n, e in enumerate(events) if e.type == REQUEST_HEADER][-1]
    assert seed is not None and own >= seed.seed_length and events[own].field("reason") == "resume"
    events[own] = _with(events[own], reason="change")
    found = _instance_check(world, "s2", _own, events).findings
    assert [f.rule for f in found] == ["INST-3"] and "inherited with the fork's seed" in found[0].message
    assert [f.rule for f in _instance_check(world, "s2", lambda r: None, events).findings] == []


@pytest.mark.spec("INST-1", "INST-2", "INST-3", "CHK-3")
def test_the_instance_judges_contracts_name_the_rule_each_place_breaks() -> None:
    """``judge``'s contracts: a twin that misses a rule, names another, or splits a drift from its second anchor, is refused."""
    import icontract
    from prefix_model.conformance.instances import Anchor, Broken, Claim, judge

    from proofs.bugs_detected import broken_twin

    first, same, drifted = Anchor(1, 3, "[1]", (1,)), Anchor(2, 12, "[1]", (1,)), Anchor(2, 12, "[2]", (2,))
    claim = Claim("a", first, 3)
    assert judge("a", first, 3, None, None, 0) is None and judge("a", first, 5, first, claim, 0) is None
    assert [judge("b", first, 5, None, claim, 0), judge("a", same, 12, first, claim, 0), judge("a", drifted, 12, first, claim, 0)] == [
        Broken("INST-3", "the first request of instance 'b' is sent under the anchor at seq 3, which instance 'a' was sent under: "
               "a new instance writes its own initial/resume snapshot", new_snapshot=True),
        Broken("INST-1", "instance 'a' is sent under a second anchor (seq 12) after its own (seq 3): an instance writes one initial/resume snapshot"),
        Broken("INST-2", "instance 'a' is sent under a second anchor (seq 12) carrying another messagePrefix than its own (seq 3): "
               "a recomposition within the instance, written as an anchor", ("INST-1",), (1,), (2,), 3),
    ]  # fmt: skip
    assert judge("c", Anchor(1, 3, "[]", ()), 3, None, None, 10) == Broken(
        "INST-3", "the first request of instance 'c' is sent under the anchor at seq 3, inherited with the fork's seed: "
        "a fork-driven instance writes its own resume snapshot")  # fmt: skip
    blind = broken_twin(judge, lambda name, anchor, header_seq, own, claim, seed_length: None)
    with pytest.raises(icontract.ViolationError, match="INST-1/INST-2/INST-3: a request breaks the rule its place under the anchors says"):
        blind("b", first, 5, None, claim, 0)
    split = broken_twin(judge, lambda name, anchor, header_seq, own, claim, seed_length: Broken("INST-2", "drift"))
    with pytest.raises(icontract.ViolationError, match="CHK-3: a drift across a second anchor is one finding that also breaks INST-1"):
        split("a", drifted, 12, first, claim, 0)
    with pytest.raises(icontract.ViolationError, match="MATCH-1: requests are judged in log order"):
        judge("a", first, 3, None, Claim("a", same, 12), 0)


@pytest.mark.spec("ENC-3", "SURF-7")
def test_an_events_findings_are_written_in_the_order_of_its_arms() -> None:
    """``ARMS``: the enclosure's arm judges a tool/result before the surface's, and their findings are written in that order."""
    events = list(_events("s1"))
    k = next(n for n, e in enumerate(events) if e.type == TOOL_RESULT and e.surface_op == APPEND)
    seq = events[k].seq
    events[k] = replace(_with(events[k], callId="nobody"), source_event_seqs=(seq + 5,))  # no such call (ENC-3), a later source (SURF-7)
    found = [(f.rule, f.message) for f in check_events(_numbered(events)).findings if f.seq == seq]
    assert found == [("ENC-3", 'tool/result for "nobody" with no tool/call in this step'), ("SURF-7", f"sourceEventSeqs must reference earlier events: {seq + 5} >= {seq}")]
