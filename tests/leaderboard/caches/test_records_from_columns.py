"""A record the checks took as columns (``publishable.query_columns``) is kept by the record
cache from those columns (``QueryTable.of_columns``, ``RecordEntry.put(record, columns)``):
the same table, bytes and entry as from the record's per-query dict, so nothing a later build
reads (the per-query file's sha256, what the significance cache keys) depends on the way."""

from __future__ import annotations

import json

import numpy as np
import pytest

from statbench.leaderboard.caches.records import QueryTable, RecordCache
from statbench.leaderboard.sample import make_results
from statbench.results.record import Results
from statbench.scoring.publishable import query_columns

CASES = {
    "one measure": {"q1": {"R@10": 0.5}, "q2": {"R@10": 1.0}},
    "measures listed in another order by later queries": {"q2": {"b": 0.2, "a": 0.1}, "q1": {"a": 0.4, "b": 0.5}},
    "integers, large and small": {"q1": {"a": 1, "b": 2**53 + 1}, "q2": {"a": 0, "b": 10**20},
                                  "q3": {"b": -(2**63) - 1, "a": 5e-324}},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_table_from_columns_is_the_table_of_the_record(name):
    per_query = CASES[name]
    columns = query_columns(per_query, sorted(next(iter(per_query.values()))))
    from_columns, reference = QueryTable.of_columns(list(per_query), columns), QueryTable.of(per_query)
    assert from_columns.qids == reference.qids and from_columns.labels == reference.labels
    assert np.array_equal(from_columns.values, reference.values)
    assert from_columns.to_bytes() == reference.to_bytes()
    assert QueryTable.from_bytes(from_columns.to_bytes()).as_dict() == reference.as_dict()


def test_an_entry_put_from_columns_is_the_entry_put_from_the_record(tmp_path):
    scores = {f"q{i}": {"R@5": i / 8, "MRR@10": (i % 3) / 3} for i in range(8)}
    scores["q0"] = {"MRR@10": 0.0, "R@5": 0.0}  # the first query's order is the table's
    path = tmp_path / "results.json"
    path.write_text(json.dumps(make_results(scores, measures=("R@5", "MRR@10"))), "utf-8")
    record = Results.from_json(json.loads(path.read_text("utf-8")))
    columns = query_columns(record.per_query, record.labels)
    assert columns is not None

    kept = {}
    for way, given in (("record", None), ("columns", columns)):
        entry = RecordCache(tmp_path / way).entry(path)
        _light, sha256 = entry.put(record, given)
        kept[way] = (sha256, entry.queries_file.read_bytes(), entry.file.read_bytes())
        assert entry.get().per_query == record.per_query  # read back, verified
    assert kept["record"] == kept["columns"]


def test_a_damaged_per_query_file_is_read_again_from_the_results(tmp_path):
    scores = {f"q{i}": {"R@5": i / 4} for i in range(4)}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(make_results(scores, measures=("R@5",))), "utf-8")
    record = Results.from_json(json.loads(path.read_text("utf-8")))
    entry = RecordCache(tmp_path / "cache").entry(path)
    entry.put(record, query_columns(record.per_query, record.labels))
    data = bytearray(entry.queries_file.read_bytes())
    data[-1] ^= 0xFF
    entry.queries_file.write_bytes(bytes(data))
    assert RecordCache(tmp_path / "cache").entry(path).get().per_query == record.per_query
