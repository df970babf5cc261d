"""Fetch task files into a cache with checksum verification."""

from __future__ import annotations

import hashlib
import urllib.request
from pathlib import Path

from statbench.errors import DownloadError
from statbench.data.atomic import atomic_open


def fetch(url: str, dest: Path, sha256: str | None, timeout: float = 30) -> Path:
    """Download ``url`` to ``dest`` atomically; a checksum mismatch leaves nothing behind."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, atomic_open(dest, "wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
            if sha256 and digest.hexdigest() != sha256:
                raise DownloadError(
                    f"checksum mismatch for {url}: expected sha256 {sha256}, got {digest.hexdigest()}"
                )
    except DownloadError:
        raise
    except Exception as exc:  # network errors come in many types; all mean the same here
        raise DownloadError(f"could not download {url}: {exc}") from None
    return dest

