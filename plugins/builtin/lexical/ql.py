"""Query likelihood with Dirichlet smoothing (Zhai & Lafferty 2004).

Rank-equivalent form, summed over the query terms found in the corpus::

    score(q, d) = sum_t c(t,q) * log(1 + tf(t,d) / (mu * p(t|C))) + |q| * log(mu / (|d| + mu))

Documents sharing no term with the query are not ranked (as in Lucene).

``--param backend=lucene`` uses Lucene's LMDirichletSimilarity instead (see lucene.py),
which clamps each term's contribution at 0 (an Anserini/Lucene detail)."""

from __future__ import annotations

from typing import Sequence

from statbench.api import CacheEntry, Document, Param, Query, Ranking, RunContext, hookimpl
from statbench.models.lexical.base import LexicalRetriever, backend_analysis_params
from statbench.models.shared.artefacts import load_or_build
from statbench.models.shared.topk import distinct, top_k

INDEX_FILE = "index.npz"


class QueryLikelihood(LexicalRetriever):
    name = "ql"
    family = "lexical"
    #: its search changes nothing the run reads back: splits may be searched in a fork (statbench.run.splitfork)
    fork_search = True
    description = "Query likelihood, Dirichlet smoothing (mu configurable; backend=lucene for Lucene's)"
    default_params = {
        "mu": Param(1000.0, "Dirichlet prior (pseudo-count of collection-model words)", above=0.0),
        "backend": Param("native", "native (scipy.sparse) or lucene (Anserini's LMDirichletSimilarity)",
                         choices=("native", "lucene")),
        **backend_analysis_params("native"),
    }

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        if self.uses_lucene:
            return self.lucene_index(corpus, ctx)
        self._doc_ids = [d.id for d in corpus]
        mu = float(self.params["mu"])
        entry = CacheEntry(ctx.cache_dir / "ql-index", "ql-index", {"mu": mu, **self.corpus_key(corpus, ctx)})
        (self._weights, self._length_term, self._vocab), reused = load_or_build(
            entry, lambda staging: self._build(corpus, ctx, mu, staging / INDEX_FILE), lambda folder: _load(folder / INDEX_FILE)
        )
        if reused:
            ctx.log.info("ql: reusing index %s", entry.path)

    def _build(self, corpus: Sequence[Document], ctx: RunContext, mu: float, path):
        import numpy as np
        import scipy.sparse as sp

        tokens = self.tokenized(corpus, ctx)
        # term ids number terms in order of first occurrence (a vocabulary built by walking the terms)
        vocab: dict[str, int] = {term: i for i, term in enumerate(tokens.terms)}
        rows, cols = tokens.ids, tokens.doc_of_token()
        tf = sp.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(len(vocab), len(tokens)))
        tf.sum_duplicates()
        collection = np.asarray(tf.sum(axis=1)).ravel()
        p_t = collection / max(collection.sum(), 1.0)
        weights = tf.copy()
        # log(1 + tf / (mu * p(t|C))) for every stored (term, doc) entry, row by row
        weights.data = np.log1p(weights.data / (mu * np.repeat(p_t, np.diff(weights.indptr))))
        lengths = tokens.lengths().astype(np.float64)
        weights = weights.tocsr()
        length_term = np.log(mu / (lengths + mu))
        with open(path, "wb") as handle:
            np.savez(
                handle, w_data=weights.data, w_indices=weights.indices, w_indptr=weights.indptr,
                w_shape=np.array(weights.shape), length_term=length_term, vocab=np.array(list(vocab), dtype=object),
            )
        return weights, length_term, vocab

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        if self.uses_lucene:
            return self.lucene_search(queries, k, ctx, "qld", mu=self.params["mu"])
        import numpy as np

        def rank(terms: list[str], k: int) -> Ranking:
            ids, counts = np.unique([self._vocab[t] for t in terms], return_counts=True)
            rows = self._weights[ids]
            matched = distinct(rows.indices)  # np.unique(rows.indices), faster
            scores = np.full(len(self._doc_ids), -np.inf)
            scores[matched] = counts @ rows[:, matched].toarray() + counts.sum() * self._length_term[matched]
            # log-probabilities (negative): only the matched documents are ranked
            return top_k(scores, self._doc_ids, k, among=matched, positive=False)

        return self.search_terms(queries, k, ctx, self._vocab, rank)


def _load(path):
    import numpy as np
    import scipy.sparse as sp

    data = np.load(path, allow_pickle=True)  # the vocabulary is an object array; the entry was verified
    weights = sp.csr_matrix((data["w_data"], data["w_indices"], data["w_indptr"]), shape=tuple(data["w_shape"]))
    return weights, data["length_term"], {t: i for i, t in enumerate(data["vocab"].tolist())}


@hookimpl
def register_retrievers(register):
    register(QueryLikelihood)
