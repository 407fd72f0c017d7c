"""spec/vectors.md — the vectors' content, pure: actions as JSON, the scenarios, the persisted-form files.

What is written out and consumed is tested at the edge (tests/edge/test_vectors.py, test_bundle.py).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from prefix_model.core.json_values import FrozenMap, freeze, json_text
from prefix_model.loop.actions import Create, Register, SendPrompt
from prefix_model.loop.properties import check_all
from prefix_model.loop.world import InjectThenPrepend, Listener, Throw
from prefix_model.vectors.cases import world_of
from prefix_model.vectors.scenarios import Scenario, scenarios
from prefix_model.vectors.codec import ACTION_TYPES, CALL_TYPES, CodecError, action_from_json, action_to_json, camel
from prefix_model.vectors.persisted import FileError, file_bytes, text_file, zstd_file
from prefix_model.vectors.scenarios import edge_tools, play


@pytest.mark.spec("VEC-1")
def test_a_sparse_field_is_written_only_where_it_differs_from_its_default() -> None:
    plain, blocked = SendPrompt(0, "x", blocked=True), SendPrompt(0, "x", blocked=True, block_reason="policy")
    assert "blockReason" not in action_to_json(plain) and action_to_json(blocked)["blockReason"] == "policy"
    assert action_from_json(action_to_json(blocked)) == blocked and action_from_json(action_to_json(plain)) == plain
    own = Register(Listener("l", None, (Throw("boom", ("cause",)), InjectThenPrepend("n", (), FrozenMap({"kind": "k"})))))
    def script(action: Register) -> str:
        listener = action_to_json(action)["listener"]
        assert isinstance(listener, FrozenMap)
        return json_text(listener["script"])

    assert script(own) == '[{"call":"Throw","causes":["cause"],"message":"boom"},{"call":"InjectThenPrepend","messages":[],"source":{"kind":"k"},"text":"n"}]'
    assert script(Register(Listener("l", None, (Throw(), InjectThenPrepend("n", ()))))) == '[{"call":"Throw"},{"call":"InjectThenPrepend","messages":[],"text":"n"}]'
    assert action_from_json(action_to_json(own)) == own


@pytest.mark.spec("VEC-1", "LOOP-1")
def test_actions_round_trip_through_json_and_a_bad_one_names_the_path() -> None:
    used = {type(a) for s in scenarios() for a in s.actions}
    assert used == set(ACTION_TYPES)  # the scenarios use the whole alphabet
    calls = {type(c) for s in scenarios() for a in s.actions for c in getattr(getattr(a, "listener", None), "script", ())}
    assert calls == set(CALL_TYPES)
    for scenario in scenarios():
        for action in scenario.actions:
            encoded = action_to_json(action)
            assert action_from_json(encoded) == action and list(encoded) == sorted(encoded)
            assert all(k == "action" or k == camel(k) for k in encoded)
    wrong = [
        ({"action": "Teleport"}, "$.action"),
        ({"action": "Create", "agent": "main"}, "$.sessionId"),
        ({"action": "SendPrompt", "instance": "0", "text": "hi"}, "$.instance"),
        ({"action": "SendPrompt", "instance": True, "text": "hi"}, "$.instance"),
        ({"action": "Reply", "instance": 0, "toolCalls": [["c1", "echo", "{}"]]}, "$.toolCalls[0]"),
        ({"action": "Cancel", "instance": 0, "why": "bored"}, "$"),
        ({"action": "Register", "listener": {"name": "l", "agent": None, "script": []}}, "$.listener"),
        ({"action": "PreStep", "instance": 0, "compact": [0]}, "$.compact"),
    ]
    for value, path in wrong:
        with pytest.raises(CodecError) as caught:
            action_from_json(freeze(value))
        assert caught.value.path == path, (value, str(caught.value))


@pytest.mark.spec(
    "VEC-2", "PFX-1", "REC-1", "REC-2", "PFX-2", "PFX-3", "LOOP-3", "PFX-4", "PFX-5", "PFX-6", "PFX-7", "PFX-8", "CMP-1",
    "FORK-8", "TOK-1", "REC-3", "HDR-15",
)  # fmt: skip
def test_every_scenario_keeps_every_property_of_a_run() -> None:
    for scenario in scenarios():
        assert check_all(world_of(scenario.id)) == (), scenario.id


@pytest.mark.spec("JSON-3", "JSON-4", "TOK-1", "CMP-5")
def test_the_value_scenarios_sit_on_the_threshold_so_one_unit_of_json_text_flips_them() -> None:
    # The meter prices the tools as one block of JSON text: ceil(units / 4) tokens. At the threshold the text is
    # 4n + 1 units, so one unit fewer is a token less; below it, 4n units, so one more is a token more.
    def compacts(scenario: Scenario, gauge: str | None = None) -> bool:
        actions = scenario.actions
        if gauge is not None:
            actions = tuple(replace(a, tools=edge_tools(gauge)) if isinstance(a, Create) else a for a in actions)
        types = [e.type for e in play(replace(scenario, actions=actions)).session("s1").log.events]
        return "compact/start" in types[: types.index("turn/end")]  # at the first post-step, whatever the next turn does

    at, below = (next(s for s in scenarios() if s.id == f"values/json-edges-{where}-threshold") for where in ("at", "below"))
    assert [len(json_text(edge_tools(pad)).encode("utf-16-le")) // 2 % 4 for pad in ("xxx", "xx")] == [1, 0]
    assert compacts(at) and not compacts(at, gauge="xx")
    assert not compacts(below) and compacts(below, gauge="xxx")


@pytest.mark.spec("VEC-1", "FMT-9")
def test_a_file_is_carried_as_its_lines_or_as_the_base64_of_its_bytes() -> None:
    assert file_bytes(text_file(("a", "b"))) == b"a\nb\n" and file_bytes(text_file(("a", "b"), final_newline=False)) == b"a\nb"
    binary = bytes(range(256))
    carried = json.loads(json_text(zstd_file(binary)))
    assert file_bytes(carried) == binary and carried["encoding"] == "zstd"
    for wrong in ({"encoding": "gzip"}, {"encoding": "zstd", "base64": "not base64!"}, {"encoding": "text", "lines": ["a"]}, {"encoding": "zstd"}):
        with pytest.raises(FileError):
            file_bytes(wrong)
