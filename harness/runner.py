"""Run one model (optionally plus a reranker) on one task: retrieve, write, score.

The work is cached per split, keyed by everything that determines its output (task
identity and corpus, model plugin and config, reranker, pool, depths: see runcache.py),
so an interrupted run resumes from the splits already on disk and a repeated command does
no retrieval work again. Cached entries verify themselves on read (cache.py).

Everything a plugin returns is checked (checks.py) before it is cached or written, and
anything a plugin raises stops the run with one line naming it. The output set (run,
qrels, results, log) is staged and swapped in as a unit once everything is scored
(outputs.py): a failed or killed run leaves the previous outputs exactly as they were.
"""

from __future__ import annotations

import datetime as _dt
import logging
import platform
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .api import Ranking, Reranker, Retriever, RunContext, Split, Task, TaskData
from .atomic import write_json, write_text
from .cache import CacheEntry, take_events
from .checks import PluginError, check_rankings, check_task_data
from .checksum import file_sha256
from .dataio import read_json
from .errors import StatbenchError, UnknownNameError, one_line
from .evaluation import mean_scores, over_splits, per_query_scores
from .outputs import OutputSet
from .params import parse_params
from .paths import cache_root
from .plugins import Registered, get_registry
from .results import write_results
from .runcache import identity_checksum, model_cache_dir, split_run_entry, task_identity
from .runfile import order_ranking, read_run, write_qrels, write_run

DEFAULT_RERANK_DEPTH = 100


@dataclass
class RunRequest:
    task: str
    model: str | None = None
    #: a dict of typed values, or ``KEY=VALUE`` strings as given on the command line
    params: dict | list[str] = field(default_factory=dict)
    reranker: str | None = None
    reranker_params: dict | list[str] = field(default_factory=dict)
    pool: str | None = None
    splits: list[str] | None = None
    data_dir: Path | None = None
    output: Path | None = None
    command: str = ""
    rerank_depth: int = DEFAULT_RERANK_DEPTH


@dataclass
class RunOutcome:
    results: dict
    results_path: Path
    run_path: Path


class _ListHandler(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(f"{record.levelname.lower()}: {record.getMessage()}")


def default_output_dir(request: RunRequest) -> Path:
    tag = request.model or f"pool-{request.pool}"
    if request.reranker:
        tag += f"+{request.reranker}"
    return Path("statbench-output") / request.task / tag


def execute(request: RunRequest, log: logging.Logger, progress) -> RunOutcome:
    """Validate the request, run it split by split (with caching), score it, write outputs."""
    registry = get_registry()
    task_entry = registry.get("tasks", request.task)
    if request.model is None and request.pool is None:
        raise StatbenchError("give a first stage: --model NAME, or --pool NAME to rerank a frozen pool")
    model_entry = registry.get("retrievers", request.model) if request.model else None
    reranker_entry = registry.get("rerankers", request.reranker) if request.reranker else None
    task: Task = plugin_call(task_entry, "starting", task_entry.cls)
    retriever: Retriever | None = _instantiate(model_entry, request.params) if model_entry else None
    reranker: Reranker | None = _instantiate(reranker_entry, request.reranker_params) if reranker_entry else None
    outputs = OutputSet(Path(request.output) if request.output else default_output_dir(request))
    outputs.check()  # before any work: an unwritable --output must not cost a whole run

    collector = _ListHandler()
    log.addHandler(collector)
    take_events()  # invalid cache entries met from here on are recorded in the results
    try:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        data = _timed(timings, "load", lambda: plugin_call(task_entry, "loading", lambda: task.load(request.data_dir, log)))
        check_task_data(task.name, data)
        identity = task_identity(task_entry, task, data)
        log.info("%s: %d documents, %d queries, %d judged (data sha256 %s), loaded in %.1f s", task.name,
                 len(data.corpus), len(data.queries), len(data.qrels), data.checksum[:16], timings["load"])
        if request.pool is not None and request.pool not in data.pools:
            raise UnknownNameError(f"pool of task {task.name}", request.pool, data.pools)
        splits = _select_splits(data, request.splits, task.name)
        run = _SplitRunner(task, data, identity_checksum(identity), request, task_entry, model_entry, retriever,
                           reranker_entry, reranker, timings, log, progress)
        rankings: dict[str, Ranking] = {}
        for split in splits:
            rankings.update(run.split(split))
        t0 = time.perf_counter()
        results = _score(task, data, splits, rankings)
        timings["evaluate"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - started

        tag = f"statbench-{request.model or 'pool-' + str(request.pool)}" + (f"+{request.reranker}" if request.reranker else "")
        results.update(
            _provenance(task, data, request, task_entry, model_entry, retriever, reranker_entry, reranker, identity)
        )
        results["timings"] = {k: round(v, 4) for k, v in timings.items()}
        results["cache"] = run.cache_hits
        invalid = take_events()
        if invalid:
            results["cache_invalid"] = [event.as_dict() for event in invalid]
        # measured now, or recorded when the cached splits were computed
        throughput = _throughput(retriever, reranker) or run.cached_throughput
        if throughput:
            results["throughput"] = throughput
        with outputs.staged() as staging:
            write_run(staging / "run.trec", rankings, tag)
            # the judgements as evaluated, so `ir_measures qrels.trec run.trec ...` reproduces every figure
            write_qrels(staging / "qrels.trec",
                        {q: data.qrels[q] for s in splits for q in s.test if q in data.qrels})
            results["run_file"] = {"path": "run.trec", "sha256": file_sha256(staging / "run.trec")}
            write_results(staging / "results.json", results)
            log.info("wrote run.trec, qrels.trec, results.json to %s", outputs.target)
            write_text(staging / "run.log", "\n".join(collector.lines) + "\n")
        return RunOutcome(results=results, results_path=outputs.target / "results.json",
                          run_path=outputs.target / "run.trec")
    finally:
        log.removeHandler(collector)


def plugin_call(entry: Registered, stage: str, fn):
    """Call plugin code. A :class:`StatbenchError` it raises is its own clear message;
    anything else (``SystemExit`` included) becomes one line naming the plugin."""
    try:
        return fn()
    except (StatbenchError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - a plugin must never take over the CLI
        logging.getLogger("statbench").debug("plugin traceback", exc_info=True)
        kind = "task" if entry.cls is not None and isinstance(entry.cls, type) and issubclass(entry.cls, Task) else "model"
        raise PluginError(f"{kind} {entry.name!r} ({entry.qualified}) failed while {stage}: "
                          f"{one_line(exc)}") from exc


def _throughput(*models) -> dict[str, float]:
    """Numbers a model chose to report (e.g. passages encoded per second) via an optional
    ``stats`` dict attribute; non-negative numbers only, as the results schema requires."""
    out: dict[str, float] = {}
    for model in models:
        for key, value in (getattr(model, "stats", None) or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                out[str(key)] = round(float(value), 4)
    return out


def equivalent_command(request: RunRequest) -> str:
    """The ``statbench run`` command line that repeats ``request`` (for runs started from Python)."""

    args = ["statbench", "run", "--task", request.task]
    if request.model:
        args += ["--model", request.model]
    args += [a for p in _param_strings(request.params) for a in ("--param", p)]
    if request.pool:
        args += ["--pool", request.pool]
    if request.reranker:
        args += ["--reranker", request.reranker]
        args += [a for p in _param_strings(request.reranker_params) for a in ("--reranker-param", p)]
        if request.rerank_depth != DEFAULT_RERANK_DEPTH:
            args += ["--rerank-depth", str(request.rerank_depth)]
    args += [a for s in request.splits or () for a in ("--split", s)]
    if request.data_dir is not None:
        args += ["--data-dir", str(request.data_dir)]
    if request.output is not None:
        args += ["--output", str(request.output)]
    return shlex.join(args)


def _param_strings(params) -> list[str]:
    if isinstance(params, dict):
        return [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in params.items()]
    return list(params)


def _instantiate(entry: Registered, params):
    """Build a model from typed params (a dict) or ``KEY=VALUE`` strings (from the CLI);
    the model class checks every value against its declared parameters."""
    if not isinstance(params, dict):
        params = parse_params(params, entry.cls.default_params, entry.name)
    return plugin_call(entry, "starting", lambda: entry.cls(**params))


def _timed(timings: dict, key: str, fn):
    t0 = time.perf_counter()
    try:
        return fn()
    finally:
        timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0


def _select_splits(data: TaskData, wanted: list[str] | None, task_name: str) -> list[Split]:
    if not wanted:
        return data.splits
    by_name = {s.name: s for s in [*data.splits, *data.extra_splits]}
    for name in wanted:
        if name not in by_name:
            raise UnknownNameError(f"split of task {task_name}", name, by_name)
    if len(set(wanted)) != len(wanted):
        raise StatbenchError(f"--split: {next(n for n in wanted if wanted.count(n) > 1)!r} is named twice")
    chosen = [by_name[n] for n in wanted]
    seen: dict[str, str] = {}
    for split in chosen:  # one run file holds one ranking per query
        for qid in split.test:
            if qid in seen:
                raise StatbenchError(f"--split {seen[qid]} and --split {split.name} both test query {qid!r}; "
                                     "run them separately")
            seen[qid] = split.name
    return chosen


class _SplitRunner:
    """Rankings for one split's test queries, from the cache when this exact work was done."""

    def __init__(self, task, data, task_checksum, request, task_entry, model_entry, retriever, reranker_entry,
                 reranker, timings, log, progress):
        self.task, self.data, self.task_checksum, self.request = task, data, task_checksum, request
        self.task_entry, self.model_entry, self.retriever = task_entry, model_entry, retriever
        self.reranker_entry, self.reranker = reranker_entry, reranker
        self.timings, self.log, self.progress = timings, log, progress
        self.cache_hits: dict[str, str] = {}
        self.cached_throughput: dict[str, float] = {}
        self._indexed = False  # a zero-shot retriever indexes once, on the first cache miss

    def entry(self, split: Split) -> CacheEntry:
        request = self.request
        pool = (request.pool, self.data.pool_info.get(request.pool, {}).get("sha256")) if request.pool else None
        return split_run_entry(
            self.task.name, self.task_checksum, split, retriever=self.retriever, retriever_entry=self.model_entry,
            pool=pool, reranker=self.reranker, reranker_entry=self.reranker_entry,
            rerank_depth=request.rerank_depth, depth=self.task.depth,
        )

    def split(self, split: Split) -> dict[str, Ranking]:
        entry = self.entry(split)
        if not entry.valid():
            with entry.lock():  # an identical run computing this split: wait, then reuse its work
                reason = entry.verify()
                if reason is not None:
                    if reason != "missing":
                        entry.invalid(reason)
                    self.cache_hits[split.name] = "miss"
                    with entry.build() as staging:
                        self._compute(split, staging)
                    return read_run(entry.file("run.trec"), allow_empty=True)
        self.log.info("%s: reusing cached run %s", split.name, entry.path)
        self.cache_hits[split.name] = "hit"
        if entry.file("stats.json").is_file():
            self.cached_throughput.update(read_json(entry.file("stats.json")))
        return read_run(entry.file("run.trec"), allow_empty=True)

    def _compute(self, split: Split, staging: Path) -> None:
        data, retriever, reranker, timings = self.data, self.retriever, self.reranker, self.timings
        before = dict(timings)
        queries = [data.queries[q] for q in split.test]
        asked = {q.id for q in queries}
        if retriever is not None:
            entry = self.model_entry
            ctx = self._context(retriever, entry, split if retriever.trainable else None)
            corpus_list = list(data.corpus.values())
            if retriever.trainable:
                train_queries = [data.queries[q] for q in split.train]
                _timed(timings, "train", lambda: plugin_call(
                    entry, f"training on {split.name}", lambda: retriever.train(train_queries, data.qrels, corpus_list, ctx)))
            if retriever.trainable or not self._indexed:
                _timed(timings, "index", lambda: plugin_call(entry, "indexing", lambda: retriever.index(corpus_list, ctx)))
                self._indexed = True
            depth = max(self.task.depth, self.request.rerank_depth) if reranker else self.task.depth
            found = _timed(timings, "search", lambda: plugin_call(
                entry, f"searching {split.name}", lambda: retriever.search(queries, depth, ctx)))
            first = check_rankings(found, owner=_owner(entry), query_ids=asked, corpus=data.corpus, k=depth)
        else:
            pool = data.pools[self.request.pool]
            first = {q.id: list(pool.get(q.id, [])) for q in queries}
        if reranker is not None:
            entry = self.reranker_entry
            ctx = self._context(reranker, entry, None)
            candidates = {
                qid: [doc for doc, _ in order_ranking(r, self.request.rerank_depth)] for qid, r in first.items()
            }
            reranked = _timed(timings, "rerank", lambda: plugin_call(
                entry, f"reranking {split.name}", lambda: reranker.rerank(queries, candidates, data.corpus, ctx)))
            first = check_rankings(reranked, owner=_owner(entry), query_ids=asked, candidates=candidates)
        ordered = {qid: order_ranking(ranking, self.task.depth) for qid, ranking in first.items()}
        throughput = _throughput(retriever, reranker)
        if throughput:
            write_json(staging / "stats.json", throughput)
        write_run(staging / "run.trec", ordered, "statbench-cache")
        spent = ", ".join(f"{step} {timings[step] - before.get(step, 0.0):.1f} s" for step in timings
                          if step not in before or timings[step] != before[step])
        self.log.info("%s: %d test %s ranked (%s)%s", split.name, len(ordered),
                      "query" if len(ordered) == 1 else "queries", spent or "no work",
                      "".join(f"; {name} {value:g}" for name, value in sorted(throughput.items())))

    def _context(self, model, entry: Registered, split: Split | None) -> RunContext:
        return RunContext(
            task_name=self.task.name,
            language=self.task.language,
            cache_dir=model_cache_dir(entry, model, self.task_checksum, split),
            cache_root=cache_root(),
            data_checksum=self.task_checksum,
            log=self.log,
            stopwords=self.data.stopwords,
            progress=self.progress,
        )


def _owner(entry: Registered) -> str:
    kind = "reranker" if issubclass(entry.cls, Reranker) else "model"
    return f"{kind} {entry.name!r} ({entry.qualified})"


def _score(task: Task, data: TaskData, splits: list[Split], rankings: dict[str, Ranking]) -> dict:
    measures = task.measures
    all_qids = [q for s in splits for q in s.test if q in data.qrels]
    per_query = per_query_scores(data.qrels, rankings, measures, all_qids)
    split_rows, split_means = [], {}
    for split in splits:
        qids = [q for q in split.test if q in per_query]
        means = mean_scores(per_query, measures, qids)
        split_means[split.name] = means
        split_rows.append(
            {
                "name": split.name,
                "n_queries": len(qids),
                "queries_without_results": sum(1 for q in qids if not rankings.get(q)),
                "scores": means,
            }
        )
    breakdown = {
        group: {
            value: mean_scores(per_query, measures, [q for q in all_qids if members.get(q) == value])
            for value in sorted({members[q] for q in all_qids if q in members})
        }
        for group, members in data.groups.items()
    }
    results = {
        "measures": [{"label": m.label, "ir_measure": m.ir_measure} for m in measures],
        "splits": split_rows,
        "aggregate": over_splits(split_means, measures),
        "all_queries": mean_scores(per_query, measures, all_qids),
        "per_query": per_query,
    }
    if breakdown:
        results["breakdown"] = breakdown
    return results


def _model_record(entry: Registered, model, trained: bool | None = None) -> dict:
    record = {
        "name": model.name,
        "family": model.family,
        "description": model.description,
        "version": model.version,
        "params": model.params,
        "plugin": {"name": entry.plugin.name, "distribution": entry.plugin.distribution, "version": entry.plugin.version},
    }
    if trained is not None:
        record["trained"] = trained
    return record


def _provenance(task, data, request, task_entry, model_entry, retriever, reranker_entry, reranker,
                identity: dict) -> dict:
    if retriever is not None:
        model = _model_record(model_entry, retriever, trained=bool(retriever.trainable))
    else:
        model = {
            "name": f"pool:{request.pool}",
            "family": "pool",
            "description": f"frozen candidate pool {request.pool!r} of task {task.name}",
            "params": {},
            "plugin": {"name": task_entry.plugin.name, "distribution": task_entry.plugin.distribution,
                       "version": task_entry.plugin.version},
        }
    import ir_measures

    return {
        "schema_version": 1,
        "statbench_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "task": {
            "name": task.name,
            "language": task.language,
            "protocol": getattr(task, "definition", {}).get("protocol", ""),
            "data_checksum": data.checksum,
            "files": sorted(p.name for p in data.files),
            "dropped": list(data.dropped),
            "version": task.version,
            "corpus_checksum": identity["corpus"],
            "plugin": {"name": task_entry.plugin.name, "distribution": task_entry.plugin.distribution,
                       "version": task_entry.plugin.version},
        },
        "model": model,
        "reranker": _model_record(reranker_entry, reranker) if reranker else None,
        "pool": request.pool,
        "command": request.command or equivalent_command(request),
        "environment": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "ir_measures": ir_measures.__version__,
            **_accelerator(),
        },
    }


def _accelerator() -> dict[str, str]:
    """The GPU a model used, if it used torch on CUDA (timings depend on it). torch is not
    imported here: a run that never loaded it used no GPU."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return {}
    return {"torch": torch.__version__, "accelerator": torch.cuda.get_device_name(torch.cuda.current_device())}


def evaluate_run_file(path: Path, task_name: str, data_dir: Path | None, wanted: list[str] | None, log) -> dict:
    """Score an existing run with the task's measures, split by split (scores used as given).

    The run is read strictly (runfile.read_run: no NaN/inf, no duplicate lines, not empty);
    query ids the task does not know and documents outside its corpus are reported, and a
    run that answers none of the evaluated queries is refused rather than scored as zeros."""
    entry = get_registry().get("tasks", task_name)
    task = plugin_call(entry, "starting", entry.cls)
    rankings = read_run(path)
    data = plugin_call(entry, "loading", lambda: task.load(data_dir, log))
    check_task_data(task.name, data)
    splits = _select_splits(data, wanted, task.name)
    unknown = sorted(set(rankings) - set(data.queries))
    if unknown:
        log.warning("%s: %d query id(s) not in task %s ignored (e.g. %s)", path, len(unknown), task.name,
                    ", ".join(unknown[:3]))
    evaluated = {q for s in splits for q in s.test if q in data.qrels}
    if not evaluated & set(rankings):
        raise StatbenchError(f"{path}: the run ranks none of the {len(evaluated)} evaluated queries of task "
                             f"{task.name} (its query ids look like {', '.join(sorted(rankings)[:3])}); "
                             "is it a run of another task?")
    foreign = sorted({d for q in evaluated & set(rankings) for d, _ in rankings[q] if d not in data.corpus})
    if foreign:
        log.warning("%s: %d document id(s) are not in the corpus of task %s (e.g. %s); they count as "
                    "non-relevant", path, len(foreign), task.name, ", ".join(foreign[:3]))
    results = _score(task, data, splits, rankings)
    results["run_file"] = {"path": str(path), "sha256": file_sha256(path)}
    return results
