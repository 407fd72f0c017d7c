"""The package installed from its wheel works away from the source tree.

The wheel is built offline with this venv's setuptools and installed, without its dependencies,
into a new venv; the dependencies come from this venv through PYTHONPATH (its editable-install
``.pth`` is not read there, so the repo's model/ stays off the path). The commands run in a
directory outside the repo and read only the package data the wheel ships (SPEC.md, the capture
schema, the example files).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_LOG = ROOT / "model" / "prefix_model" / "examples" / "example.events.jsonl"
TIMEOUT = 300


def run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def build_wheel(work: Path) -> Path:
    """Return the wheel built from a copy of the project (the build's scratch files stay out of the repo)."""
    source = work / "source"
    shutil.copytree(ROOT / "model", source / "model", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    built = run([*pip, "--wheel-dir", str(work / "dist"), str(source)])
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return the scripts directory of a new venv that holds the wheel and nothing else."""
    work = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(work)
    venv.create(work / "venv", with_pip=False)
    python = work / "venv" / "bin" / "python"
    installed = run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index", str(wheel)])
    assert installed.returncode == 0, installed.stderr
    return python.parent


def prefix_model(scripts: Path, cwd: Path, *args: str) -> tuple[int, str, str]:
    """Run the installed ``prefix-model`` in ``cwd``, with this venv's packages for its dependencies."""
    paths = sysconfig.get_paths()
    env = os.environ | {"PYTHONPATH": os.pathsep.join(dict.fromkeys((paths["purelib"], paths["platlib"])))}
    done = run([str(scripts / "prefix-model"), *args], cwd, env)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.spec("VEC-1", "CAP-1")
def test_the_wheel_ships_the_whole_specification_and_every_schema(scripts: Path) -> None:
    """What ``--help`` and the docs point at is there for a pip user: every file of the repo's spec/, byte for byte."""
    purelib = Path(run([str(scripts / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    shipped = purelib / "prefix_model" / "spec"
    wanted = sorted(p.relative_to(ROOT / "spec") for p in (ROOT / "spec").rglob("*") if p.is_file())
    assert len(wanted) >= 8 and all((shipped / name).read_bytes() == (ROOT / "spec" / name).read_bytes() for name in wanted), wanted
    licenses = list(purelib.glob("session_prefix_model-*.dist-info/licenses/LICENSE"))
    assert len(licenses) == 1 and "MIT License" in licenses[0].read_text(encoding="utf-8")


@pytest.mark.spec("CLI-6")
def test_check_example_runs_on_the_installed_package(scripts: Path, tmp_path: Path) -> None:
    status, out, err = prefix_model(scripts, tmp_path, "check", "--example")
    assert status == 0, err
    assert str(scripts.parent) in out.splitlines()[0]  # the example the wheel ships, not model/'s
    assert "result: conforms" in out


@pytest.mark.spec("CAP-1")
def test_a_capture_the_shipped_schema_rejects_is_one_line(scripts: Path, tmp_path: Path) -> None:
    log = Path(shutil.copy(EXAMPLE_LOG, tmp_path))
    (tmp_path / "capture.jsonl").write_text('{"bad": 1}\n', encoding="utf-8")
    status, out, err = prefix_model(scripts, tmp_path, "check", log.name, "--requests", "capture.jsonl")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("prefix-model: capture.jsonl:1: CAP-1: "), err


@pytest.mark.spec("VEC-1")
def test_vectors_run_on_the_installed_package(scripts: Path, tmp_path: Path) -> None:
    """Its coverage audit reads the shipped SPEC.md, its README the shipped template. The bytes are test_vectors.py's business."""
    status, out, err = prefix_model(scripts, tmp_path, "vectors", "--out", "vectors")
    assert (status, err) == (0, "")
    assert out.startswith("prefix-model vectors: ") and (tmp_path / "vectors" / "manifest.json").is_file()
    readme = (tmp_path / "vectors" / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Session-prefix conformance vectors") and "${" not in readme
    assert (tmp_path / "vectors" / "spec" / "schema" / "vector.schema.json").read_bytes() == (ROOT / "spec" / "schema" / "vector.schema.json").read_bytes()


@pytest.mark.spec("CLI-10")
def test_docs_names_the_files_the_wheel_installed(scripts: Path, tmp_path: Path) -> None:
    """A pip user's `prefix-model docs`: absolute paths inside the installed package, every file there, none in the repo."""
    status, out, err = prefix_model(scripts, tmp_path, "docs")
    assert (status, err) == (0, "")
    listed = [Path(line.split()[0]) for line in out.splitlines() if line.startswith("  /")]
    assert len(listed) == len([p for p in (ROOT / "spec").rglob("*") if p.is_file()])
    assert all(p.is_file() and p.is_relative_to(scripts.parent) and "prefix_model/spec/" in p.as_posix() for p in listed), listed
