"""Spec §9 — when a check or a replay judged nothing, or judged what it must not: the rules that say so.

A checker that read no event, or none of whose captured requests could be compared, has not
shown conformance (CHK-1); neither has one that had to guess which session a log is. A replay of
a vector through an implementation must see logs and requests only grow (LOG-4, LOOP-2) and each
refused action refused (LOOP-1). Each rule is worded here once; the checker and the reference
consumer at the edge report the rejection they are handed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prefix_model.core.contracts import ENABLED, Rejection, ensure, require

__all__ = ["MAX_UNREAD_RUN", "unread_run", "contradicting_session", "no_event", "ambiguous_session", "nothing_checked", "not_grown", "applied_though_refused"]


@require(lambda given, named: given != named, "CHK-1: only a --session other than the header's contradicts it", enabled=ENABLED)
def contradicting_session(given: str, named: str) -> Rejection:
    """``--session`` names another session than the log's own header."""
    return Rejection("CHK-1", f"--session {given} contradicts the session its header names ({named})")


MAX_UNREAD_RUN = 1000  # lines in a row that are no event, past which the rest is not read as a log (CHK-4)


@require(lambda count: count >= MAX_UNREAD_RUN, "CHK-4: only a run of MAX_UNREAD_RUN lines or more ends the reading", enabled=ENABLED)
def unread_run(count: int) -> Rejection:
    """So many lines in a row were no event that what follows is not read as a log: bounded time and findings."""
    return Rejection("CHK-4", f"{count} lines in a row are no event: the rest of the file is not read as a log")


# no contract: no input; the rejection is CHK-1's wording, stated once here
def no_event() -> Rejection:
    return Rejection("CHK-1", "no event to check")


@require(lambda sessions: len(set(sessions)) >= 2, "CHK-1: a capture is ambiguous only when it holds several sessions", enabled=ENABLED)
def ambiguous_session(sessions: Sequence[str], log: str) -> Rejection:
    """The log names no session and the capture holds several: which is the log's, only the user knows."""
    return Rejection("CHK-1", f"holds the requests of sessions {', '.join(sorted(sessions))}, and {log} names no session "
                              "(the in-memory form): say which is the log's with --session")  # fmt: skip


@require(
    lambda total, auxiliary, other_session, unmatched: min(auxiliary, other_session, unmatched) >= 0 and auxiliary + other_session + unmatched <= total,
    "CHK-1: the requests not checked, by reason, are some of the capture's",
    enabled=ENABLED,
)
def nothing_checked(total: int, auxiliary: int, other_session: int, unmatched: int, session: str | None, sessions: Sequence[str]) -> Rejection:
    """A capture none of whose requests could be compared with the log."""
    of = f"; the capture's are of session(s) {', '.join(sorted(sessions))}" if other_session else ""
    return Rejection("CHK-1", f"none of its {total} requests could be checked against the log ({auxiliary} auxiliary, "
                              f"{other_session} of other sessions than {session}, {unmatched} matched to no step{of})")  # fmt: skip


def _grown(before: Mapping[str, Sequence[object]], after: Mapping[str, Sequence[object]], requests: tuple[Sequence[object], Sequence[object]], result: Rejection | None) -> bool:
    """A rejection names the first of LOG-4 (a session's log) and LOOP-2 (the requests) that a shrunk or changed sequence breaks."""
    shrunk = [s for s, events in before.items() if s not in after or len(after[s]) < len(events)]
    if shrunk:
        return result is not None and result.rule == "LOG-4"
    return len(requests[1]) >= len(requests[0]) or result is not None


@ensure(_grown, "LOG-4/LOOP-2: a session log lost (or shorter) is a LOG-4 rejection; fewer requests are a rejection", enabled=ENABLED)
@ensure(lambda result: result is None or result.rule in ("LOG-4", "LOOP-2"), "LOG-4/LOOP-2: the replay rejects only by the growth rules", enabled=ENABLED)
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


@require(lambda index: index >= 0, "LOOP-1: an action of the vector, counted from 0", enabled=ENABLED)
def applied_though_refused(index: int, name: object) -> Rejection:
    """An action the vector lists as refused (its guard does not hold) that the implementation applied."""
    return Rejection("LOOP-1", f"action {index} ({name}) must be refused (its guard does not hold) but was applied")
