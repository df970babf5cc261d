"""``--check``: each expected row of a reproduction file against the cell that should
reproduce it, OK when every listed figure is within the row's tolerance (absolute, on
the mean over the task's splits), FAIL otherwise, like Pyserini's two-click pages."""

from __future__ import annotations

from dataclasses import dataclass

from .cells import SEARCH, Cell
from .spec import Expected

#: slack for figures that are equal but printed/rounded differently
_EPSILON = 1e-9


@dataclass(frozen=True)
class CheckRow:
    row: str
    task: str
    label: str
    measure: str
    expected: float
    tolerance: float
    measured: float | None
    #: "OK" or "FAIL"
    status: str
    reason: str = ""
    source: str = ""

    def as_json(self) -> dict:
        return dict(self.__dict__)


def check_rows(expected: tuple[Expected, ...], cells: list[Cell], results: dict) -> list[CheckRow]:
    """``results``: cell id -> Results of the cells that produced one."""
    rows = []
    for exp in expected:
        matching = [c for c in cells if c.task == exp.task and c.label == exp.label and c.role != SEARCH]
        record, reason = None, ""
        if len(matching) != 1:
            reason = (f"{len(matching)} cells are labelled {exp.label!r} on {exp.task} (a sweep): give the row a "
                      "model of its own" if matching else f"no cell labelled {exp.label!r} on {exp.task}")
        else:
            record = results.get(matching[0].id)
            if record is None:
                reason = f"cell {matching[0].id} has no results (failed or not run)"
        for measure, value in exp.scores.items():
            measured, why = None, reason
            if record is not None:
                if measure in record.aggregate:
                    measured = record.aggregate[measure].mean
                else:
                    why = f"the task reports no {measure!r}"
            ok = measured is not None and abs(measured - value) <= exp.tolerance + _EPSILON
            rows.append(CheckRow(row=exp.row, task=exp.task, label=exp.label, measure=measure, expected=value,
                                 tolerance=exp.tolerance, measured=measured, status="OK" if ok else "FAIL",
                                 reason=why, source=exp.source))
    return rows


def print_check(console, rows: list[CheckRow]) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="reproduction check", title_justify="left")
    for column in ("row", "task", "model", "measure", "expected", "ours", "Δ", "tol.", ""):
        table.add_column(column, justify="right" if column in ("expected", "ours", "Δ", "tol.") else "left")
    for r in rows:
        ours = "—" if r.measured is None else f"{r.measured:.4f}"
        delta = "—" if r.measured is None else f"{r.measured - r.expected:+.4f}"
        status = "[green]OK[/]" if r.status == "OK" else "[red]FAIL[/]" + (f" {escape(r.reason)}" if r.reason else "")
        table.add_row(escape(r.row), escape(r.task), escape(r.label), escape(r.measure), f"{r.expected:.4f}", ours,
                      delta, f"{r.tolerance:.4f}", status)
    console.print(table)
