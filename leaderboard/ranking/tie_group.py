"""The top group of a board: the systems its significance test cannot separate from the best.

"The best" is the system with the top observed mean over the queries (the first column among
equal means). Every other system is tested against it with the board's test — the two-sided
Wilcoxon signed-rank test on the paired per-query differences, zero differences dropped
(:func:`statbench.leaderboard.ranking.significance.wilcoxon_rows`) — and the p-values are Holm-adjusted
together (one family: the systems - 1 tests against the best). A system is separated from the
best when its adjusted p is below alpha and its mean is lower; every other system, and any
with the same mean, belongs to the top group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from statbench.leaderboard.ranking.bootstrap_ranks import rank_bounds, score_matrix
from statbench.leaderboard.ranking.significance import wilcoxon_rows
from statbench.scoring.significance import ALPHA, holm


@dataclass(frozen=True)
class TopGroup:
    """Which columns of a score matrix cannot be told apart from the best."""

    best: int  #: the column with the top observed mean
    members: tuple[int, ...]  #: the columns in the top group, the best included, in column order
    p_holm: tuple[float | None, ...]  #: per column, Holm-adjusted p against the best (None: the best)
    alpha: float
    tests: int  #: how many tests Holm corrected over


def top_group(scores, alpha: float = ALPHA) -> TopGroup:
    """The top group of the systems (columns) of ``scores`` (queries x systems)."""
    matrix = score_matrix(scores)
    means = matrix.mean(axis=0)
    ranks, _ = rank_bounds(means, high=False)
    best = int(np.flatnonzero(ranks[0] == 1)[0])
    others = [j for j in range(matrix.shape[1]) if j != best]
    diffs = (matrix[:, others] - matrix[:, [best]]).T
    tested = wilcoxon_rows(diffs) if others else []
    adjusted = holm([p for _, p in tested]) if others else []
    p_holm: list[float | None] = [None] * matrix.shape[1]
    members = {best}
    for j, p in zip(others, adjusted):
        p_holm[j] = p
        if not (p < alpha and ranks[0][j] > 1):
            members.add(j)
    return TopGroup(best=best, members=tuple(sorted(members)), p_holm=tuple(p_holm), alpha=alpha,
                    tests=len(others))
