"""Whether a cell is already done for the same configuration and data, without running it.

A cell's output folder belongs to ``statbench run`` (an output set replaced as a unit), so
the grid keeps its own record beside it: ``ROOT/.grid/done/CELL.json`` holds the cell's
command, the sha256 of the results.json it produced and a fingerprint of the task's data
folder (every file's relative path, size and sha256: content, not modification times, so
a file rewritten with the same size and mtime still counts as changed; each folder is
hashed once per grid invocation). A cell is done when all
of these hold:

- its results.json reads strictly (schema, finite numbers) and its sha256 is the recorded one;
- the results record the cell's exact command (task, model, parameters, protocol, data
  folder, output: everything that defines the cell);
- the model, reranker and task versions and the statbench version in the results are the
  installed ones (a new version may compute something else);
- the data folder's fingerprint is unchanged.

Anything else (no record, a changed file, an unreadable results.json) means the cell runs
again; the run's own cache then decides what work is really needed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..atomic import write_json
from ..checksum import file_sha256
from .cells import Cell


def record_path(root: Path, cell: Cell) -> Path:
    return Path(root) / ".grid" / "done" / f"{cell.slug}.json"


def data_fingerprint(cell: Cell) -> list | None:
    """[relative path, size, sha256] of every file in the task's data folder (None when
    the task has no folder to look at: such a cell is never skipped)."""
    from ..plugins import get_registry

    task_cls = get_registry().get("tasks", cell.task).cls
    try:
        folder = task_cls().data_folder(cell.data_dir)
    except Exception:  # noqa: BLE001 - a task that cannot say: never skip
        return None
    if folder is None or not Path(folder).is_dir():
        return None
    rows = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                info = path.stat()
            except OSError:
                continue
            try:
                digest = file_sha256(path)
            except OSError:
                return None  # unreadable now: never skip on a fingerprint we could not take
            rows.append([str(path.relative_to(folder)), info.st_size, digest])
    return rows


def _versions_current(results) -> bool:
    from .. import __version__
    from ..plugins import get_registry

    registry = get_registry()
    if results.statbench_version != __version__:
        return False
    if (results.task.version or "1") != registry.get("tasks", results.task.name).cls.task_info().version:
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


def is_done(root: Path, cell: Cell, fingerprint: list | None = None) -> bool:
    """True when ``cell``'s outputs are those of its exact configuration on unchanged data."""
    from ..results import Results

    record_file, results_file = record_path(root, cell), cell.output / "results.json"
    if not record_file.is_file() or not results_file.is_file():
        return False
    try:
        record = json.loads(record_file.read_text("utf-8"))
        if record.get("command") != cell.command or record.get("results_sha256") != file_sha256(results_file):
            return False
        results = Results.read(results_file)
    except Exception:  # noqa: BLE001 - anything unreadable: not done
        return False
    if results.command != cell.command or not _versions_current(results):
        return False
    fingerprint = data_fingerprint(cell) if fingerprint is None else fingerprint
    return fingerprint is not None and record.get("data") == fingerprint


def mark_done(root: Path, cell: Cell, fingerprint: list | None) -> None:
    """Record a cell whose run succeeded (its results.json must be there)."""
    write_json(record_path(root, cell), {
        "cell": cell.id, "command": cell.command,
        "results_sha256": file_sha256(cell.output / "results.json"), "data": fingerprint,
    })
