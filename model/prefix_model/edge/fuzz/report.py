"""What a campaign shows people and machines, and how a divergence becomes a vector.

``as_text`` and ``as_json`` report the campaign — scripts and actions run and their rates, the
coverage reached, every divergence (first difference whole, original and shrunk length, the shrunk
script and a command that reproduces it), the faults apart, the baseline's known and stale entries;
``as_junit`` is one test case per divergence group and fault. ``save`` writes each shrunk divergence
as a scenario case of the vectors' format with the model's expected events and requests, and a
manifest, so ``prefix-model conform --vectors DIR`` runs them.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefix_model.edge.fuzz.campaign import Found, Result
from prefix_model.edge.fuzz.shrink import Shrunk
from prefix_model.vectors import FORMAT_VERSION
from prefix_model.vectors.adopted import scenario_of
from prefix_model.vectors.cases import case_text, play
from prefix_model.edge.runner.consumer import JsonObject
from prefix_model.edge.vectors.generate import manifest_text
from prefix_model.loop.explore import OUTCOMES

__all__ = ["case_id", "save", "save_found", "reproduce_line", "shrunk_json", "shrunk_lines", "as_json", "as_text", "as_junit", "script_json"]


# The oracle each report states: a campaign by the weaker one must not read as a full comparison.
_ORACLES = {
    "all": "oracle: every reply compared (events appended, requests sent, refusals)",
    "requests": "oracle: requests sent and refusals only (--compare requests; the events appended are not compared)",
}


def case_id(found: Found) -> str:
    """The id of a divergence's case: stable for its signature."""
    digest = hashlib.sha256(found.difference.signature.encode("utf-8")).hexdigest()[:10]
    return f"fuzz/{found.difference.action.lower()}-{digest}"


def save(result: Result, directory: Path) -> list[Path]:
    """Write each new divergence's shrunk script as a case under ``directory``, which exists (the command makes it before
    the campaign), and the manifest of every case there: a campaign with nothing new leaves an empty one."""
    return save_found(result.new, result.implementation, result.settings.compare, directory)


def save_found(found: Sequence[Found], implementation: str, compare: str, directory: Path) -> list[Path]:
    """Write each of ``found`` (found by the oracle ``compare`` against ``implementation``) as a case under
    ``directory``, and the manifest of every case there (a campaign's, or one ``--replay`` or ``--script``)."""
    written = []
    oracle = "" if compare == "all" else f" (--compare {compare})"
    shown = [(case_id(each), each.shrunk.difference if each.shrunk is not None else each.difference, each.shown) for each in found]
    # another witness of a signature (FUZZ-3) is a case of its own, numbered after the first
    shown += [(f"{case_id(each)}-{n}", shrunk.difference, shrunk.actions) for each in found for n, (_, _, shrunk) in enumerate(each.witnesses, 2)]
    for ident, difference, actions in shown:
        description = f"Found by prefix-model fuzz{oracle} against {implementation}: {difference.signature}."
        scenario = scenario_of(ident, description, actions)
        world = play(scenario)
        path = directory / ident / "case.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(case_text(scenario, world).encode("utf-8"))
        written.append(path)
    _write_manifest(directory)
    return written


def _write_manifest(directory: Path) -> None:
    """A manifest of every case file under ``directory`` (cases saved by earlier campaigns stay listed)."""
    entries = []
    for path in sorted(directory.rglob("case.json")):
        data = path.read_bytes()
        try:
            case = json.loads(data)
        except ValueError:
            continue
        if isinstance(case, dict) and case.get("formatVersion") == FORMAT_VERSION and isinstance(case.get("id"), str):
            entries.append((case["id"], path.relative_to(directory).as_posix(), hashlib.sha256(data).hexdigest()))
    (directory / "manifest.json").write_bytes(manifest_text(entries).encode("utf-8"))


def script_json(actions: Sequence[JsonObject]) -> str:
    """A script file: one JSON array, an action a line (``--replay`` reads it, as it reads a case)."""
    return "[\n" + ",\n".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in actions) + "\n]\n"


def reproduce_line(adapter: str, compare: str, *, seed: int = 0, script: int | None = None, replay: str | None = None) -> str:
    """The command that runs one script again by the same oracle: script ``script`` of seed ``seed``, or the file ``replay``."""
    what = f"--replay {shlex.quote(replay)}" if replay is not None else f"--seed {seed} --script {script}"
    oracle = "" if compare == "all" else f" --compare {compare}"
    return f"prefix-model fuzz --adapter {shlex.quote(adapter)} {what}{oracle}"


def _replay_line(result: Result, found: Found, adapter: str) -> str:
    return reproduce_line(adapter, result.settings.compare, seed=result.settings.seed, script=found.first.number)


def shrunk_json(shrunk: Shrunk | None) -> dict[str, Any] | None:
    """A shrink in the machine report: its length, what it cost, its difference and its script."""
    if shrunk is None:
        return None
    return {"length": len(shrunk.actions), "attempts": shrunk.attempts, "budgetSpent": shrunk.exhausted,
            "difference": shrunk.difference.to_json(), "actions": list(shrunk.actions)}  # fmt: skip


def shrunk_lines(shrunk: Shrunk | None, original: int) -> list[str]:
    """A shrink in the human report: from how many actions to how many, at what cost, and the script an action a line."""
    if shrunk is None:
        return []
    spent = ", the shrink's budget spent" if shrunk.exhausted else ""
    return [f"    shrunk from {original} to {len(shrunk.actions)} actions in {shrunk.attempts} replays{spent}:"] + [
        f"      {json.dumps(a, ensure_ascii=False, separators=(',', ':'))}" for a in shrunk.actions
    ]


def as_json(result: Result, adapter: str) -> dict[str, Any]:
    """The machine report: every figure, every divergence whole."""
    seconds = max(result.seconds, 1e-9)
    coverage = result.coverage
    divergences = []
    for found in result.found:
        divergences.append({
            "signature": found.difference.signature, "known": found.known, "scripts": found.count,
            "firstScript": found.first.number, "firstSeconds": round(found.seconds, 1), "originalLength": found.difference.index + 1,
            "difference": found.difference.to_json(),
            "shrunk": shrunk_json(found.shrunk),
            "reproduce": _replay_line(result, found, adapter),
            "witnesses": [
                {"script": script.number, "originalLength": difference.index + 1, "difference": difference.to_json(), "shrunk": shrunk_json(shrunk),
                 "reproduce": reproduce_line(adapter, result.settings.compare, seed=result.settings.seed, script=script.number)}
                for script, difference, shrunk in found.witnesses
            ],
        })  # fmt: skip
    return {
        "implementation": result.implementation,
        "seed": result.settings.seed,
        "compare": result.settings.compare,
        "scripts": result.scripts,
        "actions": result.actions,
        "seconds": round(result.seconds, 3),
        "scriptsPerSecond": round(result.scripts / seconds, 2),
        "actionsPerSecond": round(result.actions / seconds, 1),
        "coverage": {
            "actions": dict(sorted(coverage.actions.items())),
            "outcomes": {o: coverage.outcomes[o] for o in OUTCOMES} | {o: n for o, n in sorted(coverage.outcomes.items()) if o not in OUTCOMES},
            "outcomesReached": sum(1 for o in OUTCOMES if coverage.outcomes[o]),
            "outcomesKnown": len(OUTCOMES),
            "requirements": dict(sorted(coverage.requirements.items())),
            "refusedActions": coverage.refused,
            "refusals": dict(sorted(coverage.refusals.items())),
        },
        "divergences": divergences,
        "faults": [{"script": f.script, "message": f.message} for f in result.faults],
        "stale": [{"signature": k.signature, "reason": k.reason} for k in result.stale],
        "outOfScope": result.settings.out_of_scope,
    }


def as_text(result: Result, adapter: str) -> str:
    """The human report: the figures, then each divergence with its shrunk script and a command that reproduces it."""
    report = as_json(result, adapter)
    cov = report["coverage"]
    lines = [f"adapter: {result.implementation}", f"seed {result.settings.seed}: {result.scripts} scripts, {result.actions} actions in {result.seconds:.1f} s "
             f"({report['scriptsPerSecond']} scripts/s, {report['actionsPerSecond']} actions/s)", _ORACLES[result.settings.compare]]  # fmt: skip
    unreached = [o for o, n in cov["outcomes"].items() if not n and o in OUTCOMES]
    lines.append(f"coverage: {len(cov['actions'])} action kinds, {cov['outcomesReached']}/{cov['outcomesKnown']} outcome classes, "
                 f"{len(cov['requirements'])} requirement IDs, {cov['refusedActions']} refused actions of {len(cov['refusals'])} kinds" + (f"; not reached: {', '.join(unreached)}" if unreached else ""))  # fmt: skip
    for found, entry in zip(result.found, report["divergences"]):
        label = "KNOWN" if found.known is not None else "DIVERGENCE"
        lines.append(f"{label} {found.difference.signature}  ({found.count} script{'s' if found.count != 1 else ''}, first #{found.first.number} at {found.seconds:.1f} s)")
        if found.known is not None:
            lines.append(f"    baseline: {found.known}")
            lines += _witness_lines(found, entry, "UNDECLARED WITNESS", "than the baseline's (perhaps a cause it hides)", differences=False)
            continue
        shown = found.shrunk.difference if found.shrunk is not None else found.difference
        lines += [f"    {line}" for line in shown.text().splitlines()]
        lines += shrunk_lines(found.shrunk, entry["originalLength"])
        lines.append(f"    reproduce: {entry['reproduce']}")
        lines += _witness_lines(found, entry, "ANOTHER WITNESS", "(perhaps another cause)")
    for fault in result.faults:
        lines.append(f"FAULT script #{fault.script}: the adapter failed (not a divergence)")
        lines += [f"    {line}" for line in fault.message.splitlines()]
    for known in result.stale:
        lines.append(f"STALE baseline entry no script showed: {known.signature} ({known.reason})")
    new = len(result.new)
    scope = f", {result.settings.out_of_scope} baseline entr{'ies' if result.settings.out_of_scope != 1 else 'y'} of the other oracle not judged" if result.settings.out_of_scope else ""
    lines.append(f"{new} new divergence{'s' if new != 1 else ''}, {len(result.found) - new} known, {len(result.faults)} adapter fault{'s' if len(result.faults) != 1 else ''}, {len(result.stale)} stale{scope}")
    return "\n".join(lines)


def _witness_lines(found: Found, entry: dict[str, Any], label: str, why: str, differences: bool = True) -> list[str]:
    """The text of a group's further witnesses (FUZZ-3, FUZZ-6): each one's first difference (a known group's shows
    none, as the group itself shows none), shrunk script and reproduce line."""
    lines = []
    for (script, _, shrunk), witness in zip(found.witnesses, entry["witnesses"]):
        lines.append(f"  {label}, script #{script.number}: its shrunk script has other action kinds {why}")
        lines += [f"    {line}" for line in shrunk.difference.text().splitlines()] if differences else []
        lines += shrunk_lines(shrunk, witness["originalLength"])
        lines.append(f"    reproduce: {witness['reproduce']}")
    return lines


def as_junit(result: Result) -> bytes:
    """JUnit XML: the campaign as one passing test case, one failing case per new divergence group and fault."""
    failures = len(result.new) + len(result.stale)
    suite = ElementTree.Element("testsuite", name=f"prefix-model fuzz: {result.implementation}", tests=str(1 + len(result.found) + len(result.faults) + len(result.stale)),
                                failures=str(failures), errors=str(len(result.faults)), skipped=str(len(result.found) - len(result.new)))  # fmt: skip
    ElementTree.SubElement(suite, "testcase", classname="campaign", name=f"seed {result.settings.seed}, compare {result.settings.compare}: {result.scripts} scripts")
    for found in result.found:
        element = ElementTree.SubElement(suite, "testcase", classname="divergence", name=found.difference.signature)
        if found.known is not None:
            ElementTree.SubElement(element, "skipped", message=f"baseline: {found.known}")
            continue
        shown = found.shrunk.difference if found.shrunk is not None else found.difference
        failure = ElementTree.SubElement(element, "failure", message=found.difference.signature)
        failure.text = shown.text() + "\n" + script_json(found.shown)
    for fault in result.faults:
        element = ElementTree.SubElement(suite, "testcase", classname="fault", name=f"script #{fault.script}")
        ElementTree.SubElement(element, "error", message=fault.message.splitlines()[0]).text = fault.message
    for known in result.stale:
        element = ElementTree.SubElement(suite, "testcase", classname="stale", name=known.signature)
        ElementTree.SubElement(element, "failure", message=f"stale baseline entry: {known.reason}")
    text: bytes = ElementTree.tostring(suite, encoding="utf-8", xml_declaration=True)
    return text
