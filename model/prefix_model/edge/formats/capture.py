"""spec/formats.md §5 — the requests capture a user passes as ``--requests FILE`` (CAP-1).

A capture is JSON Lines, one request per line, in the order the adapter received them. A line is
either (a) the request itself with the harness's field names, optionally with ``turn``/``step``
(the step that sent it) and ``agentLoopRequest`` mixed in, or (b) the wrapper
``{"index", "capture": {..., "agentLoopRequest", "sessionId", "lastStepStart": {"seq", "turn",
"step"}}, "request": {...}}`` that the harness's test recorder writes. Every line is validated by
``spec/schema/capture.schema.json`` itself (JSON Schema draft 2020-12, compiled by
``jsonschema_rs``: no second statement of its shape here); a line that does not fit is one
``LogReadError`` naming the file, the line and CAP-1. Each line is read as one ``Captured``, the
conformance fold's type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import prefix_model
from prefix_model.conformance.captured import Captured
from prefix_model.formats.plain import Known
from prefix_model.core.contracts import Rejection
from prefix_model.core.json_values import FrozenMap, thaw
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.edge.formats.frames import plain_runs
from prefix_model.formats import rules
from prefix_model.formats.event_lines import parse_json_line
from prefix_model.formats.plain_json import NotPlain, Seen, plain_loads, plain_members

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import jsonschema_rs

__all__ = ["iter_capture", "read_line", "CAPTURE_SCHEMA_PATH", "capture_schema"]

# Package data (spec/schema/capture.schema.json links to it), so an installed wheel has it too; the
# path importlib.resources.files names for an installed package, without importing it (start-up).
CAPTURE_SCHEMA_PATH: Traversable = Path(prefix_model.__file__).parent / "spec" / "schema" / "capture.schema.json"
_MAX_REASON = 240


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
    import jsonschema  # here, not at import: only a test asks for the schema checked (start-up)

    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@cache
def _validator() -> jsonschema_rs.Draft202012Validator:
    """The schema compiled once: every line is validated by it (a pure-Python validator cost 2-3x the check, bench/)."""
    import jsonschema_rs  # here, not at import: a check without --requests needs none (start-up)

    return jsonschema_rs.Draft202012Validator(dict(_schema_document()))


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_REASON else flat[: _MAX_REASON - 1] + "…"


def _pointer(path: object) -> str:
    """An error's instance path as an RFC 6901 JSON Pointer (``/request/messages/0/role``); the line itself is ``/``."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path] if isinstance(path, list) else []
    return "/" + "/".join(parts)


def _schema_error(value: object) -> str | None:
    """Return why ``value`` is not a captured request, in the capture format's words, or None when the schema accepts it."""
    validator = _validator()
    if validator.is_valid(value):
        return None
    error = next(iter(validator.iter_errors(value)))
    kind, where = type(error.kind).__name__, _pointer(error.instance_path)
    if kind in ("UnevaluatedProperties", "AdditionalProperties"):
        names = ", ".join(repr(n) for n in getattr(error.kind, "unexpected", ()))
        reason = f"at {where}: unknown field {names} (spec/formats.md §5 lists a capture line's fields)"
    elif kind == "Required":
        name = getattr(error.kind, "property", "?")
        together = "dependentRequired" in list(error.schema_path)[-2:]
        reason = f"at {where}: {name!r} is missing" + (" (turn and step name a step together)" if together else "")
    else:
        reason = f"at {where}: {error.message}"
    return _one_line(reason)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _named(value: dict[str, object]) -> tuple[Mapping[str, object], int | None, int | None, bool, str | None, str | None]:
    """Return what a schema-valid line names: request fields, turn, step, loop or not, session, instance.

    ``value`` is the line's own fresh value: the bare form's step members are taken out of it in place (no copy per line).
    """
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
        request = value
        take = request.pop
        turn, step, flag = _int_or_none(take("turn", None)), _int_or_none(take("step", None)), take("agentLoopRequest", None)
        # Without the flag, a request naming an auxiliary purpose (compaction, title) is not the loop's.
        loop = flag if isinstance(flag, bool) else "purpose" not in request
        session = request.get("sessionId")
        instance = None  # the bare form names no instance
    return request, turn, step, loop, session if isinstance(session, str) else None, instance if isinstance(instance, str) else None


def read_line(raw: bytes) -> FrozenMap | Rejection:
    """Return a capture line as the spec reads it — frozen (JSON-1..7), then validated by the schema — or why it is none (CAP-1)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return rules.capture_line(rules.not_utf8(error.reason, error.start).reason)
    if not text.strip():
        return rules.capture_line(rules.empty_line().reason)
    value = parse_json_line(text)
    if isinstance(value, Rejection):
        return rules.capture_line(f"{value.rule}: {value.reason}")
    problem = _schema_error(thaw(value))  # the value read, as plain values: what the validator reads
    if problem is not None:
        return rules.capture_line(f"not a captured request: {problem}")
    assert isinstance(value, FrozenMap)
    return value


def _bodies(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """Yield (0-based index, line without its newline) of the file at ``path``; bound each line."""
    name = str(path)
    # A missing or unparsable schema is a broken installation, not a bad capture: found before any line.
    _schema_document()
    try:
        with open(path, "rb") as handle:
            # The log's line splitter (blocks split in C; a readline per line cost more), its FMT-5 bound a CAP-1 error here.
            for run in plain_runs(handle, name):
                yield from enumerate(run.bodies, run.number)
    except LogReadError as error:
        raise LogReadError.of(name, error.line, rules.capture_line(error.reason)) from None
    except OSError as error:
        raise LogReadError.of(name, None, rules.capture_line(error.strerror or str(error))) from None


def _refused(request: Captured, rejection: Rejection) -> LogReadError:
    """A lossy value the fold found in a captured request (JSON-7 past the reader's bound): the line's CAP-1 error."""
    return LogReadError.of(request.source, request.line, rules.capture_line(f"{rejection.rule}: {rejection.reason}"))


def iter_capture(path: str | Path, known: Callable[[], Known | None] | None = None) -> Iterator[Captured]:
    """Yield the requests of the capture at ``path`` in file order, each line validated by the schema (CAP-1).

    A compact line is read member by member into plain values, so the checker can compare each
    field's own text (``spans``), its ``messages`` decoded only past the elements ``known``
    guesses; a line with spaces is read whole. A line holding a number the plain reader does not
    vouch for, or one the schema refuses, takes the spec's path (``read_line``: frozen, then
    validated), which gives the exact value or the exact error. JSON-7 is left to the fold
    (``Captured.exact``) where the line's brackets exceed the bound: most such lines nest little.
    """
    name = str(path)
    validator = _validator()
    seen: Seen = {}  # the members' texts and values last read: a request repeats its system and tools
    for index, body in _bodies(path):
        text, spans = "", {}
        value: object = None
        try:
            text, value, outer, inner = plain_members(body, "request", known, seen)
            spans = inner if "request" in value else outer
        except NotPlain:
            try:
                value, _ = plain_loads(body, check_depth=False)  # a line with spaces: no spans
                text = body.decode("utf-8")
            except NotPlain:
                value = None
        shallow: bool | None = None  # counted by the fold if the request is read whole (CAP-1); most are compared by text
        if value is None or not validator.is_valid(value):
            frozen = read_line(body)  # the spec's path: the exact value, or the exact error
            if isinstance(frozen, Rejection):
                raise LogReadError.of(name, index + 1, frozen)
            value, shallow, spans = thaw(frozen), True, {}
        assert isinstance(value, dict)
        request, turn, step, loop, session, instance = _named(value)
        assert isinstance(request, dict)
        yield Captured(index, index + 1, request, turn, step, name, shallow, text, spans, instance, loop, session, _refused)
