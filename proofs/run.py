"""Run CrossHair over every core module of prefix_model, and over the planted bugs.

    .venv/bin/python proofs/run.py                 # core modules AND planted bugs (``make proofs``)
    .venv/bin/python proofs/run.py --core          # core modules only
    .venv/bin/python proofs/run.py --bugs          # planted bugs only
    .venv/bin/python proofs/run.py --module core.surface --module splice_keeps_end
    .venv/bin/python proofs/run.py --paths 60      # paths per condition (default 20): reproducible
    .venv/bin/python proofs/run.py --seconds 20    # CPU seconds per condition: deeper, load-dependent
    .venv/bin/python proofs/run.py --deep          # ``make proofs-deep``: --seconds DEEP_SECONDS

The default budget is a number of paths per condition, so the verdict is the same on a busy and
an idle machine: CrossHair's search is seeded, and ``proofs/crosshair_fixed.py`` caps it by paths
(``max_iterations``) with a fixed hash seed and a per-path CPU deadline far above what any path
takes. ``--seconds`` uses CrossHair's own CPU-time budget instead: it reaches further in the same
time, but a loaded machine explores less, so its verdict may differ between runs; it is not part
of ``make test``.

Each target is one CrossHair process (one crash aborts a whole module, so modules never share a
process): ``crosshair check <module> --analysis_kind=icontract --extra_plugin
proofs/crosshair_plugin.py`` and the budget's options; two run at a time (the machine has 2 cores).

A core module passes only when CrossHair exits 0 with no ``error:`` line and no traceback. Any
``error:`` line (a counterexample, or an exception raised inside a contracted function) or any
crash of CrossHair fails the run. A clean module means "no counterexample within the budget", not
a proof.

A planted bug (run at ``BUG_MIN_PATHS`` paths or more) passes only when CrossHair refutes it through
the contract ID its module names in ``CAUGHT_BY``, without crashing. Exit status: 0 when every target came back as required, else 1
(2 for a usage error).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
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

DEFAULT_PATHS = 20  # paths per condition (CrossHair's max_iterations): the reproducible budget
# The planted bugs run with at least this many paths: a caught bug stops at its counterexample.
BUG_MIN_PATHS = 60
# A path that runs this long (CPU seconds) is abandoned by CrossHair, and that depends on the
# machine: it is set far above the slowest path measured (about 1 s), so it never happens.
PER_PATH_SECONDS = 30.0
# Work per Z3 query, in Z3's resource units (about 1.3 s of solving here): a query past it is
# "unknown" at the same point on every machine. Z3's wall-clock timeout (half the per-path
# deadline) stays as the outer guard.
Z3_RLIMIT = 1_000_000
DEEP_SECONDS = 20.0  # ``make proofs-deep``: CPU seconds per condition
JOBS = 2  # the machine has 2 cores
DRIVER = ROOT / "proofs" / "crosshair_fixed.py"

# Every module of the model's chapter packages (core/, formats/, loop/, conformance/, review/, vectors/) must be in exactly one
# of these two lists, and every other subpackage in EDGE_PACKAGES: a new core module cannot
# silently escape the proofs.
CHAPTER_PACKAGES: tuple[str, ...] = ("core", "formats", "loop", "conformance", "review", "vectors")
CORE_MODULES: tuple[str, ...] = (
    "core.json_values",
    "core.events",
    "core.surface",
    "core.log",
    "core.derive",
    "core.headers",
    "core.request_log",
    "core.requests",
    "core.fork",
    "loop.waterfall",
    "loop.meter",
    "loop.compaction",
    "loop.stream",
    "loop.transitions",
    "loop.world",
    "loop.properties",
    "loop.variants",
    "conformance.findings",
    "formats.plain",
    "conformance.screens",
    "conformance.captured",
    "conformance.nodes",
    "conformance.fold",
    "conformance.instances",
    "conformance.vacuity",
)
# Contracted functions CrossHair cannot explore usefully at the default budget, module -> function -> why: listed in
# proofs/README.md and not run; the module's other functions are run by name.
# Their contracts are checked at every call in the test suite.
_WITNESS = "one path is a whole witness session under symbolic semantics: no result within the 240 s guard at 20 paths"
_FOLD_STATE = (
    "a function of the mutable fold: CrossHair builds its state (a FoldState) with any value in each of its fields, states no "
    "run of feed reaches (a negative count, a step open in no turn), and refutes the contracts there; check_events is the fold from its start"
)
_FOLD_INPUT = (
    "CrossHair builds events the readers never hand over (lossy data, deeper than MAX_DEPTH, a spec pair not their own) "
    "and requests of any Python values, and refutes the contracts on them"
)
CROSSHAIR_SKIPPED: dict[str, dict[str, str]] = {
    "loop.variants": {"judge": _WITNESS, "run_witness": _WITNESS},
    "formats.plain": {
        "plain_text": "its value is a reader's plain output (json.loads or msgspec); CrossHair builds any Python value (a FrozenMap, a symbolic int subclass), which msgspec's encoder refuses with a TypeError",
    },
    "conformance.captured": {
        "Captured.exact": "its fields are json.loads output; CrossHair builds them of any Python values (a tuple, which JSON never gives) and refutes the round trip on them",
    },
    "conformance.fold": {
        "LogChecker.feed": _FOLD_STATE,
        "LogChecker.finish": _FOLD_STATE,
        "LogChecker.known_messages": _FOLD_STATE,
        "LogChecker.request_for": _FOLD_STATE,
        "check_events": _FOLD_INPUT,
    },
}
# Modules explored with fewer paths per condition than DEFAULT_PATHS at the default budget, each with why: make test
# must finish inside CI's 10 minutes on 2 cores, and these conditions cost the most per path (measured: proofs/run.py
# prints each module's CPU seconds). ``--paths N`` or ``make proofs-deep`` still runs them further.
_PER_PATH_COST = "the most CPU per path of the core (28, 29 and 25 CPU s at 20 paths, of the run's 297)"
_SYMBOLIC_JSON = "about 10 CPU s per condition at 20: the freezing and JSON text of symbolic values in their contracts"
_CAPTURED_TEXT = "the JSON text of a symbolic request in captured_request's CAP-1: 50 CPU s for the module at 20 paths, 17 at 10"
REDUCED_PATHS: dict[str, tuple[int, str]] = {
    "formats.plain": (5, _SYMBOLIC_JSON),
    "conformance.findings": (5, _SYMBOLIC_JSON),
    "conformance.captured": (10, _CAPTURED_TEXT),
    "core.log": (10, _PER_PATH_COST),
    "core.surface": (10, _PER_PATH_COST),
    "core.json_values": (10, _PER_PATH_COST),
}
# The loop and the conformance chapter: their run is listed function by function in proofs/README.md
# (proofs/coverage.json), and a run at the default budget that explores them otherwise fails.
COVERAGE_PACKAGES: tuple[str, ...] = ("loop", "conformance")
# The conformance fold's event form, moved below its users into formats/ (issue 35): still listed function by function.
COVERAGE_MODULES: tuple[str, ...] = ("formats.plain",)
COVERAGE_FILE = ROOT / "proofs" / "coverage.json"
EDGE_NOT_PROVED: tuple[str, ...] = (
    "core.contracts",  # the ENABLED switch and the Rejection value; no contracted function
    "loop.actions",  # the action alphabet: data only
    "loop.prompt",  # the prompt action the state also holds: data only
    "loop.semantics",  # the design choice points: the harness's bodies, exercised through every loop test and variant
    "loop.explore",  # the bounded search: counts pinned by proofs/explore-counts.json, failures by planted variants; its EXP-1 contracts run at every call of the suite's explorations (contracts on), not yet under CrossHair
    "loop.memo",  # results kept per object: a cache with no contract, its tests count what it recomputes
    # The fold's state and arms (conformance.fold dispatches to them): functions of the mutable state, which CrossHair builds
    # in states no run of feed reaches; their findings are held to the spec's by the fold's tests and the checker differential.
    "conformance.state",  # the state record and its small values: no contracted function
    "conformance.enclosure",  # ENC-1..3's arms: no contracted function
    "conformance.record",  # the record rule's arms: no contracted function
    "conformance.live",  # the surface arm (the core's surface_step, contracted, asked of the live nodes): no contracted function
    "conformance.matching",  # MATCH-1/2's arms (finish's MATCH-1/CHK-1 postcondition accounts them): no contracted function
    "conformance.reconstruction",  # REC-*/INST-*: its one contract, the text screen's CHK-2 tie, is over the state (checked at every call in tests)
    "loop.world_fold",  # the conformance fold gone on with from world to world: no contract; the machine's teardown and its tests compare it with one pass
    "formats.rules",  # the format rules' rejection values, worded once
    "formats.event_lines",  # JSON lines to events and back: held to the harness's bytes by tests and vectors
    "formats.session_lines",  # the persisted form's header line and packed rows: tests and vectors
    "formats.persisted_form",  # the persisted form's bytes (zstd frames): read back by the reader in tests and vectors
    "formats.plain_json",  # the fast lane's decoder: its contract ties it to parse_json_line at every call in tests
    "formats.plain_events",  # the fast lane's envelope reader: its contract ties it to parse_event
    "formats.plain_envelope",  # msgspec's decode of an envelope (a C extension CrossHair cannot run symbolically): its contract ties it to parse_event at every call in tests
    "review.designs",  # the reviewed designs: Semantics overrides, judged by the properties on the scenario
    "review.sessions",  # the review's scenario and its player
    "review.measures",  # staleness, survival and the cost model: held to hand-checked cases by tests
    "review.compare",  # the comparison and its shrinking: tests replay every counterexample
    "review.claims",  # the claims' verdicts: tests show each able to fail
    "review.diagram",  # the state diagram: tests hold it to the transitions and to SPEC.md
    "review.brief",  # actions and messages in words for the review's text: tests hold each form
    "vectors.codec",  # actions and worlds as JSON: no contract; round trips and the schema held by tests
    "vectors.scenarios",  # the action scripts: data, each played by the model in tests (every property of a run)
    "vectors.adopted",  # the adopted scripts (package data) as scenarios: played like the others
    "vectors.persisted",  # the persisted-form cases: read back by the model's reader in tests
    "vectors.cases",  # the case catalogue: its coverage audited at every generation, consumed in tests
)
EDGE_PACKAGES: tuple[str, ...] = (
    "edge",  # formats, the checker driver, writing the vectors, the adapter runner and the command line (I/O)
    "examples",  # the demo session script and its bundled output
)

# Planted bugs (proofs/bugs_detected/<name>.py); each must be refuted by its CAUGHT_BY contract.
BUG_MODULES: tuple[str, ...] = (
    "splice_keeps_end",
    "canonical_keeps_empty_tools",
    "stop_empty_is_absent",
    "seq_only_contiguous",
    "boundary_before_prefix",
)

# Longest first, so that the two workers finish close together (wall seconds of the default budget, measured at b64aca7
# on an idle machine; the three core modules of REDUCED_PATHS at half their 20-path figure). Unlisted: 2.
_EXPECTED_SECONDS: dict[str, float] = {
    "loop.meter": 25, "core.fork": 20, "core.headers": 19, "core.derive": 18, "loop.properties": 17, "loop.compaction": 17,
    "core.requests": 16, "loop.transitions": 15, "core.log": 15, "core.surface": 15, "core.request_log": 14,
    "core.json_values": 13, "formats.plain": 10, "conformance.findings": 8, "loop.world": 8, "loop.waterfall": 7,
    "loop.stream": 6, "canonical_keeps_empty_tools": 5, "conformance.vacuity": 4, "conformance.screens": 3,
    "stop_empty_is_absent": 3, "core.events": 3, "conformance.fold": 9, "conformance.captured": 9,
}  # fmt: skip

_STATS_PREFIX = "crosshair-fixed: "
_CONDITION_PREFIX = "crosshair-fixed-condition: "
_ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): error: (?P<detail>.*)$")
_QUOTED = re.compile(r'^"(?P<expr>.*)" yields ')
_CALLED = re.compile(r"when calling (?:\w+\.)*(?P<fn>\w+)\(")
_CONTRACT_ID = re.compile(r"^([A-Z]+-\d+(?:/[A-Z]+-\d+)*):")


@dataclasses.dataclass(frozen=True)
class Budget:
    """How far CrossHair searches each condition: a number of paths, or CPU seconds."""

    paths: int | None = DEFAULT_PATHS  # reproducible: the same paths on any machine
    seconds: float | None = None  # CrossHair's --per_condition_timeout: deeper, load-dependent

    def for_kind(self, kind: str) -> Budget:
        """Return the budget for a target kind: planted bugs get at least ``BUG_MIN_PATHS``."""
        if kind == "bug" and self.paths is not None:
            return Budget(paths=max(self.paths, BUG_MIN_PATHS))
        return self

    def options(self) -> list[str]:
        """Return the driver's and CrossHair's options for this budget."""
        if self.paths is not None:
            return [str(DRIVER), "--max_iterations", str(self.paths), "check",
                    "--max_uninteresting_iterations=0", f"--per_path_timeout={PER_PATH_SECONDS:g}"]  # fmt: skip
        return [str(DRIVER), "--max_iterations", "0", "check", f"--per_condition_timeout={self.seconds:g}"]

    def env(self) -> dict[str, str]:
        """Return the environment this budget adds: Z3's resource count, for the reproducible budget."""
        return {"CROSSHAIR_SMT_RLIMIT": str(Z3_RLIMIT)} if self.paths is not None else {}

    def for_module(self, name: str) -> Budget:
        """Return the budget for a module: ``REDUCED_PATHS`` caps a costly module at the default budget."""
        if self.paths == DEFAULT_PATHS and name in REDUCED_PATHS:
            return Budget(paths=REDUCED_PATHS[name][0])
        return self

    def watchdog(self, conditions: int) -> float:
        """Return the wall seconds after which a CrossHair process is taken to hang (a guard, not the budget).

        Generous: at load 8 on 2 cores a module of 5 conditions ran past 120 + 30 s per condition.
        """
        per_condition = PER_PATH_SECONDS if self.paths is not None else 10 * (self.seconds or 0)
        return 600 + per_condition * conditions

    def __str__(self) -> str:
        return f"paths={self.paths}" if self.paths is not None else f"cpu={self.seconds:g}s"


@dataclasses.dataclass(frozen=True)
class Stats:
    """What the driver counted in one CrossHair process (``crosshair-fixed:`` on its stderr)."""

    conditions: int = 0
    paths: int = 0
    z3_rlimit: int = 0  # Z3 queries that ran out of their resource count: deterministic
    path_timeouts: int = 0  # clock-dependent
    z3_unknown: int = 0  # Z3 gave up for another reason (its wall-clock timeout): clock-dependent
    cpu_seconds: float = dataclasses.field(default=0.0, compare=False)  # the CrossHair process's CPU time: what the run costs on an idle machine (no verdict reads it)

    @classmethod
    def parse(cls, stderr: str) -> Stats | None:
        for line in reversed(stderr.splitlines()):
            if line.startswith(_STATS_PREFIX):
                return cls(**json.loads(line[len(_STATS_PREFIX):]))
        return None


@dataclasses.dataclass(frozen=True)
class Explored:
    """What CrossHair did with one condition of one function (``crosshair-fixed-condition:`` on the driver's stderr)."""

    function: str
    line: int
    paths: int
    exhausted: bool  # every path explored within the cap: for a clean condition, a proof
    status: str
    preconditions_unmet: bool  # no path got past the preconditions: the condition was not explored

    @classmethod
    def parse_all(cls, stderr: str) -> tuple[Explored, ...]:
        return tuple(cls(**json.loads(line[len(_CONDITION_PREFIX):])) for line in stderr.splitlines() if line.startswith(_CONDITION_PREFIX))


@dataclasses.dataclass(frozen=True)
class ContractSite:
    """One icontract condition of a function CrossHair will check, and where its lambda is."""

    function: str
    file: str
    line: int
    text: str  # the stripped source line CrossHair quotes when the lambda is outside the function
    description: str
    qualname: str = ""  # the function's qualified name, as CrossHair reports it (``World.instance``)

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
    functions: tuple[str, ...] = ()  # the functions to run, by qualified name; empty: the whole module

    @property
    def run(self) -> tuple[ContractSite, ...]:
        """The contract sites CrossHair is run on."""
        return tuple(s for s in self.sites if not self.functions or s.qualname in self.functions)


@dataclasses.dataclass(frozen=True)
class Finding:
    raw: str
    rule: str  # the contract ID violated, "exception" or "?"


@dataclasses.dataclass(frozen=True)
class Outcome:
    target: Target
    budget: Budget
    seconds: float
    ok: bool
    result: str
    findings: tuple[Finding, ...]
    crash: str  # stderr of a crash, or ""
    stats: Stats | None = None
    explored: tuple[Explored, ...] = ()


def coverage_problems() -> list[str]:
    """Return why the module lists do not match model/prefix_model/ and proofs/bugs_detected/ (empty when they do)."""
    problems: list[str] = []
    listed = set(CORE_MODULES) | set(EDGE_NOT_PROVED)
    for overlap in sorted(set(CORE_MODULES) & set(EDGE_NOT_PROVED)):
        problems.append(f"{overlap} is listed both as core and as edge")
    present = {f"{package}.{p.stem}" for package in CHAPTER_PACKAGES for p in (PACKAGE_DIR / package).glob("*.py") if p.stem != "__init__"}
    for name in sorted(present - listed):
        problems.append(
            f"model/prefix_model/{name.replace('.', '/')}.py is neither in CORE_MODULES nor in EDGE_NOT_PROVED of proofs/run.py"
        )
    for name in sorted(set(CORE_MODULES) - present):
        problems.append(f"core module {name} is listed but model/prefix_model/{name.replace('.', '/')}.py does not exist")
    loose = sorted(p.name for p in PACKAGE_DIR.glob("*.py") if p.name != "__init__.py")
    problems += [f"model/prefix_model/{name} sits outside every package: put it in one of {', '.join(CHAPTER_PACKAGES)} or edge" for name in loose]
    packages = {p.name for p in PACKAGE_DIR.iterdir() if p.is_dir() and any(p.rglob("*.py"))}
    for name in sorted(packages - set(EDGE_PACKAGES) - set(CHAPTER_PACKAGES)):
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
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:  # methods, e.g. Log.append, and property getters
            functions += [(n, f) for n, f in sorted(vars(obj).items()) if inspect.isfunction(f)]
            functions += [(n, f.fget) for n, f in sorted(vars(obj).items()) if isinstance(f, property) and inspect.isfunction(f.fget)]
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
            sites.append(ContractSite(name, file, line, text, str(contract.description), _qualname(obj)))
    return tuple(sites)


def _qualname(function: Callable[..., object]) -> str:
    """Return the qualified name of the function under its icontract wrapper (what CrossHair names)."""
    inner = getattr(function, "__wrapped__", function)
    return str(getattr(inner, "__qualname__", getattr(function, "__qualname__", "?")))


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
            skipped = CROSSHAIR_SKIPPED.get(name, {})
            functions = tuple(sorted({s.qualname for s in sites} - set(skipped))) if skipped else ()
            targets.append(Target(kind, name, dotted, expected, sites, functions))
    targets.sort(key=lambda t: -_EXPECTED_SECONDS.get(t.name, 2))
    return targets, problems


def child_env() -> dict[str, str]:
    """Return the environment of a CrossHair process: model/ and the repo root importable, contracts on."""
    env = dict(os.environ)
    path = [str(MODEL), str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["PREFIX_MODEL_CONTRACTS"] = "1"  # with contracts off there would be nothing to check
    env["PYTHONHASHSEED"] = "0"  # set and str orders, hence CrossHair's paths, the same in every run
    return env


def run_target(target: Target, budget: Budget) -> Outcome:
    """Run CrossHair on one module and judge its output."""
    budget = budget.for_kind(target.kind).for_module(target.name)
    named = [f"{target.dotted}.{f}" for f in target.functions] or [target.dotted]
    command = [sys.executable, *budget.options(), *named, "--analysis_kind=icontract", "--extra_plugin", str(PLUGIN)]
    watchdog = budget.watchdog(len(target.run))
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, env=child_env() | budget.env(), capture_output=True, text=True, timeout=watchdog)
    except subprocess.TimeoutExpired as exc:
        seconds = time.monotonic() - start
        return Outcome(target, budget, seconds, False, f"CRASH: no result after {watchdog:.0f} s (killed)", (), str(exc))
    seconds = time.monotonic() - start
    stats = Stats.parse(done.stderr)
    explored = Explored.parse_all(done.stderr)
    stderr = "\n".join(line for line in done.stderr.splitlines() if not line.startswith((_STATS_PREFIX, _CONDITION_PREFIX)))
    findings: list[Finding] = []
    other_lines: list[str] = []
    for raw in done.stdout.splitlines():
        match = _ERROR_LINE.match(raw)
        if match:
            rule = classify(match.group("detail"), match.group("file"), int(match.group("line")), target.sites)
            findings.append(Finding(raw, rule))
        elif raw.strip():
            other_lines.append(raw)
    crashed = done.returncode not in (0, 1) or "Traceback" in stderr or (done.returncode == 1 and not findings)
    crash = (stderr + "\n".join(other_lines)).strip() if crashed else ""
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
    return Outcome(target, budget, seconds, ok, result, tuple(findings), crash, stats, explored)


def is_coverage_target(target: Target) -> bool:
    """Return whether ``target`` is a module of the loop or the conformance chapter (listed function by function)."""
    return target.kind == "core" and (target.name.split(".")[0] in COVERAGE_PACKAGES or target.name in COVERAGE_MODULES)


Coverage = dict[str, dict[str, list[int]]]
"""module -> function -> [conditions, exhausted, paths, not explored (no input met the preconditions)]."""


def coverage_of(target: Target, explored: Sequence[Explored]) -> dict[str, list[int]]:
    """Return, for each contracted function of ``target``, what CrossHair explored of its conditions."""
    functions = sorted({site.qualname for site in target.run})
    table: dict[str, list[int]] = {f: [0, 0, 0, 0] for f in functions}
    for condition in explored:
        row = table.setdefault(condition.function, [0, 0, 0, 0])
        row[0] += 1
        row[1] += condition.exhausted
        row[2] += condition.paths
        row[3] += condition.preconditions_unmet
    return table


def read_coverage() -> Coverage:
    """Return the coverage recorded in proofs/coverage.json (empty when there is none)."""
    if not COVERAGE_FILE.exists():
        return {}
    recorded: Coverage = json.loads(COVERAGE_FILE.read_text(encoding="utf-8"))
    return recorded


def coverage_changes(outcome: Outcome, recorded: Coverage) -> list[str]:
    """Return how a coverage module's run differs from what proofs/coverage.json records (empty when it does not)."""
    now, then = coverage_of(outcome.target, outcome.explored), recorded.get(outcome.target.name)
    if then is None:
        return [f"{outcome.target.name} is not in {COVERAGE_FILE.name}"]
    return [f"{outcome.target.name}.{f}: recorded {then.get(f)}, explored {now.get(f)} ([conditions, exhausted, paths, not explored])"
            for f in sorted(set(now) | set(then)) if now.get(f) != then.get(f)]  # fmt: skip


def _verdict(row: list[int]) -> str:
    conditions, exhausted, _paths, unmet = row
    if conditions == 0:
        return "**not analysed** (CrossHair reported no condition)"
    if unmet:
        return f"**not explored**: no input met the preconditions in {unmet} of {conditions}"
    if exhausted == conditions:
        return "exhausted: every path (a proof)"
    return f"{exhausted} of {conditions} exhausted" if exhausted else "not exhausted (the path cap stopped it)"


_PRINT_LOCK = threading.Lock()


def report(outcome: Outcome) -> None:
    """Print one summary line for a target, then its findings and any crash output (one block)."""
    with _PRINT_LOCK:
        _report(outcome)


def _report(outcome: Outcome) -> None:
    target = outcome.target
    print(f"{target.kind:<4} {target.name:<28} {outcome.seconds:6.1f} s  ({outcome.budget}{_explored(outcome.stats)})  {outcome.result}", flush=True)
    if is_coverage_target(target) and not outcome.crash:
        for function, row in coverage_of(target, outcome.explored).items():
            print(f"     {function:<40} {row[0]} condition(s), {row[2]} paths: {_verdict(row).replace('**', '')}", flush=True)
    show_findings = target.kind == "core" or not outcome.ok
    for finding in outcome.findings if show_findings else ():
        print(f"     [{finding.rule}] {finding.raw}", flush=True)
    if outcome.crash:
        tail = outcome.crash.splitlines()[-25:]
        print("     | " + "\n     | ".join(tail), flush=True)


def _explored(stats: Stats | None) -> str:
    """Return what the search did, and the clock-dependent events if any (they make a verdict load-dependent)."""
    if stats is None:
        return ""
    text = f"; {stats.paths} paths over {stats.conditions} conditions, {stats.cpu_seconds:g} s CPU"
    if stats.z3_rlimit:
        text += f", {stats.z3_rlimit} Z3 queries past their rlimit"
    if stats.path_timeouts or stats.z3_unknown:
        text += f"; CLOCK-DEPENDENT: {stats.path_timeouts} path timeout(s), {stats.z3_unknown} Z3 timeout(s)"
    return text


README = ROOT / "proofs" / "README.md"
_BLOCK_START = "<!-- the block below is written by `proofs/run.py --write-readme`; tests/test_proofs.py checks it -->"
_BLOCK_END = "<!-- end of the generated block -->"


def readme_block() -> str:
    """Return the part of proofs/README.md that states what the run does: budgets, modules, planted bugs."""
    targets, problems = build_targets((*CORE_MODULES, *BUG_MODULES), ("core", "bug"))  # the skipped modules too
    if problems:
        raise RuntimeError("; ".join(problems))
    by_name = {t.name: t for t in targets}
    core = [by_name[m] for m in CORE_MODULES]
    lines = [
        f"- Budget (`make proofs`, part of `make test`): **{DEFAULT_PATHS} paths per condition** for the core, "
        f"**{BUG_MIN_PATHS}** for the planted bugs; **{Z3_RLIMIT:,} Z3 resource units per query** "
        f"(`CROSSHAIR_SMT_RLIMIT`); a per-path deadline of {PER_PATH_SECONDS:g} CPU s (a guard that no path "
        "reaches); hash seed 0.",
        f"- Budget (`make proofs-deep`, not part of `make test`): **{DEEP_SECONDS:g} CPU s per condition**; "
        "load-dependent, so its verdict can differ between runs.",
        f"- {len(core)} core modules, {sum(len(t.sites) for t in core)} contract conditions "
        f"on {sum(len({s.function for s in t.sites}) for t in core)} functions:",
        "",
        "| core module | functions | conditions |",
        "|---|---|---|",
    ]
    lines += [f"| `{t.name}` | {len({s.qualname for s in t.sites})} | {len(t.sites)}{_skipped_note(t)} |" for t in core]
    lines += _coverage_lines(core)
    lines += ["", f"- {len(BUG_MODULES)} planted bugs (`proofs/bugs_detected/`), each refuted by the contract it names:", ""]
    lines += ["| planted bug | what it gets wrong | must be caught by |", "|---|---|---|"]
    for name in BUG_MODULES:
        module = importlib.import_module(f"proofs.bugs_detected.{name}")
        summary = (module.__doc__ or "").strip().splitlines()[0].removeprefix("Planted bug: ").rstrip(".")
        lines.append(f"| `{name}` | {summary} | {by_name[name].expected} |")
    return "\n".join([_BLOCK_START, *lines, _BLOCK_END])


def _skipped_note(target: Target) -> str:
    """Say how many of a module's functions CrossHair is not run on."""
    skipped = CROSSHAIR_SKIPPED.get(target.name, {})
    functions = {s.qualname for s in target.sites}
    if not skipped:
        return ""
    return " (not run: see below)" if functions <= set(skipped) else f" ({len(skipped)} of its functions not run: see below)"


def _coverage_lines(core: Sequence[Target]) -> list[str]:
    """The loop's and the conformance chapter's functions, each with what the default budget explored of it."""
    recorded = read_coverage()
    chapter = [t for t in core if is_coverage_target(t)]
    rows: list[tuple[str, str, list[int] | str | None]] = []
    for module in CORE_MODULES:
        if module.split(".")[0] not in COVERAGE_PACKAGES and module not in COVERAGE_MODULES:
            continue
        target = next(t for t in chapter if t.name == module)
        functions = sorted({s.qualname for s in target.sites})
        not_run = CROSSHAIR_SKIPPED.get(module, {})
        rows += [(module, f, not_run.get(f) or recorded.get(module, {}).get(f)) for f in functions]
    exhausted = sum(1 for *_, r in rows if isinstance(r, list) and r[0] and r[1] == r[0] and not r[3])
    skipped = sum(1 for *_, r in rows if isinstance(r, str))
    lines = [
        "",
        f"- The loop and the conformance chapter, function by function at the default budget ({len(rows)} contracted functions, "
        f"{exhausted} with every condition's paths exhausted, {skipped} not run; `proofs/coverage.json`, written by `proofs/run.py --write-coverage`; "
        "a run at the default budget fails when what it explores differs):",
        "",
        "- At the default budget, fewer paths per condition for: "
        + "; ".join(f"`{m}` {n} ({why})" for m, (n, why) in sorted(REDUCED_PATHS.items())) + ".",
        "",
        "| module | function | conditions | paths | what CrossHair explored |",
        "|---|---|---|---|---|",
    ]
    for module, function, row in rows:
        if row is None:
            lines.append(f"| `{module}` | `{function}` | ? | ? | **not recorded**: run `proofs/run.py --write-coverage` |")
        elif isinstance(row, str):
            lines.append(f"| `{module}` | `{function}` | – | – | **skipped**: {row} |")
        else:
            lines.append(f"| `{module}` | `{function}` | {row[0]} | {row[2]} | {_verdict(row)} |")
    return lines


def readme_with_block(text: str) -> str:
    """Return the README text with its generated block replaced by the current one."""
    start, end = text.index(_BLOCK_START), text.index(_BLOCK_END) + len(_BLOCK_END)
    return text[:start] + readme_block() + text[end:]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--paths", type=int, default=None, help=f"paths per condition, the reproducible budget (default {DEFAULT_PATHS})")
    budget.add_argument("--seconds", type=float, default=None, help="CPU seconds per condition instead: deeper, load-dependent")
    budget.add_argument("--deep", action="store_true", help=f"the time-bounded run of `make proofs-deep`: --seconds {DEEP_SECONDS:g}")
    parser.add_argument("--module", action="append", default=[], metavar="NAME", help="restrict to this core or bug module (repeatable)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--bugs", action="store_true", help="run only the planted bugs")
    which.add_argument("--core", action="store_true", help="run only the core modules")
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"CrossHair processes at a time (default {JOBS})")
    parser.add_argument("--write-readme", action="store_true", help="rewrite the generated block of proofs/README.md and exit")
    parser.add_argument(
        "--write-coverage", action="store_true",
        help="run the loop and conformance modules at the default budget, record what was explored in proofs/coverage.json, rewrite the README block",
    )  # fmt: skip
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if (args.paths is not None and args.paths < 1) or (args.seconds is not None and args.seconds <= 0) or args.jobs < 1:
        print("run.py: --paths must be ≥ 1, --seconds > 0 and --jobs ≥ 1", file=sys.stderr)
        return 2
    seconds = DEEP_SECONDS if args.deep else args.seconds
    budget = Budget(paths=None, seconds=seconds) if seconds is not None else Budget(paths=args.paths or DEFAULT_PATHS)
    unknown = sorted(set(args.module) - set(CORE_MODULES) - set(BUG_MODULES))
    if unknown:
        print(f"run.py: unknown module(s) {', '.join(unknown)}; core: {', '.join(CORE_MODULES)}; bugs: {', '.join(BUG_MODULES)}", file=sys.stderr)
        return 2
    for path in (str(MODEL), str(ROOT)):
        if path not in sys.path:
            sys.path.insert(0, path)
    os.environ["PREFIX_MODEL_CONTRACTS"] = "1"  # before the first import of prefix_model here
    if args.write_readme:
        README.write_text(readme_with_block(README.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote the generated block of {README.relative_to(ROOT)}")
        return 0

    started = time.monotonic()
    problems = coverage_problems()
    kinds = ["bug"] if args.bugs else ["core"] if args.core else ["core", "bug"]
    if args.write_coverage:
        if args.paths not in (None, DEFAULT_PATHS) or seconds is not None:
            print("run.py: --write-coverage records the default budget only", file=sys.stderr)
            return 2
        kinds = ["core"]
    targets, import_problems = build_targets(args.module, kinds)
    if args.write_coverage:
        targets = [t for t in targets if is_coverage_target(t)]
    problems += import_problems
    if not targets and not import_problems:
        print("run.py: no target selected (check --module against --core/--bugs)", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"FAIL {problem}", flush=True)
    print(
        f"crosshair-tool {version('crosshair-tool')}, z3-solver {version('z3-solver')}, one process per module, "
        f"{budget} per condition (planted bugs: {budget.for_kind('bug')}), {args.jobs} at a time, {len(targets)} target(s)",
        flush=True,
    )
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda t: _run_and_report(t, budget), targets))
    total = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime

    default_budget = budget == Budget(paths=DEFAULT_PATHS)
    if args.write_coverage:
        recorded = read_coverage() | {o.target.name: coverage_of(o.target, o.explored) for o in outcomes if o.ok}
        COVERAGE_FILE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        README.write_text(readme_with_block(README.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote {COVERAGE_FILE.relative_to(ROOT)} and the generated block of {README.relative_to(ROOT)}", flush=True)
    elif default_budget:
        recorded = read_coverage()
        for outcome in outcomes:
            if is_coverage_target(outcome.target) and outcome.ok:
                changes = coverage_changes(outcome, recorded)
                for change in changes:
                    print(f"FAIL coverage changed: {change}; if intended, run `proofs/run.py --write-coverage`", flush=True)
                problems += changes
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


def _run_and_report(target: Target, budget: Budget) -> Outcome:
    outcome = run_target(target, budget)
    report(outcome)
    return outcome


if __name__ == "__main__":
    sys.exit(main())
