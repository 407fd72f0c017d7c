"""The review's comparison, computed once per test process (it runs every design on the scenario, with shrinking)."""

from __future__ import annotations

from functools import cache

from prefix_model.review.compare import Row, compare


@cache
def rows() -> tuple[Row, ...]:
    """Return ``compare()`` as the command computes it by default."""
    return compare()


def row(key: str) -> Row:
    """Return the row of the design ``key``."""
    return next(r for r in rows() if r.design.key == key)
