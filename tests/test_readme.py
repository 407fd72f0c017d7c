"""The README's library section runs as written (doctest): what a newcomer pastes works."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.mark.spec("REQ-1", "DER-1", "CHK-1")
def test_the_readme_library_section_runs_as_written() -> None:
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0, result
