"""Spec §17 — the command line: ``prefix-model request``, ``demo``, ``variants``, ``review``, ``timeline``, ``explore`` and ``docs``.

The CLI is the edge: it reads files, prints, and maps every unreadable input or missing step to
one line on stderr and exit status 2 (CLI-2). Exit 0 means the command did what it was asked.
"""

from __future__ import annotations

import argparse
import io
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefix_model import __version__
from prefix_model.core.contracts import ENABLED, Rejection, ensure
from prefix_model.core.events import REQUEST_HEADER
from prefix_model.core.json_values import json_text
from prefix_model.core.log import Log, seed_log
from prefix_model.core.requests import Request, find_step, reconstruct_request, request_to_json
from prefix_model.edge.checker import STDIN, Report, Unusable, check_log, fold_request, rereadable, unusable_json
from prefix_model.edge.formats.events_jsonl import LogReadError, read_log
from prefix_model.edge.formats.session_jsonl import LogStream
from prefix_model.examples import EXAMPLE_DIR, EXAMPLE_FILE, EXAMPLE_REQUESTS_FILE, EXAMPLE_SESSION_ID
from prefix_model.formats.event_lines import event_to_line

if TYPE_CHECKING:
    from prefix_model.edge.designs import LoadedDesign
    from prefix_model.loop.world import SentRequest, World

# The loop, the variants, the vectors, the adapter protocol and the timeline are imported by the
# commands that use them: check and request start without them (start-up is part of every check in
# a script; tests/edge/test_cli.py holds check's import graph to it).

__all__ = ["main", "build_parser", "COMMANDS"]

EXIT_OK, EXIT_VIOLATIONS, EXIT_UNUSABLE = 0, 1, 2
EXIT_READER_GONE = 128 + 13  # SIGPIPE's: how a shell reports a tool whose reader went away
DEFAULT_MAX_FINDINGS = 50  # a page a person reads; the summary counts every finding

_REQUEST_HELP = """\
Print, as one line of JSON, the request that step (TURN, STEP) of a harness session log must
have sent: the header in force for that step (the latest request/header before the step's
first assistant/chunk), its messagePrefix, then deriveMessages of every event before the step's
step/start. Field names are the harness's: provider, model, reasoningEffort, messages, system,
tools, temperature, maxTokens, stop, sessionId (the one --session gives, or the persisted
header names).

LOG is what check reads: the in-memory event form (one JSON event object per line: type, seq,
time, data, surfaceOp, sourceEventSeqs) or the persisted session.jsonl[.zstd], or - for standard
input. Compare the output with what your adapter received; JSON text is JSON.stringify's, so
equal requests print equal bytes.

example:
  prefix-model request session.events.jsonl --turn 3 --step 1 --session s-42
  prefix-model request ~/.dsh/sessions/_no-cwd/s-42/session.jsonl.zstd --turn 3 --step 1
  zstdcat session.jsonl.zstd | prefix-model request - --turn 3 --step 1
  prefix-model request --example --turn 1 --step 2

exit status: 0 printed; 2 unreadable log or no such step (one line on stderr: file:line: rule: reason)
"""


_CHECK_HELP = """\
Check a real session log against every requirement that can be decided from the log alone
(envelope and seq, surface and provenance, header vocabulary and canonical form, the
initial/resume/change rule, the prefix constant within an instance, turn and step enclosure),
and, with --requests, every captured loop request against the one the log says it must have
been (REC-1: the invariant companion's fields; REC-2: every field) and prompt-cache
monotonicity within an instance (REC-3). Each finding names its requirement ID, the seq/line or
request index, the JSON path, and expected vs actual. Requests are compared as JSON text, so key
order counts (the harness's order, §8.1 of SPEC.md): a capture whose only difference is its key
order (re-serialized with sorted keys, as Go writes maps) still gets findings, each saying so.

LOG: the harness's in-memory event lines, or its persisted session.jsonl (header line, packed
chunk rows), plain or zstd; a file, or - for standard input (a pipe is copied to a temporary
file first). A torn tail after the last turn/end is tolerated and reported.

--requests FILE: one request per line, as the adapter received it (provider, model,
reasoningEffort, messages, system, tools, temperature, maxTokens, stop, sessionId), with
optional "turn"/"step" naming the step that sent it and "agentLoopRequest": false marking an
auxiliary call; or the {"index", "capture", "request"} lines of a harness recording. Requests
are matched in file order, the order they were sent: one naming turn/step to that step (a
request naming a step the log has already passed is a finding), one without to the next
dispatching step (formats.md of the installed specification; `prefix-model docs` prints where). Where a recording's "capture" names the "instance" that
sent a request, each instance must be sent under one initial/resume snapshot of its own, with
one prefix: a recomposition the log writes as a resume is found only so. Both files are read
once, side by side: memory follows the log's live history, not the files' size.

A workspace: several LOGs, a folder (searched recursively, links to folders followed, each folder
once) or a quoted pattern (*, ?, [...], ** for any number of folders) checks every session log
there — files named *.jsonl or *.jsonl.zstd, except captures — each as it is checked alone, in
--jobs N processes. Each log is paired with the capture beside it by name: session.jsonl[.zstd]
with requests.jsonl in its folder; NAME.jsonl, NAME.events.jsonl, NAME.session.jsonl (each
[.zstd]) with NAME.requests.jsonl. Printed in the order the logs were found, whatever N: each
log's verdict (a violation's findings under it, --max-findings per log), the findings per rule
(and in how many logs), and a result line; --json one object (check-workspace-report.schema.json
of the installed specification; each log's own report as check prints it alone); --junit FILE
one testcase per log. --requests and --session name one log's: not with a workspace.

example:
  prefix-model check --example          (the bundled example log and its capture)
  prefix-model check ~/.dsh/sessions/_no-cwd/s-42/session.jsonl.zstd --requests adapter.jsonl
  prefix-model check events.jsonl --requests requests.jsonl --session s-42 --json
  zstdcat session.jsonl.zstd | prefix-model check - --requests adapter.jsonl
  prefix-model check ~/.dsh/sessions --jobs 4 --junit check.xml
  prefix-model check "$HOME/.dsh/sessions/**/session.jsonl.zstd" other/s-7.events.jsonl --json

exit status: 0 conforms; 1 violations found; 2 unusable input (one line on stderr: file:line: rule: reason).
A workspace: 0 every log conforms; 1 some log violates and every log was usable; 2 some log was
unusable (reported as that log's result, every other log still checked), or no log was found at all
"""

_VARIANTS_HELP = """\
Each variant is one rejected design or likely bug of the session prefix (prefix written as
history, composed per turn, cached after a cancel, not logged on the header, …) expressed as a
change to the loop's semantics. The scripted witness session runs under each variant, every
property of spec §11 is checked, and the IDs that reject the variant are printed.

--design FILE.py:NAME judges a design of your own instead: NAME, a Semantics subclass or
instance in FILE.py, overriding the choice points designs.md of the installed specification lists. It runs the same witness
session under the same properties; printed: the IDs that reject it and the first violation.

example:
  prefix-model variants
  prefix-model variants --design my_design.py:ListenersBackwards --json

exit status: 0 every variant rejected by the properties it names (and the harness semantics
passes them all); with --design, the design keeps every property; 1 some variant went
undetected; with --design, the properties reject the design; 2 a design that does not load or
raises
"""

_REVIEW_HELP = """\
Compare where a session-stable opener (a skills catalog, an AGENTS.md digest) can live: the
session prefix of a55f148516, the design note's six rejected alternatives, the design that
replaced it upstream (PR #585, and as refined by #742/#978), and other harnesses' patterns
(opencode and Goose, Aider and LangGraph, Codex). Every design runs the same generated session
(turns with tool calls, a cancelled first composition, a skill added mid-session, a resume after
an offline change, a fork, a compaction over the opener). Printed: which property of spec §11
(and the review's own: fresh, survives) each design keeps, with what each column checks and why
the design under review shows ✗ where it does; staleness, survival and a provider prompt-cache
cost model (cached = the longest common prefix with the instance's previous request, in the
meter's token heuristic), each column explained; the notes' claims against those numbers; and
every failure's minimal counterexample as an action script (each action its kind and the fields
that differ from their defaults; --json has them whole as the vectors' action objects) with the
offending request and log tail. The text fits 100 columns: wider tables are split, longer lines
wrapped (continuations start with ↪) and an action past 4 lines is cut, saying so.

example:
  prefix-model review
  prefix-model review --short
  prefix-model review --json --plot review.png
  prefix-model review --diagram mermaid >> NOTES.md        (the diagram alone, a ```mermaid block)
  prefix-model review --design my_design.py:MyDesign --short

--plot needs the plot extra (pip install 'session-prefix-model[plot]': matplotlib). Designs with
the same curve stay visible: nested line widths, a marker each, and "(same as …)" in the legend.
--design FILE.py:NAME adds a design of your own (a Semantics subclass or instance; designs.md of the
installed specification) as one more row, judged and measured as every other.

exit status: 0 printed (and written); 2 the plot file cannot be written, matplotlib is not
installed, a design does not load or raises, or --diagram is given with --plot, --short,
--turns or --design
"""


_CONFORM_HELP = """\
Run every conformance vector through an implementation's adapter: a child process speaking the
adapter protocol (JSON lines on stdin/stdout; vectors.md §10 and schema/adapter-protocol.schema.json
of the installed specification: see `prefix-model docs`). Each case passes, fails (the first difference, what
the adapter did wrong, or its crash, hang or garbage with the tail of its stderr; it is then
restarted) or is not applicable (its hello does not offer the case's kind or an action) — never
counted as a pass. Totals per kind and per requirement ID follow.

example:
  prefix-model conform --adapter 'prefix-model adapter'                 (the model against itself)
  prefix-model conform --adapter 'node my-adapter.js' --only 'compaction/*' --junit conform.xml
  prefix-model conform --adapter './adapter' --vectors DIR --json
  prefix-model conform --adapter './adapter' -x                          (stop at the first failure)

--baseline FILE names the cases an implementation knowingly fails: {"cases": [{"id", "reason"}]}
(the file fuzz --baseline reads). A listed case that fails is reported as known and does not fail
the run; a listed case that passes is stale and fails it.

exit status: 0 every applicable case passes; 1 some case fails (or a baseline entry is stale);
2 unusable: the adapter will not start or speak the protocol, the vectors or the baseline cannot be
read, or no case ran at all (every case not applicable, or --only matching none) — with --json,
{"error": "..."} on stdout
"""


class _Unusable(Exception):
    """An input problem the CLI reports in one line with exit status 2."""


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` gives it (COLUMNS, else stdout's terminal, else 80)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]  # None: caught
    except (AttributeError, ValueError, OSError):  # no stdout (None), closed or detached, or not a terminal
        return 80


class _Help(argparse.HelpFormatter):
    """argparse's help formatter, its default width found without importing ``shutil``.

    argparse builds a formatter for every argument a parser is given (to check its metavar), and
    without a width that imports ``shutil`` (with ``bz2``, ``lzma``, ``fnmatch``), which nothing else
    of a check needs: 8 M of check --example's instructions.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)  # argparse's own - 2


class _RawHelp(_Help, argparse.RawDescriptionHelpFormatter):
    """The same, the description printed as written."""


class _Parser(argparse.ArgumentParser):
    """A command's parser whose description may wait for ``--help`` (``describe``), so building it imports nothing."""

    def __init__(self, *args: Any, describe: Callable[[], str] | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)
        self._describe = describe

    def format_help(self) -> str:
        if self._describe is not None:
            self.description = self._describe()
        return super().format_help()


def _explore_help() -> str:
    from prefix_model.edge.explore import EXPLORE_HELP  # the alphabet it states lives with the explorer

    return EXPLORE_HELP


def _timeline_help() -> str:
    from prefix_model.edge.timeline import TIMELINE_HELP  # the lanes it describes live with the drawing

    return TIMELINE_HELP


if TYPE_CHECKING:
    from typing import TypeAlias

    _Commands: TypeAlias = argparse._SubParsersAction[_Parser]


def _add_request(commands: _Commands) -> None:
    request = commands.add_parser(
        "request",
        help="reconstruct the request a step of a session log must have sent",
        description=_REQUEST_HELP,
        formatter_class=_RawHelp,
    )
    source = request.add_mutually_exclusive_group(required=True)
    source.add_argument("log", nargs="?", metavar="LOG",
                        help="session log: in-memory event lines or persisted session.jsonl[.zstd]; - reads standard input")
    source.add_argument("--example", action="store_true", help="use the example log bundled with the package")
    request.add_argument("--turn", type=int, required=True, help="turn number (from turn/start)")
    request.add_argument("--step", type=int, required=True, help="step number within the turn (from 1)")
    request.add_argument("--session", dest="session_id", metavar="ID",
                         help="sessionId to put in the request (default: the one the persisted header or the example names, else omitted)")
    request.add_argument("--session-id", dest="session_id", help=argparse.SUPPRESS)  # its first spelling, kept for scripts; check and timeline say --session


def _add_demo(commands: _Commands) -> None:
    demo = commands.add_parser(
        "demo",
        help="run the loop scenario and print its log and the requests it sent, each explained",
        description="Run a scripted loop scenario — two prefix listeners, a composition cancelled by the user, "
        "a tool call, a restart that resumes the session with a changed prefix — through the model's transitions; "
        "print the actions, the log as the harness writes it, and every request on the wire with how it "
        "reconstructs from the log; then check every property of spec §11 on the run.",
    )
    demo.add_argument("--json-actions", action="store_true",
                      help="print the actions as the vectors spell them (vectors.md §5 of the installed specification), one JSON object a line, "
                      "to replay or to feed an adapter, instead of one short line each")


def _add_check(commands: _Commands) -> None:
    check = commands.add_parser(
        "check",
        help="check a harness session log (and the requests an implementation sent) against the spec",
        description=_CHECK_HELP,
        formatter_class=_RawHelp,
    )
    _add_checked_inputs(check, "check", many=True)
    check.add_argument("--json", action="store_true", help="print the machine report (one JSON object)")
    check.add_argument("--jobs", metavar="N", type=_positive, default=1, help="check a workspace's logs in N processes (default 1); the report is the same")
    check.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE: one testcase per log, a failure per finding shown")
    check.add_argument("--max-findings", metavar="N", type=_count, default=DEFAULT_MAX_FINDINGS,
                       help=f"show the first N findings, then how many more and a count per rule (default {DEFAULT_MAX_FINDINGS}; 0: all)")


def _add_timeline(commands: _Commands) -> None:
    timeline = commands.add_parser(
        "timeline",
        help="draw a session (and the check's findings) on one timeline: an SVG picture or an HTML page",
        describe=_timeline_help,
        formatter_class=_RawHelp,
    )
    _add_checked_inputs(timeline, "draw")
    timeline.add_argument("--out", required=True, metavar="FILE.svg|FILE.html", help="the file to write; its suffix picks the format")
    timeline.add_argument("--from", dest="first", type=_count, metavar="SEQ", help="draw from this seq on (default: the first)")
    timeline.add_argument("--to", dest="last", type=_count, metavar="SEQ", help="draw up to this seq (default: the last)")
    timeline.add_argument("--around", type=_count, metavar="SEQ", help="draw SEQ and --context seqs each side (instead of --from/--to)")
    timeline.add_argument("--context", type=_count, metavar="N", help="seqs each side of --around and of each --findings window (default 40)")
    timeline.add_argument("--findings", action="store_true",
                          help="also draw a window around each finding, below the picture; each finding links to its window")


def _add_vectors(commands: _Commands) -> None:
    vectors = commands.add_parser(
        "vectors",
        help="write the conformance vectors (deterministic JSON cases, a SHA-256 manifest, a README and the schemas)",
        description="Write language-neutral conformance vectors into DIR: one case.json per case (an action script "
        "with the logs and requests it must produce, a log/capture a conforming checker must reject, or a persisted "
        "session.jsonl[.zstd] file a conforming reader must read or reject, with the requirement ID); a README.md "
        "saying how to run them in any language, with the adapter protocol; the specification and its JSON Schemas "
        "under DIR/spec/; and manifest.json with the SHA-256 of each file. Byte-identical on every run; the generation "
        "fails if a requirement has no case. --bundle packs the same files as a reproducible .tar.gz. Format and "
        "adapter protocol: vectors.md of the installed specification (see `prefix-model docs`).",
    )
    vectors.add_argument("--out", metavar="DIR", help="output directory (created if absent)")
    vectors.add_argument("--bundle", metavar="FILE.tar.gz", help="also write them as one reproducible tarball (same bytes on every run); "
                         "an existing directory gets session-prefix-vectors-<version>.tar.gz")


def _add_variants(commands: _Commands) -> None:
    variants = commands.add_parser(
        "variants",
        help="run every faulty variant through the properties and say which requirement rejects it",
        description=_VARIANTS_HELP,
        formatter_class=_RawHelp,
    )
    variants.add_argument("--json", action="store_true", help="print one JSON object per variant instead of a table")
    variants.add_argument("--design", metavar="FILE.py:NAME", help=_design_help())


def _add_review(commands: _Commands) -> None:
    review = commands.add_parser(
        "review",
        help="compare the session prefix with its alternatives on the same sessions: properties, staleness, cache cost",
        description=_REVIEW_HELP,
        formatter_class=_RawHelp,
    )
    review.add_argument("--json", action="store_true", help="print the whole review as one JSON object")
    review.add_argument("--plot", metavar="FILE.png", help="write the cumulative uncached tokens per request of each design")
    review.add_argument("--diagram", choices=("mermaid", "dot"),
                        help="print only the loop's state diagram, generated from the transitions, as a Markdown code block (```mermaid or ```dot)")
    review.add_argument("--short", action="store_true", help="one line per counterexample instead of its script")
    review.add_argument("--turns", type=_positive, metavar="N", help="turns in each stretch of the scenario (default 1)")
    review.add_argument("--design", metavar="FILE.py:NAME", help=_design_help())


def _add_conform(commands: _Commands) -> None:
    conform = commands.add_parser(
        "conform",
        help="run the conformance vectors through an implementation's adapter (a child process)",
        description=_CONFORM_HELP,
        formatter_class=_RawHelp,
    )
    conform.add_argument("--adapter", required=True, metavar="'CMD ARGS'", help="the adapter's command line (split as a shell would)")
    conform.add_argument("--vectors", metavar="DIR", help="a vectors directory (default: the built-in vectors, generated now)")
    conform.add_argument("--only", metavar="GLOB", help="run only the cases whose id matches GLOB (e.g. 'compaction/*')")
    conform.add_argument("--json", action="store_true", help="print the machine report (one JSON object, problems untruncated)")
    conform.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    conform.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per adapter response (default 30)")
    conform.add_argument("--baseline", metavar="FILE", help="cases the implementation knowingly fails, each with a reason (see above)")
    conform.add_argument(
        "--compare", choices=("all", "requests"), default="all",
        help="the oracle: every log and request (default), or only the requests sent and the refusals (a log layout that differs by design)",
    )  # fmt: skip
    conform.add_argument(
        "-x", "--fail-fast", action="store_true", help="stop at the first failing case; the cases after it are reported as not run (never as passes)"
    )


def _add_fuzz(commands: _Commands) -> None:
    from prefix_model.edge.fuzz.command import FUZZ_HELP, add_arguments

    fuzz = commands.add_parser(
        "fuzz",
        help="generate scripts from the model and run them in lockstep through an implementation's adapter; shrink what differs",
        description=FUZZ_HELP,
        formatter_class=_RawHelp,
    )
    add_arguments(fuzz)


def _design_help() -> str:
    from prefix_model.edge.designs import DESIGN_HELP

    return DESIGN_HELP


@contextlib.contextmanager
def _loaded_design(argument: str) -> Iterator[LoadedDesign]:
    """Yield the design ``--design`` names, loaded; its load failures and its own exceptions become one line, exit 2."""
    from prefix_model.edge.designs import DesignError, blamed, load_design, warn_strays

    try:
        design = load_design(argument)
        warn_strays(design)
        with blamed(design):
            yield design
    except DesignError as error:
        raise _Unusable(str(error)) from None


def _add_explore(commands: _Commands) -> None:
    explore = commands.add_parser(
        "explore",
        help="explore every state of the loop within a depth, checking every property in each (breadth first)",
        describe=_explore_help,
        formatter_class=_RawHelp,
    )
    explore.add_argument("--depth", required=True, type=_count, metavar="K", help="the bound: moves after a root's setup")
    explore.add_argument("--json", action="store_true", help="print the machine report (one JSON object)")
    chosen = explore.add_mutually_exclusive_group()
    chosen.add_argument("--variant", metavar="NAME", help="explore a faulty variant (prefix-model variants) instead of the harness")
    chosen.add_argument("--design", metavar="FILE.py:NAME", help=_design_help())
    explore.add_argument("--roots", metavar="NAMES", help="only these roots, comma-separated: a behaviour of listener L2 (prepend, append, …) or the seeded drift-after-turn (default: every one; a name it does not know is one line, exit 2)")
    explore.add_argument("--jobs", type=_count, default=1, metavar="N", help="processes that share each level (default 1; the counts are the same)")
    explore.add_argument("--itf", metavar="FILE", help="write a violation's shortest script as an ITF trace (Apalache ADR-015 JSON)")


def _add_adapter(commands: _Commands) -> None:
    adapter = commands.add_parser(
        "adapter",
        help="serve the model itself over the adapter protocol on stdin/stdout (for conform)",
        description="The model as an adapter: answers hello, reset, apply, read, check and shutdown, one JSON line "
        "each (vectors.md §10 of the installed specification: see `prefix-model docs`). "
        "`prefix-model conform --adapter 'prefix-model adapter'` runs the vectors against it; "
        "with --variant it serves a faulty design instead (what a conform run or a fuzz campaign must find), with --design "
        "a design of your own (a Semantics subclass or instance in FILE.py; designs.md of the installed specification).",
    )
    chosen = adapter.add_mutually_exclusive_group()
    chosen.add_argument("--variant", metavar="NAME", help="serve a faulty variant of `prefix-model variants` instead of the harness's semantics")
    chosen.add_argument("--design", metavar="FILE.py:NAME", help=_design_help())


def _add_docs(commands: _Commands) -> None:
    commands.add_parser(
        "docs",
        help="print where the installed specification and its JSON Schemas are (absolute paths)",
        description="Print the absolute path of every file of the specification this installation ships — SPEC.md "
        "(the requirements), formats.md (log files and captures), vectors.md (the vectors and the adapter "
        "protocol) and each JSON Schema — with its title. The help of other commands names them as they are "
        "named here (vectors.md §10, schema/capture.schema.json).",
    )


# Each command's parser, in the order --help lists them.
COMMANDS: dict[str, Callable[[_Commands], None]] = {
    "request": _add_request,
    "demo": _add_demo,
    "check": _add_check,
    "timeline": _add_timeline,
    "vectors": _add_vectors,
    "variants": _add_variants,
    "review": _add_review,
    "conform": _add_conform,
    "fuzz": _add_fuzz,
    "explore": _add_explore,
    "adapter": _add_adapter,
    "docs": _add_docs,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser of ``prefix-model``: with ``command``, one that knows only that command.

    Each command's parser costs as much to build as a check of the bundled example takes, and a
    run needs only its own; without ``command`` (``--help``, an unknown word) every one is built.
    """
    parser = argparse.ArgumentParser(
        prog="prefix-model",
        description="Executable reference model of the deepseek-harness session prefix.",
        formatter_class=_Help,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for name, add in COMMANDS.items():
        if command is None or name == command:
            add(commands)
    return parser


def _invoked(argv: Sequence[str]) -> str | None:
    """Return the command ``argv`` runs, if its first word names one (options before it are prefix-model's own)."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def _add_checked_inputs(parser: argparse.ArgumentParser, verb: str, many: bool = False) -> None:
    """Add what check reads — LOG (``many``: one or more) or --example, --requests, --session — to a command that reads as check does."""
    given = parser.add_mutually_exclusive_group(required=True)
    # default=[]: argparse takes an empty LOG list that is its default for "not given", so --example alone is no conflict.
    given.add_argument("log", nargs="*" if many else "?", metavar="LOG", default=[] if many else None,
                       help="session log: in-memory event lines or persisted session.jsonl[.zstd]; - reads standard input"
                       + ("; several, a folder or a quoted pattern: a workspace (see above)" if many else ""))  # fmt: skip
    given.add_argument("--example", action="store_true", help=f"{verb} the example log and capture bundled with the package")
    parser.add_argument("--requests", metavar="FILE", help="JSONL capture of the requests the implementation sent (with --example: the bundled one)")
    parser.add_argument("--session", metavar="ID", help="the log's session id: the persisted form names it itself; for the in-memory form "
                        "a capture of one session names it, and a capture of several needs it")


def _example_pair(requests: str | None) -> tuple[Path, Path]:
    """The bundled example log and its capture (or the one --requests names)."""
    return EXAMPLE_DIR / EXAMPLE_FILE, EXAMPLE_DIR / EXAMPLE_REQUESTS_FILE if requests is None else Path(requests)


@contextlib.contextmanager
def _request_log(path: str | None, example: bool) -> Iterator[tuple[Path, str, str | None]]:
    """Yield the log at ``path`` (- : standard input, copied) or the bundled example as a file, its name, and the session it names."""
    if example:
        yield EXAMPLE_DIR / EXAMPLE_FILE, EXAMPLE_FILE, EXAMPLE_SESSION_ID
        return
    assert path is not None
    name = "<stdin>" if path == "-" else path
    with rereadable(STDIN if path == "-" else Path(path)) as readable:
        yield readable, name, LogStream(readable, name).session_id()  # the persisted header's; None for the in-memory form


def _frozen(readable: Path, name: str) -> Log:
    """Return the whole log at ``readable`` frozen, in either form, zstd included, as the spec reads it."""
    stream = LogStream(readable, name)
    if stream.read_header() is None:  # the in-memory form: its own reader, with file:line errors
        return read_log(readable, name)  # a pipe's copy is named as the user named it
    log = seed_log(tuple(event for _, event in stream))
    if isinstance(log, Rejection):
        raise _Unusable(f"{name}: {log}")
    return log


def _spec_request(readable: Path, name: str, turn: int, step: int, session_id: str | None) -> Request | Rejection:
    """The spec's path: ``reconstruct_request`` over the whole log frozen (its memory follows the file)."""
    return reconstruct_request(_frozen(readable, name), turn, step, session_id)


def _shown(answer: Request | Rejection | str) -> str:
    """What the command prints for an answer: the request's JSON text, or the error."""
    return json_text(request_to_json(answer)) if isinstance(answer, Request) else str(answer)


def _spec_shown(readable: Path, name: str, turn: int, step: int, session_id: str | None) -> str:
    """What the spec's path prints, the file read again: its request, its rejection, or why it cannot read the log."""
    try:
        return _shown(_spec_request(readable, name, turn, step, session_id))
    except (LogReadError, _Unusable) as error:
        return str(error)


@ensure(
    lambda readable, name, turn, step, session_id, result: _shown(result) == _spec_shown(readable, name, turn, step, session_id),
    "the request printed is the one the spec reconstructs from the whole log frozen",
    enabled=ENABLED,
)
def _request(readable: Path, name: str, turn: int, step: int, session_id: str | None) -> Request | Rejection:
    """Return the request step (turn, step) of the log must have sent: by check's fold where it vouches for it, else the spec's path."""
    folded = fold_request(LogStream(readable, name), turn, step, session_id)
    return folded if folded is not None else _spec_request(readable, name, turn, step, session_id)


def _run_request(args: argparse.Namespace) -> int:
    with _request_log(args.log, args.example) as (readable, name, named):
        session_id = args.session_id if args.session_id is not None else named  # the persisted header names it
        request = _request(readable, name, args.turn, args.step, session_id)
    if isinstance(request, Rejection):
        raise _Unusable(f"{name}: {request}")
    print(_shown(request))
    return EXIT_OK


def _explain(world: World, sent: SentRequest) -> str:
    """Return how a sent request reconstructs from its session's log."""
    log = world.session(sent.session_id).log
    span = find_step(log, sent.turn, sent.step)
    assert not isinstance(span, Rejection)
    headers = [e for e in log.events[: sent.log_length] if e.type == REQUEST_HEADER]
    where = f"request/header seq {headers[-1].seq} ({headers[-1].field('reason')})" if headers else "no header"
    prefix = len(sent.request.header.message_prefix or ())
    history = len(sent.request.messages) - prefix
    return (
        f"# instance {sent.instance_id}, turn {sent.turn} step {sent.step}: header = {where}; messages = its "
        f"messagePrefix ({prefix}) ++ derive_messages(seqs 0..{span.start_seq - 1}) ({history})"
    )


def _run_demo(json_actions: bool) -> int:
    from prefix_model.vectors.codec import action_to_json
    from prefix_model.examples.loop_demo import DEMO_ACTIONS
    from prefix_model.loop.properties import PROPERTIES, check_all
    from prefix_model.loop.transitions import run
    from prefix_model.review.brief import action_brief

    world = run(DEMO_ACTIONS)
    if json_actions:
        print(f"# the scenario: {len(DEMO_ACTIONS)} actions, as the vectors spell them (vectors.md §5; `prefix-model docs` says where); any run replays from its action list")
    else:  # a newcomer reads the story first; the exact form is one flag away
        print(f"# the scenario: {len(DEMO_ACTIONS)} actions, in brief (--json-actions spells them as the vectors do, to replay)")
    for number, action in enumerate(DEMO_ACTIONS, 1):
        print(f"#   {json_text(action_to_json(action))}" if json_actions else f"#   {number:2} {action_brief(action)}")
    for session in world.sessions:
        print(f"\n# session {session.id}: {len(session.log.events)} events, as the harness writes them")
        for event in session.log.events:
            print(event_to_line(event))
    print(f"\n# the {len(world.requests)} requests on the wire, each rebuilt from the log")
    for sent in world.requests:
        print(_explain(world, sent))
        print(json_text(request_to_json(sent.request)))
    violations = check_all(world)
    print(f"\n# {len(PROPERTIES)} properties checked: " + ("all hold" if not violations else f"{len(violations)} violated"))
    for violation in violations:
        print(f"#   {violation}")
    return EXIT_OK if not violations else EXIT_VIOLATIONS


def _names_many(word: str) -> bool:
    from prefix_model.edge.workspace import names_many

    return names_many(word)


@ensure(lambda word, result: result == _names_many(word), "the screen agrees with names_many")
def _may_name_many(word: str) -> bool:
    """Whether the one LOG argument ``word`` names a workspace: ``names_many``, screened by a cheaper test.

    A regular file is one log (``names_many`` says so too: it is no folder, and it exists), and
    the common case; only for anything else is the workspace module imported (start-up).
    """
    return not os.path.isfile(word) and _names_many(word)


def _run_check(args: argparse.Namespace) -> int:
    junit = None if args.junit is None else _writable(args.junit)
    try:
        if args.example:
            log, requests = _example_pair(args.requests)
            return _print_check(check_log(log, requests, args.session or EXAMPLE_SESSION_ID), args, junit)
        if len(args.log) > 1 or _may_name_many(args.log[0]):
            return _run_workspace(args, junit)
        return _print_check(_check_one(args), args, junit)
    except (LogReadError, Unusable) as error:
        if junit is not None:  # the CI step gets its testcase, an error, as a workspace's unusable log does
            from prefix_model.edge.workspace import junit_of_one

            _written(lambda: junit_of_one(error, args.log[0] if args.log else EXAMPLE_FILE, None, junit))
        raise


def _written(write: Callable[[], Any]) -> Any:
    """Run ``write`` (a workspace's check, a JUnit report), its WorkspaceError the one line of every unusable input."""
    from prefix_model.edge.workspace import WorkspaceError

    try:
        return write()
    except WorkspaceError as error:
        raise _Unusable(str(error)) from None


def _check_one(args: argparse.Namespace) -> Report:
    """Check the one LOG (a file, or - for standard input) against --requests, as check always has."""
    given = None if args.requests is None else Path(args.requests)
    log = Path("/dev/stdin") if args.log[0] == "-" else Path(args.log[0])
    # Progress on a terminal only (stderr): a pipe or a file gets the report and nothing else, and
    # the check does not import tqdm.
    if not sys.stderr.isatty():
        return check_log(log, given, args.session)
    from tqdm import tqdm

    with tqdm(desc=f"checking {Path(args.log[0]).name}", unit=" events", unit_scale=True, leave=False) as bar:

        def advance(events: int) -> None:
            bar.update(events)

        return check_log(log, given, args.session, advance)


def _run_workspace(args: argparse.Namespace, junit: Path | None) -> int:
    """Check every log LOG... names (CLI-20): each paired with its capture by name, in --jobs processes."""
    from prefix_model.edge.workspace import check_all, discover

    if args.requests is not None or args.session is not None:
        raise _Unusable("--requests and --session name one log's capture and session: a workspace pairs each log with the capture "
                        "beside it by name (check --help)")  # fmt: skip
    if "-" in args.log:
        raise _Unusable("-: standard input is one log: check it alone")
    targets = _written(lambda: discover(args.log))
    cap = args.max_findings or None
    if not sys.stderr.isatty():
        return int(_written(lambda: check_all(targets, sys.stdout, jobs=args.jobs, cap=cap, as_json=args.json, junit=junit).status))
    from tqdm import tqdm

    with tqdm(desc="checking", unit=" logs", leave=False) as bar:

        def progress() -> None:
            bar.update(1)

        return int(_written(lambda: check_all(targets, sys.stdout, jobs=args.jobs, cap=cap, as_json=args.json, junit=junit, progress=progress).status))


def _writable(name: str) -> Path:
    """The --junit file, refused before any log is checked when its folder is not there (or it is a folder)."""
    path = Path(name)
    if path.is_dir() or not path.parent.is_dir():
        raise _Unusable(f"{name}: cannot write the JUnit report there (no such folder, or a folder)")
    return path


def _run_timeline(args: argparse.Namespace) -> int:
    from prefix_model.edge.timeline import CONTEXT, TimelineError, View, draw_timeline

    if args.around is not None and (args.first is not None or args.last is not None):
        raise _Unusable("--around draws SEQ and --context seqs each side; give it without --from and --to")
    view = View(args.first, args.last, args.around, CONTEXT if args.context is None else args.context, args.findings)
    out = Path(args.out)
    try:
        view.check()
        if args.example:
            log, requests = _example_pair(args.requests)
            drawn = draw_timeline(log, requests, args.session or EXAMPLE_SESSION_ID, out, EXAMPLE_FILE, view)
        else:
            log = STDIN if args.log == "-" else Path(args.log)
            drawn = draw_timeline(log, None if args.requests is None else Path(args.requests), args.session, out, view=view)
    except TimelineError as error:  # the same one line as every unusable input
        raise _Unusable(str(error)) from None
    print(drawn.summary(out))
    return EXIT_OK


def _print_check(report: Report, args: argparse.Namespace, junit: Path | None = None) -> int:
    cap = args.max_findings or None  # 0: every finding
    print(json.dumps(report.as_json(cap), ensure_ascii=False) if args.json else report.as_text(cap))
    if junit is not None:  # the one log as a workspace's JUnit report: one testcase
        from prefix_model.edge.workspace import junit_of_one

        _written(lambda: junit_of_one(report, report.log, cap, junit))
    return EXIT_OK if report.conforms else EXIT_VIOLATIONS


def _count(text: str) -> int:
    """A non-negative integer argument (argparse reports anything else in one line, exit 2)."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


_count.__name__ = "non-negative integer"  # argparse names the type in its one-line error


def _positive(text: str) -> int:
    """A positive integer argument."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_positive.__name__ = "positive integer"


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it."""
    from importlib.util import find_spec

    return find_spec(module) is not None


def _run_review(args: argparse.Namespace) -> int:
    from prefix_model.edge.review import run_diagram, run_review

    if args.diagram is not None:  # the diagram alone, ready to paste into Markdown: no review is computed
        mixed = [flag for flag, given in (("--plot", args.plot), ("--short", args.short), ("--turns", args.turns), ("--design", args.design)) if given]
        if mixed:
            raise _Unusable(f"--diagram prints the diagram alone; run the review without it for {', '.join(mixed)}")
        return run_diagram(args.json, args.diagram)
    plot = Path(args.plot) if args.plot is not None else None
    if plot is not None and not plot.parent.is_dir():
        raise _Unusable(f"{plot}: no such directory for the plot")
    if plot is not None and not _installed("matplotlib"):  # an extra: asked for before the review's seconds of work
        raise _Unusable("review --plot draws with matplotlib, which is not installed: pip install 'session-prefix-model[plot]'")
    turns = args.turns or 1
    try:
        if args.design is None:
            return run_review(args.json, plot, args.short, turns)
        with _loaded_design(args.design) as design:
            return run_review(args.json, plot, args.short, turns, design)
    except BrokenPipeError:  # stdout's reader went away: not the plot's failure
        raise
    except OSError as error:  # the plot could not be written
        raise _Unusable(f"{plot}: {error.strerror or error}") from None


def _run_variants(as_json: bool, design_named: str | None = None) -> int:
    if design_named is not None:
        from prefix_model.edge.designs import judge_design, verdict_json, verdict_text

        with _loaded_design(design_named) as design:
            judged = judge_design(design)
        print(json.dumps(verdict_json(design, judged), ensure_ascii=False) if as_json else verdict_text(design, judged))
        return EXIT_VIOLATIONS if judged.first else EXIT_OK
    from tqdm import tqdm

    from prefix_model.loop.properties import check_all
    from prefix_model.loop.semantics import HARNESS
    from prefix_model.loop.variants import VARIANTS, judge, run_witness

    # Each variant runs the witness: seconds in all, so a terminal sees them go by (stderr only).
    verdicts = [judge(variant) for variant in tqdm(VARIANTS, desc="judging variants", unit=" variants", leave=False, disable=not sys.stderr.isatty())]
    harness = check_all(run_witness(HARNESS))
    for variant, verdict in zip(VARIANTS, verdicts):
        if as_json:
            record = {"variant": variant.name, "summary": variant.summary, "rejected": verdict.detected,
                      "rejectedBy": list(verdict.rejected_by), "expected": list(variant.expected), "first": verdict.first}  # fmt: skip
            print(json.dumps(record, ensure_ascii=False))
        else:
            status = "rejected" if verdict.detected else "UNDETECTED"
            print(f"{variant.name:28} {status:10} by {', '.join(verdict.rejected_by) or '-':32} {variant.summary}")
    if not as_json:
        print(f"harness semantics on the witness: {'all properties hold' if not harness else f'{len(harness)} violations'}")
    return EXIT_OK if all(v.detected for v in verdicts) and not harness else EXIT_VIOLATIONS


def _run_explore(args: argparse.Namespace) -> int:
    from prefix_model.edge.explore import ExploreError, report_json, report_text, roots_named, run_exploration, semantics_named, verdict, write_itf

    try:
        if args.design is None:
            measured = run_exploration(args.depth, args.variant, roots_named(args.roots), args.jobs)
            semantics, label = semantics_named(args.variant), args.variant
        else:
            with _loaded_design(args.design) as design:
                measured = run_exploration(args.depth, None, roots_named(args.roots), args.jobs, (design.label, design.semantics))
            semantics, label = design.semantics, design.label
        found = measured.exploration.found
        if args.itf is not None and found is not None:
            write_itf(Path(args.itf), found, semantics, label)
    except ExploreError as error:
        raise _Unusable(str(error)) from None
    print(json.dumps(report_json(measured), ensure_ascii=False) if args.json else report_text(measured))
    if args.itf is not None and found is None:
        print(f"prefix-model: no violation, so no ITF trace was written to {args.itf}", file=sys.stderr)
    return verdict(measured)


def _run_vectors(args: argparse.Namespace) -> int:
    from prefix_model.edge.vectors.generate import run as write_vectors

    if args.out is None and args.bundle is None:
        raise _Unusable("vectors: name --out DIR, --bundle FILE.tar.gz, or both")
    return write_vectors(None if args.out is None else Path(args.out), None if args.bundle is None else Path(args.bundle))


def _run_docs() -> int:
    from prefix_model.edge.vectors.bundle import installed_docs

    print(installed_docs())
    return EXIT_OK


def _run_conform(args: argparse.Namespace) -> int:
    try:
        return _conform(args)
    except _Unusable as error:
        if args.json:  # the machine reader gets its verdict too, never an empty stdout
            print(json.dumps({"error": str(error)}, ensure_ascii=False))
        raise


def _conform(args: argparse.Namespace) -> int:
    import tempfile

    from prefix_model.edge.runner.baseline import Baseline, BaselineError, read_baseline
    from prefix_model.edge.runner.client import AdapterFailure, AdapterProcess
    from prefix_model.edge.runner.run import as_json, as_junit, as_text, failed, ran, run_cases
    from prefix_model.edge.runner.consumer import VectorsUnreadable
    from prefix_model.edge.vectors.generate import generate as generate_vectors

    try:
        baseline = read_baseline(Path(args.baseline)) if args.baseline is not None else Baseline()
    except BaselineError as error:
        raise _Unusable(str(error)) from None
    with tempfile.TemporaryDirectory(prefix="prefix-model-conform-") as scratch:
        directory = Path(args.vectors) if args.vectors is not None else Path(scratch)
        if args.vectors is None:
            with contextlib.redirect_stdout(sys.stderr):
                if generate_vectors(directory) != 0:
                    raise _Unusable("the built-in vectors could not be generated")
        elif not (directory / "manifest.json").is_file():
            raise _Unusable(f"{directory}: no manifest.json (write vectors with `prefix-model vectors --out DIR`)")
        try:
            adapter = AdapterProcess(args.adapter, args.timeout)
        except AdapterFailure as failure:
            raise _Unusable(str(failure)) from None
        try:
            outcomes = run_cases(
                adapter, directory, args.only, progress=sys.stderr.isatty(), fail_fast=args.fail_fast, baseline=baseline, compare=args.compare
            )
        except VectorsUnreadable as error:
            raise _Unusable(str(error)) from None
        finally:
            adapter.stop()
    if not outcomes:
        raise _Unusable(f"--only {args.only!r} matches no case of {directory}" if args.only is not None else f"{directory}: the manifest lists no case")
    if ran(outcomes) == 0:  # a green run that tested nothing is no verdict
        reasons = sorted({o.problems[0] for o in outcomes if o.problems})
        raise _Unusable(f"no case ran ({len(outcomes)} not applicable or not run: {'; '.join(reasons)[:300]})")
    if args.junit is not None:
        try:
            Path(args.junit).write_bytes(as_junit(outcomes, adapter.hello))
        except OSError as error:
            raise _Unusable(f"{args.junit}: {error.strerror or error}") from None
    print(json.dumps(as_json(outcomes, adapter.hello, args.compare), ensure_ascii=False) if args.json else as_text(outcomes, adapter.hello, args.compare))
    return EXIT_VIOLATIONS if failed(outcomes) else EXIT_OK


def _run_adapter(args: argparse.Namespace) -> int:
    from prefix_model.edge.runner.server import Server, serve

    if args.design is not None:
        with _loaded_design(args.design) as design:
            return serve(sys.stdin, sys.stdout, Server(design.semantics, design.label))
    if args.variant is None:
        return serve(sys.stdin, sys.stdout)
    from prefix_model.loop.variants import VARIANTS, semantics_of

    if args.variant not in {v.name for v in VARIANTS}:
        raise _Unusable(f"no variant {args.variant!r} (prefix-model variants lists them)")
    return serve(sys.stdin, sys.stdout, Server(semantics_of(args.variant), args.variant))


def _run_fuzz(args: argparse.Namespace) -> int:
    from prefix_model.edge.fuzz.campaign import Unusable as FuzzUnusable
    from prefix_model.edge.fuzz.command import BadInput, run

    try:
        return run(args)
    except (BadInput, FuzzUnusable) as error:
        if args.json:  # the machine reader gets its verdict too, never an empty stdout
            print(json.dumps({"error": str(error)}, ensure_ascii=False))
        raise _Unusable(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``prefix-model``; return the exit status."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # a reader gone before the last buffer is written is seen here, not in the flush at exit
        return status
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """End silently, as a Unix tool killed by SIGPIPE ends, when the reader of stdout went away (``| head``).

    The status is 141 (128 + SIGPIPE, what a shell shows for ``cat`` there): never 0, 1 or 2, which
    read as a verdict. What is left in stdout's buffer goes to the null device, or the flush at
    exit would fail again and print.
    """
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    return EXIT_READER_GONE


def _main(argv: Sequence[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # A lone surrogate (a file name's undecodable byte, a \udc80 in a log's value) prints as its
        # escape, so the text stays valid UTF-8 and --json stays valid JSON.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_invoked(words)).parse_args(words)
    try:
        if args.command == "request":
            return _run_request(args)
        if args.command == "variants":
            return _run_variants(args.json, args.design)
        if args.command == "check":
            return _run_check(args)
        if args.command == "timeline":
            return _run_timeline(args)
        if args.command == "vectors":
            return _run_vectors(args)
        if args.command == "docs":
            return _run_docs()
        if args.command == "adapter":
            return _run_adapter(args)
        if args.command == "conform":
            return _run_conform(args)
        if args.command == "fuzz":
            return _run_fuzz(args)
        if args.command == "review":
            return _run_review(args)
        if args.command == "explore":
            return _run_explore(args)
        return _run_demo(args.json_actions)
    except (LogReadError, _Unusable, Unusable) as error:
        print(f"prefix-model: {error}", file=sys.stderr)
        if args.command == "check" and args.json:  # the machine reader gets its verdict too, never an empty stdout
            print(json.dumps(unusable_json(error), ensure_ascii=False))
        return EXIT_UNUSABLE


if __name__ == "__main__":
    sys.exit(main())
