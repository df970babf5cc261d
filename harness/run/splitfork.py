"""A run's splits ranked in two processes: a cold run otherwise searches, checks, orders,
formats and scores every split on one CPU while the other idles.

Once a split computed here has built the index (the first one, usually), a forked copy of the
run computes the later half of the splits left to compute into their cache entries (each
sealed as this process would seal it) and caches their per-query scores, while this process
computes and scores the others. This process then takes each of the fork's splits, in split
order, from its verified cache entry, with what the fork measured (search seconds, per-query
latencies, queries), logged and met (invalid cache entries) for it replayed at that point:
the run file, results and run.log are those of one process. A split the fork did not finish
(it failed, died or was killed) is computed here, so an error is raised here as it would have
been; nothing the fork wrote is used without the verification every cache read makes.

Used only where it cannot change a figure: a retriever that declares ``fork_search = True``
(its search has no side effect the run reads back, such as ``stats``; the built-in
embedded lexical models), no reranker, nothing loaded whose threads make a fork unsafe (a
JVM, torch), and ``STATBENCH_WORKERS`` not 1 (with it unset, two CPUs and enough test
queries left to be worth a fork)"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from statbench.run.processes import ForkedChild, configured_workers, usable_cpus
from statbench.storage.cache import CacheEvent, take_events

#: below this many test queries left, a fork (a few milliseconds, a second process's memory) is not worth it
MIN_QUERIES = 500
REPORT = "report.pkl"
#: a split's name -> whether it was computed (not found in the cache), and what scores it (or None)
Compute = Callable[[str], "tuple[bool, Callable[[], None] | None]"]


@dataclass
class SplitReport:
    """What the fork did for one split it computed: its log records (as plain data), the
    cache entries it found invalid, and what it measured."""

    records: list[tuple[int, dict]] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    queries: int = 0
    batch_size: int | None = None


def run_processes(queries_left: int) -> int:
    """Processes for the remaining splits: ``STATBENCH_WORKERS`` (more than 2 counts as 2),
    else 2 where this process may use two CPUs and ``queries_left`` is worth it, else 1."""
    configured = configured_workers()
    if configured is not None:
        return max(1, min(2, configured))
    return 2 if usable_cpus() > 1 and queries_left >= MIN_QUERIES else 1


class _Capture(logging.Handler):
    """Keeps each record that reaches the logger ``number`` of the fork's loggers as plain
    data (its message formatted): what :meth:`SplitFork.replay` re-creates there."""

    def __init__(self, number: int, records: list[tuple[int, dict]]):
        super().__init__(logging.NOTSET)
        self.number, self.records = number, records

    def emit(self, record):
        fields = {name: value for name, value in vars(record).items()
                  if value is None or type(value) in (str, int, float, bool)}
        self.records.append((self.number, {**fields, "msg": record.getMessage(), "args": None}))


class SplitFork(ForkedChild):
    """A forked copy of the run computing the splits ``names`` with ``compute(name)`` (whether
    it computed the split or found it in the cache, and what scores it, or None), one report
    per split it computed (:meth:`reports`).
    ``measured()`` gives the run's measures so far (a :class:`SplitReport` of totals)."""

    def __init__(self, names: list[str], compute: Compute, measured: Callable[[], SplitReport],
                 loggers: list[logging.Logger]):
        self._folder = tempfile.TemporaryDirectory(prefix="statbench-splits-")
        self._report = Path(self._folder.name) / REPORT
        self.names = frozenset(names)
        self._loggers = loggers
        self._reports: dict[str, SplitReport] | None = None
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        with warnings.catch_warnings():
            # Python >= 3.12 warns of any thread; the modules whose threads are not fork-safe make can_fork() false
            warnings.simplefilter("ignore", DeprecationWarning)
            self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            code = 1
            # the process's own streams, not a progress display's proxies: their console lock
            # may have been held by the display's refresh thread, which the fork does not have
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            try:
                self._work(names, compute, measured, loggers)
                code = 0
            finally:
                os._exit(code)

    def _work(self, names: list[str], compute: Compute, measured: Callable[[], SplitReport],
              loggers: list[logging.Logger]) -> None:
        records: list[tuple[int, dict]] = []
        for number, logger in enumerate(loggers):  # nothing said here: the parent replays it in split order
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
            logger.propagate = False
            logger.addHandler(_Capture(number, records))
        take_events()  # the parent's, not this process's
        reports: dict[str, SplitReport] = {}
        for name in names:
            records.clear()
            before = measured()
            try:
                built, score = compute(name)
            except BaseException:  # noqa: BLE001 - this split (and the later ones) is computed by the parent
                return
            if built:  # (else found in the cache after all: the parent reads it as a hit)
                report = _since(measured(), before)
                report.records = list(records)
                report.events = [(event.entry, event.reason) for event in take_events()]
                reports[name] = report
                self._save(reports)  # each split's as soon as it is done: a fork that dies keeps what it did
            if score is not None:
                try:
                    score()
                except BaseException:  # noqa: BLE001 - the parent scores the split itself (and fails as it would)
                    return

    def _save(self, reports: dict[str, SplitReport]) -> None:
        with open(f"{self._report}.part", "wb") as handle:
            pickle.dump(reports, handle, pickle.HIGHEST_PROTOCOL)
        os.replace(f"{self._report}.part", self._report)

    def takes(self, name: str) -> bool:
        """Whether the fork computes split ``name``."""
        return name in self.names

    def reports(self) -> dict[str, SplitReport]:
        """The fork's reports, once it has finished (none where it failed)."""
        if self._reports is None:
            self.wait()
            self._reports = {}
            if self._report.is_file():  # (also from a fork that died: the splits it reported are done)
                with open(self._report, "rb") as handle:
                    self._reports = pickle.load(handle)
            self._folder.cleanup()
        return self._reports

    def replay(self, report: SplitReport) -> list[CacheEvent]:
        """Say what the fork logged for a split, from the logger that caught each record up
        (its handlers, then its parents', as the record went there); the cache entries it
        found invalid."""
        for number, fields in report.records:  # (each passed its logger's level and filters in the fork)
            self._loggers[number].callHandlers(logging.makeLogRecord(fields))
        return [CacheEvent(entry, reason) for entry, reason in report.events]

    def kill(self) -> None:
        """Stop the fork (when this process fails first); what it wrote is verified or rebuilt when read."""
        super().kill()
        if self._reports is None:
            self._reports = {}
            self._folder.cleanup()


def _since(now: SplitReport, before: SplitReport) -> SplitReport:
    """What was measured between two totals."""
    timings = {step: seconds - before.timings.get(step, 0.0) for step, seconds in now.timings.items()
               if seconds != before.timings.get(step, 0.0)}
    return SplitReport(timings=timings, latencies=now.latencies[len(before.latencies):],
                       queries=now.queries - before.queries, batch_size=now.batch_size)
