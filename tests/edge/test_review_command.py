"""§16.7 `prefix-model review`: both tables, every counterexample, the plot, the diagram, and its one-line errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from prefix_model.edge import cli
from prefix_model.edge import review as review_edge
from prefix_model.review.compare import RULES
from prefix_model.review.designs import DESIGNS

from tests.review_rows import rows

# One process computes the comparison for every test that reads it (make test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("review-rows")


@pytest.fixture(autouse=True)
def computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serve the command the comparison this process already computed (running every design is the slow part)."""
    monkeypatch.setattr(review_edge, "compare", lambda turns: rows())


@pytest.mark.spec("CLI-9")
def test_review_prints_both_tables_the_claims_and_every_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["review"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("design ") and "PFX-1" in line)
    assert header.split() == ["design", *(rule for rule, _ in RULES)]
    assert all(any(line.startswith(d.key + " ") for line in out.splitlines()) for d in DESIGNS)
    assert "hit" in out and "opener paid" in out and "[holds" in out
    for r in rows():
        for example in r.counterexamples:
            assert f"{example.design} ✗ {example.rule}: {len(example.actions)} actions" in out
            assert repr(example.actions[-1]) in out


@pytest.mark.spec("CLI-9")
def test_review_short_prints_one_line_per_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["review", "--short"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len([l for l in lines if re.match(r"^\S+ ✗ \S+: \d+ actions over ", l)]) == sum(len(r.counterexamples) for r in rows())
    assert not any(l.startswith("     1 Register(") for l in lines)


@pytest.mark.spec("CLI-9")
def test_review_json_plot_and_diagram(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "review.png"
    assert cli.main(["review", "--json", "--plot", str(plot), "--diagram", "dot"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["version"] == 1 and [d["design"] for d in record["designs"]] == [d.key for d in DESIGNS]
    assert [d["fails"] for d in record["designs"]] == [list(r.failed) for r in rows()]
    assert record["diagram"].startswith("digraph loop {") and len(record["claims"]) == 9
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.spec("CLI-9", "CLI-2")
def test_review_with_an_unwritable_plot_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["review", "--plot", str(tmp_path / "no" / "such" / "dir.png")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("prefix-model: ") and "dir.png" in err[0]


@pytest.mark.spec("CLI-9", "CLI-2")
def test_review_plot_without_matplotlib_names_the_extra_in_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """matplotlib is the plot extra, not a dependency: an install without it says which extra, before any work."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what find_spec sees when it is not installed
    plot = tmp_path / "review.png"
    assert cli.main(["review", "--plot", str(plot)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "session-prefix-model[plot]" in err and "Traceback" not in err, err
    assert not plot.exists()
