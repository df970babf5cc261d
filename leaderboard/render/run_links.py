"""A row's run file linked from the site: found inside the results folder only, checked against
the results' checksum, gzipped into the site once per content."""

from __future__ import annotations

import functools
import os
import stat as stat_module
from pathlib import Path, PurePosixPath, PureWindowsPath

from statbench.data.checksum import bytes_sha256, file_sha256
from statbench.errors import StatbenchError
from statbench.leaderboard.caches.runcopies import plain_content, write_gzipped
from statbench.leaderboard.collect.rows import Row

#: what :func:`run_source` says of a run file that is simply absent (results published
#: without their run file: a note, not a warning)
NOT_FOUND = "not found"


@functools.lru_cache(maxsize=16)
def resolved_root(results_root: str) -> Path:
    """The results folder's real path, once per build (:func:`build_site` forgets it)."""
    return Path(results_root).resolve()


def _beside(results_file: Path, rel: str, results_root: Path) -> Path | None:
    """The run file the quick way, when it can be told without resolving paths: a plain
    file name (no folder, no ``..``) beside a results file found by walking the results
    folder (which follows no link to a folder, so every folder it found is inside it), and
    a regular file, not a link (``rel``, else ``rel.gz``). None: any other case, which
    :func:`run_source` looks at the careful way (a tenth of a board's rendering at 3,000 rows)."""
    if "/" in rel or "\\" in rel or rel in (".", ".."):
        return None
    folder, root = os.path.dirname(os.fspath(results_file)), os.fspath(results_root)
    if not (folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)) or f"{os.sep}..{os.sep}" in folder + os.sep:
        return None
    for name in (rel, f"{rel}.gz"):
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            continue  # absent: the gzipped copy, if any
        return Path(path) if stat_module.S_ISREG(st.st_mode) else None
    return None


def run_source(row: Row, results_root: Path) -> tuple[Path | None, str | None]:
    """The run file a results file names (``run_file.path``, relative to the results file),
    or None and why not. Only a regular file inside the results folder being built is taken:
    no absolute path, nothing that leads (through ``..`` or a symbolic link) outside it."""
    rel = row.run_path or ""  # from the row's head when it has one: its record is not loaded
    field = f"(run_file.path of {row.path})"
    if not rel or "\x00" in rel:
        return None, f"run file {rel!r} is not a file name {field}: not linked"
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive \
            or rel.startswith(("/", "\\")):
        return None, (f"run file {rel!r} is an absolute path {field}; run files are only taken from inside "
                      f"the results folder: not copied")
    beside = _beside(row.path, rel, results_root)
    if beside is not None:
        return beside, None
    source = row.path.parent / rel
    if not source.exists() and (row.path.parent / f"{rel}.gz").is_file():
        source = row.path.parent / f"{rel}.gz"  # kept gzipped (a results repository): its content is the run
    root = resolved_root(str(results_root))
    try:
        resolved = source.resolve(strict=True)
    except (OSError, RuntimeError):
        return None, f"run file {source} {NOT_FOUND} {field}: not linked"
    if not resolved.is_relative_to(root):
        return None, (f"run file {rel!r} leads outside the results folder {results_root} (to {resolved}) {field}: "
                      f"not copied")
    if not resolved.is_file():
        return None, f"run file {source} not found (not a regular file) {field}: not linked"
    return resolved, None


def copy_run(row: Row, dest_root: Path, task_slug: str, results_root: Path, digests=None) -> str | None:
    """Gzip the run file into the site (fixed header: deterministic); None if it is
    outside the results folder, missing, or no longer matches the checksum in the results."""
    source, problem = run_source(row, results_root)
    run_path = row.run_path or ""
    if source is None:
        absent = problem.startswith(f"run file {row.path.parent / run_path} {NOT_FOUND} ")
        # results committed without their (large) run file: said once, not a warning per row
        (row.notes if absent else row.problems).append(problem)
        return None
    gzipped = source.name == f"{PurePosixPath(run_path).name}.gz"  # run_source's fallback
    try:
        content_sha256 = (bytes_sha256(plain_content(source, gzipped=True)) if gzipped
                          else file_sha256(source) if digests is None else digests.sha256(source))
    except StatbenchError as exc:  # a damaged or over-large gzip
        row.problems.append(f"{str(exc).splitlines()[0]}: not linked")
        return None
    if content_sha256 != row.run_sha256:
        row.problems.append(f"run file {row.path.parent / run_path} does not match the checksum "
                            f"in the results (run_file.sha256 of {row.path}): not linked")
        return None
    rel = f"runs/{task_slug}/{row.key}.trec.gz"
    target = dest_root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    write_gzipped(source, row.run_sha256, target, gzipped=gzipped)  # once per content (.runcopies)
    return rel
