"""How a typed record reads its JSON (``jsonrecord``: each class's fields, required ones and
readers worked out once; a map of score maps copied in one step): every value copied, never
shared with the dict it was read from, and the same refusals, word for word."""

from __future__ import annotations

import pytest
from results_fixtures import minimal_results

from statbench.results.record import Results


def test_per_query_scores_are_copied_not_shared():
    obj = minimal_results()
    obj["per_query"] = {"q1": {"R@5": 0.5}, "q2": {"R@5": 1}}
    record = Results.from_json(obj)
    assert record.per_query == {"q1": {"R@5": 0.5}, "q2": {"R@5": 1}}
    assert list(record.per_query) == ["q1", "q2"]
    obj["per_query"]["q1"]["R@5"] = 0.0
    obj["per_query"]["q3"] = {"R@5": 0.25}
    assert record.per_query == {"q1": {"R@5": 0.5}, "q2": {"R@5": 1}}
    assert type(record.per_query["q2"]["R@5"]) is int  # an integer score stays an integer
    assert record.to_json()["per_query"] == {"q1": {"R@5": 0.5}, "q2": {"R@5": 1}}


def test_lists_and_score_maps_are_copied():
    obj = minimal_results()
    record = Results.from_json(obj)
    obj["task"]["files"].append("other.json")
    obj["splits"][0]["scores"]["R@5"] = 0.0
    assert record.task.files == ["queries.json"]
    assert record.splits[0].scores == {"R@5": 0.5}


def test_an_unknown_field_is_refused_with_its_path():
    obj = minimal_results()
    obj["model"]["plugin"]["homepage"] = "x"
    obj["model"]["plugin"]["author"] = "y"
    with pytest.raises(ValueError, match=r"^Results/model/plugin: unknown field\(s\) 'author', 'homepage' "
                                         r"\(not in the results type\)$"):
        Results.from_json(obj)


def test_a_missing_field_is_refused_with_its_path():
    obj = minimal_results()
    del obj["splits"][0]["n_queries"]
    del obj["splits"][0]["name"]
    with pytest.raises(ValueError, match=r"^Results/splits/0: missing field\(s\) 'name', 'n_queries'$"):
        Results.from_json(obj)


def test_a_per_query_row_that_is_not_a_map_is_refused():
    obj = minimal_results()
    obj["per_query"] = {"q1": [1, 2, 3]}
    with pytest.raises((TypeError, ValueError)):
        Results.from_json(obj)
