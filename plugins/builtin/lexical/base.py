"""What the lexical and static-embedding models share (not a plugin of its own): the
analyzer a model's parameters select, the cached tokenised corpus and the key of what is
built from it, the query loop of the embedded backends (:meth:`LexicalRetriever.search_terms`),
the Lucene backend of BM25 and QL (:mod:`lucene`) with its ``analyzer`` parameter, and
``with_headings``: every lexical model can index each article's heading path (the task's
``Document.fields["heading_path"]``, e.g. code › book › chapter) in front of its text."""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

from statbench.api import (
    SEGMENTER_PARAM,
    Analyzer,
    Document,
    Param,
    Query,
    Ranking,
    Retriever,
    RunContext,
    StatbenchError,
    ids_digest,
    primary_language,
    text_sha256,
)
from statbench.models.lexical.analysis import tokenize_corpus
from statbench.models.lexical.lucene import LuceneIndex
from statbench.models.lexical.tokenized import TokenizedCorpus

ANALYZERS = ("default", "statbench")
#: The Lucene backend's analysis: Lucene's own language analyzer, or statbench's tokens
#: (it applies with backend=lucene only: on an embedded backend it is not recorded).
ANALYZER_PARAM = {"analyzer": Param("default", "the Lucene backend's analysis: default (Lucene's language analyzer) "
                                    "or statbench (statbench's tokens, Lucene's whitespace analyzer)",
                                    choices=ANALYZERS, when={"backend": "lucene"})}


def backend_analysis_params(embedded: str) -> dict[str, Param]:
    """``analyzer`` and ``segmenter`` of a model with an embedded backend named ``embedded``
    and the Lucene one: the segmenter applies to Chinese tasks where statbench's analysis is
    used, i.e. on the embedded backend or on Lucene with ``analyzer=statbench`` (Lucene's
    own analyzer, CJK bigrams, segments nothing)."""
    segmenter = dataclasses.replace(SEGMENTER_PARAM, when=({"backend": embedded}, {"analyzer": "statbench"}))
    return {**ANALYZER_PARAM, "segmenter": segmenter}


#: The field a task's structure lives in (see docs/task-authors.md), outermost heading first.
HEADING_FIELD = "heading_path"
WITH_HEADINGS = Param(False, "index each article's heading path (Document.fields['heading_path']: code › book › "
                      "... › section) before its text; the task must declare its structure")


def with_headings(corpus: Sequence[Document]) -> list[Document]:
    """The corpus with each article's heading path prepended to its text (a line of its
    own). A task that declares no structure at all is refused: the option would silently
    change nothing."""
    if not any(d.fields.get(HEADING_FIELD) for d in corpus):
        raise StatbenchError("with_headings=true: this task declares no legislative structure "
                             f"(no document has Document.fields[{HEADING_FIELD!r}]); drop the option")
    return [dataclasses.replace(d, text=f"{d.fields[HEADING_FIELD]}\n{d.text}") if d.fields.get(HEADING_FIELD)
            else d for d in corpus]


class LexicalRetriever(Retriever):
    """Shared plumbing: analyse the corpus (cached), index, analyse queries, search.

    A model's documents are ``self._doc_ids`` (set by its ``index``)."""

    #: Whether the analyzer stems (static embeddings pool surface forms, so do not).
    stem = True
    #: Each query is searched on its own (Lucene's batch search too), so the runner may time
    #: them one at a time: per-query latency with an unchanged run file.
    query_batch = 1

    def __init__(self, **params):
        super().__init__(**params)
        self._doc_ids: list[str] = []

    def __init_subclass__(cls, **kwargs):
        """Every lexical model takes ``with_headings`` (added to its declared parameters)."""
        super().__init_subclass__(**kwargs)
        if "with_headings" not in cls.default_params:
            cls.default_params = {**cls.default_params, "with_headings": WITH_HEADINGS}

    def config(self) -> dict:
        """``with_headings`` appears only when set, so configurations (and their cached
        runs) from before the option keep their identity."""
        config = super().config()
        if not self.params.get("with_headings"):
            config["params"].pop("with_headings", None)
        return config

    def indexed_corpus(self, corpus: Sequence[Document]) -> list[Document]:
        """The documents as the model indexes them (headings prepended with ``with_headings``)."""
        return with_headings(corpus) if self.params.get("with_headings") else list(corpus)

    def text_checksum(self, ctx: RunContext) -> str:
        """The data checksum, or, with headings, a checksum of its own (the indexed text differs)."""
        if not self.params.get("with_headings"):
            return ctx.data_checksum
        return text_sha256(f"{ctx.data_checksum}\0{HEADING_FIELD}")

    def analyzer(self, ctx: RunContext) -> Analyzer:
        """The task's analyzer (``segmenter``: absent where it does not apply, e.g. an English task)."""
        return Analyzer.for_task(ctx, stem=self.stem, segmenter=self.params.get("segmenter"))

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
        return {"data": self.text_checksum(ctx), "ids": ids_digest(d.id for d in corpus),
                "analyzer": self.analyzer(ctx).key()}

    def tokenized(self, corpus: Sequence[Document], ctx: RunContext) -> TokenizedCorpus:
        """The analysed corpus (cached) as term ids: what the embedded indexes are built from."""
        docs = self.indexed_corpus(corpus)
        return tokenize_corpus(
            self.analyzer(ctx), [d.id for d in docs], [d.text for d in docs], ctx.cache_root,
            self.text_checksum(ctx), ctx.progress,
        )

    def tokens(self, corpus: Sequence[Document], ctx: RunContext) -> list[list[str]]:
        """Each document's terms (for the models that want strings)."""
        return self.tokenized(corpus, ctx).lists()

    # --- the Lucene backend, shared by BM25 and QL -------------------------------------

    @property
    def uses_lucene(self) -> bool:
        return self.params.get("backend") == "lucene"

    def lucene_index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        self._lucene = LuceneIndex(ctx.cache_dir, primary_language(ctx.language))  # en-GB: Lucene's en
        self._lucene_pretokenized = self.params.get("analyzer") == "statbench"
        if self._lucene_pretokenized:
            self._lucene.build(corpus, ctx, pretokenized=lambda: self.tokens(corpus, ctx),
                               source={"tokens": self.corpus_key(corpus, ctx)})
        elif self.params.get("with_headings"):
            self._lucene.build(self.indexed_corpus(corpus), ctx,
                               source={"data": self.text_checksum(ctx), "ids": ids_digest(d.id for d in corpus)})
        else:
            self._lucene.build(corpus, ctx)

    def lucene_search(self, queries: Sequence[Query], k: int, ctx: RunContext, similarity: str, **params):
        searcher = self._lucene.searcher(similarity, **params)
        texts = None
        if self._lucene_pretokenized:
            analyzer = self.analyzer(ctx)
            texts = [" ".join(analyzer(q.text)) for q in queries]
        return self._lucene.search(searcher, queries, k, texts)
