"""Spec §5.3 — when a header is written: ``record_request_header`` (harness L/request-log.ts:44-55).

Each loop instance writes one anchor snapshot with its first request, unconditionally: reason
``initial`` when the log holds no header yet, else ``resume`` (HDR-9). After that it writes a
``change`` snapshot exactly when the request's header differs from the LOG's fold — not from its
own memory (HDR-10, HDR-11). The instance's state is the boolean ``logged_by_this_instance``,
which is ``True`` after any call.
"""

from __future__ import annotations

from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.events import REQUEST_HEADER, Event, is_safe_seq
from prefix_model.core.headers import (
    CHANGE,
    INITIAL,
    RESUME,
    EpochHeader,
    canonical_header,
    fold_request_header,
    header_equals,
    header_to_json,
    is_canonical_header,
    is_json_header,
    is_valid_config,
)
from prefix_model.core.json_values import FrozenMap, JsonValue
from prefix_model.core.log import Log, append_event, check_append

__all__ = ["header_event", "record_request_header", "expected_reason"]


@require(lambda header: is_valid_config(header.config), "HDR-2: a snapshot has a valid config", enabled=ENABLED)
@ensure(
    lambda log, result: result.type == REQUEST_HEADER and result.seq == log.seq,
    "LOG-2: the snapshot is the log's next event",
    enabled=ENABLED,
)
def header_event(log: Log, header: EpochHeader, reason: str, time: int = 0) -> Event:
    """Return the ``request/header`` event that would be appended to ``log`` next."""
    data: dict[str, JsonValue] = {"header": header_to_json(header), "reason": reason}
    return Event(REQUEST_HEADER, log.seq, time, FrozenMap(data))


@require(
    lambda log, logged_by_this_instance: not logged_by_this_instance or fold_request_header(log.events) is not None,
    "HDR-10: an instance that logged a header has a header in the log's fold",
    enabled=ENABLED,
)
@require(lambda header: is_json_header(header), "JSON-1: a header's tools and prefix are JSON values", enabled=ENABLED)
@ensure(
    lambda logged_by_this_instance, result: logged_by_this_instance or result == INITIAL or result == RESUME,
    "HDR-9: an instance's first record always writes an anchor",
    enabled=ENABLED,
)
def expected_reason(log: Log, logged_by_this_instance: bool, header: EpochHeader) -> str | None:
    """Return the reason of the snapshot the record rule writes, or ``None`` when it writes none."""
    baseline = fold_request_header(log.events)
    if not logged_by_this_instance:
        return INITIAL if baseline is None else RESUME
    assert baseline is not None
    return None if header_equals(baseline, header) else CHANGE


def _wrote(log: Log, result: Log, reason: str | None) -> bool:
    """Return whether ``result`` is ``log`` plus one snapshot of ``reason`` (or unchanged for ``None``)."""
    if reason is None:
        return result == log
    added = result.events[len(log.events) :]
    return len(added) == 1 and added[0].type == REQUEST_HEADER and added[0].field("reason") == reason


@require(
    lambda log, logged_by_this_instance: not logged_by_this_instance or fold_request_header(log.events) is not None,
    "HDR-10: an instance that logged a header has a header in the log's fold",
    enabled=ENABLED,
)
@require(lambda header: is_canonical_header(header), "HDR-12: the loop records canonical headers", enabled=ENABLED)
@require(lambda header: is_valid_config(header.config), "HDR-2: the loop records a valid config", enabled=ENABLED)
@require(lambda header: is_json_header(header), "JSON-1: the loop records tools and a prefix of JSON values", enabled=ENABLED)
@require(lambda time: is_safe_seq(time), "LOG-3: a snapshot's time is a non-negative safe integer", enabled=ENABLED)
@ensure(
    lambda log, logged_by_this_instance, header, result: _wrote(log, result, expected_reason(log, logged_by_this_instance, header)),
    "HDR-9/HDR-10: anchor once per instance (initial iff no header yet, else resume); later, change iff the fold differs",
    enabled=ENABLED,
)
@ensure(
    lambda header, result: header_equals(fold_request_header(result.events) or header, header)
    and fold_request_header(result.events) is not None,
    "HDR-11: after recording, the log's fold equals the request's header",
    enabled=ENABLED,
)
def record_request_header(log: Log, logged_by_this_instance: bool, header: EpochHeader, time: int = 0) -> Log:
    """Return ``log`` after the record rule for one request built from ``header`` (HDR-9, HDR-10, HDR-11)."""
    reason = expected_reason(log, logged_by_this_instance, header)
    if reason is None:
        return log
    event = header_event(log, canonical_header(header), reason, time)
    assert check_append(log, event) is None
    return append_event(log, event)
