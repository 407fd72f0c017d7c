"""Spec, code and tests agree: every requirement ID is tested, every tested ID is specified.

Also: the model's rejections and contract descriptions name only specified IDs, and the pure
core imports nothing that does I/O (style guide: I/O lives at the edge).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec" / "SPEC.md"
MODEL = ROOT / "model" / "prefix_model"
ID = r"[A-Z]+-\d+"
DEFINED = re.compile(rf"^- \*\*({ID})\*\* —", re.MULTILINE)
EDGE_MODULES = ("cli.py", "contracts.py")
IO_MODULES = ("io", "os", "pathlib", "sys", "time", "datetime", "random", "socket", "subprocess", "shutil", "tempfile")


def ids_in_spec() -> list[str]:
    return DEFINED.findall(SPEC.read_text(encoding="utf-8"))


def ids_named_by_tests() -> dict[str, set[str]]:
    """Return, per test file, the IDs named by ``pytest.mark.spec(...)`` decorators."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "spec":
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found.setdefault(arg.value, set()).add(path.name)
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


def test_every_spec_id_has_a_test() -> None:
    missing = sorted(set(ids_in_spec()) - set(ids_named_by_tests()))
    assert missing == [], f"requirements without a test: {missing}"


def test_every_tested_id_is_in_the_spec() -> None:
    unknown = sorted(set(ids_named_by_tests()) - set(ids_in_spec()))
    assert unknown == [], f"tests name IDs the spec lacks: {unknown}"


def test_every_id_the_model_names_is_in_the_spec() -> None:
    unknown = sorted(ids_named_by_model() - set(ids_in_spec()))
    assert unknown == [], f"the model names IDs the spec lacks: {unknown}"


def test_the_pure_core_imports_no_io() -> None:
    offenders = []
    for path in MODEL.glob("*.py"):
        if path.name in EDGE_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in IO_MODULES]
    assert offenders == []


def test_every_chapter_module_is_listed_in_the_spec_table() -> None:
    text = SPEC.read_text(encoding="utf-8")
    modules = [p.relative_to(MODEL.parent).as_posix() for p in MODEL.glob("*.py") if p.name not in ("__init__.py", "contracts.py")]
    assert [m for m in modules if f"`{m}`" not in text] == []


CORE_MODULES = (
    "json_values", "events", "surface", "log", "derive", "headers", "request_log", "requests", "fork",
    "waterfall", "meter", "loop",
)  # fmt: skip


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
