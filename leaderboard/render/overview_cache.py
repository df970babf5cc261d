"""What the overview keeps between builds: each row's figure on a column's measure and its
per-query scores as a vector (a rebuild loads the records of new rows only), and the
aggregate ranks of the last build by a digest of their inputs (a rebuild whose columns did
not change draws no resample).

Keyed by the row's record-cache entry name (the results file's state and the validating
code: a changed file is another name), its key (its identity, which names its label) and the
measure's label; one framed, checksummed file
per (board, measure) under ``$STATBENCH_CACHE/leaderboard-overview`` holding the rows of the
last build (:mod:`statbench.storage.cache_files`: never trusted, a damaged file is rebuilt).
A row without an entry name (a record not read through the record cache) is computed, not kept.
"""

from __future__ import annotations

import hashlib
import pickle

import numpy as np

from statbench.leaderboard.caches.incremental import code_digest
from statbench.storage.cache_files import keyed_cache_file, read_pickled_dict, write_framed

_MAGIC = b"statbench-overview-columns 3\n"


class ColumnCache:
    """One column's rows: entry name -> (figure, sorted query ids, scores in that order, label)."""

    def __init__(self, board: str, measure: str):
        self.file = keyed_cache_file("leaderboard-overview", board, measure)
        self.measure = measure
        self.old = read_pickled_dict(_MAGIC, self.file)
        self.new: dict = {}
        self._qids: dict = {}  #: one tuple per query set: pickled once, however many rows share it

    def column(self, row, label) -> tuple[float | None, tuple[str, ...], np.ndarray, str]:
        """(the row's figure, its query ids sorted, its scores on them) on the measure, and
        ``label(row)`` (what the overview calls the row)."""
        entry = getattr(row, "entry_name", None)
        # the record's state names its figure and scores; the label also reads the row's identity,
        # which for a result that recorded no defaults takes the installed plugin's (row.key)
        name = f"{entry}\0{row.key}" if entry else None
        found = self.old.get(name) if name else None
        if found is None:
            aggregate = row.results.aggregate.get(self.measure)
            scores = row.query_scores(self.measure)
            qids = tuple(sorted(scores))
            qids = self._qids.setdefault(qids, qids)
            found = (None if aggregate is None else aggregate.mean, qids,
                     np.array([scores[q] for q in qids], dtype=float), label(row))
        if name:
            self.new[name] = found
        return found

    def save(self) -> None:
        """Keep this build's rows (a write that fails costs the next build the loading)."""
        if self.new and self.new.keys() != self.old.keys():
            write_framed(self.file, _MAGIC, pickle.dumps(self.new, protocol=pickle.HIGHEST_PROTOCOL))


_RANKS_MAGIC = b"statbench-overview-ranks 1\n"


def ranks_digest(tasks: dict, resamples: int) -> str:
    """What a set of aggregate ranks is computed from: each task's systems and their scores
    (the matrix's bytes), the resamples, and the code that computes them."""
    digest = hashlib.sha256(f"{code_digest()}\0{resamples}\0".encode())
    for name in sorted(tasks):
        matrix = np.ascontiguousarray(tasks[name].scores, dtype=float)
        digest.update(f"{name}\0{len(tasks[name].systems)}\0{matrix.shape}\0".encode())
        digest.update("\0".join(tasks[name].systems).encode())
        digest.update(matrix.tobytes())
    return digest.hexdigest()


class RankCache:
    """A benchmark's aggregate ranks of the last build, per task set (digest -> ranks): a
    rebuild whose columns did not change draws no resample."""

    def __init__(self, benchmark_id: str):
        self.file = keyed_cache_file("leaderboard-overview", benchmark_id, prefix="ranks-")
        self.old = read_pickled_dict(_RANKS_MAGIC, self.file)
        self.new: dict = {}

    def ranks(self, tasks: dict, resamples: int, compute) -> dict:
        """``compute()``'s ranks for ``tasks``, or those kept for the same inputs."""
        digest = ranks_digest(tasks, resamples)
        found = self.old.get(digest)
        self.new[digest] = found if isinstance(found, dict) else compute()
        return self.new[digest]

    def save(self) -> None:
        if self.new.keys() != self.old.keys():
            write_framed(self.file, _RANKS_MAGIC, pickle.dumps(self.new, protocol=pickle.HIGHEST_PROTOCOL))
