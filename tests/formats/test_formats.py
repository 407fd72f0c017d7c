"""§8 — reading and writing the harness's in-memory event lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import Rejection
from prefix_model.core.events import Replace
from prefix_model.core.json_values import FrozenMap, json_text
from prefix_model.edge.formats.events_jsonl import LogReadError, read_log, read_log_lines
from prefix_model.examples import EXAMPLE_FILE, EXAMPLE_REQUESTS_FILE, EXAMPLE_STEPS, example_capture_lines, example_log
from prefix_model.formats.event_lines import event_to_line, parse_event, parse_json_line

from tests.reference import REAL_LOG_DIR

ROOT = Path(__file__).resolve().parents[2]
REAL_LOG = REAL_LOG_DIR / "events.jsonl"
BUNDLED = ROOT / "model" / "prefix_model" / "examples" / EXAMPLE_FILE

TURN_START = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}'


def read_bytes(*lines: bytes) -> object:
    return read_log_lines(list(lines), "mem.jsonl")


def rule_of(*lines: bytes) -> tuple[int | None, str]:
    with pytest.raises(LogReadError) as caught:
        read_bytes(*lines)
    return caught.value.line, caught.value.rule


@pytest.mark.spec("FMT-3")
def test_event_to_line_writes_the_real_harness_log_back_byte_for_byte() -> None:
    if not REAL_LOG.exists():
        pytest.skip(f"the shared reference log is not beside this checkout ({REAL_LOG})")
    lines = REAL_LOG.read_text(encoding="utf-8").splitlines()
    log = read_log(REAL_LOG)
    assert [event_to_line(e) for e in log.events] == lines


@pytest.mark.spec("FMT-3", "CLI-3")
def test_bundled_example_is_the_model_built_example_byte_for_byte() -> None:
    expected = "".join(event_to_line(e) + "\n" for e in example_log().events)
    assert BUNDLED.read_text(encoding="utf-8") == expected
    assert read_log(BUNDLED) == example_log()
    capture = BUNDLED.with_name(EXAMPLE_REQUESTS_FILE).read_text(encoding="utf-8")
    assert capture == "".join(line + "\n" for line in example_capture_lines()) and capture.count("\n") == len(EXAMPLE_STEPS)


@pytest.mark.spec("FMT-3")
def test_event_to_line_orders_envelope_keys_as_the_harness_does() -> None:
    line = b'{"surfaceOp":{"end":1,"op":"replace","start":1},"data":{"content":[],"source":{"kind":"plugin","plugin":"compact"}},"sourceEventSeqs":[1],"time":5,"seq":2,"type":"user/message"}'
    event = parse_event(parse_json_line(line.decode()))  # type: ignore[arg-type]
    assert not isinstance(event, Rejection)
    assert event.surface_op == Replace(1, 1)
    assert event_to_line(event) == (
        '{"type":"user/message","seq":2,"time":5,"data":{"content":[],"source":{"kind":"plugin","plugin":"compact"}},'
        '"sourceEventSeqs":[1],"surfaceOp":{"op":"replace","start":1,"end":1}}'
    )


@pytest.mark.spec("FMT-4", "JSON-4")
def test_parse_json_line_keeps_the_last_duplicate_value_at_the_first_position() -> None:
    value = parse_json_line('{"a":1,"b":2,"a":3}')
    assert isinstance(value, FrozenMap)
    assert json_text(value) == '{"a":3,"b":2}'


@pytest.mark.spec("FMT-4", "JSON-2")
def test_parse_json_line_reads_minus_zero_as_negative_zero_and_rejects_it() -> None:
    for text in ('{"x":-0}', '{"x":-0.0}', "-0"):
        found = parse_json_line(text)
        assert isinstance(found, Rejection) and found.rule == "JSON-2", text
    assert parse_json_line("0") == 0


@pytest.mark.spec("FMT-4", "JSON-1")
def test_parse_json_line_rejects_nan_and_infinity_literals_and_overflow() -> None:
    assert isinstance(parse_json_line('{"x":NaN}'), Rejection)
    assert isinstance(parse_json_line("[Infinity]"), Rejection)
    overflow = parse_json_line("1e400")
    assert isinstance(overflow, Rejection) and overflow.rule == "JSON-1"


@pytest.mark.spec("FMT-4", "JSON-1", "JSON-3")
@pytest.mark.parametrize("digits", [309, 400, 4300, 4301, 5001, 100_000])
@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_past_every_double_is_json_1_however_many_digits(digits: int, sign: str) -> None:
    # JSON.parse reads each as ±Infinity; int() refuses more than 4300 digits, which must not make it "not JSON".
    found = parse_json_line(f'{{"x":{sign}{"9" * digits}}}')
    assert found == Rejection("JSON-1", "$.x: number is not finite as a double")
    assert parse_json_line(f"{sign}{'9' * 308}") == float(f"{sign}{'9' * 308}")  # the largest doubles still read


@pytest.mark.spec("FMT-1", "FMT-2")
def test_invalid_lines_name_their_line_and_rule() -> None:
    assert rule_of(TURN_START, b"") == (2, "FMT-1")
    assert rule_of(TURN_START, b"{not json") == (2, "FMT-1")
    assert rule_of(b"\xff\xfe") == (1, "FMT-1")
    assert rule_of() == (1, "FMT-1")
    assert rule_of(b"[1,2]") == (1, "LOG-1")


@pytest.mark.spec("LOG-1", "FMT-2")
def test_invalid_envelopes_are_rejected_with_their_rule() -> None:
    assert rule_of(b'{"type":"x","seq":0,"time":0,"data":{},"extra":1}') == (1, "LOG-1")
    assert rule_of(b'{"type":7,"seq":0,"time":0,"data":{}}') == (1, "LOG-1")
    assert rule_of(b'{"type":"x","seq":0,"time":0}') == (1, "LOG-1")
    assert rule_of(b'{"type":"x","seq":-1,"time":0,"data":{}}') == (1, "LOG-2")
    assert rule_of(b'{"type":"x","seq":0,"time":1.5,"data":{}}') == (1, "LOG-3")
    assert rule_of(b'{"type":"user/message","seq":0,"time":0,"data":{"content":[]},"surfaceOp":{"op":"replace","start":0}}') == (1, "SURF-3")
    assert rule_of(b'{"type":"user/message","seq":0,"time":0,"data":{"content":[]},"surfaceOp":"append","sourceEventSeqs":"1"}') == (1, "SURF-7")


@pytest.mark.spec("FMT-2", "LOG-12")
def test_seed_rules_report_the_line_of_the_offending_event() -> None:
    bad_seq = b'{"type":"x","seq":5,"time":0,"data":{}}'
    assert rule_of(TURN_START, bad_seq) == (2, "LOG-2")
    legacy = b'{"type":"request/header-delta","seq":1,"time":0,"data":{}}'
    assert rule_of(TURN_START, legacy) == (2, "LOG-7")


@pytest.mark.spec("FMT-5")
def test_hostile_nesting_is_an_unreadable_line_not_a_crash() -> None:
    assert rule_of(b"[" * 100_000 + b"]" * 100_000) == (1, "FMT-5")


@pytest.mark.spec("FMT-6")
def test_a_persisted_header_line_is_reported_as_the_other_form() -> None:
    assert rule_of(b'{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0}') == (1, "FMT-6")


@pytest.mark.spec("FMT-2")
def test_read_log_reports_a_missing_file_without_a_line(tmp_path: Path) -> None:
    with pytest.raises(LogReadError) as caught:
        read_log(tmp_path / "absent.jsonl")
    assert caught.value.line is None and caught.value.rule == "FMT-1"


@pytest.mark.spec("FMT-2", "FMT-5")
@given(st.binary(max_size=200))
def test_any_bytes_either_read_or_fail_with_a_log_read_error(blob: bytes) -> None:
    try:
        read_log_lines(blob.split(b"\n"), "fuzz.jsonl")
    except LogReadError as error:
        assert error.rule and str(error).startswith("fuzz.jsonl")


@pytest.mark.spec("FMT-3")
@given(st.integers(min_value=0, max_value=len(example_log().events) - 1))
def test_parse_then_write_is_the_identity_on_model_written_lines(index: int) -> None:
    event = example_log().events[index]
    parsed = parse_json_line(event_to_line(event))
    assert not isinstance(parsed, Rejection)
    assert parse_event(parsed) == event
