"""The reference consumer of the conformance vectors (spec/vectors.md §6): the adapter protocol, the
model's own adapter, checker and reader, ``replay`` of one case and ``consume`` of a vectors directory.

Producing vectors is not the test; consuming them is. Another implementation mirrors ``Adapter``
(drive it by JSON actions, show its logs and the requests it sent), for the log cases ``Checker``
(judge a log and a capture, name the requirements it finds broken) and, for the log files,
``Reader`` (read a harness log file's bytes to its events and torn tail, or name the rule that
makes it unusable); this module is the Python reference of all three and of the rules for
comparing what they show with what a vector expects. Values crossing the protocol are plain JSON (``json.loads`` shapes); they are compared as
JSON text (JSON-4), so key order and number text count, ``true`` never equals ``1``.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import jsonschema
from jsonschema.exceptions import best_match

from prefix_model.conformance.vacuity import applied_though_refused, not_grown
from prefix_model.core.contracts import RejectedError
from prefix_model.core.events import Event
from prefix_model.core.json_values import FrozenMap, freeze, json_text, thaw
from prefix_model.edge.checker import Unusable, check_log
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.edge.formats.session_jsonl import LogStream
from prefix_model.vectors import FORMAT_VERSION
from prefix_model.vectors.codec import action_from_json, event_expected, request_record
from prefix_model.vectors.persisted import FileError, file_bytes
from prefix_model.formats.event_lines import event_to_json
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.world import World

__all__ = [
    "JsonObject",
    "VectorsUnreadable",
    "ActionRefused",
    "Adapter",
    "Checker",
    "Unreadable",
    "FileRead",
    "Reader",
    "ModelAdapter",
    "ModelChecker",
    "ModelReader",
    "replay",
    "Problem",
    "ABSENT",
    "pointer",
    "first_difference",
    "read_bounded",
    "plain_text",
    "CaseResult",
    "load_cases",
    "consume_report",
    "consume",
]

JsonObject = dict[str, Any]
LIMIT = 240
MAX_CASE_BYTES = 16 * 1024 * 1024  # the largest case the generator writes is about 40 KB
# Package data (spec/schema/vector.schema.json links to it), so an installed wheel validates cases too.
VECTOR_SCHEMA_PATH = resources.files("prefix_model") / "spec" / "schema" / "vector.schema.json"


class VectorsUnreadable(ValueError):
    """A vectors directory whose manifest cannot be read: the path and why."""


class ActionRefused(Exception):
    """Raised by ``Adapter.apply`` for an action whose guard does not hold where it is applied (LOOP-1)."""


class Adapter(Protocol):
    """What a consumer drives: one implementation of the loop, fed JSON actions (spec/vectors.md §5)."""

    def reset(self) -> None:
        """Start from nothing: no session, no instance, no listener, no request."""

    def apply(self, action: JsonObject) -> None:
        """Apply one JSON action; raise ``ActionRefused`` when its guard does not hold."""

    def logs(self) -> dict[str, list[JsonObject]]:
        """Return every session's events (``event_to_json`` form without ``time``), by session id."""
        ...

    def requests(self) -> list[JsonObject]:
        """Return every request sent so far, in order: ``{instance, loopRequest, request, session, step, turn}``."""
        ...


class Checker(Protocol):
    """What judges a log case: a conformance checker over one session's log and capture."""

    def check(self, session: str, log: Sequence[str], capture: Sequence[str] | None) -> set[str]:
        """Return the requirement IDs the log (in-memory event lines) and capture (request lines) break."""
        ...


class Unreadable(Exception):
    """Raised by ``Reader.read`` for a file a conforming reader must reject: the rule it breaks."""

    def __init__(self, rule: str, reason: str = "") -> None:
        super().__init__(f"{rule}: {reason}" if reason else rule)
        self.rule, self.reason = rule, reason


@dataclass(frozen=True, slots=True)
class FileRead:
    """What a reader read from a log file: every event (the in-memory form, ``time`` included) and the
    1-based line of a tolerated torn tail (None when the file has none)."""

    events: list[JsonObject]
    torn_tail: int | None = None


class Reader(Protocol):
    """What reads a harness log file (either form, plain or zstd: spec/formats.md) for the log-file cases."""

    def read(self, data: bytes) -> FileRead:
        """Return the events and torn tail of the file whose bytes are ``data``; raise ``Unreadable`` naming the rule when it is unusable."""
        ...


class ModelAdapter:
    """The model as an adapter: ``loop.apply`` under ``semantics`` (the harness's by default)."""

    def __init__(self, semantics: Semantics = HARNESS) -> None:
        self.semantics = semantics
        self.world = World()
        self._events: dict[str, list[tuple[Event, JsonObject]]] = {}
        self._requests: list[JsonObject] = []

    def reset(self) -> None:
        self.world = World()
        self._events, self._requests = {}, []

    def apply(self, action: JsonObject) -> None:
        decoded = action_from_json(freeze(action))
        if not enabled(self.world, decoded):
            raise ActionRefused(f"{type(decoded).__name__}: its guard does not hold")
        self.world = apply(self.world, decoded, self.semantics)

    def logs(self) -> dict[str, list[JsonObject]]:
        shown: dict[str, list[JsonObject]] = {}
        for session in self.world.sessions:
            cached = self._events.setdefault(session.id, [])
            events = session.log.events
            if len(cached) > len(events) or any(old is not new for (old, _), new in zip(cached, events)):
                cached.clear()  # the model only appends (LOG-4), so this never happens; stay correct anyway
            cached.extend((e, _plain(event_expected(e))) for e in events[len(cached) :])
            shown[session.id] = [value for _, value in cached]
        return shown

    def requests(self) -> list[JsonObject]:
        sent = self.world.requests
        self._requests.extend(_plain(request_record(r)) for r in sent[len(self._requests) :])
        return list(self._requests[: len(sent)])


def _plain(value: FrozenMap) -> JsonObject:
    result = thaw(value)
    assert isinstance(result, dict)
    return result


class ModelChecker:
    """The model's conformance checker (``prefix-model check LOG --requests CAPTURE --session ID``) as a ``Checker``.

    An unreadable log or capture is the one rule its reader names; an input with nothing to check is CHK-1.
    """

    def check(self, session: str, log: Sequence[str], capture: Sequence[str] | None) -> set[str]:
        with tempfile.TemporaryDirectory(prefix="prefix-model-vector-") as folder:
            log_path = Path(folder) / "session.events.jsonl"
            log_path.write_bytes("".join(line + "\n" for line in log).encode("utf-8"))
            capture_path = None
            if capture is not None:
                capture_path = Path(folder) / "requests.jsonl"
                capture_path.write_bytes("".join(line + "\n" for line in capture).encode("utf-8"))
            try:
                report = check_log(log_path, capture_path, session)
            except LogReadError as error:
                return {error.rule}
            except Unusable as unusable:
                return {unusable.rule}
            return {rule for finding in report.findings for rule in finding.rules}


class ModelReader:
    """The model's reader (``session_jsonl.LogStream``, what ``prefix-model check`` reads a log file with) as a ``Reader``."""

    def read(self, data: bytes) -> FileRead:
        with tempfile.TemporaryDirectory(prefix="prefix-model-vector-") as folder:
            path = Path(folder) / "session.jsonl"
            path.write_bytes(data)
            stream = LogStream(path)
            try:
                events = [_plain(event_to_json(event)) for _, event in stream]
            except LogReadError as error:
                raise Unreadable(error.rule, error.reason) from None
            return FileRead(events, None if stream.torn_tail is None else stream.torn_tail.line)


# --- comparing what an adapter shows with what a vector expects ---


def plain_text(value: object) -> str:
    """Return the JSON text of a plain JSON value; a value that is not lossless JSON is shown as such."""
    try:
        return json_text(freeze(value))
    except (RejectedError, TypeError, ValueError, RecursionError) as error:
        return f"<not JSON: {error}>"


def _short(text: str) -> str:
    return text if len(text) <= LIMIT else f"{text[:LIMIT]}… (+{len(text) - LIMIT} chars)"


ABSENT: Any = object()  # a side of a difference that has no value there


class Problem(str):
    """One thing wrong with a case: the line people read (values shortened) and, for a difference, where.

    ``pointer`` is an RFC 6901 JSON Pointer into the case file (through a ``log`` line it goes on into
    the line's parsed value); ``expected`` and ``actual`` are the whole values there, ``ABSENT`` on a
    side that has none. A plain ``str`` otherwise, so a problem compares equal to its text.
    """

    pointer: str | None
    expected: Any
    actual: Any

    def __new__(cls, text: str, pointer: str | None = None, expected: Any = ABSENT, actual: Any = ABSENT) -> Problem:
        problem = super().__new__(cls, text)
        problem.pointer, problem.expected, problem.actual = pointer, expected, actual
        return problem

    def to_json(self) -> JsonObject:
        """Return ``{message, pointer?, expected?, actual?}``: a side with no value is left out."""
        fields: JsonObject = {"message": str(self)}
        if self.pointer is not None:
            fields["pointer"] = self.pointer
        for key, value in (("expected", self.expected), ("actual", self.actual)):
            if value is not ABSENT:
                fields[key] = value
        return fields


def pointer(parts: Sequence[object]) -> str:
    """Return the RFC 6901 JSON Pointer of ``parts`` (``~`` as ``~0``, ``/`` as ``~1``)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def first_difference(expected: object, actual: object, path: tuple[object, ...] = ()) -> tuple[tuple[object, ...], object, object]:
    """Return the path of the first place two plain JSON values differ (by JSON text), and both values there."""
    if isinstance(expected, dict) and isinstance(actual, dict) and list(expected) == list(actual):
        for key in expected:
            if plain_text(expected[key]) != plain_text(actual[key]):
                return first_difference(expected[key], actual[key], path + (key,))
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for index, (a, b) in enumerate(zip(expected, actual)):
            if plain_text(a) != plain_text(b):
                return first_difference(a, b, path + (index,))
    return path, expected, actual  # the keys, the lengths or the scalars differ: this value itself


def _compare(what: str, base: tuple[object, ...], expected: Sequence[object], actual: Sequence[object]) -> list[Problem]:
    """Return at most one mismatch: the first index where two arrays of JSON values differ, ``base`` the expected array's path."""
    for index in range(max(len(expected), len(actual))):
        at = base + (index,)
        if index >= len(expected):
            return [Problem(f"{what} {index}: not expected, got {_short(plain_text(actual[index]))}", pointer(at), actual=actual[index])]
        if index >= len(actual):
            text = f"{what} {index}: missing (expected {len(expected)}, got {len(actual)}); expected {_short(plain_text(expected[index]))}"
            return [Problem(text, pointer(at), expected=expected[index])]
        want, got = plain_text(expected[index]), plain_text(actual[index])
        if want != got:
            if got.startswith("<not JSON"):
                return [Problem(f"{what} {index} differs at {pointer(at)}:\n    expected {_short(want)}\n    actual   {got}", pointer(at), expected[index])]
            path, there, here = first_difference(expected[index], actual[index], at)
            text = f"{what} {index} differs at {pointer(path)}:\n    expected {_short(plain_text(there))}\n    actual   {_short(plain_text(here))}"
            return [Problem(text, pointer(path), there, here)]
    return []


def _replay_scenario(case: Mapping[str, Any], adapter: Adapter, stepwise: bool, requests_only: bool = False) -> list[str]:
    """With ``requests_only`` (the weaker oracle, ``conform --compare requests``) the logs are neither watched nor compared."""
    refused = set(case.get("refused", ()))
    adapter.reset()
    seen: tuple[dict[str, list[JsonObject]], list[JsonObject]] = ({}, [])
    for index, action in enumerate(case["actions"]):
        name = action.get("action") if isinstance(action, dict) else None
        try:
            adapter.apply(action)
        except ActionRefused as error:
            if index in refused:
                continue
            return [Problem(f"action {index} ({name}) was refused: {error}", pointer(("actions", index)))]
        except Exception as error:  # an adapter's failure is a finding about it, never a crash of the consumer
            return [Problem(f"action {index} ({name}) failed: {_failure(error)}", pointer(("actions", index)))]
        if index in refused:
            refusal = applied_though_refused(index, name)
            return [Problem(f"{refusal.reason} ({refusal.rule})", pointer(("actions", index)))]
        if stepwise:
            now = ({} if requests_only else adapter.logs(), adapter.requests())
            why = not_grown(seen[0], now[0], (seen[1], now[1]))
            if why is not None:
                return [Problem(f"after action {index} ({name}): {why.reason} ({why.rule})", pointer(("actions", index)))]
            seen = ({k: list(v) for k, v in now[0].items()}, list(now[1]))
    expected = case["expected"]
    logs, requests = adapter.logs(), adapter.requests()
    problems: list[str] = []
    if not requests_only and sorted(expected["sessions"]) != sorted(logs):
        want, got = sorted(expected["sessions"]), sorted(logs)
        problems.append(Problem(f"sessions: expected {json.dumps(want, ensure_ascii=False)}, got {json.dumps(got, ensure_ascii=False)}", "/expected/sessions", want, got))
    for session in () if requests_only else sorted(set(expected["sessions"]) & set(logs)):
        problems += _compare(f"session {session} event", ("expected", "sessions", session), expected["sessions"][session], logs[session])
    problems += _compare("request", ("expected", "requests"), expected["requests"], requests)
    return problems


def _failure(error: Exception) -> str:
    """Say how an adapter or reader failed: the project's own failures (an adapter process that hung, crashed or broke
    the protocol) are worded for people and say it alone; any other exception is an in-process implementation's crash,
    whose kind is part of what went wrong (``KeyError: 'x'``)."""
    return str(error) if type(error).__module__.startswith("prefix_model.") else f"{type(error).__name__}: {error}"


def _torn(line: object) -> str:
    return "none" if line is None else f"line {line}"


def _replay_file(case: Mapping[str, Any], reader: Reader) -> list[str]:
    """Return what is wrong with ``reader``'s read of the case's file: nothing when it reads ``log`` and ``tornTail``, or rejects naming ``requirement``."""
    try:
        data = file_bytes(case["file"])
    except FileError as error:
        return [f"the case's file spells no file: {error}"]
    try:
        read = reader.read(data)
    except Unreadable as error:
        if case["valid"]:
            return [f"the reader rejects a file it must read ({_short(str(error))})"]
        if error.rule != case["requirement"]:
            return [f"the reader rejects the file with {error.rule}, not {case['requirement']} ({_short(error.reason)})"]
        return []
    except Exception as error:  # a reader's crash is a finding about it, never a crash of the consumer
        return [f"the reader failed: {_failure(error)}"]
    if not case["valid"]:
        return [f"the reader reads {len(read.events)} events from a file it must reject with {case['requirement']}"]
    problems: list[str] = list(_compare("event", ("log",), [json.loads(line) for line in case["log"]], read.events))
    if read.torn_tail != case["tornTail"]:
        problems.append(f"torn tail: expected {_torn(case['tornTail'])}, got {_torn(read.torn_tail)}")
    return problems


def replay(
    case: Mapping[str, Any], adapter: Adapter, checker: Checker | None = None, *, stepwise: bool = True, reader: Reader | None = None,
    requests_only: bool = False,
) -> list[str]:
    """Return what is wrong when ``case`` runs: nothing when it passes.

    A scenario (``actions``) is replayed through ``adapter``: each action applied or, when listed in
    ``refused``, refused; with ``stepwise`` the logs and requests must only grow after every action;
    then every session's events and every request must equal ``expected`` (first difference
    reported, with its JSON path, expected and actual). A log file (``file``) goes to ``reader``
    (the model's by default): a valid one must read to exactly the events of ``log`` and the torn
    tail ``tornTail``, an invalid one must be rejected naming its ``requirement``. A log case
    (``log``, a log file's too) goes to ``checker`` (the model's by default): a valid one must draw
    no finding, an invalid one a finding of its ``requirement``. With ``requests_only`` a scenario's
    logs are left alone: only its refusals and requests are judged.
    """
    if case.get("formatVersion") != FORMAT_VERSION:
        return [f"format version {plain_text(case.get('formatVersion'))} is not {FORMAT_VERSION}"]
    if "actions" in case:
        return _replay_scenario(case, adapter, stepwise, requests_only)
    if "file" in case:
        problems = _replay_file(case, reader if reader is not None else ModelReader())
        if problems or not case["valid"]:
            return problems
    judge = checker if checker is not None else ModelChecker()
    rules = judge.check(case["session"], case["log"], case.get("capture"))
    if case["valid"]:
        return [f"the checker reports {sorted(rules)} on a log it must accept"] if rules else []
    requirement = case["requirement"]
    if requirement not in rules:
        return [f"the checker does not report {requirement} (it reports {sorted(rules) or 'nothing'})"]
    return []


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case of a consumed directory: its id and what is wrong with it (nothing when it passed)."""

    id: str
    problems: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        """Return whether the case passed."""
        return not self.problems


def load_cases(directory: Path) -> list[tuple[str, Mapping[str, Any] | None, tuple[str, ...]]]:
    """Return every case the manifest of ``directory`` lists, in manifest order: (id, case, problems).

    Each case file's SHA-256 must equal the manifest's; a case file that is missing, altered or
    unreadable comes with its problem and no case.
    """
    where = directory / "manifest.json"
    try:
        manifest = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise VectorsUnreadable(f"{where}: {getattr(error, 'strerror', None) or error}") from None
    entries = manifest.get("cases") if isinstance(manifest, dict) else None
    if not (isinstance(entries, list) and all(isinstance(e, dict) and {"id", "file", "sha256"} <= set(e) for e in entries)):
        raise VectorsUnreadable(f"{where}: not a manifest (an object whose cases each name id, file and sha256)")
    if manifest.get("formatVersion") != FORMAT_VERSION:
        return [("manifest.json", None, (f"format version {plain_text(manifest.get('formatVersion'))} is not {FORMAT_VERSION}",))]
    loaded: list[tuple[str, Mapping[str, Any] | None, tuple[str, ...]]] = []
    for entry in entries:
        path = directory / str(entry["file"])
        if not path.resolve().is_relative_to(directory.resolve()):  # never read outside the directory named
            loaded.append((str(entry["id"]), None, (f"{entry['file']}: outside the vectors directory",)))
            continue
        try:
            data = read_bounded(path)
        except OSError as error:
            loaded.append((entry["id"], None, (f"{entry['file']}: {error.strerror or error}",)))
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            loaded.append((entry["id"], None, (f"{entry['file']}: sha256 {digest} is not the manifest's {entry['sha256']}",)))
            continue
        try:
            case = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            loaded.append((entry["id"], None, (f"{entry['file']}: not JSON: {error}",)))
            continue
        if not isinstance(case, dict) or case.get("id") != entry["id"]:
            named = case.get("id") if isinstance(case, dict) else None
            loaded.append((entry["id"], None, (f"{entry['file']} holds case {plain_text(named)}",)))
            continue
        invalid = best_match(_case_validator().iter_errors(case))
        if invalid is not None:  # a malformed case fails unrun, never as a crash of whoever runs it
            at = pointer(tuple(invalid.absolute_path)) or "/"
            loaded.append((entry["id"], None, (f"{entry['file']}: not a case under vector.schema.json at {at}: {_short(invalid.message)}",)))
            continue
        loaded.append((entry["id"], case, ()))
    return loaded


def read_bounded(path: Path) -> bytes:
    """Return a case file's bytes (or a script's, a baseline's): a regular file of at most ``MAX_CASE_BYTES`` (never a
    pipe or a device)."""
    if not path.is_file():
        raise OSError("not a regular file" if path.exists() else "no such file")
    with path.open("rb") as handle:
        data = handle.read(MAX_CASE_BYTES + 1)
    if len(data) > MAX_CASE_BYTES:
        raise OSError(f"larger than {MAX_CASE_BYTES} bytes, no case is")
    return data


@cache
def _case_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(VECTOR_SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def consume_report(
    directory: Path, adapter: Adapter | None = None, checker: Checker | None = None, reader: Reader | None = None
) -> list[CaseResult]:
    """Return the result of every case the manifest of ``directory`` lists, in manifest order (a bad file fails unrun)."""
    driver = adapter if adapter is not None else ModelAdapter()
    results = []
    for ident, case, problems in load_cases(directory):
        ran = problems if case is None else tuple(replay(case, driver, checker, reader=reader))
        results.append(CaseResult(ident, ran))
    return results


def consume(
    directory: Path, adapter: Adapter | None = None, checker: Checker | None = None, reader: Reader | None = None
) -> tuple[int, int]:
    """Return (passed, failed) over the vectors in ``directory`` (the model's adapter, checker and reader by default)."""
    results = consume_report(directory, adapter, checker, reader)
    passed = sum(1 for r in results if r.passed)
    return passed, len(results) - passed
