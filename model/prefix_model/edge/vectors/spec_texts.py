"""The spec's generated texts: vector.schema.json's actions, and spec/vectors.md's table, transcript and examples.

The action part of spec/schema/vector.schema.json is generated from the action dataclasses (as ``codec`` is).

An action's schema follows from its dataclass the way its JSON does (``codec.action_to_json``):
``{"action": "<ClassName>"}`` and every field under its camelCase name, required unless it is one
of ``codec.SPARSE``. A field's type gives its schema: ``str``, ``bool``, a non-negative ``int``;
``X | None`` (a scalar: ``[type, "null"]``; else ``oneOf`` null or X); a tuple of X as an array
(JSON values and objects as objects, a fixed pair as ``prefixItems``); a nested dataclass as a
reference to its own definition (``REFS``). What a type cannot say — a description, a constraint
on the JSON a field carries — is ``_EXTRA``'s, beside the generator.

spec/vectors.md's texts that the model writes come from the same places: its table of actions
(``action_table``: each action's fields as the schema names them, ``?`` where one may be absent,
and the first paragraph of its docstring), its protocol transcript, whose answers (the handshake
lists every action) are the model's adapter's (``transcript_text``), and its worked examples, each
the generated case its mark names (``generate.example_text``).

``python -m prefix_model.edge.vectors.spec_texts`` rewrites the committed schema's action
definitions and those texts of spec/vectors.md (``--check``: write nothing, name the files that differ,
exit 1); ``tests/edge/test_spec_texts.py`` checks the committed files equal the generated ones.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import io
import json
import re
import sys
import types
import typing
from importlib import resources
from pathlib import Path

from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import FrozenMap
from prefix_model.edge.runner.server import serve
from prefix_model.edge.vectors.bundle import TRANSCRIPT_MARK
from prefix_model.edge.vectors.generate import example_text
from prefix_model.vectors.codec import ACTION_TYPES, SPARSE, camel
from prefix_model.loop.actions import PlainReplace, PostStep, PreStep, Reply, SendPrompt, Inject
from prefix_model.loop.compaction import CompactPolicy
from prefix_model.loop.prompt import PromptContext
from prefix_model.loop.world import AgentOptions, Listener

__all__ = ["REFS", "SCHEMA_PATH", "VECTORS_MD_PATH", "TABLE_MARK", "action_defs", "schema_text", "action_table", "transcript_text", "vectors_md_text", "main"]

Schema = dict[str, object]

# The definitions (written by hand: they are not actions) a nested value refers to.
REFS: dict[object, str] = {
    AgentOptions: "agentOptions",
    Listener: "listener",
    LlmCallConfig: "callConfig",
    PromptContext: "promptContext",
    PlainReplace: "plainReplace",
    CompactPolicy: "compactPolicy",
    tuple[str, str, str]: "toolCall",  # Reply.toolCalls: {id, name, arguments} (codec's object tuples)
}

_SUMMARIES: Schema = {"description": "the summarizer's replies, in the order the compaction service asks (spec §10.4); \"summary\" when none is left"}
# What a field's type does not say: its description, and what it holds beyond its type.
_EXTRA: dict[tuple[type, str], Schema] = {
    (SendPrompt, "block_reason"): {"description": "the prompt-submit hook's own block reason, only with blocked; absent: \"blocked\""},
    (PreStep, "summaries"): _SUMMARIES,
    (PostStep, "summaries"): _SUMMARIES,
    (Reply, "stream"): {
        "description": "the adapter's chunks, logged verbatim (SPEC §10.3); null: the block-ends and finish of text and toolCalls",
        "items": {"type": "object", "required": ["type"]},
    },
    (Inject, "source"): {"description": "the injected message's source; null: the harness's default {kind: plugin, plugin: ''}"},
    (Inject, "meta"): {"description": "the message's meta; null: none"},
}
_SCALARS: dict[object, str] = {str: "string", bool: "boolean", int: "integer", FrozenMap: "object", object: "object"}
SCHEMA_PATH = resources.files("prefix_model") / "spec" / "schema" / "vector.schema.json"
VECTORS_MD_PATH = resources.files("prefix_model") / "spec" / "vectors.md"
# The line before spec/vectors.md's table of actions; the table ends at the first blank line.
TABLE_MARK = "<!-- actions: generated from the action dataclasses (python -m prefix_model.edge.vectors.spec_texts) -->\n"
_EXAMPLE = re.compile(r"(<!-- worked-example: ([\w/.-]+) -->\n```json\n)(.*?)(```)", re.DOTALL)  # a case's id, then its text


def _type(hint: object) -> Schema:
    """The schema of a value of type ``hint`` (not None)."""
    if hint in REFS:
        return {"$ref": f"#/$defs/{REFS[hint]}"}
    if hint is int:
        return {"type": "integer", "minimum": 0}  # every integer of an action counts or indexes
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return {"type": "array", "items": _type(args[0])}
    if typing.get_origin(hint) is tuple:
        return {"type": "array", "prefixItems": [_type(a) for a in args], "minItems": len(args), "maxItems": len(args), "items": False}
    raise TypeError(f"no schema for {hint!r}: give it a definition in REFS")


def _field(hint: object) -> Schema:
    """The schema of a field of type ``hint``: ``X | None`` admits null (a typed value: in its type list)."""
    if not (isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union):
        return _type(hint)
    [arm] = [a for a in typing.get_args(hint) if a is not type(None)]
    inner = _type(arm)
    if "type" in inner and "prefixItems" not in inner:
        # a nullable integer (ForkDrive's boundary) is written without the bound: the schema as first published
        return {"type": [inner["type"], "null"], **{k: v for k, v in inner.items() if k not in ("type", "minimum")}}
    return {"oneOf": [{"type": "null"}, inner]}


def _action(cls: type) -> Schema:
    """One action's definition: its tag and every field, required unless sparse, nothing else."""
    hints = typing.get_type_hints(cls)
    properties: Schema = {"action": {"const": cls.__name__}}
    required = ["action"]
    for f in dataclasses.fields(cls):
        extra = _EXTRA.get((cls, f.name), {})
        described = {k: v for k, v in extra.items() if k == "description"}
        properties[camel(f.name)] = described | _field(hints[f.name]) | {k: v for k, v in extra.items() if k != "description"}
        if (cls, f.name) not in SPARSE:
            required.append(camel(f.name))
    return {"type": "object", "required": sorted(required), "properties": properties, "additionalProperties": False}


def action_defs() -> dict[str, Schema]:
    """Return the schema's ``action`` definition (one of every action) and each action's own, generated."""
    defs: dict[str, Schema] = {
        "action": {
            "description": "One action of the loop's alphabet (model/prefix_model/loop/actions.py), every field written.",
            "oneOf": [{"$ref": f"#/$defs/action{cls.__name__}"} for cls in ACTION_TYPES],
        }
    }
    defs.update({f"action{cls.__name__}": _action(cls) for cls in ACTION_TYPES})
    return defs


def schema_text(text: str) -> str:
    """Return the schema ``text`` with its action definitions the generated ones: each in its place, a new one last, a gone one dropped."""
    schema = json.loads(text)
    generated = action_defs()
    kept = {name: generated.pop(name, value) for name, value in schema["$defs"].items() if name in generated or not name.startswith("action")}
    schema["$defs"] = kept | generated
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def action_table() -> str:
    """Return spec/vectors.md's table of actions: per action its fields (``?``: may be absent) and its docstring's first paragraph.

    Raises TypeError for an action with no docstring.
    """
    rows = ["| action | fields | what the implementation does (SPEC §10) |", "|---|---|---|"]
    for cls in ACTION_TYPES:
        fields = ", ".join(camel(f.name) + ("?" if (cls, f.name) in SPARSE else "") for f in dataclasses.fields(cls))
        doc = cls.__doc__ or ""
        if not doc or doc.startswith(f"{cls.__name__}("):  # dataclass writes the signature where a class has no docstring
            raise TypeError(f"action {cls.__name__} has no docstring to say what it does")
        does = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()).replace("``", "`")
        rows.append(f"| `{cls.__name__}` | `{fields}` | {does} |")
    return "\n".join(rows) + "\n"


def transcript_text(block: str) -> str:
    """Return the transcript ``block`` (``> `` request and ``< `` answer lines) with every answer the model's adapter's to its requests."""
    sent = [line[2:] for line in block.splitlines() if line.startswith("> ")]
    out = io.StringIO()
    serve(io.StringIO("".join(line + "\n" for line in sent)), out)
    answers = out.getvalue().splitlines()
    return "".join(f"> {request}\n< {answer}\n" for request, answer in zip(sent, answers))


def vectors_md_text(text: str) -> str:
    """Return spec/vectors.md's ``text`` with its table of actions, its protocol transcript and its worked examples the generated ones."""
    start = text.index(TABLE_MARK) + len(TABLE_MARK)
    end = text.index("\n\n", start) + 1
    text = text[:start] + action_table() + text[end:]
    start = text.index(TRANSCRIPT_MARK) + len(TRANSCRIPT_MARK)
    end = text.index("```", start)
    text = text[:start] + transcript_text(text[start:end]) + text[end:]
    return _EXAMPLE.sub(lambda m: m.group(1) + example_text(m.group(2)) + m.group(4), text)


_DESCRIPTION = """\
Write the spec's texts that the model generates (in a source checkout):
  spec/schema/vector.schema.json  the action definitions ($defs "action" and "action<Name>"),
                                  from the action dataclasses (vectors.codec.ACTION_TYPES)
  spec/vectors.md                 the table of actions, the protocol transcript's answers (the
                                  model's adapter's) and the worked examples (the generated case
                                  each mark names)
Everything else in both files is kept as written. Run it after changing an action, the adapter,
or a case a worked example shows; tests/edge/test_spec_texts.py fails until the files are current."""


def main(argv: list[str] | None = None) -> int:
    """Rewrite the committed schema and spec/vectors.md with their generated texts; ``--check``: exit 1 naming those that differ."""
    parser = argparse.ArgumentParser(
        prog="python -m prefix_model.edge.vectors.spec_texts",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit status: 0 when written or already current; 1 with --check when a file differs",
    )
    parser.add_argument("--check", action="store_true", help="write nothing: name each file whose generated text differs, exit 1 if one does")
    check = parser.parse_args(argv).check
    stale = False
    for source, generated in ((SCHEMA_PATH, schema_text), (VECTORS_MD_PATH, vectors_md_text)):
        path = Path(str(source))
        text = path.read_text(encoding="utf-8")
        new = generated(text)
        stale = stale or new != text
        if new != text and not check:
            path.write_text(new, encoding="utf-8")
        print(f"{path}: {'unchanged' if new == text else 'differs' if check else 'rewritten'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
