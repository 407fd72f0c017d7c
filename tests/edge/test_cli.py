"""§17 — the command line, run as a user runs it: a subprocess, its stdout, stderr and status."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import termios
import threading
from dataclasses import replace
from pathlib import Path

import icontract
import pytest
from prefix_model.conformance.fold import LogChecker
from prefix_model.conformance.state import StepResult
from prefix_model.core.contracts import ENABLED, Rejection
from prefix_model.core.events import STEP_START
from prefix_model.core.json_values import freeze, json_text
from prefix_model.core.log import Log
from prefix_model.core.requests import Request, reconstruct_request, request_to_json
from prefix_model.edge import checker, cli
from prefix_model.edge.checker import fold_request
from prefix_model.edge.cli import main
from prefix_model.edge.formats.events_jsonl import LogReadError, read_log
from prefix_model.edge.formats.persisted_writer import write_persisted
from prefix_model.edge.formats.session_jsonl import LogStream
from prefix_model.vectors.codec import action_from_json
from prefix_model.examples import EXAMPLE_SESSION_ID, EXAMPLE_STEPS, example_log
from prefix_model.examples.loop_demo import DEMO_ACTIONS
from prefix_model.formats.session_lines import SessionHeaderLine
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.transitions import run as loop_run
from prefix_model.loop.variants import VARIANTS, run_witness

from tests.conftest import HANG, REPORT_SCHEMA
from tests.edge.test_checker import write_session
from tests.reference import REAL_LOG_DIR

ROOT = Path(__file__).resolve().parents[2]
REAL = REAL_LOG_DIR


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", *args], capture_output=True, text=True, timeout=HANG, env=env)


CONTRACTS_OFF = os.environ | {"PREFIX_MODEL_CONTRACTS": "0"}  # as the installed command runs


def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr


@pytest.mark.spec("CLI-1", "CLI-3")
def test_request_example_prints_the_model_reconstruction() -> None:
    for turn, step in EXAMPLE_STEPS:
        result = run("request", "--example", "--turn", str(turn), "--step", str(step))
        assert result.returncode == 0, result.stderr
        expected = reconstruct_request(example_log(), turn, step, EXAMPLE_SESSION_ID)
        assert isinstance(expected, Request)
        assert result.stdout == json_text(request_to_json(expected)) + "\n"


@pytest.mark.spec("CLI-1")
def test_request_on_the_real_log_equals_each_captured_request() -> None:
    if not REAL.exists():
        pytest.skip(f"the shared reference log is not beside this checkout ({REAL})")
    for line in (REAL / "requests.jsonl").read_text(encoding="utf-8").splitlines():
        captured = json.loads(line)
        where = captured["capture"]["lastStepStart"]
        result = run(
            "request", str(REAL / "events.jsonl"), "--turn", str(where["turn"]), "--step", str(where["step"]),
            "--session-id", captured["capture"]["sessionId"],
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == captured["request"]
        assert result.stdout.rstrip("\n") == json.dumps(captured["request"], separators=(",", ":"), ensure_ascii=False)


@pytest.mark.spec("CLI-2", "REQ-5")
@pytest.mark.spec("CLI-1", "FMT-9")
@pytest.mark.parametrize("form", ["persisted", "zstd"])
def test_request_reads_what_check_reads_and_names_the_headers_session(form: str, tmp_path: Path) -> None:
    world = run_witness(HARNESS)
    session = world.sessions[0].id
    (tmp_path / "memory").mkdir()
    (tmp_path / "stored").mkdir()
    memory, _ = write_session(world, session, tmp_path / "memory", "memory")
    stored, _ = write_session(world, session, tmp_path / "stored", form)
    for sent in [r for r in world.requests if r.session_id == session and r.loop_request][:3]:
        step = ("--turn", str(sent.turn), "--step", str(sent.step))
        expected = json_text(request_to_json(sent.request))
        from_memory = run("request", str(memory), *step, "--session-id", session)
        from_file = run("request", str(stored), *step)  # the persisted header names the session
        piped = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "request", "-", *step], input=stored.read_bytes(), capture_output=True, timeout=HANG)
        assert from_memory.returncode == from_file.returncode == piped.returncode == 0, (from_file.stderr, piped.stderr)
        assert from_memory.stdout.strip() == from_file.stdout.strip() == piped.stdout.decode().strip() == expected


@pytest.mark.spec("CLI-1")
def test_request_names_the_session_with_the_flag_check_and_timeline_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # One spelling across commands (--session); --session-id, request's first spelling, still works and is not advertised.
    world = run_witness(HARNESS)
    session = world.sessions[0].id
    memory, _ = write_session(world, session, tmp_path, "memory")
    sent = next(r for r in world.requests if r.session_id == session and r.loop_request)
    step = (str(memory), "--turn", str(sent.turn), "--step", str(sent.step))
    expected = (0, json_text(request_to_json(sent.request)) + "\n", "")
    assert printed(capsys, *step, "--session", session) == expected == printed(capsys, *step, "--session-id", session)
    for command in ("request", "check", "timeline"):
        usage = command_help(command)
        assert "--session ID" in usage and "--session-id" not in usage, command


def command_help(command: str) -> str:
    """Return ``prefix-model COMMAND --help``'s text."""
    commands = next(a for a in cli.build_parser(command)._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = commands.choices[command]
    return parser.format_help()


def test_request_for_a_missing_step_exits_2_with_one_line() -> None:
    assert_one_line_error(run("request", "--example", "--turn", "7", "--step", "1"), "REQ-5", "turn 7 step 1")


@pytest.mark.spec("CLI-2", "FMT-2")
def test_request_on_unreadable_logs_exits_2_naming_file_line_and_rule(tmp_path: Path) -> None:
    assert_one_line_error(run("request", str(tmp_path / "absent.jsonl"), "--turn", "1", "--step", "1"), "absent.jsonl", "FMT-1")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}\n{"type":"x","seq":3,"time":0,"data":{}}\n')
    assert_one_line_error(run("request", str(broken), "--turn", "1", "--step", "1"), "broken.jsonl:2:", "LOG-2")
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 50_000 + "\n")
    assert_one_line_error(run("request", str(deep), "--turn", "1", "--step", "1"), "deep.jsonl:1:", "FMT-5")


# --- request on check's fold: the same answer as the spec's reconstruction from the whole log frozen ---


def shown(answer: Request | Rejection) -> str:
    """What ``request`` prints for an answer: the request's JSON text, or the rule and reason of its error."""
    return json_text(request_to_json(answer)) if isinstance(answer, Request) else str(answer)


def steps_of(log: Log) -> list[tuple[int, int]]:
    """Every step the log starts, and one it does not hold."""
    named = [(e.field("turn"), e.field("step")) for e in log.events if e.type == STEP_START]
    return [(t, s) for t, s in named if isinstance(t, int) and isinstance(s, int)] + [(99, 1)]


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``prefix-model request ARGS`` in this process (contracts on: the fast path is held to the spec's at each call)."""
    status = main(["request", *args])
    out, err = capsys.readouterr()
    return status, out, err


def expected_output(answer: Request | Rejection, name: str) -> tuple[int, str, str]:
    """What ``request`` prints for the spec's answer: the request on stdout, or its one-line error on stderr, exit 2."""
    if isinstance(answer, Request):
        return 0, shown(answer) + "\n", ""
    return 2, "", f"prefix-model: {name}: {answer}\n"


@pytest.mark.spec("CLI-1", "REQ-3", "REQ-4", "REQ-5")
@pytest.mark.parametrize("form", ["memory", "persisted", "zstd"])
def test_the_fold_reconstructs_every_step_of_the_witness_as_the_spec_does(form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every step of every session (a fork child and its seed among them), in every form: check's fold vouches, and agrees."""
    assert ENABLED  # the command's contract compares each answer with the spec's path
    world = run_witness(HARNESS)
    for session in world.sessions:
        path, _ = write_session(world, session.id, tmp_path, form)
        for turn, step in steps_of(session.log):
            spec = reconstruct_request(session.log, turn, step, session.id)
            folded = fold_request(LogStream(path), turn, step, session.id)
            assert folded is not None, (session.id, turn, step)  # a conforming log takes the fast path, every step of it
            assert shown(folded) == shown(spec) and folded == spec
            session_id = () if form != "memory" else ("--session-id", session.id)  # the persisted header names it
            got = printed(capsys, str(path), "--turn", str(turn), "--step", str(step), *session_id)
            assert got == expected_output(spec, str(path))


@pytest.mark.spec("CLI-1", "REQ-4")
def test_the_fold_reconstructs_every_step_of_the_real_log_as_the_spec_does() -> None:
    if not REAL.exists():
        pytest.skip(f"the shared reference log is not beside this checkout ({REAL})")
    path = REAL / "events.jsonl"
    log = read_log(path)
    for turn, step in steps_of(log):
        folded = fold_request(LogStream(path), turn, step, "s-real")
        assert folded is not None and shown(folded) == shown(reconstruct_request(log, turn, step, "s-real"))


Event = dict[str, object]


def _event(kind: str, data: dict[str, object], surface_op: object = None, sources: list[int] | None = None) -> Event:
    """An in-memory event line's fields but its seq and time."""
    event: Event = {"type": kind, "data": data}
    if surface_op is not None:
        event["surfaceOp"] = surface_op
    if sources is not None:
        event["sourceEventSeqs"] = sources
    return event


def _lines(*events: Event) -> str:
    """In-memory event lines, numbered from 0."""
    return "".join(json.dumps({"seq": seq, "time": 0} | event) + "\n" for seq, event in enumerate(events))


_HEADER = _event("request/header", {"header": {"config": {"provider": "mock", "model": "m"}}, "reason": "initial"})
_USER = _event("user/message", {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}, "append")


def _again(seq: int) -> Event:
    """A user message replacing surface node ``seq`` (CMP-7's plain replace)."""
    return _event("user/message", {"content": [{"type": "text", "text": "again"}], "source": {"kind": "user"}}, {"op": "replace", "start": seq, "end": seq}, [seq])


def _turn(turn: object, *inside: Event) -> list[Event]:
    return [_event("turn/start", {"turn": turn}), *inside, _event("turn/end", {"turn": turn, "reason": {"kind": "completed"}})]


def _step(turn: object, step: int) -> tuple[Event, Event]:
    return _event("step/start", {"turn": turn, "step": step}), _event("step/end", {"turn": turn, "step": step})


START, END = _step(1, 1)
# Logs where the fold and the spec could part: each must print what the spec's path prints.
SUBTLE = {
    # REQ-5 from the fold itself: its rejection is the spec's, word for word.
    "no header in force": (_lines(*_turn(1, _USER, START, END)), True),
    # JSON-5: a turn of true is no turn 1 (though Python's == says it is): the fold finds ENC-1 and leaves it to the spec.
    "true for turn 1": (_lines(*_turn(True, _HEADER, _USER, *_step(True, 1))), False),
    # A replacement inside the step's header window: the boundary is the nodes before it (REQ-3), the header the later one (REQ-4).
    "a replacement, then the header, before the step ends": (_lines(*_turn(1, _USER, START, _again(1), _HEADER, END)), True),
    # ENC-2: the spec takes the last step/start naming the step; the fold reports the second and does not vouch.
    "the step started twice": (_lines(*_turn(1, _HEADER, _USER, START, END, _USER, START, END)), False),
}


@pytest.mark.spec("CLI-1", "CLI-2", "REQ-4", "REQ-5")
@pytest.mark.parametrize("case", sorted(SUBTLE))
def test_where_the_fold_and_the_spec_could_part_the_command_prints_the_specs_answer(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, vouched = SUBTLE[case]
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    spec = reconstruct_request(read_log(path), 1, 1, "s")
    folded = fold_request(LogStream(path), 1, 1, "s")
    assert (folded is not None) == vouched  # where it vouches, its answer is the spec's; else the command asks the spec
    assert folded is None or shown(folded) == shown(spec)
    assert printed(capsys, str(path), "--turn", "1", "--step", "1", "--session-id", "s") == expected_output(spec, str(path))


@pytest.mark.spec("CLI-2", "FMT-2", "REQ-5")
def test_request_errors_are_the_spec_paths_wherever_the_log_breaks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A log that breaks after the asked step is still unreadable (the whole log is read), with the spec's reader's words."""
    good = _turn(1, _HEADER, _USER, START, END)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(_lines(*good) + '{"type":"turn/start","seq":9,"time":0,"data":{"turn":2}}\n', encoding="utf-8")
    with pytest.raises(LogReadError) as memory_error:
        read_log(broken)
    assert printed(capsys, str(broken), "--turn", "1", "--step", "1") == (2, "", f"prefix-model: {memory_error.value}\n")
    assert "broken.jsonl:7: LOG-2" in str(memory_error.value)
    # The persisted form: a surface rule the reader leaves to the seed (SURF-*), broken after the step, as seed_log words it.
    stored = tmp_path / "stored.session.jsonl"
    events = [event for _, event in LogStream(_written(tmp_path, _lines(*good, _again(7))))]
    write_persisted(stored, SessionHeaderLine(0, "s", 0), events)
    status, out, err = printed(capsys, str(stored), "--turn", "1", "--step", "1")
    assert (status, out) == (2, "") and err.startswith(f"prefix-model: {stored}: SURF-") and "seq 6: " in err
    missing = printed(capsys, str(stored), "--turn", "3", "--step", "1")
    assert missing[0] == 2 and "SURF-" in missing[2]  # the log is unusable before any step is looked for, as on the spec's path


def _written(folder: Path, text: str) -> Path:
    path = folder / "events.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.spec("CLI-1", "REQ-2", "REQ-5")
@pytest.mark.parametrize("wrong", ["a message dropped", "no step named"])
def test_the_contract_catches_a_fast_path_that_answers_otherwise(wrong: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ENABLED
    world = run_witness(HARNESS)
    session = world.sessions[0]
    path, _ = write_session(world, session.id, tmp_path, "persisted")
    if wrong == "a message dropped":
        built = LogChecker.request_for

        def dropped(self: LogChecker, result: StepResult) -> Request | None:
            request = built(self, result)
            return None if request is None else replace(request, messages=request.messages[:-1])

        monkeypatch.setattr(LogChecker, "request_for", dropped)
    else:
        monkeypatch.setattr(checker, "is_step_number", lambda value, expected: False)
    turn, step = steps_of(session.log)[-2]
    with pytest.raises(icontract.ViolationError, match="the spec reconstructs"):
        main(["request", str(path), "--turn", str(turn), "--step", str(step)])


@pytest.mark.spec("CLI-5", "CLI-3")
def test_demo_runs_the_loop_scenario_and_explains_every_request() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    requests = [json.loads(line) for line in lines if line.startswith('{"provider"')]
    explained = [line for line in lines if line.startswith("# instance ")]
    world = loop_run(DEMO_ACTIONS)
    assert len(requests) == len(explained) == len(world.requests) == 3
    assert [r["messages"][0]["content"][0]["text"] for r in requests] == [
        "<system-reminder>skills catalog v1</system-reminder>",
        "<system-reminder>skills catalog v1</system-reminder>",
        "<system-reminder>skills catalog v2</system-reminder>",
    ]
    assert "(resume)" in explained[-1] and "(initial)" in explained[0]
    assert lines[-1].endswith("properties checked: all hold")
    # The actions print one short line each, numbered, kind first; no Python repr.
    briefs = lines[1 : 1 + len(DEMO_ACTIONS)]
    assert [line.split()[1:3] for line in briefs] == [[str(n), type(a).__name__] for n, a in enumerate(DEMO_ACTIONS, 1)]
    assert not any("(" in line.split()[2] or "Listener(" in line for line in briefs)
    # --json-actions prints them as the vectors' JSON, and they read back to the very actions the demo ran.
    exact = run("demo", "--json-actions")
    assert exact.returncode == 0, exact.stderr
    spelled = [line.removeprefix("#   ") for line in exact.stdout.splitlines()[1 : 1 + len(DEMO_ACTIONS)]]
    assert tuple(action_from_json(freeze(json.loads(text))) for text in spelled) == DEMO_ACTIONS


@pytest.mark.spec("CLI-4", "VAR-1")
def test_variants_reports_every_variant_rejected_and_exits_0() -> None:
    # Contracts off: test_variants_catalog judges every variant with them on, in process (18 s -> 5 s here).
    result = run("variants", "--json", env=CONTRACTS_OFF)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["variant"] for r in records] == [v.name for v in VARIANTS]
    assert all(r["rejected"] and set(r["expected"]) <= set(r["rejectedBy"]) for r in records)


@pytest.mark.spec("CLI-1")
def test_request_help_teaches_with_an_example() -> None:
    result = run("request", "--help")
    assert result.returncode == 0
    assert "example:" in result.stdout and "exit status" in result.stdout and "messagePrefix" in result.stdout


@pytest.mark.spec("CLI-6", "CHK-1")
def test_check_example_checks_the_bundled_log_and_capture() -> None:
    result = run("check", "--example", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["result"] == "conforms" and report["sessionId"] == EXAMPLE_SESSION_ID
    assert report["checked"]["requests"] == {"total": len(EXAMPLE_STEPS), "checked": len(EXAMPLE_STEPS), "auxiliary": 0, "otherSession": 0,
                                             "unmatched": 0, "byTurnStep": len(EXAMPLE_STEPS), "inOrder": []}  # fmt: skip
    assert "check --example" in run("check", "--help").stdout


@pytest.mark.spec("CLI-6", "FMT-9")
@pytest.mark.parametrize("form", ["memory", "persisted", "zstd"])
def test_check_reads_a_log_piped_on_standard_input(form: str, tmp_path: Path) -> None:
    world = run_witness(HARNESS)
    session = world.sessions[0].id
    log, capture = write_session(world, session, tmp_path, form)
    piped = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", "-", "--requests", str(capture), "--session", session, "--json"],
                           input=log.read_bytes(), capture_output=True, timeout=HANG)  # fmt: skip
    direct = run("check", str(log), "--requests", str(capture), "--session", session, "--json")
    assert piped.returncode == direct.returncode == 0, piped.stderr
    report, expected = json.loads(piped.stdout), json.loads(direct.stdout)
    assert report["checked"] == expected["checked"] and report["checked"]["requests"]["checked"] > 0
    REPORT_SCHEMA.validate(report)
    empty = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", "-"], input=b"", capture_output=True, text=False, timeout=HANG)
    assert empty.returncode == 2 and empty.stderr.decode().count("\n") == 1 and b"FMT-1" in empty.stderr
    # With --json, an unusable input is a JSON object on stdout too, valid under the report schema.
    unusable = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", "-", "--json"], input=b"", capture_output=True, timeout=HANG)
    error = json.loads(unusable.stdout)
    assert unusable.returncode == 2 and error["result"] == "unusable" and error["error"]["rule"] == "FMT-1"
    REPORT_SCHEMA.validate(error)


@pytest.mark.spec("CLI-6")
def test_check_shows_progress_on_a_terminal_and_nothing_on_a_pipe(tmp_path: Path) -> None:
    world = run_witness(HARNESS)
    log, capture = write_session(world, world.sessions[0].id, tmp_path, "persisted")
    command = [sys.executable, "-m", "prefix_model.edge.cli", "check", str(log), "--requests", str(capture)]
    piped = subprocess.run(command, capture_output=True, text=True, timeout=HANG)
    assert piped.returncode == 0 and piped.stderr == ""  # not a terminal: no bar
    done, shown = on_a_terminal(command)
    assert done.returncode == 0 and done.stdout.decode() == piped.stdout
    assert b"checking s1.session.jsonl: " in shown and b" event" in shown, shown  # the bar, on the terminal, cleared when done


def on_a_terminal(command: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run ``command`` with its stderr on a pseudo-terminal of 100 columns; return the run and what the terminal showed."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal has a size; 0 columns draw nothing
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=follower, timeout=HANG, env=env)
        shown = b""
        while select.select([leader], [], [], 0.5)[0]:  # what the terminal holds, read before its other end closes
            shown += os.read(leader, 65536)
    finally:
        os.close(follower)
        os.close(leader)
    return done, shown


@pytest.mark.spec("CLI-4")
def test_variants_shows_progress_on_a_terminal() -> None:
    # Contracts off: the bar is the subject here (test_variants_catalog runs the command with them on), 17 s -> 5 s.
    done, shown = on_a_terminal([sys.executable, "-m", "prefix_model.edge.cli", "variants"], env=CONTRACTS_OFF)
    assert done.returncode == 0 and b"judging variants" in shown and b"UNDETECTED" not in done.stdout, shown


@pytest.mark.spec("CLI-6")
def test_check_reads_standard_input_from_a_fifo_whose_writer_has_closed(tmp_path: Path) -> None:
    """``check -`` reads the descriptor it was given: opened again by path, this FIFO would block forever."""
    world = run_witness(HARNESS)
    log, _ = write_session(world, world.sessions[0].id, tmp_path, "memory")
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(log.read_bytes()))
    writer.start()
    with fifo.open("rb") as reading:
        writer.join(timeout=HANG)  # the writer has written everything and closed before the check starts
        result = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", "-"], stdin=reading, capture_output=True, timeout=HANG)
    assert result.returncode == 0 and b"conforms" in result.stdout, result.stderr


@pytest.mark.spec("CLI-2")
@pytest.mark.parametrize("args", [("check", "--example"), ("review",)], ids=["short-output", "long-output"])
def test_a_reader_that_goes_away_ends_the_command_silently_with_sigpipes_status(args: tuple[str, ...]) -> None:
    """``prefix-model review | head -1``: no "Broken pipe" line, no status that reads as a verdict.

    The reader is gone before the first write: a short report meets it in the last flush, a long one (review's 120 KB) mid-print.
    """
    reading, writing = os.pipe()
    os.close(reading)
    try:
        result = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", *args], stdout=writing, env=CONTRACTS_OFF,
                                stderr=subprocess.PIPE, text=True, timeout=HANG)  # fmt: skip
    finally:
        os.close(writing)
    assert (result.returncode, result.stderr) == (141, "")


@pytest.mark.spec("CLI-6")
def test_standard_input_that_is_a_directory_stops_the_interpreter_before_any_python_runs(tmp_path: Path) -> None:
    """What CLI-6 says of ``check - < DIR``: CPython exits 1 before the entry point (or sitecustomize) runs, printing no report.

    The day an interpreter lets Python code run first, this fails: the entry point can then exit 2 and the spec must say so.
    """
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.stderr.write('python ran\\n')\n", encoding="utf-8")
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    directory = os.open(tmp_path, os.O_RDONLY)  # what the shell's < DIR gives (Python's open() refuses a directory)
    try:
        result = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", "-"], stdin=directory, env=env, capture_output=True, text=True, timeout=HANG)
    finally:
        os.close(directory)
    assert (result.returncode, result.stdout) == (1, "") and "python ran" not in result.stderr
    assert "init_sys_streams: <stdin> is a directory" in result.stderr
    spec = (ROOT / "spec" / "SPEC.md").read_text(encoding="utf-8")
    assert "init_sys_streams: <stdin> is a directory" in " ".join(spec.split())


@pytest.mark.spec("CHK-2")
def test_the_installed_command_runs_without_contracts_unless_the_environment_asks() -> None:
    """Production is the contracts-off lane (``edge/launch.py``); the same verdict either way, ``python -m`` keeps them on."""
    code = ("import sys\nfrom prefix_model.edge import launch\nsys.argv = ['prefix-model', 'check', '--example']\n"
            "status = launch.main()\nfrom prefix_model.core.contracts import ENABLED\nprint('contracts', ENABLED)\nsys.exit(status)")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "PREFIX_MODEL_CONTRACTS"}
    off = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=HANG)
    on = subprocess.run([sys.executable, "-c", code], env=env | {"PREFIX_MODEL_CONTRACTS": "1"}, capture_output=True, text=True, timeout=HANG)
    assert (off.returncode, on.returncode) == (0, 0), off.stderr + on.stderr
    assert off.stdout.splitlines()[-1] == "contracts False" and on.stdout.splitlines()[-1] == "contracts True"
    assert off.stdout.splitlines()[:-1] == on.stdout.splitlines()[:-1]  # the same report
    # The README says which is the default where (it once said "on everywhere").
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "the installed `prefix-model` command runs with them off" in readme and "on everywhere" not in readme


# What a check of an uncompressed log does not import, each a part of every check's start-up
# (bench/startup_bench.py): the schema validator (a capture line the fast lane vouches for needs
# none), zstd, the progress bar off a terminal, icontract with the contracts off, the modules of
# the other commands, and shutil (argparse's help width imports it: cli._Help finds the width
# itself), and a workspace's processes and JUnit writer (one log is checked in this process). The
# installed command, as it runs: its entry point, contracts off by default.
NOT_FOR_CHECK = ("jsonschema", "zstandard", "tqdm", "icontract", "importlib.resources", "shutil",
                 "prefix_model.loop", "prefix_model.vectors", "prefix_model.edge.vectors", "prefix_model.edge.runner", "prefix_model.edge.timeline",
                 "prefix_model.review", "prefix_model.edge.review", "matplotlib", "concurrent", "xml")  # fmt: skip
_IMPORTS_PROBE = """\
import json, os, sys
from prefix_model.edge import launch
status = launch.main()
with open(os.environ["PROBE_MODULES"], "w", encoding="utf-8") as out:
    json.dump(sorted(sys.modules), out)
sys.exit(status)
"""


def check_imports(folder: Path, *args: str, contracts: str | None = None) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run the installed command's ``check ARGS`` (stderr a pipe); return the run and which of NOT_FOR_CHECK it imported."""
    written = folder / "modules.json"
    env = {k: v for k, v in os.environ.items() if k != "PREFIX_MODEL_CONTRACTS"} | {"PROBE_MODULES": str(written)}
    if contracts is not None:
        env["PREFIX_MODEL_CONTRACTS"] = contracts
    done = subprocess.run([sys.executable, "-c", _IMPORTS_PROBE, "check", *args], env=env, capture_output=True, text=True, timeout=HANG)
    modules = json.loads(written.read_text(encoding="utf-8")) if written.exists() else []
    return done, sorted({name for name in NOT_FOR_CHECK for m in modules if m == name or m.startswith(name + ".")})


@pytest.mark.parametrize("form", ["example", "memory", "persisted", "zstd"])
def test_check_imports_only_what_its_input_needs(form: str, tmp_path: Path) -> None:
    """The import graph of start-up, not its time: zstandard for a zstd log only, and nothing else of NOT_FOR_CHECK."""
    args = ["--example"]
    if form != "example":
        world = run_witness(HARNESS)
        session = world.sessions[0].id
        log, capture = write_session(world, session, tmp_path, form)
        args = [str(log), "--requests", str(capture), "--session", session]
    done, imported = check_imports(tmp_path, *args)
    assert done.returncode == 0 and done.stdout.endswith("result: conforms\n"), done.stdout + done.stderr
    assert imported == (["zstandard"] if form == "zstd" else [])


def test_check_with_contracts_on_imports_icontract(tmp_path: Path) -> None:
    """The switch on, the contracts are icontract's again (the probe sees a lazy import: it is not blind)."""
    done, imported = check_imports(tmp_path, "--example", contracts="1")
    assert done.returncode == 0 and done.stdout.endswith("result: conforms\n"), done.stdout + done.stderr
    assert imported == ["icontract"]


@pytest.mark.spec("CLI-6", "CLI-2", "FMT-5", "FMT-2")
def test_hostile_paths_are_one_line_and_bounded(tmp_path: Path) -> None:
    """/dev/zero (one endless line, read through the pipe path too), a name too long: one line, exit 2, no disk filled."""
    env = os.environ | {"TMPDIR": str(tmp_path)}
    long_name = str(tmp_path / ("a" * 300))
    for args in (["check", "/dev/zero"], ["request", "/dev/zero", "--turn", "1", "--step", "1"], ["check", long_name],
                 ["request", long_name, "--turn", "1", "--step", "1"]):  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", *args], capture_output=True, text=True, timeout=HANG, env=env)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, (args, done.stderr[-500:])
        assert ("FMT-5" in done.stderr) if "/dev/zero" in args else ("File name too long" in done.stderr)
    assert list(tmp_path.iterdir()) == []  # the copy of the pipe is gone, and was cut at the line the reader refuses


@pytest.mark.spec("CLI-6")
def test_a_killed_check_leaves_no_copy_of_its_pipe(tmp_path: Path) -> None:
    env = os.environ | {"TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-m", "prefix_model.edge.cli", "check", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    assert process.stdin is not None
    process.stdin.write(b'{"seq":0,"time":1,"type":"turn/start","data":{"turn":1}}\n' * 1000)
    process.stdin.flush()
    # Only the checker's own names count: on its first use Python's tempfile probes TMPDIR by writing and removing a file
    # of 8 random characters, which a poll can catch in between (seen once in CI-like runs under load).
    def copies() -> list[str]:
        return [p.name for p in tmp_path.iterdir() if p.name.startswith("prefix-model-")]

    try:
        # The copy is being written while the pipe stays open; it has no name a kill could leave behind.
        for _ in range(50):
            if process.poll() is not None:
                break
            assert copies() == []
            threading.Event().wait(0.05)
    finally:
        process.kill()
        process.wait(timeout=HANG)
    assert copies() == []


@pytest.mark.spec("CLI-6")
def test_lone_surrogates_print_as_escapes_in_valid_utf8(tmp_path: Path) -> None:
    """A \\udc80 in a log's value and an undecodable byte in the file name: the text and --json stay valid UTF-8, the JSON valid."""
    log = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\x80name.jsonl"))
    log.write_text('{"seq":0,"time":1,"type":"\\udc80x","data":{}}\n', encoding="utf-8")
    for extra in ((), ("--json",)):
        done = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "check", str(log), *extra], capture_output=True, timeout=HANG)
        assert done.returncode == 1 and b"Traceback" not in done.stderr
        text = done.stdout.decode("utf-8")  # strict: raw surrogate bytes would fail here
        assert "\\udc80x" in text
        if extra:
            report = json.loads(text)
            assert report["log"] == str(log) and report["findings"][0]["message"].startswith("\udc80x")


@pytest.mark.spec("CLI-6", "FMT-5", "FMT-7", "FMT-9", "CHK-1", "JSON-3")
def test_hostile_sizes_get_a_one_line_error_or_a_correct_answer(tmp_path: Path) -> None:
    """Small cuts of the hostile sizes: a zstd of 2^22 newlines, a header frame past the line bound, a line of 1e0 numbers."""
    import zstandard

    header = json.dumps({"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0, "cwd": "/"}).encode() + b"\n"
    squeeze = zstandard.ZstdCompressor()
    newlines = tmp_path / "newlines.jsonl.zstd"
    newlines.write_bytes(squeeze.compress(header) + squeeze.compress(b"\n" * (1 << 22)))
    big_header = tmp_path / "header.jsonl.zstd"
    big_header.write_bytes(squeeze.compress(b'{"type":"session","x":"' + b"a" * (65 << 20) + b'"}\n'))
    numbers = tmp_path / "numbers.jsonl"
    numbers.write_text('{"seq":0,"time":1,"type":"turn/start","data":{"turn":1,"x":[' + ",".join(["1e0"] * 100_000) + "]}}\n", encoding="utf-8")
    expected = {newlines: (2, "no event to check (CHK-1)"), big_header: (2, "FMT-5: line longer than"), numbers: (0, "")}
    for path, (status, said) in expected.items():
        done = run("check", str(path))
        assert done.returncode == status and "Traceback" not in done.stderr, (path.name, done.stderr[-300:])
        assert (done.stderr.count("\n") == 1 and said in done.stderr) if status == 2 else done.stdout.endswith("result: conforms\n")


@pytest.mark.spec("CLI-2", "FMT-2")
def test_request_names_a_piped_log_as_the_user_named_it() -> None:
    log = b'{"seq":0,"time":1,"type":"turn/start","data":{"turn":1}}\n{"seq":2,"time":1,"type":"turn/end","data":{"turn":1}}\n'
    done = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "request", "-", "--turn", "1", "--step", "1"], input=log,
                          capture_output=True, timeout=HANG)  # fmt: skip
    assert done.returncode == 2 and done.stderr.decode() == "prefix-model: <stdin>:2: LOG-2: seq 2 is not contiguous; expected 1\n"


def _subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of command ``name`` inside ``parser``."""
    found = [a.choices[name] for a in parser._actions if isinstance(a, argparse._SubParsersAction) and name in a.choices]
    assert len(found) == 1
    parser_of: argparse.ArgumentParser = found[0]
    return parser_of


@pytest.mark.spec("CLI-1", "CLI-6")
@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_a_command_built_alone_parses_and_teaches_as_in_the_whole_parser(name: str) -> None:
    """``main`` builds only the command it runs (start-up): its parser is the one the whole parser holds, help and all."""
    alone, whole = cli.build_parser(name), cli.build_parser()
    assert _subcommand(alone, name).format_help() == _subcommand(whole, name).format_help()
    assert [a.dest for a in _subcommand(alone, name)._actions] == [a.dest for a in _subcommand(whole, name)._actions]
    assert cli._invoked([name, "--json"]) == name and cli._invoked(["--version"]) is None and cli._invoked(["nothing", name]) is None


def test_an_unknown_command_lists_every_command() -> None:
    done = run("chek", "--example")
    assert done.returncode == 2 and all(name in done.stderr for name in cli.COMMANDS), done.stderr
