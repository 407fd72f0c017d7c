"""The proof run's budget is a number of paths, so its verdict does not depend on the machine.

These run CrossHair itself on the smallest core module (two conditions, about two seconds a run):
the driver's path cap must be what stops the search, and two runs must explore the same paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proofs import mutation
from proofs.run import (
    CROSSHAIR_SKIPPED,
    DRIVER,
    PLUGIN,
    README,
    ROOT,
    Budget,
    Explored,
    Outcome,
    Stats,
    Target,
    child_env,
    coverage_changes,
    build_targets,
    coverage_of,
    readme_with_block,
)

from tests.conftest import HANG

TARGET = "prefix_model.core.events"  # three contracted functions, one postcondition each


def _crosshair(paths: int) -> tuple[str, Stats, tuple[Explored, ...]]:
    command = [sys.executable, *Budget(paths=paths).options(), TARGET, "--analysis_kind=icontract", "--extra_plugin", str(PLUGIN)]
    # Without the cap nothing else stops this search (no CPU budget, no uninteresting-iteration
    # limit): the timeout turns a cap that does not work into a failure instead of a hang.
    done = subprocess.run(command, cwd=ROOT, env=child_env() | Budget(paths=paths).env(), capture_output=True, text=True, timeout=HANG)
    stats = Stats.parse(done.stderr)
    assert done.returncode == 0 and stats is not None, done.stderr[-2000:]
    return done.stdout, stats, Explored.parse_all(done.stderr)


def test_the_path_cap_is_what_stops_the_search() -> None:
    for paths in (1, 3):
        _, stats, explored = _crosshair(paths)
        assert (stats.conditions, stats.paths) == (3, 3 * paths)  # the cap is per condition
        assert [(e.paths, e.exhausted, e.preconditions_unmet) for e in explored] == [(paths, False, False)] * 3
        assert sorted(e.function for e in explored) == ["check_envelope", "check_event", "seq_gap"]


def test_two_runs_explore_the_same_paths() -> None:
    first, second = _crosshair(20), _crosshair(20)
    assert first == second  # the CPU seconds the driver reports are a measurement, not compared
    assert first[1].paths == 3 * 20 and (first[1].path_timeouts, first[1].z3_unknown) == (0, 0)


def test_the_budget_reads_no_clock_unless_asked_to() -> None:
    by_paths, by_seconds = Budget(paths=20).options(), Budget(paths=None, seconds=20).options()
    assert [str(DRIVER), "--max_iterations", "20", "check"] == by_paths[:4]
    assert not any(o.startswith("--per_condition_timeout") for o in by_paths)
    assert "--max_uninteresting_iterations=0" in by_paths
    assert "--per_condition_timeout=20" in by_seconds
    assert "CROSSHAIR_SMT_RLIMIT" in Budget(paths=20).env() and Budget(paths=None, seconds=20).env() == {}
    assert Budget(paths=20).for_kind("bug").paths == 60 and Budget(paths=100).for_kind("bug").paths == 100
    assert Budget(paths=20).for_module("formats.plain").paths == 5 and Budget(paths=60).for_module("formats.plain").paths == 60
    assert Budget(paths=20).for_module("core.log").paths == 10 and Budget(paths=20).for_module("core.derive").paths == 20


def test_stats_are_read_from_the_drivers_last_line() -> None:
    stderr = 'noise\ncrosshair-fixed: {"conditions": 2, "paths": 7, "z3_rlimit": 3, "path_timeouts": 1, "z3_unknown": 0}\n'
    assert Stats.parse(stderr) == Stats(2, 7, 3, 1, 0)
    assert Stats.parse("a crash before the driver wrote anything") is None


def test_a_changed_exploration_of_a_chapter_function_fails_the_run() -> None:
    """What the default budget explores of each loop and conformance function is recorded; any change is a failure."""
    (target,), problems = build_targets(["conformance.vacuity"], ["core"])
    assert problems == []
    explored = tuple(Explored(s.qualname, s.line, 20, False, "UNKNOWN", False) for s in target.sites if s.qualname == "unread_run")
    table = coverage_of(target, explored)
    assert table["unread_run"] == [1, 0, 20, 0] and table["not_grown"] == [0, 0, 0, 0]  # a function no condition was seen of
    outcome = Outcome(target, Budget(), 1.0, True, "clean", (), "", None, explored)
    assert coverage_changes(outcome, {"conformance.vacuity": table}) == []
    proved = {"conformance.vacuity": table | {"unread_run": [1, 1, 3, 0]}}
    assert coverage_changes(outcome, proved) == [
        "conformance.vacuity.unread_run: recorded [1, 1, 3, 0], explored [1, 0, 20, 0] ([conditions, exhausted, paths, not explored])"
    ]
    assert coverage_changes(outcome, {}) == ["conformance.vacuity is not in coverage.json"]


def test_each_skipped_function_is_a_contracted_function_and_the_others_of_its_module_are_run_by_name() -> None:
    targets, problems = build_targets(list(CROSSHAIR_SKIPPED), ["core"])
    assert problems == [] and sorted(t.name for t in targets) == sorted(CROSSHAIR_SKIPPED)
    for target in targets:
        contracted = {s.qualname for s in target.sites}
        skipped = set(CROSSHAIR_SKIPPED[target.name])
        assert skipped <= contracted, f"{target.name}: {sorted(skipped - contracted)} carry no contract"
        assert all(reason.strip() for reason in CROSSHAIR_SKIPPED[target.name].values())
        assert set(target.functions) == contracted - skipped and {s.qualname for s in target.run} == contracted - skipped
        assert target.functions and len(target.run) < len(target.sites)
    [whole] = build_targets(["conformance.vacuity"], ["core"])[0]
    assert whole.functions == () and whole.run == whole.sites  # a module with nothing skipped is run whole


def test_the_readme_states_what_the_run_does() -> None:
    text = README.read_text(encoding="utf-8")
    assert readme_with_block(text) == text, "proofs/README.md is stale: run `.venv/bin/python proofs/run.py --write-readme`"


@pytest.mark.parametrize("argv", [["--paths", "0"], ["--seconds", "-1"], ["--paths", "5", "--deep"]])
def test_a_bad_budget_is_a_usage_error(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "proofs" / "run.py"), *argv], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2 and "Traceback" not in done.stderr


# --- the mutation runner's generator (proofs/mutation.py); no mutant is run here ------------------

SAMPLE = '''"""A docstring: True == 1 and not 0."""

import icontract

__all__ = ("f", "g")


@icontract.require(lambda x: x == 0 or not x, "X-1: a contract")
@icontract.ensure(lambda result: result != (1, 2), "X-2: another")
def f(x: int = 3, y: "tuple[int, int]" = (0, 1)) -> tuple[int, int] | None:
    """Return a pair: x < 2 and True."""
    limit: int = 7
    if x < 2 and not y:
        return (x, 0)
    check = icontract.ensure(lambda r: r > 5)
    return g(x, limit) if x in y else None


def g(a: int, b: int) -> bool:
    return f"{a + 1}" == str(b) or a is None
'''
# The lines of code that is neither a contract, an annotation, a docstring, an f-string nor __all__:
# line 10's defaults and line 12's value are code; line 15 is a contract applied as a call.
BODY_LINES = {10, 12, 13, 14, 16, 20}


def test_the_generator_never_touches_a_contract_an_annotation_a_docstring_or_all() -> None:
    mutants = mutation.mutants_of(SAMPLE)
    original = SAMPLE.splitlines()
    changed: set[int] = set()
    for mutant in mutants:
        lines = mutant.source.splitlines()
        assert len(lines) == len(original), mutant.id  # every other line keeps its number
        changed |= {n for n, (a, b) in enumerate(zip(original, lines), start=1) if a != b}
    assert changed == BODY_LINES, sorted(changed ^ BODY_LINES)
    assert {m.operator for m in mutants} == set(mutation.OPERATORS)
    assert not any("a + 2" in m.mutated_line for m in mutants)  # an f-string is text


def test_the_ids_are_stable_and_unique() -> None:
    first, second = mutation.mutants_of(SAMPLE), mutation.mutants_of(SAMPLE)
    assert [m.id for m in first] == [m.id for m in second]
    assert [m.source for m in first] == [m.source for m in second]
    assert len({m.id for m in first}) == len(first)
    derive = mutation.resolve_module("core/derive.py").read_text(encoding="utf-8")
    assert [m.id for m in mutation.mutants_of(derive)] == [m.id for m in mutation.mutants_of(derive)]


@pytest.mark.parametrize(
    ("mutant_id", "line"),
    [
        ("cmp:13:7:0", "    if (x >= 2) and not y:"),
        ("bool:13:17:0", "    if (x < 2 or not y):"),
        ("not:13:17:0", "    if x < 2 and y:"),
        ("const:13:11:0", "    if x < 3 and not y:"),
        ("const:13:11:1", "    if x < 1 and not y:"),
        ("return:14:8:0", "        return None"),
        ("tuple:14:15:1", "        return (x,)"),
        ("args:16:12:0", "    return g(limit, x) if x in y else None"),
        ("cmp:16:26:0", "    return g(x, limit) if (x not in y) else None"),
        ("cmp:20:11:0", "    return (f'{a + 1}' != str(b)) or a is None"),
        ("cmp:20:35:0", '    return f"{a + 1}" == str(b) or (a is not None)'),
    ],
)
def test_an_operator_gives_the_expected_line(mutant_id: str, line: str) -> None:
    by_id = {m.id: m for m in mutation.mutants_of(SAMPLE)}
    assert by_id[mutant_id].mutated_line == line


def test_a_module_is_run_against_its_chapters_tests() -> None:
    def tests(name: str) -> list[str]:
        return [p.relative_to(ROOT).as_posix() for p in mutation.tests_of(mutation.resolve_module(name))]

    assert tests("core/derive.py") == ["tests/core/test_derive.py"]
    assert tests("core.events") == ["tests/core/test_log.py"]  # README.md's §2 row
    assert tests("model/prefix_model/core/headers.py") == ["tests/core/test_headers.py", "tests/core/test_request_log.py"]


@pytest.mark.parametrize("listed", [mutation.EQUIVALENT, mutation.OUT_OF_SCOPE], ids=lambda p: p.name)
def test_every_equivalent_or_out_of_scope_mutant_is_still_there(listed: Path) -> None:
    """Each entry names a mutant the module still has: by its id, or by its line where an edit above it moved it (``located``)."""
    for module, entries in mutation.load_equivalent(listed).items():
        _, lost = mutation.located(module, entries, mutation.mutants_of((ROOT / module).read_text(encoding="utf-8")))
        assert [said for said in lost if "left as it is" in said] == [], f"lines changed or gone: fix these entries by hand ({module})"
        assert all(entry["reason"].strip() for entry in entries.values()), module
        # the context keeps a later move from being ambiguous: proofs/mutation.py --relocate-equivalent records it
        assert [i for i, entry in entries.items() if not set(mutation.CONTEXT) <= set(entry)] == [], module


def test_the_vectors_score_leaves_out_contract_only_and_out_of_scope_mutants() -> None:
    by_id = {m.id: m for m in mutation.mutants_of(SAMPLE)}
    first, second, third = list(by_id.values())[:3]
    tally = mutation.Tally("m.py", mutants=10, killed=6, against="vectors", survivors=[first], contract_only=[second], deselected=["t.py::a"])
    tally.out_of_scope.append((third, "a field the vectors leave out"))
    tally.unreached.add(first.id)
    lines: list[str] = []
    mutation.report(tally, lines.append)
    assert lines[0].startswith("m.py against the vectors: 6 / 8 fail the vectors (75.0 %): of 10 mutants its tests kill, 1 change only what a contract")
    assert "1 tests of the contracts deselected), 1 change what the vectors leave out by design, 1 pass every vector (1 on lines no vector runs)" in lines[0]
    assert lines[1] == f"  PASSES THE VECTORS (a line no vector runs) m.py:{first.start_line}  {first.id}  {first.description}"
    assert lines[3] == f"  contract only m.py:{second.start_line}  {second.id}  {second.mutated_line.strip()}"
    assert lines[4].endswith(f"{third.id}  {third.description}: a field the vectors leave out")


def test_the_lines_the_vectors_run_are_those_the_consumer_runs() -> None:
    vectors = mutation.Vectors()
    try:
        requests = mutation.resolve_module("core/requests.py")
        # A relative path: coverage names files by absolute path, so an unresolved one would reach no line (one run, ~6 s).
        reached = vectors.reach(Path(os.path.relpath(requests)))
    finally:
        vectors.close()
    lines = requests.read_text(encoding="utf-8").splitlines()

    def line_of(text: str) -> int:
        [number] = [n for n, line in enumerate(lines, 1) if line.strip().startswith(text)]
        return number
    assert line_of("def build_request(") in reached  # run at import
    assert line_of("return Request(header, (header.message_prefix or ()) + boundary, session_id)") in reached  # every request sent
    assert line_of("span = find_step(log, turn, step)") not in reached  # the request command's path: no vector takes it


def test_the_tests_of_the_contracts_are_those_that_fail_with_contracts_off(tmp_path: Path) -> None:
    tests = tmp_path / "test_probe.py"
    tests.write_text(
        "from prefix_model.core.contracts import ENABLED\n\ndef test_on():\n    assert ENABLED\n\ndef test_either():\n    pass\n", encoding="utf-8"
    )
    [found] = mutation.contract_tests([str(tests)], 120.0)
    assert found.endswith("test_probe.py::test_on")


def test_a_sample_is_every_nth_mutant_in_id_order() -> None:
    mutants = mutation.mutants_of(SAMPLE)
    assert mutation.sampled(mutants, 1) == mutants
    third = mutation.sampled(mutants, 3)
    assert [m.id for m in third] == [m.id for m in mutants[::3]] and len(third) == -(-len(mutants) // 3)
    assert [m.id for m in mutation.sampled(mutation.mutants_of(SAMPLE), 3)] == [m.id for m in third]  # the same every run


def test_a_tests_selection_names_test_files_or_node_ids_and_keys_its_own_verdicts() -> None:
    chosen = mutation.parse_selection("tests/edge/test_checker.py, tests/core/test_log.py::test_x,tests/edge/test_checker.py")
    assert [p.relative_to(ROOT).as_posix() for p in mutation.selection_files(chosen)] == ["tests/edge/test_checker.py", "tests/core/test_log.py"]
    for bad in ("", " , ", "tests/nowhere.py", "model/prefix_model/core/log.py", "tests/../proofs/run.py", "README.md"):
        with pytest.raises(ValueError, match="--tests"):
            mutation.parse_selection(bad)
    files = mutation.selection_files(chosen)
    assert mutation._digest(files, chosen) != mutation._digest(files, chosen[:2])  # another selection: other verdicts
    lines: list[str] = []
    mutation.report(mutation.Tally("m.py", mutants=2, killed=2, selection="tests/edge/test_checker.py"), lines.append)
    assert lines[0].startswith("m.py against tests/edge/test_checker.py: 2 / 2 killed")


def test_a_sampled_score_says_it_is_a_sample() -> None:
    lines: list[str] = []
    tally = mutation.Tally("m.py", mutants=4, killed=3, sample=mutation._sample_note(20, 4, 5))
    mutation.report(tally, lines.append)
    assert "3 / 4 killed (75.0 %)" in lines[0] and "1 in 5, 4 of 20 mutants" in lines[0] and "NOT the full score" in lines[0]
    full: list[str] = []
    mutation.report(mutation.Tally("m.py", mutants=4, killed=3), full.append)
    assert "sample" not in full[0]


def test_an_entry_whose_mutated_line_many_mutants_give_is_found_after_a_move_by_its_scope_and_original_line() -> None:
    """``return None`` is the mutated line of every return mutant: without its scope and original line, an edit above
    such an entry (a new loop action's guard) left it ambiguous and made the JSON one more file to touch by hand."""
    key = "model/prefix_model/loop/transitions.py"
    source = (ROOT / key).read_text(encoding="utf-8")
    [(listed, entry)] = [(i, e) for i, e in mutation.load_equivalent(mutation.OUT_OF_SCOPE)[key].items() if e["line"] == "return None"]
    [mutant_id] = mutation.located(key, {listed: entry}, mutation.mutants_of(source))[0]  # where it is now: the JSON's id may be an edit behind
    first, rest = source.split("\n", 1)
    mutants = mutation.mutants_of(f"{first}\n\n\n{rest}")  # two lines more above every entry
    operator, line, column, index = mutant_id.split(":")
    moved = f"{operator}:{int(line) + 2}:{column}:{index}"
    assert sum(m.mutated_line.strip() == "return None" and m.id.endswith(f":{column}:{index}") for m in mutants) > 1  # the line alone is ambiguous
    assert mutation.located(key, {mutant_id: entry}, mutants) == ({moved: entry}, [f"{key} {mutant_id} -> {moved}"])
    without = {k: v for k, v in entry.items() if k not in mutation.CONTEXT}
    assert "left as it is" in mutation.located(key, {mutant_id: without}, mutants)[1][0]


def test_relocate_gives_a_moved_equivalent_entry_its_id_and_says_what_it_cannot_place(tmp_path: Path) -> None:
    module = ROOT / "model" / "prefix_model" / "core" / "request_log.py"
    key = module.relative_to(ROOT).as_posix()
    [(mutant_id, entry)] = mutation.load_equivalent()[key].items()
    operator, line, column, index = mutant_id.split(":")
    stale = f"{operator}:{int(line) + 3}:{column}:{index}"  # as if three lines above it had gone
    path = tmp_path / "equivalent.json"
    path.write_text(json.dumps({key: {stale: entry, "cmp:1:0:0": {"line": "no such line", "reason": "r"}}}), encoding="utf-8")
    said = mutation.relocate_equivalent([module], path)
    assert said == [f"{key} {stale} -> {mutant_id}", f"{key} cmp:1:0:0: no mutant(s) give its line now; left as it is"]
    assert json.loads(path.read_text(encoding="utf-8"))[key] == {mutant_id: entry, "cmp:1:0:0": {"line": "no such line", "reason": "r"}}


def test_a_run_finds_an_equivalent_entry_an_edit_above_it_moved() -> None:
    """A moved entry is found by its line (so a mutation run still excludes it, and an unrelated edit touches no JSON); a gone one is said."""
    module = ROOT / "model" / "prefix_model" / "core" / "request_log.py"
    key = module.relative_to(ROOT).as_posix()
    [(mutant_id, entry)] = mutation.load_equivalent()[key].items()
    operator, line, column, index = mutant_id.split(":")
    stale = f"{operator}:{int(line) + 3}:{column}:{index}"
    mutants = mutation.mutants_of(module.read_text(encoding="utf-8"))
    assert mutation.located(key, {stale: entry}, mutants) == ({mutant_id: entry}, [f"{key} {stale} -> {mutant_id}"])
    gone = {"line": entry["line"] + " # changed", "reason": "r"}
    assert mutation.located(key, {mutant_id: gone}, mutants) == ({mutant_id: gone}, [f"{key} {mutant_id}: no mutant(s) give its line now; left as it is"])
