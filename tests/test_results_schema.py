"""Results files: validated before writing, invalid ones refused with the field at fault."""

import json

import pytest

from statbench.errors import DataFormatError
from statbench.results.record import load_results, validation_errors, write_results


def minimal_results() -> dict:
    scores = {"R@5": 0.5}
    return {
        "schema_version": 1, "statbench_version": "0.1.0", "created": "2026-11-23T00:00:00+00:00",
        "task": {"name": "stard", "language": "zh", "data_checksum": "a" * 64, "files": ["queries.json"]},
        "model": {"name": "bm25", "family": "lexical", "params": {}, "plugin": {"name": "bm25"}},
        "command": "statbench run --task stard --model bm25",
        "run_file": {"path": "run.trec", "sha256": "b" * 64},
        "measures": [{"label": "R@5", "ir_measure": "R@5"}],
        "splits": [{"name": "fold-1", "n_queries": 1, "scores": scores}],
        "aggregate": {"R@5": {"mean": 0.5, "std": 0.0}},
        "per_query": {"q1": scores},
        "timings": {"total": 1.0},
    }


def test_minimal_results_are_valid():
    assert validation_errors(minimal_results()) == []


def test_missing_and_wrong_fields_are_named():
    results = minimal_results()
    del results["command"]
    results["run_file"]["sha256"] = "not-a-checksum"
    errors = validation_errors(results)
    assert "(root): 'command' is a required property" in errors
    assert any(e.startswith("run_file/sha256: 'not-a-checksum' does not match") for e in errors)


def test_invalid_results_are_never_written(tmp_path):
    results = minimal_results()
    results["aggregate"]["R@5"]["std"] = -1
    with pytest.raises(ValueError, match="aggregate/R@5/std"):
        write_results(tmp_path / "results.json", results)
    assert list(tmp_path.iterdir()) == []


def test_load_results_names_the_file(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({**minimal_results(), "model": {"name": "x"}}))
    with pytest.raises(DataFormatError, match=rf"{path}: does not match the results schema: model: 'family'"):
        load_results(path)
