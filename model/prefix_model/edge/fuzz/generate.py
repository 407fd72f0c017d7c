"""Scripts drawn by walking the model, aimed at what a campaign has not reached yet.

Script ``k`` of a campaign with seed ``s`` is drawn from ``random.Random(f"{s}/{k}")`` and from the
coverage the scripts before it reached, so a campaign is the same sequence of scripts for its seed
whatever the number of adapter processes. At each point the generator lists the grammar's moves
for the model's world, picks a family by weight (the script's own *style* tilts the weights:
some scripts are mostly inputs in odd windows, some mostly instance boundaries), and then a move:
usually at random, sometimes (``AIM``) the one whose outcome the campaign has seen least, found by
applying each candidate to the model and classing the transition (``explore.outcomes``). A
seeded fraction of steps (``HOSTILE``) is hostile instead: an action the model refuses right now,
of a kind drawn evenly among those with one (``Grammar.hostile``, kept where
``transitions.enabled`` is false), so an implementation that takes what the model refuses
diverges; the script goes on after it. The chosen action goes through the same server
``prefix-model adapter`` runs, whose answer is the expected reply.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from prefix_model.core.json_values import thaw
from prefix_model.edge.fuzz.grammar import BOUNDARY, DRIVE, LISTENERS, PROVIDER, REFUSED, START, WINDOW, Grammar, Move, out_of_domain
from prefix_model.edge.fuzz.lockstep import Answer
from prefix_model.edge.runner.server import Failed, Server
from prefix_model.vectors.codec import action_to_json
from prefix_model.edge.runner.consumer import JsonObject
from prefix_model.loop.actions import Action, BeginStep, Dispatch, Inject, MountCompaction, PostStep, PreStep, Register, Reply, Steer
from prefix_model.loop.explore import action_kind, outcomes
from prefix_model.loop.explore import requirements_of as outcome_requirements
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.world import World

__all__ = ["AFTER_DRIVE", "AIM", "BURST", "HOSTILE", "LENGTHS", "Coverage", "Script", "kind_of", "draw", "refused_moves"]

AIM = 0.15  # how often a move is chosen for the least-seen outcome rather than at random
# How often a drawn inject or steer is followed at once by one or two more inputs to its instance, and how often a step
# of a turn by two or three (into whatever window it left open: a tool batch running, a request streaming).
BURST, AFTER_DRIVE = 0.5, 0.1
HOSTILE = 0.06  # how often a step draws an action the model refuses there (about one in sixteen; none in the setup)
LENGTHS = (8, 16, 30, 50, 90, 160)  # actions after the setup; long scripts reach several instances and many turns
_STYLES: dict[str, dict[str, float]] = {
    # weights of the families while a turn is open, then while every instance is idle
    "plain": {DRIVE: 0.80, WINDOW: 0.10, BOUNDARY: 0.05, START: 0.03},
    "windows": {DRIVE: 0.55, WINDOW: 0.35, BOUNDARY: 0.05, START: 0.03},
    "boundaries": {DRIVE: 0.70, WINDOW: 0.08, BOUNDARY: 0.17, START: 0.03},
}
_IDLE = {START: 0.55, WINDOW: 0.15, BOUNDARY: 0.25, DRIVE: 0.0}


@dataclass
class Coverage:
    """What a campaign has reached: action kinds, outcome classes and requirement IDs, and refusals per action, with counts."""

    actions: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    requirements: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)

    @property
    def refused(self) -> int:
        """The refused actions of every kind."""
        return sum(self.refusals.values())

    def add(self, kind: str, found: Sequence[str]) -> None:
        self.actions[kind] += 1
        for outcome in found:
            self.outcomes[outcome] += 1
            for requirement in outcome_requirements(outcome):
                self.requirements[requirement] += 1


@dataclass(frozen=True, slots=True)
class Script:
    """A drawn script: its seed and number, its actions as JSON, and the model's reply to each."""

    seed: int
    number: int
    actions: tuple[JsonObject, ...]
    replies: tuple[Answer, ...]


def kind_of(action: Action) -> str:
    """The class of ``action`` a campaign counts: the explorer's classes, a streamed or cut reply apart, else its type."""
    if isinstance(action, Reply) and action.failure is None and (action.stream is not None or action.max_tokens):
        return "Reply:stream" if action.stream is not None else "Reply:max-tokens"
    if isinstance(action, (Reply, PreStep, PostStep, Dispatch)):
        return action_kind(action)
    return type(action).__name__


def _pick_family(rng: random.Random, moves: Sequence[Move], weights: dict[str, float]) -> list[Move]:
    present = sorted({m.family for m in moves}, key=list(weights).index)
    chosen = rng.choices(present, [weights.get(f, 0.0) or 0.01 for f in present])[0]
    return [m for m in moves if m.family == chosen]


def draw(
    seed: int,
    number: int,
    coverage: Coverage,
    offered: frozenset[str] | None = None,
    semantics: Semantics = HARNESS,
    providers: tuple[str, ...] = (PROVIDER,),
) -> Script:
    """Return script ``number`` of the campaign ``seed`` over the actions ``offered`` and the provider routes
    ``providers`` (an adapter's hello), adding what it reaches to ``coverage``."""
    rng = random.Random(f"{seed}/{number}")
    grammar = Grammar(rng, offered, providers)
    server = Server(semantics)
    style = _STYLES[rng.choice(list(_STYLES))]
    actions: list[JsonObject] = []
    replies: list[Answer] = []

    def take(move: Move) -> None:
        before = server.adapter.world
        plain = thaw(action_to_json(move.action))
        assert isinstance(plain, dict)
        try:
            reply: Answer = server.handle("apply", {"action": plain})
        except Failed as failed:
            if failed.error["code"] != "refused":
                raise
            reply = None
            coverage.refusals[type(move.action).__name__] += 1
        actions.append(plain)
        replies.append(reply)
        if reply is not None:
            coverage.add(kind_of(move.action), outcomes(before, server.adapter.world, move.action))

    # The setup: listeners (up to five), now and then a compaction policy, one or two agents.
    setup: list[Action] = [Register(grammar.listener(name)) for name in rng.sample(LISTENERS, rng.choice((0, 1, 2, 2, 3, 3, 4, 5)))]
    setup += [MountCompaction(grammar.policy(server.adapter.world))] if rng.random() < 0.35 else []
    for action in setup:
        if offered is None or type(action).__name__ in offered:
            take(Move(action, BOUNDARY))
    for _ in range(rng.choice((1, 1, 1, 2))):
        created = grammar.create(server.adapter.world)
        if created is not None:
            take(Move(created, BOUNDARY))
    for _ in range(rng.choice(LENGTHS)):
        world = server.adapter.world
        moves = [m for m in grammar.candidates(world) if out_of_domain(world, m.action) is None]
        if not moves:
            break
        busy = any(i.turn_open for i in world.instances)
        refused = refused_moves(grammar, world) if rng.random() < HOSTILE else {}
        if refused:
            take(rng.choice(refused[rng.choice(sorted(refused))]))
        elif rng.random() < AIM:  # aimed: over every family, the move reaching the least-seen outcome
            take(_aimed(moves, world, coverage, semantics))
        else:
            move = rng.choice(_pick_family(rng, moves, style if busy else _IDLE))
            take(move)
            for action in _burst(rng, grammar, move, server.adapter.world):
                world = server.adapter.world
                if (offered is None or type(action).__name__ in offered) and enabled(world, action) and out_of_domain(world, action) is None:
                    take(Move(action, WINDOW))
    return Script(seed, number, tuple(actions), tuple(replies))


def _burst(rng: random.Random, grammar: Grammar, move: Move, world: World) -> list[Action]:
    """Inputs to send at once after ``move`` (taken; ``world`` is after it): what waits (steering, injects a tool batch
    defers) is taken in an order that shows only where several inputs meet in one window. After a step's assembly or
    its answer, now and then a dispose or a cancel that only that window shows (the grammar picks them by counts)."""
    action = move.action
    if isinstance(action, (Inject, Steer)):
        return grammar.burst(action.instance, rng.randint(1, 2)) if rng.random() < BURST else []
    target = getattr(action, "instance", None)
    inputs: list[Action] = []
    if move.family == DRIVE and isinstance(target, int) and world.instance(target).turn_open:
        inputs = grammar.burst(target, rng.randint(2, 3)) if rng.random() < AFTER_DRIVE else []
    if isinstance(action, BeginStep):
        inputs += grammar.dispose_while_composing(world, action)
    elif isinstance(action, Reply):
        inputs += grammar.cancel_before_post_step(world, action)
    return inputs


def refused_moves(grammar: Grammar, world: World) -> dict[str, list[Move]]:
    """The grammar's hostile actions that the model refuses in ``world`` (and a campaign draws), by action kind."""
    kinds: dict[str, list[Move]] = {}
    for action in grammar.hostile(world):
        kind = type(action).__name__
        if (grammar.offered is None or kind in grammar.offered) and not enabled(world, action) and out_of_domain(world, action) is None:
            kinds.setdefault(kind, []).append(Move(action, REFUSED))
    return kinds


def _aimed(pool: Sequence[Move], world: World, coverage: Coverage, semantics: Semantics) -> Move:
    """The move whose transition reaches the outcome the campaign has seen least (a refused move reaches none)."""
    best, rarest = pool[0], None
    for move in pool:
        if not enabled(world, move.action):
            continue
        found = outcomes(world, apply(world, move.action, semantics), move.action)
        seen = min((coverage.outcomes[o] for o in found), default=None)
        if seen is not None and (rarest is None or seen < rarest):
            best, rarest = move, seen
    return best
