"""§14 CHK-5 — findings that explain: every difference of a request named, and a key-order-only difference said to be one.

The fold compares JSON text (JSON-4, D-8), so a capture re-serialized with sorted keys breaks
REC-1 although every value is equal; the finding stays, and says so. Each test tampers the
witness run's captured requests (session s1) and reads what the fold reports.
"""

from __future__ import annotations

import json
from typing import cast

import pytest
from prefix_model.conformance.findings import SHOWN_DIFFERENCES, Difference, differences, key_order_only, listed
from prefix_model.conformance.fold import Captured, captured_request, check_events
from prefix_model.core.json_values import FrozenMap, freeze, thaw
from prefix_model.core.requests import request_to_json

from tests.conformance.test_fold import _events, _numbered, _sent


def _captured(edit: object = None, sort_keys: bool = False) -> tuple[Captured, ...]:
    """s1's requests as captured, each re-serialized (``sort_keys``) or edited in place (``edit(n, fields)``)."""
    captured = []
    for n, sent in enumerate(_sent("s1")):
        fields = json.loads(json.dumps(thaw(request_to_json(sent.request)), sort_keys=sort_keys))
        if callable(edit):
            edit(n, fields)
        frozen = freeze(fields)
        assert isinstance(frozen, FrozenMap)
        captured.append(captured_request(n, frozen, sent.turn, sent.step))
    return tuple(captured)


@pytest.mark.spec("CHK-5", "REC-1", "JSON-4")
def test_a_capture_written_with_sorted_keys_is_equal_but_for_key_order_in_the_harness_order() -> None:
    findings = check_events(_numbered(_events("s1")), _captured(sort_keys=True), "s1").findings
    assert findings and all(f.rule == "REC-1" for f in findings)  # the byte comparison stays: each is still a finding
    assert {f.path for f in findings} == {"/messages/0", "/tools"}
    for finding in findings:
        assert " but for key order, and JSON text is compared (JSON-4)" in finding.message, finding.message
    messages = [f for f in findings if f.path == "/messages/0"]
    assert len(messages) == len(_sent("s1"))  # one per request: nothing dropped, nothing doubled
    # The first such object is the first message: the harness writes role, content (spec §8.2); sorted, content comes first.
    assert all("at /messages/0 the harness writes the keys role, content (spec §8.2), the capture content, role" in f.message for f in messages)
    tools = next(f for f in findings if f.path == "/tools")
    assert "at /tools/0 the harness writes the keys name, description, parameters (spec §8.2), the capture description, name, parameters" in tools.message


@pytest.mark.spec("CHK-5", "REC-1", "CHK-3")
def test_every_difference_of_a_request_is_named_and_the_rest_counted() -> None:
    def corrupt(count: int) -> object:
        def edit(n: int, fields: dict[str, object]) -> None:
            if n == 3:
                for message in cast(list[dict[str, object]], fields["messages"])[:count]:
                    cast(list[dict[str, object]], message["content"])[0]["text"] = "tampered"
        return edit

    def message_finding(count: int) -> str:
        found = [f for f in check_events(_numbered(_events("s1")), _captured(corrupt(count)), "s1").findings if f.rule == "REC-1"]
        assert len(found) == 1 and found[0].path == "/messages/0" and found[0].request == 3  # one defect, one finding (CHK-3)
        return found[0].message

    assert len(cast(list[object], thaw(request_to_json(_sent("s1")[3].request))["messages"])) > SHOWN_DIFFERENCES + 1  # type: ignore[index]
    assert message_finding(1) == "messages are not messagePrefix ++ the boundary derivation"  # one difference: its path says it
    two = message_finding(2)
    assert two.endswith("(2 differences: /messages/0/content/0/text, /messages/1/content/0/text)"), two
    many = message_finding(SHOWN_DIFFERENCES + 2)
    shown = ", ".join(f"/messages/{n}/content/0/text" for n in range(SHOWN_DIFFERENCES))
    assert many.endswith(f"({SHOWN_DIFFERENCES + 2} differences: {shown}, and 2 more)"), many


@pytest.mark.spec("CHK-5", "JSON-4")
def test_differences_are_each_place_two_values_differ_key_order_named_apart() -> None:
    def values(text: str) -> object:
        return freeze(json.loads(text))

    same, reordered = values('{"a":[1,{"b":2,"c":3}]}'), values('{"a":[1,{"c":3,"b":2}]}')
    assert differences(same, same) == []  # type: ignore[arg-type]
    found = differences(same, reordered, "/x")  # type: ignore[arg-type]
    assert found == [Difference("/x/a/1", ("b", "c"), ("c", "b"))] and key_order_only(found)
    mixed = differences(values('{"a":1,"b":[1,2],"c":{"d":1,"e":2}}'), values('{"a":2,"b":[1],"c":{"e":2,"d":1},"f":0}'))  # type: ignore[arg-type]
    assert [d.path for d in mixed] == ["/a", "/b/1", "/c", "/f"] and not key_order_only(mixed)
    assert listed(mixed) == "4 differences: /a, /b/1, /c (key order), /f"
    assert differences(values('{"a/b":1}'), values('{"a/b":2}')) == [Difference("/a~1b")]  # type: ignore[arg-type]  # RFC 6901 escaping
