"""``fuzz --rewrite-baseline``: a baseline brought up to date with the implementation, every entry's reason kept.

A baseline goes stale as an implementation is fixed, and its signatures go stale as the signature
grows more precise (FUZZ-8 added the cause); keeping it by hand means replaying each script and
copying signatures. ``rewrite`` does that: every entry of the run's oracle that has a script is
replayed from a reset through the model and the adapter — one that no longer diverges is dropped
(*fixed*), one that diverges with another signature takes the new one (*renamed*), the others are
kept as written. Entries without a script, and divergences nobody declared, need a campaign, which
runs only when asked for: then an entry no script showed is fixed, and a new divergence is added
only with ``--accept-new REASON`` (its shrunk script with it), never silently. Entries of the other
oracle and the ``conform`` cases are written back untouched.

The file is replaced atomically (a temporary file beside it, renamed over it), and not at all when
the adapter faulted: an entry a crash kept from being judged must not be dropped as fixed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prefix_model.edge.fuzz.campaign import Settings, Unusable, offered_actions, run_campaign
from prefix_model.edge.fuzz.lockstep import Difference, lockstep, model_replies
from prefix_model.edge.runner.baseline import Baseline, KnownDivergence, oracle_of
from prefix_model.edge.runner.client import AdapterFailure, AdapterProcess

__all__ = ["Rewrite", "RewriteInputError", "rewrite", "write_atomically"]


class RewriteInputError(ValueError):
    """A baseline entry's script the model cannot apply: the path, the entry, and why."""


@dataclass
class Rewrite:
    """What a rewrite found and the baseline it makes (``value``, the whole file)."""

    compare: str
    value: dict[str, Any] = field(default_factory=dict)
    kept: int = 0
    fixed: list[dict[str, str]] = field(default_factory=list)  # {signature, reason}
    renamed: list[dict[str, str]] = field(default_factory=list)  # {from, to, reason}
    added: list[str] = field(default_factory=list)  # signatures added with --accept-new
    new: list[str] = field(default_factory=list)  # signatures a campaign showed, not added
    unchecked: list[str] = field(default_factory=list)  # entries with no script, no campaign run
    faults: list[str] = field(default_factory=list)
    out_of_scope: int = 0

    @property
    def written(self) -> bool:
        """Whether the file may be replaced: only when every entry of the oracle was judged."""
        return not self.faults

    def status(self) -> int:
        """Exit status as ``fuzz`` has it: 2 a fault (nothing written), 1 a new divergence left out, else 0."""
        return 2 if self.faults else 1 if self.new else 0

    def to_json(self, path: str) -> dict[str, Any]:
        """The machine report."""
        return {
            "baseline": path, "compare": self.compare, "written": self.written, "kept": self.kept, "fixed": self.fixed,
            "renamed": self.renamed, "added": self.added, "new": self.new, "unchecked": self.unchecked,
            "faults": self.faults, "outOfScope": self.out_of_scope,
        }  # fmt: skip

    def lines(self) -> list[str]:
        """One line per change, in the baseline's order: what stderr shows."""
        return (
            [f"fixed: {f['signature']} ({f['reason']})" for f in self.fixed]
            + [f"renamed: {r['from']} -> {r['to']} ({r['reason']})" for r in self.renamed]
            + [f"added: {s}" for s in self.added]
            + [f"new, not added (--accept-new REASON adds it): {s}" for s in self.new]
            + [f"unchecked (no script; a campaign, --scripts N, judges it): {s}" for s in self.unchecked]
            + [f"fault: {m}" for m in self.faults]
        )

    def summary(self, path: str) -> str:
        """The one-line verdict."""
        scope = f", {self.out_of_scope} of the other oracle untouched" if self.out_of_scope else ""
        what = "rewritten" if self.written else "NOT written (an adapter fault left entries unjudged)"
        return (f"baseline {path} {what} (oracle {oracle_of(self.compare)}): {self.kept} kept, {len(self.fixed)} fixed, "
                f"{len(self.renamed)} renamed, {len(self.added)} added, {len(self.new)} new not added, {len(self.unchecked)} unchecked{scope}")  # fmt: skip


def _replayed(adapter: AdapterProcess, script: tuple[dict[str, Any], ...], compare: str, where: str) -> Difference | None:
    try:
        expected = model_replies(script, domain=False)  # a curated script may hold what no campaign draws
    except ValueError as error:
        raise RewriteInputError(f"{where}/script: the model cannot apply it ({error})") from None
    return lockstep(adapter, script, expected, compare)


def _judge_scripts(command: str, timeout: float, path: Path, raw: list[Any], baseline: Baseline, done: Rewrite) -> list[Any]:
    """Each entry of the oracle with a script replayed: the entries kept (renamed ones with their new signature)."""
    scope = oracle_of(done.compare)
    try:
        adapter = AdapterProcess(command, timeout)
    except AdapterFailure as failure:
        raise Unusable(str(failure)) from None
    kept: list[Any] = []
    try:
        offered_actions(adapter)
        for n, (entry, known) in enumerate(zip(raw, baseline.divergences)):
            if known.oracle != scope or known.script is None:
                kept.append(entry)
                continue
            try:
                found = _replayed(adapter, known.script, done.compare, f"{path}: /divergences/{n}")
            except AdapterFailure as failure:
                done.faults.append(f"{known.signature}: {str(failure).splitlines()[0]}")
                kept.append(entry)
                adapter.restart()
                continue
            if found is None:
                done.fixed.append({"signature": known.signature, "reason": known.reason})
            elif found.signature != known.signature:
                done.renamed.append({"from": known.signature, "to": found.signature, "reason": known.reason})
                kept.append(entry | {"signature": found.signature})
            else:
                kept.append(entry)
    finally:
        adapter.stop()
    return kept


def _as_known(entry: dict[str, Any]) -> KnownDivergence:
    script = entry.get("script")
    return KnownDivergence(entry["signature"], entry["reason"], None if script is None else tuple(script), entry.get("oracle", "events"))


def rewrite(
    command: str, timeout: float, path: Path, raw: dict[str, Any], baseline: Baseline, compare: str,
    campaign: Settings | None = None, accept: str | None = None, progress: Callable[[str], None] | None = None,
) -> Rewrite:  # fmt: skip
    """The baseline ``raw`` (read from ``path`` as ``baseline``) judged anew against ``command`` by the oracle ``compare``.

    ``campaign``, when given, also runs (with every entry of the oracle as its baseline, keeping going); its new
    divergences are added with the reason ``accept``, or listed as new. Nothing is written here.

    :raises Unusable: the adapter cannot take part
    :raises RewriteInputError: an entry's script the model cannot apply
    """
    done = Rewrite(compare)
    scope = oracle_of(compare)
    done.out_of_scope = sum(1 for k in baseline.divergences if k.oracle != scope)
    entries = _judge_scripts(command, timeout, path, list(raw.get("divergences", [])), baseline, done)
    if campaign is not None and not done.faults:
        if progress is not None:
            progress("running the campaign")
        known = tuple(_as_known(e) for e in entries)
        result = run_campaign(command, timeout, replace(campaign, baseline=known, keep_going=True, compare=compare))
        stale = {(k.signature, k.reason) for k in result.stale if k.script is None}
        done.faults += [f"script #{f.script}: {f.message.splitlines()[0]}" for f in result.faults]
        # A script that diverged a moment ago and not now is a flaky adapter, not a fix: judged by neither replay.
        done.faults += [f"{k.signature}: its script diverged on one replay and not on the next" for k in result.stale if k.script is not None]
        remaining = []
        for entry in entries:
            if entry.get("oracle", "events") == scope and entry.get("script") is None and (entry["signature"], entry["reason"]) in stale:
                done.fixed.append({"signature": entry["signature"], "reason": entry["reason"]})
            else:
                remaining.append(entry)
        entries = remaining
        for found in result.new:
            if accept is None:
                done.new.append(found.difference.signature)
                continue
            script = found.shrunk.actions if found.shrunk is not None else found.first.actions[: found.difference.index + 1]
            added: dict[str, Any] = {"signature": found.difference.signature, "reason": accept, "script": list(script)}
            entries.append(added | ({"oracle": scope} if scope != "events" else {}))
            done.added.append(found.difference.signature)
    else:
        done.unchecked = [e["signature"] for e in entries if e.get("oracle", "events") == scope and e.get("script") is None]
    done.kept = sum(1 for e in entries if e.get("oracle", "events") == scope) - len(done.added) - len(done.renamed)
    done.value = {key: value for key, value in raw.items() if key != "divergences"} | {"divergences": entries}
    return done


def write_atomically(path: Path, value: dict[str, Any]) -> bool:
    """Replace ``path`` (through a symbolic link, its target) by ``value`` as indented JSON: a reader or a crash
    sees the old file or the new one, never half of one. The mode of the old file is kept. A file that already
    holds those bytes is left alone (its time too, for make and for editors): return whether it was replaced.

    :raises OSError: the folder cannot take the temporary file, or the rename fails
    """
    target = path.resolve()
    text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
    if target.read_bytes() == text.encode("utf-8"):
        return False
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True
