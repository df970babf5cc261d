"""The per-query table a record is kept as (leaderboard/caches/records.py ``QueryTable.of``): the
usual record (every query holds the same measures) is taken in one pass, and gives exactly the
table of the general construction — the columns in the order the measures first appear, NaN
where a query has no score — whatever order each query lists its measures in."""

from __future__ import annotations

import math

import numpy as np
import pytest

from statbench.leaderboard.caches.records import QueryTable


def _general(per_query: dict) -> tuple[list, list, np.ndarray]:
    """The table as the loop over every query builds it (the reference)."""
    labels: dict = {}
    for scores in per_query.values():
        labels.update(dict.fromkeys(scores))
    order = list(labels)
    values = np.array([[scores.get(label, math.nan) for label in order] for scores in per_query.values()],
                      dtype=float).reshape(len(per_query), len(order))
    return list(per_query), order, values


CASES = {
    "one measure": {"q1": {"R@10": 0.5}, "q2": {"R@10": 1.0}},
    "every query alike": {"q2": {"a": 0.1, "b": 0.2, "c": 0.3}, "q1": {"a": 0.4, "b": 0.5, "c": 0.6}},
    "another order in a later query": {"q1": {"a": 0.1, "b": 0.2}, "q2": {"b": 0.3, "a": 0.4}},
    "a measure missing in one query": {"q1": {"a": 0.1, "b": 0.2}, "q2": {"a": 0.3}},
    "a measure only in a later query": {"q1": {"a": 0.1}, "q2": {"a": 0.2, "b": 0.3}},
    "as many measures, another set": {"q1": {"a": 0.1}, "q2": {"b": 0.2}},
    "integers and booleans": {"q1": {"a": 1, "b": True}, "q2": {"b": False, "a": 0}},
    "a query with no score": {"q1": {}, "q2": {}},
    "no query": {},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_table_is_the_general_constructions(name):
    per_query = CASES[name]
    table = QueryTable.of(per_query)
    qids, labels, values = _general(per_query)
    assert table.qids == qids and table.labels == labels
    assert table.values.shape == values.shape and table.values.dtype == np.float64
    assert np.array_equal(table.values, values, equal_nan=True)
    assert table.to_bytes() == QueryTable(qids, labels, values).to_bytes()


def test_a_later_querys_order_does_not_reorder_the_columns():
    table = QueryTable.of(CASES["another order in a later query"])
    assert table.labels == ["a", "b"] and table.values.tolist() == [[0.1, 0.2], [0.4, 0.3]]
    assert table.query_scores("b") == {"q1": 0.2, "q2": 0.3}


def test_a_missing_score_is_nan_and_left_out_of_the_measures_scores():
    table = QueryTable.of(CASES["as many measures, another set"])
    assert table.labels == ["a", "b"] and np.isnan(table.values[0, 1]) and np.isnan(table.values[1, 0])
    assert table.query_scores("b") == {"q2": 0.2} and table.as_dict() == CASES["as many measures, another set"]
