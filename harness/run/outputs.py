"""A run's output folder (run.trec, qrels.trec, results.json, run.log), replaced as a unit.

The files are written into a staging folder beside the target and swapped in with one
atomic exchange only once everything is scored and written: a failure or a kill at any
point leaves the previous outputs exactly as they were. The target is checked before
any work is done (writable, not a file, not a folder of other files), and staging
folders left by a killed run are removed by the next run on the same target.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterator

from statbench.contract.params import param_text
from statbench.data.atomic import exchange_dirs, fsync_dir, nearest_existing
from statbench.data.checksum import config_key
from statbench.errors import StatbenchError
from statbench.storage.paths import cache_root

#: The files a run writes; a target holding anything else is not a statbench output set.
OUTPUT_FILES = frozenset({"run.trec", "qrels.trec", "results.json", "run.log"})
_STAGING, _OLD = ".staging-", ".old-"


#: longest readable configuration name; a longer one is cut and identified by its hash
_MAX_NAME = 100


def config_folder_name(label: str, where: str | None = None, settings: Mapping[str, Any] | None = None, *,
                       identity: Any = None) -> str:
    """``LABEL[@WHERE][,KEY=VALUE...]`` as one file name: the folder of one configuration
    (``statbench run``'s default output folder, a grid cell's folder). Characters a file
    name should not hold become ``_``; when that changed anything, when a part holds a
    character the name uses to separate parts (``,`` in a value, ``@`` in the label,
    ``model=a,pooling=mean`` as one value is not two parameters), when ``identity`` (what
    the label alone does not say, e.g. that ``a+b`` is one model, not a model and a
    reranker) is given, or when the name is longer than 100 bytes, ``~`` and a short hash
    of the exact configuration are appended, so two configurations never share a folder
    (``model=/a/b`` and ``model=/a_b`` differ)."""
    settings = dict(settings or {})
    texts = {str(k): param_text(v) for k, v in settings.items()}  # as --param spells them
    exact = label + (f"@{where}" if where else "")
    if texts:
        exact += "," + ",".join(f"{k}={t}" for k, t in texts.items())
    name = "".join(c if c.isalnum() or c in "._+-=,@" else "_" for c in exact)
    ambiguous = (identity is not None or any(c in label for c in ",@=")
                 or any(c in (where or "") for c in "@=")
                 or any(c in k for k in texts for c in ",@=") or any("," in t or "@" in t for t in texts.values()))
    # "", "." and ".." are no folder of their own (a path component that names another folder)
    if name != exact or ambiguous or name in ("", ".", "..") or len(name.encode("utf-8")) > _MAX_NAME:
        # the hash is of the configuration as data: parts that print alike still differ
        key = config_key([label, where, [[str(k), _typed(v)] for k, v in settings.items()], identity])
        name = _cut(name, _MAX_NAME).rstrip(",") + "~" + key[:10]
    return name


def _typed(value: Any) -> Any:
    """A setting as JSON data keeps its type (``true`` and ``"true"`` differ)."""
    return value if isinstance(value, (bool, int, float, str, type(None))) else [type(value).__name__, str(value)]


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, never inside a character (a file
    name is limited in bytes: 100 CJK characters are 300)."""
    encoded = text.encode("utf-8")
    return text if len(encoded) <= limit else encoded[:limit].decode("utf-8", errors="ignore")


class OutputError(StatbenchError):
    """The output folder cannot be written or is not ours to replace."""


class OutputSet:
    def __init__(self, target: Path):
        self.target = Path(os.path.abspath(Path(target).expanduser()))

    def check(self) -> None:
        """Refuse, before any work, a target that could not be written or replaced."""
        target = self.target
        if Path.cwd().resolve().is_relative_to(target.resolve()):
            raise OutputError(f"--output {target}: is the current folder or one of its parents; give a folder "
                              "below it (it is replaced as a whole)")
        if target.is_symlink():
            raise OutputError(f"--output {target}: is a symbolic link; give the folder itself")
        if target.exists() and not target.is_dir():
            raise OutputError(f"--output {target}: exists and is not a folder")
        if target.is_dir():
            foreign = sorted(p.name for p in target.iterdir() if p.name not in OUTPUT_FILES)
            if foreign:
                raise OutputError(f"--output {target}: holds files a run does not write (e.g. {foreign[0]!r}); "
                                  "give an empty folder or a previous run's output folder")
        # probe the nearest existing folder above: nothing is created before the run has
        # written its outputs (a refused run leaves no folder, above --output either)
        parent = nearest_existing(target.parent)
        if not parent.is_dir():
            raise OutputError(f"--output {target}: {parent} is not a folder")
        try:
            probe = parent / f".{target.name}.probe-{uuid.uuid4().hex[:8]}"
            probe.mkdir()
            probe.rmdir()
        except OSError as exc:
            raise OutputError(f"--output {target}: cannot write in {parent} ({exc.strerror or exc})") from None

    @contextlib.contextmanager
    def staged(self) -> Iterator[Path]:
        """Yield an empty staging folder; on success it replaces the target atomically."""
        with self._lock():
            self.target.parent.mkdir(parents=True, exist_ok=True)  # only now: the outputs are ready
            self._recover()
            staging = self.target.with_name(f".{self.target.name}{_STAGING}{uuid.uuid4().hex[:12]}")
            staging.mkdir()
            try:
                yield staging
                fsync_dir(staging)
                self._swap_in(staging)
            finally:
                shutil.rmtree(staging, ignore_errors=True)

    def _swap_in(self, staging: Path) -> None:
        if not self.target.exists():
            os.rename(staging, self.target)
        elif not exchange_dirs(staging, self.target):
            # no atomic exchange on this file system: move the old set aside first; a kill
            # between the two renames is repaired by the next run (_recover)
            old = self.target.with_name(f".{self.target.name}{_OLD}{uuid.uuid4().hex[:12]}")
            os.rename(self.target, old)
            os.rename(staging, self.target)
            shutil.rmtree(old, ignore_errors=True)
        fsync_dir(self.target.parent)

    def _recover(self) -> None:
        """Undo what a killed run left: restore a set moved aside, drop stale staging."""
        parent, name = self.target.parent, self.target.name
        olds = sorted(parent.glob(f".{name}{_OLD}*"))
        if olds and not self.target.exists():
            os.rename(olds.pop(), self.target)
        for stale in [*olds, *parent.glob(f".{name}{_STAGING}*")]:
            shutil.rmtree(stale, ignore_errors=True)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """Runs writing the same target take turns (the lock file lives in the cache, so
        nothing is left beside the outputs)."""
        from filelock import FileLock

        locks = cache_root() / "locks"
        locks.mkdir(parents=True, exist_ok=True)
        with FileLock(str(locks / f"output-{config_key(str(self.target))}.lock")):
            yield
