"""Run one model (optionally plus a reranker) on one task: retrieve, write, score.

The work is cached per split, keyed by everything that determines its output (task
identity and corpus, model plugin and config, reranker, pool, depths: see runcache.py),
so an interrupted run resumes from the splits already on disk and a repeated command does
no retrieval work again. Cached entries verify themselves on read (cache.py).

The task is loaded by :func:`statbench.loading.load.load_task` (the one loading path, with
every guard). Everything a plugin returns is checked (checks.py) before it is cached or
written, and anything a plugin raises stops the run with one line naming it. The output set (run,
qrels, results, log) is staged and swapped in as a unit once everything is scored
(outputs.py): a failed or killed run leaves the previous outputs exactly as they were.

:class:`Run` holds the stages (load, rank, score, record, write), each taking the values it
needs and returning its own; :func:`execute` is the one-call form. Requests carry typed parameters only: ``--param`` strings are parsed
by :func:`request_from_cli` / :func:`parse_model_params` before a request is made.
"""

from __future__ import annotations

import json
import logging
import platform
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from statbench.contract.model import Reranker, Retriever, RunContext
from statbench.contract.params import applicable_params
from statbench.contract.records import Ranking, Split, TaskData
from statbench.contract.task import Task
from statbench.data.atomic import atomic_open, write_json, write_text
from statbench.data.checksum import file_sha256
from statbench.data.dataio import read_json
from statbench.data.runfile import order_ranking, write_qrels, write_run
from statbench.errors import StatbenchError, UnknownNameError
from statbench.loading.load import LoadedTask, load_task, start_task
from statbench.loading.loadcache import TaskSummary, record_loaded_sizes
from statbench.loading.splits import select_splits
from statbench.registry.checks import check_rankings, check_rerank_complete
from statbench.registry.plugins import Registered, call_plugin, get_registry
from statbench.results.record import (
    ApiUsage,
    CacheInvalid,
    ModelRecord,
    PluginRecord,
    Results,
    RunFile,
    RunScores,
    TaskRecord,
    write_results,
)
from statbench.run.efficiency import Measured, SharedProgress, batches, peak_mark
from statbench.run.outputs import OutputSet
from statbench.run.processes import can_fork
from statbench.run.request import (
    RunRequest,
    _typed_params,
    default_output_dir,
    equivalent_command,
    output_tag,
)
from statbench.run.runcache import split_run_entry
from statbench.run.splitfork import SplitFork, SplitReport, run_processes
from statbench.run.splitruns import SplitRun, SplitRuns, cacheable_measures, scores_entry, write_split
from statbench.scoring.evaluation import per_query_scores, score_splits
from statbench.storage.cache import CacheEntry, CacheEvent, cached, take_events
from statbench.storage.ir_measures_version import ir_measures_version
from statbench.storage.keys import identity_checksum, model_cache_dir
from statbench.storage.paths import cache_root
from statbench.terminal.console import IN_RUN_LOG


@dataclass
class RunOutcome:
    #: the results record (what results.json holds, typed)
    record: Results
    results_path: Path
    run_path: Path

    @cached_property
    def results(self) -> dict:
        """The results as results.json holds them (JSON form); read fields from :attr:`record`."""
        return self.record.to_json()


class _ListHandler(logging.Handler):
    """Collects run.log's lines: every record, except those said on the console only."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        if not getattr(record, IN_RUN_LOG, True):  # said on the console only
            return
        self.lines.append(f"{record.levelname.lower()}: {record.getMessage()}")


def execute(request: RunRequest, log: logging.Logger, progress) -> RunOutcome:
    """Run ``request`` (see :class:`Run`): validate, rank split by split (with caching),
    score, write the outputs."""
    return Run(_typed_params(request), log, progress).execute()


@dataclass(frozen=True)
class Loaded:
    """The load stage's value: the task (its data, or the cached summary of its load), the
    splits to run, and, when the summary stood in, every split's verified cached run."""

    task: LoadedTask
    splits: list[Split]
    #: split name -> its cached run (only when the summary stood in for the load)
    cached_runs: Mapping[str, SplitRun]

    @property
    def summary(self) -> TaskSummary:
        return self.task.summary

    @property
    def timings(self) -> dict[str, float]:
        return {"load": self.task.seconds}


class Ranked(SplitRuns):
    """The rank stage's value: every selected split's run (a mapping query id -> ranking,
    holding the verified bytes of each split's run), with where each split's run came from
    (``"hit"``: the cache; ``"miss"``: computed), the throughput recorded with the cached
    splits, the time spent per step (train, index, search, rerank) and what else was measured
    while computing (per-query latency, index size: :class:`~statbench.run.efficiency.Measured`)."""

    def __init__(self, runs: list[SplitRun], cache_hits: Mapping[str, str],
                 cached_throughput: Mapping[str, float], timings: Mapping[str, float],
                 measured: Measured | None = None, events: list[CacheEvent] = ()):
        super().__init__(runs)
        #: invalid cache entries met while ranking that take_events() no longer holds (a fork's among them)
        self.events = list(events)
        self.cache_hits = dict(cache_hits)
        self.cached_throughput = dict(cached_throughput)
        self.timings = dict(timings)
        self.measured = measured if measured is not None else Measured()


class Run:
    """One run of a :class:`RunRequest`. Construction resolves every name, builds the models
    from their typed parameters and checks the output folder: all before any work. Each
    stage then takes the values it needs and returns its own:

    - :meth:`load` -> :class:`Loaded`: the task's data (:func:`~statbench.loading.load.load_task`),
      checked, with its pools, identity and splits;
    - :meth:`rank` -> :class:`Ranked`: each split's rankings, from the cache or computed
      (``_SplitRunner``);
    - :meth:`score` -> :class:`RunScores` (``evaluation.score_splits``);
    - :meth:`record` -> :class:`Results`: the scores plus provenance (``Results.build``);
    - :meth:`write` -> :class:`RunOutcome`: run, qrels, results and log staged and swapped
      in as a unit;
    - :meth:`execute`: the stages in order, the run's log collected and timed.

    :meth:`execute` hands each stage's value to the next and changes nothing on the
    :class:`Run`. Called one at a time without the earlier stage's value (``run.load();
    run.rank()``), a stage takes the value the public :meth:`load` / :meth:`rank` last returned.
    """

    def __init__(self, request: RunRequest, log: logging.Logger, progress):
        for name in ("params", "reranker_params"):
            if not isinstance(getattr(request, name), Mapping):
                raise TypeError(f"RunRequest.{name} must be a dict of typed values, not "
                                f"{type(getattr(request, name)).__name__} (parse --param strings with "
                                "request_from_cli or parse_model_params)")
        self.request, self.log, self.progress = request, log, progress
        registry = get_registry()
        self.task_entry = registry.get("tasks", request.task)
        if request.model is None and request.pool is None:
            raise StatbenchError("give a first stage: --model NAME, or --pool NAME to rerank a frozen pool")
        if request.model is not None and request.pool is not None:
            # the model ranked and the pool was ignored, while results.json named the pool
            raise StatbenchError(f"give --model or --pool, not both (--model {request.model} runs a first stage; "
                                 f"--pool {request.pool} reranks a frozen pool instead of one)")
        self.model_entry = registry.get("retrievers", request.model) if request.model else None
        self.reranker_entry = registry.get("rerankers", request.reranker) if request.reranker else None
        self.task: Task = start_task(self.task_entry)
        self.info = self.task_entry.cls.task_info()
        self.retriever: Retriever | None = (_instantiate(self.model_entry, request.params, self.info)
                                            if self.model_entry else None)
        self.reranker: Reranker | None = (_instantiate(self.reranker_entry, request.reranker_params, self.info)
                                          if self.reranker_entry else None)
        for model in (self.retriever, self.reranker):  # a bad needs_gpu/tolerance stops before any work
            if model is not None:
                model.reproducibility()
        self.outputs = OutputSet(Path(request.output) if request.output else default_output_dir(request))
        self.outputs.check()  # before any work: an unwritable --output must not cost a whole run
        #: the values the stages last returned, for a stage called without them
        self._last: dict[str, Any] = {}
        #: the memory high-water marks before any work (the run's own peak is what exceeds them)
        self._memory_before = peak_mark()

    @property
    def splits(self) -> list[Split]:
        """The splits of the last :meth:`load`."""
        return self._previous("load").splits

    @property
    def cache_hits(self) -> dict[str, str]:
        """Split name -> ``"hit"``/``"miss"`` of the last :meth:`rank`."""
        return self._previous("rank").cache_hits

    def _previous(self, stage: str):
        if stage not in self._last:
            raise StatbenchError(f"Run.{stage}() has not run yet: call the stages in order (or use execute())")
        return self._last[stage]

    def execute(self) -> RunOutcome:
        collector = _ListHandler()
        self.log.addHandler(collector)
        take_events()  # invalid cache entries met from here on are recorded in the results
        try:
            started = time.perf_counter()
            loaded = self._load()
            ranked = self._rank(loaded)
            self.check_ranked(ranked, loaded)
            scores, evaluate_seconds = _seconds(lambda: self.score(ranked, loaded))
            self.say_data_notes(loaded)
            timings = {**loaded.timings, **ranked.timings, "evaluate": evaluate_seconds,
                       "total": time.perf_counter() - started}
            events = [*ranked.events, *take_events()]
            cache_invalid = [CacheInvalid.from_json(event.as_dict()) for event in events]
            return self.write(ranked, scores, collector.lines, loaded=loaded, timings=timings,
                              cache_invalid=cache_invalid)
        finally:
            self.log.removeHandler(collector)

    def load(self) -> Loaded:
        """The task's data, or, when every selected split's run is cached and verified, the
        cached summary of its load (no corpus parse: see loadcache.py)."""
        loaded = self._load()
        self._last = {"load": loaded}
        return loaded

    def _load(self) -> Loaded:
        request, info, log = self.request, self.info, self.log
        cached_runs: dict[str, SplitRun] = {}

        def every_split_cached(summary: TaskSummary) -> bool:
            runs = self._cached_runs(summary)
            cached_runs.update(runs or {})
            return runs is not None

        # a pool run needs the pools, which only a full load attaches
        task = load_task(self.task_entry, request.data_dir, log, task=self.task,
                         summary=every_split_cached if request.pool is None else False)
        summary = task.summary
        if task.data is None:
            log.info("%s: %d documents, %d queries, %d judged (data sha256 %s), every split cached: the load's "
                     "summary read from %s in %.1f s", info.name, summary.n_documents, summary.n_queries,
                     len(summary.qrels), summary.checksum[:16], task.summary_at.path, task.seconds)
        else:
            data = task.data
            log.info("%s: %d documents, %d queries, %d judged (data sha256 %s), loaded in %.1f s", info.name,
                     len(data.corpus), len(data.queries), len(data.qrels), data.checksum[:16], task.seconds)
            if request.pool is not None and request.pool not in data.pools:
                raise StatbenchError(unknown_pool_message(info, request.pool, data.pools, request.data_dir))
        splits = select_splits(info, task.data if task.data is not None else summary, request.splits,
                               request.protocol)
        return Loaded(task=task, splits=splits, cached_runs=cached_runs)

    def _cached_runs(self, summary: TaskSummary) -> dict[str, SplitRun] | None:
        """Every selected split's run from the cache, verified; ``None`` when one is missing."""
        splits = select_splits(self.info, summary, self.request.splits, self.request.protocol)
        runner = self._split_runner(identity_checksum(summary.identity), None)
        runs: dict[str, SplitRun] = {}
        for split in splits:
            entry = runner.entry(split)
            if not entry.valid():
                return None
            runs[split.name] = SplitRun.read(split.name, entry)
        return runs

    def _split_runner(self, task_checksum: str, data: TaskData | None) -> _SplitRunner:
        return _SplitRunner(self.info, data, task_checksum, self.request, self.task_entry, self.model_entry,
                            self.retriever, self.reranker_entry, self.reranker, self.log, self.progress,
                            output_tag(self.request))

    def rank(self, loaded: Loaded | None = None) -> Ranked:
        """Every selected split's test queries ranked (cached per split)."""
        ranked = self._rank(loaded or self._previous("load"))
        self._last["rank"] = ranked
        return ranked

    def _rank(self, loaded: Loaded) -> Ranked:
        if loaded.task.data is None:  # the summary stood in: every split's run is cached
            throughput: dict[str, float] = {}
            for split in loaded.splits:
                entry = loaded.cached_runs[split.name].entry
                self.log.info("%s: reusing cached run %s", split.name, entry.path)
                throughput.update(_recorded_throughput(entry))
            ranked = Ranked([loaded.cached_runs[split.name] for split in loaded.splits],
                            {split.name: "hit" for split in loaded.splits}, throughput, {})
        else:
            runner = self._split_runner(identity_checksum(loaded.task.identity), loaded.task.data)
            runs = runner.splits(loaded.splits, self._fresh_scores(loaded))
            ranked = Ranked(runs, runner.cache_hits, runner.cached_throughput, runner.timings, runner.measured,
                            runner.events)
        return ranked

    def _fresh_scores(self, loaded: Loaded) -> Callable[[SplitRun, Split], None] | None:
        """How a split's per-query scores are cached where none are (by a fork that ranked
        the split: :meth:`_score` then reads them), or None where they are not cached."""
        name, measures, qrels = self.info.name, self.info.measures, loaded.summary.qrels
        if not cacheable_measures(measures):
            return None

        def score(run: SplitRun, split: Split) -> None:
            if not scores_entry(name, run, list(split.test), qrels, measures).path.exists():
                _split_scores(name, run, split, qrels, measures)

        return score

    def say_data_notes(self, loaded: Loaded | None = None) -> None:
        """Once the run is scored (a failed run says one line, nothing else): what the
        loader said and the count of what it dropped, on the console once per data
        (:meth:`~statbench.loading.load.LoadedTask.say_notes`; run.log has them every
        time), and a loaded size that differs from the declared one."""
        loaded = loaded or self._previous("load")
        loaded.task.say_notes(self.log)
        _warn_on_declared_sizes(self.info, loaded.summary, {split.name for split in loaded.splits}, self.log)

    def check_ranked(self, rankings: SplitRuns, loaded: Loaded | None = None) -> None:
        """Test queries the model ranked nothing for score 0 on every measure: said on the
        console (and in run.log; results.json counts them per split as
        ``queries_without_results``); when it ranked nothing at all, the run stops, unless
        ``--allow-empty`` asks to keep it."""
        loaded = loaded or self._previous("load")
        ranked = set().union(*(run.ranked() for run in rankings.runs))
        tested = [q for split in loaded.splits for q in split.test]
        empty = sum(1 for q in tested if q not in ranked)
        if not empty:
            return
        who = self._final_stage()
        if empty == len(tested) and not self.request.allow_empty:
            raise StatbenchError(f"{who} ranked nothing for any of the {len(tested)} test queries of task "
                                 f"{self.info.name}: every figure would be 0; check the model and its parameters "
                                 "(`statbench run --allow-empty` keeps such a run)")
        self.log.warning("%s ranked nothing for %d of %d test queries (each scores 0 on every measure; "
                         "results.json: splits[].queries_without_results)", who, empty, len(tested))

    def _final_stage(self) -> str:
        """The model whose rankings are the run's, as messages name it."""
        request = self.request
        if request.reranker:
            first = f"model {request.model!r}" if request.model else f"pool {request.pool!r}"
            # the reranker gets nothing to order where the first stage ranked nothing: say both
            return f"reranker {request.reranker!r} (on the candidates of {first})"
        return f"model {request.model!r}" if request.model else f"pool {request.pool!r} of task {self.info.name}"

    def score(self, rankings: Mapping[str, Ranking], loaded: Loaded | None = None) -> RunScores:
        return self._score(rankings, loaded or self._previous("load"))

    def _score(self, rankings: Mapping[str, Ranking], loaded: Loaded) -> RunScores:
        measures, summary, splits = self.info.measures, loaded.summary, loaded.splits
        if not isinstance(rankings, SplitRuns) or not cacheable_measures(measures):
            return score_splits(measures, summary, splits, rankings)
        per_query: dict[str, dict[str, float]] = {}
        ranked: set[str] = set()
        by_name = {run.name: run for run in rankings.runs}
        for split in splits:
            run = by_name[split.name]
            per_query.update(_split_scores(self.info.name, run, split, summary.qrels, measures))
            ranked |= run.ranked()
        return score_splits(measures, summary, splits, per_query=per_query, ranked=ranked)

    def record(self, scores: RunScores, run_file: RunFile, loaded: Loaded | None = None,
               rankings: Mapping[str, Ranking] | None = None, *, timings: Mapping[str, float] | None = None,
               cache_invalid: list[CacheInvalid] = ()) -> Results:
        """The scores with everything needed to trust and repeat them. ``timings``: the
        run's (:meth:`execute`); else the load's and the ranking's."""
        loaded = loaded or self._previous("load")
        rankings = rankings if rankings is not None else self._last.get("rank", {})
        if timings is None:
            timings = {**loaded.timings, **getattr(rankings, "timings", {})}
        request = self.request
        return Results.build(
            scores,
            task=self._task_record(loaded),
            model=self._first_stage_record(),
            reranker=_model_record(self.reranker_entry, self.reranker) if self.reranker else None,
            pool=request.pool,
            pool_sha256=loaded.task.data.pools.info.get(request.pool, {}).get("sha256") if request.pool else None,
            command=request.command or equivalent_command(request),
            run_file=run_file,
            environment=_environment(),
            timings={k: round(v, 4) for k, v in timings.items()},
            cache=getattr(rankings, "cache_hits", {}),
            cache_invalid=list(cache_invalid),
            # measured now, or recorded when the cached splits were computed
            throughput=_throughput(self.retriever, self.reranker) or getattr(rankings, "cached_throughput", {}),
            efficiency=self._efficiency(rankings, timings),
        )

    def _efficiency(self, rankings, timings: Mapping[str, float]):
        """What this process measured (:mod:`statbench.run.efficiency`): nothing of a split
        answered by the cache."""
        measured = getattr(rankings, "measured", None) or Measured()
        api = None
        if self.reranker is not None and measured.queries:
            usage = call_plugin(self.reranker_entry, "reporting its API usage",
                                getattr(self.reranker, "api_usage", lambda: None))
            if usage is not None:
                api = call_plugin(self.reranker_entry, "reporting its API usage", lambda: ApiUsage.from_json(usage))
        return measured.record(timings, api, self._memory_before)

    def write(self, rankings: Mapping[str, Ranking], scores: RunScores, log_lines: list[str] = (), *,
              loaded: Loaded | None = None, timings: Mapping[str, float] | None = None,
              cache_invalid: list[CacheInvalid] = ()) -> RunOutcome:
        """run.trec, qrels.trec, results.json and run.log, swapped in as a unit."""
        request = self.request
        loaded = loaded or self._previous("load")
        summary = loaded.summary
        with self.outputs.staged() as staging:
            if isinstance(rankings, SplitRuns):  # the verified bytes of the splits' runs, nothing re-formatted
                with atomic_open(staging / "run.trec", "wb", encoding=None) as handle:
                    run_sha256 = rankings.write_output(handle)
            else:
                write_run(staging / "run.trec", rankings, output_tag(request))
                run_sha256 = _file_sha256(staging / "run.trec")
            # the judgements as evaluated, so `ir_measures qrels.trec run.trec ...` reproduces every figure
            write_qrels(staging / "qrels.trec",
                        {q: summary.qrels[q] for s in loaded.splits for q in s.test if q in summary.qrels})
            record = self.record(scores, RunFile(path="run.trec", sha256=run_sha256), loaded, rankings,
                                 timings=timings, cache_invalid=cache_invalid)
            write_results(staging / "results.json", record)
            self.log.info("wrote run.trec, qrels.trec, results.json to %s", self.outputs.target)
            write_text(staging / "run.log", "\n".join(log_lines) + "\n")
        return RunOutcome(record=record, results_path=self.outputs.target / "results.json",
                          run_path=self.outputs.target / "run.trec")

    def _task_record(self, loaded: Loaded) -> TaskRecord:
        info, data, entry = self.info, loaded.summary, self.task_entry
        return TaskRecord(
            name=info.name,
            language=info.language,
            # the protocol whose splits were run ('' for a hand-picked set of splits)
            protocol=info.protocol_of(s.name for s in loaded.splits),
            data_checksum=data.checksum,
            files=list(data.files),
            dropped=list(data.dropped),
            version=info.version,
            corpus_checksum=loaded.task.identity["corpus"],
            plugin=_plugin_record(entry),
            corpus_size=data.n_documents,
        )

    def _first_stage_record(self) -> ModelRecord:
        if self.retriever is not None:
            return _model_record(self.model_entry, self.retriever, trained=bool(self.retriever.trainable))
        pool = self.request.pool
        return ModelRecord(
            name=f"pool:{pool}",
            family="pool",
            description=f"frozen candidate pool {pool!r} of task {self.info.name}",
            params={},
            defaults={},
            plugin=_plugin_record(self.task_entry),
        )


def unknown_pool_message(info, pool: str, available, data_dir: Path | None) -> str:
    """The unknown pool, the task's pools, and the command that builds it: the task's own
    recipe for a pool it declares (``TaskInfo.pools``), else ``statbench pool build``."""
    declared = next((p for p in info.pools if p.name == pool), None)
    if declared is not None and declared.build:
        build = declared.build
    else:
        retriever = (declared.retriever if declared is not None and declared.retriever else
                     pool if pool in get_registry().retrievers else "RETRIEVER")
        build = f"statbench pool build --task {info.name} --retriever {retriever} --name {pool}"
    if data_dir is not None and "--data-dir" not in build:
        build += f" --data-dir {shlex.quote(str(data_dir))}"
    what = f" ({declared.description}, declared by the task but not built yet)" if declared is not None else ""
    return (f"{UnknownNameError(f'pool of task {info.name}', pool, available)}{what}; build it with `{build}` "
            "(`statbench list models` names the retrievers)")


def _throughput(*models) -> dict[str, float]:
    """Numbers a model chose to report (e.g. passages encoded per second) via an optional
    ``stats`` dict attribute; non-negative numbers only, as the results schema requires."""
    out: dict[str, float] = {}
    for model in models:
        for key, value in (getattr(model, "stats", None) or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                out[str(key)] = round(float(value), 4)
    return out


def _warn_on_declared_sizes(info, data, evaluated: set[str], log) -> None:
    """A loaded split (or corpus) whose size differs from the task's declaration is said on
    the console once per run (and in run.log): other data than the task describes, so its
    figures are not comparable with the published ones (the data checksum keeps them on a
    board of their own). Only the corpus and the ``evaluated`` splits are said; every
    loaded size is kept for ``statbench list``."""
    loaded = {s.name: len(s.test) for s in data.all_splits()}
    loaded["corpus"] = data.n_documents
    record_loaded_sizes(info.name, data.checksum, loaded, log)
    differ = [f"{name} {loaded[name]:,} (declared {size:,})" for name, size in info.sizes.items()
              if name in loaded and loaded[name] != size and name in {*evaluated, "corpus"}]
    if differ:
        log.warning("%s: the loaded data differs from the task's declaration: %s; its figures are not comparable "
                    "with the published ones", info.name, "; ".join(differ))


def _file_sha256(path: Path) -> str:
    return file_sha256(path)


def _split_scores(task_name: str, run: SplitRun, split: Split, qrels, measures) -> dict[str, dict[str, float]]:
    """One split's per-query scores, from the cache (keyed by the run's sha256, the
    judgements and the measures) or computed from its rankings and cached."""
    entry = scores_entry(task_name, run, list(split.test), qrels, measures)
    computed: list[dict] = []

    def build(staging: Path) -> None:
        computed.append(per_query_scores(qrels, run.rankings(), measures, split.test))
        (staging / "scores.json").write_text(json.dumps(computed[0], ensure_ascii=False), "utf-8")

    cached(entry, build)
    if computed:
        return computed[0]
    return json.loads(entry.read_bytes("scores.json").decode("utf-8"))


def _instantiate(entry: Registered, params: Mapping[str, Any], info):
    """Build a model from typed params for the task ``info`` declares; the model class checks
    every value against its declared parameters. A parameter that does not apply to the
    task's language or with the model's other settings (``Param(languages=, when=)``) is
    refused when given, and otherwise left out of ``model.params``: what results record and
    caches are keyed by holds only choices that made a difference."""
    model = call_plugin(entry, "starting", lambda: entry.cls(**params))
    model.params = applicable_params(model.params, entry.cls.param_specs(), info.language, entry.name,
                                     given=params, task=info.name)
    return model


def _timed(timings: dict, key: str, fn):
    t0 = time.perf_counter()
    try:
        return fn()
    finally:
        timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0


def _seconds(fn) -> tuple[Any, float]:
    """``fn()`` and the seconds it took."""
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def _recorded_throughput(entry: CacheEntry) -> dict[str, float]:
    """The throughput a cached split's run recorded when it was computed (none: ``{}``)."""
    return read_json(entry.file("stats.json")) if entry.file("stats.json").is_file() else {}


class _SplitRunner:
    """Rankings for one split's test queries, from the cache when this exact work was done."""

    def __init__(self, info, data, task_checksum, request, task_entry, model_entry, retriever, reranker_entry,
                 reranker, log, progress, tag: str):
        self.info, self.data, self.task_checksum, self.request = info, data, task_checksum, request
        self.task_entry, self.model_entry, self.retriever = task_entry, model_entry, retriever
        self.reranker_entry, self.reranker = reranker_entry, reranker
        self.log, self.progress, self.tag = log, progress, tag
        #: seconds per step (train, index, search, rerank) over the splits computed
        self.timings: dict[str, float] = {}
        self.cache_hits: dict[str, str] = {}
        self.cached_throughput: dict[str, float] = {}
        #: latency, index size, queries: measured over the splits computed here
        self.measured = Measured()
        #: invalid cache entries met while ranking, where a fork's were added (else take_events() has them)
        self.events: list[CacheEvent] = []
        self._indexed = False  # a zero-shot retriever indexes once, on the first cache miss
        #: while :meth:`splits` runs: its splits, how to score one, the fork computing some of them
        self._left: list[Split] | None = None
        self._score: Callable[[SplitRun, Split], None] | None = None
        self._fork: SplitFork | None = None

    def entry(self, split: Split) -> CacheEntry:
        request = self.request
        pool = (request.pool, self.data.pools.info.get(request.pool, {}).get("sha256")) if request.pool else None
        return split_run_entry(
            self.info.name, self.task_checksum, split, retriever=self.retriever, retriever_entry=self.model_entry,
            pool=pool, reranker=self.reranker, reranker_entry=self.reranker_entry,
            rerank_depth=request.rerank_depth, depth=self.info.depth, tag=self.tag,
        )

    def splits(self, splits: list[Split], score: Callable[[SplitRun, Split], None] | None = None) -> list[SplitRun]:
        """Every split's run (:meth:`split`). Once a split computed here has built the index,
        the later half of the splits left to compute is computed by a forked copy of the run
        where that is safe and worth it (splitfork.py), and scored there with ``score``
        (caches a split's per-query scores): the same runs, records and log as one process."""
        self._left, self._score = list(splits), score
        try:
            return [self.split(split, self._fork) for split in splits]
        finally:
            if self._fork is not None:  # stopped when this process failed first (else it has finished)
                self._fork.kill()
            self._left = self._score = self._fork = None

    def _start_fork(self, current: Split) -> SplitFork | None:
        """A fork computing the later half of the splits after ``current`` not yet cached, or None."""
        retriever, left = self.retriever, self._left or []
        if (current not in left or retriever is None or self.reranker is not None or retriever.trainable
                or getattr(type(retriever), "fork_search", False) is not True or not can_fork()):
            return None
        missing = [split for split in left[left.index(current) + 1:] if not self.entry(split).path.exists()]
        # this process computes and scores ``current`` and the first half of the others, then
        # scores the fork's (read from the cache) and writes the output
        share = {split.name: split for split in missing[len(missing) // 2:]}
        if not share or run_processes(sum(len(split.test) for split in missing)) < 2:
            return None
        score = self._score

        def compute(name: str) -> tuple[bool, Callable[[], None] | None]:
            """In the fork: the split ranked (and whether it was computed), then how to score it."""
            self.progress = _no_progress  # no bars drawn by the fork
            run = self.split(share[name])
            return self.cache_hits[name] == "miss", (lambda: score(run, share[name])) if score else None

        loggers = list({id(log): log for log in (self.log, logging.getLogger("statbench"))}.values())
        return SplitFork(list(share), compute, self._measures, loggers)

    def _measures(self) -> SplitReport:
        measured = self.measured
        return SplitReport(timings=dict(self.timings), latencies=list(measured.latencies), queries=measured.queries,
                           batch_size=measured.batch_size)

    def split(self, split: Split, fork: SplitFork | None = None) -> SplitRun:
        """One split's run: from the cache, computed here, or (``fork`` computed it) read from
        the cache with what the fork measured and logged for it."""
        entry = self.entry(split)
        built: list[SplitRun] = []
        report = fork.reports().get(split.name) if fork is not None and fork.takes(split.name) else None

        def build(staging: Path) -> None:
            rankings = self._compute(split, staging)
            data, index = write_split(staging, rankings, self.tag)
            built.append(SplitRun(split.name, entry, data, index, rankings))

        # verified, or built under the entry's lock (an identical run computing this split:
        # wait, then reuse its work)
        cached(entry, build)
        self.cache_hits[split.name] = "miss" if built or report is not None else "hit"
        if built:
            return built[0]
        if report is not None:  # the fork's work, said and counted where this process would have
            self.events += take_events()
            self.events += fork.replay(report)
            for step, seconds in report.timings.items():
                self.timings[step] = self.timings.get(step, 0.0) + seconds
            self.measured.latencies.extend(report.latencies)
            self.measured.queries += report.queries
            self.measured.batch_size = report.batch_size or self.measured.batch_size
            return SplitRun.read(split.name, entry)
        self.log.info("%s: reusing cached run %s", split.name, entry.path)
        self.cached_throughput.update(_recorded_throughput(entry))
        return SplitRun.read(split.name, entry)

    def _compute(self, split: Split, staging: Path) -> dict[str, Ranking]:
        data, retriever, reranker, timings = self.data, self.retriever, self.reranker, self.timings
        before = dict(timings)
        queries = [data.queries[q] for q in split.test]
        asked = {q.id for q in queries}
        if retriever is not None:
            entry = self.model_entry
            ctx = self._context(retriever, entry, split if retriever.trainable else None)
            ctx.split = split
            corpus_list = list(data.corpus.values())
            if retriever.trainable:
                train_queries = [data.queries[q] for q in split.train]
                # only the training queries' judgements: a model never sees a test query's
                train_qrels = {q: dict(data.qrels[q]) for q in split.train if q in data.qrels}
                _timed(timings, "train", lambda: call_plugin(
                    entry, f"training on {split.name}", lambda: retriever.train(train_queries, train_qrels, corpus_list, ctx)))
            if retriever.trainable or not self._indexed:
                _timed(timings, "index", lambda: call_plugin(entry, "indexing", lambda: retriever.index(corpus_list, ctx)))
                self._indexed = True
                self.measured.add_index(ctx.cache_dir)
                if self._fork is None and self._left is not None:  # the index is shared: later splits in a fork
                    self._fork = self._start_fork(split)
            depth = max(self.info.depth, self.request.rerank_depth) if reranker else self.info.depth
            first = self._search(split, queries, depth, ctx, latency=reranker is None)
        else:
            pool = data.pools[self.request.pool]
            first = {q.id: list(pool.get(q.id, [])) for q in queries}
        if reranker is not None:
            entry = self.reranker_entry
            ctx = self._context(reranker, entry, None)
            # every asked query has its candidates, none for a query the first stage ranked
            # nothing for (as for a pool): a reranker reading candidates[q.id] must not fail on it
            candidates = {
                q.id: [doc for doc, _ in order_ranking(first.get(q.id, []), self.request.rerank_depth)] for q in queries
            }
            reranked = _timed(timings, "rerank", lambda: call_plugin(
                entry, f"reranking {split.name}", lambda: reranker.rerank(queries, candidates, data.corpus, ctx)))
            first = check_rankings(reranked, owner=_owner(entry), query_ids=asked, candidates=candidates)
            check_rerank_complete(first, candidates, owner=_owner(entry))
        ordered = {qid: order_ranking(ranking, self.info.depth) for qid, ranking in first.items()}
        self.measured.queries += len(queries)
        throughput = _throughput(retriever, reranker)
        if throughput:
            write_json(staging / "stats.json", throughput)
        spent = ", ".join(f"{step} {timings[step] - before.get(step, 0.0):.1f} s" for step in timings
                          if step not in before or timings[step] != before[step])
        self.log.info("%s: %d test %s ranked (%s)%s", split.name, len(ordered),
                      "query" if len(ordered) == 1 else "queries", spent or "no work",
                      "".join(f"; {name} {value:g}" for name, value in sorted(throughput.items())))
        return ordered

    def _search(self, split: Split, queries: list, depth: int, ctx: RunContext, latency: bool) -> dict[str, Ranking]:
        """The retriever's checked rankings of ``queries``. Where the retriever declares a
        ``query_batch`` and its rankings are the run's (no reranker), it gets that many
        queries per call and each call is timed: the per-query latency
        (:mod:`statbench.run.efficiency`); otherwise every query in one call."""
        entry, retriever = self.model_entry, self.retriever
        size = getattr(retriever, "query_batch", None) if latency else None
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise StatbenchError(f"{_owner(entry)} declares query_batch={size!r}: expected None or an int >= 1 "
                                 "(queries per search call)")
        if size:
            ctx.progress = SharedProgress(ctx.progress, len(queries))
            self.measured.batch_size = size
        out: dict[str, Ranking] = {}
        for batch in batches(queries, size):
            if size:
                ctx.progress.batch = len(batch)
            asked = {q.id for q in batch}
            found, seconds = _seconds(lambda: call_plugin(
                entry, f"searching {split.name}", lambda: retriever.search(batch, depth, ctx)))
            self.timings["search"] = self.timings.get("search", 0.0) + seconds
            if size and batch:
                self.measured.latencies.extend([seconds / len(batch)] * len(batch))
            out.update(check_rankings(found, owner=_owner(entry), query_ids=asked, corpus=self.data.corpus, k=depth))
        return out

    def _context(self, model, entry: Registered, split: Split | None) -> RunContext:
        return RunContext(
            task_name=self.info.name,
            language=self.info.language,
            cache_dir=model_cache_dir(entry, model, self.task_checksum, split),
            cache_root=cache_root(),
            data_checksum=self.task_checksum,
            log=self.log,
            stopwords=self.data.stopwords,
            progress=self.progress,
        )


def _no_progress(description: str, total: int | None = None):
    return lambda n=1: None


def _owner(entry: Registered) -> str:
    kind = "reranker" if issubclass(entry.cls, Reranker) else "model"
    return f"{kind} {entry.name!r} ({entry.qualified})"


def _plugin_record(entry: Registered) -> PluginRecord:
    return PluginRecord(name=entry.plugin.name, distribution=entry.plugin.distribution, version=entry.plugin.version)


def _model_record(entry: Registered, model, trained: bool | None = None) -> ModelRecord:
    """What results record of a model: its parameters with the declared default of each (a
    row's identity and label are computed from these alone, on any machine), its budget,
    and what a reproduction needs to know (``needs_gpu``, ``tolerance``)."""
    return ModelRecord(name=model.name, family=model.family, description=model.description, version=model.version,
                       params=model.params, plugin=_plugin_record(entry), trained=trained,
                       budget=model.budget, defaults=_declared_defaults(model), **model.reproducibility())


def _declared_defaults(model) -> dict[str, Any]:
    """The declared default of each parameter in ``model.params`` (a parameter without a
    declared default, or whose default JSON cannot hold, is left out: it is always shown)."""
    declared = type(model).defaults()
    return {key: declared[key] for key in model.params if key in declared and _json_value(declared[key])}


def _json_value(value) -> bool:
    """Whether ``value`` is plain JSON data a results file can hold (no NaN or infinity)."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, (list, tuple)):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False


def _environment() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "ir_measures": ir_measures_version(),
        **_accelerator(),
    }


def _accelerator() -> dict[str, str]:
    """The GPU a model used, if it used torch on CUDA (timings depend on it). torch is not
    imported here: a run that never loaded it used no GPU."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return {}
    return {"torch": torch.__version__, "accelerator": torch.cuda.get_device_name(torch.cuda.current_device())}
