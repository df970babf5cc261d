"""``statbench pool``: build and list frozen candidate pools (see :mod:`statbench.loading.pools`).

A built-in plugin: registered through the ``register_commands`` hook like a third party's."""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path

import click

from statbench.data.checksum import file_sha256
from statbench.data.dataio import read_json
from statbench.errors import StatbenchError, one_line
from statbench.registry.hookspecs import hookimpl
from statbench.registry.plugins import get_registry
from statbench.terminal.console import make_console, progress_bars

log = logging.getLogger("statbench")


@click.group()
def pool():
    """Frozen candidate pools for reranking tasks."""


@pool.command()
@click.option("--task", required=True, help="Task name (see `statbench list tasks`).")
@click.option("--retriever", required=True, help="First-stage retriever (see `statbench list models`).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE", help="Retriever parameter; repeatable.")
@click.option("--name", help="Pool name [default: the retriever's name].")
@click.option("--depth", type=click.IntRange(min=1), default=100, show_default=True, help="Candidates kept per query.")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Folder holding the task's files.")
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
def build(task, retriever, params, name, depth, data_dir, progress):
    """Run a retriever on every query and freeze its top DEPTH as a checksummed pool."""
    from statbench.run.pool_build import build_pool  # the run machinery: `statbench --help` loads this module

    console = make_console()
    command = shlex.join(["statbench", *sys.argv[1:]]) if sys.argv[1:2] == ["pool"] else ""
    with progress_bars(console, enabled=progress and console.is_terminal) as bars:
        path, meta = build_pool(task, retriever, list(params), name, depth, data_dir, log, bars, command)
    console.print(f"pool {meta['name']!r}: {meta['n_queries']} queries, top {meta['depth']}, sha256 {meta['sha256']}",
                  markup=False)
    console.print(f"file: {path}", markup=False)
    scores = meta["first_stage_scores"]
    console.print("first stage: " + ", ".join(f"{k} {v:.4f}" for k, v in list(scores.items())[:6]), markup=False)


@pool.command(name="list")
@click.option("--task", required=True, help="Task name.")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Folder holding the task's files.")
def list_(task, data_dir):
    """List the pools a run of TASK can use, with their checksums (nothing is loaded)."""
    from rich.markup import escape
    from rich.table import Table

    from statbench.loading.pools import pool_files, sidecar_path  # read only here: `statbench --help` loads this module

    entry = get_registry().get("tasks", task)
    folder = entry.cls().data_folder(data_dir) if hasattr(entry.cls, "data_folder") else data_dir
    name_of_task = entry.cls.task_info().name  # the name runs look pools up by (not DIST:NAME or beir:PATH)
    table = Table(title=escape(f"pools of {task}"))
    for column in ("name", "file", "retriever", "depth", "status"):
        table.add_column(column)
    for name, path in sorted(pool_files(name_of_task, folder).items()):
        side = sidecar_path(path)
        if not side.is_file():
            table.add_row(escape(name), escape(str(path)), "?", "?", "[yellow]no sidecar (unverified)")
            continue
        try:  # one damaged pool is a row saying so, never the end of the listing
            meta = read_json(side, expect=dict)
            ok = meta.get("sha256") == file_sha256(path)
        except (StatbenchError, OSError, RecursionError) as exc:
            table.add_row(escape(name), escape(str(path)), "?", "?", f"[red]unreadable ({escape(one_line(exc))})")
            continue
        # the sidecar is a file on disk: whatever it holds is shown as text, never read as markup
        retriever = meta.get("retriever")
        retriever = retriever.get("name", "?") if isinstance(retriever, dict) else "?"
        table.add_row(escape(name), escape(str(path)), escape(str(retriever)), escape(str(meta.get("depth", "?"))),
                      "[green]ok" if ok else "[red]checksum mismatch")
    make_console().print(table)


@hookimpl
def register_commands(cli):
    cli.add_command(pool)
