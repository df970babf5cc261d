"""TF-IDF with cosine similarity, on scipy.sparse over statbench's analyzers.

Weights follow scikit-learn's ``TfidfVectorizer`` defaults (what the BSARD baseline used):
``tf(t,d) * idf(t)`` with the smoothed ``idf(t) = ln((1 + N) / (1 + df(t))) + 1``, rows
L2-normalised; ``sublinear_tf=true`` replaces tf by ``1 + ln(tf)``. Queries are weighted
the same way, so the score is the cosine of the two tf-idf vectors."""

from __future__ import annotations

from typing import Sequence

from statbench.api import Document, Param, Query, Ranking, RunContext, hookimpl
from statbench.models.lexical.analysis import SEGMENTER_PARAM
from statbench.models.lexical.base import LexicalRetriever
from statbench.models.shared.topk import distinct, top_k


class TfIdf(LexicalRetriever):
    name = "tfidf"
    family = "lexical"
    #: its search changes nothing the run reads back: splits may be searched in a fork (statbench.run.splitfork)
    fork_search = True
    description = "TF-IDF cosine (smoothed idf, L2-normalised, as scikit-learn's defaults)"
    default_params = {"sublinear_tf": Param(False, "replace tf by 1 + ln(tf)"), **SEGMENTER_PARAM}

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        import numpy as np

        self._doc_ids = [d.id for d in corpus]
        tokens = self.tokenized(corpus, ctx)
        # term ids number terms in order of first occurrence: the columns of a vocabulary
        # built by walking the documents' terms
        self._vocab: dict[str, int] = {term: i for i, term in enumerate(tokens.terms)}
        tf = self._matrix(tokens.doc_of_token(), tokens.ids, (len(tokens), len(self._vocab)))
        df = np.bincount(tf.indices, minlength=len(self._vocab))
        self._idf = np.log((1.0 + len(tokens)) / (1.0 + df)) + 1.0
        self._idf_diagonal = None
        self._docs = self._weigh(tf)
        # the documents by term, to score a query from its terms' postings; only when every
        # document's terms are stored in term order (see search)
        self._postings = self._docs.tocsc() if self._docs.has_sorted_indices else None

    def _matrix(self, rows, cols, shape):
        import numpy as np
        import scipy.sparse as sp

        tf = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
        tf.sum_duplicates()
        return tf

    def _weigh(self, tf):
        """tf-idf rows, L2-normalised."""
        import numpy as np
        import scipy.sparse as sp

        tf = tf.astype(np.float64)
        if self.params["sublinear_tf"]:
            tf.data = 1.0 + np.log(tf.data)
        if self._idf_diagonal is None:  # the sparse product converts it to CSR anyway: once, not per query
            self._idf_diagonal = sp.csr_matrix(sp.diags(self._idf))
        weighted = tf @ self._idf_diagonal
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ weighted)

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        import numpy as np

        def rank(terms: list[str], k: int) -> Ranking:
            term_ids = [self._vocab[t] for t in terms]
            q = self._weigh(self._matrix([0] * len(term_ids), term_ids, (1, len(self._vocab))))
            if self._postings is None:
                return top_k((self._docs @ q.T).toarray().ravel(), self._doc_ids, k)
            # what docs @ q.T computes: per document, the products doc weight * query weight
            # summed in the order of the document's stored terms, i.e. by term id
            postings, scores, matched = self._postings, np.zeros(len(self._doc_ids)), []
            for term, weight in sorted(zip(q.indices.tolist(), q.data.tolist())):
                start, end = postings.indptr[term], postings.indptr[term + 1]
                scores[postings.indices[start:end]] += postings.data[start:end] * weight
                matched.append(postings.indices[start:end])
            few = sum(len(docs) for docs in matched) * 8 < len(scores)
            return top_k(scores, self._doc_ids, k, among=distinct(np.concatenate(matched)) if few else None)

        return self.search_terms(queries, k, ctx, self._vocab, rank)


@hookimpl
def register_retrievers(register):
    register(TfIdf)
