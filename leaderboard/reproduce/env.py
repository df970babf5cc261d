"""Isolated environments for ``leaderboard reproduce``: a fresh virtual environment per
source (the distributions a submission declares), where statbench is the running one and no
other third-party plugin is visible.

statbench is not on the package index, so a new environment cannot install it. Instead each
one reads a **base**: a folder of links to every top-level entry of this environment's
site-packages (statbench, its dependencies, whatever else is installed) *except* the files of
the distributions that register ``statbench`` plugins other than statbench itself (their
packages, editable-install hooks and metadata). The new environment's site-packages holds a
``.pth`` file that adds the base as a site folder, so statbench's built-ins register, its
dependencies import, and pip counts them as installed (the source's own requirements that
are missing are installed from the index, as a stranger's ``pip install`` would; pip never
uninstalls what the base holds: it is outside the environment). The source is installed by
this environment's pip (``pip --python ENV``), so the new environment needs no pip of its own.

Bases and environments are kept under the cache (``$STATBENCH_CACHE/reproduce``), named by
the digest of what they hold: an environment is made once per source and base, and one left
half-made (a kill) is made again. Whether the isolation holds is checked on each use, by
:mod:`.probe` (the plugins the environment sees)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path

from filelock import FileLock

from statbench.errors import StatbenchError
from statbench.leaderboard.repo.source import canonical_name

#: the marker of a complete base or environment (holds what it was made of)
COMPLETE = ".complete.json"
#: the file in an environment's site-packages that adds the base
BASE_PTH = "statbench-reproduce-base.pth"
#: environment variables never passed to a re-run or to pip: they would put the running
#: environment's packages on the isolated one's path, or spend money
DROPPED_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "CONDA_PREFIX",
                     "__PYVENV_LAUNCHER__", "STATBENCH_ALLOW_SPEND", "STATBENCH_LOAD_PLUGINS")
#: a half-made base older than this (seconds) is a killed run's, removed by the next
LEFTOVER_AGE = 3600
#: seconds pip may take to install a source
PIP_TIMEOUT = 1800
_PLUGIN_GROUP = "statbench"
_STATBENCH = "statbench"


class NotInstallable(StatbenchError):
    """The declared source could not be installed here; one line (pip's last error line)."""


@dataclass(frozen=True)
class IsolatedEnv:
    """A virtual environment holding one source over the base."""

    root: Path
    python: Path
    #: the pip requirements installed in it (empty for a run of statbench's built-ins only)
    requirements: tuple[str, ...]


def clean_environ(**extra: str) -> dict[str, str]:
    """This process's environment without what would leak packages or spend, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_VARIABLES}
    env.update(extra)
    return env


# --- the base -----------------------------------------------------------------------------------

def _site_folders() -> list[Path]:
    folders = [Path(p) for p in site.getsitepackages()]
    if site.ENABLE_USER_SITE and site.getusersitepackages():
        folders.append(Path(site.getusersitepackages()))
    seen, out = set(), []
    for folder in folders:
        if folder.is_dir() and folder.resolve() not in seen:
            seen.add(folder.resolve())
            out.append(folder)
    return out


@functools.cache
def base_entries() -> dict[str, Path]:
    """Top-level name -> path of everything the base links: this environment's site folders'
    entries less those of third-party statbench plugins (their metadata folder and what
    their RECORD lists; a folder holding files their RECORD does not list, e.g. a namespace
    package shared with another distribution, is kept). The first site folder holding a
    name wins, as on ``sys.path``. Read once per process."""
    entries: dict[str, Path] = {}
    for folder in _site_folders():
        excluded: set[str] = set()
        for dist in distributions(path=[str(folder)]):
            if not any(ep.group == _PLUGIN_GROUP for ep in dist.entry_points):
                continue
            if canonical_name(dist.metadata["Name"] or "") == _STATBENCH:
                continue
            excluded |= _owned(folder, dist)
        for path in sorted(folder.iterdir()):
            if path.name == "__pycache__" or path.name in entries or path.name in excluded:
                continue
            entries[path.name] = path
    return entries


def _owned(folder: Path, dist) -> set[str]:
    """The top-level names of ``folder`` that belong to ``dist`` alone: its metadata folder,
    its files, and its folders that hold nothing its RECORD does not list."""
    listed: set[str] = set()
    names: set[str] = set()
    metadata = getattr(dist, "_path", None)  # its .dist-info / .egg-info folder
    if metadata is not None:
        names.add(Path(metadata).name)
    for file in dist.files or ():
        parts = Path(str(file)).parts
        if parts and parts[0] not in ("..", "/") and not Path(str(file)).is_absolute():
            listed.add(Path(*parts).as_posix())
            names.add(parts[0])
    owned = set()
    for name in names:
        path = folder / name
        if path.is_dir() and not path.is_symlink() and name != (Path(metadata).name if metadata else None):
            others = [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                      and p.relative_to(folder).as_posix() not in listed]
            if others:
                continue
        owned.add(name)
    return owned


def ensure_base(cache: Path) -> Path:
    """The base for this environment (made once: its name is the digest of the interpreter
    and of what it links)."""
    entries = base_entries()
    described = {"python": os.path.realpath(sys.executable), "version": sys.version,
                 "entries": sorted((name, str(path)) for name, path in entries.items())}
    digest = hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:24]
    base = Path(cache) / f"base-{digest}"
    if (base / COMPLETE).is_file():
        return base
    base.parent.mkdir(parents=True, exist_ok=True)
    for leftover in base.parent.glob(".base-*"):  # a killed reproduce's half-made base
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > LEFTOVER_AGE:
                shutil.rmtree(leftover, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{base.name}.", dir=base.parent))
    try:
        for name, path in entries.items():
            (staging / name).symlink_to(path, target_is_directory=path.is_dir())
        (staging / COMPLETE).write_text(json.dumps(described, indent=1), encoding="utf-8")
        try:
            os.rename(staging, base)
        except OSError:  # made meanwhile by another reproduce (or a leftover): use a complete one
            if not (base / COMPLETE).is_file():
                shutil.rmtree(base, ignore_errors=True)
                os.rename(staging, base)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return base


# --- an environment ---------------------------------------------------------------------------

def _site_packages(root: Path) -> Path:
    return Path(sysconfig.get_path("purelib", scheme="venv", vars={"base": str(root), "platbase": str(root)}))


def _python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_env(cache: Path, key: dict, requirements: list[str], log=None) -> IsolatedEnv:
    """The environment holding ``requirements`` (pip arguments) over the base, made once
    per ``key`` (what is installed, by content: a stored wheel by its sha256, not its path)
    and base. :class:`NotInstallable` when pip cannot install them."""
    cache = Path(cache).resolve()  # the environment's .pth names the base by an absolute path
    base = ensure_base(cache)
    digest = hashlib.sha256(json.dumps({"base": base.name, "key": key}, sort_keys=True).encode()).hexdigest()[:24]
    root = cache / f"env-{digest}"
    with FileLock(str(cache / f"env-{digest}.lock")):
        if not (root / COMPLETE).is_file():
            shutil.rmtree(root, ignore_errors=True)  # a half-made one (killed)
            _make(root, base, requirements, log)
            (root / COMPLETE).write_text(json.dumps({"key": key, "requirements": requirements}, indent=1),
                                         encoding="utf-8")
    return IsolatedEnv(root=root, python=_python(root), requirements=tuple(requirements))


def _make(root: Path, base: Path, requirements: list[str], log) -> None:
    done = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], capture_output=True,
                          text=True, env=clean_environ(), check=False)
    if done.returncode != 0:
        raise StatbenchError(f"python -m venv {root} failed: {last_line(done.stderr) or done.returncode}")
    site_packages = _site_packages(root)
    site_packages.mkdir(parents=True, exist_ok=True)
    (site_packages / BASE_PTH).write_text(f"import site; site.addsitedir({str(base)!r})\n", encoding="utf-8")
    if not requirements:
        return
    if log is not None:
        log.info("installing %s into %s", " ".join(requirements), root)
    command = [sys.executable, "-m", "pip", "--python", str(_python(root)), "install", "--no-input",
               "--disable-pip-version-check", "--no-warn-script-location", "--progress-bar", "off", *requirements]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=clean_environ(), check=False,
                              timeout=PIP_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise NotInstallable(f"pip install took more than {PIP_TIMEOUT // 60} min") from None
    if done.returncode != 0:
        raise NotInstallable(pip_error(done.stderr + "\n" + done.stdout) or f"pip exit code {done.returncode}")


def last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def pip_error(text: str) -> str:
    """pip's last ``ERROR:`` line (its hints and notes follow it), else its last line."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    return (errors or lines or [""])[-1]
