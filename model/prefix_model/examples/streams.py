"""Streams as the harness's adapters send them: inputs for scenarios, the loop machine and the vectors.

The shapes of the agent-loop package's own scripted replies (tests/mock-adapter.ts
``textResponse``, ``toolCallResponse``), with the number of deltas as a parameter so that delta
runs long enough to pack (spec/formats.md) can be made. Inputs, not rules: what the loop does with
a stream is ``stream.py``'s.
"""

from __future__ import annotations

from collections.abc import Mapping

from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.events import is_safe_seq
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze_object
from prefix_model.loop.stream import check_stream

__all__ = ["text_stream", "tool_call_stream", "with_replay_state", "failed_finish"]


def _split(text: str, count: int) -> list[str]:
    """Return ``text`` in ``count`` consecutive pieces (fewer when it is shorter; one empty piece for '')."""
    n = max(1, min(count, len(text)))
    bounds = [len(text) * k // n for k in range(n + 1)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@require(lambda index: is_safe_seq(index), "STRM-1: a block index is a non-negative safe integer", enabled=ENABLED)
@require(
    lambda usage: usage is None or all(is_safe_seq(n) for n in usage.values()), "JSON-1: usage counts are safe integers", enabled=ENABLED
)
@ensure(lambda result: check_stream(result) is None, "STRM-1: a built stream is well formed", enabled=ENABLED)
def text_stream(text: str, index: int = 0, usage: dict[str, int] | None = None, pieces: int | None = None) -> tuple[FrozenMap, ...]:
    """Return a text block streamed in ``pieces`` deltas (one per character by default), its usage and a stop finish.

    The shape of the harness's own scripted replies (agent-loop tests/mock-adapter.ts ``textResponse``).
    """
    deltas = _split(text, len(text) if pieces is None else pieces)
    chunks = [{"type": "block-start", "index": index, "blockType": "text"}]
    chunks += [{"type": "text-delta", "index": index, "text": piece} for piece in deltas]
    chunks += [{"type": "block-end", "index": index, "block": {"type": "text", "text": text}}]
    chunks += [{"type": "usage", "usage": usage if usage is not None else {"inputTokens": 10, "outputTokens": len(text)}}]
    chunks += [{"type": "finish", "reason": {"kind": "stop"}}]
    return tuple(freeze_object(c) for c in chunks)


@ensure(lambda result: check_stream(result) is None, "STRM-1: a built stream is well formed", enabled=ENABLED)
def tool_call_stream(call_id: str, name: str, arguments: str, text: str = "", pieces: int = 2) -> tuple[FrozenMap, ...]:
    """Return an optional text block, then a tool call whose arguments arrive in ``pieces`` deltas, usage and a tool-calls finish.

    The shape of agent-loop tests/mock-adapter.ts ``toolCallResponse`` (two pieces: the first five
    characters with the tool's name, then the rest); more pieces split the rest further.
    """
    chunks: list[dict[str, object]] = []
    index = 0
    if text:
        chunks += [
            {"type": "block-start", "index": 0, "blockType": "text"},
            {"type": "text-delta", "index": 0, "text": text},
            {"type": "block-end", "index": 0, "block": {"type": "text", "text": text}},
        ]
        index = 1
    chunks += [
        {"type": "block-start", "index": index, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": index, "id": call_id, "name": name, "argumentsDelta": arguments[:5]},
        *({"type": "tool-call-delta", "index": index, "id": call_id, "argumentsDelta": piece} for piece in _split(arguments[5:], pieces - 1)),
        {"type": "block-end", "index": index, "block": {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}},
        {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 5}},
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]
    return tuple(freeze_object(c) for c in chunks)


@ensure(lambda result: check_stream(result) is None, "STRM-1: a built stream is well formed", enabled=ENABLED)
def with_replay_state(chunks: tuple[FrozenMap, ...], state: str, kind: str | None = None) -> tuple[FrozenMap, ...]:
    """Return ``chunks`` with their finish carrying a ``replayState`` (``{cursor: state}``), and the finish kind ``kind``
    where one is given: what a provider that resumes its reasoning sends (STRM-3, STRM-4)."""
    finish = chunks[-1]
    reason = finish["reason"] if kind is None else FrozenMap({"kind": kind})
    return (*chunks[:-1], FrozenMap({**finish, "reason": reason, "replayState": FrozenMap({"cursor": state})}))


@ensure(lambda result: check_stream((result,)) is None, "STRM-1: a failure the harness's LlmError accepts", enabled=ENABLED)
def failed_finish(kind: str, failure: Mapping[str, JsonValue]) -> FrozenMap:
    """Return a finish of ``kind`` (error or aborted) carrying ``failure``: a provider failing the request itself, which
    the loop takes as a thrown error (STRM-4)."""
    return freeze_object({"type": "finish", "reason": {"kind": kind, "failure": dict(failure)}})
