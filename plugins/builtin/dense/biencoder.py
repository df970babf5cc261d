"""Bi-encoders on sentence-transformers: siamese (one encoder) and two-tower (separate
query and article encoders), zero-shot or fine-tuned per split (``*-ft`` names).

Articles are split into overlapping token windows (``chunk_size``/``chunk_overlap``,
default 200/20 as in bsard-2022) and the window embeddings pooled per article (mean or
max). Search is exact: a FAISS flat inner-product index, cached on disk with the
vectors, keyed by encoder + corpus checksum + chunking (see ``encoding_cache``).

Presets name the papers' checkpoints; any hub id or local folder works via
``--param model=...`` (two-tower: ``query_model=...`` for the query side)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar, Sequence

from statbench.api import (
    Document,
    Param,
    ParamError,
    Qrels,
    Query,
    Ranking,
    Retriever,
    RunContext,
    config_key,
    fingerprint,
    hookimpl,
    warn_if_long,
)
from statbench.models.dense.chunking import CHUNK_POOLINGS, chunk_texts, pool_chunks
from statbench.models.dense.encoding_cache import EncodingCache, corpus_checksum
from statbench.models.dense.training import (
    TRAIN_PARAMS,
    Checkpoints,
    bm25_hard_negatives,
    contrastive_fit,
    seed_everything,
    training_key,
    training_pairs,
)
from statbench.models.shared import hub
from statbench.models.shared.specs import BATCH_SIZE, DEVICE, with_defaults

#: name -> (hub id, pooling over tokens, description)
PRESETS = {
    "camembert": ("camembert-base", "mean", "CamemBERT mean-pool bi-encoder (bsard-2022)"),
    "sailer-zh": ("CSHaitao/SAILER_zh", "cls", "SAILER, Chinese legal pre-trained encoder, [CLS] (stard-2024)"),
    "sailer-en": ("CSHaitao/SAILER_en", "cls", "SAILER, English legal pre-trained encoder, [CLS]"),
    "lawformer": ("thunlp/Lawformer", "mean", "Lawformer, Chinese legal Longformer (stard-2024)"),
    "chinese-roberta": ("hfl/chinese-roberta-wwm-ext", "cls", "Chinese-RoBERTa-WWM, [CLS] (stard-2024)"),
    "mpnet": ("sentence-transformers/all-mpnet-base-v2", "auto", "all-mpnet-base-v2 (ukstat-2025 dense pool)"),
    "minilm": ("sentence-transformers/all-MiniLM-L6-v2", "auto", "all-MiniLM-L6-v2 sentence encoder"),
}

POOLINGS = ("auto", "mean", "cls", "max")
ENCODER_PARAMS = {
    "model": Param("", "encoder checkpoint: hub id or local folder (a preset's by default)"),
    "pooling": Param("auto", "token pooling: auto (as the checkpoint says; mean for plain encoders), mean, cls or max",
                     choices=POOLINGS),
    "normalize": Param(True, "cosine similarity (true) or raw inner product (false)"),
    "chunk_size": Param(200, "article window, in encoder tokens", min=1),
    "chunk_overlap": Param(20, "tokens shared by consecutive windows (< chunk_size)", min=0),
    "chunk_pooling": Param("mean", "pooling of an article's window embeddings", choices=CHUNK_POOLINGS),
    "query_max_length": Param(256, "query tokens the encoder reads", min=1),
    "with_title": Param(False, "prepend the article's title (e.g. STARD's law + article number)"),
    "batch_size": BATCH_SIZE,
    "device": DEVICE,
}
TRAINING_PARAMS = {
    "temperature": Param(0.05, "softmax temperature of the contrastive loss", above=0.0),
    "hard_negatives": Param(0, "BM25 hard negatives mined per training query (0: in-batch negatives only)", min=0),
}


def load_encoder(name: str, pooling: str, max_length: int, device: str):
    """A SentenceTransformer for ``name``; with explicit ``pooling`` a Transformer +
    Pooling stack is built (no Normalize module: normalisation is the retriever's job)."""

    def build(path: str):
        from sentence_transformers import SentenceTransformer

        models = _st_modules()

        if pooling == "auto":
            model = SentenceTransformer(path, device=device)
        else:
            word = models.Transformer(path, max_seq_length=max_length)
            dim = (getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension)()
            pool = models.Pooling(dim, pooling_mode=pooling)
            model = SentenceTransformer(modules=[word, pool], device=device)
        limit = getattr(model[0].auto_model.config, "max_position_embeddings", None) or max_length
        # RoBERTa-style models reserve two positions for the padding offset
        offset = 2 if getattr(model[0].auto_model.config, "model_type", "") in ("roberta", "camembert", "xlm-roberta", "longformer") else 0
        model.position_limit = limit - offset
        model.max_seq_length = max(8, min(max_length, model.position_limit))
        model.eval()
        return model

    return hub.load(name, build)


def _st_modules():
    """sentence-transformers' Transformer/Pooling modules (moved in 5.x)."""
    try:
        from sentence_transformers.sentence_transformer import modules

        modules.Transformer, modules.Pooling  # noqa: B018
        return modules
    except (ImportError, AttributeError):
        from sentence_transformers import models

        return models


class BiEncoder(Retriever):
    """Siamese bi-encoder: one encoder for queries and articles."""

    name = "biencoder"
    family = "dense"
    description = "Bi-encoder on any sentence-transformers/HF checkpoint (--param model=HUB_ID_OR_PATH)"
    default_params: ClassVar[dict] = dict(ENCODER_PARAMS)
    version = "1"
    two_tower: ClassVar[bool] = False
    preset_model: ClassVar[str] = ""

    def __init__(self, **params):
        super().__init__(**params)
        size, overlap = self.params["chunk_size"], self.params["chunk_overlap"]
        if overlap >= size:
            raise ParamError(f"parameter chunk_overlap={overlap} for {self.name}: not below chunk_size={size}; "
                             f"expected an int >= 0 and < chunk_size")
        hub.model_or_preset(self.params, self.preset_model, self.name, "--param")
        for checkpoint in {self.params["model"], self.params.get("query_model") or self.params["model"]}:
            hub.check_available(checkpoint)
        self.stats: dict[str, float] = {}
        self._query_encoder = self._doc_encoder = None
        self._trained_tag: str | None = None  # set once fine-tuned for a split
        self._ids: list[str] = []
        self._index = None

    # -- encoders ---------------------------------------------------------------------
    def _device(self) -> str:
        return hub.device(self.params["device"])

    def _doc_max_length(self) -> int:
        return int(self.params["chunk_size"]) + 2

    def _load_initial(self) -> None:
        """The encoders as the checkpoint(s) ship them (before any fine-tuning)."""
        p = self.params
        self._doc_encoder = load_encoder(p["model"], p["pooling"], self._doc_max_length(), self._device())
        if self.two_tower:
            query_name = p.get("query_model") or p["model"]
            self._query_encoder = load_encoder(query_name, p["pooling"], int(p["query_max_length"]), self._device())
        else:
            self._query_encoder = self._doc_encoder
        self._trained_tag = None

    def _encoders(self):
        if self._doc_encoder is None:
            self._load_initial()
        return self._query_encoder, self._doc_encoder

    def _doc_fingerprint(self) -> str:
        base = fingerprint(self.params["model"])
        return f"{base}+{self._trained_tag}" if self._trained_tag else base

    # -- indexing -----------------------------------------------------------------------
    def _doc_texts(self, corpus: Sequence[Document]) -> list[str]:
        if self.params["with_title"]:
            return [f"{d.title} {d.text}".strip() if d.title else d.text for d in corpus]
        return [d.text for d in corpus]

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        import numpy as np

        p = self.params
        cache = EncodingCache(
            ctx.cache_root,
            {
                "kind": "dense-doc",
                "encoder": self._doc_fingerprint(),
                "pooling": p["pooling"],
                "corpus": corpus_checksum(corpus, bool(p["with_title"])),
                "chunk_size": int(p["chunk_size"]),
                "chunk_overlap": int(p["chunk_overlap"]),
                "chunk_pooling": p["chunk_pooling"],
                "normalize": bool(p["normalize"]),
            },
        )

        def encode():
            _, doc_encoder = self._encoders()
            texts = self._doc_texts(corpus)
            t0 = time.perf_counter()
            chunks = chunk_texts(texts, doc_encoder.tokenizer, int(p["chunk_size"]), int(p["chunk_overlap"]))
            ctx.log.info("%s: encoding %d articles as %d passages (windows %d/%d)", self.name, len(texts),
                         len(chunks.texts), p["chunk_size"], p["chunk_overlap"])
            t1 = time.perf_counter()
            passage_vectors = self._encode(doc_encoder, chunks.texts, ctx, "encoding corpus")
            seconds = time.perf_counter() - t1
            vectors = pool_chunks(passage_vectors, chunks.owner, len(texts), p["chunk_pooling"])
            if p["normalize"]:
                vectors = _l2_normalise(vectors)
            rate = len(chunks.texts) / max(seconds, 1e-9)
            meta = {"articles": len(texts), "passages": len(chunks.texts), "encode_seconds": round(seconds, 3),
                    "chunking_seconds": round(t1 - t0, 3), "passages_per_s": round(rate, 3)}
            return [d.id for d in corpus], vectors.astype(np.float32), meta, {}

        encodings = cache.get(encode)
        meta = encodings.meta
        if encodings.reused:
            ctx.log.info("%s: reusing corpus encoding %s (%d articles, %d passages; no re-encoding)",
                         self.name, cache.dir, len(encodings.ids), meta.get("passages", 0))
        else:
            ctx.log.info("%s: encoded %d passages in %.1f s (%.1f passages/s), cached in %s", self.name,
                         meta["passages"], meta["encode_seconds"], meta["passages_per_s"], cache.dir)
        self.stats["corpus_encoding_cached"] = int(encodings.reused)
        self.stats["encode_passages_per_s"] = float(meta.get("passages_per_s", 0.0))
        self.stats["corpus_passages"] = float(meta.get("passages", 0))
        self._ids = list(encodings.ids)
        self._index = encodings.index

    def _encode(self, encoder, texts: list[str], ctx: RunContext, label: str):
        """Encode in length-sorted groups (less padding), with a progress bar; work that will
        take minutes says so first (:func:`_forecast`)."""
        import numpy as np

        if not texts:
            return np.zeros((0, encoder.get_sentence_embedding_dimension()), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batch = int(self.params["batch_size"])
        _forecast(encoder, texts, order, batch, ctx, f"{self.name}: {label} ({len(texts)} texts on {self._device()})")
        group = batch * GROUP_BATCHES
        advance = ctx.progress(label, len(texts))
        parts = []
        for start in range(0, len(order), group):
            chunk = [texts[i] for i in order[start : start + group]]
            parts.append(encoder.encode(chunk, batch_size=batch, convert_to_numpy=True, show_progress_bar=False,
                                        normalize_embeddings=False))
            advance(len(chunk))
        sorted_vectors = np.concatenate(parts).astype(np.float32)
        out = np.empty_like(sorted_vectors)
        out[np.asarray(order)] = sorted_vectors
        return out

    # -- search ---------------------------------------------------------------------------
    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        query_encoder, _ = self._encoders()
        if not queries:
            return {}
        t0 = time.perf_counter()
        with _max_length(query_encoder, int(self.params["query_max_length"])):
            vectors = self._encode(query_encoder, [q.text for q in queries], ctx, "encoding queries")
        self.stats["encode_queries_per_s"] = len(queries) / max(time.perf_counter() - t0, 1e-9)
        if self.params["normalize"]:
            vectors = _l2_normalise(vectors)
        k = min(k, len(self._ids))
        scores, rows = self._index.search(vectors, k)
        return {
            q.id: [(self._ids[j], float(s)) for s, j in zip(scores[i], rows[i]) if j >= 0]
            for i, q in enumerate(queries)
        }

    # -- fine-tuning ------------------------------------------------------------------------
    def train(self, queries: Sequence[Query], qrels: Qrels, corpus: Sequence[Document], ctx: RunContext) -> None:
        """Fine-tune from the initial checkpoint on this split's training queries.

        Always restarts from the shipped weights (never from another fold's model); a
        finished or interrupted training of this split is picked up from its checkpoints."""
        p = self.params
        texts = dict(zip((d.id for d in corpus), self._doc_texts(corpus)))
        pairs = training_pairs(queries, qrels, set(texts), ctx.task_name)  # refused before any loading
        seed_everything(int(p["seed"]))
        self._load_initial()
        query_encoder, doc_encoder = self._encoders()
        negatives = None
        if int(p["hard_negatives"]) > 0:
            negatives = bm25_hard_negatives(queries, qrels, corpus, ctx, int(p["hard_negatives"]))
        run_dir = ctx.cache_dir / "train"
        key = training_key(self, ctx, pairs, weights=[fingerprint(p["model"]), fingerprint(
            p.get("query_model") or p["model"])], negatives=config_key(negatives or {}))
        ctx.log.info("%s: fine-tuning on %d queries (%d pairs), checkpoints in %s", self.name, len(queries),
                     len(pairs), run_dir)
        t0 = time.perf_counter()
        summary = contrastive_fit(
            query_encoder=query_encoder, doc_encoder=doc_encoder, pairs=pairs, doc_text=texts.__getitem__,
            qrels=qrels, params=p, temperature=float(p["temperature"]), normalize=bool(p["normalize"]),
            checkpoints=Checkpoints(run_dir, key), save_model=self._save, restore_model=self._restore, ctx=ctx,
            hard_negatives=negatives, device=self._device(),
        )
        seconds = float(summary.get("seconds") or time.perf_counter() - t0)
        if summary.get("step"):
            self.stats["train_steps_per_s"] = float(summary["step"]) / max(seconds, 1e-9)
        # the fine-tuned weights are identified by their checkpoint's file hashes
        self._trained_tag = f"ft:{summary['checkpoint']}"

    def _save(self, folder: Path) -> None:
        if self.two_tower:
            self._query_encoder.save(str(folder / "query"))
            self._doc_encoder.save(str(folder / "doc"))
        else:
            self._doc_encoder.save(str(folder / "encoder"))

    def _restore(self, folder: Path) -> None:
        """Load saved weights into the live encoders (the optimiser keeps its parameters)."""
        import torch

        pairs = [("query", self._query_encoder), ("doc", self._doc_encoder)] if self.two_tower else [
            ("encoder", self._doc_encoder)]
        for sub, encoder in pairs:
            from sentence_transformers import SentenceTransformer

            saved = SentenceTransformer(str(folder / sub), device="cpu")
            with torch.no_grad():
                encoder.load_state_dict(saved.state_dict())


class TwoTower(BiEncoder):
    name = "two-tower"
    description = "Two-tower bi-encoder: separate query and article encoders (query_model=, model=)"
    default_params: ClassVar[dict] = {
        **ENCODER_PARAMS, "query_model": Param("", "query encoder checkpoint: hub id or local folder (empty: model)")}
    two_tower = True


#: batches per ``encode`` call: the progress bar (and its ETA) moves after each group
GROUP_BATCHES = 4
#: texts below this many batches are encoded without a warm-up (the work is short)
FORECAST_MIN_BATCHES = 16
_clock = time.perf_counter  # tests replace it


def _forecast(encoder, texts: list[str], order: list[int], batch: int, ctx: RunContext, what: str) -> float | None:
    """Time one warm-up batch of texts spread evenly over the length order and, when the
    whole encoding will take more than a few minutes, say so with the estimate before it
    starts. The estimate scales the measured time by padded length (a length-sorted batch
    costs its size times its longest text, in characters): measured, not guessed. The
    warm-up's vectors are discarded (the run's vectors never depend on it)."""
    if len(texts) < FORECAST_MIN_BATCHES * batch:
        return None
    sample = [texts[order[(i * len(order)) // batch]] for i in range(batch)]
    encoder.encode(sample[:2], batch_size=2, convert_to_numpy=True, show_progress_bar=False)  # first-call setup
    t0 = _clock()
    encoder.encode(sample, batch_size=batch, convert_to_numpy=True, show_progress_bar=False)
    seconds = max(_clock() - t0, 1e-9)
    lengths = [max(1, len(texts[i])) for i in order]
    total_cost = sum(min(batch, len(order) - start) * lengths[min(start + batch, len(order)) - 1]
                     for start in range(0, len(order), batch))
    estimate = seconds * total_cost / (batch * max(max(1, len(t)) for t in sample))
    warn_if_long(ctx.log, what, estimate, f"measured on a warm-up batch of {batch} texts: {seconds:.1f} s; "
                                          f"the bar shows the ETA as it goes")
    return estimate


def _l2_normalise(vectors):
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class _max_length:
    """Temporarily set an encoder's ``max_seq_length`` (queries are truncated shorter)."""

    def __init__(self, encoder, length: int):
        self.encoder, self.length = encoder, length

    def __enter__(self):
        self.saved = self.encoder.max_seq_length
        limit = getattr(self.encoder, "position_limit", None) or self.length
        self.encoder.max_seq_length = max(8, min(self.length, limit))
        return self.encoder

    def __exit__(self, *exc):
        self.encoder.max_seq_length = self.saved


def _fine_tuned(base: type, name: str, description: str, preset_model: str = "") -> type:
    return type(
        f"{base.__name__}FT_{name.replace('-', '_')}",
        (base,),
        {
            "__module__": __name__,
            "name": name,
            "description": description,
            "trainable": True,
            "preset_model": preset_model or base.preset_model,
            "default_params": {**base.default_params, **TRAINING_PARAMS, **TRAIN_PARAMS},
        },
    )


def _preset(name: str, hub_id: str, pooling: str, description: str) -> type:
    return type(
        f"BiEncoder_{name.replace('-', '_')}",
        (BiEncoder,),
        {
            "__module__": __name__,
            "name": name,
            "description": f"{description}; zero-shot ({hub_id})",
            "preset_model": hub_id,
            "default_params": with_defaults(ENCODER_PARAMS, model=hub_id, pooling=pooling),
        },
    )


def all_retrievers() -> list[type]:
    out: list[type] = [BiEncoder, TwoTower,
                       _fine_tuned(BiEncoder, "biencoder-ft", "Siamese bi-encoder fine-tuned per split (contrastive)"),
                       _fine_tuned(TwoTower, "two-tower-ft", "Two-tower bi-encoder fine-tuned per split (contrastive)")]
    for name, (hub_id, pooling, description) in PRESETS.items():
        zero_shot = _preset(name, hub_id, pooling, description)
        out.append(zero_shot)
        out.append(_fine_tuned(zero_shot, f"{name}-ft", f"{description}; fine-tuned per split ({hub_id})"))
    return out


@hookimpl
def register_retrievers(register):
    for cls in all_retrievers():
        register(cls)
