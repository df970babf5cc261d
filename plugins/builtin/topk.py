"""The top-k cut the embedded lexical backends share: keeps every document tied with the k-th."""

from __future__ import annotations

from typing import Sequence

from statbench.api import Ranking


def top_k(scores, doc_ids: Sequence[str], k: int, among=None, positive: bool = True) -> Ranking:
    """The k best documents, and every one tied with the k-th (the harness orders ties by
    doc id, not by position): of all documents, or only of the indices ``among`` (sorted);
    with ``positive``, only documents scoring above 0. Order is fixed later by the harness."""
    import numpy as np

    scores = np.asarray(scores)
    rows = np.arange(len(scores)) if among is None else np.asarray(among)
    if positive:
        # a query matching few documents keeps only those: never a loop over the whole corpus.
        # Same documents as cutting first: with k or more positive scores the k-th is positive
        rows = rows[scores[rows] > 0]
    if k < len(rows):
        candidates = scores[rows]
        threshold = candidates[np.argpartition(-candidates, k - 1)[:k]].min()
        rows = rows[candidates >= threshold]
    return [(doc_ids[i], value) for i, value in zip(rows.tolist(), scores[rows].tolist())]
