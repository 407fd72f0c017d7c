"""The contract switch and the rejection value (``core/contracts.py``).

The switch is read once, at import, so each setting is judged in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import icontract
import pytest
from prefix_model.core.contracts import RejectedError, Rejection, ensure, require

PROBE = "from prefix_model.core.contracts import ENABLED; print(ENABLED)"


def switch_in_fresh_process(setting: str | None, *flags: str) -> str:
    """Return ``ENABLED`` as a new interpreter sees it with PREFIX_MODEL_CONTRACTS set to ``setting`` (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFIX_MODEL_CONTRACTS"}
    if setting is not None:
        env["PREFIX_MODEL_CONTRACTS"] = setting
    done = subprocess.run([sys.executable, *flags, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("setting", "flags", "expected"),
    [
        (None, (), "True"),  # on by default
        ("1", (), "True"),
        ("yes", (), "True"),  # only "0" turns them off
        ("0", (), "False"),
        (None, ("-O",), "False"),  # python -O strips asserts, so the switch is off whatever the environment says
    ],
)
def test_the_switch_is_on_unless_the_environment_says_0(setting: str | None, flags: tuple[str, ...], expected: str) -> None:
    assert switch_in_fresh_process(setting, *flags) == expected


def doubled(x: int) -> int:
    return 2 * x


@pytest.mark.parametrize("decorator", [require, ensure])
def test_a_disabled_contract_returns_the_function_itself(decorator: Callable[..., Callable[[Callable[[int], int]], Callable[[int], int]]]) -> None:
    assert decorator(lambda: False, "never holds", enabled=False)(doubled) is doubled


@require(lambda x: x > 0, "a positive argument", enabled=True)
def doubled_if_positive(x: int) -> int:
    return 2 * x


@ensure(lambda result: result < 10, "a small result", enabled=True)
def doubled_if_small(x: int) -> int:
    return 2 * x


def test_an_enabled_precondition_is_icontracts() -> None:
    assert doubled_if_positive(3) == 6
    with pytest.raises(icontract.ViolationError, match="a positive argument"):
        doubled_if_positive(0)


def test_an_enabled_postcondition_is_icontracts() -> None:
    assert doubled_if_small(4) == 8
    with pytest.raises(icontract.ViolationError, match="a small result"):
        doubled_if_small(5)


def test_a_rejection_reads_as_its_rule_then_its_seq_when_it_has_one() -> None:
    assert str(Rejection("LOG-1", "seq out of order")) == "LOG-1: seq out of order"
    assert str(Rejection("LOG-1", "seq out of order", seq=0)) == "LOG-1: seq 0: seq out of order"
    rejection = Rejection("FRK-2", "no such session", seq=7)
    error = RejectedError(rejection)
    assert isinstance(error, ValueError) and error.rejection is rejection
    assert str(error) == "FRK-2: seq 7: no such session"
