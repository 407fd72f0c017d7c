"""Planted bug: ``build_request`` puts the boundary derivation BEFORE the header's messagePrefix.

Core kernel: ``requests.build_request``; its ``boundary`` is a tuple of symbolic FrozenMap
messages from the plugin. Expected refutation: REQ-2 (prefix, then boundary).
"""

from __future__ import annotations

from prefix_model.core.derive import Message
from prefix_model.core.headers import EpochHeader
from prefix_model.core.requests import Request
from prefix_model.core.requests import build_request as core_build_request

from proofs.bugs_detected import under_contracts_of

CAUGHT_BY = "REQ-2"


@under_contracts_of(core_build_request)
def build_request(header: EpochHeader, boundary: tuple[Message, ...], session_id: str | None = None) -> Request:
    """BUG: ``boundary + prefix`` instead of ``prefix + boundary``."""
    return Request(header, boundary + (header.message_prefix or ()), session_id)
