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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from statbench.errors import DataFormatError, StatbenchError
from statbench.leaderboard.caches.records import RecordCache, RecordEntry
from statbench.leaderboard.caches.runcopies import prefill
from statbench.leaderboard.collect.identity import canonical, identity
from statbench.leaderboard.collect.rowheads import Heads
from statbench.leaderboard.collect.rows import BoardKey, HeadRow, Row, board_names, row_head, row_key
from statbench.leaderboard.forkmap import processes
from statbench.leaderboard.repo.submission import RESULTS_DIR, RESULTS_FILE, repository_holding
from statbench.results.record import Results, read_results
from statbench.scoring.publishable import (
    check_results,
    join_problems,
    query_columns,
)
from statbench.storage.filedigests import file_digests

if TYPE_CHECKING:
    from statbench.leaderboard.caches.records import RecordCache
    from statbench.leaderboard.collect.rowheads import Heads
    from statbench.leaderboard.verify.verify import Verifier

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

def _read_checked(path: Path, report: list[str], not_results: list[Path],
                  raw: bytes | None = None) -> tuple[Results, dict | None] | None:
    """The record of a results file that passed every check with its per-query scores as
    columns (``publishable.query_columns``: taken once, for the checks and the record cache),
    None (with its line in ``report``, or ``path`` in ``not_results``) otherwise. ``raw``: the
    file's bytes when the caller read them (else read here)."""
    try:
        results = read_results(path, raw)
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
    columns = query_columns(record.per_query, record.labels)
    problems = check_results(record, columns)
    if problems:
        report.append(f"skipped {path}: {join_problems(problems)}")
        return None
    return record, columns

#: cache misses from which a build validates its files in worker processes (a cold build of
#: 10,000 results spent ~80 s of 141 s validating them in one process)
PARALLEL_MIN = 64


def _check_and_keep(path: Path, cache_root: Path):
    """In a worker: hash one file, and validate it and keep it in the record cache unless
    the cache holds it. What it found: ("cached", (state, the record's head, run, the
    file's digest for the parent's index or None)), ("worker record", (Results, run)) when
    it could not be kept, ("report", line), ("not results", None)."""

    records = RecordCache(cache_root)
    entry, raw = records.read_entry(path)  # read once: hashed and, on a miss, parsed from these bytes
    learnt = records.digests.known(path)  # kept by the hashing just done: the parent adopts it
    cached = entry.get(count=False)
    if cached is not None:
        return "cached", (entry.state, row_head(cached, queries_sha256=cached.per_query.sha256), None, learnt)
    report: list[str] = []
    checked = _read_checked(path, report, [], raw)
    if checked is None:
        return ("report", report[0]) if report else ("not results", None)
    record, columns = checked
    kept = entry.put(record, columns)

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
    found, entries, misses, unknown = _known(paths, records, heads)
    workers = processes()
    if records is not None and len(misses) + len(unknown) >= PARALLEL_MIN and workers > 1:
        found.update(_in_workers(misses + unknown, records, workers))
    for path in unknown:
        if path not in found:  # few files, or no worker processes to be had: hashed here
            entry = entries[path] = records.entry(path)
            kept = _kept(entry, heads)
            if kept is None:
                misses.append(path)
            else:
                found[path] = kept
    for path in misses:
        if path not in found:  # few files, or no worker processes to be had
            found[path] = _read_here(path, entries[path])
    for path in paths:
        yield from _placed(path, *found[path], entries.get(path), records, heads, report, not_results)


def _kept(entry: RecordEntry, heads: Heads | None) -> tuple | None:
    """What the caches hold of a file: its head (``("head", (head, entry))``), else its
    record (``("hit", record)``), else None."""
    head = heads.get(entry) if heads is not None else None
    if head is not None:
        return "head", (head, entry)
    cached = entry.get()
    return None if cached is None else ("hit", cached)


def _known(paths: list[Path], records: RecordCache | None, heads: Heads | None):
    """What the caches hold of the files whose content their stat tells (the state taken
    before reading), the files to validate, and those whose content is unknown (hashed by
    whoever reads them)."""
    found: dict[Path, tuple] = {}
    entries: dict[Path, RecordEntry | None] = {}
    misses, unknown = [], []
    for path in paths:
        entry = entries[path] = records.known_entry(path) if records is not None else None
        if entry is None:
            (unknown if records is not None else misses).append(path)
            continue
        kept = _kept(entry, heads)
        if kept is None:
            misses.append(path)
        else:
            found[path] = kept
    return found, entries, misses, unknown


def _read_here(path: Path, entry: RecordEntry | None) -> tuple:
    """A file validated in this process: ``("record", (record, the sha256 of its per-query
    scores or None))`` (kept in the cache when it has an entry, which names its per-query
    scores; in hand, they need not be read again), else its one problem line, else that it is
    no results file."""
    checked = _read_checked(path, report_of := [], [])
    if checked is None:
        return ("report", report_of[0]) if report_of else ("not results", None)
    record, columns = checked
    kept = entry.put(record, columns) if entry is not None else None
    return "record", (record, None if kept is None else kept[1])


def _placed(path: Path, kind: str, value, entry: RecordEntry | None, records: RecordCache | None,
            heads: Heads | None, report: list[str], not_results: list[Path]):
    """What :func:`_read_all` yields for one file (nothing for a broken file or one that is no
    results: said in ``report`` / ``not_results``); a head learnt for the next build."""
    if kind == "report":
        report.append(value)
        return
    if kind == "not results":
        not_results.append(path)
        return
    if kind == "head":
        yield path, value, None, value[1].name
        return
    if kind == "cached":  # kept by a worker: placed from its head, its record loaded when used
        state, head, run, learnt = value
        if learnt is not None:
            records.digests.adopt(learnt[1], learnt[0])
        entry = RecordEntry(records, path, state)
        if heads is not None:
            heads.learn(entry, head)
        yield path, (head, entry), run, entry.name
        return
    run = queries_sha256 = None
    if kind == "worker record":  # a worker record was not kept: no head either
        value, run = value
    else:
        if kind == "record":  # validated here: the sha256 its entry gave its per-query scores
            value, queries_sha256 = value
        if heads is not None:
            heads.learn(entry, row_head(value, queries_sha256=queries_sha256))
    kept = entry is not None and kind != "worker record"
    yield path, (value if queries_sha256 is None else _Named(value, queries_sha256)), run, entry.name if kept else None


class _Named(NamedTuple):
    """A record validated in this process and the sha256 the record cache gave its per-query
    scores (its row's :attr:`~.rows.Row.queries_sha256`, not taken again)."""

    record: Results
    queries_sha256: str


def collect(root: Path, verify: Verifier | None = None, records: RecordCache | None = None) -> Collected:
    """Rows per board (sorted by identity), the problems to report (one line each) and the
    notes (superseded results, files that are not results).

    ``verify``: each valid row is verified (:mod:`~statbench.leaderboard.verify.verify`) before any is chosen over
    another; a refused row is left out (its line is the verifier's to report, and it never
    hides another result of its configuration), an unverifiable one too unless the
    verifier allows unverified rows (then it is shown with its verification).

    A board is one :class:`BoardKey`: scores on other data, other queries, another task
    version or other measure definitions are not comparable, so they never share a table
    or a significance test (see :func:`board_names` for the names).

    ``records``: a :class:`~statbench.leaderboard.caches.records.RecordCache` of the files validated
    by earlier builds (a file unchanged since is not parsed and checked again)."""
    report: list[str] = []
    notes: list[str] = []
    not_results: list[Path] = []
    chosen: dict[tuple, Row] = {}
    run_digests: dict[str, str] = {}
    heads = Heads(records, root) if records is not None else None
    paths = find_results(root)
    quiet = set(meant_for_repository(root, paths))
    paths = [path for path in paths if path not in quiet]
    for path, record, run, entry_name in _read_all(paths, records, report, not_results, heads):
        if run is not None:
            run_digests[run[0]] = run[1]
            if records is not None:  # a run file a worker hashed: known by its stat from now on
                records.digests.adopt(json.loads(run[0]), run[1])
        row = _row_of(path, record, entry_name)
        if verify is not None:
            row.verification = verification = verify.verify(row.results, path)
            if verification.status == "refused" or (verification.status == "unverifiable"
                                                    and not verify.allow_unverified):
                continue
        _choose(chosen, row, report, notes)
    if heads is not None:
        heads.save()
        file_digests("leaderboard").save()
    if not_results:
        shown = ", ".join(str(p.relative_to(root)) for p in not_results[:3])
        more = f" and {len(not_results) - 3} more" if len(not_results) > 3 else ""
        notes.append(f"{len(not_results)} JSON file(s) that are not results skipped ({shown}{more})")
    tasks, names = _boards(chosen)
    return Collected(tasks, report, notes, {name: board for board, name in names.items()}, run_digests)


def _row_of(path: Path, record, entry_name: str | None) -> Row:
    """A results file's row: from its record, or from its head (``(head, entry)``: the record
    is loaded when used)."""
    if isinstance(record, _Named):
        row = _row_of(path, record.record, entry_name)
        row._queries_sha256 = record.queries_sha256  # what Row.queries_sha256 would take again
        return row
    if isinstance(record, tuple):
        head, entry = record
        ident = identity(head)
        return HeadRow(key=row_key(ident), identity=ident, path=path, head=head, entry=entry)
    ident = identity(record)
    return Row(key=row_key(ident), identity=ident, path=path, results=record, entry_name=entry_name)


def _choose(chosen: dict[tuple, Row], row: Row, report: list[str], notes: list[str]) -> None:
    """One row per configuration and board: ``row``, or the one before it (:func:`_supersede`),
    the other said skipped (a note when nothing is lost, a problem otherwise)."""
    slot = (row.board, row.key)
    previous = chosen.get(slot)
    if previous is None:
        chosen[slot] = row
        return
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


def _boards(chosen: dict[tuple, Row]) -> tuple[dict[str, list[Row]], dict[BoardKey, str]]:
    """The chosen rows by board name (boards by task, a task's own board first; rows in their
    stable order), and each board's name."""
    sizes: dict[BoardKey, int] = {}
    for (board, _), row in chosen.items():
        if row.corpus_size is not None:
            sizes.setdefault(board, row.corpus_size)
    names = board_names([board for board, _ in chosen], sizes)
    tasks: dict[str, list[Row]] = {}
    for (board, _), row in sorted(chosen.items(), key=lambda item: (item[0][0].task, names[item[0][0]] != item[0][0].task,
                                                                    names[item[0][0]], item[1].sort_key)):
        tasks.setdefault(names[board], []).append(row)
    return tasks, names
