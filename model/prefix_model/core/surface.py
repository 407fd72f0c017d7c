"""Spec §3 — the surface fold: which events are model-visible history, in which order.

The surface is the ordered list of seqs of current history nodes plus ``replaceGeneration``,
the count of committed replacements (harness S/surface.ts:61-72). An ``append`` pushes the
event's seq; a ``replace`` swaps the inclusive *positional* range [start, end] of current nodes
for the event's seq. ``check_surface_event`` returns the first rule an event breaks (a value);
``apply_surface_event`` folds an event that passed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from prefix_model.core.contracts import ENABLED, Rejection, ensure, require
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_MESSAGE,
    TOOL_RESULT,
    Event,
    Replace,
    check_event,
    is_safe_seq,
    is_surface_type,
    shown,
)
from prefix_model.core.json_values import FrozenMap, is_json_value, json_deep_equal

__all__ = [
    "Surface",
    "EMPTY_SURFACE",
    "splice_nodes",
    "replacement_range",
    "EventsBySeq",
    "check_surface_op",
    "check_source_seqs",
    "check_provenance",
    "check_tool_result_rewrite",
    "check_surface_event",
    "surface_step",
    "check_surface_event_at",
    "apply_surface_event",
    "fold_surface",
]


@dataclass(frozen=True, slots=True)
class Surface:
    """Current history nodes (event seqs, in model order) and the replacement count."""

    nodes: tuple[int, ...] = ()
    replace_generation: int = 0


EMPTY_SURFACE = Surface()


def _keeps_outside(nodes: tuple[int, ...], i: int, j: int, result: tuple[int, ...]) -> bool:
    """SURF-6: the nodes before ``i`` and after ``j`` keep their order around the new node."""
    return result[:i] == nodes[:i] and result[i + 1 :] == nodes[j + 1 :]


@require(lambda nodes, i, j: 0 <= i <= j < len(nodes), "SURF-5: start position ≤ end position, both current", enabled=ENABLED)
@ensure(lambda nodes, i, j, seq, result: len(result) == len(nodes) - (j - i), "SURF-6: the range collapses to one node", enabled=ENABLED)
@ensure(lambda i, seq, result: result[i] == seq, "SURF-6: the replacement takes the range's position", enabled=ENABLED)
@ensure(lambda nodes, i, j, result: _keeps_outside(nodes, i, j, result), "SURF-6: every non-shadowed node keeps its order", enabled=ENABLED)
def splice_nodes(nodes: tuple[int, ...], i: int, j: int, seq: int) -> tuple[int, ...]:
    """Return ``nodes`` with positions ``i..j`` (inclusive) replaced by ``seq``."""
    return nodes[:i] + (seq,) + nodes[j + 1 :]


@ensure(
    lambda nodes, op, result: isinstance(result, Rejection)
    or (result[0] <= result[1] and nodes[result[0]] == op.start and nodes[result[1]] == op.end),
    "SURF-4/SURF-5: a range is the positions of start and end, in order",
    enabled=ENABLED,
)
def replacement_range(nodes: Sequence[int], op: Replace) -> tuple[int, int] | Rejection:
    """Return the positions of ``op.start`` and ``op.end`` among the surface's ``nodes``, or the rule broken."""
    if op.start not in nodes:
        return Rejection("SURF-4", f"replace start seq {op.start} is not on the surface")
    if op.end not in nodes:
        return Rejection("SURF-4", f"replace end seq {op.end} is not on the surface")
    i, j = nodes.index(op.start), nodes.index(op.end)
    if i > j:
        return Rejection("SURF-5", f"replace start seq {op.start} (position {i}) is after end seq {op.end} (position {j})")
    return i, j


@ensure(
    lambda op, result: (result is None) == (op == APPEND or (isinstance(op, Replace) and is_safe_seq(op.start) and is_safe_seq(op.end))),
    "SURF-3: a surfaceOp is append or a replace of two non-negative safe integer seqs",
    enabled=ENABLED,
)
def check_surface_op(event_type: str, op: object) -> Rejection | None:
    """Return SURF-3 when ``op`` is no surface op: neither ``"append"`` nor a replace of two non-negative safe integer seqs.

    The one statement of SURF-3: ``surface_step`` asks it of an event's op, the reader
    (``formats.event_lines``) of a ``surfaceOp`` member that is no string, as it reads it.
    """
    if op == APPEND or (isinstance(op, Replace) and is_safe_seq(op.start) and is_safe_seq(op.end)):
        return None
    return Rejection("SURF-3", f"{event_type} carries an invalid surfaceOp {shown(op)}")


@ensure(
    lambda sources, result: (result is None) == (isinstance(sources, tuple) and all(is_safe_seq(s) for s in sources)),
    "SURF-7: sourceEventSeqs is an array of non-negative safe integers",
    enabled=ENABLED,
)
def check_source_seqs(sources: object) -> Rejection | None:
    """Return SURF-7 when ``sources`` is not an array (a tuple) of non-negative safe integers.

    The one statement of this part of SURF-7: ``check_provenance`` asks it of an event's
    ``sourceEventSeqs``, the reader (``formats.event_lines``) of the member as it reads it.
    """
    if not isinstance(sources, tuple):
        return Rejection("SURF-7", "sourceEventSeqs must be an array")
    if not all(is_safe_seq(s) for s in sources):
        return Rejection("SURF-7", "sourceEventSeqs must hold non-negative safe integers")
    return None


class EventsBySeq(Protocol):
    """The events of a log by seq: the log's tuple itself, or a checker's index of the live ones."""

    def __getitem__(self, seq: int, /) -> Event: ...


@ensure(lambda result: result is None or result.rule in ("SURF-7", "SURF-8"), "SURF-7/SURF-8: the provenance rules", enabled=ENABLED)
def check_provenance(event: Event, shadowed: tuple[int, ...]) -> Rejection | None:
    """Return the provenance rule ``event``'s ``sourceEventSeqs`` break, shadowing the nodes ``shadowed`` (none for an append)."""
    sources = event.source_event_seqs
    given: set[int] = set()  # each shadowed node is looked up in a set: a scan of the tuple made a compaction of N nodes cost N²
    if sources is not None:
        found = check_source_seqs(sources)
        if found is not None:
            return found
        if len(sources) == 0 and event.type != ASSISTANT_MESSAGE:
            return Rejection("SURF-7", "sourceEventSeqs must not be empty except on assistant/message")
        given = set(sources)
        if len(given) != len(sources):
            return Rejection("SURF-7", "sourceEventSeqs must not contain duplicates")
        later = [s for s in sources if s >= event.seq]
        if later:
            return Rejection("SURF-7", f"sourceEventSeqs must reference earlier events: {later[0]} >= {event.seq}")
    missing = [s for s in shadowed if s not in given]
    if missing:
        return Rejection("SURF-8", f"sourceEventSeqs must include every shadowed node; missing {missing}")
    return None


@ensure(
    lambda event, result: result is None or (event.type == TOOL_RESULT and result.rule in ("SURF-9", "JSON-1")),
    "SURF-9: only a tool/result replacement is judged by the rewrite rule",
    enabled=ENABLED,
)
def check_tool_result_rewrite(event: Event, shadowed: tuple[int, ...], events: EventsBySeq) -> Rejection | None:
    """Return the rule a tool/result replacement of the nodes ``shadowed`` breaks, if any (SURF-9)."""
    if event.type != TOOL_RESULT:
        return None
    if len(shadowed) != 1:
        return Rejection("SURF-9", "a tool/result replacement must rewrite exactly one current node")
    original = events[shadowed[0]]
    if original.type != TOOL_RESULT:
        return Rejection("SURF-9", "a tool/result replacement must target a current tool/result")
    if not (isinstance(original.data, FrozenMap) and isinstance(event.data, FrozenMap)):
        return Rejection("SURF-9", "tool/result data must be objects")
    if not is_json_value(original.data):  # an event ``events`` holds that no append accepted
        return Rejection("JSON-1", "the rewritten tool/result's data is not a JSON value")
    if not json_deep_equal(original.data.without("content"), event.data.without("content")):
        return Rejection("SURF-9", "a tool/result replacement may change only content")
    return None


@ensure(
    lambda surface, event, result: result is not None or _applicable(surface, event),
    "SURF-4/SURF-5: an accepted event can be folded",
    enabled=ENABLED,
)
def check_surface_event(surface: Surface, event: Event, events: tuple[Event, ...]) -> Rejection | None:
    """Return the first surface rule that appending ``event`` after ``events`` breaks, if any.

    Spec: SURF-3, SURF-4, SURF-5, SURF-7, SURF-8, SURF-9 (and the envelope rules of §2).
    """
    return check_surface_event_at(surface, event, events, len(events))


@ensure(
    lambda event, result: not isinstance(result, tuple) or isinstance(event.surface_op, Replace),
    "SURF-5: only a replace names positions",
    enabled=ENABLED,
)
def surface_step(nodes: Sequence[int], event: Event, events: EventsBySeq) -> tuple[int, int] | Rejection | None:
    """Return the first surface rule a surface-eligible ``event`` with a ``surfaceOp`` breaks over the current ``nodes``;
    else the positions it replaces, or None for an append (SURF-3, SURF-4, SURF-5, SURF-7, SURF-8, SURF-9).

    The one statement of the surface step: the spec's fold asks it over its tuple of nodes, the
    conformance fold over its indexed live nodes (and its events frozen on demand).
    """
    op = event.surface_op
    if op == APPEND:
        return check_provenance(event, ())
    invalid = check_surface_op(event.type, op)
    if invalid is not None or not isinstance(op, Replace):
        return invalid
    positions = replacement_range(nodes, op)
    if isinstance(positions, Rejection):
        return positions
    shadowed = tuple(nodes[positions[0] : positions[1] + 1])
    return check_provenance(event, shadowed) or check_tool_result_rewrite(event, shadowed, events) or positions


@ensure(
    lambda event, expected_seq, result: result is not None or event.seq == expected_seq,
    "LOG-2: an accepted event sits at its seq",
    enabled=ENABLED,
)
def check_surface_event_at(surface: Surface, event: Event, events: tuple[Event, ...], expected_seq: int) -> Rejection | None:
    """Check ``event`` at position ``expected_seq``; ``events`` holds at least the events before it."""
    found = check_event(event, expected_seq)
    if found is not None or not is_surface_type(event.type):
        return found  # check_event rejects a surface-eligible event without a surfaceOp (LOG-5)
    step = surface_step(surface.nodes, event, events)
    return step if isinstance(step, Rejection) else None


def _applicable(surface: Surface, event: Event) -> bool:
    """Return whether ``event``'s surface op can be folded (a replace names current nodes in order)."""
    op = event.surface_op
    return not isinstance(op, Replace) or not isinstance(replacement_range(surface.nodes, op), Rejection)


@require(lambda surface, event: _applicable(surface, event), "SURF-4/SURF-5: a replace names current nodes in order", enabled=ENABLED)
@ensure(
    lambda surface, event, result: is_surface_type(event.type) or result == surface,
    "DER-5: a log-only event leaves the surface unchanged",
    enabled=ENABLED,
)
@ensure(
    lambda surface, event, result: not (is_surface_type(event.type) and event.surface_op == APPEND)
    or result.nodes == surface.nodes + (event.seq,),
    "SURF-2: append pushes the event's seq last",
    enabled=ENABLED,
)
@ensure(
    lambda surface, event, result: result.replace_generation
    == surface.replace_generation + (1 if is_surface_type(event.type) and isinstance(event.surface_op, Replace) else 0),
    "SURF-6: replaceGeneration counts committed replacements",
    enabled=ENABLED,
)
def apply_surface_event(surface: Surface, event: Event) -> Surface:
    """Return the surface after folding ``event``; a log-only event changes nothing (SURF-2, SURF-6)."""
    op = event.surface_op
    if not is_surface_type(event.type) or op is None:
        return surface
    if isinstance(op, Replace):
        positions = replacement_range(surface.nodes, op)
        assert not isinstance(positions, Rejection)
        nodes = splice_nodes(surface.nodes, positions[0], positions[1], event.seq)
        return Surface(nodes, surface.replace_generation + 1)
    return Surface(surface.nodes + (event.seq,), surface.replace_generation)


@ensure(
    lambda result: isinstance(result, Rejection) or len(set(result.nodes)) == len(result.nodes),
    "SURF-6: a node is on the surface at most once",
    enabled=ENABLED,
)
@ensure(
    lambda events, result: isinstance(result, Rejection) or all(is_surface_type(events[n].type) for n in result.nodes),
    "LOG-5/DER-8: only surface-eligible events are nodes",
    enabled=ENABLED,
)
def fold_surface(events: tuple[Event, ...]) -> Surface | Rejection:
    """Return the surface of a whole log, or the first rule an event of it breaks (SURF-10)."""
    surface = EMPTY_SURFACE
    for index, event in enumerate(events):
        found = check_surface_event_at(surface, event, events, index)
        if found is not None:
            return Rejection(found.rule, found.reason, index)
        surface = apply_surface_event(surface, event)
    return surface
