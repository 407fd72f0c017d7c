"""``prefix-model conform``: every vector through an implementation's adapter, case by case.

A case passes, fails (what ``replay`` finds, or the adapter's crash, hang or protocol error with
its stderr tail) or is not applicable (the adapter's ``hello`` does not offer its kind or one of
its actions, or does not list a provider route it names) — never counted as a pass. An adapter
that fails a case is restarted for the next. With ``fail_fast`` the run stops at the first failure, and every case after it is reported as not
run (counted, named by the report, never a pass).
"""

from __future__ import annotations

import fnmatch
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prefix_model.edge.runner.baseline import Baseline
from prefix_model.edge.runner.client import AdapterFailure, AdapterProcess
from prefix_model.edge.runner.protocol import PROTOCOL_VERSION, PROVIDERS, routes
from prefix_model.edge.runner.consumer import Problem, load_cases, replay

__all__ = [
    "Outcome", "kind_of", "not_applicable", "run_cases", "ran", "failed", "as_json", "as_text", "as_junit",
    "PASS", "FAIL", "NOT_APPLICABLE", "NOT_RUN", "KNOWN", "STALE",
]  # fmt: skip

PASS, FAIL, NOT_APPLICABLE, NOT_RUN = "pass", "fail", "not applicable", "not run"
KNOWN, STALE = "known", "stale"  # a failure the baseline declares; a declared case that passes


@dataclass(frozen=True, slots=True)
class Outcome:
    """One case through the adapter: its id, kind, status, what is wrong (or why it does not apply), and its requirement IDs."""

    id: str
    kind: str
    status: str
    problems: tuple[str, ...] = ()
    requirements: tuple[str, ...] = field(default=())


def kind_of(case: Mapping[str, Any]) -> str:
    """Return the case's kind: ``scenario`` (an action script), ``file`` (a log file) or ``log`` (a log and capture)."""
    return "scenario" if "actions" in case else "file" if "file" in case else "log"


def not_applicable(case: Mapping[str, Any], hello: Mapping[str, Any]) -> str | None:
    """Return why the adapter cannot run ``case`` by what its ``hello`` declared, or None when it can."""
    kind = kind_of(case)
    if kind not in hello.get("kinds", ()):
        return f"the adapter does not run {kind} cases"
    offered = set(hello.get("actions", ()))
    missing = sorted({str(a.get("action")) for a in case.get("actions", ()) if isinstance(a, dict)} - offered)
    if missing:
        return f"the adapter does not support {', '.join(missing)}"
    unrouted = sorted(_routes_named(case.get("actions", ())) - set(routes(hello)))
    return f"the adapter does not route provider {', '.join(unrouted)}" if unrouted else None


def _routes_named(value: Any) -> set[str]:
    """The scripted fake's routes a case's actions name as a provider (a request's, an agent's or a summarizer's)."""
    if isinstance(value, list):
        return set().union(*map(_routes_named, value))
    if not isinstance(value, dict):
        return set()
    named = {v for k, v in value.items() if k in ("provider", "summarizationProvider") and v in PROVIDERS}
    return named.union(*map(_routes_named, value.values()))


def ran(outcomes: list[Outcome]) -> int:
    """How many cases actually ran (passed, failed, or known or stale under a baseline): none is a vacuous run."""
    return sum(1 for o in outcomes if o.status not in (NOT_APPLICABLE, NOT_RUN))


def failed(outcomes: list[Outcome]) -> bool:
    """Whether the run fails: a case failed that the baseline does not declare, or a declared case passed (stale)."""
    return any(o.status in (FAIL, STALE) for o in outcomes)


def run_cases(
    adapter: AdapterProcess,
    directory: Path,
    only: str | None = None,
    progress: bool = False,
    fail_fast: bool = False,
    baseline: Baseline = Baseline(),
    compare: str = "all",
) -> list[Outcome]:
    """Return the outcome of every case of ``directory`` (those matching the glob ``only``), in manifest order.

    With ``fail_fast``, the cases after the first failure are not run: each is reported as such. A
    case the ``baseline`` declares is ``known`` when it fails and ``stale`` when it passes. An adapter
    that will not restart after a failure leaves every later case not run, with the reason. With
    ``compare`` ``requests`` a scenario's logs are not compared, only its refusals and requests.
    """
    outcomes: list[Outcome] = []
    loaded = [entry for entry in load_cases(directory) if only is None or fnmatch.fnmatchcase(entry[0], only)]
    for n, (ident, case, problems) in enumerate(loaded, 1):
        if fail_fast and outcomes and outcomes[-1].status in (FAIL, STALE):
            stopped = f"not run: --fail-fast stopped at {outcomes[-1].id}"
            outcomes += [_not_run(ident, case, stopped) for ident, case, _ in loaded[n - 1 :]]
            break
        if not adapter.alive():
            try:
                adapter.restart()
            except AdapterFailure as failure:
                stopped = f"not run: the adapter would not restart after {outcomes[-1].id if outcomes else 'its start'}: {failure.reason}"
                outcomes += [_not_run(ident, case, stopped) for ident, case, _ in loaded[n - 1 :]]
                break
        if progress:
            print(f"\r\x1b[K[{n}/{len(loaded)}] {ident}", end="", file=sys.stderr, flush=True)
        if case is None:
            outcomes.append(Outcome(ident, "?", FAIL, problems))
            continue
        outcomes.append(_judged(_run_one(adapter, ident, case, compare == "requests"), baseline.case_reason(ident)))
    if progress:
        print("\r\x1b[K", end="", file=sys.stderr, flush=True)
    return outcomes


def _not_run(ident: str, case: Mapping[str, Any] | None, why: str) -> Outcome:
    if case is None:
        return Outcome(ident, "?", NOT_RUN, (why,))
    return Outcome(ident, kind_of(case), NOT_RUN, (why,), tuple(case.get("requirements", ())))


def _judged(outcome: Outcome, known: str | None) -> Outcome:
    """The outcome under the baseline: a declared failure is known (its reason first), a declared pass is stale."""
    if known is None or outcome.status not in (PASS, FAIL):
        return outcome
    if outcome.status == FAIL:
        return replace(outcome, status=KNOWN, problems=(f"known (baseline): {known}", *outcome.problems))
    return replace(outcome, status=STALE, problems=(f"stale baseline entry: the case passes now ({known})",))


def _run_one(adapter: AdapterProcess, ident: str, case: Mapping[str, Any], requests_only: bool = False) -> Outcome:
    """One case; an adapter the case killed is restarted by the next case's turn (``run_cases``), never charged to it."""
    kind, requirements = kind_of(case), tuple(case.get("requirements", ()))
    why = not_applicable(case, adapter.hello)
    if why is not None:
        return Outcome(ident, kind, NOT_APPLICABLE, (why,), requirements)
    try:
        problems = tuple(replay(case, adapter, adapter, reader=adapter, requests_only=requests_only))
    except AdapterFailure as failure:
        problems = (str(failure),)
    return Outcome(ident, kind, FAIL if problems else PASS, problems, requirements)


def _totals(outcomes: list[Outcome]) -> dict[str, int]:
    return _counted(Counter(o.status for o in outcomes))


def _counted(counts: Counter[str]) -> dict[str, int]:
    totals = {"pass": counts[PASS], "fail": counts[FAIL], "notApplicable": counts[NOT_APPLICABLE], "notRun": counts[NOT_RUN]}
    return totals | ({"known": counts[KNOWN], "stale": counts[STALE]} if counts[KNOWN] or counts[STALE] else {})


def _by(outcomes: list[Outcome], keys: Any) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str]] = {}
    for outcome in outcomes:
        for key in keys(outcome):
            table.setdefault(key, Counter())[outcome.status] += 1
    return {key: _counted(c) for key, c in sorted(table.items())}


def _problem(problem: str) -> dict[str, Any]:
    """A problem as JSON: ``{message}``, and for a difference its pointer and both values, whole."""
    return problem.to_json() if isinstance(problem, Problem) else {"message": problem}


def as_json(outcomes: list[Outcome], hello: Mapping[str, Any], compare: str = "all") -> dict[str, Any]:
    """Return the machine report: the adapter, the oracle, every case untruncated, totals per kind and per requirement ID."""
    return {
        "protocol": PROTOCOL_VERSION,
        "implementation": hello.get("implementation"),
        "compare": compare,
        "cases": [{"id": o.id, "kind": o.kind, "status": o.status, "problems": [_problem(p) for p in o.problems], "requirements": list(o.requirements)} for o in outcomes],
        "totals": _totals(outcomes),
        "byKind": _by(outcomes, lambda o: (o.kind,)),
        "byRequirement": _by(outcomes, lambda o: o.requirements),
    }


def as_text(outcomes: list[Outcome], hello: Mapping[str, Any], compare: str = "all") -> str:
    """Return the human report: the weaker oracle when it ran, failures with what is wrong, not-applicable cases with why, then the totals."""
    lines = [f"adapter: {hello.get('implementation', '?')} (protocol {hello.get('protocol')})"]
    if compare == "requests":
        lines.append("oracle: requests sent and refusals only (--compare requests; the scenarios' logs are not compared)")
    for outcome in outcomes:
        if outcome.status in (FAIL, KNOWN, STALE):
            lines.append(f"{outcome.status.upper()} {outcome.id}")
            lines += [f"    {line}" for problem in outcome.problems for line in problem.splitlines()]
    # Not applicable, by reason: a whole kind is one line; an unsupported action names its cases.
    reasons = Counter(o.problems[0] for o in outcomes if o.status == NOT_APPLICABLE)
    for reason, count in sorted(reasons.items()):
        named = [o.id for o in outcomes if o.status == NOT_APPLICABLE and o.problems[0] == reason]
        listed = "" if reason.endswith(" cases") else ": " + ", ".join(named)
        lines.append(f"N/A  {count} case{'s' if count != 1 else ''}: {reason}{listed}")
    totals = _totals(outcomes)
    run = _by([o for o in outcomes if o.status != NOT_RUN], lambda o: (o.kind,))
    kinds = ", ".join(f"{kind} {t['pass']}/{t['pass'] + t['fail']}" for kind, t in run.items())
    if totals["notRun"]:
        first = next(o for o in outcomes if o.status == NOT_RUN)
        lines.append(f"NOT RUN {totals['notRun']} case{'s' if totals['notRun'] != 1 else ''}, from {first.id} on ({first.problems[0].removeprefix('not run: ')})")
    line = f"{totals['pass']} passed, {totals['fail']} failed, {totals['notApplicable']} not applicable"
    line += f", {totals['notRun']} not run" if totals["notRun"] else ""
    line += f", {totals['known']} known, {totals['stale']} stale" if "known" in totals else ""
    lines.append(f"{line} ({kinds} passed of applicable)")
    return "\n".join(lines)


def as_junit(outcomes: list[Outcome], hello: Mapping[str, Any]) -> bytes:
    """Return JUnit XML: one testcase per case (classname its kind), a failure or a skip where it did not pass."""
    totals = _totals(outcomes)
    suite = ElementTree.Element(
        "testsuite", name=f"prefix-model conform: {hello.get('implementation', '?')}", tests=str(len(outcomes)),
        failures=str(totals["fail"] + totals.get("stale", 0)), skipped=str(totals["notApplicable"] + totals["notRun"] + totals.get("known", 0)), errors="0",
    )  # fmt: skip
    for outcome in outcomes:
        element = ElementTree.SubElement(suite, "testcase", classname=outcome.kind, name=outcome.id)
        if outcome.status in (FAIL, STALE):
            failure = ElementTree.SubElement(element, "failure", message=outcome.problems[0].splitlines()[0] if outcome.problems else "failed")
            failure.text = "\n".join(outcome.problems)
        elif outcome.status in (NOT_APPLICABLE, NOT_RUN, KNOWN):
            ElementTree.SubElement(element, "skipped", message=outcome.problems[0])
    text: bytes = ElementTree.tostring(suite, encoding="utf-8", xml_declaration=True)
    return text
