"""Find results JSON files, validate each, and turn them into leaderboard rows.

A file that fails validation is reported (file and reason) and skipped whole: a row is
rendered from a fully valid file or not at all. Validation is strict: the JSON itself
(no NaN/Infinity, no number that overflows, no duplicate key, no unpaired surrogate),
the results schema, and what makes a record publishable (:mod:`statbench.scoring.publishable`:
the consistency between measures, splits and aggregate, every score finite and within
[0, 1] for the measures known to be bounded, figures that agree). Several files for
the same row (same model, effective parameters, reranker and pool, on the same board: see
:mod:`.identity`) keep the newest by ``created`` (compared as times, not text); the others
are noted as superseded. When no time decides (the same time, a time that does not parse)
the first by path is kept and the other is warned about (noted when its figures are the
same). A
JSON file that is not a results file at all (a pool sidecar, a summary) is skipped
quietly and counted; only broken results are warned about."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from statbench.errors import DataFormatError, StatbenchError
from statbench.leaderboard.identity import budget, canonical, identity  # noqa: F401 (identity: part of this module's interface)
from statbench.leaderboard.submission import RESULTS_DIR, RESULTS_FILE, repository_holding
from statbench.results.record import ModelRecord, Results, as_scores, parse_strict, read_results  # noqa: F401
from statbench.scoring.publishable import (  # noqa: F401 (the checks live in the core; named here too)
    agreement_problems,
    check_results,
    consistency_problems,
    is_bounded,
    join_problems,
    score_problems,
)
from statbench.storage.filedigests import file_digests

if TYPE_CHECKING:
    from statbench.leaderboard.records import RecordCache
    from statbench.leaderboard.rowheads import Heads
    from statbench.leaderboard.verify import Verification, Verifier


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
        came from the record cache: :class:`~statbench.leaderboard.records.LazyQueries`)."""
        per_query = self.results.per_query
        if hasattr(per_query, "query_scores"):
            return per_query.query_scores(label)
        return self.results.query_scores(label)

    def query_table(self):
        """The per-query scores as columns (:class:`~statbench.leaderboard.records.QueryTable`)
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
        from statbench.leaderboard.rowheads import load_record

        self.results = record = load_record(self._entry)
        return record

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
    it (:class:`~statbench.leaderboard.records.LazyQueries`), else that of their table."""
    per_query = record.per_query
    if hasattr(per_query, "sha256"):
        return per_query.sha256
    from statbench.leaderboard.records import QueryTable

    return hashlib.sha256(QueryTable.of(per_query).to_bytes()).hexdigest()


def row_head(record: Results, queries_sha256: str | None = None):
    """The head of a record (:class:`~statbench.leaderboard.rowheads.RowHead`): what places
    its row, kept for the next build. ``queries_sha256``: that of its per-query scores, when
    known (kept in the record cache), else computed."""
    from statbench.leaderboard.rowheads import RowHead

    return RowHead(task=record.task, model=record.model, reranker=record.reranker, pool=record.pool,
                   pool_sha256=record.pool_sha256, splits=split_set(record), measures=measure_set(record),
                   run_path=record.run_file.path or None, created=record.created,
                   queries_sha256=queries_sha256 or queries_digest(record), run_sha256=record.run_file.sha256)


# --- collecting ------------------------------------------------------------------------------


def find_results(root: Path) -> list[Path]:
    """Every ``*.json`` file below ``root``, in a stable order (hidden folders skipped)."""
    import os

    root = Path(root)
    if not root.is_dir():
        raise StatbenchError(f"results folder {root} does not exist")
    found = []
    # scandir, not Path.rglob nor os.walk: the same files (links to folders not followed,
    # unreadable folders skipped, links to files taken), with the kind of each entry from
    # the folder's listing instead of a stat per file
    folders = [os.fspath(root)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith("."):
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            folders.append(entry.path)
                        elif name.endswith(".json") and entry.is_file():
                            found.append(Path(entry.path))
                    except OSError:
                        continue
        except OSError:
            continue
    return sorted(found)


def meant_for_repository(root: Path, paths: list[Path]) -> list[Path]:
    """Of ``paths`` (found below ``root``), the files a results repository holds that are not
    results: its marker, anything outside its ``results/`` folder, and any file of a
    submission folder (``results/TASK/LABEL/CONFIG/``) but its results.json (the model card,
    the source record, reproduction verdicts: what ``submit`` and the checks write). They are
    not read as results and not worth a note."""
    repository = repository_holding(root)
    if repository is None:
        return []
    meant = []
    for path in paths:
        try:
            parts = Path(path).absolute().relative_to(repository).parts
        except ValueError:
            continue
        if parts[0] != RESULTS_DIR or (len(parts) >= 5 and parts[4:] != (RESULTS_FILE,)):
            meant.append(path)
    return meant


def _splits_label(splits: tuple[tuple[str, int], ...], with_counts: bool) -> str:
    if with_counts:
        return ",".join(f"{name} ({n})" for name, n in splits)
    return ",".join(name for name, _ in splits)


def corpus_unit(task: str) -> str:
    """What the task calls its documents ("articles", "passages"): its declaration when
    installed, else "documents"."""
    from statbench.registry.plugins import get_registry

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


def is_results_shaped(obj) -> bool:
    """Whether a JSON value is meant as a results file (an object with a schema version,
    or with a task and a model): anything else (a pool sidecar, a summary of several runs)
    is not a result and is skipped quietly."""
    return isinstance(obj, dict) and ("schema_version" in obj or ("task" in obj and "model" in obj))


def _not_results(path: Path) -> bool:
    """A file that failed the results schema but is no results file at all (see
    :func:`is_results_shaped`); a file named ``results.json`` always counts as results."""
    if path.name == "results.json":
        return False
    try:
        return not is_results_shaped(json.loads(path.read_bytes()))
    except (OSError, ValueError, RecursionError):
        return False


def created_at(text):
    """``created`` as an aware time (a time without offset is UTC, as the schema says),
    None when it is not an ISO 8601 time: compared as text, ``12:00+02:00`` would be
    later than ``11:00+00:00``."""
    import datetime as _dt

    try:
        when = _dt.datetime.fromisoformat(str(text).strip())
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=_dt.timezone.utc)


def recorded_differences(kept: Row, dropped: Row) -> list[str]:
    """The parameters two results of one row record with other values (``k=2 shown, k=1
    skipped``): a third-party model whose default changed between versions, each run at its
    own recorded default, is one row by identity (:mod:`.identity`) but not one configuration."""
    out = []
    for part in ("model", "reranker"):
        a, b = getattr(kept, part), getattr(dropped, part)
        if a is None or b is None:
            continue
        for k in sorted(set(a.params) & set(b.params)):
            va, vb = canonical(a.params[k]), canonical(b.params[k])
            if json.dumps(va, sort_keys=True, default=str) != json.dumps(vb, sort_keys=True, default=str):
                out.append(f"{'reranker ' if part == 'reranker' else ''}{k}={json.dumps(va, default=str)} "
                           f"shown, {k}={json.dumps(vb, default=str)} skipped")
    return out


def _supersede(first: Row, second: Row) -> tuple[Row, Row, str | None]:
    """Of two results of one configuration on one board (``first`` comes first by path):
    (kept, dropped, None) when one is newer by ``created``, else the first by path is kept
    and the reason says why no time decided."""
    a, b = created_at(first.created), created_at(second.created)
    if a is not None and b is not None:
        if a != b:
            return (second, first, None) if b > a else (first, second, None)
        return first, second, f"both written at {first.created!r}; kept the first by path"
    bad = first.created if a is None else second.created
    return first, second, (f"created {bad!r} is not an ISO 8601 time, so which is newer cannot be told; "
                           "kept the first by path")


@dataclass
class Collected:
    """Rows per board and what the build has to say about the files it read."""

    boards: dict[str, list[Row]]
    problems: list[str]  #: broken results, each skipped (one line each): warnings
    notes: list[str] = field(default_factory=list)  #: superseded results, non-results skipped
    keys: dict[str, BoardKey] = field(default_factory=dict)  #: board name -> its key
    #: run files checked by the workers of a cold build (state key -> sha256: .runcopies.RunDigests)
    run_digests: dict[str, str] = field(default_factory=dict)

    def __iter__(self):  # ``boards, problems = collect(root)``
        return iter((self.boards, self.problems))


def _read_checked(path: Path, report: list[str], not_results: list[Path]) -> Results | None:
    """The record of a results file that passed every check, None (with its line in
    ``report``, or ``path`` in ``not_results``) otherwise."""
    try:
        results = read_results(path)
    except DataFormatError as exc:
        if "does not match the results schema" in str(exc) and _not_results(path):
            not_results.append(path)
        else:
            report.append(f"skipped {exc}")
        return None
    try:
        record = Results.from_json(results)
    except (ValueError, TypeError) as exc:  # a schema-valid file the type cannot hold: a statbench bug
        report.append(f"skipped {path}: {exc}")
        return None
    problems = check_results(record)
    if problems:
        report.append(f"skipped {path}: {join_problems(problems)}")
        return None
    return record


#: cache misses from which a build validates its files in worker processes (a cold build of
#: 10,000 results spent ~80 s of 141 s validating them in one process)
PARALLEL_MIN = 64


def _check_and_keep(path: Path, cache_root: Path):
    """In a worker: hash one file, and validate it and keep it in the record cache unless
    the cache holds it. What it found: ("cached", (state, the record's head, run, the
    file's digest for the parent's index or None)), ("worker record", (Results, run)) when
    it could not be kept, ("report", line), ("not results", None)."""
    from statbench.leaderboard.records import RecordCache

    records = RecordCache(cache_root)
    entry = records.entry(path)
    learnt = records.digests.known(path)  # kept by the hashing just done: the parent adopts it
    cached = entry.get(count=False)
    if cached is not None:
        return "cached", (entry.state, row_head(cached, queries_sha256=cached.per_query.sha256), None, learnt)
    report: list[str] = []
    record = _read_checked(path, report, [])
    if record is None:
        return ("report", report[0]) if report else ("not results", None)
    kept = entry.put(record)
    from statbench.leaderboard.runcopies import prefill

    run = prefill(path, record)
    if kept is None:
        return "worker record", (record, run)
    # the build places the row from its head and loads the record when it is used (in the
    # process, or the fork, that renders it): the parent never unpickles 10,000 records here
    return "cached", (entry.state, row_head(record, queries_sha256=kept[1]), run, learnt)


def _in_workers(misses: list[Path], records: RecordCache, workers: int) -> dict[Path, tuple]:
    """What :func:`_check_and_keep` found for each file, from worker processes; {} when none
    can be started (the files are then validated in this process)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            return dict(zip(misses, pool.map(_check_and_keep, misses, [records.root] * len(misses), chunksize=16)))
    except (OSError, NotImplementedError, BrokenProcessPool):
        return {}


def _read_all(paths: list[Path], records: RecordCache | None, report: list[str], not_results: list[Path],
              heads: Heads | None = None):
    """(path, record or (its head, its entry), (run file state key, sha256) or None) of every
    valid file, in the order of ``paths``; broken files go to ``report`` and non-results to
    ``not_results`` in that order too. A file whose head an earlier build kept (``heads``)
    is not read; files the record cache does not hold are validated in worker processes when
    there are many."""
    from statbench.leaderboard.records import RecordEntry

    found: dict[Path, tuple] = {}
    entries = {}
    misses = []
    unknown = []  # files whose content is not known by their stat: hashed by whoever reads them
    for path in paths:
        # the state taken before reading: the content's digest, when the file's stat finds it
        entry = entries[path] = records.known_entry(path) if records is not None else None
        if entry is None:
            (unknown if records is not None else misses).append(path)
            continue
        head = heads.get(entry) if heads is not None else None
        if head is not None:
            found[path] = ("head", (head, entry))
            continue
        cached = entry.get()
        if cached is None:
            misses.append(path)
        else:
            found[path] = ("hit", cached)
    from statbench.leaderboard.forkmap import processes

    workers = processes()
    if records is not None and len(misses) + len(unknown) >= PARALLEL_MIN and workers > 1:
        found.update(_in_workers(misses + unknown, records, workers))
    for path in unknown:
        if path not in found:  # few files, or no worker processes to be had: hashed here
            entry = entries[path] = records.entry(path)
            head = heads.get(entry) if heads is not None else None
            cached = None if head is not None else entry.get()
            if head is not None:
                found[path] = ("head", (head, entry))
            elif cached is not None:
                found[path] = ("hit", cached)
            else:
                misses.append(path)
    for path in misses:
        if path not in found:  # few files, or no worker processes to be had
            record = _read_checked(path, report_of := [], [])
            if record is None:
                found[path] = ("report", report_of[0]) if report_of else ("not results", None)
                continue
            if entries[path] is not None:
                entries[path].put(record)
            found[path] = ("record", record)  # in hand: its per-query scores need not be read again
    for path in paths:
        kind, value = found[path]
        if kind == "report":
            report.append(value)
            continue
        if kind == "not results":
            not_results.append(path)
            continue
        if kind == "head":
            yield path, value, None, value[1].name
            continue
        if kind == "cached":  # kept by a worker: placed from its head, its record loaded when used
            state, head, run, learnt = value
            if learnt is not None:
                records.digests.adopt(learnt[1], learnt[0])
            entry = RecordEntry(records, path, state)
            if heads is not None:
                heads.learn(entry, head)
            yield path, (head, entry), run, entry.name
            continue
        run = None
        if kind == "worker record":
            value, run = value
        if heads is not None and kind != "worker record":  # a worker record was not kept: no head either
            heads.learn(entries[path], row_head(value))
        kept = entries[path] is not None and kind != "worker record"  # a worker record was not kept
        yield path, value, run, entries[path].name if kept else None


def collect(root: Path, verify: Verifier | None = None, records: RecordCache | None = None) -> Collected:
    """Rows per board (sorted by identity), the problems to report (one line each) and the
    notes (superseded results, files that are not results).

    ``verify``: each valid row is verified (:mod:`.verify`) before any is chosen over
    another; a refused row is left out (its line is the verifier's to report, and it never
    hides another result of its configuration), an unverifiable one too unless the
    verifier allows unverified rows (then it is shown with its verification).

    A board is one :class:`BoardKey`: scores on other data, other queries, another task
    version or other measure definitions are not comparable, so they never share a table
    or a significance test (see :func:`board_names` for the names).

    ``records``: a :class:`~statbench.leaderboard.records.RecordCache` of the files validated
    by earlier builds (a file unchanged since is not parsed and checked again)."""
    report: list[str] = []
    notes: list[str] = []
    not_results: list[Path] = []
    chosen: dict[tuple, Row] = {}
    run_digests: dict[str, str] = {}
    heads = None
    if records is not None:
        from statbench.leaderboard.rowheads import Heads

        heads = Heads(records, root)
    paths = find_results(root)
    quiet = set(meant_for_repository(root, paths))
    paths = [path for path in paths if path not in quiet]
    for path, record, run, entry_name in _read_all(paths, records, report, not_results, heads):
        if run is not None:
            run_digests[run[0]] = run[1]
            if records is not None:  # a run file a worker hashed: known by its stat from now on
                records.digests.adopt(json.loads(run[0]), run[1])
        if isinstance(record, tuple):  # (head, entry): placed from its head, loaded when used
            head, entry = record
            ident = identity(head)
            row = HeadRow(key=row_key(ident), identity=ident, path=path, head=head, entry=entry)
        else:
            ident = identity(record)
            row = Row(key=row_key(ident), identity=ident, path=path, results=record, entry_name=entry_name)
        if verify is not None:
            row.verification = verification = verify.verify(row.results, path)
            if verification.status == "refused" or (verification.status == "unverifiable"
                                                    and not verify.allow_unverified):
                continue
        slot = (row.board, row.key)
        previous = chosen.get(slot)
        if previous is None:
            chosen[slot] = row
            continue
        kept, dropped, why = _supersede(previous, row)
        chosen[slot] = kept
        differ = recorded_differences(kept, dropped)
        if differ:  # one row by identity, yet the records ran other values: said, never "the same"
            report.append(f"skipped {dropped.path}: one row with {kept.path}, which is shown"
                          f"{'' if why is None else f' ({why})'}, since each ran these parameters at its recorded "
                          f"default, but the values differ: {'; '.join(differ)}")
        elif why is None:
            notes.append(f"skipped {dropped.path}: superseded by {kept.path} (same configuration, newer)")
        elif dropped.results.aggregate == kept.results.aggregate and why.startswith("both written"):
            notes.append(f"skipped {dropped.path}: the same configuration and figures as {kept.path} ({why})")
        else:
            report.append(f"skipped {dropped.path}: same configuration as {kept.path}, which is shown: {why}")
    if heads is not None:
        heads.save()
        file_digests("leaderboard").save()
    if not_results:
        shown = ", ".join(str(p.relative_to(root)) for p in not_results[:3])
        more = f" and {len(not_results) - 3} more" if len(not_results) > 3 else ""
        notes.append(f"{len(not_results)} JSON file(s) that are not results skipped ({shown}{more})")
    sizes: dict[BoardKey, int] = {}
    for (board, _), row in chosen.items():
        if row.corpus_size is not None:
            sizes.setdefault(board, row.corpus_size)
    names = board_names([board for board, _ in chosen], sizes)
    tasks: dict[str, list[Row]] = {}
    for (board, _), row in sorted(chosen.items(), key=lambda item: (item[0][0].task, names[item[0][0]] != item[0][0].task,
                                                                    names[item[0][0]], item[1].sort_key)):
        tasks.setdefault(names[board], []).append(row)
    return Collected(tasks, report, notes, {name: board for board, name in names.items()}, run_digests)
