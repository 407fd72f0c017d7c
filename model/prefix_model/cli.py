"""Spec §9 — the command line: ``prefix-model request`` and ``prefix-model demo``.

The CLI is the edge: it reads files, prints, and maps every unreadable input or missing step to
one line on stderr and exit status 2 (CLI-2). Exit 0 means the command did what it was asked.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import resources

from prefix_model import __version__
from prefix_model.contracts import Rejection
from prefix_model.derive import derive_messages
from prefix_model.examples import EXAMPLE_FILE, EXAMPLE_SESSION_ID, EXAMPLE_STEPS, example_log
from prefix_model.formats.events_jsonl import LogReadError, event_to_line, read_log
from prefix_model.json_values import json_text
from prefix_model.log import Log
from prefix_model.requests import find_step, reconstruct_request, request_to_json

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_UNUSABLE = 0, 2

_REQUEST_HELP = """\
Print, as one line of JSON, the request that step (TURN, STEP) of a harness session log must
have sent: the header in force for that step (the latest request/header before the step's
first assistant/chunk), its messagePrefix, then deriveMessages of every event before the step's
step/start. Field names are the harness's: provider, model, reasoningEffort, messages, system,
tools, temperature, maxTokens, stop, sessionId (only with --session-id).

LOG is the in-memory event form: one JSON event object per line (type, seq, time, data,
surfaceOp, sourceEventSeqs). Compare the output with what your adapter received; JSON text is
JSON.stringify's, so equal requests print equal bytes.

example:
  prefix-model request session.events.jsonl --turn 3 --step 1 --session-id s-42
  prefix-model request --example --turn 1 --step 2

exit status: 0 printed; 2 unreadable log or no such step (one line on stderr: file:line: rule: reason)
"""


class _Unusable(Exception):
    """An input problem the CLI reports in one line with exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``prefix-model``."""
    parser = argparse.ArgumentParser(
        prog="prefix-model",
        description="Executable reference model of the deepseek-harness session prefix.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    request = commands.add_parser(
        "request",
        help="reconstruct the request a step of a session log must have sent",
        description=_REQUEST_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = request.add_mutually_exclusive_group(required=True)
    source.add_argument("log", nargs="?", metavar="LOG", help="session log, in-memory event lines (JSONL)")
    source.add_argument("--example", action="store_true", help="use the example log bundled with the package")
    request.add_argument("--turn", type=int, required=True, help="turn number (from turn/start)")
    request.add_argument("--step", type=int, required=True, help="step number within the turn (from 1)")
    request.add_argument("--session-id", help="sessionId to put in the request (default: the example's id with --example, else omitted)")
    commands.add_parser(
        "demo",
        help="build the example session with the model and print its log and requests",
        description="Build the bundled example session event by event with the model's rules, then print "
        "its log lines and, for every step, the request reconstructed from the log.",
    )
    return parser


def _load(path: str | None, example: bool) -> tuple[Log, str]:
    if example:
        with resources.as_file(resources.files("prefix_model.examples") / EXAMPLE_FILE) as bundled:
            return read_log(bundled), EXAMPLE_FILE
    assert path is not None
    return read_log(path), path


def _request_line(log: Log, turn: int, step: int, session_id: str | None, name: str) -> str:
    request = reconstruct_request(log, turn, step, session_id)
    if isinstance(request, Rejection):
        raise _Unusable(f"{name}: {request}")
    return json_text(request_to_json(request))


def _run_request(args: argparse.Namespace) -> int:
    log, name = _load(args.log, args.example)
    session_id = args.session_id if args.session_id is not None or not args.example else EXAMPLE_SESSION_ID
    print(_request_line(log, args.turn, args.step, session_id, name))
    return EXIT_OK


def _run_demo() -> int:
    log = example_log()
    print(f"# the example session's log ({len(log.events)} events), as the harness writes it")
    for event in log.events:
        print(event_to_line(event))
    print(f"\n# derive_messages(log): {len(derive_messages(log))} history messages; the prefix is not among them")
    for turn, step in EXAMPLE_STEPS:
        span = find_step(log, turn, step)
        assert not isinstance(span, Rejection)
        print(f"\n# request of turn {turn} step {step} = header messagePrefix ++ derivation of seqs 0..{span.start_seq - 1}")
        print(_request_line(log, turn, step, EXAMPLE_SESSION_ID, "example"))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``prefix-model``; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "request":
            return _run_request(args)
        return _run_demo()
    except (LogReadError, _Unusable) as error:
        print(f"prefix-model: {error}", file=sys.stderr)
        return EXIT_UNUSABLE


if __name__ == "__main__":
    sys.exit(main())
