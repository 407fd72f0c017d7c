"""Writing the persisted form (spec/formats.md): the header line, then batches of events, chunk runs packed, optionally as zstd frames.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import zstandard

from prefix_model.core.events import Event
from prefix_model.core.json_values import FrozenMap
from prefix_model.formats.session_lines import SessionHeaderLine, header_to_line, pack_chunk_runs, record_to_line

__all__ = ["write_persisted", "persisted_frames", "zstd_frame"]

def _batch_lines(events: Iterable[Event], pack_chunks: bool) -> Iterator[bytes]:
    records: Iterable[Event | FrozenMap] = pack_chunk_runs(events) if pack_chunks else events
    for record in records:
        yield (record_to_line(record) + "\n").encode("utf-8")


def _part(pieces: Iterable[bytes], compressor: zstandard.ZstdCompressor | None) -> Iterator[bytes]:
    """Yield ``pieces`` as they are, or as one zstd frame of ``compressor`` (nothing for no pieces)."""
    if compressor is None:
        yield from pieces
        return
    frame, wrote = compressor.compressobj(), False
    for piece in pieces:
        yield frame.compress(piece)
        wrote = True
    if wrote:
        yield frame.flush()


def _compressor() -> zstandard.ZstdCompressor:
    return zstandard.ZstdCompressor(level=3, write_checksum=True)


def zstd_frame(data: bytes) -> bytes:
    """Return ``data`` as one checksummed zstd frame, as the writer frames the header line (FMT-9)."""
    return _compressor().compress(data)


def _parts(header: SessionHeaderLine, groups: Iterable[Iterable[Event]], pack_chunks: bool, compress: bool) -> Iterator[Iterator[bytes]]:
    """Yield the persisted file's parts in order, each as the pieces it is written in: the header line
    (one checksummed zstd frame when ``compress``), then each batch (one frame per non-empty batch)."""
    compressor = _compressor()
    head = (header_to_line(header) + "\n").encode("utf-8")
    yield iter((zstd_frame(head) if compress else head,))
    for group in groups:
        yield _part(_batch_lines(group, pack_chunks), compressor if compress else None)


def persisted_frames(
    header: SessionHeaderLine, batches: Iterable[Iterable[Event]], *, pack_chunks: bool = True, compress: bool = False
) -> tuple[bytes, ...]:
    """Return the bytes ``write_persisted`` writes for ``batches``, one element per non-empty part: the
    header line, then each batch — each one zstd frame when ``compress`` (FMT-9). Pure; holds the file."""
    parts = (b"".join(part) for part in _parts(header, batches, pack_chunks, compress))
    return tuple(part for part in parts if part)


def write_persisted(
    path: str | Path,
    header: SessionHeaderLine,
    events: Iterable[Event],
    *,
    pack_chunks: bool = True,
    compress: bool = False,
    batches: Iterable[Iterable[Event]] | None = None,
) -> Path:
    """Write a persisted-form log as the harness's JSONL backend lays it out; return ``path``.

    The header line first; then the batches — ``events`` as the first, then each of ``batches`` —
    events verbatim, delta-chunk runs packed per batch when ``pack_chunks`` (FMT-8). With
    ``compress``, one checksummed zstd frame for the header line and one per non-empty batch
    (FMT-9). Events are written as given, not checked; a batch is streamed, never held.
    """
    groups: Iterable[Iterable[Event]] = [events] if batches is None else [events, *batches]
    target = Path(path)
    with open(target, "wb") as handle:
        for part in _parts(header, groups, pack_chunks, compress):
            for piece in part:
                handle.write(piece)
    return target
