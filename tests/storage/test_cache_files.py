"""statbench.storage.cache_files: a cache's own files are checked on every read and never trusted."""

from __future__ import annotations

import hashlib
import pickle

from statbench.storage.cache_files import (
    framed,
    read_bytes,
    read_framed,
    read_pickled_dict,
    unframed,
    write_bytes,
    write_framed,
)

MAGIC = b"statbench-test 1\n"


def test_a_framed_payload_reads_back_with_its_digest(tmp_path):
    file = tmp_path / "deep" / "entry.bin"
    assert write_framed(file, MAGIC, b"payload")
    assert file.read_bytes() == MAGIC + hashlib.sha256(b"payload").hexdigest().encode() + b"\n" + b"payload"
    assert read_framed(MAGIC, file) == (hashlib.sha256(b"payload").hexdigest(), b"payload")
    assert [p.name for p in file.parent.iterdir()] == ["entry.bin"]  # no temporary file left


def test_an_empty_payload_is_a_payload():
    assert unframed(MAGIC, framed(MAGIC, b"")) == (hashlib.sha256(b"").hexdigest(), b"")


def test_a_damaged_cut_or_foreign_file_reads_as_nothing(tmp_path):
    data = framed(MAGIC, b"payload")
    assert unframed(MAGIC, data[:-1] + b"X") is None  # one byte of the payload changed
    assert unframed(MAGIC, data[:len(MAGIC) + 30]) is None  # cut inside the digest line
    assert unframed(MAGIC, data + b"more") is None  # a payload longer than the one digested
    assert unframed(b"statbench-test 2\n", data) is None  # another format
    assert unframed(MAGIC, b"") is None and unframed(MAGIC, None) is None
    assert read_framed(MAGIC, tmp_path / "absent") is None and read_framed(MAGIC, None) is None


def test_read_bytes_says_none_for_what_cannot_be_read(tmp_path):
    assert read_bytes(None) is None
    assert read_bytes(tmp_path / "absent") is None
    assert read_bytes(tmp_path) is None  # a folder
    (tmp_path / "f").write_bytes(b"x")
    assert read_bytes(tmp_path / "f") == b"x"


def test_a_write_that_cannot_happen_returns_false_and_leaves_nothing(tmp_path):
    (tmp_path / "blocker").write_bytes(b"a file where a folder should be")
    assert write_bytes(tmp_path / "blocker" / "entry", b"data") is False
    target = tmp_path / "target"
    target.mkdir()  # a folder in the way of the file: the rename fails
    assert write_bytes(target, b"data") is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "target"]


def test_write_bytes_replaces_a_file_whole(tmp_path):
    file = tmp_path / "entry"
    assert write_bytes(file, b"first, longer content")
    assert write_bytes(file, b"second")
    assert file.read_bytes() == b"second"


def test_a_pickled_dict_is_read_only_when_it_verifies_loads_and_is_a_dict(tmp_path):
    file = tmp_path / "kept.pickle"
    assert read_pickled_dict(MAGIC, file) == {}
    write_framed(file, MAGIC, pickle.dumps({"a": 1}))
    assert read_pickled_dict(MAGIC, file) == {"a": 1}
    write_framed(file, MAGIC, pickle.dumps(["not", "a", "dict"]))
    assert read_pickled_dict(MAGIC, file) == {}
    write_framed(file, MAGIC, b"\x80\x05not a pickle")
    assert read_pickled_dict(MAGIC, file) == {}
    file.write_bytes(framed(MAGIC, pickle.dumps({"a": 1}))[:-1])  # damaged: never unpickled
    assert read_pickled_dict(MAGIC, file) == {}
