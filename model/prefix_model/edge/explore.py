"""Spec §10.5 (edge) — ``prefix-model explore``: the bounded exploration timed, measured and reported.

The search is ``loop.explore``; this module adds what the model may not do: the clock (states
per second), the process's memory (bytes per state), a progress bar on a terminal, the report in
text or JSON, and the counterexample written as an ITF trace (the Apalache/Quint trace format,
through ``itf-py``) that trace tools can read.
"""

from __future__ import annotations

import json
import resource
import sys
import time
import traceback
from collections import namedtuple
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, get_args

from prefix_model.core.json_values import thaw
from prefix_model.core.requests import request_to_json
from prefix_model.vectors.codec import action_to_json
from prefix_model.formats.event_lines import event_to_line
from prefix_model.loop.actions import Action
from prefix_model.loop.explore import (
    ACTION_KINDS,
    ALPHABET_TEXT,
    OUTCOMES,
    ROOT_NAMES,
    Exploration,
    Found,
    Node,
    Search,
    expand,
    explore,
    fingerprint,
    root_nodes,
)
from prefix_model.loop.properties import PROPERTIES, Violation, check_all
from prefix_model.loop.semantics import HARNESS, Semantics
from prefix_model.loop.transitions import apply
from prefix_model.loop.variants import VARIANTS
from prefix_model.loop.world import EMPTY_WORLD, World

__all__ = ["EXPLORE_HELP", "ExploreError", "Measured", "semantics_named", "roots_named", "run_exploration", "explore_parallel", "report_json", "report_text", "verdict", "itf_trace", "write_itf", "ITF_VARS"]

EXPLORE_HELP = f"""\
Breadth-first explicit-state exploration of the loop (spec §10.5): every state the alphabet below
reaches within DEPTH moves of a root is visited once (told apart by a 16-byte blake2b
fingerprint), every property of spec §11 is checked in it, and every action kind and outcome class
is counted — one never reached is listed as unreached. A violation stops the search and prints the
shortest action script that reaches it (setup included), which `loop.transitions.apply` replays.

{ALPHABET_TEXT}
--variant NAME explores a faulty design of `prefix-model variants` instead of the harness's; the
search must then find a violation. --design FILE.py:NAME explores a design of your own (a
Semantics subclass or instance in FILE.py; designs.md of the installed specification) as the harness's: a violation is a
finding, printed with its shortest script. --itf FILE writes the counterexample as an ITF trace (Apalache
ADR-015 JSON: one state per action, with each session's events, the requests sent, the instances
and the violations found there). Figures: distinct states, transitions, the depth reached, states
per second, bytes per state (the visited set's own size, and the process's peak memory). Run with
contracts off (the installed command's default) for speed.

example:
  prefix-model explore --depth 7
  prefix-model explore --depth 9 --json
  prefix-model explore --depth 8 --variant compose-per-turn --itf counterexample.itf.json
  prefix-model explore --depth 7 --design my_design.py:MyDesign

exit status: 0 no violation (with --variant: a violation found); 1 a violation (with --variant: none
found within DEPTH); 2 unusable arguments, a --design that does not load or raises, or an --itf
file that cannot be written
"""


class ExploreError(Exception):
    """An unusable argument: one line on stderr, exit 2."""


def semantics_named(name: str | None) -> Semantics:
    """Return the harness's semantics, or those of the variant ``name``."""
    if name is None:
        return HARNESS
    for variant in VARIANTS:
        if variant.name == name:
            return variant.semantics
    raise ExploreError(f"--variant {name!r}: no such variant (one of: {', '.join(v.name for v in VARIANTS)})")


def roots_named(names: str | None) -> tuple[str, ...] | None:
    """Return the roots that ``--roots`` names (None: all of them)."""
    if names is None:
        return None
    chosen = tuple(n.strip() for n in names.split(",") if n.strip())
    known = ROOT_NAMES
    unknown = [n for n in chosen if n not in known]
    if unknown or not chosen:
        raise ExploreError(f"--roots {names!r}: name one or more of {', '.join(known)}")
    return chosen


@dataclass(frozen=True, slots=True)
class Measured:
    """An exploration with what the edge measured around it."""

    exploration: Exploration
    variant: str | None
    roots: tuple[str, ...]  # the roots explored (loop.explore.ROOT_NAMES)
    seconds: float
    visited_bytes: int  # the visited set: its table and its digests, as sys.getsizeof counts them
    peak_rss_bytes: int  # the process's peak resident memory (getrusage), plus jobs x the largest worker's with --jobs
    design: str | None = None  # a design of the user's (--design FILE.py:NAME), by its label

    @property
    def states_per_second(self) -> float:
        return self.exploration.states / self.seconds if self.seconds > 0 else 0.0


# --- Two processes (or more): each expands its share of a level; the parent dedups in a fixed order ---
#
# Each worker keeps the states it reached and the parent granted it (never sending a world): per
# level it expands its own, sends each child's fingerprint, parent and move, the parent admits the
# ones no worker and no earlier level reached (worker 0's first, each in its order), and the worker
# checks every property in those and keeps them as its next share. The set of states per level, so
# every count, is the one process's; the worlds never cross a pipe.

_Candidate = tuple[bytes, int, Action]


def _worker(conn: Connection, share: list[tuple[int, Node]], semantics: Semantics) -> None:
    try:
        while True:
            if conn.recv() != "expand":
                return
            search = Search(Exploration(0))
            candidates: list[_Candidate] = []
            children: list[Node] = []
            for index, node in share:
                for action, child, labels in expand(node, semantics):
                    search.count(action, labels)
                    key = fingerprint(child)
                    if key not in search.result.visited:  # a later duplicate within this worker is never new
                        search.result.visited.add(key)
                        candidates.append((key, index, action))
                        children.append(child)
            run = search.result
            conn.send((candidates, run.transitions, dict(run.actions), dict(run.outcomes)))
            admitted: list[tuple[int, int]] = conn.recv()  # (position in candidates, global index)
            share = [(index, children[position]) for position, index in admitted]
            violated = None
            for index, node in share:
                violations = check_all(node.world)
                if violations:
                    violated = (index, violations)
                    break
            conn.send((violated, len(share)))
    except EOFError:  # the parent has gone
        return
    except Exception as error:  # a design's own code raised (or the model did): the parent reports it, where it was raised
        where = traceback.extract_tb(error.__traceback__)[-1]
        conn.send(_Raised(f"a worker process raised {type(error).__name__}: {error} (at {where.filename}:{where.lineno})"))


@dataclass(frozen=True, slots=True)
class _Raised:
    """What a worker sends instead of its answer when it raised: one line for the parent to report."""

    message: str


def _answer(pipe: Connection) -> Any:
    """A worker's answer; a worker that raised stops the search with its one line."""
    answer = pipe.recv()
    if isinstance(answer, _Raised):
        raise ExploreError(answer.message)
    return answer


def explore_parallel(depth: int, semantics: Semantics, behaviours: tuple[str, ...] | None, jobs: int,
                     progress: Callable[[int, int], None] | None = None) -> Exploration:  # fmt: skip
    """``loop.explore`` with each level's expansion and property checks split over ``jobs`` processes (fork)."""
    import multiprocessing

    search = Search(Exploration(depth))
    run = search.result
    frontier: list[tuple[int, Node]] = []
    built = root_nodes(behaviours, semantics)
    shortest = min((len(setup) for setup, _ in built), default=0)

    def found(index: int, violations: tuple[Violation, ...], level: int) -> None:
        script = search.script(index)
        if run.found is None or len(script) < len(run.found.script):
            run.found = Found(violations, script, level)

    def settled(level: int) -> bool:  # as loop.explore's: no state at ``level`` or deeper has a shorter script
        return run.found is not None and len(run.found.script) <= shortest + level

    for setup, node in built:
        index = search.add(fingerprint(node), -1, setup, 0)
        if index is not None:
            violations = check_all(node.world)
            if violations:
                found(index, violations, 0)
            frontier.append((index, node))
    if settled(0):
        return run
    context = multiprocessing.get_context("fork")
    pipes, workers = [], []
    for w in range(jobs):
        mine, theirs = context.Pipe()
        worker = context.Process(target=_worker, args=(theirs, frontier[w::jobs], semantics), daemon=True)
        worker.start()
        theirs.close()
        pipes.append(mine)
        workers.append(worker)
    try:
        for level in range(depth):
            if settled(level + 1):
                return run
            if progress is not None:
                progress(level, run.states)
            for pipe in pipes:
                pipe.send("expand")
            replies = [_answer(pipe) for pipe in pipes]
            grants: list[list[tuple[int, int]]] = []
            for candidates, transitions, actions, outcomes in replies:
                run.transitions += transitions
                run.actions.update(actions)
                run.outcomes.update(outcomes)
                granted = []
                for position, (key, parent, action) in enumerate(candidates):
                    index = search.add(key, parent, action, level + 1)
                    if index is not None:
                        granted.append((position, index))
                grants.append(granted)
            for pipe, granted in zip(pipes, grants):
                pipe.send(granted)
            checked = [_answer(pipe) for pipe in pipes]
            # Each worker's first violation is its shortest (its share keeps fresh roots' states first);
            # of those, the shortest script, then the first state reached, as one process finds it.
            violated = sorted((len(search.script(i)), i, v) for (i, v), _ in (c for c in checked if c[0] is not None))
            if violated:
                _, index, violations = violated[0]
                found(index, violations, level + 1)
                if settled(level + 1):
                    return run
            if not any(size for _, size in checked):
                break
        return run
    finally:
        for pipe in pipes:
            try:
                pipe.send("stop")
            except OSError:
                pass
            pipe.close()
        for worker in workers:
            worker.join(timeout=10)


def run_exploration(depth: int, variant: str | None = None, behaviours: tuple[str, ...] | None = None, jobs: int = 1,
                    design: tuple[str, Semantics] | None = None) -> Measured:  # fmt: skip
    """Explore to ``depth`` (a progress bar on a terminal's stderr) and measure the run.

    ``design`` (its label and semantics: ``--design``) is explored as the harness's would be: a violation is the finding.
    """
    if depth < 0:
        raise ExploreError(f"--depth {depth}: a depth is a non-negative number of moves")
    if jobs < 1:
        raise ExploreError(f"--jobs {jobs}: at least one process")
    semantics = semantics_named(variant) if design is None else design[1]
    progress: Callable[[int, int], None] | None = None
    bar: Any = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(desc="exploring", unit=" states", unit_scale=True, leave=False)

        def progress(level: int, states: int) -> None:
            bar.set_postfix_str(f"depth {level + 1}/{depth}", refresh=False)
            bar.update(states - bar.n)

    started = time.perf_counter()
    try:
        exploration = explore(depth, semantics, behaviours, progress) if jobs == 1 else explore_parallel(depth, semantics, behaviours, jobs, progress)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - started
    visited = exploration.visited
    size = sys.getsizeof(visited) + sum(sys.getsizeof(key) for key in visited)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    if jobs > 1:  # the workers hold the frontiers: count each as large as the largest one was
        peak += jobs * resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    chosen = tuple(name for name in ROOT_NAMES if behaviours is None or name in behaviours)
    return Measured(exploration, variant, chosen, seconds, size, peak, None if design is None else design[0])


def _kinds_json(counts: Mapping[str, int], catalogue: tuple[str, ...]) -> dict[str, int]:
    return {kind: counts.get(kind, 0) for kind in catalogue}


def _all_action_types() -> tuple[str, ...]:
    """Every action type of the loop's alphabet (``actions.Action``), so the ones the explorer never offers are named."""
    return tuple(arm.__name__ for arm in get_args(Action))


def _outside(offered: tuple[str, ...]) -> tuple[str, ...]:
    named = {kind.split("+")[0].split(":")[0] for kind in offered}
    return tuple(name for name in _all_action_types() if name not in named)


def _found_json(found: Found) -> dict[str, object]:
    return {
        "rules": sorted({v.rule for v in found.violations}),
        "violations": [str(v) for v in found.violations],
        "length": len(found.script),
        "depth": found.depth,
        "script": [thaw(action_to_json(a)) for a in found.script],
        "python": [repr(a) for a in found.script],
    }


def report_json(measured: Measured) -> dict[str, object]:
    """Return the machine report of an exploration."""
    run = measured.exploration
    return {
        "depth": run.depth,
        "roots": list(measured.roots),
        "reached": run.reached,
        "variant": measured.variant,
        "design": measured.design,
        "states": run.states,
        "transitions": run.transitions,
        "levels": list(run.levels),
        "seconds": round(measured.seconds, 3),
        "statesPerSecond": round(measured.states_per_second, 1),
        "bytesPerState": {
            "visited": round(measured.visited_bytes / max(run.states, 1), 1),
            "peakProcess": round(measured.peak_rss_bytes / max(run.states, 1), 1),
        },
        "properties": [rule for rule, _ in PROPERTIES],
        "actions": _kinds_json(run.actions, ACTION_KINDS),
        "notInAlphabet": list(_outside(ACTION_KINDS)),
        "outcomes": _kinds_json(run.outcomes, OUTCOMES),
        "unreached": {
            "actions": [k for k in ACTION_KINDS if not run.actions.get(k)],
            "outcomes": [k for k in OUTCOMES if not run.outcomes.get(k)],
        },
        "violation": None if run.found is None else _found_json(run.found),
    }


def _table(title: str, counts: Mapping[str, int], catalogue: tuple[str, ...]) -> list[str]:
    width = max(len(k) for k in catalogue)
    lines = [title]
    for kind in catalogue:
        count = counts.get(kind, 0)
        lines.append(f"  {kind:{width}}  {count:>9}" + ("  UNREACHED" if count == 0 else ""))
    return lines


def report_text(measured: Measured) -> str:
    """Return the report a person reads."""
    run = measured.exploration
    design = f"variant {measured.variant}" if measured.variant is not None else f"design {measured.design}" if measured.design else "the harness's semantics"
    lines = [
        f"explored {design} from {len(measured.roots)} roots ({', '.join(measured.roots)}) to depth {run.depth} (deepest state at depth {run.reached}):"
        f" {run.states} distinct states, {run.transitions} transitions",
        f"  states first reached per depth: {' '.join(map(str, run.levels))}",
        f"  {measured.seconds:.1f} s, {measured.states_per_second:.0f} states/s;"
        f" bytes per state: {measured.visited_bytes / max(run.states, 1):.0f} in the visited set,"
        f" {measured.peak_rss_bytes / max(run.states, 1):.0f} of the process's peak memory",
        f"  properties checked in every state: {', '.join(rule for rule, _ in PROPERTIES)}",
    ]
    lines += _table("action kinds (transitions taken):", run.actions, ACTION_KINDS)
    lines.append(f"  not in the alphabet: {', '.join(_outside(ACTION_KINDS))}")
    lines += _table("outcome classes (transitions showing each):", run.outcomes, OUTCOMES)
    unreached = [k for k in ACTION_KINDS if not run.actions.get(k)] + [k for k in OUTCOMES if not run.outcomes.get(k)]
    lines.append(f"unreached at this depth: {', '.join(unreached)}" if unreached else "every action kind and outcome class reached")
    if run.found is None:
        lines.append("no violation" + (" (the variant was NOT caught within this depth)" if measured.variant else ""))
    else:
        found = run.found
        lines.append(f"VIOLATION at depth {found.depth}: {'; '.join(str(v) for v in found.violations)}")
        lines.append(f"shortest script ({len(found.script)} actions, setup included; loop.transitions.apply replays it):")
        lines += [f"  {action!r}," for action in found.script]
    return "\n".join(lines)


def verdict(measured: Measured) -> int:
    """Return the exit status: 0 as expected (no violation; for a variant, one found), else 1."""
    caught = measured.exploration.found is not None
    return (0 if caught else 1) if measured.variant is not None else (1 if caught else 0)


# --- ITF (Apalache ADR-015) ---

def _itf_value(value: Any) -> Any:
    """Return ``value`` (plain JSON) as the Python value itf-py encodes: objects as records, null as ``None``'s variant."""
    from itf_py import itf_variant

    if value is None:
        none = itf_variant(namedtuple("None", ["value"]))
        return none(value=())
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return repr(value)  # ITF has no floats
    if isinstance(value, list | tuple):
        return [_itf_value(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and k.isidentifier() and not k.startswith("_") for k in value):
            record = namedtuple("Rec", list(value))  # type: ignore[misc]
            return record(**{k: _itf_value(v) for k, v in value.items()})
        return {str(k): _itf_value(v) for k, v in value.items()}  # a map, keys as strings
    raise ExploreError(f"cannot write {value!r} as an ITF value")


def _state_json(world: World, action: str, semantics: Semantics) -> dict[str, Any]:
    sessions = [{"id": s.id, "events": [json.loads(event_to_line(e)) for e in s.log.events]} for s in world.sessions]
    requests = [{"instance": r.instance_id, "session": r.session_id, "turn": r.turn, "step": r.step,
                 "loopRequest": r.loop_request, "request": thaw(request_to_json(r.request))} for r in world.requests]  # fmt: skip
    instances = [{"id": i.id, "agent": i.agent, "session": i.session_id, "phase": i.phase.value, "turn": i.turn,
                  "step": i.step, "prefixCached": i.prefix is not None, "disposed": i.disposed} for i in world.instances]  # fmt: skip
    return {"action": action, "sessions": sessions, "requests": requests, "instances": instances,
            "violations": [str(v) for v in check_all(world)]}  # fmt: skip


ITF_VARS = ("action", "sessions", "requests", "instances", "violations")


def itf_trace(found: Found, semantics: Semantics, variant: str | None) -> dict[str, Any]:
    """Return the ITF trace of a counterexample: the empty world, then one state after each action of its script."""
    from itf_py import State, Trace, trace_to_json

    worlds: list[tuple[str, World]] = [("init", EMPTY_WORLD)]
    for action in found.script:
        worlds.append((repr(action), apply(worlds[-1][1], action, semantics)))
    states = [State({"index": n}, {k: _itf_value(v) for k, v in _state_json(w, a, semantics).items()}) for n, (a, w) in enumerate(worlds)]
    meta = {"format": "ITF", "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": "prefix-model explore", "variant": variant or "harness",
            "description": f"shortest script to a violation of {', '.join(sorted({v.rule for v in found.violations}))}"}  # fmt: skip
    trace: dict[str, Any] = trace_to_json(Trace(meta, [], list(ITF_VARS), states, None))
    del trace["loop"]  # optional in ADR-015, and null is not an ITF value
    trace.pop("params")
    return trace


def write_itf(path: Path, found: Found, semantics: Semantics, variant: str | None) -> None:
    """Write the counterexample's ITF trace to ``path`` (whole or not at all)."""
    text = json.dumps(itf_trace(found, semantics, variant), ensure_ascii=False, indent=1) + "\n"
    scratch = path.with_name(path.name + ".tmp")
    try:
        scratch.write_text(text, encoding="utf-8")
        scratch.replace(path)
    except OSError as error:
        scratch.unlink(missing_ok=True)
        raise ExploreError(f"{path}: {error.strerror or error}") from None
