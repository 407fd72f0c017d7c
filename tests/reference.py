"""Where the shared reference material (the real harness example log) is, when it is there.

CI clones the project with ``shared/`` beside it; a developer checkout sits at ``/work/main``
with ``/work/shared``. ``PREFIX_MODEL_SHARED`` overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _shared() -> Path:
    candidates = [os.environ.get("PREFIX_MODEL_SHARED", ""), str(ROOT.parent / "shared"), "/work/shared"]
    return next((Path(c) for c in candidates if c and (Path(c) / "reference").is_dir()), ROOT.parent / "shared")


REAL_LOG_DIR = _shared() / "reference" / "example-real-log"
