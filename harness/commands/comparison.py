"""What ``statbench compare`` does with its two inputs: each read as scores (a results JSON
checked as a board checks it, or a TREC run scored with the task's qrels), the pair checked
comparable (same data, task version, tie order, and labels that measure the same thing), and
the pair set as a table for a paper. The command (:mod:`.compare`) imports this module in its
body: ``statbench --help`` loads the command, not the scoring and reading behind it."""

from __future__ import annotations

import logging
from pathlib import Path

from statbench.commands.table_formats import Cell, PaperTable, Section, TableRow, label_for, split_means_note
from statbench.data.runfile import TIE_ORDER
from statbench.errors import StatbenchError
from statbench.results.record import Results, as_scores
from statbench.scoring.evaluate_file import evaluate_run_file
from statbench.scoring.publishable import read_publishable

log = logging.getLogger("statbench")


def scores_of(path: Path, task: str | None, data_dir, splits):
    """(scores, task name, data checksum) for one input: the
    :class:`~statbench.results.record.Results` of a results JSON (and the checksum it recorded), or
    the :class:`~statbench.results.record.EvaluatedRun` of a TREC run (and the checksum of the
    data it was scored on here)."""
    if path.suffix == ".json":
        results = read_publishable(path)
        name = results.task.name
        if task and task != name:
            raise StatbenchError(f"{path}: results of task {name!r}, not {task!r}")
        return results, name, results.task.data_checksum
    if not task:
        raise StatbenchError(f"{path}: a TREC run needs --task to be scored")
    scores = evaluate_run_file(path, task, data_dir, splits, log)
    return scores, task, scores.data_checksum


def _definition(scores, label: str) -> str | None:
    """What ``label`` measures in ``scores`` (its ir-measures spelling), None if absent."""
    return next((m.ir_measure for m in as_scores(scores).measures if m.label == label), None)


def _version(scores, installed: str | None) -> str | None:
    """The task version the scores were computed under: recorded in a results file (one
    written before it was recorded: the first version, as every task was then), the
    installed task's for a TREC run scored here."""
    if isinstance(scores, Results):
        return scores.task.version or "1"
    return installed


def comparability_problem(a, b, labels: list[str], names: tuple[str, str], installed_version: str | None = None,
                          checksums: tuple[str | None, str | None] = (None, None)) -> str | None:
    """Why the inputs' figures on ``labels`` cannot be set side by side (None when they
    can): other data, another task version, or a label that measures something else.
    The data of each input: the checksum a results file recorded, else ``checksums`` (that
    of the data a TREC run was scored on)."""
    data = [s.task.data_checksum if isinstance(s, Results) else c for s, c in zip((a, b), checksums)]
    if None not in data and data[0] != data[1]:
        task = next((s.task.name for s in (a, b) if isinstance(s, Results)), None)
        return (f"{names[0]} and {names[1]} were scored on different data"
                + (f" of task {task!r}" if task else "")
                + f" (data checksums {data[0][:12]} and {data[1][:12]}): not comparable")
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


def split_means(scores):
    """measure -> ``; mean over the K splits M ± S`` (what boards and exports print: the mean of
    the split means), or "" when the scores have one split (then the two means are one)."""
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
    if isinstance(scores, Results):
        return " → ".join([scores.model.name] + ([scores.reranker.name] if scores.reranker else []))
    return path.name


def _told_apart(names: list[str], a, b) -> list[str] | None:
    """``names`` with the model parameters that differ between two results files
    (``bm25 (backend=lucene)``), None when none differ or an input is a TREC run."""
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
    (path_a, scores_a), (path_b, scores_b) = a, b
    names = [_display_name(path_a, scores_a), _display_name(path_b, scores_b)]
    if names[0] == names[1]:  # one model twice: told apart by the parameters that differ, else the files
        names = _told_apart(names, scores_a, scores_b) or [f"{names[0]} (A: {path_a})", f"{names[1]} (B: {path_b})"]
    by_measure = {r.measure: r for r in results}

    def cells(scores, tested: bool):
        out = []
        s = as_scores(scores)
        for measure, result in by_measure.items():
            agg = s.aggregate.get(measure)
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
