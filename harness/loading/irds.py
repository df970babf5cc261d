"""Every statbench task and query subset as an ir-datasets dataset.

``import statbench.loading.irds`` registers, for each registered task::

    statbench/<task>                 all queries and judgements
    statbench/<task>/<subset>        e.g. statbench/bsard/test, statbench/stard/fold-3,
                                     statbench/stard/dev (official split), statbench/bsard/train
    statbench/<task>/<pool>-pool     a frozen pool as scoreddocs (e.g. statbench/ukstat/bm25-pool)

after which ``ir_datasets.load("statbench/stard/fold-1")`` works for anyone who has the
data. The datasets are backed by the statbench loaders (the same files, validation and
checksums as ``statbench run``), loaded once per task on first use. Files come from
``--data-dir``-style folders given to :func:`register` or from ``$STATBENCH_DATA`` / the
cache (downloading with sha256 verification through :func:`statbench.data.download.fetch`:
ir-datasets' own downloader verifies md5 only, and the task definitions carry sha256).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

import ir_datasets
from ir_datasets.formats.base import (
    BaseDocs,
    BaseQrels,
    BaseQueries,
    BaseScoredDocs,
    GenericQrel,
    GenericQuery,
    GenericScoredDoc,
)
from ir_datasets.indices.base import Docstore

from statbench.contract.records import TaskData
from statbench.errors import StatbenchError, UnknownNameError
from statbench.loading.load import load_task
from statbench.registry.plugins import get_registry

PREFIX = "statbench"
POOL_SUFFIX = "-pool"
log = logging.getLogger("statbench")


class StatbenchDoc(NamedTuple):
    doc_id: str
    text: str
    title: str

    def default_text(self):
        return self.text


class _Source:
    """One task's data, loaded on first use and shared by all its datasets."""

    def __init__(self, task_name: str, data_dir: Path | None):
        self.task_name, self.data_dir = task_name, data_dir
        self._data: TaskData | None = None

    @property
    def task(self):
        return get_registry().get("tasks", self.task_name).cls()

    @property
    def info(self):
        return get_registry().get("tasks", self.task_name).cls.task_info()

    def data(self) -> TaskData:
        if self._data is None:  # the one loading path: a plugin's failure is one line naming it
            loaded = load_task(get_registry().get("tasks", self.task_name), self.data_dir, log)
            loaded.say_notes(log)
            self._data = loaded.data
        return self._data

    def subset(self, name: str | None) -> list[str]:
        """Query ids of a subset: a split's test queries, or ``train`` (the training queries
        of the ``dev`` split, else of the first split); ``None`` means every query."""
        data = self.data()
        if name is None:
            return list(data.queries)
        splits = {s.name: s for s in data.all_splits()}
        if name in splits:
            return list(splits[name].test)
        if name == "train":
            split = splits.get("dev") or (data.splits[0] if data.splits else None)
            if split is not None and split.train:
                return list(split.train)
        raise UnknownNameError(f"query subset of task {self.task_name}", name, [*splits, "train"])


class _Docs(BaseDocs):
    def __init__(self, source: _Source):
        self._source = source

    def docs_iter(self):
        for doc in self._source.data().corpus.values():
            yield StatbenchDoc(doc.id, doc.text, doc.title)

    def docs_count(self):
        return len(self._source.data().corpus)

    def docs_cls(self):
        return StatbenchDoc

    def docs_store(self, field="doc_id"):
        return _DictDocstore(self._source)

    def docs_namespace(self):
        return f"{PREFIX}/{self._source.task_name}"

    def docs_lang(self):
        return self._source.task.language


class _DictDocstore(Docstore):
    def __init__(self, source: _Source):
        super().__init__(StatbenchDoc)
        self._source = source

    def get_many_iter(self, doc_ids):
        corpus = self._source.data().corpus
        for doc_id in doc_ids:
            if doc_id in corpus:
                doc = corpus[doc_id]
                yield StatbenchDoc(doc.id, doc.text, doc.title)


class _Queries(BaseQueries):
    def __init__(self, source: _Source, subset: str | None):
        self._source, self._subset = source, subset

    def queries_iter(self):
        queries = self._source.data().queries
        for qid in self._source.subset(self._subset):
            if qid in queries:
                yield GenericQuery(qid, queries[qid].text)

    def queries_lang(self):
        return self._source.task.language


class _Qrels(BaseQrels):
    def __init__(self, source: _Source, subset: str | None):
        self._source, self._subset = source, subset

    def qrels_iter(self):
        qrels = self._source.data().qrels
        for qid in self._source.subset(self._subset):
            for doc_id, grade in sorted(qrels.get(qid, {}).items()):
                yield GenericQrel(qid, doc_id, grade)

    def qrels_defs(self):
        return dict(self._source.info.relevance)


class _ScoredDocs(BaseScoredDocs):
    def __init__(self, source: _Source, pool: str):
        self._source, self._pool = source, pool

    def _rankings(self):
        pools = self._source.data().pools
        if self._pool not in pools:
            raise UnknownNameError(f"pool of task {self._source.task_name}", self._pool, pools)
        return pools[self._pool]

    def scoreddocs_iter(self):
        for qid, ranking in sorted(self._rankings().items()):
            for doc_id, score in ranking:
                yield GenericScoredDoc(qid, doc_id, score)

    def scoreddocs_path(self):
        return self._source.data().pools.info[self._pool]["path"]


_sources: dict[str, _Source] = {}


def _dataset(source: _Source, subset: str | None = None, pool: str | None = None):
    from ir_datasets.datasets.base import Dataset

    parts = [_Docs(source), _Queries(source, subset), _Qrels(source, subset)]
    if pool is not None:
        parts.append(_ScoredDocs(source, pool))
    return Dataset(*parts)


def dataset_names(task_cls) -> list[str]:
    """The names registered for one task, from its declaration (no data is loaded): one per
    split of its protocols and per declared training set, one per declared pool."""
    info = task_cls.task_info()
    name = info.name
    subsets = list(dict.fromkeys([*(s for p in info.protocols for s in p.splits), *info.sizes]))
    subsets = [s for s in subsets if s != "corpus"]
    pools = [p.name for p in info.pools]
    return [f"{PREFIX}/{name}", *(f"{PREFIX}/{name}/{s}" for s in subsets),
            *(f"{PREFIX}/{name}/{p}{POOL_SUFFIX}" for p in pools)]


def register(data_dirs: dict[str, Path] | None = None) -> list[str]:
    """Register every task's datasets (idempotent); ``data_dirs`` maps task -> data folder.

    Calling it again with other folders repoints the already registered datasets."""
    data_dirs = data_dirs or {}
    names: list[str] = []
    for task_name, entry in sorted(get_registry().tasks.items()):
        source = _sources.get(task_name)
        wanted = Path(data_dirs[task_name]) if task_name in data_dirs else (source.data_dir if source else None)
        if source is None or source.data_dir != wanted:
            if source is None:
                source = _sources[task_name] = _Source(task_name, wanted)
            else:  # repoint: forget what was loaded from the old folder
                source.data_dir, source._data = wanted, None
        for full in dataset_names(entry.cls):
            names.append(full)
            if full in ir_datasets.registry._registered:
                continue
            rest = full[len(f"{PREFIX}/{task_name}"):].lstrip("/")
            if rest.endswith(POOL_SUFFIX):
                ds = _dataset(source, pool=rest[: -len(POOL_SUFFIX)])
            else:
                ds = _dataset(source, subset=rest or None)
            ir_datasets.registry.register(full, ds)
    return names


def forget() -> None:
    """Point every registered dataset back at ``$STATBENCH_DATA``/the cache and drop loaded data."""
    for source in _sources.values():
        source.data_dir, source._data = None, None


def _from_pattern(key: str, groups) -> object:
    """Pools built later under any name: statbench/<task>/<name>-pool."""
    task_name, pool = groups
    if task_name not in _sources:
        register()
    if task_name not in _sources:
        raise StatbenchError(f"ir-datasets: no statbench task {task_name!r} for {key}")
    return _dataset(_sources[task_name], pool=pool)


_PATTERN = rf"^{PREFIX}/([a-z][a-z0-9_-]*)/(.+){POOL_SUFFIX}$"
if not any(p.pattern == _PATTERN for p, _ in ir_datasets.registry._patterns):
    ir_datasets.registry.register_pattern(_PATTERN, _from_pattern)
register()
