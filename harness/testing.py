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
from pathlib import Path

from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.contract.model import Reranker, Retriever, RunContext
from statbench.contract.params import applicable_params
from statbench.contract.records import Document, Query
from statbench.errors import StatbenchError
from statbench.loading.load import load_task
from statbench.registry.checks import PluginError, check_rankings, check_task_class
from statbench.registry.class_checks import check_model_class
from statbench.registry.plugins import PluginInfo, Registered, get_registry, load_entry_points, pm, reset_registry

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


@contextlib.contextmanager
def _as_assertion():
    """The kit reports a broken rule as an ``AssertionError`` (what pytest expects)."""
    try:
        yield
    except PluginError as exc:
        raise AssertionError(str(exc)) from None


def _check_class(cls, base: type) -> None:
    with _as_assertion():
        check_model_class(cls, base)


def _check_rankings(owner: str, rankings, query_ids, allowed_docs, k: int | None, candidates=None) -> None:
    """The runner's own checks (statbench.registry.checks.check_rankings), as assertions."""
    with _as_assertion():
        check_rankings(rankings, owner=owner, query_ids=set(query_ids), corpus=set(allowed_docs),
                       candidates=candidates, k=k)


def check_retriever(cls, tmp_path, params: dict | None = None, corpus=SAMPLE_CORPUS, queries=SAMPLE_QUERIES,
                    language: str = "en") -> dict:
    """Index a small corpus, search it twice, check types, bounds and determinism."""
    _check_class(cls, Retriever)
    model = cls(**(params or {}))
    # what a run does: parameters that do not apply to this language are dropped (refused when given)
    model.params = applicable_params(model.params, cls.param_specs(), language, cls.name, given=params or {})
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
    # what a run does: parameters that do not apply to this language are dropped (refused when given)
    model.params = applicable_params(model.params, cls.param_specs(), language, cls.name, given=params or {})
    json.dumps(model.config())
    ctx = make_context(tmp_path, language)
    by_id = {d.id: d for d in corpus}
    candidates = {q.id: [d.id for d in corpus[:3]] for q in queries}
    out = model.rerank(list(queries), candidates, by_id, ctx)
    _check_rankings(f"{cls.__name__}.rerank", out, [q.id for q in queries], (), None, candidates=candidates)
    assert out == model.rerank(list(queries), candidates, by_id, ctx), f"{cls.__name__}.rerank is not deterministic"
    return out


def check_task(cls, data_dir) -> None:
    """Load a task from ``data_dir`` the way every command does
    (:func:`statbench.loading.load.load_task`): the registry's class checks, then the load
    with the runner's checks of the loaded data (ids, judgements, splits known and disjoint
    from training). Whatever stops a command (the plugin raising, a data format error, data
    that break a rule) is an ``AssertionError`` with the command's very line."""
    with _as_assertion():
        check_task_class(cls)
    try:
        loaded = load_task(_task_entry(cls), Path(data_dir), logging.getLogger("statbench.testing"))
    except StatbenchError as exc:
        raise AssertionError(str(exc)) from None
    assert len(loaded.data.checksum) == 64, "TaskData.checksum must be a sha256 hex digest"


def _task_entry(cls) -> Registered:
    """The registry's entry for task class ``cls``; one naming its module when the class is
    not registered (errors then name the plugin by its module)."""
    entry = next((e for e in get_registry().tasks.values() if e.cls is cls), None)
    if entry is not None:
        return entry
    module = getattr(cls, "__module__", "?")
    return Registered(name=cls.task_info().name, cls=cls, plugin=PluginInfo(name=module, module=module))


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


def invoke_cli(args, **kwargs):
    """Run ``statbench ARGS`` in-process with click's ``CliRunner`` and return its result
    (``exit_code``, ``output``): an end-to-end test of a plugin without a subprocess."""
    return CliRunner().invoke(cli, [str(arg) for arg in args], **kwargs)
