"""What the overview keeps between builds: each row's figure on a column's measure and its
per-query scores as a vector (a rebuild loads the records of new rows only), the
aggregate ranks of the last build by a digest of their inputs (a rebuild whose columns did
not change draws no resample), and the first page's overview sections as the last build
rendered them, by a digest of every board's digest and of the declared benchmarks (a build
whose boards are all unchanged renders none of the overview's thousands of rows again).

Keyed by the row's record-cache entry name (the results file's state and the validating
code: a changed file is another name), its key (its identity, which names its label) and the
measure's label; one framed, checksummed file
per (board, measure) under ``$STATBENCH_CACHE/leaderboard-overview`` holding the rows of the
last build (:mod:`statbench.storage.cache_files`: never trusted, a damaged file is rebuilt).
A row without an entry name (a record not read through the record cache) is computed, not kept.
"""

from __future__ import annotations

import hashlib
import json
import pickle

import numpy as np

from statbench.leaderboard.caches.incremental import code_digest, task_declaration
from statbench.leaderboard.ranking.board_scores import scored_queries, sorted_order
from statbench.registry.plugins import get_registry
from statbench.storage.cache_files import keyed_cache_file, read_framed, read_pickled_dict, write_framed

_MAGIC = b"statbench-overview-columns 3\n"


class ColumnCache:
    """One column's rows: entry name -> (figure, sorted query ids, scores in that order, label)."""

    def __init__(self, board: str, measure: str):
        self.file = keyed_cache_file("leaderboard-overview", board, measure)
        self.measure = measure
        self.old = read_pickled_dict(_MAGIC, self.file)
        self.new: dict = {}
        self._qids: dict = {}  #: one tuple per query set: pickled once, however many rows share it
        self._orders: dict = {}  #: a table's query ids (scored) -> (them sorted, where each comes from)

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
            qids, values = self._scores(row)
            found = (None if aggregate is None else aggregate.mean, qids, values, label(row))
        if name:
            self.new[name] = found
        return found

    def _scores(self, row) -> tuple[tuple[str, ...], np.ndarray]:
        """The row's query ids with a score on the measure, sorted, and its scores in that order
        (:func:`~statbench.leaderboard.ranking.board_scores.scored_queries`: from its table's
        column when it has one, no dict of 1,543 queries built per row)."""
        found = scored_queries(row, self.measure)
        if found is None:
            return (), np.array([], dtype=float)
        ids, values = found
        if ids not in self._orders:  # one sort per query order, however many rows share it
            qids, where = sorted_order(ids)
            self._orders[ids] = (self._qids.setdefault(qids, qids), where)
        qids, where = self._orders[ids]
        return qids, values[where]

    def save(self) -> None:
        """Keep this build's rows (a write that fails costs the next build the loading)."""
        if self.new and self.new.keys() != self.old.keys():
            write_framed(self.file, _MAGIC, pickle.dumps(self.new, protocol=pickle.HIGHEST_PROTOCOL))


_RANKS_MAGIC = b"statbench-overview-ranks 2\n"


def task_digest(name: str, systems, scores) -> str:
    """What a task's ranks are drawn from: its name, its systems and their scores (the matrix's bytes)."""
    matrix = np.ascontiguousarray(scores, dtype=float)
    digest = hashlib.sha256(f"{name}\0{len(systems)}\0{matrix.shape}\0".encode())
    digest.update("\0".join(systems).encode())
    digest.update(matrix.tobytes())
    return digest.hexdigest()


class TaskDigests:
    """Each task's :func:`task_digest`, taken once per build whatever number of task sets (all
    tasks, each language's) holds it: a STARD matrix of 3,000 rows is 40 MB to hash."""

    def __init__(self):
        self._made: dict[int, tuple[object, str]] = {}

    def of(self, name: str, task) -> str:
        found = self._made.get(id(task))
        if found is None or found[0] is not task:
            found = self._made[id(task)] = (task, task_digest(name, task.systems, task.scores))
        return found[1]


def ranks_digest(tasks: dict, resamples: int, digests: TaskDigests | None = None) -> str:
    """What a set of aggregate ranks is computed from: each task's :func:`task_digest`, the
    resamples, and the code that computes them."""
    digests = digests or TaskDigests()
    digest = hashlib.sha256(f"{code_digest()}\0{resamples}\0".encode())
    for name in sorted(tasks):
        digest.update(f"{name}\0{digests.of(name, tasks[name])}\0".encode())
    return digest.hexdigest()


class RankCache:
    """A benchmark's aggregate ranks of the last build, per task set (digest -> ranks): a
    rebuild whose columns did not change draws no resample."""

    def __init__(self, benchmark_id: str):
        self.file = keyed_cache_file("leaderboard-overview", benchmark_id, prefix="ranks-")
        self.old = read_pickled_dict(_RANKS_MAGIC, self.file)
        self.new: dict = {}

    def ranks(self, tasks: dict, resamples: int, compute, digests: TaskDigests | None = None) -> dict:
        """``compute()``'s ranks for ``tasks``, or those kept for the same inputs."""
        digest = ranks_digest(tasks, resamples, digests)
        found = self.old.get(digest)
        self.new[digest] = found if isinstance(found, dict) else compute()
        return self.new[digest]

    def save(self) -> None:
        if self.new.keys() != self.old.keys():
            write_framed(self.file, _RANKS_MAGIC, pickle.dumps(self.new, protocol=pickle.HIGHEST_PROTOCOL))


_SAMPLES_MAGIC = b"statbench-overview-samples 1\n"


class SamplesCache:
    """Each task's resampled Borda points and ranks of the last build
    (:func:`statbench.leaderboard.ranking.aggregate.task_samples`), one file per (benchmark, task)
    under ``$STATBENCH_CACHE/leaderboard-overview-samples``, by a digest of all they are drawn from
    (the task's systems and scores, the resamples, the task's seed, the chunk, the code): when
    one column changes, the others draw no resample. Never trusted: a file that does not verify,
    or an entry of another shape or with a value out of range, is drawn again and replaced."""

    def __init__(self, benchmark_id: str, digests: TaskDigests | None = None):
        self.benchmark = benchmark_id
        self.digests = digests or TaskDigests()
        self.made: dict[str, tuple] = {}  #: digest -> samples, made or read in this build
        self.kept: dict[str, dict] = {}  #: task -> its entries this build made or read (what its file keeps)

    def samples(self, name: str, task, resamples: int, seed, chunk: int, compute) -> tuple:
        """``compute()``'s (points, ranks) of task ``name`` (its :class:`TaskScores`), or those kept."""
        key = hashlib.sha256(f"{code_digest()}\0{resamples}\0{seed!r}\0{chunk}\0{self.digests.of(name, task)}".encode()
                             ).hexdigest()
        if key in self.made:
            return self.made[key]
        file = keyed_cache_file("leaderboard-overview-samples", self.benchmark, name)
        found = read_pickled_dict(_SAMPLES_MAGIC, file).get(key)
        kept = self.kept.setdefault(name, {})
        if not _usable_samples(found, resamples, len(task.systems)):
            found = kept[key] = compute()
            write_framed(file, _SAMPLES_MAGIC, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
        else:
            kept[key] = found
        self.made[key] = found
        return found


def _usable_samples(found, resamples: int, systems: int) -> bool:
    """Whether a kept entry is what ``task_samples`` gives for ``systems`` systems: float points in
    [0, systems - 1] and integer ranks in [1, systems], both resamples x systems."""
    if not (isinstance(found, tuple) and len(found) == 2
            and all(isinstance(a, np.ndarray) and a.shape == (resamples, systems) for a in found)):
        return False
    points, ranks = found
    if points.dtype != np.float64 or ranks.dtype.kind != "i" or points.size == 0:
        return False
    return bool(np.isfinite(points).all() and points.min() >= 0 and points.max() <= systems - 1
                and ranks.min() >= 1 and ranks.max() <= systems)


_SECTIONS_MAGIC = b"statbench-overview-sections 1\n"


def sections_digest(board_digests: dict[str, str]) -> str:
    """What the overview sections are made from: every board, in the boards' order, by its digest
    (:func:`statbench.leaderboard.caches.incremental.board_digest`: the site's code, its rows'
    files, the navigation), and every declared benchmark with the declarations of its tasks (a
    task no board has still names a column)."""
    registry = get_registry()
    digest = hashlib.sha256(f"{code_digest()}\0".encode())
    for bench_id in sorted(registry.benchmarks):
        bench = registry.benchmarks[bench_id].cls
        digest.update(f"benchmark\0{bench_id}\0{bench!r}\0".encode())
        for entry in bench.tasks:
            digest.update(f"{task_declaration(entry.task)}\0".encode())
    for name, board in board_digests.items():
        digest.update(f"board\0{name}\0{board}\0".encode())
    return digest.hexdigest()


class SectionsCache:
    """The overview sections of the last build (``index_page.overview_sections``: the HTML and the
    ids of the benchmarks shown) and the digest of what they were made from."""

    def __init__(self):
        self.file = keyed_cache_file("leaderboard-overview", "sections", prefix="sections-")

    def get(self, digest: str) -> tuple[str, list[str]] | None:
        """The sections made from the inputs ``digest`` names, or None (none kept for them, or a
        file that does not verify or does not hold sections)."""
        found = read_framed(_SECTIONS_MAGIC, self.file)
        if found is None or not found[1].startswith(b'{"digest": "' + digest.encode("ascii") + b'"'):
            return None  # made from other inputs: not parsed (the sections are megabytes at scale)
        try:
            kept = json.loads(found[1])
        except ValueError:
            return None
        if not (isinstance(kept, dict) and kept.get("digest") == digest and isinstance(kept.get("html"), str)
                and isinstance(kept.get("benchmarks"), list) and all(isinstance(b, str) for b in kept["benchmarks"])):
            return None
        return kept["html"], kept["benchmarks"]

    def put(self, digest: str, sections: tuple[str, list[str]]) -> None:
        """Keep the sections made from ``digest`` (a write that fails costs the next build the rendering)."""
        html, benchmarks = sections
        payload = json.dumps({"digest": digest, "html": html, "benchmarks": list(benchmarks)})  # ASCII: any text
        write_framed(self.file, _SECTIONS_MAGIC, payload.encode("ascii"))
