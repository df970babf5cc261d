"""Content digests: the one sha256 of a file, of several files, of a text, of a sequence of
records and of a JSON value. Provenance (``TaskData.checksum``, the run file's sha256) and
every cache key (:mod:`statbench.storage.keys`) take their digests here."""

from __future__ import annotations

import hashlib
import json
import re
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


def chunks_sha256(chunks: Iterable[bytes]) -> str:
    """sha256 of the bytes ``chunks`` yield, in order (a stream digested as it is read)."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def bytes_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_sha256(text: str) -> str:
    """sha256 of a text's UTF-8 bytes (lone surrogates kept, never an error)."""
    return bytes_sha256(text.encode("utf-8", "surrogatepass"))


#: the characters a field must not hold as they are in :func:`records_digest`
_SEPARATORS = re.compile(r"[\x00-\x02]")
_ESCAPES = {"\0": "\2a", "\1": "\2b", "\2": "\2\2"}


def _field(text: str) -> str:
    """A field as :func:`records_digest` writes it: as it is, unless it holds a NUL, \\x01 or
    \\x02; then \\x02 and the field with each of those escaped (\\x02a, \\x02b, \\x02\\x02):
    a separator inside a field is never read as a boundary, and a field without one (all
    real data) digests as it always did."""
    if not _SEPARATORS.search(text):
        return text
    return "\2" + _SEPARATORS.sub(lambda m: _ESCAPES[m.group()], text)


def records_digest(records: Iterable[Iterable[str]]) -> str:
    """sha256 over a sequence of records, each a sequence of strings: fields joined by NUL,
    each record ended by \\x01 (so neither moving a boundary nor reordering goes unseen; a
    field holding one of those characters is escaped, :func:`_field`)."""
    digest = hashlib.sha256()
    lines: list[str] = []
    size = 0
    for record in records:
        fields = record if type(record) is tuple or type(record) is list else list(record)
        line = "\0".join(fields)
        # a field holding a separator shows as one NUL too many or as \x01/\x02: escape then
        if line.count("\0") != len(fields) - 1 or "\1" in line or "\2" in line:
            line = "\0".join(map(_field, fields))
        lines.append(line)
        size += len(line)
        if size >= _BATCH:
            digest.update(("\1".join(lines) + "\1").encode("utf-8", "surrogatepass"))
            lines.clear()
            size = 0
    if lines:
        digest.update(("\1".join(lines) + "\1").encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


#: characters of records hashed per ``update`` by :func:`records_digest` (the digest is the
#: same as record by record; batches only save calls)
_BATCH = 1 << 20


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
