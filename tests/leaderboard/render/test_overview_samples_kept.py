"""Each task's resampled points and ranks kept between builds (overview_cache.SamplesCache):
the aggregate ranks are those drawn afresh, a task whose scores did not change draws nothing,
and a kept entry that is damaged, of another shape or out of range is drawn again."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from statbench.leaderboard.ranking import aggregate
from statbench.leaderboard.ranking.aggregate import TaskScores, aggregate_ranks
from statbench.leaderboard.render import overview_cache
from statbench.leaderboard.render.overview_cache import SamplesCache
from statbench.storage.cache_files import keyed_cache_file, read_pickled_dict, write_framed
from statbench.storage.paths import cache_root


def _tasks(shift: float = 0.0) -> dict[str, TaskScores]:
    rng = np.random.default_rng(5)
    names = [f"sys-{i}" for i in range(9)]
    t1 = np.round(rng.random((40, 9)), 2)
    t2 = np.round(rng.random((25, 6)), 2)
    t2[:, 2] = t2[:, 1]  # a tie in every resample
    t3 = np.round(rng.random((30, 4)), 2) + shift
    return {"t1": TaskScores(tuple(names), t1), "t2": TaskScores(tuple(names[3:]), t2),
            "t3": TaskScores(tuple(names[:2] + names[6:8]), t3)}


@pytest.fixture
def drawn(monkeypatch):
    """The tasks whose samples were drawn (not taken from the cache)."""
    seen: list[int] = []
    real = aggregate.task_samples

    def counting(matrix, *args):
        seen.append(matrix.shape[1])
        return real(matrix, *args)

    monkeypatch.setattr(aggregate, "task_samples", counting)
    return seen


def test_kept_samples_give_the_ranks_drawn_afresh(drawn):
    tasks = _tasks()
    fresh = aggregate_ranks(tasks, resamples=300)
    assert sorted(drawn) == [4, 6, 9]
    drawn.clear()
    assert aggregate_ranks(tasks, resamples=300, kept=SamplesCache("bench")) == fresh
    assert sorted(drawn) == [4, 6, 9]
    drawn.clear()
    assert aggregate_ranks(tasks, resamples=300, kept=SamplesCache("bench")) == fresh  # a later build
    assert drawn == []


def test_a_changed_task_alone_is_drawn_again(drawn):
    aggregate_ranks(_tasks(), resamples=300, kept=SamplesCache("bench"))
    changed = _tasks(shift=0.5)
    expected = aggregate_ranks(changed, 300)
    drawn.clear()
    assert aggregate_ranks(changed, resamples=300, kept=SamplesCache("bench")) == expected
    assert drawn == [4]  # t3 alone


def test_one_build_draws_a_task_once_for_several_task_sets(drawn):
    tasks = _tasks()
    kept = SamplesCache("bench")
    aggregate_ranks(tasks, resamples=200, kept=kept)
    expected = aggregate_ranks({"t2": tasks["t2"]}, 200)
    drawn.clear()
    # the same task in another set (a language's): the same chunk of resamples, taken from the build's memo
    assert aggregate_ranks({"t2": tasks["t2"]}, resamples=200, kept=kept) == expected
    assert drawn == []


def _entry(task: str = "t2"):
    file = keyed_cache_file("leaderboard-overview-samples", "bench", task)
    return file, read_pickled_dict(overview_cache._SAMPLES_MAGIC, file)


@pytest.mark.parametrize("damage", ["shape", "dtype", "points out of range", "ranks out of range", "nan", "not a pair"])
def test_a_kept_entry_of_another_shape_is_drawn_again(drawn, damage):
    tasks = _tasks()
    fresh = aggregate_ranks(tasks, resamples=300, kept=SamplesCache("bench"))
    file, kept = _entry()
    (key, (points, ranks)), = kept.items()
    points, ranks = points.copy(), ranks.copy()
    if damage == "shape":
        points = points[:-1]
    elif damage == "dtype":
        points = points.astype(np.float32)
    elif damage == "points out of range":
        points[0, 0] = 6.0
    elif damage == "ranks out of range":
        ranks[3, 1] = 0
    elif damage == "nan":
        points[1, 1] = np.nan
    value = "nope" if damage == "not a pair" else (points, ranks)
    write_framed(file, overview_cache._SAMPLES_MAGIC, pickle.dumps({key: value}))
    drawn.clear()
    assert aggregate_ranks(tasks, resamples=300, kept=SamplesCache("bench")) == fresh
    assert drawn == [6]
    (points, ranks), = _entry()[1].values()  # drawn again and kept
    assert points.shape == ranks.shape == (300, 6)


def test_a_kept_file_that_does_not_verify_is_drawn_again(drawn):
    tasks = _tasks()
    fresh = aggregate_ranks(tasks, resamples=300, kept=SamplesCache("bench"))
    files = sorted((cache_root() / "leaderboard-overview-samples").rglob("*"))
    files = [f for f in files if f.is_file()]
    assert len(files) == 3
    for file in files:
        data = bytearray(file.read_bytes())
        data[len(data) // 2] ^= 0x01
        file.write_bytes(bytes(data))
    drawn.clear()
    assert aggregate_ranks(tasks, resamples=300, kept=SamplesCache("bench")) == fresh
    assert sorted(drawn) == [4, 6, 9]


def test_other_resamples_or_benchmark_are_other_entries(drawn):
    tasks = _tasks()
    aggregate_ranks(tasks, resamples=300, kept=SamplesCache("bench"))
    expected = aggregate_ranks(tasks, 250)
    drawn.clear()
    assert aggregate_ranks(tasks, resamples=250, kept=SamplesCache("bench")) == expected
    assert len(drawn) == 3
    drawn.clear()
    aggregate_ranks(tasks, resamples=300, kept=SamplesCache("other-bench"))
    assert len(drawn) == 3
