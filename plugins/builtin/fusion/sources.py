"""Where fusion's inputs live and what they are (issue 33): an input is identified by its
content, never by how its path is spelled; each input's run file stays inside its folder;
and the output is kept apart from every input, so that no input is ever overwritten or
removed.

- :func:`run_file_inside` -- the run file a ``results.json`` names (``run_file.path``), only
  a plain relative name whose resolved path (links followed) is inside the output folder;
- :func:`check_output_apart` -- ``--output`` is not an input, not inside one, and holds none
  (paths resolved, links followed), checked before anything is read or written;
- :func:`rankings_digest` and :func:`check_distinct` -- two inputs whose rankings are the
  same (one folder named twice, a copy, a link, a re-tagged or gzipped copy, a parameter
  spelled at its default) are one input: refused, naming both."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath

from statbench.api import Ranking, StatbenchError, records_digest


def run_file_inside(folder: Path, name: str) -> Path:
    """``folder / name`` when ``name`` is a relative path that stays inside ``folder`` (no
    absolute path, drive, ``..``, NUL, or a link leading out of it); one line otherwise."""
    where = f"{folder}: its results.json names the run file {name!r}"
    if (not name or "\x00" in name or PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute()
            or PureWindowsPath(name).drive or name.startswith(("/", "\\"))
            or ".." in PurePosixPath(name.replace("\\", "/")).parts):
        raise StatbenchError(f"{where}, which is not a path inside that folder: not read")
    inside = Path(folder).resolve()
    path = Path(folder) / name
    for candidate in (path, path.with_name(path.name + ".gz")):
        if os.path.lexists(candidate) and not candidate.resolve().is_relative_to(inside):
            raise StatbenchError(f"{where}, a link to {candidate.resolve()} outside that folder: not read")
    return path


def check_output_apart(output: Path, sources: Sequence[Path]) -> None:
    """``output`` must not be an input, lie inside an input folder, or hold an input (it is
    replaced as a whole): one line naming the input, before anything is read or written."""
    target = Path(os.path.abspath(Path(output).expanduser())).resolve()
    for source in sources:
        if not os.path.lexists(source):
            continue  # read_component says it is missing
        resolved = Path(source).resolve()
        if target == resolved or resolved.is_relative_to(target):
            raise StatbenchError(f"--output {output}: is or holds the input {source}, which the fused output would "
                                 "replace; give another folder")
        if resolved.is_dir() and target.is_relative_to(resolved):
            raise StatbenchError(f"--output {output}: lies inside the input folder {source}, which is never "
                                 "written to; give a folder outside it")


def rankings_digest(rankings: Mapping[str, Ranking]) -> str:
    """The sha256 of what fusion reads of a run: every query's documents, in order, with
    their scores (a copy re-tagged, gzipped or printed with other spacing is the same)."""
    return records_digest((qid, doc, repr(float(score))) for qid in sorted(rankings) for doc, score in rankings[qid])


def check_distinct(labels: Sequence[str], digests: Sequence[str]) -> None:
    """Inputs with the same content are one run fused with itself: one line naming both."""
    seen: dict[str, str] = {}
    for label, digest in zip(labels, digests):
        if digest in seen:
            raise StatbenchError(f"fusion: {seen[digest]} and {label} are the same run (the same rankings, "
                                 f"sha256 {digest[:12]}): fusing a run with itself only reweights it; give "
                                 "distinct runs")
        seen[digest] = label
