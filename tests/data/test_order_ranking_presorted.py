"""order_ranking takes a ranking already in its order (a retriever's top-k) as it is: the
same pairs the sort and the float32 pass give, for every kind of ranking."""

from __future__ import annotations

import math
import random

import pytest

from statbench.data import runfile
from statbench.data.runfile import order_ranking


def _sorted_then_strict(ranking, depth=None):
    """order_ranking without the shortcut: sort, cut, refuse non-finite, strict at float32."""
    ordered = sorted(((str(d), float(s)) for d, s in ranking), key=lambda pair: (-pair[1], pair[0]))
    if depth is not None:
        ordered = ordered[:depth]
    for doc_id, score in ordered:
        if not math.isfinite(score):
            raise ValueError(f"non-finite score {score!r} for document {doc_id!r}")
    return runfile._strict_at_float32(ordered)


def _ranking(rng: random.Random):
    n = rng.randint(0, 30)
    kind = rng.choice(["decreasing", "ties", "float32 ties", "shuffled", "huge", "ints"])
    if kind == "decreasing":
        scores = sorted((rng.uniform(-5, 5) for _ in range(n)), reverse=True)
    elif kind == "ties":
        scores = sorted((rng.choice([1.0, 0.5, 0.25]) for _ in range(n)), reverse=True)
    elif kind == "float32 ties":  # distinct doubles, equal once read as float32
        scores = [1.0 + i * 1e-12 for i in range(n)][::-1]
    elif kind == "huge":
        scores = sorted((rng.choice([3.5e38, 3.4e38, 1e39, -3.5e38, 1.0]) for _ in range(n)), reverse=True)
    elif kind == "ints":
        scores = list(range(n, 0, -1))
    else:
        scores = [rng.uniform(-1, 1) for _ in range(n)]
    return [(f"d{rng.randint(0, 99)}-{i}", s) for i, s in enumerate(scores)]


def test_every_kind_of_ranking_gets_what_the_sort_gives():
    rng = random.Random(37)
    for _ in range(3000):
        ranking = _ranking(rng)
        depth = rng.choice([None, 1, 5, 100])
        try:
            expected = _sorted_then_strict(ranking, depth)
        except ValueError as exc:
            with pytest.raises(ValueError, match="non-finite"):
                order_ranking(ranking, depth)
            assert "non-finite" in str(exc)
            continue
        assert order_ranking(ranking, depth) == expected


def test_a_presorted_ranking_is_not_sorted_again(monkeypatch):
    ranking = [("b", 3.0), ("a", 2.0), ("c", 1.0)]
    monkeypatch.setattr(runfile, "_strict_at_float32", lambda ordered: pytest.fail("sorted again"))
    assert order_ranking(ranking, 2) == [("b", 3.0), ("a", 2.0)]


@pytest.mark.parametrize("ranking", [[("b", 1.0), ("a", 1.0)], [("a", 1.0), ("b", 2.0)],
                                     [("a", 1.0 + 1e-12), ("b", 1.0)], [("a", math.inf), ("b", 1.0)]])
def test_ties_disorder_and_infinity_still_take_the_full_path(ranking):
    try:
        expected = _sorted_then_strict(ranking)
    except ValueError:
        with pytest.raises(ValueError):
            order_ranking(ranking)
    else:
        assert order_ranking(ranking) == expected
