"""Spec §10.3 — a streamed reply: the adapter's chunks and what the harness assembles from them.

The loop logs every chunk verbatim as ``assistant/chunk {turn, step, chunk}`` before it reads the
next one (L/loop.ts:734-744); ``assemble`` is the harness's ``BlockAssembler`` over the chunks of
one step (LLM/assembler.ts): blocks in the order their index first appears, a ``block-end``'s
block taken as it is (later deltas ignored), otherwise the deltas concatenated; the last
``usage``; the last ``finish`` (``{kind: 'stop'}`` when none) and its ``replayState``.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, Rejection, ensure, require
from prefix_model.core.json_values import FrozenMap, JsonValue, is_json_value

__all__ = ["Assembly", "check_stream", "assemble", "tool_calls_of", "failure_of", "FAILED"]

BLOCK_START, TEXT_DELTA, REASONING_DELTA = "block-start", "text-delta", "reasoning-delta"
TOOL_CALL_DELTA, BLOCK_END, USAGE, FINISH = "tool-call-delta", "block-end", "usage", "finish"
CHUNK_TYPES: tuple[str, ...] = (BLOCK_START, TEXT_DELTA, REASONING_DELTA, TOOL_CALL_DELTA, BLOCK_END, USAGE, FINISH)
_ASSEMBLED_TYPES: tuple[str, ...] = ("text", "reasoning", "tool-call")  # the block types deltas can build
_DELTA_BLOCK = {TEXT_DELTA: "text", REASONING_DELTA: "reasoning", TOOL_CALL_DELTA: "tool-call"}  # the block a delta starts


@dataclass(frozen=True, slots=True)
class Assembly:
    """What one step's chunks assemble to: content blocks, usage, the finish reason and replay state."""

    content: tuple[FrozenMap, ...]
    usage: JsonValue
    finish: FrozenMap
    replay_state: JsonValue


FAILED: tuple[str, ...] = ("error", "aborted")  # finish kinds that fail the request (L/loop.ts:43-61)


def _positive_int(value: JsonValue, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


@ensure(
    lambda result: result is None or (tuple(result.keys())[:2] == ("message", "code") and bool(result["message"]) and bool(result["code"])),
    "LOOP-9: a request failure is {message, code, ...}, both non-empty",
    enabled=ENABLED,
)
def failure_of(reason: FrozenMap) -> FrozenMap | None:
    """Return the failure an error/aborted finish stands for, as ``LlmError`` builds it, or None if it would throw.

    ``{message, code, status?, providerRetryAfterMs?, requestId?}`` in that order (LLM/index.ts:80-103).
    """
    facts = reason.get("failure")
    if not isinstance(facts, FrozenMap):
        return None
    message, code = facts.get("message"), facts.get("code")
    status, retry_after, request_id = facts.get("status"), facts.get("providerRetryAfterMs"), facts.get("requestId")
    if not (isinstance(message, str) and message and isinstance(code, str) and code):
        return None
    if ("status" in facts and not _positive_int(status, 100, 599)) or ("requestId" in facts and not (isinstance(request_id, str) and request_id)):
        return None
    if "providerRetryAfterMs" in facts and not (isinstance(retry_after, (int, float)) and not isinstance(retry_after, bool) and retry_after > 0):
        return None
    fields: dict[str, JsonValue] = {"message": message, "code": code}
    fields |= {k: facts[k] for k in ("status", "providerRetryAfterMs", "requestId") if k in facts}
    return FrozenMap(fields)


def _index(chunk: FrozenMap) -> int | None:
    index = chunk.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def _chunk_rejection(chunk: JsonValue, at: int) -> Rejection | None:
    where = f"chunk {at}"
    if not isinstance(chunk, FrozenMap) or not any(chunk.get("type") == t for t in CHUNK_TYPES):
        return Rejection("STRM-1", f"{where} is not a stream chunk (block-start, *-delta, block-end, usage, finish)")
    kind = chunk["type"]
    if kind in (USAGE, FINISH):
        field = "usage" if kind == USAGE else "reason"
        value = chunk.get(field)
        if not isinstance(value, FrozenMap):
            return Rejection("STRM-1", f"{where}: {kind} needs an object {field}")
        if kind == FINISH and not isinstance(value.get("kind"), str):
            return Rejection("STRM-1", f"{where}: a finish reason needs a string kind")
        if kind == FINISH and value.get("kind") in FAILED and failure_of(value) is None:
            return Rejection("STRM-1", f"{where}: an {value['kind']} finish needs a failure the harness's LlmError accepts")
        return None
    if _index(chunk) is None:
        return Rejection("STRM-1", f"{where}: {kind} needs an integer index")
    strings = {BLOCK_START: ("blockType",), TEXT_DELTA: ("text",), REASONING_DELTA: ("text",), TOOL_CALL_DELTA: ("id", "argumentsDelta")}
    for name in strings.get(str(kind), ()):
        if not isinstance(chunk.get(name), str):
            return Rejection("STRM-1", f"{where}: {kind} needs a string {name}")
    block = chunk.get("block")
    if kind == BLOCK_END and not (isinstance(block, FrozenMap) and isinstance(block.get("type"), str)):
        return Rejection("STRM-1", f"{where}: block-end needs a block with a string type")
    return None


@require(lambda chunks: is_json_value(chunks), "JSON-1: chunks are JSON values", enabled=ENABLED)
@ensure(
    lambda chunks, result: result is not None or all(isinstance(c, FrozenMap) for c in chunks),
    "STRM-1: an accepted stream is a sequence of chunk objects",
    enabled=ENABLED,
)
def check_stream(chunks: tuple[JsonValue, ...]) -> Rejection | None:
    """Return the first rule the chunks of one step break, if any (STRM-1, STRM-2)."""
    for at, chunk in enumerate(chunks):
        found = _chunk_rejection(chunk, at)
        if found is not None:
            return found
    unfinished = set(_open_blocks(chunks).values()) - set(_ASSEMBLED_TYPES)
    if unfinished:
        # The harness throws "cannot assemble incomplete block" (LLM/assembler.ts): the model's
        # replies are streams it can assemble.
        return Rejection("STRM-2", f"a block of type {sorted(unfinished)[0]!r} never ends (no block-end)")
    return None


def _open_blocks(chunks: tuple[JsonValue, ...]) -> dict[int, str]:
    """Return the index → block type of every block that has no block-end."""
    started: dict[int, str] = {}
    ended: set[int] = set()
    for chunk in chunks:
        if not isinstance(chunk, FrozenMap) or (index := _index(chunk)) is None:
            continue
        kind = chunk.get("type")
        implied = {BLOCK_START: chunk.get("blockType"), **_DELTA_BLOCK}
        if kind == BLOCK_END:
            ended.add(index)
            block = chunk.get("block")
            started.setdefault(index, str(block.get("type")) if isinstance(block, FrozenMap) else "")
        elif kind in implied:
            started.setdefault(index, str(implied[str(kind)]))
    return {i: t for i, t in started.items() if i not in ended}


def _first_index_order(chunks: tuple[FrozenMap, ...]) -> list[int]:
    order: list[int] = []
    for chunk in chunks:
        index = _index(chunk)
        if index is not None and chunk.get("type") not in (USAGE, FINISH) and index not in order:
            order.append(index)
    return order


def _block(chunks: tuple[FrozenMap, ...], index: int) -> FrozenMap:
    mine = [c for c in chunks if _index(c) == index and c.get("type") not in (USAGE, FINISH)]
    ends = [n for n, c in enumerate(mine) if c.get("type") == BLOCK_END]
    if ends:
        block = mine[ends[0]]["block"]
        assert isinstance(block, FrozenMap)
        return block
    first = mine[0]
    kind = _DELTA_BLOCK.get(str(first.get("type")), first.get("blockType"))
    if kind in ("text", "reasoning"):
        text = "".join(str(c["text"]) for c in mine if c.get("type") in (TEXT_DELTA, REASONING_DELTA))
        return FrozenMap({"type": kind, "text": text})
    calls = [c for c in mine if c.get("type") == TOOL_CALL_DELTA]
    names = [str(c["name"]) for c in calls if isinstance(c.get("name"), str) and c["name"]]
    call_id = str(calls[-1]["id"]) if calls else f"call-{index}"
    arguments = "".join(str(c["argumentsDelta"]) for c in calls)
    return FrozenMap({"type": "tool-call", "id": call_id, "name": names[-1] if names else "", "arguments": arguments})


def _last(chunks: tuple[JsonValue, ...], kind: str, field: str) -> JsonValue:
    """Return ``field`` of the last chunk of type ``kind``, or None when there is none."""
    found = [c for c in chunks if isinstance(c, FrozenMap) and c.get("type") == kind]
    return found[-1].get(field) if found else None


@require(lambda chunks: check_stream(chunks) is None, "STRM-1/STRM-2: only a well-formed stream is assembled", enabled=ENABLED)
@ensure(
    lambda chunks, result: len(result.content) == len(_first_index_order(tuple(c for c in chunks if isinstance(c, FrozenMap)))),
    "STRM-3: one block per index, in the order the indices first appear",
    enabled=ENABLED,
)
@ensure(
    lambda chunks, result: result.finish == (_last(chunks, FINISH, "reason") or FrozenMap({"kind": "stop"}))
    and result.usage == _last(chunks, USAGE, "usage"),
    "STRM-3: the finish is the last finish chunk's reason (else stop), the usage the last usage chunk's",
    enabled=ENABLED,
)
def assemble(chunks: tuple[JsonValue, ...]) -> Assembly:
    """Return what ``BlockAssembler`` builds from one step's chunks (STRM-3)."""
    objects = tuple(c for c in chunks if isinstance(c, FrozenMap))
    content = tuple(_block(objects, index) for index in _first_index_order(objects))
    reason = _last(chunks, FINISH, "reason")
    finish = reason if isinstance(reason, FrozenMap) else FrozenMap({"kind": "stop"})
    return Assembly(content, _last(chunks, USAGE, "usage"), finish, _last(chunks, FINISH, "replayState"))


@ensure(
    lambda content, result: len(result) == sum(1 for b in content if b.get("type") == "tool-call"),
    "STRM-4: every tool-call block of the message is a call the step runs",
    enabled=ENABLED,
)
def tool_calls_of(content: tuple[FrozenMap, ...]) -> tuple[tuple[str, str, str], ...]:
    """Return the (id, name, arguments) of the message's tool-call blocks, in order (L/loop.ts:808-809)."""
    return tuple(
        (str(b.get("id", "")), str(b.get("name", "")), str(b.get("arguments", ""))) for b in content if b.get("type") == "tool-call"
    )

