"""§14.4 actions and messages in brief: what a counterexample shows a reviewer, with no Python in it."""

from __future__ import annotations

import pytest
from prefix_model.core.json_values import freeze
from prefix_model.loop.actions import Create, Register, Reply, RunTools, SendPrompt
from prefix_model.loop.world import Listener, Prepend, text_message
from prefix_model.review.brief import VALUE_LIMIT, action_brief, clip, message_brief


@pytest.mark.spec("REV-7")
def test_an_action_is_its_kind_and_the_fields_that_differ_from_their_defaults() -> None:
    assert action_brief(SendPrompt(0, "task 1")) == 'SendPrompt instance=0 text="task 1"'
    assert action_brief(Reply(0, text="done")) == 'Reply instance=0 text="done"'
    assert action_brief(Reply(0, tool_calls=(("c-1", "echo", '{"text":"ok"}'),))) == 'Reply instance=0 toolCalls=[tool call echo {"text":"ok"} (id c-1)]'
    assert action_brief(RunTools(0, ("echo: ok",))) == 'RunTools instance=0 outputs=["echo: ok"]'
    tools = (freeze({"name": "echo", "description": "echo back", "parameters": {"type": "object"}}),)
    assert action_brief(Create("main", "s1", tools=tools)) == 'Create agent="main" sessionId="s1" tools=[echo]'
    listener = Listener("skills", None, (Prepend((text_message("<skill alpha>"),)),), calls=3)
    assert action_brief(Register(listener)) == 'Register listener=Listener{name="skills" agent=null script=[Prepend{messages=[user "<skill alpha>"]}]}'


@pytest.mark.spec("REV-7")
def test_a_message_says_each_block_in_words() -> None:
    call = freeze({"role": "assistant", "content": [{"type": "tool-call", "id": "c-1", "name": "echo", "arguments": "{}"}]})
    result = freeze({"role": "user", "content": [{"type": "tool-result", "toolCallId": "c-1", "content": [{"type": "text", "text": "boom"}], "isError": True}]})
    assert message_brief(call) == "assistant tool call echo {} (id c-1)"
    assert message_brief(result) == 'user tool result for c-1 (error): "boom"'
    assert message_brief(freeze({"role": "user", "content": []})) == "user (no content)"
    assert message_brief(freeze({"role": "user", "content": [{"type": "image", "data": "…"}]})) == "user [image block]"


@pytest.mark.spec("REV-7")
def test_a_long_value_is_cut_with_a_marker() -> None:
    assert clip("x" * 10, 10) == "x" * 10 and clip("x" * 11, 10) == "x" * 9 + "…"
    assert action_brief(SendPrompt(0, "y" * 500)) == f'SendPrompt instance=0 text="{"y" * (VALUE_LIMIT - 1)}…"'
