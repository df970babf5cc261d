"""The top-k cut the embedded lexical backends share (keeps every document tied with the
k-th), and the sorted distinct documents a sparse query matched."""

from __future__ import annotations

from typing import Sequence

from statbench.api import Ranking


def top_k(scores, doc_ids: Sequence[str], k: int, among=None, positive: bool = True) -> Ranking:
    """The k best documents, and every one tied with the k-th (the harness orders ties by
    doc id, not by position): of all documents, or only of the indices ``among`` (sorted);
    with ``positive``, only documents scoring above 0. Order is fixed later by the harness."""
    import numpy as np

    scores = np.asarray(scores)
    if among is not None:  # only these are looked at (a sparse query's matched documents)
        rows = np.asarray(among)
        if positive:
            rows = rows[scores[rows] > 0]
    elif positive:  # one vectorised pass over the scores, never a Python loop over the corpus
        rows = np.flatnonzero(scores > 0)
    else:
        rows = np.arange(len(scores))
    # keeping only positive scores first selects the same documents as cutting first: with k
    # or more positive scores the k-th is positive
    if k < len(rows):
        candidates = scores[rows]
        threshold = candidates[np.argpartition(-candidates, k - 1)[:k]].min()
        rows = rows[candidates >= threshold]
    return [(doc_ids[i], value) for i, value in zip(rows.tolist(), scores[rows].tolist())]


def distinct(values):
    """``np.unique(values)``: the sorted distinct values, by one sort (numpy 2's np.unique
    of a plain array takes a hashing path many times slower on a query's postings)."""
    import numpy as np

    values = np.sort(np.asarray(values).ravel())
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if len(values) else values
