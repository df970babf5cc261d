"""The gzipped run files a cold build's workers prepare (``runcopies.prefill``): made once per
run file content, an entry already there left as it is (not read again by every result that
shares the run file), and verified where it is used (``write_gzipped``): a damaged or cut entry
is made again from the run file, never copied into the site."""

from __future__ import annotations

import gzip
import hashlib
import json
import types

import pytest

from statbench.leaderboard.caches.runcopies import gzip_bytes, prefill, write_gzipped

RUN = b"".join(f"q{i} Q0 d{j} {j + 1} {10 - j}.5 bm25\n".encode() for i in range(50) for j in range(10))


def _record(sha256: str, path: str = "run.trec"):
    return types.SimpleNamespace(run_file=types.SimpleNamespace(path=path, sha256=sha256))


@pytest.fixture
def results(tmp_path):
    folder = tmp_path / "results" / "r1"
    folder.mkdir(parents=True)
    (folder / "run.trec").write_bytes(RUN)
    (folder / "results.json").write_text(json.dumps({"run_file": {"path": "run.trec"}}), "utf-8")
    return folder / "results.json"


def _entry(root, sha256):
    return root / sha256[:2] / f"{sha256}.gz", root / sha256[:2] / f"{sha256}.sha256"


def test_prefill_makes_the_entry_of_a_run_file_with_its_recorded_sha256(tmp_path, results):
    sha256 = hashlib.sha256(RUN).hexdigest()
    root = tmp_path / "runs"
    prefill(results, _record(sha256), root)
    entry, check = _entry(root, sha256)
    assert gzip.decompress(entry.read_bytes()) == RUN
    assert entry.read_bytes() == gzip_bytes(RUN)
    assert check.read_bytes() == hashlib.sha256(entry.read_bytes()).hexdigest().encode() + b"\n"


@pytest.mark.parametrize("bad", ["another sha256", "a run path outside", "an absolute path"])
def test_prefill_makes_nothing_for_a_run_file_it_cannot_vouch_for(tmp_path, results, bad):
    sha256 = hashlib.sha256(RUN).hexdigest()
    record = {"another sha256": _record("0" * 64), "a run path outside": _record(sha256, "../r1/run.trec"),
              "an absolute path": _record(sha256, str(results.parent / "run.trec"))}[bad]
    assert prefill(results, record, tmp_path / "runs") is None
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("damage", ["flipped", "cut", "check gone"])
def test_a_damaged_entry_is_left_by_prefill_and_made_again_where_it_is_used(tmp_path, results, damage):
    sha256 = hashlib.sha256(RUN).hexdigest()
    root = tmp_path / "runs"
    prefill(results, _record(sha256), root)
    entry, check = _entry(root, sha256)
    good = entry.read_bytes()
    if damage == "flipped":
        entry.write_bytes(good[:-5] + bytes([good[-5] ^ 0xFF]) + good[-4:])
    elif damage == "cut":
        entry.write_bytes(good[: len(good) // 2])
    else:
        check.unlink()
    damaged = entry.read_bytes()
    prefill(results, _record(sha256), root)  # a second result sharing the run file
    assert entry.read_bytes() == (damaged if damage != "check gone" else good)
    target = tmp_path / "site-run.trec.gz"
    write_gzipped(results.parent / "run.trec", sha256, target, root)
    assert target.read_bytes() == good and gzip.decompress(target.read_bytes()) == RUN
    assert entry.read_bytes() == good  # made again
