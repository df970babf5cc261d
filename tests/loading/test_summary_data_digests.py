"""The cached load's key takes each data file's sha256 from its stat where that proves the
content (statbench.storage.filedigests), so a warm run reads no data file; a data file changed
in any way, even in place keeping its size and modification time, still gives another key, and
the cached load is refused."""

import json
import logging
import os
import time

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.loading import loadcache
from statbench.registry.plugins import get_registry
from statbench.storage import filedigests, keys
from statbench.storage.paths import cache_root
from statbench.tasks.stard import Stard

#: query 3's words replaced by as many UTF-8 bytes of other words
OLD, NEW = "婚姻制度".encode(), "建筑活动".encode()


@pytest.fixture
def settled(monkeypatch):
    """Files written by the test count as older than the hashing (as the real data files
    are): their digests are kept."""
    monkeypatch.setattr(filedigests, "MARGIN_NS", -10**15)


@pytest.fixture
def fresh_digests(monkeypatch):
    """Each call to :func:`summary_key` sees only what the store on disk holds."""
    def forget():
        monkeypatch.setattr(filedigests, "_shared", {})
    forget()
    return forget


def summary_key(stard_dir):
    entry = get_registry().get("tasks", "stard")
    keys._code_version.cache_clear()
    return loadcache.summary_entry(entry.cls(), entry, stard_dir, logging.getLogger("test")).key


def forbid_hashing(monkeypatch):
    def refuse(path, *args, **kwargs):
        raise AssertionError(f"hashed {path}")
    monkeypatch.setattr(filedigests, "file_sha256", refuse)
    monkeypatch.setattr(loadcache, "file_sha256", refuse)


def change_in_place(path):
    """Same bytes count and modification time, other content: only ``ctime`` tells."""
    before = os.stat(path)
    data = path.read_bytes()
    assert OLD in data
    with open(path, "r+b") as handle:
        handle.seek(data.index(OLD))
        handle.write(NEW)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    for _ in range(200):  # a write in the same clock tick keeps ctime: set it again until it moves
        if os.stat(path).st_ctime_ns != before.st_ctime_ns:
            break
        time.sleep(0.01)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert after.st_ctime_ns != before.st_ctime_ns
    assert path.read_bytes() != data


def test_a_settled_data_file_is_not_read_again_for_the_key(stard_dir, settled, fresh_digests, monkeypatch):
    first = summary_key(stard_dir)
    fresh_digests()
    forbid_hashing(monkeypatch)
    assert summary_key(stard_dir) == first


def test_a_data_file_changed_in_place_with_its_size_and_mtime_gives_another_key(stard_dir, settled, fresh_digests,
                                                                                 monkeypatch):
    first = summary_key(stard_dir)
    change_in_place(stard_dir / "queries.json")
    fresh_digests()
    changed = summary_key(stard_dir)
    assert changed != first
    # the key is the one of the new content, as a cache that never saw the file gives it
    monkeypatch.setattr(filedigests, "MARGIN_NS", 3_000_000_000)
    monkeypatch.setenv("STATBENCH_CACHE", str(stard_dir.parent / "other-cache"))
    fresh_digests()
    assert summary_key(stard_dir) == changed


def test_a_file_written_just_now_is_hashed_every_time(stard_dir, fresh_digests, monkeypatch):
    """Within the margin a same-tick write could keep every stamp: no digest is kept."""
    summary_key(stard_dir)
    fresh_digests()
    hashed = []
    real = filedigests.file_sha256
    monkeypatch.setattr(filedigests, "file_sha256", lambda path: hashed.append(path) or real(path))
    summary_key(stard_dir)
    assert {os.path.basename(p) for p in hashed} >= {"queries.json", "corpus.jsonl"}


@pytest.mark.parametrize("damage", ["garbage", "resealed-other-digest"])
def test_a_damaged_or_forged_digest_store_is_not_believed(stard_dir, settled, fresh_digests, damage):
    first = summary_key(stard_dir)
    store = cache_root() / "file-digests" / "data.json"
    text = store.read_text("utf-8")
    if damage == "garbage":
        store.write_text(text[:-7] + "garbage", "utf-8")
    else:  # a row's digest changed without the store's own checksum: refused whole
        magic, digest, payload = text.split("\n", 2)
        rows = json.loads(payload)
        rows[0][6] = "0" * 64
        store.write_text(f"{magic}\n{digest}\n{json.dumps(rows)}", "utf-8")
    fresh_digests()
    assert summary_key(stard_dir) == first


def test_a_warm_run_refuses_its_cached_load_once_a_data_file_changed_in_place(stard_dir, tmp_path, settled,
                                                                               monkeypatch):
    loads = []
    real = Stard.load
    monkeypatch.setattr(Stard, "load", lambda self, data_dir, log: loads.append(1) or real(self, data_dir, log))

    def run(out):
        result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir),
                                          "--output", str(tmp_path / out), "--no-progress"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads((tmp_path / out / "results.json").read_text("utf-8"))

    cold = run("cold")
    warm = run("warm")
    assert len(loads) == 1 and set(warm["cache"].values()) == {"hit"}
    change_in_place(stard_dir / "queries.json")
    changed = run("changed")
    assert len(loads) == 2, "the cached load of the old file was used"
    assert set(changed["cache"].values()) == {"miss"}
    assert changed["task"]["data_checksum"] != cold["task"]["data_checksum"]
