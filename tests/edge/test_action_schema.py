"""spec/schema/vector.schema.json's actions: the committed definitions are the ones the action dataclasses generate."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from prefix_model.edge.vectors import action_schema
from prefix_model.edge.vectors.action_schema import SCHEMA_PATH, action_defs, schema_text
from prefix_model.vectors.codec import ACTION_TYPES


@pytest.mark.spec("VEC-1")
def test_the_committed_action_schema_is_the_generated_one() -> None:
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert schema_text(text) == text, "run `.venv/bin/python -m prefix_model.edge.vectors.action_schema`"
    defs = json.loads(text)["$defs"]
    assert [ref["$ref"] for ref in defs["action"]["oneOf"]] == [f"#/$defs/action{cls.__name__}" for cls in ACTION_TYPES]


@pytest.mark.spec("VEC-1")
def test_a_changed_action_changes_the_generated_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new field, or a new action, shows in the generated schema (so a stale committed file fails the test above)."""

    @dataclass(frozen=True)
    class Nudge:
        instance: int
        text: str
        loud: bool | None = None

    monkeypatch.setattr(action_schema, "ACTION_TYPES", (*ACTION_TYPES, Nudge))
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    defs = json.loads(schema_text(text))["$defs"]
    assert list(defs)[-1] == "actionNudge" and defs["action"]["oneOf"][-1] == {"$ref": "#/$defs/actionNudge"}
    assert defs["actionNudge"] == {
        "type": "object",
        "required": ["action", "instance", "loud", "text"],
        "properties": {"action": {"const": "Nudge"}, "instance": {"type": "integer", "minimum": 0}, "text": {"type": "string"}, "loud": {"type": ["boolean", "null"]}},
        "additionalProperties": False,
    }
    assert schema_text(text) != text
    assert set(action_defs()) == {"action", "actionNudge", *(f"action{cls.__name__}" for cls in ACTION_TYPES)}


@pytest.mark.spec("VEC-1")
def test_a_field_type_with_no_schema_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True)
    class Tilt:
        angle: float

    monkeypatch.setattr(action_schema, "ACTION_TYPES", (Tilt,))
    with pytest.raises(TypeError, match="no schema for <class 'float'>"):
        action_defs()
