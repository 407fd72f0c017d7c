"""§14.3 staleness, survival and the prompt-cache cost model, on cases checked by hand."""

from __future__ import annotations

import pytest
from prefix_model.core.headers import EpochHeader, LlmCallConfig, canonical_header
from prefix_model.core.requests import Request
from prefix_model.loop.world import SentRequest, text_message
from prefix_model.review.measures import RequestView, cached_units, price_requests, units, view
from prefix_model.review.sessions import play, scenario
from prefix_model.loop.semantics import HARNESS

CONFIG = LlmCallConfig("mock", "mock-model")


def sent(instance: int, system: str, *texts: str) -> SentRequest:
    header = canonical_header(EpochHeader(CONFIG, system, (), None))
    return SentRequest(instance, "s", 1, 1, Request(header, tuple(text_message(t) for t in texts), "s"), 0)


@pytest.mark.spec("REV-3")
def test_units_are_priced_by_the_meter_heuristic() -> None:
    # system "abcd": 1 token + 4 role framing; "abcdefgh": 2 tokens + 4 block + 4 role.
    assert [price for _, price, _ in units(sent(0, "abcd", "abcdefgh").request)] == [5, 10]


@pytest.mark.spec("REV-3")
def test_the_cache_holds_the_longest_common_prefix_with_the_instances_previous_request() -> None:
    first, second = sent(0, "abcd", "abcdefgh"), sent(0, "abcd", "abcdefgh", "abcd")
    other_instance = sent(1, "abcd", "abcdefgh", "abcd")
    changed_system = sent(0, "wxyz", "abcdefgh", "abcd")
    priced = price_requests((first, second, other_instance, changed_system))
    assert [(p.total, p.cached, p.paid) for p in priced] == [(15, 0, 15), (24, 15, 9), (24, 0, 24), (24, 0, 24)]
    assert cached_units(None, units(first.request)) == 0
    assert cached_units(units(second.request), units(first.request)) == 2


@pytest.mark.spec("REV-3")
def test_opener_tokens_are_counted_where_they_are_paid() -> None:
    opener = "<skill a: how and when to use a>"  # 32 characters: 8 tokens + 4 block + 4 role
    priced = price_requests((sent(0, "s", opener, "hi"), sent(0, "s", opener, "hi", "more"), sent(0, "s", "hi", opener)))
    assert [p.opener_paid for p in priced] == [16, 0, 16]


def view_of(carried: tuple[str, ...], current: tuple[str, ...]) -> RequestView:
    return RequestView(0, sent(0, "s"), carried, current, False, False)


@pytest.mark.spec("REV-2")
def test_stale_and_lost_are_what_the_request_carries_against_the_current_opener() -> None:
    assert view_of(("a",), ("a", "b")).stale and not view_of(("a",), ("a", "b")).lost
    assert view_of((), ("a",)).lost and not view_of((), ("a",)).stale
    assert not view_of(("a", "b"), ("a", "b")).stale and not view_of((), ()).lost


@pytest.mark.spec("REV-2")
def test_the_baseline_is_stale_exactly_between_the_change_and_the_next_instance() -> None:
    played = play(HARNESS, scenario())
    views = view(played)
    stale = [v for v in views if v.stale]
    assert stale and all(v.sent.instance_id == 0 for v in stale)  # the resume recomposes: fresh again
    changed_at = next(n for n, r in enumerate(played.world.requests) if len(played.openers[n]) == 3)
    assert [v.index for v in stale] == [v.index for v in views if v.sent.instance_id == 0 and v.index >= changed_at]
    assert not any(v.lost for v in views)
