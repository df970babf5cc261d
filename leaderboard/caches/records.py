"""Validated results records kept between builds, so that a rebuild does not parse and check
again a results file it accepted before (reading and validating every file was ~95% of a
rebuild in which nothing changed: bench/results/leaderboard_scale.md).

An entry is keyed by the file's absolute path and the sha256 of its content (found again by
the file's stat only where that provably identifies the content:
:mod:`statbench.storage.filedigests`; a file changed keeping its size and times is hashed, not
trusted), and the version of the code that validated it (statbench's version, the results
type and schema, the publishability checks).
Only records that passed every check are kept; a broken file is read, and reported, each time.

An entry is two files: the record *without* its per-query scores (``NAME.pickle``: what a
board's table, charts and digests need; most of a STARD record is its per-query scores), and
the per-query scores (``NAME.queries.pickle``), read only when a board's significance tests
need them (:class:`Queries`). Each file holds the sha256 of its payload and is verified on
read (a per-query file read again by the same process is hashed again unless its stat proves
it the bytes hashed: :func:`_verified_payload`); the record names the sha256 of its per-query
file, so the two cannot be mixed with another entry's. An entry that does not verify is
ignored (and replaced), never trusted; a per-query file that does not verify when it is
needed is read again from the results file (if that file is still in the state the entry was
made from; else the build stops: one line). Entries live under
``$STATBENCH_CACHE/leaderboard-records/``; writes are atomic (a temporary file renamed)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import operator
import os
import pickle
import stat
import time
from pathlib import Path

from statbench import __version__, results, schemas, scoring
from statbench.errors import DataFormatError, StatbenchError
from statbench.results.record import Results, read_results
from statbench.storage.cache_files import read_framed, unframed, write_framed
from statbench.storage.filedigests import FileDigests, file_digests, keepable
from statbench.storage.paths import cache_root

_MAGIC = b"statbench-record 2\n"
_QUERIES_MAGIC = b"statbench-queries 1\n"


@functools.cache
def _code_version() -> str:
    """statbench's version and every file of the code that reads and checks a results file
    (the results record, its schema, the scoring checks: by name and content)."""

    digest = hashlib.sha256(__version__.encode())
    for package in (results, schemas, scoring):
        for root in map(Path, package.__path__):
            for path in code_files(root):
                digest.update(f"{package.__name__}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()

class LazyQueries(dict):
    """The per-query scores of a record from the cache, read from their file the first time
    they are used (as a dict: any use reads them, nothing ever sees an empty table);
    :meth:`query_scores` reads one measure from the columns without building the dict."""

    def __init__(self, queries: Queries | None = None):
        super().__init__()
        self._queries, self._filled = queries, False

    def _fill(self):
        if not self._filled:
            if self._queries is None:
                raise StatbenchError("statbench bug: the per-query scores of a cached record have no file")
            dict.update(self, self._queries.load().as_dict())
            self._filled = True
        return self

    @property
    def sha256(self) -> str:
        return self._queries.sha256

    def query_scores(self, label: str) -> dict[str, float]:
        if self._filled:
            return {qid: scores[label] for qid, scores in dict.items(self) if label in scores}
        return self._queries.load().query_scores(label)

    def table(self) -> QueryTable | None:
        """The scores as columns, read from their file (None once they were read as a dict)."""
        return None if self._filled else self._queries.load()

    def __reduce__(self):  # the scores themselves are in their own file: never pickled with the record
        return LazyQueries, ()

    def __repr__(self) -> str:
        return dict.__repr__(self._fill())

def _filling(name):
    method = getattr(dict, name)

    def filled(self, *args, **kwargs):
        return method(self._fill(), *args, **kwargs)

    filled.__name__ = name
    return filled

for _name in ("__getitem__", "__iter__", "__len__", "__contains__", "__eq__", "__ne__", "__or__", "items", "keys",
              "values", "get", "copy"):
    setattr(LazyQueries, _name, _filling(_name))
LazyQueries.__hash__ = None


class RecordCache:
    """Validated :class:`~statbench.results.record.Results` by results file (see the module)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.hits = 0
        self.misses = 0
        #: the content digests of the files read (:mod:`statbench.storage.filedigests`)
        self.digests = file_digests("leaderboard")

    @classmethod
    def default(cls) -> RecordCache:
        return cls(cache_root() / "leaderboard-records")

    def entry(self, path: Path) -> RecordEntry:
        """The entry of this file as it is now (its state taken before it is read)."""
        return RecordEntry(self, Path(path))

    def read_entry(self, path: Path) -> tuple[RecordEntry, bytes | None]:
        """The entry of this file and the bytes it holds, read once (a cold build's worker then
        parses those bytes: the file is not read again to be hashed, nor hashed from another
        read than the one validated). Its digest is found by its stat when the index knows it,
        else taken of the bytes read (and kept by the index when :func:`keepable`). ``None``
        for the bytes when it cannot be read as a regular file (the entry says so by its state)."""
        path = Path(path)
        if self.digests.known(path) is not None:  # the index knows it: not hashed again
            return self.entry(path), _read_regular(path)[0]
        raw, before, after, started = _read_regular(path)
        if raw is None:
            return self.entry(path), None
        digest = hashlib.sha256(raw).hexdigest()
        key = keepable(path, before, after, started)
        if key is not None:
            self.digests.adopt(key, digest)
        return RecordEntry(self, path, (os.path.abspath(path), digest)), raw

    def known_entry(self, path: Path) -> RecordEntry | None:
        """The entry of this file when its content is known without reading it (its stat
        finds its digest: :mod:`statbench.storage.filedigests`), else None: the file is to be
        read, and hashed by whoever reads it (a cold build's workers)."""
        found = self.digests.known(path)
        return None if found is None else RecordEntry(self, Path(path), (os.path.abspath(path), found[0]))

def _read_regular(path: Path) -> tuple:
    """(bytes, stat before, stat after, when the read started) of a regular file (symbolic
    links followed, as :class:`FileDigests` does), (None, ...) when it is not one or cannot be read."""
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            return None, None, None, None
        started = time.time_ns()
        raw = Path(path).read_bytes()
        return raw, before, os.stat(path), started
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None, None, None, None


def file_state(path: Path, digests: FileDigests | None = None) -> tuple | None:
    """What says a file is the one validated: where it is (its absolute path: no symbolic
    link is resolved, which cost a stat per folder of the path) and its content's sha256
    (``digests``: the build's index, :meth:`RecordCache.digests`)."""
    digest = (digests or file_digests("leaderboard")).sha256(path)
    return None if digest is None else (os.path.abspath(path), digest)

class QueryTable:
    """Per-query scores as columns (query ids, labels, a float64 matrix; NaN where a query
    has no score for a measure: a valid record never holds NaN): loaded in ~0.1 ms where the
    same scores as a dict of dicts take ~2 ms to unpickle (a STARD record: 1,543 x 10)."""

    def __init__(self, qids: list[str], labels: list[str], values):
        self.qids, self.labels, self.values = qids, labels, values

    @classmethod
    def of(cls, per_query: dict) -> QueryTable:
        import math

        import numpy as np

        scores_of = list(per_query.values())
        order = list(scores_of[0]) if scores_of else []
        if order and all(map(len(order).__eq__, map(len, scores_of))):
            # the usual record: every query holds the first one's measures (as many, each found:
            # the same set), in the first query's order as the loop below gives them
            take = operator.itemgetter(*order)
            try:
                rows = [take(scores) for scores in scores_of]
            except KeyError:  # another measure somewhere: the general way below
                pass
            else:
                values = np.array(rows, dtype=float).reshape(len(rows), len(order))
                return cls(list(per_query), order, values)
        labels: dict[str, None] = {}
        for scores in per_query.values():
            labels.update(dict.fromkeys(scores))
        order = list(labels)
        n = len(order)
        # most queries hold every measure in one order: their values as they are
        rows = [list(scores.values()) if len(scores) == n and list(scores) == order
                else [scores.get(label, math.nan) for label in order] for scores in per_query.values()]
        values = np.array(rows, dtype=float).reshape(len(rows), n)
        return cls(list(per_query), order, values)

    @classmethod
    def of_columns(cls, qids: list[str], columns: dict[str, tuple]) -> QueryTable:
        """The table of a record whose every query holds the same measures, from its columns
        (:func:`statbench.scoring.publishable.query_columns`, in the first query's order):
        the values, and so the bytes kept, that :meth:`of` gives for it."""
        from itertools import chain

        import numpy as np

        count = len(columns) * len(qids)  # fromiter: ~2x faster than np.array over tuples, the same float64s
        values = np.fromiter(chain.from_iterable(columns.values()), dtype=float, count=count)
        return cls(list(qids), list(columns), values.reshape(len(columns), len(qids)).T)

    def to_bytes(self) -> bytes:
        return pickle.dumps((self.qids, self.labels, self.values.shape, self.values.tobytes()),
                            protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def from_bytes(cls, payload: bytes) -> QueryTable:
        import numpy as np

        qids, labels, shape, raw = pickle.loads(payload)
        values = np.frombuffer(raw, dtype=np.float64).reshape(shape)
        if len(qids) != shape[0] or len(labels) != shape[1]:
            raise ValueError("inconsistent per-query table")
        return cls(qids, labels, values)

    def query_scores(self, label: str) -> dict[str, float]:
        """query id -> score on ``label`` (queries without that score left out), as
        :meth:`~statbench.results.record.RunScores.query_scores` gives it."""
        import math

        if label not in self.labels:
            return {}
        column = self.values[:, self.labels.index(label)].tolist()
        return {qid: value for qid, value in zip(self.qids, column) if not math.isnan(value)}

    def as_dict(self) -> dict[str, dict[str, float]]:
        """The per-query scores as a results record holds them."""
        import math

        return {qid: {label: value for label, value in zip(self.labels, row) if not math.isnan(value)}
                for qid, row in zip(self.qids, self.values.tolist())}

#: per-query files whose payload this process hashed, by the key of their stat (see
#: :func:`_verified_payload`) -> that sha256
_PROVEN: dict[tuple, str] = {}


def _verified_payload(file: Path | None, sha256: str) -> bytes | None:
    """The payload of a per-query file when it is the one ``sha256`` names, else None (absent,
    damaged, another entry's). A build reads each file in several phases (tests, ranks, the
    overview, the explorer): it is hashed the first time, and read again without hashing only
    when its stat provably identifies those bytes (:func:`~statbench.storage.filedigests.keepable`:
    the same device, inode, size and times, which were older than the hashing by more than a
    tick of any clock; the cache replaces a file, never writes into it, and any write changes
    ``ctime``), as statbench finds any file's digest by its stat."""
    try:
        with open(file, "rb") as handle:
            before, started = os.fstat(handle.fileno()), time.time_ns()
            data = handle.read()
            after = os.fstat(handle.fileno())
    except (OSError, TypeError, ValueError):  # TypeError: no file (an entry without a name)
        return None
    key = keepable(file, before, after, started)
    start = len(_QUERIES_MAGIC) + 65  # the magic line, the sha256's hex digits and a newline
    if (key is not None and _PROVEN.get(key) == sha256 and data.startswith(_QUERIES_MAGIC)
            and data[len(_QUERIES_MAGIC):start] == f"{sha256}\n".encode()):
        return data[start:]
    found = unframed(_QUERIES_MAGIC, data)
    if found is None or found[0] != sha256:
        return None
    if key is not None:
        _PROVEN[key] = sha256
    return found[1]


class Queries:
    """The per-query scores of one cached record, read on demand: ``sha256`` names them
    (what the significance cache keys a comparison by), :meth:`load` returns them verified."""

    def __init__(self, entry: RecordEntry, sha256: str):
        self.entry, self.sha256 = entry, sha256

    def load(self) -> QueryTable:
        """The scores, verified (read again from the results file when their file is damaged)."""
        payload = _verified_payload(self.entry.queries_file, self.sha256)
        if payload is not None:
            try:
                return QueryTable.from_bytes(payload)
            except Exception:  # noqa: BLE001 (a file that does not load is read again from the results)
                pass
        return self._from_results()

    def _from_results(self) -> dict:
        """The per-query file is gone or damaged: the results file again, if unchanged."""

        path = self.entry.path
        changed = StatbenchError(f"{path} changed while the leaderboard was being built; build again")
        if file_state(path, self.entry.cache.digests) != self.entry.state:
            raise changed
        try:
            record = Results.from_json(read_results(path))
        except (DataFormatError, ValueError, TypeError):
            raise changed from None
        if file_state(path, self.entry.cache.digests) != self.entry.state:
            raise changed
        table = QueryTable.of(record.per_query)
        payload = table.to_bytes()
        if hashlib.sha256(payload).hexdigest() == self.sha256:
            write_framed(self.entry.queries_file, _QUERIES_MAGIC, payload)
        return table

class RecordEntry:
    """One results file's entry: :meth:`get` the record validated from the file in the state
    it was in when the entry was made, :meth:`put` one (kept only if the file is still in that
    state, so a file changed while it was read is never cached under its new state)."""

    def __init__(self, cache: RecordCache, path: Path, state: tuple | None = None):
        self.cache, self.path = cache, path
        self.state = file_state(path, cache.digests) if state is None else state
        self.name = None
        if self.state is not None:
            self.name = hashlib.sha256("\0".join(map(str, (*self.state, _code_version()))).encode()).hexdigest()

    # the entry's files, named when used (a row placed from its head never uses them)
    @property
    def file(self) -> Path | None:
        return None if self.name is None else self.cache.root / self.name[:2] / f"{self.name}.pickle"

    @property
    def queries_file(self) -> Path | None:
        return None if self.name is None else self.cache.root / self.name[:2] / f"{self.name}.queries.pickle"

    def get(self, count: bool = True):
        """The record (its per-query scores read when used: :class:`LazyQueries`), or None (no
        entry, or one that does not verify). ``count``: a hit or miss of the build's reading
        (not when the record of a row already placed from its head is loaded)."""
        found = read_framed(_MAGIC, self.file)
        record = None
        if found is not None:
            try:
                results, queries_sha256 = pickle.loads(found[1])
                record = self.attach(results, queries_sha256)
            except Exception:  # noqa: BLE001 (an entry that does not load is not used)
                record = None
        if count:
            if record is None:
                self.cache.misses += 1
            else:
                self.cache.hits += 1
        return record

    def attach(self, light, queries_sha256: str):
        """A record kept without its per-query scores, with them to be read from this entry."""
        return dataclasses.replace(light, per_query=LazyQueries(Queries(self, queries_sha256)))

    def put(self, record, columns: dict | None = None) -> tuple | None:
        """Keep a record that passed every check; (record without its per-query scores, their
        sha256) as kept (see :meth:`attach`), or None when it could not be kept (a file changed
        since its state was taken, a cache that cannot be written: no error). ``columns``: its
        per-query scores as the checks took them (``publishable.query_columns``), if they did."""
        if self.file is None or file_state(self.path, self.cache.digests) != self.state:
            return None
        table = (QueryTable.of(record.per_query) if columns is None
                 else QueryTable.of_columns(list(record.per_query), columns))
        queries = table.to_bytes()
        sha256 = hashlib.sha256(queries).hexdigest()
        light = dataclasses.replace(record, per_query=LazyQueries())
        if not write_framed(self.queries_file, _QUERIES_MAGIC, queries):
            return None
        payload = pickle.dumps((light, sha256), protocol=pickle.HIGHEST_PROTOCOL)
        if not write_framed(self.file, _MAGIC, payload):
            return None
        return light, sha256

def code_files(root: Path) -> list[Path]:
    """The files below a package folder that make its code (its sub-packages included,
    ``__pycache__`` and hidden entries left out), sorted."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        found += [Path(folder) / f for f in files if f.endswith((".py", ".html", ".css", ".js", ".json"))
                  and not f.startswith(".")]
    return sorted(found)
