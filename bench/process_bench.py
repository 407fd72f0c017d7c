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

    python bench/process_bench.py [--sizes 10000,100000,1000000] [--rounds 5] [--shape turns|compactions]

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
from bench.startup_bench import entry_point, environment  # noqa: E402

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


def check_command(log: Path, capture: Path) -> list[str]:
    """The installed ``prefix-model check LOG --requests CAPTURE``, as its entry point runs it."""
    module, function = entry_point().split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())", "check", str(log), "--requests", str(capture)]


def _spread(values: Sequence[float], digits: int) -> str:
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}..{max(values):.{digits}f}]"


def measure(log: Path, capture: Path, rounds: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """Return the check's, the loop's, its imports' and ``python -c pass``'s CPU seconds over ``rounds`` interleaved rounds."""
    env = environment()
    check, loop = check_command(log, capture), [sys.executable, "-c", LOOP, str(log), str(capture)]
    subprocess.run(check, check=True, capture_output=True, env=env)  # must conform (exit 0) before it is timed
    checks: list[float] = []
    loops: list[float] = []
    floors: list[float] = []
    imports: list[float] = []
    for round_ in range(rounds):
        pair = [(check, checks), (loop, loops)]
        for argv, into in pair if round_ % 2 == 0 else reversed(pair):
            into.append(cpu_seconds(argv, env))
        floors.append(cpu_seconds(FLOOR, env))
        imports.append(cpu_seconds([sys.executable, "-c", IMPORTS], env))
    return checks, loops, imports, floors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated sizes (events, or nodes for --shape compactions)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per size (default 5)")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="turns")
    args = parser.parse_args()
    print(f"{'size':>8} {'events':>8} {'MB':>6}  {'loop CPU s':<24} {'check CPU s':<24} {'its imports s':<22} {'python -c pass s':<22} check/loop (median of rounds)")
    with tempfile.TemporaryDirectory(prefix="prefix-process-") as temporary:
        for size in (int(s) for s in args.sizes.split(",")):
            print(f"generating {args.shape} {size}", file=sys.stderr)
            log, capture = SHAPES[args.shape](Path(temporary), size)
            events = sum(1 for _ in log.open("rb"))
            megabytes = (log.stat().st_size + capture.stat().st_size) / 1e6
            checks, loops, imports, floors = measure(log, capture, args.rounds)
            ratios = [c / p for c, p in zip(checks, loops, strict=True)]
            print(f"{size:>8} {events:>8} {megabytes:>6.1f}  {_spread(loops, 3):<24} {_spread(checks, 3):<24} {_spread(imports, 3):<22} {_spread(floors, 3):<22} {_spread(ratios, 2)}", flush=True)
            log.unlink()
            capture.unlink()


if __name__ == "__main__":
    main()
