"""Which rows reach the site: refused rows and a repository's rows that are not accepted
submissions left off, each kept row given its level, model card and code source."""

from __future__ import annotations

import os

from statbench.errors import StatbenchError
from statbench.leaderboard.collect.rows import Row
from statbench.leaderboard.render.cardview import card_file, card_view, read_card
from statbench.leaderboard.render.report import BuildReport
from statbench.leaderboard.repo.source import (
    SOURCE_FILE,
    read_source,
)
from statbench.leaderboard.repo.submission import Accepted, accepted_submission
from statbench.leaderboard.reproduce.verdicts import VerdictReader
from statbench.leaderboard.verify.levels import level_of
from statbench.storage.filedigests import file_digests


def admit_rows(tasks: dict[str, list[Row]], report: BuildReport) -> None:
    """A refused row (a figure its run file does not give) never reaches the site, whoever
    collected it, nor does a results repository's row that is not a submission its check
    accepts (a model card missing or unreadable leaves its declared training unknown): each
    is one problem line, and a board left empty is not written. Each row kept is given its
    level and its model card (:func:`annotate`)."""
    verdicts = VerdictReader(report.notes, digests=file_digests("leaderboard"))
    markers: dict[str, bool] = {}  # folder -> whether it holds a results repository's marker
    for name in list(tasks):
        kept = []
        for row in tasks[name]:
            verification = getattr(row, "verification", None)
            if verification is not None and verification.status == "refused":
                report.problems.append(f"{name}: refused {row.path}: {verification.reason}")
                report.refused.append(str(row.path))
            elif isinstance(accepted := accepted_submission(row.path, lambda: row.results, markers), str):
                report.problems.append(f"{name}: left off {row.path}: not a submission 'leaderboard check' accepts: "
                                       f"{accepted}")
                report.not_submissions.append(str(row.path))
            else:
                annotate(row, verdicts, accepted)
                kept.append(row)
        if kept:
            tasks[name] = kept
        else:
            del tasks[name]


def annotate(row: Row, verdicts: VerdictReader, accepted: Accepted | None) -> None:
    """A row's level (what this build checked, with the reproduction verdict recorded for
    its files), its model card (a submission's, shown as declared) and its code's source (a
    submission's ``source.json``; a string: why it did not read): all part of what its view
    is made of (.rowviews, .incremental). ``accepted``: a repository's submission, its card
    and source as its check read them (not read again); None: a results file elsewhere."""
    row.level = level_of(getattr(row, "verification", None), verdicts.of(row.path))
    if accepted is not None:
        row.source, row.card = accepted.source, card_view(accepted.card)
        return
    row.source = None
    if os.path.isfile(os.path.join(os.path.dirname(os.fspath(row.path)), SOURCE_FILE)):
        try:
            row.source = read_source(row.path.parent)
        except StatbenchError as exc:
            row.source = str(exc).splitlines()[0]
            row.problems.append(f"its source is not shown: {row.source}")
    row.card = None
    if card_file(row.path) is not None:
        row.card, problem = read_card(row.path, row.results)
        if problem:
            row.problems.append(problem)
