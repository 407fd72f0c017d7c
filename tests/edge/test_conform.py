"""spec/vectors.md §10 — the adapter protocol and ``prefix-model conform`` (VEC-4, VEC-5).

``conform`` runs real child processes here: the model's own adapter (every case passes), a
deliberately broken one (tests/adapters/broken_adapter.py: the named cases fail for the planted
reasons, one is not applicable, and ``conform`` neither hangs nor crashes), tampered vectors
(the tampered cases fail) and adapters that cannot be used at all (exit 2).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from prefix_model.edge.cli import main
from prefix_model.edge.runner.server import serve


ROOT = Path(__file__).resolve().parents[2]
MODEL_ADAPTER = f"{sys.executable} -m prefix_model.edge.cli adapter"
BROKEN_ADAPTER = f"{sys.executable} {ROOT / 'tests' / 'adapters' / 'broken_adapter.py'}"
TEE_ADAPTER = f"{sys.executable} {ROOT / 'tests' / 'adapters' / 'tee_adapter.py'}"
PROTOCOL = jsonschema.Draft202012Validator(json.loads((ROOT / "spec" / "schema" / "adapter-protocol.schema.json").read_text(encoding="utf-8")))
TRANSCRIPT_MARK = "<!-- protocol-transcript -->\n```\n"


@pytest.fixture
def vectors(published: Path) -> Path:
    return published


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    # The adapters under tests/ import prefix_model and this checkout's tests package.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(ROOT / "model"), os.environ.get("PYTHONPATH", "")]))
    # The adapters run the model as a foreign implementation would: contracts off (its own tests check them); conform,
    # in this process, judges with them on. With them on, the adapters' model was about 60 of this module's 90 CPU s.
    monkeypatch.setenv("PREFIX_MODEL_CONTRACTS", "0")


def conform(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["conform", *args, "--json"])
    out = capsys.readouterr().out
    return status, json.loads(out)


def _manifest_cases(vectors: Path) -> list[dict[str, Any]]:
    manifest = json.loads((vectors / "manifest.json").read_text(encoding="utf-8"))
    return [{"id": e["id"], **json.loads((vectors / e["file"]).read_text(encoding="utf-8"))} for e in manifest["cases"]]


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["id"]: case for case in report["cases"]}


@pytest.mark.spec("VEC-4", "VEC-5", "VEC-3")
def test_the_model_as_an_adapter_passes_every_vector(vectors: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    junit = tmp_path / "conform.xml"
    status, report = conform(capsys, "--adapter", MODEL_ADAPTER, "--vectors", str(vectors), "--junit", str(junit))
    manifest = json.loads((vectors / "manifest.json").read_text(encoding="utf-8"))
    assert status == 0 and report["totals"] == {"pass": len(manifest["cases"]), "fail": 0, "notApplicable": 0, "notRun": 0}
    assert set(report["byKind"]) == {"scenario", "log", "file"} and report["byRequirement"]["CMP-6"]["pass"] >= 2
    suite = ElementTree.parse(junit).getroot()
    assert (suite.tag, suite.get("tests"), suite.get("failures")) == ("testsuite", str(len(manifest["cases"])), "0")


@pytest.mark.spec("VEC-5")
def test_a_broken_adapter_fails_the_cases_it_breaks_and_conform_goes_on(vectors: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = conform(capsys, "--adapter", BROKEN_ADAPTER, "--vectors", str(vectors), "--timeout", "10")
    cases = by_id(report)
    assert status == 1
    planted = {
        "inject/sources-and-meta": "differs at /expected/sessions/s1/",  # meta dropped
        "prompt/prompt-prefix-context": "differs at /expected/sessions/s1/",
        "header/tools-change-between-turns": "SetTools is not implemented",  # the crash, with its stderr tail
        "steering/mid-turn": "no response within 10 s",  # the hang
        "loop/dispose-mid-turn": "protocol error",  # the garbage line
        "persisted/torn-final-line": "torn tail: expected line 31, got none",
    }
    for case_id, reason in planted.items():
        assert cases[case_id]["status"] == "fail", case_id
        assert any(reason in problem["message"] for problem in cases[case_id]["problems"]), (case_id, cases[case_id]["problems"])
    assert cases["compaction/pressure"]["status"] == "not applicable"
    mounting = {case_id for case_id, case in cases.items() if case["status"] == "not applicable"}
    assert all("MountCompaction" in cases[case_id]["problems"][0]["message"] for case_id in mounting)
    # Restarted after each crash, hang and garbage: the cases after them still run and pass.
    for case_id in ("loop/no-listener", "persisted/zstd-frames", "invalid/surf-8/provenance-misses-shadowed"):
        assert cases[case_id]["status"] == "pass", (case_id, cases[case_id]["problems"])
    uses_mount = {e["id"] for e in _manifest_cases(vectors) if any(a["action"] == "MountCompaction" for a in e.get("actions", ()))}
    assert mounting == uses_mount and report["totals"]["notApplicable"] == len(mounting)
    assert report["totals"]["pass"] + report["totals"]["fail"] == len(cases) - len(mounting) and report["totals"]["notRun"] == 0


@pytest.mark.spec("VEC-5")
def test_fail_fast_stops_at_the_first_failure_and_names_every_case_not_run(
    vectors: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The broken adapter drops meta from user messages: under in* the first such case fails (an inject/*), the rest are not run.
    args = ["--adapter", BROKEN_ADAPTER, "--vectors", str(vectors), "--only", "in*", "--timeout", "10"]
    full_status, full = conform(capsys, *args)
    junit = tmp_path / "x.xml"
    assert main(["conform", *args, "-x", "--junit", str(junit)]) == 1 == full_status
    text = capsys.readouterr().out
    statuses = [case["status"] for case in full["cases"]]
    first = statuses.index("fail")
    stopped = full["cases"][first]["id"]
    after = len(statuses) - first - 1
    assert after >= 1 and "pass" in statuses[first + 1 :], "the case set must show a pass that -x does not run"
    assert f"NOT RUN {after} case" in text and f"from {full['cases'][first + 1]['id']} on (--fail-fast stopped at {stopped})" in text
    assert text.rstrip().endswith(f"{statuses[:first].count('pass')} passed, 1 failed, 0 not applicable, {after} not run (scenario {statuses[:first].count('pass')}/{first + 1} passed of applicable)")
    suite = ElementTree.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (str(len(statuses)), "1", str(after))
    skipped = [case.get("name") for case in suite if case.find("skipped") is not None]
    assert skipped == [case["id"] for case in full["cases"][first + 1 :]]
    _, fast = conform(capsys, *args, "--fail-fast")
    assert [c["status"] for c in fast["cases"]] == statuses[: first + 1] + ["not run"] * after
    assert fast["totals"]["notRun"] == after and fast["totals"]["pass"] + fast["totals"]["fail"] == first + 1


@pytest.mark.spec("VEC-5")
def test_tampered_vectors_fail_by_name(vectors: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tampered = tmp_path / "vectors"
    shutil.copytree(vectors, tampered)
    # One case edited without its hash (caught before it runs), one edited with the manifest updated (caught by the run).
    unhashed = tampered / "loop" / "no-listener" / "case.json"
    unhashed.write_text(unhashed.read_text(encoding="utf-8").replace('"text":"hi"', '"text":"ho"'), encoding="utf-8")
    rehashed = tampered / "compaction" / "refused" / "case.json"
    rehashed.write_text(rehashed.read_text(encoding="utf-8").replace("estimated framed tokens", "framed tokens"), encoding="utf-8")
    manifest = json.loads((tampered / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["cases"]:
        if entry["id"] == "compaction/refused":
            entry["sha256"] = hashlib.sha256(rehashed.read_bytes()).hexdigest()
    (tampered / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    status, report = conform(capsys, "--adapter", MODEL_ADAPTER, "--vectors", str(tampered))
    cases = by_id(report)
    assert status == 1
    assert "is not the manifest's" in cases["loop/no-listener"]["problems"][0]["message"]
    # The first difference: an RFC 6901 pointer into the case file, both values there whole.
    difference = cases["compaction/refused"]["problems"][0]
    assert re.fullmatch(r"/expected/sessions/s1/\d+/data/error", difference["pointer"]) and difference["pointer"] in difference["message"]
    assert difference["expected"] == difference["actual"].replace("estimated framed tokens", "framed tokens") != difference["actual"]
    assert {c["id"] for c in report["cases"] if c["status"] == "fail"} == {"loop/no-listener", "compaction/refused"}


@pytest.mark.spec("VEC-5")
def test_an_adapter_that_cannot_be_used_is_exit_2_in_one_line(vectors: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--adapter", "/nonexistent/adapter", "--vectors", str(vectors)]) == 2
    assert "will not start" in capsys.readouterr().err
    assert main(["conform", "--adapter", f"{sys.executable} -c \"print('hello?')\"", "--vectors", str(vectors)]) == 2
    assert "protocol error" in capsys.readouterr().err
    assert main(["conform", "--adapter", MODEL_ADAPTER, "--vectors", str(vectors / "nowhere")]) == 2
    assert "no manifest.json" in capsys.readouterr().err


@pytest.mark.spec("VEC-5")
def test_hostile_vectors_fail_by_name_or_are_exit_2_and_nothing_outside_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    assert main(["conform", "--adapter", MODEL_ADAPTER, "--vectors", str(tmp_path)]) == 2
    assert "manifest.json" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("[", encoding="utf-8")
    entries = [{"id": "a/escape", "file": "../../etc/passwd", "sha256": "0"}, {"id": "a/broken", "file": "bad.json", "sha256": hashlib.sha256(b"[").hexdigest()}]
    (tmp_path / "manifest.json").write_text(json.dumps({"formatVersion": 3, "cases": entries}), encoding="utf-8")
    status, report = conform(capsys, "--adapter", MODEL_ADAPTER, "--vectors", str(tmp_path))
    cases = by_id(report)
    assert status == 1
    assert "outside the vectors directory" in cases["a/escape"]["problems"][0]["message"] and "not JSON" in cases["a/broken"]["problems"][0]["message"]


@pytest.mark.spec("VEC-4")
def test_every_line_exchanged_is_valid_under_the_protocol_schema(vectors: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    status, _ = conform(capsys, "--adapter", f"{TEE_ADAPTER} {transcript}", "--vectors", str(vectors), "--only", "*t*")
    lines = transcript.read_text(encoding="utf-8").split("\n")[:-1]  # a protocol line ends at \n only (str.splitlines also splits at U+2028)
    assert status == 0 and len(lines) > 100
    methods = set()
    for line in lines:
        message = json.loads(line)
        methods.add(message.get("method"))
        assert list(PROTOCOL.iter_errors(message)) == [], line[:200]
    assert {"hello", "reset", "apply", "read", "check", "shutdown"} <= methods
    # The schema can fail: a result with both result and error, an unknown method.
    assert list(PROTOCOL.iter_errors({"id": 1, "result": {}, "error": {"code": "x", "message": "y"}}))
    assert list(PROTOCOL.iter_errors({"id": 1, "method": "launch", "params": {}}))


@pytest.mark.spec("VEC-4")
def test_the_worked_transcript_in_vectors_md_replays_byte_for_byte() -> None:
    text = (ROOT / "spec" / "vectors.md").read_text(encoding="utf-8")
    assert text.count(TRANSCRIPT_MARK) == 1
    block = text.split(TRANSCRIPT_MARK, 1)[1].split("```", 1)[0].splitlines()
    sent = [line[2:] for line in block if line.startswith("> ")]
    answered = [line[2:] for line in block if line.startswith("< ")]
    assert len(sent) == len(answered) >= 8
    out = io.StringIO()
    assert serve(io.StringIO("".join(line + "\n" for line in sent)), out) == 0
    assert out.getvalue().splitlines() == answered
