"""Spec §22 (edge) — ``prefix-model review``: print the comparison, write its plot, or print the diagram alone.

Everything printed is computed by ``prefix_model.review``; this module only lays it out (the
design × property table and what each column checks, the staleness/survival/cost table and its
columns, the claims, every counterexample), as text that fits ``WIDTH`` columns or one JSON
object, and draws the plot with matplotlib, imported only when ``--plot`` asks for it. A table
wider than ``WIDTH`` is split into parts that each repeat the design column; a longer line is
wrapped, each continuation starting with ``↪``, and an action past ``ACTION_LINES`` lines is cut
with a marker that says so (``--json`` holds every action whole, in the vectors' action JSON).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from prefix_model.core.json_values import thaw
from prefix_model.edge.designs import LoadedDesign
from prefix_model.vectors.codec import action_to_json
from prefix_model.review.brief import action_brief
from prefix_model.review.claims import Claim, claims
from prefix_model.review.compare import RULES, Row, baseline_notes, compare, rule_legend
from prefix_model.review.designs import DESIGNS, Design
from prefix_model.review.diagram import dot, mermaid, transition_table

__all__ = ["REPORT_VERSION", "WIDTH", "ACTION_LINES", "COST_LEGEND", "run_review", "property_table", "cost_table", "claims_table", "legend",
           "as_json", "plot_lines", "write_plot", "diagram", "fenced", "run_diagram"]  # fmt: skip

REPORT_VERSION = 2  # 2: counterexample actions are the vectors' action objects, no longer Python reprs
WIDTH = 100  # a terminal's columns: every line of the text fits
ACTION_LINES = 4  # an action wraps to at most this many lines, then is cut (saying so)
CONTINUED = "↪ "  # starts a wrapped line's continuation


def _fit(text: str, first: str, rest: str, most: int | None = None, marker: str = "") -> list[str]:
    """``text`` wrapped to ``WIDTH`` after ``first`` (continuations after ``rest`` and ``marker``), at most ``most`` lines, the last then saying it was cut.

    Prose wraps under a hanging indent; an action or a request line, whose wrap is not a space in
    its text, marks each continuation with ``CONTINUED``.
    """
    lines = textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest + marker, break_on_hyphens=False) or [first.rstrip()]
    if most is None or len(lines) <= most:
        return lines
    marker = " … (cut; --json shows it whole)"
    return [*lines[: most - 1], lines[most - 1][: WIDTH - len(marker)].rstrip() + marker]


def _table(header: list[str], body: list[list[str]]) -> str:
    """The table, split into parts of at most ``WIDTH`` columns, each repeating the first column."""
    widths = [max(len(row[n]) for row in [header, *body]) for n in range(len(header))]
    parts: list[list[int]] = [[]]
    for n in range(1, len(header)):
        if parts[-1] and widths[0] + sum(widths[k] + 2 for k in [*parts[-1], n]) > WIDTH:
            parts.append([])
        parts[-1].append(n)
    shown = []
    for part in parts:
        columns = [0, *part]
        lines = ["  ".join(row[k].ljust(widths[k]) for k in columns).rstrip() for row in [header, *body]]
        shown.append("\n".join([lines[0], "  ".join("-" * widths[k] for k in columns), *lines[1:]]))
    return "\n\n".join(shown)


def legend(entries: tuple[tuple[str, str], ...]) -> str:
    """Each column's name and what it shows, wrapped to ``WIDTH``."""
    name = max(len(column) for column, _ in entries)
    return "\n".join(line for column, text in entries for line in _fit(text, f"  {column:<{name}}  ", " " * (name + 4)))


def property_table(rows: tuple[Row, ...]) -> str:
    """Return the design × property table: ✓ holds on every cut of the scenario, ✗ fails (a counterexample follows)."""
    rules = [rule for rule, _ in RULES]
    return _table(["design", *rules], [[r.design.key, *("✗" if rule in r.failed else "✓" for rule in rules)] for r in rows])


COST_LEGEND: tuple[tuple[str, str], ...] = (
    ("requests", "loop requests sent over the scenario (the compaction summarizer's are not counted)"),
    ("stale", "requests that carried an opener older than the one current when they were sent (see fresh)"),
    ("longest", "the most stale requests in a row within one instance"),
    ("lost/at risk", "requests that carried no opener, of those sent after a compaction or in a fork's child"),
    ("tokens", "all tokens of all requests (the meter's heuristic)"),
    ("paid", "tokens not served by the prompt cache: those past the longest prefix shared with the same "
             "instance's previous request"),  # fmt: skip
    ("hit", "cached tokens over all tokens"),
    ("paid/req", "paid tokens per request"),
    ("opener paid", "opener tokens among the paid ones"),
    ("history copies", "opener messages left in the sessions' histories at the end (their tokens)"),
)


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
    """Return the claims, each with its verdict and the numbers behind it, wrapped to ``WIDTH``."""
    return "\n".join(line for c in found for line in _fit(f"[{c.verdict}] {c.claim} — {c.source}; {c.design}: {c.evidence}", "- ", "  "))


def _counterexamples(rows: tuple[Row, ...], short: bool) -> str:
    out = []
    for row in rows:
        for ce in row.counterexamples:
            out += _fit(f"{ce.design} ✗ {ce.rule}: {len(ce.actions)} actions over {', '.join(ce.segments)}", "", "  ")
            if short:
                continue
            for n, action in enumerate(ce.actions, 1):
                out += _fit(action_brief(action), f"    {n:2} ", " " * 7, ACTION_LINES, CONTINUED)
            shown = [*ce.violations[:3], *([f"… and {len(ce.violations) - 3} more"] if len(ce.violations) > 3 else [])]
            out += [line for v in shown for line in _fit(v, "  ! ", "    ")]
            out += [line for text in ce.shown for line in _fit(text.lstrip(" "), "  " + text[: len(text) - len(text.lstrip(" "))], "      ", None, CONTINUED)]
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
            "counterexamples": [{"rule": ce.rule, "segments": list(ce.segments), "actions": [thaw(action_to_json(a)) for a in ce.actions],
                                 "violations": list(ce.violations), "shown": list(ce.shown)} for ce in r.counterexamples],
        })  # fmt: skip
    return {"version": REPORT_VERSION, "rules": [rule for rule, _ in RULES], "legend": dict(rule_legend()), "designs": designs,
            "claims": [{"source": c.source, "claim": c.claim, "design": c.design, "verdict": c.verdict, "evidence": c.evidence} for c in found]}  # fmt: skip


MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h", "p", "d")  # one per catalogue design (more cycle)


def _cumulative(row: Row) -> tuple[int, ...]:
    total, ys = 0, []
    for priced in row.measures.costs.per_request:
        total += priced.paid
        ys.append(total)
    return tuple(ys)


def plot_lines(rows: tuple[Row, ...]) -> list[tuple[str, tuple[int, ...], dict[str, object]]]:
    """Return each design's label, cumulative paid tokens and line style, so that equal curves all stay visible.

    Designs whose curves are equal form a group: the first (in the table's order, the design under
    review first) is drawn widest and lowest, each later one narrower on top of it, so the group
    shows as nested lines; each has its own marker, placed at alternate requests within its group;
    and each later one's label names the first, whose curve it repeats.
    """
    series = [_cumulative(r) for r in rows]
    groups: dict[tuple[int, ...], list[int]] = {}
    for n, ys in enumerate(series):
        groups.setdefault(ys, []).append(n)
    lines = []
    for n, (row, ys) in enumerate(zip(rows, series)):
        group = groups[ys]
        k = group.index(n)
        label = row.design.key + (f" (same as {rows[group[0]].design.key})" if k else "")
        style: dict[str, object] = {"linewidth": 1.5 + 2.5 * (len(group) - 1 - k), "zorder": 2 + k, "marker": MARKERS[n % len(MARKERS)],
                                    "markevery": (k, len(group)), "linestyle": ("-", "--", ":", "-.")[n % 4]}  # fmt: skip
        lines.append((label, ys, style))
    return lines


def write_plot(rows: tuple[Row, ...], path: Path) -> None:
    """Write the cumulative uncached tokens per request of each design to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(10, 6))
    colours = plt.get_cmap("tab20")
    for n, (label, ys, style) in enumerate(plot_lines(rows)):
        axes.plot(range(1, len(ys) + 1), ys, color=colours(n), label=label, **style)  # type: ignore[arg-type]
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


def fenced(form: str) -> str:
    """Return the diagram as a Markdown code block (```mermaid renders on GitHub; ```dot is shown as source)."""
    text = diagram(form)
    return f"```{form}\n{text}{'' if text.endswith(chr(10)) else chr(10)}```\n"


def run_diagram(as_json_output: bool, form: str) -> int:
    """Print the diagram alone (no review is computed): fenced for Markdown, or as ``{"diagram", "form"}``."""
    print(json.dumps({"version": REPORT_VERSION, "form": form, "diagram": diagram(form)}, ensure_ascii=False) if as_json_output else fenced(form), end="\n" if as_json_output else "")
    return 0


def run_review(as_json_output: bool, plot: Path | None, short: bool, turns: int, design: LoadedDesign | None = None) -> int:
    """Run the review and print it; return the exit status (0: printed and written).

    ``design`` (``--design``) is one more row, after the catalogue's, judged and measured as they are.
    """
    # NAME is an identifier and every catalogue key has a hyphen: the row's key never clashes with one.
    rows = compare(turns=turns) if design is None else compare((*DESIGNS, Design(design.name, str(design.path), design.summary, design.semantics)), turns)
    found = claims(rows)
    if plot is not None:
        write_plot(rows, plot)
    if as_json_output:
        print(json.dumps(as_json(rows, found), ensure_ascii=False))
        return 0
    print("\n".join(_fit("Design × property: ✓ holds on every cut of the scenario; ✗ fails on some cut (its shortest "
                         "counterexample is at the end). The first row is the design under review.", "", "")) + "\n")  # fmt: skip
    print(property_table(rows))
    print("\nWhat each column checks (spec §11, see `prefix-model docs`; fresh and survives are the review's own)\n")
    print(legend(rule_legend()))
    notes = baseline_notes(rows)
    if notes:
        print(f"\nWhy {rows[0].design.key}, the design under review, shows ✗\n")
        print("\n".join(line for note in notes for line in _fit(note, "- ", "  ")))
    print("\nStaleness, survival and prompt-cache cost (tokens by the meter's heuristic)\n")
    print(cost_table(rows))
    print("\nWhat each column shows\n")
    print(legend(COST_LEGEND))
    print("\nThe notes' claims against the evidence\n")
    print(claims_table(found))
    print("\nCounterexamples: the shortest cut of the scenario, then each chunk left out while the failure stays")
    print("(the longest part of this text; --short prints one line for each)\n" if not short else "")
    print(_counterexamples(rows, short))
    if plot is not None:
        print(f"\nplot written to {plot}")
    return 0
