"""Content checksums used for provenance and cache keys."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def file_sha256(path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def files_sha256(paths) -> str:
    """One checksum over several files (name and content), independent of their directory."""
    digest = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        digest.update(path.name.encode())
        digest.update(file_sha256(path).encode())
    return digest.hexdigest()


def config_key(obj) -> str:
    """A short stable hash of a JSON-serialisable configuration."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
