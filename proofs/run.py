"""Run CrossHair over every core module of prefix_model, and over the planted bugs.

    .venv/bin/python proofs/run.py                 # core modules AND planted bugs (``make proofs``)
    .venv/bin/python proofs/run.py --core          # core modules only
    .venv/bin/python proofs/run.py --bugs          # planted bugs only
    .venv/bin/python proofs/run.py --module surface --module splice_keeps_end
    .venv/bin/python proofs/run.py --budget 5      # CPU seconds per condition (default 2)

Each target is one ``crosshair check <module> --analysis_kind=icontract
--per_condition_timeout=N --extra_plugin proofs/crosshair_plugin.py`` process (one crash aborts a
whole module, so modules never share a process); two run at a time (the machine has 2 cores).

A core module passes only when CrossHair exits 0 with no ``error:`` line and no traceback. Any
``error:`` line (a counterexample, or an exception raised inside a contracted function) or any
crash of CrossHair fails the run. A clean module means "no counterexample within the budget", not
a proof.

A planted bug (run at ``max(N, BUG_MIN_BUDGET)``) passes only when CrossHair refutes it through
the contract ID its module names in ``CAUGHT_BY``, without crashing. Exit status: 0 when every target came back as required, else 1
(2 for a usage error).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import linecache
import os
import re
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model"
PACKAGE_DIR = MODEL / "prefix_model"
PLUGIN = ROOT / "proofs" / "crosshair_plugin.py"
BUGS_DIR = ROOT / "proofs" / "bugs_detected"

DEFAULT_BUDGET = 2.0  # --per_condition_timeout, CPU seconds per condition
# The planted bugs run with at least this budget: a bug that is caught stops early, and at 2 s
# the HDR-5 bug was missed in 1 of 3 runs on a loaded 2-core machine (usually found in 1-4 s).
BUG_MIN_BUDGET = 8.0
JOBS = 2  # the machine has 2 cores

# Every top-level module of prefix_model must be in exactly one of these two lists, and every
# subpackage in EDGE_PACKAGES: a new core module cannot silently escape the proofs.
CORE_MODULES: tuple[str, ...] = (
    "json_values",
    "events",
    "surface",
    "log",
    "derive",
    "headers",
    "request_log",
    "requests",
    "fork",
    "waterfall",
    "meter",
    "loop",
)
EDGE_NOT_PROVED: tuple[str, ...] = (
    "__init__",  # package docstring and version only
    "contracts",  # the ENABLED switch and the Rejection value; no contracted function
    "cli",  # the command line (I/O edge)
    "world",  # the loop's state types: data only, no function to prove
    "actions",  # the action alphabet: data only
    "semantics",  # the design-choice flags: data only
    "properties",  # the property checks themselves: judged by tests and variants, not by contracts
    "variants",  # the faulty-variant catalogue: exercised by tests and `prefix-model variants`
)
EDGE_PACKAGES: tuple[str, ...] = (
    "formats",  # reading and writing harness event lines (I/O edge)
    "examples",  # the demo session script and its bundled output
    "checker",  # the conformance engine: the fast tier, held to the spec by differential tests
    "vectors",  # the vector generator and the reference consumer (writes files: edge)
)

# Planted bugs (proofs/bugs_detected/<name>.py); each must be refuted by its CAUGHT_BY contract.
BUG_MODULES: tuple[str, ...] = (
    "splice_keeps_end",
    "canonical_keeps_empty_tools",
    "stop_empty_is_absent",
    "seq_only_contiguous",
    "boundary_before_prefix",
)

# Longest first, so that the two workers finish close together (wall seconds measured at --budget 2).
_EXPECTED_SECONDS: dict[str, float] = {
    "headers": 54, "canonical_keeps_empty_tools": 45, "log": 39, "surface": 37, "json_values": 24,
    "request_log": 24, "requests": 20, "fork": 17, "derive": 11, "stop_empty_is_absent": 8,
}  # fmt: skip

_ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): error: (?P<detail>.*)$")
_QUOTED = re.compile(r'^"(?P<expr>.*)" yields ')
_CALLED = re.compile(r"when calling (?:\w+\.)*(?P<fn>\w+)\(")
_CONTRACT_ID = re.compile(r"^([A-Z]+-\d+(?:/[A-Z]+-\d+)*):")


@dataclasses.dataclass(frozen=True)
class ContractSite:
    """One icontract condition of a function CrossHair will check, and where its lambda is."""

    function: str
    file: str
    line: int
    text: str  # the stripped source line CrossHair quotes when the lambda is outside the function
    description: str

    @property
    def rule(self) -> str:
        match = _CONTRACT_ID.match(self.description)
        return match.group(1) if match else "?"


@dataclasses.dataclass(frozen=True)
class Target:
    kind: str  # "core" or "bug"
    name: str
    dotted: str
    expected: str | None = None  # bug: the contract ID that must refute it
    sites: tuple[ContractSite, ...] = ()


@dataclasses.dataclass(frozen=True)
class Finding:
    raw: str
    rule: str  # the contract ID violated, "exception" or "?"


@dataclasses.dataclass(frozen=True)
class Outcome:
    target: Target
    budget: float
    seconds: float
    ok: bool
    result: str
    findings: tuple[Finding, ...]
    crash: str  # stderr of a crash, or ""


def coverage_problems() -> list[str]:
    """Return why the module lists do not match model/prefix_model/ and proofs/bugs_detected/ (empty when they do)."""
    problems: list[str] = []
    listed = set(CORE_MODULES) | set(EDGE_NOT_PROVED)
    for overlap in sorted(set(CORE_MODULES) & set(EDGE_NOT_PROVED)):
        problems.append(f"{overlap} is listed both as core and as edge")
    present = {p.stem for p in PACKAGE_DIR.glob("*.py")}
    for name in sorted(present - listed):
        problems.append(
            f"model/prefix_model/{name}.py is neither in CORE_MODULES nor in EDGE_NOT_PROVED of proofs/run.py"
        )
    for name in sorted(set(CORE_MODULES) - present):
        problems.append(f"core module {name} is listed but model/prefix_model/{name}.py does not exist")
    packages = {p.name for p in PACKAGE_DIR.iterdir() if p.is_dir() and any(p.rglob("*.py"))}
    for name in sorted(packages - set(EDGE_PACKAGES)):
        problems.append(f"subpackage model/prefix_model/{name}/ is not in EDGE_PACKAGES of proofs/run.py")
    planted = {p.stem for p in BUGS_DIR.glob("*.py")} - {"__init__"}
    for name in sorted(planted ^ set(BUG_MODULES)):
        problems.append(f"planted bug {name}: proofs/bugs_detected/{name}.py and BUG_MODULES of proofs/run.py disagree")
    return problems


def contract_sites(module: ModuleType) -> tuple[ContractSite, ...]:
    """Return every icontract condition on the functions defined in ``module`` (what CrossHair checks)."""
    from icontract._checkers import find_checker

    functions: list[tuple[str, Callable[..., object]]] = []
    for name, obj in sorted(vars(module).items()):
        if inspect.isfunction(obj) and obj.__module__ == module.__name__:
            functions.append((name, obj))
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:  # methods, e.g. Log.append
            functions += [(n, f) for n, f in sorted(vars(obj).items()) if inspect.isfunction(f)]
    sites: list[ContractSite] = []
    for name, obj in functions:
        checker = find_checker(obj)
        if checker is None:
            continue
        contracts = [c for group in getattr(checker, "__preconditions__") for c in group]
        contracts += list(getattr(checker, "__postconditions__"))
        for contract in contracts:
            condition: Callable[..., object] = contract.condition
            file = os.path.realpath(inspect.getsourcefile(condition) or "?")
            line = condition.__code__.co_firstlineno
            text = linecache.getline(file, line).strip()
            sites.append(ContractSite(name, file, line, text, str(contract.description)))
    return tuple(sites)


def classify(detail: str, file: str, line: int, sites: Sequence[ContractSite]) -> str:
    """Return the contract ID a CrossHair ``error:`` detail refers to, "exception" or "?"."""
    called = _CALLED.search(detail)
    candidates = [s for s in sites if called and s.function == called.group("fn")] or list(sites)
    quoted = _QUOTED.match(detail)
    if quoted:
        matches = [s for s in candidates if s.text == quoted.group("expr").strip()]
    elif detail.startswith("false "):
        matches = [s for s in candidates if s.file == os.path.realpath(file) and s.line == line]
    else:
        return "exception"  # e.g. "IndexError: ... when calling f(...)": raised inside the function
    rules = {s.rule for s in matches}
    return rules.pop() if len(rules) == 1 else "?"


def build_targets(names: Sequence[str], kinds: Sequence[str]) -> tuple[list[Target], list[str]]:
    """Import each target (for its contract sites) and return the targets and any import problems."""
    targets: list[Target] = []
    problems: list[str] = []
    wanted = set(names)
    for kind, modules, package in (("core", CORE_MODULES, "prefix_model"), ("bug", BUG_MODULES, "proofs.bugs_detected")):
        if kind not in kinds:
            continue
        for name in modules:
            if wanted and name not in wanted:
                continue
            dotted = f"{package}.{name}"
            try:
                module = importlib.import_module(dotted)
            except Exception as exc:  # a module that does not import cannot be proved: report it
                problems.append(f"{kind} {name}: import failed: {type(exc).__name__}: {exc}")
                continue
            sites = contract_sites(module)
            if not sites:
                problems.append(f"{kind} {name}: no icontract condition found (PREFIX_MODEL_CONTRACTS=0?); nothing to check")
                continue
            expected = getattr(module, "CAUGHT_BY", None) if kind == "bug" else None
            if kind == "bug" and not isinstance(expected, str):
                problems.append(f"bug {name}: the module must name the refuting contract ID in CAUGHT_BY")
                continue
            targets.append(Target(kind, name, dotted, expected, sites))
    targets.sort(key=lambda t: -_EXPECTED_SECONDS.get(t.name, 2))
    return targets, problems


def child_env() -> dict[str, str]:
    """Return the environment of a CrossHair process: model/ and the repo root importable, contracts on."""
    env = dict(os.environ)
    path = [str(MODEL), str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["PREFIX_MODEL_CONTRACTS"] = "1"  # with contracts off there would be nothing to check
    return env


def run_target(target: Target, budget: float) -> Outcome:
    """Run CrossHair on one module and judge its output."""
    if target.kind == "bug":
        budget = max(budget, BUG_MIN_BUDGET)
    command = [
        sys.executable, "-m", "crosshair", "check", target.dotted,
        "--analysis_kind=icontract",
        f"--per_condition_timeout={budget:g}",
        "--extra_plugin", str(PLUGIN),
    ]  # fmt: skip
    functions = len({s.function for s in target.sites})
    watchdog = 60 + 10 * budget * functions  # wall clock; CrossHair's budget is CPU per condition
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=watchdog)
    except subprocess.TimeoutExpired as exc:
        seconds = time.monotonic() - start
        return Outcome(target, budget, seconds, False, f"CRASH: no result after {watchdog:.0f} s (killed)", (), str(exc))
    seconds = time.monotonic() - start
    findings: list[Finding] = []
    other_lines: list[str] = []
    for raw in done.stdout.splitlines():
        match = _ERROR_LINE.match(raw)
        if match:
            rule = classify(match.group("detail"), match.group("file"), int(match.group("line")), target.sites)
            findings.append(Finding(raw, rule))
        elif raw.strip():
            other_lines.append(raw)
    crashed = done.returncode not in (0, 1) or "Traceback" in done.stderr or (done.returncode == 1 and not findings)
    crash = (done.stderr + "\n".join(other_lines)).strip() if crashed else ""
    if crashed:
        ok, result = False, f"CRASH: crosshair exit {done.returncode}" + (f", {len(findings)} finding(s) before it" if findings else "")
    elif target.kind == "core":
        ok = not findings and done.returncode == 0
        result = "clean (no counterexample within budget)" if ok else f"FAIL: {len(findings)} counterexample(s)/error(s)"
    else:
        caught = sorted({f.rule for f in findings})
        ok = target.expected in caught
        if not findings:
            result = f"NOT DETECTED (expected {target.expected})"
        else:
            result = f"detected by {', '.join(caught)}" + ("" if ok else f"; FAIL: expected {target.expected}")
    return Outcome(target, budget, seconds, ok, result, tuple(findings), crash)


_PRINT_LOCK = threading.Lock()


def report(outcome: Outcome) -> None:
    """Print one summary line for a target, then its findings and any crash output (one block)."""
    with _PRINT_LOCK:
        _report(outcome)


def _report(outcome: Outcome) -> None:
    target = outcome.target
    print(f"{target.kind:<4} {target.name:<28} {outcome.seconds:6.1f} s  (N={outcome.budget:g})  {outcome.result}", flush=True)
    show_findings = target.kind == "core" or not outcome.ok
    for finding in outcome.findings if show_findings else ():
        print(f"     [{finding.rule}] {finding.raw}", flush=True)
    if outcome.crash:
        tail = outcome.crash.splitlines()[-25:]
        print("     | " + "\n     | ".join(tail), flush=True)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET, help=f"seconds per condition (default {DEFAULT_BUDGET:g})")
    parser.add_argument("--module", action="append", default=[], metavar="NAME", help="restrict to this core or bug module (repeatable)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--bugs", action="store_true", help="run only the planted bugs")
    which.add_argument("--core", action="store_true", help="run only the core modules")
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"CrossHair processes at a time (default {JOBS})")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.budget <= 0 or args.jobs < 1:
        print("run.py: --budget must be > 0 and --jobs ≥ 1", file=sys.stderr)
        return 2
    unknown = sorted(set(args.module) - set(CORE_MODULES) - set(BUG_MODULES))
    if unknown:
        print(f"run.py: unknown module(s) {', '.join(unknown)}; core: {', '.join(CORE_MODULES)}; bugs: {', '.join(BUG_MODULES)}", file=sys.stderr)
        return 2
    for path in (str(MODEL), str(ROOT)):
        if path not in sys.path:
            sys.path.insert(0, path)
    os.environ["PREFIX_MODEL_CONTRACTS"] = "1"  # before the first import of prefix_model here

    started = time.monotonic()
    problems = coverage_problems()
    kinds = ["bug"] if args.bugs else ["core"] if args.core else ["core", "bug"]
    targets, import_problems = build_targets(args.module, kinds)
    problems += import_problems
    if not targets and not import_problems:
        print("run.py: no target selected (check --module against --core/--bugs)", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"FAIL {problem}", flush=True)
    print(f"crosshair-tool {version('crosshair-tool')}, one process per module: --per_condition_timeout={args.budget:g}, {args.jobs} at a time, {len(targets)} target(s)", flush=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda t: _run_and_report(t, args.budget), targets))
    total = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime

    failed = [o for o in outcomes if not o.ok]
    core = [o for o in outcomes if o.target.kind == "core"]
    bugs = [o for o in outcomes if o.target.kind == "bug"]
    print(
        f"total {total:.1f} s wall ({cpu:.0f} s CPU in CrossHair); core {sum(o.ok for o in core)}/{len(core)} clean; "
        f"bugs {sum(o.ok for o in bugs)}/{len(bugs)} detected; "
        + ("PASS" if not failed and not problems else f"FAIL ({len(failed) + len(problems)} problem(s))"),
        flush=True,
    )
    return 0 if not failed and not problems else 1


def _run_and_report(target: Target, budget: float) -> Outcome:
    outcome = run_target(target, budget)
    report(outcome)
    return outcome


if __name__ == "__main__":
    sys.exit(main())
