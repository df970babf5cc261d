"""The records every plugin and the core exchange: documents, queries, splits, a loaded
task's data, a measure as a task reports it.

These are plain data: nothing here imports the rest of statbench, so every layer can
depend on them (plugin authors import them from :mod:`statbench.api`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Families shown as filters on the leaderboard.
FAMILIES = ("lexical", "static", "dense", "late-interaction", "classifier", "reranker", "fusion")

#: A ranking: (doc id, score) pairs, best first.
Ranking = list[tuple[str, float]]


@dataclass(frozen=True)
class Document:
    """One article. ``fields`` holds optional structure (e.g. BSARD's heading path);
    nothing here may reveal relevance: models see only ids and text."""

    id: str
    text: str
    title: str = ""
    fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    fields: Mapping[str, str] = field(default_factory=dict)


#: qrels: query id -> doc id -> relevance grade (> 0 is relevant).
Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Split:
    """One evaluation unit: a fold of cross-validation or a fixed test split.

    ``train``/``dev`` are what a trainable model may learn from for this split."""

    name: str
    test: tuple[str, ...]
    train: tuple[str, ...] = ()
    dev: tuple[str, ...] = ()


@dataclass
class TaskData:
    """A loaded task: everything a run needs, plus what loading had to drop."""

    corpus: dict[str, Document]
    queries: dict[str, Query]
    qrels: Qrels
    splits: list[Split]
    files: list[Path]
    checksum: str
    dropped: list[str] = field(default_factory=list)
    #: Frozen candidate pools: pool name -> query id -> ranking, verified on first use
    #: (``statbench.loading.pools.Pools``, attached by the runner after every load; its ``info``
    #: holds each pool's path and sha256).
    pools: Mapping[str, dict[str, Ranking]] = field(default_factory=dict)
    #: A stop-word list the task's own baselines use (models may ignore it).
    stopwords: frozenset[str] | None = None
    #: Per-query attributes for breakdowns, e.g. {"category": {qid: "housing"}}.
    groups: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Splits that belong to no run unless named: those of the task's other protocols
    #: (STARD's official ``dev``, BSARD's ``dev`` carve-out), kept apart so that ``splits``
    #: stays the default protocol's. Either list may hold any split: the runner looks
    #: splits up by name in both (:meth:`all_splits`), and ``TaskInfo.protocols`` alone
    #: says which splits run together.
    extra_splits: list[Split] = field(default_factory=list)

    def all_splits(self) -> list[Split]:
        """Every split the loader built, whatever protocol it belongs to."""
        seen: dict[str, Split] = {}
        for split in [*self.splits, *self.extra_splits]:
            seen.setdefault(split.name, split)
        return list(seen.values())


@dataclass(frozen=True)
class Measure:
    """A measure as the task reports it: a display name and its spelling, an ir-measures
    name (``nDCG@10``) or a registered custom measure (``F2@10``, see statbench.scoring.measures)."""

    label: str
    ir_measure: str
