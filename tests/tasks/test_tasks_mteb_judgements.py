"""An MTEB task's relevant_docs read without losing a judgement silently: two keys that are
one id once read are refused in one line; judgements of queries the split lacks are said."""

from __future__ import annotations

from pathlib import Path

import pytest

from statbench.api import DataFormatError
from statbench.tasks.mteb import _judgements

WHERE = Path("mteb/Task/test/relevant_docs")


def test_two_keys_of_one_query_are_refused():
    with pytest.raises(DataFormatError, match=r"query '1' is judged twice"):
        _judgements(WHERE, {1: {"d1": 1}, "1": {"d2": 1}}, {"1": "q"})


def test_two_keys_of_one_document_are_refused():
    with pytest.raises(DataFormatError, match=r"judges document 'd1' twice"):
        _judgements(WHERE, {"1": {"d1": 1, " d1": 0}}, {"1": "q"})


def test_judgements_of_other_queries_are_returned_apart_and_the_rest_read():
    qrels, unused = _judgements(WHERE, {"1": {"d1": 2}, "9": {"d2": 1}}, {"1": "q"})
    assert qrels == {"1": {"d1": 2}} and unused == ["9"]


def test_a_judgement_that_is_not_a_mapping_is_refused():
    with pytest.raises(DataFormatError, match=r"expected \{corpus-id: score\}, found list"):
        _judgements(WHERE, {"1": ["d1"]}, {"1": "q"})
