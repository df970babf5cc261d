"""The results check without jsonschema (results/schema_check.py) decides what jsonschema
decides: on real records and on every one-field change of them, True/False alike; on what it
does not know, it says so (None) and jsonschema decides."""

from __future__ import annotations

import copy
import json
import math

import jsonschema
import pytest

from statbench.results.record import _without_scores, results_schema, schema_errors
from statbench.results.schema_check import schema_verdict

from repo_paths import REPO_ROOT as REPO
from results_fixtures import minimal_results

#: values put in place of each field in turn (every JSON type, edge numbers, checksum-like strings)
REPLACEMENTS = [None, True, 0, -1, 1.0, 2.5, math.nan, "", "hit", "a" * 64, "A" * 64, [], ["x"], {},
                {"mean": 0.5, "std": 0.1}]


def _records() -> list[dict]:
    """The smallest record, one with a reranker, and a committed fusion run's (components,
    breakdowns), with their maps of scores emptied as ``schema_errors`` hands them over."""
    reranked = minimal_results()
    reranked["reranker"] = {**reranked["model"], "name": "cross-encoder", "family": "neural"}
    fused = json.loads((REPO / "bench/results/fusion/ukstat/bm25+minilm-rrf/results.json").read_text("utf-8"))
    return [_without_scores(r) for r in (minimal_results(), reranked, fused)]


def _jsonschema_valid(obj) -> bool:
    return not any(jsonschema.Draft202012Validator(results_schema()).iter_errors(obj))


def _paths(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _paths(value, (*path, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from _paths(value, (*path, index))


def _variants(record: dict, replacements=REPLACEMENTS):
    """The record with one field replaced, removed, or one field added beside it."""
    for path in _paths(record):
        if not path:
            continue
        *parent_path, last = path
        for value in replacements:
            changed = copy.deepcopy(record)
            parent = changed
            for step in parent_path:
                parent = parent[step]
            parent[last] = copy.deepcopy(value)
            yield path, "=", value, changed
        changed = copy.deepcopy(record)
        parent = changed
        for step in parent_path:
            parent = parent[step]
        if isinstance(parent, dict):
            del parent[last]
            yield path, "removed", None, changed
            parent[last] = record_value(record, path)
            parent["zz_unexpected"] = 1
            yield path, "added beside", None, changed


def record_value(record, path):
    for step in path:
        record = record[step]
    return copy.deepcopy(record)


def test_real_records_are_valid_both_ways():
    for record in _records():
        assert schema_verdict(results_schema(), record) is True
        assert _jsonschema_valid(record)


def test_every_one_field_change_gets_jsonschemas_verdict():
    validator = jsonschema.Draft202012Validator(results_schema())
    checked = disagreements = unknown = 0
    small, reranked, fused = _records()
    variants = [*_variants(small), *_variants(reranked), *_variants(fused, REPLACEMENTS[::3])]
    for path, how, value, changed in variants:
        verdict = schema_verdict(results_schema(), changed)
        if verdict is None:
            unknown += 1
            continue
        checked += 1
        expected = not any(validator.iter_errors(changed))
        if verdict is not expected:
            disagreements += 1
            pytest.fail(f"{'/'.join(map(str, path))} {how} {value!r}: {verdict}, jsonschema says {expected}")
    assert checked > 2000 and disagreements == 0
    assert unknown == 0  # every value above is plain JSON: nothing here is left to jsonschema


@pytest.mark.parametrize("schema, instance", [
    ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, {"a": 1}),
    ({"$ref": "https://example.invalid/other.json"}, 1),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, [1]),
    ({"type": "string", "maxLength": 3}, "abcd"),
    ({"const": {"a": 1}}, {"a": 1}),
    ({"type": "object"}, {"a": (1, 2)}.get("a")),  # a tuple is not a JSON value
])
def test_what_it_does_not_know_is_left_to_jsonschema(schema, instance):
    assert schema_verdict(schema, instance) is None


def test_booleans_and_numbers_as_jsonschema_reads_them():
    assert schema_verdict({"type": "integer"}, 2.0) is True
    assert schema_verdict({"type": "integer"}, True) is False
    assert schema_verdict({"type": "number"}, False) is False
    assert schema_verdict({"const": 1}, True) is False
    assert schema_verdict({"const": 1}, 1.0) is True
    assert schema_verdict({"minimum": 0}, math.nan) is True  # jsonschema: NaN < 0 is false
    assert schema_verdict({"minimum": 0}, -0.5) is False
    assert schema_verdict({"oneOf": [{"type": "number"}, {"type": "integer"}]}, 1) is False  # both match


def test_an_invalid_record_still_gets_jsonschemas_messages(monkeypatch):
    record = minimal_results()
    record["timings"]["total"] = -1.0
    assert schema_verdict(results_schema(), record) is False
    assert schema_errors(record) == ["timings/total: -1.0 is less than the minimum of 0"]


def test_writing_a_valid_record_imports_no_jsonschema(tmp_path):
    import subprocess
    import sys

    code = ("import json, sys; from statbench.results.record import write_results; "
            f"write_results({str(tmp_path / 'r.json')!r}, json.loads(sys.stdin.read())); "
            "print('jsonschema' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(minimal_results()), capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "False"
    assert json.loads((tmp_path / "r.json").read_text()) == minimal_results()
