"""A board's breakdowns: per attribute (the task's own, the law of the relevant articles,
the number of relevant articles, the query length; see
:mod:`statbench.scoring.breakdowns`), one table (a row per drawn result, a column per
value with its query count) and one bar plot of the tested measure.

Like with like: a board's rows share their data and splits, so a value covers the same
queries in every row; a row whose results give another query count for a value (or do not
record the group: results written before it existed) shows no figure there, and the note
says why.

A group with a single value (UK's relevant articles: every query has 3) says nothing the
board's own figures do not: it is left out, with a note naming it and its value (the
figures stay in each result's results.json)."""

from __future__ import annotations

from unicodedata import east_asian_width

from statbench.leaderboard.render.plots import Series, category_bars

#: columns (and bar groups) shown per attribute; the others stay in each results.json
MAX_VALUES = 12


def breakdown_sections(rows, labels: dict[str, str], tested: str) -> list[dict]:
    """One section per breakdown group any of ``rows`` records, in name order (see the
    module docstring). ``rows``: the board's drawn rows (``Row``: ``key``, ``results``). A
    group with one value is a section with no table: ``single`` holds the note saying so."""
    sections = []
    for group in sorted({g for r in rows for g in r.results.breakdown or {}}):
        values = group_values(group, rows)
        if len(values) == 1:
            sections.append({"group": group, "single": single_value_note(group, values[0], rows)})
            continue
        sections.append(_section(group, rows, labels, tested))
    return [s for s in sections if s.get("single") or s["columns"]]


def group_values(group: str, rows) -> list[str]:
    """Every value of ``group`` in the results of ``rows`` (their breakdowns and, where
    recorded, the group's described values), in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        results = row.results
        formed = (results.breakdown_groups or {}).get(group)
        for value in (formed.values if formed is not None else ()):
            seen.setdefault(value, None)
        for value in (results.breakdown or {}).get(group, {}):
            seen.setdefault(value, None)
    return list(seen)


def single_value_note(group: str, value: str, rows) -> str:
    """The note that stands for a group with one value."""
    counts = set()
    for row in rows:
        formed = (row.results.breakdown_groups or {}).get(group)
        if formed is not None and formed.n_queries.get(value) is not None:
            counts.add(formed.n_queries[value])
    queries = f" ({counts.pop()} queries)" if len(counts) == 1 else ""
    return (f"by {group}: left out, every evaluated query has the same value ({value}){queries}, so its figure "
            "is the board's own; it stays in each result's results.json (breakdown).")


def _section(group: str, rows, labels: dict[str, str], tested: str) -> dict:
    formed = next((r.results.breakdown_groups[group] for r in rows
                   if group in (r.results.breakdown_groups or {})), None)
    if formed is not None:
        values, counts, rule = list(formed.values), dict(formed.n_queries), formed.rule
    else:  # results written before the groups were described: values by name, counts unknown
        values = sorted({v for r in rows for v in (r.results.breakdown or {}).get(group, {})})
        counts, rule = {}, ""
    shown = values[:MAX_VALUES]
    notes = []
    table_rows, series = [], []
    for row in rows:
        figures = (row.results.breakdown or {}).get(group)
        own = (row.results.breakdown_groups or {}).get(group)
        cells = []
        for value in shown:
            score = None if figures is None else figures.get(value, {}).get(tested)
            if score is not None and own is not None and counts and own.n_queries.get(value) != counts.get(value):
                notes.append(f"{labels[row.key]}: {group} {value} covers {own.n_queries.get(value)} queries, "
                             f"not {counts.get(value)}: not shown")
                score = None
            cells.append(score)
        if figures is None:
            notes.append(f"{labels[row.key]}: no {group} breakdown in its results (written before it existed)")
        table_rows.append({"label": labels[row.key], "cells": cells})
        series.append(Series(labels[row.key], {v: s for v, s in zip(shown, cells) if s is not None}))
    if len(values) > len(shown):
        notes.insert(0, f"{len(shown)} of {len(values)} values shown (the first in the group's order"
                        f"{': most queries first' if group == 'law' else ''}); every value is in each result's "
                        "results.json (breakdown).")
    return {
        "group": group,
        "single": None,
        "rule": rule,
        "columns": [{"value": v, "n": counts.get(v)} for v in shown],
        "rows": table_rows,
        "notes": notes,
        "svg": _bars(shown, series, tested, group),
    }


def _bars(values: list[str], series: list[Series], tested: str, group: str) -> str:
    """The bar plot, long values (law names) cut to what its label column holds; the full
    name stays in the table above."""
    short = {v: _cut(v) for v in values}
    if len(set(short.values())) < len(short):  # two cut alike: the full names
        short = {v: v for v in values}
    drawn = [Series(s.label, {short[v]: x for v, x in s.values.items()}) for s in series if s.values]
    return category_bars([short[v] for v in values], drawn, tested, group)


def _cut(text: str, width: int = 26) -> str:
    """``text`` cut to ``width`` columns, a wide (CJK) character counting two."""
    used = 0
    for i, char in enumerate(text):
        used += 2 if east_asian_width(char) in ("W", "F") else 1
        if used > width:
            return text[:i - 1] + "…"
    return text
