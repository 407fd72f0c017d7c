"""Writing the persisted form (spec/formats.md) to a file: the parts ``formats/persisted_form.py`` builds, streamed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefix_model.core.events import Event
from prefix_model.formats.persisted_form import persisted_parts
from prefix_model.formats.session_lines import SessionHeaderLine

__all__ = ["write_persisted"]


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
        for part in persisted_parts(header, groups, pack_chunks, compress):
            for piece in part:
                handle.write(piece)
    return target
