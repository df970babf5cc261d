"""The reproduction file a row came from: ``statbench grid`` puts a copy of its experiment
file (``reproduction-NAME.yaml``) beside each cell's results in the leaderboard's input;
the site carries that copy and links the row to it, so a reader sees the expected figures
and tolerances the row was checked against."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from statbench.data.checksum import bytes_sha256

#: how a grid names the copy of its experiment file beside a cell's results.json
PREFIX = "reproduction-"
SUFFIX = ".yaml"


@dataclass(frozen=True)
class Reproduction:
    name: str  #: the experiment file's name (``lexical.yaml``)
    href: str  #: where the site holds its copy, relative to the site root


def link_name(experiment: Path) -> str:
    """The file name a grid gives the copy of ``experiment`` beside a cell's results."""
    return f"{PREFIX}{Path(experiment).stem}{SUFFIX}"


def copy_reproduction(results_file: Path, site_root: Path) -> tuple[Reproduction | None, str | None]:
    """Copy the reproduction file beside ``results_file`` (if any) into the site, named by
    its checksum so two experiments never overwrite each other. Returns the link, or a
    problem to report (several candidates, a link or a non-file): never a silent guess."""
    found = sorted(p for p in Path(results_file).parent.glob(f"{PREFIX}*{SUFFIX}"))
    if not found:
        return None, None
    if len(found) > 1:
        return None, f"{len(found)} reproduction files beside {results_file}: not linked"
    source = found[0]
    if source.is_symlink() or not source.is_file():
        return None, f"reproduction file {source} is not a regular file: not linked"
    data = source.read_bytes()
    name = source.name[len(PREFIX):]
    rel = f"reproductions/{bytes_sha256(data)[:12]}-{name}"
    target = site_root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return Reproduction(name=name, href=rel), None
