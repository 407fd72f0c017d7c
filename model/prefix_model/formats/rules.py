"""Spec §8 — the file formats' rules, each worded once: what a reader rejects a line or a file for.

The readers at the edge (``edge/formats``) find these conditions while they read bytes — a line
too long, a damaged zstd frame, a file that ends inside its header frame — and report the
rejection returned here, so every requirement ID of §8 and CAP-1 is named in the model, never in
the code that does the reading.
"""

from __future__ import annotations

from prefix_model.core.contracts import Rejection

__all__ = [
    "MAX_LINE_BYTES",
    "line_too_long",
    "too_deep",
    "not_json",
    "is_syntax_error",
    "not_utf8",
    "empty_line",
    "empty_file",
    "no_event",
    "unreadable",
    "persisted_header_in_memory_form",
    "header_without_newline",
    "unusable_header",
    "row_outside_persisted",
    "corrupt_committed_region",
    "bad_frame_magic",
    "reserved_frame_bit",
    "reserved_block_type",
    "frame_decode_failed",
    "no_header_frame",
    "header_frame_holds_more",
    "frames_end_inside_line",
    "zstd_without_header_frame",
    "torn_record_in_frame",
    "capture_line",
    "lines_out_of_order",
]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line a reader takes (FMT-5): the memory a read may need is bounded by it."""


# --- FMT-1: a file of JSON lines ---


def not_json(detail: str) -> Rejection:
    return Rejection("FMT-1", f"not JSON: {detail}")


def not_utf8(reason: str, byte: int) -> Rejection:
    return Rejection("FMT-1", f"not UTF-8 ({reason} at byte {byte})")


def empty_line() -> Rejection:
    return Rejection("FMT-1", "empty line")


def empty_file() -> Rejection:
    return Rejection("FMT-1", "the file is empty: no event and no header")


def no_event() -> Rejection:
    return Rejection("FMT-1", "no event in the file")


def is_syntax_error(rejection: Rejection) -> bool:
    """Return whether ``rejection`` says a line is not JSON at all (as opposed to JSON the model cannot keep)."""
    return rejection.rule == "FMT-1"


def unreadable(reason: str) -> Rejection:
    """The operating system's reason a file cannot be read (missing, a directory, no permission, …)."""
    return Rejection("FMT-1", reason)


# --- FMT-5: bounded lines and nesting ---


def line_too_long() -> Rejection:
    return Rejection("FMT-5", f"line longer than {MAX_LINE_BYTES} bytes")


def too_deep() -> Rejection:
    return Rejection("FMT-5", "JSON nesting is too deep to read")


# --- FMT-6, FMT-10: which form, and the persisted header line ---


def persisted_header_in_memory_form() -> Rejection:
    return Rejection("FMT-6", "a persisted session.jsonl header line; this reader takes the in-memory event form")


def header_without_newline() -> Rejection:
    return Rejection("FMT-10", "the session header line has no newline")


def unusable_header(reason: str) -> Rejection:
    return Rejection("FMT-10", f"unusable session header: {reason}")


# --- FMT-7, FMT-8: the persisted lines and their torn tail ---


def row_outside_persisted() -> Rejection:
    return Rejection("FMT-8", "a packed chunk row appears only in the persisted form")


def corrupt_committed_region(reason: str, where: str) -> Rejection:
    """A hole before the last ``turn/end`` (``where`` says so): the committed log is damaged, not torn."""
    return Rejection("FMT-7", f"corrupt committed region: {reason}; {where} a turn/end")


# --- FMT-9: concatenated zstd frames ---


def bad_frame_magic(start: int) -> Rejection:
    return Rejection("FMT-9", f"invalid zstd frame magic at byte {start}")


def reserved_frame_bit(at: int) -> Rejection:
    return Rejection("FMT-9", f"reserved zstd frame-header bit set at byte {at}")


def reserved_block_type(at: int) -> Rejection:
    return Rejection("FMT-9", f"reserved zstd block type at byte {at}")


def frame_decode_failed(start: int, error: object) -> Rejection:
    return Rejection("FMT-9", f"zstd frame at byte {start} failed to decode: {error}")


def no_header_frame() -> Rejection:
    return Rejection("FMT-9", "the file ends inside its first zstd frame (no complete header frame)")


def header_frame_holds_more() -> Rejection:
    return Rejection("FMT-9", "the first zstd frame must hold exactly the session header line")


def frames_end_inside_line() -> Rejection:
    return Rejection("FMT-9", "the complete zstd frames end inside a line")


def zstd_without_header_frame() -> Rejection:
    return Rejection("FMT-9", "a zstd log must begin with a frame holding the session header line")


def torn_record_in_frame(reason: str) -> Rejection:
    return Rejection("FMT-9", f"a complete zstd frame holds a torn record: {reason}")


# --- CAP-1: the requests capture ---


def capture_line(reason: str) -> Rejection:
    """A capture line (or file) that is not a captured request, and why."""
    return Rejection("CAP-1", reason)


# --- CHK-4: lines out of order in the in-memory form ---


def lines_out_of_order(early: int, late: int) -> Rejection:
    """Event ``early`` (a later seq) was read before event ``late``: the lines were swapped or moved (LOG-2, read on: CHK-4)."""
    return Rejection("LOG-2", f"seq {early} appears before seq {late}: lines out of order")
