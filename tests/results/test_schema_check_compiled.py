"""The results schema's check worked out once (``schema_check.compiled_verdict``, what reading
and writing a results file use) gives :func:`schema_verdict`'s verdict — True, False or None
(not known here) — on every instance: real records, every one-field change of them, what it
does not know, and schemas that refer to themselves."""

from __future__ import annotations

import math

import pytest
from test_schema_check import REPLACEMENTS, _records, _variants

from statbench.results.record import results_schema
from statbench.results.schema_check import compiled_verdict, schema_verdict


def test_every_one_field_change_gets_the_same_verdict():
    verdict = compiled_verdict(results_schema())
    small, reranked, fused = _records()
    variants = [*_variants(small), *_variants(reranked), *_variants(fused, REPLACEMENTS[::3])]
    seen = set()
    for path, how, value, changed in variants:
        expected = schema_verdict(results_schema(), changed)
        assert verdict(changed) is expected, f"{'/'.join(map(str, path))} {how} {value!r}"
        seen.add(expected)
    assert seen == {True, False}
    for record in (small, reranked, fused):
        assert verdict(record) is True


NOT_PLAIN = {"a": (1, 2)}.get("a")  # a tuple is not a JSON value

SCHEMAS = [
    ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, [{"a": 1}, {}, 1]),
    ({"$ref": "https://example.invalid/other.json"}, [1]),
    ({"$ref": "#/$defs/missing"}, [1]),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, [[1]]),
    ({"type": "string", "maxLength": 3}, ["abcd"]),
    ({"const": {"a": 1}}, [{"a": 1}, 1]),
    ({"type": "object"}, [NOT_PLAIN, {}]),
    ({"type": "integer"}, [2.0, True, 2.5, "2"]),
    ({"type": ["number", "null"]}, [None, False, 1, "x"]),
    ({"type": "decimal"}, [1]),
    ({"type": []}, [1]),
    ({"minimum": 0}, [math.nan, -0.5, 0, True, "x"]),
    ({"minimum": "0"}, [1]),
    ({"minItems": 2}, [[1], [1, 2], "ab"]),
    ({"pattern": "^[0-9a-f]{4}$"}, ["beef", "BEEF", 7]),
    ({"enum": [1, "a", None]}, [1.0, True, "a", None, "b", [1]]),
    ({"const": 1}, [True, 1.0]),
    ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, [1, 1.5, "x"]),
    ({"oneOf": []}, [1]),
    ({"required": ["a"], "properties": {"a": {"type": "string"}, "b": {"minimum": 1}}},
     [{"a": "x"}, {"a": 1}, {"b": 0, "a": "x"}, {}, [1]]),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, [{"a": "x"}, {"a": "x", "c": 1}]),
    ({"additionalProperties": {"type": "number"}}, [{"a": 1, "b": 2.5}, {"a": "x"}, {"a": NOT_PLAIN}]),
    ({"items": {"type": "string"}}, [["a", "b"], ["a", 1], [NOT_PLAIN], []]),
    ({"items": False}, [[], [1]]),
    ({"properties": {"a": True, "b": False}}, [{"a": NOT_PLAIN}, {"b": 1}, {}]),
    ({"properties": {"a": {"unknownKeyword": 1}}}, [{}, {"a": 1}]),  # known only where it is reached
    ({"type": "string", "description": "annotations assert nothing", "examples": ["x"]}, ["x", 1]),
    ({"$defs": {"tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
                                                          "n": {"type": "integer"}}}},
      "$ref": "#/$defs/tree"},
     [{"kids": [{"kids": [], "n": 1}, {"n": 2}]}, {"kids": [{"kids": [{"n": 1.5}]}]}, {"kids": [{"n": NOT_PLAIN}]}]),
    (1, [1]),
    (True, [NOT_PLAIN]),
    (False, [1]),
]


@pytest.mark.parametrize("schema, instances", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_same_verdict_as_the_walk(schema, instances):
    verdict = compiled_verdict(schema)
    for instance in instances:
        assert verdict(instance) is schema_verdict(schema, instance), instance


def test_what_it_does_not_know_is_said_even_after_a_failed_keyword():
    schema = {"properties": {"a": {"type": "string"}, "b": {"maxLength": 1}}}
    assert compiled_verdict(schema)({"a": 1, "b": "x"}) is None  # not False: "b" is not known here
    assert compiled_verdict(schema)({"a": 1}) is False
