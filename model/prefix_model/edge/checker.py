"""Spec §20 — ``prefix-model check``: read a log (and a capture), run the engine, report.

The edge of the checker: it opens files, streams their events and requests into the engine,
and turns the result into a report that says what was checked (the vacuity guard, CHK-1) and
what was found. Unreadable input raises ``LogReadError``; a check that checked nothing is
``Unusable``. ``fold_request`` runs the same pass for ``prefix-model request``: the request one
step sent, as the fold implies it.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from prefix_model.conformance import vacuity
from prefix_model.conformance.findings import Finding
from prefix_model.conformance.captured import Captured
from prefix_model.conformance.fold import LogChecker
from prefix_model.conformance.state import InOrder, StepResult
from prefix_model.formats.plain import Known
from prefix_model.core.contracts import Rejection
from prefix_model.core.requests import Request, is_step_number, no_header_in_force, no_such_step
from prefix_model.edge.formats.capture import iter_capture
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.edge.formats.session_jsonl import LogStream, Unread
from prefix_model.formats import rules
from prefix_model.formats.rules import MAX_LINE_BYTES
from prefix_model.formats.session_lines import ZSTD_MAGIC, TornTail

__all__ = ["Report", "Unusable", "check_log", "fold_request", "unusable_json"]


_SHOWN = 10  # requests matched in order, listed in the human report (the JSON report lists all)


STDIN = Path("/dev/stdin")  # what the command line passes for "-"
REPORT_VERSION = 2  # of the --json report (spec/schema/check-report.schema.json)


class Unusable(Exception):
    """Input that reads but gives the check nothing to judge: where, and the rule it breaks (``conformance.vacuity``)."""

    def __init__(self, where: str, rejection: Rejection) -> None:
        super().__init__(f"{where}: {rejection.reason} ({rejection.rule})")
        self.rule = rejection.rule


def unusable_json(error: Exception) -> dict[str, object]:
    """The --json report of an unusable input: the error (file, line and rule where the reader names them)."""
    described: dict[str, object] = {"message": str(error)}
    if isinstance(error, LogReadError):
        described |= {"file": error.path, "line": error.line, "rule": error.rule, "reason": error.reason}
    elif isinstance(error, Unusable):
        described["rule"] = error.rule
    return {"reportVersion": REPORT_VERSION, "result": "unusable", "error": described}


@dataclass
class Report:
    """What a check read, what it checked, and what it found."""

    log: str
    form: str
    compressed: bool
    session_id: str | None
    events: int
    steps: int
    torn: TornTail | None = None  # the tolerated torn tail (FMT-7)
    open_at: tuple[int, int | None] | None = None  # the turn (and step) open where the log ends: a crash the harness repairs on load
    requests_total: int = 0
    requests_checked: int = 0
    requests_auxiliary: int = 0
    requests_other_session: int = 0
    requests_unmatched: int = 0
    requests_by_step: int = 0
    session_source: str | None = None  # what named the session: 'header', '--session' or 'capture' (inferred)
    capture_sessions: dict[str, int] = field(default_factory=dict)  # loop requests per session the capture names
    in_order: list[InOrder] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    capture: str | None = None  # the --requests file
    stopped: tuple[int, Rejection] | None = None  # the line where reading stopped (nothing after it can be trusted), and why
    requests_after_stop: int = 0

    @property
    def torn_tail(self) -> str | None:
        """The torn tail as the text report says it: ``line N (reason)``."""
        return None if self.torn is None else f"line {self.torn.line} ({self.torn.reason})"

    @property
    def open_turn(self) -> str | None:
        """The open turn as the text report says it: ``turn T`` or ``turn T, step S open``."""
        if self.open_at is None:
            return None
        turn, step = self.open_at
        return f"turn {turn}" + ("" if step is None else f", step {step} open")

    @property
    def conforms(self) -> bool:
        """Return whether nothing was found."""
        return not self.findings

    def by_rule(self) -> dict[str, int]:
        """Return how many findings each requirement drew as its strongest, most first (ties by ID)."""
        counts = Counter(f.rule for f in self.findings)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def as_json(self, max_findings: int | None = None) -> dict[str, object]:
        """Return the machine report: the first ``max_findings`` findings (all when None), and a summary of all."""
        shown = self.findings if max_findings is None else self.findings[:max_findings]
        torn = None if self.torn is None else {"file": self.log, "line": self.torn.line, "reason": self.torn.reason}
        open_at = None if self.open_at is None else {"turn": self.open_at[0], "step": self.open_at[1]}
        stopped = None if self.stopped is None else {"file": self.log, "line": self.stopped[0], "rule": self.stopped[1].rule,
                                                     "reason": self.stopped[1].reason, "requestsNotChecked": self.requests_after_stop}  # fmt: skip
        return {
            "reportVersion": REPORT_VERSION,
            "log": self.log,
            "capture": self.capture,
            "form": self.form,
            "compressed": self.compressed,
            "sessionId": self.session_id,
            "sessionFrom": self.session_source,
            "checked": {
                "events": self.events, "steps": self.steps, "tornTail": torn, "openTurn": open_at, "stopped": stopped,
                "requests": {"total": self.requests_total, "checked": self.requests_checked,
                             "auxiliary": self.requests_auxiliary, "otherSession": self.requests_other_session,
                             "unmatched": self.requests_unmatched, "byTurnStep": self.requests_by_step,
                             "inOrder": [m._asdict() for m in self.in_order]},
            },  # fmt: skip
            "findings": [self._located(f) for f in shown],
            "summary": {"findings": len(self.findings), "shown": len(shown), "byRule": self.by_rule()},
            "result": "conforms" if self.conforms else "violates",
        }

    def _located(self, finding: Finding) -> dict[str, object]:
        """A finding as JSON with the file its line is in: the capture's for a request, else the log's."""
        fields = finding.as_json()
        if finding.line is not None:
            fields["file"] = self.capture if finding.request is not None else self.log
        if finding.log_line is not None:
            fields["logFile"] = self.log
        return fields

    def as_text(self, max_findings: int | None = None) -> str:
        """Return the human report: the first ``max_findings`` findings (all when None), then how many each rule drew."""
        form = self.form + (", zstd" if self.compressed else "")
        named = f", session {self.session_id}" + (" (inferred: the capture's only session)" if self.session_source == "capture" else "") if self.session_id else ""
        lines = [f"prefix-model check: {self.log} ({form}{named})"]
        torn = f"; torn tail tolerated at {self.torn_tail}" if self.torn_tail else ""
        lines.append(f"  read {self.events} events, {self.steps} steps{torn}")
        if self.stopped is not None:
            line, why = self.stopped
            lines.append(f"  stopped at line {line} ({why.rule}: {why.reason}): nothing after it can be trusted, so it was not read"
                         + (f"; {self.requests_after_stop} captured request(s) after it not checked" if self.requests_after_stop else ""))  # fmt: skip
        if self.open_turn is not None:
            lines.append(f"  the log ends inside {self.open_turn}: a crash the harness repairs when it loads the session "
                         "(it appends tool results, step/end and turn/end 'interrupted')")  # fmt: skip
        if self.requests_total:
            lines.append(
                f"  requests: {self.requests_total} captured, {self.requests_checked} checked against the log, "
                f"{self.requests_auxiliary} auxiliary (skipped), {self.requests_other_session} of other sessions (skipped), "
                f"{self.requests_unmatched} not matched to a step"
            )
            lines.append(f"  matched: {self.requests_by_step} by the turn/step they name, {len(self.in_order)} in order (they name none)")
            for match in self.in_order[:_SHOWN]:
                lines.append(f"    request {match.request} (line {match.line}) -> turn {match.turn} step {match.step}")
            if len(self.in_order) > _SHOWN:
                lines.append(f"    ... and {len(self.in_order) - _SHOWN} more matched in order (all of them: --json, checked.requests.inOrder)")
        shown = self.findings if max_findings is None else self.findings[:max_findings]
        for finding in shown:
            lines.append("  " + finding.describe(self.log, self.capture or "capture"))
        if len(shown) < len(self.findings):
            lines.append(f"  ... and {len(self.findings) - len(shown)} more finding(s) (all of them: --max-findings 0)")
        if self.findings:
            lines.append("  by rule: " + ", ".join(f"{rule} {count}" for rule, count in self.by_rule().items()))
        verdict = "conforms" if self.conforms else f"violates: {len(self.findings)} finding(s)"
        lines.append(f"result: {verdict}")
        return "\n".join(lines)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector for the pass.

    The pass allocates millions of short-lived values and no reference cycles: reference counting
    frees them, while the cyclic collector only walks the live surface again and again (27% of the
    check's time at 10^5 events, measured with bench/check_bench.py). Memory stays bounded either
    way; the bench reports the peak.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _captured(path: Path, session_id: str | None, report: Report, known: Callable[[], Known | None], adopt: Callable[[str], None]) -> Iterator[Captured]:
    """Yield the capture's loop requests of this session, lazily; count every request read.

    With no session named, the first loop request that names one is taken as the log's (``adopt``);
    the check refuses the result when the capture turns out to hold another session's too.
    """
    for request in iter_capture(path, known):
        report.requests_total += 1
        if request.loop_request and request.session_id is not None:
            report.capture_sessions[request.session_id] = report.capture_sessions.get(request.session_id, 0) + 1
            if session_id is None:
                session_id = request.session_id
                adopt(session_id)
        if not request.loop_request:
            report.requests_auxiliary += 1
        elif session_id is not None and request.session_id is not None and request.session_id != session_id:
            report.requests_other_session += 1
        else:
            yield request
            continue
        request.read_whole()  # a skipped request is still read whole (CAP-1)


@contextmanager
def rereadable(path: Path) -> Iterator[Path]:
    """Yield ``path``, or for a pipe (``/dev/stdin``, a FIFO) a temporary copy of what it holds.

    The check opens the log twice — its first line names the session before the pass — and
    a zstd log is read by seeking to its frames; a pipe allows neither. The copy goes to disk,
    not memory; it has no name where the system allows (a killed check leaves nothing behind),
    and a plain copy stops at the first line the reader would refuse as too long (FMT-5), so
    ``/dev/zero`` costs one bounded line, not the disk.
    """
    try:
        regular = path.is_file() or not path.exists()  # a missing file: the reader reports it
    except OSError as error:  # a name too long, a directory that cannot be searched
        raise LogReadError.of(str(path), None, rules.unreadable(error.strerror or str(error))) from None
    if regular:
        yield path
        return
    import tempfile  # here, not at import: only a pipe is copied (start-up of a check of a file)

    unnamed = _PROC_FD.is_dir()
    with tempfile.TemporaryFile(prefix="prefix-model-") if unnamed else tempfile.NamedTemporaryFile(prefix="prefix-model-") as copy:
        try:
            # Standard input is read from the descriptor it is: opened again by path, a FIFO whose
            # writer has closed would block forever.
            with open(0, "rb", closefd=False) if path == STDIN else path.open("rb") as source:
                _copy_bounded(source, copy, str(path))
        except OSError as error:
            raise LogReadError.of(str(path), None, rules.unreadable(error.strerror or str(error))) from None
        copy.flush()
        yield _PROC_FD / str(copy.fileno()) if unnamed else Path(copy.name)


_PROC_FD = Path("/proc/self/fd")  # opening an entry opens the file anew, at offset 0 (Linux)
_COPY_BLOCK = 1 << 20


def _copy_bounded(source: IO[bytes], copy: IO[bytes], name: str) -> None:
    """Copy ``source`` to ``copy``; for a plain log, stop at a line longer than the reader reads (FMT-5)."""
    first = source.read(_COPY_BLOCK)
    compressed = first.startswith(ZSTD_MAGIC)  # frames are bounded by their reader, not by lines
    block, line, run = first, 1, 0
    while block:
        copy.write(block)
        if not compressed:
            newlines = block.count(b"\n")
            run = len(block) - 1 - block.rfind(b"\n") if newlines else run + len(block)
            line += newlines
            if run > MAX_LINE_BYTES:
                raise LogReadError.of(name, line, rules.line_too_long())
        block = source.read(_COPY_BLOCK)


PROGRESS_EVERY = 4096  # events between two progress reports: a report costs nothing next to them


def check_log(
    log_path: Path, requests_path: Path | None = None, session_id: str | None = None, progress: Callable[[int], None] | None = None
) -> Report:
    """Return the report of checking ``log_path`` (and the capture at ``requests_path``).

    One pass over both files: the capture is read as the log's steps reach its requests, so
    memory follows the log's live surface and one request, not the files. The log may be a pipe.
    ``progress``, when given, is called with the number of events read since its last call.
    """
    with rereadable(log_path) as readable:
        return _check(LogStream(readable, str(log_path)), log_path, requests_path, session_id, progress)


def _check(stream: LogStream, log_path: Path, requests_path: Path | None, session_id: str | None, progress: Callable[[int], None] | None = None) -> Report:
    report = Report(str(log_path), "", False, session_id, 0, 0, capture=None if requests_path is None else str(requests_path))
    header = stream.read_header()
    if header is not None and session_id is not None and header.id != session_id:
        raise Unusable(f"{log_path}: line 1", vacuity.contradicting_session(session_id, header.id))
    # The persisted header names the session; --session names it for the in-memory form; else the capture may.
    named = session_id if session_id is not None else (header.id if header is not None else None)
    report.session_id, report.session_source = named, "--session" if session_id is not None else "header" if named is not None else None

    def adopt(inferred: str) -> None:
        checker.session_id, report.session_id, report.session_source = inferred, inferred, "capture"

    # The reader guesses each request's history from the checker's surface (read lazily, so after it exists).
    known: Callable[[], Known | None] = lambda: checker.known_messages()  # noqa: E731
    captured: Iterable[Captured] = _captured(requests_path, named, report, known, adopt) if requests_path is not None else ()
    seed_length = header.seed_length if header is not None and header.seed_length is not None else 0
    checker = LogChecker(named, captured, seed_length=seed_length)
    with _no_cycle_collection():
        # Going on past a line that is no event: it is a finding, and the lines after it are still read (CHK-4).
        feed = checker.feed  # bound once: this loop runs once per event
        for line, event in stream.plain_events(go_on=True):
            if isinstance(event, Unread):
                if event.early is not None:
                    checker.out_of_order(line, event.early, event.rejection)
                    continue
                checker.unreadable(line, event.rejection)
                if event.final:
                    report.stopped = (line, event.rejection)
                    break
                continue
            feed(line, event)
            if progress is not None and checker.events % PROGRESS_EVERY == 0:
                progress(PROGRESS_EVERY)
        if progress is not None:
            progress(checker.events % PROGRESS_EVERY)
        checker.finish(stopped=report.stopped is not None)
    report.requests_after_stop = checker.requests_after_stop
    report.form, report.compressed = stream.form, stream.compressed
    report.events, report.steps, report.findings = checker.events, checker.steps, list(checker.findings)
    # Where the reading stopped, a turn still open is no crash the log shows: the rest was not read.
    report.torn, report.open_at = stream.torn_tail, None if report.stopped is not None else checker.open_at_end
    report.requests_checked, report.requests_unmatched = checker.requests_checked, checker.requests_unmatched
    report.requests_by_step, report.in_order = checker.requests_by_step, checker.in_order
    if checker.events == 0:
        raise Unusable(str(log_path), vacuity.no_event())
    sessions = ", ".join(sorted(report.capture_sessions))
    if report.session_source == "capture" and len(report.capture_sessions) > 1:
        # Never a guess: which of them is the log's, only the user knows (findings so far are dropped).
        raise Unusable(str(requests_path), vacuity.ambiguous_session(list(report.capture_sessions), str(log_path)))
    if requests_path is not None and checker.requests_checked == 0:
        counts = (report.requests_total, report.requests_auxiliary, report.requests_other_session, report.requests_unmatched)
        raise Unusable(str(requests_path), vacuity.nothing_checked(*counts, report.session_id, list(report.capture_sessions)))
    return report


def fold_request(stream: LogStream, turn: int, step: int, session_id: str | None) -> Request | Rejection | None:
    """Return the request step (turn, step) of the log must have sent, by the conformance fold: check's one pass, in its memory.

    The spec reconstructs it from the whole log frozen (``reconstruct_request``); the fold builds
    the same ``build_request(header, boundary)`` from its own state as the step resolves
    (``LogChecker.request_for``), and reads the log to its end, as the spec's reading does. It
    vouches for that answer only where nothing stands between the two: None — take the spec's
    path, which gives its own request or error — when the log cannot be read (the spec's reader
    names the error in its own words), or when the fold finds anything at all (a log the spec's
    reading refuses, or a step it places otherwise: one named twice, a chunk of another step).
    """
    answers: list[Request | None] = []  # at each step/start naming the step (the spec takes the last)

    def resolved(result: StepResult) -> None:
        if is_step_number(result.turn, turn) and is_step_number(result.step, step):
            answers.append(checker.request_for(result))

    checker = LogChecker(session_id, resolved=resolved)
    try:
        with _no_cycle_collection():
            for line, event in stream.plain_events():
                checker.feed(line, event)
            checker.finish()
    except LogReadError:
        return None
    if checker.findings:
        return None
    if not answers:
        return no_such_step(turn, step)
    request = answers[-1]
    return no_header_in_force(turn, step) if request is None else request
