"""A cold build's worker reads each results file once (``RecordCache.read_entry``): the bytes it
parses are the bytes whose sha256 names the entry, and the digest is kept by the build's index
only when the file's stat can prove it later (as ``FileDigests.sha256`` keeps it)."""

from __future__ import annotations

import hashlib
import json
import os

from statbench.leaderboard.caches import records as records_module
from statbench.leaderboard.caches.records import RecordCache, file_state
from statbench.leaderboard.collect.reading import _check_and_keep
from statbench.leaderboard.sample import make_results


def _results_file(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(make_results({"q1": {"R@10": 0.5}, "q2": {"R@10": 1.0}}, measures=("R@10",))),
                    "utf-8")
    return path


def test_the_entry_is_named_by_the_bytes_read(tmp_path):
    path = _results_file(tmp_path)
    cache = RecordCache(tmp_path / "records")
    entry, raw = cache.read_entry(path)
    assert raw == path.read_bytes()
    assert entry.state == (os.path.abspath(path), hashlib.sha256(raw).hexdigest())
    assert entry.state == file_state(path, RecordCache(tmp_path / "other").digests)
    assert cache.digests.known(path) is None  # written just now: its stat proves nothing yet


def test_an_old_enough_file_is_kept_by_its_stat(tmp_path, monkeypatch):
    path = _results_file(tmp_path)
    later = records_module.time.time_ns() + 10 * 10**9
    monkeypatch.setattr(records_module.time, "time_ns", lambda: later)
    cache = RecordCache(tmp_path / "records")
    entry, raw = cache.read_entry(path)
    assert cache.digests.known(path)[0] == hashlib.sha256(raw).hexdigest() == entry.state[1]
    again, raw_again = cache.read_entry(path)  # found by its stat, read for its bytes
    assert again.state == entry.state and raw_again == raw


def test_what_is_not_a_readable_file_has_no_entry(tmp_path):
    cache = RecordCache(tmp_path / "records")
    (tmp_path / "folder.json").mkdir()
    for path in (tmp_path / "missing.json", tmp_path / "folder.json"):
        entry, raw = cache.read_entry(path)
        assert raw is None and entry.state is None and entry.name is None


def test_a_worker_keeps_the_record_it_validated_and_finds_it_again(tmp_path):
    path = _results_file(tmp_path)
    kind, (state, head, _run, _learnt) = _check_and_keep(path, tmp_path / "records")
    assert kind == "cached" and state[1] == hashlib.sha256(path.read_bytes()).hexdigest()
    kind, (state_again, head_again, run, _learnt) = _check_and_keep(path, tmp_path / "records")
    assert kind == "cached" and state_again == state and run is None  # from the cache: not validated again
    assert head_again == head


def test_a_broken_file_is_reported_by_the_worker(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"schema_version": 1, "a": NaN}', "utf-8")
    kind, line = _check_and_keep(path, tmp_path / "records")
    assert kind == "report" and "NaN" in line and str(path) in line
