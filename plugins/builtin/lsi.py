"""LSI-style statute classifier (stard-2024's "LSI" baseline): the query is classified
over the statutes, one label per article, by an encoder with an MLP head on [CLS];
articles are ranked by class probability.

The label set is every article judged relevant to some training query of the split
(an article never seen in training cannot be predicted). Trained per split; checkpoints
and the training log go to ``ctx.cache_dir/train`` and an interrupted training resumes."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Sequence

from statbench import hookimpl
from statbench.api import Document, Qrels, Query, Ranking, Retriever, RunContext
from statbench.errors import StatbenchError
from statbench.params import Param

from . import hub
from .specs import DEVICE, with_defaults
from .training import TRAIN_PARAMS


class LSIClassifier(Retriever):
    name = "lsi"
    family = "classifier"
    description = "Query classifier over the statutes (encoder + MLP head on [CLS]), ranked by probability"
    trainable = True
    default_params = with_defaults(
        {
            "model": Param("bert-base-chinese", "encoder checkpoint: hub id or local folder"),
            "hidden": Param(512, "width of the MLP head's hidden layer", min=1),
            "dropout": Param(0.1, "dropout rate of the MLP head", min=0.0, below=1.0),
            "max_length": Param(128, "query tokens the encoder reads", min=1),
            "batch_size": Param(32, "queries classified per batch", min=1),
            "device": DEVICE,
            **TRAIN_PARAMS,
        },
        epochs=10, train_batch_size=16, warmup_steps=100, lr=3e-5,
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.stats: dict[str, float] = {}
        self._model = None

    def _build(self, n_labels: int):
        import torch
        from transformers import AutoModel, AutoTokenizer

        p = self.params

        def load(path: str):
            return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)

        tokenizer, encoder = hub.load(p["model"], load)
        hidden = encoder.config.hidden_size
        head = torch.nn.Sequential(
            torch.nn.Dropout(float(p["dropout"])), torch.nn.Linear(hidden, int(p["hidden"])), torch.nn.Tanh(),
            torch.nn.Dropout(float(p["dropout"])), torch.nn.Linear(int(p["hidden"]), n_labels),
        )
        model = torch.nn.ModuleDict({"encoder": encoder, "head": head}).to(hub.device(p["device"]))
        return tokenizer, model

    def _logits(self, texts: list[str]):
        enc = self._tokenizer(texts, padding=True, truncation=True, max_length=int(self.params["max_length"]),
                              return_tensors="pt").to(hub.device(self.params["device"]))
        cls = self._model["encoder"](**enc).last_hidden_state[:, 0]
        return self._model["head"](cls)

    def train(self, queries: Sequence[Query], qrels: Qrels, corpus: Sequence[Document], ctx: RunContext) -> None:
        from .training import Checkpoints, seed_everything, training_key, training_pairs

        p = self.params
        seed_everything(int(p["seed"]))
        pairs = training_pairs(queries, qrels, {d.id for d in corpus})
        self._labels = sorted({pair.doc_id for pair in pairs})
        label_index = {doc: i for i, doc in enumerate(self._labels)}
        # always start from the shipped encoder and a fresh head: folds never share weights
        self._tokenizer, self._model = self._build(len(self._labels))
        checkpoints = Checkpoints(ctx.cache_dir / "train", training_key(self, ctx, pairs, weights=hub.fingerprint(p["model"])))
        with checkpoints.session():
            self._fit(pairs, label_index, checkpoints, ctx)
        self._model.eval()

    def _fit(self, pairs, label_index, checkpoints, ctx: RunContext) -> None:
        import torch
        import torch.nn.functional as F

        from .training import (
            optimizer_and_schedule,
            optimizer_step,
            planned_steps,
            restore_rng,
            rng_state,
        )

        p = self.params
        per_epoch, total = planned_steps(len(pairs), p)
        optimizer, schedule = optimizer_and_schedule(self._model.parameters(), p, total)
        start_epoch, step = 0, 0
        resumed = checkpoints.latest()
        if resumed is not None:
            start_epoch, path, info = resumed
            self._model.load_state_dict(torch.load(path / "model.pt", weights_only=True))
            state = torch.load(path / "trainer_state.pt", weights_only=False)
            optimizer.load_state_dict(state["optimizer"])
            schedule.load_state_dict(state["schedule"])
            restore_rng(state.get("rng"))
            step = int(state["step"])
            ctx.log.info("lsi: %s after epoch %d from %s", "loaded" if info.get("finished") else "resuming",
                         start_epoch, path)
            if info.get("finished"):
                return
        ctx.log.info("lsi: %d labels, %d training pairs, %d steps", len(self._labels), len(pairs), total)
        batch_size = int(p["train_batch_size"])
        advance = ctx.progress("lsi: training", total - step)
        started = time.perf_counter()
        for epoch in range(start_epoch, int(p["epochs"])):
            self._model.train()
            order = list(range(len(pairs)))
            random.Random(int(p["seed"]) + epoch).shuffle(order)
            loss_value = float("nan")
            for begin in range(0, len(order), batch_size):
                if step >= total:
                    break
                batch = [pairs[i] for i in order[begin : begin + batch_size]]
                logits = self._logits([b.query for b in batch])
                target = torch.tensor([label_index[b.doc_id] for b in batch], device=logits.device)
                loss = F.cross_entropy(logits, target)
                loss_value = optimizer_step(loss, self._model.parameters(), optimizer, schedule)
                step += 1
                advance()
            finished = step >= total or epoch + 1 == int(p["epochs"])
            summary = {"epoch": epoch + 1, "step": step, "loss": loss_value, "finished": finished,
                       "seconds": round(time.perf_counter() - started, 3), "labels": len(self._labels)}
            checkpoints.log(summary)
            checkpoints.save(epoch + 1, self._save,
                             {"optimizer": optimizer.state_dict(), "schedule": schedule.state_dict(), "step": step,
                              "rng": rng_state()}, summary)
            if finished:
                break

    def _save(self, folder: Path) -> None:
        import torch

        torch.save(self._model.state_dict(), folder / "model.pt")
        (folder / "labels.json").write_text(json.dumps(self._labels, ensure_ascii=False), "utf-8")

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        """Nothing to index: the label set was fixed by training."""
        if self._model is None:
            raise StatbenchError("lsi must be trained before it can search")

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        import torch

        out: dict[str, Ranking] = {}
        batch = int(self.params["batch_size"])
        k = min(k, len(self._labels))
        advance = ctx.progress("lsi: classifying queries", len(queries))
        t0 = time.perf_counter()
        with torch.inference_mode():
            for start in range(0, len(queries), batch):
                chunk = queries[start : start + batch]
                probs = torch.softmax(self._logits([q.text for q in chunk]).float(), dim=-1).cpu()
                top = torch.topk(probs, k, dim=-1)
                for i, query in enumerate(chunk):
                    out[query.id] = [(self._labels[j], float(s)) for s, j in zip(top.values[i], top.indices[i])]
                advance(len(chunk))
        self.stats["classify_queries_per_s"] = len(queries) / max(time.perf_counter() - t0, 1e-9)
        return out


@hookimpl
def register_retrievers(register):
    register(LSIClassifier)
