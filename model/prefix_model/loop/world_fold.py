"""The conformance fold (§9) over each session of a world, as the properties REC-1..3, PFX-6, CMP-1 and HDR-15 read it.

The machines check every property after every action, over worlds that share almost all of their
events and requests with the world before: the fold's inputs are converted once per object, a
session whose log and requests did not change is not folded again, and a world's fold goes on
from its predecessor's. Caches only: what ``world_findings`` returns is what one pass of the fold
over each session finds (``session_fold(..., resume=False)``; the machine's teardown and the
properties' tests compare them).
"""

from __future__ import annotations

from prefix_model.conformance.findings import Finding
from prefix_model.conformance.captured import Captured, captured_request
from prefix_model.conformance.fold import LogChecker
from prefix_model.formats.plain import PlainEvent, from_event
from prefix_model.core.contracts import ENABLED
from prefix_model.core.events import Event
from prefix_model.core.requests import request_to_json
from prefix_model.loop.memo import Memo
from prefix_model.loop.world import SentRequest, Session, World

__all__ = ["world_findings", "session_fold"]

_plain: Memo[PlainEvent] = Memo(200_000)
_captured: Memo[Captured] = Memo(200_000)
_session_folds: Memo[tuple[Finding, ...]] = Memo(64)
_world_folds: Memo[tuple[tuple[str, Finding], ...]] = Memo(1)  # the last world folded
# Per session, seed and log length (keyed by the log's last event): the fold of that log, unfinished, with the events and
# requests it read. A world's fold goes on from its predecessor's: each event is folded once per branch, not once per world.
_unfinished: Memo[tuple[tuple[Event, ...], tuple[Captured, ...], LogChecker]] = Memo(4096)


# no contract: a cache of what one pass of the fold finds over each session, which session_fold's callers compare
def world_findings(world: World) -> tuple[tuple[str, Finding], ...]:
    """Return what the conformance fold finds over each session's log and the loop requests it sent, with the session's id."""
    return _world_folds.of(world, _findings_of)


def _findings_of(world: World) -> tuple[tuple[str, Finding], ...]:
    return tuple((session.id, finding) for session in world.sessions for finding in _session_findings(world, session))


def _plain_of(event: Event) -> PlainEvent:
    return _plain.of(event, from_event)


def _captured_of(index: int, sent: SentRequest) -> Captured:
    return _captured.get((sent,), lambda: captured_request(index, request_to_json(sent.request), sent.turn, sent.step), tag=index)


def _session_findings(world: World, session: Session) -> tuple[Finding, ...]:
    """Return what the fold finds over ``session``'s log and the loop requests its instances sent."""
    events, sent = session.log.events, _sent_by(world, session)
    # A fork's child at its parent's end holds its parent's very events tuple, so the session is in the key (with the
    # same events object, a session's seed is the same too: only a slice of the whole tuple is that tuple).
    return _session_folds.get((events, *sent), lambda: session_fold(world, session, resume=_RESUME), tag=session.id)


# Going on from a kept fold costs two copies of the fold's state per world. It pays where the fold's contracts make a
# pass dear (contracts on, the test suite: the loop machine's ci run 106 -> 57 s), not where they are off (the
# explorer's deep bound, one process: 116.3 s without, 129.3 s with; a BFS layer evicts its worlds' parents).
_RESUME = ENABLED


def _sent_by(world: World, session: Session) -> tuple[SentRequest, ...]:
    return tuple(r for r in world.requests if r.loop_request and r.session_id == session.id)


# no contract: its findings are those of one pass of the fold (resume=False), which the machine's teardown and the tests compare
def session_fold(world: World, session: Session, resume: bool = True) -> tuple[Finding, ...]:
    """Return what the conformance fold finds over ``session``'s log and the loop requests its instances sent.

    ``resume``: go on from a kept unfinished fold of a world before whose log and requests this
    session's extend (``LogChecker.fork``: each event is folded once per branch of a run, not
    once per world), and keep this one; else fold the whole log afresh and keep nothing. Both find
    the same (the machine's teardown and the properties' tests compare them).
    """
    events, sent = session.log.events, _sent_by(world, session)
    seed = session.lineage.seed_length if session.lineage is not None else 0
    captured = [_captured_of(k, r) for k, r in enumerate(sent)]
    resumed = _resumed(session.id, seed, events, captured) if resume else None
    checker, start = resumed if resumed is not None else (LogChecker(session.id, captured, seed_length=seed), 0)
    for n in range(start, len(events)):
        checker.feed(n + 1, _plain_of(events[n]))
    finishing = checker.fork(captured) if resume else None
    if finishing is None:
        finishing = checker  # not to be gone on from, or it cannot be: finish it, keep nothing
    elif events:
        _unfinished.put((events[-1],), (events, tuple(captured), checker), tag=(session.id, seed, len(events)))
    finishing.finish()
    return tuple(finishing.findings)


def _resumed(session: str, seed: int, events: tuple[Event, ...], captured: list[Captured]) -> tuple[LogChecker, int] | None:
    """Return a copy of the longest kept unfinished fold of a prefix of ``events`` over a prefix of ``captured``, and its length."""
    for length in range(len(events), 0, -1):
        kept = _unfinished.find((events[length - 1],), tag=(session, seed, length))
        if kept is None:
            continue
        folded, read, checker = kept
        if all(a is b for a, b in zip(folded, events)) and len(read) <= len(captured) and all(a is b for a, b in zip(read, captured)):
            copy = checker.fork(captured)
            if copy is not None:
                return copy, length
    return None
