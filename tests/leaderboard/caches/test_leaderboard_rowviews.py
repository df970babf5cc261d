"""Rows' views kept between builds (leaderboard/caches/rowviews.py): a board that gained a row does
not load the records of rows it showed before, the site equals one built from nothing, a row
whose file changed is viewed anew, and a damaged views file is not used."""

from __future__ import annotations

import json
from pathlib import Path

from statbench.leaderboard.collect import rowheads
from statbench.leaderboard.collect import rows as collect_rows
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_many


def _tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and p.name != ".statbench-site"}


def _count_loads(monkeypatch) -> list:
    loaded = []
    real = rowheads.load_record  # called by a head row, where it is imported
    monkeypatch.setattr(collect_rows, "load_record", lambda entry: loaded.append(entry.path) or real(entry))
    return loaded


def test_a_board_that_gained_a_row_loads_few_records_and_equals_a_fresh_build(tmp_path, monkeypatch):
    monkeypatch.setenv("STATBENCH_BUILD_PROCESSES", "1")  # loads counted in this process
    results = tmp_path / "results"
    write_many(results, 60)
    build_site(results, tmp_path / "site", page_size=10)
    write_many(tmp_path / "more", 61)
    (results / "r0060").mkdir()
    for file in (tmp_path / "more" / "r0060").iterdir():
        (results / "r0060" / file.name).write_bytes(file.read_bytes())
    loaded = _count_loads(monkeypatch)
    report = build_site(results, tmp_path / "site", page_size=10)
    assert report.rendered == ["toy"]
    # the baseline (the new row is tested against it) and the rows the charts draw, not all 60
    assert 1 <= len(loaded) <= 20, len(loaded)
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh"))
    build_site(results, tmp_path / "fresh-site", page_size=10)
    assert _tree(tmp_path / "site") == _tree(tmp_path / "fresh-site")


def test_a_row_whose_file_changed_is_viewed_anew(tmp_path):
    results = tmp_path / "results"
    write_many(results, 20)
    build_site(results, tmp_path / "site")
    file = results / "r0007" / "results.json"
    data = json.loads(file.read_text("utf-8"))
    data["command"] = "statbench run --task toy --model m007 --param note=changed"
    file.write_text(json.dumps(data), "utf-8")
    build_site(results, tmp_path / "site")
    page = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "note=changed" in page


def test_a_damaged_views_file_is_not_used(tmp_path):
    from statbench.storage.paths import cache_root

    results = tmp_path / "results"
    write_many(results, 30)
    build_site(results, tmp_path / "site", page_size=10)
    before = _tree(tmp_path / "site")
    (kept,) = (cache_root() / "leaderboard-views").iterdir()
    data = bytearray(kept.read_bytes())
    data[-40] ^= 0xFF  # one byte of the payload: its frame's sha256 no longer agrees
    kept.write_bytes(bytes(data))
    build_site(results, tmp_path / "again", page_size=10)
    assert _tree(tmp_path / "again") == before
