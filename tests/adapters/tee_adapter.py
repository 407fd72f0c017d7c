"""The model's adapter, writing every request and response line it exchanges to the file named by argv[1]."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO

from prefix_model.edge.runner.server import serve


class _TeeIn:
    def __init__(self, inner: IO[str], log: IO[str]) -> None:
        self.inner, self.log = inner, log

    def __iter__(self) -> Iterator[str]:
        for line in self.inner:
            self.log.write(line)
            yield line


class _TeeOut:
    def __init__(self, inner: IO[str], log: IO[str]) -> None:
        self.inner, self.log = inner, log

    def write(self, text: str) -> int:
        self.log.write(text)
        return self.inner.write(text)

    def flush(self) -> None:
        self.log.flush()
        self.inner.flush()


if __name__ == "__main__":
    with open(sys.argv[1], "a", encoding="utf-8") as transcript:
        sys.exit(serve(_TeeIn(sys.stdin, transcript), _TeeOut(sys.stdout, transcript)))  # type: ignore[arg-type]
