"""Conformance vectors at the edge: writing the catalogue of ``prefix_model.vectors`` out (spec/vectors.md).

Consuming them, in process or over the adapter protocol, is ``edge/runner/``'s.

- ``generate`` writes ``DIR/<case-id>/case.json`` and ``DIR/manifest.json`` after the coverage audit
  (``prefix-model vectors --out DIR``)
- ``bundle`` what makes DIR stand alone: its README (from ``README.bundle.md``), the specification
  and its schemas under ``DIR/spec/``, and the reproducible tarball (``--bundle``)
- ``spec_texts`` rewrites the spec's generated texts: the schema's action definitions, and spec/vectors.md's table
  of actions, protocol transcript and worked examples, from the action dataclasses, the model's adapter and the
  cases (``python -m prefix_model.edge.vectors.spec_texts [--check]``)
"""
