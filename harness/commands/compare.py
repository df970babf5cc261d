"""``statbench compare A B --task T``: paired significance test of run B against run A.

Each input is a TREC run (scored here with the task's qrels, through the same code as
``statbench evaluate``) or a results JSON written by ``statbench run`` (its per-query
scores are used as they are, once the file has passed the checks a board applies too,
statbench.scoring.publishable: strict JSON, the schema, finite and in-range scores,
figures that agree). The two inputs must
have scored exactly the same queries (and, for two results files, on the same data):
anything else is refused with one line, never tested on part of the queries.

This module is the command and the measure names it resolves (:func:`measure_label`, which
``evaluate`` and the leaderboard's exports use too); what it does with the inputs is
:mod:`.comparison`, imported in the command's body so that ``statbench --help`` stays light."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click

from statbench.errors import StatbenchError
from statbench.registry.hookspecs import hookimpl
from statbench.registry.plugins import get_registry
from statbench.scoring.measures import parse_measure


def measure_label(measures, wanted: str) -> str:
    """The label ``--measure wanted`` names among ``measures`` (each with a ``label`` and its
    ``ir_measure``: a task's declared measures, or those scores report): a label, or a measure
    string (ir-measures or custom) one of them spells, or means once parsed by
    :func:`~statbench.scoring.measures.parse_measure` (``F(beta=2)@10`` finds a measure
    reported as ``F2@10``). Anything else is returned as given, for the caller to refuse
    with the labels there are."""
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
    # the command's workflow: `statbench --help` loads this module, not the reading and scoring behind it
    from statbench.commands.comparison import comparability_problem, paper_table, scores_of, split_means
    from statbench.commands.table_formats import check_label, render, write_table
    from statbench.results.record import as_scores
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
    a, task_a, data_a = scores_of(run_a, task, data_dir, list(splits) or None)
    b, task_b, data_b = scores_of(run_b, task or task_a, data_dir, list(splits) or None)
    if task_a != task_b:
        raise StatbenchError(f"the inputs are results of different tasks: {task_a!r} and {task_b!r}")
    labels = a.labels
    try:
        entry = get_registry().get("tasks", task_a)
    except StatbenchError:  # results of a task not installed here: compared without its declaration
        entry = None
    info = entry.cls.task_info() if entry else None
    reported = as_scores(a).measures
    wanted = (list(dict.fromkeys(measure_label(reported, m) for m in measures))
              or [primary_measure(task_a, labels, info)])
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
    split_means = {name: split_means(scores) for name, scores in (("A", a), ("B", b))}
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


@hookimpl
def register_commands(cli):
    """A built-in plugin: ``compare`` registers like a third party's command."""
    cli.add_command(compare)
