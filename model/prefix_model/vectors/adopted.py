"""Scripts a campaign found and the project adopted: each becomes a scenario of the catalogue, its expected values generated.

``adopted.json`` (package data) lists each adopted script as ``prefix-model fuzz --save`` wrote its
actions, with an id, a description, where it was found and, optionally, the requirements it
witnesses beyond what its transitions show. Nothing expected is stored: the model
runs each script as it runs every scenario, the actions its guards refuse are listed as refused,
and the requirements are those its transitions exercise (the outcome classes of §10.5). To adopt
a divergence, copy its saved case's ``actions`` into a new entry.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from prefix_model.core.json_values import freeze
from prefix_model.vectors.codec import action_from_json
from prefix_model.vectors.scenarios import Scenario
from prefix_model.loop.explore import REFUSAL_REQUIREMENTS, outcomes, requirements_of
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.world import World

__all__ = ["ADOPTED_PATH", "scenario_of", "adopted_scenarios"]

ADOPTED_PATH = resources.files("prefix_model") / "vectors" / "adopted.json"


def scenario_of(ident: str, description: str, actions: Sequence[dict[str, Any]], named: Sequence[str] = ()) -> Scenario:
    """The scenario of a JSON script: its actions decoded, the ones the model refuses listed, the requirements it
    exercises (with ``named``, those its adopter names: a guard's own rule, which no outcome class carries)."""
    decoded = tuple(action_from_json(freeze(a)) for a in actions)
    world, refused, reached = World(), list[int](), set[str]()
    for index, action in enumerate(decoded):
        if not enabled(world, action):
            refused.append(index)
            continue
        after = apply(world, action)
        reached.update(r for o in outcomes(world, after, action) for r in requirements_of(o))
        world = after
    requirements = tuple(sorted(reached | set(named) | set(REFUSAL_REQUIREMENTS if refused or not reached else ())))
    return Scenario(ident, description, requirements, decoded, tuple(refused))


@cache
def adopted_scenarios() -> tuple[Scenario, ...]:
    """Every adopted script as a scenario, in the file's order."""
    entries = json.loads(ADOPTED_PATH.read_text(encoding="utf-8"))["cases"]
    return tuple(scenario_of(e["id"], f"{e['description']} (Found by {e['found']}.)", e["actions"], e.get("requirements", ())) for e in entries)
