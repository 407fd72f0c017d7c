"""Shrinking a diverging script with the implementation as the oracle.

``shrink`` keeps a script that still diverges with the same signature (``Difference.signature``,
its cause included, so the script cannot drift to another bug at the same pointer) and makes it
smaller in three passes, repeated until none helps or the budget is spent: cut the actions after
the divergence; drop runs of actions (delta debugging: halves, then quarters, down
to single actions — a run that starts a turn goes with the turn); then simplify what is left, one
JSON value at a time (a string to ``"x"``, an array to fewer members, a number to 0, a ``true`` to
``false``, an optional field to ``null``), keeping only edits the model still reads as an action.
No edit changes a value's type or empties a string: a shrink stays in the domain the generator
drew from, so the divergence it ends with is the one it started with, not one of a degenerate input. Every attempt is judged afresh: the model's replies recomputed, the implementation reset
and replayed. Each attempt costs one replay, so the budget counts attempts.

The simplified values are of the action language's domain, not always of the generator's: ``"x"`` for a
provider or a source kind is a value the model takes and a real implementation may not route (the
deepseek-harness adapter serves the ``mock`` provider only). ``simplify=False`` (``fuzz --keep-arguments``)
runs the first two passes only, so every action of the result is one of the script's as drawn: the shrink
to adopt as a vector that the reference implementation must pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prefix_model.core.json_values import freeze
from prefix_model.edge.fuzz.lockstep import Difference
from prefix_model.vectors.codec import CodecError, action_from_json
from prefix_model.edge.runner.consumer import JsonObject

__all__ = ["Oracle", "Shrunk", "shrink"]

# Names are kept as drawn: a tool call renamed "x" calls a tool the step lacks, two sessions renamed "x" are one.
_NAMES = frozenset({"action", "name", "id", "callId", "sessionId", "sourceId", "childId", "agent", "listener"})

Oracle = Callable[[Sequence[JsonObject]], Difference | None]  # replay a script through both sides: its first difference


@dataclass(frozen=True, slots=True)
class Shrunk:
    """A shrink's result: the smallest script found, its difference, and what it took."""

    actions: tuple[JsonObject, ...]
    difference: Difference
    attempts: int
    exhausted: bool  # the budget ran out before a pass changed nothing


class _Search:
    def __init__(self, oracle: Oracle, signature: str, budget: int) -> None:
        self.oracle, self.signature, self.budget, self.attempts = oracle, signature, budget, 0

    def holds(self, actions: Sequence[JsonObject]) -> Difference | None:
        """The candidate's difference when it keeps the signature (None when it does not, or the budget is spent)."""
        if self.attempts >= self.budget or not actions:
            return None
        self.attempts += 1
        found = self.oracle(actions)
        return found if found is not None and found.signature == self.signature else None


def _cut(actions: list[JsonObject], difference: Difference) -> list[JsonObject]:
    return actions[: difference.index + 1]


_CREATES = frozenset({"Create", "ForkDrive", "Resume"})  # each makes the next instance (instances are numbered by position)


def _without(actions: list[JsonObject], start: int, size: int) -> list[JsonObject]:
    """``actions`` less the run [start, start + size), the later instances renumbered: a dropped Create, ForkDrive or
    Resume takes its instance with it (and every action addressed to it), and the ones made after it move down."""
    made = 0
    gone: set[int] = set()
    for index, action in enumerate(actions[: start + size]):
        if action.get("action") in _CREATES:
            if index >= start:
                gone.add(made)
            made += 1
    kept = actions[:start] + actions[start + size :]
    if not gone:
        return kept

    def moved(instance: int) -> int:
        return instance - sum(1 for g in gone if g < instance)

    return [
        a | {"instance": moved(a["instance"])} if isinstance(a.get("instance"), int) else a
        for a in kept
        if not (isinstance(a.get("instance"), int) and a["instance"] in gone)
    ]


def _drop_runs(search: _Search, actions: list[JsonObject], difference: Difference) -> tuple[list[JsonObject], Difference]:
    """Delta debugging over runs of actions: try removing each run (the later instances renumbered, then as it stands),
    halving the run length down to one."""
    size = max(1, len(actions) // 2)
    while size >= 1:
        start = 0
        while start < len(actions):
            renumbered = _without(actions, start, size)
            found = search.holds(renumbered)
            candidate = renumbered
            if found is None and renumbered != actions[:start] + actions[start + size :]:
                candidate = actions[:start] + actions[start + size :]
                found = search.holds(candidate)
            if found is not None:
                actions, difference = _cut(candidate, found), found
            else:
                start += size
        size //= 2
    return actions, difference


def _simpler(value: Any) -> Iterator[Any]:
    """Simpler versions of one JSON value, most drastic first, never of another type and never an empty string
    (an empty id or text is a domain of its own, where a divergence may be another one than the one shrunk)."""
    if isinstance(value, str):
        if len(value) > 1:
            yield "x"
    elif isinstance(value, bool):
        if value:
            yield False
    elif isinstance(value, (int, float)):
        if value != 0:
            yield 0
    elif isinstance(value, list):
        for index in range(len(value)):
            yield value[:index] + value[index + 1 :]


def _edits(value: Any, path: tuple[object, ...] = ()) -> Iterator[tuple[tuple[object, ...], Any]]:
    """Every (path, simpler value) of an action, outermost first: a field to null (kept only where the action's type
    allows it), then simpler forms, then inside — where a value is free JSON (a message, a chunk, a tool), only simpler
    forms of the same type, never null."""
    if len(path) == 1 and value is not None:
        yield path, None
    for simpler in _simpler(value):
        yield path, simpler
    if isinstance(value, dict):
        for key, member in value.items():
            if key not in _NAMES:
                yield from _edits(member, path + (key,))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield from _edits(member, path + (index,))


def _set(value: Any, path: tuple[object, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_set(v, rest, new) if k == head else v) for k, v in value.items()}
    assert isinstance(value, list) and isinstance(head, int)
    return [(_set(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _reads(action: JsonObject) -> bool:
    try:
        action_from_json(freeze(action))
    except (CodecError, ValueError, TypeError):
        return False
    return True


def _simplify(search: _Search, actions: list[JsonObject], difference: Difference) -> tuple[list[JsonObject], Difference]:
    index = 0
    while index < len(actions):
        progressed = True
        while progressed:
            progressed = False
            for path, new in _edits(actions[index]):
                edited = _set(actions[index], path, new)
                if not _reads(edited):
                    continue
                found = search.holds(actions[:index] + [edited] + actions[index + 1 :])
                if found is not None:
                    actions = _cut(actions[:index] + [edited] + actions[index + 1 :], found)
                    difference, progressed = found, True
                    break
            if index >= len(actions):
                break
        index += 1
    return actions, difference


def shrink(actions: Sequence[JsonObject], difference: Difference, oracle: Oracle, budget: int = 2000, simplify: bool = True) -> Shrunk:
    """Return the smallest script found that still shows ``difference``'s signature, within ``budget`` replays
    (with ``simplify`` false, by dropping actions only: each one kept is as drawn)."""
    search = _Search(oracle, difference.signature, budget)
    current, found = _cut(list(actions), difference), difference
    while True:
        before = (len(current), _weight(current))
        current, found = _drop_runs(search, current, found)
        if simplify:
            current, found = _simplify(search, current, found)
        if (len(current), _weight(current)) == before or search.attempts >= budget:
            break
    return Shrunk(tuple(current), found, search.attempts, search.attempts >= budget)


def _weight(actions: Sequence[JsonObject]) -> int:
    """A size that every simplification lowers: the JSON values' count and the strings' lengths."""

    def size(value: Any) -> int:
        if isinstance(value, dict):
            return 1 + sum(size(v) for v in value.values())
        if isinstance(value, list):
            return 1 + sum(size(v) for v in value)
        return 1 + (len(value) if isinstance(value, str) else 0) + (value is not None and value is not False and value != 0)

    return sum(size(a) for a in actions)
