"""Spec §9 — a finding: the requirement an input breaks, where, and expected vs actual."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from prefix_model.core.contracts import ENABLED, ensure, require
from prefix_model.core.json_values import FrozenMap, JsonValue, is_json_value, json_text, thaw

__all__ = ["Finding", "Marker", "NO_VALUE", "MISSING", "shorten", "first_difference", "Difference", "differences", "SHOWN_DIFFERENCES", "listed", "key_order_only"]

LIMIT = 160


class Marker:
    """A value that is no JSON value: ``NO_VALUE`` (the finding compares none) or ``MISSING`` (no element there)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NO_VALUE, MISSING = Marker("NO_VALUE"), Marker("MISSING")


@dataclass(frozen=True, slots=True)
class Finding:
    """One defect: the strongest requirement it breaks, where, and expected vs actual.

    ``path`` is an RFC 6901 JSON Pointer into the request (``/messages/3``); ``expected`` and
    ``actual`` are the values there, whole (the text form shortens them; ``MISSING`` when one side
    has no element there, ``NO_VALUE`` when the finding compares no values). ``implies`` names the
    other requirements the same defect breaks (a dropped prefix message breaks REC-1, hence REC-2,
    and the extension of the instance's requests, REC-3): one defect, one finding.

    For a request, ``line`` is the capture's; ``seq`` and ``log_line`` place the step that sent
    it in the log (turn ``turn``, step ``step``), ``header_seq`` is the request/header snapshot in
    force, and ``expected_from`` the seq of the event the expected value at ``path`` comes from.
    """

    rule: str
    message: str
    seq: int | None = None
    line: int | None = None
    request: int | None = None
    path: str | None = None
    expected: JsonValue | Marker = NO_VALUE
    actual: JsonValue | Marker = NO_VALUE
    implies: tuple[str, ...] = ()
    turn: int | None = None
    step: int | None = None
    log_line: int | None = None
    header_seq: int | None = None
    expected_from: int | None = None
    last_line: int | None = None  # a run of lines, ``line`` to ``last_line``, with one defect (lines that are no event)

    @property
    @ensure(lambda self, result: result[0] == self.rule and len(set(result)) == len(result), "CHK-3: one defect, one finding: its own rule first, each rule it breaks named once", enabled=ENABLED)
    def rules(self) -> tuple[str, ...]:
        """Return every requirement the defect breaks: its own first, then those it implies."""
        return (self.rule, *self.implies)

    @require(lambda self: _values_ok(self), "JSON-1: a finding compares two JSON values (or marks a side missing), or none", enabled=ENABLED)
    @ensure(
        lambda self, result: result["rule"] == self.rule and result["status"] == "violated" and result["message"] == self.message,
        "CHK-3: a finding's JSON names its rule and says what was seen",
        enabled=ENABLED,
    )
    @ensure(
        lambda result: all(v is not None for k, v in result.items() if k not in ("expected", "actual")),
        "CHK-3: a location the finding does not have is left out, never null",
        enabled=ENABLED,
    )
    def as_json(self) -> dict[str, object]:
        """Return the finding as JSON: absent locations left out, values whole, ``null`` for a missing side."""
        fields: dict[str, object] = {"rule": self.rule, "status": "violated", "message": self.message, "seq": self.seq, "line": self.line,
                                     "request": self.request, "turn": self.turn, "step": self.step, "logLine": self.log_line,
                                     "headerSeq": self.header_seq, "path": self.path, "expectedFrom": self.expected_from,
                                     "lastLine": self.last_line}  # fmt: skip
        shown = {k: v for k, v in fields.items() if v is not None}
        for key, value in (("expected", self.expected), ("actual", self.actual)):
            if value is not NO_VALUE:
                shown[key] = None if value is MISSING else thaw(value)  # type: ignore[arg-type]
        if self.implies:
            shown["implies"] = list(self.implies)
        return shown

    @require(lambda self: _values_ok(self), "JSON-1: a finding compares two JSON values (or marks a side missing), or none", enabled=ENABLED)
    @ensure(lambda self, result: result.startswith(f"{self.rule} ["), "CHK-3: the text of a finding starts with the rule it breaks", enabled=ENABLED)
    @ensure(lambda self, result: not self.implies or f"(also breaks {', '.join(self.implies)})" in result, "CHK-3: it names every other rule the defect breaks", enabled=ENABLED)
    def describe(self, log: str = "log", capture: str = "capture") -> str:
        """Return the finding as text, its places named in the files ``log`` and ``capture``."""
        if self.request is not None:
            places = [f"request {self.request}" + (f": {capture} line {self.line}" if self.line is not None else "")]
            if self.turn is not None:
                at = _place(log, self.log_line, self.seq)
                places.append(f"turn {self.turn} step {self.step}" + (f": {at}" if at else ""))
            elif self.seq is not None:
                places.append(_place(log, None, self.seq))
            if self.header_seq is not None:
                places.append(f"header seq {self.header_seq}")
        else:
            places = [at] if (at := _place(log, self.line, self.seq)) else []
            if self.last_line is not None:
                places = [f"{log} lines {self.line}-{self.last_line}"]
        implied = f" (also breaks {', '.join(self.implies)})" if self.implies else ""
        text = f"{self.rule} [{' | '.join(places)}] {self.message}{implied}"
        where = f"at {self.path}: " if self.path is not None else ""
        if self.expected is not NO_VALUE or self.actual is not NO_VALUE:
            origin = f"  (from seq {self.expected_from})" if self.expected_from is not None else ""
            text += f"\n    {where}expected {_text(self.expected)}{origin}\n    {' ' * len(where)}actual   {_text(self.actual)}"
        elif where:
            text += f"\n    {where[:-2]}"
        return text

    def __str__(self) -> str:
        return self.describe()


def _values_ok(finding: Finding) -> bool:
    """Both values are JSON (or a missing side's marker), or the finding compares none: never one side alone."""
    if (finding.expected is NO_VALUE) != (finding.actual is NO_VALUE):
        return False
    return all(v is NO_VALUE or v is MISSING or is_json_value(v) for v in (finding.expected, finding.actual))


def _place(file: str, line: int | None, seq: int | None) -> str:
    parts = [f"line {line}" if line is not None else "", f"seq {seq}" if seq is not None else ""]
    shown = ", ".join(p for p in parts if p)
    return f"{file} {shown}" if shown else ""


def _text(value: JsonValue | Marker) -> str:
    return "(missing)" if value is MISSING else shorten(json_text(value))  # type: ignore[arg-type]


@ensure(
    lambda text, limit, result: (len(text) <= limit and result == text)
    or (len(text) > limit and result.startswith(text[:limit]) and result.endswith(f"(+{len(text) - limit} chars)")),
    "CHK-3: a value is shown whole, or cut saying how much was cut",
    enabled=ENABLED,
)
def shorten(text: str, limit: int = LIMIT) -> str:
    """Return ``text`` cut to ``limit`` characters, saying how much was cut (never silently)."""
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} chars)"


def _before_equal(expected: JsonValue, actual: JsonValue, result: tuple[int, JsonValue | Marker, JsonValue | Marker]) -> bool:
    """Every element before the index is equal in both arrays, and a differing index names its two elements."""
    want = expected if isinstance(expected, tuple) else ()
    got = actual if isinstance(actual, tuple) else ()
    index = result[0]
    if json_text(want[:index]) != json_text(got[:index]):
        return False
    return result[1:] == (expected, actual) or (result[1] is (want[index] if index < len(want) else MISSING)
                                                and result[2] is (got[index] if index < len(got) else MISSING))  # fmt: skip


@ensure(_before_equal, "REC-1: a finding's path names the first differing element: everything before it is equal", enabled=ENABLED)
def first_difference(expected: JsonValue, actual: JsonValue) -> tuple[int, JsonValue | Marker, JsonValue | Marker]:
    """Return the index of the first differing element of two arrays and both elements (``MISSING`` past an end)."""
    want = expected if isinstance(expected, tuple) else ()
    got = actual if isinstance(actual, tuple) else ()
    for index in range(max(len(want), len(got))):
        a = want[index] if index < len(want) else MISSING
        b = got[index] if index < len(got) else MISSING
        if (a is MISSING) != (b is MISSING) or json_text(a) != json_text(b):  # type: ignore[arg-type]
            return index, a, b
    return 0, expected, actual


SHOWN_DIFFERENCES = 5  # the JSON Pointers a finding lists; the rest are counted


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where two JSON values differ: its RFC 6901 pointer, and the two objects' keys where only their order differs."""

    path: str
    expected_keys: tuple[str, ...] = ()  # set only for a key-order difference: the expected object's keys, in order
    actual_keys: tuple[str, ...] = ()

    @property
    # no contract: its body is the one expression it names
    def key_order(self) -> bool:
        """Whether the two objects here hold the same keys with equal values, in another order."""
        return bool(self.expected_keys)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _walk(expected: JsonValue | Marker, actual: JsonValue | Marker, path: str) -> Iterator[Difference]:
    if expected is MISSING or actual is MISSING or json_text(expected) == json_text(actual):  # type: ignore[arg-type]
        if expected is not actual and (expected is MISSING or actual is MISSING):
            yield Difference(path)
        return
    if isinstance(expected, FrozenMap) and isinstance(actual, FrozenMap):
        if expected.keys() == actual.keys() and tuple(expected) != tuple(actual):  # the same keys in another order (JSON-4)
            yield Difference(path, tuple(expected), tuple(actual))
        for key in (*expected, *(k for k in actual if k not in expected)):
            yield from _walk(expected.get(key, MISSING), actual.get(key, MISSING), f"{path}/{_escape(key)}")
    elif isinstance(expected, tuple) and isinstance(actual, tuple):
        for index in range(max(len(expected), len(actual))):
            want = expected[index] if index < len(expected) else MISSING
            got = actual[index] if index < len(actual) else MISSING
            yield from _walk(want, got, f"{path}/{index}")
    else:
        yield Difference(path)


@require(lambda expected, actual: is_json_value(expected) and is_json_value(actual), "JSON-1: differences are sought between two JSON values", enabled=ENABLED)
@ensure(lambda expected, actual, result: (not result) == (json_text(expected) == json_text(actual)), "REC-1: two values differ somewhere exactly when their JSON texts differ", enabled=ENABLED)
def differences(expected: JsonValue, actual: JsonValue, path: str = "") -> list[Difference]:
    """Return every place where ``actual`` differs from ``expected``, deepest first found, in document order.

    A member or element one side lacks is a difference at its pointer; two objects whose members
    are all equal but whose JSON texts differ differ only in key order (JSON-4, spec §8.1), a
    difference at the object's own pointer naming both orders.
    """
    return list(_walk(expected, actual, path))


# no contract: its body is the one expression its docstring states
def key_order_only(found: list[Difference]) -> bool:
    """Whether every difference is one of key order: the values are equal but for the order of some objects' keys."""
    return bool(found) and all(d.key_order for d in found)


@ensure(lambda found, result: all(d.path in result for d in found[:SHOWN_DIFFERENCES]), "CHK-3: a finding lists the first differences' pointers", enabled=ENABLED)
@ensure(lambda found, result: len(found) <= SHOWN_DIFFERENCES or f"and {len(found) - SHOWN_DIFFERENCES} more" in result, "CHK-3: the differences not listed are counted, never dropped silently", enabled=ENABLED)
def listed(found: list[Difference]) -> str:
    """Return the differences as words: their count, the first ``SHOWN_DIFFERENCES`` pointers, and how many more.

    Where some differences are of key order and some are not, each of the former says so.
    """
    mixed = not key_order_only(found)
    shown = ", ".join(d.path + (" (key order)" if mixed and d.key_order else "") for d in found[:SHOWN_DIFFERENCES])
    more = f", and {len(found) - SHOWN_DIFFERENCES} more" if len(found) > SHOWN_DIFFERENCES else ""
    return f"{len(found)} difference{'s' if len(found) != 1 else ''}: {shown}{more}"
