"""The loop's state (``loop/world.py``): what a world may hold, what a new instance starts from, message text."""

from __future__ import annotations

import pytest
from prefix_model.core.events import REQUEST_HEADER
from prefix_model.core.headers import INITIAL
from prefix_model.core.json_values import FrozenMap, freeze
from prefix_model.core.log import EMPTY_LOG
from prefix_model.loop.world import AgentOptions, Instance, Listener, Phase, Prepend, Session, World, message_text, text_message

from tests.loop_scripts import msgs, play, start

HEADER_DATA = {"header": {"config": {"provider": "mock", "model": "mock-model"}}, "reason": INITIAL}


@pytest.mark.spec("LOOP-4", "PFX-2")
def test_a_created_instance_stands_between_turns_with_nothing_cached_or_logged() -> None:
    world = play((start(),))
    (instance,) = world.instances
    assert (instance.id, instance.agent, instance.session_id, instance.options) == (0, "main", "s1", AgentOptions())
    assert (instance.phase, instance.turn, instance.step) == (Phase.IDLE, 0, 0)
    assert (instance.prefix, instance.logged_header, instance.continues, instance.max_tokens, instance.disposed) == (None, False, False, False, False)
    assert (instance.cancel, instance.steering, instance.queued, instance.deferred, instance.pending_calls) == (None, (), (), (), ())
    assert [(m.kind, m.turn) for m in world.trace] == [("created", 0)]


@pytest.mark.spec("PFX-8")
def test_a_listener_starts_at_its_first_call_and_repeats_its_last() -> None:
    first, last = Prepend(msgs("a")), Prepend(msgs("b"))
    listener = Listener("l", None, (first, last))
    assert listener.calls == 0 and listener.next_call() is first
    assert Listener("l", None, (first, last), calls=1).next_call() is last
    assert Listener("l", None, (first, last), calls=5).next_call() is last


@pytest.mark.parametrize(("script", "calls"), [((), 0), ((Prepend(()),), -1)])
def test_a_listener_has_a_script_and_a_count_of_at_least_zero(script: tuple[Prepend, ...], calls: int) -> None:
    with pytest.raises(ValueError, match="at least one scripted call and a non-negative call count"):
        Listener("l", None, script, calls)


def _instance(number: int, session_id: str, **fields: object) -> Instance:
    return Instance(number, "main", session_id, AgentOptions(), **fields)  # type: ignore[arg-type]


@pytest.mark.spec("LOOP-1", "FORK-7")
@pytest.mark.parametrize(
    ("sessions", "instances"),
    [
        ((Session("s1"), Session("s1")), ()),  # two sessions of one id, no instance
        ((Session("s1"),), (_instance(1, "s1"),)),  # an instance not numbered by its position
        ((Session("s1"),), (_instance(0, "s2"),)),  # an instance driving no session of the world
    ],
)
def test_a_world_numbers_its_instances_and_holds_the_sessions_they_drive(sessions: tuple[Session, ...], instances: tuple[Instance, ...]) -> None:
    with pytest.raises(ValueError, match="numbered by position and drive its sessions"):
        World(sessions=sessions, instances=instances)


@pytest.mark.spec("HDR-10")
def test_an_instance_that_logged_a_header_drives_a_log_that_holds_one() -> None:
    started = EMPTY_LOG.append("turn/start", freeze({"turn": 1, "trigger": {"kind": "message"}}))
    for log in (EMPTY_LOG, started):  # an empty log, and one whose only event is no header
        with pytest.raises(ValueError, match="HDR-10"):
            World(sessions=(Session("s1", log),), instances=(_instance(0, "s1", logged_header=True),))
    logged = started.append(REQUEST_HEADER, freeze(HEADER_DATA))
    assert World(sessions=(Session("s1", logged),), instances=(_instance(0, "s1", logged_header=True),)).instance(0).logged_header


def test_message_text_joins_the_text_of_a_messages_blocks() -> None:
    assert message_text(text_message("hi", "assistant")) == "hi"
    blocks = freeze({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}, "loose", {"type": "text", "text": "b"}]})
    assert message_text(blocks) == "ab"  # a block without text adds nothing; a non-object is not a block
    assert message_text(freeze({"role": "user", "content": "plain"})) == ""  # content that is no list of blocks
    assert message_text("not a message") == ""
    assert message_text(FrozenMap({})) == ""
