"""§8.1 — the key order of every object the model writes, held to the spec's table, and the table to what is written.

Every scenario of the vectors runs through the model; each object of its logs (envelope and each
event type's data, nested objects included), of its derivations, of the requests it sent and of
its capture lines is read in order and must fit a row of the table, so the prose cannot drift
from the writers, and every row (with each optional key) must be written by some scenario, so the
table states nothing the model does not do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from prefix_model.core.derive import derive_messages
from prefix_model.core.json_values import FrozenMap
from prefix_model.core.requests import request_to_json
from prefix_model.vectors.cases import capture_lines, world_of, wrapped_capture_lines
from prefix_model.vectors.scenarios import scenarios
from prefix_model.formats.event_lines import event_to_json

SPEC = Path(__file__).resolve().parents[2] / "spec" / "SPEC.md"

Keys = tuple[str, ...]
Row = tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]  # the objects it names; each key and whether it is optional
Seen = dict[str, set[Keys]]


def key_order_section(text: str) -> str:
    start = text.index("\n### 8.1 Key order")
    return text[start : text.index("\n## ", start + 1)]


def table(section: str) -> list[Row]:
    """Return the rows of the section's `object | keys in order` table."""
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| object |"):
            continue
        named, keys = (cell.strip() for cell in line.strip().strip("|").split("|"))
        objects = tuple(re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", named)))  # a row's qualifier is not an object
        rows.append((objects, tuple((k, mark == "?") for k, mark in re.findall(r"`([^`]+)`(\??)", keys))))
    return rows


def as_received(section: str) -> set[str]:
    """Return the paths the section says keep the order they came with (members of an event type's data, a request, a projection)."""
    paragraph = section[section.index("What comes from an input") :]
    spans = re.findall(r"`([^`]+)`", paragraph[: paragraph.index("\n\n") if "\n\n" in paragraph else None])
    roots = ("request", "message")
    return {s for s in spans if "." in s and not s.endswith(".py") and ("/" in s.split(".")[0] or s.split(".")[0] in roots)}


def _skipped(path: str, received: set[str]) -> bool:
    return any(path == r or path.startswith(r + ".") or path.startswith(r + "[]") for r in received)


def _walk(seen: Seen, path: str, value: object, received: set[str]) -> None:
    if _skipped(path, received):
        return
    if isinstance(value, (FrozenMap, dict)):
        seen.setdefault(path, set()).add(tuple(value.keys()))
        for key, member in value.items():
            _walk(seen, f"{path}.{key}", member, received)
    elif isinstance(value, (tuple, list)):
        for element in value:
            _walk(seen, f"{path}[]", element, received)


def _ordered(line: str) -> dict[str, object]:
    value = json.loads(line)
    assert isinstance(value, dict)
    return value


def _capture_lines() -> Iterator[tuple[str, dict[str, object]]]:
    for scenario in scenarios():
        world = world_of(scenario.id)
        for session in world.sessions:
            yield from (("capture line", _ordered(line)) for line in capture_lines(world, session.id))
            yield from (("capture wrapper", _ordered(line)) for line in wrapped_capture_lines(world, session.id))


@cache
def written(received: frozenset[str]) -> dict[str, frozenset[Keys]]:
    """Return, per object path, every key order the model's writers produce over all scenarios."""
    seen: Seen = {}
    for scenario in scenarios():
        world = world_of(scenario.id)
        for session in world.sessions:
            for event in session.log.events:
                seen.setdefault("event", set()).add(tuple(event_to_json(event).keys()))
                _walk(seen, event.type, event.data, set(received))
            for message in derive_messages(session.log):
                _walk(seen, "message", message, set(received))
        for sent in world.requests:
            _walk(seen, "request", request_to_json(sent.request), set(received))
    for form, line in _capture_lines():
        if form == "capture line":
            request = tuple(k for k in line if k not in ("turn", "step", "agentLoopRequest"))
            assert tuple(line)[: len(request)] == request, f"a capture line's own keys come after the request's: {tuple(line)}"
            seen.setdefault(form, set()).add(tuple(line)[len(request) :])
            _walk(seen, "request", {k: line[k] for k in request}, set(received))
        else:
            capture = line["capture"]
            assert isinstance(capture, dict)
            seen.setdefault(form, set()).add(tuple(line))
            _walk(seen, f"{form}.capture", capture, set(received))
            _walk(seen, "request", line["request"], set(received))
    return {path: frozenset(orders) for path, orders in seen.items()}


def fits(keys: Keys, row: tuple[tuple[str, bool], ...]) -> bool:
    """Return whether ``keys`` are the row's keys in the row's order, every required one present."""
    names = [name for name, _ in row]
    if any(k not in names for k in keys):
        return False
    places = [names.index(k) for k in keys]
    return places == sorted(set(places)) and all(optional or name in keys for name, optional in row)


def drift(text: str) -> list[str]:
    """Return every disagreement between the spec's key-order table and what the model writes."""
    section = key_order_section(text)
    rows = table(section)
    seen = written(frozenset(as_received(section)))
    faults = []
    for path, orders in sorted(seen.items()):
        mine = [keys for objects, keys in rows if path in objects]
        if not mine:
            faults.append(f"{path}: written, but no row of §8.1 names it")
        faults += [f"{path}: written as {order}, which no row allows" for order in sorted(orders) if mine and not any(fits(order, r) for r in mine)]
    for objects, keys in rows:
        matched = [order for path in objects for order in seen.get(path, ()) if fits(order, keys)]
        if not matched:
            faults.append(f"row {objects[0]} {[k for k, _ in keys]}: never written in that order")
        unseen = [name for name, optional in keys if optional and not any(name in order for order in matched)]
        faults += [f"row {objects[0]}: optional key {name} never written" for name in unseen]
        faults += [f"row names {path}, which is never written" for path in objects if path not in seen]
    return faults


@pytest.mark.spec("JSON-4", "FMT-3", "REQ-1", "HDR-6")
def test_every_object_written_has_its_keys_in_the_order_of_the_spec_table() -> None:
    assert drift(SPEC.read_text(encoding="utf-8")) == []


@pytest.mark.spec("JSON-4", "HDR-6")
def test_the_table_check_can_fail() -> None:
    text = SPEC.read_text(encoding="utf-8")
    header_row = "| `request/header.header` | `config`, `system`?, `tools`?, `messagePrefix`? |"
    assert header_row in text
    swapped = drift(text.replace(header_row, header_row.replace("`system`?, `tools`?", "`tools`?, `system`?")))
    assert any(fault.startswith("request/header.header: written as") for fault in swapped), swapped
    dropped = drift(text.replace("| `compact/start` | `turn` |\n", ""))
    assert dropped == ["compact/start: written, but no row of §8.1 names it"]
    invented = drift(text.replace("| `tool/result.error` | `name`, `code` |", "| `tool/result.error` | `name`, `code`, `cause`? |"))
    assert invented == ["row tool/result.error: optional key cause never written"]
