"""Cache entries are not synced to disk when written: what a crash can leave of one (a file
emptied, zeroed or cut short, a manifest torn or gone) is found invalid on the next read and
rebuilt, never used."""

import json
import os

import pytest

from statbench.storage import cache
from statbench.storage.cache import MANIFEST, CacheEntry, cached

FILES = {"data.bin": bytes(range(256)) * 64, "index.json": json.dumps({"rows": list(range(100))}).encode()}


def _build(staging):
    for name, data in FILES.items():
        (staging / name).write_bytes(data)


def _entry(tmp_path) -> CacheEntry:
    return CacheEntry(tmp_path / "entry", "kind", {"k": 1}, required=tuple(FILES))


def _emptied(entry):
    (entry / "data.bin").write_bytes(b"")
    return f"data.bin: 0 bytes, manifest records {len(FILES['data.bin'])} (truncated or overwritten)"


def _zeroed(entry):
    (entry / "data.bin").write_bytes(bytes(len(FILES["data.bin"])))
    return "data.bin: sha256 differs from the manifest (corrupted)"


def _index_cut_short(entry):
    (entry / "index.json").write_bytes(FILES["index.json"][:10])
    return f"index.json: 10 bytes, manifest records {len(FILES['index.json'])} (truncated or overwritten)"


def _manifest_torn(entry):
    text = (entry / MANIFEST).read_bytes()
    (entry / MANIFEST).write_bytes(text[: len(text) // 2])
    return "unreadable manifest"


def _manifest_empty(entry):
    (entry / MANIFEST).write_bytes(b"")
    return "unreadable manifest"


def _manifest_gone(entry):
    (entry / MANIFEST).unlink()
    return "no manifest (an interrupted or foreign write)"


@pytest.mark.parametrize("crash", [_emptied, _zeroed, _index_cut_short, _manifest_torn, _manifest_empty,
                                   _manifest_gone])
def test_what_a_crash_leaves_is_rebuilt_never_used(tmp_path, crash):
    entry = _entry(tmp_path)
    cached(entry, _build)
    assert entry.verify() is None
    expected = crash(entry.path)
    reason = entry.verify()
    assert reason is not None and reason.startswith(expected)
    cache.take_events()
    cached(entry, _build)
    assert [e.entry for e in cache.take_events()] == [str(entry.path)]
    assert entry.verify() is None
    assert {name: entry.read_bytes(name) for name in FILES} == FILES


def test_an_entry_is_written_without_syncing(tmp_path, monkeypatch):
    """The speed this buys (a cold STARD run wrote ~50 synced files): nothing calls fsync."""
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    entry = _entry(tmp_path)
    cached(entry, _build)
    assert synced == []
    assert entry.verify() is None
