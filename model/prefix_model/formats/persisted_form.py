"""The bytes of the persisted form (spec/formats.md): the header line, then batches of events, chunk runs packed, optionally as zstd frames.

Pure: the parts are built in memory (zstd compresses bytes, it touches no file); ``edge/formats/persisted_writer.py`` writes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import zstandard

from prefix_model.core.events import Event
from prefix_model.core.json_values import FrozenMap
from prefix_model.formats.session_lines import SessionHeaderLine, header_to_line, pack_chunk_runs, record_to_line

__all__ = ["persisted_parts", "persisted_frames", "zstd_frame"]

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


def persisted_parts(header: SessionHeaderLine, groups: Iterable[Iterable[Event]], pack_chunks: bool, compress: bool) -> Iterator[Iterator[bytes]]:
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
    """Return the bytes ``edge.formats.persisted_writer.write_persisted`` writes for ``batches``, one element per non-empty part: the
    header line, then each batch — each one zstd frame when ``compress`` (FMT-9). Pure; holds the file."""
    parts = (b"".join(part) for part in persisted_parts(header, batches, pack_chunks, compress))
    return tuple(part for part in parts if part)
