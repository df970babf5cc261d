"""A board of 120 results in headless Chromium (file://, network off): three pages of 50
rows; the script pages, sorts and filters across all of them, builds the rows this page
does not hold from the page's JSON exactly as the other pages print them, and links
their details to the page that holds them. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_many

N = 120

#: per cell of a row's main line (details column aside): its text pieces, its marker (a
#: significance marker, the top-group mark or an unranked dash: link and title) and its class;
#: then the row's own attributes
ROW_SHAPE = """body => [Array.from(body.querySelector('tr.main').children).slice(0, -1).map(td => {
  const parts = [], walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) { const t = walker.currentNode.textContent.trim(); if (t) parts.push(t); }
  const sig = td.querySelector('.sig, .top-group, .unranked');
  return [parts, sig ? [sig.getAttribute('href'), sig.title] : null, td.className];
}), body.className, body.dataset.family, body.dataset.trained, body.dataset.ref, body.id]"""


@pytest.fixture
def big_site(tmp_path) -> Path:
    write_many(tmp_path / "results", N)
    build_site(tmp_path / "results", tmp_path / "site")
    return tmp_path / "site"


def _keys(page) -> list[str]:
    return page.eval_on_selector_all("#leaderboard tbody.row", "els => els.map(e => e.dataset.key)")


def _showing(page) -> str:
    return page.locator("nav.lb-pager .showing").first.inner_text()


def _go(page, where: str) -> None:
    page.locator(f"nav.lb-pager button[data-page='{where}']").first.click()


def _shapes(page) -> dict:
    return dict(zip(_keys(page), page.eval_on_selector_all("#leaderboard tbody.row", f"els => els.map({ROW_SHAPE})")))


def test_pages_sort_and_filter_across_all_rows(page, big_site):
    page.goto((big_site / "task-toy.p2.html").as_uri())
    static_page_2 = _shapes(page)  # as the page prints them
    page.goto((big_site / "task-toy.html").as_uri())
    blob = page.evaluate("window.statbenchLeaderboard")  # data/task-toy.js: the JSON of every row
    order, rows = blob["order"], blob["rows"]
    assert len(order) == N and _keys(page) == order[:50] and _showing(page) == "Rows 1–50 of 120"
    assert page.evaluate("performance.getEntriesByName('leaderboard-ready').length") == 1

    # page 2: the rows built from the JSON are the rows page 2 prints, cell by cell
    _go(page, "next")
    assert _keys(page) == order[50:100] and _showing(page) == "Rows 51–100 of 120"
    assert _shapes(page) == static_page_2
    first = page.locator("#leaderboard tbody.row").first
    assert first.locator("a.details-link").get_attribute("href") == f"task-toy.p2.html#row-{order[50]}"
    _go(page, "2")  # the third page (buttons count from 0)
    assert _keys(page) == order[100:] and _showing(page) == "Rows 101–120 of 120"
    assert page.locator("nav.lb-pager button[data-page='next']").first.is_disabled()

    # sort by R@10: best first over all 120 rows, page after page
    page.click("th[data-col='m:R@10'] button.sort")
    assert page.get_attribute("th[data-col='m:R@10']", "aria-sort") == "descending"
    best = sorted((rows[k]["values"]["R@10"] for k in order), reverse=True)
    shown = [rows[k]["values"]["R@10"] for k in _keys(page)]
    assert shown == best[:50] and _showing(page) == "Rows 1–50 of 120"
    _go(page, "next")
    assert [rows[k]["values"]["R@10"] for k in _keys(page)] == best[50:100]
    # by name, ascending, across the pages
    page.click("th[data-col='label'] button.sort")
    labels = [rows[k]["label"] for k in _keys(page)]
    _go(page, "next")
    labels += [rows[k]["label"] for k in _keys(page)]
    assert len(labels) == 100 and page.evaluate("ls => ls.every((l, i) => !i || ls[i - 1].localeCompare(l) <= 0)", labels)
    assert labels[0] == "bm25"

    # filter: without the dense family, every page holds only the others
    page.uncheck("input[name='family'][value='dense']")
    others = [k for k in order if rows[k]["family"] != "dense"]
    assert _showing(page) == f"Rows 1–50 of {len(others)}"
    seen = _keys(page)
    while not page.locator("nav.lb-pager button[data-page='next']").first.is_disabled():
        _go(page, "next")
        seen += _keys(page)
    assert sorted(seen) == sorted(others) and len(seen) == len(set(seen))
    page.check("input[name='family'][value='dense']")
    assert _showing(page) == "Rows 1–50 of 120"

    # the details of a row built here: on the page that holds it, opened
    page.click("th[data-col='m:nDCG@10'] button.sort")  # the default order again (ties kept in place)
    _go(page, "1")
    assert _keys(page) == order[50:100]
    key = order[60]
    page.click(f"#row-{key} a.details-link")
    page.wait_for_url(f"**/task-toy.p2.html#row-{key}")
    detail = page.locator(f"#detail-{key}")
    assert detail.is_visible() and f"statbench run --task toy --model {rows[key]['name']}" in detail.inner_text()

    assert page.dialogs == [] and page.errors == [] and page.requests == []


def test_without_javascript_every_page_shows_its_rows_and_their_details(chromium, big_site):
    """The pages as they are without a script: 50 rows each, every row's details shown, the
    pager's links lead to the next page."""
    from playwright import sync_api

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(**chromium)
        try:
            context = browser.new_context(java_script_enabled=False)
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                          else route.abort())
            page = context.new_page()
            page.goto((big_site / "task-toy.html").as_uri())
            seen = []
            for number in (1, 2, 3):
                keys = page.eval_on_selector_all("#leaderboard tbody.row", "els => els.map(e => e.dataset.key)")
                seen += keys
                assert page.locator("#leaderboard tr.detail:visible").count() == len(keys) == (50 if number < 3 else 20)
                assert page.locator("button.toggle:visible").count() == 0
                if number < 3:
                    page.locator("nav.lb-pager a[rel='next']").first.click()
                    page.wait_for_url(f"**/task-toy.p{number + 1}.html")
            assert len(seen) == len(set(seen)) == N
        finally:
            browser.close()
