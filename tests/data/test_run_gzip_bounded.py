"""A gzipped run file (``run.trec.gz``, as a results repository keeps it) that is damaged, or
that decompresses to far more than any run file of its size (a "gzip bomb"), is one line
naming it wherever it is read: the build links no run file and warns (it used to stop
whole on an ``EOFError``), ``--verify`` refuses the row, the submission reader refuses it."""

from __future__ import annotations

import gzip
import hashlib
import zlib

import pytest

from statbench.data import gunzip as bounded
from statbench.data.gunzip import gunzip, gunzipped_sha256
from statbench.errors import DataFormatError
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_sample
from statbench.leaderboard.verify.verify import _RunFile

RUN = b"q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n" * 1000


def _bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return packer.compress(b"\n" * size) + packer.flush()


def test_every_member_is_read_as_gzip_reads_it():
    data = gzip.compress(RUN, mtime=0) + gzip.compress(b"more\n", mtime=0) + b"\0\0"
    assert gunzip(data, "x") == RUN + b"more\n"


@pytest.mark.parametrize("data, said", [
    (gzip.compress(RUN, mtime=0)[:-20], "not a complete gzip file (it ends before its end-of-stream marker)"),
    (b"not gzip at all", "not a complete gzip file (Error -3 while decompressing data: incorrect header check)"),
    (gzip.compress(RUN, mtime=0) + b"trailing junk", "not a complete gzip file (Error -3"),
])
def test_a_damaged_gzip_is_one_line(data, said):
    with pytest.raises(DataFormatError) as info:
        gunzip(data, "run.trec.gz")
    assert str(info.value).startswith(f"run.trec.gz: {said}")


def test_a_gzip_bomb_is_refused_before_it_is_read_whole(monkeypatch, tmp_path):
    monkeypatch.setattr(bounded, "FLOOR", 1 << 20)  # 1 MiB of newlines: ~1,000 times its gzip
    bomb = tmp_path / "run.trec.gz"
    bomb.write_bytes(_bomb(8 << 20))
    limit = bounded.limit_for(bomb.stat().st_size)
    for read in (lambda: gunzip(bomb.read_bytes(), bomb), lambda: gunzipped_sha256(bomb), lambda: _RunFile.read(bomb)):
        with pytest.raises(DataFormatError) as info:
            read()
        assert str(info.value) == (f"{bomb}: decompresses to more than {limit:,} bytes (100 times its size): "
                                   "not a run file")
    honest = tmp_path / "honest.gz"
    honest.write_bytes(gzip.compress(RUN, mtime=0))
    assert gunzipped_sha256(honest) == hashlib.sha256(RUN).hexdigest()


@pytest.mark.parametrize("damage", ["truncated", "bomb"])
def test_the_build_warns_and_links_no_run_file(monkeypatch, tmp_path, damage):
    monkeypatch.setattr(bounded, "FLOOR", 1 << 20)
    results = write_sample(tmp_path / "results")[0]
    plain = results.parent / "run.trec"
    packed = gzip.compress(plain.read_bytes(), mtime=0)
    plain.unlink()
    target = results.parent / "run.trec.gz"
    target.write_bytes(packed[:-20] if damage == "truncated" else _bomb(8 << 20))
    report = build_site(tmp_path / "results", tmp_path / "site")
    said = [line for line in report.problems if str(target) in line]
    assert len(said) == 1 and said[0].endswith(": not linked"), report.problems
    assert ("not a complete gzip file" if damage == "truncated" else "decompresses to more than") in said[0]
    assert report.rows == 7 and not list((tmp_path / "site" / "runs").rglob("bm25*"))
