"""BM25 with two backends: bm25s (embedded, the default) and Lucene (``backend=lucene``).

bm25s is sparse-matrix BM25 in pure Python over statbench's analyzers (analysis.py); its
index is built from the cached term ids in a few array operations (bm25_index.py: the
same scores, bit for bit), and a query sums only its terms' postings (as bm25s does);
the Lucene backend indexes with Anserini through pyserini (lucene.py) and Lucene's own
language analyzer, or statbench's tokens with ``analyzer=statbench``.

Named presets reproduce the papers' settings: ``--param preset=bsard`` (k1=1.0, b=0.6),
``--param preset=gdsr`` (k1=2.5, b=0.2); explicit k1/b override a preset."""

from __future__ import annotations

from typing import Sequence

from statbench.api import CacheEntry, Document, Param, Query, Ranking, RunContext, hookimpl
from statbench.models.lexical.base import LexicalRetriever, backend_analysis_params
from statbench.models.lexical.bm25_index import index_bm25s
from statbench.models.lexical.bm25s_import import import_bm25s
from statbench.models.shared.artefacts import load_or_build
from statbench.models.shared.topk import distinct, top_k

BM25S_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
PRESETS = {"default": {}, "bsard": {"k1": 1.0, "b": 0.6}, "gdsr": {"k1": 2.5, "b": 0.2}, "pyserini": {"k1": 0.9, "b": 0.4}}


class BM25(LexicalRetriever):
    name = "bm25"
    family = "lexical"
    #: its search changes nothing the run reads back: splits may be searched in a fork (statbench.run.splitfork)
    fork_search = True
    description = "BM25 (bm25s, or Lucene with backend=lucene); presets: bsard, gdsr, pyserini"
    default_params = {
        "k1": Param(1.2, "term-frequency saturation", min=0.0),
        "b": Param(0.75, "document-length normalisation (0: none, 1: full)", min=0.0, max=1.0),
        "preset": Param("default", "named k1/b of a paper (bsard: 1.0/0.6, gdsr: 2.5/0.2, pyserini: 0.9/0.4); "
                        "explicit k1/b override it", choices=tuple(PRESETS)),
        "method": Param("lucene", "bm25s scoring variant (the bm25s backend only)", choices=BM25S_METHODS,
                        when={"backend": "bm25s"}),
        "backend": Param("bm25s", "bm25s (embedded) or lucene (Anserini through pyserini)", choices=("bm25s", "lucene")),
        **backend_analysis_params("bm25s"),
    }

    def __init__(self, **params):
        preset = params.get("preset", "default")
        # an unknown preset adds nothing here and is refused with the other parameters
        super().__init__(**{**PRESETS.get(preset if isinstance(preset, str) else "", {}), **params})
        self._model = None

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        if self.uses_lucene:
            return self.lucene_index(corpus, ctx)
        bm25s = import_bm25s()

        self._doc_ids = [d.id for d in corpus]
        p = self.params
        key = {"k1": float(p["k1"]), "b": float(p["b"]), "method": p["method"], **self.corpus_key(corpus, ctx)}
        entry = CacheEntry(ctx.cache_dir / "bm25s", "bm25s-index", key)

        def build(staging):
            model = bm25s.BM25(k1=float(p["k1"]), b=float(p["b"]), method=p["method"])
            index_bm25s(model, self.tokenized(corpus, ctx))
            model.save(str(staging))
            return model

        self._model, reused = load_or_build(entry, build, lambda folder: bm25s.BM25.load(str(folder)))
        if reused:
            ctx.log.info("bm25: reusing index %s", entry.path)

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        if self.uses_lucene:
            return self.lucene_search(queries, k, ctx, "bm25", k1=self.params["k1"], b=self.params["b"])
        return self.search_terms(queries, k, ctx, self._model.vocab_dict, self._rank)

    def _rank(self, terms: list[str], k: int) -> Ranking:
        """bm25s's scores (``get_scores``: each term's postings added in query order, in
        float32), and, when the query's postings are few, only the documents they hold are
        considered: the others score 0, which a ranking leaves out."""
        import numpy as np

        model = self._model
        if model.nonoccurrence_array is not None:  # bm25l, bm25+: every document has a score
            return top_k(model.get_scores(terms), self._doc_ids, k)
        data, indices, indptr = model.scores["data"], model.scores["indices"], model.scores["indptr"]
        scores = np.zeros(model.scores["num_docs"], dtype=model.dtype)
        postings = []
        for term in terms:
            term_id = model.vocab_dict[term]
            start, end = indptr[term_id:term_id + 2]
            docs = indices[start:end]  # distinct documents: += adds each once, as np.add.at
            scores[docs] += data[start:end]
            postings.append(docs)
        few = sum(len(docs) for docs in postings) * 8 < len(scores)
        return top_k(scores, self._doc_ids, k, among=distinct(np.concatenate(postings)) if few else None)


@hookimpl
def register_retrievers(register):
    register(BM25)
