"""What a build of the site says it did: the pages it wrote, the rows and boards, and every
problem and note (``--strict`` fails on the skipped, refused and left-off rows)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class BuildReport:
    out_dir: Path
    pages: list[Path] = field(default_factory=list)  #: every HTML file written, the index first
    rows: int = 0
    boards: int = 0  #: task tables (a board of many rows spans several pages)
    problems: list[str] = field(default_factory=list)  #: warnings: broken results, unlinked run files
    notes: list[str] = field(default_factory=list)  #: superseded results, files that are not results
    #: results files skipped as broken or inconsistent (``--strict`` fails on any, as ``check`` does)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  #: rows refused by ``--verify``
    #: rows of a results repository left off: not a submission ``leaderboard check`` accepts (``--strict`` fails)
    not_submissions: list[str] = field(default_factory=list)
    rendered: list[str] = field(default_factory=list)  #: boards rendered (the others kept the previous build's files)
