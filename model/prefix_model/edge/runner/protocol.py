"""The adapter protocol (spec/vectors.md §10): JSON lines between ``conform`` and an implementation's adapter.

``conform`` writes one request per line, ``{"id", "method", "params"}``, and reads one response
per line, ``{"id", "result"}`` or ``{"id", "error": {"code", "message", ...}}``. The methods are
``hello`` (versions and capabilities), ``reset``, ``apply`` (one action: the events it appended
and the requests it sent, or the error ``refused``), ``read`` (a log file's bytes: its events and
torn tail, or the error ``unreadable`` naming the rule), ``check`` (a log and capture: the rules
it breaks) and ``shutdown``. Every message has its schema in spec/schema/adapter-protocol.schema.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PROTOCOL_VERSION", "METHODS", "KINDS", "PROVIDERS", "ProtocolError", "request", "result_of", "routes"]

PROTOCOL_VERSION = 1
METHODS = ("hello", "reset", "apply", "read", "check", "shutdown")
KINDS = ("scenario", "log", "file")  # the three kinds of vector case (spec/vectors.md §2)
# The scripted fake provider's routes (spec/vectors.md §5): every adapter routes the first; a hello that lists the second
# in ``providers`` routes it too, and a campaign then draws changes of provider (a record rule blind to it shows).
PROVIDERS = ("mock", "mock-b")


def routes(hello: Mapping[str, Any]) -> tuple[str, ...]:
    """The scripted fake's routes an adapter's ``hello`` result lists: the first always, the others where listed."""
    listed = hello.get("providers")
    return tuple(p for p in PROVIDERS if p == PROVIDERS[0] or (isinstance(listed, list) and p in listed))


class ProtocolError(Exception):
    """A response that breaks the protocol: not JSON, not an object, the wrong id, neither result nor error."""


def request(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Return the request message ``ident`` calling ``method``."""
    return {"id": ident, "method": method, "params": params}


def result_of(message: object, ident: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Return (result, error) of response ``message`` to request ``ident``; raise ``ProtocolError`` for a malformed one."""
    if not isinstance(message, dict):
        raise ProtocolError("a response is a JSON object")
    if message.get("id") != ident:
        raise ProtocolError(f"response id {message.get('id')!r} answers no pending request (expected {ident})")
    result, error = message.get("result"), message.get("error")
    if (result is None) == (error is None):
        raise ProtocolError("a response has exactly one of result and error")
    if error is not None and not (isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)):
        raise ProtocolError("an error is an object with a string code and message")
    if result is not None and not isinstance(result, dict):
        raise ProtocolError("a result is a JSON object")
    return result, error
