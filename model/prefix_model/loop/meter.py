"""Spec §12 — the token meter's heuristic price and ``measure`` (harness TM, facts §5.1).

Text density is 4 characters (UTF-16 code units, as JavaScript counts) per token; each block
adds 4, each message adds 4. A header is priced as its ``messagePrefix`` messages, its system
text and its tool list. ``measure`` replays the log: when the latest usage anchor was taken under
the header now in force, pressure is that baseline plus the surface grown since; otherwise it is
the estimate ``header price + surface price`` (TOK-2). Post-step pressure therefore prices the
routed header's prefix exactly once (TOK-1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.derive import derive_event_message
from prefix_model.core.events import ASSISTANT_CHUNK, ASSISTANT_MESSAGE, REQUEST_HEADER, STEP_START, Event
from prefix_model.core.headers import EpochHeader, canonical_header, header_equals, header_of, is_json_header
from prefix_model.core.json_values import FrozenMap, JsonValue, is_json_value, json_text
from prefix_model.core.log import Log
from prefix_model.core.requests import boundary_log
from prefix_model.loop.stream import assemble

__all__ = ["Measurement", "estimate_content", "estimate_message", "estimate_header", "node_prices", "surface_tokens", "measure"]

CHARS_PER_TOKEN = 4
BLOCK_OVERHEAD = 4
ROLE_OVERHEAD = 4


def _units(text: str) -> int:
    """Return JavaScript's ``length`` of ``text``: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _tokens(text: str) -> int:
    return math.ceil(_units(text) / CHARS_PER_TOKEN)


def _block_price(block: JsonValue) -> int:
    kind = block.get("type") if isinstance(block, FrozenMap) else None
    if isinstance(block, FrozenMap) and kind in ("text", "reasoning") and isinstance(block.get("text"), str):
        return _tokens(str(block["text"])) + BLOCK_OVERHEAD
    if isinstance(block, FrozenMap) and kind == "tool-call":
        return _tokens(str(block.get("name", ""))) + _tokens(str(block.get("arguments", ""))) + BLOCK_OVERHEAD
    if isinstance(block, FrozenMap) and kind == "tool-result":
        return estimate_content(block.get("content")) + BLOCK_OVERHEAD
    return BLOCK_OVERHEAD + _tokens(json_text(block))


@require(lambda blocks: is_json_value(blocks), "JSON-1: content is a JSON value", enabled=ENABLED)
@ensure(lambda result: result >= 0, "TOK-2: prices are non-negative", enabled=ENABLED)
def estimate_content(blocks: JsonValue) -> int:
    """Return the heuristic price of a content-block array.

    Content that is a string (a contributed message may hold one; the ``Message`` type says an array, and a request
    holding one fails the capture's schema, CAP-1) is priced as the harness's loop over it prices it:
    ``for (const block of blocks)`` walks a string's code points, and each is a block of no known type,
    4 + ⌈its JSON text's length / 4⌉ (TM index.ts:352-372). Any other non-array is priced 0.
    """
    if isinstance(blocks, str):
        return sum(BLOCK_OVERHEAD + _tokens(json_text(point)) for point in blocks)
    return sum(_block_price(b) for b in blocks) if isinstance(blocks, tuple) else 0


@require(lambda message: is_json_value(message), "JSON-1: a message is a JSON value", enabled=ENABLED)
@ensure(lambda result: result >= ROLE_OVERHEAD, "TOK-2: a message costs at least its role framing", enabled=ENABLED)
def estimate_message(message: JsonValue) -> int:
    """Return the heuristic price of one message: its content plus role framing."""
    content = message.get("content") if isinstance(message, FrozenMap) else None
    return estimate_content(content) + ROLE_OVERHEAD


@require(
    lambda header: header is None or is_json_header(header), "JSON-1: a header's tools and prefix are JSON values", enabled=ENABLED
)
@ensure(
    lambda header, result: header is None
    or result >= sum(estimate_message(m) for m in (header.message_prefix or ())),
    "TOK-1: a header's price includes its prefix",
    enabled=ENABLED,
)
def estimate_header(header: EpochHeader | None) -> int:
    """Return the price of a request's non-history half (TM:378-389)."""
    if header is None:
        return 0
    tokens = sum(estimate_message(m) for m in (header.message_prefix or ()))
    if header.system is not None:
        tokens += _tokens(header.system) + ROLE_OVERHEAD
    if header.tools:
        tokens += _tokens(json_text(header.tools)) + BLOCK_OVERHEAD
    return tokens


def _node_price(event: Event) -> int:
    message = derive_event_message(event)
    return 0 if message is None else estimate_message(message)


@ensure(lambda log, result: len(result) == len(log.surface.nodes), "TOK-2: one price per surface node", enabled=ENABLED)
def node_prices(log: Log) -> tuple[int, ...]:
    """Return the price of each current surface node's projection, in surface order (the meter's ``nodes``)."""
    return tuple(_node_price(log.events[seq]) for seq in log.surface.nodes)


@ensure(lambda result: result >= 0, "TOK-2: prices are non-negative", enabled=ENABLED)
def surface_tokens(log: Log) -> int:
    """Return the price of the current surface: every node's projection."""
    return sum(node_prices(log))


@dataclass(frozen=True, slots=True)
class Measurement:
    """A pressure measurement: the baseline kind, its tokens, the surface delta, and the total."""

    baseline: str  # 'none', 'estimated' or 'usage'
    baseline_tokens: int
    surface_delta: int
    total: int
    header: EpochHeader | None


@dataclass(frozen=True, slots=True)
class _Anchor:
    header: EpochHeader | None
    surface_tokens: int
    baseline: str
    tokens: int


def _usage_tokens(usage: JsonValue) -> int | None:
    if not isinstance(usage, FrozenMap):
        return None
    parts = [usage.get(k, 0) for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")]
    return sum(p for p in parts if isinstance(p, int) and not isinstance(p, bool))


def _provider_price(log: Log, message: Event) -> int:
    """The price of what the provider sent for ``message``: the message its chunks (``sourceEventSeqs``) assemble to,
    0 when that holds no block (TM:316-349). It differs from the message's own price where the durable content is not
    the assembled one: a tool call a max-tokens finish cut is in the provider's output, and its usage counted it."""
    seqs = message.source_event_seqs
    if seqs is None:
        return _node_price(message)
    content = assemble(tuple(log.events[seq].field("chunk") for seq in seqs if log.events[seq].type == ASSISTANT_CHUNK)).content
    return estimate_message(FrozenMap({"role": "assistant", "content": content})) if content else 0


def _replay(log: Log) -> tuple[EpochHeader | None, _Anchor | None]:
    """Return the latest header and usage anchor the meter's fold holds after ``log``."""
    header: EpochHeader | None = None
    anchor: _Anchor | None = None
    step_start_surface = 0
    for event in log.events:
        if event.type == REQUEST_HEADER:
            header = canonical_header(header_of(event))
        elif event.type == STEP_START:
            step_start_surface = surface_tokens(boundary_log(log, event.seq))
        elif event.type == ASSISTANT_MESSAGE:
            provider = _usage_tokens(event.field("usage"))
            # A usage anchor's surface holds the provider's output, as the usage counted it (TM:231-247).
            surface = step_start_surface + (_provider_price(log, event) if provider is not None and header is not None else _node_price(event))
            estimate = estimate_header(header) + surface
            if provider is not None and header is not None and provider >= estimate:
                anchor = _Anchor(header, surface, "usage", provider)
            else:
                anchor = _Anchor(header, surface, "estimated", estimate)
    return header, anchor


def _same(a: EpochHeader | None, b: EpochHeader | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and header_equals(a, b))


@require(
    lambda override: override is None or is_json_header(override),
    "JSON-1: an override header's tools and prefix are JSON values (estimate_header prices them)",
    enabled=ENABLED,
)
@ensure(lambda result: result.total >= 0, "TOK-2: pressure is never negative", enabled=ENABLED)
@ensure(
    lambda log, result: result.baseline != "estimated" or result.total == estimate_header(result.header) + surface_tokens(log)
    or result.surface_delta != 0,
    "TOK-1: an estimate prices the header (with its prefix) once, plus the surface",
    enabled=ENABLED,
)
def measure(log: Log, override: EpochHeader | None = None) -> Measurement:
    """Return ``ctx.tokenMeter.measure(session, override?)`` over ``log`` (TM:116-147)."""
    latest, anchor = _replay(log)
    header = latest if override is None else canonical_header(override)
    surface = surface_tokens(log)
    if anchor is not None and _same(anchor.header, header):
        delta = surface - anchor.surface_tokens
        return Measurement(anchor.baseline, anchor.tokens, delta, max(0, anchor.tokens + delta), header)
    if header is None and surface == 0:
        return Measurement("none", 0, 0, 0, header)
    tokens = estimate_header(header) + surface
    return Measurement("estimated", tokens, 0, tokens, header)
