"""A scripted session built with the core functions: the bundled example of ``make run``.

The script follows the harness's per-step order (facts Appendix B): one session-prefix
contributor, turn 1 with an ``echo`` tool call and a text answer, turn 2 with a text answer.
It is pure; ``example.events.jsonl`` beside this file is its log and ``example.requests.jsonl``
the capture of the requests its steps sent (each with its ``turn`` and ``step``), both
regenerated and compared by the test suite; ``prefix-model check --example`` checks the pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from prefix_model.core.contracts import Rejection
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    STEP_END,
    STEP_START,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    SurfaceOp,
)
from prefix_model.core.headers import EpochHeader, LlmCallConfig
from prefix_model.core.json_values import FrozenMap, freeze, json_text
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.request_log import record_request_header
from prefix_model.core.requests import reconstruct_request, request_to_json

__all__ = ["EXAMPLE_SESSION_ID", "EXAMPLE_DIR", "EXAMPLE_FILE", "EXAMPLE_REQUESTS_FILE", "EXAMPLE_STEPS", "example_header", "example_log", "example_capture_lines"]

EXAMPLE_SESSION_ID = "example-session"
# Package data beside this module (what importlib.resources.files names for an installed
# package, without importing importlib.resources: the start-up of check --example).
EXAMPLE_DIR = Path(__file__).parent
EXAMPLE_FILE = "example.events.jsonl"
EXAMPLE_REQUESTS_FILE = "example.requests.jsonl"
EXAMPLE_STEPS: tuple[tuple[int, int], ...] = ((1, 1), (1, 2), (2, 1))
_T0 = 1_795_989_239_000  # a fixed clock: event time = _T0 + seq keeps the file deterministic

_ECHO_TOOL = {
    "name": "echo",
    "description": "echo back",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
}
_PREFIX = {"role": "user", "content": [{"type": "text", "text": "<system-reminder>skills catalog v1</system-reminder>"}]}


def example_header() -> EpochHeader:
    """Return the header every request of the example is built from."""
    tools = freeze([_ECHO_TOOL])
    prefix = freeze([_PREFIX])
    assert isinstance(tools, tuple) and isinstance(prefix, tuple)
    return EpochHeader(LlmCallConfig("mock", "mock-model"), "You are a careful assistant.", tools, prefix)


def _add(
    log: Log, type: str, data: object, surface_op: SurfaceOp | None = None, source_event_seqs: tuple[int, ...] | None = None
) -> Log:
    return log.append(type, data, time=_T0 + log.seq, surface_op=surface_op, source_event_seqs=source_event_seqs)


def _answer(log: Log, turn: int, step: int, blocks: Sequence[Mapping[str, object]]) -> Log:
    """Append a streamed answer: one block-end chunk per block, a finish chunk, the assembled message."""
    first = log.seq
    for index, block in enumerate(blocks):
        log = _add(log, ASSISTANT_CHUNK, {"turn": turn, "step": step, "chunk": {"type": "block-end", "index": index, "block": block}})
    log = _add(log, ASSISTANT_CHUNK, {"turn": turn, "step": step, "chunk": {"type": "finish", "reason": {"kind": "stop"}}})
    message = {"turn": turn, "step": step, "content": blocks, "provenance": {"provider": "mock", "model": "mock-model"}}
    return _add(log, ASSISTANT_MESSAGE, message, surface_op=APPEND, source_event_seqs=tuple(range(first, log.seq)))


def _prompt(log: Log, turn: int, text: str) -> Log:
    log = _add(log, TURN_START, {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}})
    return _add(log, USER_MESSAGE, {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}, surface_op=APPEND)


def _step(log: Log, turn: int, step: int, logged: bool) -> Log:
    """Open step (turn, step): the boundary is everything before step/start; then the header rule."""
    log = _add(log, STEP_START, {"turn": turn, "step": step})
    return record_request_header(log, logged, example_header(), time=_T0 + log.seq)


def example_log() -> Log:
    """Return the example session's log, built event by event with the core's rules."""
    log = _prompt(EMPTY_LOG, 1, "say ping through echo")
    log = _step(log, 1, 1, logged=False)
    call = {"type": "tool-call", "id": "c1", "name": "echo", "arguments": '{"text":"ping"}'}
    log = _answer(log, 1, 1, [call])
    log = _add(log, TOOL_CALL, {"turn": 1, "step": 1, "callId": "c1", "name": "echo", "arguments": '{"text":"ping"}'})
    result = {"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "echo: ping"}], "isError": False}
    log = _add(log, TOOL_RESULT, result, surface_op=APPEND, source_event_seqs=(log.seq - 1,))
    log = _add(log, STEP_END, {"turn": 1, "step": 1})
    log = _step(log, 1, 2, logged=True)
    log = _answer(log, 1, 2, [{"type": "text", "text": "ping"}])
    log = _add(log, STEP_END, {"turn": 1, "step": 2})
    log = _add(log, TURN_END, {"turn": 1, "reason": {"kind": "completed"}})
    log = _prompt(log, 2, "thanks")
    log = _step(log, 2, 1, logged=True)
    log = _answer(log, 2, 1, [{"type": "text", "text": "you are welcome"}])
    log = _add(log, STEP_END, {"turn": 2, "step": 1})
    return _add(log, TURN_END, {"turn": 2, "reason": {"kind": "completed"}})


def example_capture_lines() -> tuple[str, ...]:
    """Return the capture lines of the example: each step's request as the loop sent it, naming its step."""
    log, lines = example_log(), []
    for turn, step in EXAMPLE_STEPS:
        request = reconstruct_request(log, turn, step, EXAMPLE_SESSION_ID)
        assert not isinstance(request, Rejection)
        lines.append(json_text(FrozenMap({**request_to_json(request), "turn": turn, "step": step})))
    return tuple(lines)
