"""spec/formats.md §5 — the requests capture (``--requests FILE``): both line shapes, and CAP-1 errors."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prefix_model.conformance.findings import MISSING
from prefix_model.core.json_values import freeze, json_text, thaw
from prefix_model.core.requests import request_to_json
from prefix_model.edge.formats import frames
from prefix_model.edge.formats.capture import CAPTURE_SCHEMA_PATH, capture_schema, iter_capture
from prefix_model.edge.checker import check_log
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.formats.event_lines import event_to_line
from prefix_model.loop.transitions import run
from prefix_model.loop.variants import WITNESS

from tests.reference import REAL_LOG_DIR

REAL_CAPTURE = REAL_LOG_DIR / "requests.jsonl"
REQUEST = {"provider": "mock", "model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "sessionId": "s1"}


def write(path: Path, *lines: object) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8")
    return path


def capture_error(path: Path) -> LogReadError:
    with pytest.raises(LogReadError) as caught:
        list(iter_capture(path))
    error = caught.value
    assert error.rule == "CAP-1" and "\n" not in str(error) and str(error).startswith(str(path))
    return error


@pytest.mark.spec("CAP-1")
def test_the_schema_is_a_draft_2020_12_schema() -> None:
    schema = json.loads(CAPTURE_SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert capture_schema() == schema and schema["$schema"].endswith("/draft/2020-12/schema")


@pytest.mark.spec("CAP-1")
def test_the_real_capture_reads_in_the_wrapper_shape() -> None:
    if not REAL_CAPTURE.exists():
        pytest.skip(f"the shared reference capture is not beside this checkout ({REAL_CAPTURE})")
    read = list(iter_capture(REAL_CAPTURE))
    raw = [json.loads(line) for line in REAL_CAPTURE.read_text(encoding="utf-8").splitlines()]
    assert [(r.index, r.line, r.turn, r.step, r.loop_request, r.session_id) for r in read] == [
        (0, 1, 1, 1, True, "one-listener"),
        (1, 2, 1, 2, True, "one-listener"),
        (2, 3, 2, 1, True, "one-listener"),
    ]
    # The request is the request fields only, in the file's key order and JSON text.
    assert [json_text(r.exact()) for r in read] == [json.dumps(w["request"], separators=(",", ":"), ensure_ascii=False) for w in raw]


@pytest.mark.spec("CAP-1", "REQ-1")
def test_model_requests_written_bare_read_back(tmp_path: Path) -> None:
    world = run(WITNESS)
    lines = []
    for sent in world.requests:
        fields = dict(thaw(request_to_json(sent.request)))  # type: ignore[call-overload]
        lines.append({**fields, "turn": sent.turn, "step": sent.step, "agentLoopRequest": sent.loop_request})
    read = list(iter_capture(write(tmp_path / "requests.jsonl", *lines)))
    assert len(read) == len(world.requests) and any(not r.loop_request for r in read)
    for got, sent in zip(read, world.requests, strict=True):
        assert got.exact() == request_to_json(sent.request) and json_text(got.exact()) == json_text(request_to_json(sent.request))
        assert (got.turn, got.step, got.loop_request, got.session_id) == (sent.turn, sent.step, sent.loop_request, sent.session_id)


@pytest.mark.spec("CAP-1")
def test_bare_requests_default_to_loop_requests_unless_they_name_a_purpose(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.jsonl",
        REQUEST,
        {**REQUEST, "purpose": "compaction"},
        {**REQUEST, "agentLoopRequest": True, "purpose": "compaction"},
        {"provider": "p", "model": "m", "messages": []},
    )
    read = list(iter_capture(path))
    assert [r.loop_request for r in read] == [True, False, True, True]
    assert (read[0].index, read[0].line, read[0].turn, read[0].step, read[0].loop_request, read[0].session_id) == (0, 1, None, None, True, "s1")
    assert read[3].session_id is None and list(read[2].fields) == ["provider", "model", "messages", "sessionId", "purpose"]


@pytest.mark.spec("CAP-1")
def test_the_two_example_lines_of_formats_md_read_alike(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "spec" / "formats.md").read_text(encoding="utf-8")
    section = text[text.index("## 5. The requests capture") :]
    examples = [block.split("```", 1)[0].strip() for block in section.split("```json\n")[1:3]]
    bare, wrapped = (next(iter_capture(write(tmp_path / f"{n}.jsonl", line))) for n, line in enumerate(examples))
    named = [(r.index, r.line, r.turn, r.step, r.loop_request, r.session_id, r.instance, r.fields) for r in (bare, wrapped)]
    assert named == [(0, 1, 1, 1, True, "demo", None, bare.fields), (0, 1, 1, 1, True, "demo", "main", bare.fields)]  # only the wrapper names its instance
    assert list(bare.fields) == ["provider", "model", "messages", "sessionId"]


@pytest.mark.spec("CAP-1")
def test_wrapper_capture_fields_name_the_step_and_session(tmp_path: Path) -> None:
    aux = {"index": 7, "capture": {"agentLoopRequest": False, "sessionId": None, "lastStepStart": None}, "request": REQUEST}
    loop = {"index": 8, "capture": {"agentLoopRequest": True, "lastStepStart": {"seq": 4, "turn": 2, "step": 3}}, "request": {**REQUEST, "sessionId": "x"}}
    first, second = iter_capture(write(tmp_path / "r.jsonl", aux, loop))
    assert (first.index, first.turn, first.step, first.loop_request, first.session_id) == (0, None, None, False, "s1")
    assert (second.index, second.turn, second.step, second.loop_request, second.session_id) == (1, 2, 3, True, "x")


@pytest.mark.spec("CAP-1")
@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json", "not JSON"),
        ("", "empty line"),
        ("[1, 2]", "not a captured request"),
        ({"model": "m", "messages": []}, "at /: 'provider' is missing"),
        ({**REQUEST, "provider": ""}, "provider"),
        ({**REQUEST, "turn": 1}, "'step' is missing (turn and step name a step together)"),
        ({**REQUEST, "turn": 0, "step": 1}, "turn"),
        ({**REQUEST, "turn": True, "step": 1}, "turn"),
        ({**REQUEST, "agentLoopRequest": "yes"}, "agentLoopRequest"),
        ({**REQUEST, "messages": [{"role": "tool", "content": []}]}, "role"),
        ({**REQUEST, "stop": "END"}, "stop"),
        ({"index": 0, "request": REQUEST}, "'capture' is missing"),
        ({"index": 0, "capture": {}, "request": REQUEST}, "at /capture: 'agentLoopRequest' is missing"),
        ({"index": 0, "capture": {"agentLoopRequest": True}, "request": REQUEST, "metadata": {}}, "at /: unknown field 'metadata'"),
        ({"index": -1, "capture": {"agentLoopRequest": True}, "request": REQUEST}, "index"),
        ('{"provider":"p","model":"m","messages":[],"temperature":NaN}', "not JSON"),
        ('{"provider":"p","model":"m","messages":[],"temperature":-0}', "JSON-2"),
    ],
)
def test_a_line_that_is_no_captured_request_is_one_cap_1_error(tmp_path: Path, line: object, why: str) -> None:
    error = capture_error(write(tmp_path / "r.jsonl", REQUEST, line))
    assert error.line == 2 and why in error.reason, error.reason


@pytest.mark.spec("CAP-1", "FMT-2")
def test_unreadable_capture_files_are_one_cap_1_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bad.jsonl").write_bytes(json.dumps(REQUEST).encode() + b"\n\xff\n")
    assert capture_error(tmp_path / "bad.jsonl").line == 2
    assert capture_error(tmp_path / "missing.jsonl").line is None
    monkeypatch.setattr(frames, "MAX_LINE_BYTES", 100)  # the line splitter the capture shares with the log bounds its lines
    error = capture_error(write(tmp_path / "long.jsonl", REQUEST))
    assert error.line == 1 and "longer" in error.reason
    # A long reason (a huge wrong value) is cut to one short line.
    monkeypatch.undo()
    error = capture_error(write(tmp_path / "wide.jsonl", {**REQUEST, "system": ["x" * 10_000]}))
    assert len(error.reason) < 300


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["provider", "model", "messages", "turn", "step", "index", "capture", "request", "role", "content", "agentLoopRequest"]), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.spec("CAP-1", "FMT-2")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(json_values | st.builds(lambda v: {**REQUEST, **v}, st.dictionaries(st.sampled_from(["turn", "step", "agentLoopRequest", "stop"]), json_values)), min_size=1, max_size=4))
def test_any_json_lines_read_or_raise_one_cap_1_error(tmp_path: Path, values: list[object]) -> None:
    path = write(tmp_path / "fuzz.jsonl", *values)
    try:
        read = list(iter_capture(path))
    except LogReadError as error:
        assert error.rule == "CAP-1" and "\n" not in str(error)
        return
    assert [r.index for r in read] == list(range(len(values)))


@pytest.mark.spec("CAP-1", "REC-2")
@pytest.mark.parametrize("wrapped", [False, True], ids=["bare", "wrapper"])
def test_a_field_the_harness_does_not_send_is_the_requests_rec_2_finding_not_an_unusable_capture(tmp_path: Path, wrapped: bool) -> None:
    world = run(WITNESS)
    session = world.sessions[0]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(event_to_line(e) + "\n" for e in session.log.events), encoding="utf-8")
    sent = [r for r in world.requests if r.loop_request and r.session_id == session.id]
    lines: list[object] = []
    for n, r in enumerate(sent):
        fields = dict(thaw(request_to_json(r.request)))  # type: ignore[call-overload]
        if n == 1:
            fields["metadata"] = {"trace": "t-1"}
        start = {"seq": 0, "turn": r.turn, "step": r.step}
        lines.append({"index": n, "capture": {"agentLoopRequest": True, "lastStepStart": start}, "request": fields} if wrapped else {**fields, "turn": r.turn, "step": r.step})
    capture = write(tmp_path / "requests.jsonl", *lines)
    read = list(iter_capture(capture))
    assert read[1].fields["metadata"] == {"trace": "t-1"} and "metadata" not in read[0].fields
    report = check_log(log, capture)
    assert report.requests_checked == len(sent)
    assert [(f.rule, f.request, f.line, f.path, f.expected, f.actual) for f in report.findings] == [("REC-2", 1, 2, "/metadata", MISSING, freeze({"trace": "t-1"}))]
    assert "(1 field(s) differ: metadata)" in report.findings[0].message
    assert "expected (missing)" in report.findings[0].describe()
