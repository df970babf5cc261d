"""What was checked of a board row, in words: one of three levels (issue 34).

- **reproduced**: ``statbench leaderboard reproduce`` re-ran the row's recorded command from
  its declared source on the same data and got its run file back byte for byte (or, for a
  model that declares itself non-deterministic, every per-query figure within the tolerance
  it declares), and this build re-scored every figure from that run file;
- **re-scored**: this build re-scored every figure from the row's run file against the task's
  judgements on the same data version (``leaderboard build --verify``), and checked the claims
  the verifier lists; whether the run came from the configuration it declares is not checked;
- **self-reported**: the figures as the results file gives them; nothing re-computed.

A row is never shown at a level higher than what was done: a reproduction verdict counts only
in a build that also re-scored the row (without ``--verify`` every row is self-reported), and
only a verdict on the very files the row is read from (the reader of verdicts checks that).
Whatever the level, the model card, hardware, timings and costs are the submitter's word."""

from __future__ import annotations

from dataclasses import dataclass

REPRODUCED, RESCORED, SELF_REPORTED = "reproduced", "re-scored", "self-reported"
#: highest first
LEVELS = (REPRODUCED, RESCORED, SELF_REPORTED)

#: what each level checked and what it did not, for the boards' legend, the exports and the docs
MEANING = {
    REPRODUCED: ("re-run by `statbench leaderboard reproduce` from its declared source on the same data: the run "
                 "file came back byte for byte (or within the per-query tolerance a non-deterministic model "
                 "declares), and every figure re-scored from it"),
    RESCORED: ("every figure re-scored from its run file against the task's judgements on the same data "
               "version (`leaderboard build --verify`); not re-run, so that the run came from the configuration "
               "it declares is not checked"),
    SELF_REPORTED: "the figures as its results file gives them: nothing re-computed",
}
#: true of every level
DECLARED = ("the model card (authors, licence, training data, test queries seen), hardware, timings and costs "
            "are the submitter's word, shown as declared, not checked")


@dataclass(frozen=True)
class Level:
    """A row's level and the one line that says what it rests on (the badge's tooltip)."""

    name: str
    title: str

    @property
    def rank(self) -> int:
        """0 for the highest level."""
        return LEVELS.index(self.name)


def level_of(verification, reproduction) -> Level:
    """The level of a row from what this build's verifier found (``verification``: None
    without ``--verify``) and the reproduction verdict recorded for its submission
    (``reproduction``: None when there is none for these files, else an object with
    ``status`` and ``title``: :class:`~statbench.leaderboard.reproduce.submissions.Verdict`)."""
    rescored = verification is not None and verification.status == "verified"
    reproduced = reproduction is not None and reproduction.status == "reproduced"
    if rescored and reproduced:
        return Level(REPRODUCED, f"{reproduction.title}; {_rescored_words(verification)}")
    if rescored:
        why_not = "" if reproduction is None else f"; not reproduced: {reproduction.title}"
        return Level(RESCORED, _rescored_words(verification) + why_not)
    if verification is None:
        words = "this site was built without --verify: its figures are shown as its results file gives them"
        if reproduced:
            words += " (a reproduction verdict is recorded, but only a build with --verify shows it)"
        return Level(SELF_REPORTED, words)
    return Level(SELF_REPORTED, f"not re-scored: {verification.reason or verification.status}")


def _rescored_words(verification) -> str:
    checked = getattr(verification, "checked", None) or ()
    declared = getattr(verification, "declared", None) or ()
    what = f" ({', '.join(checked)})" if checked else ""
    said = f"; declared: {', '.join(declared)}" if declared else ""
    return (f"re-scored from its run file on {verification.verified_on or '?'} by statbench "
            f"{verification.statbench_version or '?'}: every figure agrees{what}{said}")
