"""The publishability checks take a record's per-query scores as columns once
(``publishable.query_columns``: one ``itemgetter`` over the rows) when every query holds
exactly the record's measures; otherwise they take the general way. Either way they give
the same problems, word for word: each case below is checked both ways."""

from __future__ import annotations

import copy

import pytest

from statbench.leaderboard.sample import make_results
from statbench.results.record import Results
from statbench.scoring.publishable import (
    agreement_problems,
    check_results,
    consistency_problems,
    query_columns,
    score_problems,
)

MEASURES = ("R@5", "MRR@10", "NumRet")
SCORES = {f"q{i}": {"R@5": i / 10, "MRR@10": (i % 3) / 4, "NumRet": 10.0 + i} for i in range(6)}
SPLITS = {"a": ["q0", "q1", "q2"], "b": ["q3", "q4", "q5"]}


def _obj() -> dict:
    return make_results(copy.deepcopy(SCORES), measures=MEASURES, splits=SPLITS)


def _general(record) -> list[str]:
    """check_results' verdict as the checks give it without columns (the general way)."""
    problems = consistency_problems(record) or score_problems(record)
    return problems or agreement_problems(record)


def test_columns_are_each_measures_scores_in_the_first_querys_order():
    obj = _obj()
    obj["per_query"]["q0"] = {"NumRet": 10.0, "R@5": 0.0, "MRR@10": 0.0}  # another key order first
    record = Results.from_json(obj)
    columns = query_columns(record.per_query, record.labels)
    assert list(columns) == ["NumRet", "R@5", "MRR@10"]
    assert columns["R@5"] == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
    assert columns["NumRet"] == (10.0, 11.0, 12.0, 13.0, 14.0, 15.0)


def test_one_measure_gives_one_column():
    per_query = {"q1": {"R@5": 0.5}, "q2": {"R@5": 1}}
    assert query_columns(per_query, ["R@5"]) == {"R@5": (0.5, 1)}


@pytest.mark.parametrize("per_query, labels", [
    ({"q1": {"R@5": 0.5}, "q2": {"MRR@10": 0.5}}, ["R@5"]),  # a query lacks the measure
    ({"q1": {"R@5": 0.5}, "q2": {"R@5": 0.5, "P@1": 1.0}}, ["R@5"]),  # a query adds one
    ({"q1": {"R@5": 0.5, "P@1": 1.0}, "q2": {"R@5": 0.5, "MRR@10": 1.0}}, ["R@5", "P@1"]),  # as many, another
    ({"q1": {"R@5": 0.5}}, ["R@5", "R@5"]),  # duplicate labels
    ({}, ["R@5"]),
    ({"q1": {"R@5": 0.5}}, []),
    ({"q1": {"R@5": 0.5}, "q2": [0.5]}, ["R@5"]),  # not a mapping
])
def test_no_columns_unless_every_query_holds_exactly_the_measures(per_query, labels):
    assert query_columns(per_query, labels) is None


def _missing_in_one(obj):
    del obj["per_query"]["q4"]["MRR@10"]


def _extra_in_one(obj):
    obj["per_query"]["q2"]["P@1"] = 7.0  # an unlisted measure out of bounds


def _out_of_bounds(obj):
    obj["per_query"]["q3"]["R@5"] = 1.5


def _negative(obj):
    obj["per_query"]["q5"]["MRR@10"] = -0.25


def _pooled_mean_off(obj):
    obj["per_query"]["q1"]["NumRet"] = 99.0


def _int_scores(obj):
    for scores in obj["per_query"].values():
        scores["NumRet"] = int(scores["NumRet"])


def _huge_unbounded(obj):
    obj["per_query"]["q0"]["NumRet"] = 1.7e308
    obj["per_query"]["q1"]["NumRet"] = 1.7e308


def _duplicate_label(obj):
    obj["measures"].append(dict(obj["measures"][0]))


CASES = [None, _missing_in_one, _extra_in_one, _out_of_bounds, _negative, _pooled_mean_off, _int_scores,
         _huge_unbounded, _duplicate_label]


@pytest.mark.parametrize("change", CASES, ids=lambda c: "valid" if c is None else c.__name__.strip("_"))
def test_the_same_problems_with_and_without_columns(change):
    obj = _obj()
    if change is not None:
        change(obj)
    record = Results.from_json(obj)
    expected = _general(record) if change is not _huge_unbounded else [
        "aggregate: its figures are too large to be averaged (a float overflows): no run scored them"]
    assert check_results(record) == expected
    columns = query_columns(record.per_query, record.labels)
    assert check_results(record, columns) == expected
    if change in (None, _out_of_bounds, _negative, _pooled_mean_off, _int_scores):
        assert columns is not None  # these cases took the columns' way
    assert (expected == []) == (change in (None, _int_scores))


def test_problems_name_the_query_and_measure():
    obj = _obj()
    _out_of_bounds(obj)
    assert check_results(Results.from_json(obj)) == ["per_query/q3/R@5: 1.5 is outside [0, 1]"]
    obj = _obj()
    _missing_in_one(obj)
    assert check_results(Results.from_json(obj)) == ["per_query/q4: no score for MRR@10"]
    obj = _obj()
    _pooled_mean_off(obj)
    assert any(p.startswith("per_query/*/NumRet: the per-query mean") for p in check_results(Results.from_json(obj)))
