"""A gzipped run file's content, read whole, with a bound: a damaged file, or one that
decompresses to more than :data:`RATIO` times its size (a run file compresses ~3-4 times;
a "gzip bomb" of a few MB would be gigabytes), is one :class:`DataFormatError` line naming
it, never an ``EOFError`` or an exhausted memory."""

from __future__ import annotations

import zlib
from pathlib import Path

from statbench.data.checksum import chunks_sha256
from statbench.errors import DataFormatError

#: the most a run file may decompress to, as a multiple of its gzipped size
RATIO = 100
#: ... but always at least this many bytes (small files)
FLOOR = 64 * 1024 * 1024
_CHUNK = 1 << 20


def limit_for(size: int) -> int:
    """The most bytes a gzip file of ``size`` bytes may decompress to."""
    return max(FLOOR, RATIO * size)


def gunzip(data: bytes, path) -> bytes:
    """The content of the gzip file ``path`` whose bytes are ``data`` (every member)."""
    out = bytearray()
    for chunk in _members(data, path):
        out += chunk
    return bytes(out)


def gunzipped_sha256(path: Path) -> str:
    """sha256 of a gzip file's content, read in chunks (same bound and messages)."""
    return chunks_sha256(_members(Path(path).read_bytes(), path))


def _members(data: bytes, path):
    limit, produced, rest = limit_for(len(data)), 0, data
    try:
        while True:
            member = zlib.decompressobj(31)
            pending = rest
            while pending:
                chunk = member.decompress(pending, _CHUNK)
                produced += len(chunk)
                if produced > limit:
                    raise DataFormatError(path, f"decompresses to more than {limit:,} bytes ({RATIO} times its "
                                                "size): not a run file")
                yield chunk
                pending = member.unconsumed_tail
                if member.eof:
                    break
            if not member.eof:
                raise DataFormatError(path, "not a complete gzip file (it ends before its end-of-stream marker)")
            rest = member.unused_data
            if not rest.strip(b"\0"):  # trailing zero padding, as gzip's own reader allows
                return
    except zlib.error as exc:
        raise DataFormatError(path, f"not a complete gzip file ({exc})") from None
