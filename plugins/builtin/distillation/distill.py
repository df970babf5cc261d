"""``statbench distill``: teacher -> student knowledge distillation (ukstat-2025 §4.1).

:func:`distill` runs the whole pipeline for a :class:`DistillRequest`: load the task,
set its evaluation material aside (:mod:`distill_holdout`), read or generate training
queries, retrieve their candidates from the training corpus, score every pair with the
teacher (:mod:`distill_data`), train the student by MSE (:mod:`distill_train`), measure
teacher–student agreement on the training and validation pairs, and write the output
folder as a unit (:class:`DistillOutput`):

- ``model/``: the student, a sentence-transformers CrossEncoder folder that the
  ``cross-encoder`` and ``distilled-modernbert`` rerankers load (``--reranker-param model=DIR/model``);
- ``pairs.jsonl``: the de-duplicated (query, passage, teacher score) set, with its split;
- ``loss_curve.tsv``: training and validation MSE by step and epoch;
- ``distill.json``: configuration, counts, teacher–student Pearson/Spearman, the command."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statbench.api import RunContext, StatbenchError, config_key, fingerprint, ids_digest, text_sha256
from statbench.loading.load import load_task
from statbench.models.dense.training import Checkpoints
from statbench.models.distillation.data import (
    first_stage,
    generate_queries,
    pairs_digest,
    scored_pairs,
    split_by_query,
    teacher_scores,
)
from statbench.models.distillation.holdout import (
    evaluation_holdout,
    normalise_query,
    read_training_queries,
    training_corpus,
)
from statbench.models.distillation.train import (
    DEFAULT_STUDENT,
    TrainSettings,
    agreement,
    predict,
    train_student,
)
from statbench.models.shared import hub
from statbench.registry.plugins import call_plugin, get_registry
from statbench.run.outputs import OutputError, OutputSet
from statbench.storage.paths import cache_root

#: What a distillation output folder holds (anything else there: not ours to replace).
DISTILL_FILES = frozenset({"model", "pairs.jsonl", "loss_curve.tsv", "distill.json"})
#: The English doc2query model used to generate training queries (``--generator``).
DEFAULT_GENERATOR = "doc2query/msmarco-t5-base-v1"


@dataclass
class DistillRequest:
    task: str
    teacher: str
    output: Path
    teacher_params: dict[str, Any] = field(default_factory=dict)
    queries: Path | None = None
    generate: int = 0
    generator: str = DEFAULT_GENERATOR
    retriever: str = "bm25"
    retriever_params: dict[str, Any] = field(default_factory=dict)
    depth: int = 10
    student: str = DEFAULT_STUDENT
    settings: TrainSettings = field(default_factory=TrainSettings)
    val_share: float = 0.1
    data_dir: Path | None = None
    command: str = ""


class DistillOutput(OutputSet):
    """The output folder, replaced as a unit (staging + atomic exchange, as a run's)."""

    def check(self) -> None:
        target = self.target
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            raise OutputError(f"--output {target}: is not a folder")
        if target.is_dir():
            foreign = sorted(p.name for p in target.iterdir() if p.name not in DISTILL_FILES)
            if foreign:
                raise OutputError(f"--output {target}: holds files `statbench distill` does not write (e.g. "
                                  f"{foreign[0]!r}); give an empty folder or a previous distillation's folder")
        target.parent.mkdir(parents=True, exist_ok=True)


def _context(task_name: str, language: str, cache_dir: Path, checksum: str, data, log, progress) -> RunContext:
    return RunContext(task_name=task_name, language=language, cache_dir=cache_dir, cache_root=cache_root(),
                      data_checksum=checksum, log=log, stopwords=data.stopwords, progress=progress)


def distill(request: DistillRequest, log: logging.Logger, progress) -> dict:
    """Run the pipeline; returns the report written to ``distill.json``."""
    registry = get_registry()
    task_entry = registry.get("tasks", request.task)
    teacher_entry = registry.get("rerankers", request.teacher)
    retriever_entry = registry.get("retrievers", request.retriever)
    if request.queries is None and request.generate <= 0:
        raise StatbenchError("give training queries with --queries FILE, or --generate N to generate them with "
                             "doc2query from training passages")
    output = DistillOutput(request.output)
    output.check()
    teacher = call_plugin(teacher_entry, "starting", lambda: teacher_entry.cls(**request.teacher_params))
    retriever = call_plugin(retriever_entry, "starting", lambda: retriever_entry.cls(**request.retriever_params))

    loaded = load_task(task_entry, request.data_dir, log)
    loaded.say_notes(log)
    task, info, data = loaded.task, loaded.info, loaded.data
    holdout = evaluation_holdout(info.name, data, task.data_folder(request.data_dir))
    corpus = training_corpus(data.corpus, holdout)
    log.info("distill: %d evaluation passages held out (%d instruments), %d training passages",
             len(data.corpus) - len(corpus), len(holdout.instruments), len(corpus))
    if not corpus:
        raise StatbenchError(f"task {info.name}: no passage is left for training once evaluation passages are removed")
    checksum = text_sha256(f"{data.checksum}:{ids_digest(sorted(corpus))}")
    work = cache_root() / "distill" / "work"

    queries = read_training_queries(request.queries, holdout, data.corpus) if request.queries else []
    from_file = len(queries)
    if request.generate > 0:
        gen_ctx = _context(info.name, info.language, work / "generate", checksum, data, log, progress)
        queries += generate_queries(request.generate, request.generator, corpus, holdout,
                                    request.settings.seed, gen_ctx, hub.device(request.settings.device))
    if not queries:
        raise StatbenchError("no training queries (every generated query was empty)")
    asked, seen_texts = [], set()
    for query in queries:  # a query text met twice is scored (and paid for) once
        if normalise_query(query.text) not in seen_texts:
            seen_texts.add(normalise_query(query.text))
            asked.append(query.as_query())

    first_ctx = _context(info.name, info.language,
                         work / "first-stage" / config_key({"r": retriever.config(), "c": checksum}), checksum, data,
                         log, progress)
    candidates = call_plugin(retriever_entry, "retrieving training candidates", lambda: first_stage(
        retriever, asked, corpus, request.depth, first_ctx, f"model {retriever_entry.name!r}"))
    teacher_ctx = _context(info.name, info.language,
                           work / "teacher" / config_key({"t": teacher.config(), "c": checksum}), checksum, data,
                           log, progress)
    scores, sent = call_plugin(teacher_entry, "scoring training pairs", lambda: teacher_scores(
        teacher_entry, teacher, asked, candidates, corpus, teacher_ctx, f"reranker {teacher_entry.name!r}"))
    log.info("distill: teacher %s scored %d training queries (%d read from the cache)", teacher_entry.name,
             sent, len(asked) - sent)
    pairs, duplicates = scored_pairs(asked, scores, corpus)
    if len(pairs) < 2:
        raise StatbenchError(f"only {len(pairs)} (query, passage) pair(s) to learn from; give more training queries")
    train, val = split_by_query(pairs, request.val_share, request.settings.seed)
    log.info("distill: %d pairs (%d duplicates dropped): %d training, %d validation", len(pairs), duplicates,
             len(train), len(val))

    settings = request.settings
    key = {"student": fingerprint(request.student), "train": pairs_digest(train), "val": pairs_digest(val),
           "settings": {k: v for k, v in settings.as_dict().items() if k != "device"}}
    checkpoints = Checkpoints(cache_root() / "distill" / "train" / config_key(key), key)
    train_ctx = _context(info.name, info.language, checkpoints.root, checksum, data, log, progress)
    model, history = train_student(request.student, train, val, settings, checkpoints, train_ctx)
    train_scores = predict(model, train, settings.batch_size)
    val_scores = predict(model, val, settings.batch_size)
    report = {
        "task": info.name,
        "data_checksum": data.checksum,
        "teacher": {"name": teacher_entry.name, "plugin": teacher_entry.qualified, "params": teacher.params},
        "student": {"init": request.student, "settings": settings.as_dict()},
        "first_stage": {"name": retriever_entry.name, "params": retriever.params, "depth": request.depth},
        "holdout": holdout.describe(),
        "queries": {"used": len(asked), "from_file": from_file, "generated": len(queries) - from_file,
                    "duplicates_dropped": len(queries) - len(asked),
                    "file": str(request.queries) if request.queries else None},
        "pairs": {"total": len(pairs), "duplicates_dropped": duplicates, "train": len(train), "val": len(val),
                  "val_share": request.val_share, "split": "by query"},
        "teacher_queries_sent": sent,
        "agreement": {"train": agreement([p.score for p in train], train_scores),
                      "val": agreement([p.score for p in val], val_scores)},
        "loss_curve": history,
        "command": request.command,
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "reranker": "statbench run --task TASK --pool POOL --reranker cross-encoder --reranker-param model=OUTPUT/model",
    }
    with output.staged() as staging:
        model.save(str(staging / "model"))
        split_of = {id(p): "train" for p in train} | {id(p): "val" for p in val}
        with open(staging / "pairs.jsonl", "w", encoding="utf-8") as handle:
            for pair in pairs:
                handle.write(json.dumps({**pair.as_json(), "split": split_of[id(pair)]}, ensure_ascii=False) + "\n")
        (staging / "loss_curve.tsv").write_text(_loss_table(history), "utf-8")
        (staging / "distill.json").write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str), "utf-8")
    return report


def _loss_table(history: list[dict]) -> str:
    lines = ["epoch\tstep\tsplit\tmse"]
    for row in history:
        for split, name in (("train", "train_loss"), ("val", "val_loss")):
            if name in row:
                lines.append(f"{row['epoch']}\t{row['step']}\t{split}\t{row[name]:.6g}")
    return "\n".join(lines) + "\n"


def replace_settings(settings: TrainSettings, **changes) -> TrainSettings:
    return dataclasses.replace(settings, **{k: v for k, v in changes.items() if v is not None})
