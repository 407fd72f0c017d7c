"""Spec §3 (SURF-*) — the fold's surface arm: the live surface, and the text of the history a request carries.

The surface step is the core's own ``surface_step`` over the live nodes (``SurfaceNodes``), asked
of the event frozen on demand; a plainly fine append is screened (``append_provenance_ok``). Each
live node keeps its derived message (``derive_event_message``) and, once a request needs it, that
message's compact text, written once: the expected history of a request is the header's prefix
and these texts (``messages_head``), so a request that extends the one before costs its new nodes.
"""

from __future__ import annotations

from collections.abc import Iterator

from prefix_model.formats.plain import Known, PlainEvent, plain_text, to_event
from prefix_model.conformance.screens import DEEP, append_provenance_ok
from prefix_model.conformance.state import Expectation, FoldState, StepResult
from prefix_model.core.contracts import Rejection
from prefix_model.core.derive import derive_event_message
from prefix_model.core.events import APPEND, Event, Replace
from prefix_model.core.surface import surface_step

__all__ = ["surface", "boundary", "messages_head", "known"]


class _Lookup:
    """Index live events by seq, frozen on demand, as the tool-result rewrite rule reads them."""

    def __init__(self, live: dict[int, PlainEvent]) -> None:
        self._live = live

    def __getitem__(self, seq: int) -> Event:
        return to_event(self._live[seq])


# no contract: an arm of the fold; the surface step is the core's surface_step, which carries the SURF-* contracts
def surface(state: FoldState, line: int, event: PlainEvent) -> None:
    """The surface step (§3): the core's ``surface_step`` over the live nodes, a plainly fine append screened."""
    op = event.surface_op
    if op is None:
        return  # LOG-5, the envelope's rule, was found
    if op == APPEND and append_provenance_ok(event):
        _push(state, event)
        return
    if isinstance(op, Replace):
        _keep_boundary(state)  # the boundary's nodes may be about to change
    step = surface_step(state.nodes, to_event(event), _Lookup(state.live))
    if isinstance(step, Rejection):
        state.find(step.rule, step.reason, event, line)
    elif step is None:
        _push(state, event)
    else:
        _replace(state, event, *step)


def _push(state: FoldState, event: PlainEvent) -> None:
    state.nodes.append(event.seq)
    state.pieces.append(None)
    _add_node(state, event)


def _add_node(state: FoldState, event: PlainEvent) -> None:
    state.messages[event.seq] = derive_event_message(event)
    state.live[event.seq] = event
    state.deep_nodes += event.depth > DEEP


def _drop_node(state: FoldState, seq: int) -> None:
    del state.messages[seq]
    state.deep_nodes -= state.live.pop(seq).depth > DEEP


def _replace(state: FoldState, event: PlainEvent, i: int, j: int) -> None:
    """Fold a replacement of the nodes at positions ``i..j`` that ``surface_step`` accepted (SURF-6)."""
    for seq in state.nodes[i : j + 1]:
        _drop_node(state, seq)
    state.nodes.splice(i, j, event.seq)
    state.pieces[i : j + 1] = [None]
    state.filled = min(state.filled, i)
    _add_node(state, event)
    state.generation += 1


def _keep_boundary(state: FoldState) -> None:
    """Keep the open step's boundary nodes, before a replacement inside its header window changes them."""
    open_step = state.open_step
    if open_step is None or open_step.resolved or open_step.step.boundary is not None:
        return
    open_step.step.boundary = tuple((seq, state.messages[seq]) for seq in state.nodes[: open_step.step.boundary_nodes])


# no contract: it reads the state (REQ-3: the nodes before step/start); reconstruction's contracts judge what is built of it
def boundary(state: FoldState, result: StepResult) -> Iterator[tuple[int, object]]:
    """The boundary nodes of step ``result`` as (seq, message): those kept at a replacement inside its window, else the nodes now."""
    if result.boundary is not None:
        return iter(result.boundary)
    messages = state.messages
    return ((seq, messages[seq]) for seq in state.nodes[: result.boundary_nodes])


# no contract: a text cache; the text screen's contract (reconstruction) and known's (LogChecker.known_messages) judge its text
def messages_head(state: FoldState, expected: Expectation, boundary: int) -> str:
    """Return the compact text of messagePrefix ++ the derivation of the first ``boundary`` nodes, less its ``]``."""
    last = state.last_head
    if last is not None and last[0] is expected and last[1] == state.generation and last[2] == boundary:
        return last[3]
    pieces, messages = state.pieces, state.messages
    for position in range(state.filled, boundary):  # each node's text is written once
        if pieces[position] is None:
            message = messages[state.nodes[position]]
            pieces[position] = "" if message is None else plain_text(message) + ","
    state.filled = max(state.filled, boundary)
    body = expected.prefix + "".join(pieces[:boundary])  # type: ignore[arg-type]  # filled above
    head = "[" + body[:-1]
    state.last_head = (expected, state.generation, boundary, head)
    return head


# no contract: LogChecker.known_messages, its one caller, states CHK-2's tie of the text to the items
def known(state: FoldState) -> Known | None:
    """Return the messages a request sent now would carry (``LogChecker.known_messages``)."""
    expected, last = state.expected, state.last_head
    if expected is None:
        return None
    boundary = last[2] if last is not None and last[0] is expected and last[1] == state.generation else len(state.nodes)
    messages = state.messages
    # The last guess's messages, while its nodes are still the surface's first (no replacement since, the same header).
    guess = state.known
    if guess is not None and guess[0] is expected and guess[1] == state.generation and guess[2] <= boundary:
        start, covered = guess[3], guess[2]
    else:
        start, covered = expected.prefix_items, 0
    items = start + [m for m in (messages[s] for s in state.nodes[covered:boundary]) if m is not None]  # a new list: none is written to
    state.known = (expected, state.generation, boundary, items)
    return messages_head(state, expected, boundary), items
