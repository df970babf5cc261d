"""The bootstrap intervals' quantiles taken in place along each system's resamples
(leaderboard/ranking/significance.py) and the query orders sorted once for a board's whole
family of tests (leaderboard/ranking/board_scores.py): the same figures as the plain way."""

from __future__ import annotations

import numpy as np

from statbench.leaderboard.ranking import significance
from statbench.leaderboard.ranking.board_scores import columns_by_query_set


def _plain_intervals(diffs, resamples, seed, level=0.95):
    """bootstrap_intervals as computed before: the resampled means in rows, the quantiles across them."""
    m, n = diffs.shape
    tail = (1 - level) / 2
    chunk = max(1, 2_000_000 // n)
    rng = np.random.default_rng(seed)
    block = np.vstack([diffs, np.zeros((significance.BLOCK - m, n))])
    means = np.empty((resamples, significance.BLOCK))
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        offsets = (np.arange(stop - start) * n)[:, None]
        counts = np.bincount((idx + offsets).ravel(), minlength=(stop - start) * n).reshape(stop - start, n)
        means[start:stop] = (counts.astype(float) @ block.T) / n
    low, high = np.quantile(means, [tail, 1 - tail], axis=0)
    return low[:m], high[:m]


def test_the_intervals_are_those_of_the_plain_quantiles_bit_for_bit():
    rng = np.random.default_rng(7)
    diffs = np.round(rng.normal(size=(3, 40)), 2) * (rng.random((3, 40)) < 0.6)  # ties and zeros, as scores give
    lows, highs = significance.bootstrap_intervals(diffs, resamples=2_000, seed=11)
    low, high = _plain_intervals(diffs, 2_000, 11)
    assert lows.tobytes() == low.tobytes() and highs.tobytes() == high.tobytes()
    assert (lows < highs).all()


class _Table:
    def __init__(self, qids, labels, values):
        self.qids, self.labels, self.values = qids, labels, np.array(values, dtype=float)


class _Row:
    def __init__(self, key, table):
        self.key, self._table = key, table

    def query_table(self):
        return self._table


def test_query_orders_shared_between_calls_give_the_same_groups():
    nan = float("nan")
    rows = [_Row("base", _Table(["q2", "q1", "q3"], ["a", "b"], [[0.2, 1], [0.1, 2], [0.3, 3]])),
            _Row("same", _Table(["q3", "q2", "q1"], ["a", "b"], [[0.6, 4], [0.5, 5], [0.4, 6]])),
            _Row("fewer", _Table(["q1", "q2", "q3"], ["a", "b"], [[0.7, 7], [nan, 8], [0.9, 9]])),
            _Row("other", _Table(["q1", "q2"], ["a"], [[0.1], [0.2]]))]
    placed: dict = {}
    for measure in ("a", "b", "a"):
        shared, unscored = columns_by_query_set(rows, measure, {}, placed=placed)
        alone, unscored_alone = columns_by_query_set(rows, measure, {})
        assert unscored == unscored_alone and list(shared) == list(alone)
        for ids, group in shared.items():
            assert group.keys == alone[ids].keys and np.array_equal(group.matrix(), alone[ids].matrix())
    groups, unscored = columns_by_query_set(rows, "a", {}, placed=placed)
    assert groups[("q1", "q2", "q3")].keys == ["base", "same"] and unscored == []
    assert groups[("q1", "q2", "q3")].matrix().tolist() == [[0.1, 0.4], [0.2, 0.5], [0.3, 0.6]]
    assert groups[("q1", "q3")].keys == ["fewer"] and groups[("q1", "q2")].keys == ["other"]
    assert columns_by_query_set(rows, "b", {}, placed=placed)[1] == ["other"]
