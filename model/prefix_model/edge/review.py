"""Spec §16 (edge) — ``prefix-model review``: print the comparison, write its plot and the diagram.

Everything printed is computed by ``prefix_model.review``; this module only lays it out (the
design × property table, the staleness/survival/cost table, the claims, every counterexample),
as text or one JSON object, and draws the plot with matplotlib, imported only when ``--plot``
asks for it.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefix_model.review.claims import Claim, claims
from prefix_model.edge.designs import LoadedDesign
from prefix_model.review.compare import RULES, Row, compare
from prefix_model.review.designs import DESIGNS, Design
from prefix_model.review.diagram import dot, mermaid, transition_table

__all__ = ["REPORT_VERSION", "run_review", "property_table", "cost_table", "claims_table", "as_json", "write_plot", "diagram"]

REPORT_VERSION = 1


def _table(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(row[n]) for row in [header, *body]) for n in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *body]]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


def property_table(rows: tuple[Row, ...]) -> str:
    """Return the design × property table: ✓ holds on every cut of the scenario, ✗ fails (a counterexample follows)."""
    rules = [rule for rule, _ in RULES]
    return _table(["design", *rules], [[r.design.key, *("✗" if rule in r.failed else "✓" for rule in rules)] for r in rows])


def cost_table(rows: tuple[Row, ...]) -> str:
    """Return the staleness, survival and cost table."""
    header = ["design", "requests", "stale", "longest", "lost/at risk", "tokens", "paid", "hit", "paid/req", "opener paid", "history copies"]
    body = []
    for r in rows:
        m, c = r.measures, r.measures.costs
        body.append([r.design.key, str(m.requests), str(m.stale), str(m.longest_stale), f"{m.lost_at_risk}/{m.at_risk}", str(c.total),
                     str(c.paid), f"{c.hit_ratio:.0%}", f"{c.paid / c.requests:.0f}" if c.requests else "-", str(m.opener_paid),
                     f"{m.history_copies} ({m.history_tokens} tok)"])  # fmt: skip
    return _table(header, body)


def claims_table(found: tuple[Claim, ...]) -> str:
    """Return the claims, each with its verdict and the numbers behind it."""
    return "\n".join(f"- [{c.verdict}] {c.claim} — {c.source}; {c.design}: {c.evidence}" for c in found)


def _counterexamples(rows: tuple[Row, ...], short: bool) -> str:
    out = []
    for row in rows:
        for ce in row.counterexamples:
            out.append(f"{ce.design} ✗ {ce.rule}: {len(ce.actions)} actions over {', '.join(ce.segments)}")
            if short:
                continue
            out += [f"    {n:2} {action!r}" for n, action in enumerate(ce.actions, 1)]
            out += [f"  ! {v}" for v in ce.violations[:3]] + ([f"  ! … and {len(ce.violations) - 3} more"] if len(ce.violations) > 3 else [])
            out += [f"  {line}" for line in ce.shown]
    return "\n".join(out)


def as_json(rows: tuple[Row, ...], found: tuple[Claim, ...]) -> dict[str, object]:
    """Return the whole review as one JSON-ready object."""
    designs = []
    for r in rows:
        m, c = r.measures, r.measures.costs
        designs.append({
            "design": r.design.key, "source": r.design.source, "summary": r.design.summary, "fails": list(r.failed),
            "requests": m.requests, "stale": m.stale, "longestStale": m.longest_stale, "lost": m.lost, "atRisk": m.at_risk,
            "lostAtRisk": m.lost_at_risk, "tokens": c.total, "cached": c.cached, "paid": c.paid, "hitRatio": round(c.hit_ratio, 4),
            "paidPerRequest": [p.paid for p in c.per_request], "openerPaid": m.opener_paid, "historyCopies": m.history_copies,
            "historyTokens": m.history_tokens,
            "counterexamples": [{"rule": ce.rule, "segments": list(ce.segments), "actions": [repr(a) for a in ce.actions],
                                 "violations": list(ce.violations), "shown": list(ce.shown)} for ce in r.counterexamples],
        })  # fmt: skip
    return {"version": REPORT_VERSION, "rules": [rule for rule, _ in RULES], "designs": designs,
            "claims": [{"source": c.source, "claim": c.claim, "design": c.design, "verdict": c.verdict, "evidence": c.evidence} for c in found]}  # fmt: skip


def write_plot(rows: tuple[Row, ...], path: Path) -> None:
    """Write the cumulative uncached tokens per request of each design to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(10, 6))
    colours = plt.get_cmap("tab20")
    for n, r in enumerate(rows):
        total, ys = 0, []
        for priced in r.measures.costs.per_request:
            total += priced.paid
            ys.append(total)
        style = ("-", "--", ":")[n % 3]  # 13 designs: a colour each and a dash pattern, so equal curves stay apart
        axes.plot(range(1, len(ys) + 1), ys, marker=".", linestyle=style, color=colours(n), label=r.design.key)
    axes.set_xlabel("loop request (in the order sent)")
    axes.set_ylabel("cumulative uncached tokens (meter heuristic)")
    axes.set_title("prefix-model review: tokens paid in full, per design, on the same scenario")
    axes.legend(fontsize="small", ncol=2)
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})  # no version stamp: the same review draws the same file
    plt.close(figure)


def diagram(form: str) -> str:
    """Return the loop's state diagram in ``form`` ('mermaid' or 'dot')."""
    table = transition_table()
    return mermaid(table) if form == "mermaid" else dot(table)


def run_review(as_json_output: bool, plot: Path | None, diagram_form: str | None, short: bool, turns: int, design: LoadedDesign | None = None) -> int:
    """Run the review and print it; return the exit status (0: printed and written).

    ``design`` (``--design``) is one more row, after the catalogue's, judged and measured as they are.
    """
    # NAME is an identifier and every catalogue key has a hyphen: the row's key never clashes with one.
    rows = compare(turns=turns) if design is None else compare((*DESIGNS, Design(design.name, str(design.path), design.summary, design.semantics)), turns)
    found = claims(rows)
    if plot is not None:
        write_plot(rows, plot)
    if as_json_output:
        record = as_json(rows, found)
        if diagram_form is not None:
            record["diagram"] = diagram(diagram_form)
        print(json.dumps(record, ensure_ascii=False))
        return 0
    print("Design × property (✓ holds on every cut of the scenario, ✗ fails: its counterexample is below)\n")
    print(property_table(rows))
    print("\nStaleness, survival and prompt-cache cost (tokens by the meter's heuristic)\n")
    print(cost_table(rows))
    print("\nThe notes' claims against the evidence\n")
    print(claims_table(found))
    print("\nCounterexamples (shortest cut of the scenario, then each chunk left out while the failure stays)\n")
    print(_counterexamples(rows, short))
    if diagram_form is not None:
        print(f"\nThe loop's state diagram ({diagram_form})\n")
        print(diagram(diagram_form), end="")
    if plot is not None:
        print(f"\nplot written to {plot}")
    return 0
