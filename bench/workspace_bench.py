"""Benchmark of ``prefix-model check`` over a workspace: sessions and events per second, ``--jobs 1`` against ``--jobs N``.

Generates a workspace laid out as the harness persists one (``ROOT/project-P/s-I/session.jsonl.zstd``
with the capture of every loop request beside it as ``requests.jsonl``, SPEC CLI-21): SESSIONS
sessions whose sizes cycle through ``--events`` (harness-shaped turns, ``check_bench.generate``).
Each size is generated once and hard-linked into its sessions' folders (copied where links are
refused), so generation takes seconds and the disk holds one copy of each size; every run reads
the same files through the page cache, so the runs compare the check, not the disk.

Then runs the installed command ``prefix-model check ROOT --jobs J --json`` (contracts off, as it
is installed) for each J, interleaved ``--rounds`` times so every setting sees the same machine
load, and prints per J the median wall time, sessions/s, events/s and the speed-up over the first
J, with the CPU seconds the command and its processes used and the peak memory of the largest of
them over the runs (flat in SESSIONS: results are streamed, SPEC CLI-24); every run must report every session
conforming, or the bench stops. Usage:

    python bench/workspace_bench.py [--sessions 3000] [--events 150,300,600] [--jobs 1,2] [--rounds 3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "model"))
sys.path.insert(1, str(ROOT))

from bench.check_bench import generate, persisted  # noqa: E402

SESSIONS_PER_PROJECT = 100


def _place(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links refused
        shutil.copyfile(source, target)


def build(folder: Path, sessions: int, sizes: list[int]) -> Path:
    """Write the workspace under ``folder``/ws: ``sessions`` session folders, sizes cycling through ``sizes``."""
    templates = folder / "templates"
    templates.mkdir(parents=True, exist_ok=True)
    made = {}
    for size in sizes:
        log, capture = generate(templates, size)
        made[size] = (persisted(log, compress=True), capture)
    root = folder / "ws"
    for index, size in zip(range(sessions), itertools.cycle(sizes)):
        session = root / f"project-{index // SESSIONS_PER_PROJECT:03d}" / f"s-{index:05d}"
        session.mkdir(parents=True, exist_ok=True)
        log, capture = made[size]
        _place(log, session / "session.jsonl.zstd")
        _place(capture, session / "requests.jsonl")
    return root


# Runs the command and writes the peak memory of its largest process (it or a --jobs worker) to
# argv[1]. The bench's own children would also count the bench itself, copied while each child
# starts and before it becomes the command; this small starter's copy is smaller than the command.
_PEAK = "import resource, subprocess, sys; status = subprocess.run(sys.argv[2:]).returncode; " \
        "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(status)"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(root: Path, jobs: int, peak_file: Path) -> tuple[float, float, float, dict[str, object]]:
    """Return the wall time, the CPU time (the command and its processes) and the peak memory in MB of one ``check ROOT --jobs J --json``, and its summary."""
    command = Path(sys.executable).with_name("prefix-model")
    env = os.environ | {"PREFIX_MODEL_CONTRACTS": "0"}
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-c", _PEAK, str(peak_file), str(command), "check", str(root), "--jobs", str(jobs), "--json"],
                          capture_output=True, text=True, env=env)  # fmt: skip
    seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    peak = int(peak_file.read_text()) / 1024  # kilobytes on Linux
    report = json.loads(done.stdout)
    summary: dict[str, object] = report["summary"]
    if done.returncode != 0 or report["result"] != "conforms":
        raise SystemExit(f"--jobs {jobs}: exit {done.returncode}, {summary}: {done.stderr[-500:]}")
    return seconds, cpu, peak, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=3000, help="sessions in the workspace")
    parser.add_argument("--events", default="150,300,600", help="comma-separated session sizes (events), cycled through")
    parser.add_argument("--jobs", default="1,2", help="comma-separated --jobs settings, the first the baseline")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs of each setting (the median is reported)")
    parser.add_argument("--dir", help="where to write the workspace (default: a temporary folder, removed after)")
    args = parser.parse_args()
    folder = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="prefix-workspace-bench-"))
    try:
        began = time.perf_counter()
        root = build(folder, args.sessions, [int(s) for s in args.events.split(",")])
        print(f"workspace: {args.sessions} sessions under {root} (generated in {time.perf_counter() - began:.1f} s); {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f} (on a shared machine wall times include other work; CPU seconds do not)")
        settings = [int(j) for j in args.jobs.split(",")]
        times: dict[int, list[float]] = {jobs: [] for jobs in settings}
        cpus: dict[int, list[float]] = {jobs: [] for jobs in settings}
        peaks: dict[int, list[float]] = {jobs: [] for jobs in settings}
        summary: dict[str, object] = {}
        for _ in range(args.rounds):
            for jobs in settings:  # interleaved: each setting sees the same load
                seconds, cpu, peak, summary = run(root, jobs, folder / "peak")
                times[jobs].append(seconds)
                cpus[jobs].append(cpu)
                peaks[jobs].append(peak)
        checked = summary["checked"]
        assert isinstance(checked, dict)
        events, logs = int(checked["events"]), int(str(summary["logs"]))
        print(f"{logs} sessions, {events} events, {checked['requests']} requests per run; medians of {args.rounds} interleaved runs")
        print(f"{'jobs':>4} {'median s':>9} {'runs s':>24} {'sessions/s':>11} {'events/s':>10} {'speed-up':>8} {'CPU s':>7} {'ms CPU/session':>14} {'peak MB':>7}")
        base = statistics.median(times[settings[0]])
        for jobs in settings:
            median = statistics.median(times[jobs])
            runs = " ".join(f"{t:.1f}" for t in times[jobs])
            cpu = statistics.median(cpus[jobs])
            print(f"{jobs:>4} {median:>9.2f} {runs:>24} {logs / median:>11.0f} {events / median:>10.0f} {base / median:>8.2f} {cpu:>7.1f} {1000 * cpu / logs:>14.2f} {max(peaks[jobs]):>7.0f}")
    finally:
        if not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
