"""Rows' markup kept between builds (leaderboard/caches/fragments.py): a board that gained a row
renders only the rows whose printed line changed, the site equals one built from nothing,
and a damaged or forged-looking fragments file is not used."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from statbench.leaderboard.caches import fragments
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_many


def _tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and p.name != ".statbench-site"}


@pytest.fixture
def rendered(monkeypatch):
    """The keys of the rows rendered (not taken from the kept fragments), per build."""
    made: list[str] = []
    real = fragments.Fragments.put
    monkeypatch.setattr(fragments.Fragments, "put", lambda self, key, html: made.append(key) or real(self, key, html))
    return made


def _add_row(results: Path, tmp_path: Path, n: int) -> None:
    write_many(tmp_path / "more", n + 1)
    folder = results / f"r{n:04d}"
    folder.mkdir()
    for file in (tmp_path / "more" / folder.name).iterdir():
        (folder / file.name).write_bytes(file.read_bytes())


def test_a_board_that_gained_a_row_renders_only_changed_rows(tmp_path, monkeypatch, rendered):
    results = tmp_path / "results"
    write_many(results, 60)
    build_site(results, tmp_path / "site", page_size=10)
    assert len(rendered) == 60
    rendered.clear()
    _add_row(results, tmp_path, 60)
    report = build_site(results, tmp_path / "site", page_size=10)
    assert report.rendered == ["toy"]
    # the new row, and rows whose printed comparison changed (Holm's p over one more test)
    assert 1 <= len(rendered) < 61
    site = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert len(re.findall(r'<tbody class="row', site)) == 10
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh"))
    rendered.clear()
    build_site(results, tmp_path / "fresh-site", page_size=10)
    assert len(rendered) == 61
    assert _tree(tmp_path / "site") == _tree(tmp_path / "fresh-site")


def test_a_damaged_fragments_file_is_not_used(tmp_path, rendered):
    from statbench.storage.paths import cache_root

    results = tmp_path / "results"
    write_many(results, 30)
    build_site(results, tmp_path / "site", page_size=10)
    before = _tree(tmp_path / "site")
    (kept,) = (cache_root() / "leaderboard-fragments").iterdir()
    data = kept.read_bytes()
    # a row's markup edited in the kept file (its frame's sha256 then no longer agrees)
    kept.write_bytes(data.replace(b"zero-shot", b"trained!!", 1))
    rendered.clear()
    build_site(results, tmp_path / "again", page_size=10)
    assert len(rendered) == 30  # every row rendered anew: nothing taken from the damaged file
    assert _tree(tmp_path / "again") == before


def test_the_key_changes_with_what_a_row_prints():
    kept = fragments.Fragments("board", "code", root=None)
    view = {"key": "a", "cells": [{"mean": 0.5}], "comparison": None}
    part = {"tested": "R@10", "baseline": "bm25"}
    key = kept.key(view, part)
    assert kept.key(dict(view), dict(part)) == key
    assert kept.key({**view, "cells": [{"mean": 0.5000001}]}, part) != key
    assert kept.key(view, {**part, "baseline": "bm25 (k1=1.2)"}) != key
    assert fragments.Fragments("board", "other code").key(view, part) != key
    assert kept.key({**view, "comparison": {"p_holm": "0.0123"}}, part) != kept.key(
        {**view, "comparison": {"p_holm": "0.0124"}}, part)
    assert kept.key({**view, "cells": [{"mean": None}]}, part) != kept.key({**view, "cells": [{"mean": float("nan")}]}, part)
    assert kept.key({**view, "trained": True}, part) != kept.key({**view, "trained": 1}, part)
