"""A board's budget switch in a real browser: reduced-budget rows are badged and hidden
on request (issue 21 §3); the script builds the badge the same way the page prints it."""

from __future__ import annotations

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import make_results, write_result


def _scores(value: float) -> dict:
    return {f"q{i}": {m: value for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(4)}


def test_budget_rows_hidden_by_the_switch(page, tmp_path):
    root = tmp_path / "results"
    write_result(root / "bm25", make_results(_scores(0.3)))
    budget = make_results(_scores(0.5), model="dsr", family="dense")
    budget["model"]["budget"] = "preset=cpu-small"
    write_result(root / "dsr", budget)
    build_site(root, tmp_path / "site")
    page.goto((tmp_path / "site" / "task-toy.html").as_uri())
    names = "els => els.map(e => e.textContent)"
    rows = "#leaderboard tbody.row:not([hidden]) tr.main td.model > .name"
    assert sorted(page.eval_on_selector_all(rows, names)) == ["bm25", "dsr"]
    assert page.eval_on_selector_all("#leaderboard .badge.budget", names) == ["budget: cpu-small"]
    page.uncheck('input[name="budget"]')
    assert page.eval_on_selector_all(rows, names) == ["bm25"]
    page.check('input[name="budget"]')
    page.click('th[data-col="label"] button.sort')  # rows rebuilt by the script keep their badge
    assert page.eval_on_selector_all("#leaderboard .badge.budget", names) == ["budget: cpu-small"]
    assert page.errors == [] and page.requests == []
