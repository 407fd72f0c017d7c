"""§23 — each place where the model chose between the note and the code, shown in behaviour."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prefix_model.core.contracts import RejectedError
from prefix_model.core.derive import derive_messages
from prefix_model.core.headers import CHANGE, EpochHeader, LlmCallConfig, fold_request_header, header_equals
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.request_log import record_request_header
from prefix_model.core.requests import build_request, request_to_json
from prefix_model.loop.actions import Dispatch, SendPrompt
from prefix_model.loop.transitions import enabled

from tests.loop_scripts import play, start, step


def frozen_list(value: object) -> tuple[JsonValue, ...]:
    frozen = freeze(value)
    assert isinstance(frozen, tuple)
    return frozen


PREFIX = frozen_list([{"role": "user", "content": [{"type": "text", "text": "catalog"}]}])


def opened() -> Log:
    log = EMPTY_LOG.append("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}})
    return log.append("user/message", {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}, surface_op="append")


def rule_of_append(log: Log, type: str, data: object, **markers: object) -> str:
    with pytest.raises(RejectedError) as caught:
        log.append(type, data, **markers)  # type: ignore[arg-type]
    return caught.value.rejection.rule


@pytest.mark.spec("D-1", "LOG-9")
def test_context_message_is_an_unknown_log_only_record() -> None:
    log = opened().append("context/message", {"content": [{"type": "text", "text": "ctx"}]})
    assert derive_messages(log) == derive_messages(opened())


@pytest.mark.spec("D-2", "HDR-13", "LOG-7")
def test_there_is_no_start_reason_and_no_delta_event() -> None:
    header = {"config": {"provider": "p", "model": "m"}}
    assert rule_of_append(opened(), "request/header", {"header": header, "reason": "start"}) == "HDR-13"
    assert rule_of_append(opened(), "request/header-delta", {"delta": {}}) == "LOG-7"


@pytest.mark.spec("D-3", "HDR-10")
def test_every_change_snapshot_repeats_the_instance_prefix() -> None:
    first = EpochHeader(LlmCallConfig("p", "m"), "sys v1", None, PREFIX)
    second = EpochHeader(LlmCallConfig("p", "m"), "sys v2", None, PREFIX)
    log = record_request_header(record_request_header(opened(), False, first), True, second)
    change = log.events[-1]
    assert change.field("reason") == CHANGE
    header = change.field("header")
    assert isinstance(header, FrozenMap) and json_text(header["messagePrefix"]) == json_text(PREFIX)


@pytest.mark.spec("D-4", "LOG-5")
def test_a_surface_event_without_a_marker_is_rejected_not_scanned() -> None:
    assert rule_of_append(opened(), "user/message", {"content": [], "source": {"kind": "user"}}) == "LOG-5"


@pytest.mark.spec("D-5", "LOG-11", "HDR-1")
def test_the_model_checks_typed_shapes_the_harness_runtime_does_not() -> None:
    assert rule_of_append(opened(), "turn/end", [1, 2]) == "LOG-11"
    bad_system = {"header": {"config": {"provider": "p", "model": "m"}, "system": 5}, "reason": "initial"}
    assert rule_of_append(opened(), "request/header", bad_system) == "HDR-1"
    # Element shapes of tools and messagePrefix stay unchecked, as in the harness.
    odd = {"header": {"config": {"provider": "p", "model": "m"}, "tools": [1], "messagePrefix": ["x"]}, "reason": "initial"}
    assert opened().append("request/header", odd).seq == 3


@pytest.mark.spec("D-5", "HDR-2", "LOOP-1")
def test_an_empty_reasoning_effort_from_a_listener_is_refused_where_the_harness_types_allow_it() -> None:
    # The harness records it only on a route with no adapter, in a log its own load refuses (§23, D-5).
    actions = (start(), SendPrompt(0, "hello"), *step(0, compose=True))
    world = play(actions[: next(n for n, a in enumerate(actions) if isinstance(a, Dispatch))])
    assert enabled(world, Dispatch(0, LlmCallConfig("mock", "mock-model", reasoning_effort="max")))
    assert not enabled(world, Dispatch(0, LlmCallConfig("mock", "mock-model", reasoning_effort="")))


@pytest.mark.spec("D-7", "REQ-1")
def test_requests_take_provider_and_effort_from_the_header_too() -> None:
    header = EpochHeader(LlmCallConfig("prov", "mod", reasoning_effort="max"))
    request = request_to_json(build_request(header, ()))
    assert (request["provider"], request["reasoningEffort"]) == ("prov", "max")


@pytest.mark.spec("D-8", "HDR-6", "JSON-4")
def test_header_equality_is_key_order_sensitive_in_javascript_order() -> None:
    a = frozen_list([{"role": "user", "content": []}])
    b = frozen_list([{"content": [], "role": "user"}])
    config = LlmCallConfig("p", "m")
    assert not header_equals(EpochHeader(config, message_prefix=a), EpochHeader(config, message_prefix=b))
    # Index-like keys are ordered as JavaScript orders them, whatever the insertion order.
    assert json_text(freeze({"b": 1, "1": 2})) == json_text(freeze({"1": 2, "b": 1})) == '{"1":2,"b":1}'


@pytest.mark.spec("D-9", "LOG-3")
def test_model_built_events_carry_the_callers_time_or_zero() -> None:
    log = opened()
    assert [e.time for e in log.events] == [0, 0]
    assert log.append("todo/write", {"todos": []}, time=42).events[-1].time == 42
    assert fold_request_header(log.events) is None


@pytest.mark.spec("D-11", "PFX-8")
def test_listener_contributions_are_lossless_json_messages() -> None:
    from prefix_model.core.json_values import is_json_value
    from prefix_model.loop.waterfall import compose
    from prefix_model.loop.world import Listener, Prepend, text_message

    listener = Listener("catalog", None, (Prepend((text_message("<prefix catalog v1>"),)),))
    product = compose((listener,), "main").product
    assert product is not None and is_json_value(product)
    assert json_text(product) == '[{"role":"user","content":[{"type":"text","text":"<prefix catalog v1>"}]}]'


@pytest.mark.spec("D-12", "TOK-3")
def test_the_meter_prices_the_assistant_message_not_its_chunks() -> None:
    from prefix_model.loop.meter import estimate_header, estimate_message, measure, surface_tokens

    header = EpochHeader(LlmCallConfig("p", "m"), "sys", None, PREFIX)
    log = record_request_header(opened().append("step/start", {"turn": 1, "step": 1}), False, header)
    # One chunk says "x"; the message the loop assembled says "a longer answer": the message is priced.
    log = log.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}})
    answer = {"turn": 1, "step": 1, "content": [{"type": "text", "text": "a longer answer"}], "provenance": {"provider": "p", "model": "m"}}
    log = log.append("assistant/message", answer, surface_op="append", source_event_seqs=(log.seq - 1,))
    measured = measure(log)
    assert measured.total == estimate_header(fold_request_header(log.events)) + surface_tokens(log)
    assert surface_tokens(log) == estimate_message(freeze({"content": [{"type": "text", "text": "hi"}]})) + estimate_message(
        freeze({"content": [{"type": "text", "text": "a longer answer"}]})
    )


@pytest.mark.spec("D-14", "STRM-3")
def test_a_reply_given_as_text_is_the_shortest_stream_of_its_message() -> None:
    from prefix_model.loop.actions import Reply, SendPrompt
    from prefix_model.loop.stream import assemble

    from tests.loop_scripts import play, start, step

    actions = (start(), SendPrompt(0, "go"), *step(0, Reply(0, text="hey", tool_calls=(("c1", "echo", "{}"),)), compose=True))
    world = play(actions[: next(n for n, a in enumerate(actions) if isinstance(a, Reply)) + 1])
    chunks = tuple(e.field("chunk") for e in world.session("s1").log.events if e.type == "assistant/chunk")
    assert [c["type"] for c in chunks if isinstance(c, FrozenMap)] == ["block-end", "block-end", "finish"]
    message = [e for e in world.session("s1").log.events if e.type == "assistant/message"][0]
    assert assemble(chunks).content == message.field("content") and "usage" not in message.data  # type: ignore[operator]


@pytest.mark.spec("D-6", "PFX-4")
def test_the_prefix_is_composed_after_the_steps_steering_drain_and_a_cancelled_one_moves_to_a_later_turn() -> None:
    from prefix_model.loop.actions import BeginStep, Cancel, Compose, Register, Steer

    from tests.loop_scripts import events_of, prepend, types

    opened = play((start(), Register(prepend("catalog", "catalog")), SendPrompt(0, "hi"), Steer(0, "also")))
    assert not enabled(opened, Compose(0)), "not composed at turn start"
    begun = play((BeginStep(0),), opened)
    assert types(begun)[-1] == "steering/message" and enabled(begun, Compose(0))
    cancelled = play((Cancel(0), Compose(0)), begun)  # the cancel lands while the waterfall is awaited
    assert [e.field("reason") for e in events_of(cancelled) if e.type == "turn/end"] == [freeze({"kind": "aborted"})]
    again = play((SendPrompt(0, "again"), BeginStep(0)), cancelled)
    assert enabled(again, Compose(0)), "the next turn's step 1 composes"


# --- the chapter itself: every divergence numbered, the numbers contiguous or withdrawn ---

SPEC_TEXT = (Path(__file__).resolve().parent.parent / "spec" / "SPEC.md").read_text(encoding="utf-8")


def divergence_chapter(text: str = SPEC_TEXT) -> str:
    start = text.index("\n## 23. ")
    end = text.find("\n## ", start + 1)  # the last chapter: none follows
    return text[start : end if end >= 0 else len(text)]


def divergences(chapter: str) -> list[tuple[int, str]]:
    """Return each entry of §23 as (number, its first line's text), in the chapter's order."""
    return [(int(n), rest) for n, rest in re.findall(r"^- \*\*D-(\d+)\*\* — (.*)$", chapter, re.MULTILINE)]


def numbering_faults(chapter: str) -> list[str]:
    faults = [f"unnumbered entry: {line[:60]}" for line in chapter.splitlines() if line.startswith("- ") and not line.startswith("- **D-")]
    numbers = [n for n, _ in divergences(chapter)]
    if numbers != list(range(1, len(numbers) + 1)):
        faults.append(f"numbers not 1..{len(numbers)} in order: {numbers}")
    return faults


@pytest.mark.spec("D-13")
def test_divergences_are_numbered_contiguously_a_gap_only_as_a_withdrawn_entry() -> None:
    chapter = divergence_chapter()
    assert numbering_faults(chapter) == []
    withdrawn = {n for n, text in divergences(chapter) if text.startswith("*Withdrawn.*")}
    assert withdrawn == {13}
    # The check can fail: an unnumbered bullet, a missing number, or numbers out of order.
    assert numbering_faults(chapter.replace("- **D-6** — ", "- ")) != []
    assert numbering_faults(re.sub(r"^- \*\*D-13\*\* — .*?(?=^- \*\*D-14)", "", chapter, flags=re.MULTILINE | re.DOTALL)) != []
    assert numbering_faults(chapter.replace("**D-9**", "**D-99**")) != []


def test_no_test_names_a_withdrawn_divergence_but_the_numbering_test() -> None:
    tests = Path(__file__).resolve().parent
    withdrawn = [f"D-{n}" for n, text in divergences(divergence_chapter()) if text.startswith("*Withdrawn.*")]
    naming = {p.name for p in tests.rglob("test_*.py") for d in withdrawn if re.search(rf'"{d}"', p.read_text(encoding="utf-8"))}
    assert naming == {"test_divergences.py"}


@pytest.mark.spec("D-18", "REC-1", "STRM-4")
def test_replay_state_stays_in_the_request_sent_and_a_capture_stripped_at_the_adapter_reads_as_rec_1() -> None:
    from prefix_model.conformance.captured import captured_request
    from prefix_model.conformance.fold import check_events
    from prefix_model.core.json_values import thaw
    from prefix_model.loop.actions import BeginStep, Compose, PostStep, PreStep, Reply

    chunks = tuple(c for c in frozen_list([{"type": "text-delta", "index": 0, "text": "hey"}, {"type": "finish", "reason": {"kind": "stop"}, "replayState": {"c": 1}}]) if isinstance(c, FrozenMap))
    other = LlmCallConfig("other", "other-model")  # a route a different adapter serves
    world = play((start(), SendPrompt(0, "hi"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, stream=chunks), PostStep(0),
                  SendPrompt(0, "again"), BeginStep(0), PreStep(0), Dispatch(0, other), Reply(0, text="ok"), PostStep(0)))  # fmt: skip
    sent = [r for r in world.requests if r.loop_request]
    second = request_to_json(sent[1].request)
    assistant = [m for m in second["messages"] if isinstance(m, FrozenMap) and m["role"] == "assistant"][0]  # type: ignore[union-attr]
    # The model's request is the loop's, as the invariant sees it (llm/stream), replay state kept.
    assert second["provider"] == "other" and json_text(assistant["provenance"]) == '{"provider":"mock","model":"mock-model","replayState":{"c":1}}'
    events = tuple((e.seq + 1, e) for e in world.session("s1").log.events)

    def rules(requests: list[FrozenMap]) -> list[str]:
        captured = [captured_request(n, r, s.turn, s.step) for n, (r, s) in enumerate(zip(requests, sent))]
        return [f.rule for f in check_events(events, captured, "s1").findings]

    assert rules([request_to_json(s.request) for s in sent]) == []
    # What the adapter receives: LLM/index.ts:431-443 drops the replay state another adapter owns.
    fields = thaw(second)
    assert isinstance(fields, dict)
    for message in fields["messages"]:
        if message["role"] == "assistant":
            message["provenance"] = {"provider": "mock", "model": "mock-model"}
    assert rules([request_to_json(sent[0].request), freeze(fields)]) == ["REC-1"]  # type: ignore[list-item]


@pytest.mark.spec("D-19", "CMP-6", "PFX-1")
def test_the_summarizer_sees_the_prefix_and_a_summary_restating_it_is_durable_history_only_a_verbatim_copy_is_flagged() -> None:
    from prefix_model.loop.actions import BeginStep, PreStep, Register
    from prefix_model.loop.properties import check_all

    from tests.loop_scripts import LONG_PROMPT, prepend, turn

    opener = "<prefix catalog v1>"
    base = play((start(), Register(prepend("catalog", opener)), *turn(0, LONG_PROMPT, compose=True), SendPrompt(0, "again"), BeginStep(0)))
    assert not any(opener in json_text(m) for m in derive_messages(base.session("s1").log))
    world = play((PreStep(0, compact=(0, 1), summaries=(f"The session opened with {opener}.",)),), base)
    summarizer = [r for r in world.requests if not r.loop_request][-1]
    assert opener in json_text(summarizer.request.messages[0])  # CMP-6: the header's prefix leads the summarizer's messages
    history = [json_text(m) for m in derive_messages(world.session("s1").log)]
    assert any(opener in text for text in history)  # the prefix's content is now durable history
    assert {v.rule for v in check_all(world)} == {"PFX-1", "PFX-11"}  # verbatim: a composed text in history (PFX-1), in a second home (PFX-11)
    paraphrased = play((PreStep(0, compact=(0, 1), summaries=("The session opened with the catalog, first version.",)),), base)
    assert check_all(paraphrased) == ()  # in other words: no property can tell it from the conversation's own


@pytest.mark.spec("D-20", "LOOP-8")
def test_under_d20_the_model_drains_a_steer_sent_before_the_first_begin_step_at_step_1() -> None:
    """D-20(a), open: what the model does today in the first step's window (the reference adapter's harness drains it later)."""
    from prefix_model.loop.actions import BeginStep, Create, Steer
    from prefix_model.loop.transitions import run

    world = run((Create("main", "s1"), Steer(0, "first"), Steer(0, "second"), BeginStep(0)))
    types = [e.type for e in world.session("s1").log.events]
    assert types == ["turn/start", "user/message", "steering/message"]


@pytest.mark.spec("D-20")
def test_d20_a_campaigns_domain_leaves_out_what_the_harness_refuses_outright() -> None:
    from prefix_model.edge.fuzz.grammar import out_of_domain
    from prefix_model.core.headers import LlmCallConfig
    from prefix_model.loop.actions import BeginStep, Compose, Create, Dispose, ForkDrive, MountCompaction, PreStep, Reply, Resume, SetTools
    from prefix_model.loop.compaction import CompactPolicy
    from prefix_model.loop.transitions import run
    from prefix_model.loop.world import AgentOptions

    tool = freeze({"name": "echo", "description": "d", "parameters": {"type": "object"}})
    world = run((Create("main", "s1", tools=(tool,)), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0)))
    assert out_of_domain(world, Reply(0, tool_calls=(("c1", "echo", "{}"),))) is None
    assert out_of_domain(world, Reply(0, tool_calls=(("c1", "grep", "{}"),))) is None  # answered unknown on both sides (LOOP-14)
    assert "twice" in str(out_of_domain(world, SetTools(0, (tool, tool))))
    released = run((Create("main", "s2"), Dispose(0)))
    assert out_of_domain(released, Create("main", "s2")) is not None and out_of_domain(world, Create("main", "s1")) is None
    # Whatever its log holds (D-20 (e)): a turn's session whose driver is disposed is let go, as a fork's child id too.
    ended = run((Create("main", "s2"), SendPrompt(0, "go"), BeginStep(0), Dispose(0), Compose(0), Create("main", "s3")))
    assert ended.session("s2").log.events and "let go" in str(out_of_domain(ended, Create("main", "s2")))
    assert "let go" in str(out_of_domain(ended, ForkDrive("s3", "s2", None, "main"))) and out_of_domain(ended, ForkDrive("s3", "s4", None, "main")) is None
    # The harness's preamble is fixed (D-15): a shrink that shortened the policy's mixed a framed summary priced 29
    # tokens by the model and 104 by the harness into seed 11 script 1773's divergence (D-20 (b)).
    assert out_of_domain(world, MountCompaction(CompactPolicy(120))) is None
    assert "preamble" in str(out_of_domain(world, MountCompaction(CompactPolicy(120, preamble="x"))))
    # A service mounted while a post-step serial is awaited is not among the listeners Cordis collected for it (D-20 (b)).
    replied = run((Create("main", "s1"), SendPrompt(0, "go"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, text="ok")))
    assert "post-step" in str(out_of_domain(replied, MountCompaction(CompactPolicy(120)))), replied.instance(0).phase
    # The model routes every provider, the harness's adapter only the one drawn: a shrink's "x" provider made the two
    # TOK-1 meter cases fail at a55f148516 before their stream.
    assert out_of_domain(world, Create("main", "s3", AgentOptions("mock", "other-model"))) is None
    assert out_of_domain(world, MountCompaction(CompactPolicy(120, summarization_provider="mock", summarization_model="m"))) is None
    assert out_of_domain(world, Dispatch(0, LlmCallConfig("mock", "m"))) is None
    for unrouted in (
        Create("main", "s3", AgentOptions("x", "mock-model")),
        Resume("s1", "main", AgentOptions("x", "mock-model")),
        Dispatch(0, LlmCallConfig("x", "mock-model")),
        MountCompaction(CompactPolicy(120, summarization_provider="x", summarization_model="m")),
    ):
        assert "'x'" in str(out_of_domain(world, unrouted)), unrouted
