"""Spec §1 — lossless JSON values, their JavaScript text form, and JSON equality (JSON-1..JSON-6).

The JavaScript expectations below were worked out by hand from ECMA-262 (Number::toString,
JSON.stringify's QuoteJSONString, OrdinaryOwnPropertyKeys), not taken from any harness code.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import FrozenInstanceError

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefix_model.core.contracts import RejectedError
from prefix_model.core.events import Event
from prefix_model.core.json_values import (
    MAX_SAFE_INTEGER,
    FrozenMap,
    JsonValue,
    check_lossless,
    freeze,
    freeze_object,
    is_json_value,
    js_number_text,
    json_deep_equal,
    json_equals,
    json_text,
    thaw,
)

from tests.strategies import INDEX_LIKE_KEYS, fewer_examples, js_numbers, json_values, obj, plain_json_values

# --- JSON-1 / JSON-2: what is a value ---------------------------------------------------------


@pytest.mark.spec("JSON-1")
@given(plain_json_values())
@fewer_examples(2)
def test_freeze_accepts_every_lossless_value(value: object) -> None:
    assert check_lossless(value) is None
    assert is_json_value(freeze(value))


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        [1, math.nan],
        {"a": {"b": math.inf}},
        {1: "non-string key"},
        {("a",): 1},
        {"a"},
        frozenset({1}),
        b"bytes",
        object(),
        1 + 2j,
        10**400,  # not finite as a double: JavaScript would read Infinity
    ],
    ids=["nan", "inf", "-inf", "nan-in-array", "inf-in-object", "int-key", "tuple-key", "set", "frozenset", "bytes", "object", "complex", "huge-int"],
)
def test_invalid_non_json_value(value: object) -> None:
    rejection = check_lossless(value)
    assert rejection is not None and rejection.rule == "JSON-1"
    with pytest.raises(RejectedError) as raised:
        freeze(value)
    assert raised.value.rejection.rule == "JSON-1"


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize("shape", ["list", "dict"])
def test_invalid_cyclic_value(shape: str) -> None:
    cyclic: list[object] | dict[str, object] = [] if shape == "list" else {}
    if isinstance(cyclic, list):
        cyclic.append(cyclic)
    else:
        cyclic["self"] = cyclic
    rejection = check_lossless(cyclic)
    assert rejection is not None and rejection.rule == "JSON-1"
    with pytest.raises(RejectedError) as raised:
        freeze(cyclic)
    assert raised.value.rejection.rule == "JSON-1"


@pytest.mark.spec("JSON-2")
@pytest.mark.parametrize("value", [-0.0, [0, -0.0], {"x": {"y": -0.0}}], ids=["bare", "in-array", "nested"])
def test_invalid_negative_zero(value: object) -> None:
    rejection = check_lossless(value)
    assert rejection is not None and rejection.rule == "JSON-2"
    with pytest.raises(RejectedError) as raised:
        freeze(value)
    assert raised.value.rejection.rule == "JSON-2"


@pytest.mark.spec("JSON-2")
def test_freeze_keeps_positive_zero_and_integer_zero() -> None:
    assert freeze(0.0) == 0 and type(freeze(0.0)) is int
    assert json_text(freeze(0.0)) == "0"


# --- JSON-3: numbers as JavaScript holds them -------------------------------------------------


@pytest.mark.spec("JSON-3")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, 1),
        (-5.0, -5),
        (2**53, 2**53),
        (2**53 + 1, 2**53),  # nearest double (ties to even)
        (-(2**53) - 1, -(2**53)),
        (2**53 + 2, 9007199254740994.0),
        (10**21, 1e21),
    ],
)
def test_freeze_holds_numbers_as_doubles(value: int | float, expected: int | float) -> None:
    frozen = freeze(value)
    assert frozen == expected and type(frozen) is type(expected)


@pytest.mark.spec("JSON-3")
@given(st.floats(allow_nan=False, allow_infinity=False).map(lambda x: x + 0.0))
def test_freeze_makes_integral_numbers_ints(number: float) -> None:
    frozen = freeze(number)
    assert frozen == number
    if number.is_integer() and abs(number) <= 2**53:
        assert type(frozen) is int
    else:
        assert type(frozen) is float


@pytest.mark.spec("JSON-3", "JSON-5")
def test_freeze_makes_one_and_one_point_zero_the_same_value() -> None:
    assert json_equals(freeze(1.0), freeze(1))
    assert json_deep_equal(freeze({"n": 1.0}), freeze({"n": 1}))


# Number::toString cases, each worked out from ECMA-262 §6.1.6.1.20: k digits s, exponent n.
JS_NUMBER_TEXT = [
    (0, "0"),
    (1, "1"),
    (-1, "-1"),
    (0.1, "0.1"),
    (-1.5, "-1.5"),
    (0.5, "0.5"),
    (100, "100"),
    (0.1 + 0.2, "0.30000000000000004"),
    (1 / 3, "0.3333333333333333"),
    (1e21, "1e+21"),  # n = 22 > 21: exponent form
    (1e20, "100000000000000000000"),  # n = 21: digits then zeros
    (9.999999999999999e20, "999999999999999900000"),
    (123456789012345680000, "123456789012345680000"),  # the double nearest, s = 12345678901234568
    (2**64, "18446744073709552000"),
    (2**53, "9007199254740992"),
    (2**53 + 2, "9007199254740994"),
    (-(2**60), "-1152921504606847000"),
    (1.5e300, "1.5e+300"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (0.000001, "0.000001"),  # n = -5: 0.00000 then digits
    (0.000001234, "0.000001234"),
    (1e-7, "1e-7"),  # n = -6: exponent form
    (-1e-7, "-1e-7"),
    (1.5e-7, "1.5e-7"),
    (1.234e-7, "1.234e-7"),
    (123e-20, "1.23e-18"),
    (5e-324, "5e-324"),
    (4.35, "4.35"),
    (123.456, "123.456"),
]


@pytest.mark.spec("JSON-3", "JSON-4")
@pytest.mark.parametrize(("number", "text"), JS_NUMBER_TEXT, ids=[t for _, t in JS_NUMBER_TEXT])
def test_js_number_text_matches_javascript(number: int | float, text: str) -> None:
    frozen = freeze(number)  # js_number_text takes JSON numbers: doubles, integral ones as int
    assert isinstance(frozen, (int, float))
    assert js_number_text(frozen) == text
    assert json_text(frozen) == text


_DECIMAL_FORM = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")
_EXPONENT_FORM = re.compile(r"-?[1-9](\.[0-9]*[1-9])?e[+-][1-9][0-9]*")


@pytest.mark.spec("JSON-3")
@given(js_numbers)
def test_js_number_text_is_the_shortest_round_trip_in_the_javascript_layout(number: int | float) -> None:
    text = js_number_text(number)
    # Round trip: the text reads back as the same double.
    assert float(text) == float(number)
    # Layout: plain decimals exactly when 1e-6 <= |x| < 1e21, else d[.ddd]e±n.
    magnitude = abs(float(number))
    plain = magnitude == 0 or 1e-6 <= magnitude < 1e21
    assert (_DECIMAL_FORM if plain else _EXPONENT_FORM).fullmatch(text), text
    # Shortest: one significant digit fewer no longer reads back as the same double.
    digits = re.sub(r"e.*$", "", text).lstrip("-").replace(".", "").strip("0")
    if len(digits) > 1:
        assert float(f"{float(number):.{len(digits) - 2}e}") != float(number)


# --- JSON-4: JSON.stringify ---------------------------------------------------------------------


@pytest.mark.spec("JSON-4")
def test_frozen_map_orders_keys_as_javascript() -> None:
    frozen = freeze({"b": 1, "2": 0, "10": 0, "01": 0})
    assert isinstance(frozen, FrozenMap)
    assert list(frozen) == ["2", "10", "b", "01"]
    assert json_text(frozen) == '{"2":0,"10":0,"b":1,"01":0}'


@pytest.mark.spec("JSON-4")
def test_frozen_map_array_index_keys_end_at_two_to_the_32_minus_two() -> None:
    keys = ["z", "4294967295", "4294967294", "-1", "1.5", "+1", "007", "٣", "1"]
    assert list(FrozenMap({k: 0 for k in keys})) == ["1", "4294967294", "z", "4294967295", "-1", "1.5", "+1", "007", "٣"]


def _is_index(key: str) -> bool:
    """Return whether ``key`` is a canonical array index (ECMA-262: an integer below 2^32 - 1)."""
    return re.fullmatch(r"0|[1-9][0-9]*", key) is not None and int(key) <= 2**32 - 2


@pytest.mark.spec("JSON-4")
@given(st.lists(st.one_of(st.sampled_from(INDEX_LIKE_KEYS), st.text(max_size=4)), unique=True, max_size=8))
def test_frozen_map_puts_index_keys_first_ascending_then_the_rest_in_insertion_order(keys: list[str]) -> None:
    ordered = list(FrozenMap({k: 0 for k in keys}))
    indices = [k for k in ordered if _is_index(k)]
    assert ordered == indices + [k for k in keys if not _is_index(k)]
    assert [int(k) for k in indices] == sorted(int(k) for k in indices)


@pytest.mark.spec("JSON-4")
@given(json_values(floats=False))
@fewer_examples(2)
def test_json_text_matches_json_dumps_without_floats(value: JsonValue) -> None:
    assert json_text(value) == json.dumps(thaw(value), separators=(",", ":"), ensure_ascii=False)


@pytest.mark.spec("JSON-4", "JSON-3")
@given(json_values())
@fewer_examples(2)
def test_json_text_reads_back_to_the_same_text(value: JsonValue) -> None:
    text = json_text(value)
    assert json_text(freeze(json.loads(text))) == text


@pytest.mark.spec("JSON-4")
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", '"plain"'),
        ('quote " and \\ backslash', '"quote \\" and \\\\ backslash"'),
        ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
        ("\x00\x01\x1f", '"\\u0000\\u0001\\u001f"'),
        ("\x7f é ✓ \u2028", '"\x7f é ✓ \u2028"'),  # JSON.stringify leaves these raw
        ("😀", '"😀"'),
        ("\ud800", '"\\ud800"'),  # a lone surrogate is escaped (well-formed JSON.stringify)
        ("a\udfffb", '"a\\udfffb"'),
    ],
    ids=["plain", "quote-backslash", "short-escapes", "controls", "raw-non-ascii", "astral", "lone-high", "lone-low"],
)
def test_json_text_escapes_strings_as_javascript(text: str, expected: str) -> None:
    assert json_text(text) == expected


@pytest.mark.spec("JSON-4")
def test_json_text_has_no_whitespace_and_spells_literals() -> None:
    value = freeze({"a": [None, True, False, 1, "x", {}], "b": []})
    assert json_text(value) == '{"a":[null,true,false,1,"x",{}],"b":[]}'


# --- JSON-5: JSON equality ----------------------------------------------------------------------


@pytest.mark.spec("JSON-5")
@pytest.mark.parametrize(
    ("a", "b"),
    [(True, 1), (False, 0), (None, False), ("1", 1), ((), obj()), ((1,), 1), (obj(x=True), obj(x=1))],
    ids=["true-1", "false-0", "null-false", "string-number", "array-object", "array-scalar", "nested-true-1"],
)
def test_json_equality_never_confuses_types(a: JsonValue, b: JsonValue) -> None:
    assert not json_equals(a, b)
    assert not json_deep_equal(a, b)
    assert not json_deep_equal(b, a)


@pytest.mark.spec("JSON-5")
def test_json_deep_equal_is_not_python_equality() -> None:
    assert FrozenMap({"x": True}) == FrozenMap({"x": 1})  # the trap JSON-5 exists for
    assert not json_deep_equal(FrozenMap({"x": True}), FrozenMap({"x": 1}))


@pytest.mark.spec("JSON-5")
def test_json_deep_equal_ignores_key_order_and_json_equals_does_not() -> None:
    ab, ba = FrozenMap({"a": 1, "b": 2}), FrozenMap({"b": 2, "a": 1})
    assert json_deep_equal(ab, ba)
    assert not json_equals(ab, ba)


@pytest.mark.spec("JSON-5")
@given(json_values(), json_values())
@fewer_examples(2)
def test_json_equals_is_text_equality_and_implies_deep_equality(a: JsonValue, b: JsonValue) -> None:
    assert json_equals(a, b) == (json_text(a) == json_text(b)) == json_equals(b, a)
    assert json_deep_equal(a, b) == json_deep_equal(b, a)
    if json_equals(a, b):
        assert json_deep_equal(a, b)


@pytest.mark.spec("JSON-5")
@given(json_values(), st.randoms(use_true_random=False))
@fewer_examples(2)
def test_json_deep_equal_holds_for_any_key_reordering(value: JsonValue, rng: random.Random) -> None:
    def reorder(v: JsonValue) -> JsonValue:
        if isinstance(v, tuple):
            return tuple(reorder(item) for item in v)
        if isinstance(v, FrozenMap):
            keys = list(v)
            rng.shuffle(keys)
            return FrozenMap({k: reorder(v[k]) for k in keys})
        return v

    assert json_equals(value, value)
    assert json_deep_equal(value, reorder(value))


# --- JSON-6: immutable and detached -------------------------------------------------------------


@pytest.mark.spec("JSON-6")
def test_frozen_map_rejects_every_mutation() -> None:
    frozen = freeze({"a": [1, {"b": 2}]})
    assert isinstance(frozen, FrozenMap)
    with pytest.raises(AttributeError):
        frozen._items = {}
    with pytest.raises(AttributeError):
        setattr(frozen, "extra", 1)
    with pytest.raises(TypeError):
        frozen["a"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        del frozen["a"]  # type: ignore[attr-defined]
    assert isinstance(frozen["a"], tuple)  # arrays freeze to tuples: no append, no item assignment
    assert json_text(frozen) == '{"a":[1,{"b":2}]}'


@pytest.mark.spec("JSON-6")
def test_event_is_frozen() -> None:
    event = Event("user/message", 0, 0, obj(content=()), "append")
    with pytest.raises(FrozenInstanceError):
        event.seq = 1  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        event.data = obj()  # type: ignore[misc]


@pytest.mark.spec("JSON-6")
@given(plain_json_values())
def test_freeze_detaches_from_the_source(value: object) -> None:
    frozen = freeze(value)
    text = json_text(frozen)
    _scribble(value)
    assert json_text(frozen) == text


def _scribble(value: object) -> None:
    """Mutate every list and dict inside ``value`` in place."""
    if isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")
    elif isinstance(value, dict):
        for item in value.values():
            _scribble(item)
        value["scribbled"] = True


@pytest.mark.spec("JSON-6")
def test_frozen_map_detaches_from_the_dict_it_was_built_from() -> None:
    source: dict[str, JsonValue] = {"a": 1}
    frozen = FrozenMap(source)
    source["a"] = 2
    source["b"] = 3
    assert dict(frozen) == {"a": 1}


@pytest.mark.spec("JSON-6")
@given(json_values())
@fewer_examples(2)
def test_frozen_values_are_hashable_and_thaw_round_trips(value: JsonValue) -> None:
    assert hash(value) == hash(freeze(thaw(value)))
    assert json_text(freeze(thaw(value))) == json_text(value)


@pytest.mark.spec("JSON-1", "JSON-4")
@given(st.from_type(FrozenMap))
@fewer_examples(4)
def test_registered_frozen_map_strategy_draws_frozen_objects_in_javascript_key_order(value: FrozenMap) -> None:
    assert is_json_value(value)
    indices = [k for k in value if _is_index(k)]
    assert list(value)[: len(indices)] == sorted(indices, key=int)


@pytest.mark.spec("JSON-1", "JSON-3")
def test_is_json_value_rejects_unfrozen_and_unnormalized_values() -> None:
    assert not is_json_value([1])
    assert not is_json_value({"a": 1})
    assert not is_json_value(1.0)  # integral doubles are held as ints
    assert not is_json_value(math.nan)
    assert not is_json_value(-0.0)
    assert not is_json_value(MAX_SAFE_INTEGER * 4)  # beyond 2^53 a number is a double
    assert is_json_value(float(MAX_SAFE_INTEGER * 4))


@pytest.mark.spec("JSON-7", "D-10")
def test_invalid_value_nested_deeper_than_the_model_limit() -> None:
    from prefix_model.core.json_values import MAX_DEPTH

    deep: object = 0
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(RejectedError) as raised:
        freeze(deep)
    assert raised.value.rejection.rule == "JSON-7"
    shallow: object = 0
    for _ in range(MAX_DEPTH - 1):
        shallow = {"k": shallow}
    assert json_text(freeze(shallow)).count("{") == MAX_DEPTH - 1


# --- what the mutation run found untested (proofs/README.md, core/json_values.py) ---


def test_a_frozen_map_prints_copies_pickles_and_drops_keys_as_itself() -> None:
    import copy
    import pickle

    value = FrozenMap({"b": 1, "a": (2, 3)})
    assert repr(value) == "FrozenMap({'b': 1, 'a': (2, 3)})"  # the explorer's fingerprints are repr
    for twin in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert type(twin) is FrozenMap and list(twin.items()) == list(value.items())
    assert list(value.without("b").items()) == [("a", (2, 3))] and list(value.without("c").items()) == list(value.items())


def test_is_json_value_is_false_for_a_key_that_is_no_string_and_says_so_as_a_bool() -> None:
    forged = object.__new__(FrozenMap)  # the constructor orders keys as strings: only a forged map holds another key
    object.__setattr__(forged, "_items", {1: "a"})
    object.__setattr__(forged, "_hash", None)
    assert is_json_value(forged) is False
    assert is_json_value([1]) is False and is_json_value(object()) is False


def test_tuples_count_towards_the_depth_limit_and_freeze_to_tuples() -> None:
    deep: object = 1
    for _ in range(300):
        deep = (deep,)
    rejection = check_lossless(deep)
    assert rejection is not None and rejection.rule == "JSON-7"
    assert check_lossless((1, ("a", None))) is None and freeze((1, [2])) == (1, (2,))


def test_an_already_frozen_value_is_kept_and_anything_unfrozen_inside_is_rebuilt() -> None:
    frozen = freeze({"a": [1, {"b": "c"}], "d": 0.5})
    assert freeze(frozen) is frozen  # the loop re-freezes its messages at every append: kept, not rebuilt
    items = freeze([1, "x"])
    assert freeze(items) is items
    mixed = FrozenMap({"a": [1]})  # type: ignore[dict-item]  # a map built by hand around a list: not frozen
    again = freeze(mixed)
    assert again is not mixed and again == FrozenMap({"a": (1,)}) and is_json_value(again)
    assert freeze_object({"a": [1]}) == FrozenMap({"a": (1,)})


def test_deep_equality_tells_lengths_shapes_and_booleans_apart() -> None:
    assert not json_deep_equal((1,), (1, 2)) and not json_deep_equal((1, 2), (1,))
    assert not json_deep_equal((1,), FrozenMap({"0": 1})) and not json_deep_equal(FrozenMap({"0": 1}), (1,))
    assert json_deep_equal((), ()) is True and json_deep_equal((1,), 1) is False and json_deep_equal("a", ("a",)) is False
    assert json_deep_equal(True, 1) is False and json_deep_equal(1, True) is False and json_deep_equal(0.5, 0.5)
    assert not json_deep_equal(0.5, 0.25) and not json_deep_equal(1, 2) and json_deep_equal(2, 2)


@pytest.mark.spec("JSON-7", "JSON-3")
def test_the_depth_bound_is_the_specs_256_and_an_integral_double_past_2_53_is_no_int() -> None:
    def nested(levels: int) -> object:
        value: object = 0
        for _ in range(levels):
            value = [value]
        return value

    assert check_lossless(nested(256)) is None  # spec JSON-7: deeper than 256 levels is rejected, 256 is not
    rejection = check_lossless(nested(257))
    assert rejection is not None and rejection.rule == "JSON-7"
    assert is_json_value(float(2**53)) is False and is_json_value(2**53) is True  # 2^53 is exact: held as an int
