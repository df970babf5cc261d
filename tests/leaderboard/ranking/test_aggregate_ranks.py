"""Ranks across tasks for the overview: Borda count and mean rank, a missing task left out
(never a 0), with intervals from resampling each task's queries; values worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from statbench.errors import StatbenchError
from statbench.leaderboard.ranking.aggregate import TaskScores, aggregate_ranks, borda_points, mean_ranks

# z did not run t2
FIGURES = {"t1": {"x": 0.5, "y": 0.4, "z": 0.4}, "t2": {"x": 0.1, "y": 0.2}}


def test_borda_by_hand_with_a_missing_task_and_a_tie():
    # t1: x beats y and z (2); y and z tie (0.5 each). t2: y beats x (1), x 0. z: only t1
    assert borda_points(FIGURES) == {"x": 2.0, "y": 1.5, "z": 0.5}


def test_mean_rank_by_hand_over_the_tasks_run():
    # t1 ranks (min rule): x 1, y 2, z 2; t2: y 1, x 2; z's missing t2 is not a last place
    assert mean_ranks(FIGURES) == {"x": 1.5, "y": 1.5, "z": 2.0}


def constant(values, queries=3):
    """Per-query scores equal to the figure on every query: every resample gives the figure."""
    return np.tile(np.asarray(values, dtype=float), (queries, 1))


def test_aggregate_ranks_where_no_resample_can_change_anything():
    tasks = {
        "t1": TaskScores(("x", "y", "z"), constant([0.5, 0.4, 0.4])),
        "t2": TaskScores(("x", "y"), constant([0.1, 0.2], queries=5)),
    }
    got = aggregate_ranks(tasks, resamples=200)
    assert {n: (r.tasks, r.borda, r.borda_rank, r.borda_low, r.borda_high) for n, r in got.items()} == {
        "x": (2, 2.0, 1, 1, 1), "y": (2, 1.5, 2, 2, 2), "z": (1, 0.5, 3, 3, 3)}
    assert {n: (r.mean_rank, r.mean_rank_low, r.mean_rank_high, r.mean_rank_rank) for n, r in got.items()} == {
        "x": (1.5, 1.5, 1.5, 1), "y": (1.5, 1.5, 1.5, 1), "z": (2.0, 2.0, 2.0, 3)}


def test_intervals_follow_the_resampled_queries_of_each_task():
    # t1 has one query where y beats x and two where x beats y by less: a resample drawing the
    # first query more often flips them; t2 never flips (y above on every query)
    t1 = np.array([[0.0, 1.0], [0.6, 0.5], [0.6, 0.5]])
    t2 = np.array([[0.1, 0.9], [0.2, 0.8]])
    got = aggregate_ranks({"t1": TaskScores(("x", "y"), t1), "t2": TaskScores(("x", "y"), t2)}, resamples=2000)
    x, y = got["x"], got["y"]
    # observed: t1 means x 0.4 < y 0.667 -> y first on both tasks: y 2 points, x 0
    assert (x.borda, y.borda, x.mean_rank, y.mean_rank) == (0.0, 2.0, 2.0, 1.0)
    # x - y on t1's queries: -1, +0.1, +0.1: x is above in a resample iff it never draws the
    # first query, (2/3)**3 = 30% of them: then 1 point each, a tie at Borda rank 1
    assert (y.borda_rank, y.borda_low, y.borda_high) == (1, 1, 1)
    assert (x.borda_rank, x.borda_low, x.borda_high) == (2, 1, 2)
    assert (x.mean_rank_low, x.mean_rank_high) == (1.5, 2.0)


def test_resamples_of_a_task_do_not_depend_on_the_other_tasks():
    t1 = TaskScores(("x", "y"), np.array([[0.0, 1.0], [0.6, 0.5], [0.6, 0.5]]))
    alone = aggregate_ranks({"t1": t1}, resamples=300)
    with_other = aggregate_ranks({"t1": t1, "t0": TaskScores(("w",), constant([0.3]))}, resamples=300)
    assert (alone["x"].mean_rank_low, alone["x"].mean_rank_high) == (
        with_other["x"].mean_rank_low, with_other["x"].mean_rank_high)


@pytest.mark.parametrize("tasks, words", [
    ({}, "no task"),
    ({"t": TaskScores(("x", "x"), constant([0.1, 0.2]))}, "named twice"),
    ({"t": TaskScores(("x",), constant([0.1, 0.2]))}, "2 score columns for 1 systems"),
    ({"t": TaskScores(("x", "y"), [[0.1, float("nan")]])}, "non-finite"),
])
def test_what_cannot_be_ranked_is_refused(tasks, words):
    with pytest.raises(StatbenchError, match=words):
        aggregate_ranks(tasks, resamples=10)
