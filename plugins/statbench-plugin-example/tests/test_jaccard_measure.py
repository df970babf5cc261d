"""The plugin's custom measure, against values computed by hand."""

from __future__ import annotations

from example_fixtures import example_plugin, isolated_cache  # noqa: F401  (fixtures; first: it finds the package)

import pytest

from statbench.errors import StatbenchError
from statbench.scoring.measures import check_measure_class, is_custom, parse_measure
from statbench_plugin_example import Jaccard

RANKING = [("a", 3.0), ("b", 2.0), ("c", 1.0), ("d", 0.5)]
QRELS = {"a": 1, "c": 2, "e": 1, "b": 0}  # relevant: a, c, e (grade >= 1); b judged not relevant


def test_class_passes_the_registry_checks():
    check_measure_class(Jaccard)


@pytest.mark.parametrize("cutoff, rel, expected", [
    (1, 1, 1 / 3),      # {a} vs {a, c, e}: 1 / 3
    (3, 1, 2 / 4),      # {a, b, c} vs {a, c, e}: 2 / |{a, b, c, e}|
    (None, 1, 2 / 5),   # whole ranking {a, b, c, d} vs {a, c, e}: 2 / 5
    (3, 2, 1 / 3),      # only c has grade >= 2: {a, b, c} vs {c}: 1 / 3
])
def test_per_query_by_hand(cutoff, rel, expected):
    assert Jaccard().per_query(RANKING, QRELS, rel=rel, cutoff=cutoff) == pytest.approx(expected)


def test_no_relevant_document_scores_zero():
    assert Jaccard().per_query(RANKING, {"a": 0}, rel=1, cutoff=2) == 0.0


def test_the_name_parses_once_registered(example_plugin):
    parsed = parse_measure("Jaccard(rel=2)@3")
    assert is_custom(parsed) and parsed.kwargs == {"rel": 2, "cutoff": 3}
    assert parsed.score(RANKING, QRELS) == pytest.approx(1 / 3)
    assert str(parse_measure("Jaccard@5")) == "Jaccard@5"
    with pytest.raises(StatbenchError, match="no parameter 'beta'"):
        parse_measure("Jaccard(beta=2)@3")
