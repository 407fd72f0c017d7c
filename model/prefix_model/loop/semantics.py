"""Spec §13 — the loop's design choices, as the few methods a design may override.

``Semantics`` is the harness at a55f148516: each method is one choice point of the session
prefix (when to compose, what a composition becomes, what the header logs, how the request is
placed, what compaction and fork do with it, how pressure prices it), and its body is the
harness's answer. ``transitions.py`` calls these and nothing else of a design, so its bodies read
as the spec; a rejected design (``variants.py``) or a reviewed one (``review/designs.py``) is a
small subclass overriding one or two of them. ``HARNESS`` is the instance the loop runs by default.
"""

from __future__ import annotations

from prefix_model.core.headers import EpochHeader, LlmCallConfig, canonical_header
from prefix_model.core.json_values import FrozenMap, JsonValue
from prefix_model.core.log import Log
from prefix_model.core.request_log import expected_reason, record_request_header
from prefix_model.core.requests import Request, build_request
from prefix_model.loop.meter import Measurement
from prefix_model.loop.world import Instance, Listener

__all__ = ["Semantics", "HARNESS", "CHOICE_POINTS", "Durable"]

Durable = tuple[str, FrozenMap]  # an event a design writes when it adopts a composition: (type, data)


class Semantics:
    """The loop's design choices; every body is the harness's (facts §4.6-§4.8, §2.8, §5.1)."""

    name = "session-prefix"
    compose_in_pre_step = False  # compose inside agent/pre-step instead of before it (LOOP-3)
    cache_interrupted = False  # cache a composition a cancel or dispose interrupted (PFX-4)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    # --- When to compose, and in what order listeners answer ---

    def recompose(self, instance: Instance) -> bool:
        """Whether step ``instance.step`` drops a cached prefix and composes again: never (once per instance, PFX-2)."""
        return False

    def listener_order(self, listeners: tuple[Listener, ...]) -> tuple[Listener, ...]:
        """The order the waterfall calls listeners in: registration order (PFX-8)."""
        return listeners

    # --- What a composition becomes ---

    def adopt(self, log: Log, product: tuple[JsonValue, ...]) -> tuple[tuple[Durable, ...], tuple[JsonValue, ...]]:
        """Return (events to append now, the prefix to cache): nothing durable, the product cached request-only (PFX-1).

        A ``user/message`` joins the surface (appended); any other type is a log-only record (LOG-9).
        """
        return (), product

    def sent_prefix(self, cached: tuple[JsonValue, ...], listeners: tuple[Listener, ...], agent: str) -> tuple[JsonValue, ...]:
        """The prefix a request carries: the detached cached copy, not what the listeners hold now (PFX-7)."""
        return cached

    # --- The header and its record ---

    def header(self, config: LlmCallConfig, system: str, tools: tuple[JsonValue, ...], prefix: tuple[JsonValue, ...]) -> EpochHeader:
        """The header a request is built from: the prefix logged as ``messagePrefix`` (PFX-3)."""
        return canonical_header(EpochHeader(config, system, tools, prefix))

    def record(self, log: Log, logged: bool, header: EpochHeader) -> tuple[Log, str | None]:
        """Return the log after the record rule and the reason it wrote (None: nothing; HDR-9..HDR-15)."""
        return record_request_header(log, logged, header), expected_reason(log, logged, header)

    # --- The request ---

    def history(self, boundary: tuple[FrozenMap, ...], log: Log) -> tuple[FrozenMap, ...]:
        """The history a request sends: the boundary snapshot taken before ``step/start`` (REC-1), not the log now."""
        return boundary

    def request(self, header: EpochHeader, prefix: tuple[JsonValue, ...], history: tuple[FrozenMap, ...], instance: Instance) -> Request:
        """The request: the header's prefix, then the history, under the header's config (REC-2)."""
        return build_request(header, history, instance.session_id)

    # --- Compaction, fork, pressure ---

    def after_compaction(self, prefix: tuple[JsonValue, ...] | None) -> tuple[JsonValue, ...] | None:
        """The cached prefix after a compaction: untouched (compaction rewrites surface nodes only)."""
        return prefix

    def compaction_header(self, header: EpochHeader | None) -> EpochHeader | None:
        """A header compaction writes before its ``compact/end``: none (CMP-1)."""
        return None

    def fork_seed(self, seed: Log) -> Log:
        """A fork child's seed: the parent's events as they are, header snapshots included (FORK-8)."""
        return seed

    def pressure(self, log: Log, measured: Measurement, prefix_price: int) -> int:
        """Post-step pressure, what the compaction service decides by: the meter's measure, the routed prefix once (TOK-1)."""
        return measured.total


CHOICE_POINTS: tuple[str, ...] = tuple(
    n for n, v in vars(Semantics).items() if not n.startswith("_") and n != "name" and (callable(v) or isinstance(v, bool))
)
"""The names a design may override: the methods and switches above."""

HARNESS = Semantics()

