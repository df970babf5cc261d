"""One writer at a time for a folder (a site, a submission): a lock kept in the cache, keyed
by the folder's real path, so nothing is left beside the folder; and the whole one-step
replacement of a folder under it (:mod:`statbench.data.atomic` has the steps)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from statbench.data.atomic import reclaim, replace_dir, staging_dir
from statbench.data.checksum import text_sha256
from statbench.errors import StatbenchError
from statbench.storage.paths import cache_root

#: how long :func:`folder_lock` waits for another run writing the same folder (seconds)
LOCK_TIMEOUT = 600.0


class FolderBusyError(StatbenchError):
    """Another run kept writing the same folder for longer than the lock's bound."""


@contextlib.contextmanager
def folder_lock(target, timeout: float = LOCK_TIMEOUT, on_wait: Callable[[str], None] | None = None,
                what: str = "another run") -> Iterator[None]:
    """Hold the lock of the folder ``target`` (one writer at a time). A second holder
    waits, after telling ``on_wait`` one line, up to ``timeout`` seconds, then raises
    :class:`FolderBusyError`. The lock file lives in the cache (``locks/``), keyed by the
    target's real path, so nothing is left beside the folder."""
    from filelock import FileLock, Timeout

    target = Path(target)
    where = Path(os.path.realpath(target.parent)) / target.name
    locks = cache_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(locks / f"folder-{text_sha256(str(where))[:32]}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_wait is not None:
            on_wait(f"{target}: {what} is writing it; waiting up to {timeout:g} s for it to finish")
        try:
            lock.acquire(timeout=timeout)
        except Timeout:
            raise FolderBusyError(f"{target}: {what} kept writing it for over {timeout:g} s; "
                                  "nothing was written (try again when it has finished)") from None
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def staged_dir(target, timeout: float = LOCK_TIMEOUT, on_wait: Callable[[str], None] | None = None,
               what: str = "another run") -> Iterator[Path]:
    """Lock ``target`` (:func:`folder_lock`), reclaim leftovers (:func:`reclaim`) and
    yield a new staging folder (:func:`staging_dir`); when the block ends without an
    exception the staging folder replaces ``target`` (:func:`replace_dir`), otherwise it
    is removed and ``target`` is untouched."""
    with folder_lock(target, timeout=timeout, on_wait=on_wait, what=what):
        reclaim(target)
        staging = staging_dir(target)
        try:
            yield staging
            replace_dir(staging, target)
        finally:
            if staging.exists() or staging.is_symlink():
                shutil.rmtree(staging, ignore_errors=True)
