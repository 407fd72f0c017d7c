"""What makes a vectors directory stand alone, and its reproducible tarball. The edge.

An implementer handed only the directory (or its tarball) must be able to read what it is and run
it without the package: so beside the cases and the manifest it holds

- ``README.md``, made from the template ``README.bundle.md`` of this package (the counts, the
  versions, the schemas' names and the adapter protocol's transcript filled in), and
- ``spec/``: the package's specification (SPEC.md, formats.md, vectors.md) and every JSON Schema,
  byte for byte, so that every ``schema`` member (``spec/schema/…``, relative to the directory)
  and every "see spec/vectors.md §N" resolves inside it.

``write_tarball`` packs a directory as a ``.tar.gz`` that is the same bytes from the same files:
entries sorted, fixed mtimes, owner 0, fixed modes, a gzip header without name or time.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from collections.abc import Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template

from typing import TYPE_CHECKING

from prefix_model import __version__
from prefix_model.vectors import FORMAT_VERSION

if TYPE_CHECKING:  # `prefix-model docs` imports this module, and needs neither the catalogue nor the loop under it
    from prefix_model.vectors.cases import Case

__all__ = ["DOCS", "README", "TRANSCRIPT_MARK", "spec_files", "installed_docs", "transcript", "readme_text", "bundle_files", "write_tarball"]

DOCS = "spec"  # where in a vectors directory the specification and its schemas are copied
README = "README.md"
# Package data, as pyproject.toml ships it: the same files from a wheel and from a checkout.
_SPEC: Traversable = resources.files("prefix_model") / "spec"
_TEMPLATE: Traversable = resources.files("prefix_model.edge.vectors") / "README.bundle.md"
# spec/vectors.md §10's transcript, which tests/edge/test_conform.py replays through the model's adapter byte for byte.
TRANSCRIPT_MARK = "<!-- protocol-transcript -->\n```\n"
_MTIME = 0  # every entry's time, so the tarball does not depend on when it was made


def spec_files() -> list[tuple[str, bytes]]:
    """Return the package's specification as (path in a vectors directory, bytes), sorted: ``spec/*.md``, ``spec/schema/*.json``.

    The same globs as pyproject.toml's package data, so an editable install copies what a wheel holds.
    """
    found = [(f"{DOCS}/{f.name}", f.read_bytes()) for f in _SPEC.iterdir() if f.is_file() and f.name.endswith(".md")]
    found += [(f"{DOCS}/schema/{f.name}", f.read_bytes()) for f in (_SPEC / "schema").iterdir() if f.is_file() and f.name.endswith(".json")]
    return sorted(found)


def _title(name: str, data: bytes) -> str:
    """Return a specification file's title: a Markdown file's first heading, a schema's ``title``."""
    if name.endswith(".json"):
        return str(json.loads(data).get("title", ""))
    return data.decode("utf-8").partition("\n")[0].lstrip("# ")


def installed_docs() -> str:
    """Return what ``prefix-model docs`` prints: the absolute path and title of every file of the installed specification."""
    root = Path(str(_SPEC))  # a folder on disk for a wheel and an editable install alike
    found = sorted(spec_files(), key=lambda file: (file[0].endswith(".json"), file[0]))  # the documents, then their schemas
    width = max(len(str(root / name.partition("/")[2])) for name, _ in found)
    lines = [f"The specification of session-prefix-model {__version__}, installed in {root} (the files --help names):"]
    lines += [f"  {str(root / name.partition('/')[2]):{width}}  {_title(name, data)}" for name, data in found]
    lines.append("`prefix-model vectors --out DIR` copies them, with the vectors and a README, into DIR/spec/.")
    return "\n".join(lines)


def transcript(vectors_md: str) -> str:
    """Return the adapter protocol's transcript of spec/vectors.md §10 (its lines, each ending in a newline)."""
    start = vectors_md.index(TRANSCRIPT_MARK) + len(TRANSCRIPT_MARK)
    return vectors_md[start : vectors_md.index("```", start)]


def readme_text(cases: Sequence[Case], docs: Sequence[tuple[str, bytes]]) -> str:
    """Return the directory's README: the package's template with this catalogue's counts and ``docs``' schemas and transcript."""
    from prefix_model.vectors.scenarios import Scenario

    kinds = ["scenario" if isinstance(c, Scenario) else "file" if c.file is not None else "log" for c in cases]
    valid = [isinstance(c, Scenario) or c.valid for c in cases]
    texts = dict(docs)
    schemas = [name.rsplit("/", 1)[1] for name in texts if name.startswith(f"{DOCS}/schema/")]
    fields = {
        "model_version": __version__,
        "format_version": str(FORMAT_VERSION),
        "cases": str(len(cases)),
        "scenarios": str(kinds.count("scenario")),
        "logs": str(kinds.count("log")),
        "logs_valid": str(sum(1 for k, v in zip(kinds, valid) if k == "log" and v)),
        "files": str(kinds.count("file")),
        "files_valid": str(sum(1 for k, v in zip(kinds, valid) if k == "file" and v)),
        "schemas": ", ".join(f"`{name}`" for name in schemas),
        "transcript": transcript(texts[f"{DOCS}/vectors.md"].decode("utf-8")),
    }
    return Template(_TEMPLATE.read_text(encoding="utf-8")).substitute(fields)


def bundle_files(cases: Sequence[Case]) -> list[tuple[str, bytes]]:
    """Return every file of a vectors directory but the cases and the manifest, as (path, bytes), sorted by path."""
    docs = spec_files()
    return sorted([(README, readme_text(cases, docs).encode("utf-8")), *docs])


def _entry(name: str, size: int, directory: bool) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    info.mode = 0o755 if directory else 0o644
    info.size = 0 if directory else size
    info.mtime = _MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def write_tarball(directory: Path, target: Path, top: str) -> None:
    """Write every file under ``directory`` to ``target`` as a gzip'd tar under the folder ``top``: the same bytes from the same files.

    Only directories and regular files are packed (a vectors directory holds nothing else); entries
    are sorted by path, a folder before what it holds.
    """
    paths = sorted(directory.rglob("*"), key=lambda p: p.relative_to(directory).parts)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_entry(top, 0, directory=True))
        for path in paths:
            name = "/".join((top, *path.relative_to(directory).parts))
            if path.is_dir():
                tar.addfile(_entry(name, 0, directory=True))
            else:
                data = path.read_bytes()
                tar.addfile(_entry(name, len(data), directory=False), io.BytesIO(data))
    with target.open("wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as packed:
        packed.write(buffer.getvalue())

