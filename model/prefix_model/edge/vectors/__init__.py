"""Conformance vectors: language-neutral, deterministic cases generated from the model (spec/vectors.md).

- ``codec`` (pure) actions and worlds as JSON, and the one text layout every vector file uses
- ``cases`` (pure) the case catalogue: scenarios (action scripts) run by the model, and logs and
  captures a conforming checker must accept or reject, each with the requirement IDs it exercises
- ``generate`` (edge) writes ``DIR/<case-id>/case.json`` and ``DIR/manifest.json`` after the
  coverage audit (``prefix-model vectors --out DIR``)
- ``consumer`` (edge) the reference consumer: the adapter protocol another implementation
  mirrors, the model's own adapter and checker, ``replay`` and ``consume``
"""

FORMAT_VERSION = 3
SCHEMA_BASE = "https://github.com/session-prefix-model/spec/schema/"
VECTOR_SCHEMA = SCHEMA_BASE + "vector.schema.json"
MANIFEST_SCHEMA = SCHEMA_BASE + "manifest.schema.json"

__all__ = ["FORMAT_VERSION", "SCHEMA_BASE", "VECTOR_SCHEMA", "MANIFEST_SCHEMA"]
