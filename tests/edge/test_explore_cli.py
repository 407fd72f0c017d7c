"""§17 — ``prefix-model explore``: the report, the verdict, the ITF counterexample, and unusable arguments (CLI-8).

Run as a user runs it, in a subprocess (contracts on, as ``python -m prefix_model.edge.cli`` keeps
them), at small depths; the bounds that pin counts are tests/loop/test_explore.py's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from itf_py import trace_from_json
from prefix_model.loop.explore import ACTION_KINDS, ALPHABET_TEXT, OUTCOMES, ROOT_NAMES

from tests.conftest import HANG
from tests.edge.test_cli import assert_one_line_error


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "explore", *args], capture_output=True, text=True, timeout=HANG)


@pytest.mark.spec("CLI-8")
def test_the_harness_report_names_every_kind_and_marks_the_unreached() -> None:
    result = run("--depth", "2", "--roots", "prepend")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "distinct states" in text and "states/s" in text and "bytes per state" in text and "no violation" in text
    for kind in ACTION_KINDS + OUTCOMES:
        assert f"  {kind} " in text
    assert "Dispatch" in text.split("unreached at this depth:")[1]  # two moves send no request: listed, not hidden
    assert "not in the alphabet: Create, Register" in text


@pytest.mark.spec("CLI-8")
def test_the_json_report() -> None:
    result = run("--depth", "2", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["depth"] == 2 and report["reached"] == 2 and report["violation"] is None
    assert report["states"] == sum(report["levels"]) and report["levels"][0] == len(ROOT_NAMES) == 7  # six behaviours of L2, one seeded root
    assert report["roots"] == list(ROOT_NAMES)
    assert list(report["actions"]) == list(ACTION_KINDS) and list(report["outcomes"]) == list(OUTCOMES)
    assert report["statesPerSecond"] > 0 and report["bytesPerState"]["visited"] > 16
    assert "Dispatch" in report["unreached"]["actions"] and "request sent" in report["unreached"]["outcomes"]


@pytest.mark.spec("CLI-8")
def test_help_states_the_alphabet() -> None:
    result = run("--help")
    assert result.returncode == 0
    flat = " ".join(result.stdout.split())
    assert " ".join(ALPHABET_TEXT.split()) in flat


def _is_itf(value: Any) -> bool:
    """Whether ``value`` is an ITF value (ADR-015): no null, no bare number, every object one of its forms."""
    if isinstance(value, bool | str):
        return True
    if isinstance(value, list):
        return all(_is_itf(v) for v in value)
    if not isinstance(value, dict):
        return False
    if set(value) == {"#bigint"}:
        return isinstance(value["#bigint"], str) and value["#bigint"].lstrip("-").isdigit()
    if set(value) in ({"#tup"}, {"#set"}):
        return isinstance(next(iter(value.values())), list) and all(_is_itf(v) for v in next(iter(value.values())))
    if set(value) == {"#map"}:
        return all(isinstance(p, list) and len(p) == 2 and _is_itf(p[0]) and _is_itf(p[1]) for p in value["#map"])
    return all(not k.startswith("#") and _is_itf(v) for k, v in value.items())  # a record, or a variant {tag, value}


@pytest.mark.spec("CLI-8")
def test_a_caught_variant_writes_its_shortest_script_as_an_itf_trace(tmp_path: Path) -> None:
    out = tmp_path / "cx.itf.json"
    result = run("--depth", "4", "--roots", "prepend", "--variant", "prefix-as-history", "--itf", str(out))
    assert result.returncode == 0, result.stderr
    assert "VIOLATION at depth 3: PFX-1" in result.stdout and "shortest script (6 actions" in result.stdout
    document = json.loads(out.read_text(encoding="utf-8"))
    assert set(document) == {"#meta", "vars", "states"}
    assert document["vars"] == ["action", "sessions", "requests", "instances", "violations"]
    states = document["states"]
    assert len(states) == 6 + 1  # the empty world, then one state per action
    assert all(set(s) == {"#meta", *document["vars"]} and _is_itf({k: v for k, v in s.items() if k != "#meta"}) for s in states)
    assert states[0]["action"] == "init" and states[0]["violations"] == []
    assert states[-1]["action"].startswith("Compose(") and any(v.startswith("PFX-1") for v in states[-1]["violations"])
    trace = trace_from_json(document)  # itf-py reads it back
    assert len(trace.states) == 7 and trace.states[-1].values["sessions"][0].id == "s1"
    assert not _is_itf({"seq": 3}) and not _is_itf({"x": None})  # the shape check refuses bare numbers and null


@pytest.mark.spec("CLI-8")
def test_a_variant_not_caught_within_the_depth_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "cx.itf.json"
    result = run("--depth", "1", "--roots", "prepend", "--variant", "prefix-as-history", "--itf", str(out))
    assert result.returncode == 1
    assert "NOT caught" in result.stdout and "no ITF trace was written" in result.stderr
    assert not out.exists()


@pytest.mark.spec("CLI-8")
def test_unusable_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    assert_one_line_error(run("--depth", "1", "--variant", "no-such-design"), "no-such-design", "compose-per-turn")
    assert_one_line_error(run("--depth", "1", "--roots", "prepend,juggle"), "juggle", "short-circuit")
    assert_one_line_error(run("--depth", "4", "--roots", "prepend", "--variant", "prefix-as-history", "--itf", str(tmp_path)), str(tmp_path))
    bad = run("--depth", "-1")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.spec("CLI-8")
def test_two_processes_give_the_counts_of_one_and_the_same_shortest_violation() -> None:
    keys = ("states", "transitions", "levels", "actions", "outcomes", "reached")
    one, two = (json.loads(run("--depth", "3", "--json", "--jobs", jobs).stdout) for jobs in ("1", "2"))
    assert {k: one[k] for k in keys} == {k: two[k] for k in keys}
    caught = [json.loads(run("--depth", "5", "--roots", "prepend", "--variant", "prefix-not-logged", "--json", "--jobs", jobs).stdout)["violation"]
              for jobs in ("1", "2")]  # fmt: skip
    assert caught[0]["depth"] == caught[1]["depth"] == 5 and caught[0]["rules"] == caught[1]["rules"]
    # The seeded root violates at depth 0 (10 actions); both searches go on to the fresh root's 6.
    shortest = [json.loads(run("--depth", "5", "--roots", "prepend,drift-after-turn", "--variant", "prefix-as-history", "--json", "--jobs", jobs).stdout)["violation"]
                for jobs in ("1", "2")]  # fmt: skip
    assert [(v["depth"], v["length"]) for v in shortest] == [(3, 6), (3, 6)]
    assert_one_line_error(run("--depth", "1", "--jobs", "0"), "--jobs")
