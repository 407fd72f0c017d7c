"""Spec §10.1 — a prompt as sent to an agent, and what the prompt-submit listener answers for it.

A prompt sent while a turn runs waits in its instance's inbox (``world.Instance.queued``) as the
action that sent it, so the state holds exactly what the action carried. It lives apart from the
rest of the alphabet (``actions``) because the state refers to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.json_values import FrozenMap

__all__ = ["PromptContext", "SendPrompt", "BLOCKED"]

BLOCKED = "blocked"  # the reason of a block that gives none of its own (the model's default answer)


@dataclass(frozen=True, slots=True)
class PromptContext:
    """One of a prompt-submit listener's ``additionalContexts``: its text, producer source and meta (A/types.ts:111)."""

    text: str
    source: FrozenMap = FrozenMap({"kind": "plugin", "plugin": "context"})
    meta: FrozenMap | None = None


@dataclass(frozen=True, slots=True)
class SendPrompt:
    """A prompt to an idle instance (``blocked``: the prompt-submit hook blocks it, giving ``blockReason`` — absent:
    ``"blocked"`` — as its reason; ``contexts``/``promptPrefix``: its ``additionalContexts`` placed separate /
    prompt-prefix, each with its producer's source and meta).

    It is ``agent.followup(text)``: idle, it opens a turn (``turn/start``, ``agent/prompt-submit``, the user message);
    during a turn it waits in the inbox until the turn ends (L/agent.ts:234-262).

    ``blocked`` (with its ``block_reason``) and the contexts are the ``agent/prompt-submit`` listener's
    answer when the prompt's turn opens.
    """

    instance: int
    text: str
    blocked: bool = False
    contexts: tuple[PromptContext, ...] = ()  # additionalContexts placed 'separate': injected after the prompt
    prompt_prefix: tuple[PromptContext, ...] = ()  # additionalContexts placed 'prompt-prefix': baked into it
    block_reason: str = BLOCKED  # the block decision's own reason, logged as given (L/loop.ts:376-378)
