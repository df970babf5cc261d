"""The head of a validated results record: what a build needs to place a row on its board
and to tell whether the board changed (task, model, reranker, pool, splits, measures, run
file, time), without the record itself. A rebuild after 10 results were added to one board
of 10,000 read and unpickled every record (2.3 s); with the heads of the files it validated
before, kept in one file per results folder, the rows of a board whose inputs did not
change are never loaded (:class:`~statbench.leaderboard.collect.rows.HeadRow` loads its record
only when something asks for it: rendering, verifying, superseding).

The heads file is keyed like the record cache (a file's state and the validating code's
version: :class:`~statbench.leaderboard.caches.records.RecordEntry`), holds the sha256 of its
payload and is verified on read; a head is only ever used for a file in the state its
record was validated in, and a file without a head is read as before."""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from statbench.errors import DataFormatError, StatbenchError
from statbench.leaderboard.caches.records import RecordCache, RecordEntry, file_state
from statbench.results.record import ModelRecord, Results, TaskRecord, read_results
from statbench.scoring.publishable import check_results
from statbench.storage.cache_files import read_pickled_dict, write_framed

_MAGIC = b"statbench-heads 3\n"


@dataclass(frozen=True)
class RowHead:
    """What :func:`~statbench.leaderboard.collect.identity`, a board's key and a board's
    digest read of a record (the same attributes as :class:`Results` has them; made by
    :func:`~statbench.leaderboard.collect.rows.row_head`)."""

    task: TaskRecord
    model: ModelRecord
    reranker: ModelRecord | None
    pool: str | None
    pool_sha256: str | None
    splits: tuple[tuple[str, int], ...]  #: sorted (name, number of queries)
    measures: tuple[tuple[str, str], ...]  #: sorted (label, ir-measures spelling)
    run_path: str | None
    created: str
    queries_sha256: str  #: names the per-query scores (the significance cache's key)
    run_sha256: str  #: the run file's, as the results record it

def load_record(entry: RecordEntry) -> Results:
    """The record of a file whose head was used: from its cache entry, else validated again
    from the file when it is still in the entry's state."""

    record = entry.get(count=False)
    if record is not None:
        return record
    changed = StatbenchError(f"{entry.path} changed while the leaderboard was being built; build again")
    if file_state(entry.path, entry.cache.digests) != entry.state:
        raise changed
    try:
        record = Results.from_json(read_results(entry.path))
    except (DataFormatError, ValueError, TypeError):
        raise changed from None
    if check_results(record) or file_state(entry.path, entry.cache.digests) != entry.state:
        raise changed
    entry.put(record)
    return record

class Heads:
    """The heads of the files of one results folder validated by earlier builds (entry name ->
    :class:`RowHead`); :meth:`save` keeps those of this build."""

    def __init__(self, records: RecordCache, root: Path):
        name = hashlib.sha256(os.path.abspath(root).encode()).hexdigest()
        self.file = records.root / "heads" / f"{name}.pickle"
        # the heads of files validated since the big file was written, kept apart so that
        # ten new results do not rewrite 10,000 heads (a head is only ever used for a file in
        # the state its name says: any verified head of either file is a right one)
        self.added_file = records.root / "heads" / f"{name}.added.pickle"
        self.added: dict[str, RowHead] = read_pickled_dict(_MAGIC, self.added_file)
        self.known: dict[str, RowHead] = {**read_pickled_dict(_MAGIC, self.file), **self.added}
        self.seen: dict[str, RowHead] = {}

    def get(self, entry: RecordEntry) -> RowHead | None:
        """The head of a file in the state ``entry`` was taken in (a hit of the record cache:
        the file is not validated again), None when there is none."""
        head = self.known.get(entry.name) if entry.name else None
        if head is not None:
            self.seen[entry.name] = head
            entry.cache.hits += 1
        return head

    def learn(self, entry: RecordEntry, head: RowHead) -> None:
        if entry.name:
            self.seen[entry.name] = head

    def save(self) -> None:
        """Keep this build's heads: a few new ones in the small file, else all of them in the
        big one; heads of files gone or changed stay until they are a fifth of the kept ones."""
        new = {key: head for key, head in self.seen.items() if key not in self.known}
        stale = len(self.known) - (len(self.seen) - len(new))
        few = max(64, len(self.seen) // 20)
        if stale <= len(self.seen) // 5:
            if not new:
                return
            if len(self.added) + len(new) <= few:
                write_framed(self.added_file, _MAGIC, _pickled({**self.added, **new}))
                return
        if write_framed(self.file, _MAGIC, _pickled(self.seen)):
            self.added_file.unlink(missing_ok=True)

def _pickled(heads: dict) -> bytes:
    return pickle.dumps(heads, protocol=pickle.HIGHEST_PROTOCOL)
