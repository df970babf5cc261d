"""Each row's per-query scores on a board's ranked measure, kept between builds: a board's
ranks depend on every row's scores, and reading them meant a record-cache file per row (a
3,333-row board: 3,333 tables read for 10 new rows). Keyed by what names the row's per-query
scores (``Row.queries_sha256``, a digest of their content) in one framed, checksummed file per
(board, measure) under ``$STATBENCH_CACHE/leaderboard-rank-columns``
(:mod:`statbench.storage.cache_files`: never trusted; an entry of the wrong shape is read
again from the row). A build keeps the entries it used."""

from __future__ import annotations

import pickle

import numpy as np

from statbench.leaderboard.ranking.board_scores import scored_queries
from statbench.storage.cache_files import keyed_cache_file, read_pickled_dict, write_framed

_MAGIC = b"statbench-rank-columns 1\n"
_NONE = "none"  #: kept for a row with no per-query score on the measure


def _usable(found, checked: set[int]) -> bool:
    """A kept entry as :func:`scored_queries` gives it: (query ids, finite-or-nan scores of as many).
    ``checked``: the ids of the query-id tuples found to be all text (the rows of a board share one
    tuple in the file: each is checked once)."""
    if isinstance(found, str):
        return found == _NONE
    if not (isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], tuple)
            and isinstance(found[1], np.ndarray) and found[1].dtype == float and found[1].shape == (len(found[0]),)):
        return False
    if id(found[0]) not in checked:
        if not all(isinstance(q, str) for q in found[0]):
            return False
        checked.add(id(found[0]))
    return True


class RankColumns:
    """One board's rows' scores on one measure, by their per-query scores' digest."""

    def __init__(self, board: str, measure: str):
        self.file = keyed_cache_file("leaderboard-rank-columns", board, measure)
        self.measure = measure
        self.old = read_pickled_dict(_MAGIC, self.file)
        self.new: dict = {}
        self.read = 0  #: rows whose scores were read from their record (not kept)
        self._checked: set[int] = set()  #: ids of the kept query-id tuples checked (see _usable)
        self._qids: dict = {}  #: one tuple per query order: kept once in the file, however many rows share it

    def scored(self, row) -> tuple[tuple[str, ...], np.ndarray] | None:
        """(query ids, scores) of ``row`` on the measure, as :func:`scored_queries` gives them."""
        digest = row.queries_sha256
        found = self.old.get(digest)
        if found is None or not _usable(found, self._checked):
            found = scored_queries(row, self.measure)
            self.read += 1
            if found is not None:
                qids = tuple(found[0])
                found = (self._qids.setdefault(qids, qids), np.asarray(found[1], dtype=float))
            else:
                found = _NONE
        elif found != _NONE and self._qids.setdefault(found[0], found[0]) is not found[0]:
            found = (self._qids[found[0]], found[1])  # one tuple for the rows of one query order
        self.new[digest] = found
        return None if found == _NONE else found

    def save(self) -> None:
        """Keep the entries this build used (a write that fails costs the next build the reading)."""
        if self.new.keys() != self.old.keys():
            write_framed(self.file, _MAGIC, pickle.dumps(self.new, protocol=pickle.HIGHEST_PROTOCOL))
