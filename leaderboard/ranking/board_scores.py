"""A board's rows' per-query scores on one measure, as columns over one query set.

Ranks and tests compare rows on the same queries only: rows are grouped by the set of queries
they scored on the measure (a query without a score is not scored), each row's scores put in
the order of the sorted query ids of its set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class QuerySetColumns:
    """The rows scored on one query set: their scores as columns in sorted query-id order."""

    qids: tuple[str, ...]
    keys: list[str] = field(default_factory=list)
    columns: list[np.ndarray] = field(default_factory=list)

    def matrix(self) -> np.ndarray:
        """queries x rows"""
        return np.column_stack(self.columns) if self.columns else np.zeros((len(self.qids), 0))


def scored_queries(row, measure: str, tables: dict | None = None) -> tuple[tuple[str, ...], np.ndarray] | None:
    """(query ids, scores) of the queries ``row`` scored on ``measure``, in the row's order;
    None when it scored none (published figures, a measure it does not report). ``tables``: row
    key -> its table, read once for several measures (filled here)."""
    if tables is None:
        table = row.query_table()
    else:
        if row.key not in tables:
            tables[row.key] = row.query_table()
        table = tables[row.key]
    if table is not None:
        if measure not in table.labels:
            return None
        column = table.values[:, table.labels.index(measure)]
        kept = ~np.isnan(column)
        if not kept.any():
            return None
        if kept.all():
            return _qids_tuple(table), column[kept]
        return tuple(q for q, k in zip(table.qids, kept) if k), column[kept]
    scores = row.query_scores(measure)
    if not scores:
        return None
    return tuple(scores), np.array(list(scores.values()), dtype=float)


def _qids_tuple(table) -> tuple[str, ...]:
    """A table's query ids as a tuple, made once per table (a board's tests read each table on
    every measure of the family)."""
    ids = getattr(table, "_qids_tuple", None)
    if ids is None:
        ids = table._qids_tuple = tuple(table.qids)
    return ids


def sorted_order(qids: tuple[str, ...]) -> tuple[tuple[str, ...], np.ndarray]:
    """A row's query ids sorted, and where each of them is in ``qids`` (its scores in sorted
    query-id order: ``values[where]``)."""
    where = np.argsort(np.array(qids, dtype=object), kind="stable")
    return tuple(qids[i] for i in where), where


def columns_by_query_set(rows, measure: str, tables: dict | None = None, scored=None, placed: dict | None = None
                         ) -> tuple[dict[tuple[str, ...], QuerySetColumns], list[str]]:
    """(sorted query ids -> the rows scored on exactly those queries, keys of the rows with no
    per-query score on ``measure``), rows in the order given (``tables``: see :func:`scored_queries`;
    ``scored``: row -> what :func:`scored_queries` gives, e.g. kept between builds; ``placed``: a
    row's query order -> (it sorted, where each comes from), shared by several calls: each order
    sorted once)."""
    groups: dict[tuple[str, ...], QuerySetColumns] = {}
    placed = {} if placed is None else placed  # a row's order -> (sorted, where)
    unscored = []
    for row in rows:
        found = scored(row) if scored is not None else scored_queries(row, measure, tables)
        if found is None:
            unscored.append(row.key)
            continue
        qids, values = found
        if qids not in placed:
            placed[qids] = sorted_order(qids)
        ordered, where = placed[qids]
        group = groups.setdefault(ordered, QuerySetColumns(ordered))
        group.keys.append(row.key)
        group.columns.append(values[where])
    return groups, unscored


def main_query_set(groups: dict[tuple[str, ...], QuerySetColumns]) -> QuerySetColumns | None:
    """The query set most rows scored (among equals: the one with more queries, then the
    smallest ids): the set a board's rows are ranked on."""
    if not groups:
        return None
    return min(groups.values(), key=lambda g: (-len(g.keys), -len(g.qids), g.qids))


def query_set_words(group: QuerySetColumns, main: QuerySetColumns) -> str:
    """Why a row of ``group`` is not compared with the rows of ``main``."""
    mine, theirs = set(group.qids), set(main.qids)
    return (f"scored on another query set than the {len(main.keys)} ranked row{'s' if len(main.keys) != 1 else ''} "
            f"({len(mine - theirs)} of its {len(mine)} queries not theirs, {len(theirs - mine)} of their "
            f"{len(theirs)} not scored)")
