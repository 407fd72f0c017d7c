"""A caller's preconditions are at least those of the callees it hands its inputs to.

Each case is an input that satisfied every precondition of a public core function and then
failed a precondition of a function it calls (CrossHair found the first, ``measure``; an audit of
every caller → contracted-callee pair found the rest). Each is now stopped where it enters: by
the caller's own precondition (the test matches that precondition's description, which the
callee's differs from), by a loop guard, or by the ``Log``/``World`` constructor, which rejects
what ``append``/``seed_log``/the transitions could never build.
"""

from __future__ import annotations

import icontract
import pytest
from prefix_model.core.events import APPEND, Event, Replace
from prefix_model.core.headers import INITIAL, EpochHeader, LlmCallConfig, header_equals, is_valid_config
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.request_log import expected_reason, record_request_header
from prefix_model.core.surface import Surface, check_surface_event
from prefix_model.loop.actions import Create, Dispatch, MutateContribution, Register, SendPrompt, SetTools
from prefix_model.loop.meter import measure
from prefix_model.loop.transitions import enabled
from prefix_model.loop.world import AgentOptions, Instance, Listener, Phase, Prepend, Session, World, text_message

from tests.loop_scripts import play, start, step

UNSAFE = MAX_SAFE_INTEGER + 2  # 2^53 + 1: no double holds it, so it is not a JSON value (JSON-3)
CONFIG = LlmCallConfig("mock", "mock-model")
NOT_JSON = EpochHeader(CONFIG, tools=(UNSAFE,))
HEADER_DATA = {"header": {"config": {"provider": "mock", "model": "mock-model"}}, "reason": INITIAL}


@pytest.mark.spec("JSON-1")
def test_measure_states_its_override_header_is_json() -> None:
    with pytest.raises(icontract.ViolationError, match="an override header's tools and prefix are JSON values"):
        measure(EMPTY_LOG, EpochHeader(CONFIG, message_prefix=(UNSAFE,)))
    assert measure(EMPTY_LOG, EpochHeader(CONFIG, message_prefix=(MAX_SAFE_INTEGER,))).baseline == "estimated"


@pytest.mark.spec("JSON-1", "HDR-6")
def test_header_equals_states_both_headers_are_json() -> None:
    with pytest.raises(icontract.ViolationError, match="only headers of JSON values compare"):
        header_equals(NOT_JSON, NOT_JSON)


@pytest.mark.spec("JSON-1", "HDR-9")
def test_the_record_rule_states_its_header_is_json() -> None:
    with pytest.raises(icontract.ViolationError, match="a header's tools and prefix are JSON values"):
        expected_reason(EMPTY_LOG, False, NOT_JSON)
    with pytest.raises(icontract.ViolationError, match="the loop records tools and a prefix of JSON values"):
        record_request_header(EMPTY_LOG, False, NOT_JSON)


@pytest.mark.spec("HDR-2")
@pytest.mark.parametrize(
    "config",
    [
        LlmCallConfig("mock", "mock-model", temperature=True),  # a bool is not a number in JSON
        LlmCallConfig("mock", "mock-model", max_tokens=1.0),  # not frozen: the log holds 1
        LlmCallConfig("mock", "mock-model", temperature=float("nan")),
        LlmCallConfig("mock", "mock-model", stop=(1,)),  # type: ignore[arg-type]
        LlmCallConfig("mock", "mock-model", reasoning_effort=""),
    ],
)
def test_a_config_the_log_would_reject_is_not_valid(config: LlmCallConfig) -> None:
    assert not is_valid_config(config)
    with pytest.raises(icontract.ViolationError, match="HDR-2: the loop records a valid config"):
        record_request_header(EMPTY_LOG, False, EpochHeader(config))


@pytest.mark.spec("HDR-1", "HDR-2")
def test_a_log_holds_only_header_events_append_would_accept() -> None:
    bad = Event("request/header", 0, 0, FrozenMap({"header": 1, "reason": INITIAL}))
    with pytest.raises(ValueError, match="HDR-1/HDR-2"):
        Log((bad,))
    good = EMPTY_LOG.append("request/header", HEADER_DATA)
    assert Log(good.events, good.surface) == good


@pytest.mark.spec("HDR-10")
def test_a_world_whose_instance_logged_a_header_holds_one() -> None:
    with pytest.raises(ValueError, match="HDR-10"):
        World((Session("s"),), (Instance(0, "a", "s", AgentOptions(), logged_header=True, phase=Phase.REQUEST),))
    logged = Session("s", EMPTY_LOG.append("request/header", HEADER_DATA))
    assert World((logged,), (Instance(0, "a", "s", AgentOptions(), logged_header=True),)).instance(0).logged_header


@pytest.mark.spec("SURF-9", "JSON-1")
def test_a_tool_result_rewrite_of_non_json_data_is_rejected_not_compared() -> None:
    original = Event("tool/result", 0, 0, FrozenMap({"callId": "c", "isError": False, "content": (), "x": UNSAFE}), APPEND)
    rewrite = Event("tool/result", 1, 0, FrozenMap({"callId": "c", "isError": False, "content": ()}), Replace(0, 0), (0,))
    rejection = check_surface_event(Surface((0,)), rewrite, (original,))
    assert rejection is not None and rejection.rule == "JSON-1"


@pytest.mark.spec("LOOP-1")
def test_the_loop_guards_refuse_inputs_the_log_could_not_record() -> None:
    world = play((start(),))
    assert not enabled(World(), Create("a", "t", tools=(UNSAFE,)))
    assert not enabled(world, SetTools(0, (UNSAFE,)))
    assert not enabled(world, Register(Listener("p", None, (Prepend((FrozenMap({"n": UNSAFE}),)),))))
    assert not enabled(world, MutateContribution("p", (FrozenMap({"n": UNSAFE}),)))
    assert enabled(world, SetTools(0, (MAX_SAFE_INTEGER,)))
    assert enabled(world, Register(Listener("p", None, (Prepend((text_message("hi"),)),))))


@pytest.mark.spec("LOOP-1", "HDR-2")
def test_dispatch_is_guarded_by_the_whole_config_rule() -> None:
    actions = (start(), SendPrompt(0, "hello"), *step(0, compose=True))
    world = play(actions[: next(n for n, a in enumerate(actions) if isinstance(a, Dispatch))])
    assert enabled(world, Dispatch(0, CONFIG))
    assert not enabled(world, Dispatch(0, LlmCallConfig("mock", "mock-model", reasoning_effort="")))
    assert not enabled(world, Dispatch(0, LlmCallConfig("mock", "mock-model", temperature=True)))
