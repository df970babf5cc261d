"""A board's row: one results file's configuration, its identity and key, the board it belongs
to (task, version, data, splits, measures) and the boards' names."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from statbench.leaderboard.caches.records import Queries, QueryTable
from statbench.leaderboard.collect.identity import budget
from statbench.leaderboard.collect.rowheads import RowHead, load_record
from statbench.registry.plugins import get_registry
from statbench.results.record import ModelRecord, Results, as_scores

if TYPE_CHECKING:
    from statbench.leaderboard.verify.verify import Verification

class BoardKey(NamedTuple):
    """What the rows of one table share: a row is compared with another only on the same
    task version, data, split set and measure definitions (label -> ir-measures spelling:
    a label is not a measure's identity)."""

    task: str
    version: str
    checksum: str
    splits: tuple[tuple[str, int], ...]
    measures: tuple[tuple[str, str], ...]

#: the task version of results written before ``task.version`` was recorded: every task
#: was at its first version then
FIRST_VERSION = "1"


@dataclass
class Row:
    """One scored configuration on one task."""

    key: str  #: short stable id derived from the identity
    identity: dict  #: model name + params, reranker name + params, pool
    path: Path  #: the results file
    results: Results
    problems: list[str] = field(default_factory=list)  #: non-fatal (e.g. run file damaged): warnings
    notes: list[str] = field(default_factory=list)  #: e.g. results published without their run file
    #: what ``build --verify`` found (None: built without verification); a refused row is never a Row
    verification: Verification | None = None
    #: the record cache's name for the file as it was read (its state, the validating code):
    #: what names the row's record in caches kept between builds (None: not kept)
    entry_name: str | None = None
    def query_scores(self, label: str) -> dict[str, float]:
        """query id -> score on measure ``label`` (from the cache's columns when the record
        came from the record cache: :class:`~statbench.leaderboard.caches.records.LazyQueries`)."""
        per_query = self.results.per_query
        if hasattr(per_query, "query_scores"):
            return per_query.query_scores(label)
        return self.results.query_scores(label)

    def query_table(self):
        """The per-query scores as columns (:class:`~statbench.leaderboard.caches.records.QueryTable`)
        when the record came from the record cache, else None."""
        per_query = self.results.per_query
        return per_query.table() if hasattr(per_query, "table") else None

    @property
    def queries_sha256(self) -> str:
        """What names this row's per-query scores (the significance cache's key)."""
        if not hasattr(self, "_queries_sha256"):
            self._queries_sha256 = queries_digest(self.results)
        return self._queries_sha256

    @property
    def labels(self) -> set[str]:
        """The labels of the row's measures."""
        return {label for label, _ in self.measure_set}

    @property
    def task_record(self):
        return self.results.task

    @property
    def task(self) -> str:
        return self.task_record.name

    @property
    def model(self) -> ModelRecord:
        return self.results.model

    @property
    def reranker(self) -> ModelRecord | None:
        return self.results.reranker

    @property
    def pool(self) -> str | None:
        return self.results.pool

    @property
    def family(self) -> str:
        """Rows with a reranker count as rerankers; otherwise the first stage's family."""
        return (self.reranker or self.model).family

    @property
    def trained(self) -> bool:
        return bool(self.model.trained) or bool(self.reranker is not None and self.reranker.trained)

    @property
    def name(self) -> str:
        """Model, then ``→ reranker``; what significance tables and the baseline refer to."""
        parts = [self.model.name]
        if self.reranker:
            parts.append(self.reranker.name)
        return " → ".join(parts)

    @property
    def sort_key(self) -> str:
        return json.dumps(self.identity, sort_keys=True, ensure_ascii=False)

    @property
    def multi_split(self) -> bool:
        return len(self.results.splits) > 1

    @property
    def split_set(self) -> tuple[tuple[str, int], ...]:
        return split_set(self.results)

    @property
    def measure_set(self) -> tuple[tuple[str, str], ...]:
        return measure_set(self.results)

    @property
    def board(self) -> BoardKey:
        """What a row must share with the others of its table (see :class:`BoardKey`)."""
        task = self.task_record
        return BoardKey(task.name, task.version or FIRST_VERSION, task.data_checksum, self.split_set, self.measure_set)

    @property
    def budget(self) -> str | None:
        """The reduced budget this row ran (``preset=cpu-small``), None for the protocol's settings."""
        if not hasattr(self, "_budget"):
            self._budget = budget(self.results)
        return self._budget

    @property
    def corpus_size(self) -> int | None:
        return self.task_record.corpus_size

    @property
    def run_path(self) -> str | None:
        """The run file as the results name it (relative to the results file), None if none."""
        return self.results.run_file.path or None

    @property
    def run_sha256(self) -> str:
        """The run file's sha256 as the results record it."""
        return self.results.run_file.sha256

    @property
    def created(self) -> str:
        return self.results.created

class HeadRow(Row):
    """A row placed from the head its file's record left in an earlier build
    (:mod:`.rowheads`): everything that places it on its board and digests it comes from the
    head; its record (``results``) is loaded the first time something asks for it."""

    def __init__(self, *, key: str, identity: dict, path: Path, head, entry):
        self.key, self.identity, self.path = key, identity, path
        self.problems, self.notes, self.verification = [], [], None
        self.head, self._entry, self.entry_name = head, entry, entry.name

    def __getattr__(self, name):
        if name != "results":
            raise AttributeError(name)

        self.results = record = load_record(self._entry)
        return record

    def query_table(self):
        """The per-query scores as columns, read from the record cache alone while the record
        is not loaded (ranking a board reads every row's scores, never every record)."""
        if "results" in vars(self):
            return super().query_table()
        return Queries(self._entry, self.head.queries_sha256).load()

    @property
    def task_record(self):
        return self.head.task

    @property
    def model(self) -> ModelRecord:
        return self.head.model

    @property
    def reranker(self) -> ModelRecord | None:
        return self.head.reranker

    @property
    def pool(self) -> str | None:
        return self.head.pool

    @property
    def queries_sha256(self) -> str:
        return self.head.queries_sha256

    @property
    def run_sha256(self) -> str:
        return self.head.run_sha256

    @property
    def split_set(self) -> tuple[tuple[str, int], ...]:
        return self.head.splits

    @property
    def measure_set(self) -> tuple[tuple[str, str], ...]:
        return self.head.measures

    @property
    def run_path(self) -> str | None:
        return self.head.run_path

    @property
    def created(self) -> str:
        return self.head.created

def row_key(ident: dict) -> str:
    text = json.dumps(ident, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]

def split_set(results) -> tuple[tuple[str, int], ...]:
    """The splits the results were scored on, as sorted (name, number of queries) pairs:
    ``--split R04,R03`` and ``--split R03,R04`` are the same set."""
    return tuple(sorted((s.name, s.n_queries) for s in as_scores(results).splits))

def measure_set(results: Results) -> tuple[tuple[str, str], ...]:
    """The measure definitions, as sorted (label, ir-measures spelling) pairs."""
    return tuple(sorted((m.label, m.ir_measure) for m in results.measures))

def queries_digest(record: Results) -> str:
    """The sha256 that names a record's per-query scores: the cache's, for a record read from
    it (:class:`~statbench.leaderboard.caches.records.LazyQueries`), else that of their table."""
    per_query = record.per_query
    if hasattr(per_query, "sha256"):
        return per_query.sha256

    return hashlib.sha256(QueryTable.of(per_query).to_bytes()).hexdigest()

def row_head(record: Results, queries_sha256: str | None = None):
    """The head of a record (:class:`~statbench.leaderboard.collect.rowheads.RowHead`): what places
    its row, kept for the next build. ``queries_sha256``: that of its per-query scores, when
    known (kept in the record cache), else computed."""

    return RowHead(task=record.task, model=record.model, reranker=record.reranker, pool=record.pool,
                   pool_sha256=record.pool_sha256, splits=split_set(record), measures=measure_set(record),
                   run_path=record.run_file.path or None, created=record.created,
                   queries_sha256=queries_sha256 or queries_digest(record), run_sha256=record.run_file.sha256)

def _splits_label(splits: tuple[tuple[str, int], ...], with_counts: bool) -> str:
    if with_counts:
        return ",".join(f"{name} ({n})" for name, n in splits)
    return ",".join(name for name, _ in splits)

def corpus_unit(task: str) -> str:
    """What the task calls its documents ("articles", "passages"): its declaration when
    installed, else "documents"."""

    entry = get_registry().tasks.get(task)
    info = entry.cls.task_info() if entry is not None else None
    return getattr(info, "corpus_unit", "") or "documents"

def board_names(boards, corpus_sizes: dict | None = None) -> dict[BoardKey, str]:
    """A name per board. The board of a task with the most rows (then the most splits)
    keeps the task's name; any other is named in words after what sets it apart: its data
    by corpus size (``TASK @ 1,842 passages``, or ``TASK @ other data`` when the size is
    not recorded or the same), ``@ version V``, ``@ splits NAME,NAME``, ``@ other measure
    definitions``. Checksums are shown in the board's details, never in its name."""
    boards = [b if isinstance(b, BoardKey) else BoardKey(b[0], FIRST_VERSION, b[1], b[2], ()) for b in boards]
    sizes = corpus_sizes or {}
    counts: dict[BoardKey, int] = {}
    for board in boards:
        counts[board] = counts.get(board, 0) + 1
    main: dict[str, BoardKey] = {}
    for board in sorted(counts, key=lambda b: (b.task, -counts[b], -len(b.splits), b)):
        main.setdefault(board.task, board)
    names: dict[BoardKey, str] = {}
    used: set[str] = set()
    for board in sorted(counts, key=lambda b: (b.task, b != main[b.task], b)):
        first = main[board.task]
        name = board.task
        if board.version != first.version:
            name += f" @ version {board.version}"
        if board.checksum != first.checksum:
            size = sizes.get(board)
            same_size = [b for b in counts if b.task == board.task and b.checksum != board.checksum
                         and sizes.get(b) == size]
            if size is not None and not same_size:
                name += f" @ {size:,} {corpus_unit(board.task)}"
            else:
                name += " @ other data"
        if board.splits != first.splits:
            same_names = _splits_label(board.splits, False) == _splits_label(first.splits, False)
            name += f" @ splits {_splits_label(board.splits, same_names)}"
        if board.measures != first.measures:
            redefined = any(dict(first.measures).get(label, spelling) != spelling for label, spelling in board.measures)
            name += " @ other measure definitions" if redefined else " @ other measures"
        base, n = name, 2
        while name in used:
            name = f"{base} ({n})"
            n += 1
        used.add(name)
        names[board] = name
    return names
