"""Files identified by their content: the sha256 of a file, found again between runs by
its stat only where that stat provably changes whenever the content does.

A file's stat (size, modification time) is no proof of its content: a writer can set the
modification time back (``os.utime``), and two writes within one tick of the file system's
clock leave even the change time (``ctime``) as it was. What is provable (git's "racily
clean" rule): the kernel sets ``ctime`` to the current time on every write and on every
``utime``, and nothing a user runs can set it back. So when a file's content was hashed at
time ``T`` and its ``ctime`` (and ``mtime``) were older than ``T`` by more than one tick of
any file system's timestamps (:data:`MARGIN_NS`, covering FAT's 2 s), any later change of
its content gives it a newer ``ctime``: the same (device, inode, size, ``mtime``,
``ctime``) then means the same content. Only such entries are kept; a file changed within
the margin before it was hashed (a *racy* one) is hashed again each time it is asked for,
until it is old enough. What the rule assumes: the machine's clock does not go back, and
the file system keeps a real ``ctime`` on the machine's clock (FAT, which has none, and a
network file system with a skewed server clock do not).

:class:`FileDigests` holds one namespace of kept digests (a JSON file under
``$STATBENCH_CACHE/file-digests/``, verified on read; written atomically)."""

from __future__ import annotations

import json
import os
import stat as stat_module
import tempfile
import time
from pathlib import Path

from statbench.data.checksum import file_sha256, text_sha256
from statbench.storage.paths import CACHE_ENV, cache_root

#: how much older than the hashing a file's times must be for its stat to identify it
MARGIN_NS = 3_000_000_000
#: a store grown past this many entries keeps only those the saving run used
MAX_ENTRIES = 500_000
_MAGIC = "statbench-file-digests 1"


def _key(path: str, st: os.stat_result) -> tuple:
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def keepable(path, before: os.stat_result, after: os.stat_result, started_ns: int) -> tuple | None:
    """The key under which the digest of a file may be kept, read between the stats
    ``before`` and ``after`` by a process that started reading it at ``started_ns``
    (:func:`time.time_ns`): None when it changed meanwhile or is too recent (see the module)."""
    path = os.path.abspath(path)
    key = _key(path, before)
    if _key(path, after) != key or max(before.st_mtime_ns, before.st_ctime_ns) >= started_ns - MARGIN_NS:
        return None
    return key


class FileDigests:
    """sha256 of files' content by path (see the module). Not shared between processes
    while in use: a fork's additions are not saved (only its creator :meth:`save` s)."""

    def __init__(self, store: Path | None):
        self.store = store
        self._known: dict[tuple, str] | None = None
        self._added: dict[tuple, str] = {}
        self._used: set[tuple] = set()
        self._pid = os.getpid()
        self.hashed = 0  #: files hashed in this process (the others were found by their stat)

    def sha256(self, path) -> str | None:
        """The sha256 of the regular file at ``path`` as it is now (symbolic links followed);
        None when there is none (missing, unreadable, not a regular file)."""
        path = os.path.abspath(path)
        try:
            st = os.stat(path)
        except (OSError, ValueError):  # ValueError: a NUL in the name
            return None
        if not stat_module.S_ISREG(st.st_mode):
            return None
        key = _key(path, st)
        found = self._added.get(key) or self._load().get(key)
        if found is not None:
            self._used.add(key)
            return found
        started = time.time_ns()
        try:
            digest = file_sha256(path)
            after = os.stat(path)
        except (OSError, ValueError):
            return None
        self.hashed += 1
        kept = keepable(path, st, after, started)
        if kept is not None:
            self._added[kept] = digest
        return digest

    def known(self, path) -> tuple[str, tuple] | None:
        """(sha256, key) of the file at ``path`` when its stat finds a kept digest, without
        reading it; None otherwise (then :meth:`sha256` hashes it). The key is what
        :meth:`adopt` takes in another process."""
        path = os.path.abspath(path)
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        key = _key(path, st)
        found = self._added.get(key) or self._load().get(key)
        if found is None:
            return None
        self._used.add(key)
        return found, key

    def adopt(self, key, digest: str) -> None:
        """A digest another process took, under the key :func:`keepable` gave it."""
        if isinstance(key, (list, tuple)) and len(key) == 6 and isinstance(digest, str):
            self._added[tuple(key)] = digest

    def _load(self) -> dict[tuple, str]:
        if self._known is None:
            self._known = {}
            if self.store is not None:
                self._known = _read(self.store)
        return self._known

    def save(self) -> None:
        """Keep what this process learnt, merged with the store as it is now (another run's
        entries are kept)."""
        if self.store is None or not self._added or os.getpid() != self._pid:
            return
        merged = _read(self.store)
        merged.update(self._added)
        if len(merged) > MAX_ENTRIES:  # files long gone: only what this run used or added
            merged = {k: v for k, v in merged.items() if k in self._used or k in self._added}
        payload = json.dumps([[*key, digest] for key, digest in merged.items()], separators=(",", ":"))
        text = f"{_MAGIC}\n{text_sha256(payload)}\n{payload}"
        try:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.store.parent, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self.store)
        except OSError:
            return  # a cache that cannot be written: the files are hashed again next time
        self._known = merged
        self._added = {}


def _read(store: Path) -> dict[tuple, str]:
    """The kept digests of a store file that verifies, {} otherwise (never trusted blindly)."""
    try:
        text = store.read_text("utf-8")
        magic, digest, payload = text.split("\n", 2)
        if magic != _MAGIC or text_sha256(payload) != digest:
            return {}
        return {tuple(row[:6]): row[6] for row in json.loads(payload)
                if isinstance(row, list) and len(row) == 7 and isinstance(row[6], str)}
    except (OSError, ValueError, UnicodeDecodeError, TypeError):
        return {}


_shared: dict[tuple, FileDigests] = {}


def file_digests(namespace: str) -> FileDigests:
    """This process's :class:`FileDigests` of ``namespace`` (``leaderboard``, ``weights``),
    stored in the cache in use (one per ``$STATBENCH_CACHE``; a fork keeps its parent's and
    never saves it)."""
    where = (namespace, os.environ.get(CACHE_ENV), os.environ.get("XDG_CACHE_HOME"))  # what cache_root reads
    found = _shared.get(where)
    if found is None:
        found = _shared[where] = FileDigests(cache_root() / "file-digests" / f"{namespace}.json")
    return found
