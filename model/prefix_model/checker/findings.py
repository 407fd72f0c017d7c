"""Spec §14 — a finding: the requirement an input breaks, where, and expected vs actual."""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.json_values import JsonValue, json_text

__all__ = ["Finding", "shorten", "first_difference"]

LIMIT = 160


@dataclass(frozen=True, slots=True)
class Finding:
    """One violated requirement, located by event seq and line, or by captured request."""

    rule: str
    message: str
    seq: int | None = None
    line: int | None = None
    request: int | None = None
    path: str | None = None
    expected: str | None = None
    actual: str | None = None

    def as_json(self) -> dict[str, object]:
        """Return the finding with its absent fields left out."""
        fields = {"rule": self.rule, "status": "violated", "message": self.message, "seq": self.seq, "line": self.line,
                  "request": self.request, "path": self.path, "expected": self.expected, "actual": self.actual}  # fmt: skip
        return {k: v for k, v in fields.items() if v is not None}

    def __str__(self) -> str:
        where = ", ".join(
            part for part in (
                f"seq {self.seq}" if self.seq is not None else "", f"line {self.line}" if self.line is not None else "",
                f"request {self.request}" if self.request is not None else "", self.path or "",
            ) if part
        )  # fmt: skip
        diff = f"\n    expected {self.expected}\n    actual   {self.actual}" if self.expected is not None or self.actual is not None else ""
        return f"{self.rule} [{where}] {self.message}{diff}"


def shorten(text: str, limit: int = LIMIT) -> str:
    """Return ``text`` cut to ``limit`` characters, saying how much was cut (never silently)."""
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} chars)"


def first_difference(expected: JsonValue, actual: JsonValue) -> tuple[int, str, str]:
    """Return the index of the first differing element of two arrays and both elements' text."""
    want = expected if isinstance(expected, tuple) else ()
    got = actual if isinstance(actual, tuple) else ()
    for index in range(max(len(want), len(got))):
        a = json_text(want[index]) if index < len(want) else "(missing)"
        b = json_text(got[index]) if index < len(got) else "(missing)"
        if a != b:
            return index, shorten(a), shorten(b)
    return 0, shorten(json_text(expected)), shorten(json_text(actual))
