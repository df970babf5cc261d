"""``statbench leaderboard export --board overview``: a benchmark's overview as a table for a
paper (LaTeX, Markdown, CSV): one row per configuration, each task's primary figure, the
tasks run, the Borda rank and the mean rank with their 95% intervals.

The rows, columns and ranks are the site's (:mod:`statbench.leaderboard.render.overview_data`,
from rows admitted as the site admits them); a missing task is a blank cell, never 0. The
table is not a :class:`~statbench.commands.table_formats.PaperTable` (whose columns are
figures, higher better): ranks are lower-better texts with an interval."""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from statbench.commands.table_formats import (
    COLUMN_PT,
    TABCOLSEP,
    check_label,
    csv_text,
    label_for,
    latex_escape,
    markdown_escape,
    printed,
    text_width,
)
from statbench.errors import StatbenchError, UnknownNameError
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.render.admitted import admit_rows
from statbench.leaderboard.render.overview_data import ALL, Overview
from statbench.leaderboard.render.overview_page import benchmark_overviews
from statbench.leaderboard.render.report import BuildReport
from statbench.registry.plugins import get_registry

#: what ``--board`` names the overview by
OVERVIEW_BOARD = "overview"
DEFAULT_LABEL = "tab:statbench-overview"


@dataclass
class OverviewTable:
    caption: str
    label: str
    tasks: list[tuple[str, str]]  #: (task, primary measure) per figure column
    rows: list[dict]  #: label, figures (None: not run), marks, run, borda, mean (texts; "" unranked)
    footnotes: list[str]
    notes: list[str] = field(default_factory=list)  #: said on stderr
    total: int = 0  #: the benchmark's tasks (``tasks`` may leave out those no configuration ran)


def pick_benchmark(name: str | None, registry=None):
    """The declared benchmark ``name``, or the only one when None (several: refused, naming them)."""
    registry = registry or get_registry()
    ids = sorted(registry.benchmarks)
    if name is not None:
        try:
            return registry.get("benchmarks", name).cls
        except UnknownNameError:
            raise UnknownNameError("benchmark", name, ids) from None
    if not ids:
        raise StatbenchError("no benchmark is declared (a plugin declares one with register_benchmarks; "
                             "STATBENCH_LOAD_PLUGINS may have left statbench's own statutes-v1 out)")
    if len(ids) > 1:
        raise StatbenchError(f"{len(ids)} benchmarks are declared ({', '.join(ids)}): --benchmark NAME picks one")
    return registry.benchmarks[ids[0]].cls


def build_overview_export(results_dir, benchmark: str | None = None, verify=None, label: str | None = None,
                          caption: str | None = None) -> OverviewTable:
    """The overview table of ``benchmark`` (the only declared one by default) over the
    results under ``results_dir``; ``verify``: as ``leaderboard build --verify``."""
    if label is not None:
        check_label(label)
    if caption is not None and not caption.strip():
        raise StatbenchError("--caption is empty: give the caption's text, or leave the option out")
    registry = get_registry()
    bench = pick_benchmark(benchmark, registry)
    collected = collect(Path(results_dir), verify=verify)
    if OVERVIEW_BOARD in collected.boards:
        raise StatbenchError(f"a task board is named {OVERVIEW_BOARD!r}, which --board {OVERVIEW_BOARD} names the "
                             "benchmark overview by: that board cannot be exported by its name")
    report = BuildReport(out_dir=Path(results_dir))
    boards = dict(collected.boards)
    admit_rows(boards, report)
    (found,) = [o for o in benchmark_overviews(boards, collected.keys, registry) if o.benchmark is bench]
    if not found.rows:
        raise StatbenchError(f"no result on a task of benchmark {bench.id} ({', '.join(bench.task_names)}) "
                             f"in {results_dir}")
    several = len(registry.benchmarks) > 1
    table = _table(found, label or (label_for(DEFAULT_LABEL, bench.id) if several else DEFAULT_LABEL),
                   caption if caption is not None else f"Benchmark {bench.id}: configurations across its tasks")
    table.notes += report.problems
    table.notes += [f"{c.task}: not run (no result on a board of the task at its declared protocol and version)"
                    for c in found.columns if c.board is None]
    return table


def _table(o: Overview, label: str, caption: str) -> OverviewTable:
    rows = []
    for r in o.rows:
        rank = r.ranks.get(ALL)
        rows.append({
            "label": r.label, "figures": list(r.cells), "marks": list(r.marks), "run": r.tasks_run,
            "borda": "" if rank is None else f"{rank.borda_rank} ({rank.borda_low}–{rank.borda_high})",
            "mean": "" if rank is None else f"{rank.mean_rank:.2f} ({rank.mean_rank_low:.2f}–{rank.mean_rank_high:.2f})",
            "borda_points": None if rank is None else rank.borda,
        })
    boards = "; ".join(f"{c.task}: {'board ' + c.board if c.board else 'not run'}" for c in o.columns)
    footnotes = [
        f"Each task's primary measure on its board ({boards}); a blank cell: not run, never counted as 0.",
        ("Borda rank: by the points summed over the tasks a configuration ran (one per configuration beaten on a task, "
         "a half per tie); mean rank: the mean of its per-task ranks over the tasks it ran; a configuration with fewer "
         "tasks run has fewer points. Ranks use each task's mean over all its queries."),
        f"95% intervals from {o.resamples:,} bootstrap resamples of each task's queries (paired within a task).",
    ]
    if any(m in ("seen", "queries") for r in o.rows for m in r.marks):
        footnotes.append("†: saw the task's test queries (declared); ‡: scored on other queries than its board; "
                         "both shown, not ranked on that task.")
    return OverviewTable(caption=caption, label=label, tasks=[(c.task, c.measure) for c in o.columns], rows=rows,
                         footnotes=footnotes)


_MARK = {"seen": "†", "queries": "‡"}


def _figure(value, mark) -> str:
    return "" if value is None else printed(value) + _MARK.get(mark or "", "")


def _cells(row: dict) -> list[str]:
    return [_figure(v, m) for v, m in zip(row["figures"], row["marks"])] + [str(row["run"]), row["borda"], row["mean"]]


def _header(table: OverviewTable) -> tuple[list[str], list[str]]:
    return ([t for t, _ in table.tasks] + ["tasks", "Borda rank", "mean rank"],
            [m for _, m in table.tasks] + [f"of {table.total or len(table.tasks)}", "(95%)", "(95%)"])


def run_only(table: OverviewTable) -> OverviewTable:
    """The table without the columns of tasks no configuration ran (LaTeX: a column's
    width is a column's), a footnote naming them."""
    keep = [i for i in range(len(table.tasks)) if any(r["figures"][i] is not None for r in table.rows)]
    if len(keep) == len(table.tasks):
        return table
    left = [table.tasks[i][0] for i in range(len(table.tasks)) if i not in keep]
    rows = [dict(r, figures=[r["figures"][i] for i in keep], marks=[r["marks"][i] for i in keep]) for r in table.rows]
    return replace(table, tasks=[table.tasks[i] for i in keep], rows=rows, total=len(table.tasks),
                   footnotes=[*table.footnotes, f"Not run by any configuration (no column): {', '.join(left)}."])


def latex_width(table: OverviewTable) -> float:
    """The tabular's width (pt) with every label on one line (an estimate, wide side), without
    the columns of tasks no configuration ran (:func:`run_only`)."""
    table = run_only(table)
    names, measures = _header(table)
    columns = [max(text_width(a), text_width(b), *(text_width(_cells(r)[i]) for r in table.rows))
               for i, (a, b) in enumerate(zip(names, measures))]
    label = max([text_width("configuration")] + [text_width(r["label"]) for r in table.rows])
    return (label + sum(columns) + 2 * TABCOLSEP * (len(columns) + 1)) * 1.01


def _wrapped(text: str, width: float) -> str:
    """A label in a ``p`` column of ``width`` pt: ragged right, a word wider than the column
    breakable after any character (else it would stick out: an overfull box)."""
    words = [r"\allowbreak{}".join(latex_escape(ch) for ch in word) if text_width(word) > width else latex_escape(word)
             for word in text.split(" ")]
    return r"\raggedright\hspace{0pt}" + " ".join(words)


def _latex_text(text: str) -> str:
    """:func:`latex_escape`, the marks as math daggers (no package needed)."""
    return latex_escape(text).replace("†", r"$^{\dagger}$").replace("‡", r"$^{\ddagger}$")


def to_latex(table: OverviewTable) -> str:
    """A ``table`` float (booktabs); labels wrap in a ``p`` column when one line would be wider
    than a one-column article; wider than that still (many tasks): a ``table*``."""
    table = run_only(table)
    names, measures = _header(table)
    width = latex_width(table)
    label_room = None
    if width > COLUMN_PT:
        rest = width / 1.01 - max([text_width("configuration")] + [text_width(r["label"]) for r in table.rows])
        label_room = max(COLUMN_PT / 1.01 - rest, 70.0)
    env = "table*" if label_room is not None and label_room <= 70.0 else "table"
    first = "l" if label_room is None else f"p{{{label_room:.1f}pt}}"
    row_label = latex_escape if label_room is None else (lambda t: _wrapped(t, label_room))
    lines = ["% statbench table: needs \\usepackage{booktabs}", rf"\begin{{{env}}}[t]", r"\centering", r"\small",
             rf"\setlength{{\tabcolsep}}{{{TABCOLSEP:g}pt}}", r"\begin{tabular}{" + first + "r" * len(names) + "}",
             r"\toprule",
             " & ".join(["configuration"] + [latex_escape(n) for n in names]) + r" \\",
             " & ".join([""] + [latex_escape(m) for m in measures]) + r" \\", r"\midrule"]
    for row in table.rows:
        lines.append(" & ".join([row_label(row["label"])] + [_latex_text(c) for c in _cells(row)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\par\smallskip", r"\parbox{\linewidth}{\footnotesize\raggedright"]
    lines += [_latex_text(note) + r"\par" for note in table.footnotes]
    lines += ["}", rf"\caption{{{latex_escape(table.caption)}}}", rf"\label{{{table.label}}}", rf"\end{{{env}}}"]
    return "\n".join(lines) + "\n"


def to_markdown(table: OverviewTable) -> str:
    names, measures = _header(table)
    heads = [f"{n} ({m})" if i < len(table.tasks) else f"{n} {m}" for i, (n, m) in enumerate(zip(names, measures))]
    lines = [f"**{markdown_escape(table.caption)}**", "",
             "| " + " | ".join(["configuration"] + [markdown_escape(h) for h in heads]) + " |",
             "|:---|" + "---:|" * len(heads)]
    for row in table.rows:
        lines.append("| " + " | ".join([markdown_escape(row["label"])] + [markdown_escape(c) for c in _cells(row)]) + " |")
    lines += [""] + [markdown_escape(note) + "  " for note in table.footnotes]
    lines[-1] = lines[-1].rstrip()
    return "\n".join(lines) + "\n"


def to_csv(table: OverviewTable) -> str:
    """Full-precision figures (blank: not run), the tasks run, the Borda points and both ranks as printed."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_text(h) for h in ["configuration", *(f"{t} {m}" for t, m in table.tasks), "tasks run",
                                           "Borda points", "Borda rank (95%)", "mean rank (95%)"]])
    for row in table.rows:
        writer.writerow([csv_text(row["label"]), *("" if v is None else repr(float(v)) for v in row["figures"]),
                         row["run"], "" if row["borda_points"] is None else repr(float(row["borda_points"])),
                         csv_text(row["borda"]), csv_text(row["mean"])])
    return out.getvalue()


def render_overview(table: OverviewTable, fmt: str) -> str:
    return {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}[fmt](table)


def run_overview_export(results_dir, fmt: str, benchmark: str | None, label: str | None, caption: str | None,
                        output, verifier, board_only: dict) -> None:
    """The command's work for ``--board overview``. ``board_only``: the options given that
    only a task board takes (option -> whether given): any given is refused, never ignored."""
    from statbench.commands.table_formats import one_line, write_table

    given = [option for option, value in board_only.items() if value]
    if given:
        raise StatbenchError(f"{', '.join(given)}: for a task board's export, not --board {OVERVIEW_BOARD}'s (its "
                             "columns are each task's primary measure, its rows every configuration)")
    if fmt == "mteb":
        raise StatbenchError(f"--format mteb exports a task board's rows; --board {OVERVIEW_BOARD} is a table: "
                             "latex, markdown or csv")
    table = build_overview_export(results_dir, benchmark, verifier, label, caption)
    if fmt == "latex":
        width = latex_width(table)
        if width > COLUMN_PT:
            table.notes.append(f"the configurations' labels wrap so that the table fits a one-column article "
                               f"({COLUMN_PT:g} pt; one line each: about {width:.0f} pt)")
    for note in table.notes:
        print(f"note: {one_line(note)}", file=sys.stderr)
    if fmt == "csv":
        print(f"note: caption: {one_line(table.caption)}", file=sys.stderr)
        for line in table.footnotes:
            print(f"note: {one_line(line)}", file=sys.stderr)
    write_table(render_overview(table, fmt), output)
