"""The published vectors, generated once per test process for every module that reads them.

``test_vectors`` and ``test_conform`` read the same files; both sit in the xdist group
``VECTORS_GROUP`` (``make test`` runs ``--dist loadgroup``), so one process generates them once.
A module-scoped fixture ran once per module, and again whenever the worker ran another module's
test in between (four generations of about 18 s each in one run).
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
