"""The types a plugin author works with: documents, queries, tasks, retrievers, rerankers.

A retriever or reranker is a class with a few class attributes (``name``, ``family``,
``description``, ``default_params``) and two methods. The harness instantiates it with
the user's ``--param`` values, so heavy imports belong inside the methods, not at the
top of the plugin module: ``statbench --help`` must stay fast.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ClassVar, Mapping, Sequence

#: Families shown as filters on the leaderboard.
FAMILIES = ("lexical", "static", "dense", "late-interaction", "classifier", "reranker")

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
    #: (``statbench.pools.Pools``, attached by the runner after every load; its ``info``
    #: holds each pool's path and sha256).
    pools: Mapping[str, dict[str, Ranking]] = field(default_factory=dict)
    #: A stop-word list the task's own baselines use (models may ignore it).
    stopwords: frozenset[str] | None = None
    #: Per-query attributes for breakdowns, e.g. {"category": {qid: "housing"}}.
    groups: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Older loaders put the splits of a second protocol here; the runner treats them as
    #: part of ``splits`` (protocols in ``TaskInfo`` say which splits run together).
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
    name (``nDCG@10``) or a registered custom measure (``F2@10``, see statbench.measures)."""

    label: str
    ir_measure: str


class Task:
    """Base class for tasks: declare a :class:`~statbench.taskinfo.TaskInfo` as ``info``
    (or, the older way, the class attributes below) and implement ``load``.

    The harness reads a task only through :meth:`task_info`. When a class declares
    ``info``, the class attributes are set from it; a subclass that overrides a class
    attribute (``name``, ``language``...) overrides that field of the inherited info."""

    #: The task's declaration (see :mod:`statbench.taskinfo`).
    info: ClassVar[object] = None

    name: ClassVar[str]
    language: ClassVar[str]  # ISO 639-1: "fr", "zh", "en"
    #: The analyzer the task's text calls for, when not the language's default (cache keys
    #: cover it, so changing it invalidates cached indexes and runs).
    analyzer: ClassVar[str] = ""
    description: ClassVar[str] = ""
    measures: ClassVar[tuple[Measure, ...]] = ()
    #: Published reference figures: model label -> measure label -> value.
    published: ClassVar[Mapping[str, Mapping[str, float]]] = {}
    #: Depth of the run written for each query.
    depth: ClassVar[int] = 1000
    #: Bump whenever the loader changes what it builds from the same files (document text,
    #: ids, queries, judgements, splits): cached indexes and runs are keyed by it.
    version: ClassVar[str] = "1"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        info = cls.__dict__.get("info")
        if info is not None:
            cls.name, cls.language, cls.description = info.name, info.language, info.description
            cls.measures, cls.depth, cls.version, cls.analyzer = info.measures, info.depth, info.version, info.analyzer
            cls.published = {p.label: dict(p.scores) for p in info.published}

    @classmethod
    def task_info(cls):
        """The task's :class:`~statbench.taskinfo.TaskInfo`: the declared one with any
        class attribute a subclass overrides, or one built from the class attributes."""
        import dataclasses

        from .taskinfo import Published, TaskInfo

        attrs = {"name": getattr(cls, "name", None), "language": getattr(cls, "language", None),
                 "description": cls.description, "measures": tuple(cls.measures), "depth": cls.depth,
                 "version": cls.version, "analyzer": cls.analyzer}
        if cls.info is not None:
            return dataclasses.replace(cls.info, **attrs)
        published = tuple(Published(label=label, source="", scores=dict(scores))
                          for label, scores in (cls.published or {}).items())
        return TaskInfo(**attrs, published=published)

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        raise NotImplementedError

    def data_folder(self, data_dir: Path | None) -> Path | None:
        """Where the task's files (and shipped pools, in ``pools/``) are looked up."""
        return Path(data_dir) if data_dir is not None else None


@dataclass
class RunContext:
    """What the harness hands a model at run time."""

    task_name: str
    language: str
    #: A directory private to this model configuration and corpus, for indexes etc.
    cache_dir: Path
    #: The statbench cache root, for artefacts shared between models (e.g. tokenised corpora).
    cache_root: Path
    #: Checksum of the task's data files.
    data_checksum: str
    log: logging.Logger
    stopwords: frozenset[str] | None = None
    #: ``progress(description, total)`` returns an ``advance(n=1)`` callable.
    progress: Callable[[str, int | None], Callable[..., None]] = lambda description, total=None: (
        lambda n=1: None
    )


class _Configurable:
    name: ClassVar[str]
    family: ClassVar[str] = "lexical"
    description: ClassVar[str] = ""
    #: Parameters: name -> default value, or a :class:`~statbench.params.Param` declaring
    #: type, range/choices and meaning. ``--param key=value`` values are coerced and checked.
    default_params: ClassVar[Mapping[str, object]] = {}
    #: Bump when a change alters outputs, so stale caches are not reused.
    version: ClassVar[str] = "1"

    def __init__(self, **params):
        from .params import check_params

        checked = check_params(params, self.param_specs(), self.name)
        self.params = {**self.defaults(), **checked}

    @classmethod
    def param_specs(cls) -> dict:
        """Every parameter as a :class:`~statbench.params.Param`."""
        from .params import declare

        return declare(cls.default_params)

    @classmethod
    def defaults(cls) -> dict:
        """Parameter name -> default value."""
        return {key: spec.default for key, spec in cls.param_specs().items()}

    @property
    def budget(self) -> str | None:
        """The parameters set to a declared reduced budget (``Param(budget=...)``), e.g.
        ``"preset=cpu-small"``; ``None`` when the model runs its protocol's settings."""
        from .params import budget_of

        return budget_of(self.params, self.param_specs())

    def config(self) -> dict:
        """Everything that determines this model's output (used in cache keys and results)."""
        return {"name": self.name, "version": self.version, "params": dict(self.params)}


class Retriever(_Configurable):
    """A first-stage retriever: index a corpus once, then search it."""

    #: True if the model learns from each split's training queries (e.g. fine-tuned encoders).
    trainable: ClassVar[bool] = False

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        raise NotImplementedError

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        raise NotImplementedError

    def train(self, queries: Sequence[Query], qrels: Qrels, corpus: Sequence[Document], ctx: RunContext) -> None:
        """Learn from training queries (only called when ``trainable``)."""
        raise NotImplementedError


class Reranker(_Configurable):
    """Reorders a fixed list of candidates per query."""

    family: ClassVar[str] = "reranker"

    def rerank(
        self,
        queries: Sequence[Query],
        candidates: Mapping[str, Sequence[str]],
        corpus: Mapping[str, Document],
        ctx: RunContext,
    ) -> dict[str, Ranking]:
        raise NotImplementedError

