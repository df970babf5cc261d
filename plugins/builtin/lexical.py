"""What the lexical and static-embedding models share (not a plugin of its own): the
analyzer a model's parameters select, the cached tokenised corpus and the key of what is
built from it, the query loop of the embedded backends (:meth:`LexicalRetriever.search_terms`),
and the Lucene backend of BM25 and QL
(:mod:`lucene`) with its ``analyzer`` parameter."""

from __future__ import annotations

from typing import Callable, Sequence

from statbench.api import Document, Query, Ranking, Retriever, RunContext
from statbench.params import Param

from .analysis import Analyzer, tokenize_corpus
from .artefacts import ids_digest
from .topk import top_k  # noqa: F401  (re-exported: the models import it from here)

ANALYZERS = ("default", "statbench")
#: The Lucene backend's analysis: Lucene's own language analyzer, or statbench's tokens.
ANALYZER_PARAM = {"analyzer": Param("default", "the Lucene backend's analysis: default (Lucene's language analyzer) "
                                    "or statbench (statbench's tokens, Lucene's whitespace analyzer)",
                                    choices=ANALYZERS)}


class LexicalRetriever(Retriever):
    """Shared plumbing: analyse the corpus (cached), index, analyse queries, search.

    A model's documents are ``self._doc_ids`` (set by its ``index``)."""

    #: Whether the analyzer stems (static embeddings pool surface forms, so do not).
    stem = True

    def __init__(self, **params):
        super().__init__(**params)
        self._doc_ids: list[str] = []

    def analyzer(self, ctx: RunContext) -> Analyzer:
        return Analyzer(ctx.language, stopwords=ctx.stopwords, stem=self.stem, segmenter=self.params["segmenter"])

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
