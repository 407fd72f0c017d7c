"""§12 the token meter — the heuristic price (TOK-2), ``measure`` (TOK-3), post-step pressure (TOK-1).

Hand-computed cases of facts §5.1 (TM:22-29, 352-389): text and reasoning blocks cost
ceil(UTF-16 length / 4) + 4, a tool call ceil(name / 4) + ceil(arguments / 4) + 4, a tool result
its nested content + 4, an unknown block 4 + ceil(JSON length / 4), each message 4 more; a header
costs its prefix messages, its system text (+4) and its non-empty tool list (+4). ``measure``
reuses a usage anchor only under an equal header (TMT:343); post-step pressure in a loop run prices
the routed header, prefix included, exactly once (CBT:571).
"""

from __future__ import annotations

import pytest
from prefix_model.core.events import APPEND
from prefix_model.core.headers import CHANGE, INITIAL, EpochHeader, LlmCallConfig, fold_request_header, header_to_json
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.requests import boundary_log
from prefix_model.loop.actions import Action, Register, Reply
from prefix_model.loop.meter import Measurement, estimate_content, estimate_header, estimate_message, measure, node_prices, surface_tokens

from tests.loop_scripts import CONFIG, marks, msg, play, prepend, start, tool, turn


def block(text: str, kind: str = "text") -> FrozenMap:
    value = freeze({"type": kind, "text": text})
    assert isinstance(value, FrozenMap)
    return value


def message(*blocks: JsonValue) -> FrozenMap:
    value = freeze({"role": "user", "content": list(blocks)})
    assert isinstance(value, FrozenMap)
    return value


# --- TOK-2: the heuristic ---


@pytest.mark.parametrize(
    ("text", "units"),
    [("", 0), ("abcd", 4), ("abcde", 5), ("é", 1), ("😀😀😀", 6), ("abc😀", 5), ("12345678", 8)],
    ids=["empty", "four", "five", "bmp-accent", "three-emoji", "ascii-and-emoji", "eight"],
)
@pytest.mark.spec("TOK-2")
def test_a_text_block_costs_a_quarter_of_its_utf16_length_rounded_up_plus_four(text: str, units: int) -> None:
    expected = -(-units // 4) + 4
    assert estimate_content((block(text),)) == expected
    assert estimate_content((block(text, "reasoning"),)) == expected
    assert estimate_message(message(block(text))) == expected + 4


@pytest.mark.spec("TOK-2")
def test_string_content_is_priced_as_the_harness_walks_it_a_code_point_at_a_time() -> None:
    # TM index.ts:352-372 loops ``for (const block of blocks)``: over a string, each code point is a block of no known
    # type, 4 + ceil(JSON.stringify(point).length / 4); a campaign against a55f148516 compacted where the model, pricing
    # it 0, did not.
    assert estimate_content("ab") == 2 * (4 + 1)  # '"a"' is 3 characters
    assert estimate_content('"') == 4 + 1 and estimate_content("😀") == 4 + 1  # '"\\""' and '"😀"': 4 UTF-16 units
    assert estimate_content("\x01") == 4 + 2 and estimate_content("\ud800") == 4 + 2  # "\\u0001": 8 characters
    assert estimate_message(freeze({"role": "user", "content": "ab"})) == 10 + 4
    assert estimate_content(None) == 0 and estimate_content(freeze({"type": "text"})) == 0  # no array, no string


@pytest.mark.spec("TOK-2")
def test_a_non_bmp_character_counts_as_two_utf16_units() -> None:
    # Three code points, six UTF-16 units: ceil(6/4) = 2, where counting code points would give 1.
    assert estimate_content((block("😀😀😀"),)) == 2 + 4
    assert estimate_content((block("abc😀"),)) == 2 + 4  # 5 units, not 4


@pytest.mark.spec("TOK-2")
def test_tool_calls_tool_results_and_unknown_blocks_are_priced_by_their_parts() -> None:
    call = freeze({"type": "tool-call", "id": "c1", "name": "echo", "arguments": '{"text":"ping"}'})
    assert estimate_content((call,)) == 1 + 4 + 4  # ceil(4/4) + ceil(15/4) + 4
    result = freeze({"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}], "isError": False})
    assert estimate_content((result,)) == (1 + 4) + 4
    image = freeze({"type": "image", "url": "x"})  # '{"type":"image","url":"x"}' is 26 characters
    assert estimate_content((image,)) == 4 + 7
    assert estimate_message(message(block("abcd"), call, image)) == 5 + 9 + 11 + 4
    assert estimate_message(message()) == 4


@pytest.mark.spec("TOK-2")
def test_a_header_costs_its_prefix_its_system_text_and_its_non_empty_tools() -> None:
    tools = (tool("echo"),)  # its JSON text is 78 characters
    assert estimate_header(None) == 0
    assert estimate_header(EpochHeader(CONFIG)) == 0
    assert estimate_header(EpochHeader(CONFIG, system="You are careful.")) == 4 + 4
    assert estimate_header(EpochHeader(CONFIG, tools=tools)) == 20 + 4
    assert estimate_header(EpochHeader(CONFIG, message_prefix=(msg("abcd"),))) == 1 + 4 + 4
    full = EpochHeader(CONFIG, "You are careful.", tools, (msg("abcd"), msg("abcdefgh")))
    assert estimate_header(full) == 8 + 24 + 9 + 10


# --- TOK-3: measure ---

HEADER = EpochHeader(CONFIG, "You are careful.", None, (msg("abcd"),))  # price 8 + 9 = 17
USER = {"kind": "user"}


def _user(log: Log, words: str) -> Log:
    return log.append("user/message", {"content": [{"type": "text", "text": words}], "source": USER}, surface_op=APPEND)


def _header(log: Log, header: EpochHeader, reason: str) -> Log:
    return log.append("request/header", {"header": header_to_json(header), "reason": reason})


def _streamed(log: Log, data: dict[str, object], content: list[dict[str, object]]) -> Log:
    """The ``assistant/message`` of ``data`` after a chunk per block of ``content``, its ``sourceEventSeqs``, as the loop
    logs it: a usage anchor prices the message those chunks assemble to (TM:316-349)."""
    where = {key: data[key] for key in ("turn", "step") if key in data}
    seqs = []
    for index, block in enumerate(content):
        seqs.append(len(log.events))
        log = log.append("assistant/chunk", where | {"chunk": {"type": "block-end", "index": index, "block": block}})
    return log.append("assistant/message", data | {"content": content}, surface_op=APPEND, source_event_seqs=tuple(seqs))


def anchored(usage: dict[str, int] | None, header: EpochHeader = HEADER) -> Log:
    """Turn 1: prompt 'hello world!' (11), step 1 under ``header``, answer 'hi' (9) with ``usage``."""
    log = EMPTY_LOG.append("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": USER}})
    log = _user(log, "hello world!")
    log = log.append("step/start", {"turn": 1, "step": 1})
    log = _header(log, header, INITIAL)
    data: dict[str, object] = {"turn": 1, "step": 1, "provenance": {"provider": "mock", "model": "mock-model"}}
    if usage is not None:
        data["usage"] = usage
    log = _streamed(log, data, [{"type": "text", "text": "hi"}])
    return log.append("step/end", {"turn": 1, "step": 1})


@pytest.mark.spec("TOK-3")
def test_an_empty_log_measures_none() -> None:
    result = measure(EMPTY_LOG)
    assert (result.baseline, result.total, result.header) == ("none", 0, None)
    turn_only = EMPTY_LOG.append("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": USER}})
    assert measure(turn_only).baseline == "none"


@pytest.mark.spec("TOK-3")
def test_without_an_anchor_the_estimate_is_the_header_price_plus_the_surface() -> None:
    only_history = _user(EMPTY_LOG, "hello world!")
    assert (measure(only_history).baseline, measure(only_history).total) == ("estimated", 11)
    only_header = _header(EMPTY_LOG, HEADER, INITIAL)
    assert (measure(only_header).baseline, measure(only_header).total) == ("estimated", 17)
    both = _user(only_header, "hello world!")
    assert measure(both).total == estimate_header(HEADER) + surface_tokens(both) == 17 + 11


@pytest.mark.spec("TOK-3")
def test_a_usage_anchor_prices_the_provider_output_a_max_tokens_finish_cut_a_tool_call_from() -> None:
    """The usage counted the call the finish cut from the logged message; the anchor's surface holds it (TM:316-349),
    so the surface now, without the call, is below the anchor's. A message with no chunk provenance is priced as logged."""
    call = {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}
    usage = {"inputTokens": 900, "outputTokens": 5}
    base = _header(_user(EMPTY_LOG, "hello world!").append("step/start", {"turn": 1, "step": 1}), HEADER, INITIAL)
    streamed = base.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-end", "index": 0, "block": call}})
    streamed = streamed.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "max-tokens"}}})
    data = {"turn": 1, "step": 1, "content": [], "provenance": {"provider": "mock", "model": "mock-model"}, "usage": usage}
    cut = measure(streamed.append("assistant/message", data, surface_op=APPEND, source_event_seqs=(len(base.events), len(base.events) + 1)))
    assert (cut.baseline, cut.baseline_tokens, cut.surface_delta) == ("usage", 905, -estimate_message(freeze({"role": "assistant", "content": [call]})))
    unsourced = measure(base.append("assistant/message", data, surface_op=APPEND))
    assert (unsourced.baseline, unsourced.surface_delta, unsourced.total) == ("usage", 0, 905)


@pytest.mark.spec("TOK-3")
def test_a_usage_anchor_under_the_header_in_force_is_reused_with_the_surface_delta() -> None:
    log = anchored({"inputTokens": 500, "cacheReadTokens": 400, "cacheWriteTokens": 100, "outputTokens": 5})
    now = measure(log)
    assert (now.baseline, now.baseline_tokens, now.surface_delta, now.total) == ("usage", 1005, 0, 1005)
    grown = _user(log, "more")  # 1 + 4 + 4
    later = measure(grown)
    assert (later.baseline, later.baseline_tokens, later.surface_delta, later.total) == ("usage", 1005, 9, 1014)


@pytest.mark.spec("TOK-3")
def test_usage_below_the_estimate_or_no_usage_gives_an_estimated_anchor() -> None:
    for usage in ({"inputTokens": 10, "outputTokens": 5}, None):
        result = measure(_user(anchored(usage), "more"))
        # The anchor holds the heuristic at the answer: 17 + 11 + 9 = 37; then 9 more of surface.
        assert (result.baseline, result.baseline_tokens, result.surface_delta, result.total) == ("estimated", 37, 9, 46)


CHANGES = {
    "messagePrefix": EpochHeader(CONFIG, "You are careful.", None, (msg("abce"),)),
    "prefix dropped": EpochHeader(CONFIG, "You are careful.", None, None),
    "system": EpochHeader(CONFIG, "You are careless.", None, (msg("abcd"),)),
    "tools": EpochHeader(CONFIG, "You are careful.", (tool("echo"),), (msg("abcd"),)),
    "temperature": EpochHeader(LlmCallConfig("mock", "mock-model", temperature=0.5), "You are careful.", None, (msg("abcd"),)),
}


@pytest.mark.parametrize("changed", CHANGES.values(), ids=CHANGES.keys())
@pytest.mark.spec("TOK-3")
def test_any_canonical_header_change_invalidates_the_usage_anchor(changed: EpochHeader) -> None:
    log = _header(anchored({"inputTokens": 1000, "outputTokens": 5}), changed, CHANGE)
    result = measure(log)
    assert (result.baseline, result.total) == ("estimated", estimate_header(changed) + surface_tokens(log))
    # Measured against the anchor's own header (an override), the anchor holds again.
    assert (measure(log, HEADER).baseline, measure(log, HEADER).total) == ("usage", 1005)


@pytest.mark.spec("TOK-3")
def test_a_snapshot_equal_after_canonicalization_keeps_the_anchor() -> None:
    bare = EpochHeader(CONFIG, "You are careful.")
    log = anchored({"inputTokens": 1000, "outputTokens": 5}, bare)
    noisy = log.append("request/header", {"header": {"config": {"provider": "mock", "model": "mock-model"}, "system": "You are careful.", "tools": [], "messagePrefix": []}, "reason": CHANGE})
    assert fold_request_header(noisy.events) == bare
    assert (measure(noisy).baseline, measure(noisy).total) == ("usage", 1005)


# --- TOK-1: post-step pressure in a loop run ---


@pytest.mark.spec("TOK-1", "TOK-3")
def test_post_step_pressure_counts_the_routed_prefix_exactly_once() -> None:
    script: tuple[Action, ...] = (
        Register(prepend("ctx", "<a long session prefix message>", "<and another>")),
        start(system="You are careful.", tools=(tool("echo"),)),
        *turn(0, "go", Reply(0, tool_calls=(("c1", "echo", '{"text":"ping"}'),)), "done", compose=True),
        *turn(0, "again", "ok"),
    )
    world = play(script)
    measured = marks(world, 0, "measured")
    assert len(measured) == 3
    log = world.session("s1").log
    prefix_price = sum(estimate_message(m) for m in world.instance(0).prefix or ())
    assert prefix_price == (8 + 4 + 4) + (4 + 4 + 4)
    for mark in measured:
        at = boundary_log(log, mark.at)
        header = fold_request_header(at.events)
        assert header is not None and header.message_prefix is not None
        assert mark.value == estimate_header(header) + surface_tokens(at)
        without_prefix = EpochHeader(header.config, header.system, header.tools, None)
        assert mark.value == estimate_header(without_prefix) + prefix_price + surface_tokens(at)


# --- What each term of the heuristic and of measure is, one at a time (mutation survivors of proofs/README.md) ---


@pytest.mark.spec("TOK-2")
def test_a_tool_call_prices_its_name_and_its_arguments_each_and_string_content_is_no_longer_free() -> None:
    call = freeze({"type": "tool-call", "id": "c1", "name": "a_long_tool_name", "arguments": "{}"})
    assert estimate_content((call,)) == 4 + 1 + 4  # ceil(16/4) + ceil(2/4) + 4: a name of other than 1 token
    # Priced 0 until a campaign showed the harness walking it: ten code points, each an unknown block of 5
    assert estimate_content(freeze("plain text")) == 10 * 5
    assert estimate_message(freeze({"role": "user", "content": "plain text"})) == 50 + 4


def _answer(log: Log, text: str | None, usage: dict[str, object] | None = None) -> Log:
    """An assistant message outside any step: ``text``, or no content at all (no projection)."""
    data: dict[str, object] = {"provenance": {"provider": "mock", "model": "mock-model"}}
    if usage is not None:
        data["usage"] = usage
    return _streamed(log, data, [] if text is None else [{"type": "text", "text": text}])


@pytest.mark.spec("TOK-2", "TOK-3")
def test_a_node_with_no_projection_is_free_and_a_log_of_only_such_a_node_measures_zero() -> None:
    log = _answer(_user(EMPTY_LOG, "hello world!"), None)
    assert node_prices(log) == (11, 0)
    alone = _answer(EMPTY_LOG, None)
    # Its anchor: no header, no surface before it, a free message: an estimate of 0, kept (not the "none" of an empty log).
    assert measure(alone) == Measurement("estimated", 0, 0, 0, None)


@pytest.mark.spec("TOK-3")
def test_every_field_of_the_none_and_the_estimated_measurement() -> None:
    assert measure(EMPTY_LOG) == Measurement("none", 0, 0, 0, None)
    both = _user(_header(EMPTY_LOG, HEADER, INITIAL), "hello world!")
    assert measure(both) == Measurement("estimated", 17 + 11, 0, 17 + 11, HEADER)


@pytest.mark.spec("TOK-3")
def test_an_answer_outside_a_step_anchors_from_an_empty_surface_and_a_later_header_drops_that_anchor() -> None:
    log = _answer(_user(EMPTY_LOG, "hello world!"), "hi")
    # The meter's surface at the last step start is 0 (there was none): the anchor is 0 + 9 for "hi", under no header;
    # measured under no header it holds, and the prompt before it is the surface grown since.
    assert measure(log) == Measurement("estimated", 9, 11, 20, None)
    headed = _header(log, HEADER, INITIAL)  # a header now in force, the anchor taken under none: not the same header
    assert measure(headed) == Measurement("estimated", 17 + 20, 0, 17 + 20, HEADER)


@pytest.mark.spec("TOK-3")
def test_usage_counts_only_integer_parts() -> None:
    log = anchored({"inputTokens": 1000, "cacheReadTokens": True, "outputTokens": "12"})  # type: ignore[dict-item]
    assert (measure(log).baseline, measure(log).baseline_tokens) == ("usage", 1000)
