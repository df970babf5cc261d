"""Query likelihood with Dirichlet smoothing (Zhai & Lafferty 2004).

Rank-equivalent form, summed over the query terms found in the corpus::

    score(q, d) = sum_t c(t,q) * log(1 + tf(t,d) / (mu * p(t|C))) + |q| * log(mu / (|d| + mu))

Documents sharing no term with the query are not ranked (as in Lucene).

``--param backend=lucene`` uses Lucene's LMDirichletSimilarity instead (see lucene.py),
which clamps each term's contribution at 0 (an Anserini/Lucene detail)."""

from __future__ import annotations

from typing import Sequence

from statbench import hookimpl
from statbench.api import Document, Query, Ranking, RunContext

from .analysis import SEGMENTER_PARAM
from .bm25 import LexicalRetriever


class QueryLikelihood(LexicalRetriever):
    name = "ql"
    family = "lexical"
    description = "Query likelihood, Dirichlet smoothing (mu configurable; backend=lucene for Lucene's)"
    default_params = {"mu": 1000.0, "backend": "native", "analyzer": "default", **SEGMENTER_PARAM}

    backends = ("native", "lucene")

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        if self.uses_lucene:
            return self.lucene_index(corpus, ctx)
        import numpy as np
        import scipy.sparse as sp

        self._doc_ids = [d.id for d in corpus]
        path = ctx.cache_dir / "ql-index.npz"
        if path.is_file():
            ctx.log.info("ql: reusing index %s", path)
            data = np.load(path, allow_pickle=True)
            self._weights = sp.csr_matrix((data["w_data"], data["w_indices"], data["w_indptr"]), shape=tuple(data["w_shape"]))
            self._length_term = data["length_term"]
            self._vocab = {t: i for i, t in enumerate(data["vocab"].tolist())}
            return
        tokens = self.tokens(corpus, ctx)
        vocab: dict[str, int] = {}
        rows, cols = [], []
        for doc_index, doc_tokens in enumerate(tokens):
            for term in doc_tokens:
                rows.append(vocab.setdefault(term, len(vocab)))
                cols.append(doc_index)
        tf = sp.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(len(vocab), len(tokens)))
        tf.sum_duplicates()
        mu = float(self.params["mu"])
        collection = np.asarray(tf.sum(axis=1)).ravel()
        p_t = collection / max(collection.sum(), 1.0)
        weights = tf.copy()
        # log(1 + tf / (mu * p(t|C))) for every stored (term, doc) entry, row by row
        weights.data = np.log1p(weights.data / (mu * np.repeat(p_t, np.diff(weights.indptr))))
        lengths = np.array([len(t) for t in tokens], dtype=np.float64)
        self._weights = weights.tocsr()
        self._length_term = np.log(mu / (lengths + mu))
        self._vocab = vocab
        from statbench.atomic import atomic_open

        with atomic_open(path, "wb") as handle:
            np.savez(
                handle, w_data=self._weights.data, w_indices=self._weights.indices, w_indptr=self._weights.indptr,
                w_shape=np.array(self._weights.shape), length_term=self._length_term,
                vocab=np.array(list(vocab), dtype=object),
            )

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        if self.uses_lucene:
            return self.lucene_search(queries, k, ctx, "qld", mu=self.params["mu"])
        import numpy as np

        def rank(terms: list[str], k: int) -> Ranking:
            ids, counts = np.unique([self._vocab[t] for t in terms], return_counts=True)
            rows = self._weights[ids]
            matched = np.unique(rows.indices)
            scores = np.full(len(self._doc_ids), -np.inf)
            scores[matched] = counts @ rows[:, matched].toarray() + counts.sum() * self._length_term[matched]
            return _top_k_finite(scores, self._doc_ids, k, matched)

        return self.search_terms(queries, k, ctx, self._vocab, rank)


def _top_k_finite(scores, doc_ids, k, matched) -> Ranking:
    """QL scores are log-probabilities (negative): rank only the matched documents."""
    import numpy as np

    sub = scores[matched]
    if k < len(sub):
        threshold = np.partition(-sub, k - 1)[k - 1]
        keep = matched[-sub <= threshold]
    else:
        keep = matched
    return [(doc_ids[i], float(scores[i])) for i in keep]


@hookimpl
def register_retrievers(register):
    register(QueryLikelihood)
