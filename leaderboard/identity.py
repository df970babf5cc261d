"""What a configuration is, as the installed plugins declare it: its identity (for rows,
superseding and significance) and whether it ran a reduced budget.

Identity rule: a model's parameters count only where they differ from the installed
model's declared defaults. A parameter added later with a default that reproduces the old
behaviour (``with_headings=False`` on BM25) therefore leaves the identity of results
written before it unchanged, and the old and new results of one configuration are one
row. A model that is not installed here (or whose recorded plugin is another
distribution) keeps all its recorded parameters: nothing is assumed about it, and its
recorded distribution is part of its identity (another distribution's ``bm25`` is never
the installed ``bm25``'s row). Values compare in :func:`canonical` form: ``k1=1`` and
``k1=1.0`` are one configuration.

Budget rule: ``model.budget`` as the run recorded it; results written before that field
existed are migrated on read from the installed model's ``Param(budget=...)``
declarations (e.g. ``preset=cpu-small`` of dsr/gdsr), never from a list of names here.
"""

from __future__ import annotations

from statbench.results.record import ModelRecord, as_results


def _record_or_head(obj):
    from statbench.leaderboard.rowheads import RowHead

    return obj if isinstance(obj, RowHead) else as_results(obj)


def declared(record: ModelRecord | None, kind: str):
    """The installed class of ``record`` (``kind``: "retrievers" or "rerankers"), or None
    when it is not installed or is provided by another distribution than the one recorded."""
    if record is None:
        return None
    from statbench.registry.plugins import get_registry

    entry = getattr(get_registry(), kind).get(record.name)
    if entry is None:
        return None
    recorded = record.plugin.distribution if record.plugin is not None else None
    installed = getattr(getattr(entry, "plugin", None), "distribution", None)
    if recorded and installed and recorded != installed:
        return None
    return entry.cls


def canonical(value):
    """A parameter value as identity compares it: a whole float is its int (``1.0`` and
    ``1`` are one setting, whether a file or a hand spelled it), a bool stays a bool
    (``True`` is not ``1``), containers element by element."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def _same_value(a, b) -> bool:
    import json

    try:
        return json.dumps(canonical(a), sort_keys=True) == json.dumps(canonical(b), sort_keys=True)
    except (TypeError, ValueError):
        return a == b


def effective_params(record: ModelRecord, kind: str) -> dict:
    """The parameters that make the configuration: those that differ from the installed
    model's declared defaults (all of them when it is not installed), each in its
    :func:`canonical` form."""
    cls = declared(record, kind)
    if cls is None:
        return {k: canonical(v) for k, v in record.params.items()}
    defaults = cls.defaults()
    return {k: canonical(v) for k, v in record.params.items() if k not in defaults or not _same_value(defaults[k], v)}


def foreign_distribution(record: ModelRecord | None, kind: str) -> str | None:
    """The recorded distribution of a model that is not the installed one of that name
    (another distribution's model, or one not installed here): part of its identity, so
    that two distributions' models of one name are never one row."""
    if record is None or record.plugin is None or not record.plugin.distribution:
        return None
    return None if declared(record, kind) is not None else record.plugin.distribution


def identity(results) -> dict:
    """What makes a row (a :class:`Results`, or a results dict): model name and effective
    parameters, reranker name and effective parameters, pool (and its file's sha256 where
    recorded); the recorded distribution
    of a model that is not the installed one of its name; the reduced budget it ran, if any.
    A :class:`~statbench.leaderboard.rowheads.RowHead` holds all of that too."""
    results = _record_or_head(results)
    reranker = results.reranker
    ident = {
        "model": results.model.name,
        "params": effective_params(results.model, "retrievers"),
        "reranker": None if reranker is None else {"name": reranker.name,
                                                   "params": effective_params(reranker, "rerankers")},
        "pool": results.pool,
    }
    if results.pool_sha256:  # two pools of one name built differently rank different candidates
        ident["pool_sha256"] = results.pool_sha256
    # only where the model is not the installed one: identities of installed models stay as they were
    dist = foreign_distribution(results.model, "retrievers")
    if dist:
        ident["distribution"] = dist
    dist = foreign_distribution(reranker, "rerankers")
    if dist:
        ident["reranker"]["distribution"] = dist
    reduced = budget(results)
    if reduced:  # a reduced-budget run is never the same row as the protocol's run
        ident["budget"] = reduced
    return ident


def record_budget(record: ModelRecord | None, kind: str) -> str | None:
    """The reduced budget one model ran: recorded, or migrated from its declarations."""
    if record is None:
        return None
    if record.budget:
        return record.budget
    cls = declared(record, kind)
    if cls is None:
        return None
    from statbench.contract.params import budget_of

    return budget_of(record.params, cls.param_specs())


def budget(results) -> str | None:
    """The reduced budget of a result (first stage and reranker), e.g. ``preset=cpu-small``;
    None when it ran the protocol's settings."""
    results = _record_or_head(results)
    parts = [b for b in (record_budget(results.model, "retrievers"), record_budget(results.reranker, "rerankers")) if b]
    return "; ".join(parts) or None
