"""Whole-process ``prefix-model check`` against a whole-process ``json.loads`` loop: issue 35's figure.

``bench/check_bench.py`` and ``bench/compare_bench.py`` time inside one process and leave start-up
out; what a user waits for is the whole process, start-up included. This times, on the same
generated files (``bench/check_bench.py``'s shapes), two fresh processes per round:

- ``prefix-model check LOG --requests CAPTURE`` as installed: this checkout's entry point
  (``[project.scripts] prefix-model``, contracts off), bytecode as the checkout has it;
- ``python -c`` reading every line of both files and ``json.loads``-ing each, the floor the issue
  names (what any checker written in Python must at least do).

Their CPU times (user + system of the child) are taken in alternating order, check first on even
rounds, so drift in the machine's load hits both alike; each round's ratio divides by that round's
loop, and the median of the ratios is printed beside the median seconds, with ``python -c pass``
(the interpreter's own start-up) for the floor under both, and a process that only imports what the
check imports before it reads a line (its start-up; the capture's schema library included). Usage:

    python bench/process_bench.py [--sizes 10000,100000,1000000] [--rounds 5] [--shape turns|compactions] [--base REV]

``--base REV`` times that committed revision's check too, in the same rounds (its ``model/``
exported with ``git archive`` and compiled, as an installed wheel is): before and after, on the
same files, under the same load.

Figures, not a test: nothing here judges them.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.check_bench import SHAPES  # noqa: E402
from bench.startup_bench import compiled_export, entry_point, environment  # noqa: E402

LOOP = "import json, sys\nfor name in sys.argv[1:]:\n    with open(name, 'rb') as handle:\n        for line in handle:\n            json.loads(line)\n"
FLOOR = (sys.executable, "-c", "pass")
# What the check imports before it reads a line (the capture's schema library included), run by itself as the entry
# point runs it (contracts off, the cycle collector off while importing): start-up's share.
IMPORTS = "import gc, os; os.environ.setdefault('PREFIX_MODEL_CONTRACTS', '0'); gc.disable(); import prefix_model.edge.cli, jsonschema_rs"


def cpu_seconds(argv: Sequence[str], env: dict[str, str]) -> float:
    """Return the CPU (user + system) seconds of one process of ``argv``, checked to succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def check_command(log: Path, capture: Path, entry: str) -> list[str]:
    """The installed ``prefix-model check LOG --requests CAPTURE``, as its entry point ``entry`` runs it."""
    module, function = entry.split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())", "check", str(log), "--requests", str(capture)]


def _spread(values: Sequence[float], digits: int) -> str:
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}..{max(values):.{digits}f}]"


Variant = tuple[list[str], dict[str, str]]  # a process's argv and environment


def measure(variants: dict[str, Variant], rounds: int) -> dict[str, list[float]]:
    """Return each variant's CPU seconds over ``rounds`` rounds, the order reversed every round; each must succeed first."""
    for argv, env in variants.values():
        subprocess.run(argv, check=True, capture_output=True, env=env)  # a check must conform (exit 0) before it is timed
    times: dict[str, list[float]] = {label: [] for label in variants}
    for round_ in range(rounds):
        for label in list(variants) if round_ % 2 == 0 else list(reversed(variants)):
            times[label].append(cpu_seconds(*variants[label]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated sizes (events, or nodes for --shape compactions)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per size (default 5)")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="turns")
    parser.add_argument("--base", help="also time this committed revision's check (exported, compiled), interleaved: before and after")
    args = parser.parse_args()
    env = environment()
    with tempfile.TemporaryDirectory(prefix="prefix-process-") as temporary:
        folder = Path(temporary)
        base = None if args.base is None else compiled_export(args.base, folder)
        for size in (int(s) for s in args.sizes.split(",")):
            print(f"generating {args.shape} {size}", file=sys.stderr)
            log, capture = SHAPES[args.shape](folder, size)
            events = sum(1 for _ in log.open("rb"))
            megabytes = (log.stat().st_size + capture.stat().st_size) / 1e6
            variants: dict[str, Variant] = {
                "check": (check_command(log, capture, entry_point()), env),
                "loop": ([sys.executable, "-c", LOOP, str(log), str(capture)], env),
                "its imports": ([sys.executable, "-c", IMPORTS], env),
                "python -c pass": (list(FLOOR), env),
            }
            if base is not None:
                model, entry = base
                variants[f"base {args.base} check"] = (check_command(log, capture, entry), environment(model, write_bytecode=False))
            times = measure(variants, args.rounds)
            print(f"{args.shape} {size}: {events} events, {megabytes:.1f} MB, {args.rounds} rounds; CPU seconds of whole processes, median [min..max]")
            for label, values in times.items():
                print(f"  {label:<28} {_spread(values, 3)}")
            for label in [name for name in times if name.endswith("check")]:
                ratios = [c / p for c, p in zip(times[label], times["loop"], strict=True)]
                print(f"  {label + ' / loop':<28} {_spread(ratios, 2)}  (median of the rounds' ratios)")
            sys.stdout.flush()
            log.unlink()
            capture.unlink()


if __name__ == "__main__":
    main()
