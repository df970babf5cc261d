"""A row's scores in an overview column (leaderboard/render/overview_cache.py): taken from its
per-query table's column when it has one, they are exactly those of its per-query scores — the
scored queries sorted, a query without a score left out, no scores for a measure it lacks."""

from __future__ import annotations

import numpy as np
import pytest

from statbench.leaderboard.caches.records import QueryTable
from statbench.leaderboard.render.overview_cache import ColumnCache

NAN = float("nan")


class _Row:
    def __init__(self, table: QueryTable, with_table: bool):
        self._table, self._with = table, with_table

    def query_table(self):
        return self._table if self._with else None

    def query_scores(self, label):
        return self._table.query_scores(label)


TABLES = {
    "every query scored": QueryTable(["q10", "q2", "q1"], ["R@10", "MRR"], np.array([[0.5, 1.0], [0.25, 0.5], [0.0, 0.1]])),
    "a query unscored": QueryTable(["b", "a", "c"], ["R@10"], np.array([[0.5], [NAN], [0.75]])),
    "no such measure": QueryTable(["a"], ["MRR"], np.array([[0.5]])),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_tables_column_gives_the_per_query_scores(tmp_path, name):
    cache = ColumnCache("board", "R@10")
    qids, values = cache._scores(_Row(TABLES[name], with_table=True))
    want_qids, want = ColumnCache("board", "R@10")._scores(_Row(TABLES[name], with_table=False))
    assert qids == want_qids and values.dtype == want.dtype and values.tobytes() == want.tobytes()


def test_sorted_ids_with_their_scores_and_one_sort_per_order():
    cache = ColumnCache("board", "R@10")
    qids, values = cache._scores(_Row(TABLES["every query scored"], True))
    assert qids == ("q1", "q10", "q2") and values.tolist() == [0.0, 0.5, 0.25]
    again, _ = cache._scores(_Row(QueryTable(["q10", "q2", "q1"], ["R@10"], np.array([[1.0], [2.0], [3.0]])), True))
    assert again is qids  # one tuple per query set, however many rows share it
    assert cache._scores(_Row(TABLES["a query unscored"], True))[0] == ("b", "c")
    assert cache._scores(_Row(TABLES["no such measure"], True)) [0] == ()
