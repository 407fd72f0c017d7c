"""A deliberately broken adapter for tests/edge/test_conform.py: the model's, with planted faults.

- events: every ``user/message`` loses its ``meta`` (the cases with a sourced, meta'd message fail);
- ``SetTools`` crashes the process (after a line on stderr), the steer "steer during tools" hangs, ``Dispose`` answers garbage;
- ``hello`` does not offer ``MountCompaction`` (its cases are not applicable);
- ``read`` never reports a torn tail.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from prefix_model.edge.runner.server import Server, serve


class Broken(Server):
    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        action = params.get("action") if method == "apply" else None
        name = action.get("action") if isinstance(action, dict) else None
        if name == "SetTools":
            print("broken adapter: SetTools is not implemented", file=sys.stderr, flush=True)
            sys.exit(3)
        if name == "Steer" and action is not None and action.get("text") == "steer during tools":
            time.sleep(3600)
        if name == "Dispose":
            print("this is not JSON", flush=True)
        result = super().handle(method, params)
        if method == "hello":
            result["actions"] = [a for a in result["actions"] if a != "MountCompaction"]
        if method == "apply":
            for events in result["appended"].values():
                for event in events:
                    if event["type"] == "user/message":
                        event["data"].pop("meta", None)
        if method == "read":
            result["tornTail"] = None
        return result


def main() -> int:
    return serve(sys.stdin, sys.stdout, Broken())


if __name__ == "__main__":
    sys.exit(main())
