"""Spec §13 — the loop's design choices as one value, so rejected designs run as variants.

``HARNESS`` is the harness at a55f148516. Every other ``Semantics`` changes one choice, at the
one place in ``loop.py`` that reads it; ``variants.py`` names them. The loop reads nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Semantics", "HARNESS"]


@dataclass(frozen=True, slots=True)
class Semantics:
    """The loop's design choices; defaults are the harness's."""

    compose_scope: str = "instance"  # 'instance', or the rejected 'turn' / 'request'
    cache_interrupted: bool = False  # cache a composition that a cancel or dispose interrupted
    log_prefix: bool = True  # write messagePrefix on the header
    prefix_place: str = "front"  # 'front' (after the system slot), 'after-history', or 'system'
    prefix_as_history: bool = False  # append the composed prefix as durable user messages
    anchor_new_instance: bool = True  # a new instance's first record is an unconditional snapshot
    log_empty_prefix: bool = False  # write messagePrefix: [] for an empty composition
    boundary_at_dispatch: bool = False  # snapshot the boundary at dispatch, after step/start
    compose_after_pre_step: bool = False  # compose after agent/pre-step instead of before
    reverse_listeners: bool = False  # call listeners in reverse registration order
    compaction_drops_prefix: bool = False  # compaction also rewrites the cached prefix
    meter_prefix_times: int = 1  # how many times post-step pressure prices the prefix
    change_ignores_system: bool = False  # a system-prompt change writes no change snapshot
    cache_by_reference: bool = False  # cache the listeners' messages, not a detached copy
    effort_from_header: bool = True  # the request's reasoningEffort is the header's (not the options')
    compaction_logs_header: bool = False  # compaction writes a header snapshot (without the prefix)
    fork_copies_headers: bool = True  # a fork's seed keeps the request/header events
    history_window: int | None = None  # send only the last N history messages (unlogged trimming)
    change_always: bool = False  # write a change snapshot on every later request, equal or not


HARNESS = Semantics()
