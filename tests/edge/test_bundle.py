"""The vectors stand alone (spec/vectors.md §3, VEC-1, VEC-6) and the installed specification is found (CLI-10).

A vectors directory holds a README made from the package's template, the specification and every
schema its files name, and a manifest listing all of it; ``--bundle`` packs it as a tarball that
is the same bytes on every build; ``prefix-model docs`` says where the package keeps the
specification, and no ``--help`` points at a checkout's ``spec/``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from prefix_model import __version__
from prefix_model.edge import cli
from prefix_model.vectors import FORMAT_VERSION
from prefix_model.edge.vectors.bundle import TRANSCRIPT_MARK, write_tarball
from prefix_model.vectors.cases import catalogue, pending_cases
from prefix_model.edge.vectors.generate import SPEC_PATH, audit, bundle_name, declared


ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT / "spec"
TOP = f"session-prefix-vectors-{__version__}"


def files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def manifest_of(directory: Path) -> dict[str, Any]:
    value = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def members(tarball: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        return {info.name: info for info in tar.getmembers()}


def contents(tarball: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        return {info.name: tar.extractfile(info).read() for info in tar.getmembers() if info.isfile()}  # type: ignore[union-attr]


# --- VEC-1: the directory describes itself ---


@pytest.mark.spec("VEC-1")
def test_the_directory_holds_the_specification_byte_for_byte_and_the_manifest_lists_it(published: Path) -> None:
    written, manifest = files(published), manifest_of(published)
    shipped = {f"spec/{p.relative_to(SPEC_DIR).as_posix()}": p.read_bytes() for p in sorted(SPEC_DIR.rglob("*")) if p.is_file()}
    assert len(shipped) >= 9 and {name: written.get(name) for name in shipped} == shipped
    listed = {entry["file"]: entry["sha256"] for entry in manifest["files"]}
    assert set(listed) == set(shipped) | {"README.md"}
    assert all(hashlib.sha256(written[name]).hexdigest() == digest for name, digest in listed.items())


@pytest.mark.spec("VEC-1")
def test_every_schema_reference_resolves_inside_the_directory_and_validates_its_file(published: Path) -> None:
    """No URL: each JSON file's ``schema`` is a path in DIR, and the schema found there accepts the file."""
    validators: dict[str, jsonschema.Draft202012Validator] = {}
    checked = 0
    for path in sorted(published.rglob("*.json")):
        if path.parent.name == "schema":
            continue
        value = json.loads(path.read_text(encoding="utf-8"))
        reference = value["schema"]
        assert not re.match(r"^[a-z]+:", reference) and (published / reference).is_file(), (path, reference)
        if reference not in validators:
            loaded = json.loads((published / reference).read_text(encoding="utf-8"))
            jsonschema.Draft202012Validator.check_schema(loaded)
            validators[reference] = jsonschema.Draft202012Validator(loaded)
        assert [e.message for e in validators[reference].iter_errors(value)] == [], path
        checked += 1
    assert checked == len(manifest_of(published)["cases"]) + 1 and set(validators) == {"spec/schema/manifest.schema.json", "spec/schema/vector.schema.json"}
    # The old URL is no longer a case's schema: the schema in DIR refuses it.
    case = json.loads((published / "loop" / "no-listener" / "case.json").read_text(encoding="utf-8"))
    assert list(validators["spec/schema/vector.schema.json"].iter_errors(case | {"schema": "https://github.com/session-prefix-model/spec/schema/vector.schema.json"}))


@pytest.mark.spec("VEC-1")
def test_the_readme_says_what_each_kind_is_how_to_run_it_and_shows_the_real_protocol(published: Path) -> None:
    readme = (published / "README.md").read_text(encoding="utf-8")
    assert "${" not in readme and "$id" in readme  # every field filled; the template's $$ written as one $
    cases = [json.loads((published / entry["file"]).read_text(encoding="utf-8")) for entry in manifest_of(published)["cases"]]
    kinds = ["scenario" if "actions" in c else "file" if "file" in c else "log" for c in cases]
    valid = {kind: sum(1 for k, c in zip(kinds, cases) if k == kind and c["valid"]) for kind in ("log", "file")}
    assert f"| scenario | {kinds.count('scenario')} |" in readme
    assert f"| log | {kinds.count('log')} ({valid['log']} valid) |" in readme
    assert f"| file | {kinds.count('file')} ({valid['file']} valid) |" in readme
    assert f"{len(cases)} in all" in readme and f"model {__version__}" in readme and f"`formatVersion`, {FORMAT_VERSION})" in readme
    for schema in (SPEC_DIR / "schema").glob("*.json"):
        assert f"`{schema.name}`" in readme
    for needed in ("prefix-model conform --adapter", "## Running them by hand, in any language", "`refused`", "`tornTail`", "`requirement`"):
        assert needed in readme, needed
    # The transcript is spec/vectors.md §10's, which tests/edge/test_conform.py replays through the model byte for byte.
    vectors_md = (SPEC_DIR / "vectors.md").read_text(encoding="utf-8")
    shown = vectors_md[vectors_md.index(TRANSCRIPT_MARK) + len(TRANSCRIPT_MARK) :].split("```")[0]
    assert shown.count("\n> ") >= 5 and f"```\n{shown}```" in readme
    # Every relative link the README names is in DIR.
    for named in set(re.findall(r"`(spec/[\w./-]+\.(?:md|json))`", readme)):
        assert (published / named).is_file(), named


@pytest.mark.spec("VEC-1", "VEC-2")
def test_a_case_id_under_spec_is_refused_by_the_audit() -> None:
    """DIR/spec/ holds the specification: a case there would overwrite it or be removed with it."""
    cases = catalogue()
    shadowing = dataclasses.replace(cases[0], id="spec/schema")
    problems = audit((*cases, shadowing), declared(SPEC_PATH.read_text(encoding="utf-8")), pending_cases())
    assert problems == ["case ids under spec/, where a vectors directory keeps the specification: spec/schema"]
    assert audit(cases, declared(SPEC_PATH.read_text(encoding="utf-8")), pending_cases()) == []


@pytest.mark.spec("VEC-1")
def test_regenerating_removes_the_documents_an_earlier_manifest_listed(published: Path, tmp_path: Path) -> None:
    from prefix_model.edge.vectors.generate import generate

    target = tmp_path / "vectors"
    shutil.copytree(published, target)
    retired = target / "spec" / "schema" / "retired.schema.json"
    retired.write_text("{}\n")
    manifest = manifest_of(target)
    manifest["files"].append({"file": "spec/schema/retired.schema.json", "sha256": "0" * 64})
    (target / "manifest.json").write_text(json.dumps(manifest))
    assert generate(target) == 0
    assert files(target) == files(published) and not retired.exists()


# --- VEC-6: the tarball ---


@pytest.mark.spec("VEC-6")
def test_two_builds_of_the_tarball_are_the_same_bytes_whatever_the_files_times_and_modes(generated: tuple[Path, Path], tmp_path: Path) -> None:
    """The two generations of conftest (another process, hash seed and contracts) packed, one of them touched and chmod'ed."""
    here, there = generated
    moved = tmp_path / "elsewhere" / "vectors"
    shutil.copytree(there, moved)
    for n, path in enumerate(sorted(moved.rglob("*"))):
        path.chmod(0o700 if path.is_dir() else 0o600)
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
    first, second = tmp_path / "first.tar.gz", tmp_path / "second.tar.gz"
    write_tarball(here, first, TOP)
    write_tarball(moved, second, TOP)
    assert first.read_bytes() == second.read_bytes()
    data = first.read_bytes()
    assert data[:2] == b"\x1f\x8b" and data[4:8] == b"\0\0\0\0" and data[3] & 0x08 == 0  # gzip: no time, no file name
    entries = members(data)
    names = list(entries)
    assert names == sorted(names, key=lambda name: name.split("/")) and names[0] == TOP
    assert all((e.mtime, e.uid, e.gid, e.uname, e.gname) == (0, 0, 0, "", "") for e in entries.values())
    assert all(e.mode == (0o755 if e.isdir() else 0o644) for e in entries.values())


@pytest.mark.spec("VEC-6")
def test_the_bundle_command_packs_readme_schemas_manifest_and_every_case(
    published: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`prefix-model vectors --bundle DIR` (what make vectors-bundle runs) end to end: the versioned name, the same bytes as DIR packed."""
    dist = tmp_path / "dist"
    dist.mkdir()
    assert cli.main(["vectors", "--bundle", str(dist)]) == 0
    bundle = dist / f"{bundle_name()}.tar.gz"
    out = capsys.readouterr().out
    assert bundle_name() == TOP and [p.name for p in dist.iterdir()] == [bundle.name] and out.rstrip().endswith(str(bundle))
    packed = contents(bundle.read_bytes())
    expected = {f"{TOP}/{name}": data for name, data in files(published).items()}
    assert packed == expected
    manifest = json.loads(packed[f"{TOP}/manifest.json"])
    assert {f"{TOP}/README.md", f"{TOP}/spec/schema/vector.schema.json", f"{TOP}/spec/SPEC.md"} <= set(packed)
    assert {f"{TOP}/{e['file']}" for e in manifest["cases"]} <= set(packed) and len(manifest["cases"]) == len(catalogue())
    reference = tmp_path / "reference.tar.gz"
    write_tarball(published, reference, TOP)
    assert bundle.read_bytes() == reference.read_bytes()


@pytest.mark.spec("VEC-6", "CLI-2")
def test_a_bundle_that_cannot_be_written_is_one_line_exit_2_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, says in (
        (["vectors", "--bundle", str(tmp_path / "no" / "such" / "v.tar.gz")], "no such directory for the bundle"),
        (["vectors"], "--bundle"),
        (["vectors", "--out", str(tmp_path / "v"), "--bundle", str(tmp_path / "v" / "v.tar.gz")], "which it packs"),
    ):
        assert cli.main(args) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and says in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []


# --- CLI-10: where the installed specification is ---


@pytest.mark.spec("CLI-10")
def test_docs_prints_the_absolute_path_and_title_of_every_specification_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["docs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in lines if line.startswith("  /")]
    assert all(Path(p).is_absolute() and Path(p).is_file() for p in listed)
    names = sorted(Path(p).relative_to(Path(listed[0]).parent).as_posix() for p in listed)
    assert names == sorted(p.relative_to(SPEC_DIR).as_posix() for p in SPEC_DIR.rglob("*") if p.is_file())
    titled = {Path(line.split()[0]).name: line.split(None, 1)[1] for line in lines if line.startswith("  /")}
    assert titled["SPEC.md"] == "session-prefix-model — specification"
    assert titled["capture.schema.json"] == json.loads((SPEC_DIR / "schema" / "capture.schema.json").read_text())["title"]


def help_text(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main([*words, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.mark.spec("CLI-10")
def test_no_help_names_a_checkout_path_of_the_specification(capsys: pytest.CaptureFixture[str]) -> None:
    """A pip user has no spec/ folder: every --help names the files as `docs` lists them."""
    helps = {"": help_text(capsys)} | {name: help_text(capsys, name) for name in cli.COMMANDS}
    relative = {name: re.findall(r"spec/[\w./-]+", text) for name, text in helps.items()}
    assert {name: found for name, found in relative.items() if found} == {}
    assert "prefix-model docs" in helps["conform"] and "prefix-model docs" in helps["vectors"]

