"""Spec §1 — lossless JSON values, their JavaScript text form, and JSON equality.

A JSON value here is ``None``, a ``bool``, an ``int`` or ``float``, a ``str``, a ``tuple`` of
values (an array) or a ``FrozenMap`` (an object). Values are immutable and detached from
whatever they were frozen from (JSON-6). The harness is JavaScript, so numbers follow IEEE
doubles (JSON-3), object keys follow JavaScript property order (JSON-4), and the spec's equality
is equality of ``JSON.stringify`` text (JSON-5), never Python ``==`` (``True == 1``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Union

from prefix_model.core.contracts import ENABLED, RejectedError, Rejection, ensure, require

__all__ = [
    "JsonValue",
    "JsonArray",
    "FrozenMap",
    "MAX_SAFE_INTEGER",
    "MAX_DEPTH",
    "check_lossless",
    "freeze",
    "freeze_object",
    "thaw",
    "json_text",
    "json_equals",
    "json_deep_equal",
    "js_number_text",
    "is_json_value",
]

if TYPE_CHECKING:
    JsonValue = Union[None, bool, int, float, str, "JsonArray", "FrozenMap"]
    JsonArray = tuple[JsonValue, ...]
else:
    # NOTE: CrossHair crashes on a recursive alias (toolchain.md); at run time the alias is
    # plain ``object`` and ``is_json_value`` states the shape where a contract needs it.
    JsonValue = object
    JsonArray = tuple

MAX_SAFE_INTEGER = 2**53 - 1
MAX_DEPTH = 256  # JSON-7: a model limit (the harness walks iteratively); far beyond any real payload
_MAX_ARRAY_INDEX = 2**32 - 2


def _is_array_index(key: str) -> bool:
    """Return whether JavaScript orders ``key`` as an integer index (before other keys)."""
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX


def _js_key_order(keys: list[str]) -> list[str]:
    """Return ``keys`` in JavaScript own-property order: array indices ascending, then the rest."""
    indices = sorted((k for k in keys if _is_array_index(k)), key=int)
    return indices + [k for k in keys if not _is_array_index(k)]


class FrozenMap(Mapping[str, "JsonValue"]):
    """An immutable JSON object; its keys are kept in JavaScript property order."""

    __slots__ = ("_items", "_hash")

    _items: dict[str, JsonValue]
    _hash: int | None

    def __init__(self, items: Mapping[str, JsonValue] | None = None) -> None:
        source = dict(items) if items is not None else {}
        ordered = {k: source[k] for k in _js_key_order(list(source))}
        object.__setattr__(self, "_items", ordered)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FrozenMap is immutable")

    def __getitem__(self, key: str) -> JsonValue:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(tuple(sorted(self._items.items(), key=lambda kv: kv[0]))))
        assert self._hash is not None
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def __reduce__(self) -> tuple[type[FrozenMap], tuple[dict[str, JsonValue]]]:
        # copy, deepcopy and pickle rebuild through __init__ (setattr is closed).
        return (FrozenMap, (dict(self._items),))

    def without(self, *keys: str) -> FrozenMap:
        """Return this object without ``keys`` (order of the rest kept)."""
        return FrozenMap({k: v for k, v in self._items.items() if k not in keys})


def is_json_value(value: object) -> bool:
    """Return whether ``value`` is a frozen lossless JSON value (JSON-1, JSON-2, JSON-3)."""
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return abs(value) <= MAX_SAFE_INTEGER + 1
    if isinstance(value, float):
        return math.isfinite(value) and not (value == 0.0 and math.copysign(1.0, value) < 0) and not (
            value.is_integer() and abs(value) <= MAX_SAFE_INTEGER + 1
        )
    if isinstance(value, tuple):
        return all(is_json_value(item) for item in value)
    if isinstance(value, FrozenMap):
        return all(isinstance(k, str) and is_json_value(v) for k, v in value.items())
    return False


@ensure(
    lambda result: result is None or result.rule == "JSON-1" or result.rule == "JSON-2" or result.rule == "JSON-7",
    "JSON-1/JSON-2/JSON-7: a lossy value is rejected by a JSON rule",
    enabled=ENABLED,
)
def check_lossless(value: object, path: str = "$") -> Rejection | None:
    """Return the first lossless-JSON rule that ``value`` (a plain Python value) breaks, if any."""
    return _check(value, path, ())


def _check(value: object, path: str, ancestors: tuple[int, ...]) -> Rejection | None:
    if len(ancestors) > MAX_DEPTH:
        return Rejection("JSON-7", f"{path}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, (list, tuple, Mapping)):
        if id(value) in ancestors:
            return Rejection("JSON-1", f"{path}: a cycle is not JSON")
        ancestors = ancestors + (id(value),)
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        try:
            float(value)
        except OverflowError:
            return Rejection("JSON-1", f"{path}: number is not finite as a double")
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return Rejection("JSON-1", f"{path}: NaN and ±Infinity are not JSON")
        if value == 0.0 and math.copysign(1.0, value) < 0:
            return Rejection("JSON-2", f"{path}: -0 does not survive JSON")
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _check(item, f"{path}[{index}]", ancestors)
            if found is not None:
                return found
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return Rejection("JSON-1", f"{path}: object key {key!r} is not a string")
            found = _check(item, f"{path}.{key}", ancestors)
            if found is not None:
                return found
        return None
    return Rejection("JSON-1", f"{path}: {type(value).__name__} is not a JSON value")


def _freeze_number(value: int | float) -> int | float:
    """Return the double a JavaScript reader holds for ``value``, integral ones as ``int``."""
    if isinstance(value, int) and abs(value) <= MAX_SAFE_INTEGER + 1:
        return value
    as_float = float(value)
    if as_float.is_integer() and abs(as_float) <= MAX_SAFE_INTEGER + 1:
        return int(as_float)
    return as_float


def _freeze(value: object) -> JsonValue:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return _freeze_number(value)
    # A tuple or FrozenMap whose items all freeze to themselves is already frozen: it is kept, not
    # rebuilt (immutable, so as detached as a copy; the loop re-freezes its messages at every append).
    if isinstance(value, (list, tuple)):
        items = tuple(_freeze(item) for item in value)
        return value if type(value) is tuple and all(a is b for a, b in zip(items, value)) else items
    assert isinstance(value, Mapping)
    frozen = {str(k): _freeze(v) for k, v in value.items()}
    if type(value) is FrozenMap and all(frozen[k] is v for k, v in value.items()):
        return value
    return FrozenMap(frozen)


@ensure(lambda result: is_json_value(result), "JSON-6: freeze returns a frozen lossless value", enabled=ENABLED)
def freeze(value: object) -> JsonValue:
    """Return the detached, immutable JSON value of ``value``; raise ``RejectedError`` if lossy.

    Spec: JSON-1, JSON-2, JSON-3, JSON-6.

    :raises RejectedError: when ``value`` is not lossless JSON
    """
    rejection = check_lossless(value)
    if rejection is not None:
        raise RejectedError(rejection)
    return _freeze(value)


@ensure(
    lambda result: isinstance(result, FrozenMap) and is_json_value(result), "JSON-6: an object freezes to a frozen object", enabled=ENABLED
)
def freeze_object(fields: Mapping[str, object]) -> FrozenMap:
    """Return ``freeze(fields)``, typed as the object it is (keys in the order given).

    :raises RejectedError: when ``fields`` is not lossless JSON
    """
    value = freeze(fields)
    assert isinstance(value, FrozenMap)
    return value


@require(lambda number: is_json_value(number), "JSON-1/JSON-3: only a frozen JSON number has a text", enabled=ENABLED)
@ensure(lambda number, result: float(result) == float(number), "JSON-3: the text reads back as the same double", enabled=ENABLED)
def js_number_text(number: int | float) -> str:
    """Return JavaScript's ``Number.prototype.toString`` text of a finite double (JSON-3)."""
    # crosshair: off
    # NOTE: CrossHair models floats as reals, so its double round-trip reports are false
    # positives here (proofs/README.md); the ECMAScript table and properties test this instead.
    if isinstance(number, int) and abs(number) <= MAX_SAFE_INTEGER + 1:
        return str(number)
    x = float(number)
    if x < 0:
        return "-" + js_number_text(-x)
    if x == 0:
        return "0"
    from decimal import Decimal  # here, not at import: only a number past the safe integers needs it (start-up)

    # Shortest round-trip digits s and exponent n with x = 0.s × 10^n (ECMA-262 Number::toString).
    sign, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    n = len(digit_tuple) + exponent
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


_SURROGATE = re.compile("[\ud800-\udfff]")
_encode_string = json.encoder.encode_basestring  # the C quoting of the stdlib encoder (ensure_ascii off)


def _string_text(text: str) -> str:
    """Return JSON.stringify's quoting of ``text`` (well-formed: lone surrogates escaped)."""
    quoted: str = _encode_string(text)
    if _SURROGATE.search(quoted) is not None:
        quoted = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    return quoted


def _slow_text(value: JsonValue) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return js_number_text(value)
    if isinstance(value, str):
        return _string_text(value)
    if isinstance(value, tuple):
        return "[" + ",".join(_slow_text(item) for item in value) + "]"
    assert isinstance(value, FrozenMap)
    return "{" + ",".join(_string_text(k) + ":" + _slow_text(v) for k, v in value.items()) + "}"


class _HasFloat(Exception):
    """A value holds a non-integral number: Python's float text is not JavaScript's."""


def _plain(value: JsonValue) -> object:
    if isinstance(value, FrozenMap):
        return {k: _plain(v) for k, v in value._items.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        raise _HasFloat
    return value


def _text(value: JsonValue) -> str:
    # Fast path: the C encoder writes exactly JSON.stringify's text for values without floats
    # (FrozenMap keys are already in JavaScript order; escapes agree but for lone surrogates).
    try:
        text = json.dumps(_plain(value), ensure_ascii=False, separators=(",", ":"))
    except _HasFloat:
        return _slow_text(value)
    return text if _SURROGATE.search(text) is None else _slow_text(value)


@require(lambda value: is_json_value(value), "JSON-1: only frozen JSON values have a JSON text", enabled=ENABLED)
@ensure(lambda result: len(result) > 0, "JSON-4: every value has a non-empty text", enabled=ENABLED)
def json_text(value: JsonValue) -> str:
    """Return ``JSON.stringify(value)`` as the harness computes it (JSON-4)."""
    return _text(value)


@require(lambda value: is_json_value(value), "JSON-1: only frozen JSON values thaw", enabled=ENABLED)
@ensure(lambda value, result: _text(_freeze(result)) == _text(value), "JSON-6: thaw and freeze round-trip", enabled=ENABLED)
def thaw(value: JsonValue) -> object:
    """Return ``value`` as plain ``dict``/``list`` values, for ``json`` at the edge."""
    return _thaw(value)


def _thaw(value: JsonValue) -> object:
    # The recursion, under thaw's contracts once: checked at every level, they re-walked each subtree (O(size x depth)).
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    if isinstance(value, FrozenMap):
        return {k: _thaw(v) for k, v in value.items()}
    return value


@require(lambda a, b: is_json_value(a) and is_json_value(b), "JSON-1: only frozen JSON values compare", enabled=ENABLED)
@ensure(lambda a, b, result: result == (_text(b) == _text(a)), "JSON-5: JSON equality is symmetric", enabled=ENABLED)
def json_equals(a: JsonValue, b: JsonValue) -> bool:
    """Return whether ``a`` and ``b`` have the same ``JSON.stringify`` text (JSON-5)."""
    return _text(a) == _text(b)


@require(lambda a, b: is_json_value(a) and is_json_value(b), "JSON-1: only frozen JSON values compare", enabled=ENABLED)
@ensure(lambda a, b, result: result or _text(a) != _text(b), "JSON-5: values with equal text are structurally equal", enabled=ENABLED)
def json_deep_equal(a: JsonValue, b: JsonValue) -> bool:
    """Return structural JSON equality: key order ignored, ``true`` never equal to ``1`` (JSON-5)."""
    return _deep_equal(a, b)


def _deep_equal(a: JsonValue, b: JsonValue) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, FrozenMap) and isinstance(b, FrozenMap):
        return a.keys() == b.keys() and all(_deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, FrozenMap)) or isinstance(b, (tuple, FrozenMap)):
        return False
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    )
