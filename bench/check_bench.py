"""Benchmark of ``prefix-model check``: throughput against plain ``json.loads``, and growth.

Generates harness-shaped sessions (turns of two steps — streamed text deltas, a tool call and
its result — a prefix on the header, a compaction every ten turns so requests stay bounded, as
pressure compaction keeps them in real sessions) with the capture of every loop request, then
times, in one process: ``json.loads`` of every line of both files, and the full check as
``prefix-model check`` runs it (contracts as the environment says: on unless
``PREFIX_MODEL_CONTRACTS=0``), interleaved ``--repeat`` times per size (once beyond 10^5
events); medians of the process's CPU time are reported (``time.process_time``), so both see
the same machine load and other jobs on a shared machine count as little as they can. Usage:

    python bench/check_bench.py [--sizes 10000,100000,1000000] [--repeat 5] [--form memory|persisted|zstd] [--dir DIR]
    python bench/check_bench.py --shape compactions --sizes 5000,10000,20000,40000

``--shape compactions`` generates another session instead (``generate_compactions``): a surface
grown to SIZE nodes and compacted whole, twice, with a tool/result rewritten every turn, and a
sparse capture; a check that is linear in the log grows linearly in the shadowed nodes there.

It prints one row per size (events, MB, runs, parse s, check s, events/s, MB/s, check ÷ parse,
peak RSS of a fresh process checking the pair) and the growth of check time per event between
sizes (1.00 = linear). The two timings are ``bench/timing.py``'s; ``bench/compare_bench.py`` runs
them on two revisions over the same generated files, interleaved, for an A/B comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "model"))
sys.path.insert(1, str(ROOT))  # bench.timing, which compare_bench.py also runs on other revisions

from prefix_model.core.contracts import ENABLED  # noqa: E402
from prefix_model.edge.checker import check_log  # noqa: E402
from prefix_model.edge.formats.persisted_writer import write_persisted  # noqa: E402
from prefix_model.edge.formats.session_jsonl import LogStream  # noqa: E402
from prefix_model.formats.session_lines import SESSION_FORMAT_VERSION, SessionHeaderLine  # noqa: E402

from bench.timing import check_seconds, parse_seconds  # noqa: E402

PREFIX = [{"role": "user", "content": [{"type": "text", "text": "<system-reminder>skills catalog v1</system-reminder>"}]}]
HEADER = {"config": {"provider": "mock", "model": "mock-model"}, "system": "You are careful.",
          "tools": [{"name": "echo", "description": "echo back", "parameters": {"type": "object"}}], "messagePrefix": PREFIX}  # fmt: skip
PROVENANCE = {"provider": "mock", "model": "mock-model"}


class _Writer:
    """Writes a session event by event, keeping its derived messages as the loop would."""

    def __init__(self, log: Path, capture: Path) -> None:
        self.log, self.capture = log.open("w", encoding="utf-8"), capture.open("w", encoding="utf-8")
        self.seq = 0
        self.nodes: list[tuple[int, dict[str, object]]] = []

    def emit(self, type: str, data: Mapping[str, object], op: object = None, sources: list[int] | None = None) -> int:
        event: dict[str, object] = {"type": type, "seq": self.seq, "time": 1_795_989_239_000 + self.seq, "data": dict(data)}
        if sources is not None:
            event["sourceEventSeqs"] = sources
        if op is not None:
            event["surfaceOp"] = op
        self.log.write(json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n")
        self.seq += 1
        return self.seq - 1

    def node(self, seq: int, message: dict[str, object]) -> None:
        self.nodes.append((seq, message))

    def request(self, turn: int, step: int) -> None:
        messages = PREFIX + [m for _, m in self.nodes]
        record = {"provider": "mock", "model": "mock-model", "messages": messages, "system": HEADER["system"],
                  "tools": HEADER["tools"], "turn": turn, "step": step}  # fmt: skip
        self.capture.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")


def generate(folder: Path, events: int) -> tuple[Path, Path]:
    """Write a session of about ``events`` events and its capture into ``folder``."""
    log, capture = folder / f"session-{events}.events.jsonl", folder / f"requests-{events}.jsonl"
    w = _Writer(log, capture)
    turn = 0
    while w.seq < events:
        turn += 1
        w.emit("turn/start", {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}})
        text = f"please echo item {turn}"
        seq = w.emit("user/message", {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}, "append")
        w.node(seq, {"role": "user", "content": [{"type": "text", "text": text}]})
        for step in (1, 2):
            where: dict[str, object] = {"turn": turn, "step": step}
            w.emit("step/start", where)
            if turn == 1 and step == 1:
                w.emit("request/header", {"header": HEADER, "reason": "initial"})
            w.request(turn, step)
            first = w.seq
            answer = "" if step == 1 else f"echoed {turn}"
            for part in ("ech", "oed ", str(turn)) if step == 2 else ():
                w.emit("assistant/chunk", where | {"chunk": {"type": "text-delta", "index": 0, "text": part}})
            call = {"type": "tool-call", "id": f"c{turn}", "name": "echo", "arguments": json.dumps({"text": text})}
            content: list[dict[str, object]] = [{"type": "text", "text": answer}] if step == 2 else [dict(call)]
            w.emit("assistant/chunk", where | {"chunk": {"type": "finish", "reason": {"kind": "stop" if step == 2 else "tool-calls"}}})
            seq = w.emit("assistant/message", where | {"content": content, "provenance": PROVENANCE}, "append", list(range(first, w.seq)))
            w.node(seq, {"role": "assistant", "content": content, "provenance": PROVENANCE})
            if step == 1:
                call_seq = w.emit("tool/call", where | {"callId": f"c{turn}", "name": "echo", "arguments": call["arguments"]})
                result = [{"type": "text", "text": f"echo: {text}"}]
                seq = w.emit("tool/result", where | {"callId": f"c{turn}", "content": result, "isError": False}, "append", [call_seq])
                w.node(seq, {"role": "user", "content": [{"type": "tool-result", "toolCallId": f"c{turn}", "content": result, "isError": False}]})
            if step == 2 and turn % 10 == 0:
                _compact(w, turn)
            w.emit("step/end", where)
        w.emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    w.log.close()
    w.capture.close()
    return log, capture


def _compact(w: _Writer, turn: int) -> None:
    start_seq = w.emit("compact/start", {"turn": turn})
    shadowed = [seq for seq, _ in w.nodes]
    summary = f"summary of turns up to {turn}"
    summary_seq = w.emit("compact/summary", {"summary": summary, "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                                             "shadowedSeqs": shadowed, "shadowedTokenCount": 0, "provider": "mock", "model": "mock-model"})  # fmt: skip
    content = [{"type": "text", "text": summary}]
    seq = w.emit("user/message", {"content": content, "source": {"kind": "plugin", "plugin": "compact"}},
                 {"op": "replace", "start": shadowed[0], "end": shadowed[-1]}, [start_seq, summary_seq, *shadowed])  # fmt: skip
    w.nodes = [(seq, {"role": "user", "content": content})]
    w.emit("compact/end", {"turn": turn})


CALLS = 100  # tool calls of each turn of the compaction shape: a surface of N nodes in about 2N events


def generate_compactions(folder: Path, nodes: int) -> tuple[Path, Path]:
    """Write a session whose surface grows to about ``nodes`` nodes and is compacted whole, twice, and its capture.

    Each turn's first step calls the tool ``CALLS`` times at once (a node per result); each turn
    after the first rewrites the content of a tool/result of the turn before (a replacement on a
    surface of up to ``nodes`` nodes, its positions found near the surface's end). The capture is
    sparse, so it stays linear in the size: the first step's request, and, around each compaction,
    the request of the step that compacts (the whole surface) and of the next step; a last turn
    follows the second compaction.
    """
    log, capture = folder / f"compactions-{nodes}.events.jsonl", folder / f"compactions-{nodes}.requests.jsonl"
    w = _Writer(log, capture)
    turn, captured = 0, {(1, 1)}
    results: list[tuple[int, dict[str, object]]] = []
    for _ in range(2):
        while True:
            turn += 1
            w.emit("turn/start", {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}})
            if results:
                _rewrite(w, *results[0])
            results = _batch_turn(w, turn, captured, compact=len(w.nodes) + CALLS + 3 >= nodes)
            if not results:  # the turn compacted
                captured.add((turn + 1, 1))
                break
    turn += 1  # a turn after the second compaction, whose first request follows it
    w.emit("turn/start", {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}})
    _batch_turn(w, turn, captured, compact=False)
    w.log.close()
    w.capture.close()
    return log, capture


def _batch_turn(w: _Writer, turn: int, captured: set[tuple[int, int]], compact: bool) -> list[tuple[int, dict[str, object]]]:
    """Write one turn of ``CALLS`` tool calls; return its tool/results (seq, data), none when it ended in a compaction."""
    text = f"please echo {CALLS} items, batch {turn}"
    seq = w.emit("user/message", {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}, "append")
    w.node(seq, {"role": "user", "content": [{"type": "text", "text": text}]})
    results: list[tuple[int, dict[str, object]]] = []
    for step in (1, 2):
        where: dict[str, object] = {"turn": turn, "step": step}
        w.emit("step/start", where)
        if turn == 1 and step == 1:
            w.emit("request/header", {"header": HEADER, "reason": "initial"})
        if compact and step == 2:
            captured.add((turn, step))
        if (turn, step) in captured:
            w.request(turn, step)
        calls = [{"type": "tool-call", "id": f"c{turn}-{n}", "name": "echo", "arguments": json.dumps({"text": f"{n}"})} for n in range(CALLS)]
        content: list[dict[str, object]] = [dict(c) for c in calls] if step == 1 else [{"type": "text", "text": f"echoed batch {turn}"}]
        first = w.emit("assistant/chunk", where | {"chunk": {"type": "finish", "reason": {"kind": "tool-calls" if step == 1 else "stop"}}})
        seq = w.emit("assistant/message", where | {"content": content, "provenance": PROVENANCE}, "append", [first])
        w.node(seq, {"role": "assistant", "content": content, "provenance": PROVENANCE})
        for call in calls if step == 1 else ():
            call_seq = w.emit("tool/call", where | {"callId": call["id"], "name": "echo", "arguments": call["arguments"]})
            data = where | {"callId": call["id"], "content": [{"type": "text", "text": f"echo: {call['arguments']}"}], "isError": False}
            seq = w.emit("tool/result", data, "append", [call_seq])
            w.node(seq, _result_message(data))
            results.append((seq, data))
        if compact and step == 2:
            _compact(w, turn)
            results = []
        w.emit("step/end", where)
    w.emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return results


def _result_message(data: Mapping[str, object]) -> dict[str, object]:
    """The message a tool/result derives (DER-3), as ``generate`` writes it."""
    return {"role": "user", "content": [{"type": "tool-result", "toolCallId": data["callId"], "content": data["content"], "isError": False}]}


def _rewrite(w: _Writer, seq: int, data: Mapping[str, object]) -> None:
    """Replace the tool/result node ``seq`` by one that changes only its content (SURF-9), as a pruning of old results does."""
    rewritten = dict(data) | {"content": [{"type": "text", "text": "[pruned]"}]}
    new = w.emit("tool/result", rewritten, {"op": "replace", "start": seq, "end": seq}, [seq])
    position = next(n for n, (s, _) in enumerate(w.nodes) if s == seq)
    w.nodes[position] = (new, _result_message(rewritten))


SHAPES = {"turns": generate, "compactions": generate_compactions}  # a size: events, or surface nodes compacted


def persisted(log: Path, compress: bool) -> Path:
    """Write ``log`` again as the harness persists it (header line, packed chunk rows, zstd frames)."""
    target = log.with_suffix(".session.jsonl" + (".zstd" if compress else ""))
    write_persisted(target, SessionHeaderLine(SESSION_FORMAT_VERSION, "bench", 1_795_989_239_000), (e for _, e in LogStream(log)), compress=compress)
    return target


def _peak_rss_mb(log: Path, capture: Path) -> float:
    """Return the peak resident memory of a fresh process that checks the pair (the CLI's cost)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    code = "import sys; from pathlib import Path; from prefix_model.edge.checker import check_log; check_log(Path(sys.argv[1]), Path(sys.argv[2]))"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "model"))
    subprocess.run([sys.executable, "-c", code, str(log), str(capture)], check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(before, after) / 1024  # kilobytes on Linux; a high-water mark over all children so far


def measure(log: Path, capture: Path, repeat: int) -> tuple[int, int, float, float]:
    """Return events, bytes, and the medians of ``repeat`` interleaved json.loads and check runs."""
    events = sum(1 for _ in LogStream(log).plain_events())
    size = log.stat().st_size + capture.stat().st_size
    parses, checks = [], []
    for _ in range(repeat):  # interleaved, so both see the same machine load
        parses.append(parse_seconds(log, capture))
        checks.append(check_seconds(check_log, log, capture))
    return events, size, statistics.median(parses), statistics.median(checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated event counts")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved runs per size (the median is reported); 1 beyond 10^5 events")
    parser.add_argument("--form", choices=("memory", "persisted", "zstd"), default="memory",
                        help="the log's form: in-memory event lines, or session.jsonl with packed chunk rows, plain or zstd")
    parser.add_argument("--dir", help="where to write the generated files (default: a temporary folder)")
    parser.add_argument("--shape", choices=tuple(SHAPES), default="turns",
                        help="turns: SIZE events of short turns, compacted every ten; compactions: SIZE surface nodes compacted whole, twice")
    args = parser.parse_args()
    folder = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="prefix-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"contracts {'on' if ENABLED else 'off'}; medians of interleaved runs, CPU seconds of this process")
    print(f"{'events':>9} {'MB':>8} {'runs':>4} {'parse s':>8} {'check s':>8} {'events/s':>10} {'MB/s':>7} {'check/parse':>11} {'peak RSS MB':>11}")
    for size in (int(s) for s in args.sizes.split(",")):
        log, capture = SHAPES[args.shape](folder, size)
        if args.form != "memory":
            log = persisted(log, args.form == "zstd")
        repeat = args.repeat if size <= 100_000 else 1
        events, size_bytes, parse, check = measure(log, capture, repeat)
        rss = _peak_rss_mb(log, capture)
        rows.append((events, check))
        mb = size_bytes / 1e6
        print(f"{events:>9} {mb:>8.1f} {repeat:>4} {parse:>8.2f} {check:>8.2f} {events / check:>10.0f} {mb / check:>7.2f} {check / parse:>11.2f} {rss:>11.0f}")
    for (n0, t0), (n1, t1) in zip(rows, rows[1:]):
        print(f"growth {n0} -> {n1} events: time per event x{(t1 / n1) / (t0 / n0):.2f} (1.00 = linear)")


if __name__ == "__main__":
    main()
