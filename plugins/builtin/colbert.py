"""ColBERTv2 late interaction (MaxSim), as a first stage and as a reranker.

The checkpoint is read in colbert-ai's layout (``HF_ColBERT``: a BERT encoder plus
``linear.weight`` projecting to 128 dims) and queries/passages are encoded the way
colbert-ai 0.2.22 does it: ``[CLS] [Q] . query`` padded with ``[MASK]`` to
``query_maxlen`` (query augmentation), ``[CLS] [D] . passage`` truncated to ``doc_maxlen``
with punctuation masked out, every vector L2-normalised; score = sum over query tokens of
the best-matching passage token. The tests check this encoder against colbert-ai's own
``Checkpoint`` on a tiny checkpoint.

Why not colbert-ai's PLAID indexer: it needs its C++/CUDA extensions, k-means over
all token vectors and a distributed launcher, which is not workable on a 2-core CPU
box. The first stage here is ColBERT's exhaustive end-to-end search instead: a FAISS
flat inner-product index over every passage token vector gives candidate passages
(those owning the ``ncandidates`` nearest tokens of each query token), then exact MaxSim
ranks them. Token vectors are cached on disk (float16) keyed by checkpoint + corpus."""

from __future__ import annotations

import string
import time
from typing import Mapping, Sequence

from statbench import hookimpl
from statbench.api import Document, Query, Ranking, Reranker, Retriever, RunContext
from statbench.params import Param

from . import hub
from .encoding_cache import EncodingCache, corpus_checksum
from .specs import BATCH_SIZE, DEVICE

COLBERT_PARAMS = {
    "model": Param("colbert-ir/colbertv2.0", "ColBERT checkpoint (colbert-ai layout): hub id or local folder"),
    "query_maxlen": Param(32, "query tokens, [MASK]-padded (query augmentation)", min=3),
    "doc_maxlen": Param(180, "passage tokens kept", min=3),
    "batch_size": BATCH_SIZE,
    "device": DEVICE,
}


class ColBERTEncoder:
    """colbert-ai's query and document encoders, on transformers."""

    def __init__(self, name: str, query_maxlen: int, doc_maxlen: int, device: str, flag: str = "--param"):
        self.query_maxlen, self.doc_maxlen, self.device = query_maxlen, doc_maxlen, device
        hub.load(name, self._build, flag)

    def _build(self, path: str):
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        config = AutoConfig.from_pretrained(path)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.bert = AutoModel.from_config(config, add_pooling_layer=False) if config.model_type == "bert" \
            else AutoModel.from_config(config)
        state = _read_state(path)
        prefix = next((p for p in ("bert.", "model.", "") if any(k.startswith(p) for k in state)), "")
        encoder_state = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix) and k != "linear.weight"}
        missing, _ = self.bert.load_state_dict(encoder_state, strict=False)
        missing = [m for m in missing if "pooler" not in m and "position_ids" not in m]
        if missing:
            raise ValueError(f"checkpoint lacks encoder weights, e.g. {missing[0]}")
        if "linear.weight" not in state:
            raise ValueError("not a ColBERT checkpoint: no linear.weight (the 128-dim projection)")
        self.linear = torch.nn.Linear(config.hidden_size, state["linear.weight"].shape[0], bias=False)
        self.linear.weight.data.copy_(state["linear.weight"])
        self.bert.to(self.device).eval()
        self.linear.to(self.device).eval()
        tok = self.tokenizer
        self.q_marker = tok.convert_tokens_to_ids("[unused0]")
        self.d_marker = tok.convert_tokens_to_ids("[unused1]")
        self.skip = {tok.encode(symbol, add_special_tokens=False)[0] for symbol in string.punctuation
                     if tok.encode(symbol, add_special_tokens=False)}
        self.skip.add(tok.pad_token_id)
        return self

    def _forward(self, ids, mask):
        import torch

        with torch.inference_mode():
            hidden = self.bert(input_ids=ids.to(self.device), attention_mask=mask.to(self.device))[0]
            return torch.nn.functional.normalize(self.linear(hidden), p=2, dim=2).float().cpu()

    def queries(self, texts: Sequence[str]):
        """``(n, query_maxlen, dim)`` tensor (every position kept, [MASK] padding included)."""
        enc = self.tokenizer([". " + t for t in texts], padding="max_length", truncation=True,
                             max_length=self.query_maxlen, return_tensors="pt")
        ids, mask = enc["input_ids"], enc["attention_mask"]
        ids[:, 1] = self.q_marker
        ids[ids == self.tokenizer.pad_token_id] = self.tokenizer.mask_token_id
        return self._forward(ids, mask)

    def docs(self, texts: Sequence[str], batch_size: int, advance=lambda n=1: None) -> list:
        """One ``(tokens, dim)`` tensor per passage (punctuation and padding dropped)."""
        import torch

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list = [None] * len(texts)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            enc = self.tokenizer([". " + texts[i] for i in batch], padding="longest", truncation="longest_first",
                                 max_length=self.doc_maxlen, return_tensors="pt")
            ids, mask = enc["input_ids"], enc["attention_mask"]
            ids[:, 1] = self.d_marker
            vectors = self._forward(ids, mask)
            keep = mask.bool() & ~torch.isin(ids, torch.tensor(sorted(self.skip)))
            for row, i in enumerate(batch):
                out[i] = vectors[row][keep[row]]
            advance(len(batch))
        return out


def _read_state(path: str) -> dict:
    from pathlib import Path

    folder = Path(path)
    if (folder / "model.safetensors").is_file():
        from safetensors.torch import load_file

        return load_file(str(folder / "model.safetensors"))
    import torch

    return torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)


def maxsim(query, doc) -> float:
    """Sum over query tokens of the best inner product with any passage token."""
    if doc.shape[0] == 0:
        return 0.0
    return float((query @ doc.T).max(dim=1).values.sum())


class _ColBERTBase:
    """What the ColBERT retriever and reranker share: throughput stats, the lazily loaded encoder."""

    #: The option that takes this plugin's parameters (named in its error messages).
    flag = "--param"

    def __init__(self, **params):
        super().__init__(**params)
        self.stats: dict[str, float] = {}

    def _encoder(self) -> ColBERTEncoder:
        if getattr(self, "_enc", None) is None:
            p = self.params
            self._enc = ColBERTEncoder(p["model"], int(p["query_maxlen"]), int(p["doc_maxlen"]), hub.device(p["device"]),
                                       self.flag)
        return self._enc


class ColBERTRetriever(_ColBERTBase, Retriever):
    name = "colbertv2"
    family = "late-interaction"
    description = "ColBERTv2 late interaction, exhaustive token-level search + exact MaxSim (colbert-ir/colbertv2.0)"
    default_params = {**COLBERT_PARAMS,
                      "ncandidates": Param(64, "nearest passage tokens per query token that nominate candidates", min=1)}

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        import numpy as np
        import torch

        p = self.params
        cache = EncodingCache(ctx.cache_root, {"kind": "colbert-tokens", "encoder": hub.fingerprint(p["model"]),
                                               "corpus": corpus_checksum(corpus), "doc_maxlen": int(p["doc_maxlen"])})

        def encode():
            texts = [d.text for d in corpus]
            t0 = time.perf_counter()
            per_doc = self._encoder().docs(texts, int(p["batch_size"]), ctx.progress("colbert: encoding corpus", len(texts)))
            seconds = time.perf_counter() - t0
            lengths = np.array([len(v) for v in per_doc], dtype=np.int64)
            vectors = torch.cat(per_doc).numpy().astype(np.float16) if per_doc else np.zeros((0, 1), np.float16)
            meta = {"passages": len(texts), "tokens": int(lengths.sum()), "encode_seconds": round(seconds, 3),
                    "passages_per_s": round(len(texts) / max(seconds, 1e-9), 3)}
            return [d.id for d in corpus], vectors, meta, {"lengths": lengths}

        encodings = cache.get(encode)
        meta = encodings.meta
        if encodings.reused:
            ctx.log.info("colbertv2: reusing token encodings %s (%d passages; no re-encoding)", cache.dir,
                         len(encodings.ids))
        else:
            ctx.log.info("colbertv2: encoded %d passages (%d tokens) in %.1f s", meta["passages"], meta["tokens"],
                         meta["encode_seconds"])
        self.stats["corpus_encoding_cached"] = int(encodings.reused)
        self.stats["encode_passages_per_s"] = float(meta.get("passages_per_s", 0.0))
        lengths = encodings.extra["lengths"]
        self._ids = list(encodings.ids)
        self._vectors = encodings.embeddings
        self._offsets = np.concatenate([[0], np.cumsum(lengths)])
        self._owner = np.repeat(np.arange(len(self._ids)), lengths)
        self._index = encodings.index

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        import numpy as np
        import torch

        if not queries:
            return {}
        q = self._encoder().queries([x.text for x in queries])
        n_tok = min(int(self.params["ncandidates"]), self._index.ntotal)
        out: dict[str, Ranking] = {}
        advance = ctx.progress("colbert: search", len(queries))
        for i, query in enumerate(queries):
            _, rows = self._index.search(q[i].numpy(), n_tok)
            candidates = np.unique(self._owner[rows[rows >= 0]])
            scored = []
            for doc in candidates:
                d = torch.from_numpy(self._vectors[self._offsets[doc]:self._offsets[doc + 1]].astype(np.float32))
                scored.append((self._ids[doc], maxsim(q[i], d)))
            scored.sort(key=lambda item: (-item[1], item[0]))
            out[query.id] = scored[:k]
            advance()
        return out


class ColBERTReranker(_ColBERTBase, Reranker):
    name = "colbertv2"
    flag = "--reranker-param"
    description = "ColBERTv2 MaxSim reranking of the candidates (colbert-ir/colbertv2.0)"
    default_params = dict(COLBERT_PARAMS)

    def rerank(self, queries: Sequence[Query], candidates: Mapping[str, Sequence[str]],
               corpus: Mapping[str, Document], ctx: RunContext) -> dict[str, Ranking]:
        encoder = self._encoder()
        needed = sorted({doc for q in queries for doc in candidates.get(q.id, []) if doc in corpus})
        t0 = time.perf_counter()
        vectors = dict(zip(needed, encoder.docs([corpus[d].text for d in needed], int(self.params["batch_size"]),
                                                ctx.progress("colbert: encoding candidates", len(needed)))))
        self.stats["rerank_passages_per_s"] = len(needed) / max(time.perf_counter() - t0, 1e-9)
        q = encoder.queries([x.text for x in queries]) if queries else []
        return {
            query.id: [(doc, maxsim(q[i], vectors[doc])) for doc in candidates.get(query.id, []) if doc in vectors]
            for i, query in enumerate(queries)
        }


@hookimpl
def register_retrievers(register):
    register(ColBERTRetriever)


@hookimpl
def register_rerankers(register):
    register(ColBERTReranker)
