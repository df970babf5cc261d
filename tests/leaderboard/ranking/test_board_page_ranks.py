"""Ranks, the top group and ▲/▼ on every measure as a built board shows them (the issue's
example: an RM3 row no different from BM25 on the tested measure, far worse on another)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

from statbench.leaderboard.ranking.bootstrap_ranks import rank_intervals
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import SAMPLE_MEASURES, make_results, write_result

N = 30
QIDS = [f"q{i:02d}" for i in range(N)]
#: noise of no direction: the test finds nothing in it (checked below)
NOISE = np.random.default_rng(2).normal(0, 0.01, N)  # its mean: -0.00076


def _per_query(by_measure: dict[str, np.ndarray], qids=QIDS) -> dict:
    return {q: {m: float(by_measure[m][i]) for m in SAMPLE_MEASURES} for i, q in enumerate(qids)}


def _scores():
    rng = np.random.default_rng(11)
    bm25 = {m: rng.uniform(0.3, 0.6, N) for m in SAMPLE_MEASURES}
    rm3 = {**bm25, "nDCG@10": bm25["nDCG@10"] + NOISE, "R@5": bm25["R@5"] - rng.uniform(0.1, 0.3, N)}
    dense = {m: v + 0.3 for m, v in bm25.items()}
    dense2 = {m: v + NOISE[::-1] for m, v in dense.items()}
    return {"bm25": bm25, "rm3": rm3, "dense": dense, "dense2": dense2}


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """One site for the module's tests (built once), in a cache of its own."""
    tmp_path = tmp_path_factory.mktemp("board")
    scores = _scores()
    root = tmp_path / "results"
    for name, by_measure in scores.items():
        write_result(root / name, make_results(_per_query(by_measure), model=name))
    other = [f"x{i:02d}" for i in range(N)]  # another query set: shown, never ranked
    write_result(root / "other", make_results(_per_query(scores["dense"], other), model="other"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STATBENCH_CACHE", str(tmp_path / "cache"))
        build_site(root, tmp_path / "site")
    return scores, (tmp_path / "site" / "task-toy.html").read_text("utf-8")


def _body(html: str, name: str) -> str:
    for body in re.findall(r'<tbody class="row.*?</tbody>', html, re.DOTALL):
        if re.search(rf'<td class="model">\s*<span class="name">{name}</span>', body):
            return body
    raise AssertionError(name)


def _rank_cell(html: str, name: str) -> str:
    return re.search(r'<td class="rank">(.*?)</td>', _body(html, name), re.DOTALL).group(1)


def _blob(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.DOTALL).group(1))


def test_the_noise_is_no_difference_to_the_test():
    assert stats.wilcoxon(NOISE).pvalue > 0.5 and NOISE.mean() < 0


def test_a_row_worse_on_a_measure_that_is_not_tested_is_marked(board):
    _, html = board
    rm3 = _body(html, "rm3")
    # RM3 ≈ BM25 on nDCG@10 (the board's tested measure): no marker there
    assert 'class="num tested"' in rm3
    tested_cell = re.search(r'<td class="num tested">(.*?)</td>', rm3, re.DOTALL).group(1)
    assert "sig" not in tested_cell
    # far worse on R@5: ▼ in that column, with the measure and the p adjusted over the board's tests
    assert re.search(r'<span class="sig down" title="significantly worse than bm25 on R@5 '
                     r'\(Holm-adjusted p = [^"]+\)">▼</span>', rm3)
    assert "Holm–Bonferroni over the 16 tests of this board: 4 results tested on 4 measures" not in html
    assert "Holm–Bonferroni over the 12 tests of this board: 3 results tested on 4 measures" in html
    # the script's data carries the marker and its p for every measure (rows built by the script)
    blob = _blob(html)
    key = next(k for k, r in blob["rows"].items() if r["name"] == "rm3")
    r5 = blob["measures"].index("R@5")
    assert blob["rows"][key]["cells"][r5][3] == "down" and blob["rows"][key]["cells"][r5][4]


def test_rank_cells_show_the_rank_and_its_interval(board):
    scores, html = board
    order = ["bm25", "rm3", "dense", "dense2"]
    expected = rank_intervals(np.column_stack([scores[n]["nDCG@10"] for n in order]), resamples=1_000)
    for name, interval in zip(order, expected):
        assert _rank_cell(html, name).startswith(interval.text()), name
    # by hand: dense and dense2 are 0.3 above bm25 and rm3 on every query, so they hold ranks 1-2
    # and the others 3-4 in every resample
    assert (expected[2].rank, expected[3].rank, expected[0].rank, expected[1].rank) == (1, 2, 3, 4)  # NOISE < 0
    assert {expected[2].low, expected[2].high, expected[3].low, expected[3].high} <= {1, 2}
    assert {expected[0].low, expected[0].high, expected[1].low, expected[1].high} <= {3, 4}
    # a row scored on other queries has no rank, and says why
    assert re.fullmatch(r'<span class="unranked" title="scored on another query set than the 4 ranked rows[^"]*">—</span>',
                        _rank_cell(html, "other"))
    key = next(k for k, r in _blob(html)["rows"].items() if r["name"] == "other")
    assert _blob(html)["rows"][key]["rank"][0] is None


def test_the_top_group_is_marked_and_explained(board):
    _, html = board
    top = '<span class="top-group" title="top group: not separable from the best'
    assert top in _rank_cell(html, "dense") and top in _rank_cell(html, "dense2")
    assert "top-group" not in _rank_cell(html, "bm25") and "top-group" not in _rank_cell(html, "rm3")
    assert ("the 2 rows the board's test cannot separate from the best (dense): two-sided Wilcoxon signed-rank "
            "against it, Holm–Bonferroni over 3 tests, α = 0.05") in html
    assert "(1,000 resamples, every row ranked on the same resampled queries)" in html
