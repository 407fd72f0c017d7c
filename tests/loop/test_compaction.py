"""Spec §10.4 — the basic compaction service: its policy, range choice, size rule and pressure listener.

The loop-level behaviour (events, refusals ending turns, the summarizer request) is in
tests/loop/test_loop.py and, against the real harness's recorded sessions, tests/loop/test_harness_sessions.py.
"""

from __future__ import annotations

import pytest
from prefix_model.core.events import COMPACT_END, COMPACT_START
from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.log import EMPTY_LOG
from prefix_model.examples.streams import text_stream
from prefix_model.loop import compaction
from prefix_model.loop.actions import BeginStep, Compose, Dispatch, MountCompaction, PostStep, PreStep, Reply, SendPrompt
from prefix_model.loop.compaction import Compaction, CompactPolicy, balanced_cuts, compact_if_needed, compact_region, select_range
from prefix_model.loop.meter import node_prices

from tests.loop_scripts import LONG_PROMPT, play, start, turn, types

FALLBACK = LlmCallConfig("mock", "mock-model")


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
    return (start(), SendPrompt(0, LONG_PROMPT), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, tool_calls=(echo,)), RunTools(0, ("pong",)), PostStep(0),
            BeginStep(0), PreStep(0), Dispatch(0), Reply(0, text="done"), PostStep(0))  # fmt: skip


@pytest.mark.spec("CMP-4")
def test_cuts_inside_a_tool_call_and_its_result_are_unbalanced() -> None:
    log = play(_tool_turn_world()).session("s1").log  # type: ignore[arg-type]
    # nodes: prompt, assistant tool call, tool result, assistant "done"
    assert balanced_cuts(log) == (True, True, False, True, True)
    assert balanced_cuts(EMPTY_LOG) == (True,)


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


@pytest.mark.spec("CMP-2")
def test_the_bracket_contract_can_fail() -> None:
    log = play((start(), *turn(0, LONG_PROMPT, compose=True))).session("s1").log
    opened = log.append(COMPACT_START, {"turn": 1})
    assert not compaction._ends_bracket(log, Compaction(opened))  # opened, never closed
    assert not compaction._ends_bracket(log, Compaction(log))  # nothing appended, nothing thrown


@pytest.mark.spec("CMP-5")
def test_no_pressure_without_a_routed_header_or_below_the_threshold() -> None:
    world = play((start(), SendPrompt(0, "go")))
    assert compact_if_needed(world.session("s1").log, 1, CompactPolicy(context_window=10), FALLBACK, "s1", ()) == ((), None)
    routed = play((start(), *turn(0, "go", compose=True))).session("s1").log
    assert compact_if_needed(routed, 1, CompactPolicy(context_window=100_000), FALLBACK, "s1", ()) == ((), None)
    assert not compaction._pressed(routed, CompactPolicy(context_window=100_000))  # the CMP-5 contract's predicate can fail


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
