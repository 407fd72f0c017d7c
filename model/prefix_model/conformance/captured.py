"""Spec §9 (CAP-1) — a captured request as the conformance fold reads it: its place, its plain fields, the step it names.

The one type of a captured request, whether a capture line (``edge/formats/capture.py``) or a
model-built request (``captured_request``). Its fields stay plain (``json.loads`` output): the
fold compares their compact text with the expected request's (``same``) and freezes them only
when that fails (``exact``, the spec's comparison).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from prefix_model.formats.plain import Spans, plain_text
from prefix_model.core.contracts import ENABLED, Rejection, RejectedError, ensure, require  # RejectedError: Captured.exact's ``:raises:``
from prefix_model.core.json_values import MAX_DEPTH, FrozenMap, freeze, is_json_value, json_text, thaw

__all__ = ["Captured", "captured_request"]


@dataclass(slots=True)  # not frozen: one is built per request, and a frozen one builds field by field through object.__setattr__
class Captured:
    """A captured request: its place in the capture, its plain request fields, the step it names and who sent it.

    The one type of a captured request, whether a capture line (``edge/formats/capture.py``,
    CAP-1) or a model-built request (``captured_request``). ``loop_request`` is False for an
    auxiliary call (such as the compaction summarizer) that reconstruction does not cover.
    """

    index: int
    line: int
    fields: dict[str, object]
    turn: int | None = None
    step: int | None = None
    source: str = "<capture>"
    # Its text nests at most MAX_DEPTH levels (else only ``exact`` can tell JSON-7); None: not counted yet (``read_whole`` counts).
    shallow: bool | None = True
    text: str = ""  # the capture line, when read from one
    spans: Spans = field(default_factory=dict)  # where each field's value sits in ``text`` (a compact line)
    instance: str | None = None  # the loop instance that sent it, where the capture names one (INST-1..3)
    loop_request: bool = True
    session_id: str | None = None
    # How a lossy value found by ``exact`` is reported: the capture reader names its file and line (CAP-1).
    refused: Callable[[Captured, Rejection], Exception] | None = None

    @require(lambda self, name: name in self.fields, "CHK-2: a field the request has (the caller compared the field names first)", enabled=ENABLED)
    @ensure(
        lambda self, name, want, result: result == (plain_text(self.fields[name]) == want),
        "CHK-2: a field's own text in the line passes only when it is the field's compact text",
        enabled=ENABLED,
    )
    def same(self, name: str, want: str) -> bool:
        """Return whether field ``name`` has the compact text ``want`` (its own text first: no re-encoding)."""
        span = self.spans.get(name)
        if span is not None and span[1] - span[0] == len(want) and self.text.startswith(want, span[0]):
            return True
        return plain_text(self.fields[name]) == want

    @property
    # no contract: MATCH-1's "names turn and step" is its one expression; a contract would restate it
    def named(self) -> bool:
        """Return whether the capture says which step sent it."""
        return self.turn is not None and self.step is not None

    # no contract: it returns nothing and judges through exact, which carries its own
    def read_whole(self) -> None:
        """Check what the reader left to the fold: JSON-7 for a value its text may nest too deep."""
        if self.shallow is None:  # a reader leaves the count to the few requests read whole (most are compared by text)
            self.shallow = self.text.count("[") + self.text.count("{") <= MAX_DEPTH
        if not self.shallow:
            self.exact()

    @ensure(lambda self, result: thaw(result) == self.fields, "JSON-3: the request frozen is its fields, nothing lost", enabled=ENABLED)
    def exact(self) -> FrozenMap:
        """Return the request frozen, as the spec compares it (``freeze`` raises on a lossy value).

        :raises RejectedError: when a value is not lossless JSON (or what ``refused`` makes of it)
        """
        try:
            value = freeze(self.fields)
        except RejectedError as error:
            if self.refused is None:
                raise
            raise self.refused(self, error.rejection) from None
        assert isinstance(value, FrozenMap)
        return value


@require(lambda request: is_json_value(request), "JSON-6: a model-built request is a frozen lossless value", enabled=ENABLED)
@ensure(lambda request, result: json_text(result.exact()) == json_text(request), "CAP-1: a model-built request is captured whole, key order included", enabled=ENABLED)
def captured_request(index: int, request: FrozenMap, turn: int | None = None, step: int | None = None, instance: str | None = None) -> Captured:
    """Return a model-built request as the capture would hold it (line ``index + 1``), sent by ``instance`` where named."""
    fields = thaw(request)
    assert isinstance(fields, dict)
    return Captured(index, index + 1, fields, turn, step, instance=instance)
