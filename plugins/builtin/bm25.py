"""BM25 with two backends: bm25s (embedded, the default) and Lucene (``backend=lucene``).

bm25s is sparse-matrix BM25 in pure Python over statbench's analyzers (analysis.py);
the Lucene backend indexes with Anserini through pyserini (lucene.py) and Lucene's own
language analyzer, or statbench's tokens with ``analyzer=statbench``.

Named presets reproduce the papers' settings: ``--param preset=bsard`` (k1=1.0, b=0.6),
``--param preset=gdsr`` (k1=2.5, b=0.2); explicit k1/b override a preset."""

from __future__ import annotations

from typing import Callable, Sequence

from statbench import hookimpl
from statbench.api import Document, Query, Ranking, Retriever, RunContext
from statbench.cache import CacheEntry
from statbench.params import Param

from .analysis import SEGMENTER_PARAM, Analyzer, tokenize_corpus
from .artefacts import ids_digest, load_or_build

ANALYZERS = ("default", "statbench")
#: The Lucene backend's analysis: Lucene's own language analyzer, or statbench's tokens.
ANALYZER_PARAM = {"analyzer": Param("default", "the Lucene backend's analysis: default (Lucene's language analyzer) "
                                    "or statbench (statbench's tokens, Lucene's whitespace analyzer)",
                                    choices=ANALYZERS)}
BM25S_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
PRESETS = {"default": {}, "bsard": {"k1": 1.0, "b": 0.6}, "gdsr": {"k1": 2.5, "b": 0.2}, "pyserini": {"k1": 0.9, "b": 0.4}}


class LexicalRetriever(Retriever):
    """Shared plumbing: analyse the corpus (cached), index, analyse queries, search."""

    def analyzer(self, ctx: RunContext) -> Analyzer:
        return Analyzer(ctx.language, stopwords=ctx.stopwords, segmenter=self.params["segmenter"])

    def search_terms(self, queries: Sequence[Query], k: int, ctx: RunContext, vocab,
                     rank: Callable[[list[str], int], Ranking]) -> dict[str, Ranking]:
        """The embedded backends' search loop: each query's analysed terms found in ``vocab``
        go to ``rank(terms, k)``; a query with none gets an empty ranking."""
        analyzer = self.analyzer(ctx)
        k = min(k, len(self._doc_ids))
        out: dict[str, Ranking] = {}
        advance = ctx.progress(f"{self.name} search", len(queries))
        for query in queries:
            terms = [t for t in analyzer(query.text) if t in vocab]
            out[query.id] = rank(terms, k) if terms else []
            advance()
        return out

    def corpus_key(self, corpus: Sequence[Document], ctx: RunContext) -> dict:
        """What an index built from ``tokens`` depends on besides the model's own parameters:
        the data, the documents in order, the analyzer's configuration."""
        return {"data": ctx.data_checksum, "ids": ids_digest(d.id for d in corpus), "analyzer": self.analyzer(ctx).key()}

    def tokens(self, corpus: Sequence[Document], ctx: RunContext) -> list[list[str]]:
        return tokenize_corpus(
            self.analyzer(ctx), [d.id for d in corpus], [d.text for d in corpus], ctx.cache_root,
            ctx.data_checksum, ctx.progress,
        )

    # --- the Lucene backend, shared by BM25 and QL -------------------------------------

    @property
    def uses_lucene(self) -> bool:
        return self.params.get("backend") == "lucene"

    def lucene_index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        from .lucene import LuceneIndex

        self._lucene = LuceneIndex(ctx.cache_dir, ctx.language)
        self._lucene_pretokenized = self.params.get("analyzer") == "statbench"
        if self._lucene_pretokenized:
            self._lucene.build(corpus, ctx, pretokenized=lambda: self.tokens(corpus, ctx),
                               source={"tokens": self.corpus_key(corpus, ctx)})
        else:
            self._lucene.build(corpus, ctx)

    def lucene_search(self, queries: Sequence[Query], k: int, ctx: RunContext, similarity: str, **params):
        searcher = self._lucene.searcher(similarity, **params)
        texts = None
        if self._lucene_pretokenized:
            analyzer = self.analyzer(ctx)
            texts = [" ".join(analyzer(q.text)) for q in queries]
        return self._lucene.search(searcher, queries, k, texts)


class BM25(LexicalRetriever):
    name = "bm25"
    family = "lexical"
    description = "BM25 (bm25s, or Lucene with backend=lucene); presets: bsard, gdsr, pyserini"
    default_params = {
        "k1": Param(1.2, "term-frequency saturation", min=0.0),
        "b": Param(0.75, "document-length normalisation (0: none, 1: full)", min=0.0, max=1.0),
        "preset": Param("default", "named k1/b of a paper (bsard: 1.0/0.6, gdsr: 2.5/0.2, pyserini: 0.9/0.4); "
                        "explicit k1/b override it", choices=tuple(PRESETS)),
        "method": Param("lucene", "bm25s scoring variant (the bm25s backend only)", choices=BM25S_METHODS),
        "backend": Param("bm25s", "bm25s (embedded) or lucene (Anserini through pyserini)", choices=("bm25s", "lucene")),
        **ANALYZER_PARAM,
        **SEGMENTER_PARAM,
    }

    def __init__(self, **params):
        preset = params.get("preset", "default")
        # an unknown preset adds nothing here and is refused with the other parameters
        super().__init__(**{**PRESETS.get(preset if isinstance(preset, str) else "", {}), **params})
        self._model = None
        self._doc_ids: list[str] = []

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        if self.uses_lucene:
            return self.lucene_index(corpus, ctx)
        import bm25s

        self._doc_ids = [d.id for d in corpus]
        p = self.params
        key = {"k1": float(p["k1"]), "b": float(p["b"]), "method": p["method"], **self.corpus_key(corpus, ctx)}
        entry = CacheEntry(ctx.cache_dir / "bm25s", "bm25s-index", key)

        def build(staging):
            model = bm25s.BM25(k1=float(p["k1"]), b=float(p["b"]), method=p["method"])
            model.index(self.tokens(corpus, ctx), show_progress=False)
            model.save(str(staging))
            return model

        self._model, reused = load_or_build(entry, build, lambda folder: bm25s.BM25.load(str(folder)))
        if reused:
            ctx.log.info("bm25: reusing index %s", entry.path)

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        if self.uses_lucene:
            return self.lucene_search(queries, k, ctx, "bm25", k1=self.params["k1"], b=self.params["b"])
        return self.search_terms(queries, k, ctx, self._model.vocab_dict,
                                 lambda terms, k: _top_k(self._model.get_scores(terms), self._doc_ids, k))


def _top_k(scores, doc_ids: Sequence[str], k: int) -> Ranking:
    """The k best documents with a positive score (order is fixed later by the harness)."""
    import numpy as np

    scores = np.asarray(scores)
    if k < len(scores):
        # take a few extra so that ties at the cut are resolved by doc id, not by position
        candidates = np.argpartition(-scores, k - 1)[:k]
        threshold = scores[candidates].min()
        candidates = np.flatnonzero(scores >= threshold)
    else:
        candidates = np.arange(len(scores))
    return [(doc_ids[i], float(scores[i])) for i in candidates if scores[i] > 0]


@hookimpl
def register_retrievers(register):
    register(BM25)
