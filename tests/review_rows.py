"""The review's comparison, computed once per test process (it runs every design on the scenario, with shrinking).

It is computed in a child process with the contracts off, as the installed command computes it,
and handed back pickled: with the contracts on, the 13 designs' runs and their shrinking took
about 80 CPU s per test process against 6 s off, and the loop's contracts are checked on those
same transitions by the loop's own tests (tests/loop). What the review derives from the rows —
the tables, claims and counterexample replays — still runs here, with the contracts on.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from functools import cache

from prefix_model.review.compare import Row

from tests.conftest import HANG

_COMPUTE = "import pickle, sys; from prefix_model.review.compare import compare; sys.stdout.buffer.write(pickle.dumps(compare()))"


@cache
def rows() -> tuple[Row, ...]:
    """Return ``compare()`` as the command computes it by default (contracts off)."""
    env = os.environ | {"PREFIX_MODEL_CONTRACTS": "0"}
    done = subprocess.run([sys.executable, "-c", _COMPUTE], env=env, capture_output=True, timeout=HANG, check=True)
    computed = pickle.loads(done.stdout)
    assert isinstance(computed, tuple) and all(isinstance(r, Row) for r in computed)
    return computed


def row(key: str) -> Row:
    """Return the row of the design ``key``."""
    return next(r for r in rows() if r.design.key == key)
