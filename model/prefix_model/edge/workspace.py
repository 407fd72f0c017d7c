"""Spec §21 — ``prefix-model check`` over a workspace: many logs, each checked as one, one summary.

A workspace is what several LOG arguments name: files, folders searched recursively for session
logs, and patterns (``*``, ``?``, ``[…]``, ``**`` for any number of folders) matched here, so a
quoted pattern works where no shell expands it. Each log is paired with the capture beside it by
name (``capture_of``). Each log is checked exactly as ``check LOG --requests CAPTURE`` checks it
(``checker.check_log``), in ``--jobs`` processes; the results are written in the order the logs
were found, whatever the number of processes, as they arrive: nothing but the totals per rule and
a bounded window of logs in flight is held, so memory does not grow with the workspace.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from pathlib import Path
from typing import IO, NamedTuple

from prefix_model.edge.checker import REPORT_VERSION, Report, Unusable, check_log, unusable_json
from prefix_model.edge.formats.events_jsonl import LogReadError

__all__ = ["Target", "Outcome", "Totals", "WorkspaceError", "capture_of", "is_log_name", "names_many", "discover", "check_all", "outcome_of", "junit_of_one", "Written"]

_LOG_SUFFIXES = (".jsonl.zstd", ".jsonl")
_CAPTURE = "requests"  # a capture is requests.jsonl, or NAME.requests.jsonl
_MAGIC = frozenset("*?[")
_IN_FLIGHT_PER_JOB = 4  # logs submitted ahead of the one being written, per process: enough to keep each busy


class WorkspaceError(Exception):
    """The LOG arguments name no session log at all (a run of nothing is no pass), or the JUnit file cannot be written: one line, exit 2."""


class Target(NamedTuple):
    """One log to check, the capture paired with it, or why the argument that named it gave none."""

    log: str
    capture: str | None = None
    error: str | None = None  # a folder or pattern without logs, a folder that cannot be read


def _base(name: str) -> str | None:
    """``name`` without its log suffix, or None when it is no log's name."""
    for suffix in _LOG_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def is_log_name(name: str) -> bool:
    """Whether a file called ``name`` is taken as a session log when a folder or a pattern is searched.

    ``*.jsonl`` and ``*.jsonl.zstd``, except captures (``requests.jsonl``, ``NAME.requests.jsonl``):
    they are read with the log they belong to.
    """
    base = _base(name)
    return base is not None and base != _CAPTURE and not base.endswith("." + _CAPTURE)


def capture_of(log: Path) -> Path | None:
    """Return the capture paired with ``log`` by name, if it is there: the workspace convention.

    ``session.jsonl[.zstd]`` (the harness's own name, one session per folder) pairs with
    ``requests.jsonl`` in its folder; ``NAME.jsonl``, ``NAME.events.jsonl`` and
    ``NAME.session.jsonl`` (each ``[.zstd]``) pair with ``NAME.requests.jsonl`` beside them.
    """
    base = _base(log.name)
    if base is None:
        return None
    if base == "session":
        name = _CAPTURE
    else:
        for kind in (".events", ".session"):
            if base.endswith(kind) and len(base) > len(kind):
                base = base[: -len(kind)]
                break
        name = f"{base}.{_CAPTURE}"
    capture = log.with_name(name + ".jsonl")
    return capture if os.path.lexists(capture) else None


def _has_magic(word: str) -> bool:
    return not _MAGIC.isdisjoint(word)


def names_many(word: str) -> bool:
    """Whether the LOG argument ``word`` names a workspace (a folder, or a pattern no file is named) rather than one log."""
    return word != "-" and (os.path.isdir(word) or (_has_magic(word) and not os.path.lexists(word)))


def _sorted_entries(folder: str) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as entries:
        return sorted(entries, key=lambda entry: entry.name)


def _walk(root: str, seen: set[tuple[int, int]], depth: int | None = None) -> Iterator[tuple[str, str | None]]:
    """Yield (path, None) for every file under ``root`` in name order, depth first; (folder, why) for one that cannot be read.

    Symbolic links to folders are followed, each folder entered once (``seen``: device and inode),
    so a link back up the tree is no loop. A link that leads nowhere is yielded as a file: the check
    reports it unreadable, by name. With ``depth``, only files at most that many names below
    ``root`` are yielded, and no folder deeper is entered (a pattern without ``**``).
    """
    stack: list[Iterator[os.DirEntry[str]]] = []

    def enter(folder: str) -> str | None:
        try:
            status = os.stat(folder)
            if (status.st_dev, status.st_ino) in seen:
                return None
            seen.add((status.st_dev, status.st_ino))
            stack.append(iter(_sorted_entries(folder)))
        except OSError as error:
            return error.strerror or str(error)
        return None

    if (why := enter(root)) is not None:
        yield root, why
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        try:
            folder = entry.is_dir()
        except OSError:
            folder = False
        if not folder:
            yield entry.path, None
        elif depth is not None and len(stack) >= depth:
            continue
        elif (why := enter(entry.path)) is not None:
            yield entry.path, why


def _matches(parts: Sequence[str], pattern: Sequence[str]) -> bool:
    """Whether path components ``parts`` match ``pattern``'s, ``**`` standing for any number of them."""
    from fnmatch import fnmatchcase  # here: only a pattern needs it

    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_matches(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _matches(parts[1:], pattern[1:])


def _found(word: str, seen: set[tuple[int, int]]) -> Iterator[Target]:
    """The targets one LOG argument names: itself (a file), the logs under it (a folder), or those it matches (a pattern)."""
    if not names_many(word):
        yield _paired(word)
        return
    if os.path.isdir(word):
        if _searched(word, seen):  # named twice, or inside a folder named before: its logs are in the report once
            return
        root, pattern, walked = word, None, _walk(word, seen)
    else:
        parts = Path(word).parts
        fixed = next(i for i, part in enumerate(parts) if _has_magic(part))
        root, pattern = str(Path(*parts[:fixed])) if fixed else ".", parts[fixed:]
        bound = None if "**" in pattern else len(pattern)
        # A pattern walks its own folders (set()): another pattern under the same folder matches other files.
        walked = _walk(root, set(), bound) if os.path.isdir(root) else iter(())  # its folder not there: no match
    found = 0
    for path, why in walked:
        if why is not None:
            found += 1
            yield Target(path, error=f"{path}: the folder cannot be read: {why}")
            continue
        if not is_log_name(os.path.basename(path)):
            continue
        if pattern is not None and not _matches(Path(os.path.relpath(path, root)).parts, pattern):
            continue
        found += 1
        yield _paired(path)
    if not found:
        yield Target(word, error=f"{word}: no session log there (*.jsonl, *.jsonl.zstd; captures are read with their log)")


def _searched(folder: str, seen: set[tuple[int, int]]) -> bool:
    try:
        status = os.stat(folder)
    except OSError:  # the walk reports it
        return False
    return (status.st_dev, status.st_ino) in seen


def _paired(path: str) -> Target:
    capture = capture_of(Path(path))
    return Target(path, None if capture is None else str(capture))


def _targets(words: Sequence[str]) -> Iterator[Target]:
    seen: set[tuple[int, int]] = set()  # shared: a folder named twice, or reached again by a link, is searched once
    return (target for word in words for target in _found(word, seen))


def discover(words: Sequence[str]) -> Iterator[Target]:
    """Return every log the LOG arguments name, in their order, each folder's in name order (a stream, never a list).

    Raises ``WorkspaceError`` when no argument names a log: found out before the first log is returned,
    holding only the arguments' errors met until then.
    """
    targets = _targets(words)
    held: list[Target] = []
    for target in targets:
        held.append(target)
        if target.error is None:
            return chain(held, targets)
    raise WorkspaceError("; ".join(target.error or "" for target in held))


@dataclass(frozen=True)
class Outcome:
    """One log's result, reduced to what the workspace report writes: small, and cheap to send between processes."""

    log: str
    capture: str | None
    result: str  # conforms, violates or unusable
    events: int = 0
    steps: int = 0
    requests: int = 0
    findings: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)
    shown: tuple[str, ...] = ()  # the findings as text, the first --max-findings
    error: str | None = None
    report: dict[str, object] | None = None  # the check's own --json report, when asked for


def outcome_of(report: Report, cap: int | None, as_json: bool) -> Outcome:
    """Return the outcome of one log's report: ``cap`` findings as text (all when None), its JSON report if asked."""
    findings = report.findings if cap is None else report.findings[:cap]
    return Outcome(
        report.log, report.capture, "conforms" if report.conforms else "violates", report.events, report.steps,
        report.requests_checked, len(report.findings), report.by_rule(),
        tuple(f.describe(report.log, report.capture or "capture") for f in findings),
        report=report.as_json(cap) if as_json else None,
    )  # fmt: skip


def junit_of_one(checked: Report | LogReadError | Unusable, log: str, cap: int | None, path: Path) -> None:
    """Write the JUnit report of one log checked alone (``check LOG --junit FILE``): the workspace's, with one testcase."""
    junit = _JUnit()
    junit.add(outcome_of(checked, cap, False) if isinstance(checked, Report) else Outcome(log, None, "unusable", error=str(checked)))
    junit.write(path, 1)


def _check_one(cap: int | None, as_json: bool, target: Target) -> Outcome:
    """Check one target in whatever process runs it; an unusable log is its outcome, not the run's end."""
    if target.error is not None:
        return Outcome(target.log, target.capture, "unusable", error=target.error,
                       report=unusable_json(WorkspaceError(target.error)) if as_json else None)  # fmt: skip
    try:
        report = check_log(Path(target.log), None if target.capture is None else Path(target.capture))
    except (LogReadError, Unusable) as error:
        return Outcome(target.log, target.capture, "unusable", error=str(error), report=unusable_json(error) if as_json else None)
    return outcome_of(report, cap, as_json)


def _in_order(work: Callable[[Target], Outcome], targets: Iterable[Target], jobs: int) -> Iterator[Outcome]:
    """Yield ``work`` of each target in the targets' order, run in ``jobs`` processes, a bounded number ahead."""
    if jobs == 1:
        yield from map(work, targets)
        return
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(jobs)
    window: deque[tuple[Target, Future[Outcome]]] = deque()

    def first() -> Outcome:
        target, future = window.popleft()
        try:
            return future.result()
        except BrokenProcessPool:  # killed (out of memory?): one line and exit 2, never a traceback that exits 1, "violates"
            raise WorkspaceError(f"{target.log}: a --jobs process ended before it gave a result (killed, or out of memory); "
                                 "the report stops there") from None  # fmt: skip

    try:
        for target in targets:
            window.append((target, pool.submit(work, target)))
            if len(window) >= jobs * _IN_FLIGHT_PER_JOB:
                yield first()
        while window:
            yield first()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class Totals:
    """What the summary counts: logs per result, findings per rule, what was read."""

    results: Counter[str] = field(default_factory=Counter)
    by_rule: Counter[str] = field(default_factory=Counter)
    logs_by_rule: Counter[str] = field(default_factory=Counter)
    events: int = 0
    steps: int = 0
    requests: int = 0

    def add(self, outcome: Outcome) -> None:
        self.results[outcome.result] += 1
        self.by_rule.update(outcome.by_rule)
        self.logs_by_rule.update(outcome.by_rule.keys())
        self.events, self.steps, self.requests = self.events + outcome.events, self.steps + outcome.steps, self.requests + outcome.requests

    @property
    def logs(self) -> int:
        return sum(self.results.values())

    @property
    def result(self) -> str:
        """unusable when any log was, else violates when any log does, else conforms."""
        return next((r for r in ("unusable", "violates") if self.results[r]), "conforms")

    def rules(self) -> list[tuple[str, int, int]]:
        """(rule, findings, logs) most findings first, ties by ID."""
        return sorted(((rule, count, self.logs_by_rule[rule]) for rule, count in self.by_rule.items()), key=lambda r: (-r[1], r[0]))

    def as_json(self) -> dict[str, object]:
        return {"logs": self.logs, "conforms": self.results["conforms"], "violates": self.results["violates"],
                "unusable": self.results["unusable"], "findings": sum(self.by_rule.values()),
                "byRule": {rule: {"findings": count, "logs": logs} for rule, count, logs in self.rules()},
                "checked": {"events": self.events, "steps": self.steps, "requests": self.requests}}  # fmt: skip

    def as_text(self) -> list[str]:
        lines = []
        if self.by_rule:
            lines.append("by rule: " + ", ".join(f"{rule} {count} in {logs} log{'s' if logs != 1 else ''}" for rule, count, logs in self.rules()))
        counts = ", ".join(f"{self.results[r]} {r}" for r in ("conforms", "violates", "unusable"))
        lines.append(f"result: {self.result}: {self.logs} log{'s' if self.logs != 1 else ''} ({counts}); "
                     f"{self.events} events, {self.steps} steps, {self.requests} requests checked")  # fmt: skip
        return lines


def _text(outcome: Outcome) -> list[str]:
    """One log's lines in the text report: its verdict, and for a violation its findings."""
    paired = f" + {outcome.capture}" if outcome.capture is not None else ""
    if outcome.result == "unusable":
        return [f"unusable  {outcome.log}{paired}", f"  {outcome.error}"]
    read = f"{outcome.events} events, {outcome.steps} steps" + (f", {outcome.requests} requests checked" if outcome.capture else "")
    if outcome.result == "conforms":
        return [f"conforms  {outcome.log}{paired}: {read}"]
    lines = [f"violates  {outcome.log}{paired}: {outcome.findings} finding(s); {read}"]
    lines += [f"  {shown}" for shown in outcome.shown]
    if len(outcome.shown) < outcome.findings:
        lines.append(f"  ... and {outcome.findings - len(outcome.shown)} more finding(s) (all of them: --max-findings 0)")
    lines.append("  by rule: " + ", ".join(f"{rule} {count}" for rule, count in outcome.by_rule.items()))
    return lines


class _JUnit:
    """JUnit XML written as the logs come: each log's testcase spooled to disk, the suite's counts put in front at the end."""

    def __init__(self) -> None:
        import tempfile

        self.spool: IO[bytes] = tempfile.TemporaryFile(prefix="prefix-model-junit-")
        self.failures = self.errors = 0

    def add(self, outcome: Outcome) -> None:
        from xml.etree import ElementTree

        case = ElementTree.Element("testcase", classname="prefix-model check", name=outcome.log)
        if outcome.result == "unusable":
            self.errors += 1
            ElementTree.SubElement(case, "error", message=outcome.error or "unusable").text = outcome.error
        elif outcome.result == "violates":
            self.failures += 1
            for shown in outcome.shown:
                ElementTree.SubElement(case, "failure", message=shown.splitlines()[0]).text = shown
            if len(outcome.shown) < outcome.findings:
                more = f"... and {outcome.findings - len(outcome.shown)} more finding(s): " + ", ".join(f"{r} {c}" for r, c in outcome.by_rule.items())
                ElementTree.SubElement(case, "failure", message=more)
        self.spool.write(ElementTree.tostring(case, encoding="unicode").encode("utf-8") + b"\n")

    def write(self, path: Path, logs: int) -> None:
        from shutil import copyfileobj
        from xml.sax.saxutils import quoteattr

        self.spool.seek(0)
        try:
            with path.open("wb") as out:
                out.write(b"<?xml version='1.0' encoding='utf-8'?>\n")
                out.write(f'<testsuite name={quoteattr("prefix-model check")} tests="{logs}" failures="{self.failures}" errors="{self.errors}" skipped="0">\n'.encode())
                copyfileobj(self.spool, out)
                out.write(b"</testsuite>\n")
        except OSError as error:
            raise WorkspaceError(f"{path}: cannot write the JUnit report: {error.strerror or error}") from None
        finally:
            self.spool.close()


@dataclass
class Written:
    """What ``check_all`` wrote: the totals, and the exit status they mean."""

    totals: Totals
    status: int


def check_all(
    targets: Iterable[Target], out: IO[str], *, jobs: int = 1, cap: int | None = None, as_json: bool = False,
    junit: Path | None = None, progress: Callable[[], None] | None = None,
) -> Written:  # fmt: skip
    """Check every target in ``jobs`` processes and write the report to ``out`` as results come, in the targets' order.

    Text: a line per log (its findings under a violation), totals per rule, a result line. JSON:
    one object, ``logs`` an array of ``{log, capture, report}`` (each ``report`` the single log's
    --json report), then ``summary`` and ``result``. The status: 2 when any log was unusable, else
    1 when any violates, else 0.
    """
    totals = Totals()
    report = _JUnit() if junit is not None else None
    if as_json:
        out.write(json.dumps({"reportVersion": REPORT_VERSION, "logs": []})[:-2])  # the object opened, its array left open
    for index, outcome in enumerate(_in_order(partial(_check_one, cap, as_json), targets, jobs)):
        totals.add(outcome)
        if report is not None:
            report.add(outcome)
        if as_json:
            item = {"log": outcome.log, "capture": outcome.capture, "report": outcome.report}
            out.write(("," if index else "") + "\n" + json.dumps(item, ensure_ascii=False))
        else:
            out.write("\n".join(_text(outcome)) + "\n")
        if progress is not None:
            progress()
    if as_json:
        out.write("\n], " + json.dumps({"summary": totals.as_json(), "result": totals.result})[1:] + "\n")
    else:
        out.write("\n".join(totals.as_text()) + "\n")
    if report is not None and junit is not None:
        report.write(junit, totals.logs)
    return Written(totals, {"conforms": 0, "violates": 1, "unusable": 2}[totals.result])
