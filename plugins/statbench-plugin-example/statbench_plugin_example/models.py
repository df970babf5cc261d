"""The example's models: ``charngram`` (a retriever) and ``length-prior`` (a reranker).

``charngram`` ranks articles by the cosine of character n-gram counts (no tokenizer, so
it works for French, Chinese and English alike). ``length-prior`` reranks candidates,
nudging longer articles up: a toy, but a complete reranker plugin.
"""

from __future__ import annotations

import math
from collections import Counter

from statbench.api import Reranker, Retriever


def _ngrams(text: str, n: int) -> Counter:
    text = " ".join(text.lower().split())
    return Counter(text[i : i + n] for i in range(max(len(text) - n + 1, 1)))


def _cosine(a: Counter, b: Counter) -> float:
    dot = sum(v * b[k] for k, v in a.items() if k in b)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


class CharNgram(Retriever):
    name = "charngram"
    family = "lexical"
    description = "cosine over character n-gram counts (example plugin)"
    default_params = {"n": 3}

    def index(self, corpus, ctx):
        self._docs = [(d.id, _ngrams(d.text, int(self.params["n"]))) for d in corpus]

    def search(self, queries, k, ctx):
        out = {}
        for query in queries:
            grams = _ngrams(query.text, int(self.params["n"]))
            scored = [(doc_id, _cosine(grams, doc)) for doc_id, doc in self._docs]
            scored = [pair for pair in scored if pair[1] > 0]
            out[query.id] = sorted(scored, key=lambda p: (-p[1], p[0]))[:k]
        return out


class LengthPrior(Reranker):
    name = "length-prior"
    description = "keeps the candidate order, breaking it towards longer articles (example plugin)"
    default_params = {"weight": 0.1}

    def rerank(self, queries, candidates, corpus, ctx):
        weight = float(self.params["weight"])
        out = {}
        for query in queries:
            docs = candidates.get(query.id, [])
            out[query.id] = [
                (doc_id, (len(docs) - rank) + weight * math.log1p(len(corpus[doc_id].text)))
                for rank, doc_id in enumerate(docs)
            ]
        return out
