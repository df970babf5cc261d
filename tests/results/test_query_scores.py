"""``RunScores.query_scores``: query id -> score on one measure, in the record's query order,
queries without that score left out (taken in one pass when every query has it)."""

from __future__ import annotations

from results_fixtures import minimal_results

from statbench.results.record import Results


def _record(per_query: dict) -> Results:
    obj = minimal_results()
    obj["per_query"] = per_query
    return Results.from_json(obj)


def test_every_query_with_the_score_in_the_records_order():
    record = _record({"q2": {"R@5": 0.5, "P@1": 1}, "q1": {"R@5": 0.25, "P@1": 0}})
    assert list(record.query_scores("R@5").items()) == [("q2", 0.5), ("q1", 0.25)]
    assert record.query_scores("P@1") == {"q2": 1, "q1": 0}


def test_queries_without_the_score_are_left_out():
    record = _record({"q1": {"R@5": 0.5}, "q2": {"P@1": 1.0}, "q3": {"R@5": 0.0, "P@1": 0.0}})
    assert list(record.query_scores("R@5").items()) == [("q1", 0.5), ("q3", 0.0)]
    assert record.query_scores("nDCG@10") == {}
