"""One script in lockstep: every action applied to the model and to the implementation, replies compared as JSON text.

A reply is what the adapter protocol's ``apply`` answers — the events appended per session and the
requests sent — or ``None`` for ``refused``. The model's replies come from the very server that
``prefix-model adapter`` runs, in process; the implementation's over the protocol. The first
action whose replies differ stops the script: a refusal against an application either way, or the
first place (a JSON Pointer into the reply) where the two replies' JSON texts differ. The refusal's
message is the implementation's own and is not compared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefix_model.core.json_values import freeze
from prefix_model.edge.fuzz.grammar import out_of_domain
from prefix_model.edge.runner.client import AdapterError, AdapterProcess
from prefix_model.edge.runner.server import Failed, Server
from prefix_model.vectors.codec import action_from_json
from prefix_model.edge.runner.consumer import JsonObject, first_difference, plain_text, pointer
from prefix_model.loop.semantics import HARNESS, Semantics

__all__ = ["Answer", "REFUSED_BY_IMPLEMENTATION", "ACCEPTED_BY_IMPLEMENTATION", "DIFFERS", "ERROR", "Difference", "OutOfDomain", "model_replies", "lockstep"]

Answer = JsonObject | None  # None: the action was refused

# The kinds of difference (a divergence's signature starts with its kind).
REFUSED_BY_IMPLEMENTATION = "refused by the implementation, applied by the model"
ACCEPTED_BY_IMPLEMENTATION = "applied by the implementation, refused by the model"
DIFFERS = "replies differ"
ERROR = "the implementation answered an error"


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

    @property
    def signature(self) -> str:
        """The difference with its indices, session ids and call ids wildcarded: what groups and what a shrink keeps."""
        where = re.sub(r"/(\d+|s\d+|c\d+)(?=/|$)", "/*", self.pointer)
        return f"{self.action}: {self.kind}" + (f" at {where}" if where else "")

    def to_json(self) -> JsonObject:
        """Return the difference as JSON: every field, the values whole."""
        fields: JsonObject = {"index": self.index, "action": self.action, "kind": self.kind, "signature": self.signature}
        if self.kind == DIFFERS:
            fields |= {"pointer": self.pointer, "expected": self.expected, "actual": self.actual}
        if self.detail:
            fields["detail"] = self.detail
        return fields

    def text(self) -> str:
        """Return the difference as lines a person reads."""
        head = f"action {self.index} ({self.action}): {self.kind}"
        if self.kind != DIFFERS:
            return head + (f": {self.detail}" if self.detail else "")
        return f"{head} at {self.pointer}\n    expected {plain_text(self.expected)}\n    actual   {plain_text(self.actual)}"


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


def _compare(index: int, name: str, expected: Answer, actual: Answer) -> Difference | None:
    if expected is None or actual is None:
        if (expected is None) == (actual is None):
            return None
        return Difference(index, name, REFUSED_BY_IMPLEMENTATION if actual is None else ACCEPTED_BY_IMPLEMENTATION)
    expected, actual = _shown(expected), _shown(actual)
    if plain_text(expected) == plain_text(actual):
        return None
    path, there, here = first_difference(expected, actual)
    return Difference(index, name, DIFFERS, pointer(path), there, here)


def lockstep(adapter: AdapterProcess, actions: Sequence[JsonObject], expected: Sequence[Answer]) -> Difference | None:
    """Reset the implementation, apply ``actions`` one by one and return the first difference from ``expected``.

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
        difference = _compare(index, name, want, got)
        if difference is not None:
            return difference
        for seen, reply in zip(sessions, (want, got)):
            seen.update(reply.get("appended", {}) if reply is not None else ())
        if sessions[0] != sessions[1]:
            return Difference(index, name, DIFFERS, "/appended", sorted(sessions[0]), sorted(sessions[1]), "the sessions shown so far differ")
    return None
