"""Rank intervals by a paired bootstrap over queries, checked against the exact bootstrap
distribution enumerated by hand (4 queries: 4**4 = 256 equally likely resamples)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from statbench.errors import StatbenchError
from statbench.leaderboard.ranking.bootstrap_ranks import competition_ranks, rank_bounds, rank_intervals

# queries x systems: A >= B on every query, so A never ranks below B
SCORES = np.array([
    [1.0, 0.5, 0.0],
    [1.0, 0.5, 0.0],
    [0.5, 0.5, 0.0],
    [0.0, 0.0, 1.0],
])


def exact_rank_counts(scores) -> list[dict[int, int]]:
    """Each system's rank (min rule) counted over every one of the n**n resamples."""
    n, m = scores.shape
    counts = [{} for _ in range(m)]
    for idx in itertools.product(range(n), repeat=n):
        means = scores[list(idx)].mean(axis=0)
        for i in range(m):
            rank = 1 + sum(means[j] > means[i] for j in range(m))
            counts[i][rank] = counts[i].get(rank, 0) + 1
    return counts


def test_the_enumerated_distribution_is_the_one_written_by_hand():
    # A ranks 2 in the 43 resamples where C's mean beats A's; B ranks 1 only in the 5 where it
    # ties A on top (q3 alone, or q3 with q4 once...); C ranks 1 when q4 dominates the resample
    assert exact_rank_counts(SCORES) == [{1: 213, 2: 43}, {1: 5, 2: 195, 3: 56}, {1: 67, 3: 189}]


def test_rank_intervals_match_the_exact_percentiles():
    # 2.5% / 97.5% of the exact distribution: A {1: 83%, 2: 17%} -> 1-2; B {1: 1.95% (< 2.5%),
    # 2: 76%, 3: 22%} -> 2-3; C {1: 26%, 3: 74%} -> 1-3
    got = rank_intervals(SCORES)
    assert [r.text() for r in got] == ["1 (1\u20132)", "2 (2\u20133)", "3 (1\u20133)"]
    assert [r.mean for r in got] == [0.625, 0.375, 0.25]


def test_the_same_scores_give_the_same_intervals_and_the_seed_is_used():
    assert rank_intervals(SCORES, resamples=500) == rank_intervals(SCORES, resamples=500)
    # one resample: the interval is that resample's rank, whatever it is, and seeds differ
    outcomes = {tuple((r.low, r.high) for r in rank_intervals(SCORES, resamples=1, seed=s)) for s in range(30)}
    assert len(outcomes) > 1


def test_a_systems_interval_does_not_depend_on_the_column_order():
    flipped = rank_intervals(SCORES[:, ::-1])
    assert [r.text() for r in flipped[::-1]] == [r.text() for r in rank_intervals(SCORES)]


def test_two_identical_systems_tie_in_every_resample():
    scores = np.column_stack([SCORES, SCORES[:, 1]])  # D = B
    got = rank_intervals(scores)
    assert got[1] == got[3]
    assert got[1].rank == 2 and got[2].rank == 4  # min rule: A 1, B and D 2, C 4


def test_float_noise_is_a_tie():
    assert list(competition_ranks([0.05, 0.35 - 0.3, 0.7])) == [2, 2, 1]
    low, high = rank_bounds([0.5, 0.7, 0.7, 0.1])
    assert low.tolist() == [[3, 1, 1, 4]] and high.tolist() == [[3, 2, 2, 4]]


def test_a_system_above_on_every_query_is_never_ranked_below():
    scores = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3]])
    assert [r.text() for r in rank_intervals(scores)] == ["1 (1\u20131)", "2 (2\u20132)"]


@pytest.mark.parametrize("scores, words", [
    (np.zeros((0, 3)), "non-empty"),
    (np.zeros((3, 0)), "non-empty"),
    ([[0.1, float("nan")]], "non-finite"),
    ([[0.1, float("inf")]], "non-finite"),
    ([0.1, 0.2], "non-empty queries x systems"),
    ([["a", "b"]], "not numbers"),
])
def test_scores_that_cannot_be_ranked_are_refused_with_one_line(scores, words):
    with pytest.raises(StatbenchError, match=words):
        rank_intervals(scores)


def test_a_bad_level_or_resample_count_is_refused():
    with pytest.raises(StatbenchError, match="level"):
        rank_intervals(SCORES, level=1.0)
    with pytest.raises(StatbenchError, match="at least one resample"):
        rank_intervals(SCORES, resamples=0)
