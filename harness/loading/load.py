"""Loading a task: the one path from a registered task to its checked data.

Every caller goes through :func:`load_task`: ``statbench run`` (and ``pool build``, which
runs), ``statbench evaluate``, ``statbench distill``, the ir_datasets adapter
(:mod:`.irds`) and the plugin test kit (:func:`statbench.testing.check_task`). So each
gets the same guards, in one order:

- the task is started and loaded through :func:`~statbench.registry.plugins.call_plugin`:
  anything the plugin raises is one line naming it (a :class:`~statbench.errors.StatbenchError`
  it raises, e.g. a ``DataFormatError``, is its own line);
- what ``load()`` returns is checked (:func:`~statbench.registry.checks.check_task_data`)
  before anything uses it, and its pools are attached (:mod:`.pools`, verified on use);
- what the loader says is kept off the console (run.log has it on every run) and its
  dropped items are listed one per line after a count; :meth:`LoadedTask.say_notes`
  puts its warnings and the count on the console once per data (:mod:`.data_notes`);
- where the caller asks, a valid cached summary of an earlier load of the same files
  stands in for the load (:mod:`.loadcache`), and a full load leaves one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from statbench.contract.records import TaskData
from statbench.contract.task import Task
from statbench.contract.taskinfo import TaskInfo
from statbench.data.dataio import _paused_gc, recording_opened
from statbench.loading.data_notes import say_once
from statbench.loading.loadcache import TaskSummary, read_doc_ids, read_summary, summary_entry, write_summary
from statbench.loading.pools import attach_pools
from statbench.registry.checks import check_task_data
from statbench.registry.plugins import Registered, call_plugin
from statbench.storage.cache import CacheEntry
from statbench.storage.keys import task_identity
from statbench.terminal.console import IN_RUN_LOG, ON_CONSOLE, OffConsole

#: ``summary_at`` not given: :func:`load_task` locates the summary's entry itself
_LOCATE = object()


def start_task(entry: Registered) -> Task:
    """The task plugin's instance (a constructor that raises is one line naming the plugin)."""
    return call_plugin(entry, "starting", entry.cls)


@dataclass(frozen=True)
class LoadedTask:
    """A task's load: its data, or the cached summary that stood in for it."""

    entry: Registered
    task: Task
    info: TaskInfo
    #: the loaded data; ``None`` when a cached summary stood in for the load
    data: TaskData | None
    #: (level, message) of what the loader logged (replayed from the summary when it stood in)
    said: tuple[tuple[int, str], ...]
    #: seconds the load (or the summary's look-up) took
    seconds: float
    #: the summary's cache entry (``None``: not asked for, or the task cannot have one)
    summary_at: CacheEntry | None = None
    #: the summary read from the cache, when it stood in for the load
    cached: TaskSummary | None = None

    @cached_property
    def identity(self) -> dict:
        """What about the task changes what a model sees (the split runs' key)."""
        if self.cached is not None:
            return self.cached.identity
        return task_identity(self.entry, self.info, self.data)

    @cached_property
    def summary(self) -> TaskSummary:
        """What scoring and provenance need of the task, from the load or the cache."""
        if self.cached is not None:
            return self.cached
        return TaskSummary.of(self.data, self.identity, self.said, language=self.info.language)

    def doc_ids(self) -> Collection[str]:
        """The corpus's document ids (stored with the summary when it stood in)."""
        return self.data.corpus if self.data is not None else read_doc_ids(self.summary_at)

    @property
    def checksum(self) -> str:
        return self.data.checksum if self.data is not None else self.cached.checksum

    @property
    def dropped(self) -> list[str]:
        return list(self.data.dropped if self.data is not None else self.cached.dropped)

    def say_notes(self, log: logging.Logger) -> None:
        """The loader's warnings and the count of dropped items, on the console once per
        task and data (run.log has them, and the dropped items, on every run)."""
        count = dropped_count_line(self.info.name, self.dropped)
        say_once(log, self.info.name, self.checksum, [*self.said, *([(logging.WARNING, count)] if count else [])])


def load_task(entry: Registered, data_dir: Path | None, log: logging.Logger, *, task: Task | None = None,
              summary: bool | Callable[[TaskSummary], bool] = False, summary_at=_LOCATE) -> LoadedTask:
    """Load the task of ``entry`` from ``data_dir`` (``None``: its default folder), with
    every guard (see the module's docstring).

    ``task``: an instance already started (:func:`start_task`). ``summary``: ``True`` lets a
    valid cached summary stand in for the load; a function lets it when it returns true for
    the summary (``statbench run``: when every split's run is cached too); a full load then
    stores a new summary. ``summary_at``: the summary's cache entry when the caller already
    located it (``None``: the task has none)."""
    task = task if task is not None else start_task(entry)
    info = entry.cls.task_info()
    started = time.perf_counter()
    at = None
    if summary:
        at = summary_entry(task, entry, data_dir, log) if summary_at is _LOCATE else summary_at
        cached = read_summary(at) if at is not None else None
        if cached is not None and (summary is True or summary(cached)):
            for level, message in cached.log:  # run.log has them every time, the console once per data
                log.log(level, "%s", message, extra={ON_CONSOLE: False})
            loaded = LoadedTask(entry, task, info, None, tuple(cached.log), time.perf_counter() - started, at, cached)
            _list_dropped(log, loaded)
            return loaded
    said = _Said()
    off_console = OffConsole()  # what the loader says: run.log every time, the console once per data
    log.addHandler(said)
    log.addFilter(off_console)
    try:
        with recording_opened() as opened, _paused_gc():
            data = call_plugin(entry, "loading", lambda: task.load(data_dir, log))
    finally:
        log.removeFilter(off_console)
        log.removeHandler(said)
    seconds = time.perf_counter() - started
    check_task_data(task.name, data)
    attach_pools(info.name, data, task.data_folder(data_dir), log)
    loaded = LoadedTask(entry, task, info, data, tuple(said.records), seconds, at)
    if at is not None:
        write_summary(at, loaded.summary, data, opened)
    _list_dropped(log, loaded)
    return loaded


def dropped_count_line(task_name: str, dropped: list[str]) -> str | None:
    """The one line saying how many items the loader dropped (``None`` when none)."""
    if not dropped:
        return None
    items = "1 item" if len(dropped) == 1 else f"{len(dropped)} items"
    return (f"{task_name}: {items} dropped: run.log lists {'it' if len(dropped) == 1 else 'them'} "
            "(the console too with -v; results.json: task.dropped)")


def _list_dropped(log: logging.Logger, loaded: LoadedTask) -> None:
    """run.log: the count, then every dropped item on a line of its own (the console shows
    the items with -v; the count once per data, see :meth:`LoadedTask.say_notes`). An item
    the loader already logged as ``dropped: ITEM`` is not repeated."""
    dropped = loaded.dropped
    count = dropped_count_line(loaded.info.name, dropped)
    if count is None:
        return
    log.warning("%s", count, extra={ON_CONSOLE: False})
    already = {message for _, message in loaded.said}
    for item in dropped:
        if f"dropped: {item}" not in already:
            log.info("dropped: %s", item)


class _Said(logging.Handler):
    """Keeps (level, message) of what the loader logs for run.log (a summary replays it)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.records: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, IN_RUN_LOG, True):
            self.records.append((record.levelno, record.getMessage()))
