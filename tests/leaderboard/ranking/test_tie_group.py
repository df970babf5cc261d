"""The top group: the rows the board's test (Wilcoxon, Holm over the tests against the best)
cannot separate from the best, with p-values computed by hand."""

from __future__ import annotations

import numpy as np
from scipy import stats

from statbench.leaderboard.ranking.tie_group import top_group

BEST = np.full(7, 0.8)
STEPS = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
SIGNS = np.array([-1, 1, -1, 1, -1, 1, -1])


def test_a_row_lower_on_every_query_is_separated_a_mixed_one_is_not():
    # B: 7 differences, all negative, distinct magnitudes: exact p = 2 / 2**7 = 0.015625
    # C: mixed signs, mean lower (-0.4 / 7); its exact p from scipy
    p_c = stats.wilcoxon(SIGNS * STEPS).pvalue
    assert p_c > 0.3
    scores = np.column_stack([BEST, BEST - STEPS, BEST + SIGNS * STEPS])
    group = top_group(scores)
    assert group.best == 0 and group.tests == 2
    # Holm, 2 tests: the smaller p times 2, the larger times 1 (never below the first)
    assert group.p_holm[0] is None
    assert group.p_holm[1] == 2 * 0.015625
    assert group.p_holm[2] == max(2 * 0.015625, p_c)
    assert group.members == (0, 2)


def test_holm_can_keep_a_row_in_the_group_that_one_test_would_separate():
    # 6 differences all negative: exact p = 2 / 64 = 0.03125 < 0.05, but x2 (Holm, 2 tests) = 0.0625
    best = np.full(6, 0.8)
    scores = np.column_stack([best, best - STEPS[:6], best - STEPS[:6] * 0.5])
    group = top_group(scores)
    assert group.p_holm[1] == group.p_holm[2] == 0.0625
    assert group.members == (0, 1, 2)


def test_the_best_is_the_top_mean_and_a_tie_for_best_is_in_the_group():
    # D has A's scores: p = 1, same mean: in the group; the best is the first column among equals
    scores = np.column_stack([BEST - STEPS, BEST, BEST])
    group = top_group(scores)
    assert group.best == 1
    assert group.p_holm[2] == 1.0
    assert group.members == (1, 2)


def test_one_system_is_its_own_group():
    group = top_group(np.array([[0.3], [0.4]]))
    assert group.members == (0,) and group.tests == 0 and group.p_holm == (None,)
