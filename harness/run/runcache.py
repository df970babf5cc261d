"""What a run's cached work is keyed by, and where it lives.

A cached split run or model artefact may only be reused when everything that determines
it is the same: the task's identity (its plugin distribution and version, the task's own
``version``, language and analyzer, the data files' checksum, and checksums of what the
loader built from them: the corpus (ids, titles, texts, structure fields), the queries and
judgements, the stop words) and the model's identity (plugin, name, version,
parameters, local weights), plus the split, the pool, the reranker and the depths.

Every key is written in :mod:`statbench.storage.keys`; this module gives the run its
entries (a split's run carries the check of its lines, :func:`statbench.run.splitruns.check_split_run`,
sealed by its writer, and keeps the bytes its verification hashed: read once).
"""

from __future__ import annotations

from statbench.run.splitruns import INDEX_FILE, RUN_FILE, SEALED_CHECK, STATS_FILE, check_split_run
from statbench.storage import keys
from statbench.storage.cache import CacheEntry


def split_run_entry(task_name: str, task_checksum: str, split, *, retriever=None, retriever_entry=None,
                    pool: tuple[str, str | None] | None = None, reranker=None, reranker_entry=None,
                    rerank_depth: int | None = None, depth: int, tag: str = "statbench-cache") -> CacheEntry:
    """The cache entry holding one split's ranked test queries (:func:`statbench.storage.keys.split_run_entry`)."""
    return keys.split_run_entry(task_name, task_checksum, split, retriever=retriever, retriever_entry=retriever_entry,
                                pool=pool, reranker=reranker, reranker_entry=reranker_entry,
                                rerank_depth=rerank_depth, depth=depth, tag=tag,
                                required=(RUN_FILE, INDEX_FILE), check=check_split_run, seal=SEALED_CHECK,
                                keep=(RUN_FILE, INDEX_FILE, STATS_FILE))
