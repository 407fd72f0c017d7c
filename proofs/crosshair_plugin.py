"""CrossHair plugin for the prefix model: symbolic ``FrozenMap`` values, and copying them.

Loaded with ``crosshair check --extra_plugin proofs/crosshair_plugin.py`` (``proofs/run.py`` does).
CrossHair ``exec``s this file inside one of its own functions, so a name bound at the top level
here is NOT visible from inside a function defined here: function bodies import what they need,
or take it as a default argument bound when the ``def`` runs (toolchain.md, Do/don't 6).

1. ``register_type(FrozenMap, ...)``. The shape is shallow and non-recursive,
   ``dict[str, None | bool | int | str]``: at run time ``JsonValue`` is plain ``object`` (a
   recursive alias crashes CrossHair), so deeper JSON only appears through CrossHair's own
   ``object`` factory. The symbolic dict is NOT copied: ``FrozenMap.__init__`` runs ``dict(items)``
   and re-orders the keys, which realizes every key and hides key-dependent bugs (toolchain.md
   §2). The instance is made with ``object.__new__`` and its two slots are set directly. The cost:
   the keys of a symbolic FrozenMap need not be in JavaScript property order (array-index keys
   first), an order ``FrozenMap.__init__`` would establish.

2. ``copyreg.pickle(FrozenMap, ...)``. ``copy.copy``, ``copy.deepcopy`` and ``pickle`` of a
   FrozenMap raise ``AttributeError: FrozenMap is immutable`` (the default slot-state restore
   calls the forbidding ``__setattr__``). CrossHair deep-copies every argument to print a
   counterexample, so without this a module with a failing condition over a FrozenMap crashes
   instead of reporting it. The copy recipe rebuilds around a deep copy of ``_items`` and keeps
   the key order. This registration lives in the CrossHair process only; the model is untouched.
"""

from __future__ import annotations

import copyreg
from collections.abc import Callable

from crosshair.core import SymbolicFactory, register_type

from prefix_model.json_values import FrozenMap


def _symbolic_frozen_map(factory: SymbolicFactory) -> FrozenMap:
    """Return a FrozenMap wrapped around a symbolic ``dict[str, None | bool | int | str]``."""
    from typing import Union

    from prefix_model.json_values import FrozenMap

    items = factory(dict[str, Union[None, bool, int, str]], "_items")
    frozen = object.__new__(FrozenMap)
    object.__setattr__(frozen, "_items", items)
    object.__setattr__(frozen, "_hash", None)
    return frozen


def _rebuild_frozen_map(items: dict[str, object]) -> FrozenMap:
    """Return a FrozenMap around ``items`` (already a copy), bypassing the immutable ``__setattr__``."""
    from prefix_model.json_values import FrozenMap

    frozen = object.__new__(FrozenMap)
    object.__setattr__(frozen, "_items", items)
    object.__setattr__(frozen, "_hash", None)
    return frozen


def _reduce_frozen_map(
    frozen: FrozenMap,
    rebuild: Callable[[dict[str, object]], FrozenMap] = _rebuild_frozen_map,
) -> tuple[Callable[[dict[str, object]], FrozenMap], tuple[dict[str, object]]]:
    """Return the copy recipe of a FrozenMap: ``rebuild`` over (a deep copy of) its dict."""
    return rebuild, (frozen._items,)


register_type(FrozenMap, _symbolic_frozen_map)
copyreg.pickle(FrozenMap, _reduce_frozen_map)
