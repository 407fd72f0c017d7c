"""``prefix-model vectors --out DIR``: write the conformance vectors (spec/vectors.md). The edge.

Before anything is written, two gates run, and either failing makes the exit status non-zero with
one line on stderr and nothing written:

1. **The coverage audit.** Every requirement ID of spec/SPEC.md is listed by a valid case's
   ``requirements`` unless its entry declares otherwise, with its reason; every ID whose entry
   declares an invalid case (what a log or a capture can break) has one; cases name only
   specified IDs. The declaration ends the entry (``declared``; spec/vectors.md §7).
2. **The independent re-check.** Every case is written to its text, read back as JSON and run by
   the reference consumer (``consumer.replay`` with the model's adapter and checker); every
   scenario's logs and requests, written as a log file (time 0) and a capture, draw no finding
   from the checker; every action decodes back to itself.

Output: ``DIR/<case-id>/case.json`` per case, what makes DIR stand alone (``DIR/README.md`` and
the specification with its schemas under ``DIR/spec/``: ``bundle``), and ``DIR/manifest.json``
(cases sorted by id, each with its file's SHA-256, then the other files with theirs),
byte-identical on every run. Files a previous manifest in DIR listed are removed first; a
non-empty DIR without a manifest is refused. ``--bundle FILE`` also packs DIR as a reproducible
``.tar.gz`` (``bundle.write_tarball``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from prefix_model import __version__
from prefix_model.vectors import FORMAT_VERSION, MANIFEST_SCHEMA
from prefix_model.edge.vectors.bundle import DOCS, bundle_files, write_tarball
from prefix_model.vectors.scenarios import Scenario
from prefix_model.vectors.cases import (
    PENDING_MODEL_BUGS,
    Case,
    LogCase,
    capture_lines,
    case_text,
    catalogue,
    log_lines,
    pending_cases,
    world_of,
)
from prefix_model.vectors.codec import action_from_json, action_to_json, layout, obj
from prefix_model.edge.runner.consumer import ModelAdapter, ModelChecker, replay

__all__ = [
    "SPEC_PATH",
    "WITNESS_FORMS",
    "Witness",
    "EXAMPLE_CASE",
    "EXAMPLE_FILE_CASE",
    "declared",
    "audit",
    "recheck",
    "manifest_text",
    "example_text",
    "generate",
    "bundle_name",
    "bundle_path",
    "run",
    "main",
]

# Package data (spec/SPEC.md links to it): the audit runs for an installed wheel too.
SPEC_PATH: Traversable = resources.files("prefix_model") / "spec" / "SPEC.md"
_ENTRY = re.compile(r"^- \*\*([A-Z]+-\d+)\*\* —.*(?:\n  .*)*", re.MULTILINE)  # the ID's line and its indented lines
EXAMPLE_CASE = "loop/no-listener"  # the worked examples of spec/vectors.md §8: a scenario,
EXAMPLE_FILE_CASE = "invalid/fmt-10/header-without-newline"  # and a log file

# How the end of a requirement's entry in spec/SPEC.md says what its vectors witness (vectors.md §7):
# nothing (a valid case lists it), or one of these forms, the last two saying why after " — ".
_DECLARATION = re.compile(r"\[vectors: ([^\]—]*?)(?: — ([^\]]+))?\]$")
WITNESS_FORMS: dict[str, tuple[bool, bool]] = {  # form -> (a valid case lists it, an invalid case rejects with it)
    "valid, invalid": (True, True),  # what a log or a capture can break
    "invalid": (False, True),  # a rule that only rejects input a conforming run never writes
    "none": (False, False),  # no vector can witness it
}


@dataclass(frozen=True)
class Witness:
    """What a requirement's vectors witness, as its entry in spec/SPEC.md declares.

    ``valid``: a valid case lists it; ``invalid``: an invalid case (a log, a log file or a capture)
    is rejected with it; ``why``: when no valid case can list it, the reason.
    """

    valid: bool = True
    invalid: bool = False
    why: str = ""


def declared(text: str) -> dict[str, Witness]:
    """Return each requirement ID spec/SPEC.md defines, in order, with what its vectors witness.

    An entry is its ``- **ID** —`` line and the indented lines after it; a declaration ends it.
    Raises ValueError, naming the ID, for a declaration of no known form, one that says why where
    a valid case lists the rule or does not where none does, or one that does not end its entry.
    """
    rules: dict[str, Witness] = {}
    for entry in _ENTRY.finditer(text):
        rule, body = entry.group(1), " ".join(entry.group(0).split())
        found = _DECLARATION.search(body)
        if found is None:
            if "[vectors:" in body:
                raise ValueError(f"{rule}: a [vectors: …] declaration must end its entry")
            rules[rule] = Witness()
            continue
        form, why = found.group(1), found.group(2) or ""
        if form not in WITNESS_FORMS:
            raise ValueError(f"{rule}: [vectors: {form}] is none of: {'; '.join(WITNESS_FORMS)}")
        valid, invalid = WITNESS_FORMS[form]
        if valid == bool(why):
            raise ValueError(f"{rule}: [vectors: {form}] says why exactly when no valid case lists the rule")
        rules[rule] = Witness(valid, invalid, why)
    return rules


def audit(cases: Sequence[Case], rules: Mapping[str, Witness], pending: Sequence[LogCase] = ()) -> list[str]:
    """Return what the catalogue fails to cover of the requirements ``rules`` declares (empty when the audit passes).

    ``pending`` cases (held back by a model bug) count for invalid cases only: the requirement
    has its vector, published once the model is fixed.
    """
    problems = []
    named = {r for c in cases for r in c.requirements} | {c.requirement for c in cases if isinstance(c, LogCase) and c.requirement}
    unknown = sorted(named - set(rules))
    if unknown:
        problems.append(f"cases name requirements the spec lacks: {', '.join(unknown)}")
    shadowed = sorted(c.id for c in cases if c.id.split("/")[0] == DOCS)
    if shadowed:
        problems.append(f"case ids under {DOCS}/, where a vectors directory keeps the specification: {', '.join(shadowed)}")
    valid = {r for c in cases if isinstance(c, Scenario) or c.valid for r in c.requirements}
    missing = [r for r, w in rules.items() if w.valid and r not in valid]
    if missing:
        problems.append(f"requirements no valid case lists: {', '.join(missing)}")
    rejected = {c.requirement for c in list(cases) + list(pending) if isinstance(c, LogCase) and c.requirement}
    unviolated = sorted(r for r, w in rules.items() if w.invalid and r not in rejected)
    if unviolated:
        problems.append(f"requirements declaring an invalid case that have none: {', '.join(unviolated)}")
    return problems


def _scenario_logs(case: Scenario) -> list[str]:
    """Return what the checker finds in each session of ``case``'s run, written as a log file and a capture."""
    world = world_of(case.id)
    checker = ModelChecker()
    problems = []
    for session in (s for s in world.sessions if s.log.events):
        capture = capture_lines(world, session.id)
        found = checker.check(session.id, log_lines(world, session.id), capture or None)
        if found:
            problems.append(f"session {session.id}: the checker reports {sorted(found)} on the run's own log and capture")
    return problems


def recheck(cases: Sequence[Case]) -> list[str]:
    """Return every case that fails its independent re-check, one description each."""
    adapter, checker = ModelAdapter(), ModelChecker()
    problems = []
    for case in cases:
        found = replay(json.loads(case_text(case)), adapter, checker, stepwise=False)
        if isinstance(case, Scenario):
            found += [f"action {n} does not decode to itself" for n, a in enumerate(case.actions) if action_from_json(action_to_json(a)) != a]
            found += _scenario_logs(case)
        problems += [f"{case.id}: {p.splitlines()[0]}" for p in found]
    return problems


def manifest_text(entries: Sequence[tuple[str, str, str]], others: Sequence[tuple[str, str]] = ()) -> str:
    """Return the manifest's text for (id, file, sha256) case entries and the directory's other (file, sha256)."""
    cases = tuple(obj({"id": i, "file": f, "sha256": h}) for i, f, h in sorted(entries))
    files = tuple(obj({"file": f, "sha256": h}) for f, h in sorted(others))
    manifest = obj({"schema": MANIFEST_SCHEMA, "modelVersion": __version__, "formatVersion": FORMAT_VERSION, "cases": cases, "files": files})
    return layout(manifest, ((), ("cases",), ("files",)))


def example_text(case_id: str = EXAMPLE_CASE) -> str:
    """Return a worked example of spec/vectors.md: the text of case ``case_id`` (``EXAMPLE_CASE`` or ``EXAMPLE_FILE_CASE``)."""
    return case_text(next(c for c in catalogue() if c.id == case_id))


def _links_in(out: Path) -> Path | None:
    """Return a symbolic link inside ``out`` (never followed), or None: writing through one could land outside."""
    for root, dirs, files in os.walk(out):
        for name in dirs + files:
            if (Path(root) / name).is_symlink():
                return Path(root) / name
    return None


def _clear(out: Path, remove: bool = True) -> str | None:
    """Remove what a previous generation wrote to ``out`` (only look, unless ``remove``); return why ``out`` cannot be used, or None.

    Nothing is removed unless every file the old manifest names is a regular file (or gone) inside
    ``out`` and ``out`` holds no symbolic link.
    """
    if not out.exists():
        return None
    if not out.is_dir():
        return f"{out} is not a directory"
    link = _links_in(out)
    if link is not None:
        return f"{out} holds a symbolic link, {link}: vectors are never written through one"
    manifest = out / "manifest.json"
    if not manifest.is_file():
        return None if not any(out.iterdir()) else f"{out} is not empty and holds no manifest.json of earlier vectors"
    try:
        old = json.loads(manifest.read_text(encoding="utf-8"))
        files = [out / entry["file"] for entry in old["cases"] + old.get("files", [])]  # a manifest before the README had no files
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"{manifest} is not a vectors manifest ({error})"
    for path in files:
        if out.resolve() not in path.resolve().parents:
            return f"{manifest} names a file outside {out}: {path}"
        if path.resolve() == manifest.resolve() or (path.exists() and not path.is_file()):
            return f"{manifest} names {path}, which is not a case file of earlier vectors"
    if not remove:
        return None
    for path in files:
        path.unlink(missing_ok=True)
        for parent in path.parents:
            if parent == out or not parent.is_dir() or any(parent.iterdir()):
                break
            parent.rmdir()
    manifest.unlink()
    return None


def bundle_name() -> str:
    """Return the name of the vectors' tarball and of the folder it holds them in, without suffix: versioned by the model."""
    return f"session-prefix-vectors-{__version__}"


def bundle_path(given: Path) -> Path:
    """Return the tarball ``--bundle`` names: the file given, or in a directory given, ``<bundle_name()>.tar.gz``."""
    return given / f"{bundle_name()}.tar.gz" if given.is_dir() else given


def _unusable_bundle(target: Path, out: Path) -> str | None:
    """Return why the tarball cannot be written to ``target``, or None (checked before the seconds of work)."""
    if out.resolve() in target.resolve().parents:  # it would pack itself, half written
        return f"{target} is inside {out}, which it packs"
    if target.is_dir():
        return f"{target} is a directory, not a file to write the bundle to"
    if not target.parent.is_dir():
        return f"{target.parent}: no such directory for the bundle"
    return None


def generate(out: Path, bundle: Path | None = None, shown: Path | None = None) -> int:
    """Write the vectors to ``out`` (and pack them to ``bundle``); print a one-line summary and return 0, or one line on stderr and non-zero.

    ``shown`` is where the summary says the vectors went (``bundle`` when ``out`` is scratch).
    """
    created: list[Path] = []  # what a failed run must leave as it found it
    try:  # an unusable DIR is refused before any work: one that cannot be created too
        refused = None if bundle is None else _unusable_bundle(bundle, out)
        if refused is None:
            created = [p for p in (out, *out.parents) if not p.exists()]
            refused = _clear(out, remove=False)
        if refused is None:
            out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        refused = f"{error.filename or out}: {error.strerror or error}"
    if refused is not None:
        print(f"prefix-model vectors: {refused}", file=sys.stderr)
        return 2
    cases = catalogue()
    try:
        problems = audit(cases, declared(SPEC_PATH.read_text(encoding="utf-8")), pending_cases())
    except ValueError as error:  # a declaration the audit cannot read
        problems = [str(error)]
    failed = [] if problems else recheck(cases)
    if problems or failed:
        for directory in created:  # innermost first: each is still empty
            directory.rmdir()
        why = f"coverage audit failed: {'; '.join(problems)}" if problems else f"{len(failed)} case(s) fail the re-check: {failed[0]}"
        print(f"prefix-model vectors: {why}", file=sys.stderr)
        return 1
    try:
        refused = _clear(out)
        if refused is not None:
            print(f"prefix-model vectors: {refused}", file=sys.stderr)
            return 2
        _write(out, cases)
        if bundle is not None:
            _pack(out, bundle)
    except OSError as error:
        print(f"prefix-model vectors: {error.filename or out}: {error.strerror or error}", file=sys.stderr)
        return 2
    valid = sum(1 for c in cases if isinstance(c, Scenario) or c.valid)
    pending = f"; {len(PENDING_MODEL_BUGS)} held back pending a model fix" if PENDING_MODEL_BUGS else ""
    print(f"prefix-model vectors: {len(cases)} cases ({valid} valid, {len(cases) - valid} invalid) written to {shown or out}{pending}")
    return 0


def _pack(out: Path, bundle: Path) -> None:
    """Pack ``out`` to ``bundle`` by way of a file beside it: a run cut short leaves no truncated tarball under its name."""
    partial = bundle.with_name(bundle.name + ".part")
    try:
        write_tarball(out, partial, bundle_name())
        os.replace(partial, bundle)
    finally:
        partial.unlink(missing_ok=True)


def _write(out: Path, cases: Sequence[Case]) -> None:
    """Write every case file and the README and specification, then the manifest last: a run cut short leaves no manifest naming a missing file."""
    entries, others = [], []
    for case in cases:
        data = case_text(case).encode("utf-8")
        path = out / case.id / "case.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entries.append((case.id, f"{case.id}/case.json", hashlib.sha256(data).hexdigest()))
    for name, data in bundle_files(cases):
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        others.append((name, hashlib.sha256(data).hexdigest()))
    (out / "manifest.json").write_bytes(manifest_text(entries, others).encode("utf-8"))


def run(out: Path | None, bundle: Path | None) -> int:
    """Write the vectors to ``out``, or pack them to ``bundle`` (a file, or a directory to name it in), or both; return the exit status."""
    bundle = None if bundle is None else bundle_path(bundle)
    if out is not None:
        return generate(out, bundle)
    assert bundle is not None
    with tempfile.TemporaryDirectory(prefix="prefix-model-vectors-") as scratch:
        return generate(Path(scratch) / bundle_name(), bundle, shown=bundle)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m prefix_model.edge.vectors.generate --out DIR [--bundle FILE]``."""
    parser = argparse.ArgumentParser(prog="prefix-model vectors", description="Write the conformance vectors (spec/vectors.md) to DIR.")
    parser.add_argument("--out", type=Path, metavar="DIR", help="the directory to write (created if absent)")
    parser.add_argument("--bundle", type=Path, metavar="FILE", help="also pack them as a reproducible .tar.gz (a directory: named by the version)")
    args = parser.parse_args(argv)
    if args.out is None and args.bundle is None:
        parser.error("one of --out DIR and --bundle FILE is required")
    return run(args.out, args.bundle)


if __name__ == "__main__":
    sys.exit(main())
