"""Models registered for the tests of `statbench run`: a retriever that answers only the queries
it is told to (``Sparse.answered``), and a reranker that keeps only its first candidates."""

from __future__ import annotations

import pytest

from statbench import hookimpl
from statbench.api import Reranker, Retriever
from statbench.testing import registered_plugin

class Sparse(Retriever):
    """Ranks every document, for the queries whose id is in ``answered`` (all: None)."""

    name = "sparse"
    answered = None

    def index(self, corpus, ctx):
        self.ids = [d.id for d in corpus]

    def search(self, queries, k, ctx):
        return {q.id: [(d, 1.0 / (i + 1)) for i, d in enumerate(self.ids)] for q in queries
                if Sparse.answered is None or q.id in Sparse.answered}


class Dropping(Reranker):
    """Keeps only the first ``keep`` candidates of each query (0: returns nothing at all)."""

    name = "dropping"
    default_params = {"keep": 1}

    def rerank(self, queries, candidates, corpus, ctx):
        if self.params["keep"] == 0:
            return {}
        return {q.id: [(d, 1.0) for d in candidates[q.id][:self.params["keep"]]] for q in queries}


class NewcomerPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Sparse)

    @hookimpl
    def register_rerankers(self, register):
        register(Dropping)


@pytest.fixture
def newcomer_models():
    Sparse.answered = None
    with registered_plugin(NewcomerPlugin(), "newcomer-plugin"):
        yield
    Sparse.answered = None
