"""Planted bug: ``canonical_header`` keeps an empty ``tools`` array (the B2 bug of toolchain.md §2).

Core kernel: ``headers.canonical_header``. Expected refutation: HDR-3 (no empty optional field).
"""

from __future__ import annotations

from prefix_model.core.headers import EpochHeader
from prefix_model.core.headers import canonical_header as core_canonical_header

from proofs.bugs_detected import under_contracts_of

CAUGHT_BY = "HDR-3"


@under_contracts_of(core_canonical_header)
def canonical_header(header: EpochHeader) -> EpochHeader:
    """BUG: ``tools`` is passed through unchanged, so ``tools=()`` stays present-but-empty."""
    return EpochHeader(
        header.config,
        header.system if header.system else None,
        header.tools,
        header.message_prefix if header.message_prefix else None,
    )
