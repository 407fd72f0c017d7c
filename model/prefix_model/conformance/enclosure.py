"""Spec §9 (ENC-1..ENC-3) — the fold's enclosure arms: every event sits in its turn and step (S/invariant.ts:55-155).

One arm per kind of event, as ``conformance.fold``'s dispatch table names them: a turn's edges
(ENC-1), a step's edges (ENC-2), an event of the open step (ENC-3, with a tool/result's call), and
any other event, which needs only an open turn (ENC-3). Each arm is ``(state, line, event)``.
"""

from __future__ import annotations

from prefix_model.conformance.findings import MISSING
from prefix_model.formats.plain import PlainEvent
from prefix_model.conformance.state import FoldState
from prefix_model.core.events import APPEND
from prefix_model.core.json_values import freeze, json_text
from prefix_model.core.requests import is_step_number

__all__ = ["turn_start", "turn_end", "step_start", "step_end", "in_step", "tool_call", "tool_result", "in_turn", "in_open_step"]


def _names(event: PlainEvent) -> tuple[object, object]:
    """Return the turn and step ``event`` names; a field it lacks is MISSING, shown as ``(missing)``: never as the null it is not (CHK-5)."""
    data = event.data
    return (data.get("turn", MISSING), data.get("step", MISSING)) if type(data) is dict else (MISSING, MISSING)


def _text(value: object) -> str:
    """Return a plain value's ``JSON.stringify`` text for a finding's message, or ``(missing)`` for a field the event lacks."""
    return "(missing)" if value is MISSING else json_text(freeze(value))


# no contract: ENC-3's "names the open step" is its one expression; the chunk screen's contract states what it implies
def in_open_step(state: FoldState, turn: object, step: object) -> bool:
    """ENC-3: whether an event naming ``turn`` and ``step`` names the open step (the chunk screen asks the same)."""
    open_step = state.open_step
    return open_step is not None and is_step_number(turn, open_step.step.turn) and is_step_number(step, open_step.step.step)


def _in_open_turn(state: FoldState, turn: object) -> bool:
    """ENC-1, ENC-2: whether an event naming ``turn`` names the open turn (JSON-5: ``true`` is no turn 1)."""
    return state.open_turn is not None and is_step_number(turn, state.open_turn)


def _turn_state(state: FoldState, expected: str = "expected the open turn") -> str:
    """Say, in words, which turn and step are open where an event does not fit them: ``expected`` then the open turn."""
    if state.open_turn is None:
        return "no turn is open"
    if state.open_step is not None:
        return f"step {state.open_step.step.step} of turn {state.open_turn} is still open"
    return f"{expected} {state.open_turn}"


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def turn_start(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-1: a turn opens where none is, and is the next turn."""
    turn, _ = _names(event)
    if state.open_turn is not None:
        state.find("ENC-1", f"turn/start {_text(turn)} while turn {state.open_turn} is open", event, line)
    if not is_step_number(turn, state.next_turn):
        state.find("ENC-1", f"turn/start expected turn {state.next_turn}, got {_text(turn)}", event, line)
    state.open_turn = turn if type(turn) is int else state.next_turn
    state.next_step = 1


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def turn_end(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-1: a turn closes the open turn, no step of it open."""
    turn, _ = _names(event)
    if not _in_open_turn(state, turn) or state.open_step is not None:
        state.find("ENC-1", f"turn/end {_text(turn)}: {_turn_state(state)}", event, line)
    state.open_turn = None
    state.next_turn += 1


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def step_start(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-2: a step opens in the open turn, none open, and is its next step."""
    turn, step = _names(event)
    if not _in_open_turn(state, turn) or state.open_step is not None or not is_step_number(step, state.next_step):
        state.find("ENC-2", f"step/start {_text(turn)}/{_text(step)}: {_turn_state(state, f'expected step {state.next_step} of open turn')}", event, line)


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def step_end(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-2: a step closes the open step."""
    turn, step = _names(event)
    if not in_open_step(state, turn, step):
        state.find("ENC-2", f"step/end {_text(turn)}/{_text(step)} does not close the open step", event, line)
    state.next_step += 1


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def in_step(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-3: an assistant chunk or message, a tool/call or an appended tool/result names the open step."""
    turn, step = _names(event)
    if not in_open_step(state, turn, step):
        state.find("ENC-3", f"{event.type} names turn {_text(turn)} step {_text(step)}, not the open step", event, line)


def _call(event: PlainEvent) -> object:
    data = event.data
    return data.get("callId", MISSING) if type(data) is dict else MISSING


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def tool_call(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-3: a tool/call names the open step; its call id is then one a tool/result of the step may answer."""
    in_step(state, line, event)
    call = _call(event)
    if isinstance(call, str):
        state.pending_calls.add(call)


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def tool_result(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-3: an appended tool/result names the open step and answers a tool/call of it (or says the tool never started); a rewrite needs an open turn."""
    if event.surface_op != APPEND:
        in_turn(state, line, event)
        return
    in_step(state, line, event)
    call = _call(event)
    if call not in state.pending_calls and not _not_started(event):
        state.find("ENC-3", f"tool/result for {_text(call)} with no tool/call in this step", event, line)


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def in_turn(state: FoldState, line: int, event: PlainEvent) -> None:
    """ENC-3: any other event sits inside an open turn."""
    if state.open_turn is None:
        state.find("ENC-3", f"{event.type} outside any open turn", event, line)


def _not_started(event: PlainEvent) -> bool:
    error = event.field("error")
    return event.field("isError") is True and type(error) is dict and error.get("code") == "TOOL_NOT_STARTED"

