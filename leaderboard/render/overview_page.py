"""What the overview section of the first page shows of each benchmark: the view the template
(templates/overview.html) renders from an :class:`~.overview_data.Overview`."""

from __future__ import annotations

from markupsafe import Markup

from statbench.leaderboard.render.overview_data import ALL, Overview, overview
from statbench.leaderboard.render.templating import fmt, json_for_html
from statbench.registry.plugins import get_registry

#: the marks of a figure shown but not ranked: (sign, why)
MARKS = {"seen": ("†", "saw this task's test queries (declared): shown, not ranked"),
         "queries": ("‡", "scored on other queries than the rest of the board: shown, not ranked")}


def benchmark_overviews(boards: dict, keys: dict, registry=None) -> list[Overview]:
    """The overview of every declared benchmark (by id), from the collected boards."""
    registry = registry or get_registry()
    found = []
    for bench_id in sorted(registry.benchmarks):
        bench = registry.benchmarks[bench_id].cls
        infos = {t.task: registry.tasks[t.task].cls.task_info() for t in bench.tasks}
        found.append(overview(bench, infos, boards, keys))
    return found


def _href(board: str | None, slugs: dict) -> str | None:
    return f"task-{slugs[board]}.html" if board is not None and board in slugs else None


def _rank_texts(rank, run: int, of: int) -> list[str]:
    """The aggregate cells of one task set as printed: tasks run, Borda rank, mean rank."""
    if rank is None:
        return [f"{run}/{of}", "", ""]
    return [f"{run}/{of}", f"{rank.borda_rank} ({rank.borda_low}\u2013{rank.borda_high})",
            f"{rank.mean_rank:.2f} ({rank.mean_rank_low:.2f}\u2013{rank.mean_rank_high:.2f})"]


def _attribute_json(value) -> Markup:
    """JSON for a single-quoted HTML attribute: no ``< > &`` (:func:`json_for_html`) and no ``'``."""
    return Markup(json_for_html(value).replace("'", "\\u0027"))


def overview_view(o: Overview, slugs: dict) -> dict:
    """What the template shows of one benchmark's overview (``slugs``: board name -> its files' slug)."""
    sets = [ALL, *o.languages]
    columns = [{"task": c.task, "measure": c.measure, "language": c.language, "title": c.title,
                "board": c.board, "href": _href(c.board, slugs), "queries": c.queries,
                "others": [{"name": name, "href": _href(name, slugs)} for name in c.others]}
               for c in o.columns]
    set_tasks = {s: sum(1 for c in columns if s == ALL or c["language"] == s) for s in sets}
    rows = []
    for r in o.rows:
        cells = []
        for column, value, mark in zip(columns, r.cells, r.marks):
            sign, why = MARKS.get(mark or "", ("", ""))
            cells.append({"text": fmt(value) if value is not None else "", "mark": sign, "why": why,
                          "href": column["href"] if value is not None else None})
        ran = {c["language"] for v, c in zip(r.cells, columns) if v is not None}
        texts = {}
        for s in sets:
            run = sum(v is not None for v, c in zip(r.cells, columns) if s == ALL or c["language"] == s)
            if s == ALL or s in ran:
                texts[s] = _rank_texts(r.ranks.get(s), run, set_tasks[s])
        rank = r.ranks.get(ALL)
        rows.append({"key": r.key, "label": r.label, "family": r.family,
                     "training": "trained" if r.trained else "zero-shot", "languages": " ".join(sorted(ran)),
                     "cells": cells, "all": texts.pop(ALL), "sets": _attribute_json(texts) if texts else None,
                     "points": None if rank is None else f"{rank.borda:g} Borda points over {rank.tasks} task(s)"})
    return {"id": o.benchmark.id, "description": o.benchmark.description, "columns": columns, "rows": rows,
            "sets": sets, "languages": o.languages, "resamples": o.resamples,
            "families": sorted({r["family"] for r in rows}), "n_tasks": len(columns),
            "not_run": [c["task"] for c in columns if c["board"] is None],
            "marks": sorted({m for r in o.rows for m in r.marks if m})}


def overview_views(boards: dict, keys: dict, slugs: dict) -> list[dict]:
    """The views of the benchmarks any result is on (a site of other tasks shows none)."""
    return [overview_view(o, slugs) for o in benchmark_overviews(boards, keys) if o.rows]
