"""An adapter that speaks the protocol and offers nothing: no kind of case, no action (tests/edge/test_fuzz.py).

A run against it tests nothing, and ``conform`` and ``fuzz`` must say so (exit 2), never pass.
"""

from __future__ import annotations

import sys
from typing import Any

from prefix_model.edge.runner.server import Server, serve


class Empty(Server):
    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        return result | {"kinds": [], "actions": []} if method == "hello" else result


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout, Empty()))
