"""Run one model (optionally plus a reranker) on one task: retrieve, write, score.

The work is cached per split, keyed by everything that determines its output (task data
checksum, model config, reranker config, pool, depth), so an interrupted run resumes
from the splits already on disk and a repeated command does no retrieval work again.
Output files (run, results, log) are written atomically and only once everything has
been scored: a failed run leaves no partial output behind.
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
from .checksum import config_key, file_sha256
from .dataio import read_json
from .errors import StatbenchError, UnknownNameError
from .evaluation import mean_scores, over_splits, per_query_scores
from .params import parse_params
from .paths import cache_root
from .plugins import Registered, get_registry
from .results import write_results
from .runfile import order_ranking, read_run, write_qrels, write_run
from .validation import check_ids

RUN_FORMAT_VERSION = "1"
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
    task: Task = task_entry.cls()
    if request.model is None and request.pool is None:
        raise StatbenchError("give a first stage: --model NAME, or --pool NAME to rerank a frozen pool")
    model_entry = registry.get("retrievers", request.model) if request.model else None
    reranker_entry = registry.get("rerankers", request.reranker) if request.reranker else None
    retriever: Retriever | None = _instantiate(model_entry, request.params) if model_entry else None
    reranker: Reranker | None = _instantiate(reranker_entry, request.reranker_params) if reranker_entry else None

    collector = _ListHandler()
    log.addHandler(collector)
    try:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        data = _timed(timings, "load", lambda: task.load(request.data_dir, log))
        check_ids(task.name, data)
        log.info("%s: %d documents, %d queries, %d judged (data sha256 %s), loaded in %.1f s", task.name,
                 len(data.corpus), len(data.queries), len(data.qrels), data.checksum[:16], timings["load"])
        if request.pool is not None and request.pool not in data.pools:
            raise UnknownNameError(f"pool of task {task.name}", request.pool, data.pools)
        splits = _select_splits(data, request.splits, task.name)
        cache_hits: dict[str, str] = {}
        rankings: dict[str, Ranking] = {}
        state = {"indexed": False}  # a zero-shot retriever indexes once, on the first cache miss
        for split in splits:
            rankings.update(
                _run_split(task, data, split, request, retriever, reranker, timings, cache_hits, log, progress, state)
            )
        t0 = time.perf_counter()
        results = _score(task, data, splits, rankings)
        timings["evaluate"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - started

        out_dir = Path(request.output) if request.output else default_output_dir(request)
        run_path, results_path = out_dir / "run.trec", out_dir / "results.json"
        tag = f"statbench-{request.model or 'pool-' + str(request.pool)}" + (f"+{request.reranker}" if request.reranker else "")
        results.update(
            _provenance(task, data, request, task_entry, model_entry, retriever, reranker_entry, reranker)
        )
        results["timings"] = {k: round(v, 4) for k, v in timings.items()}
        results["cache"] = cache_hits
        # measured now, or recorded when the cached splits were computed
        throughput = _throughput(retriever, reranker) or state.get("cached_throughput", {})
        if throughput:
            results["throughput"] = throughput
        write_run(run_path, rankings, tag)
        # the judgements as evaluated, so `ir_measures qrels.trec run.trec ...` reproduces every figure
        write_qrels(out_dir / "qrels.trec", {q: data.qrels[q] for s in splits for q in s.test if q in data.qrels})
        results["run_file"] = {"path": run_path.name, "sha256": file_sha256(run_path)}
        write_results(results_path, results)
        log.info("wrote %s, %s, %s", run_path, out_dir / "qrels.trec", results_path)
        write_text(out_dir / "run.log", "\n".join(collector.lines) + "\n")
        return RunOutcome(results=results, results_path=results_path, run_path=run_path)
    finally:
        log.removeHandler(collector)


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
    """Build a model from typed params (a dict) or ``KEY=VALUE`` strings (from the CLI)."""
    if not isinstance(params, dict):
        params = parse_params(params, entry.cls.default_params, entry.name)
    return entry.cls(**params)


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
    return [by_name[n] for n in wanted]


def _run_split(task, data, split, request, retriever, reranker, timings, cache_hits, log, progress, state):
    """Rankings for one split's test queries, from the cache when this exact work was done."""
    key = config_key(
        {
            "format": RUN_FORMAT_VERSION,
            "task": task.name,
            "data": data.checksum,
            "split": [split.name, list(split.test), list(split.train) if retriever and retriever.trainable else []],
            "model": retriever.config() if retriever else None,
            # a rebuilt pool of the same name has another checksum, so stale runs are not reused
            "pool": [request.pool, data.pool_info.get(request.pool, {}).get("sha256")] if request.pool else None,
            "reranker": reranker.config() if reranker else None,
            "rerank_depth": request.rerank_depth if reranker else None,
            "depth": task.depth,
        }
    )
    cached = cache_root() / "runs" / task.name / f"{key}.trec"
    stats_file = cached.with_suffix(".stats.json")
    if cached.is_file():
        log.info("%s: reusing cached run %s", split.name, cached)
        cache_hits[split.name] = "hit"
        if stats_file.is_file():
            state.setdefault("cached_throughput", {}).update(read_json(stats_file))
        return read_run(cached)
    cache_hits[split.name] = "miss"
    before = dict(timings)
    queries = [data.queries[q] for q in split.test if q in data.queries]
    corpus_list = list(data.corpus.values())
    if retriever is not None:
        ctx = _context(task, data, retriever, log, progress, split if retriever.trainable else None)
        if retriever.trainable:
            train_queries = [data.queries[q] for q in split.train if q in data.queries]
            _timed(timings, "train", lambda: retriever.train(train_queries, data.qrels, corpus_list, ctx))
        if retriever.trainable or not state["indexed"]:
            _timed(timings, "index", lambda: retriever.index(corpus_list, ctx))
            state["indexed"] = True
        depth = max(task.depth, request.rerank_depth) if reranker else task.depth
        first = _timed(timings, "search", lambda: retriever.search(queries, depth, ctx))
    else:
        first = {q.id: list(data.pools[request.pool].get(q.id, [])) for q in queries}
    if reranker is not None:
        ctx = _context(task, data, reranker, log, progress, None)
        candidates = {
            qid: [doc for doc, _ in order_ranking(r, request.rerank_depth)] for qid, r in first.items()
        }
        first = _timed(timings, "rerank", lambda: reranker.rerank(queries, candidates, data.corpus, ctx))
    ordered = {qid: order_ranking(ranking, task.depth) for qid, ranking in first.items()}
    throughput = _throughput(retriever, reranker)
    if throughput:
        write_json(stats_file, throughput)
    write_run(cached, ordered, "statbench-cache")
    spent = ", ".join(f"{step} {timings[step] - before.get(step, 0.0):.1f} s" for step in timings if step not in before
                      or timings[step] != before[step])
    log.info("%s: %d test %s ranked (%s)%s", split.name, len(ordered), "query" if len(ordered) == 1 else "queries",
             spent or "no work",
             "".join(f"; {name} {value:g}" for name, value in sorted(throughput.items())))
    return ordered


def _context(task, data, model, log, progress, split: Split | None) -> RunContext:
    key = config_key({"model": model.config(), "data": data.checksum, "split": split.name if split else None})
    return RunContext(
        task_name=task.name,
        language=task.language,
        cache_dir=cache_root() / "models" / model.name / key,
        cache_root=cache_root(),
        data_checksum=data.checksum,
        log=log,
        stopwords=data.stopwords,
        progress=progress,
    )


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


def _provenance(task, data, request, task_entry, model_entry, retriever, reranker_entry, reranker) -> dict:
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
    """Score an existing run with the task's measures, split by split (scores used as given)."""
    task = get_registry().get("tasks", task_name).cls()
    rankings = read_run(path)
    data = task.load(data_dir, log)
    splits = _select_splits(data, wanted, task.name)
    unknown = sorted(set(rankings) - set(data.queries))
    if unknown:
        log.warning("%s: %d query id(s) not in task %s ignored (e.g. %s)", path, len(unknown), task.name,
                    ", ".join(unknown[:3]))
    results = _score(task, data, splits, rankings)
    results["run_file"] = {"path": str(path), "sha256": file_sha256(path)}
    return results
