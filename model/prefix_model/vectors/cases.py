"""The conformance-vector catalogue (spec/vectors.md §2). Pure: no I/O, no clock, no randomness.

Two kinds of case, each with a stable slug id and the requirement IDs it exercises:

- a **scenario** — an action script (the ``actions.py`` alphabet) the model runs under the
  harness's semantics; the vector holds the script and what the run shows (every session's
  events and every request sent). A scenario may name actions the loop must *refuse* (their
  guard does not hold, LOOP-1). The scenarios are catalogued in ``scenarios.py``.
- a **log case** — a log in the in-memory event form, optionally with a requests capture, that
  a conforming checker must accept (``valid``) or reject naming ``requirement``. Each is made from
  a scenario's run by one targeted mutation, or is a faulty variant's witness run (§13). A log
  case with a ``file`` is a log file in the persisted form (``persisted.py``) that a conforming
  reader must read to exactly ``log`` (and its torn tail), or reject naming ``requirement``.

Everything here is computed from the model: no expected value is written by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from prefix_model.core.events import KNOWN_TYPES, STEP_END, is_surface_type
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.core.requests import request_to_json
from prefix_model.vectors import FORMAT_VERSION, VECTOR_SCHEMA
from prefix_model.vectors.adopted import adopted_scenarios
from prefix_model.vectors.codec import action_to_json, expected_of, layout, obj
from prefix_model.vectors.persisted import FileCase, clocked, file_cases, in_memory_rows
from prefix_model.vectors.scenarios import Scenario, ScriptError, play, scenarios
from prefix_model.formats.event_lines import event_to_json
from prefix_model.loop.variants import VARIANTS, run_witness
from prefix_model.loop.world import World

__all__ = [
    "LogCase",
    "Case",
    "play",
    "world_of",
    "log_cases",
    "catalogue",
    "PENDING_MODEL_BUGS",
    "pending_cases",
    "case_to_json",
    "case_text",
    "CASE_LAYOUT",
    "log_lines",
    "capture_lines",
    "wrapped_capture_lines",
    "instance_name",
]


@dataclass(frozen=True, slots=True)
class LogCase:
    """A log (and capture) for a checker: accepted when ``requirement`` is None, else rejected by it."""

    id: str
    description: str
    requirements: tuple[str, ...]
    session: str
    log: tuple[str, ...]
    capture: tuple[str, ...] | None
    requirement: str | None = None
    provenance: FrozenMap = field(default_factory=FrozenMap)
    file: FrozenMap | None = None  # the log file as stored (persisted.text_file, zstd_file); ``log`` is then what it reads to
    torn_tail: int | None = None  # with ``file``, valid: the line of the tolerated torn tail (FMT-7)

    @property
    def valid(self) -> bool:
        """Return whether a conforming checker must accept this log."""
        return self.requirement is None


Case = Scenario | LogCase


@cache
def world_of(scenario_id: str) -> World:
    """Return the world after the scenario named ``scenario_id`` (run once per process)."""
    return play(next(s for s in scenarios() + adopted_scenarios() if s.id == scenario_id))


# --- Logs and captures of a run ---

Events = tuple[FrozenMap, ...]
Lines = tuple[str, ...]


def _events(world: World, session: str) -> Events:
    return tuple(event_to_json(e) for e in world.session(session).log.events)


def _capture(world: World, session: str, named: bool = True) -> Events:
    """Return the session's requests as capture lines: the request, then turn and step (CAP-1)."""
    lines = []
    for sent in world.requests:
        if sent.session_id != session:
            continue
        fields = dict(request_to_json(sent.request))
        if named:
            fields |= {"turn": sent.turn, "step": sent.step}
        if not sent.loop_request:
            fields["agentLoopRequest"] = False
        lines.append(FrozenMap(fields))
    return tuple(lines)


def _text(values: Events) -> Lines:
    return tuple(json_text(v) for v in values)


def log_lines(world: World, session: str) -> Lines:
    """Return the session's log as in-memory event lines (FMT-3), as a checker reads it."""
    return _text(_events(world, session))


def capture_lines(world: World, session: str) -> Lines:
    """Return the session's requests as capture lines naming turn and step (CAP-1)."""
    return _text(_capture(world, session))


def wrapped_capture_lines(world: World, session: str, instances: bool = False) -> Lines:
    """Return the session's requests as capture lines in the recorder's wrapper form (spec/formats.md §5), naming each
    request's instance when ``instances``."""
    return _text(_wrapped(world, session, instances))


# --- Targeted mutations of a scenario's log or capture ---

Path = tuple[str | int, ...]
Edit = Callable[[Events], Events]
_DROP = object()  # an edit result that removes the key or element


def _edit(value: JsonValue, path: Path, change: Callable[[JsonValue], object]) -> object:
    """Return ``value`` with the member at ``path`` changed (or dropped when ``change`` returns ``_DROP``)."""
    if not path:
        return change(value)
    head, rest = path[0], path[1:]
    if isinstance(value, FrozenMap) and isinstance(head, str):
        fields = dict(value)
        item = _edit(value.get(head), rest, change)
        if item is _DROP:
            del fields[head]
        else:
            fields[head] = freeze(item)
        return FrozenMap(fields)
    assert isinstance(value, tuple) and isinstance(head, int)
    item = _edit(value[head], rest, change)
    return value[:head] + (() if item is _DROP else (freeze(item),)) + value[head + 1 :]


def _edited(value: FrozenMap, path: Path, change: Callable[[JsonValue], object]) -> FrozenMap:
    """Return the object ``value`` with the member at ``path`` changed or dropped."""
    result = _edit(value, path, change)
    assert isinstance(result, FrozenMap)
    return result


def _index(events: Events, kind: str, nth: int = 0) -> int:
    return [n for n, e in enumerate(events) if e.get("type") == kind][nth]


def _on(kind: str, path: Path, change: Callable[[JsonValue], object], nth: int = 0) -> Edit:
    """Edit the ``nth`` event of type ``kind`` at ``path``."""

    def edit(events: Events) -> Events:
        n = _index(events, kind, nth)
        return events[:n] + (_edited(events[n], path, change),) + events[n + 1 :]

    return edit


def _on_line(index: int, path: Path, change: Callable[[JsonValue], object]) -> Edit:
    """Edit capture line ``index`` at ``path``."""
    return lambda lines: lines[:index] + (_edited(lines[index], path, change),) + lines[index + 1 :]


def _rotate(messages: JsonValue) -> object:
    """Move the first message (the prefix) after the others."""
    assert isinstance(messages, tuple)
    return messages[1:] + messages[:1]


def _set(item: JsonValue) -> Callable[[JsonValue], object]:
    return lambda _: item


def _drop(_: JsonValue) -> object:
    return _DROP


def _then(*edits: Edit) -> Edit:
    def edit(events: Events) -> Events:
        for one in edits:
            events = one(events)
        return events

    return edit


def _insert_before_last(*new: FrozenMap) -> Edit:
    """Insert events (their seqs assigned) before the log's last event, which moves up."""

    def edit(events: Events) -> Events:
        start = len(events) - 1
        placed = tuple(_edited(e, ("seq",), _set(start + k)) for k, e in enumerate(new))
        return events[:-1] + placed + (_edited(events[-1], ("seq",), _set(start + len(new))),)

    return edit


def _crash_repaired(kind: str) -> Edit:
    """The log cut after the first event of ``kind`` (a crash), then the closers the harness appends on load (S/repair.ts).

    Each call the step's assistant/message made and no tool/result answered gets an error result
    (TOOL_OUTCOME_UNKNOWN from its tool/call, else TOOL_NOT_STARTED), then the open step ends and the
    turn ends interrupted; each closer carries the last event's time.
    """

    def edit(events: Events) -> Events:
        kept = events[: _index(events, kind) + 1]
        turn = step = None
        pending: dict[str, tuple[JsonValue, JsonValue]] = {}  # call id -> (its step, its tool/call's seq or None)
        for event in kept:
            data = event["data"]
            assert isinstance(data, FrozenMap)
            if event["type"] in ("turn/start", "turn/end", "step/end"):
                pending.clear()
                turn = data["turn"] if event["type"] == "turn/start" else None if event["type"] == "turn/end" else turn
                step = None
            if event["type"] == "step/start":
                step = data["step"]
            elif event["type"] == "assistant/message":
                content = data["content"]
                assert isinstance(content, tuple)
                pending |= {str(b["id"]): (data["step"], None) for b in content if isinstance(b, FrozenMap) and b["type"] == "tool-call"}
            elif event["type"] == "tool/call" and str(data["callId"]) in pending:
                pending[str(data["callId"])] = (pending[str(data["callId"])][0], event["seq"])
            elif event["type"] == "tool/result":
                pending.pop(str(data["callId"]), None)
        last = kept[-1]
        closers: list[dict[str, JsonValue]] = []
        for call, (call_step, call_seq) in pending.items():
            started = call_seq is not None
            error = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"} if started else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
            text = "the tool call's outcome is unknown" if started else "the tool call was interrupted before it started"
            result: dict[str, JsonValue] = {"type": "tool/result", "data": freeze({"turn": turn, "step": call_step, "callId": call,
                                            "content": [{"type": "text", "text": text}], "isError": True, "error": error}), "surfaceOp": "append"}  # fmt: skip
            closers.append(result | ({"sourceEventSeqs": (call_seq,)} if started else {}))
        if step is not None:
            closers.append({"type": "step/end", "data": freeze({"turn": turn, "step": step})})
        closers.append({"type": "turn/end", "data": freeze({"turn": turn, "reason": {"kind": "interrupted"}})})
        seq = last["seq"]
        assert isinstance(seq, int)
        placed = (freeze({"type": c["type"], "seq": seq + 1 + n, "time": last["time"], **{k: v for k, v in c.items() if k != "type"}}) for n, c in enumerate(closers))
        return kept + tuple(e for e in placed if isinstance(e, FrozenMap))

    return edit


def _header_of(events: Events, nth: int) -> JsonValue:
    data = events[_index(events, "request/header", nth)]["data"]
    assert isinstance(data, FrozenMap)
    return data["header"]


def _number_line(events: Events, index: int, text: str) -> Lines:
    """Return the log's lines with event ``index``'s data given a key ``weight`` whose number text is ``text``."""
    marked = _edited(events[index], ("data", "weight"), _set(0))
    lines = list(_text(events))
    lines[index] = json_text(marked).replace('"weight":0', f'"weight":{text}')
    return tuple(lines)


@dataclass(frozen=True, slots=True)
class _Mutant:
    id: str
    base: str
    requirement: str | None
    requirements: tuple[str, ...]
    description: str
    log: Edit | None = None
    capture_edit: Edit | None = None
    raw: Callable[[Events], Lines] | None = None  # the log's lines made from its events, for edits JSON cannot hold
    capture: bool = False  # whether the case carries the requests capture
    named: bool = True  # whether capture lines name turn and step
    wrapper: bool = False  # capture lines in the recorder's {index, capture, request} form
    instances: bool = False  # those lines name the instance that sent each request (capture.instance)
    session: str = "s1"


def _rewrite(target: str, *changes: tuple[Path, JsonValue]) -> Edit:
    """Append a tool/result that replaces the first ``target`` node: the first tool/result's data, changed at each path."""

    def edit(events: Events) -> Events:
        data: object = events[_index(events, "tool/result")]["data"]
        for path, value in changes:
            assert isinstance(data, FrozenMap)
            data = _edit(data, path, _set(value))
        assert isinstance(data, FrozenMap)
        seq = events[_index(events, target)]["seq"]
        fields: dict[str, JsonValue] = {"type": "tool/result", "seq": 0, "time": 0, "data": data, "sourceEventSeqs": (seq,),
                                        "surfaceOp": FrozenMap({"op": "replace", "start": seq, "end": seq})}  # fmt: skip
        return _insert_before_last(FrozenMap(fields))(events)

    return edit


_REDACTED = (("content",), (FrozenMap({"type": "text", "text": "a (redacted)"}),))


# A tool/result rewrite whose data beside content differs from the original's only inside a nested member (SURF-9 compares
# it as S/surface.ts:197-208 does: key order ignored, true is not 1, arrays and objects apart):
# (case name, what, the original's member, the rewrite's; None where the rewrite is valid).
_NESTED: tuple[tuple[str, str, JsonValue, JsonValue, str | None], ...] = (
    ("keys-reordered", "another key order at two levels", freeze({"a": 1, "b": [True, None, {"c": "x", "d": 2}]}),
     freeze({"b": [True, None, {"d": 2, "c": "x"}], "a": 1}), None),
    ("true-for-one", "true where the original has 1", freeze({"a": 1}), freeze({"a": True}), "SURF-9"),
    ("array-lengthened", "an array one element longer", freeze({"b": [1]}), freeze({"b": [1, 1]}), "SURF-9"),
    ("key-added", "a key more in a nested object", freeze({"c": {}}), freeze({"c": {"d": None}}), "SURF-9"),
    ("array-for-object", "an empty array for an empty object", freeze({"c": {}}), freeze({"c": []}), "SURF-9"),
)


def _nested_rewrite(original: JsonValue, rewritten: JsonValue) -> Edit:
    """The first tool/result carries ``meta``: ``original``; a rewrite of it changes its content and carries ``rewritten``."""
    return _then(_on("tool/result", ("data", "meta"), _set(original)), _rewrite("tool/result", _REDACTED, (("meta",), rewritten)))


def _array_data(kind: str) -> FrozenMap:
    """An event of type ``kind`` whose data is an array (with the surfaceOp a surface type needs, so LOG-5 does not come first)."""
    marker: dict[str, JsonValue] = {"surfaceOp": "append"} if is_surface_type(kind) else {}
    return FrozenMap({"type": kind, "seq": 0, "time": 0, "data": (1,), **marker})


def _plugin_records(events: Events) -> Events:
    note = FrozenMap({"type": "plugin/note", "seq": 0, "time": 0, "data": FrozenMap({"note": "a plugin's own record"})})
    context = freeze({"type": "context/message", "seq": 0, "time": 0, "data": {"content": [{"type": "text", "text": "a type only older design notes name (SPEC D-1)"}]}})
    assert isinstance(context, FrozenMap)
    return _insert_before_last(note, context)(events)


def _plugin_values(events: Events) -> Events:
    """Records of a plugin's own type whose data is no object: LOG-11 holds only the types the spec names."""
    data = (freeze(["an", "array"]), "a string", None, 7)
    return _insert_before_last(*(FrozenMap({"type": "plugin/note", "seq": 0, "time": 0, "data": value}) for value in data))(events)


def _clock(events: Events) -> Events:
    return tuple(_edited(e, ("time",), _set(1767225600000 + 7 * n)) for n, e in enumerate(events))


def _duplicate_type(events: Events) -> Lines:
    lines = list(_text(events))
    lines[0] = '{"type":"plugin/ghost",' + lines[0][1:]
    return tuple(lines)


def _as_lines(edit: Callable[[list[str]], None]) -> Callable[[Events], Lines]:
    def raw(events: Events) -> Lines:
        lines = list(_text(events))
        edit(lines)
        return tuple(lines)

    return raw


_ANY_PREFIX = (FrozenMap({"role": "user", "content": (FrozenMap({"type": "text", "text": "<prefix from elsewhere>"}),)}),)
_SYSTEM_CHANGE = "header/system-change-between-steps"
_CHANGED = "resume/changed-prefix"  # two instances of one session, the second anchoring another prefix
FILE_BASE = "stream/text-tools-usage"  # the log files' session: two turns, a two-step first turn, streamed text and tool-call deltas that pack


# A snapshot's header with one member of the wrong shape: (rule, case name, what, path under data.header, value).
_HEADER_SHAPES: tuple[tuple[str, str, str, Path, JsonValue], ...] = (
    ("HDR-1", "header-not-an-object", "header is a string", (), "a header"),
    ("HDR-1", "system-not-a-string", "system is a number", ("system",), 1),
    ("HDR-1", "tools-not-an-array", "tools is an object", ("tools",), FrozenMap()),
    ("HDR-1", "message-prefix-not-an-array", "messagePrefix is an object", ("messagePrefix",), FrozenMap()),
    ("HDR-2", "empty-model", "model is empty", ("config", "model"), ""),
    ("HDR-2", "empty-reasoning-effort", "reasoningEffort is empty", ("config", "reasoningEffort"), ""),
    ("HDR-2", "temperature-not-a-number", 'temperature is "hot"', ("config", "temperature"), "hot"),
    ("HDR-2", "max-tokens-a-boolean", "maxTokens is true", ("config", "maxTokens"), True),
    ("HDR-2", "stop-not-strings", "stop holds a number", ("config", "stop"), (1,)),
)
# A change snapshot equal to the header in force but for one member: (case name, what, path under the header, value).
_ONE_FIELD_CHANGES: tuple[tuple[str, str, Path, JsonValue], ...] = (
    ("reasoning-effort", "reasoningEffort", ("config", "reasoningEffort"), "high"),
    ("temperature", "temperature", ("config", "temperature"), 0.5),
    ("max-tokens", "maxTokens", ("config", "maxTokens"), 256),
    ("stop", "stop", ("config", "stop"), ("END",)),
    ("tools", "a tool's description", ("tools", 0, "description"), "another echo"),
)

# A captured request that differs from the folded header in one companion field, REC-1's (the others are REC-2's):
# (case name, what the second request does, field, value).
_COMPANION_CHANGES: tuple[tuple[str, str, str, JsonValue], ...] = (
    ("model-differs", "names another model", "model", "other-model"),
    ("system-differs", "carries another system prompt", "system", "another system"),
    ("temperature-added", "sets a temperature the header does not", "temperature", 0.5),
    ("max-tokens-added", "sets a maxTokens the header does not", "maxTokens", 999),
    ("stop-added", "sets a stop list the header does not", "stop", ("END",)),
    ("stop-empty-added", "sets an empty stop list where the header has none (tools alone take absent as empty)", "stop", ()),
    ("tools-dropped", "sends no tools", "tools", ()),
)


def _change_only(path: Path, value: JsonValue) -> Edit:
    """The second snapshot becomes the first's header with the member at ``path`` set to ``value``."""
    return lambda events: _on("request/header", ("data", "header"), lambda _: _edit(_header_of(events, 0), path, _set(value)), nth=1)(events)


def _mutants() -> tuple[_Mutant, ...]:
    nl, tc, cp = "loop/no-listener", "loop/tool-calls-multi-step", "compaction/pre-step"
    return (
        # Logs a conforming checker must accept.
        _Mutant("log/unknown-types-accepted", nl, None, ("LOG-9", "LOG-12", "FMT-1", "MATCH-1"),
                "a plugin's own event type and the retired context/message are log-only records", _plugin_records, capture=True),
        _Mutant("log/unknown-type-any-data", nl, None, ("LOG-11", "LOG-9"),
                "a plugin's own records carry an array, a string, null and a number as data", _plugin_values, capture=True),
        _Mutant("log/turn-end-reason-not-an-object", nl, None, ("LOG-14", "LOG-11"),
                "the turn/end's reason is a string: LOG-14 reads only an object's kind, and the harness's load passes any other over",
                _on("turn/end", ("data", "reason"), _set("completed")), capture=True),
        _Mutant("log/tool-result-rewrite", tc, None, ("SURF-9", "SURF-3", "SURF-6", "SURF-8", "DER-6", "JSON-5"),
                "a tool/result replaces the first tool/result, changing only its content", _rewrite("tool/result", _REDACTED), capture=True),
        _Mutant("log/real-clock-times", nl, None, ("LOG-3", "JSON-3"), "events carry epoch-millisecond times", _clock, capture=True),
        _Mutant("log/crash-repaired-mid-tools", tc, None, ("ENC-3", "ENC-2", "ENC-1"),
                "the log ends after the first of two tool calls was recorded, then the closers the harness appends when it "
                "loads it: an outcome-unknown result, a not-started result for the call never recorded, step/end, turn/end interrupted",
                _crash_repaired("tool/call")),
        _Mutant("log/duplicate-keys-last-wins", nl, None, ("FMT-4",),
                'the first line spells "type" twice; JSON.parse keeps the last value', raw=_duplicate_type, capture=True),
        _Mutant("log/capture-in-order", tc, None, ("MATCH-2", "REC-1", "REC-3"),
                "capture lines name no turn or step: matched in order to the dispatching steps", capture=True, named=False),
        _Mutant("log/capture-recorder-wrapper", tc, None, ("CAP-1", "MATCH-1"),
                "capture lines in the harness recorder's {index, capture, request} form", capture=True, wrapper=True),
        # The envelope and the event vocabulary (§2).
        _Mutant("invalid/log-1/unknown-envelope-key", nl, "LOG-1", ("LOG-1",), "turn/start carries an extra envelope key",
                _on("turn/start", ("extra",), _set(True))),
        _Mutant("invalid/log-2/seq-gap", nl, "LOG-2", ("LOG-2",), "the first assistant/chunk is left out; later seqs keep their values",
                lambda events: events[:4] + events[5:]),
        _Mutant("invalid/log-3/negative-time", nl, "LOG-3", ("LOG-3",), "step/start has time -1", _on("step/start", ("time",), _set(-1))),
        _Mutant("invalid/log-5/surface-op-missing", nl, "LOG-5", ("LOG-5",), "the user/message has no surfaceOp",
                _on("user/message", ("surfaceOp",), _drop)),
        _Mutant("invalid/log-6/surface-op-on-log-only", nl, "LOG-6", ("LOG-6",), 'turn/start carries surfaceOp "append"',
                _on("turn/start", ("surfaceOp",), _set("append"))),
        _Mutant("invalid/log-6/sources-on-log-only", nl, "LOG-6", ("LOG-6",), "step/start carries sourceEventSeqs [0]",
                _on("step/start", ("sourceEventSeqs",), _set((0,)))),
        _Mutant("invalid/log-7/header-delta", nl, "LOG-7", ("LOG-7",), "the snapshot is a legacy request/header-delta",
                _on("request/header", ("type",), _set("request/header-delta"))),
        _Mutant("invalid/log-7/mode-set", nl, "LOG-7", ("LOG-7",), "the snapshot is a legacy mode/set", _on("request/header", ("type",), _set("mode/set"))),
        _Mutant("invalid/log-8/fallback-reason", nl, "LOG-8", ("LOG-8",), 'the snapshot\'s reason is the legacy "fallback"',
                _on("request/header", ("data", "reason"), _set("fallback"))),
        _Mutant("invalid/log-11/data-not-an-object", nl, "LOG-11", ("LOG-11",), "step/end data is an array",
                _on("step/end", ("data",), _set((1, 1)))),
        *(_Mutant(f"invalid/log-11/{kind.replace('/', '-')}-data-is-an-array", nl, "LOG-11", ("LOG-11",),
                  f"a {kind} whose data is an array is inserted before the last event", _insert_before_last(_array_data(kind)))
          for kind in KNOWN_TYPES if kind != STEP_END),
        _Mutant("invalid/log-13/assistant-without-provenance", nl, "LOG-13", ("LOG-13",), "the assistant/message has no provenance",
                _on("assistant/message", ("data", "provenance"), _drop)),
        _Mutant("invalid/log-14/aborted-with-extra-key", "cancel/during-compose-then-new-turn", "LOG-14", ("LOG-14",),
                "the aborted turn/end reason also names a step", _on("turn/end", ("data", "reason", "step"), _set(1))),
        _Mutant("invalid/log-15/content-not-an-array", nl, "LOG-15", ("LOG-15",), "the user/message content is a string",
                _on("user/message", ("data", "content"), _set("hello"))),
        _Mutant("invalid/log-15/tool-result-without-is-error", tc, "LOG-15", ("LOG-15",), "a tool/result's data has no isError",
                _on("tool/result", ("data", "isError"), _drop)),
        _Mutant("invalid/json-1/infinite-number", nl, "JSON-1", ("JSON-1",), "turn/start data holds 1e400, which reads as Infinity",
                raw=lambda events: _number_line(events, 0, "1e400")),
        _Mutant("invalid/json-2/negative-zero", nl, "JSON-2", ("JSON-2",), "turn/start data holds -0",
                raw=lambda events: _number_line(events, 0, "-0")),
        _Mutant("invalid/fmt-1/not-json", nl, "FMT-1", ("FMT-1",), "the fifth line is cut short",
                raw=_as_lines(lambda lines: lines.__setitem__(4, lines[4][:30]))),
        _Mutant("invalid/fmt-1/empty-line", nl, "FMT-1", ("FMT-1",), "the fifth line is empty", raw=_as_lines(lambda lines: lines.__setitem__(4, ""))),
        _Mutant("invalid/fmt-8/packed-row-in-memory-form", FILE_BASE, "FMT-8", ("FMT-8", "FMT-6"),
                "the log of streamed replies written in the persisted form without its header line: "
                "packed rows among in-memory event lines", raw=in_memory_rows),
        # The surface (§3).
        _Mutant("invalid/surf-3/unknown-surface-op", tc, "SURF-3", ("SURF-3",), 'a tool/result has surfaceOp "prepend"',
                _on("tool/result", ("surfaceOp",), _set("prepend"))),
        _Mutant("invalid/surf-3/replace-with-extra-key", cp, "SURF-3", ("SURF-3",), "the compaction's replace op has an extra key",
                _on("user/message", ("surfaceOp", "extra"), _set(0), nth=3)),
        _Mutant("invalid/surf-4/replace-start-not-on-surface", cp, "SURF-4", ("SURF-4",), "the compaction replaces from seq 0 (turn/start)",
                _on("user/message", ("surfaceOp", "start"), _set(0), nth=3)),
        _Mutant("invalid/surf-4/replace-end-not-on-surface", cp, "SURF-4", ("SURF-4",), "the compaction replaces up to seq 999, which is no event",
                _on("user/message", ("surfaceOp", "end"), _set(999), nth=3)),
        _Mutant("invalid/surf-5/replace-start-after-end", cp, "SURF-5", ("SURF-5",), "the compaction's start and end are swapped",
                _then(_on("user/message", ("surfaceOp", "start"), _set(10), nth=3), _on("user/message", ("surfaceOp", "end"), _set(1), nth=3))),
        _Mutant("invalid/surf-7/source-not-earlier", tc, "SURF-7", ("SURF-7",), "a tool/result names itself as its source",
                lambda events: _on("tool/result", ("sourceEventSeqs",), _set((events[_index(events, "tool/result")]["seq"],)))(events)),
        _Mutant("invalid/surf-7/sources-empty", tc, "SURF-7", ("SURF-7",), "a tool/result's sourceEventSeqs is empty",
                _on("tool/result", ("sourceEventSeqs",), _set(()))),
        _Mutant("invalid/surf-7/source-named-twice", tc, "SURF-7", ("SURF-7",), "a tool/result names its tool/call twice as its source",
                lambda events: _on("tool/result", ("sourceEventSeqs",), _set((events[_index(events, "tool/call")]["seq"],) * 2))(events)),
        _Mutant("invalid/surf-8/provenance-misses-shadowed", cp, "SURF-8", ("SURF-8",), "the compaction's provenance leaves out the last shadowed node",
                _on("user/message", ("sourceEventSeqs", 4), _drop, nth=3)),
        _Mutant("invalid/surf-8/provenance-misses-a-middle-node", cp, "SURF-8", ("SURF-8",),
                "the compaction's provenance leaves out a shadowed node between its first and its last",
                _on("user/message", ("sourceEventSeqs", 2), _drop, nth=3)),
        _Mutant("invalid/surf-9/tool-result-replaces-messages", cp, "SURF-9", ("SURF-9",), "the compaction summary is written as a tool/result",
                _then(_on("user/message", ("data", "callId"), _set("c1"), nth=3), _on("user/message", ("data", "isError"), _set(False), nth=3),
                      _on("user/message", ("type",), _set("tool/result"), nth=3))),
        _Mutant("invalid/surf-9/tool-result-replaces-a-message", tc, "SURF-9", ("SURF-9",),
                "a tool/result replaces the first assistant/message, not a tool/result", _rewrite("assistant/message", _REDACTED)),
        _Mutant("invalid/surf-9/rewrite-changes-is-error", tc, "SURF-9", ("SURF-9",),
                "a tool/result replaces the first tool/result, changing its content and isError", _rewrite("tool/result", _REDACTED, (("isError",), True))),
        *(_Mutant(f"log/tool-result-rewrite-{name}" if rule is None else f"invalid/surf-9/rewrite-{name}", tc, rule, ("SURF-9", "JSON-5"),
                  f"a tool/result replaces the first tool/result, changing its content, and its meta has {what}",
                  _nested_rewrite(original, rewritten), capture=rule is None) for name, what, original, rewritten, rule in _NESTED),
        # Headers (§5) and the record rule (§11).
        _Mutant("invalid/hdr-1/header-without-config", nl, "HDR-1", ("HDR-1",), "the snapshot has no config",
                _on("request/header", ("data", "header"), _set(FrozenMap({"system": "You are careful."})))),
        _Mutant("invalid/hdr-2/empty-provider", nl, "HDR-2", ("HDR-2",), "the snapshot's provider is empty",
                _on("request/header", ("data", "header", "config", "provider"), _set(""))),
        *(_Mutant(f"invalid/hdr-{rule[-1]}/{name}", nl, rule, (rule,), f"the snapshot's {what}", _on("request/header", ("data", "header", *path), _set(value)))
          for rule, name, what, path, value in _HEADER_SHAPES),
        _Mutant("invalid/hdr-9/first-snapshot-not-initial", nl, "HDR-9", ("HDR-9", "PFX-5"), 'the first snapshot says "resume"',
                _on("request/header", ("data", "reason"), _set("resume"))),
        _Mutant("invalid/hdr-9/resume-anchor-says-initial", "resume/same-prefix", "HDR-9", ("HDR-9", "PFX-5"),
                'the resumed instance\'s anchor says "initial" though the log holds a header', _on("request/header", ("data", "reason"), _set("initial"), nth=1)),
        _Mutant("invalid/hdr-13/start-reason", nl, "HDR-13", ("HDR-13",), 'the snapshot\'s reason is "start"',
                _on("request/header", ("data", "reason"), _set("start"))),
        _Mutant("invalid/hdr-15/change-equal-to-fold", _SYSTEM_CHANGE, "HDR-15", ("HDR-15", "HDR-10"),
                "the change snapshot repeats the header in force", lambda events: _on("request/header", ("data", "header"), _set(_header_of(events, 0)), nth=1)(events)),
        *(_Mutant(f"log/change-in-{name}-only", _SYSTEM_CHANGE, None, ("HDR-10", "HDR-15"), f"the change snapshot differs from the one in force only in {what}",
                  _change_only(path, value)) for name, what, path, value in _ONE_FIELD_CHANGES),
        _Mutant("invalid/pfx-3/change-carries-another-prefix", _SYSTEM_CHANGE, "PFX-3", ("PFX-3", "PFX-2"),
                "the change snapshot carries another prefix than the instance's anchor",
                _on("request/header", ("data", "header", "messagePrefix"), _set(_ANY_PREFIX), nth=1)),
        _Mutant("invalid/pfx-6/empty-message-prefix", nl, "PFX-6", ("PFX-6", "HDR-12"), "the snapshot writes messagePrefix: []",
                _on("request/header", ("data", "header", "messagePrefix"), _set(()))),
        # Enclosure (§9).
        _Mutant("invalid/enc-1/turn-end-closes-another-turn", nl, "ENC-1", ("ENC-1",), "turn/end names turn 2", _on("turn/end", ("data", "turn"), _set(2))),
        _Mutant("invalid/enc-2/step-end-closes-another-step", nl, "ENC-2", ("ENC-2",), "step/end names step 2", _on("step/end", ("data", "step"), _set(2))),
        _Mutant("invalid/enc-3/chunk-outside-its-step", nl, "ENC-3", ("ENC-3",), "an assistant/chunk names step 2", _on("assistant/chunk", ("data", "step"), _set(2))),
        _Mutant("invalid/enc-3/tool-result-without-call", tc, "ENC-3", ("ENC-3",), "a tool/result answers a call id no tool/call made",
                _on("tool/result", ("data", "callId"), _set("c9"))),
        # Requests against the log (§9, §11).
        _Mutant("invalid/rec-1/prefix-dropped", tc, "REC-1", ("REC-1", "REQ-2"), "the first captured request leaves the prefix out",
                capture_edit=_on_line(0, ("messages", 0), _drop), capture=True),
        _Mutant("invalid/rec-1/history-before-prefix", tc, "REC-1", ("REC-1", "REQ-2"), "the second captured request sends the prefix after the history",
                capture_edit=_on_line(1, ("messages",), _rotate), capture=True),
        _Mutant("invalid/rec-2/provider-differs", tc, "REC-2", ("REC-2",), "the second captured request names another provider",
                capture_edit=_on_line(1, ("provider",), _set("other")), capture=True),
        *(_Mutant(f"invalid/rec-1/{name}", tc, "REC-1", ("REC-1",), f"the second captured request {what}",
                  capture_edit=_on_line(1, (field,), _set(value)), capture=True) for name, what, field, value in _COMPANION_CHANGES),
        _Mutant("invalid/rec-3/second-request-rewrites-history", tc, "REC-3", ("REC-3", "REC-1"),
                "the second captured request rewrites the prompt the first one sent, so its messages do not extend the first's",
                capture_edit=_on_line(1, ("messages", 1, "content", 0, "text"), _set("echo thrice")), capture=True),
        _Mutant("invalid/match-1/step-not-in-log", tc, "MATCH-1", ("MATCH-1",), "a captured request names turn 9",
                capture_edit=_on_line(1, ("turn",), _set(9)), capture=True),
        _Mutant("invalid/match-2/ambiguous-step", "cancel/before-dispatch", "MATCH-2", ("MATCH-2",),
                "capture lines name no step, and a cancelled step left no header and no chunk", capture=True, named=False),
        _Mutant("invalid/cap-1/not-a-request", tc, "CAP-1", ("CAP-1",), "a capture line is not a request",
                capture_edit=lambda capture: capture + (FrozenMap({"hello": "world"}),), capture=True),
        # Instances a capture names (§9): the run's own log, its capture telling which instance sent each request.
        _Mutant("log/capture-names-instances", _CHANGED, None, ("INST-1", "INST-2", "INST-3", "PFX-5", "CAP-1"),
                "capture lines in the recorder's form name the instance that sent each request: the resume snapshot anchors "
                "the second instance, whose prefix differs from the first's", capture=True, wrapper=True, instances=True),
        _Mutant("invalid/inst-2/per-turn-recomposition-disguised-as-resume", _CHANGED, "INST-2", ("INST-2", "INST-1", "PFX-2"),
                "the capture names one instance for both turns' requests, so the second turn's resume snapshot with another prefix "
                "is that instance recomposing and writing the drift as a resume (the log alone passes)",
                capture_edit=_one_instance, capture=True, wrapper=True, instances=True),
        _Mutant("invalid/inst-1/second-anchor-in-one-instance", "resume/same-prefix", "INST-1", ("INST-1",),
                "the capture names one instance for both turns' requests, so the second turn's resume snapshot is a second anchor "
                "of that instance (the same prefix; the log alone passes)", capture_edit=_one_instance, capture=True, wrapper=True, instances=True),
        _Mutant("invalid/inst-3/change-hides-a-new-instances-recomposition", _CHANGED, "INST-3", ("INST-3", "PFX-5"),
                "the resumed instance writes its recomposed prefix as a change snapshot (the log alone reads it as a PFX-3 drift "
                "of the first instance)", _on("request/header", ("data", "reason"), _set("change"), nth=1),
                capture=True, wrapper=True, instances=True),
        _Mutant("invalid/inst-3/new-instance-writes-change", "resume/effort-carried", "INST-3", ("INST-3", "PFX-5", "HDR-10"),
                "the third instance, whose route differs, writes its first snapshot as a change (the log alone passes)",
                _on("request/header", ("data", "reason"), _set("change"), nth=2), capture=True, wrapper=True, instances=True),
    )  # fmt: skip


def instance_name(instance_id: int) -> str:
    """Return the name a capture gives the instance numbered ``instance_id`` (any name would do: one name, one instance)."""
    return f"instance-{instance_id}"


def _wrapped(world: World, session: str, instances: bool = False) -> Events:
    """Return the session's requests in the recorder's wrapper form (spec/formats.md §5), naming each one's instance when asked."""
    events = world.session(session).log.events
    lines = []
    for index, sent in enumerate(r for r in world.requests if r.session_id == session):
        start = max(e.seq for e in events[: sent.log_length] if e.type == "step/start")
        named: dict[str, JsonValue] = {"instance": instance_name(sent.instance_id)} if instances else {}
        capture: dict[str, JsonValue] = {**named, "agentLoopRequest": sent.loop_request, "sessionId": session,
                   "lastStepStart": FrozenMap({"seq": start, "turn": sent.turn, "step": sent.step})}  # fmt: skip
        lines.append(FrozenMap({"index": index, "capture": FrozenMap(capture), "request": request_to_json(sent.request)}))
    return tuple(lines)


def _one_instance(lines: Events) -> Events:
    """Name the first line's instance on every line: the capture says one instance sent every request."""
    first = lines[0]["capture"]
    assert isinstance(first, FrozenMap)
    return tuple(_edited(line, ("capture", "instance"), _set(first["instance"])) for line in lines)


def _mutant_case(mutant: _Mutant, world: World) -> LogCase:
    events = _events(world, mutant.session)
    if mutant.log is not None:
        events = mutant.log(events)
    lines = mutant.raw(events) if mutant.raw is not None else _text(events)
    capture: Lines | None = None
    if mutant.capture:
        values = _wrapped(world, mutant.session, mutant.instances) if mutant.wrapper else _capture(world, mutant.session, mutant.named)
        capture = _text(mutant.capture_edit(values) if mutant.capture_edit is not None else values)
    provenance = obj({"kind": "mutation", "from": mutant.base, "session": mutant.session, "mutation": mutant.description})
    what = "accept" if mutant.requirement is None else f"reject with {mutant.requirement}"
    description = f"{mutant.description[:1].upper()}{mutant.description[1:]} (from {mutant.base}): a conforming checker must {what}."
    return LogCase(mutant.id, description, mutant.requirements, mutant.session, lines, capture, mutant.requirement, provenance)


# --- Faulty variants (§13) that a checker sees in a log and its capture ---

# variant name -> (session of the witness run, the requirement a checker must report); the variants
# not listed leave no trace a log-and-capture checker can see (their properties need the loop's own
# state: a composition, a listener's order, the meter) and are caught by replaying scenarios instead.
VARIANT_CASES: tuple[tuple[str, str, str], ...] = (
    ("compose-per-request", "s1", "PFX-3"),
    ("compose-per-turn", "s1", "PFX-3"),
    ("prefix-not-logged", "s1", "REC-1"),
    ("prefix-after-history", "s1", "REC-1"),
    ("no-resume-anchor", "s1", "PFX-3"),
    ("empty-prefix-logged", "s3", "PFX-6"),
    ("boundary-after-step-start", "s1", "REC-1"),
    ("compaction-drops-prefix", "s1", "PFX-3"),
    ("compaction-logs-header", "s1", "CMP-1"),
    ("no-change-on-system", "s1", "REC-1"),
    ("cache-by-reference", "s1", "PFX-3"),
    ("effort-from-options", "s1", "REC-2"),
    ("history-window", "s1", "REC-3"),
    ("change-always", "s1", "HDR-15"),
)


def _variant_case(name: str, session: str, requirement: str) -> LogCase:
    variant = next(v for v in VARIANTS if v.name == name)
    world = run_witness(variant.semantics)
    provenance = obj({"kind": "variant", "variant": name, "from": "variants/witness", "session": session})
    description = (f"The witness run under the faulty variant {name!r} ({variant.summary}), session {session}: "
                   f"a conforming checker must reject it with {requirement}.")  # fmt: skip
    log, capture = _text(_events(world, session)), _text(_capture(world, session))
    return LogCase(f"invalid/variant/{name}", description, (requirement, "VAR-1"), session, log, capture, requirement, provenance)


# --- Log files in the persisted form (persisted.py): one scenario's session, streamed and written ---


def _file_case(made: FileCase, base: str, session: str) -> LogCase:
    events = clocked(_events(world_of(base), session))
    if made.requirement is None:
        assert made.kept is not None
        torn = "" if made.torn_tail is None else f", and report a torn tail at line {made.torn_tail}"
        count = f"all {made.kept}" if made.kept == len(events) else f"the first {made.kept} of the {len(events)}"
        what = f"read it to {count} events{torn}"
    else:
        what = f"reject it with {made.requirement}"
    description = f"The session of {base} (its replies streamed), {made.mutation}: a conforming reader must {what}."
    mutation = f"the session on a clock; {made.mutation}"
    provenance = obj({"kind": "mutation", "from": base, "session": session, "mutation": mutation})
    log = _text(events[: made.kept]) if made.kept is not None else ()
    return LogCase(made.id, description, made.requirements, session, log, None, made.requirement, provenance, made.file, made.torn_tail)


@cache
def log_cases() -> tuple[LogCase, ...]:
    """Return every log case: targeted mutations of scenario runs, the faulty variants' witness runs, then log files."""
    mutated = tuple(_mutant_case(m, world_of(m.base)) for m in _mutants())
    files = tuple(_file_case(f, FILE_BASE, "s1") for f in file_cases(_events(world_of(FILE_BASE), "s1"), "s1"))
    return mutated + tuple(_variant_case(*entry) for entry in VARIANT_CASES) + files


# Cases the model itself gets wrong today: a model bug, reported and not worked around. They stay
# out of the catalogue until the model is fixed; tests/edge/test_vectors.py fails as soon as one of them
# passes, so that its entry is removed (and the case published) when the fix lands.
PENDING_MODEL_BUGS: dict[str, str] = {}  # case id -> why the model gets it wrong; both fixed bugs are published


def pending_cases() -> tuple[LogCase, ...]:
    """Return the cases held back by ``PENDING_MODEL_BUGS``, sorted by id."""
    return tuple(sorted((c for c in log_cases() if c.id in PENDING_MODEL_BUGS), key=lambda c: c.id))


def catalogue() -> tuple[Case, ...]:
    """Return every published case, sorted by id (ids are unique; pending cases left out)."""
    cases: tuple[Case, ...] = scenarios() + adopted_scenarios() + tuple(c for c in log_cases() if c.id not in PENDING_MODEL_BUGS)
    ids = [c.id for c in scenarios() + adopted_scenarios() + log_cases()]
    if len(set(ids)) != len(ids):
        raise ScriptError(f"duplicate case ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return tuple(sorted(cases, key=lambda c: c.id))


# --- A case as the vector file holds it ---

CASE_LAYOUT: tuple[tuple[str, ...], ...] = (
    (), ("actions",), ("log",), ("capture",), ("file",), ("file", "lines"),
    ("expected",), ("expected", "sessions"), ("expected", "sessions", "*"), ("expected", "requests"),
)  # fmt: skip


def _id_order(rule: str) -> tuple[str, int]:
    family, _, number = rule.rpartition("-")
    return family, int(number)


def case_to_json(case: Case, world: World | None = None) -> FrozenMap:
    """Return the JSON of ``case`` (spec/vectors.md §3; spec/schema/vector.schema.json); ``world`` is a scenario's run
    when it is not in the catalogue (a script a campaign found), else the catalogue's run is taken."""
    requirements: tuple[str, ...] = tuple(sorted(set(case.requirements), key=_id_order))
    fields: dict[str, JsonValue] = {
        "schema": VECTOR_SCHEMA, "formatVersion": FORMAT_VERSION, "id": case.id, "description": case.description,
        "requirements": requirements,
    }  # fmt: skip
    if isinstance(case, Scenario):
        fields |= {"valid": True, "actions": tuple(action_to_json(a) for a in case.actions), "expected": expected_of(world_of(case.id) if world is None else world)}
        if case.refused:
            fields["refused"] = tuple(sorted(case.refused))
        return obj(fields)
    fields |= {"valid": case.valid, "session": case.session, "provenance": case.provenance}
    if case.file is None or case.valid:
        fields["log"] = case.log
    if case.file is not None:
        fields["file"] = case.file
        if case.valid:
            fields["tornTail"] = case.torn_tail
    if case.capture is not None:
        fields["capture"] = case.capture
    if case.requirement is not None:
        fields["requirement"] = case.requirement
    return obj(fields)


def case_text(case: Case, world: World | None = None) -> str:
    """Return the bytes of ``case``'s file, as text: the layout of every vector file (spec/vectors.md §3)."""
    return layout(case_to_json(case, world), CASE_LAYOUT)
