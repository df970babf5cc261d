"""The results schema's check (``schema_check.compiled_verdict``, what reading and writing a
results file use: the schema's walk worked out once) gives jsonschema's verdict wherever it
gives one, and says None (not known here: jsonschema decides) exactly where the schema or the
value holds what it does not know, even after a keyword that failed, and in schemas that refer to
themselves. Every one-field change of real records: ``test_schema_check.py``."""

from __future__ import annotations

import math

import jsonschema
import pytest

from statbench.results.schema_check import compiled_verdict

NOT_PLAIN = {"a": (1, 2)}.get("a")  # a tuple is not a JSON value

#: (schema, instances, the positions of the instances it does not know: None, jsonschema decides)
SCHEMAS = [
    ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, [{"a": 1}, {}, 1], {0, 1, 2}),
    ({"$ref": "https://example.invalid/other.json"}, [1], {0}),
    ({"$ref": "#/$defs/missing"}, [1], {0}),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, [[1]], {0}),
    ({"type": "string", "maxLength": 3}, ["abcd"], {0}),
    ({"const": {"a": 1}}, [{"a": 1}, 1], {0}),
    ({"type": "object"}, [NOT_PLAIN, {}], {0}),
    ({"type": "integer"}, [2.0, True, 2.5, "2"], set()),
    ({"type": ["number", "null"]}, [None, False, 1, "x"], set()),
    ({"type": "decimal"}, [1], {0}),
    ({"type": []}, [1], {0}),
    ({"minimum": 0}, [math.nan, -0.5, 0, True, "x"], set()),
    ({"minimum": "0"}, [1], {0}),
    ({"minItems": 2}, [[1], [1, 2], "ab"], set()),
    ({"pattern": "^[0-9a-f]{4}$"}, ["beef", "BEEF", 7], set()),
    ({"enum": [1, "a", None]}, [1.0, True, "a", None, "b", [1]], set()),
    ({"const": 1}, [True, 1.0], set()),
    ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, [1, 1.5, "x"], set()),
    ({"oneOf": []}, [1], {0}),
    ({"required": ["a"], "properties": {"a": {"type": "string"}, "b": {"minimum": 1}}},
     [{"a": "x"}, {"a": 1}, {"b": 0, "a": "x"}, {}, [1]], set()),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, [{"a": "x"}, {"a": "x", "c": 1}], set()),
    ({"additionalProperties": {"type": "number"}}, [{"a": 1, "b": 2.5}, {"a": "x"}, {"a": NOT_PLAIN}], {2}),
    ({"items": {"type": "string"}}, [["a", "b"], ["a", 1], [NOT_PLAIN], []], {2}),
    ({"items": False}, [[], [1]], set()),
    ({"properties": {"a": True, "b": False}}, [{"a": NOT_PLAIN}, {"b": 1}, {}], set()),
    ({"properties": {"a": {"unknownKeyword": 1}}}, [{}, {"a": 1}], {1}),  # known only where it is reached
    ({"type": "string", "description": "annotations assert nothing", "examples": ["x"]}, ["x", 1], set()),
    ({"$defs": {"tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
                                                          "n": {"type": "integer"}}}},
      "$ref": "#/$defs/tree"},
     [{"kids": [{"kids": [], "n": 1}, {"n": 2}]}, {"kids": [{"kids": [{"n": 1.5}]}]}, {"kids": [{"n": NOT_PLAIN}]}], {2}),
    (1, [1], {0}),
    (True, [NOT_PLAIN], set()),
    (False, [1], set()),
]


@pytest.mark.parametrize("schema, instances, unknown", SCHEMAS, ids=range(len(SCHEMAS)))
def test_a_verdict_is_jsonschemas_and_none_only_where_it_does_not_know(schema, instances, unknown):
    verdict = compiled_verdict(schema)
    for at, instance in enumerate(instances):
        found = verdict(instance)
        if at in unknown:
            assert found is None, instance
        else:
            assert found is jsonschema.Draft202012Validator(schema).is_valid(instance), instance


def test_what_it_does_not_know_is_said_even_after_a_failed_keyword():
    schema = {"properties": {"a": {"type": "string"}, "b": {"maxLength": 1}}}
    assert compiled_verdict(schema)({"a": 1, "b": "x"}) is None  # not False: "b" is not known here
    assert compiled_verdict(schema)({"a": 1}) is False
