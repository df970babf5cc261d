"""The checks a declared benchmark passes once every plugin has registered: each task it
names is registered, and the protocol, version and measure it names are the task's.

The registry (:mod:`statbench.registry.plugins`) runs :func:`check_benchmark_tasks` for
each benchmark against the tasks of the plugins that did not fail; a benchmark that fails
marks its plugin failed, as a task whose measures are unknown does.
"""

from __future__ import annotations

from collections.abc import Callable

from statbench.contract.benchmark import Benchmark, BenchmarkError


def check_benchmark_tasks(benchmark: Benchmark, task_info: Callable[[str], object | None]) -> None:
    """Raise :class:`BenchmarkError` (one line) unless every task of ``benchmark`` is known
    to ``task_info`` (a task name -> its :class:`~statbench.contract.taskinfo.TaskInfo`, or
    None when no such task is registered) with the protocol, version and measure declared."""
    who = f"benchmark {benchmark.id!r}"
    for entry in benchmark.tasks:
        info = task_info(entry.task)
        if info is None:
            raise BenchmarkError(f"{who} names task {entry.task!r}, which no plugin registers")
        labels = info.measure_labels
        if entry.measure not in labels:
            raise BenchmarkError(f"{who}: task {entry.task!r} does not score {entry.measure!r} (its measures: "
                                 f"{', '.join(labels)})")
        if entry.protocol and info.protocol(entry.protocol) is None:
            known = ", ".join(p.name for p in info.protocols) or "none declared"
            raise BenchmarkError(f"{who}: task {entry.task!r} has no protocol {entry.protocol!r} (its protocols: "
                                 f"{known})")
        if entry.version and entry.version != info.version:
            raise BenchmarkError(f"{who} declares task {entry.task!r} version {entry.version}, but the installed task "
                                 f"is version {info.version}: declare a new version of the benchmark")


def protocol_splits(entry, info) -> tuple[str, ...] | None:
    """The split names a result must have run to enter ``entry``'s column: the named
    protocol's, or the default protocol's; None when the task declares no protocol (any
    split set of the task, the board with the most rows deciding)."""
    protocol = info.protocol(entry.protocol or None)
    return tuple(protocol.splits) if protocol is not None else None
