"""A board's ranks and its tests on every measure, from rows' per-query scores: which rows are
ranked (and why the others are not), the top group, and one Holm family over every measure."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from scipy import stats

import statbench.leaderboard.ranking.board_tests as board_tests_module
from statbench.leaderboard.ranking.board_ranks import rank_board
from statbench.leaderboard.ranking.board_tests import board_tests, family_measures
from statbench.leaderboard.render.rows import PUBLISHED_UNRANKED, rank_view
from statbench.scoring.significance import compare_to_baseline


class FakeRow:
    """What the ranking reads of a board's row: its key, its per-query scores (no cached table)."""

    def __init__(self, key: str, scores: dict[str, dict[str, float]]):
        self.key, self.scores = key, scores

    def query_table(self):
        return None

    def query_scores(self, label: str) -> dict[str, float]:
        return dict(self.scores.get(label, {}))

    @property
    def queries_sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.scores, sort_keys=True).encode()).hexdigest()


def row(key: str, **by_measure) -> FakeRow:
    return FakeRow(key, {m.replace("_", "@"): {f"q{i}": float(v) for i, v in enumerate(values)}
                         for m, values in by_measure.items()})


R100 = "R@100"


def test_rows_are_ranked_on_the_main_query_set_and_the_others_say_why():
    rows = [
        row("a", R_100=[0.9, 0.8, 0.7, 0.9]),
        row("b", R_100=[0.5, 0.4, 0.3, 0.5]),
        row("c", R_100=[0.6, 0.5, 0.4, 0.6]),
        row("short", R_100=[0.9, 0.9, 0.9]),  # 3 of the 4 queries
        FakeRow("published", {}),
        row("seen", R_100=[1, 1, 1, 1]),
    ]
    ranks = rank_board(rows, R100, left_out={"seen": "saw test queries"})
    assert {k: r.text() for k, r in ranks.ranks.items()} == {"a": "1 (1\u20131)", "c": "2 (2\u20132)", "b": "3 (3\u20133)"}
    assert ranks.unranked["seen"] == "saw test queries"
    assert ranks.unranked["published"] == "no per-query scores on R@100"
    assert ranks.unranked["short"].startswith("scored on another query set than the 3 ranked rows")
    assert ranks.best == "a" and ranks.queries == 4


def test_the_top_group_holds_rows_the_test_cannot_separate_from_the_best():
    best = [0.8] * 7
    rows = [row("best", R_100=best),
            row("lower", R_100=[0.8 - s for s in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)]),  # p = 2/128, Holm x2
            row("close", R_100=[0.7, 0.9, 0.7, 0.9, 0.7, 0.9, 0.75])]
    ranks = rank_board(rows, R100)
    assert ranks.top == {"best", "close"} and ranks.tests == 2


def test_no_scored_row_no_rank():
    ranks = rank_board([FakeRow("p", {})], R100)
    assert ranks.ranks == {} and ranks.best is None and ranks.unranked == {"p": "no per-query scores on R@100"}


def test_family_measures_follow_the_measure_option():
    assert family_measures(["MRR@10", "R@100"], None) == ["MRR@10", "R@100"]
    assert family_measures(["MRR@10", "R@100"], "R@100") == ["R@100"]
    assert family_measures(["MRR@10", "R@100"], "nDCG@10") == ["MRR@10", "R@100"]


def rm3_board(n=30):
    """The issue's example: RM3 no different from BM25 on R@100 (the tested measure), far worse
    on MRR@10."""
    rng = np.random.default_rng(7)
    bm25_r = rng.uniform(0.3, 0.9, n)
    bm25_m = rng.uniform(0.4, 1.0, n)
    base = row("bm25", R_100=bm25_r, MRR_10=bm25_m)
    rm3 = row("rm3", R_100=bm25_r + rng.normal(0, 0.01, n), MRR_10=bm25_m - rng.uniform(0.1, 0.3, n))
    return base, rm3


def test_a_row_worse_on_a_measure_that_is_not_the_tested_one_gets_its_mark(isolated_cache):
    base, rm3 = rm3_board()
    comparisons = {c.system: c for c in compare_to_baseline(
        "bm25", base.query_scores(R100), {"rm3": rm3.query_scores(R100)}, R100)}
    family, adjusted = board_tests([base, rm3], base, ["MRR@10", R100], None, R100, comparisons)
    assert family.tests == 2 and family.measures == ("MRR@10", R100)
    mrr = family.marks[("rm3", "MRR@10")]
    p_mrr = stats.wilcoxon(np.array(list(rm3.query_scores("MRR@10").values()))
                           - np.array(list(base.query_scores("MRR@10").values()))).pvalue
    assert mrr.p_value == p_mrr and mrr.p_holm == pytest.approx(min(1.0, 2 * p_mrr)) and mrr.direction == -1
    assert family.marks[("rm3", R100)].direction == 0
    # the tested measure's comparison is adjusted over the whole family, not over its rows alone
    assert adjusted["rm3"].p_holm == family.marks[("rm3", R100)].p_holm
    assert adjusted["rm3"].p_holm >= comparisons["rm3"].p_holm


def test_the_measure_option_keeps_the_family_to_that_measure():
    base, rm3 = rm3_board()
    comparisons = {c.system: c for c in compare_to_baseline(
        "bm25", base.query_scores(R100), {"rm3": rm3.query_scores(R100)}, R100)}
    family, adjusted = board_tests([base, rm3], base, ["MRR@10", R100], R100, R100, comparisons)
    assert family.tests == 1 and ("rm3", "MRR@10") not in family.marks
    assert adjusted["rm3"].p_holm == comparisons["rm3"].p_holm


def test_a_row_not_paired_on_a_measure_is_out_of_the_family():
    base, rm3 = rm3_board(n=10)
    partial = FakeRow("partial", {"MRR@10": dict(list(rm3.query_scores("MRR@10").items())[:5])})
    family, _ = board_tests([base, rm3, partial], base, ["MRR@10"], None, R100, {})
    assert set(family.marks) == {("rm3", "MRR@10")} and family.tests == 1


def test_kept_tests_give_the_same_marks():
    base, rm3 = rm3_board()
    first, _ = board_tests([base, rm3], base, ["MRR@10"], None, R100, {})
    again, _ = board_tests([base, rm3], base, ["MRR@10"], None, R100, {})
    assert first == again


def test_a_board_of_one_ranked_row_has_a_rank_and_no_top_mark():
    ranks = rank_board([row("a", R_100=[0.5, 0.6]), FakeRow("p", {})], R100)
    assert rank_view("a", ranks) == {"text": "1 (1\u20131)", "top": False, "why": ""}
    assert rank_view("p", ranks) == {"text": None, "top": False, "why": "no per-query scores on R@100"}
    assert rank_view("ref-0", None)["why"] == PUBLISHED_UNRANKED


def test_rows_read_a_block_at_a_time_give_the_same_marks(monkeypatch, tmp_path):
    base, rm3 = rm3_board()
    rows = [base, rm3] + [row(f"r{i}", R_100=[0.5] * 30, MRR_10=np.linspace(0, 1, 30) ** (i + 1)) for i in range(5)]
    whole, _ = board_tests(rows, base, ["MRR@10", R100], None, R100, {})
    monkeypatch.setattr(board_tests_module, "_BLOCK", 2)
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh"))  # nothing kept: every pair tested again
    blocks, _ = board_tests(rows, base, ["MRR@10", R100], None, R100, {})
    assert blocks == whole and blocks.tests == 6  # 6 rows on MRR@10 (R@100 is the tested measure: no comparisons given)
