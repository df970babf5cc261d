"""An experiment expanded into cells: each cell is one ordinary ``statbench run``.

Lists in ``params``/``reranker_params`` are axes: their product gives the cells. Every
cell's request is built (and its names and parameter values checked) before any cell
runs, through the same code as ``statbench run`` (``request.request_from_cli``), so a typo
in the file stops the grid before it starts. A value in the file means what it means
after ``--param`` (its text by :func:`~statbench.contract.params.param_text`, read as the
command line reads it), so a cell's command repeats exactly the cell. A cell holds its
typed :class:`~statbench.run.request.RunRequest`; the command it records and the
arguments every executor runs are both written from it by ``request_to_argv``."""

from __future__ import annotations

import itertools
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statbench.contract.params import param_items, param_text
from statbench.errors import StatbenchError, UnknownNameError
from statbench.grid.spec import GridSpec, GridSpecError, ModelEntry, Resources, TaskEntry
from statbench.registry.plugins import get_registry
from statbench.run.outputs import config_folder_name
from statbench.run.request import RunRequest, request_from_cli, request_to_argv

#: roles: an ordinary cell, a cell of a tuning search, the tuned cell evaluated on test
PLAIN, SEARCH, TUNED = "run", "search", "tuned"


@dataclass(frozen=True)
class Cell:
    id: str
    task: str
    label: str
    output: Path
    #: what the cell runs, typed (built once, checked before any cell starts)
    request: RunRequest
    data_dir: Path | None
    resources: Resources
    role: str = PLAIN
    #: the grid axes' values of this cell (empty for a cell without a sweep)
    axes: dict[str, Any] = field(default_factory=dict)

    @property
    def run_args(self) -> list[str]:
        """``statbench run``'s arguments for the cell (``run ... --no-progress``)."""
        return [*request_to_argv(self.request), "--no-progress"]

    @property
    def command(self) -> str:
        """The exact ``statbench run ...`` command the cell's results record."""
        return shlex.join(["statbench", *self.run_args])

    @property
    def argv(self) -> list[str]:
        """The command run: this Python's statbench (the same installation on every worker)."""
        return [sys.executable, "-m", "statbench.commands.cli", *self.run_args]

    @property
    def params(self) -> dict[str, Any]:
        return self.request.params

    @property
    def reranker_params(self) -> dict[str, Any]:
        return self.request.reranker_params

    @property
    def slug(self) -> str:
        """The cell id as one file name (logs, done records)."""
        return self.id.replace("/", "--")


def _axes(params: dict[str, Any], prefix: str = "") -> list[tuple[str, list]]:
    return [(prefix + k, v) for k, v in params.items() if isinstance(v, list)]


def _combinations(model: ModelEntry) -> list[tuple[dict, dict, dict]]:
    """(params, reranker params, axis values) for every point of the model's grid."""
    axes = _axes(model.params) + _axes(model.reranker_params, "reranker.")
    points = []
    for values in itertools.product(*(v for _, v in axes)) if axes else [()]:
        chosen = dict(zip((name for name, _ in axes), values))
        params = {k: chosen.get(k, v) for k, v in model.params.items()}
        rparams = {k: chosen.get(f"reranker.{k}", v) for k, v in model.reranker_params.items()}
        points.append((params, rparams, chosen))
    return points


def make_cell(root: Path, task: TaskEntry, model: ModelEntry, params: dict, rparams: dict, axes: dict,
              role: str = PLAIN, protocol: str | None = None, splits: tuple[str, ...] | None = None) -> Cell:
    """One cell; its request is checked now (names, parameter types and ranges)."""
    protocol = task.protocol if protocol is None and splits is None else protocol
    splits = task.splits if splits is None and protocol is None else (splits or ())
    where = protocol or (",".join(splits) if splits else None)
    folder = root / task.name.replace(":", "_").replace("/", "_") / config_folder_name(model.label, where, axes)
    data_dir = task.data_dir.resolve() if task.data_dir is not None else None
    request = request_from_cli(
        task=task.name, model=model.model, params=param_items(params), reranker=model.reranker,
        reranker_params=param_items(rparams), pool=model.pool, splits=splits, protocol=protocol,
        data_dir=data_dir, output=folder.resolve(), rerank_depth=model.rerank_depth or 100,
    )
    cell_id = f"{task.name}/{folder.name}"
    return Cell(id=cell_id, task=task.name, label=model.label, output=folder.resolve(), request=request,
                data_dir=data_dir, resources=model.resources, role=role, axes=axes)


def tuning_split(task_name: str, on: str) -> tuple[str | None, tuple[str, ...] | None]:
    """``on`` as (protocol, None) when the task declares such a protocol, else (None, (split,))."""
    info = get_registry().get("tasks", task_name).cls.task_info()
    if any(p.name == on for p in info.protocols):
        return on, None
    return None, (on,)


def _check_protocols(spec: GridSpec) -> None:
    """Each task's ``protocol`` is one the task declares (``statbench run`` would only find
    out when the cell runs)."""
    for j, task in enumerate(spec.tasks):
        if task.protocol is None:
            continue
        try:
            declared = [p.name for p in get_registry().get("tasks", task.name).cls.task_info().protocols]
        except StatbenchError as exc:
            raise spec.error(str(exc), "tasks", j, "name") from None
        if task.protocol not in declared:
            raise spec.error(f"unknown protocol {task.protocol!r} of task {task.name}; valid choices: "
                             f"{', '.join(declared) or '(none declared)'}", "tasks", j, "protocol")


def _located(spec: GridSpec, i: int, j: int, exc: StatbenchError) -> GridSpecError:
    """``exc`` (raised building a cell of models/i on tasks/j) with the file, key and line."""
    model, message = spec.models[i], str(exc)
    if isinstance(exc, UnknownNameError) and exc.kind.startswith("task"):
        return spec.error(message, "tasks", j, "name")
    if isinstance(exc, UnknownNameError) and exc.kind.startswith("reranker"):
        return spec.error(message, "models", i, "reranker")
    if isinstance(exc, UnknownNameError) and not exc.kind.startswith("parameter"):
        return spec.error(message, "models", i, "model" if model.model else "pool")
    named = re.search(r"parameter '?([\w.-]+?)'?[=\s]", message)
    name = exc.name if isinstance(exc, UnknownNameError) else named.group(1) if named else None
    for key in ("reranker_params", "params") if model.reranker else ("params",):
        if name in getattr(model, key):
            return spec.error(message, "models", i, key, name)
    return spec.error(message, "models", i)


#: cells one experiment file may expand to: far above any real sweep, far below one that
#: would take hours to expand (a product of long lists)
MAX_CELLS = 1_000


def _axis_key(first: dict, second: dict) -> tuple[str, ...]:
    """The key of the first axis whose values differ (``params``, NAME), for an error's line."""
    name = next((k for k in second if first.get(k) != second[k] or type(first.get(k)) is not type(second[k])), "")
    return ("reranker_params", name[len("reranker."):]) if name.startswith("reranker.") else ("params", name)


def _check_sweeps(spec: GridSpec) -> None:
    """No value twice in one sweep (two cells with one folder), no sweep of more than
    ``MAX_CELLS`` cells (the product of its lists)."""
    total = 0
    for i, model in enumerate(spec.models):
        size = 1
        for field_name in ("params", "reranker_params"):
            for name, values in getattr(model, field_name).items():
                if not isinstance(values, list):
                    continue
                size *= len(values)
                seen: dict[str, int] = {}
                for k, value in enumerate(values):
                    text = param_text(value)
                    if text in seen:
                        raise spec.error(f"the sweep of {name} lists {text} twice (items {seen[text]} and {k}): "
                                         "each value would be one cell with one folder", "models", i, field_name,
                                         name, k)
                    seen[text] = k
        total += size * max(1, len([t for t in spec.tasks if not model.tasks or t.name in model.tasks]))
        if size > MAX_CELLS or total > MAX_CELLS:
            raise spec.error(f"the grid expands to more than {MAX_CELLS:,} cells (this model's lists give {size:,} "
                             "per task): split the experiment", "models", i, "params")


def _measures_of(task_name: str) -> list[str] | None:
    try:
        return [m.label for m in get_registry().get("tasks", task_name).cls.task_info().measures]
    except Exception:  # noqa: BLE001 - an unknown task is reported where its cells are built
        return None


def _protocol_splits(task_name: str, protocol: str | None, splits: tuple[str, ...] | None) -> set[str] | None:
    """The split names a run with this protocol/splits evaluates (None: not known here)."""
    try:
        info = get_registry().get("tasks", task_name).cls.task_info()
    except Exception:  # noqa: BLE001
        return None
    if splits:
        return set(splits)
    name = protocol or info.default_protocol
    found = next((p for p in info.protocols if p.name == name), None)
    return set(found.splits) if found is not None else None


def _check_measures_and_tuning(spec: GridSpec) -> None:
    """Measures named in ``expected`` and ``tune`` are the task's; a tuning split is not
    one the tuned cell is evaluated on (nothing tuned on test queries)."""
    for i, exp in enumerate(spec.expected):
        model = next((m for m in spec.models if m.label == exp.label and (not m.tasks or exp.task in m.tasks)), None)
        swept = model is not None and model.tune is None and any(
            isinstance(v, list) for v in [*model.params.values(), *model.reranker_params.values()])
        if swept:
            raise spec.error(f"model {exp.label!r} is a sweep (one cell per value of its lists): an expected row "
                             "needs a model of its own with fixed values", "expected", i, "label")
        declared = _measures_of(exp.task)
        for measure in exp.scores:
            if declared is not None and measure not in declared:
                raise spec.error(f"task {exp.task} reports no measure {measure!r} (its measures: "
                                 f"{', '.join(declared)})", "expected", i, "scores", measure)
    for i, model in enumerate(spec.models):
        if model.tune is None:
            continue
        for task in spec.tasks:
            if model.tasks and task.name not in model.tasks:
                continue
            declared = _measures_of(task.name)
            if declared is not None and model.tune.measure not in declared:
                raise spec.error(f"task {task.name} reports no measure {model.tune.measure!r} (its measures: "
                                 f"{', '.join(declared)})", "models", i, "tune", "measure")
            try:
                protocol, splits = tuning_split(task.name, model.tune.on)
            except Exception:  # noqa: BLE001 - an unknown task is reported where its cells are built
                continue
            searched = _protocol_splits(task.name, protocol, splits)
            tested = _protocol_splits(task.name, task.protocol, task.splits)
            shared = sorted((searched or set()) & (tested or set()))
            if shared:
                raise spec.error(f"tune on {model.tune.on!r} searches the split(s) {', '.join(shared)} that the tuned "
                                 f"cell is evaluated on ({task.name}): that would tune on test queries; tune on a "
                                 "split the task's protocol does not score", "models", i, "tune", "on")


def expand(spec: GridSpec, root: Path | None = None) -> list[Cell]:
    """Every cell the grid runs before tuning picks anything: plain cells, and the search
    cells of every tuned model (its tuned cells follow from their results: ``tuning.py``).
    Any cell that cannot be built (an unknown name, a bad value inside a sweep) stops the
    grid here, with the file, key and line, before any cell starts."""
    root = Path(root or spec.output)
    _check_protocols(spec)
    _check_sweeps(spec)
    _check_measures_and_tuning(spec)
    cells: list[Cell] = []
    made_by: dict[str, int] = {}
    configurations: dict[tuple, dict] = {}
    for i, model in enumerate(spec.models):
        for j, task in enumerate(spec.tasks):
            if model.tasks and task.name not in model.tasks:
                continue
            for params, rparams, axes in _combinations(model):
                try:
                    if model.tune is None:
                        cells.append(make_cell(root, task, model, params, rparams, axes))
                    else:
                        protocol, splits = tuning_split(task.name, model.tune.on)
                        cells.append(make_cell(root, task, model, params, rparams, axes, SEARCH, protocol, splits))
                except GridSpecError:
                    raise
                except StatbenchError as exc:
                    raise _located(spec, i, j, exc) from None
                same = (i, task.name, repr(sorted(cells[-1].params.items())),
                        repr(sorted(cells[-1].reranker_params.items())))
                if same in configurations:  # 1 and 1.0 of a float parameter: one configuration, two folders
                    raise spec.error(f"the sweep gives one configuration twice ({configurations[same]} and {axes}, "
                                     f"as {model.model or model.pool} reads them): list each value once",
                                     "models", i, *_axis_key(configurations[same], axes))
                configurations[same] = axes
                if cells[-1].id in made_by:
                    raise spec.error(f"two cells would write {cells[-1].output} ({cells[-1].id}, also a cell of "
                                     f"models/{made_by[cells[-1].id]}); give the models distinct labels",
                                     "models", i)
                made_by[cells[-1].id] = i
    return cells
