"""Spec §9 (MATCH-1, MATCH-2) — the fold's step arms: each step's request resolved, and matched with the capture.

A step opens at step/start; its request resolves at its first chunk, or where the step ends
(REQ-4: the header in force at the first chunk; a header seen in its window proves it dispatched).
The capture is read lazily in file order (``CaptureQueue``): the requests naming a step are matched
with that step (MATCH-1), the others in order with the dispatching steps (MATCH-2); each matched
request is compared (``conformance.reconstruction``).
"""

from __future__ import annotations

from prefix_model.conformance.captured import Captured
from prefix_model.conformance.findings import Finding
from prefix_model.formats.plain import PlainEvent
from prefix_model.conformance.reconstruction import compare
from prefix_model.conformance.state import FoldState, InOrder, OpenStep, StepResult

__all__ = ["step_opens", "dispatches", "step_closes", "resolve_open", "unmatched"]


# no contract: an arm of the fold; the steps it opens are counted and matched, which finish's MATCH-1/CHK-1 postcondition accounts
def step_opens(state: FoldState, line: int, event: PlainEvent) -> None:
    """A step/start: the step before is resolved, and this one opens with the nodes before it as its boundary (REQ-3)."""
    resolve_open(state)
    turn, step = event.field("turn"), event.field("step")
    result = StepResult(turn if type(turn) is int else -1, step if type(step) is int else -1,
                        event.seq, state.instances, len(state.nodes), start_line=line)  # fmt: skip
    state.steps += 1
    state.open_step = OpenStep(result)


# no contract: an arm of the fold; the chunk screen's contract (LogChecker._plain_chunk) states the common case
def dispatches(state: FoldState, line: int, event: PlainEvent) -> None:
    """An assistant chunk: the open step sent its request (REQ-4), resolved now."""
    if state.open_step is not None:
        state.open_step.step.dispatched = True
        resolve_open(state)


# no contract: an arm of the fold; the steps it closes are matched, which finish's MATCH-1/CHK-1 postcondition accounts
def step_closes(state: FoldState, line: int, event: PlainEvent) -> None:
    """A step/end or turn/end: the open step is resolved and closed, its tool calls forgotten."""
    resolve_open(state)
    state.open_step = None
    state.pending_calls.clear()


# no contract: it resolves the open step once; finish's MATCH-1/CHK-1 postcondition accounts every request
def resolve_open(state: FoldState) -> None:
    """Resolve the open step's request: its header is the fold now, its boundary the snapshot."""
    open_step = state.open_step
    if open_step is None or open_step.resolved:
        return
    open_step.resolved = True
    result = open_step.step
    result.instance = state.instances  # the step's own anchor sits after its step/start
    if open_step.header_seen:
        result.dispatched = True
    if state.resolved is not None:
        state.resolved(result)
    _match(state, result)


def _match(state: FoldState, result: StepResult) -> None:
    """Match the capture's head with this step: requests naming it, else the next unnamed one."""
    key = (result.turn, result.step)
    took = False
    queue = state.queue
    while (head := queue.head()) is not None and head.named and (head.turn, head.step) <= key:
        request = queue.pop()
        if (request.turn, request.step) < key:
            unmatched(state, request)
        else:
            state.requests_by_step += 1
            compare(state, result, request)
            took = True
    if took or head is None or head.named or state.in_order_blocked or result.start_seq < state.seed_length:
        return
    if result.dispatched is None and state.header is None:
        return  # no header in force and no chunk: the step sent nothing (a request is recorded first, L/loop.ts:707-713)
    if result.dispatched is None:
        state.in_order_blocked = True
        state.findings.append(Finding("MATCH-2", f"turn {result.turn} step {result.step} may or may not have sent a request "
                                      "(no header, no chunk); requests without turn/step are not matched past it",
                                      seq=result.start_seq))  # fmt: skip
        return
    request = queue.pop()
    state.in_order.append(InOrder(request.index, request.line, result.turn, result.step))
    compare(state, result, request)


# no contract: it counts one request; finish's MATCH-1/CHK-1 postcondition accounts every request
def unmatched(state: FoldState, request: Captured) -> None:
    """Count a request no step took; a named one is a MATCH-1 finding. Its value is still read whole (CAP-1)."""
    request.read_whole()
    state.requests_unmatched += 1
    if not request.named:
        return
    state.findings.append(Finding("MATCH-1", f"the log has no dispatching step turn {request.turn} step {request.step} "
                                  "where the capture's order puts this request", request=request.index, line=request.line))  # fmt: skip
