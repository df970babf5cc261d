"""Anything a build reads is identified by its content (issue 33 §2): a file rewritten
keeping its size and times (``os.utime`` back; a rewrite within one tick of the file
system's clock, which keeps even its change time) is read again, and the next incremental
build equals a full build. statbench.storage.filedigests finds a digest by a file's stat only
where that provably identifies the content."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_sample
from statbench.storage import filedigests, weights
from statbench.storage.filedigests import MARGIN_NS, FileDigests


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _rewrite_keeping_stat(path: Path, old: bytes, new: bytes) -> os.stat_result:
    """Replace ``old`` by ``new`` (same length) in the file, in place, its times set back."""
    before = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) >= 1
    with open(path, "r+b") as handle:  # in place: the same inode
        handle.write(data.replace(old, new, 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    return before


@pytest.fixture
def same_tick(monkeypatch):
    """A file system whose clock did not tick: the files named keep the stat they had
    (change time included), and each build hashes them within that same tick."""
    frozen: dict[str, os.stat_result] = {}
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        found = real_stat(path, *args, **kwargs)
        kept = frozen.get(os.path.abspath(os.fspath(path))) if isinstance(path, (str, os.PathLike)) else None
        return kept if kept is not None and kept.st_ino == found.st_ino else found

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(filedigests.time, "time_ns", lambda: max(s.st_ctime_ns for s in frozen.values()))

    def freeze(path: Path) -> None:
        frozen[os.path.abspath(path)] = real_stat(path)

    return freeze


def _full_build(results: Path, out: Path, monkeypatch, tmp_path: Path, **options) -> dict[str, bytes]:
    """A build from nothing: a new cache, a new folder."""
    with monkeypatch.context() as m:
        m.setenv("STATBENCH_CACHE", str(tmp_path / "fresh-cache"))
        build_site(results, out, **options)
    return _tree(out)


def test_a_results_file_rewritten_keeping_size_and_times_is_shown_anew(tmp_path, monkeypatch):
    results, site = tmp_path / "results", tmp_path / "site"
    write_sample(results)
    build_site(results, site)
    assert "--model bm25<" in (site / "task-toy.html").read_text("utf-8")
    _rewrite_keeping_stat(results / "bm25" / "results.json", b'--model bm25"', b'--model BM25"')
    report = build_site(results, site)
    assert report.rendered == ["toy"]
    page = (site / "task-toy.html").read_text("utf-8")
    assert "--model BM25<" in page and "--model bm25<" not in page
    assert _tree(site) == _full_build(results, tmp_path / "full", monkeypatch, tmp_path)


def test_a_rewrite_within_one_clock_tick_is_shown_anew(tmp_path, monkeypatch, same_tick):
    """Size, times and inode all as they were: only the content tells (today's stat-keyed
    caches showed the old row)."""
    results, site = tmp_path / "results", tmp_path / "site"
    write_sample(results)
    path = results / "bm25" / "results.json"
    same_tick(path)
    build_site(results, site)
    _rewrite_keeping_stat(path, b'--model bm25"', b'--model BM25"')
    report = build_site(results, site)
    assert report.rendered == ["toy"]
    assert "--model BM25<" in (site / "task-toy.html").read_text("utf-8")
    assert _tree(site) == _full_build(results, tmp_path / "full", monkeypatch, tmp_path)


def test_a_run_file_rewritten_within_one_tick_is_checked_again(tmp_path, monkeypatch, same_tick):
    """A run file no longer the one its results name is not linked as if it were."""
    results, site = tmp_path / "results", tmp_path / "site"
    write_sample(results)
    run = results / "ql" / "run.trec"
    same_tick(run)
    build_site(results, site)
    text = run.read_bytes()
    _rewrite_keeping_stat(run, text[:4], text[:4].swapcase() if text[:4].swapcase() != text[:4] else b"xxxx")
    report = build_site(results, site)
    assert [p for p in report.problems if "ql" in p and "does not match the checksum" in p], report.problems
    assert _tree(site) == _full_build(results, tmp_path / "full", monkeypatch, tmp_path)


# --- the index of digests ----------------------------------------------------------------


def test_a_recent_file_is_hashed_each_time_an_old_one_is_found_by_its_stat(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    path.write_bytes(b"one")
    digests = FileDigests(tmp_path / "store.json")
    first = digests.sha256(path)
    assert digests.hashed == 1 and digests._added == {}  # changed within the margin: not kept
    assert digests.sha256(path) == first and digests.hashed == 2
    st = path.stat()
    monkeypatch.setattr(filedigests.time, "time_ns", lambda: max(st.st_ctime_ns, st.st_mtime_ns) + MARGIN_NS + 1)
    digests.sha256(path)
    assert digests.hashed == 3 and len(digests._added) == 1  # old enough: kept
    digests.save()
    again = FileDigests(tmp_path / "store.json")
    assert again.sha256(path) == first and again.hashed == 0  # found by its stat, from the store
    path.write_bytes(b"two")  # any write gives a newer change time: another key
    assert again.sha256(path) != first and again.hashed == 1


def test_a_damaged_store_is_ignored_and_a_file_changed_while_read_is_not_kept(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    path.write_bytes(b"one")
    store = tmp_path / "store.json"
    store.write_text("statbench-file-digests 1\n" + "0" * 64 + "\n[]")
    digests = FileDigests(store)
    monkeypatch.setattr(filedigests.time, "time_ns", lambda: path.stat().st_ctime_ns + MARGIN_NS + 1)
    real = filedigests.file_sha256

    def changing(p):
        found = real(p)
        Path(p).write_bytes(b"changed meanwhile")
        return found

    monkeypatch.setattr(filedigests, "file_sha256", changing)
    digests.sha256(path)
    assert digests._added == {} and digests._load() == {}


def test_a_local_model_folder_rewritten_keeping_size_and_times_is_another_model(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "weights.bin").write_bytes(b"\x00" * 64)
    before = weights.fingerprint(str(model))
    _rewrite_keeping_stat(model / "weights.bin", b"\x00" * 8, b"\x01" * 8)
    assert weights.fingerprint(str(model)) != before


def test_a_cold_builds_workers_hash_the_files_the_build_reads_none_twice(tmp_path, monkeypatch):
    """The files a cold build's workers validate are hashed there (from the bytes they read),
    not first in the build's process; their digests are kept, so the next build finds every
    file by its stat."""
    from statbench.leaderboard.caches.records import RecordCache
    from statbench.leaderboard.collect.reading import collect
    from statbench.leaderboard.forkmap import processes
    from statbench.leaderboard.sample import write_many
    from statbench.storage.filedigests import file_digests

    if processes() < 2:
        pytest.skip("one process: no workers")
    real = filedigests.time.time_ns
    monkeypatch.setattr(filedigests.time, "time_ns", lambda: real() + 3600 * 10**9)  # every file old enough
    paths = write_many(tmp_path / "results", 80)
    digests = file_digests("leaderboard")
    collected = collect(tmp_path / "results", records=RecordCache(tmp_path / "records"))
    assert sum(map(len, collected.boards.values())) == 80
    assert digests.hashed == 0  # the build's process read none of them
    again = FileDigests(digests.store)  # what the next build finds
    assert all(again.known(p) is not None for p in paths)
    assert all(again.known(p.parent / "run.trec") is not None for p in paths)
    assert again.known(paths[0])[0] == filedigests.file_sha256(paths[0])


def test_a_model_card_rewritten_keeping_size_and_times_is_shown_anew(tmp_path, monkeypatch):
    """What a build reads beside a results file (a submission's model card) is part of its
    board's digest: an edited card renders the board again."""
    from statbench.leaderboard.repo.submission import card_parameters, card_text
    from statbench.results.record import Results, read_results

    results, site = tmp_path / "results", tmp_path / "site"
    write_sample(results)
    path = results / "ql" / "results.json"
    record = Results.from_json(read_results(path))
    card = {"card_version": 1, "model": {"name": "ql", "version": "1"}, "source": "local",
            "parameters": card_parameters(record), "training_data": "none", "test_queries_seen": False,
            "hardware": "machine-A", "licence": "MIT", "authors": ["someone"]}
    (path.parent / "model_card.json").write_text(card_text(card), encoding="utf-8")
    report = build_site(results, site)
    assert report.problems == [] and "machine-A" in (site / "task-toy.html").read_text("utf-8")
    _rewrite_keeping_stat(path.parent / "model_card.json", b"machine-A", b"machine-B")
    report = build_site(results, site)
    assert report.rendered == ["toy"]
    page = (site / "task-toy.html").read_text("utf-8")
    assert "machine-B" in page and "machine-A" not in page
    assert _tree(site) == _full_build(results, tmp_path / "full", monkeypatch, tmp_path)
