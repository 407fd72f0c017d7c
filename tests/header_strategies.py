"""Hypothesis strategies and a small log builder for spec §5 (headers), §6 (requests), §7 (fork).

The strategies draw from SMALL pools on purpose: two generated configs, headers or prefixes are
often equal, so both branches of ``header_equals`` and of the record rule are exercised. The pools
hold the traps of JSON equality: the same object with its keys inserted in another order, and
``true`` against ``1`` (JSON-5).

The builder appends harness-shaped events through ``Log.append`` and records headers through
``record_request_header`` only. ``drive`` plays a list of ``TurnPlan`` s in the loop's order
(harness facts §4.4 and Appendix A) and returns, beside the log, what each step SENT at dispatch
time: the header it recorded and ``messagePrefix ++ derive_messages`` of the log just before its
``step/start``. Tests compare that with what ``reconstruct_request`` reads back from the final log.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st
from prefix_model.core.derive import derive_messages
from prefix_model.core.headers import REASONS, EpochHeader, LlmCallConfig, canonical_header, header_to_json
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze_object
from prefix_model.core.log import EMPTY_LOG, Log
from prefix_model.core.request_log import record_request_header

__all__ = [
    "obj",
    "text",
    "PROVIDERS",
    "MODELS",
    "SYSTEMS",
    "MESSAGE_POOL",
    "TOOL_POOL",
    "TURN_END_REASONS",
    "configs",
    "prefixes",
    "tool_lists",
    "headers",
    "canonical_headers",
    "turn_start",
    "user_message",
    "inject",
    "steering",
    "step_start",
    "step_end",
    "chunk",
    "assistant_message",
    "tool_call",
    "tool_result",
    "turn_end",
    "plugin_event",
    "foreign_header",
    "header_count",
    "logs_with_headers",
    "StepPlan",
    "TurnPlan",
    "Sent",
    "Driven",
    "drive",
    "turn_plans",
]


obj = freeze_object  # the frozen JSON object of ``fields``, keys in the order given


def text(value: str) -> FrozenMap:
    """Return a text content block."""
    return obj({"type": "text", "text": value})


# --- Pools ---------------------------------------------------------------------------------

PROVIDERS = ("mock", "deepseek")
MODELS = ("mock", "chat", "reasoner")
EFFORTS: tuple[str | None, ...] = (None, "high", "max")
TEMPERATURES: tuple[int | float | None, ...] = (None, 0, 0.5, 1)
MAX_TOKENS: tuple[int | None, ...] = (None, 256, 4096)
STOPS: tuple[tuple[str, ...] | None, ...] = (None, (), ("END",), ("\n", "END"), ("END", "\n"))
SYSTEMS: tuple[str | None, ...] = (None, "", "You are A.", "You are B.")

_CATALOG = [{"type": "text", "text": "<system-reminder>tool catalog v1</system-reminder>"}]
MESSAGE_POOL: tuple[FrozenMap, ...] = (
    obj({"role": "user", "content": _CATALOG}),
    obj({"content": _CATALOG, "role": "user"}),  # the same message, keys inserted in another order
    obj({"role": "user", "content": [{"type": "text", "text": "<system-reminder>tool catalog v2</system-reminder>"}]}),
    obj({"role": "system", "content": [{"type": "text", "text": "rules", "cache": True}]}),
    obj({"role": "system", "content": [{"type": "text", "text": "rules", "cache": 1}]}),  # true is not 1
)

_ECHO_PARAMETERS = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOL_POOL: tuple[FrozenMap, ...] = (
    obj({"name": "echo", "description": "echo back", "parameters": _ECHO_PARAMETERS}),
    obj({"description": "echo back", "name": "echo", "parameters": _ECHO_PARAMETERS}),  # key order
    obj({"name": "add", "description": "add numbers", "parameters": {"type": "object"}}),
    obj({"name": "add", "description": "add numbers", "parameters": {"type": "object"}, "strict": True}),
    obj({"name": "add", "description": "add numbers", "parameters": {"type": "object"}, "strict": 1}),
)

TURN_END_REASONS: tuple[FrozenMap, ...] = (
    obj({"kind": "completed"}),
    obj({"kind": "aborted"}),
    obj({"kind": "error", "step": 1, "message": "boom"}),
    obj({"kind": "error", "step": 2, "message": "boom", "code": "E_PROVIDER"}),
    obj({"kind": "disposed"}),
    obj({"kind": "max-tokens"}),
    obj({"kind": "rejected", "reason": "blocked by policy"}),
    obj({"kind": "interrupted"}),
)


# --- Strategies ----------------------------------------------------------------------------


def configs() -> st.SearchStrategy[LlmCallConfig]:
    """Return call configs over small domains (stop ``()`` and absent stop both occur)."""
    return st.builds(
        LlmCallConfig,
        st.sampled_from(PROVIDERS),
        st.sampled_from(MODELS),
        st.sampled_from(EFFORTS),
        st.sampled_from(TEMPERATURES),
        st.sampled_from(MAX_TOKENS),
        st.sampled_from(STOPS),
    )


def _optional_list(pool: tuple[FrozenMap, ...]) -> st.SearchStrategy[tuple[JsonValue, ...] | None]:
    lists: st.SearchStrategy[tuple[JsonValue, ...]] = st.lists(st.sampled_from(pool), max_size=3).map(tuple)
    return st.none() | lists


def prefixes() -> st.SearchStrategy[tuple[JsonValue, ...] | None]:
    """Return session prefixes: absent, empty, or up to three messages from the pool."""
    return _optional_list(MESSAGE_POOL)


def tool_lists() -> st.SearchStrategy[tuple[JsonValue, ...] | None]:
    """Return tool lists: absent, empty, or up to three schemas from the pool (order varies)."""
    return _optional_list(TOOL_POOL)


def headers() -> st.SearchStrategy[EpochHeader]:
    """Return headers, canonical or not (empty system, tools and prefix occur)."""
    return st.builds(EpochHeader, configs(), st.sampled_from(SYSTEMS), tool_lists(), prefixes())


def canonical_headers() -> st.SearchStrategy[EpochHeader]:
    """Return canonical headers, as the loop builds them (harness facts §2.8 step 4)."""
    return headers().map(canonical_header)


# --- Log builder ---------------------------------------------------------------------------

USER = {"kind": "user"}
PLUGIN = {"kind": "plugin", "plugin": "workspace-context"}


def turn_start(log: Log, turn: int) -> Log:
    return log.append("turn/start", {"turn": turn, "trigger": {"kind": "message", "source": USER}})


def user_message(log: Log, words: str) -> Log:
    return log.append("user/message", {"content": [text(words)], "source": USER}, surface_op="append")


def inject(log: Log, words: str) -> Log:
    """Append injected context: a user/message whose source is not the user."""
    return log.append("user/message", {"content": [text(words)], "source": PLUGIN}, surface_op="append")


def steering(log: Log, turn: int, words: str) -> Log:
    return log.append("steering/message", {"content": [text(words)], "source": USER, "turn": turn}, surface_op="append")


def step_start(log: Log, turn: int, step: int) -> Log:
    return log.append("step/start", {"turn": turn, "step": step})


def step_end(log: Log, turn: int, step: int) -> Log:
    return log.append("step/end", {"turn": turn, "step": step})


def chunk(log: Log, turn: int, step: int, delta: str) -> Log:
    return log.append("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": delta}})


def assistant_message(log: Log, turn: int, step: int, content: tuple[FrozenMap, ...], sources: tuple[int, ...]) -> Log:
    data = {"turn": turn, "step": step, "content": content, "provenance": {"provider": "mock", "model": "mock"}}
    return log.append("assistant/message", data, surface_op="append", source_event_seqs=sources)


def tool_call(log: Log, turn: int, step: int, call_id: str) -> Log:
    return log.append("tool/call", {"turn": turn, "step": step, "callId": call_id, "name": "echo", "arguments": "{}"})


def tool_result(log: Log, turn: int, step: int, call_id: str, call_seq: int) -> Log:
    data = {"turn": turn, "step": step, "callId": call_id, "content": [text("echo: ping")], "isError": False}
    return log.append("tool/result", data, surface_op="append", source_event_seqs=(call_seq,))


def turn_end(log: Log, turn: int, reason: FrozenMap) -> Log:
    return log.append("turn/end", {"turn": turn, "reason": reason})


def plugin_event(log: Log) -> Log:
    """Append a plugin's log-only record (an unknown type, LOG-9)."""
    return log.append("session/title", {"title": "a title"})


def foreign_header(log: Log, header: EpochHeader, reason: str) -> Log:
    """Append a ``request/header`` written by someone other than a loop instance."""
    return log.append("request/header", {"header": header_to_json(header), "reason": reason})


def header_count(log: Log) -> int:
    return sum(1 for e in log.events if e.type == "request/header")


_LOG_OPS = ("turn", "user", "inject", "plugin", "step", "header")


@st.composite
def logs_with_headers(draw: st.DrawFn, max_ops: int = 6) -> Log:
    """Return a small log of log-only events, messages and foreign headers (any reason, maybe non-canonical)."""
    log = EMPTY_LOG
    for op in draw(st.lists(st.sampled_from(_LOG_OPS), max_size=max_ops)):
        if op == "turn":
            log = turn_start(log, 1)
        elif op == "user":
            log = user_message(log, "go")
        elif op == "inject":
            log = inject(log, "context")
        elif op == "plugin":
            log = plugin_event(log)
        elif op == "step":
            log = step_start(log, 1, 1)
        else:
            log = foreign_header(log, draw(headers()), draw(st.sampled_from(REASONS)))
    return log


# --- A loop-shaped driver ------------------------------------------------------------------


@dataclass(frozen=True)
class StepPlan:
    """One step of a turn: the header the loop builds for it and what happens around it."""

    config: LlmCallConfig
    system: str | None
    tools: tuple[JsonValue, ...] | None
    early_inject: bool  # appended before the boundary snapshot: in this request
    late_inject: bool  # appended between step/start and the header: not in this request, in the next
    outcome: str  # "text", "tool" or "error" (a request failure: no chunk; the loop retries as the next step)
    foreign_after: EpochHeader | None  # a header another writer appends after the step's end


@dataclass(frozen=True)
class TurnPlan:
    """One turn; ``new_instance`` starts a new loop instance (resume/restart) with ``prefix``."""

    new_instance: bool
    prefix: tuple[JsonValue, ...] | None
    kind: str  # "steps", "blocked" (zero steps) or "cancelled" (cancelled before step 1's step/start)
    steps: tuple[StepPlan, ...]
    end_reason: FrozenMap


@dataclass(frozen=True)
class Sent:
    """What one step sent at dispatch time: its recorded header and its messages."""

    header: EpochHeader
    messages: tuple[JsonValue, ...]
    header_seq: int | None  # the seq of the snapshot this step wrote, if it wrote one
    dispatch_length: int  # the log's length when the request was dispatched (right after the record)


@dataclass(frozen=True)
class Driven:
    """A driven log, the requests its steps sent, and the anchor reasons each instance wrote."""

    log: Log
    sent: dict[tuple[int, int], Sent]
    anchors: tuple[tuple[str, ...], ...]  # per instance, the reasons of the anchors it wrote


def _run_step(log: Log, logged: bool, prefix: tuple[JsonValue, ...] | None, turn: int, step: int, plan: StepPlan) -> tuple[Log, Sent]:
    if plan.early_inject:
        log = inject(log, f"early context {turn}.{step}")
    boundary = derive_messages(log)  # the boundary snapshot, immediately before step/start
    log = step_start(log, turn, step)
    if plan.late_inject:
        log = inject(log, f"late context {turn}.{step}")
    header = canonical_header(EpochHeader(plan.config, plan.system, plan.tools, prefix))
    before = log.seq
    log = record_request_header(log, logged, header)
    sent = Sent(header, (prefix or ()) + boundary, before if log.seq > before else None, log.seq)
    if plan.outcome == "text":
        log = chunk(chunk(log, turn, step, "do"), turn, step, "ne")
        log = assistant_message(log, turn, step, (text("done"),), (log.seq - 2, log.seq - 1))
    elif plan.outcome == "tool":
        log = chunk(log, turn, step, "{}")
        call = obj({"type": "tool-call", "id": f"c{turn}.{step}", "name": "echo", "arguments": "{}"})
        log = assistant_message(log, turn, step, (call,), (log.seq - 1,))
        log = tool_call(log, turn, step, f"c{turn}.{step}")
        log = tool_result(log, turn, step, f"c{turn}.{step}", log.seq - 1)
    log = step_end(log, turn, step)
    return log, sent


def drive(plans: tuple[TurnPlan, ...], open_tail: bool = False) -> Driven:
    """Return the log a sequence of turns leaves, with what each step sent (harness facts §4.4)."""
    log, sent = EMPTY_LOG, {}
    logged: bool = False
    prefix: tuple[JsonValue, ...] | None = None
    anchors: list[list[str]] = []
    for turn, plan in enumerate(plans, start=1):
        if plan.new_instance or not anchors:
            logged, prefix = False, plan.prefix
            anchors.append([])
        log = turn_start(log, turn)
        if plan.kind == "blocked":
            blocked = {"content": [text(f"prompt {turn}")], "source": USER, "reason": "policy"}
            log = turn_end(log.append("prompt/blocked", blocked), turn, obj({"kind": "rejected", "reason": "policy"}))
            continue
        log = user_message(log, f"prompt {turn}")
        if plan.kind == "cancelled":  # cancelled during prefix composition: no step/start, no header
            log = turn_end(log, turn, obj({"kind": "aborted"}))
            continue
        for step, step_plan in enumerate(plan.steps, start=1):
            log, sent[(turn, step)] = _run_step(log, logged, prefix, turn, step, step_plan)
            if not logged:
                anchor = sent[(turn, step)].header_seq
                assert anchor is not None, "an instance's first record is unconditional"
                anchors[-1].append(str(log.events[anchor].field("reason")))
            logged = True
            if step_plan.foreign_after is not None:
                log = foreign_header(log, step_plan.foreign_after, "change")
        log = turn_end(log, turn, plan.end_reason)
    if open_tail:
        log = user_message(turn_start(log, len(plans) + 1), "still typing")
    return Driven(log, sent, tuple(tuple(a) for a in anchors))


def _step_plans() -> st.SearchStrategy[StepPlan]:
    return st.builds(
        StepPlan,
        st.builds(LlmCallConfig, st.just("mock"), st.sampled_from(("mock", "chat")), st.sampled_from((None, "max"))),
        st.sampled_from(SYSTEMS),
        tool_lists(),
        st.booleans(),
        st.booleans(),
        st.sampled_from(("text", "tool", "error")),
        st.none() | canonical_headers(),
    )


def turn_plans(max_turns: int = 2) -> st.SearchStrategy[tuple[TurnPlan, ...]]:
    """Return up to ``max_turns`` turns over one or more loop instances."""
    turn = st.builds(
        TurnPlan,
        st.booleans(),
        prefixes(),
        st.sampled_from(("steps", "steps", "steps", "blocked", "cancelled")),
        st.lists(_step_plans(), min_size=1, max_size=2).map(tuple),
        st.sampled_from(TURN_END_REASONS),
    )
    return st.lists(turn, max_size=max_turns).map(tuple)
