"""Planted bug: ``check_event`` checks that seq is contiguous but not that it is a safe integer.

Core kernel: ``events.check_event`` (an envelope over ``Event``; its ``data`` is built by the
plugin's FrozenMap factory or CrossHair's ``object`` factory). Expected refutation: LOG-2.
"""

from __future__ import annotations

from prefix_model.core.contracts import Rejection
from prefix_model.core.events import Event, is_safe_seq
from prefix_model.core.events import check_event as core_check_event

from proofs.bugs_detected import under_contracts_of

CAUGHT_BY = "LOG-2"


@under_contracts_of(core_check_event)
def check_event(event: Event, expected_seq: int) -> Rejection | None:
    """BUG: a negative ``expected_seq`` equal to ``event.seq`` passes the LOG-2 check."""
    if event.seq != expected_seq:
        return Rejection("LOG-2", f"seq {event.seq} is not contiguous; expected {expected_seq}")
    if not is_safe_seq(event.time):
        return Rejection("LOG-3", f"time {event.time!r} is not a non-negative safe integer")
    return None
