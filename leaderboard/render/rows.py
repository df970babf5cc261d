"""A board's rows as the page shows them: each result's view (cells, badges, provenance), the
published figures' rows, labels that never collide, and the script's data of each row."""

from __future__ import annotations

import json
import math

from statbench.leaderboard.collect.rows import Row
from statbench.leaderboard.render.cardview import training
from statbench.leaderboard.render.efficiency import efficiency_cells
from statbench.leaderboard.render.provenance import hardware_words, plugin_text, reproduce_line, source_words
from statbench.leaderboard.render.templating import fmt
from statbench.leaderboard.verify.levels import LEVELS, MEANING
from statbench.scoring.publishable import is_bounded
from statbench.scoring.significance import format_p


def short_params(row: Row, kind: str) -> str:
    """Parameters that differ from the defaults the result recorded (all of them in a result
    written before defaults were recorded): the row's identity, read from its record alone."""
    params = row.identity["params"] if kind == "retrievers" else (row.identity.get("reranker") or {}).get("params", {})
    shown = dict(sorted(params.items()))
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v}" for k, v in shown.items())


def _cells(res, measures: list[dict]) -> list[dict]:
    """One cell per measure: its mean and std, and each fold's value when the run has several splits."""
    splits = res.splits
    cells = []
    for m in measures:
        label = m["label"]
        agg = res.aggregate.get(label)
        cell = {"label": label, "mean": None, "std": None, "folds": [], "marker": None}
        if agg is not None:
            cell["mean"], cell["std"] = agg.mean, agg.std
            if len(splits) > 1:
                cell["folds"] = [{"name": s.name, "n": s.n_queries, "value": s.scores.get(label)} for s in splits]
        cells.append(cell)
    return cells


def _breakdown(res, tested: str) -> list[dict]:
    """The tested measure per category of each breakdown group that has more than one category."""
    breakdown = [
        {"group": group, "values": [(category, scores[tested]) for category, scores in sorted(values.items())
                                    if tested in scores]}
        for group, values in sorted((res.breakdown or {}).items())
        if len(values) > 1  # one value (UK: every query has 3 relevant articles) says nothing
    ]
    return [b for b in breakdown if b["values"]]


def _results_rel(row: Row, results_root) -> str:
    """The result file's path under the results folder (its bare name when it lies elsewhere)."""
    try:
        return str(row.path.relative_to(results_root))
    except ValueError:
        return row.path.name


def _provenance(row: Row, run_href, results_rel: str, reproduction) -> dict:
    """Where the row's figures come from: versions, plugins, parameters, data, command and files."""
    res = row.results
    rr = row.reranker
    splits = res.splits
    return {
        "statbench_version": res.statbench_version,
        "plugin": plugin_text(row.model.plugin),
        "model_version": row.model.version or "",
        "params": json.dumps(row.model.params, sort_keys=True, ensure_ascii=False),
        "reranker": None if rr is None else {
            "plugin": plugin_text(rr.plugin),
            "params": json.dumps(rr.params, sort_keys=True, ensure_ascii=False),
        },
        "data_checksum": res.task.data_checksum,
        # a fused run's inputs (statbench fuse): each one's model or path and run sha256
        "components": [{"what": c.model or c.source, "sha256": c.run_sha256, "command": c.command or ""}
                       for c in getattr(res, "components", None) or ()],
        "command": res.command,
        "reproduce": reproduce_line(res, getattr(row, "source", None)),
        "source": source_words(res, getattr(row, "source", None)),
        "run_sha256": res.run_file.sha256,
        "run_href": run_href,
        "reproduction": reproduction,
        "created": res.created,
        "results_file": results_rel,
        "splits": [{"name": s.name, "n": s.n_queries} for s in splits],
        "dropped": len(res.task.dropped or []),
        "total_seconds": res.timings.get("total"),
        "hardware": hardware_words(res.environment or {}),
        "problems": list(row.problems),
        "notes": list(row.notes),
    }


def _identity(row: Row) -> dict:
    """Who the row is: model, parameters, reranker, pool, family, training and budget."""
    rr = row.reranker
    return {
        "key": row.key,
        "reference": False,
        "name": row.model.name,
        "params": short_params(row, "retrievers") if not row.model.name.startswith("pool:") else "",
        "reranker": None if rr is None else {"name": rr.name, "params": short_params(row, "rerankers")},
        "pool": row.pool,
        "family": row.family,
        "trained": row.trained,
        "training": training(row.trained, getattr(row, "card", None)),
        "seen": bool(getattr(row, "card", None) and row.card.test_queries_seen),
        "budget": row.budget or "",
    }


def row_view(row: Row, measures: list[dict], tested: str, run_href, results_root, reproduction=None) -> dict:
    """What a row's line shows; its comparison with the baseline is filled in by
    :func:`compared` (the rows' views are made apart from the tests: .forkmap)."""
    res = row.results
    cells = _cells(res, measures)
    breakdown = _breakdown(res, tested)
    results_rel = _results_rel(row, results_root)
    return {
        **_identity(row),
        "multi_split": len(res.splits) > 1,
        "cells": cells,
        "comparison": None,
        "is_baseline": False,
        "breakdown": breakdown,
        "efficiency": efficiency_cells(res),
        "verification": verification_view(getattr(row, "verification", None)),
        "level": level_view(getattr(row, "level", None)),
        "card": None if getattr(row, "card", None) is None else [list(f) for f in row.card.fields],
        "provenance": _provenance(row, run_href, results_rel, reproduction),
    }


def level_view(level) -> dict | None:
    """The badge of a row's level (:mod:`~statbench.leaderboard.verify.levels`): ``name`` and its tooltip ``title``."""
    return None if level is None else {"name": level.name, "title": level.title}


def levels_legend() -> list[dict]:
    """The levels' legend, highest first: what each one checked and did not."""
    return [{"name": name, "meaning": MEANING[name]} for name in LEVELS]


def verification_view(verification) -> dict | None:
    """The badge of a row's verification (None: the board was built without ``--verify``):
    ``status``, the badge's ``text`` and its tooltip ``title`` (the date and the statbench
    version that verified it, or why it could not be)."""
    if verification is None:
        return None
    if verification.status == "verified":
        title = (f"re-scored from its run file against the task's judgements on {verification.verified_on or '?'} "
                 f"by statbench {verification.statbench_version or '?'}: every figure agrees")
        covers = verification.covers()
        return {"status": "verified", "text": "verified", "title": f"{title}; {covers}" if covers else title,
                "checked": list(verification.checked), "declared": list(verification.declared)}
    return {"status": verification.status, "text": verification.status, "title": verification.reason or "",
            "checked": [], "declared": []}


def _published_scores(label: str, scores: dict, measures: list[dict], problems: list[str]) -> dict:
    """The published figures that can be shown: numbers, finite, in [0, 1] when the measure
    is bounded; any other is left out with a problem line."""
    bounded = {m["label"]: is_bounded(m["ir_measure"]) for m in measures}
    kept = {}
    for measure, value in sorted(scores.items()):
        if value is None:
            continue
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok and bounded.get(measure, is_bounded(measure)) and not 0.0 <= value <= 1.0:
            ok = False
        if ok:
            kept[measure] = value
        else:
            problems.append(f"published figure {label!r}, {measure}: {value!r} is not a valid score: not shown")
    return kept


def reference_views(published: dict, measures: list[dict], problems: list[str] | None = None,
                     prefix: str = "ref-") -> list[dict]:
    views = []
    problems = [] if problems is None else problems
    for i, (label, ref) in enumerate(sorted(published.items())):
        scores = _published_scores(label, ref.get("scores", {}), measures, problems)
        views.append({
            "key": f"{prefix}{i}",
            "label": label,
            "reference": True,
            "name": label,
            "source": ref.get("source", ""),
            "family": ref.get("family", ""),
            "trained": None,
            "pool": None,
            "cells": [{"label": m["label"], "mean": scores.get(m["label"]), "std": None, "folds": [], "marker": None}
                      for m in measures],
        })
    return views


def _label(view: dict) -> str:
    text = view["name"]
    if view.get("params"):
        text += f" ({view['params']})"
    if view.get("reranker"):
        text += f" → {view['reranker']['name']}"
        if view["reranker"]["params"]:
            text += f" ({view['reranker']['params']})"
    if view.get("pool") and view["name"] != f"pool:{view['pool']}":
        text += f" [pool {view['pool']}]"
    return text


def unique_labels(views: list[dict], rows: list[Row]) -> dict[str, str]:
    """Row key -> label; rows that would read alike (models of one name from two
    distributions) are told apart by their recorded distribution, and rows that still read
    alike (one distribution: a parameter recorded as text by one and as a number by the
    other, two pools of one name built differently) by their key, which is the
    same on every machine: two rows are two configurations and never share a label."""
    labels = {v["key"]: _label(v) for v in views}

    def counts() -> dict[str, int]:
        seen: dict[str, int] = {}
        for text in labels.values():
            seen[text] = seen.get(text, 0) + 1
        return seen

    seen = counts()
    for row in rows:
        if seen[labels[row.key]] > 1:
            dists = [d for d in (_distribution(row.model), _distribution(row.reranker) if row.reranker else "") if d]
            labels[row.key] += f" [{' → '.join(dists) or 'no distribution recorded'}]"
    seen = counts()
    for row in rows:
        if seen[labels[row.key]] > 1:
            labels[row.key] += f" [key {row.key}]"
    return labels


def _distribution(record) -> str:
    plugin = getattr(record, "plugin", None)
    return (plugin.distribution or "in-process") if plugin is not None else ""


def _trained_text(trained) -> str:
    return "" if trained is None else ("trained" if trained else "zero-shot")


def row_script_data(v: dict) -> dict:
    """What the script needs to show a row that is not on the page it runs on (the page's
    JSON): sort keys, filter keys, the cells as the page prints them (so the script never
    formats a number), the marker, and the page that holds the row's details. The label,
    the comparison with the baseline and the page are :func:`placed_row_data`'s to fill in."""
    return {
        "label": None, "family": v["family"], "pool": v["pool"] or "",
        "values": {c["label"]: c["mean"] for c in v["cells"]},
        "ref": v["reference"],
        "name": v["name"],
        "params": v.get("params") or "",
        "rr": None if not v.get("reranker") else [v["reranker"]["name"], v["reranker"]["params"]],
        "base": False,
        "source": v.get("source") or "",
        "trained": v.get("training", _trained_text(v["trained"])),
        "lvl": None if not v.get("level") else [v["level"]["name"], v["level"]["title"]],
        "seen": bool(v.get("seen")),
        "budget": v.get("budget") or "",
        "eff": [[c["text"], c["title"]] for c in v.get("efficiency") or []] or None,
        "effv": {c["key"]: c["value"] for c in v.get("efficiency") or [] if c["value"] is not None},
        "ver": None if not v.get("verification") else [v["verification"]["status"], v["verification"]["text"],
                                                         v["verification"]["title"]],
        "cells": [[fmt(c["mean"]), fmt(c["std"]) if c["folds"] else None,
                   [fmt(f["value"]) for f in c["folds"]] or None, None, None] for c in v["cells"]],
        "p": None,
        "rank": None,
        "page": None,
    }


def placed_row_data(data: dict, v: dict, page_index: int) -> dict:
    """A row's :func:`row_script_data` with what is known only once the board is put together: its
    label, its comparison with the baseline (each cell's marker and adjusted p), its rank and its
    page."""
    comparison = v.get("comparison")
    data["label"] = v["label"]
    data["base"] = bool(v.get("is_baseline"))
    for cell, shown in zip(data["cells"], v["cells"]):
        cell[3], cell[4] = shown["marker"], shown.get("p_holm")
    data["p"] = format_p(comparison.p_holm) if comparison is not None else None
    rank = v.get("rank")
    data["rank"] = None if rank is None else [rank["text"], rank["top"], rank["why"]]
    data["page"] = page_index
    return data


#: why a published row has no rank
PUBLISHED_UNRANKED = "published figures: no per-query scores, so no rank"


def rank_view(key: str, ranks) -> dict:
    """A row's rank cell: ``text`` ("2 (1–4)", None when unranked), ``top`` (in the top group)
    and ``why`` it has no rank (a reference row: :data:`PUBLISHED_UNRANKED`)."""
    found = ranks.ranks.get(key) if ranks is not None else None
    if found is not None:  # a group of one ranked row says nothing: no mark
        return {"text": found.text(), "top": ranks.tests > 0 and key in ranks.top, "why": ""}
    why = ranks.unranked.get(key, "not ranked") if ranks is not None else PUBLISHED_UNRANKED
    return {"text": None, "top": False, "why": why}


def compared(view: dict, comparison, is_baseline: bool, marks: dict, rank: dict) -> dict:
    """A row's view with its comparison against the baseline on the tested measure (None: not
    tested, or the baseline itself), its tests on every measure of the board's family
    (``marks``: measure -> :class:`~statbench.leaderboard.ranking.holm_family.MeasureMark`; a
    cell is marked when its test is significant) and its rank (:func:`rank_view`)."""
    view["comparison"], view["is_baseline"], view["rank"] = comparison, is_baseline, rank
    for cell in view["cells"]:
        mark = marks.get(cell["label"])
        if mark is not None and mark.direction:
            cell["marker"] = "up" if mark.direction > 0 else "down"
            cell["p_holm"] = format_p(mark.p_holm)
    return view
