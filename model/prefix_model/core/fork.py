"""Spec §7 — fork: a child log seeded with a source log's events up to a ``turn/end``.

Mirrors ``SessionStore.fork`` (harness S/index.ts:974-1029): the boundary is an INCLUSIVE seq,
omitted means the source's last event (so an empty source forks to an empty child); the event at
the boundary must be a ``turn/end``. Every event of the slice is copied, headers included; no loop
state is (FORK-6): a child carries no instance, so its first driven request anchors with
``resume`` when the slice holds a header. A taken child id is rejected before anything else.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, Rejection, ensure, require
from prefix_model.core.events import TURN_END, is_safe_seq
from prefix_model.core.log import Log, seed_log

__all__ = ["Lineage", "Fork", "check_fork", "fork"]


@dataclass(frozen=True, slots=True)
class Lineage:
    """The child's storage header fields set by a fork (harness S/index.ts:980-987)."""

    parent_session: str
    seed_length: int
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class Fork:
    """A fork's result: the child's log and its lineage."""

    child: Log
    lineage: Lineage


@ensure(
    lambda result: result is None or result.rule == "FORK-3" or result.rule == "FORK-4" or result.rule == "FORK-7",
    "FORK-3/FORK-4/FORK-7: a fork is refused only by a fork rule",
    enabled=ENABLED,
)
def check_fork(source: Log, boundary: int | None, child_id: str, taken_ids: tuple[str, ...]) -> Rejection | None:
    """Return the rule a fork request breaks, if any (FORK-3, FORK-4, FORK-7), in the harness's order."""
    if any(child_id == taken for taken in taken_ids):
        return Rejection("FORK-7", f"child session id {child_id!r} is already taken")
    if boundary is None and not source.events:
        return None
    at = len(source.events) - 1 if boundary is None else boundary
    if not is_safe_seq(at) or at >= len(source.events) or source.events[at].seq != at:
        return Rejection("FORK-3", f"boundary {boundary!r} does not name an event of the source")
    if source.events[at].type != TURN_END:
        return Rejection("FORK-4", f"boundary seq {at} is a {source.events[at].type}, not a turn/end")
    return None


@require(
    lambda source, boundary, child_id, taken_ids: check_fork(source, boundary, child_id, taken_ids) is None,
    "FORK-3/FORK-4/FORK-7: the boundary names a turn/end of the source and the child id is free",
    enabled=ENABLED,
)
@ensure(
    lambda source, result: result.child.events == source.events[: len(result.child.events)],
    "FORK-1/FORK-5: the child's events are the source's leading events, unchanged",
    enabled=ENABLED,
)
@ensure(
    lambda boundary, result: boundary is None or len(result.child.events) == boundary + 1,
    "FORK-1: the boundary is inclusive",
    enabled=ENABLED,
)
@ensure(lambda result: result.lineage.seed_length == len(result.child.events), "FORK-5: seedLength is the seed's length", enabled=ENABLED)
def fork(
    source: Log,
    source_id: str,
    boundary: int | None = None,
    child_id: str = "",
    taken_ids: tuple[str, ...] = (),
    cwd: str | None = None,
) -> Fork:
    """Return the child of ``source`` seeded with its events through ``boundary`` (FORK-1, FORK-2, FORK-5)."""
    end = len(source.events) if boundary is None else boundary + 1
    child = seed_log(source.events[:end])
    assert isinstance(child, Log)  # a slice of a valid log is a valid seed
    return Fork(child, Lineage(source_id, end, cwd))
