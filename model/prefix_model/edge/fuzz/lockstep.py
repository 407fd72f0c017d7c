"""One script in lockstep: every action applied to the model and to the implementation, replies compared as JSON text.

A reply is what the adapter protocol's ``apply`` answers — the events appended per session and the
requests sent — or ``None`` for ``refused``. The model's replies come from the very server that
``prefix-model adapter`` runs, in process; the implementation's over the protocol. The first
action whose replies differ stops the script: a refusal against an application either way, or the
first place (a JSON Pointer into the reply) where the two replies' JSON texts differ. The refusal's
message is the implementation's own and is not compared.

Two oracles: ``all`` compares whole replies; ``requests`` (declared, weaker) compares only the
requests sent and the refusals, for an implementation whose log layout differs by design (one that
composes inside the step logs ``step/start`` before the composition's events): what reaches the
provider, and what is refused, is still judged.

A divergence's *signature* groups it and is what a shrink keeps, so it names the cause and not only
the place: the action, the kind of difference, the pointer with its indices, session ids and call
ids wildcarded, and the *cause* (``cause``) — at an array, its first differing member named by its
kind (an event's type, a message's role, "a request", "nothing" where one side has none); at an
object, the field one side lacks; inside one event, that event's type. ``Dispatch: replies differ
at /appended/* (expected turn/end, got request/header)`` and ``... (expected request/header, got
nothing)`` are two causes that one pointer used to merge, so a shrink could drift from one to the
other. A request's message also names where the model's side has it from (``message_sources``):
a steer and an inject are both a ``user`` message on the wire, a ``steering/message`` and a
``user/message`` in the model's log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prefix_model.core.contracts import Rejection
from prefix_model.core.derive import derive_event_message
from prefix_model.core.json_values import freeze
from prefix_model.core.requests import boundary_log, find_step
from prefix_model.edge.fuzz.grammar import out_of_domain
from prefix_model.edge.runner.client import AdapterError, AdapterProcess
from prefix_model.edge.runner.server import Failed, Server
from prefix_model.vectors.codec import action_from_json
from prefix_model.edge.runner.consumer import JsonObject, first_difference, plain_text, pointer
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.world import SentRequest, World

__all__ = [
    "Answer", "REFUSED_BY_IMPLEMENTATION", "ACCEPTED_BY_IMPLEMENTATION", "DIFFERS", "ERROR", "COMPARES", "Difference", "OutOfDomain",
    "PREFIX", "Sources", "cause", "message_sources", "request_sources", "reply_difference", "model_replies", "lockstep",
]  # fmt: skip

Answer = JsonObject | None  # None: the action was refused
Sources = Callable[[int], Sequence[str] | None]  # the model's source of each message of its reply's request k, if it can tell
PREFIX = "prefix"  # the source of a message the composition put in a request (its prefix), not the log's history

# The kinds of difference (a divergence's signature starts with its kind).
REFUSED_BY_IMPLEMENTATION = "refused by the implementation, applied by the model"
ACCEPTED_BY_IMPLEMENTATION = "applied by the implementation, refused by the model"
DIFFERS = "replies differ"
ERROR = "the implementation answered an error"

# The oracles: every reply whole, or only the requests sent and the refusals (for a log layout that differs by design).
COMPARES = ("all", "requests")


@dataclass(frozen=True, slots=True)
class Difference:
    """Where a script's replies first differ: the action's index and name, the kind, the pointer and both values, whole."""

    index: int
    action: str
    kind: str
    pointer: str = ""
    expected: Any = None
    actual: Any = None
    detail: str = ""
    cause: str = ""  # the first differing member by kind (``cause``): what, beside the pointer, the signature keeps

    @property
    def signature(self) -> str:
        """The difference with its indices, session ids and call ids wildcarded, and its cause: what groups and what a shrink keeps."""
        where = re.sub(r"/(\d+|s\d+|c\d+)(?=/|$)", "/*", self.pointer)
        return f"{self.action}: {self.kind}" + (f" at {where}" if where else "") + (f" ({self.cause})" if self.cause else "")

    def to_json(self) -> JsonObject:
        """Return the difference as JSON: every field, the values whole."""
        fields: JsonObject = {"index": self.index, "action": self.action, "kind": self.kind, "signature": self.signature}
        if self.kind == DIFFERS:
            fields |= {"pointer": self.pointer, "expected": self.expected, "actual": self.actual, "cause": self.cause}
        if self.detail:
            fields["detail"] = self.detail
        return fields

    def text(self) -> str:
        """Return the difference as lines a person reads."""
        head = f"action {self.index} ({self.action}): {self.kind}"
        if self.kind != DIFFERS:
            return head + (f": {self.detail}" if self.detail else "")
        because = f" ({self.cause})" if self.cause else ""
        return f"{head} at {self.pointer}{because}\n    expected {plain_text(self.expected)}\n    actual   {plain_text(self.actual)}"


class OutOfDomain(ValueError):
    """A script holding an action outside what a campaign draws (``grammar.out_of_domain``): no shrink keeps it."""


def model_replies(actions: Sequence[JsonObject], semantics: Semantics = HARNESS, domain: bool = True) -> list[Answer]:
    """Return the model's reply to each action of ``actions``, applied in order from nothing.

    :raises OutOfDomain: with ``domain``, an action is outside the campaign's domain where it is applied
    """
    server = Server(semantics)
    replies: list[Answer] = []
    for action in actions:
        why = out_of_domain(server.adapter.world, action_from_json(freeze(action))) if domain else None
        if why is not None:
            raise OutOfDomain(why)
        try:
            replies.append(server.handle("apply", {"action": action}))
        except Failed as failed:
            if failed.error["code"] != "refused":
                raise ValueError(f"the model cannot read a generated action: {failed}") from None
            replies.append(None)
    return replies


def _shown(reply: JsonObject) -> JsonObject:
    """A reply with the sessions that appended nothing left out: an adapter may list every session or only those that
    grew (the protocol allows both); which sessions exist is compared apart, as the sessions each side has shown."""
    appended = reply.get("appended")
    if not isinstance(appended, dict):
        return reply
    return reply | {"appended": {session: events for session, events in appended.items() if events != []}}


_MISSING = object()  # a member one side lacks


def _kind(value: object, request: bool = False) -> str:
    """What a member is, in a word a signature can keep: an event's type, a message's role, a request, or its JSON kind."""
    if value is _MISSING:
        return "nothing"
    if request:
        return "a request"
    if isinstance(value, dict):
        for key in ("type", "role"):
            if isinstance(value.get(key), str):
                return str(value[key])
        return "an object"
    if isinstance(value, list):  # a session's events: named by the first (a session that appended nothing is not shown)
        return _kind(value[0]) if value else "nothing"
    return "null" if value is None else {bool: "a boolean", str: "a string"}.get(type(value), "a number")


def _first_member(expected: object, actual: object) -> tuple[object, object, object] | None:
    """The first member where two collections of the same kind differ: its index or key, and both sides (``_MISSING`` on
    the side that lacks it)."""
    pairs: list[tuple[object, object, object]]
    if isinstance(expected, list) and isinstance(actual, list):
        pairs = [(i, expected[i] if i < len(expected) else _MISSING, actual[i] if i < len(actual) else _MISSING) for i in range(max(len(expected), len(actual)))]
    elif isinstance(expected, dict) and isinstance(actual, dict):
        pairs = [(k, expected.get(k, _MISSING), actual.get(k, _MISSING)) for k in [*expected, *(k for k in actual if k not in expected)]]
    else:
        return None
    return next(((k, t, h) for k, t, h in pairs if t is _MISSING or h is _MISSING or plain_text(t) != plain_text(h)), None)


def _fields(there: object, here: object) -> str:
    """Where two objects' fields differ: the first the implementation's lacks (``missing``) or adds (``extra``)."""
    if not (isinstance(there, dict) and isinstance(here, dict)):
        return ""
    missing, extra = [k for k in there if k not in here], [k for k in here if k not in there]
    return f'missing "{missing[0]}"' if missing else f'extra "{extra[0]}"' if extra else ""


def _member(there: object, here: object, request: bool = False, sources: Sequence[str] | None = None, fields: bool = True) -> str:
    """The cause at a value that is no event: at an object, the field one side lacks (without ``fields``, its first
    differing member, as at an array); at an array, its first differing member by kind on each side (``request``: the
    members are requests), the model's by its source where ``sources`` names it; at any other value, nothing."""
    if fields and isinstance(there, dict):
        return _fields(there, here)
    member = _first_member(there, here)
    if member is None:
        return ""
    key, want, got = member
    kinds = _kind(want, request), _kind(got, request)
    named = kinds[0] + (f" ({sources[key]})" if sources is not None and isinstance(key, int) and key < len(sources) and want is not _MISSING else "")
    return f"{named} differs" if kinds[0] == kinds[1] else f"expected {named}, got {kinds[1]}"


def _messages(path: Sequence[object]) -> bool:
    """Whether ``path`` is at or inside a sent request's messages (``/sent/k/request/messages...``)."""
    return len(path) >= 4 and path[0] == "sent" and tuple(path[2:4]) == ("request", "messages")


def cause(path: Sequence[object], expected: JsonObject, actual: JsonObject, there: object, here: object, sources: Sources | None = None) -> str:
    """The cause of a difference at ``path`` between two replies (``there`` and ``here`` the values at it), for its signature.

    Inside one appended event, that event's type (both types when they differ), and the field one side lacks; at an
    object, the field one side lacks (never a session id: at ``/appended``, the sessions' events are the members); at
    an array, the first member that differs, by kind on each side (the members of ``/sent`` are requests); at any other
    value, nothing beyond the pointer. At or inside request k's messages, where ``sources(k)`` gives the model's source
    of each of them (``message_sources``), the model's message is named by its source too: ``expected user
    (steering/message), got nothing``, ``in user (user/message): text differs``.
    """
    if len(path) >= 3 and path[0] == "appended":
        types = [_kind(reply["appended"][path[1]][path[2]]) for reply in (expected, actual)]
        if types[0] != types[1]:
            return f"expected {types[0]}, got {types[1]}"
        fields = _fields(there, here)
        return f"in {types[0]}" + (f": {fields}" if fields else "")
    named = sources(path[1]) if sources is not None and _messages(path) and isinstance(path[1], int) else None
    if named is not None and len(path) >= 5 and isinstance(path[4], int) and path[4] < len(named):
        inner = _member(there, here)  # inside one message: what differs there, as at any other value
        role = _kind(expected["sent"][path[1]]["request"]["messages"][path[4]])
        return f"in {role} ({named[path[4]]})" + (f": {inner}" if inner else "")
    if tuple(path) == ("appended",):  # its members are the sessions' events, never a session id
        return _member(there, here, fields=False)
    return _member(there, here, tuple(path) == ("sent",), named)


def request_sources(world: World, sent: SentRequest) -> tuple[str, ...] | None:
    """The model's source of each message of ``sent``, a request of ``world``: ``PREFIX`` for each of the composed
    prefix's, then, for each history message, the type of the event it projects from in the session's log before the
    step's ``step/start`` (the boundary, as ``reconstruct_request`` finds it); None where the model cannot tell (an
    auxiliary call, a request that is not that prefix and that history)."""
    if not sent.loop_request:
        return None
    log = world.session(sent.session_id).log
    span = find_step(log, sent.turn, sent.step)
    if isinstance(span, Rejection):
        return None
    boundary = boundary_log(log, span.start_seq)
    history = tuple(boundary.events[n].type for n in boundary.surface.nodes if derive_event_message(boundary.events[n]) is not None)
    sources = (PREFIX,) * len(sent.request.header.message_prefix or ()) + history
    return sources if len(sources) == len(sent.request.messages) else None


def message_sources(actions: Sequence[JsonObject], semantics: Semantics = HARNESS) -> Sources:
    """The model's source of each message of request k of its reply to the last of ``actions`` (``request_sources``): the
    model replayed over ``actions`` when asked, so a comparison that never reaches a request's messages costs nothing."""

    def sources(k: int) -> tuple[str, ...] | None:
        server, before = Server(semantics), 0
        for action in actions:
            before = len(server.adapter.world.requests)
            try:
                server.handle("apply", {"action": action})
            except Failed:
                continue  # refused: the world, and what it has sent, as it was
        world = server.adapter.world
        sent = world.requests[before:]
        return request_sources(world, sent[k]) if 0 <= k < len(sent) else None

    return sources


def _compared(reply: JsonObject, compare: str) -> JsonObject:
    """What the oracle compares of a reply: whole (its sessions that appended nothing left out), or only its requests."""
    return {"sent": reply.get("sent")} if compare == "requests" else _shown(reply)


def reply_difference(index: int, name: str, expected: Answer, actual: Answer, compare: str = "all", sources: Sources | None = None) -> Difference | None:
    """The difference between the model's reply ``expected`` and the implementation's ``actual`` to action ``index``
    (``name``), by the oracle ``compare``, its cause naming the model's messages by ``sources`` (``cause``); None when
    the oracle sees none."""
    if expected is None or actual is None:
        if (expected is None) == (actual is None):
            return None
        return Difference(index, name, REFUSED_BY_IMPLEMENTATION if actual is None else ACCEPTED_BY_IMPLEMENTATION)
    expected, actual = _compared(expected, compare), _compared(actual, compare)
    if plain_text(expected) == plain_text(actual):
        return None
    path, there, here = first_difference(expected, actual)
    return Difference(index, name, DIFFERS, pointer(path), there, here, cause=cause(path, expected, actual, there, here, sources))


def lockstep(adapter: AdapterProcess, actions: Sequence[JsonObject], expected: Sequence[Answer], compare: str = "all") -> Difference | None:
    """Reset the implementation, apply ``actions`` one by one and return the first difference from ``expected``, by the
    oracle ``compare`` (one of ``COMPARES``).

    :raises AdapterFailure: the adapter crashed, hung or broke the protocol (a fault, not a divergence)
    """
    adapter.call("reset", {})
    sessions: tuple[set[str], set[str]] = (set(), set())  # every session each side has shown so far
    for index, (action, want) in enumerate(zip(actions, expected)):
        name = str(action.get("action"))
        try:
            got: Answer = adapter.call("apply", {"action": action})
        except AdapterError as remote:
            if remote.error.get("code") != "refused":
                return Difference(index, name, ERROR, detail=f"{remote.error.get('code')}: {remote.error.get('message')}")
            got = None
        difference = reply_difference(index, name, want, got, compare, message_sources(actions[: index + 1]))
        if difference is not None:
            return difference
        if compare == "requests":
            continue  # which sessions appended is the log's business, which this oracle leaves alone
        for seen, reply in zip(sessions, (want, got)):
            seen.update(reply.get("appended", {}) if reply is not None else ())
        if sessions[0] != sessions[1]:
            shown = "the sessions shown so far differ"
            return Difference(index, name, DIFFERS, "/appended", sorted(sessions[0]), sorted(sessions[1]), shown, cause="sessions shown")
    return None
