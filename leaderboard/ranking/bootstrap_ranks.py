"""Each system's rank with a percentile interval, from a paired bootstrap over queries.

Given a (queries x systems) matrix of per-query scores on one measure (higher is better), the
observed rank of a system is that of its mean over the queries; the interval comes from
resampling the queries with replacement, the same resampled queries for every system (paired),
and ranking the systems' means in every resample.

- Rank rule, "min" (competition ranking, 1-2-2-4): 1 + the number of systems with a strictly
  higher mean. Means closer than ``10**-TIE_DECIMALS`` (relative to the largest, at least 1) are
  equal, so two systems whose scores differ by float noise (0.35 - 0.3 against 0.05) tie;
  the means of systems with the same scores on every query are computed once, so they tie in
  every resample.
- Interval bounds: the ``(1 - level) / 2`` percentile of the resampled ranks taken with numpy's
  ``lower`` method and the ``(1 + level) / 2`` one with ``higher``: integer ranks that occurred,
  never narrower than the percentile interval.
- The resampled query indices come from ``numpy.random.default_rng(seed)`` drawn as
  ``integers(0, n, size=(resamples, n))`` (in chunks, the same stream): the same scores give the
  same intervals whatever else is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from statbench.errors import StatbenchError
from statbench.scoring.significance import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

#: means equal to this many decimals are tied (float noise is no difference)
TIE_DECIMALS = 12
#: bounds the memory of one chunk of resampled means (resamples x systems floats)
_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class RankInterval:
    """One system's observed rank and its bootstrap interval."""

    rank: int
    low: int
    high: int
    mean: float

    def text(self) -> str:
        """As the board prints it: ``2 (1–4)``."""
        return f"{self.rank} ({self.low}\u2013{self.high})"


def score_matrix(scores) -> np.ndarray:
    """``scores`` as a (queries x systems) float matrix; ``StatbenchError`` unless it has at
    least one query and one system and every cell is a finite number."""
    try:
        matrix = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise StatbenchError(f"per-query scores to rank are not numbers: {exc}") from None
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise StatbenchError(f"per-query scores to rank must be a non-empty queries x systems matrix, "
                             f"got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise StatbenchError("per-query scores to rank hold a missing or non-finite score: no rank is computed")
    return matrix


def rank_bounds(means, high: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """(min ranks, max ranks) of every system in each row of ``means`` (resamples x systems,
    or one row), higher is better: the min rank is 1 + the systems strictly above, the max rank
    the systems at or above (None when ``high`` is false). Two means closer than
    ``10**-TIE_DECIMALS`` (relative to the largest, at least 1) are equal."""
    values = np.atleast_2d(np.asarray(means, dtype=float))
    rows, cols = values.shape
    order = np.argsort(-values, axis=1)
    ordered = np.take_along_axis(values, order, axis=1)
    tolerance = 10.0 ** -TIE_DECIMALS * max(1.0, float(np.abs(values).max(initial=0.0)))
    starts = np.ones((rows, cols), dtype=bool)
    starts[:, 1:] = (ordered[:, :-1] - ordered[:, 1:]) > tolerance
    positions = np.arange(cols, dtype=np.int32 if cols < 2**31 else np.int64)
    low_sorted = np.maximum.accumulate(np.where(starts, positions, 0), axis=1) + 1
    low = np.empty_like(low_sorted)
    np.put_along_axis(low, order, low_sorted, axis=1)
    if not high:
        return low, None
    ends = np.ones((rows, cols), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    high_sorted = np.minimum.accumulate(np.where(ends, positions, cols - 1)[:, ::-1], axis=1)[:, ::-1] + 1
    top = np.empty_like(high_sorted)
    np.put_along_axis(top, order, high_sorted, axis=1)
    return low, top


def competition_ranks(values) -> np.ndarray:
    """Min-rule ranks (1 = highest value; ties share the better rank) of a 1-d array, or of
    each row of a 2-d one."""
    values = np.asarray(values, dtype=float)
    low, _ = rank_bounds(values, high=False)
    return low[0] if values.ndim == 1 else low


def chunk_size(queries: int, systems: int) -> int:
    """Resamples drawn at a time: bounds the indices (queries each) and the means (systems each)."""
    return max(1, min(2_000_000 // queries, _CHUNK_CELLS // systems))


def resampled_means(matrix: np.ndarray, resamples: int, seed, chunk: int | None = None):
    """The systems' means over each resample of the queries, in chunks of resamples: yields
    (start, means) with means of shape (chunk, systems). Every system sees the same resampled
    queries (paired). ``seed``: what ``numpy.random.default_rng`` takes; the draws do not depend
    on ``chunk`` (one stream)."""
    n, systems = matrix.shape
    if resamples < 1:
        raise StatbenchError(f"the bootstrap needs at least one resample, got {resamples}")
    chunk = chunk or chunk_size(n, systems)
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, chunk):
        size = min(resamples, start + chunk) - start
        idx = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        counts = np.bincount((idx + offsets).ravel(), minlength=size * n).reshape(size, n)
        yield start, (counts.astype(float) @ matrix) / n


def percentile_bounds(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``samples`` (resamples x systems): the lower percentile (numpy's ``lower``
    method) and the upper one (``higher``) of a ``level`` interval."""
    tail = (1 - level) / 2
    return (np.quantile(samples, tail, axis=0, method="lower"),
            np.quantile(samples, 1 - tail, axis=0, method="higher"))


def rank_intervals(scores, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                   level: float = 0.95) -> list[RankInterval]:
    """The rank of every system (column of ``scores``, queries x systems) with its ``level``
    bootstrap interval, in column order (see the module for the rules)."""
    matrix = score_matrix(scores)
    if not 0 < level < 1:
        raise StatbenchError(f"an interval's level must be between 0 and 1, got {level}")
    # identical systems' means computed once: bit for bit equal, they tie in every resample
    unique, inverse = np.unique(matrix.T, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    columns = np.ascontiguousarray(unique.T)
    observed = columns.mean(axis=0)[inverse]
    rank, _ = rank_bounds(observed, high=False)
    dtype = np.int16 if matrix.shape[1] < np.iinfo(np.int16).max else np.int32
    ranks = np.empty((resamples, matrix.shape[1]), dtype=dtype)
    for start, means in resampled_means(columns, resamples, seed):
        ranks[start:start + len(means)] = rank_bounds(means[:, inverse], high=False)[0]
    low, high = percentile_bounds(ranks, level)
    return [RankInterval(rank=int(rank[0][i]), low=int(low[i]), high=int(high[i]), mean=float(observed[i]))
            for i in range(matrix.shape[1])]
