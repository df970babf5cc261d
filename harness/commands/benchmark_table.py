"""``statbench list benchmarks``: the declared benchmarks, one line each or (``-v``, or
one NAME) each task with its protocol, version and primary measure.

Every text a plugin gave is escaped before rich reads it (as in :mod:`.tables`)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table


def print_benchmarks(console, registry, verbose: bool = False, name: str | None = None) -> None:
    """The benchmarks of ``registry``; ``name`` (``statutes-v1``, or ``DIST:NAME``) shows
    that one in detail; an unknown name is refused with the choices (UnknownNameError)."""
    if name is not None:
        entries = [registry.get("benchmarks", name)]
    else:
        entries = [registry.benchmarks[key] for key in sorted(registry.benchmarks)]
    if not entries:
        return
    if verbose or name is not None:
        for entry in entries:
            _detailed(console, entry, registry)
    else:
        _compact(console, entries)


def _compact(console, entries) -> None:
    table = Table(title=f"benchmarks ({len(entries)})", title_justify="left", box=None, pad_edge=False)
    table.add_column("name", no_wrap=True)
    table.add_column("tasks (primary measure)")
    table.add_column("description", max_width=72)
    table.add_column("plugin", no_wrap=True)
    for entry in entries:
        bench = entry.cls
        tasks = ", ".join(f"{t.task} ({t.measure})" for t in bench.tasks)
        table.add_row(*(escape(str(cell)) for cell in (entry.name, tasks, bench.description, entry.plugin.name)))
    console.print(table)


def _detailed(console, entry, registry) -> None:
    bench = entry.cls
    table = Table(title=escape(f"benchmark {entry.name}: {bench.description}" if bench.description
                               else f"benchmark {entry.name}"),
                  caption=escape(f"declared by plugin {entry.plugin.name}"))
    for column in ("task", "protocol: splits", "task version", "primary measure", "data"):
        table.add_column(column)
    for task in bench.tasks:
        info = registry.tasks[task.task].cls.task_info() if task.task in registry.tasks else None
        protocol = info.protocol(task.protocol or None) if info is not None else None
        splits = f"{protocol.name}: {', '.join(protocol.splits)}" if protocol is not None else (task.protocol or "-")
        version = task.version or (f"{info.version} (installed)" if info is not None else "-")
        data = task.data[:12] if task.data else "any (the board with the most rows)"
        table.add_row(*(escape(str(cell)) for cell in (task.task, splits, version, task.measure, data)))
    console.print(table)
