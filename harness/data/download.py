"""Fetch task files into a cache with checksum verification, within one overall bound."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from statbench.data.atomic import atomic_open
from statbench.data.deadline import DeadlinePassed, bound_from_env, call_within
from statbench.errors import DownloadError

#: Seconds a whole download may take (connection, name lookup and every read included),
#: unless ``STATBENCH_DOWNLOAD_TIMEOUT`` says otherwise: the socket timeout bounds one read
#: only, and a server trickling a byte now and then would never hit it.
DOWNLOAD_TIMEOUT = 3600.0
TIMEOUT_ENV = "STATBENCH_DOWNLOAD_TIMEOUT"


class _Cancelled(Exception):
    """The caller stopped waiting: the abandoned download stops at its next chunk."""


def fetch(url: str, dest: Path, sha256: str | None, timeout: float = 30, bound: float | None = None) -> Path:
    """Download ``url`` to ``dest`` atomically; a checksum mismatch leaves nothing behind.
    ``timeout`` bounds each network read, ``bound`` (default: :func:`download_bound`) the
    whole download; past it, one :class:`DownloadError` naming the URL and the bound, and
    nothing is written."""
    bound = download_bound() if bound is None else bound
    cancelled = threading.Event()
    try:
        return call_within(bound, lambda: _download(url, Path(dest), sha256, timeout, cancelled), f"download of {url}")
    except DeadlinePassed:
        cancelled.set()
        raise DownloadError(f"could not download {url} within {bound:g} s (the server answered too slowly or stalled; "
                            f"{TIMEOUT_ENV}=SECONDS waits longer)") from None


def download_bound() -> float:
    """The overall bound on one download, in seconds (``STATBENCH_DOWNLOAD_TIMEOUT``)."""
    return bound_from_env(TIMEOUT_ENV, DOWNLOAD_TIMEOUT)


def _download(url: str, dest: Path, sha256: str | None, timeout: float, cancelled: threading.Event) -> Path:
    # urllib.request brings http.client, ssl and email (~15 ms): paid by a download, not by
    # every run that imports a task or a model
    import urllib.request

    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, atomic_open(dest, "wb") as out:
            while chunk := response.read(1 << 20):
                if cancelled.is_set():
                    raise _Cancelled
                digest.update(chunk)
                out.write(chunk)
            if cancelled.is_set():  # never placed once the caller has given up on it
                raise _Cancelled
            if sha256 and digest.hexdigest() != sha256:
                raise DownloadError(
                    f"checksum mismatch for {url}: expected sha256 {sha256}, got {digest.hexdigest()}"
                )
    except (DownloadError, _Cancelled):
        raise
    except Exception as exc:  # network errors come in many types; all mean the same here
        raise DownloadError(f"could not download {url}: {exc}") from None
    return dest
