"""``statbench compare A B --task T``: paired significance test of run B against run A.

Each input is a TREC run (scored here with the task's qrels, through the same code as
``statbench evaluate``) or a results JSON written by ``statbench run`` (its per-query
scores are used as they are, once the file has passed the checks a board applies too,
statbench.scoring.publishable: strict JSON, the schema, finite and in-range scores,
figures that agree). The two inputs must
have scored exactly the same queries (and, for two results files, on the same data):
anything else is refused with one line, never tested on part of the queries. Heavy
imports happen inside the command."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import click

from statbench.registry.hookspecs import hookimpl

log = logging.getLogger("statbench")


def _scores_of(path: Path, task: str | None, data_dir, splits):
    """(scores, task name, data checksum) for one input: the
    :class:`~statbench.results.record.Results` of a results JSON (and the checksum it recorded), or
    the :class:`~statbench.results.record.EvaluatedRun` of a TREC run (and the checksum of the
    data it was scored on here)."""
    if path.suffix == ".json":
        from statbench.scoring.publishable import read_publishable

        results = read_publishable(path)
        name = results.task.name
        if task and task != name:
            from statbench.errors import StatbenchError

            raise StatbenchError(f"{path}: results of task {name!r}, not {task!r}")
        return results, name, results.task.data_checksum
    if not task:
        from statbench.errors import StatbenchError

        raise StatbenchError(f"{path}: a TREC run needs --task to be scored")
    from statbench.scoring.evaluate_file import evaluate_run_file

    scores = evaluate_run_file(path, task, data_dir, splits, log)
    return scores, task, scores.data_checksum


def _measure_label(scores, wanted: str) -> str:
    """The label ``--measure`` names: a label the scores report, or a measure string
    (ir-measures or custom) one of their measures spells, or means once parsed by
    statbench.scoring.measures.parse_measure (``F(beta=2)@10`` finds a measure reported as
    ``F2@10``). Anything else is returned as given, for per_query_measure to refuse
    with the labels there are."""
    from statbench.results.record import as_scores

    return measure_label(as_scores(scores).measures, wanted)


def measure_label(measures, wanted: str) -> str:
    """:func:`_measure_label` among ``measures`` (each with a ``label`` and its
    ``ir_measure``: a task's declared measures, or those scores report)."""
    from statbench.errors import StatbenchError
    from statbench.scoring.measures import parse_measure

    if any(m.label == wanted for m in measures):
        return wanted
    same = [m.label for m in measures if m.ir_measure == wanted]
    if not same:
        try:
            parsed = parse_measure(wanted)
        except StatbenchError:
            return wanted
        for m in measures:
            try:
                if parse_measure(m.ir_measure) == parsed:
                    same.append(m.label)
            except StatbenchError:  # a custom measure whose plugin is not installed: spelling only
                continue
    return same[0] if same else wanted


def _definition(scores, label: str) -> str | None:
    """What ``label`` measures in ``scores`` (its ir-measures spelling), None if absent."""
    from statbench.results.record import as_scores

    return next((m.ir_measure for m in as_scores(scores).measures if m.label == label), None)


def _version(scores, installed: str | None) -> str | None:
    """The task version the scores were computed under: recorded in a results file (one
    written before it was recorded: the first version, as every task was then), the
    installed task's for a TREC run scored here."""
    from statbench.results.record import Results

    if isinstance(scores, Results):
        return scores.task.version or "1"
    return installed


def comparability_problem(a, b, labels: list[str], names: tuple[str, str], installed_version: str | None = None,
                          checksums: tuple[str | None, str | None] = (None, None)) -> str | None:
    """Why the inputs' figures on ``labels`` cannot be set side by side (None when they
    can): other data, another task version, or a label that measures something else.
    The data of each input: the checksum a results file recorded, else ``checksums`` (that
    of the data a TREC run was scored on)."""
    from statbench.results.record import Results

    data = [s.task.data_checksum if isinstance(s, Results) else c for s, c in zip((a, b), checksums)]
    if None not in data and data[0] != data[1]:
        task = next((s.task.name for s in (a, b) if isinstance(s, Results)), None)
        return (f"{names[0]} and {names[1]} were scored on different data"
                + (f" of task {task!r}" if task else "")
                + f" (data checksums {data[0][:12]} and {data[1][:12]}): not comparable")
    from statbench.data.runfile import TIE_ORDER
    from statbench.results.record import as_scores

    for name, scores in zip(names, (a, b)):  # no tie order: a statbench run, which holds no tie
        order = as_scores(scores).tie_order
        if order is not None and order != TIE_ORDER:
            return (f"{name} was scored with ties in another order ({order!r}) than the one statbench scores "
                    f"ties in ({TIE_ORDER}): not comparable")
    versions = (_version(a, installed_version), _version(b, installed_version))
    if None not in versions and versions[0] != versions[1]:
        return (f"{names[0]} and {names[1]} were scored by different versions of the task "
                f"({versions[0]} and {versions[1]}): not comparable")
    for label in labels:
        spelled = (_definition(a, label), _definition(b, label))
        if None not in spelled and spelled[0] != spelled[1]:
            return (f"{label} means {spelled[0]} in {names[0]} but {spelled[1]} in {names[1]}: "
                    "a label is not a measure; not comparable")
    return None


@click.command()
@click.argument("run_a", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--task", help="Task whose qrels score TREC runs (inferred from results JSON inputs).")
@click.option("--measure", "measures", multiple=True,
              help="Measure label to test; repeat it for several (Holm-adjusted over them) "
                   "[default: the task's primary measure].")
@click.option("--split", "splits", multiple=True, help="Only these splits/folds of the task (TREC runs).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Folder holding the task's files.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the test results as JSON.")
@click.option("--format", "fmt", type=click.Choice(("latex", "markdown", "csv")),
              help="Print the two inputs as a table for a paper instead (significance marker on B, "
                   "the test named in a footnote).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the --format table here [default: stdout].")
@click.option("--label", help="With --format latex: the table's \\label (letters, digits, - : .) "
                              "[default: tab:statbench-compare-TASK-B].")
@click.option("--caption", help="With --format: the table's caption [default: B against A on TASK].")
def compare(run_a, run_b, task, measures, splits, data_dir, alpha, as_json, fmt, output, label, caption):
    """Paired test of RUN_B against RUN_A (the baseline) on per-query scores.

    Wilcoxon signed-rank (zero differences dropped), Cohen's d of the differences,
    95% bootstrap CI of the mean difference (10,000 resamples, fixed seed), and
    win/tie/loss counts. Inputs are TREC runs or results JSON files that scored exactly
    the same queries, of the same task version and data, whose every tested label
    measures the same thing: anything else is refused (one line, exit 2), never tested
    on the queries the two share. With several --measure, p is also given Holm-adjusted over
    them. --format latex|markdown|csv writes A and B as a table for a paper instead
    (B's marker from this test, named in a footnote)."""
    from dataclasses import replace

    from statbench.commands.table_formats import check_label
    from statbench.errors import StatbenchError
    from statbench.registry.plugins import get_registry
    from statbench.scoring.significance import (
        compare_to_baseline,
        format_p,
        holm,
        per_query_measure,
        primary_measure,
        query_set_difference,
    )

    if fmt and as_json:
        raise StatbenchError("--json and --format are two outputs: give one")
    if output is not None and not fmt:
        raise StatbenchError("--output writes the --format table: give --format too")
    if label is not None and fmt != "latex":
        raise StatbenchError("--label is LaTeX's \\label: it goes with --format latex")
    if caption is not None and not fmt:
        raise StatbenchError("--caption is the --format table's: give --format too")
    if caption is not None and not caption.strip():
        raise StatbenchError("--caption is empty: give the caption's text, or leave the option out")
    if label is not None:
        check_label(label)
    a, task_a, data_a = _scores_of(run_a, task, data_dir, list(splits) or None)
    b, task_b, data_b = _scores_of(run_b, task or task_a, data_dir, list(splits) or None)
    if task_a != task_b:
        raise StatbenchError(f"the inputs are results of different tasks: {task_a!r} and {task_b!r}")
    labels = a.labels
    try:
        entry = get_registry().get("tasks", task_a)
    except StatbenchError:  # results of a task not installed here: compared without its declaration
        entry = None
    info = entry.cls.task_info() if entry else None
    wanted = list(dict.fromkeys(_measure_label(a, m) for m in measures)) or [primary_measure(task_a, labels, info)]
    problem = comparability_problem(a, b, wanted, (str(run_a), str(run_b)), info.version if info else None,
                                    (data_a, data_b))
    if problem is not None:
        raise StatbenchError(problem)
    results = []
    for measure in wanted:
        scores_a = per_query_measure(a, measure, str(run_a))
        scores_b = per_query_measure(b, measure, str(run_b))
        problem = query_set_difference(scores_a, scores_b, (f"A ({run_a})", f"B ({run_b})"))
        if problem is not None:
            raise StatbenchError(f"no paired test of {run_b} against {run_a} on {measure}: {problem}; "
                                 "a paired test needs the same queries on both sides (same task data and splits)")
        (result,) = compare_to_baseline(str(run_a), scores_a, {str(run_b): scores_b}, measure, alpha=alpha)
        results.append(result)
    results = [replace(r, p_holm=p) for r, p in zip(results, holm([r.p_value for r in results]))]
    if fmt:
        from statbench.commands.table_formats import render, write_table

        table = paper_table(task_a, (run_a, a), (run_b, b), results, alpha, (data_a, data_b), label, caption)
        write_table(render(table, fmt), output)
        return
    if as_json:
        if len(results) == 1:
            click.echo(json.dumps({"task": task_a, **results[0].as_dict()}, indent=2))
        else:
            click.echo(json.dumps({"task": task_a, "holm_over": "measures",
                                   "comparisons": [r.as_dict() for r in results]}, indent=2))
        return
    lines = []
    split_means = {name: _split_means(scores) for name, scores in (("A", a), ("B", b))}
    for result in results:
        d = "n/a" if result.cohens_d is None else f"{result.cohens_d:+.3f}"
        verdict = (
            f"B is significantly {'better' if result.direction > 0 else 'worse'} than A"
            if result.direction else "no significant difference"
        )
        p_text = f"p = {format_p(result.p_value)}"
        if len(results) > 1:
            p_text += f" (Holm over the {len(results)} measures: {format_p(result.p_holm)})"
        lines += [
            f"task {task_a}, measure {result.measure}, {result.n} paired queries",
            f"  A {run_a}: mean over all {result.n} queries (pooled) {result.mean_baseline:.4f}"
            + split_means["A"](result.measure),
            f"  B {run_b}: mean over all {result.n} queries (pooled) {result.mean_system:.4f}"
            + split_means["B"](result.measure),
            f"  mean difference B - A: {result.mean_diff:+.4f}  95% bootstrap CI [{result.ci_low:+.4f}, {result.ci_high:+.4f}]",
            f"  wins / ties / losses of B: {result.wins} / {result.ties} / {result.losses}",
            f"  Cohen's d of the differences: {d}",
            f"  Wilcoxon signed-rank: W = {'n/a' if result.statistic is None else f'{result.statistic:g}'}, {p_text}",
            f"  at alpha = {alpha:g}: {verdict}",
        ]
    click.echo("\n".join(lines))


def _split_means(scores):
    """measure -> ``; mean over the K splits M ± S`` (what boards and exports print: the mean of
    the split means), or "" when the scores have one split (then the two means are one)."""
    from statbench.results.record import as_scores

    s = as_scores(scores)

    def text(measure: str) -> str:
        agg = s.aggregate.get(measure)
        if len(s.splits) < 2 or agg is None:
            return ""
        return f"; mean over the {len(s.splits)} splits {agg.mean:.4f} ± {agg.std:.4f} (as boards show it)"
    return text


def _display_name(path: Path, scores) -> str:
    """What a row of the table is called: the model (and reranker) a results file records,
    else the run file's name."""
    from statbench.results.record import Results

    if isinstance(scores, Results):
        return " → ".join([scores.model.name] + ([scores.reranker.name] if scores.reranker else []))
    return path.name


def _told_apart(names: list[str], a, b) -> list[str] | None:
    """``names`` with the model parameters that differ between two results files
    (``bm25 (backend=lucene)``), None when none differ or an input is a TREC run."""
    from statbench.results.record import Results

    if not (isinstance(a, Results) and isinstance(b, Results)):
        return None
    differ = sorted(k for k in set(a.model.params) | set(b.model.params) if a.model.params.get(k) != b.model.params.get(k))
    if not differ:
        return None
    return [f"{name} ({', '.join(f'{k}={s.model.params[k]}' for k in differ if k in s.model.params)})"
            for name, s in zip(names, (a, b))]


def paper_table(task: str, a, b, results, alpha: float, checksums, label: str | None = None,
                caption: str | None = None):
    """The two inputs as a :class:`~statbench.commands.table_formats.PaperTable`: A (the
    baseline) then B, a column per tested measure (mean ± std over splits when scored on
    several), B's marker and Holm-adjusted p from ``results`` (the printed test's)."""
    from statbench.commands.table_formats import Cell, PaperTable, Section, TableRow, label_for, split_means_note
    from statbench.results.record import as_scores

    (path_a, scores_a), (path_b, scores_b) = a, b
    names = [_display_name(path_a, scores_a), _display_name(path_b, scores_b)]
    if names[0] == names[1]:  # one model twice: told apart by the parameters that differ, else the files
        names = _told_apart(names, scores_a, scores_b) or [f"{names[0]} (A: {path_a})", f"{names[1]} (B: {path_b})"]
    by_measure = {r.measure: r for r in results}

    def cells(scores, tested: bool):
        out = []
        s = as_scores(scores)
        for measure in by_measure:
            agg = s.aggregate.get(measure)
            result = by_measure[measure]
            marker = ""
            if tested and result.direction:
                marker = "up" if result.direction > 0 else "down"
            out.append(Cell(value=None if agg is None else agg.mean,
                            std=agg.std if agg is not None and len(s.splits) > 1 else None,
                            marker=marker, p=result.p_holm if tested else None))
        return tuple(out)

    rows = (TableRow(f"{names[0]} (baseline)", cells(scores_a, False)), TableRow(names[1], cells(scores_b, True)))
    first = results[0]
    data = next((c for c in checksums if c), None)
    footnotes = [f"Task {task}, {first.n} paired queries" + (f", data checksum {data[:12]}" if data else "") + "."]
    footnotes.append(split_means_note(as_scores(scores_a).splits)
                     + " The test pairs the scores of every query (its means are over all queries pooled).")
    footnotes.append("Bold: the better figure of each column (compared as printed; tied figures are both bold).")
    correction = (f"; Holm–Bonferroni correction over the {len(results)} measures" if len(results) > 1
                  else "; one measure, no correction")
    footnotes.append(f"↑/↓: {names[1]} significantly better/worse than {names[0]} (two-sided Wilcoxon "
                     f"signed-rank test on per-query scores, zero differences dropped{correction}; α = {alpha:g}).")
    return PaperTable(caption=caption if caption is not None else f"{names[1]} against {names[0]} on {task}",
                      measures=tuple(by_measure), sections=(Section(None, rows),), footnotes=tuple(footnotes),
                      tested=True,
                      label=label if label is not None else label_for("tab:statbench-compare", task, names[1]))


@hookimpl
def register_commands(cli):
    """A built-in plugin: ``compare`` registers like a third party's command."""
    cli.add_command(compare)
