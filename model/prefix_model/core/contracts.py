"""The one switch for icontract checking, and the rejection value every rule returns.

Contracts are on by default, in every test. The installed ``prefix-model`` command turns them off
(``edge/launch.py``) unless the environment sets the switch; any process can, with
``PREFIX_MODEL_CONTRACTS=0`` in the environment before import — never with ``python -O``, which
also strips the asserts of helper modules (toolchain.md §3).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["ENABLED", "Rejection", "RejectedError"]

ENABLED: bool = __debug__ and os.environ.get("PREFIX_MODEL_CONTRACTS", "1") != "0"


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
