"""§20 — ``prefix-model check`` on logs and captures written by the model, in every file form.

Fixtures come from running the model (the witness session under the harness's semantics and
under every faulty variant), written in the harness's real formats; none is written by hand.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from prefix_model.conformance.findings import MISSING
from prefix_model.conformance.captured import captured_request
from prefix_model.conformance.fold import check_events
from prefix_model.core.json_values import json_text
from prefix_model.core.requests import request_to_json
from prefix_model.edge.checker import Unusable, check_log
from prefix_model.edge.formats.persisted_writer import write_persisted
from prefix_model.examples import EXAMPLE_DIR, EXAMPLE_FILE, example_capture_lines
from prefix_model.formats.event_lines import event_to_line
from prefix_model.formats.session_lines import SessionHeaderLine
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.variants import VARIANTS, run_witness
from prefix_model.loop.world import World

from tests.conftest import HANG, REPORT_SCHEMA
from tests.reference import REAL_LOG_DIR

# What the checker can see from a log and its requests alone, per variant; the rest need the
# loop's own state (a composition, a listener's order, the meter) and are the machines' job.
SEEN_BY_CHECKER: dict[str, set[str]] = {
    "compose-per-request": {"PFX-3"}, "compose-per-turn": {"PFX-3"}, "prefix-not-logged": {"REC-1", "REC-2"},
    "prefix-after-history": {"REC-1", "REC-2", "REC-3"}, "no-resume-anchor": {"PFX-3"}, "empty-prefix-logged": {"PFX-6"},
    "boundary-after-step-start": {"REC-1", "REC-2"}, "compaction-drops-prefix": {"PFX-3"},
    "compaction-logs-header": {"CMP-1", "PFX-3"}, "no-change-on-system": {"REC-1", "REC-2"}, "cache-by-reference": {"PFX-3"},
    "effort-from-options": {"REC-2"}, "history-window": {"REC-1", "REC-2", "REC-3"}, "change-always": {"HDR-15"},
}  # fmt: skip
UNSEEN = {"prefix-as-history", "cache-interrupted", "prefix-in-system", "compose-after-pre-step", "listeners-reversed",
          "meter-misses-prefix", "meter-double-prefix", "fork-drops-headers", "prefix-in-reminder", "prefix-second-home",
          "stale-on-new-instance"}  # fmt: skip


def write_session(world: World, session_id: str, folder: Path, form: str, with_turns: bool = True) -> tuple[Path, Path]:
    """Write one session's log in ``form`` and its loop requests as a capture; return both paths."""
    log = world.session(session_id).log
    if form == "memory":
        path = folder / f"{session_id}.events.jsonl"
        path.write_text("".join(event_to_line(e) + "\n" for e in log.events), encoding="utf-8")
    else:
        path = folder / (f"{session_id}.session.jsonl" + (".zstd" if form == "zstd" else ""))
        lineage = world.session(session_id).lineage
        header = SessionHeaderLine(0, session_id, 0)
        if lineage is not None:
            header = SessionHeaderLine(0, session_id, 0, parent_session=lineage.parent_session, seed_length=lineage.seed_length)
        write_persisted(path, header, log.events, compress=form == "zstd")
    capture = folder / f"{session_id}.requests.jsonl"
    lines = []
    for sent in world.requests:
        if sent.session_id == session_id:
            record = json.loads(json_text(request_to_json(sent.request)))
            if with_turns:
                record |= {"turn": sent.turn, "step": sent.step}
            if not sent.loop_request:
                record["agentLoopRequest"] = False
            lines.append(json.dumps(record) + "\n")
    capture.write_text("".join(lines), encoding="utf-8")
    return path, capture


def found(world: World, folder: Path, form: str, with_turns: bool = True) -> set[str]:
    rules: set[str] = set()
    for session in world.sessions:
        log, capture = write_session(world, session.id, folder, form, with_turns)
        report = check_log(log, capture, session.id if form == "memory" else None)
        rules |= {rule for f in report.findings for rule in f.rules}  # each defect with what it implies
    return rules


@pytest.mark.spec("CLI-6", "FMT-8", "FMT-9", "CHK-1")
@pytest.mark.parametrize("form", ["memory", "persisted", "zstd"])
def test_check_passes_the_model_run_in_every_form(form: str, tmp_path: Path) -> None:
    world = run_witness(HARNESS)
    assert found(world, tmp_path, form) == set()
    report = check_log(*write_session(world, "s1", tmp_path, form), session_id="s1" if form == "memory" else None)
    assert report.conforms and report.requests_checked == 6 and report.requests_auxiliary == 1 and report.events == len(world.session("s1").log.events)


@pytest.mark.spec("MATCH-2", "REC-1")
def test_check_matches_requests_without_turn_and_step_in_order(tmp_path: Path) -> None:
    # A fork child's seed steps sent its parent's requests: in-order matching starts after the seed.
    world = run_witness(HARNESS)
    assert found(world, tmp_path, "persisted", with_turns=False) == set()
    # The report says how each was matched: the step the model says sent it.
    for session in world.sessions:
        report = check_log(*write_session(world, session.id, tmp_path, "persisted", with_turns=False))
        sent = [r for r in world.requests if r.session_id == session.id]  # a fork child's seed steps sent none of these
        expected = [(k, k + 1, r.turn, r.step) for k, r in enumerate(sent) if r.loop_request]
        assert [tuple(m) for m in report.in_order] == expected and report.requests_by_step == 0
        assert report.as_json()["checked"]["requests"]["inOrder"][:1] == [m._asdict() for m in report.in_order[:1]]  # type: ignore[index]
        named = check_log(*write_session(world, session.id, tmp_path, "persisted"))
        assert named.in_order == [] and named.requests_by_step == named.requests_checked


@pytest.mark.spec("REC-1", "REC-2", "REC-3", "PFX-3", "PFX-6", "HDR-15", "CMP-1", "VAR-1")
@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_check_rejects_each_variant_it_can_see_with_its_ids(variant: object, tmp_path: Path) -> None:
    assert hasattr(variant, "semantics") and hasattr(variant, "name")
    semantics: Semantics = variant.semantics
    rules = found(run_witness(semantics), tmp_path, "zstd")
    assert rules == SEEN_BY_CHECKER.get(variant.name, set())
    assert (variant.name in UNSEEN) == (not rules)


@pytest.mark.spec("CLI-6", "REC-1", "CHK-3")
def test_check_cli_on_the_real_log_and_a_tampered_capture(tmp_path: Path) -> None:
    if not REAL_LOG_DIR.exists():
        pytest.skip(f"the shared reference log is absent: {REAL_LOG_DIR}")
    events, requests = REAL_LOG_DIR / "events.jsonl", REAL_LOG_DIR / "requests.jsonl"
    ok = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", str(events), "--requests", str(requests)],
                        capture_output=True, text=True, timeout=HANG)  # fmt: skip
    assert ok.returncode == 0 and ok.stdout.splitlines()[-1] == "result: conforms"
    lines = requests.read_text(encoding="utf-8").splitlines()
    second = json.loads(lines[1])
    second["request"]["messages"] = second["request"]["messages"][1:]  # the prefix left out
    tampered = tmp_path / "requests.jsonl"
    tampered.write_text("\n".join([lines[0], json.dumps(second), lines[2]]) + "\n", encoding="utf-8")
    bad = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", str(events), "--requests", str(tampered), "--json"],
                         capture_output=True, text=True, timeout=HANG)  # fmt: skip
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    assert len(report["findings"]) == 1  # one defect: REC-1, implying REC-2 and REC-3 (CHK-3)
    first = report["findings"][0]
    assert (first["rule"], first["request"], first["path"], first["file"]) == ("REC-1", 1, "/messages/0", str(tampered))
    assert (first["implies"], first["logFile"], first["turn"], first["step"]) == (["REC-2", "REC-3"], str(events), 1, 2)
    assert first["expectedFrom"] == first["headerSeq"] and first["logLine"] == first["seq"] + 1
    # The first differing message, whole and as JSON: the prefix message expected, the prompt found.
    assert first["expected"] == json.loads(lines[1])["request"]["messages"][0] and first["actual"] == second["request"]["messages"][0]
    assert "tool catalog v1" in json.dumps(first["expected"]) and first["line"] == 2
    assert report["checked"]["requests"]["checked"] == 3 and report["result"] == "violates"
    REPORT_SCHEMA.validate(report)


@pytest.mark.spec("CHK-1", "CLI-6")
def test_check_that_checks_nothing_is_unusable(tmp_path: Path) -> None:
    world = run_witness(HARNESS)
    log, capture = write_session(world, "s1", tmp_path, "persisted")
    with pytest.raises(Unusable, match=r"contradicts .* \(CHK-1\)"):
        check_log(log, capture, "another-session")
    other = tmp_path / "aux.jsonl"
    other.write_text(json.dumps({"provider": "p", "model": "m", "messages": [], "agentLoopRequest": False}) + "\n")
    with pytest.raises(Unusable, match=r"none of its 1 requests could be checked .* \(CHK-1\)$"):
        check_log(log, other)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(Exception, match="FMT-1|CHK-1"):
        check_log(empty)


@pytest.mark.spec("CLI-6")
def test_the_report_schema_holds_every_report_and_refuses_a_broken_one(tmp_path: Path) -> None:
    """Every report an in-process check produces is validated (tests/conftest.py); here the schema is shown able to fail."""
    world = run_witness(next(v for v in VARIANTS if v.name == "prefix-not-logged").semantics)
    log, capture = write_session(world, "s1", tmp_path, "persisted")
    report = json.loads(json.dumps(check_log(log, capture).as_json()))
    REPORT_SCHEMA.validate(report)
    finding = report["findings"][0]
    for broken in ({**finding, "path": "messages[0]"}, {**finding, "line": 0}, {k: v for k, v in finding.items() if k != "file"},
                   {**finding, "status": "found"}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            REPORT_SCHEMA.validate(report | {"findings": [broken]})
    for key in ("summary", "reportVersion", "capture"):
        with pytest.raises(jsonschema.ValidationError):
            REPORT_SCHEMA.validate({k: v for k, v in report.items() if k != key})


@pytest.mark.spec("CHK-1", "REC-1", "CLI-6")
def test_a_capture_of_several_sessions_is_never_guessed_at(tmp_path: Path) -> None:
    world = run_witness(HARNESS)
    child = next(s.id for s in world.sessions if s.lineage is not None)
    captures = [write_session(world, s.id, tmp_path, "memory")[1] for s in world.sessions]
    log, own = write_session(world, child, tmp_path, "memory")
    everyone = tmp_path / "everyone.requests.jsonl"
    everyone.write_text("".join(c.read_text(encoding="utf-8") for c in captures), encoding="utf-8")
    # The in-memory log names no session and the capture holds several: stop, naming them and --session.
    with pytest.raises(Unusable, match="--session") as refused:
        check_log(log, everyone)
    assert all(s.id in str(refused.value) for s in world.sessions if any(r.session_id == s.id and r.loop_request for r in world.requests))
    named = check_log(log, everyone, child)
    assert named.conforms and named.requests_other_session > 0 and named.session_source == "--session"
    # A capture of one session names the log's: taken, and said so.
    inferred = check_log(log, own)
    assert inferred.conforms and (inferred.session_id, inferred.session_source) == (child, "capture") and "inferred" in inferred.as_text()
    # A persisted log names its own session: a --session against it, or a capture of others only, is exit 2 that says so.
    persisted, _ = write_session(world, child, tmp_path, "persisted")
    with pytest.raises(Unusable, match="contradicts"):
        check_log(persisted, everyone, "s1")
    with pytest.raises(Unusable, match=r"of session\(s\) s1"):
        check_log(persisted, tmp_path / "s1.requests.jsonl")
    assert check_log(persisted, everyone).conforms


@pytest.mark.spec("CLI-6", "CHK-1")
def test_check_shows_the_first_findings_then_how_many_more_and_a_count_per_rule(tmp_path: Path) -> None:
    world = run_witness(next(v for v in VARIANTS if v.name == "prefix-not-logged").semantics)
    log, capture = write_session(world, "s1", tmp_path, "persisted")
    report = check_log(log, capture)
    total, by_rule = len(report.findings), report.by_rule()
    assert total >= 3 and sum(by_rule.values()) == total and list(by_rule.values()) == sorted(by_rule.values(), reverse=True)
    text = report.as_text(2).splitlines()
    assert sum(1 for line in text if line.startswith("  REC-") or line.startswith("  PFX-")) == 2
    assert f"  ... and {total - 2} more finding(s) (all of them: --max-findings 0)" in text
    assert "  by rule: " + ", ".join(f"{r} {n}" for r, n in by_rule.items()) in text and text[-1] == f"result: violates: {total} finding(s)"
    capped = report.as_json(2)
    assert len(capped["findings"]) == 2 and capped["summary"] == {"findings": total, "shown": 2, "byRule": by_rule}  # type: ignore[arg-type]
    whole = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", str(log), "--requests", str(capture), "--json", "--max-findings", "0"],
                           capture_output=True, text=True, timeout=HANG)  # fmt: skip
    assert whole.returncode == 1 and len(json.loads(whole.stdout)["findings"]) == total


@pytest.mark.spec("CLI-6", "FMT-2", "CAP-1")
def test_check_cli_reports_unusable_input_in_one_line(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", *args], capture_output=True, text=True, timeout=HANG)

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"provider": "p"\n')
    world = run_witness(HARNESS)
    log, _ = write_session(world, "s3", tmp_path, "memory")
    for result in (run(str(tmp_path / "absent")), run(str(empty)), run(str(log), "--requests", str(broken))):
        assert result.returncode == 2, result.stdout
        assert result.stdout == "" and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.spec("ENC-1", "ENC-2", "ENC-3", "MATCH-1")
def test_engine_reports_enclosure_and_matching_findings() -> None:
    world = run_witness(HARNESS)
    events = world.session("s3").log.events
    # Drop the turn/start: every later event is outside a turn, and turn numbering is off.
    shifted = tuple((n + 1, e) for n, e in enumerate(events[1:]))
    checker = check_events(shifted)
    assert {"ENC-1", "ENC-3"} <= {f.rule for f in checker.findings}
    step_start = next(n for n, e in enumerate(events) if e.type == "step/start")
    without_step = tuple((n + 1, e) for n, e in enumerate(events) if n != step_start)
    assert "ENC-2" in {f.rule for f in check_events(without_step).findings}
    ghost = captured_request(0, request_to_json(world.requests[-1].request), 9, 9)
    assert [f.rule for f in check_events(((e.seq + 1, e) for e in events), (ghost,)).findings] == ["MATCH-1"]


@pytest.mark.spec("REC-1", "MATCH-2")
def test_a_request_where_no_header_is_in_force_cannot_be_reconstructed() -> None:
    """The log holds no request/header before the step: its request is a REC-1 finding, named or not."""
    world = run_witness(HARNESS)
    sent = next(r for r in world.requests if r.loop_request and r.session_id == "s1")
    events = world.session("s1").log.events
    kept = [e for e in events if e.type != "request/header"]
    headerless = tuple((n + 1, replace(e, seq=n)) for n, e in enumerate(kept))  # renumbered: no LOG-2 gap
    named = captured_request(0, request_to_json(sent.request), sent.turn, sent.step)
    unnamed = captured_request(0, request_to_json(sent.request))
    for request in (named, unnamed):
        found = [f for f in check_events(headerless, (request,), "s1").findings if f.rule.startswith(("REC", "MATCH"))]
        assert [(f.rule, f.request) for f in found] == [("REC-1", 0)], found
    # With the headers in place the same request conforms: the finding is the missing header's.
    assert not [f for f in check_events(((e.seq + 1, e) for e in events), (named,), "s1").findings if f.rule.startswith("REC")]





@pytest.mark.spec("CHK-1", "ENC-1")
def test_a_log_that_ends_inside_a_turn_is_read_as_written_and_the_report_says_so(tmp_path: Path) -> None:
    world = run_witness(HARNESS)
    session = world.sessions[0]
    events = session.log.events
    cut = next(k for k, e in enumerate(events) if e.type == "assistant/chunk") + 1  # a crash while streaming
    log = tmp_path / "crashed.events.jsonl"
    log.write_text("".join(event_to_line(e) + "\n" for e in events[:cut]), encoding="utf-8")
    report = check_log(log)
    chunk = events[cut - 1]
    assert report.conforms and report.open_turn == f"turn {chunk.field('turn')}, step {chunk.field('step')} open"
    assert "crash the harness repairs" in report.as_text()
    assert report.as_json()["checked"]["openTurn"] == {"turn": chunk.field("turn"), "step": chunk.field("step")}  # type: ignore[index]
    whole = tmp_path / "whole.events.jsonl"
    whole.write_text("".join(event_to_line(e) + "\n" for e in events), encoding="utf-8")
    assert check_log(whole).open_turn is None


def _damaged(tmp_path: Path, form: str, damage: Callable[[list[str], int], object]) -> tuple[Path, Path, int]:
    """Write s1 of the witness in ``form`` with ``damage(lines, i)`` applied at a chunk's line ``i`` (0-based); return log, capture, i."""
    log, capture = write_session(run_witness(HARNESS), "s1", tmp_path, form)
    lines = log.read_text(encoding="utf-8").splitlines()
    chunk = next(i for i, line in enumerate(lines) if '"type":"assistant/chunk"' in line and i > len(lines) // 2)
    damage(lines, chunk)
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return log, capture, chunk


@pytest.mark.spec("CHK-3", "REC-1", "CLI-6")
def test_an_absent_field_is_shown_as_missing_in_every_finding(tmp_path: Path) -> None:
    # One spelling of an absent side in the text: "(missing)", as for a message, never the "null" a field compares as.
    lines = example_capture_lines()
    first = json.loads(lines[0])
    first.pop("system")
    first["temperature"] = 0.5
    capture = tmp_path / "capture.jsonl"
    capture.write_text("".join(line + "\n" for line in [json.dumps(first), *lines[1:]]), encoding="utf-8")
    report = check_log(EXAMPLE_DIR / EXAMPLE_FILE, capture)
    shown = {f.path: (f.expected, f.actual) for f in report.findings}
    assert shown == {"/system": ("You are a careful assistant.", MISSING), "/temperature": (MISSING, 0.5)}
    text = report.as_text()
    assert "actual   (missing)" in text and "expected (missing)" in text and " null" not in text
    located = {f["path"]: f for f in json.loads(json.dumps(report.as_json()))["findings"]}
    assert located["/system"]["actual"] is None and located["/temperature"]["expected"] is None  # the report's schema: null


@pytest.mark.spec("CHK-4", "LOG-2", "FMT-1", "CLI-6")
@pytest.mark.parametrize("form", ["memory", "persisted"])
def test_check_reports_a_damaged_line_and_reads_on(form: str, tmp_path: Path) -> None:
    total = len(run_witness(HARNESS).session("s1").log.events)
    # A missing event: one LOG-2 finding, not one per event after it; every request still checked.
    log, capture, at = _damaged(tmp_path, form, lambda lines, i: lines.pop(i))
    if form == "memory":
        report = check_log(log, capture)
        assert [(f.rule, f.line) for f in report.findings] == [("LOG-2", at + 1)]
        assert report.events == total - 1 and report.stopped is None and report.requests_unmatched == 0
    else:  # the persisted form's torn-tail rule: a hole before a turn/end is a damaged committed region
        report = check_log(log, capture)
        assert [f.rule for f in report.findings] == ["FMT-7"] and report.stopped is not None and report.stopped[0] == at + 1
    # A line that is no JSON: its finding, and the events after it read with no LOG-2 for the seq it held.
    log, capture, at = _damaged(tmp_path, form, lambda lines, i: lines.__setitem__(i, lines[i][:-3]))
    report = check_log(log, capture)
    if form == "memory":
        assert [(f.rule, f.line) for f in report.findings] == [("FMT-1", at + 1)] and report.events == total - 1
    else:
        assert [f.rule for f in report.findings] == ["FMT-7"] and report.stopped is not None
    # An event that breaks an envelope rule at the right seq: its finding, and on.
    log, capture, at = _damaged(tmp_path, form, lambda lines, i: lines.__setitem__(i, re.sub(r',"data":\{.*\}\}$', "}", lines[i])))
    report = check_log(log, capture)
    assert [(f.rule, f.line) for f in report.findings] == [("LOG-1", at + 1)] and report.events == total - 1 and report.stopped is None


@pytest.mark.spec("CHK-4", "LOG-2", "CLI-6")
def test_check_stops_where_a_seq_goes_back_and_says_so(tmp_path: Path) -> None:
    log, capture, at = _damaged(tmp_path, "memory", lambda lines, i: lines.insert(i, lines[3]))
    done = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", str(log), "--requests", str(capture), "--json"],
                          capture_output=True, text=True, timeout=HANG)  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    REPORT_SCHEMA.validate(report)
    stopped = report["checked"]["stopped"]
    assert (stopped["file"], stopped["line"], stopped["rule"]) == (str(log), at + 1, "LOG-2") and stopped["requestsNotChecked"] > 0
    # The requests after the stop are counted, not judged: no MATCH-1 for steps the check did not read.
    assert [f["rule"] for f in report["findings"]] == ["LOG-2"] and report["checked"]["openTurn"] is None
    text = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", str(log), "--requests", str(capture)],
                          capture_output=True, text=True, timeout=HANG).stdout  # fmt: skip
    assert f"stopped at line {at + 1} (LOG-2:" in text and "nothing after it can be trusted" in text


@pytest.mark.spec("CHK-4", "CHK-3", "LOG-2")
def test_lines_out_of_order_are_named_so_and_the_reading_goes_on(tmp_path: Path) -> None:
    total = len(run_witness(HARNESS).session("s1").log.events)

    def swap(lines: list[str], i: int) -> None:
        lines[i], lines[i + 1] = lines[i + 1], lines[i]

    log, capture, at = _damaged(tmp_path, "memory", swap)  # line at+1 holds seq at+1, line at+2 seq at
    report = check_log(log, capture)
    assert report.stopped is None and report.events == total - 1  # the late event is not folded: its place was taken
    assert [(f.rule, f.line, f.seq, f.message) for f in report.findings] == [
        ("LOG-2", at + 1, at + 1, f"seq {at + 1} appears before seq {at}: lines out of order (the late events from line {at + 2} on are not folded)")
    ]

    def move(lines: list[str], i: int) -> None:  # two lines moved back past three: one defect, one finding
        lines[i : i + 5] = lines[i + 3 : i + 5] + lines[i : i + 3]

    log, capture, at = _damaged(tmp_path, "memory", move)
    report = check_log(log, capture)
    assert report.stopped is None and [f.message for f in report.findings if f.rule == "LOG-2"] == [
        f"seq {at + 3} appears before seq {at}: lines out of order (the late events from line {at + 3} on are not folded)"
    ]

    def reverse(lines: list[str], i: int) -> None:  # three lines reversed: the middle one fills no gap in order, a seq going back
        lines[i : i + 3] = lines[i : i + 3][::-1]

    log, capture, at = _damaged(tmp_path, "memory", reverse)
    report = check_log(log, capture)
    assert report.stopped is not None and report.stopped[0] == at + 2


@pytest.mark.spec("CHK-4", "CHK-3", "FMT-1")
def test_lines_in_a_row_that_are_no_event_are_one_finding_and_a_long_run_ends_the_reading(tmp_path: Path) -> None:
    log, capture = write_session(run_witness(HARNESS), "s1", tmp_path, "memory")
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[5:5] = ["x"] * 3  # three garbage lines between two events: one finding over lines 6-8
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    report = check_log(log, capture)
    assert [(f.rule, f.line, f.last_line) for f in report.findings] == [("FMT-1", 6, 8)] and report.stopped is None
    assert report.findings[0].message.startswith("3 lines in a row are no event; the first: not JSON")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text(lines[0] + "\n" + "x\n" * 5000, encoding="utf-8")
    report = check_log(garbage)
    assert [(f.rule, f.line, f.last_line) for f in report.findings] == [("FMT-1", 2, 1001), ("CHK-4", 1001, None)]
    assert report.stopped is not None and report.stopped[0] == 1001 and report.stopped[1].rule == "CHK-4"
    REPORT_SCHEMA.validate(json.loads(json.dumps(report.as_json())))


@pytest.mark.spec("CHK-4")
def test_garbage_lines_between_events_do_not_add_up_to_a_run(tmp_path: Path) -> None:
    """1500 damaged lines, each between two readable events: 1500 findings, no stop (a run is lines in a row)."""
    events = [json.dumps({"seq": n, "time": 1, "type": "tool/result", "data": {}}, separators=(",", ":")) for n in range(1501)]
    log = tmp_path / "spread.jsonl"
    log.write_text("".join(f"{line}\nx\n" for line in events), encoding="utf-8")
    report = check_log(log)
    assert report.stopped is None and sum(f.rule == "FMT-1" for f in report.findings) == 1501


@pytest.mark.spec("INST-2", "INST-1", "CLI-6", "CAP-1")
def test_check_with_a_capture_naming_instances_finds_a_per_turn_recomposition_written_as_a_resume(tmp_path: Path) -> None:
    """resume/changed-prefix: two instances, the second anchoring another prefix. The same log with a capture saying one
    instance sent both requests is that instance recomposing at its second turn and writing the drift as ``resume``."""
    from prefix_model.vectors.cases import log_lines, wrapped_capture_lines, world_of

    world = world_of("resume/changed-prefix")
    log = tmp_path / "s1.events.jsonl"
    log.write_text("".join(line + "\n" for line in log_lines(world, "s1")), encoding="utf-8")
    named = [json.loads(line) for line in wrapped_capture_lines(world, "s1", instances=True)]
    assert [line["capture"]["instance"] for line in named] == ["instance-0", "instance-1"]

    def check(lines: list[dict[str, object]]) -> tuple[int, dict[str, object]]:
        capture = tmp_path / "requests.jsonl"
        capture.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", str(log), "--requests", str(capture), "--session", "s1", "--json"],
                              capture_output=True, text=True, timeout=HANG)  # fmt: skip
        report = json.loads(done.stdout)
        REPORT_SCHEMA.validate(report)
        return done.returncode, report

    assert check(named)[0] == 0
    one = [line | {"capture": line["capture"] | {"instance": "main"}} for line in named]
    code, report = check(one)
    findings = report["findings"]
    assert isinstance(findings, list) and code == 1 and len(findings) == 1
    assert (findings[0]["rule"], findings[0]["implies"], findings[0]["request"], findings[0]["headerSeq"], findings[0]["expectedFrom"]) == ("INST-2", ["INST-1"], 1, 12, 3)
    # Without the instance, the log and its capture cannot tell a recomposition from a resume.
    assert check([line | {"capture": {k: v for k, v in line["capture"].items() if k != "instance"}} for line in one])[0] == 0
