"""A board with many measures at 1,400 px (issue 25): the table scrolls sideways, but a
row's identity (the model column) and its details stay on screen, wherever the table is
scrolled, on the first page and on the rows the script builds."""

from __future__ import annotations

import pytest

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import make_results, reranker_record, write_result

#: 13 measures, as the board that scrolled its Details column away had
MEASURES = ("R@1", "R@2", "R@3", "R@5", "R@10", "R@20", "R@50", "R@100", "R@200", "MRR@10", "MAP@100",
            "nDCG@10", "nDCG@100")
VIEWPORT = 1400


def _scores(value: float) -> dict:
    return {f"q{i}": {m: value + i / 100 for m in MEASURES} for i in range(6)}


@pytest.fixture
def wide_site(tmp_path):
    root = tmp_path / "results"
    folds = {"fold-1": ["q0", "q1", "q2"], "fold-2": ["q3", "q4", "q5"]}
    write_result(root / "bm25", make_results(_scores(0.3), measures=MEASURES, splits=folds))
    write_result(root / "ce", make_results(
        _scores(0.5), measures=MEASURES, splits=folds, model="bm25", params={"k1": 0.9, "b": 0.4},
        reranker=reranker_record("cross-encoder", params={"model": "cross-encoder/ms-marco-MiniLM-L-6-v2",
                                                          "max_length": 512}), pool="bm25"))
    build_site(root, tmp_path / "site")
    return tmp_path / "site"


def _box(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not rendered"
    return box


def _on_screen(box: dict) -> bool:
    return box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT and box["width"] > 0


def _check_identity_and_details(page) -> None:
    wrap = page.locator(".table-wrap")
    overflow = wrap.evaluate("w => w.scrollWidth - w.clientWidth")
    assert overflow > 0, "the board should be wider than the screen for this test to mean anything"
    for scroll in (0, overflow // 2, overflow):
        wrap.evaluate(f"w => {{ w.scrollLeft = {scroll}; }}")
        for selector in ("#leaderboard thead th[data-col='label']", "#leaderboard tbody.row tr.main td.model",
                         "#leaderboard tbody.row tr.main button.toggle, #leaderboard tbody.row tr.main a.details-link"):
            box = _box(page, selector)
            assert _on_screen(box), f"{selector} off screen at scrollLeft={scroll}: {box}"
    # the identity cell is not painted over by the measure cells scrolling under it
    wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
    box = _box(page, "#leaderboard tbody.row tr.main td.model")
    topmost = page.evaluate(f"() => document.elementFromPoint({box['x'] + 5}, {box['y'] + box['height'] / 2})"
                            ".closest('td').className")
    assert topmost == "model"


def test_identity_and_details_stay_visible_on_a_wide_board(page, wide_site):
    page.goto((wide_site / "task-toy.html").as_uri())
    assert page.viewport_size["width"] == VIEWPORT
    assert page.locator("#leaderboard thead th.num").count() == len(MEASURES)
    _check_identity_and_details(page)

    # the details open in view, wherever the table was scrolled
    page.locator(".table-wrap").evaluate("w => { w.scrollLeft = w.scrollWidth; }")
    page.locator("#leaderboard tbody.row tr.main button.toggle").first.click()
    detail = _box(page, "#leaderboard tr.detail:not([hidden]) dl.prov")
    assert _on_screen(detail) or (detail["x"] >= 0 and detail["x"] < VIEWPORT / 2), detail
    assert _on_screen(_box(page, "#leaderboard tr.detail:not([hidden]) dl.prov dd.cmd code"))

    # rows rebuilt by the script (sorting) keep the same layout
    page.click("th[data-col='m:R@10'] button.sort")
    _check_identity_and_details(page)
    assert page.errors == [] and page.requests == []
