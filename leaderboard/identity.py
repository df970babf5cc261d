"""What a configuration is, as the installed plugins declare it: its identity (for rows,
superseding and significance) and whether it ran a reduced budget.

Identity rule: a model's parameters count only where they differ from the installed
model's declared defaults. A parameter added later with a default that reproduces the old
behaviour (``with_headings=False`` on BM25) therefore leaves the identity of results
written before it unchanged, and the old and new results of one configuration are one
row. A model that is not installed here (or whose recorded plugin is another
distribution) keeps all its recorded parameters: nothing is assumed about it.

Budget rule: ``model.budget`` as the run recorded it; results written before that field
existed are migrated on read from the installed model's ``Param(budget=...)``
declarations (e.g. ``preset=cpu-small`` of dsr/gdsr), never from a list of names here.
"""

from __future__ import annotations

from statbench.results import ModelRecord, as_results


def declared(record: ModelRecord | None, kind: str):
    """The installed class of ``record`` (``kind``: "retrievers" or "rerankers"), or None
    when it is not installed or is provided by another distribution than the one recorded."""
    if record is None:
        return None
    from statbench.plugins import get_registry

    entry = getattr(get_registry(), kind).get(record.name)
    if entry is None:
        return None
    recorded = record.plugin.distribution if record.plugin is not None else None
    installed = getattr(getattr(entry, "plugin", None), "distribution", None)
    if recorded and installed and recorded != installed:
        return None
    return entry.cls


def effective_params(record: ModelRecord, kind: str) -> dict:
    """The parameters that make the configuration: those that differ from the installed
    model's declared defaults (all of them when it is not installed)."""
    cls = declared(record, kind)
    if cls is None:
        return dict(record.params)
    defaults = cls.defaults()
    return {k: v for k, v in record.params.items() if k not in defaults or defaults[k] != v}


def identity(results) -> dict:
    """What makes a row (a :class:`Results`, or a results dict): model name and effective
    parameters, reranker name and effective parameters, pool."""
    results = as_results(results)
    reranker = results.reranker
    return {
        "model": results.model.name,
        "params": effective_params(results.model, "retrievers"),
        "reranker": None if reranker is None else {"name": reranker.name,
                                                   "params": effective_params(reranker, "rerankers")},
        "pool": results.pool,
    }


def record_budget(record: ModelRecord | None, kind: str) -> str | None:
    """The reduced budget one model ran: recorded, or migrated from its declarations."""
    if record is None:
        return None
    if record.budget:
        return record.budget
    cls = declared(record, kind)
    if cls is None:
        return None
    from statbench.params import budget_of

    return budget_of(record.params, cls.param_specs())


def budget(results) -> str | None:
    """The reduced budget of a result (first stage and reranker), e.g. ``preset=cpu-small``;
    None when it ran the protocol's settings."""
    results = as_results(results)
    parts = [b for b in (record_budget(results.model, "retrievers"), record_budget(results.reranker, "rerankers")) if b]
    return "; ".join(parts) or None
