"""Spec §4 — ``derive_messages``: the model-visible history, projected from the surface.

Each surface node projects to at most one message (harness deriveEventMessage,
S/index.ts:550-590); ``derive_messages`` walks the surface in order (S/index.ts:488-534). Only
the four surface-eligible types project, so a ``request/header`` — the session prefix's only
durable home — can never reach the derived history (DER-5, DER-8).
"""

from __future__ import annotations

from typing import Any, Protocol, overload

from prefix_model.core.contracts import ENABLED, Rejection, ensure
from prefix_model.core.events import (
    ASSISTANT_MESSAGE,
    STEERING_MESSAGE,
    TOOL_RESULT,
    USER_MESSAGE,
    Event,
    is_surface_type,
)
from prefix_model.core.json_values import FrozenMap
from prefix_model.core.log import Log
from prefix_model.core.surface import fold_surface

__all__ = ["Message", "PlainForm", "derive_event_message", "derive_messages"]

Message = FrozenMap


class PlainForm(Protocol):
    """An event whose data is plain JSON (dicts, lists): the conformance fold's ``PlainEvent``."""

    @property
    def type(self) -> str: ...

    def field(self, name: str) -> Any: ...


@overload
def derive_event_message(event: Event) -> Message | None: ...
@overload
def derive_event_message(event: PlainForm) -> dict[str, object] | None: ...
@ensure(
    lambda event, result: result is None or is_surface_type(event.type),
    "DER-5: only a surface-eligible event projects to a message",
    enabled=ENABLED,
)
def derive_event_message(event: Event | PlainForm) -> Message | dict[str, object] | None:
    """Return the message one history node projects to, or ``None`` (DER-2, DER-3, DER-4, DER-5).

    One statement for both forms of an event: a spec ``Event`` projects to a frozen message, the
    conformance fold's plain event (``PlainForm``) to the same message as plain values, so the fold
    derives without freezing each node and the rule is written once.
    """
    frozen, kind = isinstance(event, Event), event.type
    fields: dict[str, Any]
    if kind == USER_MESSAGE or kind == STEERING_MESSAGE:
        fields = {"role": "user", "content": event.field("content")}
    elif kind == ASSISTANT_MESSAGE:
        content = event.field("content")
        if content == () or content == []:  # the empty array, frozen or plain
            return None
        fields = {"role": "assistant", "content": content, "provenance": event.field("provenance")}
    elif kind == TOOL_RESULT:
        block = {"type": "tool-result", "toolCallId": event.field("callId"), "content": event.field("content"), "isError": event.field("isError")}
        fields = {"role": "user", "content": (FrozenMap(block),) if frozen else [block]}
    else:
        return None
    return FrozenMap(fields) if frozen else fields  # the object in the event's own form


def _replayed(log: Log) -> tuple[Message, ...]:
    """Return the derivation of a fresh surface replay of ``log.events`` (the relational oracle)."""
    surface = fold_surface(log.events)
    if isinstance(surface, Rejection):
        return ()  # only a log not built by append or seed_log gets here
    return tuple(m for m in (derive_event_message(log.events[n]) for n in surface.nodes) if m is not None)


@ensure(
    lambda log, result: all(log.events[n].type != "request/header" for n in log.surface.nodes),
    "DER-8: no header event (the prefix's home) is ever a history node",
    enabled=ENABLED,
)
@ensure(lambda log, result: len(result) <= len(log.surface.nodes), "DER-1: at most one message per surface node", enabled=ENABLED)
@ensure(lambda log, result: result == _replayed(log), "SURF-10/DER-7: derivation is a pure function of the events", enabled=ENABLED)
def derive_messages(log: Log) -> tuple[Message, ...]:
    """Return the history messages of ``log``: each current surface node projected, in order (DER-1, DER-6)."""
    projected = (derive_event_message(log.events[seq]) for seq in log.surface.nodes)
    return tuple(message for message in projected if message is not None)
