"""``statbench pool build``: freeze a retriever's top candidates per query as a pool.

The pool is built by a run (:func:`statbench.run.runner.execute`, so the run cache is
reused and every guard of a run applies) and written with its sidecar as a pair; reading
and verifying pools is :mod:`statbench.loading.pools`."""

from __future__ import annotations

import datetime as _dt
import logging
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path

from statbench.data.checksum import file_sha256
from statbench.data.runfile import read_run, write_run
from statbench.errors import StatbenchError
from statbench.loading.load import start_task
from statbench.loading.pools import POOL_SUFFIX, cache_pool_dir, sidecar_path
from statbench.registry.plugins import get_registry
from statbench.run.request import RunRequest, parse_model_params
from statbench.run.runner import execute
from statbench.data.atomic import write_json


def build_pool(task_name: str, retriever: str, params, name: str | None, depth: int, data_dir: Path | None,
               log: logging.Logger, progress, command: str = "") -> tuple[Path, dict]:
    """Run ``retriever`` on every query of the task (through the runner, so its cache is
    reused) and freeze the top ``depth`` per query as pool ``name`` in the cache.
    ``params``: typed values, or ``--param KEY=VALUE`` strings (parsed here)."""
    entry = get_registry().get("tasks", task_name)
    task = start_task(entry)
    get_registry().get("retrievers", retriever)
    if depth > task.depth:
        raise StatbenchError(f"--depth {depth} exceeds the run depth of task {task_name} ({task.depth})")
    name = name or retriever
    if not name.replace("-", "").replace("_", "").isalnum():
        raise StatbenchError(f"pool name {name!r}: use letters, digits, '-' and '_' only")
    folder = cache_pool_dir(entry.cls.task_info().name)  # where runs look pools up (not the --task spelling)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=folder) as tmp:
        typed = dict(params) if isinstance(params, Mapping) else parse_model_params("retrievers", retriever, params)
        request = RunRequest(task=task_name, model=retriever, params=typed, data_dir=data_dir, output=Path(tmp),
                             command=command)
        outcome = execute(request, log, progress)
        rankings = {qid: ranking[:depth] for qid, ranking in read_run(outcome.run_path).items()}
    path = folder / f"{name}{POOL_SUFFIX}"
    results = outcome.record
    # two builds of one pool at once: each writes its pool and its sidecar as a pair (a
    # sidecar never describes the other build's file)
    from filelock import FileLock

    with FileLock(str(folder / f".{name}.lock")):
        write_run(path, rankings, f"pool-{name}")
        meta = {
            "name": name,
            "task": task_name,
            "sha256": file_sha256(path),
            "depth": depth,
            "n_queries": len(rankings),
            "retriever": {"name": results.model.name, "version": results.model.version,
                          "params": results.model.params},
            "data_checksum": results.task.data_checksum,
            "command": command or shlex.join(
                ["statbench", "pool", "build", "--task", task_name, "--retriever", retriever, "--name", name,
                 "--depth", str(depth)]
            ),
            "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            "first_stage_scores": results.all_queries,
        }
        write_json(sidecar_path(path), meta)
    return path, meta
