"""Spec §11, §9 (REC-1..REC-3, INST-1..INST-3) — the fold's request arm: a matched request against the one the log implies.

A captured request that equals the expected one text for text passes without being frozen (the
text screen ``_is_expected``, whose contract ties a pass to the field-by-field comparison); any
other is frozen and compared field by field (REC-1, REC-2), one finding per defect. Within an
instance, requests extend (REC-3); a request naming its instance is judged against the anchors
(INST-1..3, ``conformance.instances``).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from prefix_model.conformance.captured import Captured
from prefix_model.conformance.findings import MISSING, Finding, Marker, differences, first_difference, key_order_only, listed
from prefix_model.conformance.instances import LOG_ONLY_READINGS, Anchor, Claim, judge
from prefix_model.conformance.live import boundary, messages_head
from prefix_model.conformance.state import FoldState, Previous, StepResult
from prefix_model.core.contracts import ENABLED, ensure
from prefix_model.core.headers import header_equals
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, json_text
from prefix_model.core.requests import Request, build_request, request_to_json

__all__ = ["compare", "expected_request"]

_COMPANION_FIELDS = ("model", "system", "temperature", "maxTokens", "stop", "tools")
_SESSION_ID = frozenset(("sessionId",))  # REC-2 compares every field but the session id


# no contract: an arm of the fold; its findings are judged against the spec's by the checker differential
def compare(state: FoldState, result: StepResult, request: Captured) -> None:
    """Judge ``request``, matched with step ``result``: REC-1 with no header in force, else REC-1..3 and INST-1..3."""
    state.requests_checked += 1
    if state.header is None:
        request.read_whole()
        state.findings.append(Finding("REC-1", "no request/header is in force at this step: the request cannot be reconstructed from the log",
                                      implies=("REC-2",), **_where(state, result, request)))
        return
    exact = _is_expected(state, result, request)
    if exact:
        _monotonic(state, result, request, True, None)
    else:
        _monotonic(state, result, request, *_compare_exactly(state, result, request))
    if request.instance is not None and state.anchor_seq is not None:
        _instance(state, result, request, request.instance)


def _instance(state: FoldState, result: StepResult, request: Captured, name: str) -> None:
    """INST-1..3: the request of instance ``name`` under the anchor in force, against the anchors its instance and others were sent under."""
    assert state.anchor_prefix is not None and state.anchor_seq is not None and state.header_seq is not None
    anchor = Anchor(state.instances, state.anchor_seq, state.anchor_prefix, state.anchor_value)
    broken = judge(name, anchor, state.header_seq, state.named.get(name), state.claim, state.seed_length)
    state.named[name] = anchor
    if state.claim is None or anchor.number > state.claim.anchor.number:
        state.claim = Claim(name, anchor, state.header_seq)
    if broken is None:
        return
    found = Finding(broken.rule, broken.message, implies=broken.implies, expected=broken.expected, actual=broken.actual,
                    expected_from=broken.expected_from, **_where(state, result, request))  # fmt: skip
    # A new instance's first snapshot written as ``change``: the log alone judged it against the old instance (one defect, one finding).
    header_seq = state.header_seq
    log_only = (n for n, f in enumerate(state.findings) if f.seq == header_seq and f.request is None and f.rule in LOG_ONLY_READINGS)
    at = next(log_only, None) if broken.new_snapshot else None
    if at is None:
        state.findings.append(found)
    else:
        state.findings[at] = found


@ensure(
    lambda state, step, request, result: not result or not _request_findings(state, step, request),
    "CHK-2: a request the text screen passes is one the field-by-field comparison (REC-1, REC-2) finds nothing in",
    enabled=ENABLED,
)
def _is_expected(state: FoldState, step: StepResult, request: Captured) -> bool:
    """Return whether ``request`` is, text for text, the request the log expects (no finding possible)."""
    expected, fields = state.expected, request.fields
    assert expected is not None
    if not expected.shallow or state.deep_nodes or fields.keys() - _SESSION_ID != expected.names or step.boundary is not None:
        return False
    for name, text in expected.fields.items():
        if not request.same(name, text):
            return False
    return request.same("messages", messages_head(state, expected, step.boundary_nodes) + "]")


def _where(state: FoldState, result: StepResult, request: Captured) -> dict[str, Any]:
    """Return a request finding's places: the capture's request and line, the step that sent it, the header in force."""
    return {"request": request.index, "line": request.line, "seq": result.start_seq, "turn": result.turn, "step": result.step,
            "log_line": result.start_line, "header_seq": state.header_seq}  # fmt: skip


# no contract: LogChecker.request_for, its public caller, states REC-1's tie to the header in force
def expected_request(state: FoldState, result: StepResult) -> Request:
    """Return the request the log implies for step ``result``: the header in force over its boundary's derivation."""
    assert state.header is not None
    messages = tuple(freeze(m) for _, m in boundary(state, result) if m is not None)
    return build_request(state.header, tuple(m for m in messages if isinstance(m, FrozenMap)), state.session_id)


def _message_source(state: FoldState, result: StepResult, index: int) -> int | None:
    """Return the seq of the event the expected request's message ``index`` comes from (the header's prefix, or a node)."""
    assert state.expected is not None
    if index < len(state.expected.prefix_items):
        return state.header_seq
    history = (s for s, m in boundary(state, result) if m is not None)
    return next(itertools.islice(history, index - len(state.expected.prefix_items), None), None)


def _compare_exactly(state: FoldState, result: StepResult, request: Captured) -> tuple[bool, int | None]:
    """Add the REC-1 and REC-2 findings of ``request``; return whether there were none, and the index of its messages finding."""
    found = _request_findings(state, result, request)
    messages_at = next((len(state.findings) + n for n, f in enumerate(found) if f.rule == "REC-1" and (f.path or "").startswith("/messages/")), None)
    state.findings.extend(found)
    return not found, messages_at


def _request_findings(state: FoldState, result: StepResult, request: Captured) -> list[Finding]:
    """REC-1 and REC-2 on frozen values, field by field, one finding per defect.

    Each REC-1 difference is its own defect and implies REC-2; a REC-2 finding names only the
    fields no REC-1 finding covers.
    """
    expected, fields = request_to_json(expected_request(state, result)), request.exact()
    where = _where(state, result, request)
    found: list[Finding] = []
    got_messages, want_messages = fields.get("messages"), expected["messages"]
    covered: set[str] = set()
    if not (isinstance(got_messages, tuple) and json_text(got_messages) == json_text(want_messages)):
        index, want, got = first_difference(want_messages, got_messages)
        covered.add("messages")
        found.append(Finding("REC-1", _explained("messages are not messagePrefix ++ the boundary derivation", "messages are messagePrefix ++ the boundary derivation", want_messages,
                                                 MISSING if got_messages is None else got_messages, "/messages"), path=f"/messages/{index}",
                             expected=want, actual=got, implies=("REC-2",), expected_from=_message_source(state, result, index), **where))  # fmt: skip
    for name in _COMPANION_FIELDS:
        want_value, got_value = expected.get(name), fields.get(name)
        if name == "tools":
            want_value, got_value = want_value or (), got_value or ()
        if json_text(want_value) != json_text(got_value):
            covered.add(name)
            # A field left out is shown as absent (MISSING), as REC-2 and a message show it, not as the null it compares as
            # (no tools is the empty list, and shown as one).
            want_shown = want_value if name in expected or name == "tools" else MISSING
            got_shown = got_value if name in fields or name == "tools" else MISSING
            found.append(Finding("REC-1", _explained(f"{name} differs from the folded header", f"{name} is the folded header's", want_shown, got_shown, f"/{name}"), path=f"/{name}", expected=want_shown,
                                 actual=got_shown, implies=("REC-2",), expected_from=state.header_seq, **where))  # fmt: skip
    names = [k for k in expected if k != "sessionId"] + [k for k in fields if k not in expected and k != "sessionId"]
    differing = [k for k in names if k not in covered and k != "messages" and json_text(expected.get(k)) != json_text(fields.get(k))]
    if differing:
        name = differing[0]
        whole = f"the request is not the one built from the fold and the boundary ({len(differing)} field(s) differ: {', '.join(differing)})"
        found.append(Finding("REC-2", _explained(whole, "the request is the one built from the fold and the boundary", expected.get(name, MISSING), fields.get(name, MISSING), f"/{name}"), path=f"/{name}",
                             expected=expected.get(name, MISSING), actual=fields.get(name, MISSING),
                             expected_from=state.header_seq if name in expected else None, **where))  # fmt: skip
    return found


def _monotonic(state: FoldState, result: StepResult, request: Captured, exact: bool, messages_finding: int | None) -> None:
    """REC-3: within an instance, with no replacement and no header change, requests extend.

    Two requests whose messages are each the expected ones extend by construction (same
    header, no replacement: the later boundary extends the earlier), so only a pair with a
    difference is compared, and a break is a consequence of the messages finding of one of the
    two: it joins that finding's ``implies`` (the later request's, else the earlier's).
    """
    assert state.header is not None
    previous = state.previous.get(result.instance)
    generation = state.generation if result.boundary is None else -1  # its history is from before the replacement
    state.previous[result.instance] = Previous(request, state.header, generation, exact, messages_finding)
    if previous is None or (previous.exact and exact):
        return
    if previous.generation != state.generation or not header_equals(previous.header, state.header):
        return
    before, after = previous.request.exact().get("messages"), request.exact().get("messages")
    if isinstance(before, tuple) and isinstance(after, tuple) and json_text(after[: len(before)]) != json_text(before):
        cause = messages_finding if messages_finding is not None else previous.finding
        if cause is not None:
            implied = state.findings[cause].implies
            state.findings[cause] = replace(state.findings[cause], implies=implied if "REC-3" in implied else (*implied, "REC-3"))
            return
        index, want, got = first_difference(before, after[: len(before)])
        state.findings.append(Finding("REC-3", "the request does not extend the instance's previous request",
                                      path=f"/messages/{index}", expected=want, actual=got, **_where(state, result, request)))  # fmt: skip


def _explained(statement: str, equal: str, expected: JsonValue | Marker, actual: JsonValue | Marker, path: str) -> str:
    """Return a request finding's message: ``statement`` with every difference named, or ``equal`` but for key order.

    Every difference is named, the first few by pointer (CHK-3: one finding per defect still, the
    places it covers listed). JSON text is compared (JSON-4, D-8): objects equal but for the order
    of their keys differ, and the message says so, with the order the harness writes (spec §8.1) —
    the expected object's, which the model builds in that order — against the capture's.
    """
    if expected is MISSING or actual is MISSING:
        return statement
    found = differences(expected, actual, path)  # type: ignore[arg-type]
    if key_order_only(found):
        first = found[0]
        where = f" ({listed(found)})" if len(found) > 1 else ""
        return (f"{equal} but for key order, and JSON text is compared (JSON-4): at {first.path} the harness writes the keys "
                f"{', '.join(first.expected_keys)} (spec §8.1), the capture {', '.join(first.actual_keys)}{where}")  # fmt: skip
    return statement if len(found) <= 1 else f"{statement} ({listed(found)})"
