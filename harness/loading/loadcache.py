"""A task's load, summarised in the cache, so that a run whose every split is cached need
not parse the corpus again.

A :class:`TaskSummary` holds what scoring and provenance need from a loaded task (the
judgements, the splits, the breakdown groups, the data checksum and files, what was
dropped, the sizes, the task identity the split runs are keyed by, and what the loader
said in the log), never the corpus. It is stored as a cache entry keyed by:

- the sha256 of every data file the task declares and finds (not only those the loader
  reported reading: a file that appears, disappears or changes gives another key), hashed
  again unless its stat provably identifies the content hashed before
  (:mod:`statbench.storage.filedigests`: device, inode, size, ``mtime`` and ``ctime``, both
  older than the hashing; a file written in place keeping its size and ``mtime`` has a new
  ``ctime``, so it is hashed again);
- the task's plugin, version and definition, the sha256 of its loader's source files, and
  the code version of the loading code: the source of this module, of
  :mod:`~statbench.loading.taskdef` and of the task's module, and of every module these
  modules import (:func:`statbench.storage.keys.code_version`), and the harness's version.

So a changed data file, task version, loader or harness never reuses an old summary; the
summary is only read when every selected split's run is cached and verified (the runner
loads the task in full otherwise, and writes a new summary). Only tasks that can list
their data files before loading them (:class:`~statbench.loading.taskdef.DefinedTask`) have
one. The key is built by :func:`statbench.storage.keys.task_summary_entry`, with every
other cache key.
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

from statbench.contract.records import Split, TaskData
from statbench.data.atomic import write_json
from statbench.data.checksum import file_sha256, named_digests_sha256
from statbench.loading import taskdef
from statbench.loading.queryfacts import QueryFacts
from statbench.loading.taskdef import DefinedTask
from statbench.storage import keys
from statbench.storage.cache import CacheChanged, CacheEntry
from statbench.storage.filedigests import file_digests
from statbench.storage.paths import cache_root

_SUMMARY, _DOC_IDS = "summary.json", "doc_ids.txt"
#: the namespace of the task data files' kept digests (:func:`~statbench.storage.filedigests.file_digests`)
_DIGESTS = "data"
#: the files a summary entry holds
SUMMARY_FILES = (_SUMMARY, _DOC_IDS)


@dataclass(frozen=True)
class TaskSummary:
    """What a run needs of a loaded task once every split's run is cached. It answers
    ``qrels``, ``groups``, ``splits``, ``extra_splits`` and :meth:`all_splits` as
    :class:`~statbench.api.TaskData` does, so split selection and scoring read both alike."""

    checksum: str
    files: list[str]
    dropped: list[str]
    qrels: dict[str, dict[str, int]]
    splits: list[Split]
    extra_splits: list[Split]
    groups: dict[str, dict[str, str]]
    identity: dict
    n_documents: int
    #: the loaded queries' ids (after anything dropped)
    query_ids: list[str]
    #: (level, message) of what the loader logged, said again when the summary stands in for it
    log: list[tuple[int, str]] = field(default_factory=list)
    #: query lengths and the laws of relevant articles, for the breakdowns (never seen by a model)
    facts: QueryFacts | None = None

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def all_splits(self) -> list[Split]:
        seen: dict[str, Split] = {}
        for split in [*self.splits, *self.extra_splits]:
            seen.setdefault(split.name, split)
        return list(seen.values())

    @classmethod
    def of(cls, data: TaskData, identity: dict, log: list[tuple[int, str]] = (),
           language: str | None = None) -> TaskSummary:
        """``language``: the task's (the breakdowns' query lengths count its unit); ``None``: no facts."""
        return cls(checksum=data.checksum, files=sorted(Path(p).name for p in data.files), dropped=list(data.dropped),
                   qrels={q: dict(docs) for q, docs in data.qrels.items()}, splits=list(data.splits),
                   extra_splits=list(data.extra_splits), groups={g: dict(m) for g, m in data.groups.items()},
                   identity=dict(identity), n_documents=len(data.corpus), query_ids=list(data.queries), log=list(log),
                   facts=None if language is None else QueryFacts.of(data, language))

    def to_json(self) -> dict:
        return {
            "checksum": self.checksum, "files": self.files, "dropped": self.dropped, "qrels": self.qrels,
            "splits": [_split_json(s) for s in self.splits],
            "extra_splits": [_split_json(s) for s in self.extra_splits],
            "groups": self.groups, "identity": self.identity, "n_documents": self.n_documents,
            "query_ids": self.query_ids, "log": [list(item) for item in self.log],
            "facts": None if self.facts is None else self.facts.to_json(),
        }

    @classmethod
    def from_json(cls, obj: dict) -> TaskSummary:
        return cls(checksum=obj["checksum"], files=list(obj["files"]), dropped=list(obj["dropped"]),
                   qrels={q: dict(d) for q, d in obj["qrels"].items()},
                   splits=[_split_of(s) for s in obj["splits"]], extra_splits=[_split_of(s) for s in obj["extra_splits"]],
                   groups={g: dict(m) for g, m in obj["groups"].items()}, identity=dict(obj["identity"]),
                   n_documents=int(obj["n_documents"]), query_ids=list(obj["query_ids"]),
                   log=[(int(level), str(message)) for level, message in obj["log"]],
                   facts=None if obj["facts"] is None else QueryFacts.from_json(obj["facts"]))


def _split_json(split: Split) -> list:
    return [split.name, list(split.test), list(split.train), list(split.dev)]


def _split_of(item: list) -> Split:
    name, test, train, dev = item
    return Split(name=name, test=tuple(test), train=tuple(train), dev=tuple(dev))


def summary_entry(task, entry, data_dir: Path | None, log: logging.Logger) -> CacheEntry | None:
    """The cache entry of this task's summary for the data files found now; ``None`` when
    the task cannot list its files before loading them, or finding them fails (the full
    load then runs, and says why)."""
    if not isinstance(task, DefinedTask):
        return None
    try:
        quiet = logging.getLogger("statbench.loading.loadcache.locate")
        located = task.locate_files(data_dir, quiet, download=False)
        sets = task.locate_file_sets(data_dir)
        files = {name: [str(path), _data_sha256(path)] for name, path in located.items()}
        files.update({name: [[str(p), _data_sha256(p)] for p in paths] for name, paths in sets.items()})
        file_digests(_DIGESTS).save()
    except Exception:  # noqa: BLE001 - the full load reports whatever is wrong, in one line
        return None
    # the loading code: what decides what a loader builds from its files (with the task's
    # own module, and whatever these import)
    return keys.task_summary_entry(task, entry, files, loading_code=(sys.modules[__name__], taskdef),
                                   required=SUMMARY_FILES)


def _data_sha256(path) -> str:
    """The sha256 of a data file, found by its stat where that is proof of its content
    (:mod:`statbench.storage.filedigests`), else read; an unreadable file raises as reading it does."""
    return file_digests(_DIGESTS).sha256(path) or file_sha256(path)


def read_summary(entry: CacheEntry) -> TaskSummary | None:
    """The summary of a valid entry (it was verified against its manifest), else ``None``."""
    reason = entry.verify()
    if reason is not None:
        if reason != "missing":  # recorded like any invalid entry, then rebuilt by the full load
            with entry.lock():
                if entry.verify() is not None:
                    entry.invalid(reason)
        return None
    try:  # the bytes read are those verified (a concurrent rebuild is a full load, not a mix)
        summary = TaskSummary.from_json(json.loads(entry.read_bytes(_SUMMARY).decode("utf-8")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError, CacheChanged):
        return None
    # the summary's data checksum is the one of the files its key hashed (else it was
    # written for other files: a manifest re-sealed over another summary)
    if summary.identity.get("data") != summary.checksum:
        return None
    return summary


def read_doc_ids(entry: CacheEntry) -> set[str]:
    """The corpus ids stored with a summary (read after :func:`read_summary`; checked against
    the manifest as read)."""
    text = entry.read_bytes(_DOC_IDS).decode("utf-8")
    return set(text.split("\n")) if text else set()


def write_summary(entry: CacheEntry, summary: TaskSummary, data: TaskData, opened=()) -> bool:
    """Store ``summary`` (under the entry's lock; a concurrent writer's identical entry is
    kept), only if the files the loader says it read, and every file it ``opened`` through
    :func:`~statbench.data.dataio.open_data`, are among those the key hashed, and their checksum
    is the data checksum the loader computed: a loader reading anything the key does not
    cover (an undeclared side file), or files that changed while it read them, gets no
    summary, so a cached run always parses its data again."""
    digests = {}
    for value in entry.key["files"].values():
        for path, sha in (value if isinstance(value[0], list) else [value]):
            digests[path] = sha
    covered = {_real(p) for p in digests}
    if any(_real(p) not in covered for p in opened):
        return False
    if not all(str(p) in digests for p in data.files) or _files_checksum(data.files, digests) != data.checksum:
        return False
    with entry.lock():
        if entry.valid():
            return True
        with entry.build() as staging:
            (staging / _SUMMARY).write_text(json.dumps(summary.to_json(), ensure_ascii=False, sort_keys=True),
                                            "utf-8")
            # the corpus's ids (never whitespace: checked on load), for `evaluate`'s unknown-document check
            _write_lines(staging / _DOC_IDS, data.corpus)
    return True


def _write_lines(path: Path, items, batch: int = 10_000) -> None:
    """``"\\n".join(items)`` written a batch at a time (a large corpus's ids are never one
    string in memory)."""
    items = iter(items)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        first = True
        while chunk := list(itertools.islice(items, batch)):
            handle.write(("" if first else "\n") + "\n".join(chunk))
            first = False


def _files_checksum(paths, digests: dict[str, str]) -> str:
    """:func:`statbench.data.checksum.files_sha256` of ``paths``, from digests already taken."""
    return named_digests_sha256((path.name, digests[str(path)]) for path in sorted(Path(p) for p in paths))


def _real(path) -> str:
    """One spelling per file (symbolic links and relative parts resolved)."""
    return str(Path(path).resolve())


def _sizes_path(task_name: str) -> Path:
    return cache_root() / "loaded-sizes" / f"{task_name}.json"


def record_loaded_sizes(task_name: str, checksum: str, sizes: dict[str, int], log: logging.Logger) -> None:
    """Remember the sizes the last run loaded (``statbench list`` shows them beside the
    declared ones without loading anything); a record already saying so is left as it is
    (a cached run writes nothing)."""
    record = {"checksum": checksum, "sizes": sizes}
    if _read_sizes_record(task_name) == record:
        return
    try:
        _sizes_path(task_name).parent.mkdir(parents=True, exist_ok=True)
        write_json(_sizes_path(task_name), record)
    except OSError:  # only `list` misses them
        log.debug("could not record the loaded sizes of %s", task_name, exc_info=True)


def loaded_sizes(task_name: str) -> dict[str, int] | None:
    """The sizes the last run of ``task_name`` loaded (split or ``corpus`` -> count), or
    ``None`` when no run recorded any, or the record is not what a run writes (a file in
    the cache may be damaged or written by anyone: a count that is not a non-negative
    whole number, ``true``, ``1.5``, ``"7"``, ``Infinity``, deep nesting, is never shown
    as a size, and never stops ``statbench list`` or a run)."""
    record = _read_sizes_record(task_name)
    return None if record is None else dict(record["sizes"])


def _read_sizes_record(task_name: str) -> dict | None:
    """The record :func:`record_loaded_sizes` wrote, or ``None`` (see :func:`loaded_sizes`)."""
    import stat

    path = _sizes_path(task_name)
    try:
        info = path.stat()
        # a regular file of a sensible size only: a FIFO would block `statbench list`
        if not stat.S_ISREG(info.st_mode) or info.st_size > 1_000_000:
            return None
        record = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("checksum"), str):
        return None
    sizes = record.get("sizes")
    if not isinstance(sizes, dict) or not all(isinstance(k, str) and type(v) is int and 0 <= v < 2**63
                                              for k, v in sizes.items()):
        return None
    return record
