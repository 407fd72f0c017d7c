"""The two timed operations of the check benchmark, importable without the model.

``check_bench.py`` runs them in its own process on the checkout's model; ``compare_bench.py`` runs
this file as a fresh process per timing, with one revision's ``model/`` on ``PYTHONPATH``, so the
same code times every revision (this file imports nothing of ``prefix_model`` until it is told
which module holds that revision's ``check_log``). As a script it prints one JSON object:

    python bench/timing.py parse LOG CAPTURE
    python bench/timing.py check --check MODULE --contracts MODULE LOG CAPTURE
    python bench/timing.py cli MODULE:FUNCTION ARG...     # the revision's installed command, untimed

Both times are CPU seconds of the process (``time.process_time``), so other jobs on a shared
machine count as little as they can.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

import zstandard

__all__ = ["CheckReport", "check_seconds", "parse_seconds"]


class CheckReport(Protocol):
    """What the timing needs of any revision's ``Report``: its verdict, and its text when it fails."""

    @property
    def conforms(self) -> bool: ...

    @property
    def requests_checked(self) -> int: ...

    def as_text(self) -> str: ...


def parse_seconds(log: Path, capture: Path) -> float:
    """Return the seconds ``json.loads`` takes over every line of both files (a zstd log decompressed first)."""
    started = time.process_time()
    for path in (log, capture):
        with path.open("rb") as handle:
            lines: Iterable[bytes] = handle
            if handle.peek(4)[:4] == zstandard.FRAME_HEADER:  # the zstd frame magic (spec/formats.md's ZSTD_MAGIC)
                lines = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True))
            for line in lines:
                json.loads(line)
    return time.process_time() - started


def check_seconds(check_log: Callable[[Path, Path], CheckReport], log: Path, capture: Path) -> float:
    """Return the seconds ``check_log(log, capture)`` takes, as ``prefix-model check`` runs it; the pair must conform."""
    started = time.process_time()
    report = check_log(log, capture)
    seconds = time.process_time() - started
    assert report.conforms and report.requests_checked > 0, report.as_text()[:2000]
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    parse = commands.add_parser("parse", help="time json.loads of every line of LOG and CAPTURE")
    check = commands.add_parser("check", help="time the check of LOG against CAPTURE by MODULE.check_log")
    for command in (parse, check):
        command.add_argument("log", type=Path)
        command.add_argument("capture", type=Path)
    check.add_argument("--check", required=True, metavar="MODULE", help="the module defining check_log")
    check.add_argument("--contracts", required=True, metavar="MODULE", help="the module defining the contract switch ENABLED")
    cli = commands.add_parser("cli", help="run the installed command's entry point MODULE:FUNCTION with ARG... and exit with its status")
    cli.add_argument("entry", metavar="MODULE:FUNCTION")
    cli.add_argument("arguments", nargs=argparse.REMAINDER, metavar="ARG")
    args = parser.parse_args()
    if args.command == "cli":
        module, _, function = args.entry.partition(":")
        sys.argv = ["prefix-model", *args.arguments]
        status: int = getattr(importlib.import_module(module), function)()
        return status
    if args.command == "parse":
        print(json.dumps({"seconds": parse_seconds(args.log, args.capture)}))
        return 0
    check_log = importlib.import_module(args.check).check_log
    seconds = check_seconds(check_log, args.log, args.capture)
    package = importlib.import_module("prefix_model").__file__
    enabled = bool(importlib.import_module(args.contracts).ENABLED)
    print(json.dumps({"seconds": seconds, "package": package, "contracts": enabled}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
