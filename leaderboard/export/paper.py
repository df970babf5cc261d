"""``statbench leaderboard export``: one board as a table for a paper (LaTeX, Markdown, CSV).

The table is the board's, not a new comparison: its rows are collected and grouped exactly
as ``leaderboard build`` groups them (:func:`statbench.leaderboard.collect.reading.collect`: one
board = one task version, data, split set and measure definitions), labelled as the board
labels them, and the significance markers are the board's own tests
(:func:`statbench.leaderboard.render.task_page.board_significance`: every system of the whole board against
the baseline, Holm over all of them, so a figure does not change with the rows exported).
A row of another board, or a reduced-budget row not asked for, is refused (one line, exit 2),
never set beside the others. Only click is imported at module level."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

#: the formats (kept in step with statbench.commands.table_formats.FORMATS, which a test checks)
FORMAT_CHOICES = ("latex", "markdown", "csv")


@dataclass
class Export:
    table: object  #: a statbench.commands.table_formats.PaperTable
    notes: list[str] = field(default_factory=list)  #: said on stderr (rows left out, untested rows)
    tested: str | None = None  #: the board's tested measure (kept first when columns are cut to fit)


def _selector_matches(rows, labels: dict[str, str], selector: str) -> list:
    """The rows ``selector`` names: its label on the board, else its key, else its model
    name (``bm25``) or name with reranker (``bm25 → monot5``): every configuration of it."""
    for attribute in (lambda r: labels[r.key], lambda r: r.key):
        found = [r for r in rows if attribute(r) == selector]
        if found:
            return found
    return [r for r in rows if selector in (r.name, r.model.name)]


def _board_labels(rows) -> dict[str, str]:
    """Row key -> the label the board shows it under."""
    from statbench.leaderboard.render.rows import short_params, unique_labels

    views = [{"key": r.key, "name": r.model.name,
              "params": short_params(r, "retrievers") if not r.model.name.startswith("pool:") else "",
              "reranker": None if r.reranker is None else {"name": r.reranker.name,
                                                          "params": short_params(r, "rerankers")},
              "pool": r.pool} for r in rows]
    return unique_labels(views, rows)


def _select(collected, board: str, rows, labels, selectors, include_budget: bool, notes: list[str]) -> list:
    """The rows to export, in the order asked (the board's order without ``--rows``)."""
    from statbench.errors import StatbenchError

    if not selectors:
        chosen = list(rows)
    else:
        chosen = []
        for selector in selectors:
            found = _selector_matches(rows, labels, selector)
            if not found:
                for other, other_rows in collected.boards.items():
                    if other != board and _selector_matches(other_rows, _board_labels(other_rows), selector):
                        raise StatbenchError(
                            f"row {selector!r} is on board {other!r}, not on {board!r}: rows of two boards were "
                            "scored on other data, splits, task version or measure definitions and are not "
                            "set side by side; export each board on its own")
                shown = ", ".join(sorted(labels.values())[:8])
                raise StatbenchError(f"no row {selector!r} on board {board!r} (rows: {shown}"
                                     f"{', ...' if len(labels) > 8 else ''}); a row is named by its label, "
                                     "model name or key")
            chosen += [r for r in found if r not in chosen]
    budget = [r for r in chosen if r.budget]
    if budget and not include_budget:
        if selectors:
            r = budget[0]
            raise StatbenchError(f"row {labels[r.key]!r} ran a reduced budget ({r.budget}), not the protocol's "
                                 "settings: its figures are not the model's; --include-budget exports it, labelled")
        notes.append(f"{len(budget)} reduced-budget row(s) left out (not the protocol's settings; "
                     "--include-budget exports them, labelled)")
        chosen = [r for r in chosen if not r.budget]
    if not chosen:
        raise StatbenchError(f"no row of board {board!r} to export")
    return chosen


def _measures(rows, info: dict, wanted) -> list[str]:
    from statbench.commands.compare import measure_label
    from statbench.errors import StatbenchError

    labels = [m["label"] for m in info["measures"]]
    if not wanted:
        return labels
    chosen = []
    for measure in wanted:
        label = measure_label(rows[0].results.measures, measure)
        if label not in labels:
            raise StatbenchError(f"--measure {measure!r} is not a measure of this board (measures: {', '.join(labels)})")
        if label not in chosen:
            chosen.append(label)
    return chosen


def _check_table_words(label: str | None, caption: str | None) -> None:
    """Refuses a malformed LaTeX label or an empty caption before anything is read."""
    from statbench.commands.table_formats import check_label
    from statbench.errors import StatbenchError

    if label is not None:
        check_label(label)
    if caption is not None and not caption.strip():
        raise StatbenchError("--caption is empty: give the caption's text, or leave the option out")


def _accepted_rows(collected, board: str, results_dir) -> tuple[list, dict, list]:
    """The board's rows that `leaderboard check` accepts (a results repository's refused rows
    are off the table, as off the site), each row's verdict, and the (row, why) of those left off."""
    from statbench.errors import StatbenchError
    from statbench.leaderboard.repo.submission import accepted_submission

    if board not in collected.boards:
        names = ", ".join(sorted(collected.boards)) or "none"
        raise StatbenchError(f"no board {board!r} in {results_dir} (boards: {names})")
    rows = collected.boards[board]
    markers: dict[str, bool] = {}
    accepted = {r.key: accepted_submission(r.path, lambda r=r: r.results, markers) for r in rows}
    off = [(r, accepted[r.key]) for r in rows if isinstance(accepted[r.key], str)]
    if off:
        rows = [r for r in rows if all(r is not o for o, _ in off)]
        collected.boards[board] = rows  # _select reads the board from collected
        if not rows:
            raise StatbenchError(f"no row of board {board!r} is a submission 'leaderboard check' accepts "
                                 f"({off[0][1]})")
    return rows, accepted, off


def _board_order(rows, labels: dict[str, str], tested: str) -> dict[str, int]:
    """Row key -> its place in the board's order: by its tested measure, best first."""
    return {r.key: i for i, r in enumerate(sorted(
        rows, key=lambda r: (-(r.results.aggregate[tested].mean if tested in r.results.aggregate else float("-inf")),
                             labels[r.key])))}


def _annotate_rows(chosen, accepted: dict, labels: dict[str, str], notes: list[str]) -> None:
    """Gives each row its level and card, as the board shows them (.levels); their problems go to ``notes``."""
    from statbench.leaderboard.render.admitted import annotate
    from statbench.leaderboard.reproduce.verdicts import VerdictReader

    verdicts = VerdictReader(notes)
    for r in chosen:
        annotate(r, verdicts, accepted[r.key])
        notes.extend(f"{labels[r.key]}: {problem}" for problem in r.problems)


def _untested_notes(rows, chosen, chosen_measures: list[str], base, labels: dict[str, str]) -> list[str]:
    """Why an exported row has no significance marker on an exported measure."""
    from statbench.leaderboard.render.task_page import board_significance

    notes = []
    for measure in chosen_measures:
        _, untested = board_significance(rows, measure, base)
        for r, why in untested:
            if r in chosen:
                notes.append(f"{labels[r.key]}: not tested against {labels[base.key]} on {measure}: {why}")
    return notes


def _run_row(r, chosen_measures: list[str], family, multi: bool, labels: dict[str, str], base, verify):
    """A run's row: its figures with the board's marks, its label with what sets it apart."""
    from statbench.commands.table_formats import Cell, TableRow

    cells = []
    for measure in chosen_measures:
        agg = r.results.aggregate.get(measure)
        mark = family.marks.get((r.key, measure))
        marker = ""
        if mark is not None and mark.direction:
            marker = "up" if mark.direction > 0 else "down"
        cells.append(Cell(value=None if agg is None else agg.mean,
                          std=agg.std if agg is not None and multi else None,
                          marker=marker, p=None if mark is None else mark.p_holm))
    label = labels[r.key]
    if r is base:
        label += " (baseline)"
    if r.budget:
        label += f" (reduced budget: {r.budget})"
    if verify is not None:  # the level in words when anything was checked; else one footnote says
        label += f" ({r.level.name})"
    if r.card is not None and r.card.test_queries_seen:
        label += " (test queries seen, declared)"
    return TableRow(label, tuple(cells))


def _reference_rows(views, chosen_measures: list[str]) -> tuple:
    """Published figures' rows (no marks, never ranked)."""
    from statbench.commands.table_formats import Cell, TableRow

    out = []
    for v in views:
        means = {c["label"]: c["mean"] for c in v["cells"]}
        out.append(TableRow(f"{v['name']} ({v['source']})" if v.get("source") else v["name"],
                            tuple(Cell(means.get(m)) for m in chosen_measures)))
    return tuple(out)


def _run_sections(chosen, make_row) -> tuple[list, list]:
    """The runs' sections, and the rows whose card declares test queries seen: as on the board,
    those are out of the ranking, in a section after the others."""
    from statbench.commands.table_formats import Section

    seen = [r for r in chosen if r.card is not None and r.card.test_queries_seen]
    ranked_rows = [r for r in chosen if all(r is not x for x in seen)]
    sections = [Section(None, tuple(make_row(r) for r in ranked_rows))] if ranked_rows or not seen else []
    if seen:
        sections.append(Section("Test queries seen in training or tuning (declared): not ranked",
                                tuple(make_row(r) for r in seen), ranked=False, with_runs=True))
    return sections, seen


def _published_sections(info: dict, chosen_measures: list[str], notes: list[str]) -> list:
    """The published figures: those on the board's data, then each set published on other data
    (shown apart, never ranked or tested); their problems go to ``notes``."""
    from statbench.commands.table_formats import Section
    from statbench.leaderboard.render.rows import reference_views

    sections = []
    problems: list[str] = []
    refs = reference_views(info["published"], info["measures"], problems)
    if refs:
        sections.append(Section("Published figures (as the papers report them; same data)",
                                _reference_rows(refs, chosen_measures), ranked=False))
    apart = sorted(info["published_apart"].items())
    for i, (title, figures) in enumerate(apart, 1):
        number = f" ({i})" if len(apart) > 1 else ""
        sections.append(Section(f"Published on other data{number}: not comparable",
                                _reference_rows(reference_views(figures, info["measures"], problems),
                                                chosen_measures), ranked=False,
                                notes=((f"Published on other data{number}: {title}; shown apart, never ranked "
                                        "or tested."),)))
    notes += problems
    return sections


def _board_footnotes(board: str, rows, info: dict, sections, seen) -> list[str]:
    """What the board is (task, data, version, protocol), what its split means say, and what bold
    and underline mark."""
    from statbench.commands.table_formats import split_means_note
    from statbench.leaderboard.render.board_info import data_words

    result = rows[0].results
    footnotes = [f"Board {board} (task {rows[0].task}): {data_words(info['data'], info['unit'])}; task version "
                 f"{result.task.version or '1'}, data checksum {result.task.data_checksum[:12]}"
                 + (f"; protocol: {info['protocol']}" if info["protocol"] else "") + "."]
    footnotes.append(split_means_note(result.splits))
    footnotes.append("Bold: best, underlined: second best figure of each column among the runs "
                     "(compared as printed; tied figures are all marked"
                     + ("; published figures are not ranked" if any(not (x.ranked or x.with_runs) for x in sections)
                        else "")
                     + ("; rows whose card declares test queries seen are not ranked" if seen else "") + ").")
    return footnotes


def _marks_footnote(board: str, base, labels: dict[str, str], family, notes: list[str]) -> str:
    """What the arrows mean (the test, its correction and family), or that there are none."""
    from statbench.leaderboard.render.build import DEFAULT_BASELINE
    from statbench.scoring.significance import ALPHA

    if base is not None:
        return (f"↑/↓: significantly better/worse than the baseline {labels[base.key]} "
                f"(two-sided Wilcoxon signed-rank test on per-query scores, zero differences dropped; "
                f"Holm–Bonferroni correction over all {family.tests} tests of the board: every system "
                f"tested against it on each of its {len(family.measures)} measures; α = {ALPHA:g}).")
    notes.append(f"no results of baseline {DEFAULT_BASELINE!r} on board {board!r}: no significance markers "
                 "(--baseline NAME picks another)")
    return f"No significance tests: no results of baseline {DEFAULT_BASELINE!r} on this board."


def _checked_footnote(chosen, verify) -> str:
    """What was checked of the rows: nothing without --verify, else each level's count, when and by what."""
    from statbench.leaderboard.verify.levels import LEVELS, SELF_REPORTED

    if verify is None:
        return "All figures self-reported: exported without --verify, nothing was re-computed."
    verified = [r.verification for r in chosen if r.verification is not None and r.verification.status == "verified"]
    counts = {level: sum(1 for r in chosen if r.level.name == level) for level in LEVELS}
    dates = sorted({v.verified_on for v in verified if v.verified_on})
    versions = sorted({v.statbench_version for v in verified if v.statbench_version})
    return ("What was checked, in each row's label: "
            + ", ".join(f"{n} {level}" for level, n in counts.items() if n)
            + (f" (re-scored from their run files on {', '.join(dates)}" if dates else "")
            + (f" by statbench {', '.join(versions)}" if versions else "") + (")" if dates else "")
            + "; reproduced: re-run from its declared source with the same run file; re-scored: "
              "figures re-computed from its run file; "
            + f"{SELF_REPORTED}: nothing re-computed.")


def build_export(results_dir, board: str, measures=(), selectors=(), baseline: str | None = None,
                 include_budget: bool = False, published: bool = False, verify=None,
                 label: str | None = None, caption: str | None = None) -> Export:
    """The table of ``board`` under ``results_dir``: the rows (``selectors``) and
    ``measures`` asked for (all by default), significance against ``baseline`` (the
    board's default, ``bm25``, when None; a baseline named but absent is refused).
    ``verify``: a :class:`~statbench.leaderboard.verify.verify.Verifier`, as ``build --verify``
    uses it (refused rows are not on the board; unverifiable ones only when it allows them,
    labelled "unverified"). ``published``: add the published figures (in LaTeX a table of
    their own). ``label``/``caption``: the LaTeX label (default ``tab:statbench-BOARD``) and
    the caption (default ``Results on BOARD``)."""
    from statbench.commands.table_formats import PaperTable, label_for
    from statbench.errors import StatbenchError
    from statbench.leaderboard.collect.reading import collect
    from statbench.leaderboard.ranking.board_tests import board_tests
    from statbench.leaderboard.render.board_info import task_info
    from statbench.leaderboard.render.build import DEFAULT_BASELINE
    from statbench.leaderboard.render.task_page import board_significance, pick_baseline
    from statbench.scoring.significance import primary_measure

    _check_table_words(label, caption)
    collected = collect(Path(results_dir), verify=verify)
    rows, accepted, off = _accepted_rows(collected, board, results_dir)
    info = task_info(rows[0].task, rows)
    labels_all = [m["label"] for m in info["measures"]]
    chosen_measures = _measures(rows, info, measures)
    labels = _board_labels(rows)
    base = pick_baseline(rows, baseline or DEFAULT_BASELINE)
    notes: list[str] = [f"left off {r.path}: not a submission 'leaderboard check' accepts: {problem}"
                         for r, problem in off]
    if base is None and baseline is not None:
        raise StatbenchError(f"no results of baseline {baseline!r} on board {board!r}: nothing to test against "
                             f"(rows: {', '.join(sorted(labels.values())[:8])})")
    tested = primary_measure(rows[0].task, labels_all, info["info"])
    index = _board_order(rows, labels, tested)
    chosen = _select(collected, board, rows, labels, selectors, include_budget, notes)
    _annotate_rows(chosen, accepted, labels, notes)
    if not selectors:
        chosen.sort(key=lambda r: index[r.key])
    notes.extend(_untested_notes(rows, chosen, chosen_measures, base, labels))
    # the board's own marks: one Holm family over every (row, measure) test of the board, as the site
    # built without --measure shows them (ranking.board_tests), whatever measures are exported
    family, _ = board_tests(rows, base, labels_all, None, tested, board_significance(rows, tested, base)[0])
    multi = rows[0].multi_split
    sections, seen = _run_sections(
        chosen, lambda r: _run_row(r, chosen_measures, family, multi, labels, base, verify))
    if published:
        sections += _published_sections(info, chosen_measures, notes)
    footnotes = _board_footnotes(board, rows, info, sections, seen)
    footnotes.append(_marks_footnote(board, base, labels, family, notes))
    footnotes.append(_checked_footnote(chosen, verify))
    if any(r.budget for r in chosen):
        footnotes.append("Rows marked 'reduced budget' ran reduced settings, not the protocol's: "
                         "they are not the models' figures.")
    table = PaperTable(caption=caption if caption is not None else f"Results on {board}",
                       measures=tuple(chosen_measures), sections=tuple(sections), footnotes=tuple(footnotes),
                       tested=base is not None, label=label if label is not None else label_for("tab:statbench", board))
    return Export(table, notes, tested)


@click.command("export")
@click.argument("results_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--board", required=True, help="The board to export (its name as the site shows it, e.g. stard), or "
                                             "overview: a declared benchmark's configurations across its tasks.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES + ("mteb",)), default="latex", show_default=True,
              help="A table, or mteb: each row as MTEB's results files under --output DIR (leaderboard/export/mteb.py).")
@click.option("--measure", "measures", multiple=True, help="A measure column; repeat it [default: every measure].")
@click.option("--rows", "rows", multiple=True,
              help="A row, by its label on the board, model name or key; repeat it [default: every row].")
@click.option("--baseline", help="Model the significance markers test against [default: bm25, as the board].")
@click.option("--include-budget", is_flag=True, help="Export reduced-budget rows too (labelled).")
@click.option("--published/--no-published", default=False, show_default=True,
              help="Add the figures the papers published (LaTeX: a second table, LABEL-published; Markdown, CSV: "
                   "sections after the runs).")
@click.option("--label", help="LaTeX \\label of the table: letters, digits, - : . [default: tab:statbench-BOARD].")
@click.option("--caption", help="The table's caption [default: Results on BOARD]; Markdown shows it above, "
                                "CSV says it on stderr.")
@click.option("--output", type=click.Path(path_type=Path), help="Write here [default: stdout; --format mteb: a folder].")
@click.option("--verify", is_flag=True,
              help="Re-score each row's run file first (as leaderboard build --verify): refused rows are left out, "
                   "a footnote says what was verified.")
@click.option("--allow-unverified", is_flag=True,
              help="With --verify: keep rows that cannot be verified here, marked 'unverified'.")
@click.option("--data-dir", "data_dirs", multiple=True, metavar="TASK=DIR",
              help="With --verify: the local data of a task (repeat per task) [default: the task's data folder].")
@click.option("--benchmark", help="With --board overview: the benchmark (statbench list benchmarks) "
                                  "[default: the only one declared].")
def export(results_dir, board, fmt, measures, rows, baseline, include_budget, published, label, caption, output,
           verify, allow_unverified, data_dirs, benchmark):
    """One board as a table for a paper: LaTeX (booktabs), GitHub Markdown or CSV.

    The LaTeX table fits a one-column article (345 pt): without --measure it has the
    board's tested measure and then as many of the others as fit (the rest named on
    stderr; Markdown and CSV have every measure). --board overview: a benchmark's overview
    (each task's primary figure, tasks run, Borda and mean rank with 95% intervals), label
    tab:statbench-overview."""
    from statbench.commands.table_formats import (
        COLUMN_PT,
        PAGE_PT,
        fit_to_column,
        latex_height,
        latex_width,
        one_line,
        render,
        write_table,
    )
    from statbench.leaderboard.export.overview import OVERVIEW_BOARD, run_overview_export
    from statbench.leaderboard.verify.verify import verifier_from_options

    if (allow_unverified or data_dirs) and not verify:
        raise click.UsageError("--allow-unverified and --data-dir go with --verify")
    if label is not None and fmt != "latex":
        raise click.UsageError("--label is LaTeX's \\label: it goes with --format latex")
    if caption is not None and fmt == "mteb":
        raise click.UsageError("--caption is a table's: MTEB's results files have none")
    if benchmark is not None and board != OVERVIEW_BOARD:
        raise click.UsageError(f"--benchmark goes with --board {OVERVIEW_BOARD}")
    verifier = verifier_from_options(data_dirs, allow_unverified) if verify else None
    if board == OVERVIEW_BOARD:
        return run_overview_export(results_dir, fmt, benchmark, label, caption, output, verifier, {
            "--measure": measures, "--rows": rows, "--baseline": baseline, "--include-budget": include_budget,
            "--published": published})
    if fmt == "mteb":  # MTEB's results layout, not a table
        from statbench.leaderboard.export.mteb import run_mteb_export

        return run_mteb_export(results_dir, board, output, rows, measures, include_budget, verifier,
                               select=_select, labels_of=_board_labels)  # the rows as this command picks them
    if output is not None and output.is_dir():
        raise click.BadParameter(f"{output} is a directory (a table is one file)", param_hint="--output")
    result = build_export(results_dir, board, measures, rows, baseline, include_budget, published, verify=verifier,
                          label=label, caption=caption)
    table = result.table
    if fmt == "latex":
        if not measures:
            table, left_out = fit_to_column(table, result.tested)
            if left_out:
                result.notes.append(f"{len(left_out)} measure(s) left out so that the table fits a one-column article "
                                    f"({COLUMN_PT:g} pt): {', '.join(left_out)}; --measure picks the columns "
                                    "(Markdown and CSV have every measure)")
        width = latex_width(table)
        if width > COLUMN_PT:
            result.notes.append(f"the table is about {width:.0f} pt wide, wider than a one-column article's text "
                                f"({COLUMN_PT:g} pt): fewer --measure, or set it in a table* of a two-column layout")
        height = latex_height(table)
        if height > PAGE_PT:
            result.notes.append(f"the table is about {height:.0f} pt tall, taller than a one-column article's page "
                                f"({PAGE_PT:g} pt): LaTeX will say 'Float too large for page'; --rows picks the rows")
    for note in result.notes:
        click.echo(f"note: {one_line(note)}", err=True)
    if fmt == "csv":  # a CSV has no caption or footnotes: they go to stderr
        click.echo(f"note: caption: {one_line(table.caption)}", err=True)
        for line in table.notes():
            click.echo(f"note: {one_line(line)}", err=True)
    write_table(render(table, fmt), output)
