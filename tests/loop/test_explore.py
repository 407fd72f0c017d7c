"""§10.5 bounded exploration — every state within a bound, every property in each, counts pinned, violations shortest.

The CI bounds of ``proofs/explore-counts.json`` run in a subprocess with contracts off and a hash
seed of its own (the manifest was written by another process): equal counts show the exploration
deterministic and the model unchanged (EXP-3). The ``contracts`` bound runs here, contracts on,
and gives the same counts. Planted faults — faulty variants of §13 — show the search able to fail,
each caught at the depth stated with a script that replays (EXP-2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prefix_model.core.contracts import ENABLED
from prefix_model.core.events import COMPACT_SUMMARY
from prefix_model.core.headers import LlmCallConfig
from prefix_model.loop.actions import Action, BeginStep, Cancel, Compose, Create, Dispatch, ForkDrive, Inject, PostStep, PreStep, Reply, Resume, RunTools, SendPrompt
from prefix_model.loop.explore import (
    ACTION_KINDS,
    BEHAVIOURS,
    BUDGETS,
    EXTRA_KINDS,
    OUTCOMES,
    PROMPTS,
    ROOT_NAMES,
    ROOTS,
    SEEDED_BUDGET,
    Budget,
    Exploration,
    Node,
    action_kind,
    explore,
    fingerprint,
    moves,
    outcomes,
    replay,
    root_nodes,
    roots,
    step,
)
from prefix_model.loop.properties import check_all
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.transitions import apply
from prefix_model.loop.variants import VARIANTS
from prefix_model.loop.world import EMPTY_WORLD, AgentOptions, World, message_text

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = json.loads((ROOT / "proofs" / "explore-counts.json").read_text(encoding="utf-8"))["bounds"]


def _run_bound_elsewhere(name: str, seed: str) -> dict[str, object]:
    """The counts of bound ``name`` from ``prefix-model explore --json`` in a fresh process (contracts off)."""
    bound = MANIFEST[name]
    return _explore_elsewhere(seed, "--depth", str(bound["depth"]), *(() if bound["roots"] is None else ("--roots", ",".join(bound["roots"]))))


def _explore_elsewhere(seed: str, *args: str, code: int = 0) -> dict[str, object]:
    """``prefix-model explore ARGS --json`` in a fresh process (contracts off), which must exit ``code``."""
    command = [sys.executable, "-c", "from prefix_model.edge.launch import main; raise SystemExit(main())", "explore", *args, "--json"]
    env = os.environ | {"PYTHONHASHSEED": seed, "PREFIX_MODEL_CONTRACTS": "0"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == code, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _counts(report: dict[str, object]) -> dict[str, object]:
    return {k: report[k] for k in ("states", "transitions", "levels", "actions", "outcomes")}


@pytest.mark.spec("EXP-3", "EXP-1")
def test_the_ci_bound_gives_the_recorded_counts_and_reaches_every_action_kind() -> None:
    report = _run_bound_elsewhere("ci", "4711")
    assert _counts(report) == MANIFEST["ci"]["counts"]
    assert report["violation"] is None
    # A fresh root reaches every kind but the extras, which only a seeded root's budget offers.
    assert report["unreached"]["actions"] == list(EXTRA_KINDS)  # type: ignore[index]
    actions = report["actions"]
    assert isinstance(actions, dict) and all(actions[k] > 0 for k in ACTION_KINDS if k not in EXTRA_KINDS)


@pytest.mark.spec("EXP-3", "EXP-1")
def test_every_root_to_the_ci_roots_bound_gives_the_recorded_counts() -> None:
    report = _run_bound_elsewhere("ci-roots", "1")
    assert _counts(report) == MANIFEST["ci-roots"]["counts"]
    assert report["violation"] is None and report["roots"] == [root.name for root in ROOTS if not root.seeded]


@pytest.mark.spec("EXP-3", "EXP-1")
def test_the_seeded_root_reaches_a_resumed_and_a_forked_instance_s_first_request_at_the_ci_resume_bound() -> None:
    """Six moves after a whole turn: the first requests of a resumed and a forked instance, each anchored by a resume snapshot."""
    report = _run_bound_elsewhere("ci-resume", "77")
    assert _counts(report) == MANIFEST["ci-resume"]["counts"]
    assert report["violation"] is None and report["roots"] == ["drift-after-turn"]
    outcomes, actions = report["outcomes"], report["actions"]
    assert isinstance(outcomes, dict) and isinstance(actions, dict)
    assert outcomes["header: resume"] > 0 and outcomes["session resumed"] > 0 and outcomes["session forked"] > 0
    assert outcomes["header: change"] > 0 and outcomes["header: unchanged (not logged)"] > 0
    assert outcomes["turn end: rejected"] > 0 and outcomes["turn end: max-tokens"] > 0
    assert all(actions[k] > 0 for k in EXTRA_KINDS)


def test_the_deep_bound_s_recorded_counts_reach_every_action_kind_and_outcome_class() -> None:
    """What ``make explore-deep`` checks against: no kind or class is recorded as unreached (the issue's bar for the deep bound)."""
    counts = MANIFEST["deep"]["counts"]
    assert MANIFEST["deep"]["roots"] is None
    assert [k for k in ACTION_KINDS if not counts["actions"][k]] == [] and [k for k in OUTCOMES if not counts["outcomes"][k]] == []


@pytest.mark.spec("EXP-3")
def test_contracts_on_give_the_same_counts() -> None:
    assert ENABLED  # the suite runs with contracts on: apply's guard and the loop's contracts hold at every transition
    bound = MANIFEST["contracts"]
    run = explore(bound["depth"])
    assert run.found is None
    assert run.as_counts() == bound["counts"]


@pytest.mark.spec("EXP-1")
def test_every_state_is_checked_once_and_the_levels_add_up() -> None:
    run = explore(3, behaviours=("prepend",))
    assert run.states == sum(run.levels) == len(run.visited)
    assert run.reached == 3 and run.levels[0] == 1
    assert run.transitions == sum(run.actions.values())
    # Unreached kinds are counted as zero, not left out: at depth 3 no request is sent yet.
    counts = run.as_counts()
    actions, classes = counts["actions"], counts["outcomes"]
    assert isinstance(actions, dict) and isinstance(classes, dict)
    assert list(actions) == list(ACTION_KINDS) and set(OUTCOMES) <= set(classes)
    assert actions["Dispatch"] == 0 and classes["request sent"] == 0


def _root() -> Node:
    world = EMPTY_WORLD
    for action in roots(("prepend",))[0]:
        world = apply(world, action)
    return Node(world)


@pytest.mark.spec("EXP-1")
def test_the_fingerprint_tells_apart_what_a_transition_or_property_reads() -> None:
    node = _root()
    hello = step(node, SendPrompt(0, "hello"))
    assert fingerprint(hello) != fingerprint(node)
    assert fingerprint(step(node, SendPrompt(0, "hello"))) == fingerprint(hello)  # built again: equal
    # The budget left is part of the state: a spent cancel is not an unspent one.
    assert fingerprint(Node(node.world, Budget(cancels=0))) != fingerprint(node)
    # A cancel on an idle instance changes nothing but the budget.
    cancelled = step(node, Cancel(0))
    assert cancelled.world == node.world and fingerprint(cancelled) == fingerprint(Node(node.world, Budget(cancels=0)))
    # Ghost state counts: the same log with another trace is another state.
    marked = Node(World(node.world.sessions, node.world.instances, node.world.listeners, node.world.requests, ()), node.budget)
    assert fingerprint(marked) != fingerprint(node)


@pytest.mark.spec("EXP-1")
def test_the_interleaving_of_two_sessions_is_not_part_of_the_state() -> None:
    """Two instances over two sessions stepping in either order reach one state, and the properties agree."""
    base = replay((*roots(("prepend",))[0], Create("aux", "s9")))
    a = (SendPrompt(0, "hello"), BeginStep(0), Compose(0))
    b = (SendPrompt(1, "hello"), BeginStep(1), Compose(1))
    one, two = Node(base), Node(base)
    for action in a + b:
        one = step(one, action)
    for action in b + a:
        two = step(two, action)
    assert one.world.trace != two.world.trace  # the global order differs
    assert fingerprint(one) == fingerprint(two)
    assert check_all(one.world) == check_all(two.world) == ()


@pytest.mark.spec("EXP-1")
def test_outcome_classes_of_single_transitions() -> None:
    node = _root()
    assert outcomes(node.world, step(node, Cancel(0)).world, Cancel(0)) == ("no-op",)
    opened = step(node, SendPrompt(0, "hello"))
    assert outcomes(node.world, opened.world, SendPrompt(0, "hello")) == ("turn opened by a prompt",)
    assert outcomes(opened.world, step(opened, SendPrompt(0, "hello")).world, SendPrompt(0, "hello")) == ("prompt queued",)
    assert outcomes(opened.world, step(opened, Inject(0, "note")).world, Inject(0, "note")) == ("inject appended",)
    composing = step(step(opened, BeginStep(0)), Compose(0))
    sent = step(step(composing, PreStep(0)), Dispatch(0))
    assert outcomes(step(composing, PreStep(0)).world, sent.world, Dispatch(0)) == ("header: initial", "request sent")
    assert Inject(0, "note") not in moves(Node(opened.world, Budget(injects=0)))  # a spent budget offers no more


# --- the search can fail: faulty variants are caught with a shortest script ---

# (variant, a rule it must break, the depth of the shortest violation from the "prepend" root).
CAUGHT = (
    ("prefix-as-history", "PFX-1", 3),
    ("prefix-in-reminder", "PFX-1", 3),
    ("prefix-second-home", "PFX-11", 5),
    ("listeners-reversed", "PFX-8", 3),
    ("meter-misses-prefix", "TOK-1", 7),
    ("cache-interrupted", "PFX-4", 4),
    ("prefix-not-logged", "PFX-3", 5),
    ("prefix-after-history", "REC-1", 5),
    ("prefix-in-system", "PFX-3", 5),
    ("effort-from-options", "REC-2", 5),
)


@pytest.mark.spec("EXP-2")
@pytest.mark.parametrize(("name", "rule", "depth"), CAUGHT, ids=[c[0] for c in CAUGHT])
def test_a_faulty_variant_is_caught_with_a_shortest_replayable_script(name: str, rule: str, depth: int) -> None:
    semantics = next(v.semantics for v in VARIANTS if v.name == name)
    run = explore(depth + 2, semantics, ("prepend",))
    assert run.found is not None
    found = run.found
    assert found.depth == depth and rule in {v.rule for v in found.violations}
    assert len(found.script) == len(roots(("prepend",))[0]) + depth
    # Replayed strictly, the script reaches the same violations; the harness passes the same script.
    assert check_all(replay(found.script, semantics)) == found.violations
    assert check_all(replay(found.script, HARNESS)) == ()
    # Shortest: nothing violates one move earlier.
    assert explore(depth - 1, semantics, ("prepend",)).found is None


@pytest.mark.spec("EXP-2")
def test_a_stale_prefix_on_a_resumed_instance_is_caught_six_moves_after_the_seeded_turn() -> None:
    """L2 drifts after its first call, so a resumed instance that sends the logged prefix sends what its own waterfall did not give."""
    caught = _explore_elsewhere("5", "--depth", "6", "--roots", "drift-after-turn", "--variant", "stale-on-new-instance")
    found = caught["violation"]
    assert isinstance(found, dict) and found["rules"] == ["PFX-12"] and found["depth"] == 6
    assert found["length"] == len(roots(("drift-after-turn",))[0]) + 6 and "Resume(" in "".join(found["python"])
    assert _explore_elsewhere("5", "--depth", "5", "--roots", "drift-after-turn", "--variant", "stale-on-new-instance", code=1)["violation"] is None


@pytest.mark.spec("EXP-2")
def test_a_violation_below_a_seeded_root_gives_way_to_a_shorter_script_from_a_fresh_one() -> None:
    """The seeded root's setup already breaks PFX-1 under prefix-as-history (depth 0, 10 actions); a fresh root does in 6."""
    semantics = next(v.semantics for v in VARIANTS if v.name == "prefix-as-history")
    seeded = explore(5, semantics, ("drift-after-turn",))
    assert seeded.found is not None and seeded.found.depth == 0 and len(seeded.found.script) == 10
    both = explore(5, semantics, ("prepend", "drift-after-turn"))
    assert both.found is not None and both.found.depth == 3 and len(both.found.script) == 6
    assert both.found.script[:3] == roots(("prepend",))[0]


@pytest.mark.spec("EXP-1")
def test_a_seeded_root_starts_after_a_whole_turn_and_only_its_budget_offers_the_extras() -> None:
    ((fresh_setup, fresh), (seeded_setup, seeded)) = root_nodes(("prepend", "drift-after-turn"))
    assert seeded_setup[3:] == (SendPrompt(0, "hello"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0), Reply(0, text="done"), PostStep(0))
    assert (fresh.budget, seeded.budget) == (BUDGETS, SEEDED_BUDGET) and BUDGETS.extras == 0 < SEEDED_BUDGET.extras
    kinds = {action_kind(m) for m in moves(seeded)}
    assert {"Resume", "ForkDrive", "Steer", "SetSystem", "SetTools", "MutateContribution", "MountCompaction", "SendPrompt:blocked"} <= kinds
    assert not {action_kind(m) for m in moves(fresh)} & set(EXTRA_KINDS)
    # One extra per run: after a Steer no other extra is offered.
    steered = step(seeded, next(m for m in moves(seeded) if action_kind(m) == "Steer"))
    assert not {action_kind(m) for m in moves(steered)} & set(EXTRA_KINDS)
    # The drifting listener: the resumed instance composes "<prefix L2 v2>" where the logged prefix holds v1.
    resumed = _walk(seeded, next(m for m in moves(seeded) if isinstance(m, Resume)), SendPrompt(1, "hello"), BeginStep(1), Compose(1))
    assert [message_text(m) for m in resumed.world.instance(1).prefix or ()] == ["<prefix L1 v1>", "<prefix L2 v2>"]
    ready = _walk(resumed, PreStep(1))
    assert outcomes(ready.world, step(ready, Dispatch(1)).world, Dispatch(1)) == ("header: resume", "request sent")
    assert ROOT_NAMES[-1] == "drift-after-turn" and all(not r.seeded for r in ROOTS[:-1])


@pytest.mark.spec("EXP-2")
def test_a_root_can_be_the_shortest_counterexample() -> None:
    """With L2 cancelling on its first call, a cached interrupted composition is three moves away."""
    semantics = next(v.semantics for v in VARIANTS if v.name == "cache-interrupted")
    run = explore(5, semantics)
    assert run.found is not None and run.found.depth == 3
    assert "PFX-4" in {v.rule for v in run.found.violations}
    assert run.found.script[:3] == roots(("cancel-once",))[0]


def test_replay_refuses_a_script_the_guard_refuses() -> None:
    with pytest.raises(ValueError, match="not enabled"):
        replay((*roots(("prepend",))[0], Compose(0)))


@pytest.mark.spec("EXP-3")
def test_the_counts_check_fails_on_a_changed_count(tmp_path: Path) -> None:
    """``make explore-deep``'s checker, on the small bound: the recorded counts pass, one changed count fails."""
    document = json.loads((ROOT / "proofs" / "explore-counts.json").read_text(encoding="utf-8"))
    script = [sys.executable, str(ROOT / "proofs" / "explore_counts.py"), "--check", "contracts", "--manifest"]
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document), encoding="utf-8")
    passed = subprocess.run([*script, str(good)], capture_output=True, text=True, timeout=300)
    assert passed.returncode == 0, passed.stderr
    document["bounds"]["contracts"]["counts"]["transitions"] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    failed = subprocess.run([*script, str(bad)], capture_output=True, text=True, timeout=300)
    assert failed.returncode == 1 and "counts differ from bad.json in transitions" in failed.stderr


# --- the explorer's own contracts can fail: a wrong twin of each, under the same contracts ---


def _twins() -> list[tuple[str, object, tuple[object, ...]]]:
    from dataclasses import replace

    from prefix_model.loop import explore as module

    node = _root()
    return [
        ("the model's guard decides every move", lambda node: (*module.moves(node), Dispatch(0)), (node,)),  # Dispatch before any step
        ("each move is offered once", lambda node: module.moves(node) * 2, (node,)),
        ("no once-only input is used past its budget", lambda node, action, semantics=HARNESS: replace(module.step(node, action), budget=Budget(cancels=-1)),
         (node, SendPrompt(0, "hello"))),
        ("every action counted is of a kind the report lists", lambda action: "Teleport", (SendPrompt(0, "hello"),)),
        ("a state's fingerprint is 16 bytes", lambda node: module.fingerprint(node)[:8], (node,)),
        ("a root's setup is its two registrations and its instance", lambda names=None: tuple(r[:2] for r in module.roots(names)), (None,)),
        ("one node per root, built by its setup", lambda behaviours, semantics=HARNESS: module.root_nodes(behaviours)[:1], (None,)),
    ]


@pytest.mark.spec("EXP-1")
@pytest.mark.parametrize("index", range(7))
def test_a_wrong_twin_of_an_explorer_function_breaks_its_contract(index: int) -> None:
    import icontract
    from prefix_model.loop import explore as module
    from proofs.bugs_detected import broken_twin

    cores = [module.moves, module.moves, module.step, module.action_kind, module.fingerprint, module.roots, module.root_nodes]
    contract, variant, args = _twins()[index]
    twin = broken_twin(cores[index], variant)  # type: ignore[arg-type]
    with pytest.raises(icontract.ViolationError, match=f"EXP-1: {contract}"):
        twin(*args)


@pytest.mark.spec("EXP-1")
def test_a_search_that_numbers_a_state_out_of_order_breaks_its_contract() -> None:
    import icontract
    from prefix_model.loop.explore import Exploration, Search
    from proofs.bugs_detected import broken_twin

    search = Search(Exploration(1))

    def skips(self: Search, key: bytes, parent: int, action: object, level: int) -> int | None:
        index = Search.add(self, key, parent, action, level)  # type: ignore[arg-type]
        return None if index is None else index + 1

    twin = broken_twin(Search.add, skips)
    assert Search.add(search, b"a" * 16, -1, (), 0) == 0
    with pytest.raises(icontract.ViolationError, match="EXP-1: states are numbered in the order first reached"):
        twin(search, b"b" * 16, 0, SendPrompt(0, "hello"), 1)


# --- the alphabet is what ALPHABET_TEXT states, and the search reports what it counts ---


def _walk(node: Node, *actions: Action) -> Node:
    for action in actions:
        assert action in moves(node), action
        node = step(node, action)
    return node


@pytest.mark.spec("EXP-1")
def test_the_alphabet_is_the_one_it_states() -> None:
    # L1 is global and contributes before L2 (registration order): both are in the first composition.
    composed = _walk(_root(), SendPrompt(0, "hello"), BeginStep(0), Compose(0))
    assert [message_text(m) for m in composed.world.instance(0).prefix or ()] == ["<prefix L1 v1>", "<prefix L2 v1>"]
    # "-once": on its first call only, then it prepends.
    prepends = dict(BEHAVIOURS)["prepend"]
    for name, script in BEHAVIOURS:
        if name.endswith("-once"):
            assert len(script) == 2 and script[1] == prepends[0], name
    # The changed config sets reasoningEffort "max" and nothing else of the options.
    at_request = _walk(composed, PreStep(0))
    (changed,) = [m.config for m in moves(at_request) if isinstance(m, Dispatch) and m.config is not None]
    options = AgentOptions().config()
    assert (changed.provider, changed.model, changed.reasoning_effort) == (options.provider, options.model, "max")
    # The long prompt's compaction lands; the short one's is refused (CMP-6).
    for prompt, lands in ((PROMPTS[1], True), (PROMPTS[0], False)):
        pre = _walk(_root(), SendPrompt(0, prompt), BeginStep(0), Compose(0))
        (compacting,) = [m for m in moves(pre) if isinstance(m, PreStep) and m.compact is not None]
        assert (COMPACT_SUMMARY in [e.type for e in step(pre, compacting).world.session("s1").log.events]) is lands


@pytest.mark.spec("EXP-1")
def test_each_once_per_run_input_spends_its_own_budget_and_a_plain_move_none() -> None:
    at_request = _walk(_root(), SendPrompt(0, "hello"), BeginStep(0), Compose(0), PreStep(0))
    assert step(at_request, Dispatch(0)).budget == Budget()
    changing = next(m for m in moves(at_request) if isinstance(m, Dispatch) and m.config is not None)
    assert step(at_request, changing).budget == Budget(changes=0)
    ended = _walk(at_request, Dispatch(0), Reply(0, text="done"), PostStep(0))
    fork = next(m for m in moves(ended) if isinstance(m, ForkDrive))
    resume = next(m for m in moves(ended) if isinstance(m, Resume))
    assert (step(ended, fork).budget, step(ended, resume).budget) == (Budget(forks=0), Budget(resumes=0))


@pytest.mark.spec("EXP-1")
def test_each_action_kind_names_its_move() -> None:
    config = LlmCallConfig("mock", "mock-model", "max")
    kinds = [action_kind(a) for a in (BeginStep(0), Compose(0), PreStep(0), PreStep(0, compact=(0, 0)), Dispatch(0), Dispatch(0, config),
                                      Reply(0, text="t"), Reply(0, tool_calls=(("c", "n", "{}"),)), Reply(0, failure="f", retry=True),
                                      Reply(0, failure="f"), Reply(0, text="t", max_tokens=True), Reply(0, stream=()),
                                      RunTools(0), PostStep(0), PostStep(0, compact=(0, 0)), SendPrompt(0, "p"), SendPrompt(0, "p", blocked=True))]  # fmt: skip
    assert kinds == list(ACTION_KINDS[: len(kinds)])


@pytest.mark.spec("EXP-1")
def test_the_report_keeps_an_outcome_outside_the_catalogue_and_the_reached_depth_starts_at_0() -> None:
    odd = Exploration(0)
    odd.outcomes["an outcome no one listed"] += 1
    outcomes_counted = odd.as_counts()["outcomes"]
    assert isinstance(outcomes_counted, dict) and outcomes_counted["an outcome no one listed"] == 1
    assert odd.reached == 0 and explore(0, behaviours=("prepend",)).reached == 0


def test_progress_is_each_level_then_every_1024th_state() -> None:
    """``edge/explore.py`` prints it: (the depth being expanded, the distinct states so far)."""
    calls: list[tuple[int, int]] = []
    fresh = tuple(root.name for root in ROOTS if not root.seeded)
    run = explore(4, behaviours=fresh, progress=lambda level, states: calls.append((level, states)))
    assert run.levels == [6, 30, 126, 414, 1116]
    assert calls == [(0, 6), (1, 36), (2, 162), (3, 576), (4, 1024)]  # the level starts (cumulative levels), then state 1024
