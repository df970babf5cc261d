"""Tuning: the best cell of a model's search on the tuning split, then only it on test.

The search cells of one (task, model) ran on ``tune.on``; the best by ``tune.measure``
(its mean over the search's splits; ties go to the first cell in grid order) gives the
parameters of one more cell, run on the task's protocol. The search is recorded in
``ROOT/tuning/TASK--LABEL.json``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from statbench.data.atomic import write_json
from statbench.errors import StatbenchError
from statbench.grid.cells import SEARCH, TUNED, Cell, make_cell
from statbench.grid.spec import GridSpec, ModelEntry, TaskEntry


@dataclass(frozen=True)
class Search:
    task: TaskEntry
    model: ModelEntry
    cells: tuple[Cell, ...]

    @property
    def slug(self) -> str:
        return f"{self.task.name.replace(':', '_').replace('/', '_')}--{self.model.label}"


def searches(spec: GridSpec, cells: list[Cell]) -> list[Search]:
    """The search cells grouped by (task, tuned model), in grid order."""
    found = []
    for model in spec.models:
        if model.tune is None:
            continue
        for task in spec.tasks:
            group = tuple(c for c in cells if c.role == SEARCH and c.task == task.name and c.label == model.label)
            if group:
                found.append(Search(task, model, group))
    return found


def measure_of(results, label: str, cell: Cell) -> float:
    """``label``'s mean over the splits in a cell's results."""
    if label not in results.aggregate:
        raise StatbenchError(f"tune: measure {label!r} is not in the results of {cell.id} "
                             f"(measures: {', '.join(results.aggregate)})")
    return results.aggregate[label].mean


def pick(search: Search, scores: dict[str, float]) -> Cell:
    """The best search cell (first in grid order among equals)."""
    sign = -1.0 if search.model.tune.lower_is_better else 1.0
    best = search.cells[0]
    for cell in search.cells[1:]:
        if sign * scores[cell.id] > sign * scores[best.id]:
            best = cell
    return best


def tuned_cell(root: Path, search: Search, best: Cell) -> Cell:
    """The cell that evaluates the best parameters on the task's protocol."""
    params = {k: best.axes.get(k, v) for k, v in search.model.params.items()}
    rparams = {k: best.axes.get(f"reranker.{k}", v) for k, v in search.model.reranker_params.items()}
    return make_cell(root, search.task, search.model, params, rparams, {}, TUNED)


def write_record(root: Path, search: Search, scores: dict[str, float], best: Cell, tuned: Cell) -> Path:
    tune = search.model.tune
    path = Path(root) / "tuning" / f"{search.slug}.json"
    write_json(path, {
        "task": search.task.name, "label": search.model.label, "on": tune.on, "measure": tune.measure,
        "lower_is_better": tune.lower_is_better,
        "candidates": [{"cell": c.id, "params": c.axes, "score": scores[c.id], "output": str(c.output)}
                       for c in search.cells],
        "best": {"cell": best.id, "params": best.axes, "score": scores[best.id],
                 # candidates with the best's score: the first in file order was kept
                 "tied_with": [c.id for c in search.cells if c.id != best.id and scores[c.id] == scores[best.id]],
                 "ties": "the first in file order"},
        "tuned_cell": {"cell": tuned.id, "command": tuned.command, "output": str(tuned.output)},
    })
    return path
