"""§5 headers — the EpochHeader shape, canonical_header, call_config_equals, header_equals, the fold.

Pinned harness behaviours (harness facts §2.1-§2.6, §6 ST/request-header.spec.ts) and properties
over generated configs and headers. JSON is compared by its text (JSON-5), never with ``==``.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import RejectedError, Rejection
from prefix_model.core.events import Event
from prefix_model.core.headers import (
    CHANGE,
    INITIAL,
    REASONS,
    RESUME,
    EpochHeader,
    LlmCallConfig,
    call_config_equals,
    canonical_header,
    check_header_event,
    config_to_json,
    fold_request_header,
    header_equals,
    header_to_json,
    is_canonical_header,
    is_valid_config,
    parse_header,
)
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.core.log import EMPTY_LOG, Log, seed_log

from tests.header_strategies import (
    MESSAGE_POOL,
    TOOL_POOL,
    canonical_headers,
    configs,
    foreign_header,
    headers,
    logs_with_headers,
    obj,
    plugin_event,
    text,
    turn_start,
    user_message,
)

CONFIG = LlmCallConfig("mock", "mock")
PREFIX = (MESSAGE_POOL[0],)
ECHO, ECHO_REORDERED, ADD = TOOL_POOL[0], TOOL_POOL[1], TOOL_POOL[2]
FULL = EpochHeader(LlmCallConfig("mock", "chat", "max", 0.5, 4096, ("END",)), "You are A.", (ECHO, ADD), PREFIX)


def header_text(header: EpochHeader | None) -> str:
    """Return the JSON text of a header (``none`` for no header)."""
    return "none" if header is None else json_text(header_to_json(header))


def header_data(header: object, reason: str = INITIAL) -> dict[str, object]:
    return {"header": header, "reason": reason}


def append_rule(log: Log, data: object, type: str = "request/header") -> str:
    """Return the rule ``log.append`` names when it rejects ``data``; the log must be unchanged."""
    before = log.events
    with pytest.raises(RejectedError) as caught:
        log.append(type, data)
    assert log.events == before
    return caught.value.rejection.rule


def rule_of(found: Log | Rejection) -> str | None:
    return found.rule if isinstance(found, Rejection) else None


def parsed(value: object) -> EpochHeader:
    header = parse_header(freeze(value))
    assert isinstance(header, EpochHeader), header
    return header


def rejected_rule(value: object) -> str:
    found = parse_header(freeze(value))
    assert isinstance(found, Rejection), found
    return found.rule


# --- §5.1 The EpochHeader shape ---------------------------------------------------------------


@pytest.mark.spec("HDR-1")
def test_parse_header_reads_a_harness_written_header() -> None:
    header = parsed(
        {
            "config": {"provider": "mock", "model": "mock"},
            "system": "You are an AI agent powered by the DeepSeek Harness SDK.",
            "tools": [{"name": "echo", "description": "echo back", "parameters": {"type": "object"}}],
            "messagePrefix": [{"role": "user", "content": [{"type": "text", "text": "catalog"}]}],
        }
    )
    assert (header.config.provider, header.config.model) == ("mock", "mock")
    assert header.system == "You are an AI agent powered by the DeepSeek Harness SDK."
    assert json_text(header.tools) == '[{"name":"echo","description":"echo back","parameters":{"type":"object"}}]'
    assert json_text(header.message_prefix) == '[{"role":"user","content":[{"type":"text","text":"catalog"}]}]'


@pytest.mark.spec("HDR-1", "HDR-2")
def test_parse_header_reads_every_config_field() -> None:
    header = parsed({"config": {"provider": "p", "model": "m", "reasoningEffort": "max", "temperature": 0.2, "maxTokens": 100, "stop": ["a", "b"]}})
    assert json_text(config_to_json(header.config)) == '{"provider":"p","model":"m","reasoningEffort":"max","temperature":0.2,"maxTokens":100,"stop":["a","b"]}'
    assert (header.system, header.tools, header.message_prefix) == (None, None, None)


@pytest.mark.spec("HDR-1", "HDR-3")
@given(headers())
def test_parse_header_reads_back_header_to_json(header: EpochHeader) -> None:
    again = parse_header(header_to_json(header))
    assert isinstance(again, EpochHeader)
    assert header_text(again) == header_text(header)
    assert call_config_equals(again.config, header.config)


@pytest.mark.spec("HDR-1")
@pytest.mark.parametrize("value", [None, [], "header", 1, True])
def test_invalid_header_not_an_object(value: object) -> None:
    assert rejected_rule(value) == "HDR-1"


@pytest.mark.spec("HDR-1")
@pytest.mark.parametrize("config", [None, [], "mock", 1])
def test_invalid_header_config_not_an_object(config: object) -> None:
    assert rejected_rule({"config": config}) == "HDR-1"


@pytest.mark.spec("HDR-1")
def test_invalid_header_without_config() -> None:
    assert rejected_rule({"system": "s"}) == "HDR-1"


@pytest.mark.spec("HDR-1")
@pytest.mark.parametrize(
    "fields",
    [
        {"system": 1},
        {"system": None},
        {"system": ["s"]},
        {"tools": {}},
        {"tools": "echo"},
        {"messagePrefix": "prefix"},
        {"messagePrefix": {"0": {}}},
    ],
)
def test_invalid_header_optional_field_type(fields: dict[str, object]) -> None:
    assert rejected_rule({"config": {"provider": "p", "model": "m"}, **fields}) == "HDR-1"


@pytest.mark.spec("HDR-2")
@pytest.mark.parametrize(
    "fields",
    [{"temperature": "0.5"}, {"temperature": True}, {"temperature": None}, {"maxTokens": "10"}, {"maxTokens": False}, {"stop": "END"}, {"stop": [1]}, {"stop": None}],
)
def test_invalid_config_scalar_type(fields: dict[str, object]) -> None:
    assert rejected_rule({"config": {"provider": "p", "model": "m", **fields}}) == "HDR-2"


@pytest.mark.spec("HDR-2")
@pytest.mark.parametrize(
    "config",
    [
        {"model": "m"},
        {"provider": "", "model": "m"},
        {"provider": 1, "model": "m"},
        {"provider": "p"},
        {"provider": "p", "model": ""},
        {"provider": "p", "model": None},
        {"provider": "p", "model": "m", "reasoningEffort": ""},
        {"provider": "p", "model": "m", "reasoningEffort": None},
        {"provider": "p", "model": "m", "reasoningEffort": 3},
    ],
)
def test_invalid_config_provider_model_or_effort(config: dict[str, object]) -> None:
    assert rejected_rule({"config": config}) == "HDR-2"


@pytest.mark.spec("HDR-2")
@pytest.mark.parametrize(
    "config",
    [
        LlmCallConfig("", "m"),
        LlmCallConfig("p", ""),
        LlmCallConfig("p", "m", reasoning_effort=""),
        LlmCallConfig("p", "m", temperature=True),  # a bool is no number in JSON
        LlmCallConfig("p", "m", max_tokens=False),
        LlmCallConfig("p", "m", temperature=float("nan")),  # a number, but no JSON value
        LlmCallConfig("p", "m", max_tokens=float("inf")),
        LlmCallConfig("p", "m", stop=("END", 1)),  # type: ignore[arg-type]
    ],
    ids=["empty-provider", "empty-model", "empty-effort", "temperature-true", "maxTokens-false", "temperature-nan", "maxTokens-inf", "stop-not-strings"],
)
def test_a_model_built_config_the_log_would_reject_is_not_valid(config: LlmCallConfig) -> None:
    """``is_valid_config`` judges configs the model builds (no JSON read): each case here is one the parser refuses too."""
    assert not is_valid_config(config)
    assert is_valid_config(dataclasses.replace(config, provider="p", model="m", reasoning_effort=None, temperature=0.5, max_tokens=10, stop=("END",)))

@pytest.mark.spec("HDR-1", "HDR-2")
def test_invalid_header_event_is_rejected_at_append() -> None:
    log = turn_start(EMPTY_LOG, 1)
    assert append_rule(log, header_data({"config": {"provider": "p"}})) == "HDR-2"
    assert append_rule(log, header_data({"config": {"provider": "p", "model": "m"}, "tools": {}})) == "HDR-1"
    assert append_rule(log, {"reason": INITIAL}) == "HDR-1"  # no header at all


@pytest.mark.spec("HDR-13")
@pytest.mark.parametrize("reason", REASONS)
def test_check_header_event_accepts_each_reason(reason: str) -> None:
    log = EMPTY_LOG.append("request/header", header_data({"config": {"provider": "p", "model": "m"}}, reason))
    assert log.events[-1].field("reason") == reason
    assert check_header_event(log.events[-1]) is None


@pytest.mark.spec("HDR-13")
@pytest.mark.parametrize("reason", ["start", "", "Initial", 1, None, True])
def test_invalid_header_reason(reason: object) -> None:
    assert append_rule(EMPTY_LOG, {"header": {"config": {"provider": "p", "model": "m"}}, "reason": reason}) == "HDR-13"
    assert append_rule(EMPTY_LOG, {"header": {"config": {"provider": "p", "model": "m"}}}) == "HDR-13"


@pytest.mark.spec("HDR-13", "LOG-8")
def test_invalid_header_reason_fallback_is_legacy() -> None:
    assert append_rule(EMPTY_LOG, header_data({"config": {"provider": "p", "model": "m"}}, "fallback")) == "LOG-8"


@pytest.mark.spec("HDR-13", "LOG-7", "LOG-8", "LOG-12")
def test_invalid_legacy_header_vocabulary_at_append_and_at_seed() -> None:
    header = {"config": {"provider": "p", "model": "m"}}
    assert append_rule(EMPTY_LOG, {"delta": {"system": "s"}}, "request/header-delta") == "LOG-7"
    assert append_rule(EMPTY_LOG, header_data(header, "fallback")) == "LOG-8"
    assert rule_of(seed_log((Event("request/header-delta", 0, 0, obj({})),))) == "LOG-7"
    assert rule_of(seed_log((Event("request/header", 0, 0, obj(header_data(header, "fallback"))),))) == "LOG-8"


@pytest.mark.spec("HDR-1", "HDR-13", "LOG-12")
def test_invalid_header_event_in_a_seed() -> None:
    good = Event("request/header", 0, 0, obj(header_data({"config": {"provider": "p", "model": "m"}})))
    assert isinstance(seed_log((good,)), Log)
    assert rule_of(seed_log((good, Event("request/header", 1, 0, obj(header_data({"config": {"model": "m"}}))),))) == "HDR-2"
    assert rule_of(seed_log((Event("request/header", 0, 0, obj(header_data({"config": {"provider": "p", "model": "m"}}, "start"))),))) == "HDR-13"


@pytest.mark.spec("HDR-1")
def test_check_header_event_ignores_other_event_types() -> None:
    event = Event("session/title", 0, 0, obj({"header": "not a header"}))
    assert check_header_event(event) is None


# --- §5.2 canonical_header ----------------------------------------------------------------------


@pytest.mark.spec("HDR-3")
def test_canonical_header_drops_empty_system_tools_and_prefix() -> None:
    canonical = canonical_header(EpochHeader(CONFIG, "", (), ()))
    assert header_text(canonical) == '{"config":{"provider":"mock","model":"mock"}}'
    assert (canonical.system, canonical.tools, canonical.message_prefix) == (None, None, None)


@pytest.mark.spec("HDR-3", "HDR-4")
def test_canonical_header_keeps_populated_fields() -> None:
    assert header_text(canonical_header(FULL)) == header_text(FULL)
    assert canonical_header(FULL).config is FULL.config


@pytest.mark.spec("HDR-3", "HDR-5")
def test_canonical_header_keeps_config_as_is_even_an_empty_stop() -> None:
    config = LlmCallConfig("p", "m", stop=())
    canonical = canonical_header(EpochHeader(config, "", (), ()))
    assert canonical.config is config
    assert canonical.config.stop == ()
    assert json_text(config_to_json(canonical.config)) == '{"provider":"p","model":"m","stop":[]}'


@pytest.mark.spec("HDR-3", "HDR-4")
@given(headers())
def test_canonical_header_is_idempotent_and_keeps_populated_fields(header: EpochHeader) -> None:
    once = canonical_header(header)
    assert is_canonical_header(once)
    assert header_text(canonical_header(once)) == header_text(once)
    assert once.config is header.config
    assert once.system == (header.system or None)
    assert json_text(once.tools or ()) == json_text(header.tools or ())
    assert json_text(once.message_prefix or ()) == json_text(header.message_prefix or ())
    if header.tools:
        assert json_text(once.tools) == json_text(header.tools)
    if header.message_prefix:
        assert json_text(once.message_prefix) == json_text(header.message_prefix)


@pytest.mark.spec("HDR-4")
def test_is_canonical_header_is_false_for_each_empty_field() -> None:
    assert is_canonical_header(EpochHeader(CONFIG))
    for empty in (EpochHeader(CONFIG, system=""), EpochHeader(CONFIG, tools=()), EpochHeader(CONFIG, message_prefix=())):
        assert not is_canonical_header(empty)


# --- §5.3 Equality ------------------------------------------------------------------------------


BASE = LlmCallConfig("mock", "chat", "max", 0.5, 4096, ("END",))


@pytest.mark.spec("HDR-5")
@pytest.mark.parametrize(
    "other",
    [
        dataclasses.replace(BASE, provider="other"),
        dataclasses.replace(BASE, model="other"),
        dataclasses.replace(BASE, reasoning_effort="high"),
        dataclasses.replace(BASE, reasoning_effort=None),
        dataclasses.replace(BASE, temperature=0.7),
        dataclasses.replace(BASE, temperature=None),
        dataclasses.replace(BASE, max_tokens=4095),
        dataclasses.replace(BASE, max_tokens=None),
        dataclasses.replace(BASE, stop=("END", "STOP")),
        dataclasses.replace(BASE, stop=()),
        dataclasses.replace(BASE, stop=None),
    ],
    ids=["provider", "model", "effort", "effort-absent", "temperature", "temperature-absent", "maxTokens", "maxTokens-absent", "stop", "stop-empty", "stop-absent"],
)
def test_call_config_equals_discriminates_each_field(other: LlmCallConfig) -> None:
    assert call_config_equals(BASE, BASE)
    assert not call_config_equals(BASE, other)
    assert not call_config_equals(other, BASE)


@pytest.mark.spec("HDR-5")
def test_call_config_equals_absent_stop_equals_only_absent_stop() -> None:
    assert call_config_equals(LlmCallConfig("p", "m"), LlmCallConfig("p", "m", stop=None))
    assert not call_config_equals(LlmCallConfig("p", "m", stop=()), LlmCallConfig("p", "m"))
    assert not call_config_equals(LlmCallConfig("p", "m"), LlmCallConfig("p", "m", stop=()))
    assert call_config_equals(LlmCallConfig("p", "m", stop=()), LlmCallConfig("p", "m", stop=()))


@pytest.mark.spec("HDR-5")
def test_call_config_equals_compares_stop_element_wise() -> None:
    assert call_config_equals(LlmCallConfig("p", "m", stop=("a", "b")), LlmCallConfig("p", "m", stop=("a", "b")))
    assert not call_config_equals(LlmCallConfig("p", "m", stop=("a", "b")), LlmCallConfig("p", "m", stop=("b", "a")))
    assert not call_config_equals(LlmCallConfig("p", "m", stop=("a",)), LlmCallConfig("p", "m", stop=("a", "a")))


@pytest.mark.spec("HDR-5", "JSON-3")
def test_call_config_equals_integral_temperature_is_one_number() -> None:
    read = parsed({"config": {"provider": "p", "model": "m", "temperature": 1.0, "maxTokens": 8.0}})
    assert call_config_equals(read.config, LlmCallConfig("p", "m", temperature=1, max_tokens=8))


@pytest.mark.spec("HDR-5")
@given(configs(), configs())
def test_call_config_equals_is_field_wise_equality(a: LlmCallConfig, b: LlmCallConfig) -> None:
    expected = json_text(config_to_json(a)) == json_text(config_to_json(b))
    assert call_config_equals(a, b) == expected
    assert call_config_equals(b, a) == expected
    assert call_config_equals(a, a)


@pytest.mark.spec("HDR-6")
@pytest.mark.parametrize(
    "other",
    [
        dataclasses.replace(FULL, config=dataclasses.replace(FULL.config, model="other")),
        dataclasses.replace(FULL, config=dataclasses.replace(FULL.config, reasoning_effort="high")),
        dataclasses.replace(FULL, config=dataclasses.replace(FULL.config, reasoning_effort=None)),
        dataclasses.replace(FULL, system="You are B."),
        dataclasses.replace(FULL, system=None),
        dataclasses.replace(FULL, message_prefix=None),
        dataclasses.replace(FULL, message_prefix=(MESSAGE_POOL[2],)),
        dataclasses.replace(FULL, message_prefix=PREFIX + PREFIX),
        dataclasses.replace(FULL, tools=None),
        dataclasses.replace(FULL, tools=(ECHO,)),
        dataclasses.replace(FULL, tools=(ADD, ECHO)),
        dataclasses.replace(FULL, tools=(ECHO, TOOL_POOL[3])),
    ],
    ids=["model", "effort", "effort-absent", "system", "system-absent", "prefix-absent", "prefix-content", "prefix-length", "tools-absent", "tools-fewer", "tools-order", "tools-content"],
)
def test_header_equals_discriminates_each_field(other: EpochHeader) -> None:
    assert header_equals(FULL, FULL)
    assert not header_equals(FULL, other)
    assert not header_equals(other, FULL)


@pytest.mark.spec("HDR-6")
def test_header_equals_treats_absent_and_empty_prefix_and_tools_alike() -> None:
    assert header_equals(EpochHeader(CONFIG, "s", None, None), EpochHeader(CONFIG, "s", (), ()))
    assert header_equals(EpochHeader(CONFIG, "s", (), None), EpochHeader(CONFIG, "s", None, ()))


@pytest.mark.spec("HDR-6")
def test_header_equals_compares_system_strictly() -> None:
    assert not header_equals(EpochHeader(CONFIG, ""), EpochHeader(CONFIG, None))
    assert not header_equals(EpochHeader(CONFIG, "You are A."), EpochHeader(CONFIG, "You are A. "))
    assert header_equals(canonical_header(EpochHeader(CONFIG, "")), EpochHeader(CONFIG, None))


@pytest.mark.spec("HDR-6", "JSON-4")
def test_header_equals_is_key_order_sensitive_in_prefix_and_tools() -> None:
    forward = FrozenMap({"role": "user", "content": (text("p"),)})
    backward = FrozenMap({"content": (text("p"),), "role": "user"})
    assert forward == backward  # Python's Mapping equality ignores order; JSON text does not
    assert not header_equals(EpochHeader(CONFIG, message_prefix=(forward,)), EpochHeader(CONFIG, message_prefix=(backward,)))
    assert not header_equals(EpochHeader(CONFIG, tools=(ECHO,)), EpochHeader(CONFIG, tools=(ECHO_REORDERED,)))


@pytest.mark.spec("HDR-6", "JSON-4")
def test_header_equals_ignores_insertion_order_of_array_index_keys() -> None:
    forward = FrozenMap({"0": "a", "1": "b", "name": "t"})
    backward = FrozenMap({"name": "t", "1": "b", "0": "a"})
    assert json_text(forward) == json_text(backward) == '{"0":"a","1":"b","name":"t"}'
    assert header_equals(EpochHeader(CONFIG, tools=(forward,)), EpochHeader(CONFIG, tools=(backward,)))


@pytest.mark.spec("HDR-6", "JSON-5")
def test_header_equals_never_equates_true_and_one() -> None:
    assert not header_equals(EpochHeader(CONFIG, message_prefix=(MESSAGE_POOL[3],)), EpochHeader(CONFIG, message_prefix=(MESSAGE_POOL[4],)))
    assert not header_equals(EpochHeader(CONFIG, tools=(TOOL_POOL[3],)), EpochHeader(CONFIG, tools=(TOOL_POOL[4],)))


@pytest.mark.spec("HDR-6")
@given(canonical_headers(), canonical_headers())
def test_header_equals_on_canonical_headers_is_json_text_equality(a: EpochHeader, b: EpochHeader) -> None:
    expected = header_text(a) == header_text(b)
    assert header_equals(a, b) == expected
    assert header_equals(b, a) == expected
    assert header_equals(a, a)


@pytest.mark.spec("HDR-3", "HDR-6")
@given(headers())
def test_header_equals_a_header_and_its_canonical_form_when_system_is_not_empty(header: EpochHeader) -> None:
    assert header_equals(header, canonical_header(header)) == (header.system != "")


# --- §5.4 fold_request_header -------------------------------------------------------------------


@pytest.mark.spec("HDR-7")
def test_fold_request_header_returns_from_when_no_snapshot() -> None:
    log = plugin_event(user_message(turn_start(EMPTY_LOG, 1), "go"))
    seeded = EpochHeader(CONFIG, "from")
    assert fold_request_header(log.events, seeded) is seeded
    assert fold_request_header(log.events) is None
    assert fold_request_header(()) is None


@pytest.mark.spec("HDR-7", "HDR-14")
def test_fold_request_header_latest_snapshot_wins_wholesale() -> None:
    log = foreign_header(EMPTY_LOG, FULL, INITIAL)
    log = log.append("request/header", header_data({"config": {"provider": "mock", "model": "mock"}, "tools": []}, CHANGE))
    folded = fold_request_header(log.events, FULL)
    assert header_text(folded) == '{"config":{"provider":"mock","model":"mock"}}'


@pytest.mark.spec("HDR-7")
def test_fold_request_header_canonicalizes_a_foreign_snapshot() -> None:
    data = header_data({"config": {"provider": "p", "model": "m"}, "system": "", "tools": [], "messagePrefix": []}, RESUME)
    folded = fold_request_header(EMPTY_LOG.append("request/header", data).events)
    assert folded is not None and is_canonical_header(folded)
    assert header_text(folded) == '{"config":{"provider":"p","model":"m"}}'


@pytest.mark.spec("HDR-7", "HDR-12")
@given(logs_with_headers(), st.integers(min_value=0, max_value=2))
def test_fold_request_header_is_the_canonical_last_snapshot(log: Log, extra: int) -> None:
    snapshots = [e for e in log.events if e.type == "request/header"]
    folded = fold_request_header(log.events)
    if not snapshots:
        assert folded is None
    else:
        last = parse_header(snapshots[-1].field("header"))
        assert isinstance(last, EpochHeader)
        assert header_text(folded) == header_text(canonical_header(last))
        assert folded is not None and is_canonical_header(folded)
    longer = log
    for _ in range(extra):  # non-header events are skipped
        longer = user_message(plugin_event(longer), "more")
    assert header_text(fold_request_header(longer.events)) == header_text(folded)


@pytest.mark.spec("HDR-8")
@given(canonical_headers(), st.sampled_from(REASONS), st.sampled_from(REASONS))
def test_fold_request_header_ignores_the_reason(header: EpochHeader, one: str, other: str) -> None:
    a = fold_request_header(foreign_header(EMPTY_LOG, header, one).events)
    b = fold_request_header(foreign_header(EMPTY_LOG, header, other).events)
    assert header_text(a) == header_text(b) == header_text(header)


@pytest.mark.spec("HDR-14", "HDR-7")
@given(headers(), headers())
def test_fold_request_header_absence_wins_over_an_earlier_value(first: EpochHeader, second: EpochHeader) -> None:
    log = foreign_header(foreign_header(EMPTY_LOG, first, INITIAL), second, CHANGE)
    folded = fold_request_header(log.events)
    assert folded is not None
    assert header_text(folded) == header_text(canonical_header(second))
    if not second.system:
        assert folded.system is None
    if not second.tools:
        assert folded.tools is None
    if not second.message_prefix:
        assert folded.message_prefix is None
    if second.config.reasoning_effort is None:
        assert folded.config.reasoning_effort is None


@pytest.mark.spec("HDR-14")
def test_fold_request_header_drops_prefix_tools_and_system_omitted_by_a_later_snapshot() -> None:
    log = foreign_header(EMPTY_LOG, FULL, INITIAL)
    log = foreign_header(log, EpochHeader(FULL.config), RESUME)
    folded = fold_request_header(log.events)
    assert folded is not None
    assert (folded.system, folded.tools, folded.message_prefix) == (None, None, None)
    assert call_config_equals(folded.config, FULL.config)


@pytest.mark.spec("HDR-3", "HDR-7")
def test_fold_request_header_keeps_the_snapshot_config_as_written() -> None:
    written: JsonValue = obj({"model": "chat", "provider": "mock"})  # a listener may build the config in this order
    log = EMPTY_LOG.append("request/header", header_data({"config": written}))
    folded = fold_request_header(log.events)
    assert folded is not None
    assert json_text(header_to_json(folded)["config"]) == json_text(written)


@pytest.mark.spec("HDR-5")
def test_a_config_changed_after_it_was_read_is_written_anew_and_its_repr_is_its_fields() -> None:
    parsed = parse_header(obj({"config": obj({"model": "chat", "provider": "mock", "temperature": 0.5})}))
    assert isinstance(parsed, EpochHeader)
    read = parsed.config
    assert json_text(config_to_json(read)) == '{"model":"chat","provider":"mock","temperature":0.5}'  # as written
    changed = dataclasses.replace(read, temperature=0.7)  # keeps the stale written form
    assert json_text(config_to_json(changed)) == '{"provider":"mock","model":"chat","temperature":0.7}'
    # Equality ignores the written form (HDR-5 is field by field), and so does repr, which the explorer fingerprints.
    fresh = LlmCallConfig("mock", "chat", temperature=0.5)
    assert read == fresh and repr(read) == repr(fresh)
