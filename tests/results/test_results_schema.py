"""Results files: validated before writing, invalid ones refused with the field at fault."""

import json

import pytest

from statbench.errors import DataFormatError
from statbench.results.record import load_results, validation_errors, write_results
from results_fixtures import minimal_results


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
