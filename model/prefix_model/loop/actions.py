"""Spec §10.1 — the action alphabet: every input that moves the loop, nondeterminism included.

A run is a tuple of actions; ``loop.apply`` replays it exactly. Listener behaviour is fixed by
each listener's script at registration, model replies and tool outputs are fields of ``Reply``
and ``RunTools``, and where a cancellation lands is the action that carries it (``Cancel`` in a
window, e.g. ``Cancel`` in the ``COMPOSE`` phase lands while the waterfall is awaited). Every
action prints as the Python that builds it, so a shrunk counterexample pastes into a test.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefix_model.core.headers import LlmCallConfig
from prefix_model.core.json_values import FrozenMap, JsonValue
from prefix_model.loop.compaction import CompactPolicy
from prefix_model.loop.prompt import PromptContext, SendPrompt
from prefix_model.loop.world import AgentOptions, Listener

__all__ = [
    "Create",
    "ForkDrive",
    "Resume",
    "Register",
    "MountCompaction",
    "MutateContribution",
    "PromptContext",
    "PlainReplace",
    "SendPrompt",
    "BeginStep",
    "Compose",
    "PreStep",
    "Dispatch",
    "Reply",
    "RunTools",
    "PostStep",
    "Inject",
    "Steer",
    "Cancel",
    "Dispose",
    "SetSystem",
    "SetTools",
    "Action",
]

# --- Instances (facts §1.5-§1.7, §4.1) ---


@dataclass(frozen=True, slots=True)
class Create:
    """Create an agent over a fresh session: a new instance (numbered in creation order from 0, across ``Create``,
    ``ForkDrive``, ``Resume``)."""

    agent: str
    session_id: str
    options: AgentOptions = AgentOptions()
    system: str = ""
    tools: tuple[JsonValue, ...] = ()


@dataclass(frozen=True, slots=True)
class ForkDrive:
    """Fork ``sourceId`` at seq ``boundary`` (``null``: its last event) into ``childId``, drive the child with a new
    instance.

    The boundary is a ``turn/end`` (or the log's end).
    """

    source_id: str
    child_id: str
    boundary: int | None
    agent: str
    options: AgentOptions = AgentOptions()
    system: str = ""
    tools: tuple[JsonValue, ...] = ()


@dataclass(frozen=True, slots=True)
class Resume:
    """Restart: the session's old instances are gone, a new one drives its log."""

    session_id: str
    agent: str
    options: AgentOptions = AgentOptions()
    system: str = ""
    tools: tuple[JsonValue, ...] = ()


@dataclass(frozen=True, slots=True)
class Register:
    """Register an ``agent/session-prefix`` listener after the others; its k-th call does ``script[min(k, len − 1)]``."""

    listener: Listener


@dataclass(frozen=True, slots=True)
class MountCompaction:
    """Load the basic compaction service (SPEC §10.4) with this configuration and the routed model's context window
    (``null``: none, so no pressure); a compaction frames with the policy's ``preamble`` and asks with its
    ``instruction``.

    It replaces the service loaded before.
    """

    policy: CompactPolicy


# --- A turn and its steps (facts §4.3-§4.5), one action per loop segment ---


@dataclass(frozen=True, slots=True)
class PlainReplace:
    """A pre-step listener's own replacement: one ``user/message`` over surface positions [i, j], no ``compact/*``."""

    start: int
    end: int
    text: str
    source: FrozenMap = FrozenMap({"kind": "plugin", "plugin": "manual"})


@dataclass(frozen=True, slots=True)
class BeginStep:
    """Next step: drain steering, assemble system prompt and tools."""

    instance: int


@dataclass(frozen=True, slots=True)
class Compose:
    """Run the session-prefix waterfall (the first step of a turn with no cached prefix).

    A ``Cancel``/``Dispose`` before it lands does so while it is awaited.
    """

    instance: int


@dataclass(frozen=True, slots=True)
class PreStep:
    """``agent/pre-step`` — a listener's own replacement (``replace``), then its ``compactRegion`` call (``compact``) —
    the boundary snapshot, ``step/start``; a compaction the service refuses ends the turn in error.

    ``compact`` is surface positions [i, j]; ``summaries`` are the summarizer's replies.
    """

    instance: int
    compact: tuple[int, int] | None = None
    summaries: tuple[str, ...] = ()
    replace: PlainReplace | None = None


@dataclass(frozen=True, slots=True)
class Dispatch:
    """``agent/request`` (optionally replacing the config), header record, the request.

    Model preparation comes between the hook and the record.
    """

    instance: int
    config: LlmCallConfig | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """The model's reply: text and tool calls, or the adapter's own chunks (``stream``, logged verbatim; ``more``: the
    stream stays open for a later ``Reply``), or a failure — the adapter error's code and message — (then a retry or
    not).

    A failure is the adapter's error: its code (``failure``) and its message (``failure_message``,
    which the harness renders with the error's cause chain; LLM/types.ts:11-15).
    """

    instance: int
    text: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()
    failure: str | None = None
    failure_message: str = "request failed"
    # The adapter's chunks, logged verbatim and assembled into the message (spec §10.3); when given,
    # ``text``, ``tool_calls`` and ``max_tokens`` are not read. With a failure they are the chunks
    # streamed before the adapter threw.
    stream: tuple[FrozenMap, ...] | None = None
    more: bool = False  # the stream stays open after these chunks (a later Reply brings the rest)
    retry: bool = False
    max_tokens: bool = False


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run the reply's tool batch; ``outputs[k]`` is the result text of the k-th call whose body runs."""

    instance: int
    outputs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PostStep:
    """``agent/post-step`` — the service's pressure listener, then a listener's ``compactRegion`` call (``compact``) —
    ``step/end``, continuation.

    ``summaries`` are the summarizer's replies in the order it is called.
    """

    instance: int
    compact: tuple[int, int] | None = None
    summaries: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MutateContribution:
    """The listener changes the message objects it contributed (and returns them on later calls)."""

    listener: str
    messages: tuple[FrozenMap, ...]


# --- Inputs that arrive in any window (facts §3.6, §3.8, §4.7) ---


@dataclass(frozen=True, slots=True)
class Inject:
    """``agent.inject(text, {source, meta})``: now, after the running tool batch, or as a one-shot turn when idle;
    ``source`` null is the default ``{kind: plugin, plugin: ""}``, ``meta`` null is none.

    ``source`` is the producer's message source; ``meta``, when given, joins the message (L/agent.ts:287-307).
    """

    instance: int
    text: str
    source: FrozenMap | None = None
    meta: FrozenMap | None = None


@dataclass(frozen=True, slots=True)
class Steer:
    """``agent.steer(text)`` during a turn.

    During a turn, a steering item for the next checkpoint; idle, a prompt.

    Steering a turn ends without draining (an error, a cancel) becomes a queued prompt (L/loop.ts:266-278).
    """

    instance: int
    text: str


@dataclass(frozen=True, slots=True)
class Cancel:
    """``agent.cancel()`` during a turn: the next checkpoint ends it ``aborted``.

    It drops waiting prompts and steering.
    """

    instance: int


@dataclass(frozen=True, slots=True)
class Dispose:
    """Dispose the agent: an open turn ends ``disposed`` at its next checkpoint.

    The instance is gone.
    """

    instance: int


@dataclass(frozen=True, slots=True)
class SetSystem:
    """What system-prompt assembly renders from the next step on."""

    instance: int
    text: str


@dataclass(frozen=True, slots=True)
class SetTools:
    """The tool set assembly returns from the next step on."""

    instance: int
    tools: tuple[JsonValue, ...]


Action = (
    Create | ForkDrive | Resume | Register | MountCompaction | MutateContribution | SendPrompt | BeginStep | Compose | PreStep | Dispatch | Reply
    | RunTools | PostStep | Inject | Steer | Cancel | Dispose | SetSystem | SetTools
)  # fmt: skip
