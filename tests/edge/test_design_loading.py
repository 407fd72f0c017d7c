"""§13.1 — ``--design FILE.py:NAME``: a reviewer's own design, loaded from a file and judged as the catalogue's (CLI-10).

The commands run as a user runs them (a subprocess, contracts off as the installed command runs);
the judging itself is compared in process with the catalogue's ``judge``. The choice points'
page (spec/designs.md) is held to ``CHOICE_POINTS`` and to each signature.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from prefix_model.edge.designs import DesignError, judge_design, load_design
from prefix_model.loop.semantics import CHOICE_POINTS, Semantics
from prefix_model.loop.variants import VARIANTS, judge
from prefix_model.review.designs import DESIGNS as DESIGNS_REVIEWED

from tests.conftest import HANG
from tests.edge.test_cli import CONTRACTS_OFF, assert_one_line_error

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "spec" / "designs.md"

DESIGNS = '''\
from prefix_model.loop.semantics import Semantics
from prefix_model.loop.variants import VARIANTS


class ListenersBackwards(Semantics):
    """Listeners answer last-registered first."""

    def listener_order(self, listeners):
        return tuple(reversed(listeners))


class Misspelt(Semantics):
    def listner_order(self, listeners):
        return tuple(reversed(listeners))


class Raises(Semantics):
    def recompose(self, instance):
        raise ValueError("no answer")


class NeedsArguments(Semantics):
    def __init__(self, times):
        self.times = times


AS_THE_HARNESS = Semantics()
NOT_A_DESIGN = 3
CATALOGUE = {v.name: v.semantics for v in VARIANTS}
'''
RAISES_AT = DESIGNS.splitlines().index('        raise ValueError("no answer")') + 1


@pytest.fixture
def designs(tmp_path: Path) -> Path:
    path = tmp_path / "my_designs.py"
    path.write_text(DESIGNS, encoding="utf-8")
    return path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", *args], capture_output=True, text=True, timeout=HANG, env=CONTRACTS_OFF)


@pytest.mark.spec("CLI-11", "PFX-8")
def test_variants_rejects_a_reversed_listener_order_naming_the_requirement(designs: Path) -> None:
    result = run("variants", "--design", f"{designs}:ListenersBackwards", "--json")
    assert result.returncode == 1, result.stderr
    record = json.loads(result.stdout)
    assert record["design"] == "ListenersBackwards" and record["file"] == str(designs) and record["rejected"] is True
    assert record["rejectedBy"] == ["PFX-8"] and record["first"].startswith("PFX-8:")
    assert record["summary"] == "Listeners answer last-registered first."
    text = run("variants", "--design", f"{designs}:ListenersBackwards")
    assert text.returncode == 1 and "rejected by PFX-8 on the witness run" in text.stdout


@pytest.mark.spec("CLI-11")
def test_a_design_that_answers_as_the_harness_keeps_every_property(designs: Path) -> None:
    result = run("variants", "--design", f"{designs}:AS_THE_HARNESS", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) | {"file": ""} == {"design": "AS_THE_HARNESS", "file": "", "summary": "a design of my_designs.py",
                                                        "rejected": False, "rejectedBy": [], "first": ""}  # fmt: skip


@pytest.mark.spec("CLI-11", "VAR-1")
@pytest.mark.parametrize("name", ["prefix-as-history", "compose-per-turn", "no-resume-anchor", "meter-double-prefix", "fork-drops-headers"])
def test_a_design_is_judged_exactly_as_the_catalogue_judges_it(designs: Path, name: str) -> None:
    # A catalogue variant handed over as a user's design: the same witness run, the same verdict.
    module = designs.with_name(f"one_{name.replace('-', '_')}.py")
    module.write_text(designs.read_text(encoding="utf-8") + f"\nCHOSEN = CATALOGUE[{name!r}]\n", encoding="utf-8")
    (variant,) = [v for v in VARIANTS if v.name == name]
    loaded = load_design(f"{module}:CHOSEN")
    verdict = judge_design(loaded)
    assert verdict.rejected_by == judge(variant).rejected_by and set(variant.expected) <= set(verdict.rejected_by)


@pytest.mark.spec("CLI-11", "CLI-8")
def test_explore_searches_a_design_and_prints_its_shortest_counterexample(designs: Path) -> None:
    result = run("explore", "--depth", "4", "--design", f"{designs}:ListenersBackwards", "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["design"] == f"ListenersBackwards ({designs})" and report["variant"] is None
    assert report["violation"]["rules"] == ["PFX-8"] and report["violation"]["script"]
    kept = run("explore", "--depth", "2", "--design", f"{designs}:AS_THE_HARNESS")
    assert kept.returncode == 0 and "explored design AS_THE_HARNESS" in kept.stdout and "no violation" in kept.stdout


@pytest.mark.spec("CLI-11", "CLI-9")
def test_review_adds_the_design_as_one_more_row(designs: Path) -> None:
    result = run("review", "--json", "--design", f"{designs}:ListenersBackwards")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["designs"]
    assert [r["design"] for r in rows] == [d.key for d in DESIGNS_REVIEWED] + ["ListenersBackwards"] and rows[-1]["source"] == str(designs)


@pytest.mark.spec("CLI-11")
def test_the_adapter_serves_the_design_under_its_name(designs: Path) -> None:
    hello = '{"id":1,"method":"hello","params":{"protocol":1}}\n'
    served = subprocess.run([sys.executable, "-m", "prefix_model.edge.cli", "adapter", "--design", f"{designs}:ListenersBackwards"],
                            input=hello, capture_output=True, text=True, timeout=HANG, env=CONTRACTS_OFF)  # fmt: skip
    assert served.returncode == 0, served.stderr
    assert json.loads(served.stdout)["result"]["implementation"].endswith(f"(design ListenersBackwards ({designs}))")


@pytest.mark.spec("CLI-11", "CLI-2")
@pytest.mark.parametrize(
    ("argument", "needles"),
    [
        ("{dir}/absent.py:X", ["absent.py: no such file"]),
        ("{dir}:X", ["not a file"]),
        ("{file}", ["write FILE.py:NAME"]),
        ("{file}:", ["write FILE.py:NAME"]),
        ("{file}:Absent", ["no name 'Absent'", "ListenersBackwards", "AS_THE_HARNESS"]),
        ("{file}:NOT_A_DESIGN", ["NOT_A_DESIGN is a value of type int, not a Semantics subclass or instance"]),
        ("{file}:NeedsArguments", ["my_designs.py", "NeedsArguments() failed: TypeError", "instantiated with no arguments"]),
        ("{file}:Raises", [f"my_designs.py:{RAISES_AT}: Raises raised ValueError: no answer"]),
    ],
)
def test_an_unusable_design_is_one_line_and_exit_2(designs: Path, argument: str, needles: list[str]) -> None:
    result = run("variants", "--design", argument.format(dir=designs.parent, file=designs))
    assert_one_line_error(result, *needles)


@pytest.mark.spec("CLI-11", "CLI-2")
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("from prefix_model.loop.semantics import Semantics\n\nclass Broken(Semantics)\n    pass\n", "broken.py:3: syntax error"),
        ("x = 1\nraise RuntimeError('not today')\n", "broken.py:2: RuntimeError: not today"),
        ("import no_such_module_anywhere\n", "broken.py:1: ModuleNotFoundError: No module named 'no_such_module_anywhere'"),
        ("class Broken:\n    pass\n", "Broken is the class Broken, not a Semantics subclass or instance"),
        (b"\xff\xfe = 1\n".decode("latin-1"), "broken.py:1: syntax error"),
    ],
)
def test_a_file_that_does_not_load_names_its_line(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "broken.py"
    path.write_bytes(text.encode("latin-1"))
    for command in (["variants"], ["explore", "--depth", "1"], ["review"], ["adapter"]):
        assert_one_line_error(run(*command, "--design", f"{path}:Broken"), needle)


@pytest.mark.spec("CLI-11")
def test_a_worker_of_a_parallel_exploration_reports_the_designs_exception(designs: Path) -> None:
    result = run("explore", "--depth", "2", "--jobs", "2", "--design", f"{designs}:Raises")
    assert_one_line_error(result, "raised ValueError: no answer", f"my_designs.py:{RAISES_AT}")


@pytest.mark.spec("CLI-11")
def test_a_name_that_is_no_choice_point_is_noted(designs: Path) -> None:
    result = run("variants", "--design", f"{designs}:Misspelt")
    assert result.returncode == 0  # the misspelt override changes nothing: the design is the harness
    assert "Misspelt defines listner_order: no choice point of Semantics" in result.stderr
    assert "note" not in run("variants", "--design", f"{designs}:ListenersBackwards").stderr


def _documented() -> dict[str, str]:
    """The page's choice points: each ``### `name` `` heading and the signature line under it."""
    return dict(re.findall(r"^### `(\w+)`\n\n`([^`\n]+)`$", PAGE.read_text(encoding="utf-8"), re.MULTILINE))


def _signature(name: str) -> str:
    value = inspect.getattr_static(Semantics, name)
    if isinstance(value, bool):
        return f"{name}: bool = {value}"
    return name + str(inspect.signature(value)).replace("'", "")


@pytest.mark.spec("CLI-11")
def test_every_choice_point_is_documented_with_its_signature() -> None:
    documented = _documented()
    assert list(documented) == list(CHOICE_POINTS), "spec/designs.md must list CHOICE_POINTS, in their order, and nothing else"
    for name, line in documented.items():
        assert line == _signature(name), f"spec/designs.md gives {name} as {line!r}; Semantics has {_signature(name)!r}"
    text = PAGE.read_text(encoding="utf-8")
    sections = re.split(r"^### ", text, flags=re.MULTILINE)[1:]
    for section in sections:
        assert "- The harness:" in section and "- Decides:" in section and "- Judged by:" in section, section.splitlines()[0]


@pytest.mark.spec("CLI-11")
def test_an_unloadable_design_raises_design_error_in_process(designs: Path) -> None:
    with pytest.raises(DesignError, match=r"no such file"):
        load_design(f"{designs.parent}/absent.py:X")
    loaded = load_design(f"{designs}:AS_THE_HARNESS")
    assert loaded.name == "AS_THE_HARNESS" and loaded.semantics.name == "AS_THE_HARNESS" and loaded.strays == ()
