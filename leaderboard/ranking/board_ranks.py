"""A board's ranks: each ranked row's rank with its interval, and the top group.

The rows ranked are those with per-query scores on the board's tested measure, on the query
set most of them scored (:func:`.board_scores.main_query_set`), that did not declare seeing
test queries. Published figures (no per-query scores) and every other row get no rank — never
an invented one — with the reason kept in ``unranked``.

``RANK_RESAMPLES`` (1,000) resamples, not the 10,000 of the difference intervals: the
ranks are recomputed for the whole board whenever one row changes (a board's ranks depend on
every row), and 10,000 resamples of a 3,333-row board take ~7 s against ~0.8 s; a percentile
of integer ranks moves by at most a rank between the two.
"""

from __future__ import annotations

from dataclasses import dataclass

from statbench.leaderboard.caches.sigcache import PairCache
from statbench.leaderboard.ranking.board_scores import columns_by_query_set, main_query_set, query_set_words
from statbench.leaderboard.ranking.bootstrap_ranks import RankInterval, rank_intervals
from statbench.leaderboard.ranking.tie_group import top_group
from statbench.scoring.significance import ALPHA, BOOTSTRAP_SEED

RANK_RESAMPLES = 1_000
#: names the top group's kept tests apart from the board's other tests of a measure (and their version)
_TOP_GROUP = "\0top-group-wilcoxon-1"


@dataclass(frozen=True)
class BoardRanks:
    """The ranks of one board on its tested measure."""

    measure: str
    ranks: dict[str, RankInterval]  #: row key -> its rank
    top: frozenset[str]  #: the row keys of the top group
    best: str | None  #: the row key of the best (the top observed mean)
    unranked: dict[str, str]  #: row key -> why it has no rank
    resamples: int
    alpha: float
    tests: int  #: the tests against the best Holm corrected over
    queries: int  #: the queries the ranks are computed on


def rank_board(rows, measure: str, left_out: dict[str, str] | None = None, resamples: int = RANK_RESAMPLES,
               seed: int = BOOTSTRAP_SEED, alpha: float = ALPHA, scored=None, kept_tests: bool = False) -> BoardRanks:
    """The ranks of ``rows`` on ``measure``; ``left_out``: row key -> why it is out of the
    ranking whatever its scores (e.g. it saw test queries). ``scored``: row -> its (query ids,
    scores) on ``measure`` (e.g. :class:`statbench.leaderboard.caches.rankcolumns.RankColumns`),
    else read from each row. ``kept_tests``: the top group's tests against the best kept between
    builds by the two rows' per-query scores (:class:`~statbench.leaderboard.caches.sigcache.PairCache`):
    a board that gains rows tests only those."""
    left_out = dict(left_out or {})
    groups, unscored = columns_by_query_set([r for r in rows if r.key not in left_out], measure, scored=scored)
    unranked = dict(left_out)
    unranked.update({key: f"no per-query scores on {measure}" for key in unscored})
    main = main_query_set(groups)
    for group in groups.values():
        if group is not main:
            unranked.update({key: query_set_words(group, main) for key in group.keys})
    if main is None:
        return BoardRanks(measure, {}, frozenset(), None, unranked, resamples, alpha, 0, 0)
    matrix = main.matrix()
    intervals = rank_intervals(matrix, resamples, seed)
    digests = {row.key: row.queries_sha256 for row in rows} if kept_tests else None
    group = top_group(matrix, alpha, names=None if digests is None else [digests[key] for key in main.keys],
                      kept=None if digests is None else lambda best: PairCache.default(best, measure + _TOP_GROUP, 0, 0))
    return BoardRanks(
        measure=measure, ranks=dict(zip(main.keys, intervals)),
        top=frozenset(main.keys[i] for i in group.members), best=main.keys[group.best],
        unranked=unranked, resamples=resamples, alpha=alpha, tests=group.tests, queries=len(main.qids),
    )
