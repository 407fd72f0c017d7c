"""Spec §14.6 — the loop's state diagram, generated from the transitions themselves.

``transition_table`` explores one agent's instance from creation: every action of a small
alphabet (a prompt, each loop segment, the reply's kinds, a cancel — also while the waterfall is
awaited — and a dispose) is applied wherever it is enabled, breadth first over the instance's
abstract state (a prompt only where it opens a turn), and each (phase before, action, phase after) it takes is an edge. The diagram is
that table drawn (``mermaid`` or ``dot``), so the picture cannot drift from ``loop.transitions``;
SPEC.md embeds the mermaid form and a test compares the two.
"""

from __future__ import annotations

from prefix_model.core.json_values import FrozenMap
from prefix_model.loop.actions import (
    Action,
    BeginStep,
    Cancel,
    Compose,
    Create,
    Dispatch,
    Dispose,
    PostStep,
    PreStep,
    Register,
    Reply,
    RunTools,
    SendPrompt,
)
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.world import Instance, Listener, Phase, Prepend, World, text_message

__all__ = ["Edge", "ALPHABET", "transition_table", "mermaid", "dot"]

Edge = tuple[str, str, str]  # (phase before, action, phase after)

ALPHABET: tuple[tuple[str, Action], ...] = (
    ("SendPrompt", SendPrompt(0, "go")),
    ("BeginStep", BeginStep(0)),
    ("Compose", Compose(0)),
    ("PreStep", PreStep(0)),
    ("Dispatch", Dispatch(0)),
    ("Reply text", Reply(0, text="done")),
    ("Reply tool calls", Reply(0, tool_calls=(("c", "echo", "{}"),))),
    ("Reply failure, retry", Reply(0, failure="overloaded", retry=True)),
    ("Reply failure", Reply(0, failure="bad-request")),
    ("RunTools", RunTools(0)),
    ("PostStep", PostStep(0)),
    ("Cancel", Cancel(0)),
    ("Dispose", Dispose(0)),
)


def _key(instance: Instance) -> tuple[object, ...]:
    """What of an instance decides which actions move it where: its phase and the flags the guards and segments read."""
    return (instance.phase, instance.cancel, instance.prefix is None, instance.continues, instance.disposed, bool(instance.queued), bool(instance.pending_calls))


def _start() -> World:
    world = apply(World(), Register(Listener("opener", None, (Prepend((text_message("<skill opener>"),)),))), HARNESS)
    return apply(world, Create("main", "s", tools=(FrozenMap({"name": "echo"}),)), HARNESS)  # the tool its replies call


def transition_table() -> tuple[Edge, ...]:
    """Return every (phase, action, phase) the instance takes from creation, sorted."""
    frontier, seen, edges = [_start()], set(), set()
    seen.add(_key(frontier[0].instance(0)))
    while frontier:
        world = frontier.pop(0)
        before = world.instance(0)
        for label, action in ALPHABET:
            if not enabled(world, action) or (isinstance(action, SendPrompt) and before.turn_open):
                continue  # a prompt during a turn only queues: the diagram draws the prompt that opens one
            after = apply(world, action, HARNESS)
            edges.add((before.phase.value, label, after.instance(0).phase.value))
            key = _key(after.instance(0))
            if key not in seen:
                seen.add(key)
                frontier.append(after)
    return tuple(sorted(edges))


def _grouped(edges: tuple[Edge, ...]) -> tuple[tuple[str, str, str], ...]:
    """One arrow per (from, to), its label the actions that take it."""
    labels: dict[tuple[str, str], list[str]] = {}
    for source, label, target in edges:
        labels.setdefault((source, target), []).append(label)
    order = [p.value for p in Phase]
    ordered = sorted(labels.items(), key=lambda item: (order.index(item[0][0]), order.index(item[0][1])))
    return tuple((s, " / ".join(sorted(ls)), t) for (s, t), ls in ordered)


def mermaid(edges: tuple[Edge, ...]) -> str:
    """Return the table as a mermaid state diagram."""
    lines = ["stateDiagram-v2", f"    [*] --> {Phase.IDLE.value.replace('-', '_')}"]
    lines += [f"    {s.replace('-', '_')} --> {t.replace('-', '_')}: {label}" for s, label, t in _grouped(edges)]
    return "\n".join(lines) + "\n"


def dot(edges: tuple[Edge, ...]) -> str:
    """Return the table as a Graphviz digraph."""
    lines = ["digraph loop {", '    rankdir=LR;', '    start [shape=point];', f'    start -> "{Phase.IDLE.value}";']
    lines += [f'    "{s}" -> "{t}" [label="{label}"];' for s, label, t in _grouped(edges)]
    return "\n".join(lines + ["}"]) + "\n"
