"""Results kept per object, for the values that successive worlds share.

The machines and the explorer judge every world they reach, and a world shares almost all of its
sessions, events, messages and requests with the world before it. A ``Memo`` keeps what a pure
function computed from some objects, keyed by their identity: an entry holds the objects
themselves, so none of them is freed and its id reused while the entry stands. A cache only: what
it returns is what ``compute`` returned for those very objects, so no verdict depends on it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import wraps
from typing import Generic, ParamSpec, TypeVar

__all__ = ["Memo", "per_object", "per_objects"]

T = TypeVar("T")
V = TypeVar("V")
P = ParamSpec("P")


class Memo(Generic[V]):
    """``compute()``'s result per tuple of objects (by identity) and tag (by equality); at most ``limit`` entries.

    A memo is used through ``get``, ``find`` and ``put``, or through ``of``, never both (their keys differ).
    """

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a memo holds at least one entry")
        # keyed by the objects' ids (and get's tag); each entry holds its objects
        self._entries: dict[int | tuple[Hashable, tuple[int, ...]], tuple[object, V]] = {}
        self._limit = limit

    # no contract: its result is compute()'s for these objects, which only its tests can see (they count the calls)
    def get(self, objects: tuple[object, ...], compute: Callable[[], V], tag: Hashable = None) -> V:
        """Return the result kept for ``objects`` and ``tag``, or ``compute()``'s, kept (all entries dropped when full)."""
        return self._kept(_key(objects, tag), objects, compute)

    # no contract: its result is compute(value)'s, which only its tests can see (they count the calls)
    def of(self, value: T, compute: Callable[[T], V]) -> V:
        """Return the result kept for the one object ``value``, or ``compute(value)``'s, kept (the fast lane of ``get``)."""
        return self._kept(id(value), value, compute, value)

    # no contract: a lookup; what it returns is what ``get`` or ``put`` kept for these very objects
    def find(self, objects: tuple[object, ...], tag: Hashable = None) -> V | None:
        """Return the result kept for ``objects`` and ``tag`` by ``get`` or ``put``, or None."""
        hit = self._entries.get(_key(objects, tag))
        return None if hit is None else hit[1]

    # no contract: it only keeps ``value`` for ``find``
    def put(self, objects: tuple[object, ...], value: V, tag: Hashable = None) -> None:
        """Keep ``value`` for ``objects`` and ``tag`` (all entries dropped when full)."""
        self._keep(_key(objects, tag), objects, value)

    def _kept(self, key: int | tuple[Hashable, tuple[int, ...]], holds: object, compute: Callable[..., V], *args: object) -> V:
        hit = self._entries.get(key)  # the entry holds its objects, so ids that match are those very objects
        if hit is not None:
            return hit[1]
        return self._keep(key, holds, compute(*args))

    def _keep(self, key: int | tuple[Hashable, tuple[int, ...]], holds: object, value: V) -> V:
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[key] = (holds, value)
        return value

    def __len__(self) -> int:
        return len(self._entries)


def _key(objects: tuple[object, ...], tag: Hashable) -> tuple[Hashable, tuple[int, ...]]:
    return tag, tuple(map(id, objects))


# no contract: what the decorated function returns is what ``compute`` returned for that very object
def per_object(limit: int) -> Callable[[Callable[[T], V]], Callable[[T], V]]:
    """Keep a pure function's result per argument, by identity (a ``Memo`` of ``limit`` entries, used through ``of``)."""

    def decorate(compute: Callable[[T], V]) -> Callable[[T], V]:
        memo: Memo[V] = Memo(limit)

        @wraps(compute)
        def kept(value: T) -> V:
            return memo.of(value, compute)

        return kept

    return decorate


# no contract: what the decorated function returns is what ``compute`` returned for arguments ``key`` maps to those very objects
def per_objects(limit: int, key: Callable[P, tuple[object, ...]]) -> Callable[[Callable[P, V]], Callable[P, V]]:
    """Keep a pure function's result per the objects ``key`` picks from its arguments, by identity (a ``Memo`` of ``limit`` entries).

    ``key`` must pick every object the result depends on: arguments that differ only elsewhere share an entry.
    """

    def decorate(compute: Callable[P, V]) -> Callable[P, V]:
        memo: Memo[V] = Memo(limit)

        @wraps(compute)
        def kept(*args: P.args, **kwargs: P.kwargs) -> V:
            return memo.get(key(*args, **kwargs), lambda: compute(*args, **kwargs))

        return kept

    return decorate
