"""§9 CHK-2 — the checker's fast lane is sound: what it vouches for, the spec's path accepts unchanged.

The fast lane (``formats/plain_json``, ``formats/plain_events``, ``conformance/screens``, the
capture reader) never decides a verdict of its own: it either returns what the
spec's path returns, or declines and hands the line, event or request to the spec. Each test
draws inputs — valid, and broken in the ways the spec rejects — and checks that direction, and
that the lane does not decline the common case (else it would be sound and useless).
"""

from __future__ import annotations

import json
from functools import cache
from typing import cast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.conformance.fold import LogChecker
from prefix_model.conformance.state import StepResult
from prefix_model.formats.plain import depth, from_event, plain_text, to_event
from prefix_model.conformance.screens import append_provenance_ok, envelope_ok
from prefix_model.core.contracts import Rejection
from prefix_model.core.derive import derive_event_message
from prefix_model.core.events import APPEND, Event, check_event
from prefix_model.core.headers import check_header_event
from prefix_model.core.json_values import MAX_DEPTH, FrozenMap, freeze, json_text, thaw
from prefix_model.core.requests import request_to_json
from prefix_model.core.surface import check_provenance
from prefix_model.edge.checker import check_log
from prefix_model.edge.formats.capture import iter_capture, read_line
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.edge.formats.persisted_writer import write_persisted
from prefix_model.edge.formats.session_jsonl import LogStream
from prefix_model.formats.event_lines import event_to_line, parse_event, parse_json_line
from prefix_model.formats.plain_envelope import envelope_event, envelope_events
from prefix_model.formats.plain_events import plain_event
from prefix_model.formats.plain_json import NotPlain, Seen, plain_loads, plain_members
from prefix_model.formats.session_lines import ROW_TYPES, expand_chunk_row, pack_chunk_runs, plain_row_events
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.transitions import run
from prefix_model.loop.variants import VARIANTS, WITNESS, run_witness

from tests.edge.test_session_jsonl import HEADER, streamed_turn
from tests.strategies import logs, plain_json_values, rejected_events

# Number spellings the spec's reader normalises or rejects, and ordinary ones.
NUMBER_TEXTS = ("0", "-0", "-0.0", "1.0", "2.50", "1e3", "1E-7", "0.1", "-12", "123456789012345", "1234567890123456",
                "9007199254740993", "1" * 400, "1" * 400 + ".5", "-1.5", "3.14159")  # fmt: skip


@st.composite
def json_lines(draw: st.DrawFn) -> str:
    """Draw a line of JSON text: a plain value, spaced or compact, with odd numbers spliced in."""
    value = draw(plain_json_values())
    compact = draw(st.booleans())
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), separators=(",", ":") if compact else (", ", ": "))
    number = draw(st.sampled_from(NUMBER_TEXTS))
    return draw(st.sampled_from([text, f"[{number},{text}]", f'{{"n":{number},"v":{text}}}', f'{{"a":1,"a":{text}}}', f"[{text}]" * 2]))


def spec_value(text: str) -> object:
    """Return the spec reader's value of a line (thawed), or its Rejection."""
    value = parse_json_line(text)
    return value if isinstance(value, Rejection) else thaw(value)


@pytest.mark.spec("CHK-2", "JSON-1", "JSON-2", "JSON-3", "JSON-7")
@given(json_lines())
def test_a_line_the_fast_lane_reads_is_the_value_the_spec_reads(text: str) -> None:
    try:
        value, bound = plain_loads(text.encode("utf-8", "surrogatepass"))
    except NotPlain:
        return  # declined: the spec's path reads it
    spec = spec_value(text)
    assert not isinstance(spec, Rejection), (text, spec)
    assert json_text(parse_json_line(plain_text(value))) == json_text(parse_json_line(text))  # type: ignore[arg-type]
    assert spec == value and depth(value) <= bound <= MAX_DEPTH


@pytest.mark.spec("CHK-2", "JSON-7")
def test_the_fast_lane_declines_lines_nested_past_the_limit_and_reads_the_rest() -> None:
    deep, shallow = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 200 + "1" + "]" * 200
    with pytest.raises(NotPlain):
        plain_loads(deep.encode())
    assert plain_loads(shallow.encode())[1] == 200
    for text in ("-0", "[-0.0]", '{"a":-0}', "[1e5]", "[NaN]", '{"a":1} x', " [1]", "[1" + "0" * 20 + "]", "[" + "9" * 400 + ".0]", "[1234567890123456]"):
        with pytest.raises(NotPlain):
            plain_loads(text.encode())
    value, bound = plain_loads(b'{"a":[1,2.5,"x",true,null,-0.5,-10,123456789012345]}')
    assert value == {"a": [1, 2.5, "x", True, None, -0.5, -10, 123456789012345]} and 2 <= bound <= MAX_DEPTH
    assert plain_loads(b'{"date":"2026-01-02"}')[0] == {"date": "2026-01-02"}  # a -0 inside a word is no number
    # Digit runs and -0 outside integers: flagged by the byte screen, read with each integer checked.
    for text, read in (('{"card":"4111111111111111","n":-7}', {"card": "4111111111111111", "n": -7}), ('["x-0",-0.5,0]', ["x-0", -0.5, 0]),
                       ("[0.12345678901234567,-123456789012345]", [0.12345678901234567, -123456789012345])):  # fmt: skip
        assert plain_loads(text.encode())[0] == read == spec_value(text)
    for text in ('["4111111111111111",1234567890123456]', '["-0",-0]', '["-0",-0.0]'):
        with pytest.raises(NotPlain):
            plain_loads(text.encode())


@pytest.mark.spec("CHK-2")
@given(st.dictionaries(st.text(max_size=5), plain_json_values(max_leaves=6), max_size=5), st.booleans())
def test_members_read_a_compact_object_with_each_members_own_text(value: dict[str, object], nest: bool) -> None:
    line_value: dict[str, object] = {"request": value, "z": 1} if nest else value
    text = json.dumps(line_value, ensure_ascii=False, separators=(",", ":"))
    try:
        read_text, read, spans, inner = plain_members(text.encode("utf-8", "surrogatepass"), "request")
    except NotPlain:
        with pytest.raises(NotPlain):
            plain_loads(text.encode("utf-8", "surrogatepass"), check_depth=False)  # only what the lane does not vouch for declines
        return
    assert read == json.loads(text) and read_text == text
    own = inner if nest else spans
    assert {k: text[a:b] for k, (a, b) in own.items()} == {k: json.dumps(v, ensure_ascii=False, separators=(",", ":")) for k, v in value.items()}
    with pytest.raises(NotPlain):
        plain_members((json.dumps(line_value, separators=(", ", ": ")) if line_value else "{ }").encode(), "request")


@pytest.mark.spec("CHK-2")
@given(st.lists(st.dictionaries(st.sampled_from(["system", "tools", "n", "request"]), plain_json_values(max_leaves=4), max_size=4), min_size=2, max_size=4),
       st.booleans())  # fmt: skip
def test_members_remembered_from_earlier_lines_read_as_each_line_alone(values: list[dict[str, object]], nest: bool) -> None:
    seen: Seen = {}
    for value in values:  # lines that repeat members of earlier ones, or change them (to a longer or a shorter text)
        text = json.dumps({"request": value, "z": 1} if nest else value, ensure_ascii=False, separators=(",", ":"))
        raw = text.encode("utf-8", "surrogatepass")
        try:
            alone = plain_members(raw, "request")
        except NotPlain:
            with pytest.raises(NotPlain):
                plain_members(raw, "request", seen=seen)
            continue
        assert plain_members(raw, "request", seen=seen) == alone  # (the next test shows a member taken from memory)


@pytest.mark.spec("CHK-2")
def test_a_remembered_member_is_taken_only_where_its_whole_text_is_the_lines() -> None:
    seen: Seen = {}
    plain_members(b'{"tools":[1,2],"system":"ab"}', seen=seen)
    assert plain_members(b'{"tools":[1,2],"system":"ab"}', seen=seen)[1]["tools"] is seen["tools"][1]  # taken, not decoded
    for line, tools in ((b'{"tools":[1,2,3],"system":"ab"}', [1, 2, 3]), (b'{"tools":[1],"system":"abc"}', [1])):
        assert plain_members(line, seen=seen)[1]["tools"] == tools
    plain_members(b'{"turn":12,"step":true}', seen=seen)
    assert plain_members(b'{"turn":123,"step":true}', seen=seen)[1] == {"turn": 123, "step": True}  # "12" begins "123": no number remembered


def lossless(values: list[object]) -> list[object]:
    """Keep the values the engine can hold: the spec reads their text back as them (as the log's messages are)."""
    return [v for v in values if not isinstance(spec := spec_value(plain_text(v)), Rejection) and plain_text(spec) == plain_text(v)]


@pytest.mark.spec("CHK-2")
@given(st.lists(plain_json_values(max_leaves=4), max_size=5).map(lossless), st.integers(0, 5),
       st.sampled_from(["prefix", "changed", "longer", "spaced"]), st.booleans())  # fmt: skip
def test_a_guessed_history_reads_as_the_spec_reads_the_line(items: list[object], cut: int, guess: str, nest: bool) -> None:
    known = items[:cut] if guess != "longer" else [*items, "extra"]
    if guess == "changed" and known:  # another value with a text as long: only the comparison can tell
        known = [*known[:-1], "x" * max(len(plain_text(known[-1])) - 2, 0)]
    head = plain_text(known)[:-1].replace(",", ", ") if guess == "spaced" else plain_text(known)[:-1]
    line: dict[str, object] = {"messages": items, "z": 1}
    text = json.dumps({"request": line} if nest else line, ensure_ascii=False, separators=(",", ":"))
    raw = text.encode("utf-8", "surrogatepass")
    try:
        _, read, spans, inner = plain_members(raw, "request", lambda: (head, known))
    except NotPlain:
        return  # declined: the spec's path reads it
    assert read == spec_value(text) and plain_text(read) == text
    messages = (inner if nest else spans)["messages"]
    assert text[messages[0] : messages[1]] == plain_text(items)


@pytest.mark.spec("CHK-2")
def test_the_checkers_guess_is_the_text_of_its_messages_and_is_taken() -> None:
    taken = 0
    for semantics in (HARNESS, *(v.semantics for v in VARIANTS)):
        for session in run_witness(semantics).sessions:
            checker = LogChecker(session.id)
            for event in session.log.events:
                checker.feed(event.seq + 1, from_event(event))
                known = checker.known_messages()
                if known is not None:
                    head, items = known
                    assert head + "]" == plain_text(items)
                    taken += 1
    assert taken > 100


@cache
def model_events() -> tuple[Event, ...]:
    return tuple(e for s in run(WITNESS).sessions for e in s.log.events)


@pytest.mark.spec("JSON-7")
def test_a_spec_events_plain_form_nests_as_deep_as_its_line() -> None:
    for event in model_events():
        assert from_event(event).depth == depth(json.loads(event_to_line(event))), event  # the envelope is one level


@pytest.mark.spec("CHK-2", "LOG-1", "LOG-2", "LOG-3", "SURF-3", "SURF-7")
@given(st.sampled_from(model_events()), st.sampled_from(["", "drop-data", "seq-str", "time-neg", "op-null", "op-bad", "sources-str", "extra"]))
def test_an_envelope_the_fast_lane_reads_is_the_event_the_spec_reads(event: Event, damage: str) -> None:
    value = json.loads(event_to_line(event))
    if damage == "drop-data":
        del value["data"]
    elif damage == "seq-str":
        value["seq"] = str(value["seq"])
    elif damage == "time-neg":
        value["time"] = -1
    elif damage == "op-null":
        value["surfaceOp"] = None
    elif damage == "op-bad":
        value["surfaceOp"] = {"op": "replace", "start": 0}
    elif damage == "sources-str":
        value["sourceEventSeqs"] = "0"
    elif damage == "extra":
        value["extra"] = 1
    fast = plain_event(value, 1)
    spec = parse_event(parse_json_line(json.dumps(value)))  # type: ignore[arg-type]
    if fast is None:
        assert damage or spec == event  # the lane reads every undamaged model event
        return
    assert not isinstance(spec, Rejection) and to_event(fast) == spec, (damage, spec)


@pytest.mark.spec("CHK-2", "JSON-1", "JSON-2", "JSON-3", "JSON-7", "LOG-1", "LOG-2")
@given(json_lines(), st.sampled_from(['"surfaceOp":"append"', '"surfaceOp":{"op":"replace","start":0,"end":1}', '"sourceEventSeqs":[0]', '"x":1', '"seq":1']))
def test_an_envelope_msgspec_decodes_is_the_event_the_spec_reads(data: str, member: str) -> None:
    line = f'{{"type":"assistant_message","seq":0,"time":0,{member},"data":{data}}}'.encode("utf-8", "surrogatepass")
    fast = envelope_event(line)
    if fast is None:
        return  # declined: plain_loads and then the spec's reader decide
    value = parse_json_line(line.decode("utf-8"))
    assert not isinstance(value, Rejection)
    assert to_event(fast) == parse_event(value), line


@pytest.mark.spec("CHK-2", "JSON-1", "JSON-2", "JSON-3", "JSON-7")
def test_the_msgspec_lane_declines_numbers_it_cannot_keep_and_reads_the_models_lines() -> None:
    for number in ("-0", "-0.0", "1e3", "1E-7", "1234567890123456", "9007199254740993", "1" * 400, "1" * 400 + ".5", "NaN"):
        assert envelope_event(f'{{"type":"t","seq":0,"time":0,"data":[{number}]}}'.encode()) is None, number
    assert envelope_event(b'{"type":"\xf5","seq":0,"time":0,"data":1}') is None  # not UTF-8 (msgspec raises the codec's error)
    assert envelope_event(b'{"type":"t","seq":9007199254740992,"time":0,"data":1}') is None  # seq past the safe integers
    assert envelope_event(b'{"type":"t","seq":0,"time":0,"data":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}") is None
    assert envelope_event(b'{"type":"t", "seq":0,"time":0,"data":{"a":-0.5,"b":"-0"}} ') is None  # trailing space: not the compact form
    read = envelope_event(b'{"type":"t","seq":0,"time":0,"data":{"a":-0.5,"b":[1.0,123456789012345]}}')
    assert read is not None and read.data == {"a": -0.5, "b": [1, 123456789012345]}
    for event in model_events():
        fast = envelope_event(event_to_line(event).encode())
        assert fast is not None and to_event(fast) == event, event  # the lane reads every model event


def _run_line(seq: int, data: str, member: str = '"surfaceOp":"append"') -> bytes:
    return f'{{"type":"t","seq":{seq},"time":0,{member},"data":{data}}}'.encode("utf-8", "surrogatepass")


@pytest.mark.spec("CHK-2", "JSON-1", "JSON-2", "JSON-3", "JSON-7", "LOG-1")
@given(st.lists(st.tuples(json_lines(), st.sampled_from(['"surfaceOp":"append"', '"sourceEventSeqs":[0]', '"x":1'])), min_size=1, max_size=4))
def test_a_run_msgspec_decodes_at_once_is_its_lines_read_one_by_one(items: list[tuple[str, str]]) -> None:
    lines = [_run_line(seq, data, member) for seq, (data, member) in enumerate(items)]
    run = envelope_events(lines)  # its contract compares it with envelope_event line by line, itself tied to the spec's reader
    one_by_one = [envelope_event(line) for line in lines]
    assert run is None or run == one_by_one
    assert run is not None or None in one_by_one or len(lines) == 0  # declined only where a line is declined


@pytest.mark.spec("CHK-2", "JSON-3")
def test_a_run_is_declined_where_a_value_could_straddle_lines_or_a_line_needs_a_look() -> None:
    model = [event_to_line(event).encode() for event in model_events()]
    read = envelope_events(model)
    assert read is not None and read == [envelope_event(line) for line in model]  # the lane reads every model event line
    assert envelope_events([_run_line(0, "1"), _run_line(1, "[{}]")]) is not None  # the lines below, undamaged, are taken
    straddling = [_run_line(0, "[{}")[:-1], b"{}]}"]  # each begins with { and ends with }: one value over two lines, no comma
    assert envelope_events(straddling) is None
    assert envelope_events([_run_line(0, "1") + _run_line(1, "1"), _run_line(2, "1")]) is None  # two values on one line
    assert envelope_events([_run_line(0, "1"), _run_line(1, "[1234567890123456]")]) is None  # a number to look at
    assert envelope_events([_run_line(0, "1"), _run_line(1, "1") + b" "]) is None  # not the compact form
    import icontract

    from proofs.bugs_detected import broken_twin

    shifted = broken_twin(envelope_events, lambda lines: [envelope_event(line) for line in lines[1:]] + [envelope_event(lines[0])])
    with pytest.raises(icontract.ViolationError, match="each event line the msgspec lane takes is one the spec.s reader reads to the same event"):
        shifted([_run_line(0, "1"), _run_line(1, "2")])


@pytest.mark.spec("CHK-2", "LOG-5", "LOG-6", "LOG-11", "LOG-13", "LOG-14", "LOG-15", "SURF-7", "DER-2", "DER-3", "DER-4", "DER-5")
@given(st.data())
def test_the_screens_never_pass_what_the_spec_rejects_and_both_forms_derive_one_message(data: st.DataObject) -> None:
    log = data.draw(logs())
    event, rule = data.draw(rejected_events(log)) if data.draw(st.booleans()) else (data.draw(st.sampled_from(log.events or model_events())), "")
    plain = from_event(event)
    if envelope_ok(plain):
        assert check_event(event, event.seq) is None and check_header_event(event) is None, rule
    if event.surface_op == APPEND and append_provenance_ok(plain):
        assert check_provenance(event, ()) is None, rule
    message = derive_event_message(event)  # one statement, two forms: the plain message is the frozen one thawed
    assert derive_event_message(plain) == (None if message is None else thaw(message))


@pytest.mark.spec("CHK-2")
def test_the_fast_rules_pass_the_common_case() -> None:
    plain = [from_event(e) for e in model_events()]
    ordinary = [e for e in plain if e.type != "request/header"]
    assert ordinary and all(envelope_ok(e) for e in ordinary)
    assert all(append_provenance_ok(e) for e in plain if e.surface_op == APPEND)
    headers = [e for e in plain if e.type == "request/header"]
    assert headers and not any(envelope_ok(e) for e in headers)  # a header is always check_header_event's to judge


@pytest.mark.spec("CHK-2", "JSON-3")
def test_the_screens_own_contracts_each_fail_a_broken_screen() -> None:
    import icontract

    from proofs.bugs_detected import broken_twin

    bad_header = from_event(Event("request/header", 3, 0, freeze({"config": {"provider": "p"}})))  # check_event passes it, HDR-1 not
    assert check_event(to_event(bad_header), 3) is None and check_header_event(to_event(bad_header)) is not None
    waving = broken_twin(envelope_ok, lambda event: True)
    with pytest.raises(icontract.ViolationError, match="CHK-2: a plainly fine envelope is one check_event and check_header_event accept"):
        waving(bad_header)
    ordinary = next(e for e in (from_event(e) for e in model_events()) if e.type != "request/header")
    with pytest.raises(icontract.ViolationError, match="JSON-3: a screened event's data is lossless JSON"):
        envelope_ok(ordinary._replace(depth=MAX_DEPTH + 1))  # nested past JSON-7's limit: no reader hands it over
    # SURF-7 on an append's sourceEventSeqs: empty only on an assistant message, no seq twice, each earlier.
    plain = [from_event(e) for e in model_events()]
    user = next(e for e in plain if e.type == "user/message" and e.seq > 1)
    assistant = next(e for e in plain if e.type == "assistant/message")
    assert append_provenance_ok(assistant._replace(source_event_seqs=()))
    assert not append_provenance_ok(user._replace(source_event_seqs=()))
    assert not append_provenance_ok(user._replace(source_event_seqs=(0, 0)))
    assert append_provenance_ok(user._replace(source_event_seqs=(0, 1)))


@pytest.mark.spec("CHK-2", "FMT-7", "FMT-8", "FMT-9")
@pytest.mark.parametrize("form", ["memory", "persisted", "zstd"])
def test_the_plain_stream_is_the_spec_stream(form: str, tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    for session in run(WITNESS).sessions:
        events = streamed_turn(session.log).events  # with delta runs the persisted form packs into rows
        if form == "memory":
            path.write_text("".join(event_to_line(e) + "\n" for e in events), encoding="utf-8")
        else:
            write_persisted(path, HEADER, events, compress=form == "zstd")
            assert form == "zstd" or '"seq0"' in path.read_text(encoding="utf-8")
        stream = LogStream(path)
        spec = [(line, from_event(e)) for line, e in stream]
        plain = list(stream.plain_events())
        assert [(line, e._replace(depth=0, spec=None)) for line, e in plain] == [(line, e._replace(depth=0, spec=None)) for line, e in spec]
        assert all(e.depth >= 1 for _, e in plain)


@cache
def capture_lines() -> tuple[object, ...]:
    world = run(WITNESS)
    lines: list[object] = []
    for n, sent in enumerate(world.requests):
        request = thaw(request_to_json(sent.request))
        assert isinstance(request, dict)
        capture = {"instance": f"instance-{sent.instance_id}", "agentLoopRequest": True, "sessionId": None}
        lines += [request | {"turn": 1, "step": 1}, {"index": n, "capture": capture, "request": request}]
    return tuple(lines)


@pytest.mark.spec("CHK-2", "CAP-1")
@pytest.mark.parametrize("compact", [True, False])
def test_the_capture_read_plain_is_the_spec_reading(compact: bool, tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    separators = (",", ":") if compact else (", ", ": ")
    text = "".join(json.dumps(line, separators=separators, ensure_ascii=False) + "\n" for line in capture_lines())
    path.write_text(text, encoding="utf-8")
    spec = [read_line(line.encode("utf-8")) for line in text.splitlines()]
    plain = list(iter_capture(path))
    assert all(isinstance(s, FrozenMap) for s in spec) and [thaw(s) for s in spec if isinstance(s, FrozenMap)] == list(capture_lines())
    assert [r.fields for r in plain] == [_request_fields(cast(dict[str, object], thaw(s))) for s in spec if isinstance(s, FrozenMap)]
    assert {r.instance for r in plain} == {None} | {f"instance-{n}" for n in range(4)}  # the bare lines name none
    assert all(bool(r.spans) == compact for r in plain)
    for r in plain:
        for name in r.fields if compact else ():
            start, end = r.spans[name]
            assert r.text[start:end] == plain_text(r.fields[name])


@cache
def packed_rows() -> tuple[dict[str, object], ...]:
    events = streamed_turn(run(WITNESS).sessions[0].log).events
    rows = [thaw(r) for r in pack_chunk_runs(events) if isinstance(r, FrozenMap) and r.get("type") in ROW_TYPES]
    assert rows
    return tuple(r for r in rows if isinstance(r, dict))


ROW_DAMAGES = [("seq0", -1), ("time0", -5), ("time0", 2**60), ("type", "other-chunks"), ("extra", 1), ("data.dt", [1.5]),
               ("data.dt", []), ("data.texts", []), ("data.texts", [1, 2]), ("data.turn", True), ("data.index", "0"), ("data.extra", 0)]  # fmt: skip


@pytest.mark.spec("CHK-2", "FMT-8", "LOG-3")
@given(st.sampled_from(packed_rows()), st.sampled_from([None, *ROW_DAMAGES]))
def test_a_row_the_fast_lane_expands_is_the_rows_spec_expansion(row: dict[str, object], damage: tuple[str, object] | None) -> None:
    value: dict[str, object] = json.loads(json.dumps(row))
    if damage is not None:
        key, new = damage
        target = value["data"] if key.startswith("data.") else value
        assert isinstance(target, dict)
        target[key.removeprefix("data.")] = new
    seq0 = value["seq0"] if isinstance(value["seq0"], int) else 0
    fast = plain_row_events(value, seq0)
    spec = expand_chunk_row(freeze(value))  # type: ignore[arg-type]
    if fast is None:
        assert damage is not None  # every packed row the writer writes is read the fast way
        return
    assert not isinstance(spec, Rejection) and all(0 <= e.time for e in spec), damage
    assert [e._replace(depth=0) for e in fast] == [from_event(e)._replace(depth=0, spec=None) for e in spec]


@st.composite
def damaged_captures(draw: st.DrawFn) -> bytes:
    separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    data = "".join(json.dumps(line, separators=separators, ensure_ascii=False) + "\n" for line in capture_lines()[:4]).encode()
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data) - 1))
        how = draw(st.sampled_from(["flip", "delete", "insert"]))
        if how == "flip":
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
        elif how == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 20)) :]
        else:
            data = data[:at] + draw(st.sampled_from([b"-0", b"1e5", b"[", b'"', b" ", b"true", b'"x":1,', b'{"role":"tool"},', b"1234567890123456"])) + data[at:]
    return data


@pytest.mark.spec("CHK-2", "CAP-1")
@given(damaged_captures())
def test_a_damaged_capture_reads_alike_in_both_lanes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("capture") / "capture.jsonl"
    path.write_bytes(data)
    spec: list[object] | str = []
    for line, raw in enumerate(data.split(b"\n")[: -1 if data.endswith(b"\n") else None], start=1):
        value = read_line(raw)
        if isinstance(value, Rejection):
            spec = str(LogReadError.of(str(path), line, value))
            break
        assert isinstance(spec, list)
        spec.append(thaw(value))
    try:
        taken: list[object] = []
        for r in iter_capture(path):  # what the reader leaves (JSON-7), the checker decides as it takes each
            r.read_whole()
            taken.append(thaw(r.exact()))
        plain: list[object] | str = taken
    except LogReadError as error:
        plain = str(error)
    if isinstance(spec, list):  # the request fields, as the spec's line names them
        spec = [_request_fields(cast(dict[str, object], s)) for s in spec]
    assert plain == spec


def _request_fields(line: dict[str, object]) -> object:
    return line["request"] if "request" in line else {k: v for k, v in line.items() if k not in ("turn", "step", "agentLoopRequest")}


@pytest.mark.spec("CHK-2", "CAP-1")
@pytest.mark.parametrize("spacing", [(",", ":"), (", ", ": ")], ids=["compact", "spaced"])
def test_a_message_the_schema_rejects_is_the_spec_readers_error_in_the_check(spacing: tuple[str, str], tmp_path: Path) -> None:
    world = run(WITNESS)
    session = world.sessions[0]
    log, capture = tmp_path / "log.jsonl", tmp_path / "capture.jsonl"
    log.write_text("".join(event_to_line(e) + "\n" for e in session.log.events), encoding="utf-8")
    lines = [thaw(request_to_json(r.request)) for r in world.requests if r.loop_request and r.session_id == session.id]
    broken = json.loads(json.dumps(lines[1]))
    broken["messages"][-1]["role"] = "tool"
    lines[1] = broken
    capture.write_text("".join(json.dumps(line, separators=spacing) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(LogReadError) as checked:
        check_log(log, capture)
    spec = read_line(capture.read_bytes().splitlines()[1])
    assert isinstance(spec, Rejection) and str(checked.value) == str(LogReadError.of(str(capture), 2, spec)) and spec.rule == "CAP-1"


# --- the plain form's and the fold's own contracts, each shown able to fail by a broken twin ---


@pytest.mark.spec("LOG-1", "JSON-4", "JSON-7")
def test_the_plain_form_states_it_keeps_the_event() -> None:
    import icontract

    from proofs.bugs_detected import broken_twin

    event = run_witness(HARNESS).sessions[0].log.events[1]
    plain = from_event(event)
    assert to_event(plain) is event and depth({"a": [1]}) == 2 and depth("x") == 0
    renumbered = broken_twin(from_event, lambda event: from_event(event)._replace(seq=event.seq + 1))
    with pytest.raises(icontract.ViolationError, match="LOG-1: the plain form keeps the event's envelope"):
        renumbered(event)
    emptied = broken_twin(from_event, lambda event: from_event(event)._replace(data={}))
    with pytest.raises(icontract.ViolationError, match="JSON-4: its data freezes back to the event's"):
        emptied(event)
    retyped = broken_twin(to_event, lambda event: Event("other", event.seq, event.time, freeze(event.data)))
    with pytest.raises(icontract.ViolationError, match="LOG-1: the spec event keeps the plain one's envelope"):
        retyped(plain)
    stale = broken_twin(to_event, lambda event: Event(event.type, event.seq, event.time, None, event.surface_op, event.source_event_seqs))
    with pytest.raises(icontract.ViolationError, match="JSON-4: its data is the plain data frozen"):
        stale(plain)
    flat = broken_twin(depth, lambda value: 0)
    with pytest.raises(icontract.ViolationError, match="JSON-7: only an array or object nests"):
        flat([])


@pytest.mark.spec("CHK-2", "CHK-4", "MATCH-1", "CHK-1", "REC-1", "JSON-3", "CAP-1")
def test_the_folds_contracts_tie_it_to_the_spec_functions() -> None:
    import icontract
    from prefix_model.conformance.captured import Captured, captured_request
    from prefix_model.conformance.fold import check_events

    from proofs.bugs_detected import broken_twin

    world = run_witness(HARNESS)
    events = world.sessions[0].log.events
    bad_seq = from_event(events[0])._replace(seq=-1)  # LOG-2: not a safe non-negative integer
    assert any(f.line == 1 for f in check_events([(1, bad_seq)]).findings)
    deaf = broken_twin(LogChecker.feed, lambda self, line, event: None)
    with pytest.raises(icontract.ViolationError, match="CHK-2: the rule check_event or check_header_event finds in an event is a finding at its line"):
        deaf(LogChecker(), 1, bad_seq)
    mute = broken_twin(LogChecker.unreadable, lambda self, line, rejection: None)
    checker = LogChecker()
    checker.unreadable(4, Rejection("LOG-1", "no event"))
    with pytest.raises(icontract.ViolationError, match="CHK-4: a line that is no event is a finding of its rule at that line"):
        mute(checker, 9, Rejection("LOG-1", "no event"))

    sent = [captured_request(n, request_to_json(r.request), r.turn, r.step) for n, r in enumerate(world.requests) if r.session_id == "s1" and r.loop_request]
    quitter = broken_twin(LogChecker.finish, lambda self, stopped=False: None)
    late = captured_request(len(sent), request_to_json(world.requests[0].request), 99, 1)  # names a step the log never reaches
    checker = LogChecker("s1", [*sent, late])
    for line, event in enumerate(events, 1):
        checker.feed(line, from_event(event))
    with pytest.raises(icontract.ViolationError, match="MATCH-1/CHK-1: every captured request is checked, unmatched or counted after a stop"):
        quitter(checker)
    checker.finish()
    assert (checker.requests_checked, checker.requests_unmatched) == (len(sent), 1)
    step = checker.in_order[0] if checker.in_order else None
    assert step is None  # every witness request names its step
    assert checker.known_messages() is not None
    wrong_guess = broken_twin(LogChecker.known_messages, lambda self: ("[", [{"role": "user"}]))
    with pytest.raises(icontract.ViolationError, match="CHK-2: the guessed history's text is its messages' compact text"):
        wrong_guess(checker)
    no_request = broken_twin(LogChecker.request_for, lambda self, step: None)
    any_step = _a_step(checker)
    with pytest.raises(icontract.ViolationError, match="REC-1: a request is implied only where a header is in force"):
        no_request(checker, any_step)

    captured = sent[0]
    loose = broken_twin(Captured.same, lambda self, name, want: True)
    with pytest.raises(icontract.ViolationError, match="CHK-2: a field's own text in the line passes only when it is the field's compact text"):
        loose(captured, "model", '"another-model"')
    lossy = broken_twin(Captured.exact, lambda self: FrozenMap({}))
    with pytest.raises(icontract.ViolationError, match="JSON-3: the request frozen is its fields"):
        lossy(captured)
    shuffled = broken_twin(captured_request, lambda index, request, turn=None, step=None, instance=None: Captured(index, index + 1, {}, turn, step))
    with pytest.raises(icontract.ViolationError, match="CAP-1: a model-built request is captured whole"):
        shuffled(0, request_to_json(world.requests[0].request))
    with pytest.raises(icontract.ViolationError, match="FORK-1: a seed is a count of events"):
        check_events([], seed_length=-1)
    unread = broken_twin(check_events, lambda events, captured=(), session_id=None, seed_length=0: LogChecker(session_id, captured))
    with pytest.raises(icontract.ViolationError, match="MATCH-1/CHK-1: every captured request is checked or unmatched"):
        unread([], sent)


def _a_step(checker: LogChecker) -> StepResult:
    return StepResult(1, 1, 0, 0, 0)
