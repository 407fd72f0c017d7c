"""The proof run's budget is a number of paths, so its verdict does not depend on the machine.

These run CrossHair itself on the smallest core module (two conditions, about two seconds a run):
the driver's path cap must be what stops the search, and two runs must explore the same paths.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from proofs.run import DRIVER, PLUGIN, README, ROOT, Budget, Stats, child_env, readme_with_block

TARGET = "prefix_model.core.events"  # two contracted functions, one postcondition each


def _crosshair(paths: int) -> tuple[str, Stats]:
    command = [sys.executable, *Budget(paths=paths).options(), TARGET, "--analysis_kind=icontract", "--extra_plugin", str(PLUGIN)]
    # Without the cap nothing else stops this search (no CPU budget, no uninteresting-iteration
    # limit): the timeout turns a cap that does not work into a failure instead of a hang.
    done = subprocess.run(command, cwd=ROOT, env=child_env() | Budget(paths=paths).env(), capture_output=True, text=True, timeout=300)
    stats = Stats.parse(done.stderr)
    assert done.returncode == 0 and stats is not None, done.stderr[-2000:]
    return done.stdout, stats


def test_the_path_cap_is_what_stops_the_search() -> None:
    for paths in (1, 3):
        _, stats = _crosshair(paths)
        assert (stats.conditions, stats.paths) == (2, 2 * paths)  # the cap is per condition


def test_two_runs_explore_the_same_paths() -> None:
    first, second = _crosshair(20), _crosshair(20)
    assert first == second
    assert first[1].paths == 2 * 20 and (first[1].path_timeouts, first[1].z3_unknown) == (0, 0)


def test_the_budget_reads_no_clock_unless_asked_to() -> None:
    by_paths, by_seconds = Budget(paths=20).options(), Budget(paths=None, seconds=20).options()
    assert [str(DRIVER), "--max_iterations", "20", "check"] == by_paths[:4]
    assert not any(o.startswith("--per_condition_timeout") for o in by_paths)
    assert "--max_uninteresting_iterations=0" in by_paths
    assert "--per_condition_timeout=20" in by_seconds
    assert "CROSSHAIR_SMT_RLIMIT" in Budget(paths=20).env() and Budget(paths=None, seconds=20).env() == {}
    assert Budget(paths=20).for_kind("bug").paths == 60 and Budget(paths=100).for_kind("bug").paths == 100


def test_stats_are_read_from_the_drivers_last_line() -> None:
    stderr = 'noise\ncrosshair-fixed: {"conditions": 2, "paths": 7, "z3_rlimit": 3, "path_timeouts": 1, "z3_unknown": 0}\n'
    assert Stats.parse(stderr) == Stats(2, 7, 3, 1, 0)
    assert Stats.parse("a crash before the driver wrote anything") is None


def test_the_readme_states_what_the_run_does() -> None:
    text = README.read_text(encoding="utf-8")
    assert readme_with_block(text) == text, "proofs/README.md is stale: run `.venv/bin/python proofs/run.py --write-readme`"


@pytest.mark.parametrize("argv", [["--paths", "0"], ["--seconds", "-1"], ["--paths", "5", "--deep"]])
def test_a_bad_budget_is_a_usage_error(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "proofs" / "run.py"), *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
