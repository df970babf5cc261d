"""LSI-style statute classifier (stard-2024's "LSI" baseline): the query is classified
over the statutes, one label per article, by an encoder with an MLP head on [CLS];
articles are ranked by class probability.

The label set is every article judged relevant to some training query of the split
(an article never seen in training cannot be predicted). Trained per split; checkpoints
and the training log go to ``ctx.cache_dir/train`` and an interrupted training resumes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence

from statbench.api import (
    Document,
    Param,
    Qrels,
    Query,
    Ranking,
    Retriever,
    RunContext,
    StatbenchError,
    fingerprint,
    hookimpl,
)
from statbench.models.dense.training import (
    TRAIN_PARAMS,
    Checkpoints,
    fit_epochs,
    planned_steps,
    seed_everything,
    training_key,
    training_pairs,
)
from statbench.models.shared import hub
from statbench.models.shared.specs import DEVICE, with_defaults


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

        p = self.params
        tokenizer, encoder = hub.pretrained(p["model"], "AutoModel")
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
        import torch
        import torch.nn.functional as F

        p = self.params
        seed_everything(int(p["seed"]))
        pairs = training_pairs(queries, qrels, {d.id for d in corpus})
        self._labels = sorted({pair.doc_id for pair in pairs})
        label_index = {doc: i for i, doc in enumerate(self._labels)}
        # always start from the shipped encoder and a fresh head: folds never share weights
        self._tokenizer, self._model = self._build(len(self._labels))
        checkpoints = Checkpoints(ctx.cache_dir / "train", training_key(self, ctx, pairs, weights=fingerprint(p["model"])))
        ctx.log.info("lsi: %d labels, %d training pairs, %d steps", len(self._labels), len(pairs),
                     planned_steps(len(pairs), p)[1])

        def batch_loss(batch):
            logits = self._logits([b.query for b in batch])
            target = torch.tensor([label_index[b.doc_id] for b in batch], device=logits.device)
            return F.cross_entropy(logits, target)

        def restore(folder: Path) -> None:
            self._model.load_state_dict(torch.load(folder / "model.pt", weights_only=True))

        fit_epochs(label="lsi", modules=[self._model], examples=pairs, batch_loss=batch_loss, params=p,
                   checkpoints=checkpoints, save_model=self._save, restore_model=restore, ctx=ctx,
                   progress="lsi: training", record={"labels": len(self._labels)})

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
