"""Spec §5 — request headers: ``EpochHeader``, ``canonical_header``, ``header_equals``, the fold.

A ``request/header`` event holds a FULL snapshot of a request's non-history half (config,
system, tools, messagePrefix) and a reason (harness S/types.ts:158-181, 308-312). Empty
system/tools/prefix are canonical absence (HDR-3). The fold takes the latest snapshot wholesale
(HDR-7); equality is field-wise for config, strict for system and ``JSON.stringify`` text for the
prefix and each tool (HDR-5, HDR-6). Mirrors harness S/request-header.ts and LLM/call-config.ts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from prefix_model.core.contracts import ENABLED, Rejection, ensure, require
from prefix_model.core.events import REQUEST_HEADER, Event
from prefix_model.core.json_values import FrozenMap, JsonValue, is_json_value, json_text

__all__ = [
    "REASONS",
    "INITIAL",
    "RESUME",
    "CHANGE",
    "LlmCallConfig",
    "EpochHeader",
    "parse_header",
    "check_header_event",
    "header_of",
    "header_to_json",
    "config_to_json",
    "canonical_header",
    "is_canonical_header",
    "is_valid_config",
    "is_json_header",
    "call_config_equals",
    "header_equals",
    "fold_request_header",
]

INITIAL = "initial"
RESUME = "resume"
CHANGE = "change"
REASONS: tuple[str, ...] = (INITIAL, RESUME, CHANGE)

Number = int | float


@dataclass(frozen=True, slots=True)
class LlmCallConfig:
    """Provider, model, effort and sampling scalars of a request (harness LLM/call-config.ts:21-28)."""

    provider: str
    model: str
    reasoning_effort: str | None = None
    temperature: Number | None = None
    max_tokens: Number | None = None
    stop: tuple[str, ...] | None = None
    # The config object as the log wrote it: canonicalHeader keeps config as-is (key order, extra
    # keys), so writing it back uses this; equality never looks at it (HDR-5 is field-wise).
    written: FrozenMap | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EpochHeader:
    """A request's non-history half (harness S/types.ts:158-173); ``None`` is an absent field."""

    config: LlmCallConfig
    system: str | None = None
    tools: tuple[JsonValue, ...] | None = None
    message_prefix: tuple[JsonValue, ...] | None = None


def is_valid_config(config: LlmCallConfig) -> bool:
    """Return whether ``config`` is one the log accepts (HDR-2): non-empty provider, model and effort (if any),
    JSON numbers for temperature and maxTokens, and a stop list of strings."""
    numbers = all(n is None or (not isinstance(n, bool) and is_json_value(n)) for n in (config.temperature, config.max_tokens))
    stop = config.stop is None or all(isinstance(s, str) for s in config.stop)
    return bool(config.provider) and bool(config.model) and config.reasoning_effort != "" and numbers and stop


def is_json_header(header: EpochHeader) -> bool:
    """Return whether a header's tools and messagePrefix are JSON values (JSON-1): what pricing and writing them assume."""
    return is_json_value((header.tools or ()) + (header.message_prefix or ()))


def _number_or_none(value: JsonValue) -> Number | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _parse_config(value: JsonValue) -> LlmCallConfig | Rejection:
    if not isinstance(value, FrozenMap):
        return Rejection("HDR-1", "header.config must be an object")
    provider, model = value.get("provider"), value.get("model")
    if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
        return Rejection("HDR-2", "header.config needs non-empty string provider and model")
    effort = value.get("reasoningEffort")
    if "reasoningEffort" in value and not (isinstance(effort, str) and effort):
        return Rejection("HDR-2", "header.config.reasoningEffort must be a non-empty string")
    temperature, max_tokens, stop = value.get("temperature"), value.get("maxTokens"), value.get("stop")
    if "temperature" in value and _number_or_none(temperature) is None:
        return Rejection("HDR-2", "header.config.temperature must be a number")
    if "maxTokens" in value and _number_or_none(max_tokens) is None:
        return Rejection("HDR-2", "header.config.maxTokens must be a number")
    if "stop" in value and not (isinstance(stop, tuple) and all(isinstance(s, str) for s in stop)):
        return Rejection("HDR-2", "header.config.stop must be an array of strings")
    return LlmCallConfig(
        provider,
        model,
        effort if isinstance(effort, str) else None,
        _number_or_none(temperature),
        _number_or_none(max_tokens),
        tuple(s for s in stop if isinstance(s, str)) if isinstance(stop, tuple) else None,
        value,
    )


def _parse_header(value: JsonValue) -> EpochHeader | Rejection:
    if not isinstance(value, FrozenMap):
        return Rejection("HDR-1", "header must be an object")
    config = _parse_config(value.get("config"))
    if isinstance(config, Rejection):
        return config
    system, tools, prefix = value.get("system"), value.get("tools"), value.get("messagePrefix")
    if "system" in value and not isinstance(system, str):
        return Rejection("HDR-1", "header.system must be a string")
    if "tools" in value and not isinstance(tools, tuple):
        return Rejection("HDR-1", "header.tools must be an array")
    if "messagePrefix" in value and not isinstance(prefix, tuple):
        return Rejection("HDR-1", "header.messagePrefix must be an array")
    return EpochHeader(
        config,
        system if isinstance(system, str) else None,
        tools if isinstance(tools, tuple) else None,
        prefix if isinstance(prefix, tuple) else None,
    )


@ensure(
    lambda result: isinstance(result, Rejection) or _parse_header(_header_to_json(result)) == result,
    "HDR-1: a parsed header writes back to JSON that parses to it",
    enabled=ENABLED,
)
@ensure(
    lambda result: isinstance(result, Rejection) or is_valid_config(result.config),
    "HDR-2: a config the parser accepts is valid",
    enabled=ENABLED,
)
def parse_header(value: JsonValue) -> EpochHeader | Rejection:
    """Return the ``EpochHeader`` a JSON value spells, or the shape rule it breaks (HDR-1, HDR-2)."""
    return _parse_header(value)


@ensure(
    lambda result: result is None or result.rule == "HDR-1" or result.rule == "HDR-2" or result.rule == "HDR-13",
    "HDR-1/HDR-2/HDR-13: a header event is rejected only by a header rule",
    enabled=ENABLED,
)
def check_header_event(event: Event) -> Rejection | None:
    """Return the rule a ``request/header`` event's data breaks, if any (HDR-1, HDR-2, HDR-13)."""
    if event.type != REQUEST_HEADER:
        return None
    header = _parse_header(event.field("header"))
    if isinstance(header, Rejection):
        return header
    reason = event.field("reason")
    if not any(reason == r for r in REASONS):
        return Rejection("HDR-13", f"request/header reason {reason!r} is not initial, resume or change")
    return None


@require(
    lambda event: event.type == REQUEST_HEADER and check_header_event(event) is None,
    "HDR-1: only a valid request/header carries a header",
    enabled=ENABLED,
)
def header_of(event: Event) -> EpochHeader:
    """Return the header a valid ``request/header`` event carries.

    :raises ValueError: when the event's header is malformed (excluded by the precondition)
    """
    header = _parse_header(event.field("header"))
    if isinstance(header, Rejection):
        raise ValueError(str(header))
    return header


@ensure(
    lambda config, result: config.written is not None or tuple(result)[:2] == ("provider", "model"),
    "HDR-1: a model-built config is written provider and model first",
    enabled=ENABLED,
)
def config_to_json(config: LlmCallConfig) -> FrozenMap:
    """Return the config as the harness writes it: provider, model, then the optional scalars."""
    return _config_to_json(config)


def _config_to_json(config: LlmCallConfig) -> FrozenMap:
    if config.written is not None and _parse_config(config.written) == config:
        return config.written  # a config changed since it was read is written anew
    fields: dict[str, JsonValue] = {"provider": config.provider, "model": config.model}
    if config.reasoning_effort is not None:
        fields["reasoningEffort"] = config.reasoning_effort
    if config.temperature is not None:
        fields["temperature"] = config.temperature
    if config.max_tokens is not None:
        fields["maxTokens"] = config.max_tokens
    if config.stop is not None:
        fields["stop"] = config.stop
    return FrozenMap(fields)


@require(lambda header: is_valid_config(header.config), "HDR-2: only a header with a valid config is written", enabled=ENABLED)
@ensure(lambda header, result: _parse_header(result) == header, "HDR-1: a header's JSON parses back to it", enabled=ENABLED)
def header_to_json(header: EpochHeader) -> FrozenMap:
    """Return the header's JSON object in ``canonicalHeader``'s key order (HDR-1)."""
    return _header_to_json(header)


def _header_to_json(header: EpochHeader) -> FrozenMap:
    fields: dict[str, JsonValue] = {"config": _config_to_json(header.config)}
    if header.system is not None:
        fields["system"] = header.system
    if header.tools is not None:
        fields["tools"] = header.tools
    if header.message_prefix is not None:
        fields["messagePrefix"] = header.message_prefix
    return FrozenMap(fields)


def is_canonical_header(header: EpochHeader) -> bool:
    """Return whether no optional field of ``header`` is present but empty (HDR-3)."""
    return header.system != "" and header.tools != () and header.message_prefix != ()


@ensure(lambda result: is_canonical_header(result), "HDR-3: the canonical header has no empty optional field", enabled=ENABLED)
@ensure(lambda header, result: result.config is header.config, "HDR-3: config is kept as-is", enabled=ENABLED)
@ensure(
    lambda header, result: not is_canonical_header(header) or result == header,
    "HDR-4: a canonical header is its own canonical form",
    enabled=ENABLED,
)
def canonical_header(header: EpochHeader) -> EpochHeader:
    """Return ``header`` with empty system, tools and messagePrefix made absent (HDR-3, HDR-4)."""
    return EpochHeader(
        header.config,
        header.system if header.system else None,
        header.tools if header.tools else None,
        header.message_prefix if header.message_prefix else None,
    )


@ensure(lambda a, b, result: not result or a.stop == b.stop, "HDR-5: equal configs have the same stop list", enabled=ENABLED)
def call_config_equals(a: LlmCallConfig, b: LlmCallConfig) -> bool:
    """Return ``callConfigEquals``: strict scalars; ``stop`` element-wise, absent equal only to absent (HDR-5)."""
    if (a.provider, a.model, a.reasoning_effort) != (b.provider, b.model, b.reasoning_effort):
        return False
    if a.temperature != b.temperature or a.max_tokens != b.max_tokens:
        return False
    if a.stop is None or b.stop is None:
        return a.stop is None and b.stop is None
    return a.stop == b.stop


def _same_json_list(a: tuple[JsonValue, ...] | None, b: tuple[JsonValue, ...] | None) -> bool:
    """Return ``JSON.stringify(a ?? []) === JSON.stringify(b ?? [])``."""
    return json_text(a or ()) == json_text(b or ())


@ensure(
    lambda a, b, result: not result or call_config_equals(a.config, b.config),
    "HDR-6: equal headers have equal configs",
    enabled=ENABLED,
)
@ensure(
    lambda a, b, result: not result or _same_json_list(a.message_prefix, b.message_prefix),
    "HDR-6: equal headers have the same prefix JSON text",
    enabled=ENABLED,
)
@require(lambda a, b: is_json_header(a) and is_json_header(b), "JSON-1: only headers of JSON values compare", enabled=ENABLED)
def header_equals(a: EpochHeader, b: EpochHeader) -> bool:
    """Return ``headerEquals``: config, strict system, prefix text (absent ≡ empty), tools in order (HDR-6)."""
    if not call_config_equals(a.config, b.config) or a.system != b.system:
        return False
    if not _same_json_list(a.message_prefix, b.message_prefix):
        return False
    tools_a, tools_b = a.tools or (), b.tools or ()
    return len(tools_a) == len(tools_b) and all(json_text(x) == json_text(y) for x, y in zip(tools_a, tools_b))


def _naive_fold(events: Iterable[Event], from_: EpochHeader | None) -> EpochHeader | None:
    """Return the canonical header of the last ``request/header`` event, else ``from_``."""
    headers = [e for e in events if e.type == REQUEST_HEADER]
    return canonical_header(header_of(headers[-1])) if headers else from_


@require(
    lambda events: all(check_header_event(e) is None for e in events),
    "HDR-1: every request/header in the log has the EpochHeader shape",
    enabled=ENABLED,
)
@ensure(
    lambda from_, result: result is None or result is from_ or is_canonical_header(result),
    "HDR-7: a folded snapshot is canonical",
    enabled=ENABLED,
)
@ensure(
    lambda events, from_, result: result == _naive_fold(events, from_),
    "HDR-7: the latest snapshot wins wholesale; no header event ⇒ from_",
    enabled=ENABLED,
)
def fold_request_header(events: tuple[Event, ...], from_: EpochHeader | None = None) -> EpochHeader | None:
    """Return the header in force after ``events``: the latest snapshot, canonicalized (HDR-7, HDR-8)."""
    state = from_
    for event in events:
        if event.type == REQUEST_HEADER:
            state = canonical_header(header_of(event))
    return state
