"""What ``leaderboard reproduce`` asks inside the isolated environment before it re-runs a
submission (run there as ``python -c "...; main()" OUT TASK [--data-dir DIR] [--pool NAME]``):
which distributions register statbench plugins there and whether they load (the environment
must see statbench's built-ins and the installed source, nothing else), and the version of
the task's data in the folder given (the data checksum from the task's cached summary, as
``leaderboard build --verify`` reads it; the loader's version; the pool's sha256). The answer
is one JSON object written to OUT; a problem with the data is an answer, not a failure."""

from __future__ import annotations

import json
import logging
import sys
from importlib.metadata import entry_points
from pathlib import Path

from statbench import __version__
from statbench.data.checksum import file_sha256
from statbench.errors import StatbenchError
from statbench.loading.load import load_task, start_task
from statbench.loading.pools import pool_files
from statbench.registry.plugins import ENTRY_POINT_GROUP, get_registry, load_entry_points


def plugins_seen() -> list[dict]:
    """Every entry-point plugin of the ``statbench`` group here: distribution, version, the
    site folder it is installed in, and the error importing it raised (None when it loaded)."""

    seen = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist else None
        location = str(ep.dist.locate_file("")) if ep.dist else None
        seen[f"{dist}:{ep.name}"] = {"plugin": ep.name, "distribution": dist, "location": location,
                                     "version": ep.dist.version if ep.dist else None, "error": None}
    for key, info in load_entry_points().items():
        if key in seen:
            seen[key]["error"] = info.error
    return [seen[key] for key in sorted(seen)]

def data_facts(task_name: str, data_dir: Path | None, pool: str | None) -> dict:
    """The data checksum, loader version and pool sha256 of ``task_name`` in ``data_dir``
    (None: the task's default folder), or ``problem``: why they cannot be read here."""

    log = logging.getLogger("statbench.leaderboard.reproduce.submissions")
    try:
        entry = get_registry().get("tasks", task_name)
        info = entry.cls.task_info()
        task = start_task(entry)
        loaded = load_task(entry, data_dir, log, task=task, summary=True)
        facts = {"checksum": loaded.checksum, "version": info.version or "1", "pool_sha256": None, "problem": None}
        if pool is not None:
            path = pool_files(entry.name, task.data_folder(data_dir)).get(pool)
            facts["pool_sha256"] = file_sha256(path) if path is not None else None
        return facts
    except StatbenchError as exc:
        lines = str(exc).strip().splitlines()
        return {"checksum": None, "version": None, "pool_sha256": None,
                "problem": lines[0] if lines else type(exc).__name__}

def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="reproduce-probe")
    parser.add_argument("out", type=Path)
    parser.add_argument("task")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--pool")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)

    answer = {"statbench": __version__, "plugins": plugins_seen(),
              "data": data_facts(args.task, args.data_dir, args.pool)}
    args.out.write_text(json.dumps(answer, ensure_ascii=False), encoding="utf-8")
