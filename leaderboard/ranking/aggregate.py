"""Ranks across tasks (the overview): a Borda count and a mean rank, each with an interval.

- Per task, a system's figure is its mean over the task's queries (the statistic resampled);
  its rank there is the min rule of :mod:`.bootstrap_ranks` among the systems of that task.
- Borda (MTEB's): per task, one point for every system of that task it beats, half a point for
  every one it ties; summed over the tasks it ran (= systems of the task - its average rank).
- Mean rank: the mean of its per-task ranks over the tasks it ran.
- A task a system did not run is left out of both — never counted as a score of 0 or as the
  last rank; ``tasks`` says how many it ran (with fewer tasks a system has fewer Borda points:
  show the count beside it).
- The aggregate rank: the min rule over the Borda points (more is better) or the mean ranks
  (less is better) of all systems.
- Intervals: every task's queries are resampled on their own (each task's stream seeded by
  ``[seed, crc32(task name)]``, so a task's resamples do not depend on which other tasks are
  there), paired within the task; the Borda points, mean ranks and aggregate ranks are
  recomputed in every replicate; bounds as in :mod:`.bootstrap_ranks` (``lower`` / ``higher``
  percentiles). Memory: about resamples x systems x 8 bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from statbench.errors import StatbenchError
from statbench.leaderboard.ranking.bootstrap_ranks import (
    chunk_size,
    percentile_bounds,
    rank_bounds,
    resampled_means,
    score_matrix,
)
from statbench.scoring.significance import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED


@dataclass(frozen=True)
class TaskScores:
    """The per-query scores of the systems that ran one task (only rows that share its board)."""

    systems: tuple[str, ...]
    scores: object  #: queries x systems, in the order of ``systems``


@dataclass(frozen=True)
class AggregateRank:
    """One system's ranks across the tasks it ran, each with its interval."""

    system: str
    tasks: int  #: how many tasks it ran
    borda: float  #: Borda points over the tasks it ran
    borda_rank: int
    borda_low: int
    borda_high: int
    mean_rank: float  #: the mean of its per-task ranks
    mean_rank_low: float
    mean_rank_high: float
    mean_rank_rank: int  #: its rank by mean rank (the lowest mean rank first)
    mean_rank_rank_low: int
    mean_rank_rank_high: int


def _task_points(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Borda points, min ranks) of the systems in each row of ``means``."""
    low, high = rank_bounds(means)
    return means.shape[1] - (low + high) / 2, low


def borda_points(means_by_task: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """System -> Borda points summed over the tasks it ran (task -> system -> figure)."""
    points: dict[str, float] = {}
    for figures in means_by_task.values():
        names = list(figures)
        task_points, _ = _task_points(np.array([[figures[n] for n in names]], dtype=float))
        for name, value in zip(names, task_points[0]):
            points[name] = points.get(name, 0.0) + float(value)
    return points


def mean_ranks(means_by_task: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """System -> the mean of its per-task ranks (min rule) over the tasks it ran."""
    sums: dict[str, list[int]] = {}
    for figures in means_by_task.values():
        names = list(figures)
        _, ranks = _task_points(np.array([[figures[n] for n in names]], dtype=float))
        for name, rank in zip(names, ranks[0]):
            sums.setdefault(name, []).append(int(rank))
    return {name: sum(ranks) / len(ranks) for name, ranks in sums.items()}


def _checked(tasks: Mapping[str, TaskScores]) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
    checked = {}
    for name in sorted(tasks):
        task = tasks[name]
        systems = tuple(task.systems)
        if len(set(systems)) != len(systems):
            raise StatbenchError(f"task {name!r}: a system is named twice among those to rank")
        matrix = score_matrix(task.scores)
        if matrix.shape[1] != len(systems):
            raise StatbenchError(f"task {name!r}: {matrix.shape[1]} score columns for {len(systems)} systems")
        checked[name] = (systems, matrix)
    if not checked:
        raise StatbenchError("no task to rank systems across")
    return checked


def _aggregate(points: np.ndarray, rank_sums: np.ndarray, ran: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Borda ranks, mean-rank ranks) of every system in each row."""
    borda_rank, _ = rank_bounds(points, high=False)
    mean_rank_rank, _ = rank_bounds(-(rank_sums / ran), high=False)
    return borda_rank, mean_rank_rank


def task_samples(matrix: np.ndarray, resamples: int, seed, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """(Borda points, min ranks) of one task's systems in each resample of its queries
    (resamples x systems), drawn ``chunk`` resamples at a time as :func:`aggregate_ranks` draws
    them (``seed``: the task's stream): they depend on that task alone."""
    points = np.empty((resamples, matrix.shape[1]))
    ranks = None
    for start, means in resampled_means(matrix, resamples, seed, chunk):
        task_points, task_ranks = _task_points(means)
        if ranks is None:
            ranks = np.empty((resamples, matrix.shape[1]), dtype=task_ranks.dtype)
        points[start:start + len(means)] = task_points
        ranks[start:start + len(means)] = task_ranks
    return points, ranks


def aggregate_ranks(tasks: Mapping[str, TaskScores], resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = BOOTSTRAP_SEED, level: float = 0.95, kept=None) -> dict[str, AggregateRank]:
    """System -> its Borda and mean ranks across ``tasks`` (task name -> :class:`TaskScores`),
    with ``level`` intervals (see the module). ``kept``: each task's resampled points and ranks
    (:func:`task_samples`) kept between builds, ``kept.samples(name, tasks[name], resamples, seed,
    chunk, compute)`` (:class:`statbench.leaderboard.render.overview_cache.SamplesCache`): a task whose
    scores did not change draws no resample."""
    checked = _checked(tasks)
    if not 0 < level < 1:
        raise StatbenchError(f"an interval's level must be between 0 and 1, got {level}")
    names = sorted({s for systems, _ in checked.values() for s in systems})
    column = {name: i for i, name in enumerate(names)}
    placed = {task: np.array([column[s] for s in systems]) for task, (systems, _) in checked.items()}
    ran = np.zeros(len(names))
    for cols in placed.values():
        ran[cols] += 1

    def totals(per_task: dict[str, tuple[np.ndarray, np.ndarray]], rows: int) -> tuple[np.ndarray, np.ndarray]:
        points, rank_sums = np.zeros((rows, len(names))), np.zeros((rows, len(names)))
        for task, (task_points, task_ranks) in per_task.items():
            points[:, placed[task]] += task_points
            rank_sums[:, placed[task]] += task_ranks
        return points, rank_sums

    points, rank_sums = totals({t: _task_points(m.mean(axis=0)[None, :]) for t, (_, m) in checked.items()}, 1)
    borda_rank, mean_rank_rank = _aggregate(points, rank_sums, ran)

    # one chunk of resamples drawn at a time for every task (past ``resamples``: the same single chunk)
    chunk = max(1, min(resamples, *(chunk_size(m.shape[0], len(names)) for _, m in checked.values())))
    samples = {}
    for t, (_, m) in checked.items():
        stream = [seed, zlib.crc32(t.encode())]
        compute = (lambda m=m, stream=stream: task_samples(m, resamples, stream, chunk))
        samples[t] = compute() if kept is None else kept.samples(t, tasks[t], resamples, stream, chunk, compute)
    sampled_sums = np.empty((resamples, len(names)))
    sampled_borda = np.empty((resamples, len(names)), dtype=np.int32)
    sampled_mean_rank = np.empty((resamples, len(names)), dtype=np.int32)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        p, r = totals({t: (points_t[start:stop], ranks_t[start:stop]) for t, (points_t, ranks_t) in samples.items()},
                      stop - start)
        sampled_sums[start:stop] = r
        sampled_borda[start:stop], sampled_mean_rank[start:stop] = _aggregate(p, r, ran)
    borda_low, borda_high = percentile_bounds(sampled_borda, level)
    sums_low, sums_high = percentile_bounds(sampled_sums, level)
    mr_low, mr_high = percentile_bounds(sampled_mean_rank, level)
    return {
        name: AggregateRank(
            system=name, tasks=int(ran[i]), borda=float(points[0, i]),
            borda_rank=int(borda_rank[0, i]), borda_low=int(borda_low[i]), borda_high=int(borda_high[i]),
            mean_rank=float(rank_sums[0, i] / ran[i]),
            mean_rank_low=float(sums_low[i] / ran[i]), mean_rank_high=float(sums_high[i] / ran[i]),
            mean_rank_rank=int(mean_rank_rank[0, i]), mean_rank_rank_low=int(mr_low[i]),
            mean_rank_rank_high=int(mr_high[i]),
        )
        for i, name in enumerate(names)
    }
