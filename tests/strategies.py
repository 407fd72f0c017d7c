"""Shared Hypothesis strategies: JSON values, content blocks, and valid session logs.

JSON (§1):

- ``js_numbers`` — numbers as a JavaScript reader holds them (integral ones as ``int``).
- ``json_values`` — frozen values (tuples and ``FrozenMap`` objects, built with ``st.recursive``);
  also registered for ``st.from_type(FrozenMap)``.
- ``plain_json_values`` — the ``dict``/``list`` values a caller hands to ``freeze``.

Content (§2): ``contents(marker)`` — a ``content`` array whose first block is a text block
starting ``#<marker> ``, so a test can tell from a derivation which event a message came from.
Random words never contain ``#``.

Logs (§2-§4): a log is drawn as a ``LogScript`` — a tuple of ``Step`` s, each one call of
``Log.append``. Steps name the steps they refer to (a replacement's start and end, provenance) by
*label*, not by seq, so a test can insert or remove log-only steps and rebuild the log with
``build_log`` (seqs are assigned afresh). ``log_scripts()`` draws scripts whose every step is
valid: user, steering, assistant (empty or not) and tool/result appends, tool/call + tool/result
pairs, log-only events (every known log-only type, ``request/header`` snapshots, unknown plugin
types), positional replacements with correct provenance and single-node tool/result content
rewrites. In a drawn script label = seq, and every content marker is its event's seq.
``logs()`` draws the built ``Log``; ``rejected_events(log)`` draws an event that breaks exactly
one named rule when appended to ``log``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from hypothesis import settings
from hypothesis import strategies as st
from prefix_model.core.events import (
    APPEND,
    ASSISTANT_CHUNK,
    ASSISTANT_MESSAGE,
    COMPACT_END,
    COMPACT_START,
    COMPACT_SUMMARY,
    LEGACY_HEADER_DELTA,
    LEGACY_MODE_SET,
    PROMPT_BLOCKED,
    REQUEST_HEADER,
    STEERING_MESSAGE,
    STEP_END,
    STEP_START,
    TODO_WRITE,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Event,
    Replace,
    SurfaceOp,
    is_surface_type,
)
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, JsonValue, freeze
from prefix_model.core.log import EMPTY_LOG, Log

__all__ = [
    "INDEX_LIKE_KEYS",
    "PREFIX_MARKER",
    "UNKNOWN_TYPES",
    "LOG_ONLY_TYPES",
    "js_numbers",
    "json_scalars",
    "json_values",
    "plain_json_values",
    "object_keys",
    "words",
    "contents",
    "header_data",
    "log_only_steps",
    "log_only_events",
    "ReplaceRef",
    "Step",
    "LogScript",
    "build_log",
    "log_scripts",
    "logs",
    "rejected_events",
    "obj",
    "fewer_examples",
]


def fewer_examples(divisor: int) -> settings:
    """Return settings running 1/``divisor`` of the profile's examples (for tests drawing whole logs)."""
    return settings(max_examples=max(10, settings().max_examples // divisor))


def obj(**fields: JsonValue) -> FrozenMap:
    """Return the frozen JSON object of ``fields`` (a short spelling for tests)."""
    return FrozenMap(fields)


# --- §1 JSON values ---------------------------------------------------------------------------

# Keys JavaScript orders specially (canonical array indices) and look-alikes it does not.
INDEX_LIKE_KEYS: tuple[str, ...] = ("0", "1", "2", "10", "01", "-1", "1.5", "+1", "4294967294", "4294967295")


def _as_js_number(number: int | float) -> int | float:
    """Return ``number`` as the model holds a double: ``-0`` folded to ``0``, integral as ``int``."""
    frozen = freeze(number + 0)  # x + 0 turns -0.0 into 0.0
    assert isinstance(frozen, (int, float))
    return frozen


js_numbers: st.SearchStrategy[int | float] = st.one_of(
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.integers(-(2**80), 2**80).map(_as_js_number),
    st.floats(allow_nan=False, allow_infinity=False).map(_as_js_number),
)

object_keys: st.SearchStrategy[str] = st.one_of(st.text(max_size=6), st.sampled_from(INDEX_LIKE_KEYS))


def json_scalars(*, floats: bool = True) -> st.SearchStrategy[JsonValue]:
    """Return a strategy for frozen JSON scalars; without ``floats`` numbers are safe integers."""
    numbers: st.SearchStrategy[int | float] = js_numbers if floats else st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    return st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=8))


def json_values(*, floats: bool = True, keys: st.SearchStrategy[str] = object_keys, max_leaves: int = 12) -> st.SearchStrategy[JsonValue]:
    """Return a strategy for frozen JSON values: tuples for arrays, ``FrozenMap`` for objects."""

    def extend(children: st.SearchStrategy[JsonValue]) -> st.SearchStrategy[JsonValue]:
        arrays = st.lists(children, max_size=4).map(tuple)
        objects = st.dictionaries(keys, children, max_size=4).map(FrozenMap)
        return st.one_of(arrays, objects)

    return st.recursive(json_scalars(floats=floats), extend, max_leaves=max_leaves)


def plain_json_values(*, max_leaves: int = 12) -> st.SearchStrategy[object]:
    """Return a strategy for unfrozen JSON: ``dict``/``list``, any finite non-``-0`` float, big ints."""
    numbers = st.one_of(
        st.integers(-(2**80), 2**80),
        st.floats(allow_nan=False, allow_infinity=False).map(lambda x: x + 0.0),
    )
    scalars: st.SearchStrategy[object] = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=8))

    def extend(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
        return st.one_of(st.lists(children, max_size=4), st.dictionaries(object_keys, children, max_size=4))

    return st.recursive(scalars, extend, max_leaves=max_leaves)


st.register_type_strategy(FrozenMap, st.dictionaries(object_keys, json_values(max_leaves=6), max_size=4).map(FrozenMap))


# --- Content blocks ---------------------------------------------------------------------------

# Words never contain "#", so "#<digits> " at the start of a text is always a marker. A fixed
# vocabulary keeps drawing cheap: message text is opaque to every rule of §2-§4.
words: st.SearchStrategy[str] = st.sampled_from(["", "go", "ping", "done", "say ping through echo", "ok then", "Ünïcode ✓"])


def _text_block(text: str) -> FrozenMap:
    return obj(type="text", text=text)


def _tool_call_block(call_id: str, name: str, arguments: JsonValue) -> FrozenMap:
    return obj(type="tool-call", toolCallId=call_id, toolName=name, input=arguments)


_tool_call_blocks = st.builds(_tool_call_block, st.sampled_from(["c1", "c2", "c3"]), st.sampled_from(["echo", "add"]), json_values(max_leaves=3))
_content_tails = st.lists(words.map(_text_block), max_size=2).map(tuple)
_content_tails_with_calls = st.lists(st.one_of(words.map(_text_block), _tool_call_blocks), max_size=2).map(tuple)


def _draw_content(draw: st.DrawFn, marker: int | str, *, tool_calls: bool = False) -> tuple[JsonValue, ...]:
    first = _text_block(f"#{marker} {draw(words)}")
    return (first, *draw(_content_tails_with_calls if tool_calls else _content_tails))


def contents(marker: int | str, *, tool_calls: bool = False) -> st.SearchStrategy[tuple[JsonValue, ...]]:
    """Return a strategy for a non-empty content array opening with the text ``#<marker> ...``."""
    tails = _content_tails_with_calls if tool_calls else _content_tails
    return st.tuples(words, tails).map(lambda pair: (_text_block(f"#{marker} {pair[0]}"), *pair[1]))


# --- Log-only data ----------------------------------------------------------------------------

# A marker no event content can contain: message contents open with "#<digits> ".
PREFIX_MARKER = "#prefix"

UNKNOWN_TYPES: tuple[str, ...] = ("session/title", "approval/request", "plugin/x", "context/message", "compact", "")


def _config() -> st.SearchStrategy[FrozenMap]:
    optional_fields: dict[str, st.SearchStrategy[JsonValue]] = {
        "reasoningEffort": st.sampled_from(["low", "high"]),
        "temperature": st.sampled_from([0, 0.5, 1]),
        "maxTokens": st.sampled_from([256, 4096]),
        "stop": st.lists(st.sampled_from(["\n", "END"]), max_size=2).map(tuple),
    }
    required_fields: dict[str, st.SearchStrategy[JsonValue]] = {"provider": st.sampled_from(["mock", "deepseek"]), "model": st.sampled_from(["m1", "m2"])}
    optional = st.fixed_dictionaries({}, optional=optional_fields)
    required = st.fixed_dictionaries(required_fields)
    return st.tuples(required, optional).map(lambda pair: FrozenMap({**pair[0], **pair[1]}))


_prefix_message = words.map(lambda text: obj(role="user", content=(_text_block(f"{PREFIX_MARKER} {text}"),)))
_tool_schema = st.sampled_from(["echo", "add"]).map(lambda name: obj(name=name, parameters=obj(type="object")))


def header_data() -> st.SearchStrategy[FrozenMap]:
    """Return a strategy for a valid ``request/header`` data object (prefix texts open with ``#prefix``)."""
    optional_fields: dict[str, st.SearchStrategy[JsonValue]] = {
        "system": words,
        "tools": st.lists(_tool_schema, max_size=2).map(tuple),
        "messagePrefix": st.lists(_prefix_message, max_size=2).map(tuple),
    }
    header = st.tuples(_config(), st.fixed_dictionaries({}, optional=optional_fields)).map(lambda pair: FrozenMap({"config": pair[0], **pair[1]}))
    return st.builds(lambda h, reason: obj(header=h, reason=reason), header, st.sampled_from(["initial", "resume", "change"]))


_turn_end_reasons: st.SearchStrategy[FrozenMap] = st.sampled_from(
    [
        obj(kind="completed"),
        obj(kind="aborted"),
        obj(kind="error", step=1, message="boom"),
        obj(kind="disposed"),
        obj(kind="max-tokens"),
        obj(kind="rejected", reason="veto"),
        obj(kind="interrupted"),
    ]
)


_small = st.integers(1, 3)

# The data of each known log-only type; an unknown type's data is any JSON value (LOG-9, LOG-11).
_LOG_ONLY_DATA: dict[str, st.SearchStrategy[JsonValue]] = {
    TURN_START: _small.map(lambda t: obj(turn=t, trigger=obj(kind="message", source=obj(kind="user")))),
    TURN_END: st.builds(lambda t, r: obj(turn=t, reason=r), _small, _turn_end_reasons),
    STEP_START: st.builds(lambda t, s: obj(turn=t, step=s), _small, _small),
    STEP_END: st.builds(lambda t, s: obj(turn=t, step=s), _small, _small),
    PROMPT_BLOCKED: words.map(lambda text: obj(content=(_text_block(text),), source=obj(kind="user"), reason="blocked")),
    ASSISTANT_CHUNK: words.map(lambda text: obj(turn=1, step=1, chunk=obj(type="text-delta", text=text))),
    TOOL_CALL: st.sampled_from(["c1", "c2"]).map(lambda c: obj(turn=1, step=1, callId=c, name="echo", arguments="{}")),
    TODO_WRITE: words.map(lambda text: obj(todos=(obj(content=text, status="pending"),))),
    REQUEST_HEADER: header_data(),
    COMPACT_START: _small.map(lambda t: obj(turn=t)),
    COMPACT_SUMMARY: words.map(lambda text: obj(summary=text, shadowedRange=obj(start=0, end=1), shadowedSeqs=(0, 1), shadowedTokenCount=10, provider="mock", model="m1")),
    COMPACT_END: _small.map(lambda t: obj(turn=t)),
}

# Every known type that is not surface-eligible.
LOG_ONLY_TYPES: tuple[str, ...] = tuple(_LOG_ONLY_DATA)

# Data of any JSON kind, as plugin events carry (LOG-9); non-recursive to keep drawing cheap.
_unknown_data: st.SearchStrategy[JsonValue] = st.sampled_from([None, True, 0, 1.5, "text", (), ("a", 1), obj(), obj(title="go", n=2), obj(nested=obj(deep=(None,)))])

# A third each: request/header (the prefix's home, DER-8), an unknown type (LOG-9), any other known type.
log_only_events: st.SearchStrategy[tuple[str, JsonValue]] = st.one_of(
    st.tuples(st.just(REQUEST_HEADER), _LOG_ONLY_DATA[REQUEST_HEADER]),
    st.tuples(st.sampled_from(UNKNOWN_TYPES), _unknown_data),
    st.one_of(*(st.tuples(st.just(kind), data) for kind, data in _LOG_ONLY_DATA.items() if kind != REQUEST_HEADER)),
)


# --- Log scripts ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplaceRef:
    """A replacement ``surfaceOp`` whose ``start`` and ``end`` name steps by label."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Step:
    """One ``Log.append`` call; ``surface_op`` and ``sources`` refer to earlier steps by label."""

    label: int
    type: str
    data: JsonValue
    surface_op: str | ReplaceRef | None = None
    sources: tuple[int, ...] | None = None
    time: int = 0

    @property
    def is_log_only(self) -> bool:
        """Return whether this step appends a log-only event."""
        return not is_surface_type(self.type)


LogScript = tuple[Step, ...]


def build_log(script: Sequence[Step], log: Log = EMPTY_LOG) -> Log:
    """Return ``log`` after appending every step of ``script``, labels resolved to seqs."""
    seq_of: dict[int, int] = {}
    for step in script:
        op: SurfaceOp | None = step.surface_op if not isinstance(step.surface_op, ReplaceRef) else None
        if isinstance(step.surface_op, ReplaceRef):
            op = Replace(seq_of[step.surface_op.start], seq_of[step.surface_op.end])
        sources = None if step.sources is None else tuple(seq_of[label] for label in step.sources)
        seq_of[step.label] = log.seq
        log = log.append(step.type, step.data, time=step.time, surface_op=op, source_event_seqs=sources)
    return log


@dataclass
class _Draft:
    """The strategy's own bookkeeping while it draws a script (label = seq)."""

    steps: list[Step] = field(default_factory=list)
    surface: list[int] = field(default_factory=list)

    @property
    def next_label(self) -> int:
        return len(self.steps)

    def step(self, label: int) -> Step:
        return self.steps[label]

    def add(self, step: Step) -> None:
        if isinstance(step.surface_op, ReplaceRef):
            i, j = self.surface.index(step.surface_op.start), self.surface.index(step.surface_op.end)
            self.surface[i : j + 1] = [step.label]
        elif step.surface_op == APPEND:
            self.surface.append(step.label)
        self.steps.append(step)


_sources = st.sampled_from([obj(kind="user"), obj(kind="plugin", plugin="goal")])
_message_types = st.sampled_from([USER_MESSAGE, STEERING_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT])
_replacement_types = st.sampled_from([USER_MESSAGE, ASSISTANT_MESSAGE, STEERING_MESSAGE])
_call_ids = st.sampled_from(["c1", "c2", "c3"])
_metas: st.SearchStrategy[JsonValue] = st.sampled_from([None, obj(origin="test"), obj(flag=True, n=1), ("x", 2)])  # None: absent


_T = TypeVar("_T")


def _pick(draw: st.DrawFn, choices: Sequence[_T]) -> _T:
    """Draw one of ``choices`` (an index draw: cached by Hypothesis, cheap, shrinks to the first)."""
    return choices[draw(st.integers(0, len(choices) - 1))]


def _extra_sources(draw: st.DrawFn, draft: _Draft, exclude: Sequence[int] = ()) -> list[int]:
    """Draw up to two distinct earlier labels (any type) for provenance."""
    candidates = [label for label in range(draft.next_label) if label not in exclude]
    if not candidates:
        return []
    return sorted({_pick(draw, candidates) for _ in range(draw(st.integers(0, 2)))})


def _append_sources(draw: st.DrawFn, draft: _Draft, *, may_be_empty: bool) -> tuple[int, ...] | None:
    """Draw the provenance of an append: absent, or distinct earlier labels (empty only if allowed)."""
    if not draw(st.booleans()):
        return None
    extra = _extra_sources(draw, draft)
    if not extra and not may_be_empty:
        return None
    return tuple(extra)


def _prompt_data(draw: st.DrawFn, label: int, steering: bool) -> FrozenMap:
    fields: dict[str, JsonValue] = {"content": _draw_content(draw, label), "source": draw(_sources)}
    if steering:
        fields["turn"] = draw(_small)
    meta = draw(_metas)
    if meta is not None:
        fields["meta"] = meta
    if draw(st.booleans()):
        fields["envelope"] = obj(displayContent=(_text_block("shown"),), prefixContexts=())
    return FrozenMap(fields)


def _assistant_data(draw: st.DrawFn, label: int, *, empty: bool) -> FrozenMap:
    content: tuple[JsonValue, ...] = () if empty else _draw_content(draw, label, tool_calls=True)
    fields: dict[str, JsonValue] = {"turn": 1, "step": 1, "content": content, "provenance": obj(provider="mock", model="m1")}
    if draw(st.booleans()):
        fields["usage"] = obj(inputTokens=draw(_small), outputTokens=3)
    return FrozenMap(fields)


def _tool_result_data(draw: st.DrawFn, label: int, call_id: str) -> FrozenMap:
    is_error = draw(st.booleans())
    fields: dict[str, JsonValue] = {"turn": 1, "step": 1, "callId": call_id, "content": _draw_content(draw, label), "isError": is_error}
    if is_error and draw(st.booleans()):
        fields["error"] = obj(name="ToolError", code="E_TOOL")
    meta = draw(_metas)
    if meta is not None:
        fields["meta"] = meta
    return FrozenMap(fields)


def _draw_message(draw: st.DrawFn, draft: _Draft) -> None:
    label = draft.next_label
    kind = draw(_message_types)
    if kind == ASSISTANT_MESSAGE:
        data = _assistant_data(draw, label, empty=draw(st.booleans()))
    elif kind == TOOL_RESULT:
        data = _tool_result_data(draw, label, draw(_call_ids))
    else:
        data = _prompt_data(draw, label, steering=kind == STEERING_MESSAGE)
    sources = _append_sources(draw, draft, may_be_empty=kind == ASSISTANT_MESSAGE)
    draft.add(Step(label, kind, data, APPEND, sources, time=label))


def _draw_tool_pair(draw: st.DrawFn, draft: _Draft) -> None:
    call = draft.next_label
    call_id = draw(_call_ids)
    draft.add(Step(call, TOOL_CALL, obj(turn=1, step=1, callId=call_id, name="echo", arguments='{"text":"ping"}'), time=call))
    result = draft.next_label
    draft.add(Step(result, TOOL_RESULT, _tool_result_data(draw, result, call_id), APPEND, (call,), time=result))


def log_only_steps(label: int) -> st.SearchStrategy[Step]:
    """Return a strategy for one log-only step with ``label``: a known log-only type or an unknown one."""
    return log_only_events.map(lambda pair: Step(label, pair[0], pair[1], time=abs(label)))


def _draw_log_only(draw: st.DrawFn, draft: _Draft) -> None:
    kind, data = draw(log_only_events)
    draft.add(Step(draft.next_label, kind, data, time=draft.next_label))


def _shuffled(draw: st.DrawFn, labels: list[int]) -> list[int]:
    """Return ``labels`` in a drawn order (provenance order is free)."""
    if len(labels) > 1 and draw(st.booleans()):
        return list(reversed(labels[1:])) + labels[:1]
    return labels


def _draw_replace(draw: st.DrawFn, draft: _Draft) -> None:
    label = draft.next_label
    surface = draft.surface
    # Half the time, when the surface allows it, start at a node whose seq exceeds a later node's (SURF-11).
    nested = [i for i in range(len(surface)) if any(later < surface[i] for later in surface[i + 1 :])]
    if len(nested) > 0 and draw(st.booleans()):
        i = _pick(draw, nested)
        j = _pick(draw, [j for j in range(i + 1, len(surface)) if surface[j] < surface[i]])
    else:
        i = draw(st.integers(0, len(surface) - 1))
        j = draw(st.integers(i, len(surface) - 1))
    shadowed = surface[i : j + 1]
    kind = draw(_replacement_types)
    if kind == ASSISTANT_MESSAGE:
        data = _assistant_data(draw, label, empty=draw(st.booleans()))
    else:
        data = _prompt_data(draw, label, steering=kind == STEERING_MESSAGE)
    sources = _shuffled(draw, shadowed + _extra_sources(draw, draft, exclude=shadowed))
    draft.add(Step(label, kind, data, ReplaceRef(shadowed[0], shadowed[-1]), tuple(sources), time=label))


def _draw_rewrite(draw: st.DrawFn, draft: _Draft) -> None:
    label = draft.next_label
    target = _pick(draw, [n for n in draft.surface if draft.step(n).type == TOOL_RESULT])
    original = draft.step(target).data
    assert isinstance(original, FrozenMap)
    fields = {key: original[key] for key in reversed(list(original))}  # key order must not matter (SURF-9)
    fields["content"] = _draw_content(draw, label)
    sources = _shuffled(draw, [target] + _extra_sources(draw, draft, exclude=[target]))
    draft.add(Step(label, TOOL_RESULT, FrozenMap(fields), ReplaceRef(target, target), tuple(sources), time=label))


@st.composite
def log_scripts(draw: st.DrawFn, max_events: int = 16) -> LogScript:
    """Draw a script of valid appends of at most ``max_events`` events (label = seq)."""
    target = draw(st.integers(0, max_events))
    draft = _Draft()
    while draft.next_label < target:
        actions: list[Callable[[st.DrawFn, _Draft], None]] = [_draw_message, _draw_log_only]
        if target - draft.next_label >= 2:
            actions.append(_draw_tool_pair)
        if draft.surface:
            actions.append(_draw_replace)
        if any(draft.step(n).type == TOOL_RESULT for n in draft.surface):
            actions.append(_draw_rewrite)
        _pick(draw, actions)(draw, draft)
    return tuple(draft.steps)


def logs(max_events: int = 16) -> st.SearchStrategy[Log]:
    """Return a strategy for valid logs built by ``Log.append`` (content markers = seqs)."""
    return log_scripts(max_events).map(build_log)


# --- Rejected appends -------------------------------------------------------------------------


def _event(log: Log, event_type: str, data: Mapping[str, JsonValue] | JsonValue, op: SurfaceOp | None = None, sources: tuple[int, ...] | None = None, *, seq: int | None = None, time: int = 0) -> Event:
    frozen = FrozenMap(data) if isinstance(data, Mapping) and not isinstance(data, FrozenMap) else data
    return Event(event_type, log.seq if seq is None else seq, time, frozen, op, sources)


def _user(text: str = "#x hi") -> FrozenMap:
    return obj(content=(_text_block(text),), source=obj(kind="user"))


def _candidates(log: Log) -> list[tuple[Event, str]]:
    """Return events that each break exactly one named rule when appended to ``log``."""
    n = log.seq
    assistant_without_provenance = obj(turn=1, step=1, content=(_text_block("#x a"),))
    found: list[tuple[Event, str]] = [
        (_event(log, USER_MESSAGE, _user(), APPEND, seq=n + 1), "LOG-2"),
        (_event(log, USER_MESSAGE, _user(), APPEND, time=-1), "LOG-3"),
        (_event(log, USER_MESSAGE, _user()), "LOG-5"),
        (_event(log, TURN_START, obj(turn=1), APPEND), "LOG-6"),
        (_event(log, "plugin/x", obj(), None, (0,) if n else ()), "LOG-6"),
        (_event(log, LEGACY_HEADER_DELTA, obj(delta=obj())), "LOG-7"),
        (_event(log, LEGACY_MODE_SET, obj(mode="plan")), "LOG-7"),
        (_event(log, REQUEST_HEADER, obj(header=obj(config=obj(provider="p", model="m")), reason="fallback")), "LOG-8"),
        (_event(log, STEP_START, (1, 1)), "LOG-11"),
        (_event(log, ASSISTANT_MESSAGE, assistant_without_provenance, APPEND), "LOG-13"),
        (_event(log, TURN_END, obj(turn=1, reason=obj(kind="aborted", message="x"))), "LOG-14"),
        (_event(log, TOOL_RESULT, obj(content=(), isError=False), APPEND), "LOG-15"),
        (_event(log, USER_MESSAGE, obj(content="text", source=obj(kind="user")), APPEND), "LOG-15"),
        (_event(log, USER_MESSAGE, _user(), "prepend"), "SURF-3"),
        (_event(log, USER_MESSAGE, _user(), Replace(n + 3, n + 3), (0,) if n else None), "SURF-4"),
        (_event(log, USER_MESSAGE, _user(), APPEND, ()), "SURF-7"),
        (_event(log, USER_MESSAGE, _user(), APPEND, (n,)), "SURF-7"),
    ]
    nodes = log.surface.nodes
    if nodes:
        found.append((_event(log, USER_MESSAGE, _user(), Replace(nodes[0], nodes[-1])), "SURF-8"))
    if len(nodes) >= 2:
        found.append((_event(log, USER_MESSAGE, _user(), Replace(nodes[-1], nodes[0]), tuple(nodes)), "SURF-5"))
    for node in nodes:
        original = log.events[node]
        if original.type == TOOL_RESULT and isinstance(original.data, FrozenMap):
            changed = FrozenMap({**original.data, "isError": not original.data["isError"]})
            found.append((_event(log, TOOL_RESULT, changed, Replace(node, node), (node,)), "SURF-9"))
            break
    return found


@st.composite
def rejected_events(draw: st.DrawFn, log: Log) -> tuple[Event, str]:
    """Draw an event and the one rule it breaks when appended to ``log`` (LOG-*, SURF-*)."""
    return draw(st.sampled_from(_candidates(log)))
