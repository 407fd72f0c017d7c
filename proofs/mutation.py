"""Mutation testing of the model's modules against their own tests (``make mutation``).

    .venv/bin/python proofs/mutation.py core/derive.py core/requests.py   # judge every mutant
    .venv/bin/python proofs/mutation.py core/derive.py --list             # print the mutants only
    .venv/bin/python proofs/mutation.py core/derive.py --jobs 1 --timeout 120
    .venv/bin/python proofs/mutation.py loop/stream.py --sample 5         # every 5th mutant only
    .venv/bin/python proofs/mutation.py core/surface.py --against vectors # the vectors' score
    .venv/bin/python proofs/mutation.py loop/stream.py --against fuzz     # what passes them, against a fuzz campaign
    .venv/bin/python proofs/mutation.py conformance/vacuity.py --tests tests/edge/test_checker.py  # other tests

mutmut skips every decorated function, so every icontract-decorated core function; this runner
builds its mutants with ``ast`` instead. A mutant is one small change from ``OPERATORS``, made
anywhere in a module except in a decorator (every contract is an icontract decorator argument), a
call to ``icontract.*``, an annotation, a docstring, an f-string or ``__all__``. It is spliced into the
module's text, so every other line keeps its number, and the spliced text must parse back to the
mutated tree.

Each mutant is run against the module's tests (``tests/<package>/test_<module>.py`` and the test
modules of its chapter's row in README.md's layout table) with ``pytest -x -q -p no:cacheprovider``,
in a temporary copy of ``model/`` put first on PYTHONPATH; the working tree is never written to
except ``.mutation/``. Killed: the tests fail or time out. Survived: they pass. The unmutated
module must pass its tests in that copy first, or the module's run stops there.

A mutant's id is ``operator:line:column:index``: the same source gives the same mutants in the
same order. Verdicts go to ``.mutation/results.json`` after each mutant, keyed by the SHA-256 of
the module and of its test files; a rerun judges only the mutants not judged for those hashes, so
an interrupted run resumes. A change elsewhere in the model does not invalidate a verdict.

``--sample N`` judges 1 mutant in N of each module in id order (positions 0, N, 2N, ...): a
fixed, deterministic selection for a module whose full run does not fit; its score line says
"sample" and is never the module's full score.

``--tests ARG,...`` runs these pytest arguments (test files or node ids under ``tests/``) instead of the
module's own tests: for a module whose rules its own chapter's tests reach only through another
(conformance/vacuity.py through edge/checker.py), or to judge survivors against a wider suite. Its
verdicts are kept apart from the default selection's (keyed by the selection and its files' hashes),
and its score line names the selection. With ``--against vectors`` it names the tests whose
verdicts decide which mutants change behaviour (those of a run with the same ``--tests``).

``--only ID,...`` judges just the named mutants (to show that a new test kills a survivor); their
verdicts are kept like any other, so a later full run does not judge them again.

``--against vectors`` gives the vectors' score instead: the share of the behaviour-changing mutants
that make the model fail the published conformance vectors. The vectors are written once by the
unmutated model (``prefix-model vectors``); each mutant the module's tests kill (judged before,
without ``--against``) then runs them as a foreign implementation does: ``prefix-model conform``,
run by the unmutated model (the consumer and its JSON comparisons), drives the mutant behind the
adapter protocol in a process of its own (``prefix-model adapter``: the model's loop, checker and
reader), contracts off. Killed: a case fails, the run crashes or times out. A mutant that passes every vector is run
against the module's tests once more with contracts off (less the tests that fail so on the
unmutated model: they test the contracts): if they pass, it changes only what a contract computes,
which a foreign implementation never runs, and it leaves the denominator. So does one listed in
``proofs/mutation-vectors-scope.json``, which changes only what the vectors leave out by design
(an event's ``time``, which rule refuses an action, an append the loop never makes). What is left
passes every vector and changes behaviour: a gap of the vectors, marked when no vector runs its line.

``--against fuzz`` goes one step further: each mutant of that gap (the vectors' verdicts first, judged
as above when missing) drives a short differential campaign, ``prefix-model fuzz --scripts N --seed 0
--shrink-budget 0`` (``--fuzz-scripts N``, default 200), run by the unmutated model (the generator
and the comparisons) with the mutant behind the adapter protocol, contracts off. Killed: a script
diverges, the adapter faults, or the run times out. Its verdicts are keyed by the module, the
fuzzer's own files and the campaign's size.

Survivors listed in ``proofs/mutation-equivalent.json`` (id, the mutated line, the def it sits in,
the line before the mutation, a one-line reason) are reported apart and left out of the score's
denominator. An entry is found by its mutated line, def and original line where an edit above it
moved it (same operator and index; ``--relocate-equivalent`` rewrites the ids, for tidiness, and
records the def and original line of a hand-written entry that lacks them); one whose line no
mutant gives now is reported as stale and excludes nothing.
Exit status: 0 when every module ran, 1 when a module's unmutated tests failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import hashlib
import json
import os
import re
import shutil
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Queue

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model"
PACKAGE_DIR = MODEL / "prefix_model"
TESTS = ROOT / "tests"
STATE = ROOT / ".mutation" / "results.json"
EQUIVALENT = ROOT / "proofs" / "mutation-equivalent.json"
OUT_OF_SCOPE = ROOT / "proofs" / "mutation-vectors-scope.json"  # what the vectors leave out by design, per mutant
README_LAYOUT = ROOT / "README.md"
JOBS = 2  # the machine has 2 cores
PYTEST_ARGS: tuple[str, ...] = ("-x", "-q", "-p", "no:cacheprovider")
CONTRACTS_OFF = {"PREFIX_MODEL_CONTRACTS": "0"}  # read when the core is first imported
FUZZ = PACKAGE_DIR / "edge" / "fuzz"  # the differential fuzzer: its files key the verdicts of --against fuzz
FUZZ_SCRIPTS = 200  # --against fuzz: a short campaign, about half a minute of the model against itself on 2 shared cores
FUZZ_SEED = 0  # fixed, so a verdict is reproducible: the same seed gives the same scripts
# A mutant against the vectors as a foreign implementation meets them: ``prefix-model conform`` run by the unmutated
# model (the consumer and its comparisons), the mutant behind the adapter protocol in a process of its own; contracts off.
LAUNCH = "import sys; from prefix_model.edge.launch import main; sys.argv[0] = 'prefix-model'; sys.exit(main())"
# The lines of one module (argv[2]) the reference consumer runs over a vectors directory (argv[1]), contracts off.
REACH = (
    "import json, sys, coverage; from pathlib import Path; module = str(Path(sys.argv[2]).resolve()); "
    "cov = coverage.Coverage(data_file=None, include=[module]); cov.start(); "
    "from prefix_model.edge.runner.consumer import consume_report; consume_report(Path(sys.argv[1])); cov.stop(); "
    "print(json.dumps(sorted(cov.get_data().lines(module) or [])))"
)
# The per-mutant timeout, unless --timeout: this many times the unmutated run's wall time, plus a
# margin for a loaded machine. A mutant past it is killed (an endless loop is a detected change).
TIMEOUT_FACTOR = 3.0
TIMEOUT_MARGIN = 30.0
SMALL_INT = 256  # ints up to this magnitude are flipped by ``const``

OPERATORS: dict[str, str] = {
    "cmp": "a comparison operator flipped: == and !=, < and >=, > and <=, in and not in, is and is not",
    "bool": "a boolean operator flipped: and and or",
    "not": "a `not` removed: `not x` becomes `x`",
    "const": f"a constant flipped: True and False, 0 and 1, any other int n with |n| <= {SMALL_INT} to n + 1 and to n - 1",
    "return": "`return X` becomes `return None` (X not None already)",
    "tuple": "one element dropped from a tuple display of two or more elements (not an assignment target)",
    "args": "two adjacent positional arguments of a call swapped (not when they are the same expression)",
}

_CMP_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
_CMP_TEXT: dict[type[ast.cmpop], str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutation of a module: its stable id, what it changes, and the mutated text."""

    operator: str
    line: int  # the anchor of the id: where the mutated construct is
    column: int
    index: int  # which change at that anchor (the comparison operator, the tuple element, ...)
    description: str
    start_line: int  # the first line of the replaced text, which ``mutated_line`` shows
    original_line: str
    mutated_line: str
    source: str  # the whole mutated module
    scope: str = ""  # the qualified name of the innermost def or class holding ``start_line`` ("" at module level)

    @property
    def id(self) -> str:
        return f"{self.operator}:{self.line}:{self.column}:{self.index}"


# --- where mutants may not go -------------------------------------------------------------------


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _targets_all(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return isinstance(node.target, ast.Name) and node.target.id == "__all__"
    return False


def protected_nodes(tree: ast.Module) -> set[int]:
    """Return the ids of every node no mutant may touch: contracts, decorators, annotations, docstrings, ``__all__``."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            roots.extend(node.decorator_list)  # every contract is an icontract decorator's argument
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            roots.append(node.returns)
        if isinstance(node, ast.arg) and node.annotation is not None:
            roots.append(node.annotation)
        if isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        if isinstance(node, ast.Call) and _dotted(node.func).startswith("icontract."):
            roots.append(node)  # a contract applied without the decorator syntax
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body and _is_docstring(node.body[0]):
            roots.append(node.body[0])
        if isinstance(node, ast.stmt) and _targets_all(node):
            roots.append(node)
        if isinstance(node, ast.JoinedStr):
            roots.append(node)  # an f-string's parts are text, not constants of the logic
    return {id(n) for root in roots for n in ast.walk(root)}


# --- the operators --------------------------------------------------------------------------------

# A site: the node to replace, the anchor of the id, the index, the replacement node and its description.
Site = tuple[ast.AST, tuple[int, int], int, ast.AST, str]


def _sites(node: ast.AST) -> Iterator[tuple[str, Site]]:
    anchor = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            flipped = copy.deepcopy(node)
            flipped.ops[i] = _CMP_FLIP[type(op)]()
            yield "cmp", (node, anchor, i, flipped, f"{_CMP_TEXT[type(op)]} -> {_CMP_TEXT[_CMP_FLIP[type(op)]]}")
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        # Anchored at the second operand: ``a and b or c`` nests two BoolOps that start together.
        second = node.values[1]
        flipped_bool = ast.BoolOp(op=other, values=copy.deepcopy(node.values))
        names = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        yield "bool", (node, (second.lineno, second.col_offset), 0, flipped_bool, f"{names[0]} -> {names[1]}")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not", (node, anchor, 0, copy.deepcopy(node.operand), "not x -> x")
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "const", (node, anchor, 0, ast.Constant(value=not node.value), f"{node.value} -> {not node.value}")
    elif isinstance(node, ast.Constant) and isinstance(node.value, int) and abs(node.value) <= SMALL_INT:
        value = node.value
        changed = [1 - value] if value in (0, 1) else [value + 1, value - 1]
        for i, new in enumerate(changed):
            yield "const", (node, anchor, i, ast.Constant(value=new), f"{value} -> {new}")
    elif isinstance(node, ast.Return) and node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
        yield "return", (node, anchor, 0, ast.Return(value=ast.Constant(value=None)), "return X -> return None")
    elif isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load) and len(node.elts) >= 2 and not any(isinstance(e, ast.Starred) for e in node.elts):
        for i in range(len(node.elts)):
            dropped = ast.Tuple(elts=[copy.deepcopy(e) for j, e in enumerate(node.elts) if j != i], ctx=ast.Load())
            yield "tuple", (node, anchor, i, dropped, f"element {i} of the tuple dropped")
    elif isinstance(node, ast.Call) and len(node.args) >= 2:
        # Anchored at the call's opening parenthesis: ``a.f(x, y).g(z, w)`` nests two calls that start together.
        call_anchor = (node.func.end_lineno or node.lineno, node.func.end_col_offset or node.col_offset)
        for i in range(len(node.args) - 1):
            first, second_arg = node.args[i], node.args[i + 1]
            if isinstance(first, ast.Starred) or isinstance(second_arg, ast.Starred) or ast.dump(first) == ast.dump(second_arg):
                continue
            swapped = copy.deepcopy(node)
            swapped.args[i], swapped.args[i + 1] = swapped.args[i + 1], swapped.args[i]
            yield "args", (node, call_anchor, i, swapped, f"arguments {i} and {i + 1} swapped")


def _slots(tree: ast.Module) -> dict[int, tuple[ast.AST, str, int | None]]:
    """Return, per node (by id), where it hangs: its parent, the field, and its index when the field is a list."""
    where: dict[int, tuple[ast.AST, str, int | None]] = {}
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                where.update((id(child), (parent, name, i)) for i, child in enumerate(value) if isinstance(child, ast.AST))
            elif isinstance(value, ast.AST):
                where[id(value)] = (parent, name, None)
    return where


def _put(slot: tuple[ast.AST, str, int | None], node: ast.AST) -> ast.AST:
    """Hang ``node`` in ``slot``; return the node that hung there."""
    parent, name, index = slot
    if index is None:
        previous: ast.AST = getattr(parent, name)
        setattr(parent, name, node)
    else:
        previous = getattr(parent, name)[index]
        getattr(parent, name)[index] = node
    return previous


def _dump_with(tree: ast.AST, slot: tuple[ast.AST, str, int | None], replacement: ast.AST) -> str:
    """Return ``ast.dump`` of ``tree`` (a module or one of its statements) with the node in ``slot`` replaced, the tree
    left as it was (no copy of it)."""
    original = _put(slot, replacement)
    try:
        return ast.dump(tree)
    finally:
        _put(slot, original)


_ATOMS = (ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Tuple)


def _splice(source: bytes, line_starts: list[int], node: ast.AST, text: str, bare: bool) -> bytes:
    """Return ``source`` with ``node``'s text replaced by ``text``, in parentheses unless ``bare``; the lines after keep their numbers."""
    start = line_starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
    end = line_starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
    old = source[start:end]
    new = text if bare else f"({text})"
    # Line continuations keep the numbering and the logical line, in brackets or out of them.
    padding = " \\\n" * (old.count(b"\n") - new.count("\n"))
    return source[:start] + (new + padding).encode("utf-8") + source[end:]


def _scopes(tree: ast.Module) -> list[tuple[int, int, str]]:
    """Every def and class of ``tree`` as (first line, last line, qualified name), outermost first."""
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                found.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _scope_of(scopes: Sequence[tuple[int, int, str]], line: int) -> str:
    """The innermost scope of ``scopes`` (``_scopes``) holding ``line``; "" when none does."""
    holding = [(first, name) for first, last, name in scopes if first <= line <= last]
    return max(holding)[1] if holding else ""


def _units(tree: ast.Module) -> dict[int, tuple[ast.stmt, bool]]:
    """Per node (by id), the statement whose text alone shows a mutant of it parses as meant, and whether that statement
    sits in the body of a top-level class: a module's statements are independent, so checking the one that changed
    checks the module, at the cost of that statement rather than of the whole module for every mutant."""
    unit: dict[int, tuple[ast.stmt, bool]] = {}
    for top in tree.body:
        unit.update((id(node), (top, False)) for node in ast.walk(top))
        if isinstance(top, ast.ClassDef):
            for inner in top.body:
                unit.update((id(node), (inner, True)) for node in ast.walk(inner))
    return unit


def _parses_as(mutated: bytes, span: tuple[int, int], in_class: bool, expected: str) -> bool | None:
    """Whether the statement at byte ``span`` of ``mutated`` parses alone to the dump ``expected``; None when it does not
    parse alone (the whole module is then checked instead)."""
    text = mutated[span[0]:span[1]].decode("utf-8")
    try:
        parsed = ast.parse(f"class _:\n{text}" if in_class else text)
    except SyntaxError:
        return None
    body = parsed.body[0].body if in_class and isinstance(parsed.body[0], ast.ClassDef) else parsed.body
    return [ast.dump(each) for each in body] == [expected]


def mutants_of(source: str, only: frozenset[str] | None = None) -> list[Mutant]:
    """Return every mutant of ``source`` in a stable order (by line, column, operator, index); ``only``: those of these ids."""
    tree = ast.parse(source)
    protected = protected_nodes(tree)
    raw = source.encode("utf-8")
    line_starts = [0]
    for physical in raw.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(physical))
    original_lines = source.splitlines()
    scopes = _scopes(tree)
    slots = _slots(tree)
    units = _units(tree)
    found: list[Mutant] = []
    for node in ast.walk(tree):
        if id(node) in protected:
            continue
        for operator, (target, (line, column), index, replacement, description) in _sites(node):
            if only is not None and f"{operator}:{line}:{column}:{index}" not in only:
                continue
            text = ast.unparse(replacement)
            unit, in_class = units[id(target)]
            first = min([unit.lineno] + [d.lineno for d in getattr(unit, "decorator_list", [])])
            span = (line_starts[first - 1], line_starts[unit.end_lineno or unit.lineno])
            expected = ast.dump(replacement) if target is unit else _dump_with(unit, slots[id(target)], replacement)
            # An atom or a statement goes in as it is; anything else in parentheses, unless the bare
            # text already parses to the mutated tree. Either way it must.
            tries = (True,) if isinstance(target, ast.stmt) else (True, False) if isinstance(replacement, _ATOMS) else (False,)
            for bare in tries:
                spliced = _splice(raw, line_starts, target, text, bare)
                alone = _parses_as(spliced, (span[0], span[1] + len(spliced) - len(raw)), in_class, expected)
                if alone if alone is not None else ast.dump(ast.parse(spliced)) == _dump_with(tree, slots[id(target)], replacement):
                    break
            else:
                raise AssertionError(f"{operator}:{line}:{column}:{index}: the spliced text does not parse to the mutated tree")
            if expected == ast.dump(unit):
                continue  # no change at all (e.g. a swap of equal arguments): not a mutant
            mutated = spliced.decode("utf-8")
            start_line = getattr(target, "lineno")
            found.append(
                Mutant(
                    operator, line, column, index, description, start_line, original_lines[start_line - 1], mutated.splitlines()[start_line - 1], mutated, _scope_of(scopes, start_line)
                )
            )
    found.sort(key=lambda m: (m.line, m.column, list(OPERATORS).index(m.operator), m.index))
    ids = [m.id for m in found]
    assert len(ids) == len(set(ids)), "two mutants share an id"
    return found


# --- modules and their tests ----------------------------------------------------------------------


def resolve_module(name: str) -> Path:
    """Return the file of a module named as ``core/derive.py``, ``core.derive`` or a path from the repo root."""
    candidates = [ROOT / name, PACKAGE_DIR / name, PACKAGE_DIR / (name.replace(".", "/") + ".py")]
    for path in candidates:
        if path.is_file() and path.suffix == ".py" and PACKAGE_DIR in path.resolve().parents:
            return path.resolve()
    raise FileNotFoundError(f"no module {name!r} under {PACKAGE_DIR.relative_to(ROOT)}")


_LAYOUT_ROW = re.compile(r"^\| §[^|]* \| `(?P<pkg>[^`]+)/` \| (?P<modules>[^|]*) \| (?P<tests>[^|]*) \|$", re.MULTILINE)


def tests_of(module: Path) -> list[Path]:
    """Return the module's test files: ``tests/<package>/test_<module>.py`` and its chapter's row in README.md."""
    relative = module.relative_to(PACKAGE_DIR)
    package = relative.parent.as_posix()
    found: list[Path] = []
    direct = TESTS / package / f"test_{module.stem}.py"
    if direct.is_file():
        found.append(direct)
    for row in _LAYOUT_ROW.finditer(README_LAYOUT.read_text(encoding="utf-8")):
        if row["pkg"] == package and f"`{relative.name}`" in row["modules"]:
            for name in re.findall(r"`([^`]+\.py)`", row["tests"]):
                path = TESTS / package / name
                if path.is_file() and path not in found:
                    found.append(path)
    return found


def _digest(paths: Sequence[Path], selection: Sequence[str] = ()) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for argument in selection:
        h.update(b"selection\0" + argument.encode() + b"\0")
    return h.hexdigest()


def parse_selection(text: str) -> list[str]:
    """Return the pytest arguments of ``--tests``: each a test file under ``tests/``, or a node id in one (``FILE::NAME``)."""
    arguments = [a.strip() for a in text.split(",") if a.strip()]
    if not arguments:
        raise ValueError("--tests names no test file")
    for argument in arguments:
        file = (ROOT / argument.split("::", 1)[0]).resolve()
        if TESTS.resolve() not in file.parents or not file.is_file() or file.suffix != ".py":
            raise ValueError(f"--tests: {argument!r} is no test file under {TESTS.relative_to(ROOT)}/")
    return arguments


def selection_files(selection: Sequence[str]) -> list[Path]:
    """Return the distinct test files of a ``--tests`` selection, in its order."""
    files: list[Path] = []
    for argument in selection:
        file = (ROOT / argument.split("::", 1)[0]).resolve()
        if file not in files:
            files.append(file)
    return files


# --- judging --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Run:
    """One pytest run: killed (failed or timed out) or not, and how long it took."""

    killed: bool
    timed_out: bool
    seconds: float
    tail: str


Judge = Callable[[Path, float], Run]  # a run on a model tree, with a timeout


class Trees:
    """Temporary copies of ``model/``, one per worker, each with the pristine module restored after a run."""

    def __init__(self, jobs: int) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="prefix-mutation-"))
        self.free: Queue[Path] = Queue()
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
        for n in range(jobs):
            tree = self.base / f"w{n}"
            shutil.copytree(MODEL, tree / "model", ignore=ignore)
            loaded = imported_from(tree / "model")
            if (tree / "model").resolve() not in loaded.parents:
                raise RuntimeError(f"the tests would import prefix_model from {loaded}, not from the mutated copy")
            self.free.put(tree / "model")

    def run(self, module: Path, source: str, judge: Judge, timeout: float) -> Run:
        tree = self.free.get()
        target = tree / module.relative_to(MODEL)
        try:
            target.write_text(source, encoding="utf-8")
            return judge(tree, timeout)
        finally:
            shutil.copyfile(module, target)
            self.free.put(tree)

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def tree_env(model_tree: Path) -> dict[str, str]:
    """Return the environment of a test run on ``model_tree``: it first on PYTHONPATH, before the editable install."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(model_tree), str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant may have the size and mtime of the last one: no stale .pyc
    env.setdefault("HYPOTHESIS_PROFILE", "ci")
    return env


def imported_from(model_tree: Path) -> Path:
    """Return the file ``import prefix_model`` loads in a test run on ``model_tree``."""
    probe = [sys.executable, "-c", "import prefix_model; print(prefix_model.__file__)"]
    done = subprocess.run(probe, cwd=ROOT, env=tree_env(model_tree), capture_output=True, text=True, check=True, timeout=60)
    return Path(done.stdout.strip()).resolve()


def run_tests(model_tree: Path, tests: Sequence[str], timeout: float, contracts: bool = True) -> Run:
    """Run pytest on ``tests`` (files or node ids) with ``model_tree`` first on PYTHONPATH; killed when it fails or times out."""
    env = tree_env(model_tree) | ({} if contracts else CONTRACTS_OFF)
    return run_command(model_tree, [sys.executable, "-m", "pytest", *PYTEST_ARGS, *tests], env, timeout)


def contract_tests(tests: Sequence[str], timeout: float) -> list[str]:
    """Return the node ids of ``tests`` that fail on the unmutated model with contracts off: they test the contracts themselves.

    Most such tests skip themselves when contracts are off; these are the ones that do not.
    """
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", "--tb=no", *tests]
    done = subprocess.run(command, cwd=ROOT, env=tree_env(MODEL) | CONTRACTS_OFF, capture_output=True, text=True, timeout=timeout)
    return re.findall(r"^FAILED (\S+)", done.stdout, re.MULTILINE)


def mutant_adapter(model_tree: Path) -> str:
    """Return the command line of ``prefix-model adapter`` run from ``model_tree`` (the mutant), contracts off."""
    adapter = ["env", f"PYTHONPATH={os.pathsep.join([str(model_tree), str(ROOT)])}", "PYTHONDONTWRITEBYTECODE=1", "PREFIX_MODEL_CONTRACTS=0"]
    return shlex.join([*adapter, sys.executable, "-c", LAUNCH, "adapter"])


def run_vectors(model_tree: Path, vectors: Path, timeout: float) -> Run:
    """Run ``prefix-model conform`` over ``vectors``: the unmutated model consumes, ``model_tree`` is the adapter; contracts off."""
    command = [sys.executable, "-c", LAUNCH, "conform", "--fail-fast", "--vectors", str(vectors), "--adapter", mutant_adapter(model_tree)]
    return run_command(model_tree, command, tree_env(MODEL) | CONTRACTS_OFF, timeout)


def run_fuzz(model_tree: Path, scripts: int, timeout: float) -> Run:
    """Run a campaign of ``scripts`` at ``FUZZ_SEED``: the unmutated model generates and compares, ``model_tree`` is the adapter.

    No shrinking: the first divergence decides the verdict, and its shrunk script is not wanted here.
    """
    campaign = ["--scripts", str(scripts), "--seed", str(FUZZ_SEED), "--shrink-budget", "0"]
    command = [sys.executable, "-c", LAUNCH, "fuzz", *campaign, "--adapter", mutant_adapter(model_tree)]
    return run_command(model_tree, command, tree_env(MODEL) | CONTRACTS_OFF, timeout)


def run_command(model_tree: Path, command: Sequence[str], env: dict[str, str], timeout: float) -> Run:
    """Run ``command``; killed when it exits non-zero or runs past ``timeout`` seconds."""
    start = time.monotonic()
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: pytest and anything it started
            proc.communicate()
            return Run(True, True, time.monotonic() - start, "")
    tail = "\n".join(out.splitlines()[-3:])
    return Run(proc.returncode != 0, False, time.monotonic() - start, tail)


class State:
    """``.mutation/results.json``: verdicts per module, kept only for the module's and its tests' hashes."""

    def __init__(self, path: Path) -> None:
        self.path, self.lock = path, threading.Lock()
        self.data: dict[str, dict[str, object]] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    def verdicts(self, key: str, digest: str) -> dict[str, dict[str, object]]:
        with self.lock:
            entry = self.data.get(key)
            if not entry or entry.get("digest") != digest:
                entry = {"digest": digest, "verdicts": {}}
                self.data[key] = entry
            verdicts = entry["verdicts"]
            assert isinstance(verdicts, dict)
            return verdicts

    def record(self, key: str, mutant: Mutant, run: Run) -> None:
        with self.lock:
            verdicts = self.data[key]["verdicts"]
            assert isinstance(verdicts, dict)
            verdict = "timeout" if run.timed_out else "killed" if run.killed else "survived"
            verdicts[mutant.id] = {"verdict": verdict, "seconds": round(run.seconds, 1), "line": mutant.mutated_line.strip()}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            scratch = self.path.with_suffix(".tmp")
            scratch.write_text(json.dumps(self.data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            scratch.replace(self.path)  # whole or not at all: an interrupted run leaves a readable file


def load_equivalent(path: Path = EQUIVALENT) -> dict[str, dict[str, dict[str, str]]]:
    """Return the survivors judged equivalent (or, from ``OUT_OF_SCOPE``, out of the vectors' scope): module -> id -> {"line", "reason"}."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return {k: v for k, v in data.items() if not k.startswith("_")}


CONTEXT = ("scope", "original")  # what an entry records beside its mutated line, so a move cannot make it ambiguous


def context_of(mutant: Mutant) -> dict[str, str]:
    """What an entry records of ``mutant`` beside its mutated line: its scope and its line before the mutation.

    ``return None`` is the mutated line of every ``return`` mutant; with the function it sits in and
    the line it replaces, an entry still names one mutant after an edit above it moved its line.
    """
    return {"scope": mutant.scope, "original": mutant.original_line.strip()}


def located(key: str, entries: dict[str, dict[str, str]], mutants: Sequence[Mutant]) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Return ``entries`` (of module ``key``) under the ids their mutants have now, and what moved or is gone.

    An entry is the mutant of the same operator and index whose mutated line is the entry's (and,
    where the entry records them, whose scope and original line are: ``CONTEXT``), so an edit above
    it (which moves its line) does not lose it; one that no mutant (or more than one) now gives is
    kept under its own id, and said.
    """
    by_id = {m.id: m for m in mutants}
    moved: dict[str, dict[str, str]] = {}
    said: list[str] = []
    for mutant_id, entry in entries.items():
        operator, _, column, index = mutant_id.split(":")

        def names(m: Mutant, entry: dict[str, str] = entry) -> bool:
            recorded = context_of(m)
            return m.mutated_line.strip() == entry["line"] and all(entry.get(k, recorded[k]) == recorded[k] for k in CONTEXT)

        found = [m.id for m in mutants if m.operator == operator and m.id.endswith(f":{index}") and names(m)]
        if mutant_id in by_id and names(by_id[mutant_id]):
            found = [mutant_id]  # still where it was
        elif len(found) > 1:  # the same line written more than once: the one in the entry's column (a move keeps it)
            found = [i for i in found if i.split(":")[2] == column]
        new_id = found[0] if len(found) == 1 else mutant_id
        if len(found) != 1:
            said.append(f"{key} {mutant_id}: {'no' if not found else len(found)} mutant(s) give its line now; left as it is")
        elif new_id != mutant_id:
            said.append(f"{key} {mutant_id} -> {new_id}")
        moved[new_id] = entry
    return moved, said


def relocate_equivalent(modules: Sequence[Path], path: Path = EQUIVALENT) -> list[str]:
    """Give each equivalent entry of ``modules`` the id its mutated line has now (an edit above it moved it), and the
    context (``CONTEXT``) of its mutant where it records none; return what moved or is gone.

    Tidiness for the ids: a run finds an entry whose line moved by its line and context (``located``);
    one that no mutant (or more than one) now gives is left as it is, and said. The context is what
    keeps a later move from being ambiguous, so a hand-written entry gets it here.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    said: list[str] = []
    for module in modules:
        key = module.relative_to(ROOT).as_posix()
        entries: dict[str, dict[str, str]] = data.get(key, {})
        mutants = mutants_of(module.read_text(encoding="utf-8"))
        moved, told = located(key, entries, mutants)
        said += told
        by_id = {m.id: m for m in mutants}
        if entries:
            data[key] = {
                i: {"line": e["line"], **(context_of(by_id[i]) if i in by_id and by_id[i].mutated_line.strip() == e["line"] else {}), **e}
                for i, e in moved.items()
            }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return said


@dataclasses.dataclass
class Tally:
    """One module's outcome (against its tests, or against the vectors)."""

    key: str
    mutants: int = 0  # the mutants judged: all of the module's, or the sample's
    killed: int = 0
    timed_out: int = 0
    judged_before: int = 0
    survivors: list[Mutant] = dataclasses.field(default_factory=list)
    equivalent: list[tuple[Mutant, str]] = dataclasses.field(default_factory=list)
    stale: list[str] = dataclasses.field(default_factory=list)
    sample: str = ""  # how the judged mutants were chosen, when not all of them
    against: str = "tests"
    selection: str = ""  # the --tests selection, when not the module's own tests
    unjudged: int = 0  # --against vectors: mutants of the sample the tests have not judged yet
    # --against vectors, of the mutants that pass every vector: those whose tests pass with contracts off (they change
    # only what a contract computes), the tests deselected for that (they fail unmutated with contracts off), and those
    # proofs/mutation-vectors-scope.json says the vectors leave out by design
    contract_only: list[Mutant] = dataclasses.field(default_factory=list)
    deselected: list[str] = dataclasses.field(default_factory=list)
    out_of_scope: list[tuple[Mutant, str]] = dataclasses.field(default_factory=list)
    unreached: set[str] = dataclasses.field(default_factory=set)  # survivors on a line no vector runs
    # --against fuzz: the campaign's size, and which of the survivors above fail it
    fuzz_scripts: int = 0
    fuzz_killed: list[Mutant] = dataclasses.field(default_factory=list)

    @property
    def denominator(self) -> int:
        """The mutants the score counts: neither equivalent, nor contract-only, nor out of the vectors' scope."""
        return self.mutants - len(self.equivalent) - len(self.contract_only) - len(self.out_of_scope)

    def score(self) -> str:
        percent = 100.0 * self.killed / self.denominator if self.denominator else 100.0
        what = "fail the vectors" if self.against == "vectors" else "killed"
        return f"{self.killed} / {self.denominator} {what} ({percent:.1f} %)"


def sampled(mutants: Sequence[Mutant], every: int) -> list[Mutant]:
    """Return every ``every``-th mutant in id order, from the first: a fixed selection, the same for the same source."""
    return [m for position, m in enumerate(mutants) if position % every == 0]


def _sample_note(total: int, chosen: int, every: int) -> str:
    return "" if every == 1 else f"sample: 1 in {every}, {chosen} of {total} mutants (positions 0, {every}, {2 * every}, ... in id order)"


class Vectors:
    """The published vectors, written once by the unmutated model into a temporary directory."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="prefix-mutation-vectors-"))
        self.directory = self.base / "vectors"
        env = tree_env(MODEL)
        command = [sys.executable, "-c", "import sys; from pathlib import Path; from prefix_model.edge.vectors.generate import generate; sys.exit(generate(Path(sys.argv[1])))", str(self.directory)]
        subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=600)
        self.manifest = self.directory / "manifest.json"

    def reach(self, module: Path) -> frozenset[int]:
        """Return the lines of ``module`` that run while the unmutated model consumes the vectors (contracts off)."""
        command = [sys.executable, "-c", REACH, str(self.directory), str(module)]
        done = subprocess.run(command, cwd=ROOT, env=tree_env(MODEL) | CONTRACTS_OFF, capture_output=True, text=True, check=True, timeout=600)
        return frozenset(json.loads(done.stdout.splitlines()[-1]))

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def judge_module(
    module: Path,
    trees: Trees,
    pool: ThreadPoolExecutor,
    state: State,
    timeout: float | None,
    equivalent: dict[str, dict[str, str]],
    say: Callable[[str], None],
    every: int = 1,
    vectors: Vectors | None = None,
    only: frozenset[str] = frozenset(),
    selection: Sequence[str] = (),
    out_of_scope: dict[str, dict[str, str]] | None = None,
    fuzz_scripts: int | None = None,
) -> Tally | None:
    """Judge the mutants of ``module`` (every ``every``-th) not judged already; ``None`` when the unmutated module fails.

    Against its tests by default, or the pytest arguments of ``selection``; with ``vectors``, the ones its
    tests killed, against the vectors, and those that pass every vector against its tests with contracts off;
    with ``fuzz_scripts`` too, what is left of those against a fuzz campaign of that many scripts.
    """
    key = module.relative_to(ROOT).as_posix()
    tests = selection_files(selection) if selection else tests_of(module)
    arguments = list(selection) if selection else [str(t) for t in tests]
    state_key = f"{key} [tests: {', '.join(selection)}]" if selection else key
    if not tests:
        say(f"FAIL {key}: no test file (tests/<package>/test_<module>.py, or README.md's layout table)")
        return None
    source = module.read_text(encoding="utf-8")
    everything = mutants_of(source)
    equivalent = located(key, equivalent, everything)[0]  # an entry whose line an edit above it moved is still found
    out_of_scope = located(key, out_of_scope or {}, everything)[0]
    mutants = sampled(everything, every)
    note = _sample_note(len(everything), len(mutants), every)
    if only:
        mutants = [m for m in everything if m.id in only]
        note = f"only the {len(mutants)} mutants named by --only, of {len(everything)}"
    test_verdicts = state.verdicts(state_key, _digest([module, *tests], selection))
    tally = Tally(key, sample=note, selection=", ".join(selection))
    chosen = f" ({tally.sample})" if tally.sample else ""

    def judge_all(judged: list[Mutant], verdicts: dict[str, dict[str, object]], judge: Judge, names: str, record_key: str) -> bool:
        """Judge those of ``judged`` without a verdict (after the unmutated module); False when the unmutated module fails."""
        pending = [m for m in judged if m.id not in verdicts]
        tally.judged_before += len(judged) - len(pending)
        say(f"{key}: {len(everything)} mutants{chosen}, {len(judged)} to judge, {len(pending)} to run, against {names}")
        if not pending:
            return True
        baseline = trees.run(module, source, judge, timeout or 3600.0)
        if baseline.killed:
            say(f"FAIL {key}: the unmutated module fails against {names} in the copy ({baseline.seconds:.1f} s)\n{baseline.tail}")
            return False
        limit = timeout or TIMEOUT_FACTOR * baseline.seconds + TIMEOUT_MARGIN
        say(f"  unmutated: passes in {baseline.seconds:.1f} s; per-mutant timeout {limit:.0f} s")
        done = [0]

        def judge_one(mutant: Mutant) -> None:
            run = trees.run(module, mutant.source, judge, limit)
            state.record(record_key, mutant, run)
            done[0] += 1
            verdict = "timeout" if run.timed_out else "killed" if run.killed else "SURVIVED"
            say(f"  [{done[0]}/{len(pending)}] {mutant.id} {verdict} ({run.seconds:.1f} s)")

        list(pool.map(judge_one, pending))
        return True

    def survived(verdicts: dict[str, dict[str, object]], mutant: Mutant) -> bool:
        return verdicts[mutant.id]["verdict"] == "survived"

    if vectors is None:
        names = ", ".join(selection) if selection else ", ".join(t.relative_to(ROOT).as_posix() for t in tests)
        if not judge_all(mutants, test_verdicts, lambda tree, limit: run_tests(tree, arguments, limit), names, state_key):
            return None
        tally.mutants = len(mutants)
        verdicts, unsorted = test_verdicts, [m for m in mutants if survived(test_verdicts, m)]
        excluded, kind = equivalent, tally.equivalent
    else:
        # The behaviour-changing mutants: those the module's tests kill (a survivor changes nothing they see).
        tally.against = "vectors"
        tally.unjudged = sum(1 for m in mutants if m.id not in test_verdicts)
        mutants = [m for m in mutants if test_verdicts.get(m.id, {}).get("verdict") in ("killed", "timeout")]
        tally.mutants = len(mutants)
        judged_by = b"prefix-model conform, the mutant as the adapter\0"  # not the in-process consumer of earlier verdicts
        verdicts = state.verdicts(f"vectors:{key}", hashlib.sha256(judged_by + bytes.fromhex(_digest([module])) + vectors.manifest.read_bytes()).hexdigest())
        if tally.unjudged:
            say(f"  {tally.unjudged} mutants not yet judged by the tests are left out: run without --against first")
        if not judge_all(mutants, verdicts, lambda tree, limit: run_vectors(tree, vectors.directory, limit), "the vectors (prefix-model conform; the mutant as the adapter, contracts off)", f"vectors:{key}"):
            return None
        # Of those that pass every vector, the ones whose tests also pass with contracts off change only a contract.
        passing = [m for m in mutants if survived(verdicts, m)]
        if passing:
            tally.deselected = contract_tests(arguments, 3600.0)
            off = [part for test in tally.deselected for part in ("--deselect", test)] + arguments
            off_verdicts = state.verdicts(f"contracts-off:{key}", _digest([module, *tests]))
            names = f"{', '.join(t.relative_to(ROOT).as_posix() for t in tests)} with contracts off ({len(tally.deselected)} tests of the contracts deselected)"
            if not judge_all(passing, off_verdicts, lambda tree, limit: run_tests(tree, off, limit, contracts=False), names, f"contracts-off:{key}"):
                return None
            tally.contract_only = [m for m in passing if survived(off_verdicts, m)]
        unsorted = [m for m in passing if m not in tally.contract_only]
        excluded, kind = out_of_scope or {}, tally.out_of_scope
        reached = vectors.reach(module) if unsorted else frozenset()
        tally.unreached = {m.id for m in unsorted if m.start_line not in reached and m.line not in reached}
    tally.killed = sum(1 for m in mutants if not survived(verdicts, m))
    tally.timed_out = sum(1 for m in mutants if verdicts[m.id]["verdict"] == "timeout")
    for mutant in unsorted:
        entry = excluded.get(mutant.id)
        if entry is not None and entry.get("line") == mutant.mutated_line.strip():
            kind.append((mutant, entry.get("reason", "")))
        else:
            tally.survivors.append(mutant)
    by_id = {m.id: m for m in everything}
    for mutant_id, entry in excluded.items():
        if mutant_id not in by_id or by_id[mutant_id].mutated_line.strip() != entry.get("line"):
            tally.stale.append(mutant_id)
    if fuzz_scripts is not None and tally.survivors:
        scripts = fuzz_scripts
        campaign = f"fuzz --scripts {scripts} --seed {FUZZ_SEED}\0".encode()
        fuzz_verdicts = state.verdicts(f"fuzz:{key}", hashlib.sha256(campaign + bytes.fromhex(_digest([module, *sorted(FUZZ.glob("*.py"))]))).hexdigest())
        names = f"a fuzz campaign ({scripts} scripts, seed {FUZZ_SEED}; the mutant as the adapter, contracts off)"
        if not judge_all(tally.survivors, fuzz_verdicts, lambda tree, limit: run_fuzz(tree, scripts, limit), names, f"fuzz:{key}"):
            return None
        tally.fuzz_scripts = scripts
        tally.fuzz_killed = [m for m in tally.survivors if not survived(fuzz_verdicts, m)]
    return tally


def report(tally: Tally, say: Callable[[str], None]) -> None:
    sample = f"; {tally.sample} (NOT the full score)" if tally.sample else ""

    def show(label: str, mutant: Mutant, reason: str = "") -> None:
        say(f"  {label} {tally.key}:{mutant.start_line}  {mutant.id}  {mutant.description}{f': {reason}' if reason else ''}")
        if not reason:
            say(f"      - {mutant.original_line.strip()}\n      + {mutant.mutated_line.strip()}")

    if tally.against == "vectors":
        say(
            f"{tally.key} against the vectors: {tally.score()}: of {tally.mutants} mutants its tests kill,"
            f" {len(tally.contract_only)} change only what a contract computes (its tests pass with contracts off,"
            f" {len(tally.deselected)} tests of the contracts deselected), {len(tally.out_of_scope)} change what the vectors leave out"
            f" by design, {len(tally.survivors)} pass every vector ({sum(m.id in tally.unreached for m in tally.survivors)} on lines no vector runs)"
            f"{sample} ({tally.timed_out} by the timeout; {tally.judged_before}"
            f" verdicts from {STATE.relative_to(ROOT)}{f'; {tally.unjudged} not judged by the tests yet' if tally.unjudged else ''})"
        )
        for mutant in tally.survivors:
            show("PASSES THE VECTORS" + (" (a line no vector runs)" if mutant.id in tally.unreached else ""), mutant)
        if tally.fuzz_scripts:
            say(
                f"{tally.key} against a fuzz campaign ({tally.fuzz_scripts} scripts, seed {FUZZ_SEED}): {len(tally.fuzz_killed)} / {len(tally.survivors)}"
                " of the mutants that pass every vector fail it"
            )
            for mutant in tally.survivors:
                say(f"  {'fuzz kills' if mutant in tally.fuzz_killed else 'PASSES THE CAMPAIGN'} {tally.key}:{mutant.start_line}  {mutant.id}")
        for mutant in tally.contract_only:
            say(f"  contract only {tally.key}:{mutant.start_line}  {mutant.id}  {mutant.mutated_line.strip()}")
        for mutant, reason in tally.out_of_scope:
            show("out of the vectors' scope", mutant, reason)
        listed = OUT_OF_SCOPE
    else:
        against = f" against {tally.selection}" if tally.selection else ""
        say(
            f"{tally.key}{against}: {tally.score()}; {tally.mutants} mutants, {len(tally.equivalent)} equivalent, {len(tally.survivors)} survived{sample}"
            f" ({tally.timed_out} killed by the timeout; {tally.judged_before} verdicts from {STATE.relative_to(ROOT)})"
        )
        for mutant in tally.survivors:
            show("SURVIVED", mutant)
        for mutant, reason in tally.equivalent:
            show("equivalent", mutant, reason)
        listed = EQUIVALENT
    for mutant_id in tally.stale:
        say(f"  STALE entry of {listed.relative_to(ROOT)}: {mutant_id} no longer gives its line; it excludes nothing")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="+", metavar="MODULE", help="core/derive.py, core.derive, or model/prefix_model/core/derive.py")
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"pytest processes at a time (default {JOBS})")
    parser.add_argument("--timeout", type=float, default=None, help=f"seconds per mutant (default {TIMEOUT_FACTOR:g} x the unmutated run + {TIMEOUT_MARGIN:g})")
    parser.add_argument("--list", action="store_true", help="print each module's mutants and their tests, and run nothing")
    parser.add_argument(
        "--relocate-equivalent", action="store_true", help="give the entries of these modules in proofs/mutation-equivalent.json and proofs/mutation-vectors-scope.json the ids their lines have now (after an edit above them) and the def and original line of their mutant where they record none, and run nothing"
    )
    parser.add_argument("--sample", type=int, default=1, metavar="N", help="judge 1 mutant in N only, by position in id order (positions 0, N, 2N, ...; default 1: all)")
    parser.add_argument("--only", default="", metavar="ID,...", help="judge only these mutant ids (e.g. to show that a new test kills them)")
    parser.add_argument(
        "--tests", default="", metavar="ARG,...", help="run these pytest arguments (test files or node ids under tests/) instead of each module's own tests"
    )
    parser.add_argument(
        "--against",
        choices=("tests", "vectors", "fuzz"),
        default="tests",
        help="tests (default): the module's tests; vectors: the mutants they killed (or --tests killed) against the published vectors;"
        " fuzz: those that pass every vector, against a short fuzz campaign",
    )
    parser.add_argument(
        "--fuzz-scripts", type=int, default=FUZZ_SCRIPTS, metavar="N", help=f"--against fuzz: the campaign's scripts (default {FUZZ_SCRIPTS}; seed {FUZZ_SEED})"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.jobs < 1 or args.sample < 1 or args.fuzz_scripts < 1 or (args.timeout is not None and args.timeout <= 0):
        print("mutation.py: --jobs, --sample and --fuzz-scripts must be >= 1 and --timeout > 0", file=sys.stderr)
        return 2
    try:
        modules = [resolve_module(m) for m in args.modules]
    except FileNotFoundError as error:
        print(f"mutation.py: {error}", file=sys.stderr)
        return 2
    only = frozenset(i for i in args.only.split(",") if i)
    unknown = sorted(only - {m.id for module in modules for m in mutants_of(module.read_text(encoding="utf-8"))}) if only else []
    if unknown:
        print(f"mutation.py: --only names no mutant of these modules: {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        selection = parse_selection(args.tests) if args.tests else []
    except ValueError as error:
        print(f"mutation.py: {error}", file=sys.stderr)
        return 2
    lock = threading.Lock()

    def say(text: str) -> None:
        with lock:
            print(text, flush=True)

    if args.relocate_equivalent:
        for listed in (EQUIVALENT, OUT_OF_SCOPE):
            for line in relocate_equivalent(modules, listed) or [f"every entry of {listed.relative_to(ROOT)} names its mutant"]:
                say(line)
        return 0
    if args.list:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a listing piped into head stops quietly
        for module in modules:
            tests = ", ".join(selection) or ", ".join(t.relative_to(ROOT).as_posix() for t in tests_of(module)) or "none"
            everything = mutants_of(module.read_text(encoding="utf-8"))
            chosen = sampled(everything, args.sample)
            note = _sample_note(len(everything), len(chosen), args.sample)
            say(f"{module.relative_to(ROOT).as_posix()} (tests: {tests}; {len(everything)} mutants{f'; {note}' if note else ''})")
            for m in chosen:
                say(f"  {m.id}  {m.description}\n      {m.mutated_line.strip()}")
        return 0
    started = time.monotonic()
    against = {"vectors": "the published vectors, contracts off", "fuzz": "the published vectors, then a fuzz campaign, contracts off"}.get(
        args.against, f"pytest {' '.join(PYTEST_ARGS)}"
    )
    say(f"operators: {', '.join(OPERATORS)}; {against}; {args.jobs} at a time{f'; 1 mutant in {args.sample}' if args.sample > 1 else ''}")
    equivalent, out_of_scope = load_equivalent(), load_equivalent(OUT_OF_SCOPE)
    state = State(STATE)
    vectors = Vectors() if args.against in ("vectors", "fuzz") else None
    fuzz_scripts = args.fuzz_scripts if args.against == "fuzz" else None
    trees = Trees(args.jobs)
    tallies: list[Tally] = []
    failed = False
    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for module in modules:
                key = module.relative_to(ROOT).as_posix()
                tally = judge_module(
                    module, trees, pool, state, args.timeout, equivalent.get(key, {}), say, args.sample, vectors, only, selection, out_of_scope.get(key, {}), fuzz_scripts
                )
                if tally is None:
                    failed = True
                else:
                    tallies.append(tally)
    finally:
        trees.close()
        if vectors is not None:
            vectors.close()
    say("")
    for tally in tallies:
        report(tally, say)
    if len(tallies) > 1:
        killed = sum(t.killed for t in tallies)
        denominator = sum(t.denominator for t in tallies)
        say(f"all {len(tallies)} modules: {killed} / {denominator} ({100.0 * killed / denominator if denominator else 100.0:.1f} %)")
        if fuzz_scripts is not None:
            say(f"  of those that pass every vector, a fuzz campaign kills {sum(len(t.fuzz_killed) for t in tallies)} / {sum(len(t.survivors) for t in tallies)}")
    say(f"total {time.monotonic() - started:.1f} s wall")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
