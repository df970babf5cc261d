"""``--model mteb --param name=MODEL``: any MTEB model as a statbench retriever.

The model is the one ``mteb.get_model`` gives (:mod:`statbench.models.mteb_bridge.loading`),
with MTEB's prompts and settings: queries and documents are encoded by the model's own
``encode`` through MTEB's dataloaders (prompt type ``query``/``document``, the task's
metadata: an ``mteb:`` task's own, else a retrieval task named after the statbench task),
scored by the model's own ``similarity`` (cosine, dot, ... as its ModelMeta says), and the
top ``depth`` kept, exactly as MTEB's retrieval search does. The corpus encodings are cached
(:class:`statbench.models.dense.encoding_cache.EncodingCache`) under a key naming the model,
its revision and local weights, the task metadata its prompts depend on, mteb's version and
the corpus; a run's identity (cache keys, results) holds the same. Texts are MTEB's: no
chunking (the model truncates at its own maximum length)."""

from __future__ import annotations

import time
from typing import ClassVar, Sequence

from statbench.api import Document, Param, Query, Ranking, Retriever, RunContext, StatbenchError, fingerprint, hookimpl
from statbench.models.dense.encoding_cache import EncodingCache, corpus_checksum
from statbench.models.mteb_bridge.loading import check_available, load_model, mteb_version, pinned_revision
from statbench.models.mteb_bridge.prompts import metadata_identity, task_metadata
from statbench.models.shared import hub
from statbench.models.shared.specs import BATCH_SIZE, DEVICE

#: queries scored against the corpus at once (bounds the score matrix held in memory)
QUERY_BLOCK = 256


class MtebRetriever(Retriever):
    name = "mteb"
    family = "dense"
    description = "Any MTEB model through mteb.get_model, with MTEB's prompts and settings (--param name=MODEL)"
    default_params: ClassVar[dict] = {
        "name": Param("", "MTEB model: its name on MTEB's leaderboard (a hub id) or a local folder"),
        "revision": Param("", "model revision [default: the one MTEB's registry pins]"),
        "with_title": Param(False, "prepend the article's title to its text"),
        "batch_size": BATCH_SIZE,
        "device": DEVICE,
    }
    version = "1"

    def __init__(self, **params):
        super().__init__(**params)
        if not self.params["name"]:
            raise StatbenchError("mteb: give the model with --param name=MODEL (e.g. intfloat/multilingual-e5-small)")
        self.revision = pinned_revision(self.params["name"], self.params["revision"])
        check_available(self.params["name"], self.revision)
        self._model = None
        self._ids: list[str] = []
        self._vectors = None
        self.stats: dict[str, float] = {}

    def config(self) -> dict:
        """The parameters, and what else decides the vectors: the revision used, the local
        weights' files (:func:`statbench.storage.weights.fingerprint`) and mteb's version."""
        config = super().config()
        config["mteb"] = {"revision": self.revision, "weights": fingerprint(self.params["name"]),
                          "version": mteb_version()}
        return config

    # -- the model --------------------------------------------------------------------------
    def _device(self) -> str:
        return hub.device(self.params["device"])

    def model(self):
        if self._model is None:
            model = load_model(self.params["name"], self.revision, self._device())
            if not (callable(getattr(model, "encode", None)) and callable(getattr(model, "similarity", None))):
                raise StatbenchError(f"mteb model {self.params['name']!r} is a {type(model).__name__}, not an encoder "
                                     "(encode + similarity): the bridge runs MTEB's encoders")
            self._model = model
        return self._model

    def _encode(self, texts: list[str], ids: list[str], kind: str, metadata, ctx: RunContext):
        import numpy as np
        from datasets import Dataset
        from mteb._create_dataloaders import create_dataloader
        from mteb.types import PromptType

        prompt = PromptType.query if kind == "query" else PromptType.document
        batch = int(self.params["batch_size"])
        loader = create_dataloader(Dataset.from_dict({"id": ids, "text": texts}), task_metadata=metadata,
                                   prompt_type=prompt, batch_size=batch)
        advance = ctx.progress(f"encoding {'queries' if kind == 'query' else 'corpus'}", len(texts))
        vectors = self.model().encode(loader, task_metadata=metadata, hf_split=metadata.eval_splits[0],
                                      hf_subset="default", prompt_type=prompt, batch_size=batch,
                                      show_progress_bar=False)
        advance(len(texts))
        vectors = np.asarray(vectors.cpu() if hasattr(vectors, "cpu") else vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts) or not np.isfinite(vectors).all():
            raise StatbenchError(f"mteb model {self.params['name']!r} returned {vectors.shape} "
                                 f"{'non-finite ' if vectors.ndim == 2 and vectors.shape[0] == len(texts) else ''}"
                                 f"embeddings for {len(texts)} texts: the bridge needs one finite vector per text")
        return vectors

    # -- indexing and search ---------------------------------------------------------------------
    def _doc_texts(self, corpus: Sequence[Document]) -> list[str]:
        if self.params["with_title"]:
            return [f"{d.title} {d.text}".strip() if d.title else d.text for d in corpus]
        return [d.text for d in corpus]

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        metadata = task_metadata(ctx.task_name, ctx.language)
        config = self.config()
        cache = EncodingCache(ctx.cache_root, {
            "kind": "mteb-doc", "model": self.params["name"], **config["mteb"],
            "task_metadata": metadata_identity(metadata), "corpus": corpus_checksum(corpus, bool(self.params["with_title"])),
        })

        def encode():
            t0 = time.perf_counter()
            ids = [d.id for d in corpus]
            vectors = self._encode(self._doc_texts(corpus), ids, "document", metadata, ctx)
            seconds = time.perf_counter() - t0
            return ids, vectors, {"articles": len(ids), "encode_seconds": round(seconds, 3)}, {}

        encodings = cache.get(encode)
        if encodings.reused:
            ctx.log.info("mteb: reusing corpus encoding %s (%d articles; no re-encoding)", cache.dir, len(encodings.ids))
        self.stats["corpus_encoding_cached"] = int(encodings.reused)
        self._ids = list(encodings.ids)
        self._vectors = encodings.embeddings
        self._metadata = metadata

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        import numpy as np
        import torch

        if not queries:
            return {}
        vectors = self._encode([q.text for q in queries], [q.id for q in queries], "query", self._metadata, ctx)
        k = min(k, len(self._ids))
        out: dict[str, Ranking] = {}
        docs = torch.from_numpy(np.ascontiguousarray(self._vectors))
        for start in range(0, len(queries), QUERY_BLOCK):
            block = torch.from_numpy(vectors[start:start + QUERY_BLOCK])
            scores = torch.as_tensor(self.model().similarity(block, docs)).float().cpu()
            values, rows = torch.topk(scores, k, dim=1, largest=True)
            for i, (vals, idx) in enumerate(zip(values.tolist(), rows.tolist())):
                out[queries[start + i].id] = [(self._ids[j], float(v)) for v, j in zip(vals, idx)]
        return out


@hookimpl
def register_retrievers(register):
    register(MtebRetriever)
