"""Spec §14.5 — the notes' claims against the comparison: each holds, fails, or holds only when…

Every verdict and every number is computed from the rows of ``compare`` (REV-5): nothing here is
typed in but the claim's words and which design it speaks of. A claim the evidence contradicts
says so plainly in its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.derive import derive_messages
from prefix_model.loop.meter import estimate_message
from prefix_model.loop.world import text_message
from prefix_model.review.compare import Row
from prefix_model.review.measures import RequestView, view
from prefix_model.review.sessions import opener_texts

__all__ = ["Claim", "HOLDS", "FAILS", "claims"]

HOLDS = "holds"
FAILS = "fails"


@dataclass(frozen=True, slots=True)
class Claim:
    """A note's claim, the design it is about, the verdict and the numbers behind it."""

    source: str
    claim: str
    design: str
    verdict: str  # 'holds', 'fails' or 'holds only when …'
    evidence: str


def _row(rows: tuple[Row, ...], key: str) -> Row:
    return next(r for r in rows if r.design.key == key)


def _firsts(views: tuple[RequestView, ...]) -> set[int]:
    """The indices of each instance's first request (a cold cache by the model's definition)."""
    seen: set[int] = set()
    firsts = set()
    for v in views:
        if v.sent.instance_id not in seen:
            seen.add(v.sent.instance_id)
            firsts.add(v.index)
    return firsts


def _after_slot(rows: tuple[Row, ...]) -> Claim:
    row = _row(rows, "a-after-slot")
    views, priced = view(row.played), row.measures.costs.per_request
    later = [(v, p) for v, p in zip(views, priced) if v.index not in _firsts(views)]
    repaid = [p for v, p in later if v.carried and p.opener_paid >= sum(_price(t) for t in v.carried)]
    mean = sum(p.opener_paid for _, p in later) / len(later) if later else 0.0
    verdict = HOLDS if len(repaid) == len(later) else FAILS
    return Claim("seed note, alt. (a)", "an after slot re-pays its tokens on every request", row.design.key, verdict,
                 f"{len(repaid)} of {len(later)} warm-cache requests re-paid the whole opener ({mean:.0f} opener tokens each on average)")  # fmt: skip


def _price(text: str) -> int:
    return estimate_message(text_message(text))


def _recompositions(row: Row) -> tuple[int, int, int]:
    """Return (recompositions within an instance, those whose next request re-paid opener tokens, those that changed it)."""
    views, priced = view(row.played), row.measures.costs.per_request
    by_index = {v.index: p for v, p in zip(views, priced)}
    fired = busted = changed = 0
    for instance in row.played.world.instances:
        marks = [m for m in row.played.world.trace if m.instance_id == instance.id and m.kind in ("composed", "dispatch")]
        requests = [v.index for v in views if v.sent.instance_id == instance.id]
        dispatched, last = 0, None
        pending: object = None
        for mark in marks:
            if mark.kind == "composed":
                if last is not None:
                    fired += 1
                    changed += mark.value != last
                    pending = mark.value
                last = mark.value
            else:
                if pending is not None and dispatched < len(requests):
                    busted += by_index[requests[dispatched]].opener_paid > 0
                    pending = None
                dispatched += 1
    return fired, busted, changed


def _per_turn(rows: tuple[Row, ...]) -> Claim:
    row = _row(rows, "d-compose-per-turn")
    fired, busted, changed = _recompositions(row)
    verdict = HOLDS if busted == fired else f"holds only when the opener changed: {busted} of {fired} recompositions busted the cache"
    return Claim("seed note, alt. (d)", "per-turn recomposition busts the cache as often as it fires", row.design.key, verdict,
                 f"{fired} recompositions within an instance, {changed} with changed content, {busted} followed by re-paid opener tokens")  # fmt: skip


def _durable_opener(rows: tuple[Row, ...]) -> Claim:
    row = _row(rows, "c-durable-opener")
    views = view(row.played)
    resumed = [v for v in views if v.sent.session_id == "s1" and v.sent.instance_id > 0 and not v.after_compaction]
    forked = [v for v in views if v.in_fork]
    compacted = [v for v in views if v.after_compaction]
    bad = (sum(v.stale or v.lost for v in resumed), sum(v.stale or v.lost for v in forked), sum(v.lost for v in compacted))
    verdict = HOLDS if all(bad) else FAILS
    return Claim("seed note, alt. (c)", "a durable opener goes stale across resume and forks and is owned by compaction", row.design.key, verdict,
                 f"stale after resume {bad[0]}/{len(resumed)}, stale in the fork {bad[1]}/{len(forked)}, "
                 f"lost after compaction {bad[2]}/{len(compacted)}")  # fmt: skip


def _zero_marginal(rows: tuple[Row, ...]) -> Claim:
    row = _row(rows, "session-prefix")
    views, priced = view(row.played), row.measures.costs.per_request
    firsts = _firsts(views)
    warm = sum(p.opener_paid for v, p in zip(views, priced) if v.index not in firsts)
    cold = sum(p.opener_paid for v, p in zip(views, priced) if v.index in firsts)
    verdict = HOLDS if warm == 0 else FAILS
    return Claim("seed note, decision", "the prefix extends the cacheable region at zero marginal cost per step", row.design.key, verdict,
                 f"opener tokens re-paid on warm requests: {warm}; on each instance's first request: {cold} over {len(firsts)} instances; "
                 f"yet {row.measures.stale} requests carried an out-of-date opener")  # fmt: skip


def _copies_in(row: Row, cut: int) -> int:
    world = row.played.upto(cut).world
    return sum(1 for m in derive_messages(world.session("s1").log) if opener_texts(m)) if world.sessions else 0


def _paid_once(rows: tuple[Row, ...], key: str) -> Claim:
    row = _row(rows, key)
    views, priced = view(row.played), row.measures.costs.per_request
    firsts = _firsts(views)
    # A warm request that pays opener tokens without carrying a copy more than the previous one re-pays a copy.
    count: dict[int, int] = {}
    warm = repaid = 0
    for v, p in zip(views, priced):
        copies = sum(1 for m in v.sent.request.messages if opener_texts(m))
        if v.index not in firsts:
            warm += 1
            repaid += p.opener_paid > 0 and copies <= count[v.sent.instance_id]
        count[v.sent.instance_id] = copies
    before, after = _copies_in(row, len(row.played.ends) - 1), _copies_in(row, len(row.played.ends))
    verdict = HOLDS if repaid == 0 and before > after else FAILS
    published = sum(1 for s in row.played.world.sessions for e in s.log.events[(s.lineage.seed_length if s.lineage else 0):]
                    if opener_texts(e.field("content")) and e.type == "user/message")  # fmt: skip
    return Claim("successor notes (reconstructable-requests)", "durable injection is paid once and cached thereafter, accumulating until compaction",
                 key, verdict, f"{published} copies published; {repaid} of {warm} warm requests re-paid a copy already sent; "
                 f"copies in s1's history: {before} before the compaction, {after} after")  # fmt: skip


def _semantics(rows: tuple[Row, ...], key: str) -> Claim:
    row = _row(rows, key)
    views = view(row.played)
    replay = not {"REC-1", "REC-2"} & set(row.failed)
    resumed = [v for v in views if v.sent.session_id == "s1" and v.sent.instance_id > 0 and not v.after_compaction]
    forked = [v for v in views if v.in_fork]
    compacted = [v for v in views if v.after_compaction]
    scores = (sum(not (v.stale or v.lost) for v in resumed), sum(not (v.stale or v.lost) for v in forked), sum(not v.lost for v in compacted))
    whole = (len(resumed), len(forked), len(compacted))
    if replay and scores == whole:
        verdict = HOLDS
    elif replay and scores[:2] == whole[:2] and 0 < scores[2]:
        verdict = f"holds only when no request is sent between a compaction and the next publication ({whole[2] - scores[2]} was)"
    else:
        verdict = FAILS
    return Claim("successor notes (hot-refresh)", "durable injected history already gives replay, resume, fork and compaction semantics", key, verdict,
                 f"reconstructible: {'yes' if replay else 'no'}; fresh after resume {scores[0]}/{len(resumed)}, in the fork {scores[1]}/{len(forked)}; "
                 f"opener kept after compaction {scores[2]}/{len(compacted)}")  # fmt: skip


def _durable_cheaper(rows: tuple[Row, ...]) -> Claim:
    durable, recomposed = _row(rows, "successor-742"), _row(rows, "a-before-slot")
    d, r = durable.measures, recomposed.measures
    verdict = HOLDS if d.costs.paid < r.costs.paid else FAILS
    return Claim("seed note, alt. (a)", "a changing opener is served cheaper by a durable append than by recomposing the front",
                 f"{durable.design.key} vs {recomposed.design.key}", verdict,
                 f"paid {d.costs.paid} vs {r.costs.paid} tokens, opener tokens paid {d.opener_paid} vs {r.opener_paid}, "
                 f"sent {d.costs.total} vs {r.costs.total}; stale requests {d.stale} vs {r.stale}")  # fmt: skip


def claims(rows: tuple[Row, ...]) -> tuple[Claim, ...]:
    """Return every claim judged on ``rows`` (which must hold the designs the claims speak of)."""
    return (
        _after_slot(rows),
        _per_turn(rows),
        _durable_opener(rows),
        _zero_marginal(rows),
        _paid_once(rows, "successor-585"),
        _paid_once(rows, "successor-742"),
        _semantics(rows, "successor-585"),
        _semantics(rows, "successor-742"),
        _durable_cheaper(rows),
    )
