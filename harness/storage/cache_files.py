"""Files a cache keeps for itself and never trusts: each holds a magic line (what it is, in
which format) and the sha256 of its payload, checked on every read; one that is absent,
damaged or of another format reads as nothing, and the caller rebuilds what it held.

Written atomically (a temporary file beside it, renamed over it) but without ``fsync``: a
cache file lost in a crash costs one rebuild, while a cold leaderboard build writes tens of
thousands of them (published files go through :mod:`statbench.data.atomic`, which syncs).
A write that fails (disk full, read-only cache) is reported by the return value, not raised:
the build goes on without keeping that file.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

from statbench.data.checksum import bytes_sha256, text_sha256
from statbench.storage.paths import cache_root

#: the sha256's hex digits and its newline, after the magic line
_DIGEST_LINE = 65


def keyed_cache_file(folder: str, *key: str, prefix: str = "") -> Path:
    """``$STATBENCH_CACHE/FOLDER/PREFIX<digest>.pkl``: the file a cache keeps for ``key`` (names joined
    by NUL, so no two keys share a file name by concatenation)."""
    return cache_root() / folder / f"{prefix}{text_sha256(chr(0).join(key))[:32]}.pkl"


def framed(magic: bytes, payload: bytes) -> bytes:
    """``payload`` behind ``magic`` and its sha256 (what :func:`unframed` checks)."""
    return magic + bytes_sha256(payload).encode() + b"\n" + payload


def unframed(magic: bytes, data: bytes | None) -> tuple[str, bytes] | None:
    """(sha256, payload) of framed ``data`` that verifies, else None (absent, another magic,
    cut short, or a payload that is not the one its digest names)."""
    header_end = len(magic) + _DIGEST_LINE
    if not data or not data.startswith(magic) or len(data) < header_end:
        return None
    digest, payload = data[len(magic):header_end - 1].decode("ascii", "replace"), data[header_end:]
    if bytes_sha256(payload) != digest:
        return None
    return digest, payload


def read_bytes(file: Path | None) -> bytes | None:
    """The file's bytes, None when there is no file to read (absent, unreadable, no path)."""
    try:
        return Path(file).read_bytes() if file is not None else None
    except OSError:
        return None


def write_bytes(file: Path, data: bytes) -> bool:
    """``data`` in place of ``file`` in one step (a temporary file renamed over it; no fsync:
    see the module); False when it could not be written, nothing left behind."""
    file = Path(file)
    tmp = None
    try:
        try:  # the folder is made only when it is missing (a cold build writes ~20,000 files)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".", suffix=".tmp")
        except FileNotFoundError:
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, file)
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
    return True


def read_framed(magic: bytes, file: Path | None) -> tuple[str, bytes] | None:
    """:func:`unframed` of the file's bytes."""
    return unframed(magic, read_bytes(file))


def write_framed(file: Path, magic: bytes, payload: bytes) -> bool:
    """:func:`write_bytes` of the framed payload."""
    return write_bytes(file, framed(magic, payload))


def read_pickled_dict(magic: bytes, file: Path | None) -> dict:
    """The dict pickled in a framed file that verifies, {} when there is none that can be
    used (absent, damaged, not loading, not a dict): a cache file is never trusted."""
    found = read_framed(magic, file)
    if found is None:
        return {}
    try:
        value = pickle.loads(found[1])
    except Exception:  # noqa: BLE001 (a file that does not load is not used)
        return {}
    return value if isinstance(value, dict) else {}
