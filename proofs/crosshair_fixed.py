"""``crosshair check`` with a path-count budget, and a count of what it explored.

    python proofs/crosshair_fixed.py --max_iterations 60 check prefix_model.loop.meter --analysis_kind=icontract ...

CrossHair's own budget (``--per_condition_timeout``) is CPU seconds, so a busy machine explores
fewer paths than an idle one and the verdict can change with the load. ``max_iterations`` (paths
per condition) is an analysis option CrossHair's command line does not offer; this wrapper sets it
and otherwise runs CrossHair's own ``check`` unchanged. With a fixed hash seed (the runner sets
``PYTHONHASHSEED``), CrossHair's seeded search then takes the same paths on any machine.

Z3's own limit is wall clock too; the runner bounds each query by Z3's resource count instead
(``CROSSHAIR_SMT_RLIMIT``, which CrossHair reads), so a hard query gives up at the same point
on every machine.

For every condition it writes one line to stderr, ``crosshair-fixed-condition: {...}``: the
function, the line of the condition, the paths run, whether they were exhausted (every path of the
condition explored within the cap: for a clean condition, a proof) and whether no path got past
the preconditions (CrossHair could build no input they accept: the condition was not explored).

On exit it writes one line to stderr, ``crosshair-fixed: {...}``: the conditions analysed, the
paths run, the process's CPU seconds (a measurement: no verdict reads it), the Z3 queries that ran out of their resource count (the same in every run), and the
two events that still depend on the clock — a path that hit the per-path CPU deadline and a Z3
query that gave up for another reason (its wall-clock timeout). Both are 0 in a reproducible run;
the runner reports them when they are not.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2 or argv[0] != "--max_iterations" or not argv[1].isdigit():
        print("usage: crosshair_fixed.py --max_iterations N check TARGET [crosshair check options]  (N=0: no cap)", file=sys.stderr)
        return 2
    max_iterations = int(argv[1]) or sys.maxsize

    from crosshair import core, statespace, util
    from crosshair.statespace import MessageType
    from crosshair import main as crosshair_main
    from crosshair.auditwall import engage_auditwall

    counts: Counter[str] = Counter()
    current: dict[str, Any] = {}

    def counted_explore_loop(*args: Any, **kwargs: Any) -> Any:
        result = original_explore_loop(*args, **kwargs)
        counts["conditions"] += 1
        counts["paths"] += result.iterations
        current.update(paths=result.iterations, exhausted=bool(result.exhausted))
        return result

    def reported_analyze_calltree(options: Any, conditions: Any) -> Any:
        current.clear()
        analysis = original_analyze_calltree(options, conditions)
        unmet = any(m.state == MessageType.PRE_UNSAT for m in analysis.messages)
        post = conditions.post[0] if conditions.post else None
        detail = {"function": conditions.fn.__qualname__, "line": post.line if post is not None else 0,
                  "paths": current.get("paths", 0), "exhausted": current.get("exhausted", False),
                  "status": analysis.verification_status.name, "preconditions_unmet": unmet}  # fmt: skip
        print("crosshair-fixed-condition: " + json.dumps(detail), file=sys.stderr, flush=True)
        return analysis

    def counted_check_timeout(self: Any) -> None:
        try:
            original_check_timeout(self)
        except util.PathTimeout:
            counts["path_timeouts"] += 1
            raise

    def counted_solver_is_sat(solver: Any, *exprs: Any) -> bool:
        try:
            return bool(original_solver_is_sat(solver, *exprs))
        except util.UnknownSatisfiability:
            # Z3 says "canceled" for both limits; a query stopped well before the wall-clock
            # timeout was stopped by its resource count.
            stats = solver.statistics()
            seconds = float(stats.get_key_value("time")) if "time" in stats.keys() else float("inf")
            timeout_ms = statespace.context_statespace().smt_timeout
            by_rlimit = timeout_ms is not None and seconds < 0.9 * timeout_ms / 1000
            counts["z3_rlimit" if by_rlimit else "z3_unknown"] += 1
            raise

    original_explore_loop: Callable[..., Any] = core.explore_loop
    original_analyze_calltree: Callable[..., Any] = core.analyze_calltree
    core.analyze_calltree = reported_analyze_calltree
    original_check_timeout: Callable[[Any], None] = statespace.StateSpace.check_timeout
    original_solver_is_sat: Callable[..., Any] = statespace.solver_is_sat
    original_options: Callable[..., Any] = getattr(crosshair_main, "option_set_from_dict")
    core.explore_loop = counted_explore_loop
    setattr(statespace.StateSpace, "check_timeout", counted_check_timeout)
    statespace.solver_is_sat = counted_solver_is_sat
    # ``check`` builds its options with this function; the cap joins what the command line set.
    setattr(crosshair_main, "option_set_from_dict", lambda source: dataclasses.replace(original_options(source), max_iterations=max_iterations))

    args = crosshair_main.command_line_parser().parse_args(list(argv[2:]))
    engage_auditwall(args.unblock or ())
    try:
        status = int(crosshair_main.unwalled_main(args))
    finally:
        totals: dict[str, float] = {k: counts[k] for k in ("conditions", "paths", "z3_rlimit", "path_timeouts", "z3_unknown")}
        usage = resource.getrusage(resource.RUSAGE_SELF)
        totals["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 1)  # a measurement, not part of the verdict
        print("crosshair-fixed: " + json.dumps(totals), file=sys.stderr, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
