"""Whether a cell is already done for the same configuration and data, without running it.

A cell's output folder belongs to ``statbench run`` (an output set replaced as a unit), so
the grid keeps its own record beside it: ``ROOT/.grid/done/CELL.json``, written the moment
the cell finishes (not when the rest of its batch does), holds the cell's command and the
sha256 of the results.json it produced. A cell is done when all of these hold:

- its results.json reads strictly (schema, finite numbers) and its sha256 is the recorded one;
- the results record the cell's exact command (task, model, parameters, protocol, data
  folder, output: everything that defines the cell);
- the model, reranker and task versions and the statbench version in the results are the
  installed ones (a new version may compute something else);
- the data checksum **the results themselves record** is the checksum of the task's data
  as it is now: the load summary the runs cache for exactly these file contents (every
  data file's sha256, :mod:`statbench.loading.loadcache`), else a load of the task here. A cell
  computed on other data (even data that changed while it was queued and changed back
  since) is therefore never taken for done.

Anything else (no record, a changed file, an unreadable results.json) means the cell runs
again; the run's own cache then decides what work is really needed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path

from statbench import __version__
from statbench.data.atomic import write_json
from statbench.data.checksum import file_sha256
from statbench.grid.cells import Cell
from statbench.loading.load import load_task, start_task
from statbench.registry.plugins import get_registry
from statbench.results.record import Results


def record_path(root: Path, cell: Cell) -> Path:
    return Path(root) / ".grid" / "done" / f"{cell.slug}.json"


@contextlib.contextmanager
def _cache_of_cells(cache: Path | None):
    """``STATBENCH_CACHE`` set to the cache the cells use, while the grid reads it."""
    if cache is None:
        yield
        return
    before = os.environ.get("STATBENCH_CACHE")
    os.environ["STATBENCH_CACHE"] = str(Path(cache).resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("STATBENCH_CACHE", None)
        else:
            os.environ["STATBENCH_CACHE"] = before


def current_data_checksum(cell: Cell, cache: Path | None = None) -> str | None:
    """The checksum a run of ``cell`` would record for the task's data as it is now (None
    when it cannot be known without a run: such a cell is never skipped)."""
    loaded = current_data(cell.task, cell.data_dir, cache)
    return None if loaded is None else loaded.checksum


def current_data(task_name: str, data_dir: Path | None, cache: Path | None = None):
    """The task's data as it is now: the cached load summary for these file contents, else
    a load here (``checksum`` and ``all_splits()``); None when it cannot be had without a run."""
    quiet = logging.getLogger("statbench.grid.done")
    quiet.propagate, quiet.disabled = False, True
    try:
        entry = get_registry().get("tasks", task_name)
        task = start_task(entry)
        with _cache_of_cells(cache):
            folder = task.data_folder(data_dir)
            if folder is None or not Path(folder).is_dir():
                return None  # nothing here to load without fetching it: the run will
            # the cached summary of a load of these very files, else a load (leaving one)
            return load_task(entry, data_dir, quiet, task=task, summary=True).summary
    except Exception:  # noqa: BLE001 - data that cannot be read now: the run says why
        return None


def _versions_current(cell: Cell, results) -> bool:
    registry = get_registry()
    if results.statbench_version != __version__:
        return False
    # the grid's own name for the task: a ``beir:PATH`` task records a derived name
    if (results.task.version or "1") != registry.get("tasks", cell.task).cls.task_info().version:
        return False
    for record, kind in ((results.model, "retrievers"), (results.reranker, "rerankers")):
        if record is None or record.family == "pool":
            continue
        try:
            cls = registry.get(kind, record.name).cls
        except Exception:  # noqa: BLE001 - a model no longer installed: run again (and fail clearly)
            return False
        if (record.version or "1") != str(cls.version):
            return False
    return True


def is_done(root: Path, cell: Cell, data_checksum: str | None) -> bool:
    """True when ``cell``'s outputs are those of its exact configuration, computed on the
    data whose checksum is ``data_checksum`` (:func:`current_data_checksum`)."""
    record_file, results_file = record_path(root, cell), cell.output / "results.json"
    if data_checksum is None or not record_file.is_file() or not results_file.is_file():
        return False
    try:
        record = json.loads(record_file.read_text("utf-8"))
        if record.get("command") != cell.command or record.get("results_sha256") != file_sha256(results_file):
            return False
        results = Results.read(results_file)
    except Exception:  # noqa: BLE001 - anything unreadable: not done
        return False
    return (results.command == cell.command and results.task.data_checksum == data_checksum
            and _versions_current(cell, results))


def mark_done(root: Path, cell: Cell, results) -> None:
    """Record a cell whose run succeeded, as soon as it finished (its results.json is there)."""
    write_json(record_path(root, cell), {
        "cell": cell.id, "command": cell.command, "results_sha256": file_sha256(cell.output / "results.json"),
        "data_checksum": results.task.data_checksum,
    })
