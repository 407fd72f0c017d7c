"""The action language drawn at random: what a generated script may do next, given where the model stands.

``Grammar.candidates`` lists, for one world, moves over the whole action language — each open
turn's next segment with its argument variants (compactions, replacements, config changes,
streamed replies with usage, tool batches, failures with and without retry, max-tokens), inputs
in every window (prompts, injects with sources and meta, steering, cancel, dispose, system and
tool changes, listener mutations), and the instance boundaries (create, resume, fork, new
listeners, a new compaction policy) — with values over the types the harness takes (contributed
messages of several block types, tool schemas in four shapes, JSON's edge numbers, keys and
characters, the config in force changed in one field alone). Each candidate is tagged with its
*family*, which the generator weighs. ``Grammar.hostile`` lists actions of every kind aimed where a
guard may refuse them (family ``refused``), which test that an implementation refuses what the
model refuses. The grammar states no rule: whether a move is enabled, and what it does, is for
``transitions.enabled`` and ``transitions.apply`` to say.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from prefix_model.core.events import ASSISTANT_MESSAGE, REQUEST_HEADER, STEP_START, TURN_END, is_surface_type
from prefix_model.core.headers import EpochHeader, LlmCallConfig, fold_request_header, header_of
from prefix_model.core.json_values import FrozenMap, JsonValue, freeze, freeze_object, json_text
from prefix_model.core.log import Log
from prefix_model.edge.runner.protocol import PROVIDERS
from prefix_model.examples.streams import failed_finish, text_stream, tool_call_stream, with_replay_state
from prefix_model.loop.actions import (
    Action,
    BeginStep,
    Cancel,
    Compose,
    Create,
    Dispatch,
    Dispose,
    ForkDrive,
    Inject,
    MountCompaction,
    MutateContribution,
    PlainReplace,
    PostStep,
    PreStep,
    PromptContext,
    Register,
    Reply,
    Resume,
    RunTools,
    SendPrompt,
    SetSystem,
    SetTools,
    Steer,
)
from prefix_model.loop.compaction import CompactPolicy, balanced_cuts
from prefix_model.loop.meter import measure, node_prices
from prefix_model.loop.transitions import apply, enabled
from prefix_model.loop.prompt import BLOCKED
from prefix_model.loop.world import (
    AgentOptions,
    Append,
    CancelThenPrepend,
    InjectThenPrepend,
    Instance,
    Listener,
    ListenerCall,
    Phase,
    Prepend,
    ShortCircuit,
    Throw,
    World,
    text_message,
)
from prefix_model.vectors.scenarios import EDGE_KEYS, EDGE_NUMBERS, EDGE_TEXT

__all__ = ["DRIVE", "START", "WINDOW", "BOUNDARY", "REFUSED", "PROVIDER", "Move", "Grammar", "out_of_domain"]

# Families of moves: the generator's weights are per family; ``refused`` is a hostile step's (FUZZ-10), drawn apart.
DRIVE, START, WINDOW, BOUNDARY, REFUSED = "drive", "start", "window", "boundary", "refused"

AGENTS = ("main", "aux", "ops")
SESSIONS = ("s1", "s2", "s3", "s4", "s5", "s6")
UNHELD = "fetch"  # a tool no drawn set holds: a call to it is answered unknown (LOOP-14)
LISTENERS = ("rules", "docs", "skills", "memory", "tools")  # registered in a drawn order, so name order tells nothing
ROLES = ("user", "user", "user", "assistant", "system")
_LONG = "carry the plan out step by step, checking each result; "  # repeated: long enough that a summary is smaller
_SOURCES = (FrozenMap({"kind": "plugin", "plugin": "notes"}), FrozenMap({"kind": "plugin", "plugin": "rules"}), FrozenMap({"kind": "user"}))
_EFFORTS = ("low", "high", "max")  # drawn with a whole config
# Every effort the harness adapter's mock model supports: a one-field nudge lands on "medium" too, the effort a
# provider may take by default (an implementation that leaves it out of a header as a default is found so).
_SUPPORTED_EFFORTS = ("low", "medium", "high", "max")
_TEMPERATURES = (None, 0, 0.5, 1)
PROVIDER = PROVIDERS[0]  # the provider every adapter routes: the model routes any, an implementation those it registers
_PREAMBLE = CompactPolicy().preamble
_BLANKS = ("", " \n\t", "\ufeff", "\x1c\x85")


def out_of_domain(world: World, action: Action) -> str | None:
    """Why ``action`` is outside what a campaign draws, though the model takes it (D-20), or None: a tool list naming
    one tool twice, a Create or a fork's child reusing the id of a session no live instance drives, a compaction policy
    framing with a preamble other than the default or mounted while a post-step is awaited, a provider other than the
    scripted fake's routes, a reasoning effort other than those drawn, a steer or tool-set change before a turn's first
    step, a tool-set change before a retried step. A shrink keeps no candidate that holds one."""
    provider = _unrouted(action)
    if provider is not None:
        # The model routes every provider; a real adapter routes those it registers, and a step routed elsewhere fails
        # before its stream (at deepseek-harness a55f148516, a shrink's "x" provider was answered "not parked at stream").
        return f"a provider other than {' or '.join(map(repr, PROVIDERS))} ({provider!r}), which an implementation's adapter need not route"
    match action:
        # The harness resolves an effort against the routed model's info and fails the step on one it lacks
        # (llm/src/index.ts:375-395); the model takes any non-empty one (D-5). A shrink's "x" is such an effort.
        case Dispatch(config=config) if config is not None and config.reasoning_effort not in (None, *_SUPPORTED_EFFORTS):
            return f"a reasoning effort other than those drawn ({config.reasoning_effort!r}), which a provider may not support"
        # Cordis collects the agent/post-step serial's listeners when it is dispatched: a service mounted while a
        # step's post-step is awaited is not called by it; the model's post-step asks the service in force (D-20 (b)).
        case MountCompaction() if any(i.phase is Phase.POST_STEP for i in world.instances):
            return "a compaction service mounted while a step's post-step is awaited"
        # The harness appends a turn's prompt, drains step 1's steering and collects its tools with no await between
        # (L/loop.ts:383-407, system-prompt/src/index.ts:337-378): the model's window between a turn's opening and its
        # first BeginStep is one the harness does not have (D-20 (a)). A retried step's tools are collected as the
        # failed one closes (its steering too, which the model follows: LOOP-9).
        case Steer(instance=i) if _assembling(world, i, retried=False):
            return "a steer between a turn's opening and its first BeginStep, a window the harness does not have"
        case SetTools(instance=i) if _assembling(world, i, retried=True):
            return "a tool-set change between a turn's opening or a retry and the step's BeginStep, a window the harness does not have"
        # The harness's preamble is fixed prose; only the default has its length, so only it prices a framed summary as
        # the harness does (D-15). A shrink that shortens it mixes that difference into the one it shrinks.
        case MountCompaction(policy=policy) if policy.preamble != _PREAMBLE:
            return "a checkpoint preamble other than the default, which alone is priced as the harness's fixed one is"
        # The model keeps every session, as a persistence backend keeps its log; the harness's store (the adapter has no
        # backend) lets go of one whose drivers are all disposed, and its id can be taken again (D-20 (e)).
        case Create(session_id=sid) | ForkDrive(child_id=sid) if sid in {x.id for x in world.sessions} and not world.held(sid):
            return "a session id the harness's store has let go (no live instance drives it), taken again"
        case Create(tools=tools) | ForkDrive(tools=tools) | Resume(tools=tools) | SetTools(tools=tools):
            names = [str(t.get("name")) for t in tools if isinstance(t, FrozenMap)]
            return "a tool list naming one tool twice" if len(set(names)) != len(names) else None
    return None


def _assembling(world: World, instance_id: int, retried: bool) -> bool:
    """Whether an instance waits for the BeginStep of its turn's first step (with ``retried``, or of a retried step)."""
    if not 0 <= instance_id < len(world.instances):
        return False
    instance = world.instance(instance_id)
    return instance.phase is Phase.STEP_BEGIN and (instance.step == 0 or (retried and instance.retried))


def _unrouted(action: Action) -> str | None:
    """The provider ``action`` names that is none of the scripted fake's routes. An empty one is none to route: an
    agent's or a request's leaves its step to fail before any provider is asked (LOOP-10), and a summarizer's means
    "the step's own"."""
    match action:
        case Create(options=options) | ForkDrive(options=options) | Resume(options=options) if options.provider not in ("", *PROVIDERS):
            return options.provider
        case Dispatch(config=config) if config is not None and config.provider not in ("", *PROVIDERS):
            return config.provider
        case MountCompaction(policy=policy) if policy.summarization_provider not in ("", *PROVIDERS):
            return policy.summarization_provider
    return None


# A field's alternatives for a near-miss config: stops of two in either order and an empty one (distinct from none, HDR-3).
_STOPS: tuple[tuple[str, ...] | None, ...] = (("END", "\n\n"), ("\n\n", "END"), (), None, ("END",))
_FIELDS: tuple[tuple[str, tuple[object, ...]], ...] = (
    ("model", ("mock-model", "other-model")),
    ("reasoning_effort", (None, *_SUPPORTED_EFFORTS)),
    ("temperature", _TEMPERATURES),
    ("max_tokens", (None, 512, 4096)),
    ("stop", _STOPS),
)


def _one_field_changed(current: LlmCallConfig, turn: int) -> LlmCallConfig:
    """``current`` with one field changed, picked by ``turn``, to the next of its alternatives that differs (a stop of
    several, first to the same stop in reverse order; a stop of one, first to it twice)."""
    field, options = _FIELDS[turn % len(_FIELDS)]
    if current.stop is not None and len(set(current.stop)) > 1 and turn % 2 == 0:
        # Few configs hold two stops (a drawn one holds at most one): where one does, half its near-misses reorder it,
        # so a record rule blind to the order of a stop list has the change it misses (HDR-5).
        field, options = _FIELDS[-1]
    start = (turn // len(_FIELDS)) % len(options)
    candidates = options[start:] + options[:start]
    if field == "stop" and current.stop is not None and len(current.stop) > 1:
        candidates = (tuple(reversed(current.stop)), *candidates)
    elif field == "stop" and current.stop is not None and len(current.stop) == 1:
        candidates = (current.stop * 2, *candidates)  # the same stop twice: a list, not a set (HDR-5)
    value: Any = next((v for v in candidates if v != getattr(current, field)), getattr(current, field))
    return replace(current, **{field: value})


def _parameters(schema: FrozenMap) -> FrozenMap:
    """A tool schema's parameters object (empty when it has none)."""
    parameters = schema.get("parameters")
    return parameters if isinstance(parameters, FrozenMap) else FrozenMap({})


def _post_step_pressure(world: World, reply: Reply) -> JsonValue:
    """The pressure the model's post-step measures after ``reply``, or None where no post-step follows it (a cancel or a
    dispose is waiting, or tool calls run first)."""
    post_step = PostStep(reply.instance)
    if not enabled(world, reply) or not enabled(replied := apply(world, reply), post_step):
        return None
    measured = [m.value for m in apply(replied, post_step).trace[len(world.trace) :] if m.kind == "measured"]
    return measured[0] if measured else None


def _tail_sized(world: World, reply: Reply, retain: int) -> Reply:
    """Where the step's post-step presses whatever its answer: the answer sized so that its node is priced at the retained
    tail's budget exactly, so the service keeps that answer alone, and one whose budget is a token more (the window times
    the ratio rounded, or left unfloored: CMP-3) keeps the node before it too. Sized by the model (the reply applied, the
    answer's node priced, as ``pressing`` reads the pressure); the reply as drawn where no size prices it so."""
    return _sized(reply, retain, lambda answer: _answer_price(world, answer), _answer_price(world, replace(reply, text="word")))


def _sized(reply: Reply, target: int, price: Callable[[Reply], JsonValue], first: JsonValue) -> Reply:
    """``reply`` with its text sized so that the model's ``price`` of it is ``target``: read off ``first``, the price of a
    one-word text, each four-character word one token more, and checked; the reply as drawn where no size prices it so."""
    if not isinstance(first, int) or target - first + 1 < 1:
        return reply
    sized = replace(reply, text="word" * (target - first + 1))
    return sized if price(sized) == target else reply


def _answer_price(world: World, reply: Reply) -> int | None:
    """The model's price of the node ``reply``'s answer lands as, or None where it lands as none."""
    if not enabled(world, reply):
        return None
    log = apply(world, reply).log_of(reply.instance)
    last = log.surface.nodes[-1] if log.surface.nodes else None
    return node_prices(log)[-1] if last is not None and log.events[last].type == ASSISTANT_MESSAGE else None


def _failed_finish(k: int, code: str, message: str) -> FrozenMap:
    """The ``k``-th failed finish a provider sends: an error one and an aborted one in turn, whose failure carries
    ``{message, code}``, then a status as well, then a retry hint and a request id too. The request fails as a thrown
    error fails it, with the failure ``LlmError`` keeps of these facts (STRM-4, LOOP-9)."""
    failure: dict[str, JsonValue] = {"message": message, "code": code}
    failure |= {"status": (529, 499)[k % 2]} if k % 3 else {}
    failure |= {"providerRetryAfterMs": 1500, "requestId": f"req-{k}"} if k % 3 == 2 else {}
    return failed_finish(("error", "aborted")[k % 2], failure)


def _reasoning(text: str) -> tuple[FrozenMap, ...]:
    """A reasoning block streamed at index 0 in one delta, as a reasoning model's adapter streams it before its answer."""
    chunks = ({"type": "block-start", "index": 0, "blockType": "reasoning"}, {"type": "reasoning-delta", "index": 0, "text": text})
    return tuple(freeze_object(c) for c in (*chunks, {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": text}}))


@dataclass(frozen=True, slots=True)
class Move:
    """One candidate: the action and the family it is weighed by."""

    action: Action
    family: str


def _logged(world: World, instance: Instance) -> list[EpochHeader]:
    """The header snapshots the log of ``instance``'s session holds, in order."""
    return [header_of(e) for e in world.log_of(instance.id).events if e.type == REQUEST_HEADER]


def _earlier(logged: list[EpochHeader], field: str, current: object, offered: int, every: int) -> Any:
    """For one ``offered`` in ``every``, a value of header ``field`` that ``logged`` holds, non-empty and other than
    ``current`` (the one after in turn, by the count); else None."""
    earlier = [x for x in (getattr(h, field) for h in logged) if x and x != current]
    return earlier[offered // every % len(earlier)] if earlier and offered % every == 0 else None


class Grammar:
    """Draws actions over the whole language; every draw comes from the ``random.Random`` it is given."""

    def __init__(self, rng: random.Random, offered: frozenset[str] | None = None, providers: tuple[str, ...] = (PROVIDER,)) -> None:
        self.rng = rng
        self.offered = offered  # the action names the adapter's hello offers (None: every one)
        self.providers = providers  # the scripted fake's routes the adapter's hello lists, the one every adapter routes first
        self._made = 0  # a counter that makes every drawn text distinct within a script
        self._offers: Counter[str] = Counter()  # the variants picked by a count of their own (``_offer``)

    def _offer(self, variant: str) -> int:
        """Count one more chance at ``variant`` and return the count: a plain restart, a split tool pair, an aimed
        window, a sized reply, a reasoning answer are picked by it (every other one, two in five), never by a random
        draw, so the random stream, and with it every other script of a seed, stays as it was before they existed."""
        self._offers[variant] += 1
        return self._offers[variant]

    # --- small draws ---

    def _tag(self) -> int:
        self._made += 1
        return self._made

    def _call(self, names: list[str]) -> tuple[str, str]:
        """A call's id and tool: one of ``names``, or for one call in ten (by its tag, so the draws are those of a
        campaign without it) a tool no set holds."""
        tag, name = self._tag(), self.rng.choice(names)
        return f"c{tag}", UNHELD if tag % 10 == 9 else name

    def text(self, stem: str = "t") -> str:
        """A short text, or now and then a long one (a compaction then has something to shrink); every third one ends
        in JSON's edge characters (escapes, U+2028, non-ASCII, a character past U+FFFF that JavaScript counts as two)."""
        if self.rng.random() < 0.15:
            return _LONG * self.rng.randint(2, 6) + f"#{self._tag()}" + self._edged()
        return f"{stem}{self._tag()}" + self._edged()

    def _edged(self) -> str:
        """Every third text drawn: a tail of edge characters, which a meter that counts code points (or prices
        escaped ASCII) prices otherwise than the harness (TOK-2, JSON-4)."""
        return f" {EDGE_TEXT}" if self._offer("edge") % 3 == 0 else ""

    def message(self, who: str, version: int) -> FrozenMap:
        # Now and then two listeners (or two calls) contribute the very same message.
        if self.rng.random() < 0.1:
            return text_message(f"<shared prefix {self.rng.randint(1, 2)}>")
        return self._blocks(text_message(f"<prefix {who} v{version}>" + self._edged(), self.rng.choice(ROLES)))

    def _blocks(self, message: FrozenMap) -> FrozenMap:
        """Every other contributed message, in turn: one more block of a type a plugin merged in (priced by its JSON
        text, TOK-2), of reasoning, or of a tool call; an assistant's carries its provenance (the ``Message`` type's
        own member); one in ten carries no block at all. A prefix is sent and logged as contributed, member for member,
        an empty one too (PFX-3)."""
        kind = self._offer("blocks")
        if kind % 10 == 5:
            return FrozenMap(dict(message.items()) | {"content": ()})
        if kind % 2:
            return message
        extra = (
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "reasoning", "text": "considering the plan"},
            {"type": "tool-call", "id": f"p{kind}", "name": "read", "arguments": '{"path":"notes.md"}'},
        )[kind // 2 % 3]
        content = message.get("content")
        fields: dict[str, JsonValue] = dict(message.items()) | {"content": (*(content if isinstance(content, tuple) else ()), freeze(extra))}
        if message.get("role") == "assistant":
            fields["provenance"] = freeze({"provider": PROVIDER, "model": "mock-model"})
        return FrozenMap(fields)

    def messages(self, who: str, version: int) -> tuple[FrozenMap, ...]:
        count = 1 if self.rng.random() < 0.8 else 2
        return tuple(self.message(f"{who}.{k}" if k else who, version) for k in range(count))

    def call(self, who: str, version: int) -> ListenerCall:
        """One scripted listener call; most prepend, every one contributes a version of its own."""
        roll = self.rng.random()
        mine = self.messages(who, version)
        if roll < 0.55:
            return Prepend(mine)
        if roll < 0.70:
            return Append(mine)
        if roll < 0.78:
            return InjectThenPrepend(f"{who} note {version}", mine, self.source(), self.meta())
        if roll < 0.85:
            return ShortCircuit(mine)
        if roll < 0.93:
            return self.thrown()
        return CancelThenPrepend(mine)

    def thrown(self) -> Throw:
        """A listener's error: half the model's default, half its own message and cause chain (repeats and empties included)."""
        if self.rng.random() < 0.5:
            return Throw()
        words = ("fetch failed", "timeout", "")
        return Throw(self.rng.choice(words), tuple(self.rng.choice(words) for _ in range(self.rng.randint(0, 2))))

    def listener(self, name: str) -> Listener:
        """A listener whose every call differs (so reuse and recomposition look different on the wire)."""
        agent = None if self.rng.random() < 0.6 else self.rng.choice(AGENTS)
        length = self.rng.choice((1, 2, 3, 4, 6))
        return Listener(name, agent, tuple(self.call(name, v) for v in range(1, length + 1)))

    def policy(self, world: World) -> CompactPolicy:
        # 405 puts the tail's product with every retain ratio past half a token (40.5, 64.8, 121.5), where no other
        # window drawn does: before it, only an aimed window could show a tail rounded rather than floored (CMP-3).
        window = self.rng.choice((None, 120, 251, 405, 800, 1601, 4000))
        threshold = self.rng.choice((0.5, 0.8, 0.9))
        retain = self.rng.choice((0.1, 0.16, 0.3))
        tokens = self.rng.choice((None, None, 0, 20, 200))
        window = self.aimed(world, window, threshold, retain if tokens is None else None)  # aimed takes no random draw
        summarizer = ("", "") if self.rng.random() < 0.7 else (self._routed(), "summary-model")
        return CompactPolicy(window, threshold, retain, tokens, summarization_provider=summarizer[0], summarization_model=summarizer[1])

    def aimed(self, world: World, window: int | None, ratio: float, retain: float | None = None) -> int | None:
        """Every other window drawn, where a session has pressure: one whose threshold sits a few tokens above the most
        pressed session's measure, so the next steps cross it and a meter that misprices by a token or two compacts a
        step early or late (TOK-1, TOK-2). Fixed windows put the threshold hundreds of tokens from any measure, where
        only a gross mispricing shows. The margin is read off the drawn window. The window is then moved up to the first
        whose product with the ratio, and with the ``retain`` ratio where the tail is priced by one, falls half a token
        or more past an integer (else with the ratio alone): the service floors both (CMP-3), and a service that rounds
        a product, or leaves it unfloored, compacts a step late at the floored threshold that ``pressing`` lands on, or
        keeps more than the answer ``_tail_sized`` prices at the floored tail."""
        if self._offer("aim") % 2 or window is None:
            return window
        pressure = max((measure(session.log).total for session in world.sessions), default=0)
        if not pressure:
            return window
        aimed = math.ceil((pressure + window % 23 + 1) / ratio)
        products = [Fraction(str(r)) for r in (ratio, retain) if r is not None]
        for wanted in (products, products[:1]) if len(products) > 1 else (products,):
            past_half = [w for w in range(aimed, aimed + 50) if all(w * r % 1 >= Fraction(1, 2) for r in wanted)]
            if past_half:
                return past_half[0]
        return aimed

    def tools(self, current: tuple[JsonValue, ...] = ()) -> tuple[JsonValue, ...]:
        """A tool list: a new one, or (half the time, when there is one) a near miss of ``current`` — never two tools of
        one name, which the harness's registry refuses (outside the domain, D-20)."""
        if current and self.rng.random() < 0.5:
            near = self.near(current)
            named = [t.get("name") for t in near if isinstance(t, FrozenMap)]
            if len(set(map(str, named))) == len(named):
                return near
        # Names of several lengths: were they all of one length, a meter that priced a name by some fixed length would pass.
        names = self.rng.sample(("echo", "read", "find_files"), self.rng.randint(0, 2))
        return tuple(self.schema(n, " (v2)" if self.rng.random() < 0.3 else "") for n in sorted(names))

    def schema(self, name: str, pad: str) -> JsonValue:
        """A tool schema, in turn: plain; registered in another key order with a member of its own (assembly collects
        name, description, parameters: LOOP-12); parameters holding JSON's edge numbers and integer-like keys
        (JSON-3, JSON-4: priced by their JSON text); a description of edge characters. Every third name capitalized
        (LOOP-12 sorts by code unit). Picked by counts, not draws."""
        if self._offer("capital") % 3 == 0:
            name = name.capitalize()  # sorted by code unit, "Read" before "echo" (a locale's order puts it after)
        kind, description = self._offer("schema"), f"the {name} tool{pad}"
        if kind % 4 == 2:
            return freeze({"parameters": {"type": "object", "required": []}, "x-origin": "registry", "description": description, "name": name})
        if kind % 4 == 3:
            turn = kind // 4
            keys, numbers = EDGE_KEYS[turn % 3 * 2 :][:4], EDGE_NUMBERS[turn % 4 :: 4]
            properties = {key: {"type": "number", "examples": list(numbers)} for key in keys}
            return freeze({"name": name, "description": description, "parameters": {"type": "object", "properties": properties}})
        if kind % 4 == 0:
            return freeze({"name": name, "description": f"{description} {EDGE_TEXT}", "parameters": {"type": "object"}})
        return freeze({"name": name, "description": description, "parameters": {"type": "object"}})

    def near(self, values: tuple[JsonValue, ...]) -> tuple[JsonValue, ...]:
        """``values`` changed a little: one member edited where it is an object with a string (a tool schema whose
        parameters have several keys: those keys in another order), reordered, one dropped or repeated."""
        roll, index = self.rng.random(), self.rng.randrange(len(values))
        # The same schema whose parameters list their keys in another order (a change, as JSON text: HDR-15), whichever
        # member of the list has such parameters.
        reorderable = [(k, m) for k, m in enumerate(values) if isinstance(m, FrozenMap) and len(_parameters(m)) > 1]
        if roll < 0.5 and reorderable:
            at, member = reorderable[index % len(reorderable)]
            reordered = FrozenMap({k: v for k, v in reversed(tuple(_parameters(member).items()))})
            return values[:at] + (FrozenMap({k: (reordered if k == "parameters" else v) for k, v in member.items()}),) + values[at + 1 :]
        if roll < 0.5 and isinstance(values[index], FrozenMap):
            picked = values[index]
            assert isinstance(picked, FrozenMap)
            key = next((k for k, v in picked.items() if isinstance(v, str) and k not in ("name", "role", "type")), None)
            if key is not None:
                edited = FrozenMap({k: (f"{v} (edited)" if k == key else v) for k, v in picked.items()})
                return values[:index] + (edited,) + values[index + 1 :]
        if roll < 0.7 and len(values) > 1:
            return tuple(reversed(values))
        if roll < 0.85:
            return values[:index] + values[index + 1 :]
        return values + (values[index],)

    def config(self, current: LlmCallConfig | None = None) -> LlmCallConfig:
        """A request config; every other one, where the instance has logged a header, the config in force with one
        field changed (a record rule blind to that field logs no change, and a config drawn whole changes several)."""
        model = self.rng.choice(("mock-model", "mock-model", "other-model"))
        effort = self.rng.choice((None, *_EFFORTS))
        temperature = self.rng.choice(_TEMPERATURES)
        max_tokens = self.rng.choice((None, 512))
        stop: tuple[str, ...] | None = self.rng.choice((None, ("END",)))
        offered = self._offer("near-config")
        if stop and offered % 4 == 3:  # one drawn whole in two with a stop holds two, which a later near-miss can reorder
            stop = _STOPS[0]
        # One drawn whole in thirteen (by the text counter) lacks its provider, another its model: the step fails as
        # LOOP-10 says, where an implementation that fills the empty half from the agent's options sends it.
        provider, model = ("" if self._made % 13 == 3 else PROVIDER), ("" if self._made % 13 == 7 else model)
        drawn = LlmCallConfig(provider, model, effort, temperature, max_tokens, stop)
        # Which field, and to what, is read off the text counter (a count of the script so far, not a draw): the
        # offers restart with every script, and few scripts make more than a handful.
        return drawn if current is None or offered % 2 else _one_field_changed(current, self._made)

    def _routed(self) -> str:
        """A provider for a route an action names: the adapter's routes in turn (by a count, no draw)."""
        return self.providers[self._offer("routed") % len(self.providers)]

    def _reverted(self, world: World, instance: Instance, drawn: str) -> str:
        """Every third system drawn, where the instance's session logged a system other than the one in force: that
        earlier one (a header back to an earlier snapshot is a change: the baseline is the latest, HDR-10); every fifth
        where the session logged one, none at all (present, absent, then present again: the fold takes each snapshot
        wholesale, HDR-7). Picked by counts, no random draw taken."""
        offered, logged = self._offer("revert-system"), _logged(world, instance)
        earlier = _earlier(logged, "system", instance.system, offered, 3)
        if earlier is not None:
            return str(earlier)
        return "" if logged and offered % 5 == 0 else drawn

    def _reverted_tools(self, world: World, instance: Instance) -> list[Move]:
        """Where the instance's session logged a tool list before its latest: a move that sets that earlier one again, as
        the header logged it (a record rule that remembers every tool list it logged, not the latest alone, logs no
        change for it: HDR-10). A move of its own, offered only then, so every other script draws as before; which
        earlier list, by a count."""
        logged = _logged(world, instance)
        earlier = _earlier(logged, "tools", logged[-1].tools if logged else None, self._offer("revert-tools"), 1)
        return [] if earlier is None else [Move(SetTools(instance.id, tuple(earlier)), WINDOW)]

    def _edited(self, system: str) -> str:
        """An edit of a system prompt: words added, or every third one a line break alone (a change all the same)."""
        return system + ("\n" if self._offer("edit-system") % 3 == 0 else " (edited)")

    def source(self) -> FrozenMap | None:
        return None if self.rng.random() < 0.5 else self.rng.choice(_SOURCES)

    def meta(self) -> FrozenMap | None:
        return None if self.rng.random() < 0.7 else FrozenMap({"origin": f"m{self._tag()}"})

    def summaries(self) -> tuple[str, ...]:
        """The summarizer's replies; every fifth, in turn, blank or blank to one language alone: empty, white space,
        U+FEFF (which JavaScript's trim removes and Python's strip keeps) and U+001C U+0085 (the reverse), so that a
        service that skips the blank test, or tests it by another language's rule, takes or refuses a summary the
        harness does not (CMP-6)."""
        return tuple(self._summary() for _ in range(self.rng.choice((0, 1, 1, 2))))

    def _summary(self) -> str:
        offered, tag = self._offer("summary"), self._tag()  # tagged either way: the near-miss configs read the tag count
        return _BLANKS[offered // 5 % len(_BLANKS)] if offered % 5 == 0 else f"summary {tag}"

    def positions(self, count: int) -> tuple[int, int] | None:
        if count == 0:
            return None
        start = self.rng.randrange(count)
        return start, self.rng.randrange(start, count)

    def splitting(self, log: Log, where: tuple[int, int] | None) -> tuple[int, int]:
        """Every other replacement drawn, where a tool call is open across some gap: the range moved to end at the last
        node before that gap, so the call is shadowed and its result kept — the corrupt surface a compaction must refuse
        (CMP-4), which a uniform range makes too rarely to reach under pressure."""
        assert where is not None
        picked = self._offer("split") % 2 == 0
        cuts = balanced_cuts(log)
        open_gaps = [gap for gap, balanced in enumerate(cuts) if not balanced]
        if not picked or not open_gaps:
            return where
        gap = min(open_gaps, key=lambda g: (abs(g - 1 - where[1]), g))  # the open gap nearest the drawn end
        return max(k for k in range(gap) if cuts[k] and k <= where[0]), gap - 1

    def pressing(self, world: World, reply: Reply) -> Reply:
        """Every other plain text reply where the loaded policy can press: its text sized so that the post-step pressure
        the model measures lands on the threshold or one token under it, where a meter that misprices by one token
        compacts a step late or early (TOK-1, TOK-2). Elsewhere a threshold lies tens of tokens from any measure, and
        only a gross mispricing shows. Every streamed reply with usage is sized so too, by its input tokens, so that a
        usage sum that drops a member (cache reads or writes, output) compacts late. Sized by the model itself
        (the reply and post-step applied, the pressure read from the trace). Where a cancel waits, the post-step
        measures nothing and compacts nothing: the reply is sized as if none waited, so a service that presses on a
        cancelled step compacts where the harness does not (CB/index.ts:136-141)."""
        instance = world.instance(reply.instance)
        world = world.with_instance(replace(instance, cancel=None))  # only measured: the script goes on with the cancel
        budgets = world.compaction.budgets()
        if budgets is None or reply.tool_calls or reply.failure is not None or reply.max_tokens:
            return reply
        if reply.stream is None and not reply.text:
            return reply  # an empty answer stays empty
        if reply.stream is not None:
            return self._pressing_usage(world, reply, budgets[0])
        offered = self._offer("press")
        if offered % 2:
            return reply
        target = budgets[0] - (offered // 2) % 2
        first = _post_step_pressure(world, replace(reply, text="word"))
        if isinstance(first, int) and first > target:
            return _tail_sized(world, reply, budgets[1])
        return _sized(reply, target, lambda answer: _post_step_pressure(world, answer), first)

    def _pressing_usage(self, world: World, reply: Reply, threshold: int) -> Reply:
        assert reply.stream is not None
        at = next((k for k, chunk in enumerate(reply.stream) if chunk.get("type") == "usage"), None)
        usage = None if at is None else reply.stream[at].get("usage")
        if at is None or not isinstance(usage, FrozenMap):
            return reply
        target = threshold - self._offer("press-usage") % 2  # every one it can be: usage replies are few
        members = dict(usage.items())
        if self._offer("press-usage-members") % 3:
            # Two in three carry every member the sum counts, none of them 0: a sum that leaves one out then lands under
            # the threshold (TOK-1). The others keep the members as drawn, absent or 0 among them.
            members |= {k: members.get(k) or n for k, n in (("cacheReadTokens", 7), ("cacheWriteTokens", 5), ("outputTokens", 3))}
        others = sum(v for k, v in members.items() if k != "inputTokens" and isinstance(v, int))

        stream = reply.stream

        def sized(tokens: int) -> Reply:
            chunk = freeze_object({"type": "usage", "usage": members | {"inputTokens": tokens}})
            return replace(reply, stream=stream[:at] + (chunk,) + stream[at + 1 :])

        # The usage anchors the pressure at its sum, plus what the surface grew by since the step began (an input that
        # landed while the request was out): that growth, read off a first sizing, comes off the input tokens.
        first = _post_step_pressure(world, sized(max(0, target - others)))
        tokens = target - others - (first - target if isinstance(first, int) else 0)
        if tokens < 0:
            return reply
        final = sized(tokens)
        return final if _post_step_pressure(world, final) == target else reply

    # --- a turn's segments ---

    def _landed_in_request(self, world: World, instance: Instance) -> bool:
        """Whether an input landed on the surface while the step's request was out, where compaction can press: two
        times in three the reply then carries usage. The usage anchors the surface at the step's start, not what came
        since (TOK-3), and only a usage reply sized at the threshold shows a meter that anchors it later."""
        log = world.log_of(instance.id)
        start = max((event.seq for event in log.events if event.type == STEP_START), default=len(log.events))
        landed = any(is_surface_type(event.type) for event in log.events[start:])
        return landed and world.compaction.budgets() is not None and self._offer("landed") % 3 != 0

    def reply(self, instance: Instance, with_usage: bool = False) -> Reply:
        """A reply; its tool calls name tools of the step's own set, and one call in ten a tool no set holds (LOOP-14);
        ``with_usage``, a streamed answer with usage (the same draws taken)."""
        i, roll = instance.id, self.rng.random()
        names = sorted({str(t.get("name")) for t in instance.assembled[1] if isinstance(t, FrozenMap)})
        if not names and 0.30 <= roll < 0.80:
            roll = 0.0  # no tool to call: a text answer
        if with_usage:
            roll = 0.50 + 0.12 * roll
        if roll < 0.30:
            # One text answer in eight is empty: its assistant/message holds no block, and derives to no message (DER-3).
            text = self.text("answer ")
            return Reply(i, text="" if self._offer("empty") % 8 == 0 else text)
        if roll < 0.50:
            calls = tuple((*self._call(names), json_text(FrozenMap({"text": self.text("arg")}))) for _ in range(self.rng.randint(1, 3)))
            return Reply(i, text=self.text("calling ") if self.rng.random() < 0.3 else "", tool_calls=calls)
        if roll < 0.62:
            usage = {"inputTokens": self.rng.choice((10, 200, 700, 3000)), "outputTokens": self.rng.choice((3, 40))}
            if self.rng.random() < 0.5:
                usage |= {"cacheReadTokens": self.rng.choice((0, 50, 400)), "cacheWriteTokens": self.rng.choice((0, 30))}
            text, pieces = self.text("streamed "), self.rng.randint(1, 3)
            if self._offer("reason") % 2:
                return self._streamed(i, text_stream(text, usage=usage, pieces=pieces))
            # every other one thinks first: a reasoning block before its answer (priced as text is: TOK-2)
            return self._streamed(i, _reasoning(f"thinking: {text}") + text_stream(text, index=1, usage=usage, pieces=pieces))
        if roll < 0.72:
            call = tool_call_stream(*self._call(names), json_text(FrozenMap({"text": self.text("s")})), pieces=self.rng.randint(1, 3))
            return self._streamed(i, call)
        if roll < 0.80:
            return Reply(i, text=self.text("cut "), max_tokens=True, tool_calls=((*self._call(names), "{}"),) if self.rng.random() < 0.4 else ())
        failure = self.rng.choice(("overloaded", "rate_limited", "network"))
        message, retry = f"{failure} {self._tag()}", self.rng.random() < 0.5
        n = self._offer("failure")
        if n % 3 == 0:  # the provider's own failure, streamed after a block it began (the same draws taken)
            return Reply(i, stream=(*text_stream(message, pieces=2)[:2], _failed_finish(self._made, failure, message)), retry=retry)
        return Reply(i, failure=failure, failure_message=message, retry=retry)

    def _metered_twice(self, reply: Reply) -> Reply:
        """Every third streamed reply with usage as a provider that meters as it goes sends it: a first usage chunk (the
        input, one output token) before its blocks, the whole usage last. The last one counts (STRM-3), so a meter
        that keeps the first anchors low, and a reply sized to the threshold compacts a step late. Added after the
        sizing, which the last chunk carries; picked by a count, no random draw taken."""
        last = next((c for c in reversed(reply.stream or ()) if c.get("type") == "usage"), None)
        usage = None if last is None else last.get("usage")
        if reply.stream is None or not isinstance(usage, FrozenMap) or self._offer("metered") % 3:
            return reply
        early = freeze_object({"type": "usage", "usage": {"inputTokens": usage.get("inputTokens", 0), "outputTokens": 1}})
        return replace(reply, stream=(early, *reply.stream))

    def _streamed(self, instance: int, stream: tuple[FrozenMap, ...]) -> Reply:
        """A streamed reply; every fifth one the provider fails at its end, after its blocks (a tool call assembled
        there never runs), half of those failures retried. Picked by counts, no random draw taken."""
        stream, n = self._replayed(stream), self._offer("failed-finish")
        if n % 5:
            return Reply(instance, stream=stream)
        k = self._made  # a count of the script's texts so far: the shape varies between scripts, not only within one
        finish = _failed_finish(k, ("overloaded", "cancelled", "server_error")[k % 3], f"the provider failed ({k})")
        return Reply(instance, stream=(*stream[:-1], finish), retry=k % 4 >= 2)

    def _replayed(self, stream: tuple[FrozenMap, ...]) -> tuple[FrozenMap, ...]:
        """Every other streamed reply as a provider that resumes its reasoning sends it: its finish carries a replay
        state, and one in three of those ends at max tokens instead. The assistant/message keeps the state where its
        content is what was assembled, a text answer cut short included, and drops it where a cut tool call rewrote
        the content (STRM-4); picked by a count, no random draw taken."""
        n = self._offer("replay")
        return stream if n % 2 else with_replay_state(stream, f"r{n}", "max-tokens" if n % 3 == 0 else None)

    def _segment(self, world: World, instance: Instance) -> Iterator[Action]:
        i, nodes = instance.id, len(world.log_of(instance.id).surface.nodes)
        match instance.phase:
            case Phase.STEP_BEGIN:
                yield BeginStep(i)
            case Phase.COMPOSE:
                yield Compose(i)
            case Phase.PRE_STEP:
                roll = self.rng.random()
                if roll < 0.7 or nodes == 0:
                    yield PreStep(i)
                elif roll < 0.85:
                    yield PreStep(i, compact=self.positions(nodes), summaries=self.summaries())
                else:
                    where = self.splitting(world.log_of(i), self.positions(nodes))
                    yield PreStep(i, replace=PlainReplace(where[0], where[1], self.text("replaced ")))
            case Phase.REQUEST:
                folded = fold_request_header(world.log_of(i).events) if instance.logged_header else None
                current = None if folded is None else folded.config
                config = None if self.rng.random() < 0.8 else self.config(current)
                if config is None and current is not None:
                    nudge = self._offer("nudge") % 4
                    if nudge == 0:  # one in four config-less requests: a one-field nudge
                        config = _one_field_changed(current, self._made)
                    elif nudge == 2 and len(self.providers) > 1:  # another: the provider alone
                        config = replace(current, provider=next(p for p in self.providers if p != current.provider))
                # A system prompt or tool set the step assembled anew goes out alone three times in four (the config in
                # force kept): a record rule blind to that change shows only where nothing else of the header changes.
                if folded is not None and (folded.system or "", folded.tools or ()) != instance.assembled and self._offer("alone") % 4:
                    config = None
                yield Dispatch(i, config)
            case Phase.STREAM:
                yield self._metered_twice(self.pressing(world, self.reply(instance, self._landed_in_request(world, instance))))
            case Phase.TOOLS:
                outputs = tuple(f"out {n}" for n in range(len(instance.pending_calls)))
                yield RunTools(i, outputs if self.rng.random() < 0.9 else outputs[:1])
            case Phase.POST_STEP:
                roll = self.rng.random()
                summaries = self.summaries() if roll < 0.4 else ()
                yield PostStep(i, self.positions(nodes) if 0.85 <= roll else None, summaries)

    def cancel_before_post_step(self, world: World, reply: Reply) -> list[Action]:
        """Every fourth reply that leaves its step at the post-step where a compaction service is mounted: a cancel
        before that post-step. The service's listener returns on a cancelled step (CB/index.ts:136-141); one that presses
        all the same compacts where the harness does not, and only a step cancelled once its answer landed shows it
        (cancels drawn in any window seldom meet a mounted service there). By a count, no random draw."""
        instance = world.instance(reply.instance)
        if world.compaction.budgets() is None or instance.phase is not Phase.POST_STEP or instance.cancel is not None:
            return []
        return [Cancel(reply.instance)] if self._offer("cancel-pressed") % 4 == 0 else []

    def dispose_while_composing(self, world: World, step: BeginStep) -> list[Action]:
        """Every fifth step that is to compose where a listener it collected injects on this call: a dispose before the
        waterfall runs. That listener then throws at its inject, as ``agent.inject`` on a disposed agent throws, and no
        later listener runs (PFX-10); a loop that composes for a disposed driver injects all the same. A dispose drawn
        in any window seldom falls there (one in three, tried first, ended too many instances at their first step: a
        campaign reached fewer compactions). By a count, no random draw."""
        instance = world.instance(step.instance)
        if instance.phase is not Phase.COMPOSE or instance.collected is None:
            return []
        injecting = any(isinstance(l.next_call(), InjectThenPrepend) for l in world.listeners if l.name in instance.collected)
        return [Dispose(step.instance)] if injecting and self._offer("dispose-composing") % 5 == 0 else []

    def burst(self, i: int, count: int) -> list[Action]:
        """``count`` inputs to instance ``i``, injects and steers mixed, to send at once: the order of inputs that wait
        (injects for a tool batch to settle, steering for a checkpoint) shows only where several meet in one window."""
        return [self.inject(i) if self.rng.random() < 0.5 else self.steer(i) for _ in range(count)]

    def inject(self, i: int, stem: str = "inject ") -> Inject:
        """An inject to instance ``i``: a text, now and then a source and meta of its own."""
        return Inject(i, self.text(stem), self.source(), self.meta())

    def steer(self, i: int) -> Steer:
        """A steer to instance ``i``."""
        return Steer(i, self.text("steer "))

    def prompt(self, i: int) -> SendPrompt:
        roll = self.rng.random()
        if roll < 0.75:
            return SendPrompt(i, self.text("prompt "))
        if roll < 0.85:
            return SendPrompt(i, self.text("blocked "), blocked=True, block_reason=self.rng.choice((BLOCKED, "policy: needs approval")))
        contexts = tuple(PromptContext(self.text("context "), *(s for s in (self.source(),) if s is not None)) for _ in range(self.rng.randint(0, 2)))
        prefix = tuple(PromptContext(self.text("pre ")) for _ in range(self.rng.randint(0, 1)))
        return SendPrompt(i, self.text("prompt "), contexts=contexts, prompt_prefix=prefix)

    # --- every family ---

    def candidates(self, world: World) -> list[Move]:
        """Return moves for ``world``, each tagged with its family (a few may still be refused: ``hostile`` aims at those)."""
        moves: list[Move] = []
        live = [inst for inst in world.instances if not inst.disposed or inst.turn_open]
        for instance in live:
            if instance.turn_open:
                moves += [Move(a, DRIVE) for a in self._segment(world, instance)]
            elif not instance.disposed:
                moves.append(Move(self.prompt(instance.id), START))
                moves.append(Move(self.inject(instance.id, "one-shot "), START if self.rng.random() < 0.3 else WINDOW))
                moves.append(Move(self.steer(instance.id), WINDOW))
        active = [inst for inst in world.instances if not inst.disposed]
        if active:
            instance = self.rng.choice(active)
            i = instance.id
            moves += [
                Move(self.inject(i), WINDOW),
                Move(self.steer(i), WINDOW),
                Move(Cancel(i), WINDOW),
                Move(SetSystem(i, self._reverted(world, instance, self._edited(instance.system) if instance.system and self.rng.random() < 0.5 else self.text("system "))), WINDOW),
                Move(SetTools(i, self.tools(instance.tools)), WINDOW),
                *self._reverted_tools(world, instance),
            ]
            if instance.turn_open:
                moves.append(Move(self.prompt(i), WINDOW))  # queued behind the open turn
            if self.rng.random() < 0.3:
                moves.append(Move(Dispose(i), WINDOW))
        if world.listeners:
            listener = self.rng.choice(world.listeners)
            held = next((c.messages for c in listener.script if not isinstance(c, Throw) and c.messages), ())
            near = tuple(m for m in self.near(held) if isinstance(m, FrozenMap)) if held else ()
            mutated = near if near and self.rng.random() < 0.5 else self.messages(listener.name + "*", self._tag())
            moves.append(Move(MutateContribution(listener.name, mutated), WINDOW))
        moves += self._boundaries(world)
        return [m for m in moves if self.offered is None or type(m.action).__name__ in self.offered]

    def create(self, world: World) -> Create | None:
        taken = {s.id for s in world.sessions}
        free = [s for s in SESSIONS if s not in taken]
        if not free:
            return None
        # Now and then a route with no model, no provider, or neither: its requests fail (LOOP-10), an implementation
        # that fills the empty half from a default sends them, and with no request routed a compaction has only these
        # options to fall back on, which name no summarizer (CB/region.ts's throw). Picked by the same roll.
        roll = self.rng.random()
        options = AgentOptions() if roll < 0.8 else AgentOptions(self._routed(), "other-model")
        if roll >= 0.95:  # the last twentieth of the roll, in thirds
            options = (replace(options, model=""), AgentOptions("", "mock-model"), AgentOptions("", ""))[int((roll - 0.95) * 60)]
        return Create(self.rng.choice(AGENTS), free[0], options, self.text("You are careful. ") if self.rng.random() < 0.7 else "", self.tools())

    def _boundaries(self, world: World) -> list[Move]:
        moves: list[Move] = []
        unregistered = [n for n in LISTENERS if n not in {known.name for known in world.listeners}]
        if unregistered:
            moves.append(Move(Register(self.listener(self.rng.choice(unregistered))), BOUNDARY))
        if self.rng.random() < 0.2:
            moves.append(Move(MountCompaction(self.policy(world)), BOUNDARY))
        created = self.create(world)
        if created is not None and len(world.instances) < 5:
            moves.append(Move(created, BOUNDARY))
        for session in world.sessions:
            if not session.log.events:
                continue
            agent = self.rng.choice(AGENTS)
            drivers = [i for i in world.instances if i.session_id == session.id]
            # Now and then a plain restart: the last driver's agent, options, system and tools, so that the new
            # instance's anchor may equal the header the log already folds to (the commonest resume, and the one where
            # an implementation that skips an "unchanged" anchor shows).
            # Two offers in five (``_offer``).
            same = drivers[-1] if self._offer("restart") % 5 in (1, 3) and drivers else None
            if all(not i.turn_open for i in drivers):
                resume = Resume(session.id, agent, AgentOptions(), self.text("You are careful. "), self.tools())
                if same is not None:
                    resume = Resume(session.id, same.agent, same.options, same.system, same.tools)
                moves.append(Move(resume, BOUNDARY))
            free = [s for s in SESSIONS if s not in {x.id for x in world.sessions}]
            ends = [e.seq for e in session.log.events if e.type == TURN_END]
            if free and ends:
                boundary = None if self.rng.random() < 0.5 else self.rng.choice(ends)
                fork = ForkDrive(session.id, free[0], boundary, agent, system=self.text("Forked. "), tools=self.tools())
                if same is not None:
                    fork = ForkDrive(session.id, free[0], boundary, same.agent, same.options, same.system, same.tools)
                moves.append(Move(fork, BOUNDARY))
        return moves

    # --- hostile actions (FUZZ-10) ---

    def _off_surface(self, world: World, i: int, phase: Phase) -> PreStep | PostStep:
        """A compaction at ``phase`` whose positions no surface admits, in turn: both past its last node, the end alone
        past it, the end before the start. Aimed at an instance in that phase where one is (else at ``i``), where only
        the positions can refuse it. Picked by a count and the world, no random draw taken."""
        at = next((x.id for x in world.instances if x.phase is phase), i)
        past = len(world.log_of(at).surface.nodes) if at < len(world.instances) else 0  # a position past the last node
        positions = ((past, past), (0, past), (1, 0))[self._offer("off-surface") % 3]
        return PreStep(at, compact=positions) if phase is Phase.PRE_STEP else PostStep(at, positions)

    def _target(self, world: World) -> int:
        """An instance to aim at: any one, or the id one past the last (no such instance)."""
        return self.rng.randrange(len(world.instances) + 1)

    def _gone(self, world: World) -> int:
        """An instance no input can reach: a disposed one, or the id one past the last."""
        return self.rng.choice([i.id for i in world.instances if i.disposed] + [len(world.instances)])

    def hostile(self, world: World) -> list[Action]:
        """Actions of every kind aimed where a guard may refuse them: a segment out of its phase, compaction positions off
        the surface, an input to a disposed or unknown instance, a taken or unknown session, a busy session, a fork at no
        turn's end, a listener registered twice or unknown. The grammar does not know which are refused: the generator
        keeps those ``transitions.enabled`` refuses in ``world`` (FUZZ-10)."""
        i = self._target(world)
        actions: list[Action] = [
            BeginStep(self._target(world)),
            Compose(self._target(world)),
            PreStep(self._target(world)),
            self._off_surface(world, i, Phase.PRE_STEP),
            Dispatch(self._target(world)),
            Reply(self._target(world), text=self.text("early ")),
            RunTools(self._target(world)),
            PostStep(self._target(world)),
            self._off_surface(world, i, Phase.POST_STEP),
            SendPrompt(self._gone(world), self.text("prompt ")),
            SendPrompt(self._target(world), self.text("allowed "), block_reason="a reason with no block"),
            self.inject(self._gone(world)),
            self.steer(self._gone(world)),
            Cancel(self._gone(world)),
            Dispose(self._gone(world)),
            SetSystem(self._gone(world), self.text("system ")),
            SetTools(self._gone(world), self.tools()),
            Resume("s9", self.rng.choice(AGENTS)),
            ForkDrive("nowhere", "s9", None, self.rng.choice(AGENTS)),
            MutateContribution(self.rng.choice(("nobody", *LISTENERS)), self.messages("nobody", self._tag())),
        ]
        free = [s for s in SESSIONS if s not in {x.id for x in world.sessions}]
        for session in world.sessions:
            agent = self.rng.choice(AGENTS)
            actions += [Create(agent, session.id, tools=self.tools()), Resume(session.id, agent, tools=self.tools())]
            others = [e.seq for e in session.log.events if e.type != TURN_END] + [len(session.log.events)]
            actions.append(ForkDrive(session.id, free[0] if free else "s9", self.rng.choice(others), agent, system=self.text("Forked. ")))
            actions.append(ForkDrive(session.id, self.rng.choice([x.id for x in world.sessions]), None, agent))
        if world.listeners:
            actions.append(Register(self.listener(self.rng.choice(world.listeners).name)))
        return actions
