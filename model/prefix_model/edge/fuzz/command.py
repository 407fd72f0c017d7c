"""``prefix-model fuzz``: the command line of a campaign (its flags, its inputs read, its reports written)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from prefix_model.edge.fuzz.campaign import Found, Result, Settings, Unusable, replay_script, run_campaign
from prefix_model.edge.fuzz.generate import Coverage, Script, draw
from prefix_model.edge.fuzz.lockstep import COMPARES
from prefix_model.edge.fuzz.report import as_json, as_junit, as_text, reproduce_line, save_found, shrunk_json, shrunk_lines
from prefix_model.edge.fuzz.rebaseline import Accept, RewriteInputError, rewrite, write_atomically
from prefix_model.edge.runner.baseline import Baseline, BaselineError, InputUnreadable, KnownDivergence, is_script, read_baseline, read_json_file
from prefix_model.edge.runner.consumer import JsonObject

__all__ = ["FUZZ_HELP", "add_arguments", "run", "BadInput", "Unusable"]

FUZZ_HELP = """\
Differential testing: generate action scripts by walking the model, run each in lockstep through
the model (in process) and an implementation's adapter (a child process speaking the adapter
protocol), and compare every action's reply — the events appended per session, the requests sent,
or a refusal — as JSON text. The first difference stops a script. Each divergence is shrunk with
the implementation as the oracle (turns and actions dropped, arguments simplified, the adapter
reset for every attempt) and reported with its first difference (JSON Pointer, both values
whole), its original and shrunk length, the shrunk script and a command that reproduces it.
A campaign is the same sequence of scripts for its seed, whatever --jobs. A divergence's signature
(what groups it, what its shrink keeps, what a baseline names) is the action, the kind, the pointer
with indices and ids wildcarded, and the first differing member by kind: "Dispatch: replies differ
at /appended/* (expected turn/end, got request/header)". A signature says where, not why: with
--keep-going up to --witnesses scripts of each new one are shrunk, and one whose shrunk script has
other action kinds than those before is reported (and saved) as another witness: perhaps another cause.

--compare requests is a declared, weaker oracle for an implementation whose log layout differs by
design: only the requests sent and the refusals are compared, never the events appended; the
report and its JSON ("compare") say which oracle ran.

A crash, hang or garbage line of the adapter is a fault, reported apart with its stderr tail (the
adapter is restarted), never a divergence. --baseline declares divergences an implementation
knowingly shows: a JSON object {"divergences": [{"signature", "reason", "script"?}]} (the file
conform --baseline reads, whose "cases" fuzz ignores); they are reported but do not fail the run,
and an entry no script shows (its own script replayed, when it has one) is stale and fails it.
An entry belongs to one oracle ("oracle": "events", the default, or "requests"): a run by the other
neither matches it nor calls it stale, and says how many it left out of scope.

--rewrite-baseline (with --baseline FILE) brings FILE up to date instead of failing on it: each
entry of the run's oracle that has a script is replayed — dropped when it no longer diverges
("fixed"), given its new signature when it diverges otherwise ("renamed"), its reason kept either
way. Entries that come to show one signature (renamed onto another's, or written twice) are
merged into the first, where it stood: its members, the group's first script and every reason,
joined (a baseline matches by signature, so the others would never be reported nor found stale);
each merge is listed ("merged") for a person to read. Without --scripts or --seconds no campaign
runs (entries with no script are left as "unchecked"); with one, an entry no script showed is
fixed, and each new divergence of the campaign is added, shrunk script and all, only with a reason
given for it — --accept-new-from FILE (a JSON object, signature -> reason: the "new" list of a run
without it names them), or --accept-new REASON for every one — and otherwise listed and left out.
Under --compare requests each new divergence's shrunk script is also replayed by the events
oracle: where that stops at an entry of the events oracle, the new one is listed as that entry's
requests face ("faces"), and --accept-known-faces adds it with that entry's reason ("the requests
face of ...: REASON"); a reason FILE gives it comes first. Each change goes to stderr, the verdict
to stdout (--json: one object); FILE is replaced atomically, the other oracle's entries and
conform's "cases" untouched, and not at all when the adapter faulted.

--replay FILE and --script N (with --seed K) run one script; a divergence is shrunk as a
campaign's is (--shrink-budget), saved with --save DIR, and reported with a command that runs it again.
--keep-arguments shrinks by dropping actions only, every argument as drawn: a case to adopt that a real
implementation must pass (a simplified \"x\" provider or source is one the model takes and it may not).

example:
  prefix-model fuzz --adapter 'prefix-model adapter' --seconds 60            (the model against itself)
  prefix-model fuzz --adapter './adapter' --scripts 2000 --jobs 2 --keep-going --save found/
  prefix-model fuzz --adapter './adapter' --replay found/fuzz/dispatch-1a2b3c4d5e/case.json
  prefix-model conform --adapter './adapter' --vectors found/                (the saved cases as vectors)
  prefix-model fuzz --adapter './adapter' --baseline known.json --rewrite-baseline     (drop the fixed, rename)
  prefix-model fuzz --adapter './adapter' --baseline known.json --rewrite-baseline --scripts 500 \\
      --accept-new 'issue 42: by design'             (and add what a campaign finds, with that reason)
  prefix-model fuzz --adapter './adapter' --baseline known.json --rewrite-baseline --scripts 500 \\
      --accept-new-from reasons.json                 (add what it names, each with its own reason)
  prefix-model fuzz --adapter './adapter' --baseline known.json --rewrite-baseline --scripts 500 \\
      --compare requests --accept-known-faces        (add the requests faces of declared entries)

exit status: 0 no new divergence; 1 a new divergence or a stale baseline entry; 2 the adapter is
unusable (will not start, speak the protocol or run scenarios; faults on every script), a fault
with no divergence, or an input cannot be read. With --rewrite-baseline: 0 written; 1 written, but a
new divergence was left out or entries were merged; 2 not written (a fault, an unreadable baseline
or reasons file, an unusable adapter)
"""


class BadInput(Exception):
    """A flag's input that cannot be read: one line, exit 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``prefix-model fuzz``."""
    parser.add_argument("--adapter", required=True, metavar="'CMD ARGS'", help="the adapter's command line (split as a shell would)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--scripts", type=int, metavar="N", help="run N scripts (default 200 when --seconds is not given)")
    budget.add_argument("--seconds", type=float, metavar="S", help="run for S seconds of generation")
    parser.add_argument("--seed", type=int, default=0, metavar="K", help="the campaign's seed (default 0)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="adapter processes at once (default 1)")
    parser.add_argument("--keep-going", action="store_true", help="collect distinct divergences (by signature) instead of stopping at the first")
    parser.add_argument("--save", metavar="DIR", help="write each shrunk divergence as a scenario case (and a manifest) under DIR")
    parser.add_argument("--baseline", metavar="FILE", help="known divergences: reported, not failing; stale entries fail")
    parser.add_argument("--replay", metavar="FILE", help="run one saved script (a case.json, or a JSON array of actions) instead of a campaign")
    parser.add_argument("--script", type=int, metavar="N", help="with --seed: run only script N of that campaign (as a report's reproduce line says)")
    parser.add_argument("--compare", choices=COMPARES, default="all", help="the oracle: every reply (default), or only the requests sent and the refusals")
    parser.add_argument("--shrink-budget", type=int, default=2000, metavar="N", help="replays a shrink may spend on one divergence (default 2000)")
    parser.add_argument("--witnesses", type=int, default=6, metavar="N", help="with --keep-going: shrink up to N scripts of each new divergence's "
                        "signature, the first included, and report each whose shrunk script has other action kinds as another witness (default 6; 1: the first only)")  # fmt: skip
    parser.add_argument("--keep-arguments", action="store_true", help="shrink by dropping actions only, every argument as drawn: a case to adopt "
                        "that the reference implementation must pass (a simplified \"x\" provider is one it may not route)")  # fmt: skip
    parser.add_argument("--rewrite-baseline", action="store_true", help="replay the --baseline file's entries and write it anew: fixed ones dropped, renamed ones renamed (see above)")
    accept = parser.add_mutually_exclusive_group()
    accept.add_argument("--accept-new", metavar="REASON", help="with --rewrite-baseline and a campaign: add its new divergences to the baseline with REASON")
    accept.add_argument("--accept-new-from", metavar="FILE", help="with --rewrite-baseline and a campaign: add each new divergence whose signature FILE "
                        "(a JSON object, signature -> reason) names, with its reason; the others are left out")  # fmt: skip
    parser.add_argument("--accept-known-faces", action="store_true", help="with --rewrite-baseline --compare requests and a campaign: add each new "
                        "divergence that is the requests face of an events-oracle entry, with that entry's reason")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the machine report (one JSON object)")
    parser.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per adapter response (default 30)")


def _read_script(path: str) -> list[JsonObject]:
    try:
        value = read_json_file(Path(path), "script")
    except InputUnreadable as error:
        raise BadInput(str(error)) from None
    actions = value.get("actions") if isinstance(value, dict) else value
    if not is_script(actions):
        raise BadInput(f"{path}: not a script (a case with actions, or a non-empty JSON array of action objects)")
    assert isinstance(actions, list)
    return actions


def _baseline(path: str | None) -> tuple[KnownDivergence, ...]:
    return () if path is None else _read_baseline(path).divergences


def _read_baseline(path: str) -> Baseline:
    try:
        return read_baseline(Path(path))
    except BaselineError as error:
        raise BadInput(str(error)) from None


def _accepting(args: argparse.Namespace) -> bool:
    return args.accept_new is not None or args.accept_new_from is not None or args.accept_known_faces


def _reasons(path: str) -> dict[str, str]:
    """``--accept-new-from FILE``: a JSON object, each new divergence's signature to the reason it is added with."""
    try:
        value = read_json_file(Path(path), "reasons file")
    except InputUnreadable as error:
        raise BadInput(str(error)) from None
    if not isinstance(value, dict):
        raise BadInput(f"{path}: a reasons file is a JSON object, each divergence's signature to the reason it is added with")
    for signature, reason in value.items():
        if not isinstance(reason, str) or not reason.strip():
            raise BadInput(f"{path}: the reason for {signature!r} is not a non-empty string")
    return value


def _rewrite(args: argparse.Namespace) -> int:
    if not args.rewrite_baseline:
        raise BadInput("--accept-new, --accept-new-from and --accept-known-faces add to a baseline being rewritten: give --rewrite-baseline and --baseline FILE")
    if args.baseline is None:
        raise BadInput("--rewrite-baseline rewrites the file --baseline names: give --baseline FILE")
    if args.replay is not None or args.script is not None or args.save is not None or args.junit is not None:
        raise BadInput("--rewrite-baseline replays the baseline's own scripts: it takes no --replay, --script, --save or --junit")
    campaign = args.scripts is not None or args.seconds is not None
    if args.accept_new is not None and (not campaign or not args.accept_new.strip()):
        raise BadInput("--accept-new REASON adds what a campaign finds: give a non-empty REASON and --scripts N or --seconds S")
    if _accepting(args) and not campaign:
        raise BadInput("--accept-new-from and --accept-known-faces add what a campaign finds: give --scripts N or --seconds S")
    if args.accept_known_faces and args.compare != "requests":
        raise BadInput("--accept-known-faces adds the requests faces of events-oracle entries: give --compare requests")
    accept = Accept(args.accept_new, _reasons(args.accept_new_from) if args.accept_new_from is not None else {}, args.accept_known_faces)
    baseline = _read_baseline(args.baseline)
    raw = read_json_file(Path(args.baseline), "baseline")  # read_baseline vouched for it; kept whole, cases included
    settings = Settings(seed=args.seed, scripts=args.scripts, seconds=args.seconds, jobs=args.jobs, shrink_budget=args.shrink_budget,
                        keep_arguments=args.keep_arguments)
    try:
        done = rewrite(args.adapter, args.timeout, Path(args.baseline), raw, baseline, args.compare, settings if campaign else None, accept)
    except RewriteInputError as error:
        raise BadInput(str(error)) from None
    for line in done.lines():
        print(f"prefix-model fuzz: {line}", file=sys.stderr)
    if done.written:
        try:
            write_atomically(Path(args.baseline), done.value)
        except OSError as error:
            raise BadInput(f"{args.baseline}: not written: {error.strerror or error}") from None
    print(json.dumps(done.to_json(args.baseline), ensure_ascii=False) if args.json else done.summary(args.baseline))
    return done.status()


def _save_folder(folder: str) -> None:
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInput(f"--save {folder}: {error.strerror or error}") from None


def _saved(found: list[Found], implementation: str, args: argparse.Namespace) -> list[Path]:
    """Save ``found`` as cases under ``--save DIR``, each path said on stderr; a write that fails is exit 2."""
    try:
        written = save_found(found, implementation, args.compare, Path(args.save))
    except OSError as error:
        raise BadInput(f"{error.filename or args.save}: {error.strerror or error}") from None
    for path in written:
        print(f"prefix-model fuzz: saved {path}", file=sys.stderr)
    return written


def _progress(result: Result) -> None:
    reached = sum(1 for n in result.coverage.outcomes.values() if n)
    print(f"\r\x1b[K[{result.seconds:6.1f} s] {result.scripts} scripts, {result.actions} actions, {reached} outcome classes, "
          f"{len(result.found)} divergence group(s), {len(result.faults)} fault(s)", end="", file=sys.stderr, flush=True)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the command; raise ``Unusable`` or ``BadInput`` for exit 2."""
    if args.jobs < 1 or (args.scripts is not None and args.scripts < 1) or (args.seconds is not None and args.seconds <= 0):
        raise BadInput("--jobs and --scripts take a positive count, --seconds a positive time")
    if (args.script is not None and args.script < 0) or args.shrink_budget < 0 or args.timeout <= 0:
        raise BadInput("--script and --shrink-budget take a count of 0 or more, --timeout a positive time")
    if args.witnesses < 1:
        raise BadInput("--witnesses takes a positive count (1: shrink the first script of a signature only)")
    if args.rewrite_baseline or _accepting(args):
        return _rewrite(args)
    if args.replay is not None or args.script is not None:
        return _replay(args)
    settings = Settings(
        seed=args.seed, scripts=args.scripts if args.scripts is not None or args.seconds is not None else 200, seconds=args.seconds,
        jobs=args.jobs, keep_going=args.keep_going, shrink_budget=args.shrink_budget, keep_arguments=args.keep_arguments,
        baseline=_baseline(args.baseline), compare=args.compare, witnesses=args.witnesses,
    )  # fmt: skip
    if args.save is not None:  # a folder that cannot be made fails now, not after the campaign
        _save_folder(args.save)
    tty = sys.stderr.isatty()
    result = run_campaign(args.adapter, args.timeout, settings, _progress if tty else None)
    if tty:
        print("\r\x1b[K", end="", file=sys.stderr, flush=True)
    if args.save is not None:
        _saved(result.new, result.implementation, args)
    if args.junit is not None:
        try:
            Path(args.junit).write_bytes(as_junit(result))
        except OSError as error:
            raise BadInput(f"{args.junit}: {error.strerror or error}") from None
    print(json.dumps(as_json(result, args.adapter), ensure_ascii=False) if args.json else as_text(result, args.adapter))
    if result.new or result.stale:
        return 1
    return 2 if result.faults else 0


def _replay(args: argparse.Namespace) -> int:
    script: list[JsonObject] | None = _read_script(args.replay) if args.replay is not None else None
    if args.save is not None:
        _save_folder(args.save)

    def actions(offered: frozenset[str], providers: tuple[str, ...]) -> list[JsonObject]:
        if script is not None:
            return script
        coverage = Coverage()  # script N of a campaign depends on the coverage the scripts before it reached
        for number in range(args.script):
            draw(args.seed, number, coverage, offered, providers=providers)
        return list(draw(args.seed, args.script, coverage, offered, providers=providers).actions)

    implementation, difference, replayed, shrunk = replay_script(args.adapter, args.timeout, actions, args.compare, args.shrink_budget, args.keep_arguments)
    reproduce = reproduce_line(args.adapter, args.compare, seed=args.seed, script=args.script, replay=args.replay)
    saved: list[str] = []
    if args.save is not None:  # as a campaign's divergence is saved: its shrunk script as a case, and the manifest
        number = args.script if script is None else -1  # -1: a script read from a file, no campaign's
        found = [] if difference is None else [Found(Script(args.seed, number, tuple(replayed), ()), difference, shrunk=shrunk)]
        saved = [str(path) for path in _saved(found, implementation, args)]
    if args.json:
        print(json.dumps({
            "implementation": implementation, "compare": args.compare, "actions": replayed,
            "difference": None if difference is None else difference.to_json(), "shrunk": shrunk_json(shrunk),
            "reproduce": reproduce, "saved": saved,
        }, ensure_ascii=False))  # fmt: skip
    else:
        print(f"adapter: {implementation}")
        if args.compare != "all":
            print(f"oracle: --compare {args.compare}")
        print(f"{len(replayed)} actions: " + ("no difference" if difference is None else difference.text()))
        if difference is not None:
            print("\n".join([*shrunk_lines(shrunk, difference.index + 1), f"    reproduce: {reproduce}"]))
    return 0 if difference is None else 1
