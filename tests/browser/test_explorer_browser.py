"""The per-query explorer in headless Chromium (file://, network off): its filters list the
queries no system answers, those only one system answers, the largest wins and losses
between two systems and a system's worst queries, across all its pages, as computed here
from the results; a listed query opens on the page that holds it; a board's row opens its
system's worst queries. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.explorer import TaskTexts
from statbench.leaderboard.sample import make_results, write_result

N = 70  #: queries: two pages of the explorer
MEASURES = ("R@5", "R@10", "R@100", "nDCG@10")


def _scores(j: int) -> dict[str, dict[str, float]]:
    """System j's per-query scores: nobody answers q000 in the top 100, only system 2
    answers q001; the tested measure (nDCG@10) differs from query to query."""
    out = {}
    for i in range(N):
        q = f"q{i:03d}"
        recall = 0.0 if i == 0 or (i == 1 and j != 2) else 1.0
        ndcg = 0.0 if recall == 0.0 else round(((i * (j + 3)) % 17) / 16, 4)
        out[q] = {"R@5": min(recall, ndcg), "R@10": min(recall, ndcg), "R@100": recall, "nDCG@10": ndcg}
    return out


@pytest.fixture
def site(tmp_path) -> tuple[Path, dict]:
    root = tmp_path / "results"
    scores = {}
    for j, name in enumerate(("bm25", "dense-a", "dense-b")):
        scores[name] = _scores(j)
        write_result(root / name, make_results(scores[name], model=name, family="lexical" if j == 0 else "dense"))
    build_site(root, tmp_path / "site", explorer=TaskTexts())
    return tmp_path / "site", scores


def _listed(page) -> list[str]:
    return page.eval_on_selector_all("#ex-results tbody a.ex-open", "els => els.map(e => e.textContent)")


def test_filters_list_queries_across_pages(page, site):
    folder, scores = site
    page.goto((folder / "explorer" / "toy.html").as_uri())
    assert page.evaluate("performance.getEntriesByName('explorer-ready').length") == 1
    assert page.locator("#ex-results").is_hidden()
    assert page.locator("section.query").count() == 50

    page.select_option("#ex-view", "none")
    assert _listed(page) == ["q000"]
    assert page.locator("#ex-results .ex-summary").inner_text().startswith("1 of 70 queries answered in the top 100 by none")
    page.select_option("#ex-view", "one")
    assert _listed(page) == ["q001"]
    assert page.locator("#ex-results tbody td").nth(2).inner_text() == "dense-b"

    # wins and losses of B against A: the per-query differences of the tested measure
    page.select_option("#ex-view", "pair")
    keys = page.evaluate("window.statbenchExplorer.systems.map(s => [s.label, s.key])")
    key = dict(keys)
    page.select_option("#ex-a", key["bm25"])
    page.select_option("#ex-b", key["dense-a"])
    diffs = [(scores["dense-a"][q]["nDCG@10"] - scores["bm25"][q]["nDCG@10"], i, q)
             for i, q in enumerate(sorted(scores["bm25"]))]
    wins = [q for d, i, q in sorted((x for x in diffs if x[0] > 0), key=lambda x: (-x[0], x[1]))][:25]
    losses = [q for d, i, q in sorted((x for x in diffs if x[0] < 0), key=lambda x: (x[0], x[1]))][:25]
    assert _listed(page) == wins + losses
    summary = page.locator("#ex-results .ex-summary").inner_text()
    n_win, n_loss = sum(d > 0 for d, _, _ in diffs), sum(d < 0 for d, _, _ in diffs)
    assert f"70 paired queries: {n_win} wins, {70 - n_win - n_loss} ties, {n_loss} losses" in summary
    assert "#view=pair&a=" in page.url  # the address says what is shown

    # a system's worst queries, then the whole list
    page.select_option("#ex-view", "system")
    page.select_option("#ex-system", key["dense-b"])
    worst = [q for _, _, q in sorted((scores["dense-b"][q]["nDCG@10"], i, q) for i, q in enumerate(sorted(scores["dense-b"])))]
    assert _listed(page) == worst[:50]
    page.click("#ex-results button.ex-all")
    assert _listed(page) == worst

    # a listed query on the second page opens there
    target = next(q for q in worst if int(q[1:]) >= 50)
    page.click(f"#ex-results a.ex-open:text-is('{target}')")
    assert page.url.endswith(f"explorer/toy.p2.html#q-{int(target[1:])}")
    assert page.locator(f"section.query#q-{int(target[1:])} h2").inner_text() == f"Query {target}"
    assert page.errors == [] and page.requests == [] and page.dialogs == []


def test_a_board_row_opens_its_worst_queries(page, site):
    folder, scores = site
    page.goto((folder / "task-toy.html").as_uri())
    page.click("tbody.row:has(td.model .name:text-is('dense-a')) button.toggle")
    page.click("tbody.row:has(td.model .name:text-is('dense-a')) a.explorer-worst")
    # the explorer reads the address once its script ran: wait for it, not for the click alone
    page.wait_for_url("**/explorer/toy.html#view=system&s=*")
    page.wait_for_function("performance.getEntriesByName('explorer-ready').length === 1")
    assert page.input_value("#ex-view") == "system"
    assert page.locator("#ex-system option:checked").inner_text() == "dense-a"
    listed = _listed(page)
    assert listed[0] == "q000" and len(listed) == 50
    assert page.errors == [] and page.requests == []
