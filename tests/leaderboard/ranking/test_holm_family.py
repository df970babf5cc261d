"""One Holm family over every test on a board: adjusted p-values against a step-down worked by
hand, and ▲/▼ per (row, measure)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from statbench.leaderboard.ranking.holm_family import board_family, measure_tests


def test_holm_over_every_test_matches_the_step_down_by_hand():
    tests = {("r1", "MRR@10"): (0.01, -0.1), ("r1", "R@100"): (0.04, 0.2),
             ("r2", "MRR@10"): (0.03, 0.05), ("r2", "R@100"): (0.005, 0.3)}
    # sorted p: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> kept at 0.06
    family = board_family(tests, ["MRR@10", "R@100"])
    assert family.tests == 4 and family.alpha == 0.05
    expected = {("r1", "MRR@10"): (0.03, -1), ("r1", "R@100"): (0.06, 0),
                ("r2", "MRR@10"): (0.06, 0), ("r2", "R@100"): (0.02, 1)}
    for key, (p_holm, direction) in expected.items():
        assert family.marks[key].p_holm == pytest.approx(p_holm, abs=1e-15)
        assert family.marks[key].direction == direction
        assert family.marks[key].p_value == tests[key][0]


def test_a_significant_p_with_no_mean_difference_marks_nothing():
    family = board_family({("r", "m"): (0.001, 0.0)}, ["m"])
    assert family.marks[("r", "m")].direction == 0


def test_measure_tests_are_the_boards_wilcoxon():
    rng = np.random.default_rng(3)
    base = rng.random(80)
    worse = base - rng.random(80) * 0.2
    got = measure_tests(base, {"worse": worse, "same": base.copy()})
    assert got["same"] == (1.0, 0.0)
    assert got["worse"][0] == stats.wilcoxon(worse - base).pvalue
    assert got["worse"][1] == pytest.approx(float((worse - base).mean()))
