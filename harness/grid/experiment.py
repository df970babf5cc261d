"""Run a grid: skip the cells already done, run the others on an executor (retrying the
failed ones), then the tuned cells, then the summary, the leaderboard and the check.

A failed cell never stops the others; the grid reports it in the summary and the command
ends with exit code 2. A cell counts as done only when its run exited 0 and left a
results.json recording the cell's exact command; it is recorded done the moment it
finishes (an interrupted grid resumes with exactly the cells that had not finished)."""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from statbench.data.atomic import write_json
from statbench.errors import StatbenchError
from statbench.grid.cellrun import THREAD_VARIABLES, CellJob, CellOutcome
from statbench.grid.cells import SEARCH, Cell, tuning_split
from statbench.grid.check import CheckRow, check_rows
from statbench.grid.done import current_data, is_done, mark_done
from statbench.grid.spec import GridSpec
from statbench.grid.tuning import measure_of, pick, searches, tuned_cell, write_record
from statbench.registry.plugins import get_registry
from statbench.results.record import Results
from statbench.scoring.reproduction import link_name


@dataclass
class CellStatus:
    cell: Cell
    #: skipped (done before), done, failed, not-run (a tuned cell whose search failed)
    status: str = "queued"
    attempts: int = 0
    seconds: float = 0.0
    error: str = ""
    results: object = None


@dataclass
class GridReport:
    root: Path
    statuses: dict[str, CellStatus] = field(default_factory=dict)
    tuning: list[Path] = field(default_factory=list)
    check: list[CheckRow] = field(default_factory=list)
    seconds: float = 0.0
    #: tuning notes in words: ties between candidates, tuned cells whose search shared queries with their evaluation
    leaks: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[CellStatus]:
        return [s for s in self.statuses.values() if s.status in ("failed", "not-run")]

    @property
    def worked(self) -> list[CellStatus]:
        """Cells that ran a command in this invocation (zero on a repeated grid)."""
        return [s for s in self.statuses.values() if s.attempts]


def _env(cell: Cell, cache: Path | None) -> dict[str, str]:
    env = {name: str(cell.resources.cpus) for name in THREAD_VARIABLES if name not in os.environ}
    if cache is not None:
        env["STATBENCH_CACHE"] = str(Path(cache).resolve())
    return env


def _results_of(cell: Cell):
    """The cell's results if they are this cell's (its exact command), else None."""
    try:
        results = Results.read(cell.output / "results.json")
    except Exception:  # noqa: BLE001 - missing or unreadable: the cell did not produce results
        return None
    return results if results.command == cell.command else None


class GridRunner:
    def __init__(self, spec: GridSpec, executor, *, root: Path | None = None, retry: int = 0,
                 cache: Path | None = None, board=None, force: bool = False):
        self.spec, self.executor, self.retry, self.cache, self.force = spec, executor, retry, cache, force
        self.root = Path(root or spec.output).resolve()
        self.board = board
        self.report = GridReport(self.root)
        self._checksums: dict[tuple, str | None] = {}
        self._running: dict[str, Cell] = {}
        self._finished: set[str] = set()
        self._lock = threading.Lock()

    def _event(self, cell_id, state, outcome=None):
        if outcome is not None and state in ("done", "failed") and cell_id in self._running:
            self._finish(self._running[cell_id], outcome)
        if self.board is not None:
            self.board.event(cell_id, state, outcome)

    def _data(self, task: str, data_dir: Path | None):
        """The task's data as it is now (:func:`current_data`, taken once per invocation)."""
        key = (task, data_dir)
        if key not in self._checksums:
            self._checksums[key] = current_data(task, data_dir, self.cache)
        return self._checksums[key]

    def data_checksum(self, cell: Cell) -> str | None:
        """The checksum of the cell's task data as it is now (taken once per invocation)."""
        data = self._data(cell.task, cell.data_dir)
        return None if data is None else data.checksum

    def check_splits(self) -> None:
        """Split names in the file (a task's ``splits``, a ``tune.on`` that is no protocol)
        are splits of the task's data, found before any cell starts (``statbench run`` only
        knows once it loaded the data)."""
        spec = self.spec
        for j, task in enumerate(spec.tasks):
            wanted = [(name, ("tasks", j, "splits", k)) for k, name in enumerate(task.splits)]
            for i, model in enumerate(spec.models):
                if model.tune is not None and (not model.tasks or task.name in model.tasks):
                    try:
                        protocol, splits = tuning_split(task.name, model.tune.on)
                    except StatbenchError:
                        continue
                    wanted += [(name, ("models", i, "tune", "on")) for name in splits or ()]
            if not wanted:
                continue
            data = self._data(task.name, task.data_dir.resolve() if task.data_dir is not None else None)
            if data is None:
                continue  # cannot be known without a run: the run says
            names = [s.name for s in data.all_splits()]
            for name, keys in wanted:
                if name not in names:
                    raise spec.error(f"unknown split of task {task.name} {name!r}; valid choices: "
                                     f"{', '.join(sorted(names))}", *keys)

    def is_done(self, cell: Cell) -> bool:
        return is_done(self.root, cell, self.data_checksum(cell))

    def _finish(self, cell: Cell, outcome: CellOutcome) -> None:
        """Record one finished attempt of ``cell`` (from the executor's event, as it happens)."""
        with self._lock:
            if cell.id in self._finished:
                return
            self._finished.add(cell.id)
            status = self.report.statuses[cell.id]
            status.attempts += 1
            status.seconds += outcome.seconds
            results = _results_of(cell) if outcome.returncode == 0 else None
            before = self.data_checksum(cell)
            if results is not None and before is not None and results.task.data_checksum != before:
                # one grid's cells must be on one data: this one read the data while it changed
                status.status = "failed"
                status.error = (f"the task's data changed while the grid ran (the cell's results record data "
                                f"sha256 {results.task.data_checksum[:16]}, the grid started on {before[:16]}); "
                                "run the grid again")
            elif results is not None:
                mark_done(self.root, cell, results)
                status.status, status.results, status.error = "done", results, ""
            else:
                status.status = "failed"
                status.error = outcome.error or ("exited 0 but left no results.json recording its command"
                                                 if outcome.returncode == 0 else f"exit code {outcome.returncode}")

    def run_cells(self, cells: list[Cell]) -> None:
        """Skip the done cells; run the others, retrying failures ``retry`` times."""
        todo = []
        for cell in cells:
            status = self.report.statuses.setdefault(cell.id, CellStatus(cell))
            if not self.force and self.is_done(cell):
                status.status, status.results = "skipped", _results_of(cell)
                self._event(cell.id, "skipped")
            else:
                todo.append(cell)
        for _attempt in range(self.retry + 1):
            if not todo:
                break
            work = [(CellJob(cell.id, tuple(cell.argv), str(self.root / "logs" / f"{cell.slug}.log"), os.getcwd(),
                             _env(cell, self.cache)), cell.resources) for cell in todo]
            with self._lock:
                self._running, self._finished = {cell.id: cell for cell in todo}, set()
            for cell in todo:
                self._event(cell.id, "queued")
            outcomes: list[CellOutcome] = self.executor.run(work, self._event)
            for outcome in outcomes:  # an executor that did not report a cell as it finished
                self._finish(self._running[outcome.cell_id], outcome)
            todo = [cell for cell in todo if self.report.statuses[cell.id].status != "done"]

    def run(self, cells: list[Cell]) -> GridReport:
        started = time.perf_counter()
        self.run_cells(cells)
        tuned, searched_on = [], {}
        for search in searches(self.spec, cells):
            statuses = [self.report.statuses[c.id] for c in search.cells]
            if any(s.results is None for s in statuses):
                continue
            scores = {s.cell.id: measure_of(s.results, search.model.tune.measure, s.cell) for s in statuses}
            best = pick(search, scores)
            tied = [c.id for c in search.cells if c.id != best.id and scores[c.id] == scores[best.id]]
            if tied:
                self.report.leaks.append(f"{search.task.name}/{search.model.label}: {best.id} ties with "
                                         f"{', '.join(tied)} on {search.model.tune.measure} "
                                         f"({scores[best.id]:.4f}); the first in file order was kept")
            cell = tuned_cell(self.root, search, best)
            self.report.tuning.append(write_record(self.root, search, scores, best, cell))
            tuned.append(cell)
            searched_on[cell.id] = {q for s in statuses for q in s.results.per_query}
        if self.board is not None:
            self.board.add(c.id for c in tuned)
        self.run_cells(tuned)
        for cell in tuned:  # nothing tuned on test queries: the splits' names may differ, the queries not
            status = self.report.statuses[cell.id]
            shared = searched_on[cell.id] & set(status.results.per_query) if status.results is not None else set()
            if shared:  # said in the summary and on the console (docs/grid.md, Tuning: it leaks)
                status.error = (f"warning: tuned on {len(shared)} of the {len(status.results.per_query)} queries it "
                                f"is evaluated on (e.g. {sorted(shared)[0]!r}): its figures are not test figures")
                self.report.leaks.append(f"{cell.id}: {status.error}")
        for search in searches(self.spec, cells):
            if all(c.task != search.task.name or c.label != search.model.label for c in tuned):
                placeholder = f"{search.task.name}/{search.model.label} (tuned)"
                self.report.statuses[placeholder] = CellStatus(
                    search.cells[0], status="not-run", error="a cell of its tuning search failed")
        self.report.seconds = time.perf_counter() - started
        return self.report

    def results_by_cell(self) -> dict:
        return {cid: s.results for cid, s in self.report.statuses.items() if s.results is not None}

    def all_cells(self) -> list[Cell]:
        return [s.cell for s in self.report.statuses.values()]

    def check(self) -> list[CheckRow]:
        self.report.check = check_rows(self.spec.expected, self.all_cells(), self.results_by_cell())
        return self.report.check


def primary(results, task: str | None = None) -> tuple[str, float | None]:
    """The task's primary measure and its mean in ``results``; ``task`` is the grid's own
    name for it (a ``beir:PATH`` task records a derived name in its results)."""
    if results is None:
        return "", None
    try:
        label = get_registry().get("tasks", task or results.task.name).cls.task_info().primary
    except Exception:  # noqa: BLE001
        label = next(iter(results.aggregate), "")
    value = results.aggregate.get(label)
    return label, None if value is None else value.mean


def write_summary(report: GridReport, spec: GridSpec, executor_name: str) -> Path:
    cells = []
    for cid, s in report.statuses.items():
        label, value = primary(s.results, s.cell.task)
        cells.append({
            "cell": cid, "task": s.cell.task, "label": s.cell.label, "role": s.cell.role, "params": s.cell.axes,
            "status": s.status, "attempts": s.attempts, "seconds": round(s.seconds, 3),
            "primary_measure": label or None, "primary": value, "error": s.error or None,
            "command": s.cell.command if s.status != "not-run" else None,
            "output": str(s.cell.output) if s.status != "not-run" else None,
            "log": str(report.root / "logs" / f"{s.cell.slug}.log") if s.attempts else None,
        })
    path = report.root / "summary.json"
    write_json(path, {
        "grid": str(spec.path), "name": spec.name, "executor": executor_name,
        "finished": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "seconds": round(report.seconds, 3),
        "counts": {k: sum(1 for c in cells if c["status"] == k) for k in ("done", "skipped", "failed", "not-run")},
        "cells": cells,
        "tuning": [str(p) for p in report.tuning],
        "tuning_leaks": report.leaks or None,
        "check": [r.as_json() for r in report.check] or None,
    })
    return path


def print_summary(console, report: GridReport) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"grid summary ({report.root})", title_justify="left")
    for column in ("cell", "status", "primary", "time"):
        table.add_column(column, justify="right" if column in ("primary", "time") else "left")
    style = {"done": "green", "skipped": "blue", "failed": "red", "not-run": "red"}
    for cid, s in report.statuses.items():
        label, value = primary(s.results, s.cell.task)
        shown = "" if value is None else f"{label} {value:.4f}"
        status = f"[{style.get(s.status, '')}]{s.status}[/]" + (f" {escape(s.error)}" if s.error else "")
        table.add_row(escape(cid), status, shown, f"{s.seconds:.1f} s" if s.attempts else "")
    console.print(table)


def build_leaderboard(report: GridReport, out: Path, experiment: Path | None = None) -> None:
    """``statbench leaderboard build`` over the grid's finished cells (tuning searches left
    out). The leaderboard reads every JSON file under its input, so it is given a folder of
    the cells' output files only (hard links, copies across file systems), not the grid
    root with its summary and tuning records; beside each cell's files goes a copy of the
    ``experiment`` file, which the site links the cell's row to. The folder is this
    invocation's own (``ROOT/.grid/leaderboard-input.XXXX``, removed afterwards), so two
    grids building on one root never meet in it. A failure is one line."""
    (report.root / ".grid").mkdir(parents=True, exist_ok=True)
    board_input = Path(tempfile.mkdtemp(prefix="leaderboard-input.", dir=report.root / ".grid"))
    try:
        for status in report.statuses.values():
            cell = status.cell
            if status.results is None or cell.role == SEARCH:
                continue
            target = board_input / cell.output.relative_to(report.root)
            target.mkdir(parents=True, exist_ok=True)
            for source in cell.output.iterdir():
                try:
                    os.link(source, target / source.name)
                except OSError:
                    shutil.copy2(source, target / source.name)
            if experiment is not None:
                shutil.copyfile(experiment, target / link_name(experiment))
        code = subprocess.call([sys.executable, "-m", "statbench.commands.cli", "leaderboard", "build", "--results",
                                str(board_input), "--out", str(out)])
    finally:
        shutil.rmtree(board_input, ignore_errors=True)
    if code != 0:
        raise StatbenchError(f"leaderboard build --out {out} over the grid's {report.root} failed (exit code {code})")
