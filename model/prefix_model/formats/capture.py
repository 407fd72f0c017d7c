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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from prefix_model.contracts import Rejection
from prefix_model.formats.events_jsonl import MAX_LINE_BYTES, LogReadError, parse_json_line
from prefix_model.json_values import FrozenMap

__all__ = ["CapturedRequest", "iter_capture", "CAPTURE_SCHEMA_PATH", "capture_schema"]

CAPTURE_SCHEMA_PATH = Path(__file__).resolve().parents[3] / "spec" / "schema" / "capture.schema.json"
_STEP_KEYS = ("turn", "step", "agentLoopRequest")
_MAX_REASON = 240


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """One captured request: its 0-based place in the file, its 1-based line, and what it names.

    ``request`` holds the request fields only (key order kept); ``turn``/``step`` name the step
    that sent it when the capture says so; ``loop_request`` is False for an auxiliary call (such
    as the compaction summarizer) that reconstruction does not cover.
    """

    index: int
    line: int
    request: FrozenMap
    turn: int | None
    step: int | None
    loop_request: bool
    session_id: str | None


@cache
def capture_schema() -> Mapping[str, Any]:
    """Return the capture schema (spec/schema/capture.schema.json), checked as a draft 2020-12 schema."""
    schema = json.loads(CAPTURE_SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert isinstance(schema, dict)
    return schema


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(capture_schema())


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_REASON else flat[: _MAX_REASON - 1] + "…"


def _schema_error(value: object) -> str | None:
    error = best_match(_validator().iter_errors(value))
    if error is None:
        return None
    return _one_line(f"{error.json_path}: {error.message}")


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _captured(index: int, line: int, value: FrozenMap) -> CapturedRequest:
    """Return the captured request a schema-valid line spells."""
    if "request" in value:
        request, capture = value["request"], value["capture"]
        assert isinstance(request, FrozenMap) and isinstance(capture, FrozenMap)
        start = capture.get("lastStepStart")
        turn = _int_or_none(start.get("turn")) if isinstance(start, FrozenMap) else None
        step = _int_or_none(start.get("step")) if isinstance(start, FrozenMap) else None
        loop = capture["agentLoopRequest"] is True
        session = capture.get("sessionId")
        session = session if isinstance(session, str) else request.get("sessionId")
    else:
        request = value.without(*_STEP_KEYS)
        turn, step = _int_or_none(value.get("turn")), _int_or_none(value.get("step"))
        flag = value.get("agentLoopRequest")
        # Without the flag, a request naming an auxiliary purpose (compaction, title) is not the loop's.
        loop = flag if isinstance(flag, bool) else "purpose" not in request
        session = request.get("sessionId")
    return CapturedRequest(index, line, request, turn, step, loop, session if isinstance(session, str) else None)


def _parse(raw: bytes) -> FrozenMap | Rejection:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return Rejection("CAP-1", f"not UTF-8 ({error.reason} at byte {error.start})")
    if not text.strip():
        return Rejection("CAP-1", "empty line")
    value = parse_json_line(text)
    if isinstance(value, Rejection):
        return Rejection("CAP-1", f"{value.rule}: {value.reason}")
    problem = _schema_error(json.loads(text))  # the plain value: cheaper to validate than a thawed copy
    if problem is not None:
        return Rejection("CAP-1", f"not a captured request: {problem}")
    assert isinstance(value, FrozenMap)
    return value


def iter_capture(path: str | Path) -> Iterator[CapturedRequest]:
    """Yield the requests of the capture at ``path`` in file order, each line checked (CAP-1)."""
    name = str(path)
    _validator()  # a missing or invalid schema is a broken installation, not a bad capture
    try:
        with open(path, "rb") as handle:
            for index, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 2), b"")):
                line = index + 1
                body = raw[:-1] if raw.endswith(b"\n") else raw
                if len(body) > MAX_LINE_BYTES:
                    raise LogReadError(name, line, "CAP-1", f"line longer than {MAX_LINE_BYTES} bytes")
                value = _parse(body)
                if isinstance(value, Rejection):
                    raise LogReadError(name, line, value.rule, value.reason)
                yield _captured(index, line, value)
    except OSError as error:
        raise LogReadError(name, None, "CAP-1", error.strerror or str(error)) from None
