"""Measure the loop machine's counts over several runs: the floors of ``test_loop_stateful.py``.

    .venv/bin/python -m tests.machine_floors            # the ci run, then global_force_seed 1..9
    .venv/bin/python -m tests.machine_floors --seeds 3  # the ci run, then seeds 1..3

Each run is the machine under the ci profile (derandomized), or with ``derandomize=False`` and
Hypothesis's ``global_force_seed`` set to a seed; the counts are those the vacuity guard reads. The
output gives, per rule, window and property, the ci count and the lowest count over all runs (the
guard's comment format, ``ci, lowest``) and how many runs reached it. Slow: about a minute a run.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Sequence

import hypothesis.core
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

import tests.conftest  # noqa: F401  (its Hypothesis profiles and the switch of local constants, as under pytest)
from tests.loop_machine import PROPERTY_SUBJECTS, RULES, SEGMENT_RULES, STATS, WINDOWS, LoopMachine, RunStats


def _counts(stats: RunStats) -> dict[str, int]:
    rules = {f"rule {n}": stats.applied[n] if n in SEGMENT_RULES else stats.rules[n] for n in RULES}
    windows = {f"window {w}": stats.windows[w] for w in WINDOWS}
    subjects = {f"subjects {p}": stats.subjects[p] for p in PROPERTY_SUBJECTS}
    return rules | windows | subjects


def _run(seed: int | None) -> dict[str, int]:
    """Run the machine once (ci when ``seed`` is None) and return its counts."""
    vars(STATS).update(vars(RunStats()))  # the counters are the module's: start each run from zero
    if seed is None:
        run_state_machine_as_test(LoopMachine, settings=LoopMachine.TestCase.settings)
    else:
        setattr(hypothesis.core, "global_force_seed", seed)  # typed None: Hypothesis sets it only from its own pytest option
        try:
            run_state_machine_as_test(LoopMachine, settings=settings(LoopMachine.TestCase.settings, derandomize=False))
        finally:
            hypothesis.core.global_force_seed = None
    return _counts(STATS)


def main(argv: Sequence[str] | None = None, say: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.machine_floors", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=9, help="random runs after the ci run, seeds 1..N (default 9)")
    args = parser.parse_args(argv)
    runs = [_run(None)]
    say(f"ci run: {STATS.examples} examples, {STATS.steps} steps")
    for seed in range(1, args.seeds + 1):
        runs.append(_run(seed))
        say(f"seed {seed}: {STATS.examples} examples, {STATS.steps} steps")
    reached: Counter[str] = Counter(k for run in runs for k, v in run.items() if v > 0)
    for key in runs[0]:
        lowest = min(run[key] for run in runs)
        say(f"{key}: {runs[0][key]}, {lowest}; reached in {reached[key]} of {len(runs)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
