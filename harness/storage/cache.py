"""Cache entries that prove themselves on read.

Every cached artefact (a split's run, a tokenised corpus, an index, encodings, a
checkpoint) is one *entry*: a directory written in a staging folder beside it and renamed
into place only once complete, with a ``manifest.json`` that records the format version,
the configuration it was built from, and the size and sha256 of every file in it.

- **Read**: :meth:`CacheEntry.verify` re-hashes the files against the manifest. A missing,
  truncated, corrupted or foreign file makes the entry invalid: the reason is logged,
  recorded for the run's ``results.json`` (:func:`take_events`), and the entry is rebuilt.
  An entry with a ``check`` then has its content checked against its key, unless the
  writer's seal stands in for the costly part of that check (see :meth:`CacheEntry.verify`).
- **Write**: :meth:`CacheEntry.build` holds a cross-process lock (``filelock``) per entry,
  so two identical runs started together build it once: the second waits, then reuses it.
  Staging folders left by a killed process are removed under that lock. Nothing is synced
  to disk (a cold STARD run made ~50 ``fsync`` calls for its entries, ~0.3 s of waiting):
  every read hashes every file against the manifest, so an entry a crash left short, empty
  or without its manifest is found invalid and rebuilt, never used (the run's published
  outputs, :mod:`statbench.data.atomic`, are synced).

Use :func:`cached` for the common "load it, or build it under the lock" pattern.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from statbench.data.checksum import bytes_sha256, canonical_json, file_sha256, json_sha256
from statbench.errors import StatbenchError

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
#: the manifest field holding the writer's seal: ``{"by": CHECK NAME, "sha256": DIGEST}``
SEAL = "checked"
_STAGING = ".staging-"
_log = logging.getLogger("statbench")


class CacheChanged(StatbenchError):
    """A verified entry's file no longer matches its manifest when read."""


@dataclass(frozen=True)
class CacheEvent:
    """An entry found invalid and rebuilt (recorded in ``results.json``)."""

    entry: str
    reason: str

    def as_dict(self) -> dict:
        return {"entry": self.entry, "reason": self.reason}


_events: list[CacheEvent] = []


def take_events() -> list[CacheEvent]:
    """The invalid entries met since the last call (and forget them)."""
    events = list(_events)
    _events.clear()
    return events


#: the sha256 of one file (:func:`statbench.data.checksum.file_sha256` itself, under the name
#: this module has always documented)
sha256_file = file_sha256


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink())


class CacheEntry:
    """One cache entry: the directory ``path`` and its manifest.

    ``kind`` names the artefact ("run", "tokens", "index", ...); ``key`` is the
    JSON-serialisable configuration it was built from, stored in the manifest and checked
    on read, so an entry can never be taken for another configuration's."""

    def __init__(self, path: Path, kind: str, key: dict | None = None, required: tuple[str, ...] = (),
                 check: Callable[[CacheEntry], str | None] | None = None, seal: str | None = None,
                 keep: tuple[str, ...] = ()):
        self.path = Path(path)
        self.kind = kind
        self.key = key or {}
        #: files the entry must hold (a manifest listing fewer is not this kind's entry)
        self.required = tuple(required)
        #: once every file matches the manifest: whether the files hold what the key says
        #: (``None``) or why not (a manifest re-sealed over edited files proves nothing)
        self.check = check
        #: the name (and version) of ``check`` when this kind's writer produces, by
        #: construction, files that pass it: the entry is then sealed when written, and
        #: ``check`` learns from :attr:`sealed` whether the seal held (see :meth:`verify`)
        self.seal = seal
        #: files whose bytes :meth:`verify` keeps as it hashes them (:meth:`read_bytes` then
        #: gives those very bytes: read and hashed once)
        self.keep = tuple(keep)
        #: whether the last :meth:`verify` found this entry's files under its writer's seal
        self.sealed = False
        self._kept: dict[str, tuple[bytes, str]] = {}  # name -> (bytes, sha256) hashed by verify

    # --- reading -----------------------------------------------------------------------

    def file(self, name: str) -> Path:
        return self.path / name

    def verify(self) -> str | None:
        """``None`` when the entry is complete and intact, else why not ("missing" when absent).

        Every file must match the manifest's size and sha256, the manifest this entry's kind
        and key. Then ``check`` (when given) reads the content. An entry whose kind has a
        ``seal`` was sealed by its writer: a digest of the check's name, the kind, the key
        and every file's digest. When that seal holds, the files are exactly those the
        writer produced for this key, and ``check`` may skip what the writer guarantees
        (:attr:`sealed` tells it so). A seal by this check that does not hold (files edited
        and the manifest's digests re-written) makes the entry invalid; an entry with no seal,
        or one by another check (a harness of another version), is checked in full."""
        self.sealed = False
        self._kept = {}
        if not self.path.exists() and not self.path.is_symlink():
            return "missing"
        if self.path.is_symlink() or not self.path.is_dir():
            return "not a directory"
        manifest_path = self.path / MANIFEST
        try:
            manifest = json.loads(manifest_path.read_text("utf-8"))
        except FileNotFoundError:
            return "no manifest (an interrupted or foreign write)"
        except (OSError, ValueError) as exc:
            return f"unreadable manifest ({exc})"
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION:
            return "manifest of another format"
        if manifest.get("kind") != self.kind or manifest.get("key") != _jsonable(self.key):
            return "manifest of another configuration"
        recorded = manifest.get("files")
        if not isinstance(recorded, dict) or not all(
                isinstance(meta, dict) and isinstance(meta.get("size"), int) and isinstance(meta.get("sha256"), str)
                for meta in recorded.values()):
            return "manifest lists no files, or lists them in another shape"
        absent = [name for name in self.required if name not in recorded]
        if absent:
            return f"manifest does not list {absent[0]!r}"
        present = {p.relative_to(self.path).as_posix() for p in _files(self.path)} - {MANIFEST}
        extra = sorted(present - set(recorded))
        if extra:
            return f"unexpected file {extra[0]!r}"
        kept: dict[str, tuple[bytes, str]] = {}
        for name, meta in sorted(recorded.items()):
            path = self.path / name
            if path.is_symlink() or not path.is_file():
                return f"{name}: missing"
            size = path.stat().st_size
            if size != meta.get("size"):
                return f"{name}: {size} bytes, manifest records {meta.get('size')} (truncated or overwritten)"
            if name in self.keep:
                data = path.read_bytes()
                if len(data) != size or bytes_sha256(data) != meta.get("sha256"):
                    return f"{name}: sha256 differs from the manifest (corrupted)"
                kept[name] = (data, meta["sha256"])
            elif file_sha256(path) != meta.get("sha256"):
                return f"{name}: sha256 differs from the manifest (corrupted)"
        if self.seal is not None:
            seal = manifest.get(SEAL)
            if isinstance(seal, dict) and seal.get("by") == self.seal:
                if seal.get("sha256") != _seal_digest(self.seal, self.kind, self.key, recorded):
                    return "manifest re-sealed over other files than its writer's (the writer's seal does not match)"
                self.sealed = True
        self._kept = kept
        if self.check is not None:
            return self.check(self)
        return None

    def valid(self) -> bool:
        return self.verify() is None

    def recorded(self, name: str) -> dict | None:
        """The manifest's ``{"size", "sha256"}`` of file ``name`` (``None`` when not listed)."""
        try:
            manifest = json.loads((self.path / MANIFEST).read_text("utf-8"))
            meta = manifest["files"][name]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return meta if isinstance(meta, dict) else None

    def read_bytes(self, name: str) -> bytes:
        """File ``name``'s bytes, checked against the manifest as read (what is used is what
        was verified, even if the file changed after :meth:`verify`); ``CacheChanged`` otherwise.
        A file in :attr:`keep` gives the bytes the last successful :meth:`verify` hashed."""
        if name in self._kept:
            return self._kept[name][0]
        meta = self.recorded(name)
        try:
            data = (self.path / name).read_bytes()
        except OSError as exc:
            raise CacheChanged(f"cache entry {self.path}: {name} cannot be read ({exc.strerror or exc})") from None
        if meta is None or len(data) != meta.get("size") or bytes_sha256(data) != meta.get("sha256"):
            raise CacheChanged(f"cache entry {self.path}: {name} changed while it was read (another process "
                               "rebuilding it?); run the command again")
        return data

    def kept_sha256(self, name: str) -> str | None:
        """The sha256 of the bytes :meth:`read_bytes` gives for a kept file (``None`` when
        the last :meth:`verify` kept none under that name)."""
        kept = self._kept.get(name)
        return kept[1] if kept else None

    # --- writing -----------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Cross-process lock of this entry (a ``.NAME.lock`` file beside it)."""
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path.parent / f".{self.path.name}.lock")):
            yield

    @contextlib.contextmanager
    def build(self) -> Iterator[Path]:
        """Yield an empty staging folder; on success seal it with a manifest and move it
        into place (replacing an invalid entry). Call under :meth:`lock`."""
        self._remove_stale_staging()
        staging = self.path.with_name(f".{self.path.name}{_STAGING}{uuid.uuid4().hex[:12]}")
        staging.mkdir(parents=True)
        try:
            yield staging
            self._seal(staging)
            self.discard()
            os.replace(staging, self.path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def discard(self) -> None:
        """Remove the entry (call under :meth:`lock`)."""
        if self.path.is_symlink() or self.path.is_file():
            self.path.unlink()
        elif self.path.exists():
            shutil.rmtree(self.path)

    def invalid(self, reason: str) -> None:
        """Record that the entry was found invalid, and remove it (call under :meth:`lock`)."""
        event = CacheEvent(entry=str(self.path), reason=reason)
        _events.append(event)
        _log.warning("cache entry %s is invalid (%s): rebuilding it", self.path, reason)
        self.discard()

    def _seal(self, staging: Path) -> None:
        files = {}
        for path in _files(staging):
            if path.is_symlink():
                raise ValueError(f"cache entry {self.path}: {path.name} is a symbolic link; copy the file instead")
            files[path.relative_to(staging).as_posix()] = {"size": path.stat().st_size, "sha256": file_sha256(path)}
        manifest = {
            "format": FORMAT_VERSION,
            "kind": self.kind,
            "key": _jsonable(self.key),
            "files": files,
            "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        }
        if self.seal is not None:
            manifest[SEAL] = {"by": self.seal, "sha256": _seal_digest(self.seal, self.kind, self.key, files)}
        with open(staging / MANIFEST, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, ensure_ascii=False, indent=1, sort_keys=True)

    def _remove_stale_staging(self) -> None:
        """Staging folders are only made under the entry's lock, so any found while holding
        it belong to a process that died mid-write."""
        if not self.path.parent.is_dir():
            return
        for stale in self.path.parent.glob(f".{self.path.name}{_STAGING}*"):
            _log.info("removing %s, left by an interrupted write", stale)
            shutil.rmtree(stale, ignore_errors=True)


def cached(entry: CacheEntry, build: Callable[[Path], None]) -> Path:
    """The entry's folder, verified; built with ``build(staging_dir)`` under the entry's
    lock when missing or invalid (an invalid entry is recorded, then rebuilt)."""
    if entry.valid():
        return entry.path
    with entry.lock():
        reason = entry.verify()  # another process may have built it while we waited
        if reason is None:
            return entry.path
        if reason != "missing":
            entry.invalid(reason)
        with entry.build() as staging:
            build(staging)
    return entry.path


def _seal_digest(by: str, kind: str, key, files: dict) -> str:
    """The writer's seal: what is sealed (the check's name, the kind, the key, every file's
    size and sha256) as one digest; any edit of the files or the key leaves it stale."""
    return json_sha256({"by": by, "kind": kind, "key": _jsonable(key), "files": files})


def _jsonable(obj):
    """The key as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(canonical_json(obj))

