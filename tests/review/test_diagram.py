"""§14.6 the loop's state diagram: generated from the transitions, and SPEC.md shows exactly that."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prefix_model.loop.world import Phase
from prefix_model.review.diagram import dot, mermaid, transition_table

SPEC = Path(__file__).resolve().parents[2] / "spec" / "SPEC.md"


@pytest.mark.spec("REV-6")
def test_the_spec_shows_the_diagram_the_transitions_give() -> None:
    blocks = re.findall(r"```mermaid\n(.*?)```", SPEC.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks == [mermaid(transition_table())]


@pytest.mark.spec("REV-6")
def test_the_table_holds_the_loop_segments_in_order() -> None:
    table = set(transition_table())
    path = [("idle", "SendPrompt", "step-begin"), ("step-begin", "BeginStep", "compose"), ("compose", "Compose", "pre-step"),
            ("pre-step", "PreStep", "request"), ("request", "Dispatch", "stream"), ("stream", "Reply tool calls", "tools"),
            ("tools", "RunTools", "post-step"), ("post-step", "PostStep", "step-begin"), ("step-begin", "BeginStep", "pre-step"),
            ("stream", "Reply text", "post-step"), ("post-step", "PostStep", "idle"), ("stream", "Reply failure, retry", "step-begin")]  # fmt: skip
    assert set(path) <= table
    assert {p.value for p in Phase} == {s for s, _, _ in table} | {t for _, _, t in table}
    assert not [e for e in table if e[0] == "disposed"]  # disposal is final
    assert ("step-begin", "BeginStep", "compose") in table and ("post-step", "PostStep", "compose") not in table  # composition only at a step's start


@pytest.mark.spec("REV-6")
def test_both_forms_draw_every_arrow() -> None:
    table = transition_table()
    drawn = dot(table)
    assert all(f'"{s}" -> "{t}"' in drawn for s, _, t in table)
    assert all(f"{s.replace('-', '_')} --> {t.replace('-', '_')}" in mermaid(table) for s, _, t in table)
