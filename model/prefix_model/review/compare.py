"""Spec §14.4 — one comparison: every design on the same scenario, each failure with its minimal counterexample.

For each design the scenario runs once; each property of §11 (and the review's own two, *fresh*
and *survives*) is judged on the run cut after each segment. A property that fails has a
counterexample: the shortest cut that fails it, then each of its segments (but the first, which
creates the agent) left out in turn, kept out when the property still fails without it. Both
steps are deterministic, so the same model prints the same counterexamples. What is shown is the
script actually applied (it replays with ``loop.transitions.run``), the violations, and the last
loop request of the run with the tail of its session's log.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from prefix_model.core.json_values import json_text
from prefix_model.loop.actions import Action
from prefix_model.loop.properties import PROPERTIES
from prefix_model.review.brief import clip, message_brief
from prefix_model.review.designs import DESIGNS, Design
from prefix_model.review.measures import Measures, measure_run, view
from prefix_model.review.sessions import Chunk, Played, Segment, play, scenario

__all__ = ["FRESH", "SURVIVES", "RULES", "rule_legend", "Counterexample", "Row", "judge_rule", "first_cuts", "shrink", "compare_design", "compare",
           "baseline_notes"]

FRESH = "fresh"  # no request carries an out-of-date opener
SURVIVES = "survives"  # no request after a compaction or in a fork's child lost the opener


def _fresh(played: Played) -> tuple[str, ...]:
    return tuple(f"request {v.index} (instance {v.sent.instance_id}, turn {v.sent.turn} step {v.sent.step}) carries "
                 f"{len(v.carried)} opener texts, not the current {len(v.current)}" for v in view(played) if v.stale)  # fmt: skip


def _survives(played: Played) -> tuple[str, ...]:
    where = {True: "after a compaction", False: "in a fork's child"}
    return tuple(f"request {v.index} (session {v.sent.session_id}, turn {v.sent.turn} step {v.sent.step}) {where[v.after_compaction]} "
                 "carries no opener" for v in view(played) if v.lost and (v.after_compaction or v.in_fork))  # fmt: skip


def _property(check: Callable[..., tuple[object, ...]]) -> Callable[[Played], tuple[str, ...]]:
    return lambda played: tuple(str(v) for v in check(played.world))


RULES: tuple[tuple[str, Callable[[Played], tuple[str, ...]]], ...] = (
    *((rule, _property(check)) for rule, check in PROPERTIES),
    (FRESH, _fresh),
    (SURVIVES, _survives),
)


def _first_sentence(doc: str | None) -> str:
    """A property's docstring, its leading ``ID:`` dropped, up to its first full stop."""
    text = re.sub(r"^[A-Z]+-\d+: ", "", " ".join((doc or "").split()).replace("``", ""))
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


_OWN = {
    FRESH: "the review's own, not a requirement of §11: no request carries an opener older than the one its "
           "listeners would give when it is sent (a skill added mid-session reaches the next request)",
    SURVIVES: "the review's own, not a requirement of §11: every request after a compaction, and every request "
              "in a fork's child, still carries the opener",
}  # fmt: skip


def rule_legend() -> tuple[tuple[str, str], ...]:
    """Return each rule of ``RULES`` with what it checks: §11's from the first sentence of their checks, then the review's own two."""
    return (*((rule, _first_sentence(check.__doc__)) for rule, check in PROPERTIES), *((rule, _OWN[rule]) for rule in (FRESH, SURVIVES)))


def judge_rule(rule: str, played: Played) -> tuple[str, ...]:
    """Return what ``rule`` finds wrong in ``played`` (empty when it holds)."""
    return dict(RULES)[rule](played)


@dataclass(frozen=True, slots=True)
class Counterexample:
    """The smallest run found that breaks ``rule`` under a design."""

    design: str
    rule: str
    segments: tuple[str, ...]
    actions: tuple[Action, ...]
    violations: tuple[str, ...]
    shown: tuple[str, ...]  # the last loop request and the tail of its session's log


SHOWN_WIDTH = 94  # a log line shown: its event's data cut to fit a terminal under the report's indent


def _shown(played: Played) -> tuple[str, ...]:
    loop = [r for r in played.world.requests if r.loop_request]
    if not loop:
        return ("(no request was sent)",)
    last = loop[-1]
    lines = [f"request (instance {last.instance_id}, turn {last.turn} step {last.step}):"]
    if last.request.header.system is not None:
        lines.append(f"  system {message_brief(last.request.header.system)}")
    lines += [f"  {message_brief(m)}" for m in last.request.messages]
    events = played.world.session(last.session_id).log.events
    lines.append(f"log of {last.session_id} (last {min(6, len(events))} of {len(events)} events):")
    lines += [clip(f"  {e.seq} {e.type} {json_text(e.data)}", SHOWN_WIDTH) for e in events[-6:]]
    return tuple(lines)


def _without(segments: tuple[Segment, ...], chunk: Chunk) -> tuple[Segment, ...]:
    """The segments with ``chunk`` left out (a segment left empty is dropped)."""
    trimmed = (Segment(s.name, tuple(c for c in s.chunks if c is not chunk)) for s in segments)
    return tuple(s for s in trimmed if s.chunks)


def first_cuts(full: Played) -> dict[str, int]:
    """Return, per rule that fails on some cut of ``full``, the shortest such cut (in segments).

    Every rule is judged on one cut before the next: the conformance fold behind six of them is
    computed once per world.
    """
    found: dict[str, int] = {}
    for k in range(1, len(full.ends) + 1):
        cut = full.upto(k)
        found |= {rule: k for rule, _ in RULES if rule not in found and judge_rule(rule, cut)}
    return found


def shrink(
    replay: Callable[[tuple[Segment, ...]], Played], rule: str, segments: tuple[Segment, ...], full: Played, cut: int | None = None
) -> Counterexample | None:
    """Return the smallest counterexample to ``rule`` found from ``full`` (the run of ``segments``), or None if it holds.

    The shortest failing cut of whole segments; then each chunk (a turn, or one action) of it but
    the first, left out in turn and kept out while the rule still fails, pass after pass until no
    chunk can go: no single chunk of the result can be left out.
    """
    if cut is None:
        cut = next((k for k in range(1, len(segments) + 1) if judge_rule(rule, full.upto(k))), None)
    if cut is None:
        return None
    kept, played = segments[:cut], full.upto(cut)
    shrinking = True
    while shrinking:  # passes until none leaves a chunk out: a chunk needed once may not be after another went
        shrinking = False
        for chunk in [c for s in kept for c in s.chunks][1:]:
            trial = _without(kept, chunk)
            attempt = replay(trial)
            if judge_rule(rule, attempt):
                kept, played, shrinking = trial, attempt, True
    return Counterexample("", rule, tuple(s.name for s in kept), played.applied, judge_rule(rule, played), _shown(played))


@dataclass(frozen=True, slots=True)
class Row:
    """One design's line of the comparison."""

    design: Design
    failed: tuple[str, ...]
    measures: Measures
    counterexamples: tuple[Counterexample, ...]
    played: Played  # the whole scenario's run


def compare_design(design: Design, segments: tuple[Segment, ...]) -> Row:
    """Return ``design``'s row: the rules it fails on ``segments``, their counterexamples, its measures."""
    full = play(design.semantics, segments)
    runs: dict[tuple[int, ...], Played] = {}

    def replay(trial: tuple[Segment, ...]) -> Played:  # the rules try many of the same trials
        key = tuple(id(c) for s in trial for c in s.chunks)
        if key not in runs:
            runs[key] = play(design.semantics, trial)
        return runs[key]

    examples = []
    cuts = first_cuts(full)
    for rule, _ in RULES:
        found = shrink(replay, rule, segments, full, cuts[rule]) if rule in cuts else None
        if found is not None:
            examples.append(replace(found, design=design.key))
    return Row(design, tuple(e.rule for e in examples), measure_run(full), tuple(examples), full)


def compare(designs: tuple[Design, ...] = DESIGNS, turns: int = 2) -> tuple[Row, ...]:
    """Return the comparison of ``designs`` on ``scenario(turns)``."""
    segments = scenario(turns)
    return tuple(compare_design(d, segments) for d in designs)


def _fresh_note(row: Row) -> str:
    m = row.measures
    return (f"{row.design.key} ✗ fresh: {m.stale} of {m.requests} requests carried an out-of-date opener (at most {m.longest_stale} "
            "in a row). The design composes the opener once per loop instance and keeps it (PFX-2, PFX-7), so a skill added "
            "mid-session reaches requests only from the next instance (a resume or a fork): its cache-stable front is bought "
            "with that staleness. fresh is the review's own measure, not a requirement of §11, which this design keeps in full.")  # fmt: skip


def _survives_note(row: Row) -> str:
    m = row.measures
    return (f"{row.design.key} ✗ survives: {m.lost_at_risk} of {m.at_risk} requests after a compaction or in a fork's child "
            "carried no opener. survives is the review's own measure, not a requirement of §11.")  # fmt: skip


def baseline_notes(rows: tuple[Row, ...]) -> tuple[str, ...]:
    """Return, for the first row (the design under review), why each ✗ it shows is there; empty when it shows none.

    A ✗ under a property of §11 would break REV-1 (the harness keeps them all): it is said to be a defect of the model.
    """
    if not rows:
        return ()
    row = rows[0]
    notes = {FRESH: _fresh_note, SURVIVES: _survives_note}
    return tuple(notes[rule](row) if rule in notes else
                 f"{row.design.key} ✗ {rule}: the harness must keep every property of §11 (REV-1); this is a defect of the model."
                 for rule in row.failed)  # fmt: skip
