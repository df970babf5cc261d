"""Fine-tuning shared by the trainable neural models: the one resumable epoch loop
(:func:`fit_epochs`: epoch checkpoints with optimiser and RNG state, verified before a
resume, a JSON-lines training log, AdamW with linear warm-up and decay), and the
contrastive loss of the bi-encoders (in-batch negatives, optional BM25 hard negatives,
temperature).

Everything lives under the split's ``ctx.cache_dir/train``: a run interrupted during
epoch 7 resumes from the end of epoch 6; a finished training is loaded, not repeated."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

from statbench.api import (
    MANIFEST,
    CacheEntry,
    Document,
    Param,
    Qrels,
    Query,
    RunContext,
    StatbenchError,
    json_sha256,
    records_digest,
)
from statbench.models.lexical.bm25 import BM25
from statbench.models.shared.specs import SEED

#: Parameters every trainable neural model accepts (defaults: BSARD protocol, bsard-2022).
TRAIN_PARAMS = {
    "epochs": Param(100, "training epochs", min=1),
    "train_batch_size": Param(22, "training pairs per optimiser step", min=1),
    "lr": Param(2e-5, "AdamW peak learning rate", above=0.0),
    "warmup_steps": Param(500, "steps of linear learning-rate warm-up", min=0),
    "weight_decay": Param(0.01, "AdamW weight decay", min=0.0),
    "max_steps": Param(0, "stop after this many optimiser steps (0: no cap; for short CPU runs)", min=0),
    "seed": SEED,
}


def rng_state() -> dict:
    """Every random generator training draws from (dropout, shuffling), for checkpoints:
    a resumed training then continues exactly as an uninterrupted one would have."""
    import numpy as np
    import torch

    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict | None) -> None:
    import numpy as np
    import torch

    if not state:
        return
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Checkpoints:
    """Epoch checkpoints of one training: ``epoch-N/`` entries (kind ``checkpoint``, keyed
    by the epoch and ``key``, the training's configuration), each sealed with a manifest
    and verified before training resumes from it; only the newest is kept.

    A checkpoint that is damaged (truncated, corrupted, no manifest: an interrupted write)
    or of another configuration is recorded, logged and discarded, and training restarts
    from the newest valid one, or from scratch. :meth:`session` holds the training's
    lock: a second identical run waits, then loads the finished training."""

    def __init__(self, root: Path, key: dict | None = None):
        self.root = Path(root)
        self.key = dict(key or {})

    def entry(self, epoch: int) -> CacheEntry:
        return CacheEntry(self.root / f"epoch-{epoch}", "checkpoint", {"epoch": epoch, **self.key})

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Hold the training's cross-process lock; staging folders found then are stale."""
        from filelock import FileLock

        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.root.parent / f".{self.root.name}.lock")):
            for stale in self.root.glob(".epoch-*.staging-*"):
                logging.getLogger("statbench").info("removing %s, left by an interrupted write", stale)
                shutil.rmtree(stale, ignore_errors=True)
            yield

    def _epochs(self) -> list[int]:
        epochs = []
        for path in self.root.glob("epoch-*"):
            suffix = path.name.split("-", 1)[1]
            if suffix.isdigit():
                epochs.append(int(suffix))
        return sorted(epochs, reverse=True)

    def latest(self) -> tuple[int, Path, dict] | None:
        """The newest valid checkpoint ``(epoch, folder, done.json)``; invalid ones are
        discarded (call within :meth:`session`)."""
        for epoch in self._epochs():
            entry = self.entry(epoch)
            reason = entry.verify()
            if reason is None:
                return epoch, entry.path, json.loads((entry.path / "done.json").read_text("utf-8"))
            entry.invalid(reason)
        return None

    def save(self, epoch: int, save_model: Callable[[Path], None], state: dict, extra: dict | None = None) -> Path:
        """Write epoch ``epoch`` (model files via ``save_model``, optimiser state, ``done.json``),
        sealed and moved into place; older checkpoints are then removed (call within
        :meth:`session`, the lock of every checkpoint of this training)."""
        import torch

        entry = self.entry(epoch)
        with entry.build() as staging:  # under the session's lock
            save_model(staging)
            torch.save(state, staging / "trainer_state.pt")
            (staging / "done.json").write_text(json.dumps({"epoch": epoch, **(extra or {})}, ensure_ascii=False), "utf-8")
        for old in self._epochs():
            if old != epoch:
                shutil.rmtree(self.root / f"epoch-{old}", ignore_errors=True)
        return entry.path

    @staticmethod
    def fingerprint(folder: Path) -> str:
        """Identity of a checkpoint's weights: a digest of its manifest's file hashes
        (``done.json``, which records wall time, left out)."""
        files = json.loads((Path(folder) / MANIFEST).read_text("utf-8"))["files"]
        files.pop("done.json", None)
        return json_sha256(files)[:16]

    def log(self, record: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "train_log.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def training_key(model, ctx: RunContext, pairs: Sequence[Pair], **extra) -> dict:
    """What a training's checkpoints depend on: the model's configuration, the data, the
    training pairs (and e.g. hard negatives)."""
    pairs_digest = records_digest((pair.query_id, pair.query, pair.doc_id) for pair in pairs)
    return {"model": model.config(), "data": ctx.data_checksum, "pairs": pairs_digest, **extra}


def optimizer_and_schedule(parameters, params: dict, total_steps: int):
    """AdamW, linear warm-up over ``warmup_steps`` then linear decay to zero."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    optimizer = torch.optim.AdamW(parameters, lr=float(params["lr"]), weight_decay=float(params["weight_decay"]))
    warmup = min(int(params["warmup_steps"]), max(total_steps - 1, 0))
    return optimizer, get_linear_schedule_with_warmup(optimizer, warmup, max(total_steps, 1))


def optimizer_step(loss, parameters, optimizer, schedule) -> float:
    """Back-propagate, clip gradients to norm 1, step optimizer and schedule; the loss value."""
    import torch

    loss.backward()
    torch.nn.utils.clip_grad_norm_(parameters, 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()
    return float(loss.detach())


def planned_steps(n_examples: int, params: dict) -> tuple[int, int]:
    """(steps per epoch, total steps) after the ``max_steps`` cap."""
    per_epoch = max(1, math.ceil(n_examples / int(params["train_batch_size"])))
    total = per_epoch * int(params["epochs"])
    if int(params["max_steps"]) > 0:
        total = min(total, int(params["max_steps"]))
    return per_epoch, total


@dataclass
class Pair:
    query_id: str
    query: str
    doc_id: str


def training_pairs(queries: Sequence[Query], qrels: Qrels, corpus_ids: set[str], task: str = "") -> list[Pair]:
    """One (query, relevant article) pair per judgement whose article is in the corpus.
    No training queries at all means the task (or split) has no training part: said so."""
    if not queries:
        where = f"task {task!r}" if task else "this task"
        raise StatbenchError(f"no training queries: {where} has no training split (its protocol only evaluates), "
                             f"so a model fine-tuned per split cannot be trained on it; run the zero-shot model "
                             f"(the name without -ft), or fine-tune on a task with a training split and pass the "
                             f"result with --param model=DIR")
    pairs = [
        Pair(q.id, q.text, doc)
        for q in queries
        for doc, grade in sorted(qrels.get(q.id, {}).items())
        if grade > 0 and doc in corpus_ids
    ]
    if not pairs:
        raise StatbenchError("no training pairs: the training queries have no relevant article in the corpus")
    return pairs


def bm25_hard_negatives(queries: Sequence[Query], qrels: Qrels, corpus: Sequence[Document], ctx: RunContext,
                        per_query: int, depth: int = 50) -> dict[str, list[str]]:
    """The top BM25 articles of each training query that are not judged relevant."""
    bm25 = BM25()
    bm25_ctx = replace(ctx, cache_dir=ctx.cache_dir / "bm25-negatives")
    bm25.index(corpus, bm25_ctx)
    rankings = bm25.search(queries, depth, bm25_ctx)
    out = {}
    for query in queries:
        relevant = {d for d, g in qrels.get(query.id, {}).items() if g > 0}
        ranked = sorted(rankings.get(query.id, []), key=lambda item: (-item[1], item[0]))
        out[query.id] = [doc for doc, _ in ranked if doc not in relevant][:per_query]
    return out


def fit_epochs(*, label: str, modules: Sequence, examples: Sequence, batch_loss: Callable[[list], object],
               params: dict, checkpoints: Checkpoints, save_model: Callable[[Path], None],
               restore_model: Callable[[Path], None], ctx: RunContext, progress: str,
               record: dict | None = None) -> dict:
    """The resumable epoch loop of every trainable model, run under the checkpoints' lock.

    AdamW with warm-up (:func:`optimizer_and_schedule`) over the trainable parameters of
    ``modules``; each epoch shuffles ``examples`` (seeded by ``seed`` + epoch) into batches
    of ``train_batch_size`` and takes one optimiser step on ``batch_loss(batch)`` per batch,
    up to ``max_steps``. After each epoch: a line in ``train_log.jsonl`` and a checkpoint
    (weights via ``save_model``, optimiser, schedule, step and every RNG state). A training
    resumes from its newest valid checkpoint (``restore_model(folder)`` loads the weights)
    exactly as an uninterrupted one would have gone on; a finished one is loaded, not
    repeated. ``label`` starts the log lines, ``progress`` names the progress bar, ``record``
    is added to each epoch's summary. Returns the last summary with ``checkpoint``, the
    fingerprint of the saved weights; ``modules`` are left in evaluation mode."""
    with checkpoints.session():
        summary = _fit_epochs(label, modules, examples, batch_loss, params, checkpoints, save_model, restore_model,
                              ctx, progress, record or {})
    for module in modules:
        module.eval()
    return summary


def _fit_epochs(label, modules, examples, batch_loss, params, checkpoints, save_model, restore_model, ctx, progress,
                record) -> dict:
    import torch

    _, total = planned_steps(len(examples), params)
    epochs = int(params["epochs"])
    parameters = [p for m in modules for p in m.parameters() if p.requires_grad]
    optimizer, schedule = optimizer_and_schedule(parameters, params, total)

    start_epoch, step = 0, 0
    resumed = checkpoints.latest()
    if resumed is not None:
        start_epoch, path, info = resumed
        restore_model(path)
        state = torch.load(path / "trainer_state.pt", weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        restore_rng(state.get("rng"))
        step = int(state["step"])
        if info.get("finished"):
            ctx.log.info("%s: loaded after epoch %d from %s (finished earlier, %d steps)", label, start_epoch, path,
                         step)
            return {**info, "checkpoint": Checkpoints.fingerprint(path)}
        ctx.log.info("%s: resuming after epoch %d from %s (step %d)", label, start_epoch, path, step)

    batch_size = int(params["train_batch_size"])
    advance = ctx.progress(progress, total - step)
    started = time.perf_counter()
    summary: dict = {}
    loss_value = float("nan")
    for epoch in range(start_epoch, epochs):
        for module in modules:
            module.train()
        order = list(range(len(examples)))
        random.Random(int(params["seed"]) + epoch).shuffle(order)
        for begin in range(0, len(order), batch_size):
            if step >= total:
                break
            batch = [examples[i] for i in order[begin : begin + batch_size]]
            loss_value = optimizer_step(batch_loss(batch), parameters, optimizer, schedule)
            step += 1
            advance()
        finished = step >= total or epoch + 1 == epochs
        summary = {"epoch": epoch + 1, "step": step, "loss": loss_value, "finished": finished,
                   "seconds": round(time.perf_counter() - started, 3), **record}
        checkpoints.log({**summary, "lr": schedule.get_last_lr()[0]})
        ctx.log.info("%s: epoch %d done, step %d, loss %.4f", label, epoch + 1, step, loss_value)
        saved = checkpoints.save(epoch + 1, save_model,
                                 {"optimizer": optimizer.state_dict(), "schedule": schedule.state_dict(), "step": step,
                                  "rng": rng_state()}, summary)
        summary["checkpoint"] = Checkpoints.fingerprint(saved)
        if finished:
            break
    return summary


def contrastive_fit(
    *,
    query_encoder,
    doc_encoder,
    pairs: list[Pair],
    doc_text: Callable[[str], str],
    qrels: Qrels,
    params: dict,
    temperature: float,
    normalize: bool,
    checkpoints: Checkpoints,
    save_model: Callable[[Path], None],
    restore_model: Callable[[Path], None],
    ctx: RunContext,
    hard_negatives: dict[str, list[str]] | None = None,
    device: str = "cpu",
) -> dict:
    """Train query/doc encoders (the same object for a siamese model) with :func:`fit_epochs`
    on the contrastive NLL over in-batch negatives: row i of ``q @ d.T / temperature`` must
    pick column i. Columns holding another article relevant to query i are masked (not
    false negatives); a query's first hard negative joins the batch's document side."""
    import torch
    import torch.nn.functional as F
    from sentence_transformers.util import batch_to_device

    def batch_loss(batch: list[Pair]):
        doc_ids = [p.doc_id for p in batch]
        for p in batch:  # hard negatives join the batch's document side
            doc_ids.extend(hard_negatives.get(p.query_id, [])[:1] if hard_negatives else [])
        q = _embed(query_encoder, [p.query for p in batch], device, batch_to_device)
        d = _embed(doc_encoder, [doc_text(i) for i in doc_ids], device, batch_to_device)
        if normalize:
            q, d = F.normalize(q, dim=-1), F.normalize(d, dim=-1)
        scores = q @ d.T / temperature
        mask = torch.tensor(
            [[j != i and qrels.get(p.query_id, {}).get(doc, 0) > 0 for j, doc in enumerate(doc_ids)]
             for i, p in enumerate(batch)]
        )
        scores = scores.masked_fill(mask.to(scores.device), float("-inf"))
        return F.cross_entropy(scores, torch.arange(len(batch), device=scores.device))

    modules = [query_encoder] if query_encoder is doc_encoder else [query_encoder, doc_encoder]
    return fit_epochs(label="training", modules=modules, examples=pairs, batch_loss=batch_loss, params=params,
                      checkpoints=checkpoints, save_model=save_model, restore_model=restore_model, ctx=ctx,
                      progress="fine-tuning", record={"pairs": len(pairs)})


def _embed(encoder, texts: list[str], device: str, batch_to_device):
    prepare = getattr(encoder, "preprocess", None) or encoder.tokenize  # renamed in sentence-transformers 5.x
    features = batch_to_device(prepare(texts), device)
    return encoder(features)["sentence_embedding"]
