"""``prefix-model adapter``: the model itself behind the adapter protocol, on standard input and output.

It serves the reference consumer's ``ModelAdapter``, ``ModelChecker`` and ``ModelReader``
(runner/consumer.py), so ``conform`` against it runs exactly what ``consume`` runs in process.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import IO, Any

from prefix_model import __version__
from prefix_model.edge.runner.protocol import KINDS, PROTOCOL_VERSION, PROVIDERS
from prefix_model.vectors.codec import ACTION_TYPES, CodecError
from prefix_model.edge.runner.consumer import ActionRefused, ModelAdapter, ModelChecker, ModelReader, Unreadable
from prefix_model.loop.semantics import HARNESS, Semantics

__all__ = ["Failed", "Server", "serve"]


class Failed(Exception):
    """A request the adapter answers with a protocol error ``{code, message, ...}``."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message} | extra


class Server:
    """One adapter session: the model's world between ``reset``s, and what it has shown so far."""

    def __init__(self, semantics: Semantics = HARNESS, name: str | None = None) -> None:
        self.adapter, self.checker, self.reader = ModelAdapter(semantics), ModelChecker(), ModelReader()
        # A faulty design served for a campaign or a conform run names itself, so no report mistakes it for the model.
        self.name = f"session-prefix-model {__version__}" if name is None else f"session-prefix-model {__version__} (design {name})"
        self._shown: dict[str, int] = {}
        self._sent = 0

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Return the result of one request; raise ``Failed`` with the protocol error."""
        match method:
            case "hello":
                if params.get("protocol") != PROTOCOL_VERSION:
                    raise Failed("unsupported-protocol", f"this adapter speaks protocol {PROTOCOL_VERSION}")
                actions = [cls.__name__ for cls in ACTION_TYPES]
                return {"protocol": PROTOCOL_VERSION, "implementation": self.name, "kinds": list(KINDS), "actions": actions, "providers": list(PROVIDERS)}
            case "reset":
                self.adapter.reset()
                self._shown, self._sent = {}, 0
                return {}
            case "apply":
                return self._apply(params.get("action"))
            case "read":
                return self._read(params.get("file"))
            case "shutdown":
                return {}
            case "check":
                return {"findings": sorted(self.checker.check(params["session"], params["log"], params.get("capture")))}
        raise Failed("unknown-method", f"no method {method!r}")

    def _apply(self, action: object) -> dict[str, Any]:
        if not isinstance(action, dict):
            raise Failed("bad-params", "apply needs an action object")
        try:
            self.adapter.apply(action)
        except ActionRefused as refused:
            raise Failed("refused", str(refused)) from None
        except CodecError as error:
            raise Failed("bad-action", str(error)) from None
        appended = {}
        for session, events in self.adapter.logs().items():
            start = self._shown.get(session)
            if start is None or len(events) > start:  # a new session shows even while it is empty
                appended[session] = events[start or 0 :]
            self._shown[session] = len(events)
        requests = self.adapter.requests()
        sent, self._sent = requests[self._sent :], len(requests)
        return {"appended": appended, "sent": sent}

    def _read(self, encoded: object) -> dict[str, Any]:
        try:
            data = base64.b64decode(str(encoded), validate=True)
        except (binascii.Error, ValueError):
            raise Failed("bad-params", "read needs the file's bytes as base64") from None
        try:
            read = self.reader.read(data)
        except Unreadable as error:
            raise Failed("unreadable", str(error), rule=error.rule) from None
        return {"events": read.events, "tornTail": read.torn_tail}


def serve(stdin: IO[str], stdout: IO[str], server: Server | None = None) -> int:
    """Answer requests line by line until ``shutdown`` or end of input; return the exit status."""
    server = Server() if server is None else server
    for line in stdin:
        try:
            message = json.loads(line)
            ident, method, params = message["id"], message["method"], message.get("params", {})
        except (ValueError, KeyError, TypeError):
            print(json.dumps({"id": None, "error": {"code": "bad-request", "message": "not a request line"}}), file=stdout, flush=True)
            continue
        try:
            response: dict[str, Any] = {"id": ident, "result": server.handle(method, params)}
        except Failed as failed:
            response = {"id": ident, "error": failed.error}
        except (KeyError, TypeError) as error:
            response = {"id": ident, "error": {"code": "bad-params", "message": f"{method}: {error}"}}
        print(json.dumps(response, ensure_ascii=False, separators=(",", ":")), file=stdout, flush=True)
        if method == "shutdown":
            return 0
    return 0
