"""§22 `prefix-model review`: both tables and their legends, every counterexample in brief, the plot, the diagram alone, and its one-line errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from prefix_model.core.json_values import freeze
from prefix_model.edge import cli
from prefix_model.edge import review as review_edge
from prefix_model.vectors.codec import action_from_json
from prefix_model.review.brief import action_brief
from prefix_model.review.compare import FRESH, RULES, rule_legend
from prefix_model.review.designs import DESIGNS

from tests.review_rows import rows

# One process computes the comparison for every test that reads it (make test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("review-rows")


@pytest.fixture(autouse=True)
def computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serve the command the comparison this process already computed (running every design is the slow part)."""
    monkeypatch.setattr(review_edge, "compare", lambda turns: rows())


def _unwrapped(out: str) -> str:
    """The text with every wrapped line joined again (a continuation is indentation, maybe ``↪``, after a line break)."""
    return re.sub(r"\n +(?:↪ )?", " ", out)


@pytest.mark.spec("CLI-9")
def test_review_prints_both_tables_the_claims_and_every_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["review"]) == 0
    out = capsys.readouterr().out
    headers = [line.split() for line in out.splitlines() if line.startswith("design ") and "requests" not in line and "history" not in line]
    assert [rule for header in headers for rule in header[1:]] == [rule for rule, _ in RULES]  # split into parts, each led by the design column
    assert all(sum(line.startswith(d.key + " ") for line in out.splitlines()) >= 2 * len(headers) for d in DESIGNS)
    assert "hit" in out and "opener paid" in out and "[holds" in out
    joined = _unwrapped(out)
    for r in rows():
        for example in r.counterexamples:
            assert f"{example.design} ✗ {example.rule}: {len(example.actions)} actions" in out
            assert all(action_brief(a) in joined for a in example.actions)


@pytest.mark.spec("REV-7")
def test_review_text_fits_100_columns_and_shows_no_python(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36: 1,548 lines up to 549 characters, 94 of them reprs; tool calls and results as ``assistant: ''``."""
    assert cli.main(["review"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= review_edge.WIDTH
    for python in ("FrozenMap(", "Listener(", "AgentOptions(", "=(", "=None", "''", "{'"):
        assert python not in out, python
    assert 'assistant tool call echo {"text":"ok"}' in out and 'user tool result for c-task 1: "echo: ok"' in out
    assert "↪ " in out  # the long actions wrapped, each continuation marked


@pytest.mark.spec("REV-7")
def test_an_action_longer_than_its_lines_is_cut_with_a_marker() -> None:
    long = review_edge._fit("x " * 400, "    1 ", "      ", review_edge.ACTION_LINES, review_edge.CONTINUED)
    assert len(long) == review_edge.ACTION_LINES and long[-1].endswith("(cut; --json shows it whole)")
    assert all(len(line) <= review_edge.WIDTH for line in long) and all(line.startswith("      ↪ ") for line in long[1:])


@pytest.mark.spec("REV-7")
def test_every_column_has_a_legend_and_the_baselines_own_cross_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["review"]) == 0
    out = capsys.readouterr().out
    legend = out.split("What each column checks", 1)[1].split("\n\n", 2)[1]
    assert [line.split()[0] for line in legend.splitlines() if not line.startswith(" " * 4)] == [rule for rule, _ in RULES]
    assert dict(rule_legend())[FRESH] in _unwrapped(legend)
    costs = out.split("What each column shows", 1)[1].split("\n\n", 2)[1]
    headers = "  ".join(line for line in out.splitlines() if line.startswith("design ") and not {"PFX-1", "PFX-12"} & set(line.split()))
    assert [column for column, _ in review_edge.COST_LEGEND] == [c for c in re.split(r"  +", headers) if c != "design"]
    assert all(f"  {column} " in costs for column, _ in review_edge.COST_LEGEND)
    baseline = rows()[0]
    assert FRESH in baseline.failed  # the design under review shows ✗ under fresh ...
    why = _unwrapped(out.split(f"Why {baseline.design.key}, the design under review, shows ✗", 1)[1].split("\n\nStaleness", 1)[0])
    assert f"{baseline.design.key} ✗ fresh: {baseline.measures.stale} of {baseline.measures.requests} requests" in why  # ... and says why
    assert "not a requirement of §11" in why


@pytest.mark.spec("CLI-9")
def test_review_short_prints_one_line_per_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["review", "--short"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len([l for l in lines if re.match(r"^\S+ ✗ \S+: \d+ actions over ", l)]) == sum(len(r.counterexamples) for r in rows())
    assert not any(l.startswith("     1 Register(") for l in lines)


@pytest.mark.spec("CLI-9", "REV-7")
def test_review_json_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "review.png"
    assert cli.main(["review", "--json", "--plot", str(plot)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["version"] == 2 and [d["design"] for d in record["designs"]] == [d.key for d in DESIGNS]
    assert [d["fails"] for d in record["designs"]] == [list(r.failed) for r in rows()]
    assert len(record["claims"]) == 9 and list(record["legend"]) == [rule for rule, _ in RULES]
    for d, r in zip(record["designs"], rows()):  # every action whole, in the vectors' action JSON: it decodes to itself
        for shown, example in zip(d["counterexamples"], r.counterexamples):
            assert tuple(action_from_json(freeze(a)) for a in shown["actions"]) == example.actions
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.spec("CLI-9")
@pytest.mark.parametrize("form", ["mermaid", "dot"])
def test_review_diagram_prints_the_diagram_alone_fenced_for_markdown(form: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36: it printed after the whole review, unfenced; now no review is computed at all."""
    monkeypatch.setattr(review_edge, "compare", lambda turns: pytest.fail("--diagram ran the review"))
    assert cli.main(["review", "--diagram", form]) == 0
    out = capsys.readouterr().out
    assert out == f"```{form}\n{review_edge.diagram(form).rstrip(chr(10))}\n```\n"
    assert cli.main(["review", "--diagram", form, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": 2, "form": form, "diagram": review_edge.diagram(form)}


@pytest.mark.spec("CLI-9", "CLI-2")
def test_review_diagram_with_review_options_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["review", "--diagram", "mermaid", "--short", "--turns", "2"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--short, --turns" in err


@pytest.mark.spec("CLI-9")
def test_designs_with_equal_curves_all_stay_visible_in_the_plot() -> None:
    """Issue 36: two designs with identical values hid the baseline's line; now equal curves nest, each with its own marker."""
    lines = review_edge.plot_lines(rows())
    groups: dict[tuple[int, ...], list[tuple[str, dict[str, object]]]] = {}
    for label, ys, style in lines:
        groups.setdefault(ys, []).append((label, style))
    shared = [group for group in groups.values() if len(group) > 1]
    assert shared and lines[0][0] == DESIGNS[0].key and len(groups[lines[0][1]]) > 1  # the scenario has them, the baseline among them
    for group in shared:
        widths = [float(str(style["linewidth"])) for _, style in group]
        orders = [int(str(style["zorder"])) for _, style in group]
        assert widths == sorted(widths, reverse=True) and len(set(widths)) == len(widths)  # drawn first = widest, under the rest
        assert orders == sorted(orders) and len({style["marker"] for _, style in group}) == len(group)
        first = group[0][0]
        assert all(label.endswith(f"(same as {first})") for label, _ in group[1:])


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
