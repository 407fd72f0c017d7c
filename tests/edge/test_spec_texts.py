"""spec/schema/vector.schema.json's actions: the committed definitions are the ones the action dataclasses generate."""

from __future__ import annotations

import json
from pathlib import Path
from dataclasses import dataclass

import pytest
from prefix_model.edge.vectors import spec_texts
from prefix_model.edge.vectors.spec_texts import SCHEMA_PATH, VECTORS_MD_PATH, action_defs, action_table, schema_text, transcript_text, vectors_md_text
from prefix_model.edge.vectors.bundle import transcript
from prefix_model.vectors.codec import ACTION_TYPES


@pytest.mark.spec("VEC-1")
def test_the_committed_action_schema_is_the_generated_one() -> None:
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert schema_text(text) == text, "run `.venv/bin/python -m prefix_model.edge.vectors.spec_texts`"
    defs = json.loads(text)["$defs"]
    assert [ref["$ref"] for ref in defs["action"]["oneOf"]] == [f"#/$defs/action{cls.__name__}" for cls in ACTION_TYPES]


@pytest.mark.spec("VEC-1", "VEC-4")
def test_vectors_md_says_what_the_dataclasses_the_adapter_and_the_generator_say() -> None:
    text = VECTORS_MD_PATH.read_text(encoding="utf-8")
    assert vectors_md_text(text) == text, "run `.venv/bin/python -m prefix_model.edge.vectors.spec_texts`"
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

    monkeypatch.setattr(spec_texts, "ACTION_TYPES", (*ACTION_TYPES, Nudge))
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

    monkeypatch.setattr(spec_texts, "ACTION_TYPES", (*ACTION_TYPES, Mute))
    with pytest.raises(TypeError, match="action Mute has no docstring"):
        action_table()


@pytest.mark.spec("VEC-1")
def test_a_field_type_with_no_schema_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True)
    class Tilt:
        angle: float

    monkeypatch.setattr(spec_texts, "ACTION_TYPES", (Tilt,))
    with pytest.raises(TypeError, match="no schema for <class 'float'>"):
        action_defs()


@pytest.mark.spec("VEC-1")
def test_check_names_a_stale_file_and_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--check`` exits 1 naming the file that differs and leaves it as it was; without it the file is rewritten."""
    schema, md = tmp_path / "vector.schema.json", tmp_path / "vectors.md"
    stale = SCHEMA_PATH.read_text(encoding="utf-8").replace('"const": "Create"', '"const": "Stale"', 1)
    schema.write_text(stale, encoding="utf-8")
    md.write_text(VECTORS_MD_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(spec_texts, "SCHEMA_PATH", schema)
    monkeypatch.setattr(spec_texts, "VECTORS_MD_PATH", md)
    assert spec_texts.main(["--check"]) == 1
    assert capsys.readouterr().out == f"{schema}: differs\n{md}: unchanged\n"
    assert schema.read_text(encoding="utf-8") == stale
    assert spec_texts.main([]) == 0 and spec_texts.main(["--check"]) == 0
    assert schema.read_text(encoding="utf-8") == SCHEMA_PATH.read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as shown:
        spec_texts.main(["--help"])
    assert shown.value.code == 0 and "--check" in capsys.readouterr().out
    assert schema.read_text(encoding="utf-8") == SCHEMA_PATH.read_text(encoding="utf-8")
