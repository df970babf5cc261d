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

from collections.abc import Sequence
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


def top_group(scores, alpha: float = ALPHA, names: Sequence[str] | None = None, kept=None) -> TopGroup:
    """The top group of the systems (columns) of ``scores`` (queries x systems). ``names``: per
    column, a digest naming its scores (e.g. ``Row.queries_sha256``), and ``kept``: the digest of
    the best column -> the tests against it kept between builds (a
    :class:`~statbench.leaderboard.caches.sigcache.PairCache`): only pairs not kept are tested (a
    test depends on its pair alone), and kept again."""
    matrix = score_matrix(scores)
    means = matrix.mean(axis=0)
    ranks, _ = rank_bounds(means, high=False)
    best = int(np.flatnonzero(ranks[0] == 1)[0])
    others = [j for j in range(matrix.shape[1]) if j != best]
    cache = kept(names[best]) if kept is not None and names is not None and others else None
    tested: list = [None] * len(others)
    if cache is not None:
        tested = [kept_test(cache.get(names[j])) for j in others]
    fresh = [i for i, found in enumerate(tested) if found is None]
    if fresh:
        diffs = (matrix[:, [others[i] for i in fresh]] - matrix[:, [best]]).T
        for i, found in zip(fresh, wilcoxon_rows(diffs)):
            tested[i] = found
            if cache is not None:
                cache.put(names[others[i]], ("tested", found))
    if cache is not None:
        cache.save()
    adjusted = holm([p for _, p in tested]) if others else []
    p_holm: list[float | None] = [None] * matrix.shape[1]
    members = {best}
    for j, p in zip(others, adjusted):
        p_holm[j] = p
        if not (p < alpha and ranks[0][j] > 1):
            members.add(j)
    return TopGroup(best=best, members=tuple(sorted(members)), p_holm=tuple(p_holm), alpha=alpha,
                    tests=len(others))


def kept_test(found) -> tuple[float | None, float] | None:
    """A kept test as :func:`wilcoxon_rows` gives it ((statistic or None, p)), or None when
    ``found`` is not one (absent, or of another shape: tested again, never used)."""
    if not (isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], str) and found[0] == "tested"):
        return None
    test = found[1]
    if not (isinstance(test, tuple) and len(test) == 2 and (test[0] is None or type(test[0]) is float)
            and type(test[1]) is float and 0.0 <= test[1] <= 1.0):
        return None
    return test
