"""§21 — ``prefix-model check`` over a workspace: many logs found, paired, checked in processes, one report."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from prefix_model.edge import workspace
from prefix_model.edge.checker import check_log
from prefix_model.edge.cli import main
from prefix_model.edge.formats.persisted_writer import write_persisted
from prefix_model.edge.formats.session_jsonl import LogStream
from prefix_model.edge.workspace import Target, capture_of, check_all, discover, is_log_name
from prefix_model.examples import EXAMPLE_DIR, EXAMPLE_FILE, EXAMPLE_REQUESTS_FILE
from prefix_model.formats.session_lines import SessionHeaderLine

from tests.conftest import REPORT_SCHEMA

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE_SCHEMA = jsonschema.Draft202012Validator(json.loads((ROOT / "spec" / "schema" / "check-workspace-report.schema.json").read_text(encoding="utf-8")))
LOG, CAPTURE = EXAMPLE_DIR / EXAMPLE_FILE, EXAMPLE_DIR / EXAMPLE_REQUESTS_FILE


def _persisted(target: Path) -> None:
    """The example log as the harness persists it (header naming the session, zstd when the name says so)."""
    write_persisted(target, SessionHeaderLine(0, "example-session", 0), (e for _, e in LogStream(LOG)), compress=target.name.endswith(".zstd"))


def _violating_capture(target: Path) -> None:
    """The example capture with the model of its second request changed: one request the log says was otherwise."""
    lines = CAPTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace('"model":"mock-model"', '"model":"other-model"', 1)
    target.write_text("".join(lines), encoding="utf-8")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace of four sessions: persisted zstd with its requests.jsonl, in-memory pairs (one violating), one unpaired, one unusable."""
    root = tmp_path / "ws"
    for folder in ("p/s-1", "p/s-2", "q", "r"):
        (root / folder).mkdir(parents=True)
    _persisted(root / "p/s-1/session.jsonl.zstd")
    shutil.copy(CAPTURE, root / "p/s-1/requests.jsonl")
    shutil.copy(LOG, root / "p/s-2/a.events.jsonl")
    _violating_capture(root / "p/s-2/a.requests.jsonl")
    shutil.copy(LOG, root / "q/b.jsonl")
    (root / "r/session.jsonl").write_text("", encoding="utf-8")  # no event: unusable (CHK-1)
    (root / "q/notes.txt").write_text("not a log", encoding="utf-8")
    return root


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["check", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.spec("CLI-21")
def test_a_log_is_paired_with_the_capture_beside_it_by_name(tmp_path: Path) -> None:
    for log, capture in [("session.jsonl", "requests.jsonl"), ("session.jsonl.zstd", "requests.jsonl"), ("a.events.jsonl", "a.requests.jsonl"),
                         ("a.session.jsonl.zstd", "a.requests.jsonl"), ("a.jsonl", "a.requests.jsonl"), ("x.y.events.jsonl", "x.y.requests.jsonl")]:  # fmt: skip
        assert capture_of(tmp_path / log) is None  # only a capture that is there
        (tmp_path / capture).write_text("", encoding="utf-8")
        assert capture_of(tmp_path / log) == tmp_path / capture, log
        (tmp_path / capture).unlink()
    assert capture_of(tmp_path / "a.txt") is None
    assert [n for n in ("session.jsonl", "a.jsonl.zstd", "a.events.jsonl", "requests.jsonl", "a.requests.jsonl", "a.requests.jsonl.zstd",
                        ".jsonl", "a.json", "a.jsonl.gz") if is_log_name(n)] == ["session.jsonl", "a.jsonl.zstd", "a.events.jsonl"]  # fmt: skip


@pytest.mark.spec("CLI-20", "CLI-21")
def test_a_folder_is_searched_in_name_order_and_each_log_checked_as_it_is_alone(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert list(discover([str(ws)])) == [
        Target(f"{ws}/p/s-1/session.jsonl.zstd", f"{ws}/p/s-1/requests.jsonl"),
        Target(f"{ws}/p/s-2/a.events.jsonl", f"{ws}/p/s-2/a.requests.jsonl"),
        Target(f"{ws}/q/b.jsonl"),
        Target(f"{ws}/r/session.jsonl"),
    ]
    status, out, _ = _run(capsys, str(ws), "--json")
    assert status == 2
    logs = json.loads(out)["logs"]
    for entry in logs[:3]:  # each report is the one `check LOG --requests CAPTURE` gives
        alone = check_log(Path(entry["log"]), None if entry["capture"] is None else Path(entry["capture"]))
        assert entry["report"] == alone.as_json(50)
    assert [e["report"]["result"] for e in logs] == ["conforms", "violates", "conforms", "unusable"]


@pytest.mark.spec("CLI-20")
def test_a_pattern_matches_path_components_and_several_arguments_are_read_in_order(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert [t.log for t in discover([f"{ws}/**/*.events.jsonl"])] == [f"{ws}/p/s-2/a.events.jsonl"]
    assert [t.log for t in discover([f"{ws}/*/s-[12]/*"])] == [f"{ws}/p/s-1/session.jsonl.zstd", f"{ws}/p/s-2/a.events.jsonl"]  # captures left out
    assert [t.log for t in discover([f"{ws}/q/b.jsonl", f"{ws}/p/s-1"])] == [f"{ws}/q/b.jsonl", f"{ws}/p/s-1/session.jsonl.zstd"]
    everything = list(discover([str(ws)]))
    assert list(discover([str(ws), str(ws), f"{ws}/p"])) == everything  # a folder searched once, not an empty second time
    assert [t.log for t in discover([f"{ws}/*/*/a.*", f"{ws}/*/b.*"])] == [f"{ws}/p/s-2/a.events.jsonl", f"{ws}/q/b.jsonl"]  # one folder, two patterns
    status, out, _ = _run(capsys, f"{ws}/q/b.jsonl", f"{ws}/p/s-1")
    assert status == 0 and out.splitlines()[-1].startswith("result: conforms: 2 logs (2 conforms, 0 violates, 0 unusable)")


@pytest.mark.spec("CLI-20", "CLI-23")
def test_links_to_folders_are_followed_once_and_a_loop_ends(ws: Path) -> None:
    os.symlink("..", ws / "p" / "up")  # ws/p/up -> ws: a loop
    os.symlink(ws / "q", ws / "p" / "also-q")  # a folder reached twice
    os.symlink(ws / "missing.jsonl", ws / "q" / "gone.jsonl")  # a link to nothing: reported, by name
    found = [t.log for t in discover([str(ws)])]
    assert sorted(found) == sorted({*found}) and len(found) == 5
    assert f"{ws}/p/also-q/b.jsonl" in found and f"{ws}/p/also-q/gone.jsonl" in found  # q entered once, by its first name


@pytest.mark.spec("CLI-22", "CLI-24")
def test_the_text_report_is_the_same_bytes_for_any_number_of_processes(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    texts = [_run(capsys, str(ws), "--jobs", jobs) for jobs in ("1", "2")]
    assert texts[0] == texts[1]
    status, text, err = texts[0]
    assert status == 2 and err == ""  # no progress off a terminal
    lines = text.splitlines()
    assert lines[0] == f"conforms  {ws}/p/s-1/session.jsonl.zstd + {ws}/p/s-1/requests.jsonl: 24 events, 3 steps, 3 requests checked"
    assert lines[1].startswith(f"violates  {ws}/p/s-2/a.events.jsonl + {ws}/p/s-2/a.requests.jsonl: 1 finding(s)")
    assert lines[2].startswith("  REC-1 ") and lines[lines.index(f"conforms  {ws}/q/b.jsonl: 24 events, 3 steps") - 1] == "  by rule: REC-1 1"
    assert lines[-2] == "by rule: REC-1 1 in 1 log"
    assert lines[-1] == "result: unusable: 4 logs (2 conforms, 1 violates, 1 unusable); 72 events, 9 steps, 6 requests checked"


@pytest.mark.spec("CLI-22")
def test_the_json_and_junit_reports_are_the_same_bytes_for_any_number_of_processes(ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    jsons = [_run(capsys, str(ws), "--jobs", jobs, "--json", "--junit", str(tmp_path / f"{jobs}.xml")) for jobs in ("1", "2")]
    assert jsons[0] == jsons[1] and (tmp_path / "1.xml").read_bytes() == (tmp_path / "2.xml").read_bytes()


@pytest.mark.spec("CLI-22")
def test_json_and_junit_cover_every_log(ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, out, _ = _run(capsys, str(ws), "--json", "--junit", str(tmp_path / "c.xml"), "--max-findings", "1")
    report = json.loads(out)
    WORKSPACE_SCHEMA.validate(report)
    for entry in report["logs"]:
        REPORT_SCHEMA.validate(entry["report"])
    assert report["summary"] == {"logs": 4, "conforms": 2, "violates": 1, "unusable": 1, "findings": 1,
                                 "byRule": {"REC-1": {"findings": 1, "logs": 1}}, "checked": {"events": 72, "steps": 9, "requests": 6}}  # fmt: skip
    assert report["result"] == "unusable"
    suite = ElementTree.parse(tmp_path / "c.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [e["log"] for e in report["logs"]]
    assert [len(c.findall("failure")) for c in cases] == [0, 1, 0, 0] and cases[3].find("error") is not None
    assert cases[1].findall("failure")[0].get("message", "").startswith("REC-1 ")


@pytest.mark.spec("CLI-22")
def test_one_log_alone_prints_as_before_and_its_junit_has_one_testcase(ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log, capture = str(ws / "p/s-2/a.events.jsonl"), str(ws / "p/s-2/a.requests.jsonl")
    plain = _run(capsys, log, "--requests", capture)
    with_junit = _run(capsys, log, "--requests", capture, "--junit", str(tmp_path / "one.xml"))
    assert plain == with_junit and plain[0] == 1 and plain[1].startswith(f"prefix-model check: {log} (memory")
    suite = ElementTree.parse(tmp_path / "one.xml").getroot()
    assert suite.get("tests") == "1" and len(suite.findall("testcase/failure")) == 1
    assert _run(capsys, str(ws / "r/session.jsonl"), "--junit", str(tmp_path / "bad.xml"))[0] == 2  # unusable alone: an error testcase
    assert ElementTree.parse(tmp_path / "bad.xml").getroot().get("errors") == "1"


@pytest.mark.spec("CLI-23")
def test_exit_status_of_a_workspace(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, str(ws / "p/s-1"), str(ws / "q"))[0] == 0
    assert _run(capsys, str(ws / "p"))[0] == 1  # one violates, none unusable
    status, out, _ = _run(capsys, str(ws / "p"), str(ws / "r"))  # an unusable log among others: its result, the others still checked
    assert status == 2 and out.count("\nconforms  ") + out.startswith("conforms  ") == 1 and "violates  " in out
    assert f"unusable  {ws}/r/session.jsonl\n  {ws}/r/session.jsonl: FMT-1: the file is empty" in out


@pytest.mark.spec("CLI-23")
def test_nothing_to_check_is_one_line_never_a_pass(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty" / "deep").mkdir(parents=True)
    shutil.copy(CAPTURE, tmp_path / "empty" / "deep" / "requests.jsonl")  # a capture alone is no log
    for args in ([str(tmp_path / "empty")], [f"{tmp_path}/nowhere/*.jsonl"], [f"{ws}/**/*.zstd.jsonl"], [str(tmp_path / "empty"), "--json"]):
        status, out, err = _run(capsys, *args)
        assert status == 2 and err.count("\n") == 1 and "no session log there" in err, err
        assert out == "" if "--json" not in args else json.loads(out)["result"] == "unusable"
    status, out, err = _run(capsys, str(tmp_path / "empty"), str(ws / "q"))  # among others: that argument's result
    assert status == 2 and f"unusable  {tmp_path}/empty\n" in out and "conforms  " in out
    report = json.loads(_run(capsys, str(tmp_path / "empty"), str(ws / "q"), "--json")[1])
    WORKSPACE_SCHEMA.validate(report)
    REPORT_SCHEMA.validate(report["logs"][0]["report"])
    assert report["logs"][0]["report"]["error"]["message"].startswith(f"{tmp_path}/empty: no session log there")
    for args in (["--requests", str(CAPTURE)], ["--session", "s"], ["-"]):
        status, out, err = _run(capsys, str(ws), *args)
        assert status == 2 and out == "" and err.count("\n") == 1
    status, out, err = _run(capsys, str(ws), "--junit", str(tmp_path / "no" / "such" / "c.xml"))
    assert status == 2 and out == "" and "JUnit" in err


@pytest.mark.spec("CLI-24")
@pytest.mark.parametrize("jobs", [1, 2])
def test_results_stream_and_memory_holds_only_a_window(jobs: int) -> None:
    """The report is written as the logs come: a reader that stops after three logs has cost a bounded number of checks."""
    pulled = 0

    def endless() -> Iterator[Target]:
        nonlocal pulled
        while True:
            pulled += 1
            yield Target(str(LOG), str(CAPTURE))

    class Enough(Exception):
        pass

    class Stopping(io.StringIO):
        def write(self, text: str) -> int:
            if self.getvalue().count("\n") >= 3:
                raise Enough
            return super().write(text)

    out = Stopping()
    with pytest.raises(Enough):
        check_all(endless(), out, jobs=jobs)
    assert out.getvalue().count("conforms  ") == 3
    assert pulled <= 4 + jobs * workspace._IN_FLIGHT_PER_JOB


@pytest.mark.spec("CLI-24")
def test_progress_counts_logs_on_a_terminal(ws: Path) -> None:
    from tests.edge.test_cli import on_a_terminal

    done, shown = on_a_terminal([sys.executable, "-m", "prefix_model.edge.cli", "check", str(ws / "q")])
    assert done.returncode == 0 and done.stdout.decode().startswith("conforms  ")
    assert b"\rchecking: 0 logs [" in shown, shown  # the bar, on the terminal, the report on stdout


def _killed(cap: int | None, as_json: bool, target: Target) -> workspace.Outcome:
    os._exit(9)  # a worker the system ends (out of memory): no exception, no result


@pytest.mark.spec("CLI-23")
def test_a_worker_that_dies_is_one_line_and_exit_2(ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace, "_check_one", _killed)  # the workers are forked: they run it too
    status, _, err = _run(capsys, str(ws / "q"), "--jobs", "2")
    assert status == 2 and err.count("\n") == 1 and "a --jobs process ended before it gave a result" in err, err
