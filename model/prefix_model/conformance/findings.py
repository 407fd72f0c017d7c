"""Spec §14 — a finding: the requirement an input breaks, where, and expected vs actual."""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.json_values import JsonValue, json_text, thaw

__all__ = ["Finding", "Marker", "NO_VALUE", "MISSING", "shorten", "first_difference"]

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
    """One violated requirement, located by event seq and line, or by captured request.

    ``path`` is an RFC 6901 JSON Pointer into the request (``/messages/3``); ``expected`` and
    ``actual`` are the values there, whole (the text form shortens them; ``MISSING`` when one side
    has no element there, ``NO_VALUE`` when the finding compares no values).
    """

    rule: str
    message: str
    seq: int | None = None
    line: int | None = None
    request: int | None = None
    path: str | None = None
    expected: JsonValue | Marker = NO_VALUE
    actual: JsonValue | Marker = NO_VALUE

    def as_json(self) -> dict[str, object]:
        """Return the finding as JSON: absent locations left out, values whole, ``null`` for a missing side."""
        fields: dict[str, object] = {"rule": self.rule, "status": "violated", "message": self.message, "seq": self.seq, "line": self.line,
                                     "request": self.request, "path": self.path}  # fmt: skip
        shown = {k: v for k, v in fields.items() if v is not None}
        for key, value in (("expected", self.expected), ("actual", self.actual)):
            if value is not NO_VALUE:
                shown[key] = None if value is MISSING else thaw(value)  # type: ignore[arg-type]
        return shown

    def __str__(self) -> str:
        where = ", ".join(
            part for part in (
                f"seq {self.seq}" if self.seq is not None else "", f"line {self.line}" if self.line is not None else "",
                f"request {self.request}" if self.request is not None else "", self.path or "",
            ) if part
        )  # fmt: skip
        compared = self.expected is not NO_VALUE or self.actual is not NO_VALUE
        diff = f"\n    expected {_text(self.expected)}\n    actual   {_text(self.actual)}" if compared else ""
        return f"{self.rule} [{where}] {self.message}{diff}"


def _text(value: JsonValue | Marker) -> str:
    return "(missing)" if value is MISSING else shorten(json_text(value))  # type: ignore[arg-type]


def shorten(text: str, limit: int = LIMIT) -> str:
    """Return ``text`` cut to ``limit`` characters, saying how much was cut (never silently)."""
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} chars)"


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
