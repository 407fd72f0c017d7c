"""``fuzz --rewrite-baseline``: a baseline brought up to date with the implementation, every entry's reason kept.

A baseline goes stale as an implementation is fixed, and its signatures go stale as the signature
grows more precise (FUZZ-8 added the cause); keeping it by hand means replaying each script and
copying signatures. ``rewrite`` does that: every entry of the run's oracle that has a script is
replayed from a reset through the model and the adapter — one that no longer diverges is dropped
(*fixed*), one that diverges with another signature takes the new one (*renamed*), the others are
kept as written. Entries without a script, and divergences nobody declared, need a campaign, which
runs only when asked for: then an entry no script showed is fixed, and a new divergence is added
only with a reason the user gave (``Accept``: one for every new divergence, one per signature, or
— under ``--compare requests`` — the reason of the events-oracle entry whose requests face it is),
its shrunk script with it, never silently; one no reason covers is left out. Entries of the
oracle that come to show one signature (a rename onto another's) are merged into one, every
reason kept and the merge reported. Entries of the other oracle and the ``conform`` cases are
written back untouched.

The file is replaced atomically (a temporary file beside it, renamed over it), and not at all when
the adapter faulted: an entry a crash kept from being judged must not be dropped as fixed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prefix_model.edge.fuzz.campaign import Found, Settings, Unusable, offered_actions, run_campaign
from prefix_model.edge.fuzz.lockstep import Difference, lockstep, model_replies
from prefix_model.edge.runner.baseline import Baseline, KnownDivergence, oracle_of
from prefix_model.edge.runner.client import AdapterFailure, AdapterProcess

__all__ = ["Accept", "Rewrite", "RewriteInputError", "rewrite", "write_atomically"]


class RewriteInputError(ValueError):
    """A baseline entry's script the model cannot apply: the path, the entry, and why."""


@dataclass(frozen=True, slots=True)
class Accept:
    """Which of a campaign's new divergences a rewrite adds, and with which reason: the one given for its signature
    (``--accept-new-from FILE``), else — a divergence of the requests oracle that is the requests face of an entry
    the events oracle declares, with ``faces`` (``--accept-known-faces``) — that entry's reason, else the one given
    for every divergence (``--accept-new REASON``). A new divergence none of them covers is left out, never added
    with a reason written for another."""

    every: str | None = None
    each: Mapping[str, str] = field(default_factory=dict)
    faces: bool = False

    def reason(self, signature: str, face: str | None) -> str | None:
        """The reason a new divergence ``signature`` is added with (``face``: its reason as a requests face), or None."""
        if signature in self.each:
            return self.each[signature]
        return face if self.faces and face is not None else self.every


@dataclass
class Rewrite:
    """What a rewrite found and the baseline it makes (``value``, the whole file)."""

    compare: str
    value: dict[str, Any] = field(default_factory=dict)
    kept: int = 0
    fixed: list[dict[str, str]] = field(default_factory=list)  # {signature, reason}
    renamed: list[dict[str, str]] = field(default_factory=list)  # {from, to, reason}
    merged: list[dict[str, Any]] = field(default_factory=list)  # {signature, from: [signature], reasons: [reason]}
    added: list[str] = field(default_factory=list)  # signatures added with a reason given (or derived, for a face)
    new: list[str] = field(default_factory=list)  # signatures a campaign showed, not added
    faces: list[dict[str, str]] = field(default_factory=list)  # {signature, of}: a new requests divergence, the events entry it is the face of
    unused: list[str] = field(default_factory=list)  # signatures given a reason (--accept-new-from) that no new divergence has
    unchecked: list[str] = field(default_factory=list)  # entries with no script, no campaign run
    faults: list[str] = field(default_factory=list)
    out_of_scope: int = 0

    @property
    def written(self) -> bool:
        """Whether the file may be replaced: only when every entry of the oracle was judged."""
        return not self.faults

    def status(self) -> int:
        """Exit status as ``fuzz`` has it: 2 a fault (nothing written), 1 a new divergence left out or entries merged, else 0."""
        return 2 if self.faults else 1 if self.new or self.merged else 0

    def to_json(self, path: str) -> dict[str, Any]:
        """The machine report."""
        return {
            "baseline": path, "compare": self.compare, "written": self.written, "kept": self.kept, "fixed": self.fixed,
            "renamed": self.renamed, "merged": self.merged, "added": self.added, "new": self.new, "faces": self.faces,
            "unused": self.unused, "unchecked": self.unchecked, "faults": self.faults, "outOfScope": self.out_of_scope,
        }  # fmt: skip

    def lines(self) -> list[str]:
        """One line per change, in the baseline's order: what stderr shows."""
        return (
            [f"fixed: {f['signature']} ({f['reason']})" for f in self.fixed]
            + [f"renamed: {r['from']} -> {r['to']} ({r['reason']})" for r in self.renamed]
            + [f"merged: {len(m['from'])} entries now show {m['signature']} (once {' | '.join(m['from'])}): one entry, their reasons joined" for m in self.merged]
            + [f"face: {f['signature']} is the requests face of the events-oracle entry {f['of']}" for f in self.faces]
            + [f"added: {s}" for s in self.added]
            + [f"new, not added (no reason given for it: --accept-new REASON, --accept-new-from FILE{faced}): {s}"
               for s, faced in ((s, ", --accept-known-faces" if any(f["signature"] == s for f in self.faces) else "") for s in self.new)]
            + [f"unused reason (no new divergence has the signature): {s}" for s in self.unused]
            + [f"unchecked (no script; a campaign, --scripts N, judges it): {s}" for s in self.unchecked]
            + [f"fault: {m}" for m in self.faults]
        )

    def summary(self, path: str) -> str:
        """The one-line verdict."""
        scope = f", {self.out_of_scope} of the other oracle untouched" if self.out_of_scope else ""
        what = "rewritten" if self.written else "NOT written (an adapter fault left entries unjudged)"
        return (f"baseline {path} {what} (oracle {oracle_of(self.compare)}): {self.kept} kept, {len(self.fixed)} fixed, "
                f"{len(self.renamed)} renamed, {len(self.merged)} merged, {len(self.added)} added, {len(self.new)} new not added, "
                f"{len(self.unchecked)} unchecked{scope}")  # fmt: skip


@contextmanager
def _adapter(command: str, timeout: float) -> Iterator[AdapterProcess]:
    """An adapter process that runs scenarios, stopped on the way out."""
    try:
        adapter = AdapterProcess(command, timeout)
    except AdapterFailure as failure:
        raise Unusable(str(failure)) from None
    try:
        offered_actions(adapter)
        yield adapter
    finally:
        adapter.stop()


def _replayed(adapter: AdapterProcess, script: Sequence[dict[str, Any]], compare: str, where: str) -> Difference | None:
    try:
        expected = model_replies(script, domain=False)  # a curated script may hold what no campaign draws
    except ValueError as error:
        raise RewriteInputError(f"{where}/script: the model cannot apply it ({error})") from None
    return lockstep(adapter, script, expected, compare)


Judged = list[tuple[Any, str]]  # each entry kept, with its signature as the file had it


def _judge_scripts(command: str, timeout: float, path: Path, raw: list[Any], baseline: Baseline, done: Rewrite) -> Judged:
    """Each entry of the oracle with a script replayed: the entries kept (renamed ones with their new signature)."""
    scope = oracle_of(done.compare)
    kept: Judged = []
    with _adapter(command, timeout) as adapter:
        for n, (entry, known) in enumerate(zip(raw, baseline.divergences)):
            if known.oracle != scope or known.script is None:
                kept.append((entry, known.signature))
                continue
            try:
                found = _replayed(adapter, known.script, done.compare, f"{path}: /divergences/{n}")
            except AdapterFailure as failure:
                done.faults.append(f"{known.signature}: {str(failure).splitlines()[0]}")
                kept.append((entry, known.signature))
                adapter.restart()
                continue
            if found is None:
                done.fixed.append({"signature": known.signature, "reason": known.reason})
            elif found.signature != known.signature:
                done.renamed.append({"from": known.signature, "to": found.signature, "reason": known.reason})
                kept.append((entry | {"signature": found.signature}, known.signature))
            else:
                kept.append((entry, known.signature))
    return kept


def _merge(judged: Judged, scope: str, done: Rewrite) -> list[Any]:
    """Entries of the oracle that show one signature (a rename onto another's, two renamed alike, or written twice) made
    one: the first in the file's order, where it stood, with its members, the first script of the group and every
    distinct reason joined in order — a baseline matches by signature, so the others would never be reported, nor
    ever found stale."""
    groups: dict[str, list[int]] = {}
    for n, (entry, _) in enumerate(judged):
        if entry.get("oracle", "events") == scope:
            groups.setdefault(entry["signature"], []).append(n)
    entries = [entry for entry, _ in judged]
    gone: set[int] = set()
    for signature, members in groups.items():
        if len(members) < 2:
            continue
        reasons = [judged[n][0]["reason"] for n in members]
        joined = reasons[0]
        for n in members[1:]:
            if judged[n][0]["reason"] not in reasons[: members.index(n)]:
                joined += f" [merged with the entry once {judged[n][1]}: {judged[n][0]['reason']}]"
        script = next((judged[n][0]["script"] for n in members if judged[n][0].get("script") is not None), None)
        entries[members[0]] = judged[members[0]][0] | {"reason": joined} | ({} if script is None else {"script": script})
        gone.update(members[1:])
        done.merged.append({"signature": signature, "from": [judged[n][1] for n in members], "reasons": reasons})
    return [entry for n, entry in enumerate(entries) if n not in gone]


def _faces(command: str, timeout: float, found: Sequence[Found], entries: list[Any], done: Rewrite) -> dict[str, str]:
    """Each new divergence of the requests oracle, its script replayed by the events oracle: where that stops at a
    divergence the file declares for the events oracle, the new one is that entry's requests face — the same cause,
    seen where only what is sent is compared. Its reason as a face: the entry's, said to be so."""
    declared: dict[str, str] = {}
    for entry in entries:
        if entry.get("oracle", "events") == "events":
            declared.setdefault(entry["signature"], entry["reason"])
    faces: dict[str, str] = {}
    if not declared or not found:
        return faces
    with _adapter(command, timeout) as adapter:
        for each in found:
            signature = each.difference.signature
            try:
                events = _replayed(adapter, each.shown, "all", f"the shrunk script of {signature}")
            except AdapterFailure as failure:
                done.faults.append(f"{signature} (replayed by the events oracle): {str(failure).splitlines()[0]}")
                adapter.restart()
                continue
            if events is not None and events.signature in declared:
                done.faces.append({"signature": signature, "of": events.signature})
                faces[signature] = (f"the requests face of the events-oracle entry `{events.signature}` (its script, replayed "
                                    f"by the events oracle, stops there): {declared[events.signature]}")  # fmt: skip
    return faces


def _as_known(entry: dict[str, Any]) -> KnownDivergence:
    script = entry.get("script")
    return KnownDivergence(entry["signature"], entry["reason"], None if script is None else tuple(script), entry.get("oracle", "events"))


def rewrite(
    command: str, timeout: float, path: Path, raw: dict[str, Any], baseline: Baseline, compare: str,
    campaign: Settings | None = None, accept: Accept = Accept(), progress: Callable[[str], None] | None = None,
) -> Rewrite:  # fmt: skip
    """The baseline ``raw`` (read from ``path`` as ``baseline``) judged anew against ``command`` by the oracle ``compare``.

    ``campaign``, when given, also runs (with every entry of the oracle as its baseline, keeping going); each of its
    new divergences is added with the reason ``accept`` gives it, or listed as new. Nothing is written here.

    :raises Unusable: the adapter cannot take part
    :raises RewriteInputError: an entry's script the model cannot apply
    """
    done = Rewrite(compare)
    scope = oracle_of(compare)
    done.out_of_scope = sum(1 for k in baseline.divergences if k.oracle != scope)
    written = list(raw.get("divergences", []))
    entries = _merge(_judge_scripts(command, timeout, path, written, baseline, done), scope, done)
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
        faces = _faces(command, timeout, result.new, entries, done) if scope == "requests" and not done.faults else {}
        for found in result.new:
            signature = found.difference.signature
            reason = accept.reason(signature, faces.get(signature))
            if reason is None:
                done.new.append(signature)
                continue
            added: dict[str, Any] = {"signature": signature, "reason": reason, "script": list(found.shown)}
            entries.append(added | ({"oracle": scope} if scope != "events" else {}))
            done.added.append(signature)
        done.unused = [s for s in accept.each if s not in {f.difference.signature for f in result.new}]
    else:
        done.unchecked = [e["signature"] for e in entries if e.get("oracle", "events") == scope and e.get("script") is None]
    as_written = {id(entry) for entry in written}
    done.kept = sum(1 for e in entries if e.get("oracle", "events") == scope and id(e) in as_written)  # each entry as the file had it
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
