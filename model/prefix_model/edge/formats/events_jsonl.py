"""Spec §8 — reading the harness's in-memory event-line files.

A file is read line by line with the line rules of ``formats.event_lines`` and the Session
constructor's seed rules (every rule of §2 and §3, LOG-12). Anything unreadable is a
``LogReadError`` naming the file, the line and the rule — never another exception (FMT-2).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefix_model.core.contracts import Rejection
from prefix_model.core.events import Event
from prefix_model.core.json_values import FrozenMap
from prefix_model.core.log import Log, seed_log
from prefix_model.formats import rules
from prefix_model.formats.event_lines import parse_event, parse_json_line
from prefix_model.formats.rules import MAX_LINE_BYTES

__all__ = ["LogReadError", "read_log", "read_log_lines"]


class LogReadError(Exception):
    """An input that cannot be read as a harness log: file, line (1-based; None for the whole file), rule, reason."""

    def __init__(self, path: str, line: int | None, rule: str, reason: str) -> None:
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {rule}: {reason}")
        self.path, self.line, self.rule, self.reason = path, line, rule, reason

    @classmethod
    def of(cls, path: str, line: int | None, rejection: Rejection) -> LogReadError:
        """Return the error of reading ``path`` at ``line``, for the rule ``rejection`` states."""
        return cls(path, line, rejection.rule, rejection.reason)


def read_log_lines(lines: Iterable[bytes], path: str) -> Log:
    """Return the log that byte ``lines`` hold; raise ``LogReadError`` at the first unreadable line."""
    events: list[Event] = []
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise LogReadError.of(path, number, rules.line_too_long())
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LogReadError.of(path, number, rules.not_utf8(error.reason, error.start)) from None
        if not text.strip():
            raise LogReadError.of(path, number, rules.empty_line())
        parsed = parse_json_line(text)
        if number == 1 and isinstance(parsed, FrozenMap) and parsed.get("type") == "session":
            raise LogReadError.of(path, number, rules.persisted_header_in_memory_form())
        event = parsed if isinstance(parsed, Rejection) else parse_event(parsed)
        if isinstance(event, Rejection):
            raise LogReadError.of(path, number, event)
        events.append(event)
    if not events:
        raise LogReadError.of(path, 1, rules.no_event())
    log = seed_log(tuple(events))
    if isinstance(log, Rejection):
        line = None if log.seq is None else log.seq + 1  # seq = index, so event seq N is line N + 1
        raise LogReadError.of(path, line, log)
    return log


def _lines(handle: Iterable[bytes]) -> Iterable[bytes]:
    for raw in handle:
        yield raw[:-1] if raw.endswith(b"\n") else raw


def read_log(path: str | Path, name: str | None = None) -> Log:
    """Return the log in the in-memory event-line file at ``path`` (FMT-1..FMT-6); errors call it ``name`` (default: the path)."""
    name = str(path) if name is None else name
    try:
        with open(path, "rb") as handle:
            return read_log_lines(_lines(handle), name)
    except OSError as error:
        raise LogReadError.of(name, None, rules.unreadable(error.strerror or str(error))) from None
