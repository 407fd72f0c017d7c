"""The implementation under test as a child process: the consumer's Adapter, Checker and Reader over the protocol.

Every read has a deadline and a size cap, so an adapter that hangs, floods or writes garbage
fails the call (``AdapterFailure``, with the tail of its stderr) instead of hanging ``conform``;
``restart`` starts a fresh process for the next case.
"""

from __future__ import annotations

import base64
import collections
import json
import queue
import shlex
import subprocess
import threading
from collections.abc import Sequence
from typing import IO, Any

from prefix_model.edge.runner.protocol import PROTOCOL_VERSION, ProtocolError, request, result_of
from prefix_model.edge.runner.consumer import ActionRefused, FileRead, JsonObject, Unreadable

__all__ = ["AdapterFailure", "AdapterError", "AdapterProcess", "MAX_LINE"]

MAX_LINE = 64 * 1024 * 1024  # one response line; a longer one is garbage, not memory to spend
_STDERR_TAIL = 40  # lines of the adapter's stderr kept for a failure report


class AdapterFailure(Exception):
    """The adapter crashed, hung, or broke the protocol; ``stderr`` is the tail of what it wrote there."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message + (f"\n    adapter stderr (tail):\n{stderr}" if stderr else ""))
        self.reason, self.stderr = message, stderr


def _pump(stream: IO[str], lines: "queue.Queue[str | None]") -> None:
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            lines.put(None)
            return
        lines.put(line)


def _drain(stream: IO[str], tail: "collections.deque[str]") -> None:
    for line in iter(stream.readline, ""):
        tail.append(line.rstrip("\n")[:500])


class AdapterProcess:
    """A running adapter: ``hello`` done at start; the consumer's three protocols on top of ``call``."""

    def __init__(self, command: str, timeout: float) -> None:
        self.argv, self.timeout = shlex.split(command), timeout
        self.hello: dict[str, Any] = {}
        self._process: subprocess.Popen[str] | None = None
        self._next = 0
        self._logs: dict[str, list[JsonObject]] = {}
        self._requests: list[JsonObject] = []
        self.start()

    # --- the process ---

    def start(self) -> None:
        """Start the adapter and exchange ``hello``; raise ``AdapterFailure`` if it will not start or speak."""
        try:
            self._process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1
            )
        except OSError as error:
            raise AdapterFailure(f"the adapter will not start: {' '.join(self.argv)}: {error.strerror or error}") from None
        assert self._process.stdout is not None and self._process.stderr is not None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        threading.Thread(target=_pump, args=(self._process.stdout, self._lines), daemon=True).start()
        threading.Thread(target=_drain, args=(self._process.stderr, self._stderr), daemon=True).start()
        self.hello = self.call("hello", {"protocol": PROTOCOL_VERSION})
        if self.hello.get("protocol") != PROTOCOL_VERSION:
            raise AdapterFailure(f"the adapter speaks protocol {self.hello.get('protocol')!r}, not {PROTOCOL_VERSION}")

    def restart(self) -> None:
        """Stop the adapter (killing it if need be) and start a fresh one."""
        self.stop()
        self.start()

    def stop(self) -> None:
        """Ask the adapter to shut down, then kill it if it does not exit."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.poll() is None and process.stdin is not None:
                process.stdin.write(json.dumps(request(self._next, "shutdown", {})) + "\n")
                process.stdin.flush()
            process.wait(timeout=2)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    @staticmethod
    def _kill(process: subprocess.Popen[str]) -> None:
        # Reaped at once, so alive() says so and the next case starts a fresh adapter instead of being charged with this one.
        process.kill()
        process.wait()

    def alive(self) -> bool:
        """Return whether the adapter process is still running."""
        return self._process is not None and self._process.poll() is None

    def _tail(self) -> str:
        return "\n".join(f"      {line}" for line in self._stderr)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its result; raise the error as ``AdapterError``, anything else as ``AdapterFailure``."""
        process = self._process
        if process is None or process.stdin is None:
            raise AdapterFailure("the adapter is not running", self._tail())
        self._next += 1
        closed: str | None = None  # why the write failed, judged only if the adapter printed nothing
        try:
            # ASCII, every other character escaped: Node's readline also ends a line at U+2028 and U+2029 (and a
            # lone surrogate has no UTF-8), so a raw one would split the request in two.
            process.stdin.write(json.dumps(request(self._next, method, params)) + "\n")
            process.stdin.flush()
        except (OSError, ValueError) as error:
            # Not judged yet: whether the write meets a live process, a dead one or a closed pipe is a race, so what
            # the adapter printed before it went away decides, and the verdict is the same on a busy machine.
            closed = (error.strerror if isinstance(error, OSError) else None) or str(error)
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self._kill(process)
            if closed is not None:
                raise AdapterFailure(f"{method}: the adapter closed its input ({closed})", self._tail()) from None
            raise AdapterFailure(f"{method}: no response within {self.timeout:g} s", self._tail()) from None
        if line is None:
            self._lines.put(None)  # the end stays seen: a later call on this process fails at once, not after a timeout
            process.wait()
            raise AdapterFailure(f"{method}: the adapter exited (status {process.returncode}) without a response", self._tail())
        if len(line) > MAX_LINE:
            self._kill(process)
            raise AdapterFailure(f"{method}: a response line longer than {MAX_LINE} bytes", self._tail())
        try:
            result, failed = result_of(json.loads(line), self._next)
        except (ValueError, ProtocolError) as broken:
            self._kill(process)
            raise AdapterFailure(f"{method}: protocol error: {broken}: {line[:200]!r}", self._tail()) from None
        if failed is not None:
            raise AdapterError(failed)
        assert result is not None
        return result

    # --- the consumer's Adapter ---

    def reset(self) -> None:
        self.call("reset", {})
        self._logs, self._requests = {}, []

    def apply(self, action: JsonObject) -> None:
        try:
            shown = self.call("apply", {"action": action})
        except AdapterError as remote:
            if remote.error["code"] == "refused":
                raise ActionRefused(remote.error["message"]) from None
            raise
        appended, sent = shown.get("appended"), shown.get("sent")
        if not (isinstance(appended, dict) and isinstance(sent, list) and all(isinstance(v, list) for v in appended.values())):
            raise AdapterFailure("apply: a result is {appended: {session: [event]}, sent: [request]}")
        for session, events in appended.items():
            self._logs.setdefault(session, []).extend(events)
        self._requests.extend(sent)

    def logs(self) -> dict[str, list[JsonObject]]:
        return {session: list(events) for session, events in self._logs.items()}

    def requests(self) -> list[JsonObject]:
        return list(self._requests)

    # --- the consumer's Checker and Reader ---

    def check(self, session: str, log: Sequence[str], capture: Sequence[str] | None) -> set[str]:
        findings = self.call("check", {"session": session, "log": list(log), "capture": None if capture is None else list(capture)}).get("findings")
        if not (isinstance(findings, list) and all(isinstance(f, str) for f in findings)):
            raise AdapterFailure("check: a result is {findings: [requirement ID]}")
        return set(findings)

    def read(self, data: bytes) -> FileRead:
        try:
            read = self.call("read", {"file": base64.b64encode(data).decode("ascii")})
        except AdapterError as remote:
            if remote.error["code"] == "unreadable":
                raise Unreadable(str(remote.error.get("rule", "")), remote.error["message"]) from None
            raise
        events, torn = read.get("events"), read.get("tornTail")
        if not (isinstance(events, list) and (torn is None or isinstance(torn, int))):
            raise AdapterFailure("read: a result is {events: [event], tornTail: line | null}")
        return FileRead(events, torn)


class AdapterError(AdapterFailure):
    """The adapter answered with an error the calling step does not expect (it is still running)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"the adapter answered {error['code']}: {error['message']}")
        self.error = error
