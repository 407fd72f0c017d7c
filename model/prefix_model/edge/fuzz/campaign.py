"""A campaign: generated scripts through several adapter processes at once, every divergence shrunk and reported.

The main thread draws scripts (``generate.draw``: deterministic for the seed, aimed by the coverage
so far) and hands them to one worker thread per adapter process; a worker replays each in lockstep
(``lockstep.lockstep``). Results are taken in script order, so the first divergence, the groups and
the coverage are the same whatever the number of processes and however fast each runs. An adapter
that crashes, hangs or writes garbage is a *fault* — reported with its stderr tail, the process
restarted — never a divergence. Divergences are grouped by signature; the first script of each group
is shrunk with the implementation as the oracle, and a few later ones, so that causes sharing a
signature show as witnesses of other action kinds; a baseline declares the groups an implementation
knowingly shows, and a baseline entry no longer shown is stale.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from prefix_model.edge.fuzz.generate import Coverage, Script, draw
from prefix_model.edge.fuzz.lockstep import Difference, OutOfDomain, lockstep, model_replies
from prefix_model.edge.fuzz.shrink import Shrunk, shrink
from prefix_model.edge.runner.baseline import KnownDivergence, oracle_of
from prefix_model.edge.runner.client import AdapterFailure, AdapterProcess
from prefix_model.edge.runner.consumer import JsonObject
from prefix_model.edge.runner.protocol import routes

__all__ = ["Fault", "Found", "Settings", "Result", "Unusable", "run_campaign", "replay_script", "oracle", "offered_actions", "kinds"]

_CONSECUTIVE_FAULTS = 5  # this many faults in a row and the adapter is unusable


class Unusable(Exception):
    """The adapter cannot take part: it will not start, speak the protocol, run scenarios, or stay up."""


@dataclass(frozen=True, slots=True)
class Fault:
    """A script the adapter could not finish: a crash, a hang or a protocol error, with its stderr tail."""

    script: int
    message: str


@dataclass
class Found:
    """One group of divergences (one signature): its first script, how many scripts showed it, and the shrunk script."""

    first: Script
    difference: Difference
    count: int = 1
    shrunk: Shrunk | None = None
    known: str | None = None  # the baseline's reason, when the baseline declares this signature
    seconds: float = 0.0  # the campaign's time when its first script was settled: the time to first find
    members: list[tuple[Script, Difference]] = field(default_factory=list)  # later scripts kept to shrink (Settings.witnesses)
    witnesses: list[tuple[Script, Difference, Shrunk]] = field(default_factory=list)  # later scripts whose shrunk actions differ in kind

    @property
    def shown(self) -> tuple[JsonObject, ...]:
        """The script that shows the divergence: the shrunk one, else the first script cut after its difference."""
        return self.shrunk.actions if self.shrunk is not None else self.first.actions[: self.difference.index + 1]


@dataclass(frozen=True, slots=True)
class Settings:
    """What a campaign runs: how many scripts or for how long, with which seed, on how many processes."""

    seed: int = 0
    scripts: int | None = None
    seconds: float | None = None
    jobs: int = 1
    keep_going: bool = False
    shrink_budget: int = 2000
    keep_arguments: bool = False  # shrink by dropping actions only (shrink.py: simplify=False)
    baseline: tuple[KnownDivergence, ...] = ()
    compare: str = "all"  # the oracle (lockstep.COMPARES): every reply whole, or only the requests sent and the refusals
    witnesses: int = 6  # the scripts of a new group shrunk, the first and up to this many less one after it, to tell causes apart

    @property
    def in_scope(self) -> tuple[KnownDivergence, ...]:
        """The baseline entries of this campaign's oracle: the only ones it can show, so the only ones it judges."""
        return tuple(k for k in self.baseline if k.oracle == oracle_of(self.compare))

    @property
    def out_of_scope(self) -> int:
        """How many baseline entries belong to the other oracle: neither matched nor called stale."""
        return len(self.baseline) - len(self.in_scope)


@dataclass
class Result:
    """What a campaign did and found."""

    implementation: str
    settings: Settings
    scripts: int = 0
    actions: int = 0
    seconds: float = 0.0
    coverage: Coverage = field(default_factory=Coverage)
    found: list[Found] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    stale: list[KnownDivergence] = field(default_factory=list)  # baseline entries no script showed

    @property
    def new(self) -> list[Found]:
        """The divergences the baseline does not declare: what fails the run."""
        return [f for f in self.found if f.known is None]


Progress = Callable[[Result], None]


def offered_actions(adapter: AdapterProcess) -> frozenset[str]:
    if "scenario" not in adapter.hello.get("kinds", ()):
        raise Unusable("the adapter runs no scenario cases (its hello offers no kind 'scenario'), so nothing can be compared")
    offered = frozenset(str(a) for a in adapter.hello.get("actions", ()))
    if not {"Create", "SendPrompt"} <= offered:
        raise Unusable("the adapter's hello offers neither Create nor SendPrompt, so no generated script can run")
    return offered


class _Worker(threading.Thread):
    """One adapter process replaying scripts from ``work`` into ``results``."""

    def __init__(
        self, adapter: AdapterProcess, work: queue.Queue[Script | None], results: queue.Queue[tuple[Script, Difference | Fault | None]], compare: str
    ) -> None:
        super().__init__(daemon=True)
        self.adapter, self.work, self.results, self.compare = adapter, work, results, compare

    def run(self) -> None:
        while (script := self.work.get()) is not None:
            try:
                self.results.put((script, lockstep(self.adapter, script.actions, script.replies, self.compare)))
            except AdapterFailure as failure:
                self.results.put((script, Fault(script.number, str(failure))))
                try:
                    self.adapter.restart()
                except AdapterFailure:
                    return  # the main thread sees the fault; the others carry on


def run_campaign(command: str, timeout: float, settings: Settings, progress: Progress | None = None) -> Result:
    """Run a campaign against the adapter ``command``; raise ``Unusable`` when it cannot take part."""
    try:
        adapters = [AdapterProcess(command, timeout) for _ in range(max(1, settings.jobs))]
    except AdapterFailure as failure:
        raise Unusable(str(failure)) from None
    try:
        offered = offered_actions(adapters[0])
        result = Result(str(adapters[0].hello.get("implementation", "?")), settings)
        _run(adapters, offered, routes(adapters[0].hello), settings, result, progress)
        _shrink_all(adapters[0], result, settings)
        _judge_baseline(adapters[0], result, settings)
        return result
    finally:
        for adapter in adapters:
            adapter.stop()


def _run(
    adapters: list[AdapterProcess],
    offered: frozenset[str],
    providers: tuple[str, ...],
    settings: Settings,
    result: Result,
    progress: Progress | None,
) -> None:
    work: queue.Queue[Script | None] = queue.Queue(maxsize=2 * len(adapters))
    results: queue.Queue[tuple[Script, Difference | Fault | None]] = queue.Queue()
    workers = [_Worker(adapter, work, results, settings.compare) for adapter in adapters]
    for worker in workers:
        worker.start()
    started = time.monotonic()
    drawn, pending, done = 0, {}, 0  # pending: finished scripts waiting for the ones before them
    stop_at: int | None = None  # no script past this one counts (the first new divergence, without --keep-going)
    # A declared divergence never stops a campaign: stopping at one would test nothing past it and pass (a baseline
    # of a real implementation is shown by most scripts' first steps).
    declared = {known.signature for known in settings.in_scope}
    consecutive = 0

    def enough() -> bool:
        if stop_at is not None:
            return True
        if settings.scripts is not None and drawn >= settings.scripts:
            return True
        return settings.seconds is not None and time.monotonic() - started >= settings.seconds

    def settle(block: bool) -> None:
        nonlocal done, stop_at, consecutive
        while True:
            try:
                script, outcome = results.get(block=block, timeout=0.2 if block else None)
            except queue.Empty:
                return
            pending[script.number] = (script, outcome)
            while done in pending:
                script, outcome = pending.pop(done)
                done += 1
                if stop_at is not None and script.number > stop_at:
                    continue
                _record(result, script, outcome, time.monotonic() - started)
                consecutive = consecutive + 1 if isinstance(outcome, Fault) else 0
                if consecutive >= _CONSECUTIVE_FAULTS:
                    raise Unusable(f"{consecutive} scripts in a row ended in an adapter fault; the last: {outcome.message if isinstance(outcome, Fault) else ''}")
                if isinstance(outcome, Difference) and not settings.keep_going and stop_at is None and outcome.signature not in declared:
                    stop_at = script.number
            if progress is not None:
                result.seconds = time.monotonic() - started
                progress(result)
            block = False

    try:
        while not enough():
            if not any(w.is_alive() for w in workers):
                raise Unusable("every adapter process failed and none restarts: " + (result.faults[-1].message if result.faults else "no fault recorded"))
            script = draw(settings.seed, drawn, result.coverage, offered, providers=providers)
            drawn += 1
            while True:
                try:
                    work.put(script, timeout=0.2)
                    break
                except queue.Full:
                    settle(block=False)
            settle(block=False)
        while done < drawn:
            if not any(w.is_alive() for w in workers) and results.empty():
                raise Unusable("every adapter process failed and none restarts: " + (result.faults[-1].message if result.faults else "no fault recorded"))
            settle(block=True)
    finally:
        # Scripts still queued are dropped, and every worker finishes its script before the adapters serve the shrink.
        while True:
            try:
                work.get_nowait()
            except queue.Empty:
                break
        for _ in workers:
            work.put(None)
        for worker in workers:
            worker.join()
        result.seconds = time.monotonic() - started


def _record(result: Result, script: Script, outcome: Difference | Fault | None, seconds: float) -> None:
    result.scripts += 1
    if isinstance(outcome, Fault):
        result.faults.append(outcome)
        return
    result.actions += len(script.actions) if outcome is None else outcome.index + 1
    if outcome is None:
        return
    group = next((f for f in result.found if f.difference.signature == outcome.signature), None)
    if group is None:
        result.found.append(Found(script, outcome, seconds=seconds))
        return
    group.count += 1
    if len(group.members) < result.settings.witnesses - 1:
        group.members.append((script, outcome))


def oracle(adapter: AdapterProcess, compare: str, domain: bool = True) -> Callable[[Sequence[JsonObject]], Difference | None]:
    """A shrink's oracle: a candidate replayed from a reset on both sides, a fault or (with ``domain``) an input outside
    the campaign's domain read as no difference."""
    def replay(actions: Sequence[JsonObject]) -> Difference | None:
        try:
            return lockstep(adapter, actions, model_replies(actions, domain=domain), compare)
        except OutOfDomain:
            return None  # a candidate outside the drawn domain shows nothing about the divergence being shrunk
        except AdapterFailure:
            if not adapter.alive():
                adapter.restart()
            return None  # a fault is not the divergence being shrunk

    return replay


def _shrink_all(adapter: AdapterProcess, result: Result, settings: Settings) -> None:
    if not adapter.alive():
        adapter.restart()
    for group in result.found:
        declared = [k for k in settings.in_scope if k.signature == group.difference.signature]
        group.known = declared[0].reason if declared else None
        # A signature names where and how the replies differ, not why: two faults can share one (at ea4c10d753 a
        # cancel that still dispatches and a route with no model that still dispatches did). Later scripts of the
        # group are shrunk too, and one whose shrunk script differs in its action kinds from those before is reported
        # as another witness: perhaps another cause (one cause can also shrink to other kinds: a second step reached by
        # a tool call or a steer). Of a declared signature, the scripts are compared with the entries' own: a witness
        # of other kinds is one the baseline does not declare, reported beside it, the verdict unchanged.
        replay = oracle(adapter, settings.compare)
        candidates = [(group.first, group.difference), *group.members]
        if group.known is None:
            group.shrunk = shrink(group.first.actions, group.difference, replay, settings.shrink_budget, not settings.keep_arguments)
            seen, candidates = {kinds(group.shown)}, candidates[1:]
        else:
            seen = {kinds(k.script) for k in declared if k.script is not None}
            if not seen or settings.witnesses < 2:
                continue  # no script of the entry's to compare with: known, as the baseline says
        for script, difference in candidates:
            shrunk = shrink(script.actions, difference, replay, settings.shrink_budget, not settings.keep_arguments)
            if kinds(shrunk.actions) not in seen:  # a shrink keeps the signature (FUZZ-3): only the kinds can differ
                seen.add(kinds(shrunk.actions))
                group.witnesses.append((script, difference, shrunk))


def kinds(actions: Sequence[JsonObject]) -> tuple[str, ...]:
    """The action kinds of a script in order: what tells two shrunk witnesses of one signature apart."""
    return tuple(str(a.get("action")) for a in actions)


def _judge_baseline(adapter: AdapterProcess, result: Result, settings: Settings) -> None:
    """A baseline entry is stale when no script showed it — its own script replayed too, where it has one."""
    shown = {f.difference.signature for f in result.found}
    for known in settings.in_scope:
        if known.signature in shown:
            continue
        if known.script is not None:
            # An entry's script is curated, as --rewrite-baseline replays it: it may hold what no campaign draws.
            found = oracle(adapter, settings.compare, domain=False)(known.script)
            if found is not None and found.signature == known.signature:
                continue
        result.stale.append(known)


def replay_script(
    command: str,
    timeout: float,
    script: Callable[[frozenset[str], tuple[str, ...]], Sequence[JsonObject]],
    compare: str = "all",
    shrink_budget: int | None = None,
    keep_arguments: bool = False,
) -> tuple[str, Difference | None, list[JsonObject], Shrunk | None]:
    """Run one script in lockstep against ``command`` by the oracle ``compare``: (implementation, first difference, the
    script, its shrink). A difference is shrunk as a campaign's is, by the same oracle, when ``shrink_budget`` is given.

    ``script`` makes the script from the actions and provider routes the adapter offers (a campaign's script N is drawn
    from them).

    :raises Unusable: the adapter will not start or run scenarios, or it faults on the script
    """
    try:
        adapter = AdapterProcess(command, timeout)
    except AdapterFailure as failure:
        raise Unusable(str(failure)) from None
    try:
        actions = list(script(offered_actions(adapter), routes(adapter.hello)))
        implementation = str(adapter.hello.get("implementation", "?"))
        try:
            difference = lockstep(adapter, actions, model_replies(actions, domain=False), compare)
        except AdapterFailure as failure:  # a fault, not a divergence (FUZZ-5): exit 2, one line
            raise Unusable(f"the adapter failed on the script (a fault, not a divergence): {str(failure).splitlines()[0]}") from None
        if difference is None or shrink_budget is None:
            return implementation, difference, actions, None
        return implementation, difference, actions, shrink(actions, difference, oracle(adapter, compare), shrink_budget, not keep_arguments)
    finally:
        adapter.stop()
