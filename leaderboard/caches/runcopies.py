"""Gzipped run files kept between builds by the sha256 of their content, so that a board
rendered again does not gzip again the run files of its unchanged rows (gzipping a board's
3,343 run files was ~3 s of a rebuild that added 10 rows).

The gzip of a run file is deterministic (no name, no time in the header, a fixed level): the
same content always gives the same bytes. An entry is the gzip (``SHA.gz``) and the sha256 of
those bytes (``SHA.sha256``); it is verified on read (an entry that does not verify is
rewritten). The caller has checked the run file against the sha256 its results record.
Entries live under ``$STATBENCH_CACHE/leaderboard-runs/``; writes are atomic."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import time
from pathlib import Path

from statbench.data.gunzip import gunzip
from statbench.errors import StatbenchError
from statbench.storage.cache_files import read_bytes, write_bytes
from statbench.storage.filedigests import file_digests, keepable
from statbench.storage.paths import cache_root

#: level 1: ~2.5x faster than 6 on run files, ~15% larger
LEVEL = 1


def _root() -> Path:
    return cache_root() / "leaderboard-runs"

def gzip_bytes(content: bytes) -> bytes:
    """The site's gzip of a run file: no name, time 0, level :data:`LEVEL` (deflate's output
    does not depend on how its input is cut: the same bytes as streaming the file)."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=LEVEL) as gz:
        gz.write(content)
    return out.getvalue()

def prefill(results_file: Path, record, root: Path | None = None) -> tuple[str, str] | None:
    """Gzip into the cache the run file a valid record names, when it is a regular file
    beside or below it whose content has the recorded sha256 (anything else is left to the
    build, which reports it): what a worker validating the files of a cold build does, so the
    hashing and gzipping are spread over the workers too. (its state key, its sha256) when it
    was checked, for :meth:`RunDigests.learn`."""
    rel = record.run_file.path
    if not rel or not record.run_file.sha256 or "\x00" in rel or Path(rel).is_absolute() or ".." in Path(rel).parts:
        return None
    source = Path(results_file).parent / rel
    try:
        if source.is_symlink() or not source.is_file():
            return None
        source = source.resolve(strict=True)  # as the site names it (run_source), so the keys agree
        before, started = os.stat(source), time.time_ns()
        content = source.read_bytes()
        after = os.stat(source)
    except OSError:
        return None
    sha256 = record.run_file.sha256
    if hashlib.sha256(content).hexdigest() != sha256:
        return None
    key = keepable(source, before, after, started)  # None: changed while read, or too recent to be found by stat
    root = _root() if root is None else Path(root)
    entry = root / sha256[:2] / f"{sha256}.gz"
    check = entry.with_suffix(".sha256")
    # an entry already there is not read here: it is verified where it is used (write_gzipped,
    # which makes it again when it does not verify); many results of a board share a run file
    if not (entry.is_file() and check.is_file()):
        data = gzip_bytes(content)
        if write_bytes(entry, data):
            write_bytes(check, hashlib.sha256(data).hexdigest().encode() + b"\n")
    return None if key is None else (json.dumps(key), sha256)

def plain_content(path: Path, gzipped: bool = False) -> bytes:
    """A run file's content; ``gzipped``: the file is the gzip of the run results.json names
    (``run.trec.gz`` beside it, as a results repository keeps it and ``--verify`` reads it): a
    damaged or over-large gzip is one :class:`DataFormatError` line (:mod:`.gunzip`)."""
    data = Path(path).read_bytes()
    return gunzip(data, path) if gzipped else data

def write_gzipped(source: Path, content_sha256: str, target: Path, root: Path | None = None,
                  gzipped: bool = False) -> None:
    """Write the gzip of ``source`` (whose content has sha256 ``content_sha256``) to ``target``,
    from the cache when it holds it."""
    root = _root() if root is None else Path(root)
    entry = root / content_sha256[:2] / f"{content_sha256}.gz"
    check = entry.with_suffix(".sha256")
    data, recorded = read_bytes(entry), read_bytes(check)
    if data is None or recorded is None or hashlib.sha256(data).hexdigest().encode() != recorded.strip():
        content = plain_content(source, gzipped)
        if hashlib.sha256(content).hexdigest() != content_sha256:
            raise StatbenchError(f"{source} changed while the leaderboard was being built; build again")
        data = gzip_bytes(content)
        if write_bytes(entry, data):
            write_bytes(check, hashlib.sha256(data).hexdigest().encode() + b"\n")
    # the checked entry itself, hard-linked (no data written: the cache writes an entry anew,
    # never in place, so the link keeps these bytes); a copy where no link can be made
    try:
        os.link(entry, target)
        if read_bytes(target) == data:
            return
        target.unlink()
    except OSError:
        pass
    target.write_bytes(data)

class RunDigests:
    """The sha256 of run files, so that a board rendered again does not read again every
    unchanged run file to check it against its results: the build's index of file digests
    (:mod:`statbench.storage.filedigests`: a file is found by its stat only where that provably
    identifies its content), with what the workers of a cold build hashed."""

    def __init__(self):
        self.index = file_digests("leaderboard")

    def sha256(self, path: Path) -> str:
        digest = self.index.sha256(path)
        if digest is None:
            raise FileNotFoundError(f"{path}: not a readable file")
        return digest

    def learn(self, found: dict[str, str]) -> None:
        """Digests taken elsewhere in this build (the workers of a cold build: :func:`prefill`)."""
        for key, digest in found.items():
            self.index.adopt(json.loads(key), digest)

    def save(self) -> None:
        self.index.save()
