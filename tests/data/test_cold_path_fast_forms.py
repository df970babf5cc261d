"""The cold run's cheaper forms of three writers give exactly what the plain forms gave
(issue 37 §2): the shortest float32 text of a lowered score (now memoised and checked with
``struct``), a records digest (now one join per record, hashed in batches) and a split's
run lines (now a list join with the constant parts formatted once per query). Each test
compares with the plain form, written out here, on inputs chosen to reach its edges."""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import re
import struct
from array import array

import pytest

from statbench.data import checksum, runfile
from statbench.data.runfile import FLOAT32_MAX, format_run, order_ranking
from statbench.run.splitruns import format_split


def _plain_shortest(single: float) -> float:
    for digits in range(1, 10):
        value = float(f"{single:.{digits}g}")
        if array("f", (value,))[0] == single:
            return value
    return single


def _float32_values() -> list[float]:
    rng = random.Random(37)
    values = [struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0] for _ in range(4000)]
    values += [math.ldexp(1.0, e) for e in range(-149, 128)]  # powers of two: uneven neighbours
    values += [-math.ldexp(1.0, e) for e in range(-149, 128, 7)]
    values += [FLOAT32_MAX, -FLOAT32_MAX, math.ldexp(1.0, -149), 1.1754942e-38, 0.1, 1 / 3, 7.0, 12.5]
    values += [runfile._float32_below(v) for v in (FLOAT32_MAX, 1.0, 0.0, -1.0, 16.0)]
    return [v for v in values if math.isfinite(v)]


def test_the_shortest_float32_text_is_the_plain_loops_for_every_kind_of_value():
    values = _float32_values()
    runfile._SHORTEST.clear()
    for _ in range(2):  # computed, then from the memo
        got = [runfile._shortest_float32_text_value(v) for v in values]
        want = [_plain_shortest(v) for v in values]
        assert [g.hex() for g in got] == [w.hex() for w in want]


def test_zero_keeps_its_sign_whatever_came_first():
    for first, second in ((0.0, -0.0), (-0.0, 0.0)):
        runfile._SHORTEST.clear()
        assert math.copysign(1, runfile._shortest_float32_text_value(first)) == math.copysign(1, first)
        assert math.copysign(1, runfile._shortest_float32_text_value(second)) == math.copysign(1, second)


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(runfile, "_SHORTEST_MAX", 8)
    runfile._SHORTEST.clear()
    values = _float32_values()[:50]
    assert [runfile._shortest_float32_text_value(v).hex() for v in values] == [_plain_shortest(v).hex() for v in values]
    assert len(runfile._SHORTEST) <= 8


def test_lowered_ties_are_written_with_the_plain_texts():
    ranking = [(f"d{i}", 1.0 + i * 1e-12) for i in range(300)] + [("z", 5e-324), ("y", -1e300)]
    runfile._SHORTEST.clear()
    ordered = order_ranking(ranking)
    singles = array("f", (s for _, s in ordered))
    assert all(a > b for a, b in itertools.pairwise(singles))
    lowered = [s for (_, s), (_, original) in zip(ordered, sorted(ranking, key=lambda p: (-p[1], p[0])))
               if s != original]
    assert lowered and all(s == _plain_shortest(array("f", (s,))[0]) for s in lowered)


def _plain_digest(records) -> str:
    digest = hashlib.sha256()
    for record in records:
        digest.update("\0".join(map(checksum._field, record)).encode("utf-8", "surrogatepass"))
        digest.update(b"\1")
    return digest.hexdigest()


DIGEST_CASES = [
    [],
    [()],
    [("",)],
    [("", "")],
    [("d1", "title", "text é", "", "")],
    [("a\0b",)], [("a", "b")], [("a\1b",)], [("a",), ("b",)], [("a\2", "b")], [("\2\2a",)],
    [("x\0", "\0y", "\1", "\2\0")],
    [("lone \udc80 surrogate", "ok")],
    [("d", "t" * 50)] * 40 + [("sep\0inside", "z")] + [("e", "u")] * 40,
]


@pytest.mark.parametrize("records", DIGEST_CASES)
@pytest.mark.parametrize("batch", [1, 7, 1 << 20])
def test_records_digest_is_the_record_by_record_digest(monkeypatch, records, batch):
    monkeypatch.setattr(checksum, "_BATCH", batch)
    assert checksum.records_digest(records) == _plain_digest(records)
    assert checksum.records_digest(iter([iter(r) for r in records])) == _plain_digest(records)  # one-pass iterables
    assert checksum.records_digest([list(r) for r in records]) == _plain_digest(records)


def test_records_digest_still_refuses_a_field_that_is_not_text():
    with pytest.raises(TypeError):
        checksum.records_digest([("a", 3)])


def test_split_run_bytes_are_format_runs_lines():
    rankings = {
        "q2": order_ranking([("doc é", 3.5), ("b", 3.5), ("a", 1e-300), ("c", -2.0)]),
        "q10": order_ranking([(f"d{i}", 1.0) for i in range(12)]),
        "q1": [],
        "q 3": order_ranking([("x", 7.25)]),
    }
    for tag in ("bm25", "my tag\twith spaces", ""):
        data, index = format_split(rankings, tag)
        assert data == "".join(format_run(rankings, tag)).encode("utf-8")
        assert [qid for qid, _, _ in index] == sorted(rankings)
        for qid, start, end in index:
            block = data[start:end].decode("utf-8")
            assert block == "".join(format_run({qid: rankings[qid]}, tag))
            assert not re.search(r"\s", block.splitlines()[0].split(" ")[-1]) if block else end == start
