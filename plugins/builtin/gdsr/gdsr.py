"""G-DSR (gdsr-2023): the dense statute retriever ``dsr`` and its graph-augmented version
``gdsr``, both trained per split (STARD: each fold on the other four; BSARD: train→test).

``dsr``: a [CLS] query encoder and a hierarchical article encoder (see :mod:`dsr_encoder`),
trained with the contrastive NLL (temperature 0.01, in-batch and optional BM25 hard
negatives), AdamW with 5% warm-up then linear decay (:func:`training.fit_epochs`).
``gdsr``: the same DSR (its training is shared: ``gdsr`` reuses a finished ``dsr`` training
of the same split and settings), then the legislative graph encoder (:mod:`gdsr_lge`) over
the task's structure (:mod:`legal_graph`); articles are ranked by the cosine between the
frozen DSR query vector and the GNN's article vector.

Defaults are the paper's (``preset=paper``). ``preset=cpu-small`` is a budget for a
2-core CPU, named as such in results: frozen passage encoder (the corpus's passage vectors
are computed once and shared by every fold), articles cut at 256 tokens, 1 DSR epoch at
lr 5e-5, LGE batches of 64. Explicit parameters override a preset. Any hub id or local
folder warm-starts the encoders (``model=``, ``query_model=``).

Cached and resumable, under ``$STATBENCH_CACHE``: passage vectors (``dsr-passages/``),
article vectors with their exact FAISS index (``encodings/``), DSR and LGE checkpoints
(``dsr-train/``, ``lge-train/``), the legislative graph (``legal-graph/``)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import ClassVar, Sequence

from statbench.api import (
    Document,
    Param,
    Qrels,
    Query,
    Ranking,
    Retriever,
    RunContext,
    StatbenchError,
    config_key,
    fingerprint,
    hookimpl,
    keyed_entry,
    records_digest,
)
from statbench.models.dense.encoding_cache import EncodingCache
from statbench.models.dense.training import (
    Checkpoints,
    bm25_hard_negatives,
    fit_epochs,
    planned_steps,
    seed_everything,
    training_pairs,
)
from statbench.models.gdsr.dsr_encoder import (
    build_dsr,
    contrastive_loss,
    encode_passages,
    group_passages,
    max_passages,
    pad,
    pool_all,
    split_passages,
)
from statbench.models.gdsr.legal_graph import cached_graph, structure_digest
from statbench.models.gdsr.lge import build_gnn, fit_lge, propagate
from statbench.models.shared import hub
from statbench.models.shared.artefacts import load_or_build
from statbench.models.shared.specs import DEVICE, SEED

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PRESETS = {
    "paper": {},
    "cpu-small": {"train_passage_encoder": False, "max_doc_length": 256, "epochs": 1, "lr": 5e-5,
                  "lge_batch_size": 64},
}
#: Parameters that do not change what DSR learns or outputs (left out of cache keys).
RUNTIME = ("device", "batch_size", "preset")

DSR_PARAMS = {
    "preset": Param("paper", "named budget: paper (the protocol's, gdsr-2023 Table 5) or cpu-small (a 2-core CPU "
                    "budget, see docs/models-gdsr.md); explicit parameters override it", choices=tuple(PRESETS),
                    budget=("cpu-small",)),
    "model": Param(DEFAULT_MODEL, "article (passage) encoder checkpoint: hub id or local folder"),
    "query_model": Param("", "query encoder checkpoint: hub id or local folder (empty: model; separate weights)"),
    "chunk_length": Param(128, "passage length in tokens, specials included", min=8),
    "max_doc_length": Param(1024, "article tokens read (at most max_doc_length // chunk_length passages)", min=8),
    "query_max_length": Param(128, "query tokens read", min=4),
    "context_layers": Param(2, "layers of the passage-level Transformer encoder", min=1),
    "context_heads": Param(12, "its attention heads (the largest divisor of the width up to this)", min=1),
    "context_dropout": Param(0.1, "its dropout", min=0.0, max=0.9),
    "pooling": Param("max", "pooling of the contextualised passage vectors", choices=("max", "mean")),
    "similarity": Param("cos", "cos (cosine) or dot (inner product)", choices=("cos", "dot")),
    "temperature": Param(0.01, "softmax temperature of the contrastive loss", above=0.0),
    "hard_negatives": Param(0, "BM25 hard negatives mined per training query (0: in-batch negatives only)", min=0),
    "train_passage_encoder": Param(True, "fine-tune the passage encoder (false: frozen, passage vectors cached "
                                   "once per corpus; the cpu-small preset)"),
    "epochs": Param(15, "DSR training epochs", min=1),
    "train_batch_size": Param(24, "DSR training pairs per step", min=1),
    "lr": Param(2e-5, "DSR AdamW peak learning rate", above=0.0),
    "warmup_ratio": Param(0.05, "share of DSR steps with linear warm-up (then linear decay)", min=0.0, max=1.0),
    "weight_decay": Param(0.01, "DSR AdamW weight decay", min=0.0),
    "max_steps": Param(0, "stop DSR training after this many steps (0: no cap)", min=0),
    "seed": SEED,
    "batch_size": Param(64, "texts encoded per batch", min=1),
    "device": DEVICE,
}
LGE_PARAMS = {
    "gnn": Param("gatv2", "graph layer: gatv2, gat, gcn or graphsage (gdsr-2023 Table 4)",
                 choices=("gatv2", "gat", "gcn", "graphsage")),
    "gnn_layers": Param(3, "GNN layers (also the hops of each training sub-graph)", min=1),
    "gnn_heads": Param(1, "attention heads of gat/gatv2 layers (averaged)", min=1),
    "gnn_dropout": Param(0.1, "dropout between GNN layers", min=0.0, max=0.9),
    "lge_epochs": Param(10, "LGE training epochs", min=1),
    "lge_batch_size": Param(512, "LGE training pairs per step", min=1),
    "lge_lr": Param(2e-4, "LGE AdamW learning rate (constant)", above=0.0),
    "lge_weight_decay": Param(0.1, "LGE AdamW weight decay", min=0.0),
    "lge_temperature": Param(0.01, "LGE softmax temperature", above=0.0),
}


def _digest(texts: Sequence[str]) -> str:
    return records_digest((text,) for text in texts)


class DSR(Retriever):
    """The dense statute retriever (see the module docstring)."""

    name = "dsr"
    family = "dense"
    description = "DSR (gdsr-2023): hierarchical bi-encoder, trained per split; preset=paper|cpu-small"
    default_params: ClassVar[dict] = dict(DSR_PARAMS)
    trainable = True
    version = "1"

    def __init__(self, **params):
        preset = params.get("preset", "paper")
        # an unknown preset adds nothing here and is refused with the other parameters
        defaults = {k: v for k, v in PRESETS.get(preset if isinstance(preset, str) else "", {}).items()
                    if k in self.default_params}
        super().__init__(**{**defaults, **params})
        p = self.params
        if int(p["chunk_length"]) > int(p["max_doc_length"]):
            raise StatbenchError(f"parameter chunk_length={p['chunk_length']} for {self.name}: above "
                                 f"max_doc_length={p['max_doc_length']}")
        self.stats: dict[str, float] = {}
        self._model = None
        self._dsr_tag: str | None = None  # fingerprint of the trained DSR checkpoint
        self._ids: list[str] = []
        self._index = None

    # -- the model -------------------------------------------------------------------------
    def dsr_settings(self) -> dict:
        """What the DSR part depends on: its parameters (not the LGE's, not runtime ones)."""
        return {k: v for k, v in self.params.items() if k in DSR_PARAMS and k not in RUNTIME}

    def _device(self) -> str:
        return hub.device(self.params["device"])

    def _load_initial(self) -> None:
        """Fresh encoders from the checkpoints and a seeded passage-level encoder."""
        p = self.params
        seed_everything(int(p["seed"]))
        self._tokenizer, passage = hub.pretrained(p["model"])
        self._query_tokenizer, query = hub.pretrained(p["query_model"] or p["model"])
        limit = getattr(passage.config, "max_position_embeddings", 512)
        if int(p["chunk_length"]) > limit:
            raise StatbenchError(f"chunk_length={p['chunk_length']} exceeds the encoder's {limit} positions")
        self._model = build_dsr(query, passage, max_passages(int(p["chunk_length"]), int(p["max_doc_length"])),
                                int(p["context_layers"]), int(p["context_heads"]), float(p["context_dropout"]),
                                p["pooling"]).to(self._device())
        if not p["train_passage_encoder"]:
            for weight in self._model.passage_encoder.parameters():
                weight.requires_grad_(False)
        self._model.eval()
        self._dsr_tag = None

    def _dsr(self):
        if self._model is None:
            self._load_initial()
        return self._model

    def _dsr_identity(self) -> str:
        """The article encoder's identity in cache keys (a trained checkpoint, or the seeded start)."""
        if self._dsr_tag:
            return f"dsr:{self._dsr_tag}"
        return f"init:{fingerprint(self.params['model'])}:{config_key(self.dsr_settings())}"

    # -- encoding ----------------------------------------------------------------------------
    def _passage_vectors(self, texts: list[str], ctx: RunContext, label: str):
        """``(vectors, offsets)`` of ``texts``' passages, cached (``dsr-passages/KEY``): by the
        pretrained encoder when it is frozen (shared by every fold and both models), else by
        the trained checkpoint."""
        import numpy as np

        p = self.params
        frozen = not p["train_passage_encoder"]
        encoder = f"frozen:{fingerprint(p['model'])}" if frozen else self._dsr_identity()
        key = {"encoder": encoder, "texts": _digest(texts), "chunk_length": int(p["chunk_length"]),
               "max_doc_length": int(p["max_doc_length"])}
        entry = keyed_entry(Path(ctx.cache_root) / "dsr-passages", "dsr-passages", key)

        def build(staging: Path):
            model = self._dsr()
            t0 = time.perf_counter()
            passages = split_passages(self._tokenizer, texts, int(p["chunk_length"]), int(p["max_doc_length"]))
            ctx.log.info("%s: encoding %d %s as %d passages (max %d tokens each)", self.name, len(texts), label,
                         len(passages.ids), p["chunk_length"])
            vectors = encode_passages(model, passages, self._tokenizer.pad_token_id or 0, int(p["batch_size"]),
                                      self._device(), ctx.progress(f"encoding {label}", len(passages.ids)))
            seconds = time.perf_counter() - t0
            offsets = np.asarray(passages.offsets, dtype=np.int64)
            np.save(staging / "vectors.npy", vectors)
            np.save(staging / "offsets.npy", offsets)
            (staging / "meta.json").write_text(json.dumps({"passages": len(passages.ids), "seconds": round(seconds, 3)}))
            self.stats["encode_passages_per_s"] = len(passages.ids) / max(seconds, 1e-9)
            return vectors, offsets

        def load(folder: Path):
            return np.load(folder / "vectors.npy"), np.load(folder / "offsets.npy")

        (vectors, offsets), reused = load_or_build(entry, build, load)
        if len(offsets) != len(texts) + 1:
            raise StatbenchError(f"{entry.path}: passage offsets do not match the {len(texts)} texts; delete it")
        if reused:
            ctx.log.info("%s: reusing passage vectors of %d %s (%s)", self.name, len(texts), label, entry.path)
        return vectors, offsets.tolist()

    def _article_encodings(self, corpus: Sequence[Document], ctx: RunContext):
        """The DSR article vectors of ``corpus`` with their exact FAISS index (cached)."""
        p = self.params
        texts = [d.text for d in corpus]
        cache = EncodingCache(ctx.cache_root, {"kind": "dsr-articles", "dsr": self._dsr_identity(),
                                               "texts": _digest(texts), "ids": _digest([d.id for d in corpus]),
                                               "normalize": p["similarity"] == "cos"})

        def encode():
            vectors, offsets = self._passage_vectors(texts, ctx, "articles")
            articles = pool_all(self._dsr(), vectors, offsets, int(p["batch_size"]) * 4, self._device(),
                                ctx.progress("pooling articles", len(texts)))
            return [d.id for d in corpus], self._finish(articles), {"articles": len(texts)}, {}

        encodings = cache.get(encode)
        self.stats["corpus_encoding_cached"] = int(encodings.reused)
        if encodings.reused:
            ctx.log.info("%s: reusing article vectors %s", self.name, cache.dir)
        return encodings

    def _finish(self, vectors):
        """float32, L2-normalised for cosine."""
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32)
        if self.params["similarity"] == "cos":
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors.astype(np.float32)

    def _tokenize_queries(self, texts: list[str]):
        batch = self._query_tokenizer(texts, truncation=True, max_length=int(self.params["query_max_length"]),
                                      padding=True, return_tensors="pt")
        device = self._device()
        return batch["input_ids"].to(device), batch["attention_mask"].to(device)

    def query_vectors(self, texts: list[str], ctx: RunContext):
        """Query [CLS] vectors (float32 numpy, normalised for cosine)."""
        import numpy as np
        import torch

        model = self._dsr()
        batch = int(self.params["batch_size"])
        parts = []
        advance = ctx.progress("encoding queries", len(texts))
        with torch.inference_mode():
            for start in range(0, len(texts), batch):
                chunk = texts[start : start + batch]
                parts.append(model.queries(*self._tokenize_queries(chunk)).float().cpu().numpy())
                advance(len(chunk))
        dim = model.query_encoder.config.hidden_size
        return self._finish(np.concatenate(parts) if parts else np.zeros((0, dim), dtype=np.float32))

    # -- the Retriever API -------------------------------------------------------------------
    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        encodings = self._article_encodings(corpus, ctx)
        self._ids, self._index = list(encodings.ids), encodings.index

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        if not queries:
            return {}
        t0 = time.perf_counter()
        vectors = self.query_vectors([q.text for q in queries], ctx)
        self.stats["encode_queries_per_s"] = len(queries) / max(time.perf_counter() - t0, 1e-9)
        scores, rows = self._index.search(vectors, min(k, len(self._ids)))
        return {q.id: [(self._ids[j], float(s)) for s, j in zip(scores[i], rows[i]) if j >= 0]
                for i, q in enumerate(queries)}

    def train(self, queries: Sequence[Query], qrels: Qrels, corpus: Sequence[Document], ctx: RunContext) -> None:
        """Train DSR from the shipped checkpoints on this split's training queries (a
        finished or interrupted training of the same split and settings is picked up)."""
        p = self.params
        self._load_initial()
        texts = {d.id: d.text for d in corpus}
        pairs = training_pairs(queries, qrels, set(texts))
        negatives = bm25_hard_negatives(queries, qrels, corpus, ctx, int(p["hard_negatives"])) \
            if int(p["hard_negatives"]) > 0 else None
        self._negatives = negatives
        key = {"dsr": self.dsr_settings(), "data": ctx.data_checksum, "pairs": _digest(
            [f"{x.query_id}\0{x.query}\0{x.doc_id}" for x in pairs]), "negatives": config_key(negatives or {}),
            "weights": [fingerprint(p["model"]), fingerprint(p["query_model"] or p["model"])]}
        run_dir = Path(ctx.cache_root) / "dsr-train" / config_key(key)[:16]
        ctx.log.info("%s: training DSR on %d queries (%d pairs), checkpoints in %s", self.name, len(queries),
                     len(pairs), run_dir)
        batch_loss = self._batch_loss(corpus, texts, qrels, negatives, ctx)
        _, total = planned_steps(len(pairs), p)
        fit_params = {**p, "warmup_steps": math.ceil(float(p["warmup_ratio"]) * total)}
        t0 = time.perf_counter()
        summary = fit_epochs(label="dsr", modules=[self._model], examples=pairs, batch_loss=batch_loss,
                             params=fit_params, checkpoints=Checkpoints(run_dir, key), save_model=self._save,
                             restore_model=self._restore, ctx=ctx, progress="training DSR",
                             record={"pairs": len(pairs)})
        seconds = float(summary.get("seconds") or time.perf_counter() - t0)
        if summary.get("step"):
            self.stats["train_steps_per_s"] = float(summary["step"]) / max(seconds, 1e-9)
        self._dsr_tag = summary["checkpoint"]

    def _batch_loss(self, corpus, texts: dict, qrels: Qrels, negatives, ctx: RunContext):
        """The DSR loss of one batch of training pairs (hard negatives join the article side)."""
        import torch

        p = self.params
        model, device = self._model, self._device()
        frozen = not p["train_passage_encoder"]
        if frozen:  # passage vectors never change: computed (or read) once
            vectors, offsets = self._passage_vectors([d.text for d in corpus], ctx, "articles")
            passage_vectors = torch.from_numpy(vectors)
            row = {d.id: i for i, d in enumerate(corpus)}

        def batch_loss(batch):
            doc_ids = [x.doc_id for x in batch]
            for x in batch:
                doc_ids.extend((negatives or {}).get(x.query_id, [])[:1])
            q = model.queries(*self._tokenize_queries([x.query for x in batch]))
            if frozen:
                grouped, mask = group_passages(passage_vectors, offsets, [row[d] for d in doc_ids], device)
            else:
                passages = split_passages(self._tokenizer, [texts[d] for d in doc_ids], int(p["chunk_length"]),
                                          int(p["max_doc_length"]))
                encoded = model.passages(*pad(passages.ids, self._tokenizer.pad_token_id or 0, device))
                grouped, mask = group_passages(encoded, passages.offsets, range(len(doc_ids)), device)
            d = model.pool_articles(grouped, mask)
            return contrastive_loss(q, d, [x.query_id for x in batch], doc_ids, qrels, float(p["temperature"]),
                                    p["similarity"] == "cos")

        return batch_loss

    def _trained_state(self) -> dict:
        """The weights training changes (a frozen passage encoder is not saved)."""
        state = self._model.state_dict()
        if not self.params["train_passage_encoder"]:
            state = {k: v for k, v in state.items() if not k.startswith("passage_encoder.")}
        return state

    def _save(self, folder: Path) -> None:
        import torch

        torch.save(self._trained_state(), folder / "dsr.pt")

    def _restore(self, folder: Path) -> None:
        import torch

        state = torch.load(folder / "dsr.pt", weights_only=True, map_location="cpu")
        missing, unexpected = self._model.load_state_dict(state, strict=False)
        wrong = list(unexpected) + [k for k in missing if not k.startswith("passage_encoder.")]
        if wrong or (missing and self.params["train_passage_encoder"]):
            raise StatbenchError(f"DSR checkpoint {folder} does not fit the model (e.g. {(wrong or missing)[0]}); "
                                 f"delete it")


class GDSR(DSR):
    """DSR + the legislative graph encoder (see the module docstring)."""

    name = "gdsr"
    description = "G-DSR (gdsr-2023): DSR + GATv2 legislative graph encoder, trained per split; preset=paper|cpu-small"
    default_params: ClassVar[dict] = {**DSR_PARAMS, **LGE_PARAMS}

    def __init__(self, **params):
        super().__init__(**params)
        self._lge_tag: str | None = None
        self._gnn = self._features = self._graph = None

    def train(self, queries: Sequence[Query], qrels: Qrels, corpus: Sequence[Document], ctx: RunContext) -> None:
        import torch

        super().train(queries, qrels, corpus, ctx)
        p = self.params
        self._prepare_graph(corpus, ctx)
        pairs = training_pairs(queries, qrels, {d.id for d in corpus})
        wanted = sorted({x.query_id for x in pairs})
        text = {x.query_id: x.query for x in pairs}
        vectors = torch.from_numpy(self.query_vectors([text[q] for q in wanted], ctx))
        query_vectors = dict(zip(wanted, vectors))
        seed_everything(int(p["seed"]))
        self._gnn = build_gnn(p["gnn"], self._features.shape[1], int(p["gnn_layers"]), float(p["gnn_dropout"]),
                              int(p["gnn_heads"]))
        lge = {k: p[k] for k in LGE_PARAMS}
        key = {"dsr": self._dsr_identity(), "lge": lge, "seed": int(p["seed"]), "similarity": p["similarity"],
               "features": self._features_key, "pairs": _digest([f"{x.query_id}\0{x.doc_id}" for x in pairs]),
               "negatives": config_key(self._negatives or {})}
        run_dir = Path(ctx.cache_root) / "lge-train" / config_key(key)[:16]
        ctx.log.info("gdsr: training the graph encoder (%s, %d layers) on %d pairs, checkpoints in %s", p["gnn"],
                     p["gnn_layers"], len(pairs), run_dir)
        article_node = {doc_id: i for i, doc_id in enumerate(self._graph.article_ids)}
        summary = fit_lge(gnn=self._gnn, features=self._features, edge_index=self._edges, article_node=article_node,
                          pairs=pairs, query_vectors=query_vectors, qrels=qrels, hard_negatives=self._negatives,
                          params=p, checkpoints=Checkpoints(run_dir, key), ctx=ctx)
        self._lge_tag = summary["checkpoint"]

    def _prepare_graph(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        """The graph and its node features: DSR article vectors, then the DSR article encoder
        on each section's heading (cached like the articles')."""
        import numpy as np
        import torch

        self._graph = cached_graph(corpus, ctx)
        ctx.log.info("gdsr: graph of %d nodes (%d articles, %d sections)", self._graph.n_nodes,
                     self._graph.n_articles, len(self._graph.sections))
        self.stats["graph_article_nodes"] = float(self._graph.n_articles)
        self.stats["graph_section_nodes"] = float(len(self._graph.sections))
        articles = self._article_encodings(corpus, ctx).embeddings
        titles = self._graph.section_titles()
        vectors, offsets = self._passage_vectors(titles, ctx, "section headings")
        sections = self._finish(pool_all(self._dsr(), vectors, offsets, int(self.params["batch_size"]) * 4,
                                         self._device())) if titles else np.zeros((0, articles.shape[1]), np.float32)
        self._features = torch.from_numpy(np.concatenate([articles, sections]).astype(np.float32))
        self._edges = torch.from_numpy(self._graph.edge_index)
        self._features_key = {"dsr": self._dsr_identity(), "structure": structure_digest(corpus)}

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        if self._gnn is None or self._lge_tag is None:
            raise StatbenchError("gdsr is trained per split: index() ran before train()")
        if self._graph.article_ids != [d.id for d in corpus]:
            raise StatbenchError("gdsr: the corpus indexed differs from the one the graph was built on")
        cache = EncodingCache(ctx.cache_root, {"kind": "gdsr-articles", "lge": self._lge_tag,
                                               "features": self._features_key,
                                               "normalize": self.params["similarity"] == "cos"})

        def encode():
            vectors = propagate(self._gnn, self._features, self._edges, self._graph.n_articles)
            return list(self._graph.article_ids), self._finish(vectors), {"nodes": self._graph.n_nodes}, {}

        encodings = cache.get(encode)
        if encodings.reused:
            ctx.log.info("gdsr: reusing graph-encoded article vectors %s", cache.dir)
        self.stats["graph_encoding_cached"] = int(encodings.reused)
        self._ids, self._index = list(encodings.ids), encodings.index


def all_retrievers() -> list[type]:
    return [DSR, GDSR]


@hookimpl
def register_retrievers(register):
    for cls in all_retrievers():
        register(cls)
