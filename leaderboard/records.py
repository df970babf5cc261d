"""Validated results records kept between builds, so that a rebuild does not parse and check
again a results file it accepted before (reading and validating every file was ~95% of a
rebuild in which nothing changed: bench/results/leaderboard_scale.md).

An entry is keyed by the file's absolute path, its size, modification and change times and
inode (a file rewritten in any way gets a new change time), and the version of the code that
validated it (statbench's version, the results type and schema, the publishability checks).
Only records that passed every check are kept; a broken file is read, and reported, each time.
Each entry holds the sha256 of its payload and is verified on read: an entry that does not
verify is ignored (and replaced), never trusted. Entries live under
``$STATBENCH_CACHE/leaderboard-records/``; writes are atomic (a temporary file renamed)."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

_MAGIC = b"statbench-record 1\n"


@functools.cache
def _code_version() -> str:
    from statbench import __version__
    from statbench.results import jsonrecord, record
    from statbench.scoring import publishable

    digest = hashlib.sha256(__version__.encode())
    for module in (record, jsonrecord, publishable):
        digest.update(Path(module.__file__).read_bytes())
    schema = Path(record.__file__).parent.parent / "schemas" / "results.schema.json"
    if schema.is_file():
        digest.update(schema.read_bytes())
    return digest.hexdigest()


class RecordCache:
    """Validated :class:`~statbench.results.record.Results` by results file (see the module)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.hits = 0
        self.misses = 0

    @classmethod
    def default(cls) -> RecordCache:
        from statbench.storage.paths import cache_root

        return cls(cache_root() / "leaderboard-records")

    def entry(self, path: Path) -> RecordEntry:
        """The entry of this file as it is now (its state taken before it is read)."""
        return RecordEntry(self, Path(path))


def _state(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class RecordEntry:
    """One results file's entry: :meth:`get` the record validated from the file in the state
    it was in when the entry was made, :meth:`put` one (kept only if the file is still in that
    state, so a file changed while it was read is never cached under its new state)."""

    def __init__(self, cache: RecordCache, path: Path):
        self.cache, self.path, self.state = cache, path, _state(path)
        self.file = None
        if self.state is not None:
            name = hashlib.sha256("\0".join(map(str, (*self.state, _code_version()))).encode()).hexdigest()
            self.file = cache.root / name[:2] / f"{name}.pickle"

    def get(self):
        """The record, or None (no entry, or one that does not verify)."""
        try:
            data = self.file.read_bytes() if self.file is not None else None
        except OSError:
            data = None
        header_end = len(_MAGIC) + 65
        if not data or not data.startswith(_MAGIC) or len(data) < header_end:
            self.cache.misses += 1
            return None
        digest, payload = data[len(_MAGIC):header_end - 1].decode("ascii", "replace"), data[header_end:]
        if hashlib.sha256(payload).hexdigest() != digest:
            self.cache.misses += 1
            return None
        try:
            record = pickle.loads(payload)
        except Exception:  # noqa: BLE001 (an entry that does not load is not used)
            self.cache.misses += 1
            return None
        self.cache.hits += 1
        return record

    def put(self, record) -> None:
        """Keep a record that passed every check; a cache that cannot be written is no error."""
        if self.file is None or _state(self.path) != self.state:
            return
        payload = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        data = _MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, self.file)
        except OSError:
            return
