"""The efficiency and cost columns in headless Chromium (file://, network off): hidden by
default, shown by one switch on the rows the page holds and on those the script builds
(page 2 of a large board), blank where not measured; sorting by one puts the unmeasured
rows last. No timing is asserted."""

from __future__ import annotations

import json

import pytest

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.efficiency import COLUMNS
from statbench.leaderboard.sample import write_many

N = 60


@pytest.fixture
def eff_site(tmp_path):
    paths = write_many(tmp_path / "results", N)
    for i, path in enumerate(paths):
        if i % 2:  # every other row measured, with a latency that grows with i
            data = json.loads(path.read_text("utf-8"))
            data["efficiency"] = {"index_seconds": float(i), "throughput_qps": 100.0 + i,
                                  "query_latency": {"median_ms": 1.0 + i, "p95_ms": 2.0 + i, "batch_size": 8, "queries": 12}}
            path.write_text(json.dumps(data), encoding="utf-8")
    build_site(tmp_path / "results", tmp_path / "site")
    return tmp_path / "site"


def _visible(page, selector: str) -> int:
    return page.eval_on_selector_all(selector, "els => els.filter(e => e.getClientRects().length > 0).length")


def test_efficiency_columns_hidden_until_the_switch(page, eff_site):
    page.goto((eff_site / "task-toy.html").as_uri())
    assert page.locator("#leaderboard thead th.eff").count() == len(COLUMNS)
    assert _visible(page, "#leaderboard th.eff, #leaderboard td.eff") == 0
    assert not page.is_checked("#show-efficiency")
    page.check("#show-efficiency")
    assert _visible(page, "#leaderboard thead th.eff") == len(COLUMNS)
    rows = page.locator("#leaderboard tbody.row").count()
    assert rows == 50 and _visible(page, "#leaderboard tbody.row tr.main td.eff") == rows * len(COLUMNS)
    # blank where not measured: the bm25 row (row 0) has no efficiency record
    texts = page.eval_on_selector_all("#leaderboard tbody.row[data-key] tr.main",
                                      "trs => trs.map(tr => Array.from(tr.querySelectorAll('td.eff')).map(td => td.textContent))")
    assert any(all(t == "" for t in row) for row in texts) and any(row[1].endswith(" ms") for row in texts)
    assert not any(t.strip() in ("0", "0 s", "0 ms") for row in texts for t in row)
    # the rows the script builds (page 2) have the columns too, shown
    page.locator("nav.lb-pager button[data-page='next']").first.click()
    built = page.locator("#leaderboard tbody.row").count()
    assert built == N - 50 and _visible(page, "#leaderboard tbody.row tr.main td.eff") == built * len(COLUMNS)
    # sort by median latency: ascending on the second click, unmeasured rows last either way
    page.locator("nav.lb-pager button[data-page='0']").first.click()
    header = "th[data-col='e:latency_median'] button.sort"
    page.click(header)
    page.click(header)
    assert page.get_attribute("th[data-col='e:latency_median']", "aria-sort") == "ascending"
    column = [c for c in range(len(COLUMNS)) if COLUMNS[c].key == "latency_median"][0]
    values = [row[column] for row in page.eval_on_selector_all(
        "#leaderboard tbody.row tr.main",
        "trs => trs.map(tr => Array.from(tr.querySelectorAll('td.eff')).map(td => td.textContent))")]
    measured = [float(v.split()[0]) for v in values if v]
    assert len(measured) == N // 2 and measured == sorted(measured) and values[:len(measured)] == [v for v in values if v]
    # the switch off again hides them; the view (sort, page) stays as it was
    page.uncheck("#show-efficiency")
    assert _visible(page, "#leaderboard td.eff") == 0
    assert page.get_attribute("th[data-col='e:latency_median']", "aria-sort") == "ascending"
    assert page.errors == [] and page.requests == []
