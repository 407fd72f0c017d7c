"""A/B comparison of ``prefix-model check`` at two revisions: the check ÷ parse ratio, interleaved.

One run on a noisy shared machine says little (json.loads alone has swung from 10.7 s to 17.2 s
at 10^6 events between runs), so this compares two revisions in one run, on the same files:

- each revision's ``model/`` and ``pyproject.toml`` are exported once (``git archive``) into a
  temporary folder, removed at the end; committed revisions only, the working tree is not measured;
- the logs and captures are generated once per size, by this checkout's ``bench/check_bench.py``;
- every timing is a fresh process (``bench/timing.py``) with one revision's ``model/`` on
  ``PYTHONPATH`` and contracts off (``PREFIX_MODEL_CONTRACTS=0``, as the installed command runs
  them), timing that revision's ``check_log`` — what its ``prefix-model check`` calls — or
  ``json.loads`` of every line of both files, in CPU seconds of that process (start-up excluded);
- the order alternates per round, base parse head, then head parse base, ..., so drift in the
  machine's load hits both revisions alike, and each round's ratio divides by that round's parse.

Before timing, each revision's installed entry point (its ``[project.scripts] prefix-model``) checks
the smallest pair once, untimed: it must accept the files and find them conforming. Usage:

    python bench/compare_bench.py --base f50cf04 [--head HEAD] [--sizes 10000,100000,1000000] [--rounds 5] [--shape turns|compactions]

It prints, per size, the medians over the rounds and their spread [min..max]: parse seconds, each
revision's check seconds, each revision's check ÷ parse ratio (the median of the per-round
ratios), the change head/base of those median ratios, and the per-round paired change (head's
ratio over base's in the same round, which is head's check over base's: the parse is shared) as
median [min..max]; then every round's figures in run order. Progress goes to stderr. Figures,
not a test: nothing here judges them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.check_bench import ROOT, SHAPES  # noqa: E402

TIMING = ROOT / "bench" / "timing.py"
# The module that defines check_log, and the one that defines the contract switch, are found in each
# revision's tree (they moved between revisions: prefix_model.checker.run, prefix_model.edge.checker).
CHECK_LOG = re.compile(r"^def check_log\(", re.MULTILINE)
SWITCH = re.compile(r"^ENABLED\b.*PREFIX_MODEL_CONTRACTS", re.MULTILINE)
HEADINGS = ("parse s", "base check s", "head check s", "base check/parse", "head check/parse", "head/base", "paired head/base")
WIDTHS = (24, 24, 24, 18, 18, 10, 0)  # room for 99.999 [99.999..99.999] seconds and 99.99 [99.99..99.99] ratios


@dataclass(frozen=True)
class Revision:
    """One side of the comparison: a commit exported into ``tree``, and where its check lives."""

    label: str  # "base" or "head"
    name: str  # as given on the command line
    commit: str
    tree: Path
    check_module: str
    contracts_module: str
    entry: str  # the installed command's entry point, MODULE:FUNCTION

    @property
    def model(self) -> Path:
        return self.tree / "model"

    def env(self) -> dict[str, str]:
        return dict(os.environ, PYTHONPATH=str(self.model), PREFIX_MODEL_CONTRACTS="0")


@dataclass
class Size:
    """The timings of one size, round by round."""

    events: int
    megabytes: float
    parse: list[float] = field(default_factory=list)
    check: dict[str, list[float]] = field(default_factory=lambda: {"base": [], "head": []})

    def ratios(self, label: str) -> list[float]:
        return [check / parse for check, parse in zip(self.check[label], self.parse)]

    def changes(self) -> list[float]:
        """The per-round change head/base - 1 of the ratio (the same parse divides both: of the check)."""
        return [head / base - 1 for head, base in zip(self.ratios("head"), self.ratios("base"))]

    def change(self) -> float:
        return statistics.median(self.ratios("head")) / statistics.median(self.ratios("base")) - 1


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True).stdout


def _module(model: Path, pattern: re.Pattern[str], what: str) -> str:
    """Return the one module under ``model`` whose source matches ``pattern``."""
    found = sorted(p for p in (model / "prefix_model").rglob("*.py") if pattern.search(p.read_text(encoding="utf-8")))
    if len(found) != 1:
        raise SystemExit(f"compare_bench: expected one module defining {what} under {model}, found {[str(p) for p in found]}")
    return ".".join(found[0].relative_to(model).with_suffix("").parts)


def export(label: str, name: str, folder: Path) -> Revision:
    """Export ``name``'s model/ and pyproject.toml into ``folder``/``label`` and find its check."""
    try:
        commit = _git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}").decode().strip()
    except subprocess.CalledProcessError:
        raise SystemExit(f"compare_bench: {name!r} names no commit in {ROOT}") from None
    tree = folder / label
    tree.mkdir()
    with tarfile.open(fileobj=io.BytesIO(_git("archive", "--format=tar", commit, "model", "pyproject.toml"))) as archive:
        archive.extractall(tree, filter="data")
    entry = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["prefix-model"]
    model = tree / "model"
    return Revision(label, name, commit, tree, _module(model, CHECK_LOG, "check_log"), _module(model, SWITCH, "ENABLED"), str(entry))


def _run(command: Sequence[str], env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, str(TIMING), *command], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"compare_bench: {' '.join(command)} exited {done.returncode}\n{done.stderr[-4000:]}")
    return done.stdout


def time_check(revision: Revision, log: Path, capture: Path) -> float:
    """Return the CPU seconds of ``revision``'s check of the pair, in a fresh process."""
    out = json.loads(_run(["check", "--check", revision.check_module, "--contracts", revision.contracts_module, str(log), str(capture)], revision.env()))
    if not Path(out["package"]).resolve().is_relative_to(revision.model.resolve()):
        raise SystemExit(f"compare_bench: {revision.label} imported prefix_model from {out['package']}, not from {revision.model}")
    if out["contracts"]:
        raise SystemExit(f"compare_bench: {revision.label} ran with contracts on despite PREFIX_MODEL_CONTRACTS=0")
    return float(out["seconds"])


def time_parse(log: Path, capture: Path) -> float:
    """Return the CPU seconds of json.loads over both files, in a fresh process that imports no model."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return float(json.loads(_run(["parse", str(log), str(capture)], env))["seconds"])


def smoke(revision: Revision, log: Path, capture: Path) -> None:
    """Run ``revision``'s installed command, ``prefix-model check LOG --requests CAPTURE``, once: it must exit 0."""
    _run(["cli", revision.entry, "check", str(log), "--requests", str(capture)], revision.env())
    print(f"{revision.label} {revision.commit[:10]}: prefix-model = {revision.entry}: check of {log.name} conforms (exit 0)", file=sys.stderr)


def _spread(values: Sequence[float], digits: int) -> str:
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}..{max(values):.{digits}f}]"


def _percent(value: float) -> str:
    return f"{100 * value:+.1f}%"


def report(base: Revision, head: Revision, sizes: dict[int, Size], rounds: int, shape: str) -> list[str]:
    lines = [
        f"shape {shape} (bench/check_bench.py --shape): sizes {', '.join(str(n) for n in sizes)}",
        f"base {base.name} = {base.commit}: check {base.check_module}.check_log, command {base.entry}",
        f"head {head.name} = {head.commit}: check {head.check_module}.check_log, command {head.entry}",
        "contracts off (PREFIX_MODEL_CONTRACTS=0); CPU seconds of a fresh process per timing (start-up excluded)",
        f"rounds per size: {rounds}, each 'base parse head' or 'head parse base' in turn; the same generated files for both",
        "median [min..max] over rounds; ratio = check / parse of the same round; head/base = median head ratio /",
        "median base ratio - 1; paired = median [min..max] of each round's head ratio / base ratio - 1",
        "",
        "  ".join((f"{'events':>8}", f"{'MB':>6}", *(f"{t:<{w}}" for t, w in zip(HEADINGS, WIDTHS)))).rstrip(),
    ]
    for s in sizes.values():
        paired = f"{_percent(statistics.median(s.changes()))} [{_percent(min(s.changes()))}..{_percent(max(s.changes()))}]"
        cells = (_spread(s.parse, 3), _spread(s.check["base"], 3), _spread(s.check["head"], 3), _spread(s.ratios("base"), 2), _spread(s.ratios("head"), 2), _percent(s.change()), paired)
        lines.append("  ".join((f"{s.events:>8}", f"{s.megabytes:>6.1f}", *(f"{c:<{w}}" for c, w in zip(cells, WIDTHS)))).rstrip())
    lines += ["", "rounds, in run order (CPU s; ratios check/parse):"]
    for s in sizes.values():
        for r, (parse, b, h, rb, rh, c) in enumerate(zip(s.parse, s.check["base"], s.check["head"], s.ratios("base"), s.ratios("head"), s.changes())):
            order = "base parse head" if r % 2 == 0 else "head parse base"
            lines.append(f"{s.events:>8} round {r + 1}: {order}  base {b:.3f}  parse {parse:.3f}  head {h:.3f}  ratios {rb:.2f} {rh:.2f}  change {_percent(c)}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the base revision (any git revision)")
    parser.add_argument("--head", default="HEAD", help="the revision compared with it (default HEAD: committed, not the working tree)")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated event counts")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per size; each times base, parse and head once")
    parser.add_argument("--shape", choices=tuple(SHAPES), default="turns", help="the generated session's shape, as bench/check_bench.py --shape")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    counts = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="prefix-compare-") as temporary:
        folder = Path(temporary)
        base, head = export("base", args.base, folder), export("head", args.head, folder)
        logs = folder / "logs"
        logs.mkdir()
        sizes: dict[int, Size] = {}
        for count in counts:
            print(f"generating {args.shape} of size {count}", file=sys.stderr)
            log, capture = SHAPES[args.shape](logs, count)
            if not sizes:  # each revision's own command on the first pair, which also compiles its modules
                smoke(base, log, capture)
                smoke(head, log, capture)
            with log.open("rb") as handle:
                events = sum(1 for _ in handle)
            size = sizes[count] = Size(events, (log.stat().st_size + capture.stat().st_size) / 1e6)
            for r in range(args.rounds):
                for side in (base, None, head) if r % 2 == 0 else (head, None, base):
                    if side is None:
                        seconds = time_parse(log, capture)
                        size.parse.append(seconds)
                    else:
                        seconds = time_check(side, log, capture)
                        size.check[side.label].append(seconds)
                    print(f"size {count}, round {r + 1}/{args.rounds}: {'parse' if side is None else side.label + ' check'} {seconds:.3f} s", file=sys.stderr)
            log.unlink()
            capture.unlink()
    print("\n".join(report(base, head, sizes, args.rounds, args.shape)))


if __name__ == "__main__":
    main()
