"""The ir-measures version that cache keys and results record is read without importing
it, and a run never scores with a module of another version than that."""

import types

import ir_measures
import pytest

from statbench.api import Measure
from statbench.errors import StatbenchError
from statbench.run.runner import _environment
from statbench.scoring.evaluation import per_query_scores
from statbench.storage.ir_measures_version import check_imported, ir_measures_version
from statbench.storage.keys import split_scores_entry


def test_the_version_is_the_imported_modules():
    assert ir_measures_version() == ir_measures.__version__


def test_a_module_of_another_version_is_refused_in_one_line():
    other = types.ModuleType("ir_measures")
    other.__version__, other.__file__ = "0.0.1", "/elsewhere/ir_measures/__init__.py"
    with pytest.raises(StatbenchError) as raised:
        check_imported(other)
    message = str(raised.value)
    assert "\n" not in message
    assert "/elsewhere/ir_measures/__init__.py is version 0.0.1" in message
    assert f"installed distribution is {ir_measures.__version__}" in message
    check_imported(ir_measures)  # the installed one passes


def test_scoring_stops_before_scores_of_another_version_are_made(monkeypatch):
    qrels, run = {"q1": {"d1": 1}}, {"q1": [("d1", 2.0), ("d2", 1.0)]}
    measures = [Measure("R@1", "R@1")]
    assert per_query_scores(qrels, run, measures, ["q1"]) == {"q1": {"R@1": 1.0}}
    monkeypatch.setattr(ir_measures, "__version__", "9.9.9")
    with pytest.raises(StatbenchError, match="is version 9.9.9"):
        per_query_scores(qrels, run, measures, ["q1"])


def test_keys_and_results_name_the_installed_version(tmp_path, monkeypatch):
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path))
    entry = split_scores_entry("t", "0" * 64, ["q1"], {"q1": {"d1": 1}}, [Measure("R@1", "R@1")])
    assert entry.key["versions"][1] == ir_measures.__version__
    assert _environment()["ir_measures"] == ir_measures.__version__
