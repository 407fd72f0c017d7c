"""The ``prefix-model`` command as installed: the contract switch set for production, then the CLI.

In production the model's contracts are off (``PREFIX_MODEL_CONTRACTS=0``) unless the
environment asks for them: the screens' contracts re-run the spec's path on every line and event
(a check of 10^4 events took 9.9 s with them, 0.7 s without). ``python -m prefix_model.edge.cli``,
what the tests run, keeps them on.
"""

from __future__ import annotations

import gc
import os

__all__ = ["main"]


def main() -> int:
    """Run ``prefix-model`` with contracts off unless ``PREFIX_MODEL_CONTRACTS`` says otherwise."""
    os.environ.setdefault("PREFIX_MODEL_CONTRACTS", "0")  # read once, when the core is first imported (below)
    # Importing makes many objects and no garbage: the cycle collector only costs time there (3 % of check's start-up).
    # What it made lives as long as the process, so it is frozen (moved out of every generation): the
    # first collection after the import, and the ones at exit, would otherwise walk it all again for
    # nothing (23 M of check --example's 307 M instructions).
    gc.disable()
    try:
        from prefix_model.edge.cli import main as run
    finally:
        gc.freeze()
        gc.enable()
    return run()
