"""spec/formats.md — reading any harness log file (both forms, plain and zstd) and writing the persisted form."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prefix_model.formats.plain import PlainEvent, from_event
from prefix_model.core.contracts import Rejection
from prefix_model.core.events import Event
from prefix_model.core.json_values import MAX_SAFE_INTEGER, FrozenMap, freeze, json_text
from prefix_model.core.log import Log
from prefix_model.edge.checker import check_log
from prefix_model.edge.formats import frames
from prefix_model.edge.formats.frames import Chunk, LineFilter, split_lines
from prefix_model.edge.formats.events_jsonl import LogReadError, read_log
from prefix_model.edge.formats.persisted_writer import write_persisted
from prefix_model.formats.persisted_form import persisted_frames, zstd_frame
from prefix_model.edge.formats.session_jsonl import LogStream, Unread, iter_log_events
from prefix_model.formats.event_lines import event_to_line
from prefix_model.formats.session_lines import ROW_TYPES, ZSTD_MAGIC, SessionHeaderLine, TornTail, expand_chunk_row, header_to_line, pack_chunk_runs, parse_header_line, record_to_line
from prefix_model.loop.transitions import run
from prefix_model.loop.variants import WITNESS

from tests.reference import REAL_LOG_DIR

ROOT = Path(__file__).resolve().parents[2]
REAL_LOG = REAL_LOG_DIR / "events.jsonl"
HEADER = SessionHeaderLine(0, "s1", 1_700_000_000_000)
FULL_HEADER = SessionHeaderLine(0, "child/1", 5, cwd="/work/proj", parent_session="s1", seed_length=12, delegation_depth=1)


# --- logs to write: the loop model's sessions, with a streamed turn appended ---------------------


def streamed_turn(log: Log) -> Log:
    """Return ``log`` with one more turn whose step streams packable reasoning, text and tool-call deltas."""
    turn = 1 + max((t for e in log.events if e.type == "turn/start" and isinstance(t := e.field("turn"), int)), default=0)
    clock = 1_000
    log = log.append("turn/start", {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}}, time=clock)
    log = log.append("user/message", {"content": [{"type": "text", "text": "stream"}], "source": {"kind": "user"}}, time=clock, surface_op="append")
    log = log.append("step/start", {"turn": turn, "step": 1}, time=clock)
    first = log.seq

    def chunk(body: dict[str, object], gap: int = 1) -> None:
        nonlocal log, clock
        clock += gap
        log = log.append("assistant/chunk", {"turn": turn, "step": 1, "chunk": body}, time=clock)

    chunk({"type": "block-start", "index": 0, "blockType": "reasoning"})
    for piece in ("th", "in", "k"):
        chunk({"type": "reasoning-delta", "index": 0, "text": piece})
    chunk({"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "think"}})
    chunk({"type": "block-start", "index": 1, "blockType": "text"})
    for piece in ("he", "l", "lo", " ", "wörld ✓"):
        chunk({"type": "text-delta", "index": 1, "text": piece}, gap=0)
    chunk({"type": "block-end", "index": 1, "block": {"type": "text", "text": "hello wörld ✓"}})
    chunk({"type": "block-start", "index": 2, "blockType": "tool-call"})
    chunk({"type": "tool-call-delta", "index": 2, "id": "c9", "name": "echo", "argumentsDelta": "{"})
    for piece in ('"te', 'xt":', '"x"', "}"):
        chunk({"type": "tool-call-delta", "index": 2, "id": "c9", "argumentsDelta": piece})
    chunk({"type": "block-end", "index": 2, "block": {"type": "tool-call", "id": "c9", "name": "echo", "arguments": '{"text":"x"}'}})
    chunk({"type": "finish", "reason": {"kind": "stop"}})
    content = [
        {"type": "reasoning", "text": "think"},
        {"type": "text", "text": "hello wörld ✓"},
        {"type": "tool-call", "id": "c9", "name": "echo", "arguments": '{"text":"x"}'},
    ]
    log = log.append(
        "assistant/message",
        {"turn": turn, "step": 1, "content": content, "provenance": {"provider": "mock", "model": "m"}},
        time=clock, surface_op="append", source_event_seqs=tuple(range(first, log.seq)),
    )  # fmt: skip
    log = log.append("step/end", {"turn": turn, "step": 1}, time=clock)
    return log.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}}, time=clock)


@cache
def model_logs() -> tuple[tuple[str, tuple[Event, ...]], ...]:
    world = run(WITNESS)
    return tuple((s.id, streamed_turn(s.log).events) for s in world.sessions)


@cache
def real_events() -> tuple[Event, ...]:
    if not REAL_LOG.exists():
        pytest.skip(f"the shared reference log is not beside this checkout ({REAL_LOG})")
    return read_log(REAL_LOG).events


def read_all(path: Path) -> tuple[LogStream, list[tuple[int, Event]]]:
    stream = LogStream(path)
    return stream, list(stream)


def lines_of(events: Sequence[Event], header: SessionHeaderLine = HEADER, pack: bool = True) -> list[str]:
    """Return the persisted lines (header first) the writer produces for one batch."""
    records = pack_chunk_runs(events) if pack else events
    return [header_to_line(header)] + [record_to_line(r) for r in records]


def write_lines(path: Path, lines: Sequence[str | bytes], *, final_newline: bool = True) -> Path:
    data = b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines)
    path.write_bytes(data + (b"\n" if final_newline else b""))
    return path


def read_error(path: Path) -> LogReadError:
    with pytest.raises(LogReadError) as caught:
        list(LogStream(path))
    error = caught.value
    assert "\n" not in str(error) and str(error).startswith(str(path))
    return error


def zstd_frames(data: bytes) -> list[bytes]:
    """Return the plaintext of each frame of a concatenated-frame file."""
    frames, rest = [], data
    while rest:
        reader = zstandard.ZstdDecompressor().decompressobj()
        frames.append(reader.decompress(rest))
        rest = reader.unused_data
    return frames


def text_chunk(seq: int, time: int, text: str, *, index: int = 0, turn: int = 1, step: int = 1) -> Event:
    return Event("assistant/chunk", seq, time, freeze({"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": index, "text": text}}))


def tool_chunk(seq: int, time: int, args: str, *, name: str | None = None, call: str = "c1") -> Event:
    chunk: dict[str, object] = {"type": "tool-call-delta", "index": 0, "id": call}
    if name is not None:
        chunk["name"] = name
    chunk["argumentsDelta"] = args
    return Event("assistant/chunk", seq, time, freeze({"turn": 1, "step": 1, "chunk": chunk}))


def row_lines(records: Sequence[Event | FrozenMap]) -> list[str]:
    return [record_to_line(r) for r in records]


# --- round trips --------------------------------------------------------------------------------


@pytest.mark.spec("FMT-3", "FMT-8", "FMT-9", "FMT-10")
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
@pytest.mark.parametrize("pack", [True, False], ids=["packed", "unpacked"])
def test_model_logs_round_trip_through_the_persisted_form(tmp_path: Path, pack: bool, compress: bool) -> None:
    for session, events in model_logs():
        path = write_persisted(tmp_path / f"{session}.jsonl", FULL_HEADER, events, pack_chunks=pack, compress=compress)
        assert (path.read_bytes()[:4] == ZSTD_MAGIC) is compress
        stream, read = read_all(path)
        assert [e for _, e in read] == list(events)
        assert [event_to_line(e) for _, e in read] == [event_to_line(e) for e in events]
        assert (stream.form, stream.compressed, stream.header, stream.torn_tail) == ("persisted", compress, FULL_HEADER, None)
        assert stream.events_read == len(events) and stream.finished
        text = b"".join(zstd_frames(path.read_bytes())) if compress else path.read_bytes()
        rows = [json.loads(line)["type"] for line in text.splitlines() if json.loads(line)["type"] in ROW_TYPES]
        assert sorted(rows) == (sorted(ROW_TYPES) if pack else [])
        # A row's line is the physical line of every member it stores.
        numbers = [n for n, _ in read]
        assert numbers == sorted(numbers) and (len(set(numbers)) < len(numbers)) is pack


@pytest.mark.spec("FMT-3", "FMT-8", "FMT-9")
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
@pytest.mark.parametrize("pack", [True, False], ids=["packed", "unpacked"])
def test_the_real_harness_log_converts_to_the_persisted_form_and_back(tmp_path: Path, pack: bool, compress: bool) -> None:
    events = real_events()
    header = SessionHeaderLine(0, "one-listener", events[0].time)
    path = write_persisted(tmp_path / "session.jsonl", header, events, pack_chunks=pack, compress=compress)
    stream, read = read_all(path)
    assert [event_to_line(e) for _, e in read] == REAL_LOG.read_text(encoding="utf-8").splitlines()
    assert stream.header == header
    # Writing what was read reproduces the file byte for byte.
    again = write_persisted(tmp_path / "again.jsonl", header, [e for _, e in read], pack_chunks=pack, compress=compress)
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.spec("FMT-8")
def test_packed_rows_are_laid_out_as_the_harness_lays_them_out(tmp_path: Path) -> None:
    events = real_events()
    lines = lines_of(events)
    # Turn 1 step 2 streams "done", turn 2 step 1 streams "again": one text-chunks row each. The
    # tool-call deltas (seq 5-6) are two and differ in name presence, so they stay events.
    assert lines[17] == '{"type":"text-chunks","seq0":16,"time0":1795989239249,"data":{"turn":1,"step":2,"index":0,"dt":[0,0,0],"texts":["d","o","n","e"]}}'
    assert sum(1 for line in lines if '"text-chunks"' in line) == 2
    assert len(lines) == 1 + len(events) - 3 - 4
    assert lines[6] == event_to_line(events[5]) and lines[7] == event_to_line(events[6])


@pytest.mark.spec("FMT-8")
def test_packing_takes_exactly_the_runs_the_harness_packs() -> None:
    three = [text_chunk(4 + k, 10 + k, "abc"[k]) for k in range(3)]
    packed = list(pack_chunk_runs(three))
    assert row_lines(packed) == ['{"type":"text-chunks","seq0":4,"time0":10,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}']
    assert list(pack_chunk_runs(three[:2])) == three[:2]  # fewer than three members stay events
    # A different block index, step, a seq gap or a fractional time ends a run.
    assert list(pack_chunk_runs([*three[:2], text_chunk(6, 12, "c", index=1)])) == [*three[:2], text_chunk(6, 12, "c", index=1)]
    assert list(pack_chunk_runs([*three[:2], text_chunk(6, 12, "c", step=2)]))[-1] == text_chunk(6, 12, "c", step=2)
    assert list(pack_chunk_runs([*three[:2], text_chunk(7, 12, "c")]))[-1] == text_chunk(7, 12, "c")
    fractional = Event("assistant/chunk", 6, 12.5, three[2].data)  # type: ignore[arg-type]
    assert list(pack_chunk_runs([*three[:2], fractional])) == [*three[:2], fractional]
    # Gaps may be negative (the wall clock stepped back); they stay exact.
    back = [text_chunk(0, 100, "x"), text_chunk(1, 90, "y"), text_chunk(2, 95, "z")]
    (row,) = pack_chunk_runs(back)
    assert isinstance(row, FrozenMap) and '"dt":[-10,5]' in record_to_line(row)
    assert expand_chunk_row(row) == tuple(back)
    # An event carrying a surface marker, or an extra chunk key, is not whitelisted.
    marked = Event("assistant/chunk", 2, 12, three[2].data, source_event_seqs=())
    assert list(pack_chunk_runs([*three[:2], marked])) == [*three[:2], marked]
    extra = Event("assistant/chunk", 2, 12, freeze({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "c", "x": 1}}))
    assert list(pack_chunk_runs([*three[:2], extra])) == [*three[:2], extra]


@pytest.mark.spec("FMT-8")
def test_tool_call_runs_need_one_id_and_one_name_presence() -> None:
    named = [tool_chunk(k, k, "ab"[k % 2] * k, name="echo") for k in range(3)]
    (row,) = pack_chunk_runs(named)
    assert row_lines([row]) == ['{"type":"tool-call-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"id":"c1","name":"echo","args":["","b","aa"]}}']
    assert expand_chunk_row(row) == tuple(named)  # type: ignore[arg-type]
    unnamed = [tool_chunk(k, k, "x") for k in range(3)]
    assert '"name"' not in row_lines(list(pack_chunk_runs(unnamed)))[0]
    mixed = [tool_chunk(0, 0, "x", name="echo"), tool_chunk(1, 1, "y"), tool_chunk(2, 2, "z"), tool_chunk(3, 3, "w")]
    assert row_lines(list(pack_chunk_runs(mixed)))[0] == event_to_line(mixed[0])
    assert len(list(pack_chunk_runs(mixed))) == 2  # the named head stays; the three unnamed pack
    other_call = [tool_chunk(0, 0, "x"), tool_chunk(1, 1, "y"), tool_chunk(2, 2, "z", call="c2")]
    assert list(pack_chunk_runs(other_call)) == other_call


@pytest.mark.spec("FMT-8", "FMT-9")
def test_batches_pack_separately_and_each_is_one_zstd_frame(tmp_path: Path) -> None:
    run_of_four = [text_chunk(k, k, str(k)) for k in range(4)]
    split = write_persisted(tmp_path / "split.jsonl", HEADER, run_of_four[:2], batches=[run_of_four[2:], []])
    assert '"text-chunks"' not in split.read_text()  # 2 + 2 members: no run of three in either batch
    whole = write_persisted(tmp_path / "whole.jsonl", HEADER, run_of_four)
    assert '"text-chunks"' in whole.read_text()
    framed = write_persisted(tmp_path / "framed.jsonl.zstd", HEADER, (), batches=[run_of_four[:1], [], run_of_four[1:]], compress=True)
    frames = zstd_frames(framed.read_bytes())
    assert frames[0] == (header_to_line(HEADER) + "\n").encode() and len(frames) == 3
    assert frames[2].count(b"\n") == 1  # the three-member batch is one row
    assert [e for _, e in LogStream(framed)] == run_of_four


@pytest.mark.spec("FMT-8", "FMT-9", "FMT-10")
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
def test_persisted_frames_are_the_bytes_the_writer_writes_part_by_part(tmp_path: Path, compress: bool) -> None:
    run_of_four = [text_chunk(k, k, str(k)) for k in range(4)]
    batches = [run_of_four[:1], [], run_of_four[1:]]
    parts = persisted_frames(HEADER, batches, compress=compress)
    written = write_persisted(tmp_path / "s.jsonl", HEADER, (), batches=batches, compress=compress).read_bytes()
    assert b"".join(parts) == written and len(parts) == 3  # the header, then the non-empty batches
    plain = zstd_frames(written) if compress else list(parts)
    assert plain[0] == (header_to_line(HEADER) + "\n").encode() and plain[2].count(b"\n") == 1
    if compress:
        assert [zstd_frames(p) for p in parts] == [[f] for f in plain]
        assert parts[0] == zstd_frame(plain[0])  # the header's frame, as zstd_frame makes one


@pytest.mark.spec("FMT-5", "FMT-9")
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
def test_lines_longer_than_a_read_chunk_are_read_whole(tmp_path: Path, compress: bool) -> None:
    events = list(real_events())
    big = "x" * 200_000 + "é" * 70_000
    events[1] = Event(events[1].type, 1, events[1].time, freeze({"content": [{"type": "text", "text": big}], "source": {"kind": "user"}}), "append")
    path = write_persisted(tmp_path / "big.jsonl", HEADER, events, compress=compress)
    assert [e for _, e in LogStream(path)] == events


def fenced_block(heading: str) -> str:
    """Return the first fenced block after ``heading`` in spec/formats.md."""
    text = (ROOT / "spec" / "formats.md").read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    start = after.index("```\n") + 4
    return after[start : after.index("```", start)]


@pytest.mark.spec("FMT-8", "FMT-10")
def test_the_worked_example_of_formats_md_is_what_the_writer_writes(tmp_path: Path) -> None:
    log, clock = Log(), 1_767_225_600_000
    log = log.append("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}, time=clock)
    log = log.append("user/message", {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}, time=clock, surface_op="append")
    log = log.append("step/start", {"turn": 1, "step": 1}, time=clock + 1)
    log = log.append("request/header", {"header": {"config": {"provider": "mock", "model": "m"}}, "reason": "initial"}, time=clock + 1)
    log = log.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}}, time=clock + 2)
    for piece, at in (("Hel", 3), ("lo", 6), ("!", 7)):
        log = log.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": piece}}, time=clock + at)
    block_end = {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Hello!"}}
    log = log.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": block_end}, time=clock + 7)
    log = log.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}, time=clock + 7)
    message = {"turn": 1, "step": 1, "content": [{"type": "text", "text": "Hello!"}], "provenance": {"provider": "mock", "model": "m"}}
    log = log.append("assistant/message", message, time=clock + 8, surface_op="append", source_event_seqs=tuple(range(4, 10)))
    log = log.append("step/end", {"turn": 1, "step": 1}, time=clock + 8)
    log = log.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, time=clock + 8)
    header = SessionHeaderLine(0, "demo", clock, cwd="/home/me/proj")
    path = write_persisted(tmp_path / "session.jsonl", header, log.events)
    assert path.read_text(encoding="utf-8") == fenced_block("### 2.3 Worked example")
    assert [(n, e.seq) for n, e in LogStream(path)][5:8] == [(7, 5), (7, 6), (7, 7)]


# --- the header line and the form ---------------------------------------------------------------


@pytest.mark.spec("FMT-6", "FMT-10")
def test_the_header_line_selects_the_persisted_form_and_is_read_exactly(tmp_path: Path) -> None:
    path = write_persisted(tmp_path / "s.jsonl", FULL_HEADER, ())
    assert path.read_text() == (
        '{"type":"session","version":0,"id":"child/1","createdAt":5,"cwd":"/work/proj","parentSession":"s1","seedLength":12,"delegationDepth":1}\n'
    )
    stream, read = read_all(path)
    assert read == [] and stream.header == FULL_HEADER and stream.form == "persisted" and stream.finished
    assert LogStream(path).session_id() == "child/1"
    if REAL_LOG.exists():
        memory = LogStream(REAL_LOG)
        assert memory.read_header() is None and memory.form == "memory" and memory.session_id() is None
        assert [e for _, e in memory] == list(real_events()) and memory.header is None and memory.torn_tail is None
        assert [n for n, _ in iter_log_events(REAL_LOG)] == list(range(1, 42))


HEADER_CASES = [
        ('{"type":"session","version":1,"id":"s","createdAt":0,"delegationDepth":0}', "unsupported session format version 1"),
        ('{"type":"session","version":0.5,"id":"s","createdAt":0,"delegationDepth":0}', "unsupported session format version 0.5"),
        ('{"type":"session","version":"0","id":"s","createdAt":0,"delegationDepth":0}', "version must be a number"),
        ('{"type":"session","id":"s","createdAt":0,"delegationDepth":0}', "version must be a number"),
        ('{"type":"session","version":0,"id":7,"createdAt":0,"delegationDepth":0}', "id must be a string"),
        ('{"type":"session","version":0,"id":"s","createdAt":-1,"delegationDepth":0}', "createdAt"),
        ('{"type":"session","version":0,"id":"s","createdAt":1.5,"delegationDepth":0}', "createdAt"),
        ('{"type":"session","version":0,"id":"s","createdAt":0}', "delegationDepth"),
        ('{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0,"cwd":null}', "cwd"),
        ('{"type":"session","version":0,"id":"s","createdAt":0,"delegationDepth":0,"seedLength":"3"}', "seedLength"),
        ('{"type":"session","version":-0,"id":"s","createdAt":0,"delegationDepth":0}', "-0"),
]


@pytest.mark.spec("FMT-10")
@pytest.mark.parametrize(("header", "why"), HEADER_CASES)
def test_an_unusable_header_line_rejects_the_file(tmp_path: Path, header: str, why: str) -> None:
    events = real_events()
    path = write_lines(tmp_path / "s.jsonl", [header, *(event_to_line(e) for e in events)])
    error = read_error(path)
    assert (error.line, error.rule) == (1, "FMT-10") and why in error.reason
    with pytest.raises(LogReadError):
        LogStream(path).read_header()


@pytest.mark.spec("FMT-10")
def test_the_header_schema_agrees_with_the_reader() -> None:
    import jsonschema

    schema = json.loads((ROOT / "spec" / "schema" / "session-header.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for header in (HEADER, FULL_HEADER):
        assert validator.is_valid(json.loads(header_to_line(header)))
    for text, _ in HEADER_CASES:
        if '"version":-0' not in text:  # Python's json reads -0 as the integer 0
            value = json.loads(text)
            assert not validator.is_valid(value) and isinstance(parse_header_line(freeze(value)), Rejection), text


@pytest.mark.spec("FMT-10")
def test_header_parsing_ignores_unknown_keys_and_needs_a_newline(tmp_path: Path) -> None:
    value = freeze({"type": "session", "version": 0, "id": "s", "createdAt": 3, "delegationDepth": 0, "later": True})
    assert parse_header_line(value) == SessionHeaderLine(0, "s", 3)
    assert isinstance(parse_header_line(freeze({"type": "other"})), Rejection)
    path = write_lines(tmp_path / "s.jsonl", [header_to_line(HEADER)], final_newline=False)
    assert (read_error(path).line, read_error(path).rule) == (1, "FMT-10")


@pytest.mark.spec("FMT-1", "FMT-2")
def test_an_empty_or_missing_file_is_unusable(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert read_error(tmp_path / "empty.jsonl").rule == "FMT-1"
    assert read_error(tmp_path / "missing.jsonl").rule == "FMT-1"
    assert read_error(tmp_path).rule == "FMT-1"  # a directory


# --- the torn-tail rule (FMT-7) -------------------------------------------------------------------


def last_turn_end_line(lines: Sequence[str]) -> int:
    """Return the 1-based line of the last line holding a turn/end."""
    return max(n for n, line in enumerate(lines, start=1) if '"type":"turn/end"' in line)


@pytest.mark.spec("FMT-7")
@pytest.mark.parametrize("pack", [True, False], ids=["packed", "unpacked"])
def test_a_final_line_without_newline_is_a_tolerated_torn_tail(tmp_path: Path, pack: bool) -> None:
    events = real_events()
    lines = lines_of(events, pack=pack)
    # Cut the last line (the final turn/end) in half: everything before it is the log.
    path = write_lines(tmp_path / "s.jsonl", [*lines[:-1], lines[-1][:20]], final_newline=False)
    stream, read = read_all(path)
    assert [e for _, e in read] == list(events[:-1])
    assert stream.torn_tail == TornTail(len(lines), "the final line has no newline (a torn record)") and stream.finished
    # Even a complete-looking final turn/end without its newline is torn.
    whole = write_lines(tmp_path / "w.jsonl", lines, final_newline=False)
    assert [e for _, e in LogStream(whole)] == list(events[:-1])


@pytest.mark.spec("FMT-7")
@pytest.mark.parametrize(
    "hole",
    ["{not json", "", '{"type":"text-chunks","seq0":0,"time0":0,"data":{}}', b"\xff\xfe"],
    ids=["garbage", "empty-line", "malformed-row", "not-utf8"],
)
def test_a_hole_after_the_last_turn_end_is_tolerated_and_before_it_is_corruption(tmp_path: Path, hole: str | bytes) -> None:
    events = list(model_logs()[0][1])
    lines = lines_of(events)
    end = last_turn_end_line(lines)
    # An interrupted last turn: the complete events after the last turn/end are kept.
    tail: list[str | bytes] = [*lines[:end], event_to_line(Event("turn/start", len(events), 1, freeze({"turn": 99, "trigger": {"kind": "message", "source": {"kind": "user"}}}))), hole, "junk"]
    stream, read = read_all(write_lines(tmp_path / "torn.jsonl", tail))
    assert [e for _, e in read] == [*events, Event("turn/start", len(events), 1, freeze({"turn": 99, "trigger": {"kind": "message", "source": {"kind": "user"}}}))]
    assert stream.torn_tail is not None and stream.torn_tail.line == end + 2
    # The same hole before the last turn/end: corruption at the hole's line.
    before: list[str | bytes] = [*lines[: end - 3], hole, *lines[end - 3 :]]
    error = read_error(write_lines(tmp_path / "corrupt.jsonl", before))
    assert (error.line, error.rule) == (end - 2, "FMT-7") and "turn/end" in error.reason


@pytest.mark.spec("FMT-7", "LOG-2")
def test_a_seq_gap_is_a_hole_in_the_persisted_form_and_an_error_in_the_memory_form(tmp_path: Path) -> None:
    events = list(real_events())
    lines = lines_of(events, pack=False)
    # Drop seq 30 (a text delta in the last turn): after the last turn/end? No — before it: corruption.
    gap = [*lines[:31], *lines[32:]]
    error = read_error(write_lines(tmp_path / "gap.jsonl", gap))
    assert (error.line, error.rule) == (32, "FMT-7") and "seq gap: expected 30, got 31" in error.reason
    # A gap after the last turn/end ends the log.
    later = Event("turn/start", 42, 1, freeze({"turn": 3, "trigger": {"kind": "message", "source": {"kind": "user"}}}))
    stream, read = read_all(write_lines(tmp_path / "tail.jsonl", [*lines, event_to_line(later)]))
    assert stream.torn_tail == TornTail(43, "seq gap: expected 41, got 42") and len(read) == 41
    # A turn/end line with the wrong seq is itself committed: corruption.
    closing = lines[-1].replace('"seq":40', '"seq":41')
    error = read_error(write_lines(tmp_path / "end.jsonl", [*lines[:-1], closing]))
    assert (error.line, error.rule) == (len(lines), "FMT-7") and "the line itself is a turn/end" in error.reason
    # A packed row that starts at the wrong seq is a gap too.
    packed = lines_of(events)
    row = next(n for n, line in enumerate(packed) if '"text-chunks"' in line)
    error = read_error(write_lines(tmp_path / "row.jsonl", [*packed[:row], packed[row].replace('"seq0":16', '"seq0":17'), *packed[row + 1 :]]))
    assert (error.line, error.rule) == (row + 1, "FMT-7") and "the row starts at 17" in error.reason
    # The in-memory form has no torn tail: a gap is LOG-2, garbage FMT-1, a missing final newline is fine.
    memory = [event_to_line(e) for e in events]
    assert read_error(write_lines(tmp_path / "m.jsonl", [*memory[:30], *memory[31:]])).rule == "LOG-2"
    assert (read_error(write_lines(tmp_path / "g.jsonl", [*memory, "{"])).line, "FMT-1") == (42, "FMT-1")
    assert read_error(write_lines(tmp_path / "e.jsonl", [*memory[:3], "", *memory[3:]])).rule == "FMT-1"
    assert len(list(LogStream(write_lines(tmp_path / "n.jsonl", memory, final_newline=False)))) == 41


@pytest.mark.spec("FMT-7", "LOG-1", "LOG-3")
def test_an_unreadable_event_in_the_preserved_prefix_is_rejected_by_its_rule(tmp_path: Path) -> None:
    lines = lines_of(real_events())
    bad = lines[3].replace('"data":', '"extra":1,"data":')
    error = read_error(write_lines(tmp_path / "s.jsonl", [*lines[:3], bad, *lines[4:]]))
    assert (error.line, error.rule) == (4, "LOG-1")
    row = next(n for n, line in enumerate(lines) if '"text-chunks"' in line)
    negative = json.loads(lines[row])
    negative["time0"], negative["data"]["dt"] = -5, [1, 1, 1]
    error = read_error(write_lines(tmp_path / "t.jsonl", [*lines[:row], json.dumps(negative), *lines[row + 1 :]]))
    assert (error.line, error.rule) == (row + 1, "LOG-3")


@pytest.mark.spec("CHK-4", "LOG-3", "FMT-8")
def test_check_reads_on_past_a_row_whose_member_times_break_log_3(tmp_path: Path) -> None:
    # The row held its members' seqs, so the next line's seq follows them: no stop, no seq gap (CHK-4).
    lines = lines_of(real_events())
    row = next(n for n, line in enumerate(lines) if '"text-chunks"' in line)
    negative = json.loads(lines[row])
    negative["time0"] = -5
    members = len(negative["data"]["texts"])
    path = write_lines(tmp_path / "t.session.jsonl", [*lines[:row], json.dumps(negative), *lines[row + 1 :]])
    read = list(LogStream(path).plain_events(go_on=True))
    unread = [(n, item.rejection.rule, item.final) for n, item in read if isinstance(item, Unread)]
    assert unread == [(row + 1, "LOG-3", False)] and len(read) == len(real_events()) - members + 1
    report = check_log(path, None)
    assert report.stopped is None and [(f.rule, f.line) for f in report.findings] == [("LOG-3", row + 1)]
    assert report.events == len(real_events()) - members


@pytest.mark.spec("JSON-1", "FMT-4", "FMT-7", "CHK-4")
def test_an_integer_of_more_digits_than_int_reads_is_json_1_in_both_forms(tmp_path: Path) -> None:
    huge = "9" * 5_001  # past int()'s 4300 digits: JSON.parse reads Infinity, as for 400 digits
    memory = [event_to_line(e) for e in real_events()]
    at = next(n for n, line in enumerate(memory) if '"type":"user/message"' in line)
    path = write_lines(tmp_path / "m.jsonl", [*memory[:at], memory[at].replace('"data":{', f'"data":{{"n":{huge},', 1), *memory[at + 1 :]])
    report = check_log(path, None)
    assert [(f.rule, f.line) for f in report.findings] == [("JSON-1", at + 1)] and "not finite as a double" in report.findings[0].message
    # After a hole, a turn/end holding such a number is still a turn/end: the hole is corruption, not a torn tail.
    lines = lines_of(real_events())
    end = last_turn_end_line(lines) - 1
    closing = lines[end].replace('"data":{', f'"data":{{"n":-{huge},', 1)
    error = read_error(write_lines(tmp_path / "p.jsonl", [*lines[:5], "{", closing]))
    assert (error.line, error.rule) == (6, "FMT-7") and "line 7 is a turn/end" in error.reason


def row_mutations() -> list[tuple[str, Callable[[dict[str, object]], object]]]:
    def data(row: dict[str, object]) -> dict[str, object]:
        value = row["data"]
        assert isinstance(value, dict)
        return value

    def no_members(row: dict[str, object]) -> None:
        data(row).update(texts=[], dt=[])

    def late_overflow(row: dict[str, object]) -> None:
        row["time0"] = MAX_SAFE_INTEGER - 1
        data(row)["dt"] = [1, 1, 1]

    return [
        ("extra envelope key", lambda r: r.__setitem__("seq", 1)),
        ("seq0 negative", lambda r: r.__setitem__("seq0", -1)),
        ("time0 fractional", lambda r: r.__setitem__("time0", 1.5)),
        ("data not an object", lambda r: r.__setitem__("data", [1])),
        ("data key missing", lambda r: data(r).pop("index")),
        ("data key extra", lambda r: data(r).__setitem__("name", "x")),
        ("turn not a number", lambda r: data(r).__setitem__("turn", "1")),
        ("texts empty", no_members),
        ("texts not strings", lambda r: data(r).__setitem__("texts", [1, 2, 3, 4])),
        ("dt too short", lambda r: data(r).__setitem__("dt", [0, 0])),
        ("dt fractional", lambda r: data(r).__setitem__("dt", [0, 0.5, 0])),
        ("seqs overflow", lambda r: r.__setitem__("seq0", MAX_SAFE_INTEGER - 1)),
        ("times overflow", late_overflow),
        ("tool row with texts", lambda r: r.__setitem__("type", "tool-call-chunks")),
    ]


@pytest.mark.spec("FMT-8", "FMT-7")
@pytest.mark.parametrize(("label", "mutate"), row_mutations(), ids=[label for label, _ in row_mutations()])
def test_a_malformed_row_is_a_hole(tmp_path: Path, label: str, mutate: Callable[[dict[str, object]], object]) -> None:
    lines = lines_of(real_events())
    first_row = next(n for n, line in enumerate(lines) if '"text-chunks"' in line)
    row = json.loads(lines[first_row])
    mutate(row)
    value = freeze(row)
    assert isinstance(value, FrozenMap)
    rejection = expand_chunk_row(value)
    assert isinstance(rejection, Rejection) and rejection.rule == "FMT-8", label
    text = json.dumps(row, separators=(",", ":"))
    error = read_error(write_lines(tmp_path / "early.jsonl", [*lines[:first_row], text, *lines[first_row + 1 :]]))
    assert (error.line, error.rule) == (first_row + 1, "FMT-7") and "malformed" in error.reason
    # The same row after the last turn/end is a tolerated torn tail.
    stream, read = read_all(write_lines(tmp_path / "late.jsonl", [*lines, text]))
    assert stream.torn_tail is not None and stream.torn_tail.line == len(lines) + 1 and "malformed" in stream.torn_tail.reason
    assert len(read) == len(real_events())


@pytest.mark.spec("FMT-8")
def test_a_dt_of_the_wrong_length_says_what_length_it_needs() -> None:
    # "dt length 4 does not match 4 members" read as a contradiction: the reason names the length the members need.
    row = {"type": "text-chunks", "seq0": 0, "time0": 0, "data": {"turn": 1, "step": 1, "index": 0, "dt": [0, 0, 0, 0], "texts": ["a", "b", "c", "d"]}}
    value = freeze(row)
    assert isinstance(value, FrozenMap)
    assert expand_chunk_row(value) == Rejection("FMT-8", "malformed text-chunks row: dt has 4 gap(s) where 4 texts need 3, one between each two")


@pytest.mark.spec("FMT-8", "FMT-7")
def test_tool_call_rows_validate_their_identity(tmp_path: Path) -> None:
    base = {"type": "tool-call-chunks", "seq0": 0, "time0": 0, "data": {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "id": "c", "args": ["a", "b", "c"]}}
    assert len(expand_chunk_row(freeze(base))) == 3  # type: ignore[arg-type]
    for field, value in (("id", 7), ("name", None)):
        row = json.loads(json.dumps(base))
        row["data"][field] = value
        assert isinstance(expand_chunk_row(freeze(row)), Rejection)  # type: ignore[arg-type]


# --- zstd frames (FMT-9) ----------------------------------------------------------------------------


def zstd_log(tmp_path: Path, batches: Sequence[Sequence[Event]]) -> Path:
    return write_persisted(tmp_path / "s.jsonl.zstd", HEADER, (), batches=batches, compress=True)


def turns_of(events: Sequence[Event]) -> list[list[Event]]:
    """Split a log into batches that each end with a turn/end (the harness flushes at turn end)."""
    batches: list[list[Event]] = [[]]
    for event in events:
        batches[-1].append(event)
        if event.type == "turn/end":
            batches.append([])
    return [b for b in batches if b]


@pytest.mark.spec("FMT-9", "FMT-7")
def test_an_incomplete_final_frame_is_a_torn_tail(tmp_path: Path) -> None:
    events = real_events()
    batches = turns_of(events)
    path = zstd_log(tmp_path, batches)
    data = path.read_bytes()
    for cut in (1, 5, 20):
        path.write_bytes(data[:-cut])
        stream, read = read_all(path)
        # What the torn frame decodes is recovered; at least turn 1 (complete frames) is kept.
        assert list(events[: len(batches[0])]) == [e for _, e in read][: len(batches[0])]
        assert len(read) <= len(events) and stream.finished
        # The file ends inside a frame: a torn tail even when all that was written decodes.
        assert stream.torn_tail is not None and stream.torn_tail.line == read[-1][0] + 1
    path.write_bytes(data[: len(zstd_frames(data)[0]) // 2])  # inside the header frame
    assert read_error(path).rule == "FMT-9"


@pytest.mark.spec("FMT-9")
def test_damaged_zstd_frames_reject_the_file(tmp_path: Path) -> None:
    events = real_events()
    path = zstd_log(tmp_path, turns_of(events))
    data = path.read_bytes()
    flipped = bytearray(data)
    flipped[-2] ^= 0x40  # the last frame's checksum
    path.write_bytes(bytes(flipped))
    assert read_error(path).rule == "FMT-9"
    path.write_bytes(data + b"not a frame")
    error = read_error(path)
    assert error.rule == "FMT-9" and "magic" in error.reason
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    head = compressor.compress((header_to_line(HEADER) + "\n").encode())
    body = "".join(event_to_line(e) + "\n" for e in events).encode()
    # The header shares its frame with events: not the harness layout.
    path.write_bytes(compressor.compress((header_to_line(HEADER) + "\n").encode() + body))
    assert read_error(path).rule == "FMT-9"
    # A complete frame that ends inside a line.
    path.write_bytes(head + compressor.compress(body[:-10]))
    assert read_error(path).rule == "FMT-9"
    # A hole after the last turn/end inside a complete frame: tolerated in plain text, not in zstd.
    path.write_bytes(head + compressor.compress(body + b"{torn\n"))
    error = read_error(path)
    assert (error.rule, error.line) == ("FMT-9", 43)
    # An in-memory log compressed: zstd logs are the persisted form.
    path.write_bytes(compressor.compress(body))
    assert read_error(path).rule == "FMT-9"


# --- legacy vocabulary and hostile input --------------------------------------------------------


@pytest.mark.spec("LOG-7", "LOG-8")
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
@pytest.mark.parametrize(
    ("kind", "data", "rule"),
    [
        ("request/header-delta", {"delta": {}}, "LOG-7"),
        ("mode/set", {"mode": "plan"}, "LOG-7"),
        ("request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "fallback"}, "LOG-8"),
    ],
)
def test_the_legacy_vocabulary_is_rejected_at_load(tmp_path: Path, compress: bool, kind: str, data: dict[str, object], rule: str) -> None:
    events = [*real_events()[:3], Event(kind, 3, 5, freeze(data))]
    path = write_persisted(tmp_path / "s.jsonl", HEADER, events, compress=compress)
    error = read_error(path)
    assert (error.line, error.rule) == (5, rule)
    memory = write_lines(tmp_path / "m.jsonl", [event_to_line(e) for e in events])
    assert (read_error(memory).line, read_error(memory).rule) == (4, rule)


@pytest.mark.spec("FMT-5", "FMT-1", "FMT-2")
def test_hostile_input_is_an_unreadable_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = lines_of(real_events())
    deep = "[" * 100_000 + "]" * 100_000
    for form, rows in (("persisted", [*lines[:5], deep, *lines[5:]]), ("memory", [deep])):
        error = read_error(write_lines(tmp_path / f"deep-{form}.jsonl", rows))
        assert error.rule == "FMT-5", form
    # After a hole, the scan for a later turn/end meets the same limit.
    nested = '{"type":"turn\\/end","x":' + "[" * 50_000 + "]" * 50_000 + "}"
    error = read_error(write_lines(tmp_path / "deep-scan.jsonl", [*lines[:5], "{", nested]))
    assert error.rule == "FMT-5"
    assert read_error(write_lines(tmp_path / "utf8.jsonl", [b"\xc3\x28"])).rule == "FMT-1"
    monkeypatch.setattr(frames, "MAX_LINE_BYTES", 1_000)
    error = read_error(write_lines(tmp_path / "long.jsonl", [*lines[:5], "x" * 5_000, *lines[5:]]))
    assert (error.line, error.rule) == (6, "FMT-5")
    error = read_error(write_lines(tmp_path / "long-tail.jsonl", [*lines, "y" * 5_000], final_newline=False))
    assert (error.line, error.rule) == (len(lines) + 1, "FMT-5")


@pytest.mark.spec("FMT-5", "FMT-7")
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12), st.booleans(), st.integers(1, 9), st.integers(4, 14))
def test_lines_read_in_blocks_are_the_files_lines_and_keep_the_bound(lines: list[bytes], newline: bool, block: int, bound: int) -> None:
    import io

    data = b"\n".join(lines) + (b"\n" if newline and lines else b"")
    expected = [(n, body, n < len(lines) or newline) for n, body in enumerate(lines, start=1)]
    if lines and not newline and not lines[-1]:
        expected.pop()  # a file ending in a newline and nothing else has no last line to tear
    too_long = next((n for n, body, _ in expected if len(body) > bound), None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frames, "_BLOCK", block)  # lines cross blocks at every place
        patch.setattr(frames, "MAX_LINE_BYTES", bound)
        read = frames.plain_lines(io.BytesIO(data), "f")
        if too_long is None:
            assert [(line.number, line.raw, line.terminated) for line in read] == expected
        else:
            with pytest.raises(LogReadError) as caught:
                list(read)
            assert (caught.value.line, caught.value.rule) == (too_long, "FMT-5")


# --- fuzz: any damage reads or is one LogReadError naming the file -------------------------------


@cache
def fuzz_bases() -> tuple[tuple[str, bytes], ...]:
    import tempfile

    bases: list[tuple[str, bytes]] = []
    events = model_logs()[2][1]
    with tempfile.TemporaryDirectory() as scratch:
        for compress in (False, True):
            path = write_persisted(Path(scratch) / "s", HEADER, (), batches=turns_of(events), compress=compress)
            bases.append((f"model-{compress}", path.read_bytes()))
            if REAL_LOG.exists():
                path = write_persisted(Path(scratch) / "r", HEADER, (), batches=turns_of(real_events()), compress=compress)
                bases.append((f"real-{compress}", path.read_bytes()))
    if REAL_LOG.exists():
        bases.append(("memory", REAL_LOG.read_bytes()))
    return tuple(bases)


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, bytes]:
    name, data = draw(st.sampled_from(fuzz_bases()))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        how = draw(st.sampled_from(["truncate", "flip", "delete", "insert", "duplicate-line"]))
        if how == "truncate":
            data = data[:at]
        elif how == "flip" and data:
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
        elif how == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 40)) :]
        elif how == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=12)) + data[at:]
        else:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            line = data[start : end + 1] if end >= 0 else data[start:]
            data = data[:start] + line + data[start:]
    return name, data


@pytest.mark.spec("FMT-2", "FMT-5", "FMT-7", "FMT-9", "CHK-2")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(damaged())
def test_damaged_files_read_or_raise_one_log_read_error(tmp_path: Path, case: tuple[str, bytes]) -> None:
    name, data = case
    path = tmp_path / f"fuzz-{name}.jsonl"
    path.write_bytes(data)
    stream = LogStream(path)
    try:
        plain: list[tuple[int, PlainEvent]] | str = [(n, e._replace(depth=0, spec=None)) for n, e in stream.plain_events()]
    except LogReadError as error:
        plain = str(error)  # CHK-2: the checker's fast lane reads what the spec reads, or fails alike
    try:
        read = list(stream)
    except LogReadError as error:
        assert "\n" not in str(error) and str(error).startswith(str(path)), str(error)
        assert plain == str(error)
        return
    assert plain == [(n, from_event(e)._replace(depth=0, spec=None)) for n, e in read]
    assert stream.finished and [n for n, _ in read] == sorted(n for n, _ in read)
    assert [e.seq for _, e in read] == list(range(len(read))) == list(range(stream.events_read))
    json_text(freeze([event_to_line(e) for _, e in read]))  # every event writes back


@pytest.mark.spec("FMT-7", "FMT-5")
@pytest.mark.parametrize("block", [1, 2, 3, 5, 8, 64])
def test_a_filtered_split_yields_the_same_numbered_lines_that_hold_a_needle(block: int) -> None:
    """The torn-tail scan's filter skips whole blocks in C; what it yields is what the plain split yields, less lines without a needle."""
    data = b"a\n\n\nxx turn/end\n\nturn/\nend\nq\\u0074\n" + b"\n" * 40 + b'{"type":"turn/end"}\nlast turn/end'
    chunks = [Chunk(data[i : i + block], False) for i in range(0, len(data), block)]
    needles = (b"turn/end", b"\\")
    everything = list(split_lines(chunks, "x"))
    only = LineFilter()
    only.needles = needles
    filtered = list(split_lines(chunks, "x", only))
    def wanted(lines: list[frames.Line]) -> list[frames.Line]:
        return [line for line in lines if any(n in line.raw for n in needles) or not line.terminated]

    assert set(filtered) <= set(everything) and wanted(filtered) == wanted(everything)  # a block with a needle yields all its lines
    assert [line.number for line in wanted(filtered)] == [4, 8, 49, 50]
