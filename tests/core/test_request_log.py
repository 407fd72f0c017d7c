"""§5 the record rule — ``record_request_header`` (harness L/request-log.ts:44-55, facts §2.4).

Each loop instance writes one anchor with its first request, unconditionally: ``initial`` iff the
log holds no header, else ``resume``. Later it writes ``change`` iff the header differs from the
LOG's fold (a foreign snapshot is the baseline). Pinned cases from LT/request-reconstruction.spec.ts
and properties over generated logs, headers and instance schedules.
"""

from __future__ import annotations

import dataclasses

import icontract
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import ENABLED
from prefix_model.core.headers import (
    CHANGE,
    INITIAL,
    REASONS,
    RESUME,
    EpochHeader,
    LlmCallConfig,
    fold_request_header,
    header_equals,
    header_to_json,
    is_canonical_header,
    parse_header,
)
from prefix_model.core.json_values import json_text
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.request_log import expected_reason, header_event, record_request_header
from prefix_model.formats.event_lines import event_to_line

from tests.header_strategies import (
    MESSAGE_POOL,
    TOOL_POOL,
    canonical_headers,
    foreign_header,
    header_count,
    headers,
    logs_with_headers,
    plugin_event,
    step_start,
    turn_start,
    user_message,
)

PREFIX = (MESSAGE_POOL[0],)
FIRST = EpochHeader(LlmCallConfig("mock", "mock"), "You are A.", (TOOL_POOL[0],), PREFIX)


def header_text(header: EpochHeader | None) -> str:
    return "none" if header is None else json_text(header_to_json(header))


def reasons(log: Log) -> list[object]:
    return [e.field("reason") for e in log.events if e.type == "request/header"]


def opened() -> Log:
    return step_start(user_message(turn_start(EMPTY_LOG, 1), "go"), 1, 1)


def lines(log: Log) -> list[str]:
    return [event_to_line(e) for e in log.events]


def written(before: Log, after: Log) -> list[object]:
    """Return the reasons of the snapshots ``after`` added to ``before`` (earlier events must be unchanged)."""
    assert lines(after)[: len(before.events)] == lines(before)
    added = after.events[len(before.events) :]
    assert all(e.type == "request/header" for e in added)
    return [e.field("reason") for e in added]


# --- Pinned cases -------------------------------------------------------------------------------


@pytest.mark.spec("HDR-9")
def test_record_request_header_first_record_in_a_fresh_log_is_initial() -> None:
    log = record_request_header(opened(), False, FIRST)
    assert reasons(log) == [INITIAL]
    assert log.events[-1].seq == 3  # Appendix B: turn/start, user/message, step/start, then the header


@pytest.mark.spec("HDR-9")
def test_record_request_header_anchor_is_written_even_when_identical_to_the_fold() -> None:
    first = record_request_header(opened(), False, FIRST)
    resumed = record_request_header(step_start(first, 2, 1), False, FIRST)  # a new instance over the same log
    assert reasons(resumed) == [INITIAL, RESUME]
    assert header_text(fold_request_header(resumed.events)) == header_text(FIRST)


@pytest.mark.spec("HDR-9", "HDR-11")
def test_record_request_header_anchor_after_a_foreign_header_is_resume() -> None:
    log = foreign_header(opened(), FIRST, CHANGE)  # e.g. a composing listener appended a header
    assert written(log, record_request_header(log, False, FIRST)) == [RESUME]


@pytest.mark.spec("HDR-9")
def test_record_request_header_anchor_after_an_instance_that_never_recorded_is_initial() -> None:
    cancelled = turn_start(EMPTY_LOG, 1).append("user/message", {"content": [], "source": {"kind": "user"}}, surface_op="append")
    cancelled = cancelled.append("turn/end", {"turn": 1, "reason": {"kind": "aborted"}})
    log = step_start(user_message(turn_start(cancelled, 2), "again"), 2, 1)
    assert written(log, record_request_header(log, False, FIRST)) == [INITIAL]


@pytest.mark.spec("HDR-10")
def test_record_request_header_writes_nothing_for_an_identical_re_render() -> None:
    log = record_request_header(opened(), False, FIRST)
    again = record_request_header(step_start(log, 1, 2), True, dataclasses.replace(FIRST))
    assert lines(again) == lines(step_start(log, 1, 2))
    assert reasons(again) == [INITIAL]


@pytest.mark.spec("HDR-10")
def test_record_request_header_writes_one_change_for_a_system_prompt_change() -> None:
    log = record_request_header(opened(), False, FIRST)
    changed = dataclasses.replace(FIRST, system="You are B.")
    log = record_request_header(step_start(log, 1, 2), True, changed)
    log = record_request_header(step_start(log, 1, 3), True, changed)
    assert reasons(log) == [INITIAL, CHANGE]
    assert header_text(fold_request_header(log.events)) == header_text(changed)
    snapshot = parse_header(log.events[-2].field("header"))  # full snapshot: the prefix is repeated
    assert isinstance(snapshot, EpochHeader) and json_text(snapshot.message_prefix) == json_text(PREFIX)


@pytest.mark.spec("HDR-10")
@pytest.mark.parametrize(
    "config",
    [LlmCallConfig("mock", "mock", "max"), LlmCallConfig("mock", "mock", temperature=0), LlmCallConfig("mock", "mock", stop=())],
    ids=["effort", "temperature-zero", "empty-stop"],
)
def test_record_request_header_writes_change_for_a_config_change(config: LlmCallConfig) -> None:
    log = record_request_header(opened(), False, FIRST)
    after = record_request_header(log, True, dataclasses.replace(FIRST, config=config))
    assert written(log, after) == [CHANGE]


@pytest.mark.spec("HDR-10", "HDR-6")
def test_record_request_header_writes_change_for_a_reordered_tool_schema() -> None:
    log = record_request_header(opened(), False, FIRST)
    after = record_request_header(log, True, dataclasses.replace(FIRST, tools=(TOOL_POOL[1],)))
    assert written(log, after) == [CHANGE]


@pytest.mark.spec("HDR-11")
def test_record_request_header_compares_with_a_foreign_header_not_with_memory() -> None:
    log = record_request_header(opened(), False, FIRST)
    foreign = dataclasses.replace(FIRST, system="set by a plugin")
    log = foreign_header(log, foreign, CHANGE)
    after = record_request_header(log, True, FIRST)  # the instance's own memory says "unchanged"
    assert written(log, after) == [CHANGE]
    assert header_text(fold_request_header(after.events)) == header_text(FIRST)


@pytest.mark.spec("HDR-11")
def test_record_request_header_adopts_a_foreign_header_equal_to_the_request() -> None:
    log = record_request_header(opened(), False, FIRST)
    changed = dataclasses.replace(FIRST, system="You are B.")
    log = foreign_header(log, changed, RESUME)
    after = record_request_header(log, True, changed)  # memory would say "changed"; the fold says equal
    assert lines(after) == lines(log)


@pytest.mark.spec("HDR-11", "HDR-14")
def test_record_request_header_a_non_canonical_foreign_header_is_the_canonical_baseline() -> None:
    log = record_request_header(opened(), False, EpochHeader(FIRST.config))
    log = foreign_header(log, EpochHeader(FIRST.config, "", (), ()), CHANGE)
    assert lines(record_request_header(log, True, EpochHeader(FIRST.config))) == lines(log)


@pytest.mark.spec("HDR-14", "HDR-10")
def test_record_request_header_absence_of_tools_and_system_is_a_change() -> None:
    log = record_request_header(opened(), False, FIRST)
    bare = EpochHeader(FIRST.config, None, None, PREFIX)
    after = record_request_header(log, True, bare)
    assert written(log, after) == [CHANGE]
    folded = fold_request_header(after.events)
    assert folded is not None and (folded.system, folded.tools) == (None, None)
    snapshot = after.events[-1].field("header")
    assert json_text(snapshot) == '{"config":{"provider":"mock","model":"mock"},"messagePrefix":' + json_text(PREFIX) + "}"


@pytest.mark.spec("HDR-14", "HDR-9")
def test_record_request_header_a_new_instance_without_prefix_drops_the_old_prefix() -> None:
    log = record_request_header(opened(), False, FIRST)
    no_prefix = dataclasses.replace(FIRST, message_prefix=None)
    after = record_request_header(step_start(log, 2, 1), False, no_prefix)
    assert reasons(after) == [INITIAL, RESUME]
    folded = fold_request_header(after.events)
    assert folded is not None and folded.message_prefix is None


@pytest.mark.spec("HDR-12")
def test_record_request_header_writes_the_canonical_snapshot_in_harness_key_order() -> None:
    log = record_request_header(opened(), False, FIRST)
    event = log.events[-1]
    assert json_text(event.data) == f'{{"header":{json_text(header_to_json(FIRST))},"reason":"initial"}}'
    assert json_text(event.data).startswith('{"header":{"config":{"provider":"mock","model":"mock"},"system":"You are A.","tools":[')


@pytest.mark.skipif(not ENABLED, reason="the HDR-12 precondition is a contract; contracts are off")
@pytest.mark.spec("HDR-12")
def test_invalid_record_of_a_non_canonical_header() -> None:
    with pytest.raises(icontract.ViolationError) as caught:
        record_request_header(opened(), False, EpochHeader(FIRST.config, "", (), ()))
    assert "HDR-12" in str(caught.value)


# --- Properties over generated logs and headers -------------------------------------------------


@pytest.mark.spec("HDR-9", "HDR-11", "HDR-12", "HDR-13")
@given(logs_with_headers(), canonical_headers())
def test_record_request_header_first_record_is_an_unconditional_anchor(log: Log, header: EpochHeader) -> None:
    after = record_request_header(log, False, header)
    expected = INITIAL if header_count(log) == 0 else RESUME
    assert written(log, after) == [expected]
    assert expected_reason(log, False, header) == expected
    folded = fold_request_header(after.events)
    assert folded is not None and header_equals(folded, header)
    assert header_text(folded) == header_text(header)
    recorded = parse_header(after.events[-1].field("header"))
    assert isinstance(recorded, EpochHeader) and is_canonical_header(recorded)


@pytest.mark.spec("HDR-10", "HDR-11", "HDR-12")
@given(logs_with_headers(max_ops=4), canonical_headers(), st.none() | headers(), st.sampled_from(REASONS), st.none() | canonical_headers())
def test_record_request_header_later_record_writes_change_iff_the_fold_differs(
    log: Log, anchor: EpochHeader, foreign: EpochHeader | None, foreign_reason: str, fresh: EpochHeader | None
) -> None:
    log = record_request_header(log, False, anchor)
    if foreign is not None:
        log = foreign_header(log, foreign, foreign_reason)
    baseline = fold_request_header(log.events)
    assert baseline is not None
    header = anchor if fresh is None else fresh  # the anchor again: unchanged unless a foreign header moved the fold
    after = record_request_header(log, True, header)
    if header_equals(baseline, header):
        assert lines(after) == lines(log)
        assert expected_reason(log, True, header) is None
    else:
        assert written(log, after) == [CHANGE]
    if foreign is None and fresh is None:
        assert lines(after) == lines(log)
    folded = fold_request_header(after.events)
    assert folded is not None and header_equals(folded, header)


_OPS = st.one_of(
    st.tuples(st.just("record"), canonical_headers()),
    st.tuples(st.just("record"), st.none()),  # the instance records the log's current header again
    st.tuples(st.just("foreign"), headers()),
    st.tuples(st.just("event"), st.none()),
    st.tuples(st.just("instance"), st.none()),
)


@pytest.mark.spec("HDR-9", "HDR-10", "HDR-11", "HDR-13")
@given(st.lists(_OPS, max_size=8))
def test_record_request_header_schedule_has_one_anchor_per_instance(ops: list[tuple[str, EpochHeader | None]]) -> None:
    log = turn_start(EMPTY_LOG, 1)
    anchors: list[int] = [0]  # anchors written by each instance, the current one last
    logged = False
    for op, header in ops:
        if op == "instance":
            anchors.append(0)
            logged = False
        elif op == "event":
            log = plugin_event(log)
        elif op == "foreign":
            assert header is not None
            log = foreign_header(log, header, CHANGE)
        else:
            baseline = fold_request_header(log.events)
            header = header or baseline or EpochHeader(LlmCallConfig("mock", "mock"))
            had_header = header_count(log) > 0
            after = record_request_header(log, logged, header)
            added = written(log, after)
            if not logged:
                assert added == [RESUME if had_header else INITIAL]
            else:
                assert baseline is not None
                assert added == ([] if header_equals(baseline, header) else [CHANGE])
            anchors[-1] += sum(1 for r in added if r in (INITIAL, RESUME))
            log, logged = after, True
            folded = fold_request_header(log.events)
            assert folded is not None and header_equals(folded, header)
    assert all(count <= 1 for count in anchors)
    own = reasons(log)
    assert all(r in REASONS for r in own)
    assert INITIAL not in own[1:]  # 'initial' only ever for the log's first header


@pytest.mark.spec("HDR-9", "LOG-3")
@given(canonical_headers())
def test_a_snapshot_recorded_without_a_time_has_time_0(header: EpochHeader) -> None:
    after = record_request_header(EMPTY_LOG, False, header)
    assert [e.time for e in after.events] == [0] and header_event(EMPTY_LOG, header, INITIAL).time == 0


@pytest.mark.spec("HDR-9", "HDR-10")
@pytest.mark.skipif(not ENABLED, reason="a contract's own check")
def test_the_record_rules_contract_refuses_a_snapshot_of_another_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """The postcondition is held to the reason the rule expects: a record that writes 'resume' for a first anchor breaks it."""
    from prefix_model.core import request_log

    header = EpochHeader(LlmCallConfig("mock", "chat"), "You are A.")
    written_by = request_log.header_event
    monkeypatch.setattr(request_log, "header_event", lambda log, header, reason, time=0: written_by(log, header, RESUME, time))
    with pytest.raises(icontract.ViolationError, match="HDR-9/HDR-10: anchor once per instance"):
        record_request_header(EMPTY_LOG, False, header)
