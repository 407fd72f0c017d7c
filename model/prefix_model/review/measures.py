"""Spec §14.3 — what each design costs on a run: staleness, survival, prompt-cache economics.

A request *carries* the opener texts found in its messages and its system prompt. Against the
opener a listener would give when the request is sent (``Played.openers``) it is **fresh** (it
carries every current text), **stale** (it carries opener texts, not all current ones) or **lost**
(it carries none while there is one). **Survival** looks at the requests after a compaction in
their session and the requests of a fork's child: how many lost the opener.

The cost model is a provider prompt cache (REV-3): a request is a sequence of units — the tool
list, the system prompt, then each message, the order providers document their caches in — each
priced by the harness's token heuristic (``loop.meter``). The cached part of a request is the
longest common run of leading units with the previous loop request *of the same instance*; the
rest is paid in full. A new instance starts cold. Auxiliary calls (the summarizer) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.derive import derive_messages
from prefix_model.core.events import COMPACT_END
from prefix_model.core.headers import EpochHeader
from prefix_model.core.json_values import JsonValue, json_text
from prefix_model.core.requests import Request
from prefix_model.loop.meter import estimate_header, estimate_message
from prefix_model.loop.world import SentRequest, World, text_message
from prefix_model.review.sessions import Played, opener_texts

__all__ = ["Unit", "Priced", "Costs", "units", "cached_units", "price_requests", "RequestView", "view", "Measures", "measure_run"]


Unit = tuple[str, int, tuple[str, ...]]  # a cacheable unit: its JSON text, its price, the opener texts in it


def units(request: Request) -> tuple[Unit, ...]:
    """Return the request as cacheable units: the tool list, the system prompt, then each message."""
    header = request.header
    out: list[Unit] = []
    if header.tools:
        out.append((json_text(header.tools), estimate_header(EpochHeader(header.config, None, header.tools, None)), ()))
    if header.system is not None:
        system: JsonValue = header.system
        out.append((json_text(system), estimate_header(EpochHeader(header.config, header.system, None, None)), opener_texts(system)))
    out += [(json_text(m), estimate_message(m), opener_texts(m)) for m in request.messages]
    return tuple(out)


def cached_units(previous: tuple[Unit, ...] | None, current: tuple[Unit, ...]) -> int:
    """Return how many leading units of ``current`` the previous request's cache holds (0 with none)."""
    if previous is None:
        return 0
    n = 0
    while n < len(previous) and n < len(current) and previous[n][0] == current[n][0]:
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class Priced:
    """One request under the cost model: its total tokens and the cached part."""

    total: int
    cached: int
    opener_paid: int = 0  # opener tokens among the units paid in full

    @property
    def paid(self) -> int:
        """Return the tokens paid in full (re-paid, when they were sent before)."""
        return self.total - self.cached


def price_requests(requests: tuple[SentRequest, ...]) -> tuple[Priced, ...]:
    """Return each loop request priced against the previous one of its instance."""
    last: dict[int, tuple[Unit, ...]] = {}
    priced = []
    for sent in requests:
        mine = units(sent.request)
        hit = cached_units(last.get(sent.instance_id), mine)
        paid_openers = sum(_opener_price(t) for _, _, texts in mine[hit:] for t in texts)
        priced.append(Priced(sum(u[1] for u in mine), sum(u[1] for u in mine[:hit]), paid_openers))
        last[sent.instance_id] = mine
    return tuple(priced)


@dataclass(frozen=True, slots=True)
class Costs:
    """The cost model's totals over a run."""

    requests: int
    total: int
    cached: int
    per_request: tuple[Priced, ...]

    @property
    def paid(self) -> int:
        """Return the tokens paid in full over the run."""
        return self.total - self.cached

    @property
    def hit_ratio(self) -> float:
        """Return the cached share of all tokens sent (0 for no tokens)."""
        return self.cached / self.total if self.total else 0.0


@dataclass(frozen=True, slots=True)
class RequestView:
    """One loop request as the review sees it."""

    index: int  # its position in world.requests
    sent: SentRequest
    carried: tuple[str, ...]
    current: tuple[str, ...]
    after_compaction: bool
    in_fork: bool

    @property
    def lost(self) -> bool:
        """Return whether the request carries no opener while there is one."""
        return bool(self.current) and not self.carried

    @property
    def stale(self) -> bool:
        """Return whether the request carries an opener, but not the current one whole."""
        return bool(self.carried) and not set(self.current) <= set(self.carried)


def _carried(request: Request) -> tuple[str, ...]:
    system: JsonValue = request.header.system
    return opener_texts(request.messages) + opener_texts(system)


def _compacted_before(world: World, sent: SentRequest) -> bool:
    log = world.session(sent.session_id).log
    return any(e.type == COMPACT_END for e in log.events[: sent.log_length])


def view(played: Played) -> tuple[RequestView, ...]:
    """Return every loop request of the run with what it carried and what was current."""
    world = played.world
    return tuple(
        RequestView(n, sent, _carried(sent.request), played.openers[n], _compacted_before(world, sent), world.session(sent.session_id).lineage is not None)
        for n, sent in enumerate(world.requests)
        if sent.loop_request
    )


def _longest_stale_run(views: tuple[RequestView, ...]) -> int:
    longest, runs = 0, dict[int, int]()
    for v in views:
        runs[v.sent.instance_id] = runs.get(v.sent.instance_id, 0) + 1 if v.stale else 0
        longest = max(longest, runs[v.sent.instance_id])
    return longest


@dataclass(frozen=True, slots=True)
class Measures:
    """Staleness, survival, cost and history growth of one run."""

    requests: int
    stale: int
    longest_stale: int  # the most consecutive stale requests (steps) of one instance
    lost: int
    at_risk: int  # requests after a compaction in their session or in a fork's child
    lost_at_risk: int
    costs: Costs
    opener_paid: int  # opener tokens in the uncached part of requests, over the run
    history_copies: int  # opener messages in the sessions' final derived histories
    history_tokens: int


def _opener_price(text: str) -> int:
    """An opener text's price, the same wherever it rides: as the one text of a user message."""
    return estimate_message(text_message(text))


def measure_run(played: Played) -> Measures:
    """Return the measures of ``played``."""
    views = view(played)
    loop = tuple(v.sent for v in views)
    priced = price_requests(loop)
    costs = Costs(len(loop), sum(p.total for p in priced), sum(p.cached for p in priced), priced)
    at_risk = [v for v in views if v.after_compaction or v.in_fork]
    history = [m for s in played.world.sessions for m in derive_messages(s.log) if opener_texts(m)]
    return Measures(
        requests=len(views),
        stale=sum(v.stale for v in views),
        longest_stale=_longest_stale_run(views),
        lost=sum(v.lost for v in views),
        at_risk=len(at_risk),
        lost_at_risk=sum(v.lost for v in at_risk),
        costs=costs,
        opener_paid=sum(p.opener_paid for p in priced),
        history_copies=len(history),
        history_tokens=sum(estimate_message(m) for m in history),
    )
