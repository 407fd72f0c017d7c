"""Small, realistic faults in when or how the prefix is composed, ordered or kept, each served over the adapter protocol.

``python tests/adapters/planted_adapter.py NAME`` serves the model with fault NAME planted; the
ones listed in ``FOUND_BY_A_CAMPAIGN`` pass every published vector but the cases a campaign found for
them and the project adopted (tests/edge/test_fuzz.py checks that), so, before those, only a generated
campaign found them:

- ``recompose-from-turn-4``: the cached prefix expires: from the fourth turn on every turn composes anew;
- ``scoped-first``: the waterfall calls the listeners scoped to the agent before the global ones;
- ``empty-not-cached``: an empty composition is not cached, so the next step composes again;
- ``tools-by-name``: the record rule compares tool lists by their names only;
- ``key-order-blind``: the record rule compares headers as values, key order ignored, where the harness compares
  their JSON text (a schema whose parameters list their keys in another order is no change to it);
- ``model-ignored``: the record rule compares request configs without their model;
- ``duplicates-dropped``: a composition that contributes the same message twice sends it once;
- ``fork-reuses-logged``: a fork's new instance takes the prefix of the seed's last header instead of composing;
- ``resume-reuses-logged``: a resumed instance takes the prefix of the log's last header instead of composing;
- ``anchor-skipped-when-unchanged``: a resumed or forked instance logs no anchor when its header equals the log's
  folded one (a plain restart: same agent, options, system, tools and prefix);
- ``disposed-takes-inputs``: an input to a disposed instance (inject, steer, cancel, dispose, a system or tool
  change) is taken and dropped instead of refused; only a campaign's hostile steps (FUZZ-10) send one.

``last-message-dropped`` drops the last message of every request it sends, whatever put it there: the steer of a
steered step and a composing listener's inject go missing alike (how a signature tells them apart, FUZZ-8).

``later-step-or-fork-not-sent`` sends no request from a step after a turn's first, nor from a fork's child: two
causes behind one signature (``Dispatch: replies differ at /sent``), which a campaign must report apart (FUZZ-3).

``own-layout`` is no fault of the requests: it answers each reply's events of a session in reverse
order, a log layout that differs by design, and ``own-layout+NAME`` does so with fault NAME planted
(what ``fuzz --compare requests`` must see through, and still find).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

from prefix_model.core.headers import EpochHeader, fold_request_header, header_equals, header_to_json
from prefix_model.core.json_values import FrozenMap, JsonValue
from prefix_model.core.log import Log
from prefix_model.edge.runner.server import Failed, Server, serve
from prefix_model.loop.semantics import Durable, Semantics
from prefix_model.loop.world import Instance, Listener, Prepend, ShortCircuit


class RecomposeFromTurn4(Semantics):
    def recompose(self, instance: Instance) -> bool:
        return instance.turn >= 4 and instance.step == 1


class RecomposeFromTurn6(Semantics):
    def recompose(self, instance: Instance) -> bool:
        return instance.turn >= 6 and instance.step == 1


class ShortCircuitIgnored(Semantics):
    def listener_order(self, listeners: tuple[Listener, ...]) -> tuple[Listener, ...]:
        return tuple(replace(x, script=tuple(Prepend(c.messages) if isinstance(c, ShortCircuit) else c for c in x.script)) for x in listeners)


class DuplicatesDropped(Semantics):
    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        kept: list[JsonValue] = []
        for message in product:
            if message not in kept:
                kept.append(message)
        return (), tuple(kept)


class ScopedFirst(Semantics):
    def listener_order(self, listeners: tuple[Listener, ...]) -> tuple[Listener, ...]:
        return tuple(x for x in listeners if x.agent is not None) + tuple(x for x in listeners if x.agent is None)


class EmptyNotCached(Semantics):
    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        return (), (product if product else None)  # type: ignore[return-value]  # None: nothing cached, the fault


def _tool_names(tools: tuple[JsonValue, ...] | None) -> list[str]:
    return sorted(str(t.get("name")) for t in tools or () if isinstance(t, FrozenMap))


class ToolsByName(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        folded = fold_request_header(log.events)
        if logged and folded is not None and replace(folded, tools=header.tools) == header and _tool_names(folded.tools) == _tool_names(header.tools):
            return log, None
        return super().record(log, logged, header)


class KeyOrderBlind(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        folded = fold_request_header(log.events)
        if logged and folded is not None and header_to_json(folded) == header_to_json(header):  # a FrozenMap's == ignores order
            return log, None
        return super().record(log, logged, header)


class ModelIgnored(Semantics):
    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        folded = fold_request_header(log.events)
        if logged and folded is not None and header_equals(replace(folded, config=replace(folded.config, model=header.config.model)), header):
            return log, None
        return super().record(log, logged, header)


class AnchorSkippedWhenUnchanged(Semantics):
    """A new instance logs no anchor when its header equals the one its log folds to (a plain restart)."""

    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        if not logged and fold_request_header(log.events) == header:
            return log, None
        return super().record(log, logged, header)


class ReusesLogged(Server):
    """After ``action``, the new instance holds its log's last logged prefix as if it had composed it."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action = action

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        action = params.get("action") if method == "apply" else None
        if isinstance(action, dict) and action.get("action") == self.action:
            world = self.adapter.world
            instance = world.instances[-1]
            folded = fold_request_header(world.log_of(instance.id).events)
            if folded is not None and folded.message_prefix is not None:
                self.adapter.world = world.with_instance(replace(instance, prefix=folded.message_prefix))
        return result


class OwnLayout(Server):
    """The model's requests, its events laid out its own way: each reply's events of a session in reverse order."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        if method == "apply":
            result = result | {"appended": {session: events[::-1] for session, events in result["appended"].items()}}
        return result
class LastMessageDropped(Server):
    """Every request sent without its last message."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        if method == "apply":
            sent = [r | {"request": r["request"] | {"messages": r["request"]["messages"][:-1]}} for r in result["sent"]]
            result = result | {"sent": sent}
        return result


class LaterStepOrForkNotSent(Server):
    """Two faults behind one signature: no request is sent from a step after a turn's first, nor from a fork's child."""

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = super().handle(method, params)
        action = params.get("action") if method == "apply" else None
        if isinstance(action, dict) and action.get("action") == "Dispatch" and result["sent"]:
            world = self.adapter.world
            instance = world.instance(action["instance"])
            if instance.step > 1 or world.session(instance.session_id).lineage is not None:
                result = result | {"sent": []}
        return result


class DisposedTakesInputs(Server):
    """An input to a disposed instance answered as applied, appending nothing, where the model refuses it (LOOP-6)."""

    INPUTS = frozenset({"Inject", "Steer", "Cancel", "Dispose", "SetSystem", "SetTools"})

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().handle(method, params)
        except Failed as failed:
            action = params.get("action") if method == "apply" else None
            instances = self.adapter.world.instances
            if failed.error["code"] != "refused" or not isinstance(action, dict) or action.get("action") not in self.INPUTS:
                raise
            target = action.get("instance")
            if not isinstance(target, int) or not 0 <= target < len(instances) or not instances[target].disposed:
                raise
            return {"appended": {}, "sent": []}


SEMANTICS: dict[str, Semantics] = {
    "recompose-from-turn-4": RecomposeFromTurn4(),
    "recompose-from-turn-6": RecomposeFromTurn6(),
    "short-circuit-ignored": ShortCircuitIgnored(),
    "duplicates-dropped": DuplicatesDropped(),
    "scoped-first": ScopedFirst(),
    "empty-not-cached": EmptyNotCached(),
    "tools-by-name": ToolsByName(),
    "key-order-blind": KeyOrderBlind(),
    "model-ignored": ModelIgnored(),
    "anchor-skipped-when-unchanged": AnchorSkippedWhenUnchanged(),
}
SERVERS = {"fork-reuses-logged": "ForkDrive", "resume-reuses-logged": "Resume"}
PLANTED = (*SEMANTICS, *SERVERS, "disposed-takes-inputs")
# Each fault a campaign found where every vector passed, with the found cases since adopted that it fails (the others
# fail some hand-written vector).
_KEY_ORDER = "fuzz/parameters-in-another-key-order-are-a-tool-change"
FOUND_BY_A_CAMPAIGN: dict[str, tuple[str, ...]] = {
    "tools-by-name": (_KEY_ORDER,),
    "key-order-blind": (_KEY_ORDER,),
    "model-ignored": ("fuzz/a-model-change-alone-is-a-change",),
    "duplicates-dropped": (),
    "disposed-takes-inputs": (),
}


def server(name: str) -> Server:
    """The model's server with fault ``name`` planted."""
    if name.startswith("own-layout"):
        planted = name.removeprefix("own-layout").removeprefix("+")
        return OwnLayout(SEMANTICS[planted], name) if planted else OwnLayout(name=name)
    if name == "disposed-takes-inputs":
        return DisposedTakesInputs()
    if name == "last-message-dropped":
        return LastMessageDropped(name=name)
    if name == "later-step-or-fork-not-sent":
        return LaterStepOrForkNotSent(name=name)
    return ReusesLogged(SERVERS[name]) if name in SERVERS else Server(SEMANTICS[name], name)


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout, server(sys.argv[1])))
