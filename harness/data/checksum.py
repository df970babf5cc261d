"""Content digests: the one sha256 of a file, of several files, of a text, of a sequence of
records and of a JSON value. Provenance (``TaskData.checksum``, the run file's sha256) and
every cache key (:mod:`statbench.storage.keys`) take their digests here."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path


def file_sha256(path, chunk_size: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read a chunk at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def files_sha256(paths) -> str:
    """One checksum over several files (name and content), independent of their directory."""
    return named_digests_sha256((Path(p).name, file_sha256(p)) for p in sorted(Path(p) for p in paths))


def named_digests_sha256(pairs: Iterable[tuple[str, str]]) -> str:
    """:func:`files_sha256` from ``(file name, its sha256)`` pairs already taken, in order."""
    digest = hashlib.sha256()
    for name, sha in pairs:
        digest.update(name.encode())
        digest.update(sha.encode())
    return digest.hexdigest()


def bytes_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_sha256(text: str) -> str:
    """sha256 of a text's UTF-8 bytes (lone surrogates kept, never an error)."""
    return bytes_sha256(text.encode("utf-8", "surrogatepass"))


def records_digest(records: Iterable[Iterable[str]]) -> str:
    """sha256 over a sequence of records, each a sequence of strings: fields joined by NUL,
    each record ended by \\x01 (so neither moving a boundary nor reordering goes unseen)."""
    digest = hashlib.sha256()
    for record in records:
        digest.update("\0".join(record).encode("utf-8", "surrogatepass"))
        digest.update(b"\1")
    return digest.hexdigest()


def canonical_json(value) -> str:
    """The one text of a JSON value that digests are taken of: keys sorted, non-ASCII kept,
    anything else JSON cannot hold written as ``str()``."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def json_sha256(value) -> str:
    """sha256 of :func:`canonical_json`."""
    return text_sha256(canonical_json(value))


def config_key(value) -> str:
    """A short stable hash of a JSON-serialisable configuration: the name of a cache entry's
    folder (the first 16 hex digits of :func:`json_sha256`; the entry's manifest holds the
    whole configuration and is checked on read, so two configurations never share an entry)."""
    return json_sha256(value)[:16]
