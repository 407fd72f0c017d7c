"""§17 — ``prefix-model timeline``: the picture holds what the log and the check hold, the same bytes every time.

The SVG is read back with ElementTree and its marks counted against the log's events and the
check's findings; errors are run as a user runs them (a subprocess: one line, exit 2).
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

import pytest
from prefix_model.core.events import REQUEST_HEADER, STEP_START, Replace
from prefix_model.edge import timeline
from prefix_model.edge.checker import check_log
from prefix_model.edge.cli import main
from prefix_model.examples import EXAMPLE_STEPS, example_log
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.variants import run_witness

from tests.conftest import HANG
from tests.edge.test_checker import write_session
from tests.edge.test_cli import assert_one_line_error
from tests.reference import REAL_LOG_DIR

SVG = "{http://www.w3.org/2000/svg}"
COMMAND = [sys.executable, "-m", "prefix_model.edge.cli", "timeline"]


def draw(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run ``prefix-model timeline ARGS`` in this process; return its one stdout line (exit 0 asserted)."""
    assert main(["timeline", *args]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("prefix-model timeline: wrote "), out
    return out


def picture(path: Path) -> Element:
    """The SVG of a .svg file, or the one inline in a .html page, parsed."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        text = text[text.index("<svg") : text.index("</svg>") + len("</svg>")]
    return ElementTree.fromstring(text)


def marks(root: Element, kind: str) -> list[Element]:
    """The shapes (not groups, not labels) whose class names ``kind``."""
    return [e for e in root.iter() if kind in (e.get("class") or "").split() and e.tag not in (f"{SVG}g", f"{SVG}text")]


def title(element: Element) -> str:
    found = element.find(f"{SVG}title")
    assert found is not None and found.text is not None
    return found.text


def lanes(root: Element) -> list[bytes]:
    """Each lane's group as bytes: what a picture shows, without its heading (which names the file and its form)."""
    return [ElementTree.tostring(g) for g in root.iter(f"{SVG}g") if g.get("class") == "lane"]


def count(lines: list[str], kind: str) -> int:
    return sum(1 for line in lines if json.loads(line)["type"] == kind)


@pytest.mark.spec("CLI-7")
@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_the_bundled_example_draws_every_step_header_and_request(suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"example{suffix}"
    said = draw(capsys, "--example", "--out", str(out))
    assert str(out) in said and "3 steps" in said and "0 findings" in said
    root, log = picture(out), example_log()
    steps = [e for e in log.events if e.type == STEP_START]
    assert len(marks(root, "step")) == len(steps) == len(EXAMPLE_STEPS)
    assert [int(e.get("data-seq", "-1")) for e in marks(root, "step")] == [e.seq for e in steps]
    headers = [e for e in log.events if e.type == REQUEST_HEADER]
    assert [int(e.get("data-seq", "-1")) for e in marks(root, "header")] == [e.seq for e in headers]
    assert "initial" in title(marks(root, "header")[0]) and "messagePrefix: 1 message(s)" in title(marks(root, "header")[0])
    requests = marks(root, "request")
    assert len(requests) == len(EXAMPLE_STEPS) and all("conforms" in (r.get("class") or "").split() for r in requests)
    assert all(title(r).endswith("\nconforms") for r in requests)
    assert marks(root, "finding") == [] and marks(root, "guide") == []
    if suffix == ".html":
        page = out.read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and "<h2>Legend</h2>" in page and "Findings (0)" in page
        assert all(f"<dt>{lane}</dt>" in page for lane, _ in timeline.LANES)
        assert "<script" not in page and "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained


def tampered_capture(folder: Path) -> Path:
    """The real capture with its second request's first message (the session prefix) dropped."""
    lines = (REAL_LOG_DIR / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    second = json.loads(lines[1])
    second["request"]["messages"] = second["request"]["messages"][1:]
    tampered = folder / "requests.jsonl"
    tampered.write_text("\n".join([lines[0], json.dumps(second), lines[2]]) + "\n", encoding="utf-8")
    return tampered


@pytest.mark.spec("CLI-7")
@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_the_real_log_draws_a_finding_only_where_the_capture_was_tampered(suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not REAL_LOG_DIR.exists():
        pytest.skip(f"the shared reference log is absent: {REAL_LOG_DIR}")
    events, requests = REAL_LOG_DIR / "events.jsonl", REAL_LOG_DIR / "requests.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines()
    clean = tmp_path / f"clean{suffix}"
    draw(capsys, str(events), "--requests", str(requests), "--out", str(clean))
    root = picture(clean)
    assert len(marks(root, "step")) == count(lines, STEP_START) == 3
    assert len(marks(root, "header")) == count(lines, REQUEST_HEADER) == 1
    assert marks(root, "finding") == [] and [r.get("class") for r in marks(root, "request")] == ["request conforms"] * 3

    tampered = tampered_capture(tmp_path)
    bad = tmp_path / f"bad{suffix}"
    draw(capsys, str(events), "--requests", str(tampered), "--out", str(bad))
    root, report = picture(bad), check_log(events, tampered)
    found = marks(root, "finding")
    assert len(found) == len(report.findings) > 0  # every finding of the check, each its own marker
    assert [title(f) for f in found] == [str(f) for f in report.findings]
    first = next(f for f in report.findings if f.rule == "REC-1")
    assert (first.request, first.path) == (1, "/messages/0")
    request = {r.get("data-request"): r for r in marks(root, "request")}
    assert request["0"].get("class") == "request conforms" and request["1"].get("class") == "request violates"
    assert "finding(s)" in title(request["1"]) and "names turn 1 step 2" in title(request["1"])
    second_step = marks(root, "step")[1]  # turn 1 step 2 sent the tampered request: flagged, and the guide runs through it
    assert "flagged" in (second_step.get("class") or "").split() and "flagged" not in (marks(root, "step")[0].get("class") or "")
    assert {g.get("x1") for g in marks(root, "guide")} >= {f.get("points", "").split(",")[0] for f in found[:1]}
    if suffix == ".html":
        page = bad.read_text(encoding="utf-8")
        assert f"Findings ({len(report.findings)})" in page and html.escape(str(first).splitlines()[0]) in page


@pytest.mark.spec("CLI-7")
def test_the_same_input_gives_the_same_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = run_witness(HARNESS)
    log, capture = write_session(world, "s1", tmp_path, "zstd")
    for suffix in (".svg", ".html"):
        first, second = tmp_path / f"one{suffix}", tmp_path / f"two{suffix}"
        draw(capsys, str(log), "--requests", str(capture), "--out", str(first))
        draw(capsys, str(log), "--requests", str(capture), "--out", str(second))
        assert first.read_bytes() == second.read_bytes()
    # Another process with another string hash order: still the same bytes.
    again = tmp_path / "again.svg"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    done = subprocess.run([*COMMAND, str(log), "--requests", str(capture), "--out", str(again)], capture_output=True, text=True, env=env, timeout=HANG)
    assert done.returncode == 0, done.stderr
    assert again.read_bytes() == (tmp_path / "one.svg").read_bytes()


@pytest.mark.spec("CLI-7", "FMT-9")
def test_it_reads_what_check_reads_every_form_and_a_pipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = run_witness(HARNESS)
    drawn = []
    for form in ("memory", "persisted", "zstd"):
        folder = tmp_path / form
        folder.mkdir()
        log, capture = write_session(world, "s1", folder, form)
        out = folder / "s1.svg"
        draw(capsys, str(log), "--requests", str(capture), "--session", "s1", "--out", str(out))
        drawn.append(lanes(picture(out)))
        piped = folder / "piped.svg"
        done = subprocess.run([*COMMAND, "-", "--requests", str(capture), "--session", "s1", "--out", str(piped)], input=log.read_bytes(),
                              capture_output=True, timeout=HANG)  # fmt: skip
        assert done.returncode == 0, done.stderr
        drawn.append(lanes(picture(piped)))
    assert all(lanes_ == drawn[0] for lanes_ in drawn)  # the same picture from every form, from a file or a pipe
    root = picture(tmp_path / "zstd" / "s1.svg")
    events = world.session("s1").log.events
    assert len(marks(root, "step")) == sum(1 for e in events if e.type == STEP_START)
    assert len(marks(root, "header")) == sum(1 for e in events if e.type == REQUEST_HEADER) == 4
    assert len(marks(root, "compaction")) == 1
    assert len(marks(root, "replace")) == sum(1 for e in events if isinstance(e.surface_op, Replace)) == 1
    # The witness's auxiliary request (the compaction summarizer) was not checked, and says so.
    unchecked = [r for r in marks(root, "request") if "unchecked" in (r.get("class") or "")]
    assert unchecked and "auxiliary" in title(unchecked[0])


@pytest.mark.spec("CLI-7")
def test_a_lane_that_holds_more_than_it_draws_says_how_many_it_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    world = run_witness(HARNESS)
    log, capture = write_session(world, "s1", tmp_path, "memory")
    lines = capture.read_text(encoding="utf-8").splitlines()
    at = max(k for k, line in enumerate(lines) if "agentLoopRequest" not in json.loads(line))
    last = json.loads(lines[at])
    last["messages"] = last["messages"][1:]  # a finding at the last loop step: it must be drawn whatever is left out
    lines[at] = json.dumps(last)
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(timeline, "MAX_DRAWN", 2)
    out = tmp_path / "capped.svg"
    said = draw(capsys, str(log), "--requests", str(capture), "--session", "s1", "--out", str(out))
    root = picture(out)
    steps = sum(1 for e in world.session("s1").log.events if e.type == STEP_START)
    assert len(marks(root, "step")) == 2 < steps
    notes = [e.text for e in root.iter(f"{SVG}text") if e.get("class") == "note"]
    assert f"… {steps - 2} more not drawn" in notes and "items not drawn" in said
    assert "flagged" in (marks(root, "step")[-1].get("class") or "").split()  # the step with the finding is kept
    assert any("violates" in (r.get("class") or "") for r in marks(root, "request"))


@pytest.mark.spec("CLI-7")
def test_odd_characters_in_event_fields_are_replaced_not_fatal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": "\ud800<&>\u0001"}},
        {"type": "user/message", "seq": 1, "time": 1, "data": {"content": [{"type": "text", "text": "a\udfffb\u0007"}], "source": {"kind": "user"}},
         "surfaceOp": "append"},
        {"type": "step/start", "seq": 2, "time": 2, "data": {"turn": {"x": ["\udbff"]}, "step": True}},
        {"type": "request/header", "seq": 3, "time": 3, "data": {"reason": "\u0002odd", "header": {"config": {"provider": "p", "model": "m\u0000"},
         "system": "s", "tools": [], "messagePrefix": [{"role": "user", "content": [{"type": "text", "text": "\ud800 \uffff"}]}, 7]}}},
        {"type": "weird/\ud800", "seq": 4, "time": 4, "data": [1]},
        {"type": "step/end", "seq": 5, "time": 5, "data": None},
    ]  # fmt: skip
    log = tmp_path / "odd.events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    for suffix in (".svg", ".html"):
        out = tmp_path / f"odd{suffix}"
        draw(capsys, str(log), "--out", str(out))
        root = picture(out)  # parses: every character is one XML may hold
        text = out.read_text(encoding="utf-8")
        assert "\ufffd" in text and "\x01" not in text and "\x00" not in text
        assert len(marks(root, "header")) == 1 and "\ufffd" in title(marks(root, "header")[0])
        assert len(marks(root, "finding")) == len(check_log(log).findings) > 0


@pytest.mark.spec("CLI-7", "CLI-2")
def test_unusable_input_exits_2_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "kept.svg"
    out.write_text("the previous picture", encoding="utf-8")

    def timeline_of(*args: str, data: bytes | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*COMMAND, *args], input=None if data is None else data.decode(), capture_output=True, text=True, timeout=HANG)

    assert_one_line_error(timeline_of(str(tmp_path / "absent.jsonl"), "--out", str(out)), "absent.jsonl", "FMT-1")
    broken = tmp_path / "broken.jsonl"  # a persisted header line it cannot use: nothing after it can be read (a damaged event line is drawn)
    broken.write_text('{"type":"session","id":"s"}\n{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}\n')
    assert_one_line_error(timeline_of(str(broken), "--out", str(out)), "broken.jsonl:1:", "FMT-10")
    assert_one_line_error(timeline_of("-", "--out", str(out), data=broken.read_bytes()), "/dev/stdin:1:", "FMT-10")
    assert_one_line_error(timeline_of("-", "--out", str(out), data=b""), "/dev/stdin", "FMT-1")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n")
    assert_one_line_error(timeline_of("--example", "--requests", str(garbage), "--out", str(out)), "garbage.jsonl:1:", "CAP-1")
    assert out.read_text(encoding="utf-8") == "the previous picture"  # never a partial or an empty picture
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.jsonl", "garbage.jsonl", "kept.svg"]  # no temporary file left


@pytest.mark.spec("CLI-7")
def test_an_out_that_is_not_svg_or_html_or_is_a_directory_exits_2(tmp_path: Path) -> None:
    for out, needle in ((tmp_path / "picture.png", ".svg or .html"), (tmp_path / "picture", ".svg or .html"), (tmp_path, "is a directory"),
                        (tmp_path / "no-such-dir" / "p.svg", "cannot write")):  # fmt: skip
        done = subprocess.run([*COMMAND, "--example", "--out", str(out)], capture_output=True, text=True, timeout=HANG)
        assert_one_line_error(done, str(out), needle)
    (tmp_path / "folder.svg").mkdir()
    assert_one_line_error(subprocess.run([*COMMAND, "--example", "--out", str(tmp_path / "folder.svg")], capture_output=True, text=True, timeout=HANG),
                          "is a directory")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.svg"]


@pytest.mark.spec("CLI-7")
def test_timeline_help_teaches_what_each_lane_shows() -> None:
    done = subprocess.run([*COMMAND, "--help"], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0
    for lane, _ in timeline.LANES:
        assert f"\n  {lane} " in done.stdout
    assert "example:" in done.stdout and "exit status" in done.stdout and "messagePrefix" in done.stdout and "not draw" in done.stdout


@pytest.mark.spec("CLI-7", "CHK-4")
def test_a_damaged_line_is_drawn_as_its_finding_and_the_rest_is_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = run_witness(HARNESS)
    log, capture = write_session(world, "s1", tmp_path, "memory")
    lines = log.read_text(encoding="utf-8").splitlines()
    chunk = next(i for i, line in enumerate(lines) if '"type":"assistant/chunk"' in line and i > len(lines) // 2)
    lines[chunk] = "not json"  # a chunk: no message of any request derives from it
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "s1.svg"
    draw(capsys, str(log), "--requests", str(capture), "--out", str(out))  # exit 0: the check read on past the line
    root = picture(out)
    assert [title(m).split(" ")[0] for m in marks(root, "finding")] == ["FMT-1"]
    events = world.session("s1").log.events
    assert len(marks(root, "step")) == sum(1 for e in events if e.type == STEP_START)  # the one line lost held no step
