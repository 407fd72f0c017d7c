"""The readers' fast lane: the C JSON decoder, with the lossless rules of §1 screened around it.

The spec's reader (``parse_json_line``) freezes every value: exact, and about ten times the cost
of parsing. Most lines need none of it: a line is *plain* when no integer has more than 15
digits and none is ``-0`` (a byte screen spares the common line a hook per integer), the
decoder's float hook sees no exponent form, no ``-0``, no overflow and no NaN/Infinity, and it
nests at most ``MAX_DEPTH`` levels. Its plain value is then exactly ``thaw(freeze(value))`` up
to the order of integer-like keys (JSON-4), which no plain-lane comparison depends on: two plain values
with equal ``json.dumps`` text have equal ``JSON.stringify`` text. Any other line raises
``NotPlain`` and is read by the spec's reader, which gives the exact value or the exact error.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import math
import re
from collections.abc import Callable

from prefix_model.formats.plain import Known, Spans, depth
from prefix_model.core.contracts import ENABLED, Rejection, ensure
from prefix_model.core.json_values import MAX_DEPTH, MAX_SAFE_INTEGER, freeze, json_text
from prefix_model.formats.event_lines import parse_json_line

__all__ = ["NotPlain", "Scanner", "Seen", "float_hook", "needs_int_hook", "plain_loads", "plain_members"]


class NotPlain(Exception):
    """A line the fast lane does not read: the spec's reader decides it."""


def _float(text: str) -> int | float:
    if "e" in text or "E" in text:  # exponent forms: Python's text of the double is not JavaScript's
        raise NotPlain
    value = float(text)
    if not math.isfinite(value) or (value == 0 and text[0] == "-"):  # 400 digits overflow; -0 (JSON-1, JSON-2)
        raise NotPlain
    if value.is_integer():  # freeze keeps an integral double as an int (JSON-3)
        if abs(value) > MAX_SAFE_INTEGER + 1:
            raise NotPlain
        return int(value)
    return value


def _constant(name: str) -> object:
    raise NotPlain


def _int(text: str) -> int:
    if len(text) - text.startswith("-") > 15 or text == "-0":  # 15 digits are always safe (JSON-3); -0 (JSON-2)
        raise NotPlain
    return int(text)


Scanner = Callable[[str, int], tuple[object, int]]
# The C scanner itself: JSONDecoder.decode adds two regex matches and a Python frame per line.
_scan: Scanner = json.scanner.make_scanner(json.JSONDecoder(parse_float=_float, parse_constant=_constant))  # type: ignore[arg-type]  # typeshed names the class, not its argument
_scan_ints: Scanner = json.scanner.make_scanner(json.JSONDecoder(parse_float=_float, parse_int=_int, parse_constant=_constant))  # type: ignore[arg-type]
"""The scanner for a line whose bytes the screen below flags: each integer is checked as it is read."""
_scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")  # C; not in typeshed
# Integers are left to the C decoder (a hook per integer costs a third of the decoding) when the
# bytes show none that needs a look: no run of 16 digits and no -0 number token. A flagged line
# (say, a long digit run in a string) is read with the hook.
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 16
# A -0 number token, but for the character before it (not a letter or digit: checked per match). Begun by its literal,
# the search skips ahead in C; a look-behind first tried at every byte cost a millisecond per 64 KiB (bench/, a log whose
# call ids read "c12-0").
_NEGATIVE_ZERO = re.compile(rb"-0(?:\.0*)?(?![.0-9])")


def _decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotPlain from None


def needs_int_hook(raw: bytes) -> bool:
    """Return whether a line's bytes may hold an integer a decoder without the hook would not keep exactly."""
    # rfind, not ``in``: on digits turned to zeros its search backs off less (half the time on a block of event lines)
    if raw.translate(_ZEROS).rfind(_LONG_RUN) >= 0:
        return True
    return any(m.start() == 0 or not raw[m.start() - 1 : m.start()].isalnum() for m in _NEGATIVE_ZERO.finditer(raw))


float_hook = _float
"""The float hook of every fast decoder: it raises ``NotPlain`` for a number it would not keep exactly."""


def _plain_text(raw: bytes) -> tuple[str, Scanner]:
    """Return a line's text and the scanner that reads its numbers exactly; raise ``NotPlain`` if not UTF-8."""
    text = _decoded(raw)
    return text, _scan_ints if needs_int_hook(raw) else _scan


def _spec_reads(raw: bytes, value: object) -> bool:
    """Return whether the spec's reader reads ``raw`` as a value whose JavaScript text is ``value``'s."""
    try:
        spec = parse_json_line(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return False
    return not isinstance(spec, Rejection) and json_text(spec) == json_text(freeze(value))


@ensure(
    lambda raw, check_depth, result: not check_depth or _spec_reads(raw, result[0]),
    "a line the plain lane reads is one the spec's reader reads to the same value",
    enabled=ENABLED,
)
def plain_loads(raw: bytes, check_depth: bool = True) -> tuple[object, int]:
    """Return the plain value of one JSON line and a bound on its nesting depth; raise ``NotPlain``.

    The bound is half the line's length for a short line, else the count of ``[`` and ``{`` when
    that is at most ``MAX_DEPTH`` (C-speed counts), else the exact depth. With ``check_depth`` off
    the nesting is left to the caller — a line that JSON-7 may reject must be frozen later.
    """
    text, scan = _plain_text(raw)
    try:
        value, end = scan(text, 0)
    except (StopIteration, ValueError, RecursionError):  # not JSON (or leading space): the spec's reader says why
        raise NotPlain from None
    if end != len(text):
        raise NotPlain
    # Each level takes two characters, so a short line needs no count (a C scan per bracket kind).
    bound = len(text) // 2 if len(text) <= MAX_DEPTH else text.count("[") + text.count("{")
    if check_depth and bound > MAX_DEPTH:
        bound = depth(value)
        if bound > MAX_DEPTH:
            raise NotPlain
    return value, bound


Seen = dict[str, tuple[str, object]]
"""Per member name, the text and value last read for it (``plain_members``' own memory over a file's lines)."""


def plain_members(
    raw: bytes, descend: str | None = None, known: Callable[[], Known | None] | None = None, seen: Seen | None = None
) -> tuple[str, dict[str, object], Spans, Spans]:
    """Return a compact JSON object line's plain value, its members' spans, and those of member ``descend``.

    For a line written without whitespace (``JSON.stringify``'s form) this reads the top-level
    object member by member — the values by the same C scanner as ``plain_loads`` — so each
    member's own text is known without writing it again; a member named ``descend`` holding an
    object is read the same way one level down. Anything else raises ``NotPlain``. Returns the
    line's text first.

    ``known`` guesses a ``messages`` member: when the line's array begins with the guess's
    elements, text for text, those are not decoded again — only the elements after them are
    (a request repeats the previous one's history and adds to it). A wrong guess costs one
    string comparison; the value read is the same either way. Each integer decoded is checked as
    it is read: with most of a line not decoded, a screen of all its bytes would cost more.

    ``seen`` does the same for every other member holding an array, object or string: when the
    line holds, where the member's value begins, the text last read for that name, that text is
    the value's whole text (such a value ends at its own closing bracket or quote; what follows
    is checked as after any member), so the value last read for it is taken (a request repeats
    its system and tools, often the longest part of a line). The caller passes one dict for a
    file; the values taken are shared between lines, as the guessed messages are: nobody writes
    to a value read.
    """
    text = _decoded(raw)
    value, spans, inner, end = _members(text, 0, descend, known, _scan_ints, seen)
    if end != len(text):
        raise NotPlain
    return text, value, spans, inner


def _members(
    text: str, start: int, descend: str | None, known: Callable[[], Known | None] | None, scan: Scanner, seen: Seen | None = None
) -> tuple[dict[str, object], Spans, Spans, int]:
    if not text.startswith("{", start):
        raise NotPlain
    value: dict[str, object] = {}
    spans: Spans = {}
    inner: Spans = {}
    index = start + 1
    try:
        if text[index] == "}":
            return value, spans, inner, index + 1
        while True:
            if text[index] != '"':
                raise NotPlain
            key, index = _scanstring(text, index + 1)
            if text[index] != ":":
                raise NotPlain
            member: object
            if key == descend and text.startswith("{", index + 1):
                member, inner, _, end = _members(text, index + 1, None, known, scan, seen)
            elif key == "messages" and known is not None and (guess := known()) is not None and (found := _extend(text, index + 1, guess, scan)) is not None:
                member, end = found
            elif seen is not None and (last := seen.get(key)) is not None and text.startswith(last[0], index + 1):
                member, end = last[1], index + 1 + len(last[0])
            else:
                member, end = scan(text, index + 1)
                if seen is not None and type(member) in _REMEMBERED:
                    seen[key] = (text[index + 1 : end], member)
            value[key] = member  # a repeated key: the last value, at the first place (JSON.parse)
            spans[key] = (index + 1, end)
            if text[end] == "}":
                return value, spans, inner, end + 1
            if text[end] != ",":
                raise NotPlain
            index = end + 1
    except (IndexError, StopIteration, ValueError, RecursionError):
        raise NotPlain from None


# Not numbers, booleans and null: their text is short, turn and step change every line, and "12" begins "123".
_REMEMBERED = (str, list, dict)


def _extend(text: str, start: int, known: Known, scan: Scanner) -> tuple[list[object], int] | None:
    """Return the array at ``start`` and its end when it begins with ``known``'s elements; else None.

    The guess's text is ``[`` and its elements, each a whole JSON value, so when the line holds
    that text and then ``,`` or ``]``, the line's first elements are the guess's. The rest are
    decoded one by one; a layout this does not expect returns None (the caller decodes the whole
    array).
    """
    head, known_items = known
    if not text.startswith(head, start):
        return None
    index = start + len(head)
    items = list(known_items)
    if text[index] == "]":
        return items, index + 1
    if items:
        if text[index] != ",":
            return None
        index += 1
    try:
        while True:
            item, index = scan(text, index)
            items.append(item)
            if text[index] == "]":
                return items, index + 1
            if text[index] != ",":
                return None
            index += 1
    except (IndexError, StopIteration, ValueError):  # spaces, or not JSON: the whole array is decoded again
        return None
