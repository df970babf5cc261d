"""The base classes of model plugins: retrievers and rerankers, and the run context
the harness hands them.

A retriever or reranker is a class with a few class attributes (``name``, ``family``,
``description``, ``default_params``) and two methods. The harness instantiates it with
the user's ``--param`` values, so heavy imports belong inside the methods, not at the
top of the plugin module: ``statbench --help`` must stay fast.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from statbench.contract.params import budget_of, check_params, declare
from statbench.contract.records import Document, Qrels, Query, Ranking, Split
from statbench.errors import StatbenchError


class DeclarationError(StatbenchError):
    """A model declares what the contract does not allow (``needs_gpu``, ``tolerance``)."""


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
    #: The split being run (its test queries are the ones searched). A model that composes
    #: other models' runs (the ``fusion`` retriever) keys their cached split runs by it.
    split: Split | None = None


class _Configurable:
    name: ClassVar[str]
    family: ClassVar[str] = "lexical"
    description: ClassVar[str] = ""
    #: Parameters: name -> default value, or a :class:`~statbench.contract.params.Param` declaring
    #: type, range/choices and meaning. ``--param key=value`` values are coerced and checked.
    default_params: ClassVar[Mapping[str, object]] = {}
    #: Bump when a change alters outputs, so stale caches are not reused.
    version: ClassVar[str] = "1"
    #: True if the model cannot run in reasonable time without a GPU (recorded in results as
    #: ``needs_gpu``: a reproduction knows to ask for one). May be a property reading ``params``.
    needs_gpu: bool = False
    #: ``None``: deterministic, a re-run writes a byte-identical run file. A model whose
    #: output moves between runs (GPU kernels, sampling) declares the absolute tolerance a
    #: per-query figure of a re-run may differ by (recorded in results as ``tolerance``).
    #: May be a property reading ``params``.
    tolerance: float | None = None

    def __init__(self, **params):
        checked = check_params(params, self.param_specs(), self.name)
        self.params = {**self.defaults(), **checked}

    @classmethod
    def param_specs(cls) -> dict:
        """Every parameter as a :class:`~statbench.contract.params.Param`."""
        return declare(cls.default_params)

    @classmethod
    def defaults(cls) -> dict:
        """Parameter name -> default value."""
        return {key: spec.default for key, spec in cls.param_specs().items()}

    @property
    def budget(self) -> str | None:
        """The parameters set to a declared reduced budget (``Param(budget=...)``), e.g.
        ``"preset=cpu-small"``; ``None`` when the model runs its protocol's settings."""
        return budget_of(self.params, self.param_specs())

    def reproducibility(self) -> dict:
        """``needs_gpu`` and ``tolerance`` as declared, checked (:class:`DeclarationError`, one
        line, when a declaration is not a bool / a finite number >= 0 or None): what results
        record."""
        try:
            needs_gpu, tolerance = self.needs_gpu, self.tolerance
        except Exception as exc:  # a property of the plugin's that raised
            raise DeclarationError(f"model {self.name!r}: reading needs_gpu/tolerance raised "
                                   f"{type(exc).__name__}: {exc}") from None
        if type(needs_gpu).__name__ == "bool_":  # numpy's
            needs_gpu = bool(needs_gpu)
        if not isinstance(needs_gpu, bool):
            raise DeclarationError(f"model {self.name!r} declares needs_gpu={needs_gpu!r}: it must be True or False")
        if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real)
                                      or not math.isfinite(tolerance) or tolerance < 0):
            raise DeclarationError(f"model {self.name!r} declares tolerance={tolerance!r}: it must be None "
                                   "(deterministic) or a finite number >= 0")
        return {"needs_gpu": needs_gpu, "tolerance": None if tolerance is None else float(tolerance)}

    def config(self) -> dict:
        """Everything that determines this model's output (used in cache keys and results)."""
        return {"name": self.name, "version": self.version, "params": dict(self.params)}


class Retriever(_Configurable):
    """A first-stage retriever: index a corpus once, then search it."""

    #: True if the model learns from each split's training queries (e.g. fine-tuned encoders).
    trainable: ClassVar[bool] = False
    #: Queries per ``search`` call when the runner times per-query latency (results.json's
    #: ``efficiency.query_latency``); ``None``: all of a split's queries in one call, no latency.
    #: Declare it only where a query's ranking does not depend on the other queries of the call
    #: (the run file must not change): not for encoders whose floats move with the batch.
    query_batch: ClassVar[int | None] = None

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

    def api_usage(self) -> Mapping[str, object] | None:
        """A paid reranker's usage in this process (results.json's ``efficiency.api``):
        ``{"documents_sent": int, "tokens_sent": int | None, "cost_usd": float | None,
        "price": str | None}``, counting only what was sent (answers from a response cache
        cost nothing) and pricing only measured units. ``None`` (the default): it pays no one."""
        return None

    def rerank(
        self,
        queries: Sequence[Query],
        candidates: Mapping[str, Sequence[str]],
        corpus: Mapping[str, Document],
        ctx: RunContext,
    ) -> dict[str, Ranking]:
        raise NotImplementedError
