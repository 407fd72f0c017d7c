"""Spec §14.4 — actions and messages in brief, as a counterexample shows them to a reviewer.

A reviewer reads the review without the model's source at hand, so nothing here prints Python:
an action is its kind and the fields that differ from their defaults (``key=value``, the field
names of the vectors' action JSON, values as JSON), a message is its role and each block said
in words (text quoted, a tool call as ``tool call NAME ARGS``, a tool result as ``tool result
for ID``). Long values are cut with ``…``; the whole action is in ``review --json``.
"""

from __future__ import annotations

import dataclasses
from enum import Enum

from prefix_model.core.json_values import FrozenMap, JsonValue, json_text

__all__ = ["VALUE_LIMIT", "clip", "action_brief", "message_brief"]

VALUE_LIMIT = 60  # characters of one string value: enough to tell two texts apart, short enough to read


def clip(text: str, limit: int = VALUE_LIMIT) -> str:
    """Return ``text`` in at most ``limit`` characters, ending in ``…`` when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quoted(text: str) -> str:
    return json_text(clip(text))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _block(block: JsonValue) -> str:
    """One content block in words."""
    if not isinstance(block, FrozenMap):
        return clip(json_text(block))
    kind = block.get("type")
    if kind == "text":
        return _quoted(str(block.get("text", "")))
    if kind == "tool-call":
        return f"tool call {block.get('name')} {clip(str(block.get('arguments', '')), 40)} (id {block.get('id')})"
    if kind == "tool-result":
        inner = block.get("content")
        texts = " ".join(_block(b) for b in inner) if isinstance(inner, tuple) else clip(json_text(inner))
        return f"tool result for {block.get('toolCallId')}" + (" (error)" if block.get("isError") is True else "") + f": {texts}"
    return f"[{kind} block]" if isinstance(kind, str) else clip(json_text(block))


def message_brief(message: JsonValue) -> str:
    """Return ``message`` in words: its role, then each block (an empty message says so)."""
    if not isinstance(message, FrozenMap) or "role" not in message:
        return _value(message)
    content = message.get("content")
    blocks = [_block(b) for b in content] if isinstance(content, tuple) else [_quoted(content) if isinstance(content, str) else clip(json_text(content))]
    return f"{message.get('role')} " + (", ".join(blocks) if blocks else "(no content)")


def _value(value: object) -> str:
    """A field's value: JSON for scalars, a message or a tool in brief, a nested record as ``{key=value …}``."""
    if isinstance(value, str):
        return _quoted(value)
    if value is None or isinstance(value, (bool, int, float)):
        return json_text(value)
    if isinstance(value, Enum):
        return str(value.name).lower()
    if isinstance(value, FrozenMap):
        if "role" in value:
            return message_brief(value)
        if isinstance(value.get("name"), str) and "parameters" in value:  # a tool schema: its name says which
            return str(value["name"])
        return clip(json_text(value))
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return f"{type(value).__name__}{{{_fields(value)}}}"
    return clip(str(value))


def _fields(record: object) -> str:
    """The fields of a dataclass that differ from their defaults, as ``key=value``."""
    shown = []
    for field in dataclasses.fields(record):  # type: ignore[arg-type]
        value = getattr(record, field.name)
        default = field.default if field.default is not dataclasses.MISSING else (
            field.default_factory() if field.default_factory is not dataclasses.MISSING else dataclasses.MISSING)  # fmt: skip
        if value == default or field.name == "calls":  # a listener's call count: Register resets it
            continue
        if field.name == "tool_calls":
            shown.append("toolCalls=[" + ", ".join(f"tool call {n} {clip(a, 40)} (id {i})" for i, n, a in value) + "]")
            continue
        shown.append(f"{_camel(field.name)}={_value(value)}")
    return " ".join(shown)


def action_brief(action: object) -> str:
    """Return ``action`` in one line: its kind, then each field that differs from its default."""
    fields = _fields(action)
    return type(action).__name__ + (f" {fields}" if fields else "")
