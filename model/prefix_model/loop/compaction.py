"""Spec §10.4 — the basic compaction service (harness CB: packages/compact/compact-basic/src).

The service turns a log into a longer log: ``compact_region`` is ``compactRegion`` (a listener
names a surface range), ``compact_if_needed`` is the post-step pressure listener (the meter names
the range). Both append exactly what the harness appends — ``compact/start``, then either
``compact/summary``, the framed replacement ``user/message`` and ``compact/end``, or
``compact/end {error}`` — and return the summarizer call and the error the service threw. The
summarizer's reply is an input (the adapter's text), as a loop reply is.

The framing texts (the checkpoint preamble and the compaction instruction) are the service's
configuration here: the model does not restate the harness's prose (§23 D-15).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.derive import derive_event_message
from prefix_model.core.events import ASSISTANT_MESSAGE, COMPACT_END, COMPACT_START, COMPACT_SUMMARY, TOOL_RESULT, USER_MESSAGE, Replace
from prefix_model.core.headers import EpochHeader, LlmCallConfig, fold_request_header
from prefix_model.core.json_values import FrozenMap, freeze_object
from prefix_model.core.log import Log
from prefix_model.core.requests import Request
from prefix_model.loop.meter import estimate_message, node_prices

__all__ = [
    "CompactPolicy",
    "Compaction",
    "COMPACT_SOURCE",
    "SUMMARY_OPEN_TAG",
    "SUMMARY_CLOSE_TAG",
    "DEFAULT_SUMMARY",
    "balanced_cuts",
    "corrupt_surface",
    "tail_start",
    "select_range",
    "frame_summary",
    "summary_refusal",
    "compact_region",
    "compact_if_needed",
]

COMPACT_SOURCE = FrozenMap({"kind": "plugin", "plugin": "compact"})  # COMPACT_CHECKPOINT_SOURCE
SUMMARY_OPEN_TAG = "<compacted-summary>"
SUMMARY_CLOSE_TAG = "</compacted-summary>"
DEFAULT_SUMMARY = "summary"  # the summarizer's reply when the action gives none
PURPOSE = "compaction"


def _budgets_ok(window: int | None, budgets: tuple[int, int] | None) -> bool:
    return budgets is None or (window is not None and 0 <= budgets[1] < budgets[0] <= window)


@dataclass(frozen=True, slots=True)
class CompactPolicy:
    """The service's configuration (CB/types.ts, defaults CB/config.ts:19-96) and the routed model's capacity.

    ``context_window`` is what the adapter reports for the routed model; ``None`` (no capacity)
    makes the pressure listener warn and do nothing (CB/index.ts:275-283).
    """

    context_window: int | None = None
    threshold_ratio: float = 0.8
    retain_ratio: float = 0.16
    retain_tokens: int | None = None
    max_tokens: int = 8192
    compaction_retries: int = 1
    summarization_provider: str = ""
    summarization_model: str = ""
    # The model's own words, as long as the harness's (300 UTF-16 units), so the size rule prices both alike (D-15).
    preamble: str = (
        "Checkpoint: the compaction service condensed the conversation before this point to free up context. "
        "Take the summary as settled background, rely on it without repeating it, and go on with the task from "
        "the messages that follow this checkpoint, as though nothing were taken away from the conversation."
    )
    instruction: str = "Summarize the conversation above."

    def __post_init__(self) -> None:
        # What resolveConfig / resolveCompactSpec reject at load (CB/config.ts:67-97, 133-154, 226-275).
        ratios = all(0 < r <= 1 for r in (self.threshold_ratio, self.retain_ratio))
        ints = self.max_tokens >= 1 and self.compaction_retries >= 0 and (self.retain_tokens is None or self.retain_tokens >= 0)
        window = self.context_window is None or self.context_window > 0
        pair = (self.summarization_provider == "") == (self.summarization_model == "")
        if not (ratios and ints and window and pair and self.retain_ratio < self.threshold_ratio):
            raise ValueError("CMP-3: a compaction policy the service would refuse to load")

    @ensure(
        lambda self, result: _budgets_ok(self.context_window, result),
        "CMP-3: pressure needs a known window, and the retained tail is below the threshold, which is at most the window",
        enabled=ENABLED,
    )
    def budgets(self) -> tuple[int, int] | None:
        """Return (threshold tokens, retained-tail tokens) for the routed model, or None when it cannot press."""
        if self.context_window is None:
            return None
        threshold = math.floor(self.context_window * self.threshold_ratio)
        retain = self.retain_tokens if self.retain_tokens is not None else math.floor(self.context_window * self.retain_ratio)
        return (threshold, retain) if retain < threshold else None


@dataclass(frozen=True, slots=True)
class Compaction:
    """One ``compactRegion`` call: the log after it, the summarizer call it sent (and when), what it threw."""

    log: Log
    request: Request | None = None
    sent_at: int = 0  # the log's length when the summarizer call was sent
    error: str | None = None


def _tool_call_delta(log: Log, seq: int) -> int:
    event = log.events[seq]
    if event.type == ASSISTANT_MESSAGE:
        content = event.field("content")
        blocks = content if isinstance(content, tuple) else ()
        return sum(1 for b in blocks if isinstance(b, FrozenMap) and b.get("type") == "tool-call")
    return -1 if event.type == TOOL_RESULT else 0


@ensure(lambda log, result: len(result) == len(log.surface.nodes) + 1 and result[0], "CMP-4: one cut per gap, the head balanced", enabled=ENABLED)
def balanced_cuts(log: Log) -> tuple[bool, ...]:
    """Return, for each cut of the surface (before node 0 … after the last), whether no tool call crosses it."""
    open_calls, cuts = 0, [True]
    for seq in log.surface.nodes:
        open_calls += _tool_call_delta(log, seq)
        cuts.append(open_calls == 0)
    return tuple(cuts)


@ensure(
    lambda log, result: result is None or any(log.events[seq].type == TOOL_RESULT and f"surface seq {seq} " in result for seq in log.surface.nodes),
    "CMP-4: a corrupt surface is named by a tool/result on it",
    enabled=ENABLED,
)
def corrupt_surface(log: Log) -> str | None:
    """Why no balance can be asked of the surface, or None: a ``tool/result`` with no tool call open before it (a
    listener's own replacement can shadow the call and keep its result). The harness's balance folds the whole surface
    and throws at the first such result, whichever cut is asked (CC/tool-pairing.ts:49-68, 77-97)."""
    open_calls = 0
    for seq in log.surface.nodes:
        open_calls += _tool_call_delta(log, seq)
        if open_calls < 0:
            return f"tool-pairing balance: tool/result at surface seq {seq} has no matching tool-call (corrupt surface)"
    return None


@ensure(
    lambda log, retain_tokens, result: result == 0 or sum(node_prices(log)[result:]) >= retain_tokens,
    "CMP-4: the priced tail reaches retainTokens, or it is the whole surface",
    enabled=ENABLED,
)
@ensure(
    lambda log, retain_tokens, result: result >= len(log.surface.nodes) - 1 or sum(node_prices(log)[result + 1 :]) < retain_tokens,
    "CMP-4: the tail stops at the first node that reaches retainTokens (at the threshold, not past it)",
    enabled=ENABLED,
)
def tail_start(log: Log, retain_tokens: int) -> int:
    """The position the kept tail starts at once ``retain_tokens`` are priced from the tail, before it is moved to a balanced cut."""
    prices = node_prices(log)
    keep, accumulated = len(prices), 0
    for index in range(len(prices) - 1, -1, -1):
        accumulated += prices[index]
        keep = index
        if accumulated >= retain_tokens:
            break
    return keep


@ensure(
    lambda log, result: result is None or (result[0] == 0 and balanced_cuts(log)[result[1] + 1] and result[1] < len(log.surface.nodes) - 1),
    "CMP-4: a head-anchored range ending at a balanced cut, leaving a tail",
    enabled=ENABLED,
)
def select_range(log: Log, retain_tokens: int) -> tuple[int, int] | None:
    """Return the surface positions [0, j] that leave a priced tail of at least ``retain_tokens`` (CB/region.ts:34-70)."""
    keep, cuts = tail_start(log, retain_tokens), balanced_cuts(log)
    while keep > 0 and not cuts[keep]:
        keep -= 1
    return None if keep == 0 else (0, keep - 1)


@ensure(
    lambda summary, result: len(result) == len(summary) + 2 and result[1:-1] == summary,
    "CMP-6: the summary blocks sit unchanged between one opening and one closing framing block",
    enabled=ENABLED,
)
def frame_summary(policy: CompactPolicy, summary: tuple[FrozenMap, ...]) -> tuple[FrozenMap, ...]:
    """Return the replacement message's content: preamble and open tag, the summary blocks, the close tag."""
    return (_text(f"{policy.preamble}\n\n{SUMMARY_OPEN_TAG}"),) + summary + (_text(SUMMARY_CLOSE_TAG),)


def _text(text: str) -> FrozenMap:
    return FrozenMap({"type": "text", "text": text})


def _target(log: Log, policy: CompactPolicy, fallback: LlmCallConfig) -> tuple[str, str] | None:
    """The summarizer's provider and model: configured, else the routed header's, else the agent's (CB/summarizer.ts:111-121)."""
    if policy.summarization_provider:
        return policy.summarization_provider, policy.summarization_model
    header = fold_request_header(log.events)
    if header is not None:
        return header.config.provider, header.config.model
    return (fallback.provider, fallback.model) if fallback.provider and fallback.model else None


def _summarizer_request(log: Log, shadowed: tuple[int, ...], policy: CompactPolicy, target: tuple[str, str], session_id: str) -> Request:
    """The one-shot call: the routed header's system and tools, its prefix and the region, then the instruction (CB/region.ts:188-204)."""
    header = fold_request_header(log.events)
    region = tuple(m for m in (derive_event_message(log.events[s]) for s in shadowed) if m is not None)
    prefix = () if header is None else (header.message_prefix or ())
    instruction = FrozenMap({"role": "user", "content": (_text(policy.instruction),)})
    config = LlmCallConfig(target[0], target[1], max_tokens=policy.max_tokens)
    envelope = EpochHeader(config, None if header is None else header.system, None if header is None else header.tools)
    return Request(envelope, prefix + region + (instruction,), session_id, PURPOSE)


def _unbalanced(log: Log, i: int, j: int) -> str | None:
    nodes, cuts = log.surface.nodes, balanced_cuts(log)
    corrupt = corrupt_surface(log)
    if corrupt is not None:
        return corrupt
    if not cuts[i]:
        return f"compactRegion: start seq {nodes[i]} is not a balanced boundary (would split a step's tool-call/result pair)"
    if not cuts[j + 1]:
        return f"compactRegion: end seq {nodes[j]} is not a balanced boundary (would split a step, or the step is still open)"
    return None


def _ends_bracket(log: Log, result: Compaction) -> bool:
    """CMP-2: a compaction that opened its bracket closed it; one that threw before it appended nothing."""
    added = result.log.events[len(log.events) :]
    if not added:
        return result.error is not None
    return added[0].type == COMPACT_START and added[-1].type == COMPACT_END and (result.error is None) == (added[-1].field("error") is None)


@require(lambda log, i, j: 0 <= i <= j < len(log.surface.nodes), "SURF-5: the range is current surface positions in order", enabled=ENABLED)
@ensure(lambda log, result: _ends_bracket(log, result), "CMP-2: compact/start … compact/end, the error on both sides or neither", enabled=ENABLED)
def compact_region(
    log: Log, turn: int, i: int, j: int, reply: str, policy: CompactPolicy, fallback: LlmCallConfig, session_id: str
) -> Compaction:
    """Compact surface positions [i, j] of ``log`` inside open turn ``turn``, the summarizer replying ``reply`` (CB/region.ts:82-176)."""
    thrown = _unbalanced(log, i, j)
    if thrown is not None:
        return Compaction(log, error=thrown)
    shadowed = log.surface.nodes[i : j + 1]
    start_seq = len(log.events)
    opened = log.append(COMPACT_START, {"turn": turn})
    tokens = sum(node_prices(log)[i : j + 1])
    target = _target(log, policy, fallback)
    if target is None:
        thrown = "no provider/model available for summarization: set both BasicCompactConfig summarization fields, route one request, or set both AgentOptions fields"
        return Compaction(opened.append(COMPACT_END, {"turn": turn, "error": thrown}), error=thrown)
    request = _summarizer_request(log, shadowed, policy, target, session_id)
    sent = len(opened.events)
    thrown = summary_refusal(policy, reply, tokens)
    if thrown is not None:
        return Compaction(opened.append(COMPACT_END, {"turn": turn, "error": thrown}), request, sent, thrown)
    summary = (_text(reply),)
    data = {
        "summary": summary, "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]}, "shadowedSeqs": shadowed,
        "shadowedTokenCount": tokens, "provider": target[0], "model": target[1], "maxTokens": policy.max_tokens,
    }  # fmt: skip
    done = opened.append(COMPACT_SUMMARY, data)
    message = freeze_object({"content": frame_summary(policy, summary), "source": COMPACT_SOURCE})
    sources = (start_seq, start_seq + 1) + shadowed
    done = done.append(USER_MESSAGE, message, surface_op=Replace(shadowed[0], shadowed[-1]), source_event_seqs=sources)
    return Compaction(done.append(COMPACT_END, {"turn": turn}), request, sent)


# What JavaScript's String.prototype.trim removes (ECMA-262 WhiteSpace and LineTerminator): the summarizer's blank test
# is `text.trim().length > 0` (CB/summarizer.ts:148-150). Python's str.strip differs: it strips U+001C-U+001F and
# U+0085, which trim keeps, and keeps U+FEFF, which trim strips.
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _framed_price(policy: CompactPolicy, reply: str) -> int:
    """The price of the replacement message a summary ``reply`` would land as."""
    return estimate_message(freeze_object({"role": "user", "content": frame_summary(policy, (_text(reply),))}))


@ensure(lambda reply, result: bool(reply.strip(JS_WHITESPACE)) or result is not None, "CMP-6: a reply with no non-blank text is refused", enabled=ENABLED)
@ensure(
    lambda policy, reply, shadowed_tokens, result: result is not None or _framed_price(policy, reply) < shadowed_tokens,
    "CMP-6: a summary taken is priced, framed, below the shadowed content",
    enabled=ENABLED,
)
def summary_refusal(policy: CompactPolicy, reply: str, shadowed_tokens: int) -> str | None:
    """What the service throws about a summary: none of it is text, or framed it is not smaller (CB/region.ts:134-143)."""
    if not reply.strip(JS_WHITESPACE):
        return "summarization produced no text summary content"
    framed = _framed_price(policy, reply)
    if framed >= shadowed_tokens:
        return f"summary is not smaller than the shadowed content ({framed} estimated framed tokens >= {shadowed_tokens})"
    return None


def _routed(log: Log) -> bool:
    header = fold_request_header(log.events)
    return header is not None and bool(header.config.provider) and bool(header.config.model)


def _pressed(log: Log, policy: CompactPolicy, pressure: Callable[[Log], int]) -> bool:
    budgets = policy.budgets()
    return budgets is not None and pressure(log) >= budgets[0]


@ensure(
    lambda log, policy, pressure, result: result[0] == () or _pressed(log, policy, pressure),
    "CMP-5: the service compacts only under pressure: the measured total at or above the threshold",
    enabled=ENABLED,
)
def compact_if_needed(
    log: Log,
    turn: int,
    policy: CompactPolicy,
    fallback: LlmCallConfig,
    session_id: str,
    replies: tuple[str, ...],
    pressure: Callable[[Log], int],
) -> tuple[tuple[Compaction, ...], str | None]:
    """Run the post-step pressure listener over ``log``: its compactions in order, and what it threw (CB/index.ts:240-313).

    ``pressure`` is the meter the listener asks, the design's (``transitions._pressure``: ``Semantics.pressure``, the
    harness's ``measure(session).total``): what it decides on, before and after each compaction. What it throws is logged by the listener and the turn goes on (CB/index.ts:143-153).
    """
    budgets = policy.budgets()
    if not _routed(log):
        return (), None
    if budgets is None:
        return (), "compact-basic: the routed model has no usable context capacity"
    threshold, retain = budgets
    total = pressure(log)
    if total < threshold:
        return (), None
    runs: list[Compaction] = []
    for attempt in range(policy.compaction_retries + 1):
        corrupt = corrupt_surface(log) if tail_start(log, retain) > 0 else None  # the cut is moved only from past the head
        if corrupt is not None:
            return tuple(runs), corrupt
        positions = select_range(log, retain)
        if positions is None and not runs:
            return (), None
        if positions is None:
            break  # a compaction landed and nothing more can be cut: the threshold error below
        reply = replies[attempt] if attempt < len(replies) else DEFAULT_SUMMARY
        run = compact_region(log, turn, positions[0], positions[1], reply, policy, fallback, session_id)
        runs.append(run)
        log = run.log
        if run.error is not None:
            return tuple(runs), run.error
        total = pressure(log)
        if total < threshold:
            return tuple(runs), None
    attempts = policy.compaction_retries + 1
    return tuple(runs), f"compaction still above threshold after {attempts} compaction attempts ({total} estimated tokens >= threshold {threshold})"

