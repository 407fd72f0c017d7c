"""Spec §14.1 — the designs under review, each a small override of the harness's ``Semantics``.

The baseline is the session prefix of a55f148516. Then the seed note's six rejected alternatives
(a)-(f), the design that replaced the prefix upstream (PR #585, and as refined by PR #742/#978),
and the patterns of other harnesses (facts: ``reference/successor.md``). Where a design can be
built more than one way, the docstring of its class says which reading this is and why: always
the one closest to its source's own words. Durable copies are one ``user/message`` per opener
message, so the request-only property (PFX-1) recognises them as the opener.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.events import USER_MESSAGE
from prefix_model.core.headers import EpochHeader
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze_object, json_text
from prefix_model.core.log import Log
from prefix_model.core.requests import Request
from prefix_model.loop.meter import Measurement, surface_tokens
from prefix_model.loop.semantics import HARNESS, Durable, Semantics
from prefix_model.loop.variants import (
    ComposePerRequest,
    ComposePerTurn,
    PrefixAfterHistory,
    PrefixInSystem,
    PrefixNotLogged,
    system_with,
)
from prefix_model.loop.world import Instance

__all__ = ["Design", "DESIGNS", "design_named", "opener_on_surface", "OPENER_KIND"]

OPENER_KIND = "skill-catalog"  # the source kind every durable design below writes its opener under (#742's)


@dataclass(frozen=True, slots=True)
class Design:
    """A design under review: a short key, where it comes from, and the semantics that run it."""

    key: str
    source: str
    summary: str
    semantics: Semantics


def _copies(product: tuple[JsonValue, ...], form: str) -> tuple[Durable, ...]:
    """Each opener message as a durable sourced ``user/message`` (``{content, source}``, L/agent.ts:300-306);
    the source numbers the messages of one publication, so a reader can tell where a list starts."""
    messages = [m for m in product if isinstance(m, FrozenMap)]
    return tuple(
        (USER_MESSAGE, freeze_object({"content": m.get("content"), "source": {"kind": OPENER_KIND, "form": form, "index": n}}))
        for n, m in enumerate(messages)
    )


def _opener_events(log: Log) -> tuple[tuple[FrozenMap, JsonValue], ...]:
    """The opener messages still on the visible surface, oldest first: (source, content)."""
    found = []
    for seq in log.surface.nodes:
        event = log.events[seq]
        source = event.field("source")
        if event.type == USER_MESSAGE and isinstance(source, FrozenMap) and source.get("kind") == OPENER_KIND:
            found.append((source, event.field("content")))
    return tuple(found)


def opener_on_surface(log: Log) -> tuple[FrozenMap, ...]:
    """Return the opener messages still on the visible surface, oldest first, as ``{role, content}``."""
    return tuple(freeze_object({"role": "user", "content": content}) for _, content in _opener_events(log) if content)


def _latest_catalog(log: Log) -> tuple[str, ...] | None:
    """The last full list (catalog, replacement or tombstone) still on the surface, as content texts; None if none is."""
    latest: list[str] | None = None
    for source, content in _opener_events(log):
        if source.get("form") != "diff" and source.get("index") == 0:
            latest = []
        if latest is not None and content:
            latest.append(json_text(content))
    return None if latest is None else tuple(latest)


class PerRequestBeforeSlot(ComposePerRequest):
    """(a), the before slot: the waterfall fires on every request and its frozen *before* messages go
    ahead of the history, logged as ``messagePrefix`` — a drift writes a full change header. The
    note's proposal put session-stable content in this slot, so this is where the opener rides."""


class PerRequestAfterSlot(PrefixAfterHistory):
    """(a), the after slot: the waterfall fires on every request and its messages go *behind* the
    history. The header of a55f148516 has no after slot, so the messages are not logged here
    (REC-1 fails by construction); the design is in the review for its cache cost, which the note
    argues from."""

    def recompose(self, instance: Instance) -> bool:
        return True


class SystemSectionPerStep(PrefixInSystem):
    """(b): ``system-prompt/assemble`` renders the opener's text into the system string, re-assembled
    at every step (the note: "deliberately re-assembled per step, with a full changed header when it
    changes"); logged as the header's ``system``."""

    def recompose(self, instance: Instance) -> bool:
        return True


class DurableOpener(Semantics):
    """(c): ``inject()`` at session start: the first composition a session's log has no opener for
    writes it as durable history; nothing rides the request. A resume or fork finds the copy already
    there and writes nothing (the note: "stale across resumes"); compaction may summarise it."""

    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        published = any(isinstance(s := e.field("source"), FrozenMap) and s.get("kind") == OPENER_KIND for e in log.events if e.type == USER_MESSAGE)
        return (() if published else _copies(product, "catalog")), ()


class PrefixThroughPreStep(Semantics):
    """(e): the prefix is handed to ``agent/pre-step`` so the compaction service prices pressure
    itself: the prefix and the surface, before routing — so without the routed system prompt and
    tools the note says this "still misses". The request itself is the baseline's."""

    def pressure(self, log: Log, measured: Measurement, prefix_price: int) -> int:
        return prefix_price + surface_tokens(log)


class SessionEvent(PrefixNotLogged):
    """(f): a dedicated session event carries the composed prefix (a log-only ``session/prefix``
    record, LOG-9) and the header does not; the request is sent as the baseline sends it. The
    reconstruction of a55f148516 reads the header only, so it cannot place the prefix: the second
    home the note rejects is a second rule every reader must learn."""

    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        return ((("session/prefix", freeze_object({"messagePrefix": product})),) if product else ()), product


class Successor585(Semantics):
    """#585 as merged (54c1d4ab9b): the contributors inject a durable sourced message at the first
    step of each session object (a WeakSet): every loop instance — a resume, a fork's driver —
    publishes once more, changed or not (be2b378929's skipped resume was fixed before the merge)."""

    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        return _copies(product, "catalog"), ()


class Successor742(Semantics):
    """#742/#978 (e28ca1241f, 1ce694e7b5): at every entering pre-step the catalog is read and
    compared with the last catalog still on the visible surface: none visible publishes it; a
    changed digest appends a full replacement (an empty one as a tombstone); the same, nothing.
    Earlier copies stay in the history (they are marked replaced, not removed)."""

    def recompose(self, instance: Instance) -> bool:
        return True

    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        visible = _latest_catalog(log)
        wanted = tuple(json_text(m.get("content")) for m in product if isinstance(m, FrozenMap))
        if visible is None:
            return (_copies(product, "catalog") if product else ()), ()
        if visible == wanted:
            return (), ()
        if not product:
            return ((USER_MESSAGE, freeze_object({"content": (), "source": {"kind": OPENER_KIND, "form": "tombstone", "index": 0}})),), ()
        return _copies(product, "replacement"), ()


class SystemRebuiltUnlogged(PrefixNotLogged):
    """opencode, Goose: the system prompt is rebuilt on every loop iteration with the skills and
    AGENTS.md in it, and nothing records what was rendered: the log's header keeps the assembled
    system without the opener while the wire carries it."""

    def recompose(self, instance: Instance) -> bool:
        return True

    def request(self, header: EpochHeader, prefix: tuple[JsonValue, ...], history: tuple[FrozenMap, ...], instance: Instance) -> Request:
        rendered = EpochHeader(header.config, system_with(header.system or "", prefix), header.tools, None)
        return Request(rendered, history, instance.session_id)


class RequestOnlyUnlogged(PrefixNotLogged):
    """Aider (``format_chat_chunks``), LangGraph (``prompt`` / ``pre_model_hook``): the opener is
    rebuilt on every call, sent in front of the history, never kept in the chat history nor logged."""

    def recompose(self, instance: Instance) -> bool:
        return True


class DurableFragments(Semantics):
    """Codex: the opener lives in durable history fragments; at each turn the current world state is
    compared with the fragments in the history, and only what differs is appended (a diff), or all
    of it when none is visible. This reading checks at a turn's first step, as Codex builds its turn
    context; added entries are its diff (the scenario never removes one)."""

    def recompose(self, instance: Instance) -> bool:
        return instance.step == 1

    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        visible = {json_text(m.get("content")) for m in opener_on_surface(log)}
        missing = tuple(m for m in product if isinstance(m, FrozenMap) and json_text(m.get("content")) not in visible)
        return _copies(missing, "diff" if visible else "catalog"), ()


def _named(semantics: Semantics, key: str) -> Semantics:
    semantics.name = key
    return semantics


DESIGNS: tuple[Design, ...] = tuple(
    Design(key, source, summary, HARNESS if semantics is HARNESS else _named(semantics, key))
    for key, source, summary, semantics in (
        ("session-prefix", "a55f148516", "composed once per instance, request-only, logged on the header", HARNESS),
        ("a-before-slot", "note alt. (a)", "composed per request, in front, logged", PerRequestBeforeSlot()),
        ("a-after-slot", "note alt. (a)", "composed per request, behind the history", PerRequestAfterSlot()),
        ("b-system-section", "note alt. (b)", "rendered into the system prompt every step, logged", SystemSectionPerStep()),
        ("c-durable-opener", "note alt. (c)", "injected once as durable history at session start", DurableOpener()),
        ("d-compose-per-turn", "note alt. (d)", "composed at each turn's first step, logged", ComposePerTurn()),
        ("e-through-pre-step", "note alt. (e)", "the prefix handed to pre-step for provisional pressure", PrefixThroughPreStep()),
        ("f-session-event", "note alt. (f)", "a dedicated session event records the prefix", SessionEvent()),
        ("successor-585", "PR #585", "durable inject at each session object's first step", Successor585()),
        ("successor-742", "PR #742/#978", "digest each pre-step; full replacement or tombstone on change", Successor742()),
        ("opencode-goose", "opencode, Goose", "system prompt rebuilt every iteration, unlogged", SystemRebuiltUnlogged()),
        ("aider-langgraph", "Aider, LangGraph", "request-only, rebuilt every call, unlogged", RequestOnlyUnlogged()),
        ("codex-fragments", "Codex CLI", "durable fragments, diffs appended when the list changes", DurableFragments()),
    )
)


def design_named(key: str) -> Design:
    """Return the design whose key is ``key``."""
    return next(d for d in DESIGNS if d.key == key)

