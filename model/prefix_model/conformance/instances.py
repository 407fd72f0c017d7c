"""Spec §9 — the instances a capture names (INST-1..INST-3): what a log and its requests show of each loop instance.

The log alone cannot say which loop instance wrote a snapshot: the fold takes every anchor
(``initial``/``resume``) as a new instance, so a design that recomposes at every turn and writes
the drift as ``resume`` passes it. A capture whose lines name the instance that sent each request
(the recorder's ``capture.instance``) tells: every request of one instance must be sent under its
own one anchor, with one ``messagePrefix``, and an instance's first request under an anchor no
earlier instance was sent under. ``judge`` decides one request from the anchor in force at it and
what the fold remembers of the instances named so far; the fold places the finding.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.conformance.findings import NO_VALUE, Marker
from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.json_values import JsonValue

__all__ = ["Anchor", "Claim", "Broken", "judge", "LOG_ONLY_READINGS"]

# What the log alone reports at a new instance's first snapshot when it is written as ``change``: judged against the
# old instance's anchor (PFX-3) or fold (HDR-15). Where the capture shows the new instance, the defect is INST-3's.
LOG_ONLY_READINGS = ("PFX-3", "HDR-15")


@dataclass(frozen=True, slots=True)
class Anchor:
    """An anchor snapshot: the fold's count of anchors up to and including it, its seq, and its messagePrefix."""

    number: int
    seq: int
    prefix: str  # the messagePrefix's compact text ("[]" when absent): compared
    value: JsonValue  # the messagePrefix itself: shown in a finding


@dataclass(frozen=True, slots=True)
class Claim:
    """The newest anchor a named instance was sent under: by whom, and the snapshot in force at that request."""

    name: str
    anchor: Anchor
    header_seq: int


@dataclass(frozen=True, slots=True)
class Broken:
    """What one request shows broken: the rule, what was seen, and the values compared (``NO_VALUE``: none)."""

    rule: str
    message: str
    implies: tuple[str, ...] = ()
    expected: JsonValue | Marker = NO_VALUE
    actual: JsonValue | Marker = NO_VALUE
    expected_from: int | None = None
    new_snapshot: bool = False  # INST-3: the snapshot in force was written after every earlier instance's requests


def _consistent(anchor: Anchor, own: Anchor | None, claim: Claim | None, seed_length: int, result: Broken | None) -> bool:
    """The verdict is the one the three rules give: the rule follows from where the request stands."""
    if own is None:
        taken = (claim is not None and anchor.number <= claim.anchor.number) or anchor.seq < seed_length
        return (result is not None and result.rule == "INST-3") if taken else result is None
    if own.number == anchor.number:
        return result is None
    return result is not None and result.rule == ("INST-2" if own.prefix != anchor.prefix else "INST-1")


@require(lambda anchor, header_seq: anchor.seq <= header_seq, "HDR-9: the anchor in force was written at or before the snapshot in force", enabled=ENABLED)
@require(lambda anchor, own: own is None or own.number <= anchor.number, "INST-1: anchors are counted in log order", enabled=ENABLED)
@require(lambda anchor, claim: claim is None or claim.anchor.number <= anchor.number, "MATCH-1: requests are judged in log order", enabled=ENABLED)
@ensure(_consistent, "INST-1/INST-2/INST-3: a request breaks the rule its place under the anchors says, and no other", enabled=ENABLED)
@ensure(lambda result: result is None or result.rule != "INST-2" or result.implies == ("INST-1",), "CHK-3: a drift across a second anchor is one finding that also breaks INST-1", enabled=ENABLED)
def judge(name: str, anchor: Anchor, header_seq: int, own: Anchor | None, claim: Claim | None, seed_length: int) -> Broken | None:
    """Return what the request of instance ``name`` sent under ``anchor`` (the snapshot in force: ``header_seq``) breaks, or None.

    ``own`` is the anchor its earlier requests were sent under (None: this is its first);
    ``claim`` the newest anchor any named instance was sent under; ``seed_length`` the events a
    fork child inherited (their anchors are its parent's).
    """
    if own is None:
        if claim is not None and anchor.number <= claim.anchor.number:
            return Broken("INST-3", f"the first request of instance {name!r} is sent under the anchor at seq {anchor.seq}, which instance "
                          f"{claim.name!r} was sent under: a new instance writes its own initial/resume snapshot",
                          new_snapshot=header_seq > claim.header_seq)  # fmt: skip
        if anchor.seq < seed_length:
            return Broken("INST-3", f"the first request of instance {name!r} is sent under the anchor at seq {anchor.seq}, inherited with the "
                          "fork's seed: a fork-driven instance writes its own resume snapshot", new_snapshot=header_seq >= seed_length)  # fmt: skip
        return None
    if own.number == anchor.number:
        return None
    if own.prefix != anchor.prefix:
        return Broken("INST-2", f"instance {name!r} is sent under a second anchor (seq {anchor.seq}) carrying another messagePrefix "
                      f"than its own (seq {own.seq}): a recomposition within the instance, written as an anchor",
                      ("INST-1",), own.value, anchor.value, own.seq)  # fmt: skip
    return Broken("INST-1", f"instance {name!r} is sent under a second anchor (seq {anchor.seq}) after its own (seq {own.seq}): "
                  "an instance writes one initial/resume snapshot")  # fmt: skip
