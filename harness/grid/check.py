"""``--check``: each expected row of a reproduction file against the cell that should
reproduce it, OK when every listed figure is within the row's tolerance (absolute, on
the mean over the task's splits), FAIL otherwise, like Pyserini's two-click pages.

Two kinds of rows, shown and counted apart: a **paper** figure, and a **regression**
figure (statbench's own earlier result). A paper row is only a comparison when it is on
the same data: the data the paper measured on (the row's ``data:``, else the task's
published figures from the same source) is compared with what the cell's results record
(checksum, corpus size, queries; ``Published.same_data``). A row on other data says so,
with both sizes, and its FAIL does not fail the command. A cell run on a reduced budget
(``model.budget`` in its results, e.g. ``preset=cpu-small``) is never checked against a
paper figure: its row says ``budget: not checked``."""

from __future__ import annotations

from dataclasses import dataclass

from statbench.grid.cells import SEARCH, Cell
from statbench.grid.spec import PAPER, REGRESSION, Expected
from statbench.registry.plugins import get_registry

#: slack for figures that are equal but printed/rounded differently
_EPSILON = 1e-9
OK, FAIL, NOT_CHECKED = "OK", "FAIL", "NOT CHECKED"


@dataclass(frozen=True)
class CheckRow:
    row: str
    task: str
    label: str
    measure: str
    expected: float
    tolerance: float
    measured: float | None
    #: "OK", "FAIL" or "NOT CHECKED" (a budget run against a paper figure)
    status: str
    reason: str = ""
    source: str = ""
    #: "paper" or "regression" (statbench's own earlier figure)
    kind: str = PAPER
    #: "same", "other" or "unknown" (nothing declared about the paper's data); "" for regressions
    data: str = ""
    #: the paper's data and ours in words, when they differ or are not known to be the same
    data_note: str = ""

    @property
    def counts(self) -> bool:
        """Whether a FAIL of this row fails the command (not when it is on other data)."""
        return self.status == FAIL and self.data != "other"

    def as_json(self) -> dict:
        return dict(self.__dict__)


def paper_data(exp: Expected):
    """The data the row's paper figures were measured on: the row's own ``data:``, else
    that of the task's published figures from the same source (None: not declared)."""
    if exp.data is not None:
        return exp.data
    try:
        published = get_registry().get("tasks", exp.task).cls.task_info().published
    except Exception:  # noqa: BLE001 - a task that cannot say: not declared
        return None
    return next((p.data for p in published if p.data is not None and exp.source and p.source == exp.source), None)


def _unit(task: str) -> str:
    try:
        return getattr(get_registry().get("tasks", task).cls.task_info(), "corpus_unit", "") or "documents"
    except Exception:  # noqa: BLE001
        return "documents"


def _sizes(corpus_size: int | None, queries: int | None, unit: str) -> str:
    parts = [f"{corpus_size:,} {unit}" if corpus_size else "", f"{queries:,} queries" if queries else ""]
    return ", ".join(p for p in parts if p) or "sizes not declared"


def _data_verdict(exp: Expected, record) -> tuple[str, str]:
    """(same/other/unknown, the words a row shows) for a paper row and the cell's results."""
    data = paper_data(exp)
    if data is None:
        return "unknown", "not declared"
    corpus_size = getattr(record.task, "corpus_size", None)
    if data.same_as(corpus_size=corpus_size, queries=record.n_queries, checksum=record.task.data_checksum):
        return "same", ""
    unit = _unit(exp.task)
    paper = _sizes(data.corpus_size, data.queries, unit) if data.corpus_size or data.queries else (
        data.description or "not described")
    note = f"other data: paper {paper}; ours {_sizes(corpus_size, record.n_queries, unit)}"
    return "other", note + (f" ({exp.note})" if exp.note else "")


def check_rows(expected: tuple[Expected, ...], cells: list[Cell], results: dict) -> list[CheckRow]:
    """``results``: cell id -> Results of the cells that produced one."""
    rows = []
    for exp in expected:
        matching = [c for c in cells if c.task == exp.task and c.label == exp.label and c.role != SEARCH]
        record, reason, data, note, skip = None, "", "", "", ""
        if len(matching) != 1:
            reason = (f"{len(matching)} cells are labelled {exp.label!r} on {exp.task} (a sweep): give the row a "
                      "model of its own" if matching else f"no cell labelled {exp.label!r} on {exp.task}")
        else:
            record = results.get(matching[0].id)
            if record is None:
                reason = f"cell {matching[0].id} has no results (failed or not run)"
        if record is not None and exp.kind == PAPER:
            budget = getattr(record.model, "budget", None) or getattr(getattr(record, "reranker", None), "budget",
                                                                       None)
            if budget:
                skip = f"budget: not checked ({budget} is not the paper's setting)"
            data, note = _data_verdict(exp, record)
        for measure, value in exp.scores.items():
            measured, why = None, reason
            if record is not None:
                if measure in record.aggregate:
                    measured = record.aggregate[measure].mean
                else:
                    why = f"the task reports no {measure!r}"
            if skip:
                status, why = NOT_CHECKED, skip
            else:
                ok = measured is not None and abs(measured - value) <= exp.tolerance + _EPSILON
                status = OK if ok else FAIL
            rows.append(CheckRow(row=exp.row, task=exp.task, label=exp.label, measure=measure, expected=value,
                                 tolerance=exp.tolerance, measured=measured, status=status, reason=why,
                                 source=exp.source, kind=exp.kind, data=data, data_note=note))
    return rows


def delta_text(measured: float | None, expected: float) -> str:
    """``+0.0123``; a difference that rounds to zero is ``0.0000`` (never ``-0.0000``)."""
    if measured is None:
        return "—"
    delta = round(measured - expected, 4)
    return "0.0000" if delta == 0 else f"{delta:+.4f}"


_TITLES = {PAPER: "reproduction check: paper figures", REGRESSION: "regression check: statbench's own earlier figures"}


def print_check(console, rows: list[CheckRow]) -> None:
    """One table per kind of row (paper figures, then statbench's own earlier ones)."""
    from rich.markup import escape
    from rich.table import Table

    for kind in (PAPER, REGRESSION):
        chosen = [r for r in rows if r.kind == kind]
        if not chosen:
            continue
        table = Table(title=_TITLES[kind], title_justify="left")
        columns = ("row", "task", "model", "measure", "expected", "ours", "Δ", "tol.", "", *(
            ("paper's data",) if kind == PAPER else ()))
        for column in columns:
            table.add_column(column, justify="right" if column in ("expected", "ours", "Δ", "tol.") else "left")
        for r in chosen:
            ours = "—" if r.measured is None else f"{r.measured:.4f}"
            style = {OK: "green", FAIL: "red", NOT_CHECKED: "yellow"}[r.status]
            status = f"[{style}]{r.status}[/]" + (f" {escape(r.reason)}" if r.reason else "")
            data = [escape(r.data_note or r.data)] if kind == PAPER else []
            table.add_row(escape(r.row), escape(r.task), escape(r.label), escape(r.measure), f"{r.expected:.4f}", ours,
                          delta_text(r.measured, r.expected), f"{r.tolerance:.4f}", status, *data)
        console.print(table)


def print_expected(console, expected: tuple[Expected, ...]) -> None:
    """``--dry-run --check``: the figures the cells will be checked against, and on what data."""
    from rich.markup import escape
    from rich.table import Table

    for kind in (PAPER, REGRESSION):
        chosen = [e for e in expected if e.kind == kind]
        if not chosen:
            continue
        table = Table(title=_TITLES[kind] + " (expected)", title_justify="left")
        for column in ("row", "task", "model", "measure", "expected", "tol.", "source", "paper's data"):
            table.add_column(column, justify="right" if column in ("expected", "tol.") else "left")
        for e in chosen:
            data = paper_data(e) if kind == PAPER else None
            shown = "" if kind != PAPER else ("not declared" if data is None else (
                data.description + ": " if data.description else "") + _sizes(data.corpus_size, data.queries,
                                                                                _unit(e.task)))
            for measure, value in e.scores.items():
                table.add_row(escape(e.row), escape(e.task), escape(e.label), escape(measure), f"{value:.4f}",
                              f"{e.tolerance:.4f}", escape(e.source), escape(shown))
        console.print(table)
