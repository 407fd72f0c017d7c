"""Spec, code and tests agree: every requirement ID is tested, every tested ID is specified.

Also: the model's rejections and contract descriptions name only specified IDs; the chapter
packages (core, formats, conformance, loop, review, vectors) import nothing that does I/O; the
chapters follow the packages' import order, the edge's last; no module imports another's private
name; the edge names no requirement ID; and the layout tables of README.md and SPEC.md agree with
each other and with the folders, one chapter to one package folder and its test folder.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec" / "SPEC.md"
MODEL = ROOT / "model" / "prefix_model"
ID = r"[A-Z]+-\d+"
DEFINED = re.compile(rf"^- \*\*({ID})\*\* —", re.MULTILINE)
PURE_PACKAGES = ("core", "formats", "loop", "conformance", "review", "vectors")  # the model; "edge" and "examples" may do I/O
READS_THE_ENVIRONMENT = ("core/contracts.py",)  # the contracts switch reads PREFIX_MODEL_CONTRACTS once
# The adopted scripts are package data (vectors/adopted.json, edited by hand as JSON): read once, as the package ships them.
READS_PACKAGE_DATA = ("vectors/adopted.py",)
IO_MODULES = ("io", "os", "pathlib", "sys", "time", "datetime", "random", "socket", "subprocess", "shutil", "tempfile", "importlib")


def ids_in_spec() -> list[str]:
    return DEFINED.findall(SPEC.read_text(encoding="utf-8"))


def ids_named_by_tests() -> dict[str, set[str]]:
    """Return, per test file, the IDs named by ``pytest.mark.spec(...)`` decorators."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "spec":
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found.setdefault(arg.value, set()).add(path.relative_to(ROOT).as_posix())
    return found


def ids_named_by_model() -> set[str]:
    """Return every ID the model's code names in a Rejection or a contract description."""
    ids: set[str] = set()
    for path in MODEL.rglob("*.py"):
        ids.update(re.findall(rf'"({ID})[:/"]', path.read_text(encoding="utf-8")))
        ids.update(re.findall(rf"/({ID}):", path.read_text(encoding="utf-8")))
    return ids


def test_spec_ids_are_unique_and_numerous() -> None:
    ids = ids_in_spec()
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
    assert len(ids) >= 40


def test_each_requirement_is_stated_once_in_spec_md() -> None:
    """A requirement's normative statement is SPEC.md's alone: no other spec file defines an ID (they point to SPEC.md)."""
    elsewhere = {p.name: DEFINED.findall(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "spec").glob("*.md")) if p.name != SPEC.name}
    assert "vectors.md" in elsewhere and {name: ids for name, ids in elsewhere.items() if ids} == {}
    assert DEFINED.findall("- **VEC-1** — restated\n") == ["VEC-1"]  # the pattern sees a restatement


def test_every_spec_id_has_a_test() -> None:
    missing = sorted(set(ids_in_spec()) - set(ids_named_by_tests()))
    assert missing == [], f"requirements without a test: {missing}"


def test_every_tested_id_is_in_the_spec() -> None:
    unknown = sorted(set(ids_named_by_tests()) - set(ids_in_spec()))
    assert unknown == [], f"tests name IDs the spec lacks: {unknown}"


def test_every_id_the_model_names_is_in_the_spec() -> None:
    unknown = sorted(ids_named_by_model() - set(ids_in_spec()))
    assert unknown == [], f"the model names IDs the spec lacks: {unknown}"


def _imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _pure_modules() -> list[Path]:
    return [p for package in PURE_PACKAGES for p in sorted((MODEL / package).glob("*.py"))]


def test_the_pure_model_imports_no_io() -> None:
    offenders = []
    for path in _pure_modules():
        if path.relative_to(MODEL).as_posix() in READS_THE_ENVIRONMENT:
            continue
        for node in _imports(path):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if path.relative_to(MODEL).as_posix() in READS_PACKAGE_DATA:
                names = [n for n in names if n != "importlib"]
            offenders += [f"{path.relative_to(MODEL)}: {n}" for n in names if n.split(".")[0] in IO_MODULES]
    assert offenders == []


def package_imports() -> dict[str, set[str]]:
    """Return, per top folder of the model (core, formats, …, edge, examples), the other top folders its modules import."""
    graph: dict[str, set[str]] = {}
    for path in sorted(MODEL.rglob("*.py")):
        parts = path.relative_to(MODEL).parts
        if len(parts) < 2:
            continue  # the package's __init__: its version, no import
        for node in _imports(path):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                names = module.split(".")
                if names[0] == "prefix_model" and len(names) > 1 and names[1] != parts[0]:
                    graph.setdefault(parts[0], set()).add(names[1])
    return graph


Rank = tuple[tuple[int, ...], bool]


def chapter_spans(rows: list[Row]) -> dict[str, tuple[Rank, Rank]]:
    """Return, per top folder of the layout table, its first and last chapter; an edge row ranks after a pure row of its number."""
    spans: dict[str, tuple[Rank, Rank]] = {}
    for chapter, _, package, _, _ in rows:
        if not package:
            continue
        top = package.split("/")[0]
        rank = (tuple(int(n) for n in chapter[1:].split(".")), top == "edge")
        first, last = spans.get(top, (rank, rank))
        spans[top] = (min(first, rank), max(last, rank))
    return spans


def order_faults(rows: list[Row], graph: dict[str, set[str]]) -> list[str]:
    """Return each import of a package whose chapters do not all come before the importer's first chapter.

    examples/ has no chapter (the demo and the model streams the scenarios feed on): an import of it
    stands for what it imports.
    """
    spans = chapter_spans(rows)

    def through(package: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if package in spans or package in seen:
            return {package}
        return {q for dependency in graph.get(package, set()) for q in through(dependency, seen | {package})}

    def number(rank: Rank) -> str:
        return "§" + ".".join(map(str, rank[0])) + (" (edge)" if rank[1] else "")

    faults = []
    for package in sorted(spans):
        for imported in sorted({q for dependency in graph.get(package, set()) for q in through(dependency)} - {package}):
            if imported not in spans:
                faults.append(f"{package}/ imports {imported}/, which has no chapter")
            elif not spans[imported][1] < spans[package][0]:
                faults.append(f"{package}/ (from {number(spans[package][0])}) imports {imported}/ (up to {number(spans[imported][1])})")
    return faults


def test_the_chapters_follow_the_import_order() -> None:
    """Issue 35 item 3: a chapter's package imports only the packages of the chapters before it, the edge after all of them."""
    rows, graph = layout_rows(SPEC), package_imports()
    assert order_faults(rows, graph) == []
    assert {"core", "formats", "conformance", "loop", "review", "vectors", "edge"} <= set(chapter_spans(rows))
    # It can fail: the plain event form back in conformance/ (formats importing it), and the loop's chapters before the fold's.
    assert order_faults(rows, {**graph, "formats": graph.get("formats", set()) | {"conformance"}}) == ["formats/ (from §8) imports conformance/ (up to §9)"]
    swapped = [(c.replace("§9", "§10.9") if p == "conformance/" else c, t, p, m, s) for c, t, p, m, s in rows]
    assert order_faults(swapped, graph) == ["loop/ (from §10) imports conformance/ (up to §10.9)"]
    # A pure package importing the edge, or the edge's chapters before a pure one it imports.
    assert "vectors/ (from §15) imports edge/ (up to §22 (edge))" in order_faults(rows, {**graph, "vectors": graph["vectors"] | {"edge"}})
    late = [(c.replace("§14", "§24") if p == "review/" else c, t, p, m, s) for c, t, p, m, s in rows]
    assert "edge/ (from §15 (edge)) imports review/ (up to §24)" in order_faults(late, graph)


def test_no_module_imports_another_modules_private_name() -> None:
    offenders = []
    sources = [*MODEL.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "proofs").rglob("*.py"), *(ROOT / "bench").glob("*.py")]
    for path in sorted(sources):
        for node in _imports(path):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("prefix_model"):
                offenders += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_") and not a.name.endswith("__")]
    assert offenders == []


def _statements(path: Path) -> list[tuple[int, str]]:
    """Return the string constants of ``path`` that state something: not docstrings, not a command's help text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documentation = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body and isinstance(node.body[0], ast.Expr):
            documentation.add(id(node.body[0].value))
        if isinstance(node, ast.keyword) and node.arg in ("help", "description", "epilog"):
            documentation.update(id(n) for n in ast.walk(node.value))
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("_HELP") for t in node.targets):
            documentation.update(id(n) for n in ast.walk(node.value))  # a command's --help text
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in documentation]


def test_the_edge_names_no_requirement_id() -> None:
    """Findings and rejections are built in the model; the edge reports the IDs it is handed (docs may cite them)."""
    known = set(ids_in_spec())
    offenders = []
    for path in sorted((MODEL / "edge").rglob("*.py")):
        for line, text in _statements(path):
            named = set(re.findall(rf"\b({ID})\b", text)) & known
            offenders += [f"{path.relative_to(MODEL)}:{line}: {i}" for i in sorted(named)]
    assert offenders == []


# --- the layout: README's table, SPEC's table and the folders agree ---

ROW = re.compile(r"^\| (§[\d.]+) ([^|]+?) \| (`[\w/]+/`|—) \| ([^|]+) \| ([^|]+) \|$", re.MULTILINE)
PROJECT_TESTS = ("test_traceability.py", "test_readme.py", "test_wheel.py", "test_proofs.py")
Row = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]


def _cells(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([^`]+)`", text))


def layout_rows(path: Path) -> list[Row]:
    """Return the layout table of ``path``: (chapter, title, package folder or "", modules, tests)."""
    rows = ROW.findall(path.read_text(encoding="utf-8"))
    return [(n, title, package.strip("`").replace("—", ""), _cells(modules), _cells(tests)) for n, title, package, modules, tests in rows]


def test_readme_and_spec_show_the_same_layout() -> None:
    spec, readme = layout_rows(SPEC), layout_rows(ROOT / "README.md")
    assert len(spec) >= 15
    assert readme == spec


def test_each_layout_row_is_a_chapter_of_the_spec() -> None:
    text = SPEC.read_text(encoding="utf-8")
    headings = {m.group(1): m.group(2).strip() for m in re.finditer(r"^#{2,3} (\d+(?:\.\d+)?)\.? (.+)$", text, re.MULTILINE)}
    wrong = [f"{n} {title}" for n, title, *_ in layout_rows(SPEC) if headings.get(n[1:]) != title]
    assert wrong == [], f"rows whose chapter is not a heading of SPEC.md: {wrong}"


def test_the_layout_table_covers_the_tree_one_to_one() -> None:
    """Every module and every test module sits in exactly one row; a row's tests sit in its package's test folder."""
    rows = layout_rows(SPEC)
    listed_modules = [f"{package}{m}" for _, _, package, modules, _ in rows for m in modules]
    listed_tests = [f"tests/{package.split('/')[0] + '/' if package else ''}{t}" for _, _, package, _, tests in rows for t in tests]
    assert len(listed_modules) == len(set(listed_modules)) and len(listed_tests) == len(set(listed_tests))
    modules = sorted(p.relative_to(MODEL).as_posix() for folder in (*PURE_PACKAGES, "edge") for p in (MODEL / folder).rglob("*.py") if p.name != "__init__.py")
    assert sorted(listed_modules) == modules
    tests = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py") if p.parent != ROOT / "tests" or p.name not in PROJECT_TESTS)
    assert sorted(listed_tests) == tests
    assert sorted(p.name for p in MODEL.glob("*.py")) == ["__init__.py"], "every module of the model sits in a package folder"


CORE_MODULES = (
    "core.json_values", "core.events", "core.surface", "core.log", "core.derive", "core.headers", "core.request_log",
    "core.requests", "core.fork", "loop.waterfall", "loop.meter", "loop.transitions",
)  # fmt: skip


CHAPTER_MODULES = (
    "loop.world", "loop.compaction", "loop.meter", "loop.stream", "loop.waterfall", "loop.transitions", "loop.properties", "loop.variants",
    "loop.explore", "loop.memo", "loop.world_fold",
    "conformance.findings", "formats.plain", "conformance.screens", "conformance.captured", "conformance.nodes", "conformance.state",
    "conformance.enclosure", "conformance.record", "conformance.live", "conformance.reconstruction", "conformance.matching", "conformance.fold",
    "conformance.instances", "conformance.vacuity",
)  # fmt: skip
NO_CONTRACT = "# no contract: "


def _public_functions(module: object) -> list[tuple[str, Any]]:
    """Return the public functions of ``module``: module level, and the public methods and properties of its public classes."""
    import inspect

    from prefix_model.loop.semantics import Semantics

    found: list[tuple[str, Any]] = []
    for name, member in sorted(vars(module).items()):
        if name.startswith("_") or getattr(member, "__module__", None) != getattr(module, "__name__", None):
            continue
        if inspect.isfunction(member):
            found.append((name, member))
        elif inspect.isclass(member) and not issubclass(member, Semantics):
            # A design's choice points (Semantics overrides) are judged by the properties: a faulty design's contract would state its fault.
            for attribute, value in sorted(vars(member).items()):
                function = value.fget if isinstance(value, property) else value
                if not attribute.startswith("_") and inspect.isfunction(function):
                    found.append((f"{name}.{attribute}", function))
    return found


def _says_why_not(function: Any) -> bool:
    """Return whether the lines just above the function's ``def`` give the one-line reason it has no contract."""
    import inspect

    lines, start = inspect.getsourcelines(function)
    source = inspect.getsourcefile(function)
    assert source is not None
    above = Path(source).read_text(encoding="utf-8").splitlines()[: start - 1 + next(n for n, line in enumerate(lines) if line.lstrip().startswith("def "))]
    comments = [line.strip() for line in reversed(above)]
    for line in comments:
        if line.startswith(NO_CONTRACT):
            return len(line) > len(NO_CONTRACT) + 10
        if not (line.startswith("#") or line.startswith("@")):
            return False
    return False


def test_every_public_function_of_the_loop_and_the_conformance_chapter_carries_a_contract_or_says_why_not() -> None:
    """Issue 15 item 5: a function with nothing worth stating says so in a ``# no contract:`` comment above its ``def``."""
    import importlib

    from icontract._checkers import find_checker

    bare, pointless = [], []
    for name in CHAPTER_MODULES:
        for public, function in _public_functions(importlib.import_module(f"prefix_model.{name}")):
            contracted = find_checker(function) is not None
            exempt = _says_why_not(function)
            if not contracted and not exempt:
                bare.append(f"{name}.{public}")
            if contracted and exempt:
                pointless.append(f"{name}.{public}")
    assert bare == [] and pointless == []


def test_every_public_core_function_carries_a_contract() -> None:
    """Predicates (``is_*``) are exempt: they are what the contracts are written in."""
    import importlib
    import inspect

    bare = []
    for name in CORE_MODULES:
        module = importlib.import_module(f"prefix_model.{name}")
        for public in module.__all__:
            member = getattr(module, public)
            if inspect.isfunction(member) and not public.startswith("is_"):
                if not (getattr(member, "__preconditions__", None) or getattr(member, "__postconditions__", None)):
                    bare.append(f"{name}.{public}")
    assert bare == []


def test_the_spec_folder_is_the_packaged_spec() -> None:
    # spec/ is where readers look; the wheel ships model/prefix_model/spec/: one text, or they drift apart
    packaged = sorted(p.relative_to(MODEL / "spec") for p in (MODEL / "spec").rglob("*") if p.is_file())
    shown = sorted(p.relative_to(ROOT / "spec") for p in (ROOT / "spec").rglob("*") if p.is_file())
    assert shown == packaged and "SPEC.md" in {p.name for p in shown}
    for name in shown:
        assert (ROOT / "spec" / name).read_bytes() == (MODEL / "spec" / name).read_bytes(), f"spec/{name} differs from the package's"


def test_negative_requirements_say_must_not() -> None:
    """RFC 2119: "No snapshot MUST write …" reads as permissive; a prohibition is written "MUST NOT" (issue 34 item 4)."""
    text = SPEC.read_text(encoding="utf-8")
    permissive = re.findall(r"(?:^- \*\*[A-Z]+-\d+\*\* — (?:\*[^*]+\* )?|[.;] )(?:No|Nothing|None|Neither) [^.;:]*?\bMUST\b(?! NOT)", text, re.MULTILINE)
    never = re.findall(r"\bMUST (?:never|not)\b", text)
    assert permissive == [] and never == [], permissive + never
