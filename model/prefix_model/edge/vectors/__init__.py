"""Conformance vectors: language-neutral, deterministic cases generated from the model (spec/vectors.md).

- ``codec`` (pure) actions and worlds as JSON, and the one text layout every vector file uses
- ``cases`` (pure) the case catalogue: scenarios (action scripts) run by the model, and logs and
  captures a conforming checker must accept or reject, each with the requirement IDs it exercises
- ``generate`` (edge) writes ``DIR/<case-id>/case.json`` and ``DIR/manifest.json`` after the
  coverage audit (``prefix-model vectors --out DIR``)
- ``bundle`` (edge) what makes DIR stand alone: its README (from ``README.bundle.md``), the
  specification and its schemas under ``DIR/spec/``, and the reproducible tarball (``--bundle``)
- ``consumer`` (edge) the reference consumer: the adapter protocol another implementation
  mirrors, the model's own adapter and checker, ``replay`` and ``consume``
"""

FORMAT_VERSION = 3
# Where a vectors directory keeps its schemas, relative to the directory: a file's ``schema`` member
# names a file the directory holds (the package's own spec/schema/, copied), not a URL.
SCHEMA_BASE = "spec/schema/"
VECTOR_SCHEMA = SCHEMA_BASE + "vector.schema.json"
MANIFEST_SCHEMA = SCHEMA_BASE + "manifest.schema.json"

__all__ = ["FORMAT_VERSION", "SCHEMA_BASE", "VECTOR_SCHEMA", "MANIFEST_SCHEMA"]
