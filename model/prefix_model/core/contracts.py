"""The one switch for icontract checking, the decorators that obey it, and the rejection value every rule returns.

Contracts are on by default, in every test. The installed ``prefix-model`` command turns them off
(``edge/launch.py``) unless the environment sets the switch; any process can, with
``PREFIX_MODEL_CONTRACTS=0`` in the environment before import — never with ``python -O``, which
also strips the asserts of helper modules (toolchain.md §3).

Every contract of the model is written ``@require(...)`` / ``@ensure(...)`` from here:
``icontract.require`` and ``icontract.ensure`` themselves when the switch is on (the same
contracts, checked, and seen by CrossHair), the function unchanged when it is off — what
``icontract`` returns for ``enabled=False`` too, but without importing ``icontract`` (with
``asttokens``, ``uuid``, ``platform``), which would otherwise be part of every start-up of the
installed command (``bench/startup_bench.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["ENABLED", "require", "ensure", "Rejection", "RejectedError"]

ENABLED: bool = __debug__ and os.environ.get("PREFIX_MODEL_CONTRACTS", "1") != "0"

_F = TypeVar("_F", bound=Callable[..., Any])


def _unchanged(function: _F) -> _F:
    return function


def require(condition: Callable[..., Any], description: str | None = None, *, enabled: bool = ENABLED) -> Callable[[_F], _F]:
    """Return ``icontract.require(condition, description)`` when ``enabled``, else a decorator that changes nothing."""
    if not enabled:
        return _unchanged
    import icontract

    return icontract.require(condition, description, enabled=True)


def ensure(condition: Callable[..., Any], description: str | None = None, *, enabled: bool = ENABLED) -> Callable[[_F], _F]:
    """Return ``icontract.ensure(condition, description)`` when ``enabled``, else a decorator that changes nothing."""
    if not enabled:
        return _unchanged
    import icontract

    return icontract.ensure(condition, description, enabled=True)


@dataclass(frozen=True, slots=True)
class Rejection:
    """A requirement that an input violates: the ID of the rule and a short reason."""

    rule: str
    reason: str
    seq: int | None = None  # the offending event's seq, when a whole log was checked

    def __str__(self) -> str:
        where = "" if self.seq is None else f"seq {self.seq}: "
        return f"{self.rule}: {where}{self.reason}"


class RejectedError(ValueError):
    """Raised where the harness throws: an append, seed or fork that a rule rejects."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(str(rejection))
        self.rejection = rejection
