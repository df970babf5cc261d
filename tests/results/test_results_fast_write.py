"""results.json written by orjson (statbench.results.fastjson) is byte for byte the standard
form (json.dumps indent=2, sorted keys, UTF-8, no NaN) whenever it is used; whatever orjson
would write otherwise (exponent floats, NaN, types json refuses) takes the standard path."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import random
import struct

import pytest
from results_fixtures import minimal_results

from statbench.results.fastjson import LARGEST, SMALLEST, indented_json
from statbench.results.record import write_results


def standard(obj) -> bytes:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False).encode("utf-8")


def sample_floats(n: int = 20_000) -> list[float]:
    rng = random.Random(37)
    values = [0.0, -0.0, SMALLEST, -SMALLEST, math.nextafter(SMALLEST, 0), math.nextafter(LARGEST, 0), LARGEST,
              1e15, 9999999999999998.0, 5e-324, 1.7976931348623157e308, 1 / 3, 2 / 3, 0.1, 1e-05, 1.5e-07]
    values += [float(f"{m}e{e}") for e in range(-320, 308) for m in (1.0, 1.5, 3.14159, 9.999999999999999)]
    while len(values) < n:
        bits = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(bits):
            values.append(bits)
        values.append(rng.random() * 10.0 ** rng.randint(-9, 18))
        values.append(rng.randint(0, 5000) / rng.randint(1, 5000))
    return values


def test_every_float_is_written_as_json_writes_it_or_left_to_json():
    in_range = 0
    for value in sample_floats():
        for obj in ({"score": value}, [value, {"x": [value]}]):
            text = indented_json(obj)
            if value == 0 or SMALLEST <= abs(value) < LARGEST:
                assert text == standard(obj), value
                in_range += 1
            else:
                assert text is None, value
    assert in_range > 10_000


def test_a_real_results_record_takes_the_fast_path_byte_for_byte(tmp_path):
    rng = random.Random(7)
    labels = ["R@5", "R@100", "MRR@10", "nDCG@10"]
    record = minimal_results()
    record["measures"] = [{"label": label, "ir_measure": label} for label in labels]
    record["per_query"] = {f"q{i}": {label: rng.randint(0, 300) / 300 for label in labels} for i in range(500)}
    record["per_query"]["q0"] = {label: 1 for label in labels}  # integer scores stay integers
    record["splits"] = [{"name": "fold-1", "n_queries": 500, "scores": {label: 0.25 for label in labels}}]
    record["aggregate"] = {label: {"mean": 0.25, "std": 0.0} for label in labels}
    record["task"]["files"] = ["问题.json", 'a "quoted"\\name\ttab\u2028.json']
    record["model"]["params"] = {"k1": 0.9, "nested": {"list": [1, 2.5, None, True, "x"], "empty": {}}, "e": []}
    assert indented_json(record) == standard(record)
    write_results(tmp_path / "results.json", record)
    assert (tmp_path / "results.json").read_bytes() == standard(record) + b"\n"


def test_a_score_json_writes_in_exponent_form_takes_the_standard_path(tmp_path):
    record = minimal_results()
    record["per_query"] = {"q1": {"R@5": 1e-05}}
    assert indented_json(record) is None
    write_results(tmp_path / "results.json", record)
    assert (tmp_path / "results.json").read_bytes() == standard(record) + b"\n"
    assert b'"R@5": 1e-05' in (tmp_path / "results.json").read_bytes()


@dataclasses.dataclass
class Point:
    x: int = 1


class Text(str):
    pass


class Number(float):
    pass


@pytest.mark.parametrize("value", [
    float("nan"), float("inf"), -float("inf"),  # orjson writes null; json refuses them
    {1: "a"}, {None: "a"},  # json writes such keys as strings; orjson refuses or not alike
    (1, 2),  # a tuple: json writes a list
    Point(), datetime.date(2026, 1, 1),  # orjson writes these; json refuses them
    Text("a"), Number(0.5),  # subclasses: not vouched for
    2 ** 64, -(2 ** 63) - 1,  # beyond 64 bits: orjson refuses
    "\ud800",  # a lone surrogate: not UTF-8
])
def test_a_value_orjson_may_write_otherwise_is_left_to_json(value):
    assert indented_json({"a": [0.5, {"b": value}]}) is None
    assert indented_json([value]) is None


def test_what_json_refuses_is_still_refused_with_its_error(tmp_path):
    record = minimal_results()
    record["extra"] = {"when": float("nan")}
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        write_results(tmp_path / "results.json", record)
    assert not (tmp_path / "results.json").exists()
