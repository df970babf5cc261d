"""A record's per-query file is read in several phases of one build: hashed the first time,
then read without hashing only while its stat provably identifies the bytes hashed (the rule of
``statbench.storage.filedigests``). A file damaged in place, replaced, or too recent for its
stat to prove anything is verified again, and a damaged one read again from the results."""

from __future__ import annotations

import json
import os

import pytest

from statbench.leaderboard.caches import records as records_module
from statbench.leaderboard.caches.records import RecordCache
from statbench.leaderboard.sample import make_results
from statbench.results.record import Results

SCORES = {f"q{i}": {"R@5": i / 10, "nDCG@10": (i % 3) / 3} for i in range(9)}


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """(the record, its per-query scores as the cache gives them, a counter of hashings)."""
    path = tmp_path / "results.json"
    path.write_text(json.dumps(make_results(SCORES, measures=("R@5", "nDCG@10"))), "utf-8")
    record = Results.from_json(json.loads(path.read_text("utf-8")))
    entry = RecordCache(tmp_path / "records").entry(path)
    entry.put(record)
    monkeypatch.setattr(records_module, "_PROVEN", {})
    hashed = []
    real = records_module.unframed
    monkeypatch.setattr(records_module, "unframed", lambda magic, data: hashed.append(1) or real(magic, data))
    return record, entry.get().per_query, hashed


def _later(monkeypatch, seconds=10):
    """The clock moved on: the files written just now are old enough for their stat to prove them."""
    now = records_module.time.time_ns() + seconds * 10**9
    monkeypatch.setattr(records_module.time, "time_ns", lambda: now)


def test_a_file_old_enough_is_hashed_once(kept, monkeypatch):
    record, lazy, hashed = kept
    _later(monkeypatch)
    queries = lazy._queries
    first, second, third = queries.load(), queries.load(), queries.load()
    assert len(hashed) == 1
    for table in (first, second, third):
        assert table.as_dict() == record.per_query


def test_a_recent_file_is_hashed_every_time(kept):
    record, lazy, hashed = kept
    for _ in range(3):
        assert lazy._queries.load().as_dict() == record.per_query
    assert len(hashed) == 3


def test_a_file_damaged_in_place_after_it_was_proven_is_read_again_from_the_results(kept, monkeypatch):
    record, lazy, hashed = kept
    _later(monkeypatch)
    queries = lazy._queries
    assert queries.load().as_dict() == record.per_query
    file = queries.entry.queries_file
    size = file.stat().st_size
    with open(file, "r+b") as handle:  # same inode, same size: only its ctime tells
        handle.seek(size - 3)
        byte = handle.read(1)
        handle.seek(size - 3)
        handle.write(bytes([byte[0] ^ 0x01]))
    assert queries.load().as_dict() == record.per_query  # not the damaged bytes
    assert len(hashed) == 2
    assert queries.load().as_dict() == record.per_query


def test_a_file_replaced_by_another_entrys_is_refused(kept, monkeypatch, tmp_path):
    record, lazy, _hashed = kept
    _later(monkeypatch)
    queries = lazy._queries
    queries.load()
    other = tmp_path / "other.json"
    other.write_text(json.dumps(make_results({q: {"R@5": 1.0, "nDCG@10": 1.0} for q in SCORES},
                                             measures=("R@5", "nDCG@10"))), "utf-8")
    other_entry = RecordCache(tmp_path / "records").entry(other)
    other_entry.put(Results.from_json(json.loads(other.read_text("utf-8"))))
    os.replace(other_entry.queries_file, queries.entry.queries_file)
    assert queries.load().as_dict() == record.per_query
