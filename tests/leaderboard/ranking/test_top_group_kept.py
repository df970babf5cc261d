"""The top group's tests kept between builds (tie_group.top_group with ``names`` and ``kept``):
the same group as testing every pair, only pairs not kept tested, and a kept test that is
damaged or of another shape tested again, never used."""

from __future__ import annotations

import numpy as np
import pytest

from statbench.leaderboard.caches.sigcache import PairCache
from statbench.leaderboard.ranking import tie_group
from statbench.leaderboard.ranking.tie_group import kept_test, top_group


def _scores(systems: int = 12, queries: int = 60, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.random(queries)
    skill = np.linspace(0.2, -0.2, systems)
    scores = np.clip(base[:, None] + skill[None, :] * rng.random((queries, systems)), 0, 1)
    scores[:, 5] = scores[:, 0]  # a copy of the best: p = 1, in the group
    scores[:8, 7] = scores[:8, 0]  # a few zero differences
    return np.round(scores, 2)  # tied |differences|


@pytest.fixture
def counted(monkeypatch):
    """The rows each call of the test saw (how many pairs were tested)."""
    seen: list[int] = []
    real = tie_group.wilcoxon_rows

    def counting(diffs):
        seen.append(len(diffs))
        return real(diffs)

    monkeypatch.setattr(tie_group, "wilcoxon_rows", counting)
    return seen


def _kept(root):
    return lambda best: PairCache(root, best, "R@100\0top", 0, 0)


def test_kept_tests_give_the_group_of_testing_every_pair(tmp_path, counted):
    scores = _scores()
    names = [f"sha-{j}" for j in range(scores.shape[1])]
    fresh = top_group(scores)
    assert counted == [scores.shape[1] - 1]
    # a board without its last 3 rows, then with them: only those 3 are tested
    top_group(scores[:, :-3], names=names[:-3], kept=_kept(tmp_path))
    counted.clear()
    again = top_group(scores, names=names, kept=_kept(tmp_path))
    assert counted == [3]
    assert again == fresh
    counted.clear()
    assert top_group(scores, names=names, kept=_kept(tmp_path)) == fresh
    assert counted == []  # nothing new: no test (and no scipy needed)


def test_a_new_best_tests_every_row_against_it(tmp_path, counted):
    scores = _scores()
    names = [f"sha-{j}" for j in range(scores.shape[1])]
    top_group(scores[:, 1:], names=names[1:], kept=_kept(tmp_path))
    counted.clear()
    assert top_group(scores, names=names, kept=_kept(tmp_path)) == top_group(scores)
    assert counted[0] == scores.shape[1] - 1  # every pair has the new best on one side


@pytest.mark.parametrize("damaged", [
    "not a tuple", ("tested",), ("untested", (1.0, 0.5)), ("tested", (1.0, 2.0)), ("tested", (1.0, -0.1)),
    ("tested", ("1", 0.5)), ("tested", (1.0, np.float64(0.5))), ("tested", (1.0, float("nan"))),
    ("tested", (1.0, 0.5, 0.1)), (np.array(["tested", "x"]), (1.0, 0.5)),
])
def test_a_kept_test_of_another_shape_is_tested_again(tmp_path, counted, damaged):
    scores = _scores()
    names = [f"sha-{j}" for j in range(scores.shape[1])]
    fresh = top_group(scores)
    top_group(scores, names=names, kept=_kept(tmp_path))
    best_name = names[fresh.best]
    cache = PairCache(tmp_path, best_name, "R@100\0top", 0, 0)
    victim = names[3]
    assert kept_test(cache.kept[victim]) is not None
    cache.kept[victim] = damaged
    cache.used, cache.added = dict(cache.kept), True
    cache.save()
    counted.clear()
    assert top_group(scores, names=names, kept=_kept(tmp_path)) == fresh
    assert counted == [1]
    assert kept_test(PairCache(tmp_path, best_name, "R@100\0top", 0, 0).kept[victim]) is not None  # kept again


def test_a_kept_file_that_does_not_verify_is_not_used(tmp_path, counted):
    scores = _scores()
    names = [f"sha-{j}" for j in range(scores.shape[1])]
    fresh = top_group(scores, names=names, kept=_kept(tmp_path))
    (file,) = [p for p in tmp_path.rglob("*.pickle")]
    data = bytearray(file.read_bytes())
    data[-5] ^= 0xFF
    file.write_bytes(bytes(data))
    counted.clear()
    assert top_group(scores, names=names, kept=_kept(tmp_path)) == fresh
    assert counted == [scores.shape[1] - 1]


def test_without_names_nothing_is_kept(tmp_path, counted):
    scores = _scores()
    assert top_group(scores, kept=_kept(tmp_path)) == top_group(scores)
    assert not list(tmp_path.rglob("*.pickle"))
