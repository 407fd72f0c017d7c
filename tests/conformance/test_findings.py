"""§9 CHK-3 — one defect, one finding: the strongest rule, what it implies, and where in both files.

Each test tampers one captured request of the witness run (the harness's semantics, session s1)
and reads what the fold reports. The expected places are worked out here from the log itself
(the last snapshot and step/start before the request went out, the event a message derives
from), not read back from the fold.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import cast

import pytest
from prefix_model.conformance.findings import SHOWN_DIFFERENCES, Difference, Finding, Marker, differences, key_order_only, listed
from prefix_model.conformance.captured import Captured, captured_request
from prefix_model.conformance.fold import check_events
from prefix_model.core.derive import derive_event_message
from prefix_model.core.events import REQUEST_HEADER, STEP_START, Event
from prefix_model.core.json_values import FrozenMap, freeze, json_text, thaw
from prefix_model.core.requests import request_to_json
from prefix_model.loop.semantics import HARNESS
from prefix_model.loop.variants import run_witness
from prefix_model.loop.world import SentRequest, World

from tests.conformance.test_fold import _numbered

Fields = dict[str, object]


@cache
def witness() -> World:
    return run_witness(HARNESS)


def _sent() -> list[SentRequest]:
    return [r for r in witness().requests if r.loop_request and r.session_id == "s1"]


def _events() -> tuple[Event, ...]:
    return witness().session("s1").log.events


def _fold(tamper: int, change: Callable[[Fields], object]) -> list[Finding]:
    """Return what the fold finds over s1 with request ``tamper`` changed by ``change`` (log line = seq + 1)."""
    captured = []
    for index, sent in enumerate(_sent()):
        fields = thaw(request_to_json(sent.request))
        assert isinstance(fields, dict)
        if index == tamper:
            change(fields)
        captured.append(Captured(index, index + 1, fields, sent.turn, sent.step))
    return check_events(((e.seq + 1, e) for e in _events()), captured, "s1").findings


def _last(kind: str, sent: SentRequest) -> int:
    return max(e.seq for e in _events()[: sent.log_length] if e.type == kind)


def _same_instance_neighbours() -> int:
    """Return a request with an earlier and a later request of its instance, no header or surface change between."""
    sent = _sent()
    for k in range(1, len(sent) - 1):
        before, here, after = sent[k - 1], sent[k], sent[k + 1]
        if before.instance_id == here.instance_id == after.instance_id and before.request.header == here.request.header == after.request.header:
            return k
    raise AssertionError("the witness has no three requests in a row of one instance and one header")


def _messages(fields: Fields) -> list[object]:
    messages = fields["messages"]
    assert isinstance(messages, list)
    return messages


@pytest.mark.spec("CHK-3", "REC-1", "REC-2", "REC-3")
def test_a_dropped_prefix_message_is_one_REC_1_finding_placed_in_both_files() -> None:
    k = _same_instance_neighbours()
    sent = _sent()[k]
    assert sent.request.header.message_prefix, "the witness's requests carry a prefix"
    findings = _fold(k, lambda f: _messages(f).pop(0))
    assert len(findings) == 1, [str(f) for f in findings]  # not REC-1, REC-2 and REC-3 for each side of the pair
    found = findings[0]
    assert (found.rule, found.implies, found.request, found.line, found.path) == ("REC-1", ("REC-2", "REC-3"), k, k + 1, "/messages/0")
    step_start = _last(STEP_START, sent)
    assert (found.turn, found.step, found.seq, found.log_line) == (sent.turn, sent.step, step_start, step_start + 1)
    assert found.header_seq == found.expected_from == _last(REQUEST_HEADER, sent)  # the prefix comes from the snapshot in force
    assert json_text(found.expected) == json_text(sent.request.header.message_prefix[0])  # type: ignore[arg-type]
    assert found.rules == ("REC-1", "REC-2", "REC-3")


@pytest.mark.spec("CHK-3", "REC-1", "REC-3")
def test_a_dropped_last_message_breaks_no_extension_and_implies_only_REC_2() -> None:
    k = _same_instance_neighbours()
    findings = _fold(k, lambda f: _messages(f).pop())
    assert [(f.rule, f.implies) for f in findings] == [("REC-1", ("REC-2",))]  # its successor still extends it


@pytest.mark.spec("CHK-3", "REC-1")
def test_a_changed_history_message_names_the_event_it_derives_from() -> None:
    k = _same_instance_neighbours()
    sent = _sent()[k]
    at = len(sent.request.header.message_prefix or ()) + 1  # the second history message
    findings = _fold(k, lambda f: _messages(f).__setitem__(at, {"role": "user", "content": [{"type": "text", "text": "tampered"}]}))
    assert [f.path for f in findings] == [f"/messages/{at}"]
    source = findings[0].expected_from
    assert source is not None and source < _last(STEP_START, sent)
    derived, expected = derive_event_message(_events()[source]), findings[0].expected
    assert derived is not None and not isinstance(expected, Marker) and json_text(derived) == json_text(expected)


@pytest.mark.spec("CHK-3", "REC-1", "REC-2")
def test_a_companion_field_is_REC_1_and_another_field_is_REC_2_alone() -> None:
    k = _same_instance_neighbours()
    sent = _sent()[k]

    def both(fields: Fields) -> None:
        fields["system"] = "another system prompt"
        fields["reasoningEffort"] = "max" if fields.get("reasoningEffort") != "max" else "low"

    findings = _fold(k, both)
    assert [(f.rule, f.path, f.implies) for f in findings] == [("REC-1", "/system", ("REC-2",)), ("REC-2", "/reasoningEffort", ())]
    assert "1 field(s) differ: reasoningEffort" in findings[1].message  # REC-2 names only what REC-1 does not cover
    assert {f.header_seq for f in findings} == {f.expected_from for f in findings} == {_last(REQUEST_HEADER, sent)}


# Each field REC-1 compares beside the messages (the header's companions), changed alone: a value the
# witness's request has another of, or one it leaves out (temperature, maxTokens, stop).
COMPANIONS = [
    ("model", "another-model"),
    ("system", "another system prompt"),
    ("temperature", 0.5),
    ("maxTokens", 77),
    ("stop", ["END"]),
    ("tools", [{"name": "other", "description": "another tool", "parameters": {"type": "object"}}]),
]


@pytest.mark.parametrize(("name", "value"), COMPANIONS)
@pytest.mark.spec("CHK-3", "REC-1")
def test_each_companion_field_changed_alone_is_one_REC_1_finding_at_its_path(name: str, value: object) -> None:
    k = _same_instance_neighbours()
    findings = _fold(k, lambda fields: fields.__setitem__(name, value))
    assert [(f.rule, f.path, f.implies) for f in findings] == [("REC-1", f"/{name}", ("REC-2",))]
    assert not isinstance(findings[0].actual, Marker) and thaw(findings[0].actual) == value


@pytest.mark.spec("CHK-3", "REC-1")
def test_no_tools_and_an_empty_tool_list_are_one_value() -> None:
    k = _same_instance_neighbours()
    assert _fold(k, lambda fields: fields.pop("tools")) == _fold(k, lambda fields: fields.__setitem__("tools", []))
    assert [(f.rule, f.path) for f in _fold(k, lambda fields: fields.pop("tools"))] == [("REC-1", "/tools")]


@pytest.mark.spec("CHK-3")
def test_the_text_names_both_files_and_what_the_finding_implies() -> None:
    k = _same_instance_neighbours()
    text = _fold(k, lambda f: _messages(f).pop(0))[0].describe("s1.events.jsonl", "s1.requests.jsonl")
    first = text.splitlines()[0]
    assert f"request {k}: s1.requests.jsonl line {k + 1}" in first and "s1.events.jsonl line" in first
    assert first.endswith("(also breaks REC-2, REC-3)") and "header seq" in first
    assert "at /messages/0: expected" in text and "(from seq" in text


# --- the findings' and the vacuity rules' own contracts, each shown able to fail ---


@pytest.mark.spec("CHK-3", "JSON-1")
def test_a_findings_text_and_json_state_what_it_breaks() -> None:
    import icontract
    from prefix_model.conformance.findings import MISSING, first_difference, shorten

    from proofs.bugs_detected import broken_twin

    finding = Finding("REC-1", "messages differ", seq=3, path="/messages/0", expected=MISSING, actual=1, implies=("REC-2",))
    assert finding.rules == ("REC-1", "REC-2") and finding.as_json()["expected"] is None
    with pytest.raises(icontract.ViolationError, match="JSON-1: a finding compares two JSON values"):
        Finding("REC-1", "x", expected=float("nan")).as_json()
    twice = broken_twin(Finding.rules, lambda self: (self.rule, self.rule))
    with pytest.raises(icontract.ViolationError, match="CHK-3: one defect, one finding"):
        twice(finding)
    nulls = broken_twin(Finding.as_json, lambda self: {"rule": self.rule, "status": "violated", "message": self.message, "line": None})
    with pytest.raises(icontract.ViolationError, match="CHK-3: a location the finding does not have is left out, never null"):
        nulls(finding)
    anonymous = broken_twin(Finding.as_json, lambda self: {"rule": "?", "status": "violated", "message": self.message})
    with pytest.raises(icontract.ViolationError, match="CHK-3: a finding's JSON names its rule"):
        anonymous(finding)
    unnamed = broken_twin(Finding.describe, lambda self, log="log", capture="capture": f"{self.message} (also breaks REC-2)")
    with pytest.raises(icontract.ViolationError, match="CHK-3: the text of a finding starts with the rule it breaks"):
        unnamed(finding)
    alone = broken_twin(Finding.describe, lambda self, log="log", capture="capture": f"{self.rule} [] {self.message}")
    with pytest.raises(icontract.ViolationError, match="CHK-3: it names every other rule the defect breaks"):
        alone(finding)
    silent = broken_twin(shorten, lambda text, limit=160: text[:limit])
    assert shorten("x" * 200, 160).endswith("(+40 chars)")
    with pytest.raises(icontract.ViolationError, match="CHK-3: a value is shown whole, or cut saying how much was cut"):
        silent("x" * 200, 160)
    assert first_difference((1, 2, 3), (1, 5)) == (1, 2, 5)
    late = broken_twin(first_difference, lambda expected, actual: (2, 3, MISSING))
    with pytest.raises(icontract.ViolationError, match="REC-1: a finding's path names the first differing element"):
        late((1, 2, 3), (1, 5))
    assert first_difference((1, 2), (1, 2)) == (0, (1, 2), (1, 2))  # nothing differs: both whole
    assert first_difference((1, 2), (1, 2, 3)) == (2, MISSING, 3)
    wrong_side = broken_twin(first_difference, lambda expected, actual: (1, 2, 9))
    with pytest.raises(icontract.ViolationError, match="REC-1: a finding's path names the first differing element"):
        wrong_side((1, 2, 3), (1, 5))
    assert str(finding) == finding.describe()
    with pytest.raises(icontract.ViolationError, match="JSON-1: a finding compares two JSON values"):
        Finding("REC-1", "m", expected=1, actual=object()).as_json()  # type: ignore[arg-type]
    with pytest.raises(icontract.ViolationError, match="JSON-1: a finding compares two JSON values"):
        Finding("REC-1", "m", expected=object(), actual=1).describe()  # type: ignore[arg-type]
    with pytest.raises(icontract.ViolationError, match="JSON-1: a finding compares two JSON values"):
        Finding("REC-1", "m", expected=1).describe()  # one side alone


@pytest.mark.spec("CHK-3")
def test_a_findings_text_and_json_name_each_place_in_its_own_file() -> None:
    from prefix_model.conformance.findings import MISSING, Finding, shorten

    dropped = Finding("REC-1", "the messages differ", seq=7, line=3, request=2, path="/messages/1", expected=("a",), actual=MISSING,
                      implies=("REC-2", "REC-3"), turn=1, step=2, log_line=8, header_seq=4, expected_from=5)  # fmt: skip
    assert dropped.describe("s.events.jsonl", "s.requests.jsonl") == (
        "REC-1 [request 2: s.requests.jsonl line 3 | turn 1 step 2: s.events.jsonl line 8, seq 7 | header seq 4] the messages differ"
        " (also breaks REC-2, REC-3)\n    at /messages/1: expected [\"a\"]  (from seq 5)\n                    actual   (missing)"
    )
    assert dropped.as_json() == {"rule": "REC-1", "status": "violated", "message": "the messages differ", "seq": 7, "line": 3, "request": 2,
                                 "turn": 1, "step": 2, "logLine": 8, "headerSeq": 4, "path": "/messages/1", "expectedFrom": 5,
                                 "expected": ["a"], "actual": None, "implies": ["REC-2", "REC-3"]}  # fmt: skip
    # A request placed by its seq only; an event's finding by line and seq; a path with no values; a run of lines.
    assert Finding("REC-3", "m", seq=7, request=0).describe("L", "C") == "REC-3 [request 0 | L seq 7] m"
    assert Finding("LOG-1", "gap", seq=3, line=4, path="/x").describe("L", "C") == "LOG-1 [L line 4, seq 3] gap\n    at /x"
    assert Finding("CHK-4", "no events", line=2, last_line=9).describe("L", "C") == "CHK-4 [L lines 2-9] no events"
    assert repr(MISSING) == "MISSING"
    assert shorten("x" * 160) == "x" * 160 and shorten("x" * 161) == "x" * 160 + "… (+1 chars)"  # the text form cuts past 160


@pytest.mark.spec("CHK-1", "CHK-4", "LOOP-1", "LOG-4", "LOOP-2")
def test_the_vacuity_and_replay_rules_state_when_they_apply() -> None:
    import icontract
    from prefix_model.conformance import vacuity
    from prefix_model.core.contracts import Rejection

    from proofs.bugs_detected import broken_twin

    misuses: list[tuple[Callable[[], object], str]] = [
        (lambda: vacuity.contradicting_session("s1", "s1"), "CHK-1: only a --session other than the header's contradicts it"),
        (lambda: vacuity.unread_run(vacuity.MAX_UNREAD_RUN - 1), "CHK-4: only a run of MAX_UNREAD_RUN lines or more"),
        (lambda: vacuity.ambiguous_session(["s1", "s1"], "log"), "CHK-1: a capture is ambiguous only when it holds several sessions"),
        (lambda: vacuity.nothing_checked(2, 1, 1, 1, "s1", ["s1"]), "CHK-1: the requests not checked, by reason, are some of the capture's"),
        (lambda: vacuity.applied_though_refused(-1, "Cancel"), "LOOP-1: an action of the vector"),
    ]
    for misuse, words in misuses:
        with pytest.raises(icontract.ViolationError, match=words):
            misuse()
    # What the checker reports (exit 2), rule and wording, as the rules state them.
    assert vacuity.no_event() == Rejection("CHK-1", "no event to check")
    ambiguous = vacuity.ambiguous_session(["s2", "s1"], "child.jsonl")
    assert ambiguous.rule == "CHK-1" and ambiguous.reason.startswith("holds the requests of sessions s1, s2, and child.jsonl names no session")
    # A replay step: logs and requests that only grew pass; an earlier one changed or lost is the rule's rejection.
    assert vacuity.not_grown({}, {}, ([], [])) is None
    assert vacuity.not_grown({"s1": [1, 2]}, {"s1": [1, 2, 3], "s2": [9]}, (["r0"], ["r0", "r1"])) is None
    lost = Rejection("LOG-4", "session s1's log changed an earlier event or lost one (logs only grow)")
    assert vacuity.not_grown({"s1": [1, 2]}, {"s1": [1, 5, 3]}, ([], [])) == lost
    assert vacuity.not_grown({"s1": [1, 2]}, {"s1": [1]}, ([], [])) == lost
    resent = Rejection("LOOP-2", "a request already sent changed or disappeared")
    assert vacuity.not_grown({"s1": [1]}, {"s1": [1]}, (["r0", "r1"], ["r0"])) == resent
    assert vacuity.not_grown({"s1": [1]}, {"s1": [1, 2]}, (["r0"], ["r9", "r1"])) == resent
    applied = Rejection("LOOP-1", "action 3 (Cancel) must be refused (its guard does not hold) but was applied")
    assert vacuity.applied_though_refused(3, "Cancel") == applied
    assert vacuity.not_grown({"s1": [1]}, {}, ([], [])) == Rejection("LOG-4", "session s1's log changed an earlier event or lost one (logs only grow)")
    blind = broken_twin(vacuity.not_grown, lambda before, after, requests: None)
    with pytest.raises(icontract.ViolationError, match="LOG-4/LOOP-2: a session log lost"):
        blind({"s1": [1]}, {}, ([], []))
    with pytest.raises(icontract.ViolationError, match="LOG-4/LOOP-2: a session log lost"):
        blind({}, {}, ([1], []))
    other = broken_twin(vacuity.not_grown, lambda before, after, requests: Rejection("LOOP-1", "no"))
    with pytest.raises(icontract.ViolationError, match="LOG-4/LOOP-2: the replay rejects only by the growth rules"):
        other({}, {}, ([], []))


# --- CHK-5: findings that explain (every difference named, key order said to be key order) ---

def _captured(edit: object = None, sort_keys: bool = False) -> tuple[Captured, ...]:
    """s1's requests as captured, each re-serialized (``sort_keys``) or edited in place (``edit(n, fields)``)."""
    captured = []
    for n, sent in enumerate(_sent()):
        fields = json.loads(json.dumps(thaw(request_to_json(sent.request)), sort_keys=sort_keys))
        if callable(edit):
            edit(n, fields)
        frozen = freeze(fields)
        assert isinstance(frozen, FrozenMap)
        captured.append(captured_request(n, frozen, sent.turn, sent.step))
    return tuple(captured)


@pytest.mark.spec("CHK-5", "REC-1", "JSON-4")
def test_a_capture_written_with_sorted_keys_is_equal_but_for_key_order_in_the_harness_order() -> None:
    findings = check_events(_numbered(_events()), _captured(sort_keys=True), "s1").findings
    assert findings and all(f.rule == "REC-1" for f in findings)  # the byte comparison stays: each is still a finding
    assert {f.path for f in findings} == {"/messages/0", "/tools"}
    for finding in findings:
        assert " but for key order, and JSON text is compared (JSON-4)" in finding.message, finding.message
    messages = [f for f in findings if f.path == "/messages/0"]
    assert len(messages) == len(_sent())  # one per request: nothing dropped, nothing doubled
    # The first such object is the first message: the harness writes role, content (spec §8.1); sorted, content comes first.
    assert all("at /messages/0 the harness writes the keys role, content (spec §8.1), the capture content, role" in f.message for f in messages)
    tools = next(f for f in findings if f.path == "/tools")
    assert "at /tools/0 the harness writes the keys name, description, parameters (spec §8.1), the capture description, name, parameters" in tools.message


@pytest.mark.spec("CHK-5", "REC-1", "CHK-3")
def test_every_difference_of_a_request_is_named_and_the_rest_counted() -> None:
    def corrupt(count: int) -> object:
        def edit(n: int, fields: dict[str, object]) -> None:
            if n == 3:
                for message in cast(list[dict[str, object]], fields["messages"])[:count]:
                    cast(list[dict[str, object]], message["content"])[0]["text"] = "tampered"
        return edit

    def message_finding(count: int) -> str:
        found = [f for f in check_events(_numbered(_events()), _captured(corrupt(count)), "s1").findings if f.rule == "REC-1"]
        assert len(found) == 1 and found[0].path == "/messages/0" and found[0].request == 3  # one defect, one finding (CHK-3)
        return found[0].message

    assert len(cast(list[object], thaw(request_to_json(_sent()[3].request))["messages"])) > SHOWN_DIFFERENCES + 1  # type: ignore[index]
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


@pytest.mark.spec("CHK-5", "ENC-2")
def test_a_field_an_event_lacks_is_missing_in_a_findings_text_never_null() -> None:
    events = list(_events())
    at = next(n for n, e in enumerate(events) if e.type == STEP_START)
    data = events[at].data
    assert isinstance(data, FrozenMap)
    events[at] = replace(events[at], data=data.without("step"))
    found = [f for f in check_events(_numbered(events)).findings if f.seq == at]
    assert [(f.rule, f.message.split(":")[0]) for f in found] == [("ENC-2", f"step/start {data['turn']}/(missing)")], found
    events[at] = replace(events[at], data=FrozenMap({**data, "step": None}))  # a present null is shown as null
    assert any("/null:" in f.message for f in check_events(_numbered(events)).findings if f.seq == at)
