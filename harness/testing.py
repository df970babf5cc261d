"""Helpers for plugin authors' own tests: conformance checks and in-process registration.

    from statbench.testing import check_retriever

    def test_my_retriever_conforms(tmp_path):
        check_retriever(MyRetriever, tmp_path)

Each check raises ``AssertionError`` naming the first broken rule.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from pathlib import Path

from .api import FAMILIES, Document, Query, Reranker, Retriever, RunContext, Task
from .plugins import load_entry_points, pm, reset_registry

SAMPLE_CORPUS = (
    Document("d1", "The tenant must pay the rent on the first day of each month."),
    Document("d2", "A landlord may terminate the lease after three months of unpaid rent."),
    Document("d3", "Every person has the right to marry and to found a family."),
    Document("d4", "The employer shall pay wages at least once a month."),
)
SAMPLE_QUERIES = (Query("q1", "when is the rent due"), Query("q2", "right to marry"))


def make_context(cache_dir: Path, language: str = "en", name: str = "conformance") -> RunContext:
    """A run context writing into ``cache_dir``, as the harness would build one."""
    cache_dir = Path(cache_dir)
    return RunContext(
        task_name=name, language=language, cache_dir=cache_dir / "model", cache_root=cache_dir,
        data_checksum="0" * 64, log=logging.getLogger("statbench.testing"),
    )


def _check_class(cls, base: type) -> None:
    assert isinstance(cls, type) and issubclass(cls, base), f"{cls!r} must subclass statbench.api.{base.__name__}"
    assert isinstance(getattr(cls, "name", None), str) and cls.name, f"{cls.__name__}.name must be a non-empty str"
    assert not any(c.isspace() for c in cls.name), f"{cls.__name__}.name {cls.name!r} must not contain whitespace"
    assert cls.family in FAMILIES, f"{cls.__name__}.family {cls.family!r} must be one of {FAMILIES}"
    assert isinstance(cls.description, str), f"{cls.__name__}.description must be a str"
    assert isinstance(cls.default_params, dict), f"{cls.__name__}.default_params must be a dict"
    try:
        json.dumps(cls.default_params)
    except TypeError as exc:
        raise AssertionError(f"{cls.__name__}.default_params must be JSON-serialisable: {exc}") from None


def _check_rankings(owner: str, rankings, query_ids, allowed_docs, k: int | None) -> None:
    assert isinstance(rankings, dict), f"{owner} must return a dict query id -> ranking"
    extra = set(rankings) - set(query_ids)
    assert not extra, f"{owner} returned rankings for unknown query ids {sorted(extra)}"
    for qid, ranking in rankings.items():
        docs = [pair[0] for pair in ranking]
        assert len(docs) == len(set(docs)), f"{owner}: query {qid} ranks a document twice"
        assert set(docs) <= set(allowed_docs), f"{owner}: query {qid} ranks unknown docs {sorted(set(docs) - set(allowed_docs))}"
        if k is not None:
            assert len(ranking) <= k, f"{owner}: query {qid} returned {len(ranking)} documents for k={k}"
        for doc_id, score in ranking:
            assert isinstance(doc_id, str), f"{owner}: doc id {doc_id!r} must be a str"
            assert isinstance(score, (int, float)) and math.isfinite(score), f"{owner}: score {score!r} must be finite"


def check_retriever(cls, tmp_path, params: dict | None = None, corpus=SAMPLE_CORPUS, queries=SAMPLE_QUERIES,
                    language: str = "en") -> dict:
    """Index a small corpus, search it twice, check types, bounds and determinism."""
    _check_class(cls, Retriever)
    model = cls(**(params or {}))
    json.dumps(model.config())
    ctx = make_context(tmp_path, language)
    if model.trainable:
        qrels = {queries[0].id: {corpus[0].id: 1}}
        model.train(list(queries), qrels, list(corpus), ctx)
    model.index(list(corpus), ctx)
    first = model.search(list(queries), 2, ctx)
    _check_rankings(f"{cls.__name__}.search", first, [q.id for q in queries], [d.id for d in corpus], 2)
    again = model.search(list(queries), 2, ctx)
    assert first == again, f"{cls.__name__}.search is not deterministic"
    return first


def check_reranker(cls, tmp_path, params: dict | None = None, corpus=SAMPLE_CORPUS, queries=SAMPLE_QUERIES,
                   language: str = "en") -> dict:
    """Rerank every document for each query; only candidates may come back."""
    _check_class(cls, Reranker)
    model = cls(**(params or {}))
    json.dumps(model.config())
    ctx = make_context(tmp_path, language)
    by_id = {d.id: d for d in corpus}
    candidates = {q.id: [d.id for d in corpus[:3]] for q in queries}
    out = model.rerank(list(queries), candidates, by_id, ctx)
    _check_rankings(f"{cls.__name__}.rerank", out, [q.id for q in queries], [d.id for d in corpus[:3]], None)
    assert out == model.rerank(list(queries), candidates, by_id, ctx), f"{cls.__name__}.rerank is not deterministic"
    return out


def check_task(cls, data_dir) -> None:
    """Load a task from ``data_dir``; check measures parse and splits, qrels and corpus agree."""
    import ir_measures

    assert issubclass(cls, Task), f"{cls!r} must subclass statbench.api.Task"
    for m in cls.measures:
        ir_measures.parse_measure(m.ir_measure)
    data = cls().load(Path(data_dir), logging.getLogger("statbench.testing"))
    assert data.splits, "a task needs at least one split"
    for split in data.splits:
        missing = [q for q in split.test if q not in data.queries]
        assert not missing, f"split {split.name} tests unknown queries {missing[:3]}"
    for qid, docs in data.qrels.items():
        unknown = [d for d in docs if d not in data.corpus]
        assert not unknown, f"qrels of {qid} point to documents not in the corpus: {unknown[:3]}"
    assert len(data.checksum) == 64, "TaskData.checksum must be a sha256 hex digest"


@contextlib.contextmanager
def registered_plugin(plugin, name: str):
    """Register a plugin object or module in-process for the duration of a test.

    Installed plugins are loaded first, so on a name clash they keep their names."""
    load_entry_points()
    pm.register(plugin, name=name)
    reset_registry()
    try:
        yield
    finally:
        pm.unregister(name=name)
        reset_registry()
