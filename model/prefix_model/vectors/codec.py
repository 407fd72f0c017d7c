"""Actions and worlds as JSON, and the text layout of vector files (spec/vectors.md §3-§4). Pure.

An action is the JSON object ``{"action": "<ClassName>", <field>: <value>, ...}``: every field of
the ``actions.py`` dataclass under its camelCase name (``session_id`` → ``sessionId``), always
written, ``None`` as ``null``, tuples as arrays, nested values (``AgentOptions``,
``LlmCallConfig``, ``Listener``) as objects of their fields, a listener's scripted calls as
``{"call": "<ClassName>", ...}`` and messages and tools as the JSON they are. Two fields are
never written: ``Listener.calls`` (``Register`` resets it) and ``LlmCallConfig.written`` (how a
read log spelled the config). Fields the language gained after its first vectors (``SPARSE``) are
written only where they differ from their default, so a vector that does not use them keeps its
bytes; a reader takes a missing one as its default. ``Reply.toolCalls`` is an array of
``{id, name, arguments}``.

A world is observed as the vector's ``expected``: each session's events as ``event_to_json``
writes them without ``time`` (the one field a real run cannot reproduce), and every request sent,
as ``{instance, loopRequest, request, session, step, turn}`` with ``request_to_json``'s request.

Keys: objects this format defines are written with sorted keys; JSON that comes from the harness
(events, requests, messages, tools, headers) keeps its own key order, because the spec compares
it by JSON text (JSON-4, JSON-5). Every value is written as JSON text (``json_text``), so numbers
read as JavaScript writes them.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping

from prefix_model.core.events import Event
from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import FrozenMap, JsonValue, is_json_value, json_text
from prefix_model.core.requests import request_to_json
from prefix_model.formats.event_lines import event_to_json
from prefix_model.loop import actions as _actions
from prefix_model.loop.actions import Action, Reply, SendPrompt
from prefix_model.loop.world import Append, CancelThenPrepend, InjectThenPrepend, Listener, Prepend, SentRequest, ShortCircuit, Throw, World

__all__ = [
    "CodecError",
    "ACTION_TYPES",
    "CALL_TYPES",
    "SPARSE",
    "camel",
    "obj",
    "action_to_json",
    "action_from_json",
    "event_expected",
    "request_record",
    "expected_of",
    "layout",
]

ACTION_TYPES: tuple[type, ...] = typing.get_args(_actions.Action)
CALL_TYPES: tuple[type, ...] = (Prepend, Append, ShortCircuit, Throw, InjectThenPrepend, CancelThenPrepend)
_TAGS: tuple[tuple[str, tuple[type, ...]], ...] = (("action", ACTION_TYPES), ("call", CALL_TYPES))
_OMITTED: frozenset[tuple[type, str]] = frozenset({(LlmCallConfig, "written"), (Listener, "calls")})
# Added to the language after vectors were published (issue 34 item 5): written only when not the default.
SPARSE: frozenset[tuple[type, str]] = frozenset(
    {(SendPrompt, "block_reason"), (Throw, "message"), (Throw, "causes"), (InjectThenPrepend, "source"), (InjectThenPrepend, "meta")}
)
_OBJECT_TUPLES: dict[tuple[type, str], tuple[str, ...]] = {(Reply, "tool_calls"): ("id", "name", "arguments")}


class CodecError(ValueError):
    """A JSON value that does not spell an action: where (a JSON path) and why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def camel(name: str) -> str:
    """Return the camelCase JSON name of a snake_case field."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def obj(fields: Mapping[str, JsonValue]) -> FrozenMap:
    """Return a JSON object of this format: its keys in sorted order.

    :raises CodecError: for a key JavaScript would order first (an array index), which no sorted object can hold
    """
    result = FrozenMap({key: fields[key] for key in sorted(fields)})
    if list(result) != sorted(fields):
        raise CodecError("$", f"array-index-like keys cannot be written in sorted order: {[k for k in result][:3]}")
    return result


def _tag_of(cls: type) -> str | None:
    return next((tag for tag, members in _TAGS if cls in members), None)


_HINTS: dict[type, dict[str, object]] = {}


def _hints(cls: type) -> dict[str, object]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _fields(cls: type) -> tuple[dataclasses.Field[object], ...]:
    return tuple(f for f in dataclasses.fields(cls) if (cls, f.name) not in _OMITTED)


def _is_union(hint: object) -> bool:
    return isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union


# --- encoding ---


def _encode(value: object, hint: object) -> JsonValue:
    if _is_union(hint):
        if value is None:
            return None
        arms = [a for a in typing.get_args(hint) if a is not type(None)]
        arm = next((a for a in arms if _matches(value, a)), None)
        if arm is None:
            raise CodecError("$", f"{type(value).__name__} fits no arm of {hint}")
        return _encode(value, arm)
    if typing.get_origin(hint) is tuple:
        assert isinstance(value, tuple)
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_encode(item, args[0]) for item in value)
        return tuple(_encode(item, arg) for item, arg in zip(value, args))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _encode_dataclass(value)
    if not is_json_value(value):
        raise CodecError("$", f"{type(value).__name__} is not a JSON value")
    return typing.cast(JsonValue, value)


def _matches(value: object, hint: object) -> bool:
    origin = typing.get_origin(hint)
    if origin is tuple:
        return isinstance(value, tuple)
    if hint is object:
        return True
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(hint, type) and isinstance(value, hint)


def _encode_dataclass(value: object) -> FrozenMap:
    cls = type(value)
    hints = _hints(cls)
    fields: dict[str, JsonValue] = {}
    tag = _tag_of(cls)
    if tag is not None:
        fields[tag] = cls.__name__
    for field in _fields(cls):
        item = getattr(value, field.name)
        if (cls, field.name) in SPARSE and item == field.default:
            continue
        shape = _OBJECT_TUPLES.get((cls, field.name))
        if shape is not None:
            assert isinstance(item, tuple)
            fields[camel(field.name)] = tuple(obj(dict(zip(shape, entry))) for entry in item)
        else:
            fields[camel(field.name)] = _encode(item, hints[field.name])
    return obj(fields)


def action_to_json(action: Action) -> FrozenMap:
    """Return the JSON object of ``action`` (spec/vectors.md §4)."""
    return _encode_dataclass(action)


# --- decoding ---


def _decode(value: JsonValue, hint: object, path: str) -> object:
    if _is_union(hint):
        arms = typing.get_args(hint)
        if value is None and type(None) in arms:
            return None
        problems = []
        for arm in (a for a in arms if a is not type(None)):
            try:
                return _decode(value, arm, path)
            except CodecError as error:
                problems.append(error.reason)
        raise CodecError(path, "; ".join(problems) or "null is not allowed here")
    if typing.get_origin(hint) is tuple:
        if not isinstance(value, tuple):
            raise CodecError(path, "an array is expected")
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(item, args[0], f"{path}[{n}]") for n, item in enumerate(value))
        if len(value) != len(args):
            raise CodecError(path, f"an array of {len(args)} is expected")
        return tuple(_decode(item, arg, f"{path}[{n}]") for n, (item, arg) in enumerate(zip(value, args)))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(value, hint, path)
    if hint is object:
        return value
    if hint is FrozenMap:
        if not isinstance(value, FrozenMap):
            raise CodecError(path, "an object is expected")
        return value
    if not _matches(value, hint):
        name = getattr(hint, "__name__", str(hint))
        raise CodecError(path, f"{json_text(value)[:40]} is not a {'number' if name == 'float' else name}")
    return value


def _decode_dataclass(value: JsonValue, cls: type, path: str) -> object:
    if not isinstance(value, FrozenMap):
        raise CodecError(path, f"a {cls.__name__} object is expected")
    tag = _tag_of(cls)
    if tag is not None:
        members = dict(_TAGS)[tag]
        name = value.get(tag)
        chosen = next((c for c in members if c.__name__ == name), None)
        if chosen is None:
            raise CodecError(f"{path}.{tag}", f"unknown {tag} {json_text(name) if is_json_value(name) else name!r}")
        cls = chosen
    hints = _hints(cls)
    known = {camel(f.name): f for f in _fields(cls)}
    extra = [k for k in value if k not in known and k != tag]
    if extra:
        raise CodecError(path, f"unknown field {extra[0]!r} of {cls.__name__}")
    kwargs: dict[str, object] = {}
    for key, field in known.items():
        where = f"{path}.{key}"
        if key not in value:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise CodecError(where, f"{cls.__name__} needs {key}")
            continue
        shape = _OBJECT_TUPLES.get((cls, field.name))
        if shape is not None:
            kwargs[field.name] = _decode_object_tuples(value[key], shape, where)
        else:
            kwargs[field.name] = _decode(value[key], hints[field.name], where)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:
        raise CodecError(path, str(error)) from None


def _decode_object_tuples(value: JsonValue, shape: tuple[str, ...], path: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, tuple):
        raise CodecError(path, "an array is expected")
    entries = []
    for n, item in enumerate(value):
        if not (isinstance(item, FrozenMap) and set(item) == set(shape) and all(isinstance(item[k], str) for k in shape)):
            raise CodecError(f"{path}[{n}]", f"an object of strings {', '.join(shape)} is expected")
        entries.append(tuple(str(item[k]) for k in shape))
    return tuple(entries)


def action_from_json(value: JsonValue) -> Action:
    """Return the action a JSON object spells; raise ``CodecError`` naming the path at fault."""
    if not isinstance(value, FrozenMap) or "action" not in value:
        raise CodecError("$", 'an action is an object with an "action" name')
    decoded = _decode_dataclass(value, ACTION_TYPES[0], "$")
    assert isinstance(decoded, ACTION_TYPES)
    return typing.cast(Action, decoded)


# --- what a world shows: the vector's expected part ---


def event_expected(event: Event) -> FrozenMap:
    """Return the event as ``event_to_json`` writes it, without ``time``."""
    return event_to_json(event).without("time")


def request_record(sent: SentRequest) -> FrozenMap:
    """Return one sent request as the vector records it."""
    fields: dict[str, JsonValue] = {
        "session": sent.session_id, "instance": sent.instance_id, "turn": sent.turn, "step": sent.step,
        "loopRequest": sent.loop_request, "request": request_to_json(sent.request),
    }  # fmt: skip
    return obj(fields)


def expected_of(world: World) -> FrozenMap:
    """Return ``{"requests": [...], "sessions": {id: [event, ...]}}`` of ``world``."""
    sessions = {s.id: tuple(event_expected(e) for e in s.log.events) for s in world.sessions}
    return obj({"requests": tuple(request_record(r) for r in world.requests), "sessions": obj(sessions)})


# --- the text layout of a vector file ---

Pattern = tuple[str, ...]


def layout(value: JsonValue, expanded: tuple[Pattern, ...]) -> str:
    """Return ``value`` as JSON text with a final newline, one member per line for the containers at ``expanded`` paths.

    A path names object keys and ``[]`` for array elements; ``*`` matches any one key. Every other
    container is written compactly as ``json_text`` writes it; indentation is one space per level.
    """
    return _layout(value, (), expanded) + "\n"


def _match(path: Pattern, pattern: Pattern) -> bool:
    return len(path) == len(pattern) and all(p == q or q == "*" for p, q in zip(path, pattern))


def _layout(value: JsonValue, path: Pattern, expanded: tuple[Pattern, ...]) -> str:
    if not (isinstance(value, (tuple, FrozenMap)) and value and any(_match(path, p) for p in expanded)):
        return json_text(value)
    pad = " " * (len(path) + 1)
    if isinstance(value, tuple):
        items = [pad + _layout(item, path + ("[]",), expanded) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + pad[:-1] + "]"
    members = [pad + json_text(key) + ": " + _layout(item, path + (key,), expanded) for key, item in value.items()]
    return "{\n" + ",\n".join(members) + "\n" + pad[:-1] + "}"
