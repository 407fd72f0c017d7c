"""Planted bug: positional replace keeps the range's END node (the B1 bug of toolchain.md §2).

Core kernel: ``surface.splice_nodes``. Expected refutation: SURF-6 (the range collapses to one node).
"""

from __future__ import annotations

from prefix_model.core.surface import splice_nodes as core_splice_nodes

from proofs.bugs_detected import under_contracts_of

CAUGHT_BY = "SURF-6"


@under_contracts_of(core_splice_nodes)
def splice_nodes(nodes: tuple[int, ...], i: int, j: int, seq: int) -> tuple[int, ...]:
    """BUG: ``nodes[j:]`` instead of ``nodes[j + 1:]`` keeps the end node after the replacement."""
    return nodes[:i] + (seq,) + nodes[j:]
