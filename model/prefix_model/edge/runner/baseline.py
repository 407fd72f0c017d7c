"""A baseline: what an implementation knowingly gets wrong, each with its reason, so a suite can be adopted gradually.

One JSON file serves ``conform`` and ``fuzz``::

    {"cases": [{"id": "compaction/usage-pressure", "reason": "..."}],
     "divergences": [{"signature": "Dispatch: replies differ at /sent/*/request", "reason": "...", "script": [...]}]}

A listed case that fails, or a listed divergence that a campaign shows, is reported as known and
does not fail the run; a listed one that no longer fails (a case that passes, a divergence no script
shows, its own script replayed when it has one) is *stale* and fails the run, so a fixed bug
cannot hide a later regression behind its old entry.

A divergence belongs to the oracle that saw it (``"oracle": "events"``, the default, or
``"requests"``): ``fuzz --compare requests`` never sees an event, so an entry naming a difference
in ``/appended`` would read as stale there though nothing was fixed. A run judges only the entries
of its own oracle and counts the others as out of scope.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefix_model.edge.runner.consumer import read_bounded

__all__ = ["ORACLES", "oracle_of", "InputUnreadable", "read_json_file", "BaselineError", "KnownCase", "KnownDivergence", "Baseline", "read_baseline", "is_script"]


ORACLES = ("events", "requests")  # what a divergence entry may name as its oracle; "events" when it names none


def oracle_of(compare: str) -> str:
    """The baseline oracle of a ``--compare`` value: ``all`` compares events (and requests), ``requests`` requests alone."""
    return "requests" if compare == "requests" else "events"


class InputUnreadable(ValueError):
    """A JSON input file (a baseline, a saved script) that cannot be read: the path, where, and why."""


class BaselineError(InputUnreadable):
    """A baseline file that cannot be read: the path, where, and why."""


def read_json_file(path: Path, what: str) -> Any:
    """Return the JSON value of a file a user named: a regular file within the case size limit, else ``InputUnreadable``."""
    try:
        return json.loads(read_bounded(path).decode("utf-8"))
    except OSError as error:
        raise InputUnreadable(f"{path}: {error.strerror or error}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise InputUnreadable(f"{path}: not a {what} (not JSON: {error})") from None


@dataclass(frozen=True, slots=True)
class KnownCase:
    """A vector case an implementation knowingly fails."""

    id: str
    reason: str


@dataclass(frozen=True, slots=True)
class KnownDivergence:
    """A divergence an implementation knowingly shows, and optionally the script that shows it."""

    signature: str
    reason: str
    script: tuple[dict[str, Any], ...] | None = None
    oracle: str = "events"  # the oracle that shows it (ORACLES): a run by the other neither matches it nor calls it stale


@dataclass(frozen=True, slots=True)
class Baseline:
    """The known cases and divergences of one implementation."""

    cases: tuple[KnownCase, ...] = ()
    divergences: tuple[KnownDivergence, ...] = ()

    def case_reason(self, ident: str) -> str | None:
        """The reason case ``ident`` is known to fail, or None."""
        return next((k.reason for k in self.cases if k.id == ident), None)


def is_script(value: object) -> bool:
    """Whether ``value`` is a script: a non-empty JSON array of action objects."""
    return isinstance(value, list) and bool(value) and all(isinstance(a, dict) and isinstance(a.get("action"), str) for a in value)


def read_baseline(path: Path) -> Baseline:
    """Read a baseline file; raise ``BaselineError`` with the path and the entry at fault."""
    try:
        value = read_json_file(path, "baseline")
    except InputUnreadable as error:
        raise BaselineError(str(error)) from None
    if not isinstance(value, dict) or not set(value) <= {"cases", "divergences"}:
        raise BaselineError(f"{path}: a baseline is an object with cases and/or divergences, nothing else")
    cases, divergences = value.get("cases", []), value.get("divergences", [])
    if not isinstance(cases, list) or not isinstance(divergences, list):
        raise BaselineError(f"{path}: cases and divergences are arrays")
    return Baseline(_known_cases(path, cases), _known_divergences(path, divergences))


def _known_cases(path: Path, cases: list[Any]) -> tuple[KnownCase, ...]:
    known_cases = []
    for n, entry in enumerate(cases):
        if not (isinstance(entry, dict) and isinstance(entry.get("id"), str) and isinstance(entry.get("reason"), str)):
            raise BaselineError(f"{path}: /cases/{n}: an entry is {{id: string, reason: string}}")
        known_cases.append(KnownCase(entry["id"], entry["reason"]))
    return tuple(known_cases)


def _known_divergences(path: Path, divergences: list[Any]) -> tuple[KnownDivergence, ...]:
    known = []
    for n, entry in enumerate(divergences):
        script = entry.get("script") if isinstance(entry, dict) else None
        oracle = entry.get("oracle", "events") if isinstance(entry, dict) else None
        if not (isinstance(entry, dict) and isinstance(entry.get("signature"), str) and isinstance(entry.get("reason"), str)) or not (
            script is None or is_script(script)
        ):
            raise BaselineError(f"{path}: /divergences/{n}: an entry is {{signature: string, reason: string, script?: [action object], oracle?: string}}")
        if oracle not in ORACLES:
            raise BaselineError(f"{path}: /divergences/{n}/oracle: one of {', '.join(map(repr, ORACLES))} (the oracle that shows it), not {oracle!r}")
        known.append(KnownDivergence(entry["signature"], entry["reason"], None if script is None else tuple(script), str(oracle)))
    return tuple(known)
