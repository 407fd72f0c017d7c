"""spec/vectors.md — conformance vectors: generated twice byte for byte, audited, and consumed.

The vectors are generated once per test process (``published`` in tests/edge/conftest.py; and, for the byte-for-byte
test, at the same time in a second interpreter with another hash seed: ``generated``); the tests then read what was
written, as a consumer in another language would.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from prefix_model import __version__
from prefix_model.core.json_values import freeze, json_text
from prefix_model.edge.checker import check_log
from prefix_model.edge.formats.events_jsonl import LogReadError
from prefix_model.edge.formats.session_jsonl import LogStream
from prefix_model.vectors import FORMAT_VERSION, MANIFEST_SCHEMA, VECTOR_SCHEMA
from prefix_model.edge.vectors import generate as generator
from prefix_model.vectors.cases import (
    FILE_BASE,
    PENDING_MODEL_BUGS,
    LogCase,
    capture_lines,
    case_text,
    catalogue,
    log_lines,
    pending_cases,
    world_of,
    wrapped_capture_lines,
)
from prefix_model.vectors.codec import ACTION_TYPES, CALL_TYPES, SPARSE, action_to_json, camel
from prefix_model.edge.runner.consumer import (
    ABSENT,
    ActionRefused,
    FileRead,
    JsonObject,
    ModelAdapter,
    ModelChecker,
    ModelReader,
    Problem,
    Unreadable,
    consume,
    consume_report,
    load_cases,
    pointer,
    replay,
)
from prefix_model.edge.runner.client import AdapterFailure
from prefix_model.edge.vectors.generate import (
    WITNESS_FORMS,
    Witness,
    audit,
    declared,
    generate,
    manifest_text,
)
from prefix_model.vectors.persisted import clocked, file_bytes
from prefix_model.formats.event_lines import event_to_json
from prefix_model.vectors.scenarios import Scenario, play, scenarios
from prefix_model.loop.actions import Action
from prefix_model.loop.variants import VARIANTS, Variant


ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "SPEC.md"
SCHEMAS = ROOT / "spec" / "schema"
VECTORS_MD = ROOT / "spec" / "vectors.md"
EXAMPLE_MARK = "<!-- worked-example: loop/no-listener -->\n```json\n"
RULES = declared(SPEC.read_text(encoding="utf-8"))  # each requirement with what its vectors witness

# The smallest scenario that each faulty variant (spec §13) fails when it is the adapter; None
# for the variants that change only the token meter, whose pressure no vector shows (TOK-*, exempt).
CAUGHT_BY: dict[str, str | None] = {
    "prefix-as-history": "prefix/inject-while-composing",
    "prefix-in-reminder": "prefix/one-listener",
    "prefix-second-home": "prefix/one-listener",
    "stale-on-new-instance": "resume/changed-prefix",
    "compose-per-request": "loop/request-error-retry",
    "compose-per-turn": "loop/request-error-no-retry",
    "cache-interrupted": "cancel/during-compose-then-new-turn",
    "prefix-not-logged": "prefix/inject-while-composing",
    "prefix-after-history": "prefix/inject-while-composing",
    "prefix-in-system": "prefix/inject-while-composing",
    "no-resume-anchor": "resume/changed-prefix",
    "empty-prefix-logged": "loop/max-tokens",
    "boundary-after-step-start": "inject/between-step-start-and-header",
    "compose-after-pre-step": "loop/max-tokens",
    "listeners-reversed": "prefix/append-reverses",
    "compaction-drops-prefix": "compaction/post-step-listener",
    "compaction-logs-header": "compaction/post-step-listener",
    "meter-misses-prefix": None,
    "meter-double-prefix": None,
    "no-change-on-system": "header/system-change-between-steps",
    "cache-by-reference": "prompt/blocked-then-allowed",
    "effort-from-options": "header/config-change-sticks",
    "fork-drops-headers": "fork/new-agent",
    "history-window": "prefix/throw-then-recover",
    "change-always": "loop/request-error-retry",
}


def load(directory: Path, case_id: str) -> JsonObject:
    value = json.loads((directory / case_id / "case.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def schema(name: str) -> jsonschema.Draft202012Validator:
    loaded = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(loaded)
    return jsonschema.Draft202012Validator(loaded)


# --- VEC-1: the files, byte for byte ---


@pytest.mark.spec("VEC-1")
def test_two_runs_write_the_same_bytes_and_the_manifest_hashes_every_file(generated: tuple[Path, Path]) -> None:
    here, there = generated
    written, again = files(here), files(there)
    assert sorted(written) == sorted(again)
    assert [name for name in written if written[name] != again[name]] == []
    manifest = json.loads(written["manifest.json"])
    ids = [entry["id"] for entry in manifest["cases"]]
    assert ids == sorted(ids) == sorted(c.id for c in catalogue()) and len(set(ids)) == len(ids)
    others = [entry["file"] for entry in manifest["files"]]
    assert others == sorted(others) and "README.md" in others  # the rest is tests/edge/test_bundle.py's business
    assert set(written) == {entry["file"] for entry in manifest["cases"]} | set(others) | {"manifest.json"}
    for entry in manifest["cases"]:
        assert entry["file"] == f"{entry['id']}/case.json"
    for entry in manifest["cases"] + manifest["files"]:
        assert hashlib.sha256(written[entry["file"]]).hexdigest() == entry["sha256"]
    assert (manifest["modelVersion"], manifest["formatVersion"], manifest["schema"]) == (__version__, FORMAT_VERSION, MANIFEST_SCHEMA)
    for name, data in written.items():
        text = data.decode("utf-8")
        assert not text.endswith("\n\n") and "\r" not in text, name
        assert text.endswith("}\n") or name not in [entry["file"] for entry in manifest["cases"]] + ["manifest.json"], name


@pytest.mark.spec("VEC-1")
def test_regenerating_into_the_same_directory_rewrites_it_and_a_foreign_directory_is_refused(
    published: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "vectors"
    shutil.copytree(published, target)
    stale = target / "loop" / "retired-case" / "case.json"
    stale.parent.mkdir()
    stale.write_text("{}\n")
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["cases"].append({"id": "loop/retired-case", "file": "loop/retired-case/case.json", "sha256": "0" * 64})
    (target / "manifest.json").write_text(json.dumps(manifest))
    assert generate(target) == 0
    assert files(target) == files(published)  # the case the old manifest listed is gone
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert generate(foreign) == 2
    assert capsys.readouterr().err.count("\n") == 1 and (foreign / "notes.txt").read_text() == "mine"


@pytest.mark.spec("VEC-1")
def test_an_unusable_out_is_one_line_exit_2_and_nothing_is_written_outside_it(
    published: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def refused(out: Path, says: str) -> None:
        capsys.readouterr()
        assert generate(out) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and "Traceback" not in err, err

    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    refused(a_file, "is not a directory")
    refused(Path("/proc/self/prefix-model-vectors"), "/proc/self/prefix-model-vectors")  # cannot be created
    planted = tmp_path / "planted"
    shutil.copytree(published, planted)
    shutil.rmtree(planted / "invalid")
    (planted / "invalid").symlink_to(outside, target_is_directory=True)
    refused(planted, "symbolic link")
    for listed in ("manifest.json", "loop"):  # a stale manifest naming itself, or a directory
        stale = tmp_path / f"stale-{listed.split('.')[0]}"
        shutil.copytree(published, stale)
        manifest = json.loads((stale / "manifest.json").read_text())
        manifest["cases"].append({"id": "x/y", "file": listed, "sha256": "0" * 64})
        (stale / "manifest.json").write_text(json.dumps(manifest))
        refused(stale, "not a case file of earlier vectors")
        assert files(stale).keys() >= files(published).keys() - {"manifest.json"} and (stale / "manifest.json").is_file()  # nothing removed
    assert list(outside.iterdir()) == [] and a_file.read_text() == "mine"


@pytest.mark.spec("VEC-3")
def test_the_consumer_reads_only_regular_case_files_inside_the_directory_and_fails_a_malformed_case_unrun(
    published: Path, tmp_path: Path
) -> None:
    target = tmp_path / "vectors"
    shutil.copytree(published, target)
    manifest = json.loads((target / "manifest.json").read_text())
    entries = {e["id"]: e for e in manifest["cases"]}
    os.mkfifo(target / "a-pipe")
    hostile = {"a/absolute": "/dev/zero", "a/up": "../../../../dev/zero", "a/pipe": "a-pipe", "a/dir": "loop"}
    manifest["cases"] += [{"id": ident, "file": file, "sha256": "0" * 64} for ident, file in hostile.items()]
    # Malformed cases, hashed as the manifest says, each broken in another way the schema names.
    broken: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "loop/no-listener": lambda c: c | {"actions": 5},
        "loop/max-tokens": lambda c: {k: v for k, v in c.items() if k != "expected"},
        "stream/error-finish": lambda c: c | {"refused": ["two"]},
        "inject/sources-and-meta": lambda c: c | {"actions": [{"action": "Inject"}]},
        "invalid/surf-8/provenance-misses-shadowed": lambda c: c | {"log": 7},
        "persisted/zstd-frames": lambda c: c | {"file": {"bytes": None}},
    }
    for ident, breaking in broken.items():
        path = target / entries[ident]["file"]
        text = json.dumps(breaking(json.loads(path.read_text())))
        path.write_text(text)
        entries[ident]["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (target / "manifest.json").write_text(json.dumps(manifest))
    problems = {r.id: r.problems for r in consume_report(target)}
    for ident in hostile:
        assert len(problems[ident]) == 1 and ("outside the vectors directory" in problems[ident][0] or "not a regular file" in problems[ident][0]), problems[ident]
    for ident in broken:
        assert len(problems[ident]) == 1 and "not a case under vector.schema.json at /" in problems[ident][0], (ident, problems[ident])
    assert all(problems[e["id"]] == () for e in manifest["cases"] if e["id"] not in hostile and e["id"] not in broken)


@pytest.mark.spec("VEC-1")
def test_every_case_and_the_manifest_are_valid_under_their_schemas(published: Path) -> None:
    vector, manifest = schema("vector.schema.json"), schema("manifest.schema.json")
    assert list(manifest.iter_errors(json.loads((published / "manifest.json").read_text()))) == []
    for path in sorted(published.rglob("case.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        errors = [e.message for e in vector.iter_errors(case)]
        assert errors == [], (path, errors[:3])
        assert case["schema"] == VECTOR_SCHEMA
    # The schema rejects what the format forbids.
    scenario, invalid = load(published, "loop/no-listener"), load(published, "invalid/rec-1/prefix-dropped")
    timed = json.loads(json.dumps(scenario))
    timed["expected"]["sessions"]["s1"][0]["time"] = 0
    mixed = scenario | {"log": invalid["log"]}
    unnamed = {k: v for k, v in invalid.items() if k != "requirement"}
    unknown = scenario | {"actions": [{"action": "Teleport", "instance": 0}]}
    read, rejected = load(published, "persisted/torn-final-line"), load(published, "invalid/fmt-9/one-frame")
    untorn = {k: v for k, v in read.items() if k != "tornTail"}
    expecting = rejected | {"log": read["log"]}
    torn_memory = invalid | {"tornTail": 3}
    filed_scenario = scenario | {"file": read["file"]}
    not_base64 = rejected | {"file": {"encoding": "zstd", "base64": "KLUv/?"}}
    broken_line = read | {"file": read["file"] | {"lines": ["a\nb"]}}
    for wrong in (timed, mixed, unnamed, unknown, untorn, expecting, torn_memory, filed_scenario, not_base64, broken_line):
        assert list(vector.iter_errors(wrong)) != []


@pytest.mark.spec("VEC-1")
def test_the_vector_schema_spells_every_action_field_the_codec_writes() -> None:
    defs = json.loads((SCHEMAS / "vector.schema.json").read_text())["$defs"]
    for kind in ACTION_TYPES:
        # A sparse field (written only when not its default) is a property the schema names but does not require.
        written, sparse = set(action_to_json(_instance_of(kind))), {camel(name) for cls, name in SPARSE if cls is kind}
        assert set(defs[f"action{kind.__name__}"]["properties"]) == written | sparse, kind.__name__
        assert set(defs[f"action{kind.__name__}"]["required"]) == written - sparse, kind.__name__
    for call in CALL_TYPES:
        shape = next(c for c in defs["listenerCall"]["oneOf"] if call.__name__ in (c["properties"]["call"].get("enum") or [c["properties"]["call"].get("const")]))
        fields, sparse = {"call"} | {camel(f.name) for f in dataclasses.fields(call)}, {camel(name) for cls, name in SPARSE if cls is call}
        assert (set(shape["properties"]), set(shape["required"])) == (fields, fields - sparse), call.__name__


def _instance_of(kind: type) -> Action:
    return next(a for s in scenarios() for a in s.actions if type(a) is kind)


@pytest.mark.spec("VEC-1")
def test_the_worked_example_in_vectors_md_is_the_generated_case(published: Path) -> None:
    text = VECTORS_MD.read_text(encoding="utf-8")
    assert text.count(EXAMPLE_MARK) == 1
    block = text.split(EXAMPLE_MARK, 1)[1].split("```", 1)[0]
    assert block == (published / "loop" / "no-listener" / "case.json").read_text(encoding="utf-8") == generator.example_text()
    for rule in ("VEC-1", "VEC-2", "VEC-3", "VEC-4", "VEC-5", "VEC-6"):  # stated in SPEC.md, pointed to here
        assert f"- **{rule}** —" not in text and rule in text.split("## 2.", 1)[0]
    file_mark = f"<!-- worked-example: {generator.EXAMPLE_FILE_CASE} -->\n```json\n"
    assert text.count(file_mark) == 1
    block = text.split(file_mark, 1)[1].split("```", 1)[0]
    assert block == (published / generator.EXAMPLE_FILE_CASE / "case.json").read_text(encoding="utf-8") == generator.example_text(generator.EXAMPLE_FILE_CASE)
    # The prose after it: what a reader must read from two valid log files.
    torn, framed = load(published, "persisted/torn-final-line"), load(published, "persisted/zstd-frames")
    assert (torn["tornTail"], len(torn["log"]), len(framed["log"]), framed["tornTail"]) == (31, 33, 43, None)
    assert [n for n, line in enumerate(torn["file"]["lines"], 1) if '-chunks","seq0"' in line] == [11, 21]
    assert "inside line 31" in text and "the 33 events" in text and "lines 11 and 21" in text and "all 43 events" in text


# --- VEC-2: the coverage audit ---


@pytest.mark.spec("VEC-2")
def test_the_coverage_audit_passes_on_the_catalogue() -> None:
    assert len(RULES) >= 100
    assert audit(catalogue(), RULES, pending_cases()) == []
    invalid = {c.requirement for c in catalogue() if isinstance(c, LogCase) and c.requirement}
    breakable = {r for r, w in RULES.items() if w.invalid}
    assert breakable - invalid == {c.requirement for c in pending_cases()} - invalid


@pytest.mark.spec("VEC-2", "LOG-2", "REC-1")
def test_the_audit_names_what_a_thinner_catalogue_or_a_larger_spec_misses() -> None:
    no_gap = [c for c in catalogue() if not (isinstance(c, LogCase) and c.requirement == "LOG-2")]
    assert audit(no_gap, RULES, pending_cases()) == ["requirements declaring an invalid case that have none: LOG-2"]
    no_rec = [replace(c, requirements=tuple(r for r in c.requirements if r != "REC-1")) for c in catalogue()]
    assert audit(no_rec, RULES, pending_cases()) == ["requirements no valid case lists: REC-1"]
    assert audit(catalogue(), {**RULES, "ZZZ-1": Witness()}, pending_cases()) == ["requirements no valid case lists: ZZZ-1"]
    assert audit(catalogue(), {**RULES, "ZZZ-1": Witness(False, True, "only rejects")}, pending_cases()) == [
        "requirements declaring an invalid case that have none: ZZZ-1"
    ]
    assert audit(catalogue(), {**RULES, "ZZZ-1": Witness(False, False, "no vector can")}, pending_cases()) == []
    stray = Scenario("loop/stray", "names an unknown ID", ("NOPE-1",), ())
    assert audit(list(catalogue()) + [stray], RULES, pending_cases()) == ["cases name requirements the spec lacks: NOPE-1"]


@pytest.mark.spec("VEC-2")
@pytest.mark.parametrize(
    "entry, says",
    [
        ("- **ZZZ-9** — A requirement no case exercises.", "no valid case lists: ZZZ-9"),
        ("- **ZZZ-9** — A rule.\n  More of it. [vectors: both]", "ZZZ-9: [vectors: both] is none of"),
        ("- **ZZZ-9** — A rule. [vectors: none]", "ZZZ-9: [vectors: none] says why"),
        ("- **ZZZ-9** — A rule. [vectors: valid, invalid — a reason where none is due]", "ZZZ-9: [vectors: valid, invalid] says why"),
        ("- **ZZZ-9** — A rule [vectors: none — misplaced, before its end]\n  (its citation).", "ZZZ-9: a [vectors: …] declaration must end"),
    ],
)
def test_generation_fails_in_one_line_naming_the_missing_ids_and_writes_nothing(
    entry: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_text(SPEC.read_text(encoding="utf-8") + f"\n{entry}\n", encoding="utf-8")
    monkeypatch.setattr(generator, "SPEC_PATH", spec)
    out = tmp_path / "out"
    assert generate(out) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and says in captured.err
    assert not out.exists()


@pytest.mark.spec("VEC-2")
def test_vectors_md_states_the_declarations_the_audit_reads() -> None:
    text = VECTORS_MD.read_text(encoding="utf-8")
    section = text[text.index("## 7. The coverage audit") : text.index("## 8.")]
    stated = set(re.findall(r"`\[vectors: ([^\]—`]*?)(?: — [^\]`]*)?\]`", section))
    assert stated == set(WITNESS_FORMS)


@pytest.mark.spec("VEC-2")
def test_each_declaration_without_a_valid_case_says_why() -> None:
    unlisted = {r: w.why for r, w in RULES.items() if not w.valid}
    assert all(len(why) > 20 for why in unlisted.values()), unlisted
    assert {"CLI-1", "D-1", "TOK-1", "JSON-7", "FMT-5", "CHK-1"} <= {r for r, w in RULES.items() if not w.invalid and not w.valid}
    assert {"JSON-2", "LOG-7", "LOG-8"} <= {r for r, w in RULES.items() if w.invalid and not w.valid}
    assert not {"FMT-6", "FMT-7", "FMT-8", "FMT-9", "FMT-10"} & set(unlisted)  # log files carry the persisted form


@pytest.mark.spec("INST-1", "INST-2", "INST-3", "CAP-1")
def test_every_scenario_with_each_request_naming_its_instance_draws_no_finding() -> None:
    """The re-check of generation (every scenario's own log and capture pass), with the capture naming instances."""
    checker, named = ModelChecker(), 0
    for scenario in scenarios():
        world = world_of(scenario.id)
        for session in (s for s in world.sessions if s.log.events):
            capture = wrapped_capture_lines(world, session.id, instances=True)
            named += len(capture)
            assert checker.check(session.id, log_lines(world, session.id), capture or None) == set(), (scenario.id, session.id)
    assert named > 100


@pytest.mark.spec("INST-1", "INST-2", "INST-3")
def test_each_instance_case_is_rejected_only_for_the_instances_its_capture_names() -> None:
    """The capture's instances are what rejects each case: without them the log and capture pass, or draw the log-only reading."""
    checker = ModelChecker()
    cases = {c.id: c for c in catalogue() if isinstance(c, LogCase) and c.capture is not None and '"instance":' in c.capture[0]}
    log_only = {"invalid/inst-3/change-hides-a-new-instances-recomposition": {"PFX-3"}}
    assert {c.requirement for c in cases.values()} == {None, "INST-1", "INST-2", "INST-3"} and len(cases) == 5
    for case in cases.values():
        assert case.capture is not None
        found = checker.check(case.session, case.log, case.capture)
        assert found == (set() if case.requirement is None else {case.requirement} | ({"INST-1"} if case.requirement == "INST-2" else set())), case.id
        unnamed = [json_text(freeze(_without_instance(json.loads(line)))) for line in case.capture]
        assert checker.check(case.session, case.log, unnamed) == log_only.get(case.id, set()), case.id


def _without_instance(line: dict[str, Any]) -> dict[str, Any]:
    return line | {"capture": {k: v for k, v in line["capture"].items() if k != "instance"}}


# --- VEC-3: the reference consumer ---


@pytest.mark.spec("VEC-3")
def test_the_reference_consumer_passes_every_vector(published: Path) -> None:
    results = consume_report(published)
    assert [(r.id, r.problems) for r in results if not r.passed] == []
    assert len(results) == len(catalogue())


@pytest.mark.spec("VEC-3", "REC-1")
def test_a_tampered_vector_fails_with_a_clear_mismatch(published: Path, tmp_path: Path) -> None:
    case_id = "loop/no-listener"
    original = (published / case_id / "case.json").read_text(encoding="utf-8")

    def write(text: str, sha: str | None = None) -> tuple[str, ...]:
        path = tmp_path / case_id / "case.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        digest = sha or hashlib.sha256(text.encode("utf-8")).hexdigest()
        (tmp_path / "manifest.json").write_text(manifest_text([(case_id, f"{case_id}/case.json", digest)]), encoding="utf-8")
        [result] = consume_report(tmp_path)
        return result.problems

    assert write(original) == () and consume(tmp_path) == (1, 0)
    event = '{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"hello"}]'
    assert original.count(event) == 1
    tampered = original.replace(event, event.replace("hello", "hullo"))
    [altered] = write(tampered, hashlib.sha256(original.encode("utf-8")).hexdigest())
    assert "sha256" in altered and consume(tmp_path) == (0, 1)
    [mismatch] = write(tampered)
    # The first difference, as an RFC 6901 pointer into the case file, with both values there.
    assert mismatch.splitlines() == ["session s1 event 1 differs at /expected/sessions/s1/1/data/content/0/text:", '    expected "hullo"', '    actual   "hello"']
    assert isinstance(mismatch, Problem) and (mismatch.pointer, mismatch.expected, mismatch.actual) == ("/expected/sessions/s1/1/data/content/0/text", "hullo", "hello")
    record = original.splitlines()[next(n for n, line in enumerate(original.splitlines()) if '"loopRequest"' in line)]
    [missing] = write(original.replace(record + "\n", "").replace('"requests": [\n  ]', '"requests": []'))
    assert missing.startswith("request 0: not expected, got ") and isinstance(missing, Problem)
    assert missing.pointer == "/expected/requests/0" and missing.expected is ABSENT and missing.actual["session"] == "s1"
    assert pointer(("a/b", "c~d", 0)) == "/a~1b/c~0d/0"


@pytest.mark.spec("VEC-3", "LOG-9", "LOG-2")
def test_a_log_case_run_the_other_way_fails(published: Path) -> None:
    for case in (c for c in catalogue() if isinstance(c, LogCase)):
        value = load(published, case.id)
        if case.valid:
            flipped = value | {"valid": False, "requirement": case.requirements[0]}
            assert replay(flipped, ModelAdapter()) != [], case.id
        else:
            flipped = {k: v for k, v in value.items() if k != "requirement"} | {"valid": True}
            [problem] = replay(flipped, ModelAdapter())
            if case.file is None:
                assert problem.startswith("the checker reports [") and f"'{case.requirement}'" in problem, case.id
            else:
                assert problem.startswith(f"the reader rejects a file it must read ({case.requirement}: "), case.id


class Lenient(ModelAdapter):
    """An implementation that takes every action, its guard or not (it skips the disabled ones)."""

    def apply(self, action: JsonObject) -> None:
        try:
            super().apply(action)
        except ActionRefused:
            pass


class Rewriting(ModelAdapter):
    """An implementation whose log changes an earlier event after the fourth action."""

    calls = 0

    def logs(self) -> dict[str, list[JsonObject]]:
        self.calls += 1
        shown = super().logs()
        if self.calls > 4 and shown.get("s1"):
            shown["s1"][0] = shown["s1"][0] | {"seq": 99}
        return shown


class Stubborn(ModelAdapter):
    """An implementation that refuses to compose."""

    def apply(self, action: JsonObject) -> None:
        if action.get("action") == "Compose":
            raise ActionRefused("no waterfall here")
        super().apply(action)


class Broken(ModelAdapter):
    """An implementation that crashes on a reply."""

    def apply(self, action: JsonObject) -> None:
        if action.get("action") == "Reply":
            raise RuntimeError("stream closed")
        super().apply(action)


class Hanging(ModelAdapter):
    """An adapter process that stops answering on a reply, as the runner's client reports it."""

    def apply(self, action: JsonObject) -> None:
        if action.get("action") == "Reply":
            raise AdapterFailure("apply: no response within 2 s")
        super().apply(action)


class Forgetful(ModelAdapter):
    """An implementation that shows no session."""

    def logs(self) -> dict[str, list[JsonObject]]:
        return {}


@pytest.mark.spec("VEC-1")
def test_vectors_md_names_the_format_and_model_versions_the_generator_writes() -> None:
    # Its status line said format version 2 while the cases, the manifest and the rest of the page said 3.
    text = " ".join(VECTORS_MD.read_text(encoding="utf-8").split())
    status = re.search(r"for model version (\S+), vector format version (\d+)\.", text)
    assert status is not None and status.groups() == (__version__, str(FORMAT_VERSION))
    stated = re.findall(r"format version (\d+)|`formatVersion` is (?:not )?(\d+)", text)
    assert len(stated) >= 3 and {a or b for a, b in stated} == {str(FORMAT_VERSION)}


@pytest.mark.spec("VEC-3")
def test_replay_words_its_problems_without_python(published: Path, tmp_path: Path) -> None:
    # JSON lists, not Python's; an adapter process's failure in its own words, not under a Python class name.
    plain = load(published, "loop/no-listener")
    assert replay(plain, Forgetful())[0] == 'sessions: expected ["s1"], got []'
    assert replay(plain, Hanging()) == ["action 6 (Reply) failed: apply: no response within 2 s"]
    assert replay(plain | {"formatVersion": "3"}, ModelAdapter()) == ['format version "3" is not 3']
    (tmp_path / "manifest.json").write_text(json.dumps({"cases": [], "formatVersion": "3"}), encoding="utf-8")
    assert load_cases(tmp_path) == [("manifest.json", None, ('format version "3" is not 3',))]


@pytest.mark.spec("VEC-3", "LOOP-1", "LOG-4", "LOOP-2")
def test_replay_reports_an_adapter_that_ignores_a_guard_rewrites_its_log_refuses_or_crashes(published: Path) -> None:
    guards, plain = load(published, "loop/guards-refuse"), load(published, "loop/no-listener")
    assert replay(guards, ModelAdapter()) == [] and replay(plain, ModelAdapter()) == []
    assert replay(guards, Lenient()) == ["action 4 (Dispatch) must be refused (its guard does not hold) but was applied (LOOP-1)"]
    [rewritten] = replay(plain, Rewriting())
    assert rewritten.startswith("after action 4 (PreStep): session s1's log changed an earlier event")
    assert replay(plain, Stubborn()) == ["action 3 (Compose) was refused: no waterfall here"]
    assert replay(plain, Broken()) == ["action 6 (Reply) failed: RuntimeError: stream closed"]
    assert replay(plain | {"formatVersion": 1}, ModelAdapter()) == ["format version 1 is not 3"]  # a version-1 case: no log files


@pytest.mark.spec("VAR-1", "VEC-3")
@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_each_faulty_variant_as_an_adapter_fails_a_scenario(variant: Variant, published: Path) -> None:
    assert set(CAUGHT_BY) == {v.name for v in VARIANTS}
    case_id = CAUGHT_BY[variant.name]
    if case_id is None:  # only the meter changes: its pressure is in no log and no request
        assert variant.expected == ("TOK-1",) and not RULES["TOK-1"].valid and not RULES["TOK-1"].invalid
        return
    case = load(published, case_id)
    assert replay(case, ModelAdapter()) == []
    assert replay(case, ModelAdapter(variant.semantics)) != []


@pytest.mark.spec("VEC-3", "MATCH-2", "SURF-3")
def test_cases_held_back_for_a_model_bug_still_fail() -> None:
    """When this fails, the model was fixed: remove the case from PENDING_MODEL_BUGS to publish it."""
    assert sorted(PENDING_MODEL_BUGS) == [c.id for c in pending_cases()]
    for case in pending_cases():
        value: Any = json.loads(case_text(case))
        try:
            problems = replay(value, ModelAdapter())
        except Exception as error:  # noqa: BLE001 - a crash is one way the bug shows
            problems = [f"{type(error).__name__}: {error}"]
        assert problems != [], f"{case.id} passes now: remove it from PENDING_MODEL_BUGS"


# --- log files: the persisted form (spec/formats.md), read through the Reader protocol ---


def _file_cases() -> list[LogCase]:
    return [c for c in catalogue() if isinstance(c, LogCase) and c.file is not None]


@pytest.mark.spec("FMT-6", "FMT-7", "FMT-8", "FMT-9", "FMT-10", "VEC-2")
def test_log_files_cover_the_persisted_rules_and_the_checker_judges_each_file_as_its_case_says(
    published: Path, tmp_path: Path
) -> None:
    files = _file_cases()
    assert {c.requirement for c in files if not c.valid} == {"FMT-7", "FMT-9", "FMT-10"}
    assert {r for c in files if c.valid for r in c.requirements} == {"FMT-3", "FMT-6", "FMT-7", "FMT-8", "FMT-9", "FMT-10"}
    assert {(c.valid, c.file["encoding"]) for c in files if c.file is not None} == {(v, e) for v in (True, False) for e in ("text", "zstd")}
    for case in files:
        value = load(published, case.id)
        path = tmp_path / "session.jsonl"
        path.write_bytes(data := file_bytes(value["file"]))
        assert data.startswith(b"\x28\xb5\x2f\xfd") is (value["file"]["encoding"] == "zstd"), case.id
        if not case.valid:
            # The reader rejects the file; the checker reads on past what it can (CHK-4), or finds the file unusable.
            with pytest.raises(LogReadError) as caught:
                list(LogStream(path))
            assert caught.value.rule == case.requirement, (case.id, str(caught.value))
            try:
                judged = {rule for f in check_log(path).findings for rule in f.rules}
            except LogReadError as unusable:
                judged = {unusable.rule}
            assert case.requirement in judged, (case.id, judged)
            continue
        report = check_log(path)  # prefix-model check on the file itself, the session named by its header
        assert report.findings == [] and (report.form, report.session_id) == ("persisted", case.session), case.id
        assert report.events == len(value["log"]) and report.compressed is (value["file"]["encoding"] == "zstd"), case.id
        torn = report.torn_tail
        assert (torn is None) if case.torn_tail is None else (torn is not None and torn.startswith(f"line {case.torn_tail} (")), case.id
    # Without its header, a persisted body is in the in-memory form, where a packed row is FMT-8.
    rows = load(published, "invalid/fmt-8/packed-row-in-memory-form")
    assert sum('"type":"text-chunks"' in line or '"type":"tool-call-chunks"' in line for line in rows["log"]) == 2
    assert ModelChecker().check(rows["session"], rows["log"], None) == {"FMT-8"}


@pytest.mark.spec("FMT-8", "REC-1", "REC-2", "STRM-4")
def test_the_log_files_come_from_a_run_with_streamed_replies_and_draw_no_finding_with_its_requests() -> None:
    world = world_of(FILE_BASE)
    events = tuple(event_to_json(e) for e in world.session("s1").log.events)
    plain: list[Any] = [json.loads(json_text(e)) for e in events]
    kinds = {e["data"]["chunk"]["type"] for e in plain if e["type"] == "assistant/chunk"}
    assert {"block-start", "text-delta", "tool-call-delta", "block-end", "usage", "finish"} <= kinds
    for message in (e for e in plain if e["type"] == "assistant/message"):  # its sources: its step's chunks
        assert all(plain[s]["type"] == "assistant/chunk" for s in message["sourceEventSeqs"]) and "usage" in message["data"]
    capture = capture_lines(world, "s1")
    assert ModelChecker().check("s1", [json_text(e) for e in clocked(events)], capture) == set()


class Untorn(ModelReader):
    """A reader that never reports a torn tail."""

    def read(self, data: bytes) -> FileRead:
        return FileRead(super().read(data).events)


class Shortened(ModelReader):
    """A reader that loses the last event."""

    def read(self, data: bytes) -> FileRead:
        read = super().read(data)
        return FileRead(read.events[:-1], read.torn_tail)


class Forgiving(ModelReader):
    """A reader that takes a corrupt file for an empty log."""

    def read(self, data: bytes) -> FileRead:
        try:
            return super().read(data)
        except Unreadable:
            return FileRead([])


class Misnaming(ModelReader):
    """A reader that calls every unusable file FMT-1."""

    def read(self, data: bytes) -> FileRead:
        try:
            return super().read(data)
        except Unreadable as error:
            raise Unreadable("FMT-1", error.reason) from None


class Crashing(ModelReader):
    """A reader that knows no zstd."""

    def read(self, data: bytes) -> FileRead:
        if data.startswith(b"\x28\xb5\x2f\xfd"):
            raise RuntimeError("no zstd here")
        return super().read(data)


@pytest.mark.spec("VEC-3", "FMT-7", "FMT-9")
def test_replay_reports_a_reader_that_misses_a_torn_tail_loses_an_event_forgives_a_hole_misnames_or_crashes(
    published: Path,
) -> None:
    torn, zstd, hole = load(published, "persisted/torn-final-line"), load(published, "persisted/zstd-frames"), load(published, "invalid/fmt-7/hole-before-turn-end")
    assert [replay(c, ModelAdapter(), reader=ModelReader()) for c in (torn, zstd, hole)] == [[], [], []]
    assert replay(torn, ModelAdapter(), reader=Untorn()) == [f"torn tail: expected line {torn['tornTail']}, got none"]
    [short] = replay(zstd, ModelAdapter(), reader=Shortened())
    count = len(zstd["log"])
    assert short.startswith(f"event {count - 1}: missing (expected {count}, got {count - 1}); expected {{\"type\":\"turn/end\"")
    assert replay(hole, ModelAdapter(), reader=Forgiving()) == ["the reader reads 0 events from a file it must reject with FMT-7"]
    [named] = replay(hole, ModelAdapter(), reader=Misnaming())
    assert named.startswith("the reader rejects the file with FMT-1, not FMT-7 (corrupt committed region: ")
    assert replay(zstd, ModelAdapter(), reader=Crashing()) == ["the reader failed: RuntimeError: no zstd here"]
    [spelled] = replay(zstd | {"file": {"encoding": "zstd", "base64": "KLUv/?"}}, ModelAdapter())
    assert spelled.startswith("the case's file spells no file: base64")
