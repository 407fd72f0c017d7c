"""Conformance over a process boundary (spec/vectors.md §10): the adapter protocol, the model serving it, and ``conform``."""
