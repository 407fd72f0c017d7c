"""The loop scenario of ``make run``: two listeners, a cancelled composition, tools, a resume.

Two global ``agent/session-prefix`` listeners prepend one message each. Turn 1 is cancelled
while the prefix is being composed (nothing is cached); turn 2 composes, calls ``echo`` and
answers; then the catalog listener's content changes and the process restarts: the resumed
instance recomposes and its ``resume`` snapshot records the drift.
"""

from __future__ import annotations

from prefix_model.core.json_values import freeze
from prefix_model.loop.actions import (
    Action,
    BeginStep,
    Cancel,
    Compose,
    Create,
    Dispatch,
    MutateContribution,
    PostStep,
    PreStep,
    Register,
    Reply,
    Resume,
    RunTools,
    SendPrompt,
)
from prefix_model.loop.world import Listener, Prepend, text_message

__all__ = ["DEMO_ACTIONS"]

_TOOLS = freeze([{"name": "echo", "description": "echo back", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}])
assert isinstance(_TOOLS, tuple)
_SYSTEM = "You are a careful assistant."

DEMO_ACTIONS: tuple[Action, ...] = (
    Register(Listener("skills", None, (Prepend((text_message("<system-reminder>skills catalog v1</system-reminder>"),)),))),
    Register(Listener("workspace", None, (Prepend((text_message("<system-reminder>workspace baseline</system-reminder>"),)),))),
    Create("main", "demo-session", system=_SYSTEM, tools=_TOOLS),
    SendPrompt(0, "hello"), BeginStep(0), Cancel(0), Compose(0),
    SendPrompt(0, "say ping through echo"), BeginStep(0), Compose(0), PreStep(0), Dispatch(0),
    Reply(0, tool_calls=(("c1", "echo", '{"text":"ping"}'),)), RunTools(0, ("echo: ping",)), PostStep(0),
    BeginStep(0), PreStep(0), Dispatch(0), Reply(0, text="ping"), PostStep(0),
    MutateContribution("skills", (text_message("<system-reminder>skills catalog v2</system-reminder>"),)),
    Resume("demo-session", "main", system=_SYSTEM, tools=_TOOLS),
    SendPrompt(1, "again"), BeginStep(1), Compose(1), PreStep(1), Dispatch(1), Reply(1, text="pong"), PostStep(1),
)  # fmt: skip
