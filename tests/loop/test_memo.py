"""loop/memo.py — results kept per object: computed once per objects and tag, never served for other objects."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import pytest
from prefix_model.loop.memo import Memo, per_object, per_objects


def counting(memo: Memo[str]) -> tuple[list[object], Callable[..., str]]:
    calls: list[object] = []

    def get(*objects: object, tag: Hashable = None) -> str:
        def compute() -> str:
            calls.append(objects)
            return f"{len(calls)}"

        return memo.get(objects, compute, tag=tag)

    return calls, get


def test_the_same_objects_are_computed_once_and_equal_objects_are_not_the_same() -> None:
    calls, get = counting(Memo(10))
    a, b, equal_to_a = [1], [2], [1]
    assert get(a) == "1" and get(a) == "1" and calls == [(a,)]
    assert get(equal_to_a) == "2"  # equal is not identical: computed for it
    assert get(a, b) == "3" and get(b, a) == "4" and get(a, b) == "3"  # the order of the objects counts
    assert len(calls) == 4


def test_the_tag_is_part_of_the_key_by_equality() -> None:
    calls, get = counting(Memo(10))
    a = object()
    assert get(a, tag=("s1", 0)) == "1" and get(a, tag=("s1", 1)) == "2" and get(a, tag=("s1", 0)) == "1"
    assert get(a) == "3" and len(calls) == 3


def test_a_full_memo_drops_its_entries_and_holds_the_objects_of_those_it_keeps() -> None:
    memo: Memo[str] = Memo(2)
    calls, get = counting(memo)
    a, b, c = object(), object(), object()
    get(a), get(b)
    assert len(memo) == 2
    get(a)
    assert len(calls) == 2  # a hit does not count as an entry
    get(c)
    assert len(memo) == 1 and len(calls) == 3  # full: dropped, then c kept
    get(a)
    assert len(calls) == 4 and len(memo) == 2


def test_an_entry_keeps_its_objects_alive_so_a_freed_id_is_never_served() -> None:
    memo: Memo[str] = Memo(1000)
    seen = {id(memo.get(([n],), lambda n=n: str(n))) for n in range(200)}  # type: ignore[misc]
    # Each list was made for its call and dropped by the caller; the memo still holds it, so no later
    # list reused an id that maps to an earlier entry, and every call computed its own value.
    assert len(memo) == 200 and len(seen) == 200


def test_a_memo_holds_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Memo(0)
    one: Memo[str] = Memo(1)
    assert one.get((), lambda: "x") == "x" and len(one) == 1


def test_of_keeps_one_result_per_object_and_is_bounded_like_get() -> None:
    memo: Memo[int] = Memo(2)
    calls: list[object] = []

    def length(value: list[int]) -> int:
        calls.append(value)
        return len(value)

    a, b, c = [1], [1, 2], [1, 2, 3]
    assert memo.of(a, length) == 1 and memo.of(a, length) == 1 and memo.of(b, length) == 2 and calls == [a, b]
    assert memo.of([1], length) == 1 and len(calls) == 3  # an equal list is another object
    assert len(memo) == 1  # it came to a full memo: dropped, then kept
    memo.of(c, length)
    assert len(memo) == 2 and memo.of(c, length) == 3 and len(calls) == 4


def test_put_keeps_for_find_what_get_would_serve_and_is_bounded_like_get() -> None:
    memo: Memo[str] = Memo(2)
    a, b = [1], [1]
    memo.put((a,), "kept", tag="t")
    assert memo.find((a,), tag="t") == "kept" and memo.get((a,), lambda: "computed", tag="t") == "kept"
    assert memo.find((b,), tag="t") is None and memo.find((a,), tag="u") is None  # other objects, another tag
    memo.put((b,), "second")
    memo.put((a, b), "third")  # full: every entry dropped first
    assert memo.find((a,), tag="t") is None and memo.find((a, b)) == "third" and len(memo) == 1


def test_per_object_keeps_a_functions_result_per_argument_and_is_bounded() -> None:
    calls: list[object] = []

    @per_object(2)
    def length(value: list[int]) -> int:
        """The length."""
        calls.append(value)
        return len(value)

    a, b, c = [1], [1, 2], [1, 2, 3]
    assert length(a) == 1 and length(a) == 1 and length(b) == 2 and calls == [a, b]
    assert length([1]) == 1 and len(calls) == 3  # an equal list is another object
    assert length(c) == 3 and length(a) == 1 and len(calls) == 5  # full at [1]: dropped, so a is computed again
    assert length.__name__ == "length" and length.__doc__ == "The length."


def test_per_objects_keeps_a_result_per_the_objects_its_key_picks() -> None:
    calls: list[tuple[tuple[int, ...], int]] = []

    @per_objects(10, key=lambda values, at: values[:at])
    def total(values: tuple[list[int], ...], at: int) -> int:
        calls.append((tuple(map(id, values)), at))
        return sum(len(v) for v in values[:at])

    a, b, c = [1], [1, 2], [1, 2, 3]
    assert total((a, b, c), 2) == 3 and total((a, b), 2) == 3 and len(calls) == 1  # the same objects before ``at``
    assert total((a, c), 2) == 4 and total((a, [1, 2]), 2) == 3 and len(calls) == 3  # another object, an equal one
    assert total((a, b, c), 3) == 6 and len(calls) == 4
