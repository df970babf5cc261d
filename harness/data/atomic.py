"""Atomic file writes: readers see the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", encoding: str | None = "utf-8"):
    """Open a temporary file beside ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fchmod(handle.fileno(), 0o666 & ~_umask())  # mkstemp makes 0600; published files are not private
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path, text: str) -> None:
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_json(path, obj) -> None:
    with atomic_open(path, "w") as handle:
        json.dump(obj, handle, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False)
        handle.write("\n")


def exchange_dirs(a: Path, b: Path) -> bool:
    """Atomically swap two existing paths (Linux ``renameat2(RENAME_EXCHANGE)``).
    False when the platform or file system cannot: the caller falls back to renames."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
        return False
    raise OSError(errno, os.strerror(errno), str(b))


def fsync_dir(path) -> None:
    """Make a rename inside ``path`` durable."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
