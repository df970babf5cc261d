"""What a configuration is, from its own record alone: its identity (for rows, superseding
and significance), its label's parameters and whether it ran a reduced budget. Nothing here
asks which third-party plugins are installed (only statbench's own built-ins, which come with
statbench, are read): a board built where a result's plugin is installed and one built where
it is not (a results repository's CI) show the same rows, labels and keys.

Identity rule: a model's parameters count only where they differ from the declared
defaults the run recorded beside them (``model.defaults``). A parameter added later with a
default that reproduces the old behaviour (``with_headings=False`` on BM25) therefore leaves
the identity of results written before it unchanged, and the old and new results of one
configuration are one row. A record written before ``defaults`` existed keeps all its
recorded parameters (nothing is assumed about its defaults), but for one of statbench's own
models, whose defaults are those statbench declares. For statbench's own models a
parameter that differs from the default statbench declares counts as well: those
declarations ship with statbench (the same wherever a board is built), and a record cannot
restate a default to hide a setting. A model's recorded
distribution, unless it is statbench's own, is part of its identity (another
distribution's ``bm25`` is never statbench's ``bm25`` row). Values compare in
:func:`canonical` form: ``k1=1`` and ``k1=1.0`` are one configuration.

Budget rule: ``model.budget`` as the run recorded it. A record of one of statbench's own
models that records none (written before the field existed, or edited) gets what that
built-in's ``Param(budget=...)`` declarations make of its parameters (e.g.
``preset=cpu-small`` of dsr/gdsr): they come with statbench itself, never from a plugin that
happens to be installed. A third-party model's budget is only ever the recorded one.
"""

from __future__ import annotations

import json

from statbench.contract.params import budget_of
from statbench.leaderboard.collect.rowheads import RowHead
from statbench.registry.plugins import get_registry
from statbench.results.record import ModelRecord, as_results

#: the distribution of statbench's own models: recorded, but no part of a row's identity
BUILTIN_DISTRIBUTION = "statbench"


def _record_or_head(obj):
    return obj if isinstance(obj, RowHead) else as_results(obj)

def _is_builtin(record: ModelRecord) -> bool:
    dist = record.plugin.distribution if record.plugin is not None else None
    return bool(dist) and dist.strip().lower().replace("_", "-") == BUILTIN_DISTRIBUTION

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
    try:
        return json.dumps(canonical(a), sort_keys=True) == json.dumps(canonical(b), sort_keys=True)
    except (TypeError, ValueError):
        return a == b

def effective_params(record: ModelRecord, kind: str = "retrievers") -> dict:
    """The parameters that make the configuration, each in its :func:`canonical` form: those
    that differ from the defaults the record holds (all of them in a record without
    ``defaults``; a parameter without a recorded default always counts). For one of
    statbench's own models, a parameter that differs from the default statbench declares for
    it counts too, whatever the record says its default was: a record cannot hide a setting
    of a built-in by restating its default (the built-ins ship with statbench, the same on
    every machine that builds the board)."""
    shipped = _builtin_defaults(kind, record)
    defaults = record.defaults
    if defaults is None:
        # written before defaults were recorded: a built-in's are those statbench ships (its
        # rows keep their labels); another distribution's are not known, so every one counts
        defaults = shipped
        if not shipped:
            return {k: canonical(v) for k, v in record.params.items()}
    return {k: canonical(v) for k, v in record.params.items()
            if k not in defaults or not _same_value(defaults[k], v)
            or (k in shipped and not _same_value(shipped[k], v))}

def _builtin_defaults(kind: str, record: ModelRecord) -> dict:
    if not _is_builtin(record):
        return {}
    cls = _builtin_class(kind, record.name)
    return cls.defaults() if cls is not None else {}

def distribution(record: ModelRecord | None) -> str | None:
    """The recorded distribution of a model that is not one of statbench's own: part of its
    identity, so that two distributions' models of one name are never one row."""
    if record is None or record.plugin is None or not record.plugin.distribution or _is_builtin(record):
        return None
    return record.plugin.distribution

def identity(results) -> dict:
    """What makes a row (a :class:`Results`, or a results dict), from the record alone: model
    name and effective parameters, reranker name and effective parameters, pool (and its
    file's sha256 where recorded); the recorded distribution of a model that is not
    statbench's own; the reduced budget it ran, if any.
    A :class:`~statbench.leaderboard.collect.rowheads.RowHead` holds all of that too."""
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
    # only for a model that is not statbench's own: identities of built-in models stay as they were
    dist = distribution(results.model)
    if dist:
        ident["distribution"] = dist
    dist = distribution(reranker)
    if dist:
        ident["reranker"]["distribution"] = dist
    reduced = budget(results)
    if reduced:  # a reduced-budget run is never the same row as the protocol's run
        ident["budget"] = reduced
    return ident

def record_budget(record: ModelRecord | None, kind: str = "retrievers") -> str | None:
    """The reduced budget one model ran: recorded, or (one of statbench's own models, whose
    record says none: older than the field, or edited) what that built-in's declarations
    make of its parameters."""
    if record is None:
        return None
    if record.budget or not _is_builtin(record):
        return record.budget or None
    cls = _builtin_class(kind, record.name)
    if cls is None:
        return None

    return budget_of(record.params, cls.param_specs())

def _builtin_class(kind: str, name: str):
    """statbench's own class of ``name`` (``kind``: "retrievers" or "rerankers"), whatever
    else is installed; None when statbench has none of that name."""

    for entry in get_registry().providers(kind, name):
        dist = entry.plugin.distribution or ""
        if dist.strip().lower().replace("_", "-") == BUILTIN_DISTRIBUTION:
            return entry.cls
    return None

def budget(results) -> str | None:
    """The reduced budget of a result (first stage and reranker), e.g. ``preset=cpu-small``;
    None when it ran the protocol's settings."""
    results = _record_or_head(results)
    parts = [b for b in (record_budget(results.model), record_budget(results.reranker, "rerankers")) if b]
    return "; ".join(parts) or None
