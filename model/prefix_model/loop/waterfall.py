"""Spec §10.2 — the ``agent/session-prefix`` waterfall, as Cordis runs it (facts §4.6).

Listeners are collected once, in registration order, filtered to the global ones and those
scoped to the composing agent. Every listener receives the same frozen empty seed; the
accumulated value flows only through ``next()``'s return, and the innermost ``next()`` returns
the seed. A listener that does not call ``next()`` silences every later one. A throw rejects the
whole waterfall; injects made before it have already happened. A listener composing for a disposed
driver (a dispose while the waterfall is awaited) throws at its inject: ``agent.inject`` on a
disposed agent throws (L/agent.ts:229-236, 287-288), so nothing is injected and no later listener runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, ensure
from prefix_model.core.json_values import JsonValue
from prefix_model.loop.world import Append, CancelThenPrepend, InjectThenPrepend, Listener, ShortCircuit, Throw

__all__ = ["Composition", "active_listeners", "compose"]


@dataclass(frozen=True, slots=True)
class Composition:
    """What one waterfall run did: its product (``None`` if it threw), the injects (the calls that made
    them, in order), who was called, whether a listener cancelled the turn while composing, and the
    thrown error as the harness renders it (``error``)."""

    product: tuple[JsonValue, ...] | None
    thrown_by: str | None
    injects: tuple[InjectThenPrepend, ...]
    called: tuple[str, ...]
    cancelled: bool = False
    error: str | None = None


@ensure(
    lambda listeners, result: [l.name for l in result] == [l.name for l in listeners if l in result],
    "PFX-8: the collected listeners keep registration order",
    enabled=ENABLED,
)
@ensure(
    lambda agent, result: all(l.agent is None or l.agent == agent for l in result),
    "PFX-8: only global listeners and those scoped to the agent are collected",
    enabled=ENABLED,
)
def active_listeners(listeners: tuple[Listener, ...], agent: str) -> tuple[Listener, ...]:
    """Return the listeners a waterfall for ``agent`` collects, in registration order."""
    return tuple(listener for listener in listeners if listener.agent is None or listener.agent == agent)


def _run(chain: tuple[Listener, ...], agent: str, disposed: bool) -> Composition:
    """Evaluate ``chain[0]`` with ``next()`` bound to the rest of the chain."""
    if not chain:
        return Composition((), None, (), ())
    head, call = chain[0], chain[0].next_call()
    if isinstance(call, Throw):
        return Composition(None, head.name, (), (head.name,), error=call.rendered(head.name))
    if isinstance(call, InjectThenPrepend) and disposed:  # assertNotDisposed (L/agent.ts:229-236) throws before next()
        return Composition(None, head.name, (), (head.name,), error=f'agent "{agent}" is disposed')
    if isinstance(call, ShortCircuit):
        return Composition(call.messages, None, (), (head.name,))
    injects = (call,) if isinstance(call, InjectThenPrepend) else ()
    rest = _run(chain[1:], agent, disposed)
    called, cancelled = (head.name,) + rest.called, isinstance(call, CancelThenPrepend) or rest.cancelled
    if rest.product is None:
        return Composition(None, rest.thrown_by, injects + rest.injects, called, cancelled, rest.error)
    product = rest.product + call.messages if isinstance(call, Append) else call.messages + rest.product
    return Composition(product, None, injects + rest.injects, called, cancelled)


@ensure(
    lambda listeners, agent, result: set(result.called) <= {listener.name for listener in active_listeners(listeners, agent)},
    "PFX-8: only global listeners and those scoped to the agent are called",
    enabled=ENABLED,
)
@ensure(
    lambda result: (result.product is None) == (result.thrown_by is not None) == (result.error is not None),
    "PFX-9: a waterfall either throws (an error, by a listener) or yields a product",
    enabled=ENABLED,
)
def compose(listeners: tuple[Listener, ...], agent: str, disposed: bool = False) -> Composition:
    """Return the composition of the session prefix for ``agent`` (PFX-8, PFX-9), its driver ``disposed`` or not (PFX-10)."""
    chain = active_listeners(listeners, agent)
    return _run(chain, agent, disposed)
