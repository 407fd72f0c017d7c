"""The explorer's expected counts per configured bound (``proofs/explore-counts.json``), checked or rewritten.

    .venv/bin/python proofs/explore_counts.py --check ci ci-roots   # what tests/loop/test_explore.py checks
    .venv/bin/python proofs/explore_counts.py --check deep          # ``make explore-deep``
    .venv/bin/python proofs/explore_counts.py --check million --jobs 2   # ``make explore-million`` (10^6 states)
    .venv/bin/python proofs/explore_counts.py --write ci            # after an intended change of the model

Each bound names a depth and the roots (behaviours of listener L2; null: all). Its counts are
distinct states, transitions, states first reached per depth, and transitions per action kind and
per outcome class: an unintended change of the loop, the properties or the alphabet shows as a
changed count. A bound's exploration must find no violation. Contracts are off (as the installed
command runs) unless the environment turns them on; the counts are the same either way, and in
every process (the fingerprint is blake2b over a canonical encoding, never ``hash()``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("PREFIX_MODEL_CONTRACTS", "0")  # read once, when the model is first imported (below)

from prefix_model.edge.explore import explore_parallel  # noqa: E402
from prefix_model.loop.explore import explore  # noqa: E402
from prefix_model.loop.semantics import HARNESS  # noqa: E402

MANIFEST = Path(__file__).resolve().parent / "explore-counts.json"


def counts_of(depth: int, roots: list[str] | None, jobs: int = 1) -> tuple[dict[str, object], float, bool]:
    """Return a bound's counts, the seconds it took, and whether it found a violation (``jobs`` processes: the same counts)."""
    started = time.perf_counter()
    behaviours = None if roots is None else tuple(roots)
    run = explore(depth, behaviours=behaviours) if jobs == 1 else explore_parallel(depth, HARNESS, behaviours, jobs)
    return run.as_counts(), time.perf_counter() - started, run.found is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", nargs="+", metavar="BOUND")
    mode.add_argument("--write", nargs="+", metavar="BOUND")
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help=f"the counts file (default {MANIFEST.name})")
    parser.add_argument("--jobs", type=int, default=1, help="processes (prefix-model explore --jobs: the same counts; default 1)")
    args = parser.parse_args(argv)
    manifest: Path = args.manifest
    document = json.loads(manifest.read_text(encoding="utf-8"))
    bounds = document["bounds"]
    failed = False
    for name in args.check or args.write:
        if name not in bounds:
            print(f"explore_counts: no bound {name!r} in {manifest.name} (one of: {', '.join(bounds)})", file=sys.stderr)
            return 2
        bound = bounds[name]
        if args.jobs < 1:
            print("explore_counts: --jobs must be at least 1", file=sys.stderr)
            return 2
        counts, seconds, violated = counts_of(bound["depth"], bound["roots"], args.jobs)
        states = counts["states"]
        assert isinstance(states, int)
        print(f"{name}: depth {bound['depth']}, roots {bound['roots'] or 'all'}: {states} states, {counts['transitions']} transitions, "
              f"{seconds:.1f} s ({states / seconds:.0f} states/s, {args.jobs} process{'es' if args.jobs > 1 else ''}; contracts {'on' if os.environ['PREFIX_MODEL_CONTRACTS'] != '0' else 'off'}; "
              f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()})")
        if violated:
            print(f"{name}: the exploration found a violation (run prefix-model explore --depth {bound['depth']})", file=sys.stderr)
            failed = True
        if args.write:
            bound["counts"] = counts
        elif bound.get("counts") != counts:
            expected = bound.get("counts") or {}
            assert isinstance(expected, dict)
            changed = sorted(k for k in set(expected) | set(counts) if expected.get(k) != counts.get(k))
            print(f"{name}: counts differ from {manifest.name} in {', '.join(changed)}", file=sys.stderr)
            for key in changed:
                print(f"  {key}: expected {expected.get(key)}, got {counts.get(key)}", file=sys.stderr)
            failed = True
    if args.write:
        manifest.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
