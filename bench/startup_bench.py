"""How long the command line takes to start and check the bundled example, and what it imports.

    .venv/bin/python bench/startup_bench.py            # 15 runs of `prefix-model check --example`
    .venv/bin/python bench/startup_bench.py --runs 30

A figure, not a test: it prints the median and the spread of the wall time of whole processes
(these machines are noisy; compare medians measured in one run), and the modules that cost the
most to import (``python -X importtime``), so a regression shows where it comes from.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMAND = [sys.executable, "-m", "prefix_model.edge.cli", "check", "--example"]


def wall_times(runs: int) -> list[float]:
    """Return the wall time of ``runs`` processes of ``COMMAND``, each checked to succeed."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(COMMAND, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def heaviest_imports(count: int = 8) -> list[tuple[int, str]]:
    """Return the ``count`` modules with the largest cumulative import time (microseconds) when the CLI is imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import prefix_model.edge.cli"], check=True, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    times = wall_times(runs)
    print(f"prefix-model check --example: median {statistics.median(times):.3f} s over {runs} runs (min {min(times):.3f}, max {max(times):.3f})")
    print("heaviest imports of prefix_model.edge.cli (cumulative):")
    for micros, name in heaviest_imports():
        print(f"  {micros / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
