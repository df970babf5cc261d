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
import os
from pathlib import Path

from statbench.leaderboard.records import _read, _write_atomic

#: level 1: ~2.5x faster than 6 on run files, ~15% larger
LEVEL = 1


def _root() -> Path:
    from statbench.storage.paths import cache_root

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
        key = state_key(source)
        content = source.read_bytes()
        if state_key(source) != key:
            return None
    except OSError:
        return None
    sha256 = record.run_file.sha256
    if hashlib.sha256(content).hexdigest() != sha256:
        return None
    root = _root() if root is None else Path(root)
    entry = root / sha256[:2] / f"{sha256}.gz"
    check = entry.with_suffix(".sha256")
    data, recorded = _read(entry), _read(check)
    if data is None or recorded is None or hashlib.sha256(data).hexdigest().encode() != recorded.strip():
        data = gzip_bytes(content)
        if _write_atomic(entry, data):
            _write_atomic(check, hashlib.sha256(data).hexdigest().encode() + b"\n")
    return key, sha256


def state_key(path: Path) -> str:
    """A run file's state as :class:`RunDigests` keys it."""
    import json
    import os

    st = os.stat(path)
    return json.dumps([os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])


def plain_content(path: Path, gzipped: bool = False) -> bytes:
    """A run file's content; ``gzipped``: the file is the gzip of the run results.json names
    (``run.trec.gz`` beside it, as a results repository keeps it and ``--verify`` reads it)."""
    data = Path(path).read_bytes()
    return gzip.decompress(data) if gzipped else data


def write_gzipped(source: Path, content_sha256: str, target: Path, root: Path | None = None,
                  gzipped: bool = False) -> None:
    """Write the gzip of ``source`` (whose content has sha256 ``content_sha256``) to ``target``,
    from the cache when it holds it."""
    root = _root() if root is None else Path(root)
    entry = root / content_sha256[:2] / f"{content_sha256}.gz"
    check = entry.with_suffix(".sha256")
    data, recorded = _read(entry), _read(check)
    if data is None or recorded is None or hashlib.sha256(data).hexdigest().encode() != recorded.strip():
        data = gzip_bytes(plain_content(source, gzipped))
        if _write_atomic(entry, data):
            _write_atomic(check, hashlib.sha256(data).hexdigest().encode() + b"\n")
    # the checked entry itself, hard-linked (no data written: the cache writes an entry anew,
    # never in place, so the link keeps these bytes); a copy where no link can be made
    try:
        os.link(entry, target)
        if _read(target) == data:
            return
        target.unlink()
    except OSError:
        pass
    target.write_bytes(data)


_DIGESTS_MAGIC = b"statbench-run-digests 1\n"


class RunDigests:
    """The sha256 of run files by their state (absolute path, device, inode, size,
    modification and change times: the record cache's rule), so that a board rendered again
    does not read again every unchanged run file to check it against its results. Kept in one
    file that verifies on read (else ignored); :meth:`save` writes it when it changed, keeping
    every file it knows (a run file that changed leaves a stale entry, never a wrong one)."""

    def __init__(self, root: Path | None = None):
        import json

        from statbench.leaderboard.records import _unframed

        self.file = (_root() if root is None else Path(root)) / "digests.json"
        found = _unframed(_DIGESTS_MAGIC, _read(self.file))
        known = {}
        if found is not None:
            try:
                known = json.loads(found[1])
            except ValueError:
                known = {}
        self.known = known if isinstance(known, dict) else {}
        self.on_file = dict(self.known)
        self.used: dict[str, str] = {}

    def sha256(self, path: Path) -> str:
        from statbench.data.checksum import file_sha256

        key = state_key(path)
        digest = self.known.get(key)
        if not isinstance(digest, str):
            digest = file_sha256(path)
            if state_key(path) != key:
                return digest  # changed while it was read: not kept
        self.used[key] = digest
        return digest

    def learn(self, found: dict[str, str]) -> None:
        """Digests taken elsewhere in this build (the workers of a cold build: :func:`prefill`)."""
        self.known.update(found)

    def save(self) -> None:
        import json

        from statbench.leaderboard.records import _framed

        kept = {**self.known, **self.used}
        if self.used and kept != self.on_file:
            payload = json.dumps(kept, sort_keys=True, separators=(",", ":")).encode()
            _write_atomic(self.file, _framed(_DIGESTS_MAGIC, payload))
