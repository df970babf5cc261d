"""What a run's cached work is keyed by, and where it lives.

A cached split run or model artefact may only be reused when everything that determines
it is the same: the task's identity (its plugin distribution and version, the task's own
``version``, language and analyzer, the data files' checksum, and checksums of what the
loader built from them: the corpus (ids, titles, texts, structure fields), the queries and
judgements, the stop words) and the model's identity (plugin, name, version,
parameters), plus the split, the pool, the reranker and the depths.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from statbench.contract.records import Document, Split, TaskData
from statbench.contract.taskinfo import TaskInfo
from statbench.data.checksum import config_key
from statbench.registry.plugins import Registered
from statbench.storage.cache import CacheEntry
from statbench.storage.paths import cache_root

#: 3: run lines carry the output's tag, with index.json (each query's byte range): see splitruns.py;
#: 4: scores strictly decreasing at float32 (runfile.order_ranking), so no split run written
#: with ties at 32-bit precision is reused to assemble a run file
RUN_FORMAT_VERSION = "4"


def corpus_checksum(corpus: dict[str, Document]) -> str:
    """sha256 over every document as a model sees it, in corpus order."""
    digest = hashlib.sha256()
    dumped: dict[int, str] = {}  # a fields mapping shared by many documents (STARD's headings) is dumped once
    for doc in corpus.values():
        fields = ""
        if doc.fields:
            fields = dumped.get(id(doc.fields))
            if fields is None:
                fields = dumped[id(doc.fields)] = json.dumps(dict(doc.fields), sort_keys=True, ensure_ascii=False,
                                                             default=str)
        digest.update(f"{doc.id}\0{doc.title}\0{doc.text}\0{fields}\0\1".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def queries_checksum(data: TaskData) -> str:
    """sha256 over the queries (id, text, fields) and the judgements a trained model learns from."""
    digest = hashlib.sha256()
    for query in data.queries.values():
        fields = json.dumps(dict(query.fields), sort_keys=True, ensure_ascii=False, default=str) if query.fields else ""
        for part in (query.id, query.text, fields):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        digest.update(b"\1")
    digest.update(json.dumps(data.qrels, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def task_identity(entry: Registered, task: TaskInfo, data: TaskData) -> dict:
    """Everything about the task that changes what a model sees or learns from."""
    return {
        "task": task.name,
        "plugin": plugin_identity(entry),
        "task_version": task.version,
        "language": task.language,
        "analyzer": task.analyzer,
        "data": data.checksum,
        "corpus": corpus_checksum(data.corpus),
        "queries": queries_checksum(data),
        "stopwords": hashlib.sha256("\n".join(sorted(data.stopwords)).encode()).hexdigest()
        if data.stopwords is not None else None,
    }


def identity_checksum(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def plugin_identity(entry: Registered) -> dict:
    return {"plugin": entry.qualified, "version": entry.plugin.version}


def model_identity(entry: Registered, model) -> dict:
    identity = {**model.config(), **plugin_identity(entry)}
    weights = weights_identity(getattr(model, "params", None) or {})
    if weights:  # a model folder's files: weights replaced under the same path never reuse a run
        identity["weights"] = weights
    return identity


def weights_identity(params) -> dict[str, str]:
    """``{param: fingerprint}`` of each model parameter (``model``, ``*_model``) that names a
    local folder: given as a path, or a copy the harness finds for a hub id (``statbench
    models fetch``, ``$STATBENCH_CACHE/hf/ORG--NAME``), by the files' names, sizes and
    modification times (:func:`statbench.models.shared.hub.fingerprint`). A hub id the hub serves
    keeps its name only."""
    out: dict[str, str] = {}
    for name, value in sorted(params.items()):
        if not isinstance(value, str) or not value or not (name == "model" or name.endswith("_model")):
            continue
        try:
            from statbench.models.shared import hub

            found = hub.fingerprint(value)
        except Exception:  # noqa: BLE001 - the load reports what is wrong with the model
            continue
        if found.startswith("dir:"):
            out[name] = found
    return out


def model_cache_dir(entry: Registered, model, task_checksum: str, split: Split | None) -> Path:
    """The folder private to one model configuration on one task (and split, when trained)."""
    key = config_key({"model": model_identity(entry, model), "task": task_checksum,
                      "split": split.name if split else None})
    return cache_root() / "models" / model.name / key


def split_run_entry(task_name: str, task_checksum: str, split: Split, *, retriever=None, retriever_entry=None,
                    pool: tuple[str, str | None] | None = None, reranker=None, reranker_entry=None,
                    rerank_depth: int | None = None, depth: int, tag: str = "statbench-cache") -> CacheEntry:
    """The cache entry holding one split's ranked test queries."""
    trained = bool(retriever is not None and retriever.trainable)
    key = {
        "format": RUN_FORMAT_VERSION,
        "task": task_checksum,
        "split": [split.name, list(split.test), list(split.train) if trained else [], list(split.dev) if trained else []],
        "model": model_identity(retriever_entry, retriever) if retriever is not None else None,
        # a rebuilt pool of the same name has another checksum, so stale runs are not reused
        "pool": list(pool) if pool else None,
        "reranker": model_identity(reranker_entry, reranker) if reranker is not None else None,
        "rerank_depth": rerank_depth if reranker is not None else None,
        "depth": depth,
        # the tag column of the lines (it follows the --model/--reranker spelling, DIST:NAME or NAME)
        "tag": tag,
    }
    from statbench.run.splitruns import check_split_run

    return CacheEntry(cache_root() / "runs" / task_name / config_key(key), "split-run", key,
                      required=("run.trec", "index.json"), check=check_split_run)
