"""ColBERTv2 late interaction on colbert-ai 0.2.22, as a first stage and as a reranker.

First stage (``colbertv2``): colbert-ai's PLAID index, built by its ``Indexer`` (k-means
centroids, ``nbits`` residual compression) and searched by its ``Searcher``
(``dense_search``: centroid pruning with ``ncells``/``centroid_score_threshold``/``ndocs``,
then MaxSim over the decompressed candidates). The run's scores are the Searcher's. The
index is cached (see :mod:`colbert_index`).

Reranker (``colbertv2``): each candidate is encoded with colbert-ai's ``Checkpoint``
(``docFromText``, the query with ``queryFromText``) and scored with colbert-ai's own
``colbert_score_packed``: exact MaxSim on uncompressed vectors, the same function the
Searcher applies to decompressed ones. Nothing of colbert-ai is re-implemented here.

colbert-ai places the model itself (CUDA when visible, else CPU): there is no ``device``
parameter; hide GPUs with ``CUDA_VISIBLE_DEVICES=`` to run on CPU."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Mapping, Sequence

from statbench.api import (
    Document,
    Param,
    ParamError,
    Query,
    Ranking,
    Reranker,
    Retriever,
    RunContext,
    StatbenchError,
    fingerprint,
    hookimpl,
    one_line,
)
from statbench.models.dense.encoding_cache import corpus_checksum
from statbench.models.late_interaction import colbert_ai
from statbench.models.late_interaction.colbert_index import PlaidIndex
from statbench.models.shared import hub
from statbench.models.shared.specs import BATCH_SIZE

COLBERT_PARAMS = {
    "model": Param("colbert-ir/colbertv2.0", "ColBERT checkpoint (colbert-ai layout): hub id or local folder"),
    "query_maxlen": Param(32, "query tokens, [MASK]-padded (query augmentation)", min=3),
    "doc_maxlen": Param(180, "passage tokens kept", min=3),
    "batch_size": BATCH_SIZE,
}
#: ``ColBERTConfig.nbits`` values colbert-ai's residual codec packs (8 // nbits codes per byte).
NBITS = (1, 2, 4, 8)
_THRESHOLD = r"auto|0(?:\.[0-9]*)?|1(?:\.0*)?|\.[0-9]+"
PLAID_PARAMS = {
    "nbits": Param(2, "bits per dimension of PLAID's compressed residuals (2: the ColBERTv2 paper's setting); "
                      "the checkpoint's dimension must be a multiple of 8*nbits", choices=NBITS),
    "kmeans_niters": Param(4, "k-means iterations for PLAID's centroids (colbert-ai's default)", min=1),
    "ncells": Param(0, "centroids probed per query token (0: colbert-ai's choice for the depth k: "
                       "1 for k <= 10, 2 for k <= 100, else 4)", min=0),
    "centroid_score_threshold": Param("auto", "centroid pruning threshold, 'auto' (colbert-ai's choice for k: "
                                              "0.5, 0.45, 0.4) or a number from 0 to 1",
                                      pattern=_THRESHOLD, pattern_text="'auto' or a number from 0 to 1"),
    "ndocs": Param(0, "candidate passages scored on centroids; the best ndocs/4 get MaxSim on their decompressed "
                      "vectors (0: colbert-ai's choice for k: 256, 1024, max(4k, 4096))", min=0),
}


def local_checkpoint(name: str, flag: str) -> str:
    """A local folder holding the checkpoint ``name`` (a hub id is fetched into the
    Hugging Face cache; offline, the error says where to put a copy)."""

    def folder(resolved: str) -> str:
        if Path(resolved).is_dir():
            return resolved
        from huggingface_hub import snapshot_download

        return snapshot_download(resolved)

    return hub.load(name, folder, flag)


class _ColBERTBase:
    #: The option that takes this plugin's parameters (named in its error messages).
    flag = "--param"

    def __init__(self, **params):
        super().__init__(**params)
        self.stats: dict[str, float] = {}

    def _checkpoint_path(self) -> str:
        if getattr(self, "_path", None) is None:
            self._path = local_checkpoint(self.params["model"], self.flag)
        return self._path

    def _encoding_settings(self) -> dict:
        return {"query_maxlen": int(self.params["query_maxlen"]), "doc_maxlen": int(self.params["doc_maxlen"])}


class ColBERTRetriever(_ColBERTBase, Retriever):
    name = "colbertv2"
    family = "late-interaction"
    description = "ColBERTv2 on colbert-ai: PLAID index and Searcher (colbert-ir/colbertv2.0)"
    default_params = {**COLBERT_PARAMS, **PLAID_PARAMS}
    version = "2"

    def _knobs(self) -> dict:
        """The Searcher's pruning settings (None: colbert-ai chooses for the depth k)."""
        p = self.params
        threshold = p["centroid_score_threshold"]
        return {"ncells": int(p["ncells"]) or None, "ndocs": int(p["ndocs"]) or None,
                "centroid_score_threshold": None if threshold == "auto" else float(threshold)}

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        p = self.params
        path = self._checkpoint_path()
        nbits, dim = int(p["nbits"]), colbert_ai.checkpoint_dim(path)
        if dim % (8 * nbits):
            usable = [n for n in NBITS if dim % (8 * n) == 0]
            raise ParamError(f"parameter nbits={nbits} for {self.name}: the checkpoint's {dim}-dimensional vectors "
                             f"are not a multiple of 8*nbits; expected one of {', '.join(map(str, usable)) or 'none'}")
        settings = {"checkpoint": fingerprint(p["model"]), "corpus": corpus_checksum(corpus),
                    "colbert_ai": colbert_ai.version(), "doc_maxlen": int(p["doc_maxlen"]), "nbits": nbits,
                    "kmeans_niters": int(p["kmeans_niters"])}
        plaid = PlaidIndex(ctx.cache_root, settings)
        indexing = {**self._encoding_settings(), "nbits": nbits, "kmeans_niters": int(p["kmeans_niters"]),
                    "index_bsize": int(p["batch_size"])}
        plaid.build_or_reuse(corpus, path, indexing, ctx.log)
        meta = plaid.meta
        if plaid.reused:
            ctx.log.info("colbertv2: reusing PLAID index %s (%d passages; no re-indexing)", plaid.dir, len(plaid.ids))
        else:
            ctx.log.info("colbertv2: built PLAID index %s (%d passages, %d token vectors, %d centroids, nbits=%d) "
                         "in %.1f s", plaid.dir, meta["passages"], meta["tokens"], meta["partitions"], nbits,
                         meta["index_seconds"])
        self.stats["corpus_index_cached"] = int(plaid.reused)
        self.stats["index_passages_per_s"] = float(meta.get("passages_per_s", 0.0))
        try:
            self._searcher = plaid.searcher(path, [d.text for d in corpus], ctx.log, **self._encoding_settings())
        except StatbenchError:
            raise
        except Exception as exc:
            raise StatbenchError(f"colbertv2: colbert-ai could not open the PLAID index {plaid.dir}: "
                                 f"{one_line(exc)}") from exc
        self._plaid = plaid

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        if not queries:
            return {}
        t0 = time.perf_counter()
        rankings = self._plaid.search(self._searcher, [q.text for q in queries], k, self._knobs(), ctx.log,
                                      ctx.progress("colbert: PLAID search", len(queries)))
        self.stats["search_queries_per_s"] = len(queries) / max(time.perf_counter() - t0, 1e-9)
        return {query.id: ranking for query, ranking in zip(queries, rankings)}


class ColBERTReranker(_ColBERTBase, Reranker):
    name = "colbertv2"
    flag = "--reranker-param"
    description = "ColBERTv2 MaxSim reranking of the candidates, with colbert-ai's Checkpoint (colbert-ir/colbertv2.0)"
    default_params = dict(COLBERT_PARAMS)
    version = "2"

    def _checkpoint(self, ctx: RunContext):
        if getattr(self, "_ckpt", None) is None:
            try:
                self._ckpt = colbert_ai.load_checkpoint(self._checkpoint_path(), ctx.log, ctx.cache_dir,
                                                        **self._encoding_settings())
            except StatbenchError:
                raise
            except (OSError, ValueError) as exc:
                raise hub.load_error(self.params["model"], exc, self.flag) from exc
        return self._ckpt

    def rerank(self, queries: Sequence[Query], candidates: Mapping[str, Sequence[str]],
               corpus: Mapping[str, Document], ctx: RunContext) -> dict[str, Ranking]:
        import torch

        out: dict[str, Ranking] = {q.id: [] for q in queries}
        needed = sorted({doc for q in queries for doc in candidates.get(q.id, []) if doc in corpus})
        if not needed:
            return out
        ckpt, size = self._checkpoint(ctx), int(self.params["batch_size"])
        from colbert.modeling.colbert import colbert_score_packed

        position = {doc: i for i, doc in enumerate(needed)}
        t0 = time.perf_counter()
        with colbert_ai.session(ctx.log, ctx.cache_dir):
            vectors, lengths = ckpt.docFromText([corpus[d].text for d in needed], bsize=size, keep_dims="flatten",
                                                to_cpu=True)
            self.stats["rerank_passages_per_s"] = len(needed) / max(time.perf_counter() - t0, 1e-9)
            encoded = ckpt.queryFromText([q.text for q in queries], bsize=size, to_cpu=True)
            starts = [0]
            for length in lengths:
                starts.append(starts[-1] + int(length))
            for i, query in enumerate(queries):
                docs = [doc for doc in candidates.get(query.id, []) if doc in position]
                if not docs:
                    continue
                rows = [position[doc] for doc in docs]
                packed = torch.cat([vectors[starts[r] : starts[r + 1]] for r in rows])
                doclens = torch.tensor([int(lengths[r]) for r in rows])
                scores = colbert_score_packed(encoded[i : i + 1], packed, doclens, config=ckpt.colbert_config)
                out[query.id] = [(doc, float(score)) for doc, score in zip(docs, scores.tolist())]
        return out


@hookimpl
def register_retrievers(register):
    register(ColBERTRetriever)


@hookimpl
def register_rerankers(register):
    register(ColBERTReranker)
