"""§17 — ``prefix-model timeline`` for long logs: a range of seqs, a window around a seq, a window per finding one click away, a complete legend.

The pictures are drawn as the installed command draws them (a child process, contracts off): the
check's contracts are the checker's tests' business, and on here they made each drawing 20 times slower.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from functools import cache
from pathlib import Path
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

import pytest
from prefix_model.core.json_values import freeze_object
from prefix_model.core.log import Log
from prefix_model.edge import timeline
from prefix_model.edge.checker import check_log
from prefix_model.edge.cli import main
from prefix_model.loop.actions import BeginStep, Compose, Create, Dispatch, PostStep, PreStep, Register, Reply, SendPrompt
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.transitions import run
from prefix_model.loop.variants import run_witness
from prefix_model.loop.world import Listener, Prepend, World, text_message

from tests.conftest import HANG
from tests.edge.test_checker import write_session
from tests.edge.test_cli import CONTRACTS_OFF, assert_one_line_error
from tests.edge.test_timeline import COMMAND, SVG, marks, picture

TURNS, CHUNKS = 5, 80  # a log of over four hundred events: long enough that a window is a small part of it


@cache
def _world() -> World:
    """A session of ``TURNS`` turns, each reply streamed in ``CHUNKS`` chunks (so most events are chunks, as in a real log)."""
    chunks = tuple(freeze_object({"type": "text-delta", "index": 0, "text": "x"}) for _ in range(CHUNKS))
    stream = (*chunks, freeze_object({"type": "finish", "reason": {"kind": "stop"}}))
    actions: list[object] = [Register(Listener("skills", None, (Prepend((text_message("<skill>"),)),))), Create("main", "s1", system="careful")]
    for turn in range(TURNS):
        actions += [SendPrompt(0, f"task {turn}"), BeginStep(0), *([Compose(0)] if turn == 0 else []), PreStep(0), Dispatch(0),
                    Reply(0, stream=stream), PostStep(0)]  # fmt: skip
    return run(tuple(actions))  # type: ignore[arg-type]


@pytest.fixture
def long_log(tmp_path: Path) -> tuple[Path, Path, int, int]:
    """The long session and its capture with one request tampered (turn 4's): the log, the capture, the finding's seq, the last seq."""
    log, capture = write_session(_world(), "s1", tmp_path, "zstd")
    lines = capture.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    record["messages"] = record["messages"][1:]
    lines[3] = json.dumps(record)
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    events: Log = _world().session("s1").log
    assert len(events.events) > 400
    return log, capture, _finding_seq(log, capture), len(events.events) - 1


_found: list[int] = []


def _finding_seq(log: Path, capture: Path) -> int:
    """The seq of the tampered request's findings (all at one seq), checked once per process: every copy of the pair is the same bytes."""
    if not _found:
        seqs = {f.seq for f in check_log(log, capture).findings}
        assert len(seqs) == 1 and None not in seqs
        _found.extend(seq for seq in seqs if seq is not None)
    return _found[0]


def draw(_: object, *args: str) -> str:
    """Run ``prefix-model timeline ARGS`` as a user does; return its one stdout line (exit 0 asserted)."""
    done = subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=HANG, env=CONTRACTS_OFF)
    assert done.returncode == 0 and done.stdout.count("\n") == 1, done.stderr
    return done.stdout


def _seqs(root: Element) -> list[int]:
    """The seqs of the marks drawn at one seq (a turn, step or compaction bar names its start, which may lie before the axis)."""
    spans = {"turn", "step", "compaction"}
    return [int(e.get("data-seq", "")) for e in root.iter() if e.get("data-seq") is not None and not spans & set(e.get("class", "").split())]


def _lanes(root: Element) -> list[bytes]:
    return [ElementTree.tostring(g) for g in root.iter(f"{SVG}g") if g.get("class") == "lane"]


@pytest.mark.spec("CLI-12")
def test_from_and_to_draw_only_those_seqs_and_count_the_findings_outside(long_log: tuple[Path, Path, int, int], tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    log, capture, at, last = long_log
    out = tmp_path / "early.svg"
    said = draw(capsys, str(log), "--requests", str(capture), "--from", "50", "--to", "200", "--out", str(out))
    root = picture(out)
    assert "seqs 50..200 drawn" in said and at > 200 and _seqs(root) and all(50 <= seq <= 200 for seq in _seqs(root))
    assert marks(root, "finding") == []
    heading = " ".join(e.text or "" for e in root.iter(f"{SVG}text") if e.get("class") == "muted")
    assert f"seqs 50..200 of 0..{last} (1 finding(s) outside)" in heading
    ticks = [int(e.text or "") for e in root.iter(f"{SVG}text") if (e.text or "").isdigit() and e.get("text-anchor") == "middle"]
    assert ticks and all(50 <= t <= 200 for t in ticks)
    assert all(float(r.get("x", "0")) >= timeline.LEFT for r in marks(root, "turn") + marks(root, "step"))  # spans cut to the axis
    whole = tmp_path / "whole.svg"
    draw(capsys, str(log), "--requests", str(capture), "--out", str(whole))
    assert len(_seqs(picture(whole))) > len(_seqs(root))


@pytest.mark.spec("CLI-12")
def test_around_is_the_range_of_context_seqs_each_side(long_log: tuple[Path, Path, int, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log, capture, at, _ = long_log
    around, ranged = tmp_path / "around.svg", tmp_path / "ranged.svg"
    draw(capsys, str(log), "--requests", str(capture), "--around", str(at), "--context", "25", "--out", str(around))
    draw(capsys, str(log), "--requests", str(capture), "--from", str(at - 25), "--to", str(at + 25), "--out", str(ranged))
    assert _lanes(picture(around)) == _lanes(picture(ranged))
    assert [m.get("data-seq") for m in marks(picture(around), "finding")] == [str(at)]


@pytest.mark.spec("CLI-12")
def test_each_finding_is_one_click_from_its_window(long_log: tuple[Path, Path, int, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36: a 20k-event log scrolled sideways with its one finding off screen."""
    log, capture, at, _ = long_log
    page = tmp_path / "where.html"
    said = draw(capsys, str(log), "--requests", str(capture), "--findings", "--context", "30", "--out", str(page))
    text = page.read_text(encoding="utf-8")
    assert "1 window(s) around findings" in said
    count = len(check_log(log, capture).findings)
    assert text.count('<a href="#window-1">') == 2 * count  # each finding's marker in the picture, and its line in the list
    section = text[text.index('<section id="window-1">') :]
    window = ElementTree.fromstring(section[section.index("<svg") : section.index("</svg>") + 6])
    assert [m.get("data-seq") for m in marks(window, "finding")] == [str(at)] * count and all(at - 30 <= s <= at + 30 for s in _seqs(window))
    assert f"REC-1 at seq {at}" in section[: section.index("<svg")]
    overview = picture(page)
    links = [a for a in overview.iter(f"{SVG}a") if a.get("href") == "#window-1"]
    assert len(links) == count and all(a.find(f"{SVG}polygon") is not None for a in links)
    svg = tmp_path / "where.svg"
    draw(capsys, str(log), "--requests", str(capture), "--findings", "--out", str(svg))
    root = ElementTree.parse(svg).getroot()
    assert [child.get("id") for child in root] == ["overview", "window-1"] and float(root[1].get("y", "0")) > 0


@pytest.mark.spec("CLI-12")
def test_without_windows_the_page_links_each_finding_to_its_marker(long_log: tuple[Path, Path, int, int], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    log, capture, at, _ = long_log
    page = tmp_path / "where.html"
    draw(capsys, str(log), "--requests", str(capture), "--out", str(page))
    text = page.read_text(encoding="utf-8")
    targets = re.findall(r'<li id="listed-\d+"><a href="#([^"]+)">seq (\d+): show</a>', text)
    assert targets and all(seq == str(at) for _, seq in targets)
    ids = {e.get("id") for e in picture(page).iter()}
    assert all(target in ids for target, _ in targets)


@pytest.mark.spec("CLI-12", "CLI-2")
def test_a_range_the_log_does_not_reach_is_one_line_and_exit_2(long_log: tuple[Path, Path, int, int], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    log, _, _, last = long_log
    out = tmp_path / "none.svg"
    for args, needle in ((["--around", str(last + 1)], f"the log's last seq is {last}"), (["--from", str(last + 5)], f"the log's last seq is {last}"),
                         (["--from", "50", "--to", "20"], "--from 50 is after --to 20"), (["--around", "5", "--from", "1"], "without --from")):  # fmt: skip
        assert main(["timeline", str(log), *args, "--out", str(out)]) == 2
        said = capsys.readouterr()
        assert_one_line_error(subprocess.CompletedProcess([], 2, said.out, said.err), needle)
    assert not out.exists()
    done = subprocess.run([*COMMAND, str(log), "--around", str(last + 1), "--out", str(out)], capture_output=True, text=True, timeout=HANG, env=CONTRACTS_OFF)
    assert_one_line_error(done, "--around")  # as a user runs it


@pytest.mark.spec("CLI-12")
def test_the_legend_shows_every_kind_of_mark_the_picture_draws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36: the surface lane's colours were not in the legend. Every mark's colour classes have a swatch of the same classes."""
    assert {f"append {shade}" for shade in (*timeline._SURFACE_CLASS.values(), "other")} <= {c for _, c, _ in timeline.SWATCHES["surface"]}
    world = run_witness(HARNESS)
    log, capture = write_session(world, "s1", tmp_path, "memory")
    page = tmp_path / "s1.html"
    draw(capsys, str(log), "--requests", str(capture), "--out", str(page))
    text = page.read_text(encoding="utf-8")
    legend = text[text.index("<h2>Legend</h2>") : text.index('<h2 id="findings">')]
    keyed = {frozenset(c.split()) for c in re.findall(r'class="([^"]+)"/></svg>', legend)}
    drawn = {frozenset(e.get("class", "").split()) - {"elsewhere"} for e in picture(page).iter()
             if e.get("class") and e.tag.split("}")[1] in ("rect", "line", "circle", "polygon", "path") and e.get("class") not in ("lane-bg", "axis")}  # fmt: skip
    drawn = {classes - {"user", "assistant", "tool", "steering", "other"} if "replace" in classes else classes for classes in drawn}  # purple, whatever its type
    assert {frozenset(c.split()) for c in ("append user", "append tool", "replace", "header initial", "request conforms")} <= drawn  # the witness draws these
    missing = [sorted(c) for c in drawn if c not in keyed]
    assert missing == []
    for name, _ in timeline.LANES:
        assert f"<dt>{html.escape(name)}</dt>" in legend


@pytest.mark.spec("CLI-12")
def test_findings_close_together_share_one_window() -> None:
    """Windows that overlap or touch are merged; a finding outside the range drawn, or with no seq, gets none."""
    assert timeline.windows_around([15, 10, None, 100, 500], 5, 120, (0, 119)) == [(5, 20), (95, 105)]
    assert timeline.windows_around([10, 21], 5, 120, (0, 119)) == [(5, 26)]  # 15 and 16 touch
    assert timeline.windows_around([10, 22], 5, 120, (0, 119)) == [(5, 15), (17, 27)]
    assert timeline.windows_around([2, 118], 5, 120, (0, 119)) == [(0, 7), (113, 119)]  # cut to the log
    assert timeline.windows_around([2, 60], 5, 120, (50, 70)) == [(55, 65)]
