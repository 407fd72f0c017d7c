"""Spec §14 — when a check or a replay judged nothing, or judged what it must not: the rules that say so.

A checker that read no event, or none of whose captured requests could be compared, has not
shown conformance (CHK-1); neither has one that had to guess which session a log is. A replay of
a vector through an implementation must see logs and requests only grow (LOG-4, LOOP-2) and each
refused action refused (LOOP-1). Each rule is worded here once; the checker and the reference
consumer at the edge report the rejection they are handed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prefix_model.core.contracts import Rejection

__all__ = ["MAX_UNREAD_RUN", "unread_run", "contradicting_session", "no_event", "ambiguous_session", "nothing_checked", "vacuous_verdict", "not_grown", "applied_though_refused"]


def contradicting_session(given: str, named: str) -> Rejection:
    """``--session`` names another session than the log's own header."""
    return Rejection("CHK-1", f"--session {given} contradicts the session its header names ({named})")


MAX_UNREAD_RUN = 1000  # lines in a row that are no event, past which the rest is not read as a log (CHK-4)


def unread_run(count: int) -> Rejection:
    """So many lines in a row were no event that what follows is not read as a log: bounded time and findings."""
    return Rejection("CHK-4", f"{count} lines in a row are no event: the rest of the file is not read as a log")


def no_event() -> Rejection:
    return Rejection("CHK-1", "no event to check")


def ambiguous_session(sessions: Sequence[str], log: str) -> Rejection:
    """The log names no session and the capture holds several: which is the log's, only the user knows."""
    return Rejection("CHK-1", f"holds the requests of sessions {', '.join(sorted(sessions))}, and {log} names no session "
                              "(the in-memory form): say which is the log's with --session")  # fmt: skip


def nothing_checked(total: int, auxiliary: int, other_session: int, unmatched: int, session: str | None, sessions: Sequence[str]) -> Rejection:
    """A capture none of whose requests could be compared with the log."""
    of = f"; the capture's are of session(s) {', '.join(sorted(sessions))}" if other_session else ""
    return Rejection("CHK-1", f"none of its {total} requests could be checked against the log ({auxiliary} auxiliary, "
                              f"{other_session} of other sessions than {session}, {unmatched} matched to no step{of})")  # fmt: skip


def vacuous_verdict() -> Rejection:
    """The rule a reader of a check's outcome names when the check was unusable rather than a verdict."""
    return Rejection("CHK-1", "the check judged nothing")


def not_grown(before: Mapping[str, Sequence[object]], after: Mapping[str, Sequence[object]], requests: tuple[Sequence[object], Sequence[object]]) -> Rejection | None:
    """Return why the logs (per session) and the requests ``after`` an action are not those ``before`` it, extended."""
    for session, events in before.items():
        now = after.get(session)
        if now is None or list(now[: len(events)]) != list(events):
            return Rejection("LOG-4", f"session {session}'s log changed an earlier event or lost one (logs only grow)")
    old, new = requests
    if list(new[: len(old)]) != list(old):
        return Rejection("LOOP-2", "a request already sent changed or disappeared")
    return None


def applied_though_refused(index: int, name: object) -> Rejection:
    """An action the vector lists as refused (its guard does not hold) that the implementation applied."""
    return Rejection("LOOP-1", f"action {index} ({name}) must be refused (its guard does not hold) but was applied")
