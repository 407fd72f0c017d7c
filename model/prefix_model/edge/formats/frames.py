"""Bytes to lines: a log file's text, uncompressed or as concatenated zstd frames (FMT-9), split into bounded lines (FMT-5).

Memory is bounded by the longest line (``MAX_LINE_BYTES``): a file is read in blocks, a zstd
file frame by frame (each frame's extent found by scanning its block headers, as the harness's
reader does), and a line is never held past its end. ``Line.framed`` says whether a line's
newline came from a complete frame, which is what tells a torn tail from damage (FMT-7, FMT-9).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from itertools import chain, count, repeat
from typing import IO, NamedTuple, cast

from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.formats import rules
from prefix_model.formats.rules import MAX_LINE_BYTES
from prefix_model.formats.session_lines import ZSTD_MAGIC

__all__ = ["Chunk", "Line", "Run", "Frames", "LineFilter", "plain_lines", "plain_runs", "zstd_chunks", "split_lines", "split_runs"]

_READ_SIZE = 1 << 16

class Chunk(NamedTuple):
    data: bytes
    framed: bool  # decoded from a complete zstd frame
    boundary: bool = False  # marks the end of the complete frames (no data)


class Line(NamedTuple):
    number: int
    raw: bytes
    terminated: bool  # ends in a newline; a final line without one is a torn record
    framed: bool  # its newline was decoded from a complete zstd frame


class _Bounded:
    """A read-only view of ``size`` bytes of ``handle`` from its current position."""

    def __init__(self, handle: IO[bytes], size: int) -> None:
        self._handle, self._left = handle, size

    def read(self, size: int = -1) -> bytes:
        want = self._left if size < 0 else min(size, self._left)
        data = self._handle.read(want)
        self._left -= len(data)
        return data


_new_line = tuple.__new__


_BLOCK = 1 << 16


def plain_runs(handle: IO[bytes], name: str, only: LineFilter | None = None) -> Iterator[Run]:
    """Yield the lines of an uncompressed file as runs, never holding more than a block and one bounded line (FMT-5).

    Read in blocks split in C (a readline per line costs twice as much).
    """
    return split_runs((Chunk(block, False) for block in iter(partial(handle.read, _BLOCK), b"")), name, only)


def plain_lines(handle: IO[bytes], name: str, only: LineFilter | None = None) -> Iterator[Line]:
    """Yield the lines of an uncompressed file (``plain_runs``, line by line)."""
    return chain.from_iterable(run.lines() for run in plain_runs(handle, name, only))


def _frame_end(handle: IO[bytes], start: int, size: int, name: str) -> int | None:
    """Return where the zstd frame at ``start`` ends, or None when the file ends inside it (J/zstd.ts scan)."""

    def take(count: int) -> bytes | None:
        data = handle.read(count)
        return data if len(data) == count else None

    handle.seek(start)
    magic = take(4)
    if magic is None:
        return None
    if magic != ZSTD_MAGIC:
        raise LogReadError.of(name, None, rules.bad_frame_magic(start))
    descriptor_bytes = take(1)
    if descriptor_bytes is None:
        return None
    descriptor = descriptor_bytes[0]
    if descriptor & 0x18:
        raise LogReadError.of(name, None, rules.reserved_frame_bit(start + 4))
    single_segment = bool(descriptor & 0x20)
    content_size_flag = descriptor >> 6
    dictionary_bytes = (0, 1, 2, 4)[descriptor & 0x03]
    content_size_bytes = (1 if single_segment else 0) if content_size_flag == 0 else 1 << content_size_flag
    offset = start + 5 + (0 if single_segment else 1) + dictionary_bytes + content_size_bytes
    while True:
        if offset + 3 > size:
            return None
        handle.seek(offset)
        block = take(3)
        assert block is not None
        header = int.from_bytes(block, "little")
        block_type = (header >> 1) & 0x03
        if block_type == 3:
            raise LogReadError.of(name, None, rules.reserved_block_type(offset))
        offset += 3 + (1 if block_type == 1 else header >> 3)
        if offset > size:
            return None
        if header & 1:
            break
    if descriptor & 0x04:
        offset += 4
    return offset if offset <= size else None


def _read_frame(handle: IO[bytes], start: int, end: int, name: str, *, complete: bool) -> Iterator[bytes]:
    """Yield the plaintext of the frame in ``[start, end)``; a torn frame yields what decodes, then stops."""
    import zstandard  # here, not at import: only a zstd file needs it (start-up of a check of a plain log)

    handle.seek(start)
    reader = zstandard.ZstdDecompressor().stream_reader(
        cast(IO[bytes], _Bounded(handle, end - start)), read_size=_READ_SIZE, read_across_frames=False
    )
    try:
        while data := reader.read(_READ_SIZE):
            yield data
    except zstandard.ZstdError as error:
        if complete:
            raise LogReadError.of(name, None, rules.frame_decode_failed(start, error)) from None
        # An incomplete final frame is recovered as far as it decodes (J/index.ts readZstdPrefix).


class Frames:
    """What a zstd read found out about its frames: where an incomplete final frame starts."""

    __slots__ = ("torn_at",)

    def __init__(self) -> None:
        self.torn_at: int | None = None


def zstd_chunks(handle: IO[bytes], name: str, frames: Frames) -> Iterator[Chunk]:
    """Yield the plaintext of concatenated zstd frames, tagged complete/torn (FMT-9)."""
    size = handle.seek(0, 2)
    start, index = 0, 0
    while start < size:
        end = _frame_end(handle, start, size, name)
        if end is None:
            if index == 0:
                raise LogReadError.of(name, None, rules.no_header_frame())
            frames.torn_at = start
            yield Chunk(b"", True, boundary=True)
            for data in _read_frame(handle, start, size, name, complete=False):
                yield Chunk(data, False)
            return
        if index == 0:
            header = bytearray()  # grown in place: bytes += would copy the whole header at every block
            for data in _read_frame(handle, start, end, name, complete=True):
                header += data
                if len(header) > MAX_LINE_BYTES + 1:
                    raise LogReadError.of(name, 1, rules.line_too_long())
            if not header.endswith(b"\n") or header.count(b"\n") != 1:
                raise LogReadError.of(name, None, rules.header_frame_holds_more())
            yield Chunk(bytes(header), True)
        else:
            for data in _read_frame(handle, start, end, name, complete=True):
                yield Chunk(data, True)
        start, index = end, index + 1
    yield Chunk(b"", True, boundary=True)


class LineFilter:
    """Set ``needles`` to have ``split_lines`` count, not yield, the complete lines that hold none of them.

    A scan for one kind of line (the torn-tail rule's search for a ``turn/end``) then costs a
    search in C per block, not a Python step per line: a file of 2**30 empty lines is seconds.
    """

    __slots__ = ("needles",)

    def __init__(self) -> None:
        self.needles: tuple[bytes, ...] | None = None


class Run(NamedTuple):
    """Lines in a row from one block: ``bodies`` are lines ``number + 1`` on, each ending in a newline but perhaps the last."""

    number: int
    bodies: list[bytes]
    terminated: bool  # the last body ends in a newline (a final line without one is a torn record)
    framed: bool  # their newlines were decoded from a complete zstd frame

    def lines(self) -> Iterator[Line]:
        """The run's lines, built in C (no Python step per line)."""
        ends = repeat(True) if self.terminated else chain(repeat(True, len(self.bodies) - 1), (False,))
        return map(_new_line, repeat(Line), zip(count(self.number + 1), self.bodies, ends, repeat(self.framed)))


def split_runs(chunks: Iterable[Chunk], name: str, only: LineFilter | None = None) -> Iterator[Run]:
    """Yield the lines of a byte stream as runs, one per block, never holding more than a block and one line (FMT-5 beyond the cap).

    Each chunk is split in C; a line that runs past the bound is refused before more of it is
    held. A line is ``framed`` when its newline came from a complete zstd frame.
    """
    number, pending, pending_size = 0, list[bytes](), 0  # the pieces of a line that spans chunks
    for chunk in chunks:
        if chunk.boundary:
            if pending:
                raise LogReadError.of(name, number + 1, rules.frames_end_inside_line())
            continue
        data, framed = chunk.data, chunk.framed
        needles = None if only is None else only.needles
        if needles is not None and b"\n" in data and len(data) <= MAX_LINE_BYTES and not any(n in data for n in needles):
            # No line ending in this block can hold a needle, except one begun in an earlier block.
            head, _, rest = data.partition(b"\n")
            number += 1
            if pending:
                body = b"".join(pending) + head
                if len(body) > MAX_LINE_BYTES:
                    raise LogReadError.of(name, number, rules.line_too_long())
                if any(n in body for n in needles):
                    yield Run(number - 1, [body], True, framed)
            last = rest.rfind(b"\n")
            number += rest.count(b"\n")
            tail = rest[last + 1 :] if last >= 0 else rest
            pending, pending_size = ([tail], len(tail)) if tail else ([], 0)
        elif b"\n" not in data:
            pending.append(data)
            pending_size += len(data)
        else:
            lines = data.split(b"\n")
            if pending:
                lines[0] = b"".join(pending) + lines[0]
            tail = lines.pop()
            # Only the first line can be longer than a block shorter than the bound (the rest of a line begun before it).
            if len(lines[0]) > MAX_LINE_BYTES or (len(data) > MAX_LINE_BYTES and max(map(len, lines)) > MAX_LINE_BYTES):
                long = next(n for n, body in enumerate(lines) if len(body) > MAX_LINE_BYTES)
                if long:
                    yield Run(number, lines[:long], True, framed)  # the lines before it are read first, as line by line
                raise LogReadError.of(name, number + long + 1, rules.line_too_long())
            yield Run(number, lines, True, framed)
            number += len(lines)
            pending, pending_size = ([tail], len(tail)) if tail else ([], 0)
        if pending_size > MAX_LINE_BYTES:
            raise LogReadError.of(name, number + 1, rules.line_too_long())
    if pending:
        yield Run(number, [b"".join(pending)], False, False)


def split_lines(chunks: Iterable[Chunk], name: str, only: LineFilter | None = None) -> Iterator[Line]:
    """Yield the lines of a byte stream, never holding more than a block and one line (``split_runs``, line by line)."""
    return chain.from_iterable(run.lines() for run in split_runs(chunks, name, only))
