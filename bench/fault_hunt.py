"""Where a campaign finds each catalogued realistic fault: the generator's power, measured (``make fault-hunt``).

Each fault of ``tests/adapters/planted_adapter.py``'s ``FOUND_BY_A_CAMPAIGN`` passed every published vector until a
campaign found it; the cases adopted since fail it. This runs, for each, one campaign of ``--scripts`` scripts at
``--seed`` (no shrinking: the first divergence is the figure) with the fault served behind the adapter protocol,
and prints the script that first diverged and the seconds it took, or that none did. Usage:

    python bench/fault_hunt.py [--scripts 300] [--seed 0] [--jobs 2] [--only NAME,...]

Figures, not a test: nothing here judges them (tests/edge/test_fuzz.py judges five of the faults in full).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.adapters.planted_adapter import FOUND_BY_A_CAMPAIGN  # noqa: E402

PLANTED = ROOT / "tests" / "adapters" / "planted_adapter.py"


def hunt(fault: str, scripts: int, seed: int, jobs: int) -> dict[str, object]:
    """One campaign against ``fault``: its first divergence's script and seconds, or None."""
    adapter = f"{sys.executable} {PLANTED} {fault}"
    command = [sys.executable, "-m", "prefix_model.edge.cli", "fuzz", "--adapter", adapter, "--scripts", str(scripts)]
    command += ["--seed", str(seed), "--jobs", str(jobs), "--shrink-budget", "0", "--json"]
    env = os.environ | {"PREFIX_MODEL_CONTRACTS": "0", "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "model")])}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"fault-hunt: the campaign against {fault} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    report = json.loads(done.stdout)
    found = report["divergences"]
    first = min(found, key=lambda d: d["firstScript"]) if found else None
    return {
        "fault": fault,
        "script": None if first is None else first["firstScript"],
        "seconds": None if first is None else round(first["firstSeconds"], 1),
        "signature": None if first is None else first["signature"],
        "adopted": len(FOUND_BY_A_CAMPAIGN[fault]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scripts", type=int, default=300, help="scripts per campaign (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="the campaigns' seed (default 0)")
    parser.add_argument("--jobs", type=int, default=2, help="adapter processes per campaign (default 2)")
    parser.add_argument("--only", default="", help="comma-separated fault names (default: every catalogued one)")
    args = parser.parse_args()
    faults = [f for f in args.only.split(",") if f] or list(FOUND_BY_A_CAMPAIGN)
    unknown = sorted(set(faults) - set(FOUND_BY_A_CAMPAIGN))
    if unknown:
        parser.error(f"no catalogued fault {', '.join(unknown)} (known: {', '.join(FOUND_BY_A_CAMPAIGN)})")
    print(f"| fault | first diverging script (seed {args.seed}, {args.scripts} scripts) | seconds | adopted cases that fail it |")
    print("|---|---|---|---|")
    for fault in faults:
        row = hunt(fault, args.scripts, args.seed, args.jobs)
        where = "not found" if row["script"] is None else str(row["script"])
        print(f"| `{fault}` | {where} | {row['seconds'] if row['seconds'] is not None else '-'} | {row['adopted']} |", flush=True)


if __name__ == "__main__":
    main()
