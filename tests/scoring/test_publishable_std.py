"""The aggregate's std is checked against the splits' without ``statistics.stdev``'s exact
arithmetic when a float computation is certain by a wide margin (``publishable._std_surely_close``);
otherwise the exact std decides and is named in the problem. The verdict is always the exact one."""

from __future__ import annotations

import random
import statistics

import pytest

from statbench.leaderboard.sample import make_results
from statbench.scoring.publishable import TOLERANCE, _close, _std_surely_close, agreement_problems

SPLIT_SCORES = [0.31, 0.33, 0.29, 0.35, 0.30]


@pytest.mark.parametrize("values", [SPLIT_SCORES, [0.5, 0.5], [1, 0, 1], [1e6 + 1e-3, 1e6, 1e6 - 1e-3],
                                    [1e-300, 2e-300, 5e-324], [3.0, 3.0, 3.0]])
@pytest.mark.parametrize("offset", [0.0, 0.4, 0.9, 0.999, 1.001, 1.1, 2.0, -0.9, -1.1])
def test_the_verdict_is_the_exact_ones(values, offset):
    exact = statistics.stdev(values)
    for recorded in (exact + offset * TOLERANCE, exact * (1 + offset * TOLERANCE)):
        if _std_surely_close(recorded, values):
            assert _close(recorded, exact)


def test_a_recorded_std_as_the_runner_writes_it_needs_no_exact_arithmetic():
    assert _std_surely_close(statistics.stdev(SPLIT_SCORES), SPLIT_SCORES)


def test_figures_too_large_for_floats_are_left_to_the_exact_way():
    assert not _std_surely_close(1e308, [1.7e308, -1.7e308])
    assert not _std_surely_close(float("nan"), SPLIT_SCORES)
    assert not _std_surely_close(0.0, [10**400, 1])


def test_random_split_scores_never_pass_what_the_exact_std_refuses():
    rng = random.Random(36)
    for _ in range(20000):
        scale = 10 ** rng.uniform(-10, 10)
        values = [rng.uniform(0, 1) * scale for _ in range(rng.randint(2, 6))]
        exact = statistics.stdev(values)
        recorded = exact * (1 + rng.choice([0, 5e-10, 9.9e-10, 1.01e-9, -1.01e-9])) + rng.choice([0, 9.9e-10, 1.01e-9])
        if _std_surely_close(recorded, values):
            assert _close(recorded, exact), (values, recorded)


def test_a_wrong_std_is_named_with_the_exact_one():
    scores = {f"q{i}": {"R@5": v} for i, v in enumerate(SPLIT_SCORES)}
    obj = make_results(scores, measures=("R@5",), splits={f"s{i}": [f"q{i}"] for i in range(5)})
    assert agreement_problems(obj) == []
    obj["aggregate"]["R@5"]["std"] += 2e-9
    exact = statistics.stdev(SPLIT_SCORES)
    expected = f"aggregate/R@5/std: {exact + 2e-9!r} is not the std over the splits ({exact!r})"
    assert agreement_problems(obj) == [expected]
