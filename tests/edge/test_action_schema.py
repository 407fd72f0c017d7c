"""spec/schema/vector.schema.json's actions: the committed definitions are the ones the action dataclasses generate."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from prefix_model.edge.vectors import action_schema
from prefix_model.edge.vectors.action_schema import SCHEMA_PATH, VECTORS_MD_PATH, action_defs, action_table, schema_text, transcript_text, vectors_md_text
from prefix_model.edge.vectors.bundle import transcript
from prefix_model.vectors.codec import ACTION_TYPES


@pytest.mark.spec("VEC-1")
def test_the_committed_action_schema_is_the_generated_one() -> None:
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert schema_text(text) == text, "run `.venv/bin/python -m prefix_model.edge.vectors.action_schema`"
    defs = json.loads(text)["$defs"]
    assert [ref["$ref"] for ref in defs["action"]["oneOf"]] == [f"#/$defs/action{cls.__name__}" for cls in ACTION_TYPES]


@pytest.mark.spec("VEC-1", "VEC-4")
def test_vectors_md_says_what_the_dataclasses_the_adapter_and_the_generator_say() -> None:
    text = VECTORS_MD_PATH.read_text(encoding="utf-8")
    assert vectors_md_text(text) == text, "run `.venv/bin/python -m prefix_model.edge.vectors.action_schema`"
    assert action_table() in text and all(f"| `{cls.__name__}` | `" in text for cls in ACTION_TYPES)
    # The transcript's answers are the adapter's: a stale one is rewritten, the requests kept.
    shown = transcript(text)
    stale = shown.replace('"actions":["Create",', '"actions":["Nudge","Create",')
    assert stale != shown and transcript_text(stale) == shown
    # So are the worked examples: a stale one is rewritten as its case is generated.
    example = "<!-- worked-example: loop/no-listener -->\n```json\n"
    assert example in text and vectors_md_text(text.replace(example + "{", example + "{\n \"stale\": true,")) == text


@pytest.mark.spec("VEC-1")
def test_a_changed_action_changes_the_generated_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new field, or a new action, shows in the generated schema (so a stale committed file fails the test above)."""

    @dataclass(frozen=True)
    class Nudge:
        """Nudge the instance with ``text``.

        Model detail: not in the table."""

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
    assert action_table().endswith("| `Nudge` | `instance, text, loud` | Nudge the instance with `text`. |\n")
    assert set(action_defs()) == {"action", "actionNudge", *(f"action{cls.__name__}" for cls in ACTION_TYPES)}

    @dataclass(frozen=True)
    class Mute:
        instance: int

    monkeypatch.setattr(action_schema, "ACTION_TYPES", (*ACTION_TYPES, Mute))
    with pytest.raises(TypeError, match="action Mute has no docstring"):
        action_table()


@pytest.mark.spec("VEC-1")
def test_a_field_type_with_no_schema_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True)
    class Tilt:
        angle: float

    monkeypatch.setattr(action_schema, "ACTION_TYPES", (Tilt,))
    with pytest.raises(TypeError, match="no schema for <class 'float'>"):
        action_defs()
