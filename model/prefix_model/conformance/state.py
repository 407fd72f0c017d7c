"""Spec §9 — the conformance fold's state: what its rule families keep between events.

One record, because the families read each other's state — the open step is the enclosure's
question (ENC-2, ENC-3), the record's (REQ-4: a header seen in its window) and the matching's; the
live surface is the surface arm's and the expected history of the requests' — and because
``LogChecker.fork`` copies it whole. Its fields are grouped by the family that writes them:
``conformance.fold`` (the envelope and the numbering), ``conformance.enclosure``,
``conformance.record``, ``conformance.live`` (the surface), ``conformance.matching`` (the steps and
the capture) and ``conformance.reconstruction`` (the requests). It is updated in place, so memory
follows the surface, not the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from prefix_model.conformance.captured import Captured
from prefix_model.conformance.findings import Finding
from prefix_model.conformance.instances import Anchor, Claim
from prefix_model.conformance.nodes import SurfaceNodes
from prefix_model.formats.plain import PlainEvent
from prefix_model.core.headers import EpochHeader
from prefix_model.core.json_values import JsonValue

__all__ = ["StepResult", "InOrder", "OpenStep", "Expectation", "Previous", "CaptureQueue", "FoldState"]


class InOrder(NamedTuple):
    """A captured request that names no step, and the dispatching step it was matched to in order."""

    request: int
    line: int
    turn: int
    step: int


@dataclass(slots=True)
class StepResult:
    """One step of the log: where it starts, its instance, and how its request was resolved."""

    turn: int
    step: int
    start_seq: int
    instance: int
    boundary_nodes: int
    dispatched: bool | None = None  # True: a header or chunk proves it; None: cannot tell
    start_line: int | None = None  # the log line of its step/start
    # The boundary's nodes as (seq, message), kept where a replacement changed the nodes inside the step's header window
    # (REQ-3: the boundary is the nodes before step/start; REQ-4: the header is the one in force at the first chunk).
    boundary: tuple[tuple[int, object], ...] | None = None


@dataclass(slots=True)
class OpenStep:
    """The step between its step/start and its step/end (or turn/end), and how far its request got."""

    step: StepResult
    header_seen: bool = False
    resolved: bool = False


@dataclass(frozen=True, slots=True)
class Expectation:
    """What every request sent under one header carries besides its history, as compact texts."""

    header: EpochHeader
    fields: dict[str, str]  # request field name -> text (every field but messages and sessionId)
    prefix: str  # the messagePrefix messages' texts, each followed by a comma
    prefix_items: list[object]  # the messagePrefix messages, plain
    shallow: bool  # nests little enough that an equal request nests within JSON-7's limit
    names: frozenset[str]  # the fields an expected request has (messages included; sessionId aside)


@dataclass(slots=True)
class Previous:
    """An instance's last compared request, for prompt-cache monotonicity (REC-3)."""

    request: Captured
    header: EpochHeader
    generation: int
    exact: bool  # it equals the request the log expects
    finding: int | None  # the index of its messages finding (REC-1) in ``findings``, if it has one


class CaptureQueue:
    """The capture, read lazily in file order: the head is matched against the log's steps."""

    def __init__(self, captured: Iterable[Captured], taken: int = 0) -> None:
        self._source: Iterator[Captured] = iter(captured)
        self._head: Captured | None = None
        self.done = False  # the capture was seen to end: a step was matched against no request
        self.taken = taken  # requests popped so far

    # no contract: a lazy read of the capture; MATCH-1/CHK-1's accounting is finish's postcondition
    def head(self) -> Captured | None:
        """Return the capture's next request, read now if not yet (None: the capture ended)."""
        if self._head is None and not self.done:
            self._head = next(self._source, None)
            self.done = self._head is None
        return self._head

    # no contract: it counts what head returned; MATCH-1/CHK-1's accounting is finish's postcondition
    def pop(self) -> Captured:
        """Take the capture's next request."""
        head = self.head()
        assert head is not None
        self._head = None
        self.taken += 1
        return head


@dataclass
class FoldState:
    """The fold's counts, findings and state; ``LogChecker`` is this with its entry points and its arms' dispatch."""

    session_id: str | None = None
    captured: Iterable[Captured] = ()
    seed_length: int = 0  # a fork child's inherited events: their steps sent the parent's requests
    findings: list[Finding] = field(default_factory=list)
    steps: int = 0
    events: int = 0
    requests_checked: int = 0
    requests_unmatched: int = 0
    requests_by_step: int = 0  # matched by the turn/step they name
    requests_after_stop: int = 0  # left in the capture when the log's reading stopped (``finish(stopped=True)``)
    in_order: list[InOrder] = field(default_factory=list)  # the requests matched in order (they name no step), and where
    # Told of each step as its request resolves (REQ-4: at its first chunk or its end), while the fold's state is that
    # request's (``request_for``).
    resolved: Callable[[StepResult], None] | None = None
    # --- the envelope and the numbering (conformance.fold: LOG-2, CHK-4) ---
    next_seq: int = 0  # the seq the next event must have (LOG-2); past a gap, the one after the event that opened it
    resync: bool = False  # a line that was no event came before: the next event may take the numbering up further on
    run_reason: str = ""  # the first reason of the run of unreadable lines the last finding covers
    # --- the live surface (conformance.live: §3) ---
    nodes: SurfaceNodes = field(default_factory=lambda: SurfaceNodes())
    live: dict[int, PlainEvent] = field(default_factory=dict)
    messages: dict[int, dict[str, object] | None] = field(default_factory=dict)
    pieces: list[str | None] = field(default_factory=list)  # per node: its message's text and a comma ("" for none); None until needed
    filled: int = 0  # every piece before this position is known
    last_head: tuple[Expectation, int, int, str] | None = None  # the last messages head written: for whom, generation, boundary
    known: tuple[Expectation, int, int, list[object]] | None = None  # the last guessed messages: for whom, generation, boundary
    deep_nodes: int = 0
    generation: int = 0
    # --- the folded header (conformance.record: CMP-1, HDR-9, HDR-15, PFX-3, PFX-6) ---
    compacting: bool = False
    header: EpochHeader | None = None
    header_seq: int | None = None  # the seq of the snapshot that made ``header``
    expected: Expectation | None = None
    anchor_prefix: str | None = None
    anchor_value: JsonValue = ()  # the anchor's prefix itself, for the finding
    anchor_seq: int | None = None  # the seq of the last anchor snapshot
    instances: int = 0
    # --- turns and steps (conformance.enclosure: ENC-1..3; conformance.matching: MATCH-1, MATCH-2) ---
    open_turn: int | None = None
    next_turn: int = 1
    open_step: OpenStep | None = None
    next_step: int = 1
    pending_calls: set[str] = field(default_factory=set)
    queue: CaptureQueue = field(init=False)
    in_order_blocked: bool = False
    # --- the requests (conformance.reconstruction: REC-1..3, INST-1..3) ---
    # Per instance the capture names: the anchor its requests were sent under. A name is a new anchor's or an INST-3
    # finding's, so this grows with the log's anchors and the findings, never with the capture's length (CHK-2).
    named: dict[str, Anchor] = field(default_factory=dict)
    claim: Claim | None = None  # the newest anchor a named instance was sent under
    previous: dict[int, Previous] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.queue = CaptureQueue(self.captured)

    # no contract: it appends one finding, as given; each rule's arm decides what it finds
    def find(self, rule: str, message: str, event: PlainEvent | None = None, line: int | None = None, **more: object) -> None:
        """Add a finding of ``rule`` at ``event``'s seq and ``line``, with ``more`` of its places."""
        seq = event.seq if event is not None else None
        self.findings.append(Finding(rule, message, seq=seq, line=line, **more))  # type: ignore[arg-type]
