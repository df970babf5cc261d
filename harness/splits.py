"""Seeded k-fold splits, identical for every model that runs on a task."""

from __future__ import annotations

import random

from .api import Split


def kfold_assignment(query_ids, k: int, seed: int) -> dict[str, list[str]]:
    """``random.Random(seed).shuffle(sorted ids)``; fold i takes every k-th id from offset i."""
    ids = sorted(query_ids, key=_natural)
    random.Random(seed).shuffle(ids)
    return {f"fold-{i + 1}": sorted(ids[i::k], key=_natural) for i in range(k)}


def kfold_splits(folds: dict[str, list[str]]) -> list[Split]:
    """Each fold is a test set; the other folds are its training queries."""
    splits = []
    for name, test in folds.items():
        train = [q for other, ids in folds.items() if other != name for q in ids]
        splits.append(Split(name=name, test=tuple(test), train=tuple(sorted(train, key=_natural))))
    return splits


def _natural(qid: str):
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)
