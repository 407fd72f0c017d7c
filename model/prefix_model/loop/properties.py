"""Spec §11 — the session-prefix properties, one function each, over a world (a recorded run).

Each property returns the violations it finds (empty when it holds), each naming its ID. They
read the sessions' logs, the requests sent, and the ghost trace of loop milestones; the machines
of the test suite check all of them after every transition, and ``variants.py`` shows each one
able to fail. Prefix content in generated runs is drawn from a vocabulary no other text contains,
which is what lets PFX-1 and PFX-11 recognise composed text wherever it lands. PFX-8 and TOK-1
judge against oracles of their own (a fold of the listeners' recorded calls; §12's price), not
against the ``compose`` and ``measure`` the transitions call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, ensure
from prefix_model.core.derive import derive_event_message, derive_messages
from prefix_model.core.events import ASSISTANT_MESSAGE, REQUEST_HEADER, STEP_START, Event, is_surface_type
from prefix_model.core.headers import INITIAL, RESUME, EpochHeader, fold_request_header, header_equals, header_of
from prefix_model.core.json_values import FrozenMap, JsonValue, json_text
from prefix_model.core.log import Log
from prefix_model.core.requests import boundary_log
from prefix_model.loop.memo import per_object, per_objects
from prefix_model.loop.world import Mark, SentRequest, Session, World
from prefix_model.loop.world_fold import world_findings

__all__ = ["Violation", "PROPERTIES", "check_all"]


@dataclass(frozen=True, slots=True)
class Violation:
    """A property that a world breaks: its ID and what was seen."""

    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


Check = Callable[[World], tuple[Violation, ...]]


# --- What every property's contract states: it names its own ID, and it can be broken only where
# its subject exists (a property that finds a violation in a world without one reports nothing real).


def _names(rule: str) -> Callable[[tuple[Violation, ...]], bool]:
    def names_its_rule(result: tuple[Violation, ...]) -> bool:
        return all(v.rule == rule for v in result)

    return names_its_rule


def _marked(world: World, *kinds: str) -> bool:
    """Return whether the trace holds a milestone of one of ``kinds``."""
    return any(m.kind in kinds for m in world.trace)


def _only_where(*kinds: str) -> Callable[[World, tuple[Violation, ...]], bool]:
    def only_where_marked(world: World, result: tuple[Violation, ...]) -> bool:
        return not result or _marked(world, *kinds)

    return only_where_marked


def _has_loop_request(world: World, result: tuple[Violation, ...]) -> bool:
    return not result or any(r.loop_request for r in world.requests)


def _has_fork(world: World, result: tuple[Violation, ...]) -> bool:
    return not result or any(s.lineage is not None for s in world.sessions)


def _has_snapshot(world: World, result: tuple[Violation, ...]) -> bool:
    return not result or any(e.type == REQUEST_HEADER for s in world.sessions for e in s.log.events)


def _marks(world: World, instance_id: int, kind: str) -> tuple[Mark, ...]:
    return tuple(m for m in world.trace if m.instance_id == instance_id and m.kind == kind)


def _loop_requests(world: World) -> tuple[SentRequest, ...]:
    return tuple(r for r in world.requests if r.loop_request)


def _in_force(world: World, instance_id: int, kind: str, source: str = "cached") -> tuple[tuple[Mark, JsonValue], ...]:
    """Each ``kind`` mark of the instance with the prefix it cached then (the last ``source`` mark before it; None if none)."""
    found, product = [], None
    for mark in world.trace:
        if mark.instance_id != instance_id:
            continue
        if mark.kind == source:
            product = mark.value
        elif mark.kind == kind:
            found.append((mark, product))
    return tuple(found)


# --- §11.1 Request-only and reconstructible ---


MIN_PREFIX_TEXT = 3
"""A composed text block is looked for when it holds at least this many characters other than whitespace."""

# The machines and the explorer judge every world, and successive worlds share most of their values:
# the JSON text of a frozen value, and what each event holds as text, are kept per object (memo.py).
_text_of = per_object(200_000)(json_text)


def _squeezed(text: str) -> str:
    """``text`` without its whitespace: a re-wrapped or re-flowed copy is still found."""
    return "".join(text.split())


def _strings(value: JsonValue, key: str | None = None) -> list[str]:
    """Every string of ``value`` in order (only those under ``key`` when given; a key is never one)."""
    if isinstance(value, str):
        return [value] if key is None else []
    if isinstance(value, FrozenMap):
        return [t for k, v in value.items() for t in ([v] if key is not None and k == key and isinstance(v, str) else _strings(v, key))]
    if isinstance(value, tuple):
        return [t for v in value for t in _strings(v, key)]
    return []


def _composed_texts(world: World, drivers: set[int]) -> tuple[str, ...]:
    """The text blocks of every message the instances ``drivers`` composed, whitespace removed, long enough to look for."""
    found: dict[str, None] = {}
    for mark in world.trace:
        if mark.instance_id in drivers and mark.kind == "composed" and isinstance(mark.value, tuple):
            for message in mark.value:
                for text in _block_texts(message.get("content") if isinstance(message, FrozenMap) else None):
                    if len(_squeezed(text)) >= MIN_PREFIX_TEXT:
                        found[_squeezed(text)] = None
    return tuple(found)


def _block_texts(content: JsonValue) -> list[str]:
    """The texts of a message's content: the string itself, or every text block's (tool results' nested ones too)."""
    return [content] if isinstance(content, str) else _strings(content, "text")


@per_object(200_000)
def _history_text(event: Event) -> str:
    """The text the event puts into history: its derived message's text blocks, whitespace removed."""
    message = derive_event_message(event)
    return "" if message is None else _squeezed("".join(_block_texts(message.get("content"))))


@per_object(200_000)
def _elsewhere_text(event: Event) -> str:
    """Every string the event holds outside the prefix's home and outside the history, whitespace removed.

    The home is a ``request/header``'s ``header.messagePrefix``; the history is a surface-eligible
    event's ``content`` (PFX-1 reads it). Anything else — a log-only event of any type, a header's
    system, tools and config, a message's source, meta, envelope — is elsewhere (PFX-11).
    """
    data = event.data
    if isinstance(data, FrozenMap) and event.type == REQUEST_HEADER and isinstance(data.get("header"), FrozenMap):
        header = data["header"]
        assert isinstance(header, FrozenMap)
        data = FrozenMap({**data, "header": FrozenMap({k: v for k, v in header.items() if k != "messagePrefix"})})
    elif isinstance(data, FrozenMap) and is_surface_type(event.type):
        data = FrozenMap({k: v for k, v in data.items() if k != "content"})
    return _squeezed("".join(_strings(data)))


def _drivers(world: World, session: Session) -> set[int]:
    return {i.id for i in world.instances if i.session_id == session.id}


def _listener_injects(world: World, drivers: set[int]) -> set[int]:
    """The positions of the events a waterfall appended while it ran: its listeners' own injects (PFX-10)."""
    exempt: set[int] = set()
    started: dict[int, int] = {}
    for mark in world.trace:
        if mark.instance_id not in drivers:
            continue
        if mark.kind == "waterfall":
            started[mark.instance_id] = mark.at
        elif mark.kind in ("composed", "compose-failed", "compose-interrupted") and mark.instance_id in started:
            exempt.update(range(started.pop(mark.instance_id), mark.at))
    return exempt


def _adopted(world: World, drivers: set[int]) -> list[tuple[int, int]]:
    """Each instance's (composed, cached) positions: what a composition itself appended lies between them."""
    spans, composed = [], {}
    for mark in world.trace:
        if mark.instance_id in drivers and mark.kind == "composed":
            composed[mark.instance_id] = mark.at
        elif mark.instance_id in drivers and mark.kind == "cached" and mark.instance_id in composed:
            spans.append((composed.pop(mark.instance_id), mark.at))
    return spans


@ensure(_names("PFX-1"), "PFX-1: every violation the property reports names PFX-1", enabled=ENABLED)
@ensure(_only_where("composed"), "PFX-1: a prefix message can leak only where one was composed", enabled=ENABLED)
def request_only(world: World) -> tuple[Violation, ...]:
    """PFX-1: a composition appends nothing but its listeners' injects, and no history holds a composed text in any wrapping.

    The history is every message any event of the log derives (shadowed ones included), its text
    blocks joined in log order with whitespace removed; a composed text block (whitespace removed,
    at least ``MIN_PREFIX_TEXT`` characters) found anywhere in it — wrapped in an envelope, under
    another role, split across blocks or messages — is a leak. The listeners' own injects are not.
    """
    found = []
    for session in world.sessions:
        drivers = _drivers(world, session)
        composed = _composed_texts(world, drivers)
        if not composed:
            continue  # nothing composed for this session: nothing can leak
        events = session.log.events
        for start, end in _adopted(world, drivers):
            if end > start:
                found.append(Violation("PFX-1", f"session {session.id}: composition appended {events[start].type} at seq {start}"))
        exempt = _listener_injects(world, drivers)
        history = "".join(_history_text(e) for n, e in enumerate(events) if n not in exempt)
        leaked = [text for text in composed if text in history]
        found += [Violation("PFX-1", f"session {session.id}: composed text in history: {leaked[0][:80]}")] if leaked else []
    return tuple(found)


@ensure(_names("PFX-11"), "PFX-11: every violation the property reports names PFX-11", enabled=ENABLED)
@ensure(_only_where("composed"), "PFX-11: the prefix can have a second home only where one was composed", enabled=ENABLED)
def one_home(world: World) -> tuple[Violation, ...]:
    """PFX-11: no event holds a composed text anywhere but a header's ``messagePrefix`` and the history PFX-1 judges."""
    found = []
    for session in world.sessions:
        drivers = _drivers(world, session)
        composed = _composed_texts(world, drivers)
        if not composed:
            continue
        exempt = _listener_injects(world, drivers)
        for n, event in enumerate(session.log.events):
            held = [text for text in composed if n not in exempt and text in _elsewhere_text(event)]
            if held:
                found.append(Violation("PFX-11", f"session {session.id}: {event.type} at seq {n} holds composed text {held[0][:80]}"))
                break  # one event is enough to name the session
    return tuple(found)


# --- §11.2 One composition per instance ---


@ensure(_names("PFX-2"), "PFX-2: every violation the property reports names PFX-2", enabled=ENABLED)
@ensure(_only_where("composed"), "PFX-2: an instance can compose twice only where a composition happened", enabled=ENABLED)
def one_composition(world: World) -> tuple[Violation, ...]:
    """PFX-2: an instance caches at most one composition, and its cached prefix never changes."""
    found = []
    for instance in world.instances:
        composed = _marks(world, instance.id, "composed")
        if len(composed) > 1:
            found.append(Violation("PFX-2", f"instance {instance.id} composed {len(composed)} times"))
        cached = _marks(world, instance.id, "cached")
        product = cached[-1].value if cached else None
        if instance.prefix is not None and product is not None and _text_of(instance.prefix) != _text_of(product):
            found.append(Violation("PFX-2", f"instance {instance.id}: the cached prefix changed after composition"))
    return tuple(found)


@ensure(_names("PFX-3"), "PFX-3: every violation the property reports names PFX-3", enabled=ENABLED)
@ensure(_only_where("record"), "PFX-3: a snapshot can miss the prefix only where one was recorded", enabled=ENABLED)
def headers_carry_prefix(world: World) -> tuple[Violation, ...]:
    """PFX-3: every snapshot an instance writes carries its cached composition, the prefix its requests carry (absent when empty)."""
    found = []
    for instance in world.instances:
        log = world.session(instance.session_id).log
        for record, composed in _in_force(world, instance.id, "record"):
            if record.value is None or composed is None:
                continue
            header = header_of(log.events[record.at - 1])
            product = composed if isinstance(composed, tuple) else ()
            if json_text(header.message_prefix or ()) != _text_of(product):
                found.append(Violation("PFX-3", f"instance {instance.id}: snapshot at seq {record.at - 1} does not carry the composed prefix"))
    return tuple(found)


@ensure(_names("LOOP-3"), "LOOP-3: every violation the property reports names LOOP-3", enabled=ENABLED)
@ensure(_only_where("pre-step", "dispatch", "boundary"), "LOOP-3: the order can break only where a pre-step, boundary or dispatch happened", enabled=ENABLED)
def loop_order(world: World) -> tuple[Violation, ...]:
    """LOOP-3: composition precedes pre-step; the boundary is taken just before step/start; record precedes dispatch."""
    found = []
    kinds = [(m.instance_id, m.kind) for m in world.trace]
    for instance in world.instances:
        mine = [k for i, k in kinds if i == instance.id]
        if "pre-step" in mine and ("composed" not in mine or mine.index("composed") > mine.index("pre-step")):
            found.append(Violation("LOOP-3", f"instance {instance.id}: pre-step ran before the prefix was composed"))
        if any(a == "dispatch" and b != "record" for b, a in zip(mine, mine[1:])):
            found.append(Violation("LOOP-3", f"instance {instance.id}: a request was dispatched without a header record"))
        log = world.session(instance.session_id).log
        for boundary in _marks(world, instance.id, "boundary"):
            if len(log.events) > boundary.at and log.events[boundary.at].type != STEP_START:
                found.append(Violation("LOOP-3", f"instance {instance.id}: boundary at {boundary.at} is not followed by step/start"))
    return tuple(found)


@ensure(_names("PFX-4"), "PFX-4: every violation the property reports names PFX-4", enabled=ENABLED)
@ensure(_only_where("compose-interrupted"), "PFX-4: a composition can be cached after an interruption only where one was interrupted", enabled=ENABLED)
def interrupted_discarded(world: World) -> tuple[Violation, ...]:
    """PFX-4: an interrupted composition is never cached; the next turn recomposes."""
    found = []
    for instance in world.instances:
        last = [m.kind for m in world.trace if m.instance_id == instance.id and m.kind in ("composed", "compose-interrupted")]
        if last and last[-1] == "compose-interrupted" and instance.prefix is not None:
            found.append(Violation("PFX-4", f"instance {instance.id} cached an interrupted composition"))
    return tuple(found)


@ensure(_names("PFX-5"), "PFX-5: every violation the property reports names PFX-5", enabled=ENABLED)
@ensure(_only_where("record", "dispatch"), "PFX-5: an anchor can be missing only where a record or dispatch happened", enabled=ENABLED)
def new_instance_anchors(world: World) -> tuple[Violation, ...]:
    """PFX-5: each instance composes afresh and its first record is an unconditional anchor."""
    found = []
    for instance in world.instances:
        records = _marks(world, instance.id, "record")
        if not records:
            continue
        first = records[0]
        log = world.session(instance.session_id).log
        had_header = fold_request_header(log.events[: first.at - 1]) is not None if first.value is not None else True
        expected = RESUME if had_header else INITIAL
        if first.value != expected:
            found.append(Violation("PFX-5", f"instance {instance.id}: first record wrote {first.value!r}, not an anchor {expected!r}"))
        if _marks(world, instance.id, "dispatch") and not _marks(world, instance.id, "composed"):
            found.append(Violation("PFX-5", f"instance {instance.id} sent a request without composing"))
    return tuple(found)


@ensure(_names("PFX-7"), "PFX-7: every violation the property reports names PFX-7", enabled=ENABLED)
@ensure(_has_loop_request, "PFX-7: a request can carry another prefix only where a loop request was sent", enabled=ENABLED)
def detached_prefix(world: World) -> tuple[Violation, ...]:
    """PFX-7: every request carries its instance's prefix as composed, whatever listeners did since."""
    found = []
    # The k-th dispatch mark of an instance is its k-th loop request: each is held to the composition before it.
    in_force = {i.id: [c for _, c in _in_force(world, i.id, "dispatch")] for i in world.instances}
    for index, sent in enumerate(_loop_requests(world)):
        composed = in_force[sent.instance_id].pop(0) if in_force[sent.instance_id] else None
        product = composed if isinstance(composed, tuple) else ()
        if json_text(sent.request.messages[: len(product)]) != _text_of(product):
            found.append(Violation("PFX-7", f"request {index}: the prefix sent is not the one composed"))
    return tuple(found)


@ensure(_names("PFX-12"), "PFX-12: every violation the property reports names PFX-12", enabled=ENABLED)
@ensure(_has_loop_request, "PFX-12: a request can carry a stale prefix only where a loop request was sent", enabled=ENABLED)
def fresh_prefix(world: World) -> tuple[Violation, ...]:
    """PFX-12: every request's messages lead with, and its ``messagePrefix`` (where it has one) is, what its own
    instance's waterfall last composed — never a logged or an earlier instance's product."""
    found = []
    own = {i.id: [c for _, c in _in_force(world, i.id, "dispatch", source="composed")] for i in world.instances}
    for index, sent in enumerate(_loop_requests(world)):
        composed = own[sent.instance_id].pop(0) if own[sent.instance_id] else None
        product = composed if isinstance(composed, tuple) else ()
        logged = sent.request.header.message_prefix
        if json_text(sent.request.messages[: len(product)]) != _text_of(product) or (logged is not None and _text_of(logged) != _text_of(product)):
            found.append(Violation("PFX-12", f"request {index}: instance {sent.instance_id} did not send its own composition"))
    return tuple(found)


_PLACES_MINE_FIRST = ("prepend", "inject-then-prepend", "cancel-then-prepend")


def _waterfall(inputs: JsonValue, agent: str) -> tuple[JsonValue, ...] | None:
    """The note's waterfall over recorded inputs, written apart from ``waterfall.py``: None when it rejects.

    Listeners are the global ones and those of ``agent``, in registration order; the first that
    does not call ``next()`` (a short circuit, a throw) is the last called; each called listener
    wraps what the later ones return — mine first, or after — starting from the empty seed.
    """
    records = [r for r in (inputs if isinstance(inputs, tuple) else ()) if isinstance(r, FrozenMap)]
    chain = [r for r in records if r.get("agent") is None or r.get("agent") == agent]
    stops = [n for n, r in enumerate(chain) if r.get("call") in ("short-circuit", "throw")]
    called = chain[: stops[0] + 1] if stops else chain
    if called and called[-1].get("call") == "throw":
        return None
    product: tuple[JsonValue, ...] = ()
    for record in reversed(called):
        mine = record.get("messages")
        mine = mine if isinstance(mine, tuple) else ()
        call = record.get("call")
        product = mine if call == "short-circuit" else (mine + product if call in _PLACES_MINE_FIRST else product + mine)
    return product


@ensure(_names("PFX-8"), "PFX-8: every violation the property reports names PFX-8", enabled=ENABLED)
@ensure(_only_where("composed"), "PFX-8: a composition can break registration order only where one happened", enabled=ENABLED)
def registration_order(world: World) -> tuple[Violation, ...]:
    """PFX-8: each composition is the note's waterfall, folded here over what each listener did on that call."""
    found = []
    for instance in world.instances:
        inputs: JsonValue = None  # what the listeners did on the waterfall just before each composition
        for mark in (m for m in world.trace if m.instance_id == instance.id and m.kind in ("waterfall", "composed")):
            if mark.kind == "waterfall":
                inputs = mark.value
                continue
            expected = _waterfall(inputs, instance.agent)
            if expected is None or _text_of(mark.value) != _text_of(expected):
                found.append(Violation("PFX-8", f"instance {instance.id}: composition is not registration order"))
    return tuple(found)


@ensure(_names("FORK-8"), "FORK-8: every violation the property reports names FORK-8", enabled=ENABLED)
@ensure(_has_fork, "FORK-8: a seed can differ from its parent's events only where a fork's child exists", enabled=ENABLED)
def forks_copy_events(world: World) -> tuple[Violation, ...]:
    """FORK-8: a child's log starts with its parent's events through the boundary, unchanged."""
    found = []
    for child in world.sessions:
        if child.lineage is None:
            continue
        parent = world.session(child.lineage.parent_session).log.events[: child.lineage.seed_length]
        if child.log.events[: child.lineage.seed_length] != parent:
            found.append(Violation("FORK-8", f"session {child.id}: the seed differs from its parent's events"))
    return tuple(found)


# TOK-1's oracle: the meter's rule as §12 states it (TOK-2's prices, TOK-3's anchor), written apart from meter.py.


def _quarter(text: JsonValue) -> int:
    """⌈UTF-16 length / 4⌉ of a string (JavaScript's ``length``); a non-string counts as empty."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2 if isinstance(text, str) else 0
    return -(-units // 4)


def _content_tokens(content: JsonValue) -> int:
    return sum(map(_block_tokens, content)) if isinstance(content, tuple) else 0


def _block_tokens(block: JsonValue) -> int:
    kind = block.get("type") if isinstance(block, FrozenMap) else None
    if isinstance(block, FrozenMap) and kind in ("text", "reasoning") and isinstance(block.get("text"), str):
        return _quarter(block.get("text")) + 4
    if isinstance(block, FrozenMap) and kind == "tool-call":
        return _quarter(block.get("name")) + _quarter(block.get("arguments")) + 4
    if isinstance(block, FrozenMap) and kind == "tool-result":
        return _content_tokens(block.get("content")) + 4
    return 4 + _quarter(json_text(block))


def _message_tokens(message: JsonValue) -> int:
    return (_content_tokens(message.get("content")) if isinstance(message, FrozenMap) else 0) + 4


def _header_tokens(header: EpochHeader | None) -> int:
    if header is None:
        return 0
    tokens = sum(map(_message_tokens, header.message_prefix or ()))
    tokens += 0 if header.system is None else _quarter(header.system) + 4
    return tokens + (_quarter(json_text(header.tools)) + 4 if header.tools else 0)


def _surface_tokens(log: Log) -> int:
    return sum(map(_message_tokens, derive_messages(log)))


def _provider_count(usage: JsonValue) -> int | None:
    if not isinstance(usage, FrozenMap):
        return None
    parts = (usage.get(k) for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens"))
    return sum(p for p in parts if isinstance(p, int) and not isinstance(p, bool))


def _pressure(log: Log) -> int:
    """What post-step pressure must be after ``log``: the latest anchor taken under the header now in force plus the
    surface grown since, else the routed header's price (its prefix once) plus the surface's."""
    header: EpochHeader | None = None
    anchor: tuple[EpochHeader | None, int, int] | None = None  # (the header then, the surface then, its tokens)
    at_step_start = 0
    for event in log.events:
        if event.type == REQUEST_HEADER:
            header = fold_request_header((event,))
        elif event.type == STEP_START:
            at_step_start = _surface_tokens(boundary_log(log, event.seq))
        elif event.type == ASSISTANT_MESSAGE:
            message = derive_event_message(event)
            surface = at_step_start + (0 if message is None else _message_tokens(message))
            estimate, provider = _header_tokens(header) + surface, _provider_count(event.field("usage"))
            anchor = (header, surface, provider if provider is not None and header is not None and provider >= estimate else estimate)
    now, surface = fold_request_header(log.events), _surface_tokens(log)
    then = anchor[0] if anchor is not None else None
    if anchor is not None and (then is None and now is None or then is not None and now is not None and header_equals(then, now)):
        return max(0, anchor[2] + surface - anchor[1])
    return _header_tokens(now) + surface


# Every later world of a branch holds the same events before a mark: priced once per those very events (memo.py).
@per_objects(100_000, key=lambda log, at: log.events[:at])
def _pressure_at(log: Log, at: int) -> int:
    """What post-step pressure must be after the events of ``log`` before ``at``."""
    return _pressure(boundary_log(log, at))


@ensure(_names("TOK-1"), "TOK-1: every violation the property reports names TOK-1", enabled=ENABLED)
@ensure(_only_where("measured"), "TOK-1: pressure can misprice the prefix only where a post-step measurement was taken", enabled=ENABLED)
def pressure_prices_prefix_once(world: World) -> tuple[Violation, ...]:
    """TOK-1: post-step pressure is §12's price of the log, computed here (not by the meter): an estimate prices the
    routed header (its prefix once) plus the surface; a usage anchor is the provider's count plus the surface since (TOK-3)."""
    found = []
    for mark in (m for m in world.trace if m.kind == "measured"):
        expected = _pressure_at(world.session(world.instance(mark.instance_id).session_id).log, mark.at)
        if mark.value != expected:
            found.append(Violation("TOK-1", f"instance {mark.instance_id}: post-step pressure {mark.value} ≠ {expected}"))
    return tuple(found)


# --- what the log and the requests show: the conformance fold finds nothing (§9) ---


def _as_property(rule: str) -> str:
    """The property a requirement the fold finds broken is judged under: a request the log cannot place is not reconstructible."""
    return "REC-1" if rule.startswith("MATCH-") else rule


def _fold_property(rule: str, doc: str, subject: Callable[[World, tuple[Violation, ...]], bool], what: str) -> Check:
    def check(world: World) -> tuple[Violation, ...]:
        # one defect breaks each requirement it implies too (world_fold.py: folded once per world and changed session)
        return tuple(Violation(rule, f"session {s}: {f}") for s, f in world_findings(world) for broken in f.rules if _as_property(broken) == rule)

    check.__name__, check.__doc__ = rule.lower().replace("-", "_"), doc
    check.__qualname__ = check.__name__  # what CrossHair and the proofs' listing call it
    checked: Check = ensure(subject, f"{rule}: the fold can find this only where {what}", enabled=ENABLED)(check)
    return ensure(_names(rule), f"{rule}: every violation the property reports names {rule}", enabled=ENABLED)(checked)


reconstructible_companion = _fold_property("REC-1", "REC-1: messages = folded prefix ++ boundary; model/system/temperature/maxTokens/stop/tools = fold.", _has_loop_request, "a loop request was sent")
reconstructible_full = _fold_property("REC-2", "REC-2: every field of every loop request is the request built from the fold and the boundary.", _has_loop_request, "a loop request was sent")
prompt_cache_monotonic = _fold_property("REC-3", "REC-3: within an instance, with no replace and no header change between, requests extend.", _has_loop_request, "a loop request was sent")
canonical_absence = _fold_property("PFX-6", "PFX-6: no snapshot writes an empty system, tools or messagePrefix.", _has_snapshot, "a snapshot was written")
compaction_spares_prefix = _fold_property("CMP-1", "CMP-1: compaction writes no header.", _has_snapshot, "a snapshot was written")
change_iff_differs = _fold_property("HDR-15", "HDR-15: a change snapshot is written only when the header differs from the fold before it.", _has_snapshot, "a snapshot was written")


PROPERTIES: tuple[tuple[str, Check], ...] = (
    ("PFX-1", request_only),
    ("PFX-11", one_home),
    ("REC-1", reconstructible_companion),
    ("REC-2", reconstructible_full),
    ("PFX-2", one_composition),
    ("PFX-3", headers_carry_prefix),
    ("LOOP-3", loop_order),
    ("PFX-4", interrupted_discarded),
    ("PFX-5", new_instance_anchors),
    ("PFX-6", canonical_absence),
    ("PFX-7", detached_prefix),
    ("PFX-12", fresh_prefix),
    ("PFX-8", registration_order),
    ("CMP-1", compaction_spares_prefix),
    ("FORK-8", forks_copy_events),
    ("TOK-1", pressure_prices_prefix_once),
    ("REC-3", prompt_cache_monotonic),
    ("HDR-15", change_iff_differs),
)


def _in_property_order(result: tuple[Violation, ...]) -> bool:
    order = {rule: n for n, (rule, _) in enumerate(PROPERTIES)}
    places = [order.get(v.rule, -1) for v in result]
    return -1 not in places and places == sorted(places)


@ensure(_in_property_order, "VAR-1: every violation is one of a property of PROPERTIES, in their order", enabled=ENABLED)
def check_all(world: World) -> tuple[Violation, ...]:
    """Return every violation of every property in ``world``."""
    return tuple(v for _, check in PROPERTIES for v in check(world))

