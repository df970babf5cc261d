"""``statbench fuse``: runs of one task fused into an ordinary output set (run.trec,
qrels.trec, results.json, run.log, replaced as a unit), split by split.

Inputs (:mod:`.inputs`) must be distinct runs (by content), apart from ``--output``
(:mod:`.sources`), and alike before anything is fused: the same task, the same
data (the checksum each output's results recorded, and that of the data scored now), the
same protocol, task version, budget and split layout (every split's queries); a bare run
file must rank the task's queries and only its documents. Each split's test queries are
fused on their own (:mod:`.engine`: ranx), the fused run is checked as any model's output
is, scored with the task's measures, and written by the core's writers; ``results.json``
names every input (its run's sha256 and command) under ``components``."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from statbench.api import StatbenchError, file_sha256
from statbench.data.atomic import write_text
from statbench.data.runfile import write_qrels, write_run
from statbench.loading.splits import select_splits
from statbench.models.fusion.engine import FusionSettings, fuse_rankings
from statbench.models.fusion.inputs import ComponentRun, read_component
from statbench.models.fusion.sources import check_distinct, check_output_apart
from statbench.registry.checks import check_rankings
from statbench.registry.plugins import get_registry
from statbench.results.record import FusedRun, ModelRecord, PluginRecord, Results, RunFile, TaskRecord, write_results
from statbench.run.outputs import OutputSet
from statbench.scoring.evaluate_file import load_scoring_task
from statbench.scoring.evaluation import score_splits

#: the run file's tag, as ``statbench run --model fusion`` writes it
TAG = "statbench-fusion"


@dataclass
class FuseRequest:
    sources: list[Path]
    task: str
    settings: FusionSettings
    output: Path
    data_dir: Path | None = None
    splits: list[str] = field(default_factory=list)
    protocol: str | None = None
    command: str = ""


def fuse(request: FuseRequest, log: logging.Logger):
    """Fuse, score, write; returns the :class:`~statbench.results.record.Results` written."""
    started = time.perf_counter()
    settings = request.settings.checked(len(request.sources))
    check_output_apart(request.output, request.sources)  # an input is never replaced, nor written into
    outputs = OutputSet(request.output)
    outputs.check()  # before any work
    components = [read_component(source) for source in request.sources]
    ranked = [c for c in components if c.rankings]  # an empty run is refused below, as ranking no query
    check_distinct([str(c.source) for c in ranked], [c.digest for c in ranked])
    for c in components:  # before the task is loaded: another task's results need no data to be refused
        if c.results is not None and c.results.task.name != request.task:
            raise StatbenchError(f"{c.source}: results of task {c.results.task.name!r}, not {request.task!r}")
    scoring = load_scoring_task(request.task, request.data_dir, log)
    splits = _check_alike(components, scoring, request, log)
    fused = _fuse_splits(components, splits, scoring, settings, log)
    return _write(request, settings, components, scoring, splits, fused, outputs, log, started)


def _check_alike(components: list[ComponentRun], scoring, request: FuseRequest, log: logging.Logger):
    """The splits to fuse, once every input is of this task, data, protocol, version,
    budget and split layout; else one line naming the input."""
    info, data = scoring.info, scoring.data
    outputs = [c for c in components if c.results is not None]
    protocols = {c.results.task.protocol for c in outputs}
    protocol = request.protocol
    if protocol is None and not request.splits and len(protocols) == 1:
        protocol = next(iter(protocols)) or None
    splits = select_splits(info, data, request.splits or None, protocol)
    chosen = info.protocol_of(s.name for s in splits)
    first_budget = components[0].budget
    for c in components:
        if c.budget != first_budget:
            raise StatbenchError(f"{c.source}: a reduced-budget run ({c.budget or 'full budget'}) cannot be fused "
                                 f"with {components[0].source} ({first_budget or 'full budget'})")
        if c.results is None:
            _check_run_file(c, scoring, splits, log)
            continue
        task = c.results.task
        if task.name != info.name:
            raise StatbenchError(f"{c.source}: results of task {task.name!r}, not {info.name!r}")
        if task.data_checksum != data.checksum:
            raise StatbenchError(f"{c.source}: scored on other data of task {info.name} (data checksum "
                                 f"{task.data_checksum[:12]}, the data here is {data.checksum[:12]}): not fused")
        if (task.version or "1") != (info.version or "1"):
            raise StatbenchError(f"{c.source}: results of task {info.name} version {task.version or '1'}, the "
                                 f"installed task is version {info.version or '1'}: not fused")
        if (task.protocol or "") != (chosen or ""):
            raise StatbenchError(f"{c.source}: a run of protocol {task.protocol or '(hand-picked splits)'!r}, not "
                                 f"{chosen or '(hand-picked splits)'!r} as the other inputs (--protocol / --split)")
        _check_layout(c, splits)
    return splits


def _check_layout(c: ComponentRun, splits) -> None:
    """The output's splits are the ones fused, each scored on queries of that split's test set."""
    recorded = {s.name: s for s in c.results.splits}
    if set(recorded) != {s.name for s in splits}:
        raise StatbenchError(f"{c.source}: splits {', '.join(sorted(recorded))}, not "
                             f"{', '.join(s.name for s in splits)}: another split layout")
    for split in splits:
        outside = set(recorded[split.name].query_ids or ()) - set(split.test)
        if outside:
            raise StatbenchError(f"{c.source}: its split {split.name} scored query {min(outside)!r}, which "
                                 f"the task's split {split.name} does not test: another split layout")


def _check_run_file(c: ComponentRun, scoring, splits, log: logging.Logger) -> None:
    """A bare run file: it ranks some of the evaluated queries, and only the task's documents."""
    tested = {q for s in splits for q in s.test}
    if not tested & set(c.rankings):
        raise StatbenchError(f"{c.source}: the run ranks none of the {len(tested)} queries of task {scoring.name}'s "
                             f"splits (its query ids look like {', '.join(sorted(c.rankings)[:3])}); is it a run "
                             "of another task or split?")
    corpus = scoring.corpus
    for qid in sorted(tested & set(c.rankings)):
        foreign = next((doc for doc, _ in c.rankings[qid] if doc not in corpus), None)
        if foreign is not None:
            raise StatbenchError(f"{c.source}: query {qid!r} ranks document {foreign!r}, which is not in the "
                                 f"corpus of task {scoring.name}: not fused")
    missing = tested - set(c.rankings)
    if missing:  # a model may rank nothing for a query; said, since those queries are fused from the others alone
        log.warning("%s ranks nothing for %d of the %d tested queries (e.g. %s): they are fused from the other "
                    "inputs alone", c.source, len(missing), len(tested), ", ".join(sorted(missing)[:3]))


def _fuse_splits(components, splits, scoring, settings: FusionSettings, log) -> dict:
    """Each split's test queries fused on their own, checked as a model's output is."""
    depth = scoring.info.depth
    fused: dict = {}
    for split in splits:
        tested = list(split.test)
        ranked = fuse_rankings([c.rankings for c in components], tested, settings, depth,
                               labels=[str(c.source) for c in components])
        checked = check_rankings({q: r for q, r in ranked.items() if r}, owner=f"fusion ({settings.describe()}, ranx)",
                                 query_ids=set(tested), corpus=scoring.corpus, k=depth)
        fused.update(checked)
        log.info("%s: %d test queries fused by %s (%d ranked by no input)", split.name, len(tested),
                 settings.describe(), len(tested) - len(checked))
    return fused


def _write(request, settings, components, scoring, splits, fused, outputs, log, started):
    info, data = scoring.info, scoring.data
    t0 = time.perf_counter()
    scores = score_splits(info.measures, data, splits, fused)
    evaluate = time.perf_counter() - t0
    registry = get_registry()
    task_entry, own = registry.get("tasks", info.name), registry.get("retrievers", "fusion")

    def record_of(entry) -> PluginRecord:
        return PluginRecord(name=entry.plugin.name, distribution=entry.plugin.distribution, version=entry.plugin.version)

    labels = [c.label for c in components]
    params = {"runs": ",".join(labels), "method": settings.method, "norm": settings.norm,
              "weights": ",".join(f"{w:g}" for w in settings.weights), "k": settings.k}
    declared = own.cls.defaults()  # recorded beside params: a row's label reads only the record
    with outputs.staged() as staging:
        write_run(staging / "run.trec", fused, TAG)
        write_qrels(staging / "qrels.trec", {q: data.qrels[q] for s in splits for q in s.test if q in data.qrels})
        record = Results.build(
            scores,
            task=TaskRecord(name=info.name, language=info.language, protocol=info.protocol_of(s.name for s in splits),
                            data_checksum=data.checksum, files=list(data.files), dropped=list(data.dropped),
                            version=info.version, corpus_checksum=data.identity.get("corpus"),
                            plugin=record_of(task_entry), corpus_size=data.n_documents),
            model=ModelRecord(name="fusion", family="fusion",
                              description=f"{settings.describe()} of {', '.join(labels)}", version=own.cls.version,
                              params=params, defaults={k: declared[k] for k in params if k in declared},
                              plugin=record_of(own), trained=False, budget=components[0].budget, needs_gpu=False),
            command=request.command or _command(request),
            run_file=RunFile(path="run.trec", sha256=file_sha256(staging / "run.trec")),
            timings={"fuse": round(t0 - started, 4), "evaluate": round(evaluate, 4),
                     "total": round(time.perf_counter() - started, 4)},
            components=[FusedRun(source=str(c.source), run_sha256=c.run_sha256,
                                 command=c.results.command if c.results is not None else None,
                                 model=c.label if c.results is not None else None) for c in components],
        )
        write_results(staging / "results.json", record)
        write_text(staging / "run.log", "".join(f"info: {line}\n" for line in (
            f"fused {len(components)} runs by {settings.describe()}: "
            + "; ".join(f"{c.source} (run sha256 {c.run_sha256[:12]})" for c in components),
            f"wrote run.trec, qrels.trec, results.json to {outputs.target}")))
    log.info("wrote run.trec, qrels.trec, results.json to %s", outputs.target)
    return record


def _command(request: FuseRequest) -> str:
    import shlex

    s = request.settings
    args = ["statbench", "fuse", *map(str, request.sources), "--task", request.task, "--method", s.method]
    if s.norm != "auto":
        args += ["--norm", s.norm]
    if s.weights:
        args += ["--weights", ",".join(f"{w:g}" for w in s.weights)]
    if s.method == "rrf":
        args += ["--k", str(s.k)]
    for split in request.splits:
        args += ["--split", split]
    if request.protocol:
        args += ["--protocol", request.protocol]
    if request.data_dir is not None:
        args += ["--data-dir", str(request.data_dir)]
    return shlex.join([*args, "--output", str(request.output)])
