"""The base class of a task plugin: a :class:`~statbench.contract.taskinfo.TaskInfo`
declaration and a ``load`` method."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from statbench.contract.records import Measure, TaskData
from statbench.contract.taskinfo import Published, TaskInfo


class Task:
    """Base class for tasks: declare a :class:`~statbench.contract.taskinfo.TaskInfo` as ``info``
    and implement ``load``.

    A task has one declaration, its :class:`~statbench.contract.taskinfo.TaskInfo`, and the
    harness reads a task only through :meth:`task_info`. A JSON definition
    (:class:`statbench.loading.taskdef.DefinedTask`) is read into one. Tasks written before
    TaskInfo declared themselves through the class attributes below; that still works
    (documented compatibility: :meth:`task_info` builds the TaskInfo from them) but says
    less (no protocols, pools, relevance scale). When a class declares ``info``, the class
    attributes are set from it; a subclass that overrides a class attribute (``name``,
    ``language``...) overrides that field of the inherited info."""

    #: The task's declaration (see :mod:`statbench.contract.taskinfo`).
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
    #: What tells this task's default output folder apart when its registered name alone may
    #: not: a task resolver (``--task PREFIX:ARG``) that gives several arguments one name sets
    #: it (``beir:law/qa`` and ``beir:law-qa`` are both ``beir-law-qa``).
    folder_identity: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        info = cls.__dict__.get("info")
        if info is not None:
            cls.name, cls.language, cls.description = info.name, info.language, info.description
            cls.measures, cls.depth, cls.version, cls.analyzer = info.measures, info.depth, info.version, info.analyzer
            cls.published = {p.label: dict(p.scores) for p in info.published}

    @classmethod
    def task_info(cls):
        """The task's :class:`~statbench.contract.taskinfo.TaskInfo`: the declared one with any
        class attribute a subclass overrides, or one built from the class attributes."""
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
