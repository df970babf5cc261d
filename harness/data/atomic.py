"""Atomic writes: readers see the old file or folder or the new one, never half of one
and never none.

A folder (a built site, a submission) is replaced in one step: it is built in a staging
folder beside its target (:func:`staging_dir`) and put in place by :func:`replace_dir`,
while the target's lock (:func:`folder_lock`) is held; what a killed run left beside the
target is removed by the next run (:func:`reclaim`). :func:`staged_dir` does all four.

Leftovers are named ``.NAME.KIND-PID-HEX`` (``KIND``: ``staging``, ``old``, ``v``,
``link``): the run's process id tells a dead run's leftovers from a live one's.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from statbench.data.checksum import text_sha256
from statbench.data.jsontext import json_text

#: a leftover whose process id is alive is still reclaimed once it is this old (seconds):
#: the id may have been reused by an unrelated process
LEFTOVER_AGE = 24 * 3600.0
#: a test hook: ``POINT:FILE`` makes a run that reaches ``POINT`` of :func:`replace_dir`
#: (``replace``: the staging folder complete; ``replaced``: exchanged, the old tree not yet
#: removed; ``relink``: a plain folder moved aside, its link not yet in place) create
#: ``FILE`` and wait there until ``FILE`` is removed (at most 2 minutes): a test kills it
#: at that instant, or lets it go on
PAUSE_ENV = "STATBENCH_TEST_PAUSE_AT"


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
    """``obj`` as ``json.dump(indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)``
    writes it, and a final line break (:func:`statbench.data.jsontext.json_text`)."""
    text = json_text(obj)
    with atomic_open(path, "w") as handle:
        handle.write(text)
        handle.write("\n")


def nearest_existing(path) -> Path:
    """``path`` or its nearest folder above that exists (a dangling link counts as there):
    what a command checks before it creates anything below it."""
    path = Path(path)
    while not path.exists() and not path.is_symlink() and path != path.parent:
        path = path.parent
    return path


def staging_dir(target) -> Path:
    """A new empty folder beside ``target`` (same file system, so it can be renamed into
    place), named ``.NAME.staging-PID-HEX`` so :func:`reclaim` knows whose it is; readable
    by all (mode 0755 less the umask), as a published folder is."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = _leftover_name(target, "staging")
    staging.mkdir(mode=0o755)
    return staging


def replace_dir(staging, target) -> None:
    """Put the complete folder ``staging`` at ``target`` in one atomic step: a reader
    (or a kill at any instant) finds the old ``target`` whole or the new one whole, never
    neither. The old folder is removed afterwards.

    How: an absent ``target`` is one rename. An existing one is exchanged with ``staging``
    by Linux ``renameat2(RENAME_EXCHANGE)`` (macOS: ``renamex_np(RENAME_SWAP)``), then the
    old tree, now at the staging name, is removed. Where the file system cannot exchange,
    ``target`` becomes a symbolic link to a sibling ``.NAME.v-PID-HEX`` folder and each
    replacement is one rename of a new link over it; the first time, when ``target`` is
    still a plain folder, that folder is renamed aside (``.NAME.old-PID-HEX``) just before
    the link takes its place: a kill between the two leaves it there, and the next run's
    :func:`reclaim` puts it back."""
    staging, target = Path(staging), Path(target)
    _pause_at("replace")
    if target.is_symlink():
        _relink(staging, target)
    elif not target.exists():
        os.rename(staging, target)
    elif exchange_dirs(staging, target):
        _pause_at("replaced")
        shutil.rmtree(staging, ignore_errors=True)  # the old tree, now under the staging name
    else:
        _relink(staging, target)
    fsync_dir(target.parent)


def reclaim(target, max_age: float = LEFTOVER_AGE) -> list[Path]:
    """Remove what runs that are over left beside ``target`` (staging folders, old trees,
    unused versions and links); returns what was removed. A leftover is a dead run's when
    its process id is not alive on this machine, or when it is older than ``max_age``
    seconds (names without a process id, from earlier versions, go by age alone). A
    moved-aside old folder whose target is missing is put back, not removed. Call it while
    holding :func:`folder_lock`, so that no live run of the same target is writing."""
    target = Path(target)
    parent = target.parent
    if not parent.is_dir():
        return []
    prefix = f".{target.name}."
    found: list[tuple[str, Path, bool]] = []
    for entry in parent.iterdir():
        if not entry.name.startswith(prefix):
            continue
        match = _LEFTOVER.fullmatch(entry.name[len(prefix):])
        if match is None:
            continue
        kind = match.group("kind") or ("old" if match.group("legacy_old") else "staging")
        found.append((kind, entry, _over(entry, match.group("pid"), max_age)))
    live_version = None
    if target.is_symlink():
        live_version = parent / os.readlink(target)
    elif not target.exists():
        olds = sorted((e for kind, e, over in found if kind == "old" and over), key=_mtime)
        if olds:  # a kill between the two renames of a first relink: the old folder goes back
            os.rename(olds[-1], target)
            found = [f for f in found if f[1] != olds[-1]]
    removed = []
    for _kind, entry, over in found:
        if not over or entry == live_version:
            continue
        if entry.is_symlink() or not entry.is_dir():
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
        else:
            shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


_LEFTOVER = re.compile(r"(?:(?P<kind>staging|old|v|link)-(?:(?P<pid>\d+)-)?[0-9a-f]{8,32}"
                       r"|[A-Za-z0-9_]{8}\.tmp(?P<legacy_old>\.old)?)")


def _pause_at(point: str) -> None:
    """The test hook of :data:`PAUSE_ENV` (one lookup of the environment otherwise)."""
    value = os.environ.get(PAUSE_ENV)
    if value and value.partition(":")[0] == point:
        signal = Path(value.partition(":")[2])
        signal.touch()
        deadline = time.monotonic() + 120
        while signal.exists() and time.monotonic() < deadline:
            time.sleep(0.02)


def _leftover_name(target: Path, kind: str) -> Path:
    return target.with_name(f".{target.name}.{kind}-{os.getpid()}-{uuid.uuid4().hex[:12]}")


def _over(entry: Path, pid: str | None, max_age: float) -> bool:
    """Whether the run that made ``entry`` is over (see :func:`reclaim`)."""
    if time.time() - _mtime(entry) > max_age:
        return True
    if pid is None:
        return False
    return not _alive(int(pid))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":
        return True  # no harmless probe (os.kill would end it): left to the age rule
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    return True


def _mtime(entry: Path) -> float:
    try:
        return entry.lstat().st_mtime
    except FileNotFoundError:
        return time.time()


def _digest(text: str) -> str:
    return text_sha256(text)[:32]


def _relink(staging: Path, target: Path) -> None:
    """The fallback of :func:`replace_dir`: ``target`` a link to a versioned sibling."""
    version = _leftover_name(target, "v")
    os.rename(staging, version)
    link = _leftover_name(target, "link")
    os.symlink(version.name, link)
    try:
        if target.is_symlink():
            previous = target.parent / os.readlink(target)
            os.replace(link, target)
            if previous.name.startswith(f".{target.name}.v-") and previous.parent == target.parent:
                shutil.rmtree(previous, ignore_errors=True)
        else:
            old = _leftover_name(target, "old")
            os.rename(target, old)
            _pause_at("relink")
            os.replace(link, target)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        raise


def exchange_dirs(a: Path, b: Path) -> bool:
    """Atomically swap two existing paths (Linux ``renameat2(RENAME_EXCHANGE)``, macOS
    ``renamex_np(RENAME_SWAP)``). False when the platform or file system cannot: the
    caller falls back (see :func:`replace_dir`)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if sys.platform == "darwin":
            call, flag, unsupported = libc.renamex_np, 2, (22, 45, 78)  # EINVAL, ENOTSUP, ENOSYS
            call.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
            args = (os.fsencode(a), os.fsencode(b), flag)
        else:
            call, flag, unsupported = libc.renameat2, 2, (22, 38, 95)  # EINVAL, ENOSYS, EOPNOTSUPP
            call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            args = (-100, os.fsencode(a), -100, os.fsencode(b), flag)  # AT_FDCWD
    except (OSError, AttributeError):
        return False
    if call(*args) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in unsupported:
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
