"""Everything a plugin author needs, in one import.

A task, a model or a measure plugin imports from here and nowhere else in statbench::

    from statbench.api import Document, Query, Retriever, RunContext, Param, hookimpl

The names live in the modules of the core that own them (:mod:`statbench.contract` for
the types a plugin implements, :mod:`statbench.data` for the strict readers,
:mod:`statbench.loading` for task declarations, :mod:`statbench.scoring.measures` for
custom measures); this module only gathers them, so a plugin keeps working when the core
moves a name between its own modules. The text analysis of the built-in lexical models
(:class:`Analyzer`) is here too, so that a lexical plugin's tokens are theirs. Test helpers for a plugin's own test suite are in
:mod:`statbench.testing`.

The built-in model families import statbench's names from here too (tests/models/test_front_door.py
fails otherwise), so what they need beyond a task's readers is here as well: cache keys and
digests, model weights (local copies, fingerprints, how to fetch them), reaching the
Hugging Face hub (offline mode, one bound on a whole fetch), MTEB's names (for the ``mteb``
retriever), one bound on a network wait, and a warning before long work. :func:`fetch_advice` is the one function
defined here: how to fetch a model's weights, without handing out the recipe registry.
"""

from __future__ import annotations

from statbench.contract.benchmark import Benchmark, BenchmarkError, BenchmarkTask
from statbench.contract.language import primary_language
from statbench.contract.model import Reranker, Retriever, RunContext
from statbench.contract.params import Param, ParamError
from statbench.contract.records import FAMILIES, Document, Measure, Qrels, Query, Ranking, Split, TaskData
from statbench.contract.task import Task
from statbench.contract.taskinfo import PoolInfo, Protocol, Published, PublishedData, TaskInfo
from statbench.data.analysis import SEGMENTER_PARAM, Analyzer
from statbench.data.checksum import (
    bytes_sha256,
    config_key,
    file_sha256,
    files_sha256,
    json_sha256,
    records_digest,
    text_sha256,
)
from statbench.data.dataio import (
    id_value,
    open_data,
    query_text,
    read_csv,
    read_json,
    read_json_list,
    read_jsonl,
    read_lines,
    read_nonblank_lines,
    read_text,
    record_id,
    require_fields,
    text_value,
)
from statbench.data.deadline import DeadlinePassed, bound_from_env, call_within
from statbench.data.gunzip import gunzip
from statbench.data.runfile import read_qrels, read_run
from statbench.data.validation import check_qrels_against_corpus
from statbench.errors import DataFormatError, DownloadError, StatbenchError, UnknownNameError, one_line
from statbench.loading.mteb_names import mteb_language, mteb_metadata, registered_meta
from statbench.loading.splits import carve_dev, kfold_assignment, kfold_splits
from statbench.loading.taskdef import DefinedTask
from statbench.registry.hookspecs import hookimpl
from statbench.run.processes import ForkedChild, can_fork, configured_workers, usable_cpus
from statbench.scoring.measures import CustomMeasure
from statbench.storage import model_recipes
from statbench.storage.cache import MANIFEST, CacheEntry, cached
from statbench.storage.hub import (
    FetchStalled,
    dataset_fetch_hint,
    fetch_timeout,
    fetch_within_bound,
    hub_cache_dir,
    in_hub_cache,
    offline_if_unreachable,
    offline_mode,
    offline_reason,
)
from statbench.storage.keys import corpus_checksum, ids_digest, keyed_entry
from statbench.storage.weights import fingerprint, local_copy_dir, resolve
from statbench.terminal.progress import warn_if_long

__all__ = [
    # the types a plugin implements or returns
    "Task", "TaskInfo", "Protocol", "Published", "PublishedData", "PoolInfo", "DefinedTask",
    "Retriever", "Reranker", "RunContext", "Param", "CustomMeasure", "hookimpl",
    # a benchmark: a named, versioned set of tasks (the register_benchmarks hook)
    "Benchmark", "BenchmarkTask", "BenchmarkError",
    "Document", "Query", "Split", "TaskData", "Measure", "Ranking", "Qrels", "FAMILIES",
    # errors
    "StatbenchError", "DataFormatError", "DownloadError", "UnknownNameError", "ParamError", "one_line",
    # the strict readers a loader reads its files with
    "open_data", "read_lines", "read_nonblank_lines", "read_text", "read_json", "read_json_list", "read_jsonl",
    "read_csv", "require_fields", "id_value", "text_value", "record_id", "query_text", "read_qrels", "read_run",
    "file_sha256", "files_sha256", "records_digest", "check_qrels_against_corpus", "gunzip",
    # building splits
    "kfold_assignment", "kfold_splits", "carve_dev",
    # caching a model's artefacts, and the digests its cache keys are made of
    "CacheEntry", "cached", "MANIFEST", "keyed_entry", "config_key", "json_sha256", "text_sha256", "bytes_sha256",
    "ids_digest", "corpus_checksum",
    # a model's weights: the local copy statbench uses, its identity, how to fetch it
    "resolve", "local_copy_dir", "fingerprint", "fetch_advice",
    # the Hugging Face hub: out of reach (offline mode), one bound on a whole fetch
    "offline_reason", "offline_mode", "offline_if_unreachable", "in_hub_cache", "hub_cache_dir", "fetch_timeout",
    "fetch_within_bound", "FetchStalled", "dataset_fetch_hint",
    # MTEB's names for a statbench task's language and an ``mteb:`` task, its registry of models (the mteb extra)
    "mteb_language", "mteb_metadata", "registered_meta",
    # network waits and long work
    "call_within", "DeadlinePassed", "bound_from_env", "warn_if_long",
    # worker processes: how many (STATBENCH_WORKERS, the usable CPUs), whether forking is safe
    "usable_cpus", "configured_workers", "can_fork", "ForkedChild",
    # the built-in lexical models' text analysis (their tokens, for a plugin's own scoring)
    "Analyzer", "SEGMENTER_PARAM", "primary_language",
]

# a judgement's grade, for loaders of qrels in formats other than TREC's (docs/task-authors.md §4)
from statbench.data.runfile import check_grade  # noqa: E402

__all__ += ["check_grade"]


def fetch_advice(hub_id: str) -> tuple[list[str], str] | None:
    """For a model ``statbench models fetch`` knows (by its hub id): the commands that fetch
    it and the manual steps when those cannot run; ``None`` for any other model."""
    recipe = model_recipes.for_hub_id(hub_id)
    if recipe is None:
        return None
    return model_recipes.routes(recipe), model_recipes.manual_steps(recipe)
