"""A cached split run is proven by its writer's seal (issue 37 §1): reusing it costs about
what reading it costs, and a damaged, truncated, re-sealed or foreign entry is still rebuilt,
never used. An entry without the seal (another version's) is checked line by line."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

import statbench.run.splitruns as splitruns
from statbench.run.request import RunRequest
from statbench.run.runner import execute
from statbench.storage.cache import SEAL, CacheEntry, sha256_file
from statbench.storage.paths import cache_root

LOG = logging.getLogger("test")
NO_PROGRESS = lambda description, total=None: (lambda n=1: None)  # noqa: E731


def _run(stard_dir, out: Path, splits=("fold-1",)):
    return execute(RunRequest(task="stard", model="bm25", data_dir=stard_dir, splits=list(splits), output=out), LOG,
                   NO_PROGRESS)


def _entries() -> list[Path]:
    return sorted(p for p in (cache_root() / "runs" / "stard").iterdir() if p.is_dir())


def _reseal_files(entry: Path) -> None:
    """Re-write the manifest's file digests to match the files (what an editing tool, or an
    older harness's sealing code, would do); the writer's seal is left as it was."""
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"] = {p.name: {"size": p.stat().st_size, "sha256": sha256_file(p)}
                         for p in sorted(entry.iterdir()) if p.name != "manifest.json"}
    (entry / "manifest.json").write_text(json.dumps(manifest))


def _swap_two_documents(entry: Path) -> None:
    """A well-formed edit: the first query's top two documents change places (ranks, scores,
    tag: every line still as the writer would write one)."""
    lines = (entry / "run.trec").read_text().splitlines()
    first, second = lines[0].split(" "), lines[1].split(" ")
    assert first[0] == second[0]
    first[2], second[2] = second[2], first[2]
    lines[0], lines[1] = " ".join(first), " ".join(second)
    (entry / "run.trec").write_text("".join(line + "\n" for line in lines))


def _refuse_line_checks(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a sealed entry's lines were read one by one")

    monkeypatch.setattr(splitruns, "_check_block", refuse)


def test_the_writer_seals_each_split_run_and_a_rerun_reads_no_line_one_by_one(stard_dir, tmp_path, monkeypatch):
    first = _run(stard_dir, tmp_path / "a", splits=("fold-1", "fold-2"))
    for entry in _entries():
        seal = json.loads((entry / "manifest.json").read_text())[SEAL]
        assert seal["by"] == splitruns.SEALED_CHECK and len(seal["sha256"]) == 64
    _refuse_line_checks(monkeypatch)
    again = _run(stard_dir, tmp_path / "b", splits=("fold-1", "fold-2"))
    assert again.record.cache == {"fold-1": "hit", "fold-2": "hit"} and not again.record.cache_invalid
    assert (tmp_path / "b" / "run.trec").read_bytes() == (tmp_path / "a" / "run.trec").read_bytes()
    assert again.record.run_file.sha256 == first.record.run_file.sha256


def _damage(entry: Path) -> None:
    data = bytearray((entry / "run.trec").read_bytes())
    data[len(data) // 2] ^= 0x01
    (entry / "run.trec").write_bytes(bytes(data))


def _truncate(entry: Path) -> None:
    data = (entry / "run.trec").read_bytes()
    (entry / "run.trec").write_bytes(data[: len(data) - 7])


def _reseal_over_an_edit(entry: Path) -> None:
    _swap_two_documents(entry)
    _reseal_files(entry)


def _reseal_the_index(entry: Path) -> None:  # the index re-cut: the last block loses its last line
    index = json.loads((entry / "index.json").read_text())
    data = (entry / "run.trec").read_bytes()
    qid, start, end = index[-1]
    index[-1] = [qid, start, data.rindex(b"\n", start, end - 1) + 1]
    (entry / "index.json").write_text(json.dumps(index))
    _reseal_files(entry)


def _foreign(entry: Path) -> None:
    """Another split's entry put in this one's place, whole (its manifest names its own key)."""
    other = next(p for p in _entries() if p != entry)
    shutil.rmtree(entry)
    shutil.copytree(other, entry)


def _foreign_with_this_key(entry: Path) -> None:
    """Another split's files under this entry's manifest, the file digests re-written."""
    other = next(p for p in _entries() if p != entry)
    for name in ("run.trec", "index.json"):
        shutil.copyfile(other / name, entry / name)
    _reseal_files(entry)


def _foreign_key_resealed(entry: Path) -> None:
    """Another split's entry whose manifest was given this entry's key."""
    key = json.loads((entry / "manifest.json").read_text())["key"]
    _foreign(entry)
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["key"] = key
    (entry / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("edit", [_damage, _truncate, _reseal_over_an_edit, _reseal_the_index, _foreign,
                                  _foreign_with_this_key, _foreign_key_resealed])
def test_a_damaged_truncated_resealed_or_foreign_entry_is_rebuilt(stard_dir, tmp_path, edit):
    _run(stard_dir, tmp_path / "a", splits=("fold-1", "fold-2"))
    original = (tmp_path / "a" / "run.trec").read_bytes()
    entry = next(p for p in _entries() if json.loads((p / "manifest.json").read_text())["key"]["split"][0] == "fold-1")
    edit(entry)
    outcome = _run(stard_dir, tmp_path / "b", splits=("fold-1", "fold-2"))
    assert (tmp_path / "b" / "run.trec").read_bytes() == original
    assert outcome.record.cache == {"fold-1": "miss", "fold-2": "hit"}
    assert [e.entry for e in outcome.record.cache_invalid] == [str(entry)]


def test_a_well_formed_edit_resealed_is_caught_by_the_seal_and_said(stard_dir, tmp_path):
    _run(stard_dir, tmp_path / "a")
    (entry,) = _entries()
    _reseal_over_an_edit(entry)
    reason = _verify(entry)
    assert reason == "manifest re-sealed over other files than its writer's (the writer's seal does not match)"


def _verify(entry: Path) -> str | None:
    manifest = json.loads((entry / "manifest.json").read_text())
    return CacheEntry(entry, "split-run", manifest["key"], required=("run.trec", "index.json"),
                      check=splitruns.check_split_run, seal=splitruns.SEALED_CHECK).verify()


def _unsealed(entry: Path, edit=None) -> None:
    """The entry as a harness without seals wrote it (no seal), optionally edited and re-sealed."""
    if edit is not None:
        edit(entry)
        _reseal_files(entry)
    manifest = json.loads((entry / "manifest.json").read_text())
    del manifest[SEAL]
    (entry / "manifest.json").write_text(json.dumps(manifest))


def _ties(entry: Path) -> None:  # what a run of format 3 could hold: equal scores at float32
    lines = (entry / "run.trec").read_text().splitlines()
    (entry / "run.trec").write_text("".join(" ".join([*line.split()[:4], "1.0", line.split()[5]]) + "\n"
                                            for line in lines))


def _other_seal(entry: Path) -> None:
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest[SEAL]["by"] = "split-run lines, check 0"
    (entry / "manifest.json").write_text(json.dumps(manifest))


def test_an_unsealed_entry_is_checked_line_by_line_and_used_when_it_passes(stard_dir, tmp_path, monkeypatch):
    _run(stard_dir, tmp_path / "a")
    (entry,) = _entries()
    _unsealed(entry)
    calls = []
    real = splitruns._check_block
    monkeypatch.setattr(splitruns, "_check_block", lambda *a: calls.append(1) or real(*a))
    outcome = _run(stard_dir, tmp_path / "b")
    assert outcome.record.cache == {"fold-1": "hit"} and calls
    assert (tmp_path / "b" / "run.trec").read_bytes() == (tmp_path / "a" / "run.trec").read_bytes()


@pytest.mark.parametrize("how", ["ties, unsealed", "ties, sealed by another check"])
def test_an_unsealed_or_otherwise_sealed_entry_that_fails_the_line_check_is_rebuilt(stard_dir, tmp_path, how):
    _run(stard_dir, tmp_path / "a")
    (entry,) = _entries()
    if how == "ties, unsealed":
        _unsealed(entry, _ties)
    else:
        _ties(entry)
        _reseal_files(entry)
        _other_seal(entry)
    assert "scores not strictly decreasing" in _verify(entry)
    outcome = _run(stard_dir, tmp_path / "b")
    assert outcome.record.cache == {"fold-1": "miss"}
    assert (tmp_path / "b" / "run.trec").read_bytes() == (tmp_path / "a" / "run.trec").read_bytes()


@pytest.mark.parametrize("edit, reason", [
    (lambda e: (e / "index.json").write_text("[]"), "run.trec holds bytes no query's block covers"),
    (lambda e: (e / "index.json").write_text(json.dumps([["zz-other", 0, (e / "run.trec").stat().st_size]])),
     "query 'zz-other' is not a test query of split 'fold-1'"),
])
def test_a_sealed_entry_still_has_its_index_checked(stard_dir, tmp_path, edit, reason):
    """The seal is re-computed too (as a forger would): the index and the block bounds are
    still read, so an index that does not fit the run is refused."""
    from statbench.storage.cache import _seal_digest

    _run(stard_dir, tmp_path / "a")
    (entry,) = _entries()
    edit(entry)
    _reseal_files(entry)
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest[SEAL]["sha256"] = _seal_digest(manifest[SEAL]["by"], "split-run", manifest["key"], manifest["files"])
    (entry / "manifest.json").write_text(json.dumps(manifest))
    assert _verify(entry) == reason


def test_the_bytes_verified_are_the_bytes_used(stard_dir, tmp_path):
    """A file replaced after the entry was verified is not read again: the run is assembled
    from the bytes the verification hashed."""
    _run(stard_dir, tmp_path / "a")
    (entry,) = _entries()
    manifest = json.loads((entry / "manifest.json").read_text())
    cached = CacheEntry(entry, "split-run", manifest["key"], required=("run.trec", "index.json"),
                        check=splitruns.check_split_run, seal=splitruns.SEALED_CHECK,
                        keep=("run.trec", "index.json"))
    assert cached.verify() is None and cached.sealed
    original = (entry / "run.trec").read_bytes()
    (entry / "run.trec").write_bytes(b"replaced\n")
    run = splitruns.SplitRun.read("fold-1", cached)
    assert run.data == original and run.sha256 == manifest["files"]["run.trec"]["sha256"]
