"""Planted bug: ``call_config_equals`` treats ``stop: []`` as an absent ``stop``.

Core kernel: ``headers.call_config_equals``. Expected refutation: HDR-5 (equal configs have the
same stop list; absent is equal only to absent).
"""

from __future__ import annotations

from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.headers import call_config_equals as core_call_config_equals

from proofs.bugs_detected import under_contracts_of

CAUGHT_BY = "HDR-5"


@under_contracts_of(core_call_config_equals)
def call_config_equals(a: LlmCallConfig, b: LlmCallConfig) -> bool:
    """BUG: ``stop or None`` folds an empty stop list into absence before comparing."""
    if (a.provider, a.model, a.reasoning_effort) != (b.provider, b.model, b.reasoning_effort):
        return False
    if a.temperature != b.temperature or a.max_tokens != b.max_tokens:
        return False
    return (a.stop or None) == (b.stop or None)
