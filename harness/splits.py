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
    """Each fold is a test set; the other folds are its training queries (empty folds,
    possible when a small query set is laid over shipped folds, are left out)."""
    splits = []
    for name, test in folds.items():
        if not test:
            continue
        train = [q for other, ids in folds.items() if other != name for q in ids]
        splits.append(Split(name=name, test=tuple(test), train=tuple(sorted(train, key=_natural))))
    return splits


def _natural(qid: str):
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def carve_dev(train_ids, dev_size: int, of: int, seed: int) -> tuple[list[str], list[str]]:
    """Split training ids into (train, dev): ``random.Random(seed).shuffle(sorted ids)``,
    then the first ``round(n * dev_size / of)`` ids are dev (exactly ``dev_size`` when n ==
    ``of``: BSARD's 886 -> 709/177). Both lists come back sorted."""
    ids = sorted(train_ids, key=_natural)
    random.Random(seed).shuffle(ids)
    n_dev = round(len(ids) * dev_size / of)
    return sorted(ids[n_dev:], key=_natural), sorted(ids[:n_dev], key=_natural)
