"""BM25 with two backends: bm25s (embedded, the default) and Lucene (``backend=lucene``).

bm25s is sparse-matrix BM25 in pure Python over statbench's analyzers (analysis.py);
the Lucene backend indexes with Anserini through pyserini (lucene.py) and Lucene's own
language analyzer, or statbench's tokens with ``analyzer=statbench``.

Named presets reproduce the papers' settings: ``--param preset=bsard`` (k1=1.0, b=0.6),
``--param preset=gdsr`` (k1=2.5, b=0.2); explicit k1/b override a preset."""

from __future__ import annotations

from typing import Callable, ClassVar, Sequence

from statbench import hookimpl
from statbench.api import Document, Query, Ranking, Retriever, RunContext
from statbench.errors import StatbenchError

from .analysis import SEGMENTER_PARAM, SEGMENTERS, Analyzer, tokenize_corpus

ANALYZERS = ("default", "statbench")
PRESETS = {"default": {}, "bsard": {"k1": 1.0, "b": 0.6}, "gdsr": {"k1": 2.5, "b": 0.2}, "pyserini": {"k1": 0.9, "b": 0.4}}


class LexicalRetriever(Retriever):
    """Shared plumbing: analyse the corpus (cached), index, analyse queries, search."""

    #: Values of the ``backend`` parameter, the embedded one first (empty: no such parameter).
    backends: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **params):
        super().__init__(**params)
        choices = (("backend", self.backends), ("analyzer", ANALYZERS), ("segmenter", SEGMENTERS))
        for key, valid in choices:
            if key in self.params and self.params[key] not in valid:
                raise StatbenchError(f"unknown {key} {self.params[key]!r} for {self.name}; valid choices: {', '.join(valid)}")

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
        tokens = self.tokens(corpus, ctx) if self._lucene_pretokenized else None
        self._lucene.build(corpus, ctx, pretokenized=tokens)

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
    backends = ("bm25s", "lucene")
    description = "BM25 (bm25s, or Lucene with backend=lucene); presets: bsard, gdsr, pyserini"
    default_params = {"k1": 1.2, "b": 0.75, "preset": "default", "method": "lucene", "backend": "bm25s",
                      "analyzer": "default", **SEGMENTER_PARAM}

    def __init__(self, **params):
        preset = params.get("preset", "default")
        if preset not in PRESETS:
            raise StatbenchError(f"unknown preset {preset!r} for bm25; valid choices: {', '.join(PRESETS)}")
        super().__init__(**{**PRESETS[preset], **params})
        self._model = None
        self._doc_ids: list[str] = []

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        if self.uses_lucene:
            return self.lucene_index(corpus, ctx)
        import bm25s

        self._doc_ids = [d.id for d in corpus]
        index_dir = ctx.cache_dir / "bm25s"
        if (index_dir / "params.index.json").is_file():
            ctx.log.info("bm25: reusing index %s", index_dir)
            self._model = bm25s.BM25.load(str(index_dir))
            return
        tokens = self.tokens(corpus, ctx)
        model = bm25s.BM25(k1=float(self.params["k1"]), b=float(self.params["b"]), method=self.params["method"])
        model.index(tokens, show_progress=False)
        tmp = index_dir.with_name(index_dir.name + ".tmp")
        model.save(str(tmp))
        tmp.replace(index_dir)
        self._model = model

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
