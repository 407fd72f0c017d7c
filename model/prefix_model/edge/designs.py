"""Spec §13 (edge) — ``--design FILE.py:NAME``: a reviewer's own design, loaded from a file and judged.

A design is a ``Semantics`` (designs.md of the installed specification lists its choice points): a subclass, instantiated
with no arguments, or an instance. ``variants``, ``explore``, ``review`` and ``adapter`` take it
where they take a catalogue design, so it meets the same properties, witness run, exploration and
counterexamples. Loading runs the user's file (it is Python): every way it can go wrong — no such
file, a syntax error, an exception while it runs, no such name, a name that is not a design — is
one line naming the file (and the line), which the CLI prints with exit status 2.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from icontract import ViolationError

from prefix_model.loop.semantics import CHOICE_POINTS, HARNESS, Semantics
from prefix_model.loop.variants import Variant, Verdict, judge

__all__ = ["DesignError", "LoadedDesign", "load_design", "blamed", "warn_strays", "judge_design", "verdict_json", "verdict_text", "DESIGN_HELP"]

DESIGN_HELP = "a design of your own: NAME, a Semantics subclass or instance in FILE.py (designs.md of the installed specification, see `prefix-model docs`, lists what it may override)"


class DesignError(Exception):
    """A design that cannot be loaded or run: one line, naming the file (and line), for stderr and exit 2."""


@dataclass(frozen=True, slots=True)
class LoadedDesign:
    """A design loaded from a file: its name (``NAME``), the file, what it says of itself, and its semantics."""

    name: str
    path: Path
    summary: str
    semantics: Semantics
    strays: tuple[str, ...]  # public names it defines that are no choice point: the loop never calls them

    @property
    def label(self) -> str:
        """How reports name it: ``NAME (FILE)``."""
        return f"{self.name} ({self.path})"


def _split(argument: str) -> tuple[Path, str]:
    path, colon, name = argument.rpartition(":")
    if not colon or not path or not name.isidentifier():
        raise DesignError(f"--design {argument!r}: write FILE.py:NAME (the file, a colon, a Semantics subclass or instance it defines)")
    return Path(path), name


def _line_in(path: Path, error: BaseException) -> str:
    """``FILE:LINE`` of the innermost frame of ``error`` in ``path`` (just ``FILE`` when none is)."""
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if _same(frame.filename, path)]
    return f"{path}:{lines[-1]}" if lines else str(path)


def _same(filename: str, path: Path) -> bool:
    return Path(filename).resolve() == path.resolve()


def _module_of(path: Path) -> object:
    if not path.exists():
        raise DesignError(f"{path}: no such file")
    if not path.is_file():
        raise DesignError(f"{path}: not a file")
    # A name of its own, in sys.modules while it runs: a dataclass or a pickle in the file looks its module up there.
    module_name = "prefix_model_design_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=importlib.machinery.SourceFileLoader(module_name, str(path)))
    assert spec is not None and spec.loader is not None  # an explicit loader always gives a spec
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:  # the file's own syntax (or an undecodable byte): its line, as Python reports it
        where = f"{path}:{error.lineno}" if error.lineno is not None and _same(error.filename or str(path), path) else _line_in(path, error)
        raise DesignError(f"{where}: syntax error: {error.msg}") from None
    except OSError as error:
        raise DesignError(f"{path}: {error.strerror or error}") from None
    except Exception as error:  # the file ran and raised: where, and what
        raise DesignError(f"{_line_in(path, error)}: {type(error).__name__}: {_one_line(error)}") from None
    return module


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"


def _strays(semantics: Semantics) -> tuple[str, ...]:
    """The public names the design's own classes define that ``Semantics`` does not offer (a misspelt override, most likely)."""
    own = [cls for cls in type(semantics).__mro__ if issubclass(cls, Semantics) and cls is not Semantics]
    return tuple(sorted({n for cls in own for n in vars(cls) if not n.startswith("_") and n not in CHOICE_POINTS and n != "name"}))


def load_design(argument: str) -> LoadedDesign:
    """Return the design ``FILE.py:NAME`` names.

    :raises DesignError: the file is missing or does not run, ``NAME`` is not in it, or it is not a design
    """
    path, name = _split(argument)
    module = _module_of(path)
    if not hasattr(module, name):
        offered = sorted(n for n, v in vars(module).items() if not n.startswith("_") and _is_design(v) and v is not Semantics)
        raise DesignError(f"{path}: no name {name!r}" + (f" (its designs: {', '.join(offered)})" if offered else " (it defines no Semantics subclass)"))
    value = getattr(module, name)
    if isinstance(value, type) and issubclass(value, Semantics):
        try:
            semantics = value()
        except Exception as error:
            raise DesignError(f"{_line_in(path, error)}: {name}() failed: {type(error).__name__}: {_one_line(error)} "
                              "(a class is instantiated with no arguments; name an instance to pass some)") from None  # fmt: skip
    elif isinstance(value, Semantics):
        semantics = value
    else:
        kind = f"the class {value.__name__}" if isinstance(value, type) else f"a value of type {type(value).__name__}"
        raise DesignError(f"{path}: {name} is {kind}, not a Semantics subclass or instance (prefix_model.loop.semantics.Semantics)")
    if semantics.name == HARNESS.name:  # the harness's own name would make the design's reports read as the harness's
        semantics.name = name
    doc = (type(semantics).__doc__ or "").strip() if type(semantics).__doc__ != Semantics.__doc__ else ""
    summary = doc.splitlines()[0] if doc else f"a design of {path.name}"
    return LoadedDesign(name, path, summary, semantics, _strays(semantics))


def _is_design(value: object) -> bool:
    return isinstance(value, Semantics) or (isinstance(value, type) and issubclass(value, Semantics))


@contextmanager
def blamed(design: LoadedDesign) -> Iterator[None]:
    """Turn an exception the design's own code raises while it runs into a ``DesignError`` at its line.

    An exception from anywhere else is the model's and goes on as it is; so does a contract of the
    model that the design broke (the caller reports that as a rejection).
    """
    try:
        yield
    except DesignError:
        raise
    except Exception as error:
        frames = [frame for frame in traceback.extract_tb(error.__traceback__) if _same(frame.filename, design.path)]
        if not frames:
            raise
        raise DesignError(f"{design.path}:{frames[-1].lineno}: {design.name} raised {type(error).__name__}: {_one_line(error)}") from None


def warn_strays(design: LoadedDesign) -> None:
    """Print on stderr the names the design defines that no choice point is (a misspelt override changes nothing)."""
    if design.strays:
        print(f"prefix-model: note: {design.name} defines {', '.join(design.strays)}: no choice point of Semantics "
              "(designs.md of the installed specification lists them), so the loop calls them only through one it overrides", file=sys.stderr)  # fmt: skip


def judge_design(design: LoadedDesign) -> Verdict:
    """Return the verdict of the catalogue's witness run on ``design`` (``judge``, with no IDs expected).

    A contract of the model that the design's run breaks rejects it too, by the IDs the contract names.
    """
    with blamed(design):
        try:
            return judge(Variant(design.name, design.summary, design.semantics, ()))
        except ViolationError as broken:
            first = _one_line(broken)
            return Verdict(design.name, tuple(sorted(set(re.findall(r"\b[A-Z]+-\d+\b", first)))), (), f"a contract of the model: {first}")


def verdict_json(design: LoadedDesign, verdict: Verdict) -> dict[str, object]:
    """Return ``variants --design --json``'s record: the catalogue's fields, with the file and no IDs expected."""
    rejected = bool(verdict.first)
    return {"design": design.name, "file": str(design.path), "summary": design.summary, "rejected": rejected,
            "rejectedBy": list(verdict.rejected_by), "first": verdict.first}  # fmt: skip


def verdict_text(design: LoadedDesign, verdict: Verdict) -> str:
    """Return ``variants --design``'s line for a person."""
    if not verdict.first:
        return f"{design.label}: keeps every property on the witness run ({design.summary}); `prefix-model explore --design` searches further"
    return f"{design.label}: rejected by {', '.join(verdict.rejected_by) or 'a contract of the model'} on the witness run\n  first: {verdict.first}"
