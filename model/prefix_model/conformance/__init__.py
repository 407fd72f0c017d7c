"""Conformance checking (spec §9): the fast engine, findings, and the ``check`` command's run."""
