"""Spec §10.4 — the basic compaction service: its policy, range choice, size rule and pressure listener.

The loop-level behaviour (events, refusals ending turns, the summarizer request) is in
tests/loop/test_loop.py and, against the real harness's recorded sessions, tests/loop/test_harness_sessions.py.
"""

from __future__ import annotations

import icontract
import pytest
from prefix_model.core.events import APPEND, COMPACT_END, COMPACT_START, COMPACT_SUMMARY
from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import freeze_object
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.examples.streams import text_stream
from prefix_model.loop import compaction
from prefix_model.loop.actions import BeginStep, Compose, Dispatch, MountCompaction, PlainReplace, PostStep, PreStep, Reply, SendPrompt
from prefix_model.loop.compaction import (
    Compaction, CompactPolicy, balanced_cuts, compact_if_needed, compact_region, corrupt_surface, frame_summary, select_range, summary_refusal,
    tail_start,
)  # fmt: skip
from prefix_model.loop.meter import estimate_message, measure, node_prices

from tests.loop_scripts import LONG_PROMPT, play, start, tool, turn, types

FALLBACK = LlmCallConfig("mock", "mock-model")

def HARNESS_METER(log: Log) -> int:
    """The meter the loop hands the listener under the harness's semantics: ``measure(session).total`` (TM:116-147)."""
    return measure(log).total


@pytest.mark.spec("CMP-3")
@pytest.mark.parametrize(
    "fields",
    [
        {"threshold_ratio": 0.0},
        {"threshold_ratio": 1.5},
        {"retain_ratio": 0.9},  # not below the threshold ratio
        {"max_tokens": 0},
        {"compaction_retries": -1},
        {"retain_tokens": -1},
        {"context_window": 0},
        {"summarization_provider": "p"},  # without its model
    ],
)
def test_a_policy_the_service_would_refuse_to_load_is_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="CMP-3"):
        CompactPolicy(**fields)  # type: ignore[arg-type]


@pytest.mark.spec("CMP-3")
def test_budgets_scale_with_the_window_and_pressure_is_off_without_one() -> None:
    assert CompactPolicy(context_window=1000).budgets() == (800, 160)
    assert CompactPolicy(context_window=1001, retain_tokens=50).budgets() == (800, 50)
    assert CompactPolicy().budgets() is None
    assert CompactPolicy(context_window=100, retain_tokens=80).budgets() is None  # the tail is not below the threshold


def _tool_turn_world() -> tuple[object, ...]:
    from prefix_model.loop.actions import RunTools

    echo = ("c1", "echo", '{"text":"ping"}')
    return (start(tools=(tool("echo"),)), SendPrompt(0, LONG_PROMPT), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=(echo,)), RunTools(0, ("pong",)), PostStep(0),
            BeginStep(0), PreStep(0), Dispatch(0), Reply(0, text="done"), PostStep(0))  # fmt: skip


@pytest.mark.spec("CMP-4")
def test_cuts_inside_a_tool_call_and_its_result_are_unbalanced() -> None:
    log = play(_tool_turn_world()).session("s1").log  # type: ignore[arg-type]
    # nodes: prompt, assistant tool call, tool result, assistant "done"
    assert balanced_cuts(log) == (True, True, False, True, True)
    assert balanced_cuts(EMPTY_LOG) == (True,)


@pytest.mark.spec("CMP-4")
def test_a_result_whose_call_a_replacement_shadowed_makes_the_surface_corrupt_for_every_balance() -> None:
    # Found through the harness (D-20): a listener's own replacement shadows the assistant message holding the call.
    world = play((SendPrompt(0, "again"), BeginStep(0), PreStep(0, replace=PlainReplace(1, 1, "mine"))), play(_tool_turn_world()))  # type: ignore[arg-type]
    log = world.session("s1").log
    result_seq = log.surface.nodes[2]
    corrupt = f"tool-pairing balance: tool/result at surface seq {result_seq} has no matching tool-call (corrupt surface)"
    assert corrupt_surface(log) == corrupt and corrupt_surface(play(_tool_turn_world()).session("s1").log) is None  # type: ignore[arg-type]
    # compactRegion throws it before it writes anything, even for a range whose own cuts look balanced.
    assert compact_region(log, 2, 0, 0, "sum", CompactPolicy(), FALLBACK, "s1") == Compaction(log, error=corrupt)
    # Pressure throws it while it moves its cut (logged; the turn goes on), and never when the cut is the head.
    assert compact_if_needed(log, 2, CompactPolicy(context_window=120), FALLBACK, "s1", (), HARNESS_METER) == ((), corrupt)
    assert compact_if_needed(log, 2, CompactPolicy(context_window=120, retain_tokens=50), FALLBACK, "s1", (), HARNESS_METER) == ((), None)


@pytest.mark.spec("CMP-4")
def test_the_range_is_head_anchored_keeps_a_priced_tail_and_moves_to_a_balanced_cut() -> None:
    log = play(_tool_turn_world()).session("s1").log  # type: ignore[arg-type]
    prices = node_prices(log)
    assert select_range(log, prices[-1]) == (0, 2)  # the reply alone is the tail
    # A tail that reaches into the tool result keeps its call too: the cut moves before the call.
    assert select_range(log, prices[-1] + 1) == (0, 0)
    assert select_range(log, sum(prices)) is None  # the whole surface is the tail
    assert select_range(log, 0) == (0, 2)  # the last node always stays
    assert select_range(EMPTY_LOG, 0) is None


@pytest.mark.spec("CMP-6")
def test_a_blank_summary_is_refused_after_the_bracket_opened() -> None:
    world = play((start(), *turn(0, LONG_PROMPT, compose=True)))
    log = world.session("s1").log
    run = compact_region(log, 1, 0, 1, "  \n", CompactPolicy(), FALLBACK, "s1")
    assert [e.type for e in run.log.events[len(log.events) :]] == [COMPACT_START, COMPACT_END]
    assert run.error == "summarization produced no text summary content" and run.request is not None


@pytest.mark.spec("CMP-6")
def test_a_summary_is_blank_as_javascript_s_trim_finds_it_not_as_python_s_strip() -> None:
    # The harness tests `text.trim().length > 0` (CB/summarizer.ts:148-150); node's trim removes U+FEFF and keeps
    # U+001C-U+001F and U+0085, where str.strip does the reverse (both read off node 24 and CPython 3.11).
    blank = "summarization produced no text summary content"
    assert summary_refusal(CompactPolicy(), "\ufeff", 1000) == blank
    assert summary_refusal(CompactPolicy(), "\u3000\u2028\xa0", 1000) == blank  # white space both languages trim
    for kept in ("\x1c", "\x1d", "\x1e", "\x1f", "\x85"):
        assert kept.strip() == "" and summary_refusal(CompactPolicy(), kept, 1000) is None


@pytest.mark.spec("CMP-2")
def test_the_bracket_contract_can_fail() -> None:
    log = play((start(), *turn(0, LONG_PROMPT, compose=True))).session("s1").log
    opened = log.append(COMPACT_START, {"turn": 1})
    assert not compaction._ends_bracket(log, Compaction(opened))  # opened, never closed
    assert not compaction._ends_bracket(log, Compaction(log))  # nothing appended, nothing thrown


@pytest.mark.spec("CMP-5")
def test_no_pressure_without_a_routed_header_or_below_the_threshold() -> None:
    world = play((start(), SendPrompt(0, "go")))
    assert compact_if_needed(world.session("s1").log, 1, CompactPolicy(context_window=10), FALLBACK, "s1", (), HARNESS_METER) == ((), None)
    routed = play((start(), *turn(0, "go", compose=True))).session("s1").log
    assert compact_if_needed(routed, 1, CompactPolicy(context_window=100_000), FALLBACK, "s1", (), HARNESS_METER) == ((), None)
    assert not compaction._pressed(routed, CompactPolicy(context_window=100_000), HARNESS_METER)  # the CMP-5 contract's predicate can fail


@pytest.mark.spec("CMP-5", "TOK-1")
def test_the_listener_decides_by_the_meter_it_is_given_so_a_misprice_is_seen_on_the_wire() -> None:
    # A design's meter (Semantics.pressure) is what the service asks: one that overprices compacts where the harness's
    # does not, one that underprices leaves alone what the harness's compacts (loop/variants.py's meter variants).
    pressing = Reply(0, text="b" * 800)
    log = play((start(), SendPrompt(0, "a" * 800), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), pressing)).session("s1").log
    roomy, tight = CompactPolicy(context_window=100_000, retain_tokens=20), CompactPolicy(context_window=500)
    assert compact_if_needed(log, 1, roomy, FALLBACK, "s1", (), HARNESS_METER) == ((), None)
    runs, _ = compact_if_needed(log, 1, roomy, FALLBACK, "s1", (), lambda log: 10**9)
    assert runs and runs[0].log.events[len(log.events)].type == COMPACT_START
    assert compact_if_needed(log, 1, tight, FALLBACK, "s1", (), HARNESS_METER)[0]
    assert compact_if_needed(log, 1, tight, FALLBACK, "s1", (), lambda log: 0) == ((), None)


@pytest.mark.spec("D-16", "CMP-5")
def test_a_post_step_listener_whose_range_pressure_removed_calls_nothing() -> None:
    world = play((start(), *turn(0, "a" * 400, "b" * 400, compose=True), MountCompaction(CompactPolicy(context_window=1000))))
    pressing = Reply(0, stream=text_stream("ok", usage={"inputTokens": 800, "outputTokens": 10}))
    world = play((SendPrompt(0, "c" * 800), BeginStep(0), PreStep(0), Dispatch(0), pressing), world)
    assert len(world.session("s1").log.surface.nodes) == 4
    after = play((PostStep(0, compact=(2, 3)),), world)
    # Pressure compacted the first two nodes; positions 2..3 no longer exist, so the listener calls nothing.
    assert types(after).count(COMPACT_START) == 1 and len(after.session("s1").log.surface.nodes) == 3


@pytest.mark.spec("CMP-3", "CMP-6")
def test_the_policy_budgets_and_the_framing_state_their_rules() -> None:
    import icontract
    from prefix_model.core.json_values import FrozenMap

    from proofs.bugs_detected import broken_twin

    policy = CompactPolicy(context_window=1000)
    assert policy.budgets() == (800, 160)
    swapped = broken_twin(CompactPolicy.budgets, lambda self: (160, 800))
    with pytest.raises(icontract.ViolationError, match="CMP-3: pressure needs a known window, and the retained tail is below the threshold"):
        swapped(policy)
    blind = broken_twin(CompactPolicy.budgets, lambda self: (1, 0))
    with pytest.raises(icontract.ViolationError, match="CMP-3: pressure needs a known window"):
        blind(CompactPolicy())
    summary = (FrozenMap({"type": "text", "text": "s"}),)
    assert compaction.frame_summary(policy, summary)[1:-1] == summary
    unframed = broken_twin(compaction.frame_summary, lambda policy, summary: summary)
    with pytest.raises(icontract.ViolationError, match="CMP-6: the summary blocks sit unchanged between one opening and one closing framing block"):
        unframed(policy, summary)


@pytest.mark.spec("CMP-3")
@pytest.mark.parametrize(
    "fields",
    [
        {"retain_ratio": 0.0},  # each ratio is above 0, the retained one too
        {"retain_ratio": -0.1},
    ],
)
def test_a_policy_retains_a_positive_share(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="CMP-3"):
        CompactPolicy(**fields)  # type: ignore[arg-type]


@pytest.mark.spec("CMP-3")
def test_the_smallest_policy_the_service_loads() -> None:
    """The edges CMP-3 allows: a window of one token, a retained tail of none, no retries, one summary token."""
    assert CompactPolicy(context_window=1, retain_tokens=0, compaction_retries=0, max_tokens=1).budgets() is None  # threshold 0: no tail below it
    assert CompactPolicy(context_window=100, retain_tokens=0).budgets() == (80, 0)


@pytest.mark.spec("CMP-4")
def test_a_range_never_ends_between_a_call_and_its_result_even_at_the_head() -> None:
    """A surface whose first node is a tool call: the cut after it is unbalanced, so no range ends there."""
    played = play(_tool_turn_world()).session("s1").log  # type: ignore[arg-type]
    headless = EMPTY_LOG
    for seq in played.surface.nodes[1:]:  # the call, its result, the reply: the prompt left out
        headless = headless.append(played.events[seq].type, played.events[seq].data, surface_op=APPEND)
    prices = node_prices(headless)
    assert balanced_cuts(headless) == (True, False, True, True)
    assert select_range(headless, prices[-1]) == (0, 1)
    assert select_range(headless, prices[-1] + 1) is None  # the tail reaches the result, so it keeps its call: nothing is left to compact


def _summarizer_of(log: Log, policy: CompactPolicy, fallback: LlmCallConfig) -> tuple[str, str]:
    """Compact the first node of ``log``; return the summarizer request's (provider, model), checked against the summary event's."""
    run = compact_region(log, 1, 0, 0, "short", policy, fallback, "s1")
    assert run.error is None and run.request is not None
    summary = next(e for e in run.log.events if e.type == COMPACT_SUMMARY)
    assert (summary.field("provider"), summary.field("model")) == (run.request.header.config.provider, run.request.header.config.model)
    return run.request.header.config.provider, run.request.header.config.model


@pytest.mark.spec("CMP-2")
def test_the_summarizer_is_the_configured_model_else_the_routed_one_else_the_agents() -> None:
    routed = play((start(), *turn(0, LONG_PROMPT, compose=True))).session("s1").log  # routed mock / mock-model
    unrouted = play((start(), SendPrompt(0, LONG_PROMPT))).session("s1").log  # no request yet: no header
    agent = LlmCallConfig("agent-provider", "agent-model")
    configured = CompactPolicy(summarization_provider="summary-provider", summarization_model="summary-model")
    assert _summarizer_of(routed, configured, agent) == ("summary-provider", "summary-model")
    assert _summarizer_of(routed, CompactPolicy(), agent) == ("mock", "mock-model")
    assert _summarizer_of(unrouted, CompactPolicy(), agent) == ("agent-provider", "agent-model")


@pytest.mark.spec("CMP-2")
def test_without_a_summarizer_model_the_bracket_closes_with_the_error() -> None:
    unrouted = play((start(), SendPrompt(0, LONG_PROMPT))).session("s1").log
    run = compact_region(unrouted, 1, 0, 0, "short", CompactPolicy(), LlmCallConfig("agent-provider", ""), "s1")
    assert run.request is None and run.error is not None and run.error.startswith("no provider/model available for summarization")
    added = run.log.events[len(unrouted.events) :]
    assert [e.type for e in added] == [COMPACT_START, COMPACT_END] and added[-1].field("error") == run.error


@pytest.mark.spec("CMP-4")
def test_a_range_that_starts_inside_a_tool_call_is_refused_before_the_bracket() -> None:
    log = play(_tool_turn_world()).session("s1").log  # type: ignore[arg-type]
    run = compact_region(log, 1, 2, 3, "short", CompactPolicy(), FALLBACK, "s1")  # position 2 is the call's result
    result_seq = log.surface.nodes[2]
    assert run.log == log and run.request is None
    assert run.error == f"compactRegion: start seq {result_seq} is not a balanced boundary (would split a step's tool-call/result pair)"


@pytest.mark.spec("CMP-5")
def test_pressure_is_the_threshold_not_the_retained_tail() -> None:
    """CMP-5's predicate: a total at or above the tail but below the threshold is no pressure."""
    routed = play((start(), *turn(0, LONG_PROMPT, compose=True))).session("s1").log
    total = measure(routed).total
    policy = CompactPolicy(context_window=2 * total)
    threshold, retain = policy.budgets() or (0, 0)
    assert retain <= total < threshold and not compaction._pressed(routed, policy, HARNESS_METER)
    assert compaction._pressed(routed, CompactPolicy(context_window=total), HARNESS_METER)


@pytest.mark.spec("CMP-5", "CMP-4")
def test_pressure_with_nothing_to_cut_compacts_nothing_and_throws_nothing() -> None:
    routed = play((start(), *turn(0, LONG_PROMPT, compose=True))).session("s1").log
    total, prices = measure(routed).total, node_prices(routed)
    retain = sum(prices[1:]) + 1  # a tail that reaches the first node: the whole surface
    policy = CompactPolicy(context_window=total, retain_tokens=retain)
    assert compaction._pressed(routed, policy, HARNESS_METER) and select_range(routed, retain) is None
    assert compact_if_needed(routed, 1, policy, FALLBACK, "s1", (), HARNESS_METER) == ((), None)


@pytest.mark.spec("CMP-5")
def test_pressure_still_above_the_threshold_throws_with_the_attempts_it_made() -> None:
    """What the listener logs (CB/index.ts:143-153); the loop goes on, so only the service's answer shows it."""
    pressing = Reply(0, text="b" * 800, stream=text_stream("b" * 800, usage={"inputTokens": 900, "outputTokens": 800}))
    log = play((start(), SendPrompt(0, "a" * 800), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), pressing)).session("s1").log
    runs, thrown = compact_if_needed(log, 1, CompactPolicy(context_window=1000, compaction_retries=0), FALLBACK, "s1", (), HARNESS_METER)
    after = measure(runs[-1].log).total
    assert len(runs) == 1 and runs[0].error is None
    assert thrown == f"compaction still above threshold after 1 compaction attempts ({after} estimated tokens >= threshold 800)"


@pytest.mark.spec("CMP-4")
def test_the_kept_tail_stops_at_the_node_that_reaches_retain_tokens_and_the_contract_can_fail() -> None:
    from proofs.bugs_detected import under_contracts_of

    log = play(_tool_turn_world()).session("s1").log  # type: ignore[arg-type]
    prices, last = node_prices(log), len(log.surface.nodes) - 1
    assert tail_start(log, prices[-1]) == last  # the last node reaches the tokens exactly: it alone is the tail
    assert tail_start(log, prices[-1] + 1) == last - 1  # one token more takes in the node before it

    @under_contracts_of(tail_start)
    def past_retain(log: Log, retain_tokens: int) -> int:  # priced until past the tokens, not until it reaches them
        return tail_start(log, retain_tokens + 1)

    with pytest.raises(icontract.ViolationError, match="CMP-4: the tail stops at the first node"):
        past_retain(log, prices[-1])


@pytest.mark.spec("CMP-6")
def test_a_summary_priced_exactly_at_the_shadowed_content_is_refused_and_the_contract_can_fail() -> None:
    from proofs.bugs_detected import under_contracts_of

    policy = CompactPolicy()
    framed = estimate_message(freeze_object({"role": "user", "content": frame_summary(policy, (freeze_object({"type": "text", "text": "summary"}),))}))
    assert summary_refusal(policy, "summary", framed) == f"summary is not smaller than the shadowed content ({framed} estimated framed tokens >= {framed})"
    assert summary_refusal(policy, "summary", framed + 1) is None

    @under_contracts_of(summary_refusal)
    def equal_taken(policy: CompactPolicy, reply: str, shadowed_tokens: int) -> str | None:  # takes it at equality
        return summary_refusal(policy, reply, shadowed_tokens + 1)

    with pytest.raises(icontract.ViolationError, match="CMP-6: a summary taken is priced, framed, below"):
        equal_taken(policy, "summary", framed)
