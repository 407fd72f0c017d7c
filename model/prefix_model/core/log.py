"""Spec §2 — the append-only session log: ``append`` returns a new log, and seq = index.

A ``Log`` is a tuple of events plus its surface, folded as events arrive so that derivation
never replays the whole log (the surface is a function of the events: SURF-10). A log is built
only by ``append`` (harness Session.append, S/index.ts:410-461) or ``seed_log`` (the Session
constructor over a seed or a loaded log, S/index.ts:321-352); both run every rule of §2 and §3.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prefix_model.core.contracts import ENABLED, RejectedError, Rejection, ensure, require
from prefix_model.core.events import Event, SurfaceOp
from prefix_model.core.headers import check_header_event
from prefix_model.core.json_values import freeze
from prefix_model.core.surface import (
    EMPTY_SURFACE,
    Surface,
    apply_surface_event,
    check_surface_event,
    check_surface_event_at,
    fold_surface,
)

__all__ = ["Log", "EMPTY_LOG", "check_append", "append_event", "seed_log"]


@dataclass(frozen=True, slots=True)
class Log:
    """An immutable session log; ``surface`` is derived from ``events`` and ignored by ``==``."""

    events: tuple[Event, ...] = ()
    surface: Surface = field(default=EMPTY_SURFACE, compare=False)

    def __post_init__(self) -> None:
        # What append and seed_log accept, so that no function over a Log restates it as a
        # precondition; O(n), so only while contracts are on.
        if ENABLED and fold_surface(self.events) != self.surface:
            raise ValueError("SURF-10: a log's surface must be the fold of its events")
        if ENABLED and any(check_header_event(e) is not None for e in self.events):
            raise ValueError("HDR-1/HDR-2: a log's request/header events must have the header shape and a valid config")

    @property
    def seq(self) -> int:
        """Return the seq the next appended event gets: the log's length (LOG-2)."""
        return len(self.events)

    @ensure(
        lambda self, type, result: result.events[:-1] == self.events and result.events[-1].type == type,
        "LOG-4: append adds one event and changes no earlier one",
        enabled=ENABLED,
    )
    def append(
        self,
        type: str,
        data: object,
        *,
        time: int = 0,
        surface_op: SurfaceOp | None = None,
        source_event_seqs: tuple[int, ...] | None = None,
    ) -> Log:
        """Return this log with a new event.

        :raises RejectedError: naming the rule the new event breaks (the log is unchanged)
        """
        sources = None if source_event_seqs is None else tuple(source_event_seqs)  # detach (JSON-6)
        event = Event(type, self.seq, time, freeze(data), surface_op, sources)
        rejection = check_append(self, event)
        if rejection is not None:
            raise RejectedError(rejection)
        return append_event(self, event)


EMPTY_LOG = Log()


@ensure(
    lambda log, event, result: result is not None or event.seq == log.seq,
    "LOG-2: an accepted event's seq is the log's length",
    enabled=ENABLED,
)
def check_append(log: Log, event: Event) -> Rejection | None:
    """Return the first rule that appending ``event`` to ``log`` breaks, if any (LOG-*, SURF-*, HDR-*)."""
    return check_surface_event(log.surface, event, log.events) or check_header_event(event)


@require(lambda log, event: check_append(log, event) is None, "LOG-10: only an event that passes every rule is appended", enabled=ENABLED)
@ensure(lambda log, result: result.events[: len(log.events)] == log.events, "LOG-4: append never changes earlier events", enabled=ENABLED)
@ensure(lambda log, event, result: result.events[-1] is event and event.seq == len(log.events), "LOG-2: the new event's seq is the old length", enabled=ENABLED)
def append_event(log: Log, event: Event) -> Log:
    """Return ``log`` extended by ``event``, with the surface folded one step."""
    # By induction the new log keeps Log's invariant: ``log`` holds it, ``event`` passed every rule
    # (LOG-10) and the surface is folded by exactly that event, so the O(n) re-check in
    # ``__post_init__`` is skipped here; appending stays O(1) in the log's length.
    extended = object.__new__(Log)
    object.__setattr__(extended, "events", log.events + (event,))
    object.__setattr__(extended, "surface", apply_surface_event(log.surface, event))
    return extended


@ensure(
    lambda events, result: isinstance(result, Rejection) or (result.events == events and result.surface == fold_surface(events)),
    "LOG-12/SURF-10: a seeded log holds the seed and its replayed surface",
    enabled=ENABLED,
)
def seed_log(events: tuple[Event, ...]) -> Log | Rejection:
    """Return the log of a seed (a fork slice or a loaded log), or the first rule an event breaks.

    Spec: every rule of §2 and §3 applies to seeds exactly as to appends (LOG-12).
    """
    surface = EMPTY_SURFACE
    for index, event in enumerate(events):
        rejection = check_surface_event_at(surface, event, events, index) or check_header_event(event)
        if rejection is not None:
            return Rejection(rejection.rule, rejection.reason, index)
        surface = apply_surface_event(surface, event)
    # Built once: a tuple copy per event would make seeding quadratic (toolchain.md §3).
    return Log(events, surface)
