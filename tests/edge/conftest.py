"""The published vectors, generated once per test process for the tests that read them.

``published`` is one generation in this process (contracts on), made the first time a test of the process asks for
it; ``generated`` writes the vectors twice at once (here, and in another interpreter with another hash seed) for the
tests that show the output byte-identical. Every test that reads ``generated`` joins the xdist group
``VECTORS_GROUP`` (``make test`` runs ``--dist loadgroup``), so one process pays for the pair once. Only those tests
are grouped, not their modules: when four modules were one group, it was about half of the suite run serially on one
worker at the end while the other idled; now xdist sends each of the rest wherever a worker is free.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from prefix_model.vectors.cases import catalogue
from prefix_model.edge.vectors.generate import generate

from tests.conftest import HANG

VECTORS_GROUP = "vectors-generated"


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the marks to name each test's group
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test that reads ``generated`` (directly or through another fixture) in ``VECTORS_GROUP``."""
    for item in items:
        if "generated" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(VECTORS_GROUP))


@pytest.fixture(scope="session")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published vectors, generated once in this process (contracts on). Read only."""
    folder = tmp_path_factory.mktemp("vectors-published")
    assert generate(folder) == 0
    return folder


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Generate the vectors twice at once: here, and in another interpreter with another hash seed and contracts off. Read only.

    The test of byte-identical output then also shows that the contracts change nothing that is written.
    """
    here, there = tmp_path_factory.mktemp("vectors-here"), tmp_path_factory.mktemp("vectors-there")
    env = os.environ | {"PYTHONHASHSEED": "4242", "PREFIX_MODEL_CONTRACTS": "0"}
    command = [sys.executable, "-m", "prefix_model.edge.vectors.generate", "--out", str(there)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    status = generate(here)
    out, err = process.communicate(timeout=HANG)
    assert status == 0 and process.returncode == 0, err
    assert out.count("\n") == 1 and out.startswith(f"prefix-model vectors: {len(catalogue())} cases (") and err == ""
    return here, there
