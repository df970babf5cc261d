"""A benchmark: a named, versioned set of tasks, each scored by one primary measure.

A plugin declares one through the ``register_benchmarks`` hook (docs/plugins.md); the
leaderboard's overview ranks configurations across its tasks. The shape is checked here
when a :class:`Benchmark` is built; what it names (registered tasks, their protocols,
measures and versions) is checked by the registry once every plugin has registered
(:func:`statbench.registry.benchmarks.check_benchmark_tasks`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from statbench.errors import StatbenchError

#: A benchmark's name and version: they become ``NAME-vVERSION``, a CLI selector and a page anchor.
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._]*$")
_CHECKSUM = re.compile(r"^[0-9a-f]{64}$")


class BenchmarkError(StatbenchError):
    """A benchmark declaration that is malformed, or names what is not there."""


@dataclass(frozen=True)
class BenchmarkTask:
    """One task of a benchmark: which results enter its column, and the figure shown.

    ``protocol``: the task's protocol whose splits the results must have run (empty: the
    task's default protocol). ``version``: the task version the results must record (empty:
    the installed task's). ``data``: the data checksum the results must record (empty: any;
    the column then takes the board of that task with the most rows). ``measure``: the
    label of the measure shown and ranked (one the task declares)."""

    task: str
    measure: str
    protocol: str = ""
    version: str = ""
    data: str = ""

    def __post_init__(self):
        for name in ("task", "measure"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise BenchmarkError(f"a benchmark task's {name} must be a non-empty str, found {value!r}")
        for name in ("protocol", "version", "data"):
            if not isinstance(getattr(self, name), str):
                raise BenchmarkError(f"benchmark task {self.task!r}: {name} must be a str, "
                                     f"found {type(getattr(self, name)).__name__}")
        if self.data and not _CHECKSUM.match(self.data):
            raise BenchmarkError(f"benchmark task {self.task!r}: data {self.data!r} is not a sha256 hex digest "
                                 "(a results file's task.data_checksum)")


@dataclass(frozen=True)
class Benchmark:
    """A named, versioned set of tasks (``statutes`` version ``1`` is ``statutes-v1``)."""

    name: str
    version: str
    tasks: tuple[BenchmarkTask, ...]
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise BenchmarkError(f"benchmark name {self.name!r} must be lower-case letters, digits, '-' or '_', "
                                 "starting with a letter")
        if not isinstance(self.version, str) or not _VERSION.match(self.version):
            raise BenchmarkError(f"benchmark {self.name!r}: version {self.version!r} must be a non-empty str of "
                                 "letters, digits, '.' or '_'")
        if not isinstance(self.description, str):
            raise BenchmarkError(f"benchmark {self.name!r}: description must be a str")
        if isinstance(self.tasks, list):
            object.__setattr__(self, "tasks", tuple(self.tasks))
        if not isinstance(self.tasks, tuple) or not self.tasks:
            raise BenchmarkError(f"benchmark {self.name!r} declares no task")
        odd = next((t for t in self.tasks if not isinstance(t, BenchmarkTask)), None)
        if odd is not None:
            raise BenchmarkError(f"benchmark {self.name!r}: {odd!r} is not a statbench.api.BenchmarkTask")
        seen: set[str] = set()
        for entry in self.tasks:
            if entry.task in seen:
                raise BenchmarkError(f"benchmark {self.name!r} declares task {entry.task!r} twice")
            seen.add(entry.task)

    @property
    def id(self) -> str:
        """What selects it (``--benchmark statutes-v1``) and names it on the site."""
        return f"{self.name}-v{self.version}"

    @property
    def task_names(self) -> tuple[str, ...]:
        return tuple(t.task for t in self.tasks)
