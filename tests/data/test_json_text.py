"""statbench's JSON files are written by data/jsontext.py: byte for byte what
``json.dump(indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)`` writes, and the
same refusals."""

from __future__ import annotations

import json
import math
import random

import pytest

from statbench.data.atomic import write_json
from statbench.data.jsontext import json_text

from repo_paths import REPO_ROOT


def _stdlib(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _random_value(rng: random.Random, depth: int = 0):
    kinds = ["int", "float", "str", "bool", "none", "neg"] + (["dict", "list", "tuple", "empty"] if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.randint(-10**20, 10**20)
    if kind == "float":
        return rng.choice([0.1, -0.0, 1e-300, 1.7976931348623157e308, rng.random(), 5e-324, 2.0])
    if kind == "neg":
        return -rng.random() * 1e6
    if kind == "str":
        return rng.choice(["", "a", "é", "法律 第四条", "line\nbreak", 'quote"s', "tab\t", "\x00\x1f", "\u2028",
                           "\ud800", "{", "}, ", "\\"])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "empty":
        return rng.choice([{}, [], ()])
    size = rng.randint(1, 4)
    if kind == "dict":
        return {rng.choice(["a", "b", "Z", "é", "", "1", "a b", "{}"]) + str(i): _random_value(rng, depth + 1)
                for i in range(size)}
    items = [_random_value(rng, depth + 1) for _ in range(size)]
    return items if kind == "list" else tuple(items)


def test_random_values_are_written_as_json_dump_writes_them():
    rng = random.Random(37)
    for _ in range(3000):
        value = _random_value(rng)
        assert json_text(value) == _stdlib(value), value


def test_committed_json_files_round_trip_to_the_same_text():
    files = sorted((REPO_ROOT / "bench" / "results").rglob("results.json"))[:20]
    assert files
    for path in files:
        obj = json.loads(path.read_text("utf-8"))
        assert json_text(obj) == _stdlib(obj), path


@pytest.mark.parametrize("value", [{1: "a", "b": 2}, {None: 1}, {(1, 2): 3}, {"a": {2.5: 1}}, {"a": {1, 2}},
                                   [object()], {"a": math.nan}, [math.inf], {"a": [1, -math.inf]}, object()])
def test_what_json_dump_refuses_or_converts_is_left_to_it(value):
    try:
        expected = _stdlib(value)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            json_text(value)
    else:
        assert json_text(value) == expected


def test_a_cycle_raises_as_json_dump_does():
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text(cycle)


def test_write_json_writes_the_text_and_a_final_line_break(tmp_path):
    obj = {"b": [1, 2.5, {"x": None}], "a": {"é": True}, "per_query": {"q1": {"R@5": 0.5, "MRR@10": 1.0}}}
    write_json(tmp_path / "r.json", obj)
    assert (tmp_path / "r.json").read_text("utf-8") == _stdlib(obj) + "\n"


def test_a_refused_value_leaves_no_file(tmp_path):
    with pytest.raises(ValueError):
        write_json(tmp_path / "r.json", {"a": math.nan})
    assert not (tmp_path / "r.json").exists()
