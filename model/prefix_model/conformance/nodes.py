"""Spec §3 (SURF-5, SURF-6) — the conformance fold's live surface nodes: a list that keeps each node's position by seq.

The fold's surface arm (``conformance.live``) asks the core's ``surface_step`` over these nodes,
as the spec's fold asks it over a tuple; ``replacement_range`` then finds a node without a scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from prefix_model.core.contracts import ENABLED, ensure, require

__all__ = ["SurfaceNodes"]

_END = 2**63 - 1  # ``index``'s default stop: past any list's end, as list.index's own (sys.maxsize)


def _positions_agree(nodes: SurfaceNodes) -> bool:
    """Whether ``nodes``' positions by seq, when kept, are those of its list."""
    return nodes._at is None or nodes._at == {seq: position for position, seq in enumerate(nodes._seqs)}


class SurfaceNodes(Sequence[int]):
    """The live surface's nodes in order, with each one's position kept by seq: ``replacement_range`` finds a node without a scan.

    A list answers ``in`` and ``index`` by scanning it, so each replacement cost the surface's
    length: a tool/result rewritten every turn made the check quadratic in the surface. Here a
    rewrite costs O(1), and a replacement of k nodes O(k) plus the nodes after it (which the
    list's splice moves anyway). The answers are the list's: a seq that is no int, or one already
    on the surface (a log breaking LOG-2), stops the keeping, and the list's scan answers from then.
    """

    __slots__ = ("_seqs", "_at")

    def __init__(self, nodes: Iterable[int] = ()) -> None:
        self._seqs: list[int] = []
        self._at: dict[int, int] | None = {}
        if isinstance(nodes, SurfaceNodes):  # a fork's copy
            self._seqs, self._at = list(nodes._seqs), None if nodes._at is None else dict(nodes._at)
        else:
            for seq in nodes:
                self.append(seq)

    def __len__(self) -> int:
        return len(self._seqs)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index: int | slice) -> int | list[int]:
        return self._seqs[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._seqs)

    def __contains__(self, seq: object) -> bool:
        return seq in self._seqs if self._at is None or type(seq) is not int else seq in self._at

    @ensure(lambda self, value, result: self._seqs.index(value) == result, "CHK-2: the position list.index gives", enabled=ENABLED)
    def index(self, value: Any, start: int = 0, stop: int = _END) -> int:
        """Return the first position of ``value``, as ``list.index`` does.

        :raises ValueError: when ``value`` is no node (as ``list.index`` raises)
        """
        if self._at is None or type(value) is not int or start != 0 or stop != _END:
            return self._seqs.index(value, start, stop)
        position = self._at.get(value)
        if position is None:
            raise ValueError(f"{value} is not a node")
        return position

    @ensure(lambda self, seq: self._seqs[-1] == seq and _positions_agree(self), "CHK-2: the seq is the last node, its position kept", enabled=ENABLED)
    def append(self, seq: int) -> None:
        """Add ``seq`` as the last node."""
        self._keep(seq, len(self._seqs))
        self._seqs.append(seq)

    @require(lambda self, i, j: 0 <= i <= j < len(self), "SURF-5: start position ≤ end position, both current", enabled=ENABLED)
    @ensure(lambda self, i, seq: self._seqs[i] == seq and _positions_agree(self), "SURF-6: the seq takes the range's position, the positions kept", enabled=ENABLED)
    def splice(self, i: int, j: int, seq: int) -> None:
        """Replace the nodes at positions ``i..j`` (inclusive) by ``seq``, in place (``splice_nodes`` on a tuple)."""
        seqs, at = self._seqs, self._at
        if at is not None:
            for old in seqs[i : j + 1]:
                del at[old]
        seqs[i : j + 1] = [seq]
        self._keep(seq, i)
        if self._at is not None and j > i:  # the nodes after the range moved back
            for position in range(i + 1, len(seqs)):
                self._at[seqs[position]] = position

    def _keep(self, seq: int, position: int) -> None:
        at = self._at
        if at is None:
            return
        if type(seq) is not int or seq in at:
            self._at = None
        else:
            at[seq] = position
