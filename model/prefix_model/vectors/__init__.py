"""Conformance vectors: language-neutral, deterministic cases generated from the model (spec/vectors.md).

The content, pure: what a case is and what it expects. Writing them out and consuming them is the
edge's (``edge/vectors/``, ``edge/runner/``).

- ``codec`` actions and worlds as JSON, and the one text layout every vector file uses
- ``scenarios`` the action scripts the model runs, each with the requirement IDs it exercises
- ``adopted`` the scripts a campaign found and the project adopted (``adopted.json``, package data)
- ``persisted`` log files in the persisted form a conforming reader must read or reject
- ``cases`` the case catalogue: scenarios run by the model, and logs and captures a conforming
  checker must accept or reject, each with the requirement IDs it exercises
"""

FORMAT_VERSION = 3
# Where a vectors directory keeps its schemas, relative to the directory: a file's ``schema`` member
# names a file the directory holds (the package's own spec/schema/, copied), not a URL.
SCHEMA_BASE = "spec/schema/"
VECTOR_SCHEMA = SCHEMA_BASE + "vector.schema.json"
MANIFEST_SCHEMA = SCHEMA_BASE + "manifest.schema.json"

__all__ = ["FORMAT_VERSION", "SCHEMA_BASE", "VECTOR_SCHEMA", "MANIFEST_SCHEMA"]
