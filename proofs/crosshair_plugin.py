"""CrossHair plugin for the prefix model: symbolic JSON values, and copying FrozenMaps.

Loaded with ``crosshair check <target> --extra_plugin proofs/crosshair_plugin.py`` (``proofs/run.py``
does). CrossHair ``exec``s this file inside one of its own functions, so a name bound at the top
level here is NOT visible inside a function defined here: function bodies import what they need,
or take it as a default argument bound when the ``def`` runs (toolchain.md, Do/don't 6). Every
change below lives in the CrossHair process only; no file of the model is touched.

1. ``register_type(FrozenMap, ...)``: a FrozenMap around a symbolic ``dict[str, None | bool |
   int | str]`` (shallow, non-recursive). The dict is NOT copied: ``FrozenMap.__init__`` runs
   ``dict(items)`` and re-orders the keys, which realizes every key and hides key-dependent bugs
   (toolchain.md §2). The instance is made with ``object.__new__`` and its two slots are set
   directly. Cost: the keys of a symbolic FrozenMap need not be in JavaScript property order
   (array-index keys first), which ``FrozenMap.__init__`` would establish.

2. ``JsonValue``/``JsonArray`` rebound to shallow unions. At run time the model makes them plain
   ``object``/``tuple`` (the recursive alias crashes CrossHair), and CrossHair's ``object``
   factory then invents values of arbitrary classes (an ``IntEnum`` member reached ``json_text``),
   which are not JSON values even by the static type. Before any module that imports the names
   is loaded, they are rebound in ``prefix_model.core.json_values`` to ``None | bool | int | float |
   str | tuple[scalar, ...] | FrozenMap`` with scalars only inside: the static alias cut at depth
   one. If such a module is already imported, the plugin raises instead of silently not applying.

3. ``object`` as a plain Python value. The parameters annotated ``object`` (``check_lossless``,
   ``freeze``, ``Log.append``'s ``data``) take what ``json.loads`` returns, or a frozen value.
   CrossHair's own ``object`` factory (replaced here; ``register_type`` refuses a duplicate) picked
   arbitrary classes: ``check_lossless(selectors._SelectorMapping(''))`` failed inside CrossHair's
   lazy string. The replacement yields ``None | bool | int | float | str | list[scalar] |
   tuple[scalar, ...] | dict[str, scalar] | dict[int, scalar] | FrozenMap`` (``dict[int, ...]``
   reaches the non-string-key rule).

4. ``copyreg.pickle(FrozenMap, ...)``. ``copy.copy``, ``copy.deepcopy`` and ``pickle`` of a
   FrozenMap raise ``AttributeError: FrozenMap is immutable`` (the default slot-state restore goes
   through the forbidding ``__setattr__``). CrossHair deep-copies the arguments to print a
   counterexample, so without this a module whose contract fails on a FrozenMap CRASHES instead of
   reporting it (seen on ``derive``). The recipe rebuilds around a deep copy of ``_items``.
"""

from __future__ import annotations

import copyreg
import sys
from collections.abc import Callable
from typing import Union

import prefix_model.core.json_values
from crosshair.core import _SIMPLE_PROXIES, SymbolicFactory, register_type
from prefix_model.core.json_values import FrozenMap, JsonValue


def _symbolic_frozen_map(factory: SymbolicFactory) -> FrozenMap:
    """Return a FrozenMap wrapped around a symbolic ``dict[str, None | bool | int | str]``."""
    from typing import Union

    from prefix_model.core.json_values import FrozenMap

    items = factory(dict[str, Union[None, bool, int, str]], "_items")
    frozen = object.__new__(FrozenMap)
    object.__setattr__(frozen, "_items", items)
    object.__setattr__(frozen, "_hash", None)
    return frozen


def _plain_value(factory: SymbolicFactory) -> object:
    """Return a symbolic plain Python value of JSON shape (one level deep), for ``object`` parameters."""
    from typing import Union

    from prefix_model.core.json_values import FrozenMap

    scalar = Union[None, bool, int, float, str]
    shape = Union[
        None, bool, int, float, str,
        list[scalar], tuple[scalar, ...], dict[str, scalar], dict[int, scalar], FrozenMap,
    ]  # fmt: skip
    return factory(shape, "_plain")


def _rebuild_frozen_map(items: dict[str, JsonValue]) -> FrozenMap:
    """Return a FrozenMap around ``items`` (already a copy), bypassing the immutable ``__setattr__``."""
    from prefix_model.core.json_values import FrozenMap

    frozen = object.__new__(FrozenMap)
    object.__setattr__(frozen, "_items", items)
    object.__setattr__(frozen, "_hash", None)
    return frozen


def _reduce_frozen_map(
    frozen: FrozenMap,
    rebuild: Callable[[dict[str, JsonValue]], FrozenMap] = _rebuild_frozen_map,
) -> tuple[Callable[[dict[str, JsonValue]], FrozenMap], tuple[dict[str, JsonValue]]]:
    """Return the copy recipe of a FrozenMap: ``rebuild`` over (a deep copy of) its dict."""
    return rebuild, (frozen._items,)


register_type(FrozenMap, _symbolic_frozen_map)
copyreg.pickle(FrozenMap, _reduce_frozen_map)
_SIMPLE_PROXIES[object] = _plain_value  # replaces CrossHair's own (register_type refuses a duplicate)

_ALREADY_BOUND = sorted(
    name
    for name in sys.modules
    if name.startswith("prefix_model.") and name not in ("prefix_model.core", "prefix_model.core.contracts", "prefix_model.core.json_values")
)
if _ALREADY_BOUND:
    raise RuntimeError(f"crosshair_plugin: load it before {', '.join(_ALREADY_BOUND)} (they bound JsonValue already)")
_JsonScalar = Union[None, bool, int, float, str]
setattr(prefix_model.core.json_values, "JsonArray", tuple[_JsonScalar, ...])
setattr(prefix_model.core.json_values, "JsonValue", Union[None, bool, int, float, str, tuple[_JsonScalar, ...], FrozenMap])
