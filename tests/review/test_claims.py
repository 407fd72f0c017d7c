"""§14.5 the notes' claims, judged from the comparison's numbers; each verdict can go the other way."""

from __future__ import annotations

from dataclasses import replace

import pytest
from prefix_model.review.claims import FAILS, HOLDS, claims
from prefix_model.review.measures import view

from tests.review_rows import row, rows

# One process computes the comparison for every test that reads it (make test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("review-rows")

# The verdicts `prefix-model review` printed (copied from its run): a moved number that flips one fails here.
VERDICTS = {
    ("a-after-slot", "an after slot re-pays its tokens on every request"): HOLDS,
    ("d-compose-per-turn", "per-turn recomposition busts the cache as often as it fires"): "holds only when",
    ("c-durable-opener", "a durable opener goes stale across resume and forks and is owned by compaction"): HOLDS,
    ("session-prefix", "the prefix extends the cacheable region at zero marginal cost per step"): HOLDS,
    ("successor-585", "durable injection is paid once and cached thereafter, accumulating until compaction"): HOLDS,
    ("successor-742", "durable injection is paid once and cached thereafter, accumulating until compaction"): HOLDS,
    ("successor-585", "durable injected history already gives replay, resume, fork and compaction semantics"): FAILS,
    ("successor-742", "durable injected history already gives replay, resume, fork and compaction semantics"): "holds only when",
    ("successor-742 vs a-before-slot", "a changing opener is served cheaper by a durable append than by recomposing the front"): FAILS,
}


@pytest.mark.spec("REV-5")
def test_each_claim_has_the_verdict_its_numbers_give() -> None:
    found = claims(rows())
    assert [(c.design, c.claim) for c in found] == list(VERDICTS)
    for claim in found:
        assert claim.verdict.startswith(VERDICTS[(claim.design, claim.claim)]) and any(ch.isdigit() for ch in claim.evidence)


@pytest.mark.spec("REV-5")
def test_a_claim_fails_when_the_evidence_says_otherwise() -> None:
    """Hand each claim a design that contradicts it: the after slot's numbers as the prefix's, the prefix's as the after slot's."""
    swapped = tuple(
        replace(row("a-after-slot"), design=r.design) if r.design.key == "session-prefix"
        else replace(row("session-prefix"), design=r.design) if r.design.key in ("a-after-slot", "c-durable-opener", "successor-742")
        else r
        for r in rows()
    )  # fmt: skip
    verdicts = {(c.design, c.claim): c.verdict for c in claims(swapped)}
    assert verdicts[("session-prefix", "the prefix extends the cacheable region at zero marginal cost per step")] == FAILS
    assert verdicts[("a-after-slot", "an after slot re-pays its tokens on every request")] == FAILS
    assert verdicts[("c-durable-opener", "a durable opener goes stale across resume and forks and is owned by compaction")] == FAILS
    assert verdicts[("successor-742 vs a-before-slot", "a changing opener is served cheaper by a durable append than by recomposing the front")] == HOLDS


@pytest.mark.spec("REV-5")
def test_the_claims_numbers_are_the_measures() -> None:
    after = row("a-after-slot")
    warm = after.measures.requests - len({v.sent.instance_id for v in view(after.played)})  # all but each instance's first
    claim = next(c for c in claims(rows()) if c.design == "a-after-slot")
    assert claim.evidence.startswith(f"{warm} of {warm} warm-cache requests re-paid the whole opener")
