"""spec/formats.md §5 — the requests capture a user passes as ``--requests FILE`` (CAP-1).

A capture is JSON Lines, one request per line, in the order the adapter received them. A line is
either (a) the request itself with the harness's field names, optionally with ``turn``/``step``
(the step that sent it) and ``agentLoopRequest`` mixed in, or (b) the wrapper
``{"index", "capture": {..., "agentLoopRequest", "sessionId", "lastStepStart": {"seq", "turn",
"step"}}, "request": {...}}`` that the harness's test recorder writes. Every line is checked
against ``spec/schema/capture.schema.json`` (JSON Schema draft 2020-12); a line that does not fit
is one ``LogReadError`` naming the file, the line and CAP-1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import prefix_model
from prefix_model.conformance.fold import Captured
from prefix_model.conformance.plain import Known, Spans
from prefix_model.core.contracts import ENABLED, RejectedError, Rejection, ensure
from prefix_model.core.json_values import MAX_DEPTH, MAX_SAFE_INTEGER, FrozenMap, thaw
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.formats import rules
from prefix_model.formats.event_lines import parse_json_line
from prefix_model.formats.plain_json import NotPlain, plain_loads, plain_members
from prefix_model.formats.rules import MAX_LINE_BYTES

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import jsonschema

__all__ = ["CapturedRequest", "PlainCapturedRequest", "CaptureLine", "iter_capture", "iter_plain_capture", "capture_shape_ok", "messages_shape_ok", "line_error", "CAPTURE_SCHEMA_PATH", "capture_schema"]

# Package data (spec/schema/capture.schema.json links to it), so an installed wheel has it too; the
# path importlib.resources.files names for an installed package, without importing it (start-up).
CAPTURE_SCHEMA_PATH: Traversable = Path(prefix_model.__file__).parent / "spec" / "schema" / "capture.schema.json"
_STEP_KEYS = ("turn", "step", "agentLoopRequest")
_MAX_REASON = 240


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """One captured request: its 0-based place in the file, its 1-based line, and what it names.

    ``request`` holds the request fields only (key order kept); ``turn``/``step`` name the step
    that sent it when the capture says so; ``loop_request`` is False for an auxiliary call (such
    as the compaction summarizer) that reconstruction does not cover; ``instance`` names the loop
    instance that sent it, where the wrapper's ``capture.instance`` says (SPEC §14, INST-1..3).
    """

    index: int
    line: int
    request: FrozenMap
    turn: int | None
    step: int | None
    loop_request: bool
    session_id: str | None
    instance: str | None = None


@cache
def _schema_document() -> Mapping[str, Any]:
    """Return spec/schema/capture.schema.json as JSON, unchecked: what a capture read needs before any line."""
    schema = json.loads(CAPTURE_SCHEMA_PATH.read_text(encoding="utf-8"))
    assert isinstance(schema, dict)
    return schema


@cache
def capture_schema() -> Mapping[str, Any]:
    """Return the capture schema (spec/schema/capture.schema.json), checked as a draft 2020-12 schema."""
    schema = _schema_document()
    import jsonschema  # here, not at import: only a line the fast lane declines needs the schema (start-up)

    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@cache
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema

    return jsonschema.Draft202012Validator(capture_schema())


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_REASON else flat[: _MAX_REASON - 1] + "…"


def _schema_error(value: object) -> str | None:
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(value))
    if error is None:
        return None
    return _one_line(f"{error.json_path}: {error.message}")


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _named(value: Mapping[str, object]) -> tuple[Mapping[str, object], int | None, int | None, bool, str | None, str | None]:
    """Return what a schema-valid line (frozen or plain) names: request fields, turn, step, loop or not, session, instance."""
    if "request" in value:
        request, capture = value["request"], value["capture"]
        assert isinstance(request, Mapping) and isinstance(capture, Mapping)
        start = capture.get("lastStepStart")
        turn = _int_or_none(start.get("turn")) if isinstance(start, Mapping) else None
        step = _int_or_none(start.get("step")) if isinstance(start, Mapping) else None
        loop = capture["agentLoopRequest"] is True
        session = capture.get("sessionId")
        session = session if isinstance(session, str) else request.get("sessionId")
        instance = capture.get("instance")
    else:
        request = value.without(*_STEP_KEYS) if isinstance(value, FrozenMap) else {k: v for k, v in value.items() if k not in _STEP_KEYS}
        turn, step = _int_or_none(value.get("turn")), _int_or_none(value.get("step"))
        flag = value.get("agentLoopRequest")
        # Without the flag, a request naming an auxiliary purpose (compaction, title) is not the loop's.
        loop = flag if isinstance(flag, bool) else "purpose" not in request
        session = request.get("sessionId")
        instance = None  # the bare form names no instance
    return request, turn, step, loop, session if isinstance(session, str) else None, instance if isinstance(instance, str) else None


def _captured(index: int, line: int, value: FrozenMap) -> CapturedRequest:
    """Return the captured request a schema-valid line spells."""
    request, turn, step, loop, session, instance = _named(value)
    assert isinstance(request, FrozenMap)
    return CapturedRequest(index, line, request, turn, step, loop, session, instance)


def _parse(raw: bytes) -> FrozenMap | Rejection:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return rules.capture_line(rules.not_utf8(error.reason, error.start).reason)
    if not text.strip():
        return rules.capture_line(rules.empty_line().reason)
    value = parse_json_line(text)
    if isinstance(value, Rejection):
        return rules.capture_line(f"{value.rule}: {value.reason}")
    problem = _schema_error(json.loads(text))  # the plain value: cheaper to validate than a thawed copy
    if problem is not None:
        return rules.capture_line(f"not a captured request: {problem}")
    assert isinstance(value, FrozenMap)
    return value


def _bodies(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """Yield (0-based index, line without its newline) of the file at ``path``; bound each line."""
    name = str(path)
    # A missing or unparsable schema is a broken installation, not a bad capture: found before any
    # line. The schema is compiled (jsonschema, ~0.1 s of start-up) only when a line needs it.
    _schema_document()
    try:
        with open(path, "rb") as handle:
            for index, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 2), b"")):
                body = raw[:-1] if raw.endswith(b"\n") else raw
                if len(body) > MAX_LINE_BYTES:
                    raise LogReadError.of(name, index + 1, rules.capture_line(rules.line_too_long().reason))
                yield index, body
    except OSError as error:
        raise LogReadError.of(name, None, rules.capture_line(error.strerror or str(error))) from None


def iter_capture(path: str | Path) -> Iterator[CapturedRequest]:
    """Yield the requests of the capture at ``path`` in file order, each line checked (CAP-1)."""
    for index, body in _bodies(path):
        value = _parse(body)
        if isinstance(value, Rejection):
            raise LogReadError.of(str(path), index + 1, value)
        yield _captured(index, index + 1, value)


# --- the fast lane: plain values, the schema checked by a mirror of it ---------------------------


@dataclass(slots=True)  # not frozen: one is built per line, and a frozen one builds field by field through object.__setattr__
class PlainCapturedRequest:
    """``CapturedRequest`` with plain request fields, for the checker's fast tier.

    The line's shape is checked (``capture_shape_ok``, else the schema); its lossless-JSON rules
    and nesting are not, unless the line took the spec's path: ``freeze(request)`` decides them
    when the checker needs the exact value.
    """

    index: int
    line: int
    request: dict[str, object]
    turn: int | None
    step: int | None
    loop_request: bool
    session_id: str | None
    shallow: bool = True  # nests at most MAX_DEPTH levels (else only freeze can tell JSON-7)
    text: str = ""  # the line
    spans: Spans = field(default_factory=dict)  # where each request field's value is in ``text`` (compact lines)
    messages_checked: bool = True  # each message's shape was checked; else ``messages_shape_ok`` must be asked
    instance: str | None = None  # the loop instance that sent it (the wrapper's ``capture.instance``)


_REQUEST_KEYS = frozenset(("provider", "model", "reasoningEffort", "messages", "system", "tools", "temperature", "maxTokens", "stop", "sessionId", "purpose"))
_BARE_KEYS = _REQUEST_KEYS | frozenset(_STEP_KEYS)
_WRAPPER_KEYS = frozenset(("index", "capture", "request"))
_CAPTURE_KEYS = frozenset(("agentLoopRequest", "sessionId", "instance", "logLengthAtSend", "lastRequestHeaderSeq", "lastStepStart"))
_STEP_START_KEYS = frozenset(("seq", "turn", "step"))
_ROLES = ("system", "user", "assistant")
_PURPOSES = ("compaction", "session-title")


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def _ordinal(value: object) -> bool:
    return type(value) is int and 1 <= value <= MAX_SAFE_INTEGER


def _typed(value: dict[str, object], key: str, kind: type) -> bool:
    return key not in value or type(value[key]) is kind


def messages_shape_ok(messages: object) -> bool:
    """Return True only if ``messages`` fits the schema's messages: objects with a known role and a content array."""
    if type(messages) is not list:
        return False
    for message in messages:  # a loop, not all(): it runs over every message of a request
        if type(message) is not dict or message.get("role") not in _ROLES or type(message.get("content")) is not list:
            return False
    return True


def _request_ok(request: dict[str, object], messages: bool) -> bool:
    provider, model, tools, stop = (request.get(k) for k in ("provider", "model", "tools", "stop"))
    if not (type(provider) is str and provider and type(model) is str and model and type(request.get("messages")) is list):
        return False
    if messages and not messages_shape_ok(request["messages"]):
        return False
    if not (_typed(request, "reasoningEffort", str) and _typed(request, "system", str) and _typed(request, "sessionId", str)):
        return False
    if "tools" in request and not (type(tools) is list and all(_tool_ok(t) for t in tools)):
        return False
    if "stop" in request and not (type(stop) is list and all(type(s) is str for s in stop)):
        return False
    if not all(type(request[k]) in (int, float) for k in ("temperature", "maxTokens") if k in request):
        return False
    return "purpose" not in request or request["purpose"] in _PURPOSES


def _tool_ok(tool: object) -> bool:
    return type(tool) is dict and type(tool.get("name")) is str and type(tool.get("description")) is str and type(tool.get("parameters")) is dict


def _wrapped_ok(value: dict[str, object], messages: bool) -> bool:
    capture, request = value.get("capture"), value.get("request")
    if value.keys() != _WRAPPER_KEYS or not _count(value["index"]) or type(capture) is not dict or type(request) is not dict:
        return False
    if not (capture.keys() <= _CAPTURE_KEYS and type(capture.get("agentLoopRequest")) is bool):
        return False  # unknown metadata keys: the schema allows them, the fast lane does not vouch for them
    session, start = capture.get("sessionId"), capture.get("lastStepStart")
    if not (session is None or type(session) is str) or not _typed(capture, "instance", str):
        return False
    if ("logLengthAtSend" in capture and not _count(capture["logLengthAtSend"])) or not (capture.get("lastRequestHeaderSeq") is None or _count(capture["lastRequestHeaderSeq"])):
        return False
    if start is not None and not (type(start) is dict and start.keys() == _STEP_START_KEYS and _count(start["seq"]) and _ordinal(start["turn"]) and _ordinal(start["step"])):
        return False
    return request.keys() <= _REQUEST_KEYS and _request_ok(request, messages)


@ensure(
    lambda value, messages, result: not result or not messages or _schema_error(value) is None,
    "a capture line the mirror vouches for is one the schema accepts",
    enabled=ENABLED,
)
def capture_shape_ok(value: object, messages: bool = True) -> bool:
    """Return True only if ``value`` fits spec/schema/capture.schema.json (a mirror of it, for speed).

    False means "ask the schema": the fast lane then validates with ``jsonschema`` and reports
    its error. Without ``messages`` each message's own shape is left out (``messages_shape_ok``
    decides it later, when the checker cannot vouch for the messages by equality).
    ``tests/conformance/test_plain_lane.py`` holds the mirror to the schema on generated lines.
    """
    if type(value) is not dict:
        return False
    if "request" in value:
        return _wrapped_ok(value, messages)
    if not value.keys() <= _BARE_KEYS or ("turn" in value) != ("step" in value):
        return False
    if ("turn" in value and not (_ordinal(value["turn"]) and _ordinal(value["step"]))) or not _typed(value, "agentLoopRequest", bool):
        return False
    return _request_ok(value, messages)


def _plain_captured(index: int, line: int, value: dict[str, object], shallow: bool, text: str, spans: Spans, checked: bool) -> PlainCapturedRequest:
    """Return the captured request a shape-valid plain line spells (as ``_captured`` does for frozen ones)."""
    request, turn, step, loop, session, instance = _named(value)
    assert isinstance(request, dict)
    return PlainCapturedRequest(index, line, request, turn, step, loop, session, shallow, text, spans, checked, instance)


def line_error(path: str, line: int, text: str) -> LogReadError | None:
    """Return the error the spec's path reports for a capture line, if any (the exact CAP-1 wording)."""
    value = _parse(text.encode("utf-8"))
    return LogReadError.of(path, line, value) if isinstance(value, Rejection) else None


@dataclass(slots=True)
class CaptureLine(Captured):
    """A captured request as the conformance fold compares it, with what the capture format leaves to it (CAP-1).

    The fast lane may leave a line's messages unchecked (``messages_checked``) and its lossless
    rules undecided; the fold asks for them only where its verdict needs them.
    """

    def check_messages(self) -> None:
        if not self.messages_checked and not messages_shape_ok(self.fields.get("messages")):
            error = line_error(self.source, self.line, self.text)
            if error is not None:
                raise error

    def shape_ok(self, messages: list[object]) -> bool:
        return messages_shape_ok(messages)

    def exact(self) -> FrozenMap:
        try:
            return Captured.exact(self)  # (no zero-argument super() in a slots dataclass)
        except RejectedError as error:
            raise LogReadError.of(self.source, self.line, rules.capture_line(f"{error.rejection.rule}: {error.rejection.reason}")) from None


def iter_plain_capture(path: str | Path, known: Callable[[], Known | None] | None = None) -> Iterator[PlainCapturedRequest]:
    """Yield ``iter_capture(path)``'s requests with plain fields, freezing only the lines that need it.

    A compact line is read member by member, so the checker can compare each field's own text
    (``spans``), its ``messages`` decoded only past the elements ``known`` guesses; a line with
    spaces is read whole; a line the fast lane cannot vouch for takes the spec's path (frozen,
    schema-checked: the exact error).
    """
    for index, body in _bodies(path):
        text, spans = "", {}
        value: object = None
        try:
            text, value, outer, inner = plain_members(body, "request", known)
            spans = inner if "request" in value else outer
        except NotPlain:
            try:
                value, _ = plain_loads(body, check_depth=False)  # a line with spaces: no spans
                text = body.decode("utf-8")
            except NotPlain:
                value = None
        shallow = text.count("[") + text.count("{") <= MAX_DEPTH
        checked = not (isinstance(value, dict) and capture_shape_ok(value, messages=False))  # messages: later, or by equality
        if checked and not (isinstance(value, dict) and _schema_error(value) is None):
            frozen = _parse(body)  # the spec's path: the exact value, or the exact error
            if isinstance(frozen, Rejection):
                raise LogReadError.of(str(path), index + 1, frozen)
            value, shallow, spans = thaw(frozen), True, {}
        assert isinstance(value, dict)
        yield _plain_captured(index, index + 1, value, shallow, text, spans, checked)
