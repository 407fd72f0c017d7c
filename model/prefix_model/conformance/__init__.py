"""Conformance checking (spec §14): the fast engine, findings, and the ``check`` command's run."""
