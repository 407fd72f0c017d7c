"""Planted bugs: each module re-implements ONE core kernel wrongly under the core's own contracts.

``proofs/run.py`` runs CrossHair on every module listed in its ``BUG_MODULES`` and passes only
when each one is refuted by the contract ID the module names in ``CAUGHT_BY``. This shows the
proof run is able to fail: a clean core result means something only if these are caught.

``under_contracts_of(core_fn)`` puts the very contract objects of ``core_fn`` (its conditions,
descriptions and order) on the variant. Nothing is copied, so the variant cannot drift from the
core's contract; if the core function loses its contracts (e.g. ``PREFIX_MODEL_CONTRACTS=0``) or
its signature changes, importing the bug module fails loudly.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import icontract
from icontract._checkers import find_checker

__all__ = ["under_contracts_of", "broken_twin"]

F = TypeVar("F", bound=Callable[..., Any])


def under_contracts_of(core: Callable[..., Any]) -> Callable[[F], F]:
    """Return a decorator giving a variant exactly the icontract preconditions and postconditions of ``core``."""
    checker = find_checker(core)
    if checker is None:
        raise RuntimeError(f"{core.__qualname__} carries no icontract contracts (PREFIX_MODEL_CONTRACTS=0?)")
    groups: list[list[icontract._types.Contract]] = getattr(checker, "__preconditions__")
    posts: list[icontract._types.Contract] = getattr(checker, "__postconditions__")
    if len(groups) > 1:
        raise RuntimeError(f"{core.__qualname__}: inherited precondition groups are not supported")
    pres = groups[0] if groups else []

    def decorate(variant: F) -> F:
        if list(inspect.signature(variant).parameters) != list(inspect.signature(core).parameters):
            raise RuntimeError(f"{variant.__qualname__} must take the parameters of {core.__qualname__}")
        wrapped: F = variant
        # icontract appends each decorator's contract, so applying in list order keeps the order.
        for contract in pres:
            wrapped = icontract.require(contract.condition, contract.description, error=contract.error)(wrapped)
        for contract in posts:
            wrapped = icontract.ensure(contract.condition, contract.description, error=contract.error)(wrapped)
        new = find_checker(wrapped)
        assert new is not None
        assert [c.condition for g in getattr(new, "__preconditions__") for c in g] == [c.condition for c in pres]
        assert [c.condition for c in getattr(new, "__postconditions__")] == [c.condition for c in posts]
        return wrapped

    return decorate


def broken_twin(core: object, variant: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``variant`` under the contracts of ``core`` (a function, a method, or a property's getter).

    The tests use it to show a contract able to fail: a wrong twin of the function must raise
    ``icontract.ViolationError`` naming the contract's requirement.
    """
    function = core.fget if isinstance(core, property) else core
    if not callable(function):
        raise TypeError(f"{core!r} is not a function")
    twin: Callable[..., Any] = under_contracts_of(function)(variant)
    return twin
