"""A row's kept markup holds no rank (leaderboard/caches/fragments.py): a rank moves whenever
any row of the board does, so the page is assembled with the board's ranks; the static page
still shows every rank (readable without JavaScript)."""

from __future__ import annotations

import re

import pytest

from statbench.errors import StatbenchError
from statbench.leaderboard.caches import fragments
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_many


def test_the_key_of_a_row_does_not_hold_its_rank():
    kept = fragments.Fragments("board", "code", root=None)
    view = {"key": "a", "cells": [{"mean": 0.5}], "comparison": None}
    part = {"tested": "R@10"}
    first = {**view, "rank": {"text": "1 (1–2)", "top": True, "why": "", "title": "top group"}}
    second = {**view, "rank": {"text": "2 (1–3)", "top": False, "why": ""}}
    assert kept.key(fragments.without_rank(first), part) == kept.key(fragments.without_rank(second), part)
    assert "rank" not in fragments.without_rank(first) and "rank" in first  # the view itself kept whole


@pytest.mark.parametrize(("rank", "cell"), [
    ({"text": "2 (1–4)", "top": False, "why": ""}, '<td class="rank">2 (1–4)</td>'),
    ({"text": "1 (1–1)", "top": True, "why": "", "title": 'not "separable" <from> the best'},
     ('<td class="rank">1 (1–1) <span class="top-group" title="not &#34;separable&#34; &lt;from&gt; the best">'
      'top</span></td>')),
    ({"text": None, "top": False, "why": "no per-query scores on R@10 & more"},
     '<td class="rank"><span class="unranked" title="no per-query scores on R@10 &amp; more">—</span></td>'),
    (None, '<td class="rank"><span class="unranked" title="not ranked">—</span></td>'),
])
def test_the_rank_cell_is_filled_in_escaped(rank, cell):
    html = f"<tbody><tr><td>x</td>{fragments.RANK_SLOT}<td>y</td></tr></tbody>"
    assert fragments.fill_rank(html, rank) == f"<tbody><tr><td>x</td>{cell}<td>y</td></tr></tbody>"


@pytest.mark.parametrize("slots", [0, 2])
def test_markup_without_exactly_one_slot_is_refused(slots):
    with pytest.raises(StatbenchError, match="no single rank cell"):
        fragments.fill_rank("<tr>" + fragments.RANK_SLOT * slots + "</tr>", {"text": "1 (1–1)", "top": False})


def test_a_row_whose_rank_moved_is_not_rendered_again(tmp_path, monkeypatch):
    """Rows that only moved in rank take their kept markup; the page shows the new ranks."""
    made: list[str] = []
    real = fragments.Fragments.put
    monkeypatch.setattr(fragments.Fragments, "put", lambda self, key, html: made.append(key) or real(self, key, html))
    from statbench.leaderboard.render import board_files

    results = tmp_path / "results"
    write_many(results, 12)
    build_site(results, tmp_path / "site", page_size=50)
    first = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    ranks = re.findall(r'<td class="rank">([^<]*)', first)
    assert len(ranks) == 12 and all(re.fullmatch(r"\d+ \(\d+–\d+\) ?", r) for r in ranks)
    assert "<!--rank-->" not in first
    made.clear()
    # every rank moved (what a new row does to a board), nothing else of any row
    real_fill = board_files.fill_rank
    monkeypatch.setattr(board_files, "fill_rank",
                        lambda html, rank: real_fill(html, dict(rank, text="9 (9–9)") if rank and rank["text"] else rank))
    # into another folder: the board is rendered, its rows' markup taken from the kept fragments
    # (their views read back from the row views' cache: keyed alike, .boardkept.canonical_pickle)
    build_site(results, tmp_path / "site2", page_size=50)
    assert made == []
    second = (tmp_path / "site2" / "task-toy.html").read_text("utf-8")
    assert [r.strip() for r in re.findall(r'<td class="rank">([^<]*)', second)] == ["9 (9–9)"] * 12
    assert second.count('<span class="top-group"') == first.count('<span class="top-group"') >= 1


def test_equal_views_shared_differently_have_one_key():
    """A view made fresh (one string object in two places) and the same view read back from
    a cache (two equal strings) are one key: else a rebuild renders every row again."""
    import pickle

    kept = fragments.Fragments("board", "code", root=None)
    label = "R@10"
    fresh = {"cells": [{"label": label}, {"label": label}]}  # one object, twice
    read_back = pickle.loads(pickle.dumps({"cells": [{"label": "R@10"}, {"label": label[:2] + label[2:]}]}))
    assert read_back["cells"][0]["label"] is not read_back["cells"][1]["label"]
    assert kept.key(fresh, {}) == kept.key(read_back, {})
    assert kept.key(fresh, {}) != kept.key({"cells": [{"label": "R@10"}, {"label": "R@100"}]}, {})


def test_kept_markup_without_its_rank_slot_is_rendered_anew():
    kept = fragments.Fragments("board", "code", root=None)
    kept.known = {"a": "<tbody>no slot</tbody>", "b": f"<tbody>{fragments.RANK_SLOT}</tbody>",
                  "c": f"<tbody>{fragments.RANK_SLOT * 2}</tbody>"}
    assert kept.get("a") is None and kept.get("c") is None
    assert kept.get("b") == f"<tbody>{fragments.RANK_SLOT}</tbody>" and list(kept.used) == ["b"]
