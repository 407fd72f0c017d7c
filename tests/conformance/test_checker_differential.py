"""§9 — the conformance fold agrees with the core's reconstruction, request by request.

The fold keeps its own running state (the live surface, each node's derived message, the folded
header); the core states the same thing as functions of the whole log at the moment of sending
(``fold_request_header``, ``derive_messages`` of the ``boundary_log``, ``build_request``). Both
judge the same runs — the witness under the harness's semantics and under every faulty variant —
and for every loop request the fold finds a REC-1 (or REC-2) violation exactly when the core's
functions say the request is not the one the log implies.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import icontract
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prefix_model.conformance import reconstruction
from prefix_model.conformance.captured import Captured, captured_request
from prefix_model.conformance.fold import LogChecker, check_events
from prefix_model.formats.plain import Known, PlainEvent, from_event
from prefix_model.core.derive import derive_messages
from prefix_model.core.events import ASSISTANT_CHUNK, STEP_START
from prefix_model.core.headers import fold_request_header
from prefix_model.core.json_values import json_text, thaw
from prefix_model.core.requests import Request, boundary_log, build_request, reconstruct_request, request_to_json
from prefix_model.edge.checker import check_log
from prefix_model.formats import plain_json
from prefix_model.formats.event_lines import event_to_line
from prefix_model.formats.plain_json import Scanner
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.variants import VARIANTS, run_witness
from prefix_model.loop.world import SentRequest, World

from prefix_model.edge.formats.events_jsonl import read_log

from tests.edge.test_cli import _USER, _again, _event, _lines, _step
from tests.edge.test_session_jsonl import streamed_turn

CASES = [("harness", HARNESS)] + [(v.name, v.semantics) for v in VARIANTS]


def engine_verdicts(world: World, rule: str) -> set[int]:
    """Return the world-wide indexes of loop requests the engine finds violating ``rule``."""
    loop = [r for r in world.requests if r.loop_request]
    flagged: set[int] = set()
    for session in world.sessions:
        mine = [(n, r) for n, r in enumerate(loop) if r.session_id == session.id]
        captured = tuple(captured_request(k, request_to_json(r.request), r.turn, r.step) for k, (_, r) in enumerate(mine))
        checker = check_events(((e.seq + 1, e) for e in session.log.events), captured, session.id)
        flagged |= {mine[f.request][0] for f in checker.findings if rule in f.rules and f.request is not None}
    return flagged


def _core_expected(world: World, sent: SentRequest) -> Request | None:
    """Return the request the core's functions build from the log as it was when ``sent`` went out."""
    log = world.session(sent.session_id).log
    events = log.events[: sent.log_length]
    header = fold_request_header(events)
    if header is None:
        return None
    boundary = max(e.seq for e in events if e.type == STEP_START)
    return build_request(header, derive_messages(boundary_log(log, boundary)), sent.session_id)


def _companion(request: Request) -> list[str]:
    """REC-1's fields: the messages and the invariant companion (model, system, temperature, maxTokens, stop, tools)."""
    config = request.header.config
    return [json_text(request.messages), config.model, json_text(request.header.system), json_text(config.temperature),
            json_text(config.max_tokens), json_text(config.stop), json_text(request.header.tools or ())]  # fmt: skip


def spec_verdicts(world: World, rule: str) -> set[int]:
    """Return the world-wide indexes of loop requests the core's reconstruction says break ``rule``."""
    flagged = set()
    for index, sent in enumerate(r for r in world.requests if r.loop_request):
        expected = _core_expected(world, sent)
        if expected is None:
            flagged.add(index)
        elif rule == "REC-1" and _companion(expected) != _companion(sent.request):
            flagged.add(index)
        elif rule == "REC-2" and json_text(request_to_json(expected)) != json_text(request_to_json(sent.request)):
            flagged.add(index)
    return flagged


@pytest.mark.spec("REC-1", "REC-2", "VAR-1")
@pytest.mark.parametrize(("name", "semantics"), CASES, ids=[c[0] for c in CASES])
def test_engine_and_spec_flag_the_same_requests(name: str, semantics: Semantics) -> None:
    world = run_witness(semantics)
    for rule in ("REC-1", "REC-2"):
        assert engine_verdicts(world, rule) == spec_verdicts(world, rule), rule


def _perturbed(request: dict[str, object], how: str) -> dict[str, object]:
    """Return ``request`` changed in a way Python ``==`` or a text slice could overlook."""
    copy: dict[str, object] = json.loads(json.dumps(request))
    messages = copy["messages"]
    assert isinstance(messages, list)
    if how == "message keys reordered" and messages:
        messages[-1] = dict(reversed(list(messages[-1].items())))
    elif how == "request keys reordered":
        copy = dict(reversed(list(copy.items())))
    elif how == "true for 1" and "maxTokens" in copy:
        copy["maxTokens"] = True
    elif how == "a message dropped" and messages:
        messages.pop()
    elif how == "a purpose added":
        copy["purpose"] = "compaction"
    elif how == "sessionId dropped":
        copy.pop("sessionId", None)
    elif how == "tool keys reordered" and copy.get("tools"):
        tools = copy["tools"]
        assert isinstance(tools, list)
        tools[0] = dict(reversed(list(tools[0].items())))
    return copy


PERTURBATIONS = ["none", "message keys reordered", "request keys reordered", "true for 1", "a message dropped",
                 "a purpose added", "sessionId dropped", "tool keys reordered"]  # fmt: skip


def write_witness(folder: Path, spacing: str, how: list[str]) -> tuple[Path, Path, int]:
    """Write the witness run's first session and its loop requests (the n-th perturbed by ``how[n % len]``)."""
    world = run_witness(HARNESS)
    session = world.sessions[0]
    mine = [r for r in world.requests if r.loop_request and r.session_id == session.id]
    log, capture = folder / "log.jsonl", folder / "capture.jsonl"
    log.write_text("".join(event_to_line(e) + "\n" for e in session.log.events), encoding="utf-8")
    separators = (",", ":") if spacing == "compact" else (", ", ": ")
    lines = []
    for n, r in enumerate(mine):
        request = thaw(request_to_json(r.request))
        assert isinstance(request, dict)
        changed = _perturbed(request, how[n % len(how)]) | {"turn": r.turn, "step": r.step, "agentLoopRequest": True}
        lines.append(json.dumps(changed, separators=separators, ensure_ascii=False) + "\n")
    capture.write_text("".join(lines), encoding="utf-8")
    return log, capture, len(mine)


@pytest.mark.spec("CHK-2", "REC-1", "REC-2", "REC-3")
@pytest.mark.parametrize("spacing", ["compact", "spaced"])
@given(how=st.lists(st.sampled_from(PERTURBATIONS), min_size=1, max_size=6))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_fast_comparison_finds_exactly_what_the_field_by_field_comparison_finds(
    how: list[str], spacing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, capture, sent = write_witness(tmp_path, spacing, how)
    # The session named: a request naming none is the log's and its missing sessionId is compared
    # (one naming another session would be skipped, and with no session named, refused: CHK-1).
    fast = check_log(log, capture, "s1")
    monkeypatch.setattr(reconstruction, "_is_expected", lambda state, result, request: False)
    exact = check_log(log, capture, "s1")
    assert fast.findings == exact.findings and fast.requests_checked == exact.requests_checked == sent


@pytest.mark.spec("CHK-2")
@pytest.mark.parametrize("spacing", ["compact", "spaced"])
def test_an_exact_capture_never_takes_the_field_by_field_comparison(spacing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, capture, sent = write_witness(tmp_path, spacing, ["none"])

    def refuse(*args: object) -> bool:
        raise AssertionError("an exact request took the field-by-field comparison")

    monkeypatch.setattr(reconstruction, "_compare_exactly", refuse)
    report = check_log(log, capture)
    assert report.conforms and report.requests_checked == sent > 3


@pytest.mark.spec("CHK-2")
def test_the_capture_reader_decodes_only_what_the_guess_does_not_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, capture, sent = write_witness(tmp_path, "compact", ["none"])
    decoded: list[int] = []  # per request whose history the guess held in part: the messages decoded past it

    def counted(text: str, start: int, known: Known, scan: Scanner) -> tuple[list[object], int] | None:
        found = extend(text, start, known, scan)
        if found is not None and known[1]:
            decoded.append(len(found[0]) - len(known[1]))
        return found

    extend = plain_json._extend
    monkeypatch.setattr(plain_json, "_extend", counted)
    report = check_log(log, capture)
    messages = sum(len(json.loads(line)["messages"]) for line in capture.read_text(encoding="utf-8").splitlines())
    assert report.conforms and len(decoded) >= sent // 2 and sum(decoded) < messages // 2


@cache
def streamed_events() -> tuple[PlainEvent, ...]:
    """The witness run's first session with a streamed turn added: chunks of every kind."""
    return tuple(from_event(e) for e in streamed_turn(run_witness(HARNESS).sessions[0].log).events)


CHUNK_DAMAGES = ["none", "seq+1", "time-1", "time-str", "op", "sources", "turn+1", "step+1", "step-str", "data-list", "no-step-open"]


def _damaged_chunk(event: PlainEvent, how: str) -> PlainEvent:
    """Return a chunk changed in a way one of the rules ``feed`` applies to every event would notice."""
    data: dict[str, object] = dict(event.data) if isinstance(event.data, dict) else {}
    damages: dict[str, dict[str, object]] = {
        "seq+1": {"seq": event.seq + 1}, "time-1": {"time": -1}, "time-str": {"time": "0"}, "op": {"surface_op": "append"},
        "sources": {"source_event_seqs": (0,)}, "turn+1": {"data": data | {"turn": 99}}, "step+1": {"data": data | {"step": 99}},
        "step-str": {"data": data | {"step": "1"}}, "data-list": {"data": [data]},
    }  # fmt: skip
    return event._replace(**damages.get(how, {}))  # type: ignore[arg-type]


@pytest.mark.spec("CHK-2", "ENC-3", "LOG-2", "LOG-3", "LOG-13")
@given(st.sampled_from(CHUNK_DAMAGES), st.integers(0, 10**6))
@settings(max_examples=40, deadline=None)
def test_a_chunk_folded_on_the_fast_path_is_judged_as_the_general_path_judges_it(how: str, pick: int) -> None:
    events = list(streamed_events())
    chunks = [k for k, e in enumerate(events) if e.type == ASSISTANT_CHUNK]
    k = chunks[pick % len(chunks)]
    if how == "no-step-open":  # the chunk moved before its step/start
        start = max(j for j in range(k) if events[j].type == "step/start")
        events.insert(start, events.pop(k))
        k = start
    events[k] = _damaged_chunk(events[k], how)
    fast = check_events((e.seq + 1, e) for e in events)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LogChecker, "_plain_chunk", lambda self, event, expected: False)
        general = check_events((e.seq + 1, e) for e in events)
    assert fast.findings == general.findings and fast.steps == general.steps
    assert bool(fast.findings) == (how != "none")


@pytest.mark.spec("CHK-2", "REC-1")
def test_a_text_screen_that_passes_a_differing_request_breaks_its_contract(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request screen is held to the field-by-field comparison at every call: a screen that passes too much is caught there."""
    world = run_witness(HARNESS)
    sent = [r for r in world.requests if r.loop_request and r.session_id == "s1"]
    captured = []
    for index, r in enumerate(sent):
        fields = thaw(request_to_json(r.request))
        assert isinstance(fields, dict)
        if index == 1:
            fields["system"] = "not the folded header's"
        captured.append(Captured(index, index + 1, fields, r.turn, r.step))
    events = [(e.seq + 1, e) for e in world.session("s1").log.events]
    assert [f.rule for f in check_events(events, captured, "s1").findings] == ["REC-1"]
    monkeypatch.setattr(Captured, "same", lambda self, name, want: True)  # a screen that reads every field as equal
    with pytest.raises(icontract.ViolationError, match="CHK-2: a request the text screen passes"):
        check_events(events, captured, "s1")


def _header(model: str, reason: str) -> dict[str, object]:
    return _event("request/header", {"header": {"config": {"provider": "mock", "model": model}}, "reason": reason})


def _chunk(turn: int, step: int) -> dict[str, object]:
    return _event("assistant/chunk", {"turn": turn, "step": step, "delta": {"type": "text", "text": "ok"}})


# Turn 1 sends under model m; in turn 2 a replacement lands inside step 1's header window, then a change header
# (model m2) before its first chunk; step 2 follows on the replaced surface under the same header.
_REPLACED_IN_WINDOW = (
    _event("turn/start", {"turn": 1}), _header("m", "initial"), _USER, *_step(1, 1), _event("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    _event("turn/start", {"turn": 2}), _USER, _event("step/start", {"turn": 2, "step": 1}), _again(2), _header("m2", "change"),
    _chunk(2, 1), _event("step/end", {"turn": 2, "step": 1}), *_step(2, 2), _event("turn/end", {"turn": 2, "reason": {"kind": "completed"}}),
)  # fmt: skip


def _checked(tmp_path: Path, events: tuple[dict[str, object], ...], requests: list[dict[str, object]] | None) -> list[tuple[str, str | None, int | None]]:
    """Return (rule, path, turn) of each finding of ``check`` on the log of ``events`` and the capture of ``requests``."""
    log, capture = tmp_path / "log.jsonl", tmp_path / "capture.jsonl"
    log.write_text(_lines(*events), encoding="utf-8")
    if requests is not None:
        capture.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    report = check_log(log, None if requests is None else capture, "s")
    return [(f.rule, f.path, f.turn) for f in report.findings]


def _spec_requests(tmp_path: Path, events: tuple[dict[str, object], ...], steps: tuple[tuple[int, int], ...]) -> list[dict[str, object]]:
    path = tmp_path / "spec.jsonl"
    path.write_text(_lines(*events), encoding="utf-8")
    log = read_log(path)
    built = []
    for turn, step in steps:
        request = reconstruct_request(log, turn, step, "s")
        assert isinstance(request, Request)
        fields = thaw(request_to_json(request))
        assert isinstance(fields, dict)
        built.append(fields | {"turn": turn, "step": step})
    return built


@pytest.mark.spec("REQ-3", "REQ-4", "REC-1", "REC-3", "CHK-2")
def test_a_replacement_inside_a_steps_header_window_leaves_its_boundary_and_takes_the_later_header(tmp_path: Path) -> None:
    """The fold keeps the boundary the replacement is about to change and resolves the step's header at its first chunk."""
    steps = ((1, 1), (2, 1), (2, 2))
    spec = _spec_requests(tmp_path, _REPLACED_IN_WINDOW, steps)
    assert [r["model"] for r in spec] == ["m", "m2", "m2"]
    assert "again" not in json.dumps(spec[1]["messages"]) and "again" in json.dumps(spec[2]["messages"])
    assert _checked(tmp_path, _REPLACED_IN_WINDOW, spec) == []  # the spec's own requests: nothing (no REC-3 across the replacement)
    stale = [spec[0], spec[1] | {"model": "m"}, spec[2]]  # step 2/1 sent under the header before the change
    assert _checked(tmp_path, _REPLACED_IN_WINDOW, stale) == [("REC-1", "/model", 2)]
    replaced = [spec[0], spec[1] | {"messages": spec[2]["messages"]}, spec[2]]  # step 2/1 sent the replaced history
    assert [(rule, path) for rule, path, _ in _checked(tmp_path, _REPLACED_IN_WINDOW, replaced)] == [("REC-1", "/messages/0")]  # seq 2, the first message, replaced


@pytest.mark.spec("ENC-1", "ENC-2", "ENC-3", "JSON-5")
def test_a_turn_or_step_of_true_is_no_turn_or_step_1(tmp_path: Path) -> None:
    """JSON-5: true names no turn 1, though Python's == says it does; each enclosure check compares as JSON does."""
    def rules(events: tuple[dict[str, object], ...]) -> list[str]:
        return [rule for rule, _, _ in _checked(tmp_path, events, None)]

    good = (_event("turn/start", {"turn": 1}), _USER, *_step(1, 1), _event("turn/end", {"turn": 1, "reason": {"kind": "completed"}}))
    assert rules(good) == []
    assert rules((_event("turn/start", {"turn": True}), *good[1:])) == ["ENC-1"]  # the turn is taken as 1 from there on
    assert rules((*good[:2], _event("step/start", {"turn": 1, "step": True}), *good[3:])) == ["ENC-2", "ENC-2"]
    assert rules((*good[:3], _event("assistant/chunk", {"turn": True, "step": 1, "delta": {"type": "text", "text": "x"}}), *good[3:])) == ["ENC-3"]
    assert rules((*good[:3], _event("step/end", {"turn": 1, "step": True}), good[4])) == ["ENC-2"]
