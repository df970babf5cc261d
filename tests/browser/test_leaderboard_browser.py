"""The built site in a real browser: headless Chromium (Debian's ``chromium`` package)
driven by Playwright, opened from file:// with the network off. Sorting, filtering,
expanding, escaping (no alert may fire), and a screenshot.

The ``page`` fixture (conftest.py) skips, saying why, when /usr/bin/chromium or the
playwright package is missing (CI installs both: see .ci/run). Playwright's own browser
download is never used."""

from __future__ import annotations

from pathlib import Path

import pytest

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_sample

XSS = "<script>alert(1)</script>"


@pytest.fixture
def site(tmp_path) -> Path:
    write_sample(tmp_path / "results")
    build_site(tmp_path / "results", tmp_path / "site")
    return tmp_path / "site"


def _visible_labels(page) -> list[str]:
    return page.eval_on_selector_all(
        "#leaderboard tbody.row:not([hidden]) tr.main td.model > .name", "els => els.map(e => e.textContent)"
    )


def _column(page, label: str) -> list[float]:
    index = page.eval_on_selector_all(
        "#leaderboard thead th", f"ths => ths.findIndex(th => th.getAttribute('data-col') === 'm:{label}')"
    )
    texts = page.eval_on_selector_all(
        f"#leaderboard tbody.row:not([hidden]) tr.main > td:nth-child({index + 1})",
        "tds => tds.map(td => (td.querySelector('summary') || td).firstChild.textContent.trim())",
    )
    return [float(t) for t in texts]


def test_site_in_headless_chromium(page, site, tmp_path):
    page.goto((site / "index.html").as_uri())
    page.click("text=toy")
    assert page.url.endswith("/task-toy.html")
    assert len(_visible_labels(page)) == 7

    # sort by R@10: first click descending, second ascending
    page.click("th[data-col='m:R@10'] button.sort")
    assert page.get_attribute("th[data-col='m:R@10']", "aria-sort") == "descending"
    values = _column(page, "R@10")
    assert values == sorted(values, reverse=True) and len(values) == 7
    assert _visible_labels(page)[0] == "dense-ft"
    page.click("th[data-col='m:R@10'] button.sort")
    assert _column(page, "R@10") == sorted(values)
    # sort by model name: alphabetical
    page.click("th[data-col='label'] button.sort")
    assert _visible_labels(page) == ["<script>alert(1)</script>", "bm25", "bm25", "colbert", "dense-ft", "model2vec", "ql"]

    # filter: drop the lexical family (bm25, ql), then only trained models
    page.uncheck("input[name='family'][value='lexical']")
    assert _visible_labels(page) == ["<script>alert(1)</script>", "bm25", "colbert", "dense-ft", "model2vec"]  # bm25 → monot5 stays
    page.check("input[name='trained'][value='trained']")
    assert _visible_labels(page) == ["dense-ft"]
    page.check("input[name='trained'][value='all']")
    page.check("input[name='family'][value='lexical']")
    assert len(_visible_labels(page)) == 7

    # significance markers against bm25: on the tested measure, linked to its comparisons' lines,
    # and on the three other measures (Holm over the 24 tests of the board)
    assert page.locator("#leaderboard a.sig.up").count() == 2
    assert page.locator("#leaderboard a.sig.down").count() == 1
    assert page.locator("#leaderboard span.sig.up").count() == 6
    assert page.locator("#leaderboard span.sig.down").count() == 3
    # ranks with their intervals, the top group marked
    ranks = page.eval_on_selector_all("#leaderboard tbody.row:not([hidden]) td.rank", "tds => tds.map(td => td.textContent)")
    assert sorted(ranks) == ["1 (1–2) top", "2 (1–3) top", "3 (2–3)", "4 (4–6)", "5 (4–6)", "6 (4–6)", "7 (7–7)"]

    # escaping: the script-named model is text, and no alert fired
    cell = page.locator("td.model > .name", has_text=XSS)
    assert cell.count() == 1 and cell.is_visible() and cell.inner_text() == XSS
    assert page.dialogs == [] and page.errors == []

    # per-fold values and provenance on expansion
    first = page.locator("#leaderboard tbody.row").first
    first.locator("details.folds summary").first.click()
    assert first.locator(".fold-table").first.is_visible()
    assert "fold-1" in first.locator(".fold-table").first.inner_text()
    first.locator("button.toggle").click()
    detail = first.locator("tr.detail")
    assert detail.is_visible() and "statbench run --task toy" in detail.inner_text()

    shot = tmp_path / "leaderboard.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert page.requests == []  # nothing tried to reach the network
