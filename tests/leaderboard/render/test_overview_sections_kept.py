"""The first page's overview sections kept between builds (render/overview_cache.SectionsCache,
render/build.py): a build of the same boards takes them instead of making the overview again; a
changed board or benchmark makes them anew; a kept file that is damaged, holds other inputs'
sections or is not sections is never used: they are made again, the same as from nothing."""

from __future__ import annotations

import json

import pytest
from overview_fixtures import mini_benchmark, write_mini, write_run

from statbench.leaderboard.render import build
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.overview_cache import _SECTIONS_MAGIC, SectionsCache, sections_digest
from statbench.storage.cache_files import write_framed


def _index(tmp_path, name: str) -> str:
    with mini_benchmark():
        build_site(tmp_path / "results", tmp_path / name, copy_runs=False)
    return (tmp_path / name / "index.html").read_text("utf-8")


@pytest.fixture
def made(tmp_path, monkeypatch):
    """How many times the overview sections were made (in this process or a fork: noted in a file)."""
    log, real = tmp_path / "made", build.overview_sections

    def noted(*args):
        with log.open("a") as out:
            out.write("made\n")
        return real(*args)

    monkeypatch.setattr(build, "overview_sections", noted)
    return lambda: len(log.read_text().split()) if log.exists() else 0


def test_a_build_of_the_same_boards_takes_the_kept_sections(tmp_path, made):
    write_mini(tmp_path / "results")
    first = _index(tmp_path, "site")
    assert made() == 1 and 'id="benchmark-mini-v1"' in first
    assert _index(tmp_path, "site") == first and made() == 1  # nothing changed: not made again
    assert _index(tmp_path, "other-site") == first and made() == 1  # a full build of the same results too


def test_a_changed_board_makes_them_anew(tmp_path, made):
    write_mini(tmp_path / "results")
    first = _index(tmp_path, "site")
    write_run(tmp_path / "results", "stard", "model-c", 0.9, family="dense")  # the same file, other figures
    after = _index(tmp_path, "site")
    assert made() == 2 and after != first and '<a href="task-stard.html">0.9000</a>' in after


@pytest.mark.parametrize("damage", ["bytes", "other inputs", "not sections"])
def test_a_kept_file_that_is_not_these_sections_is_never_used(tmp_path, made, damage, monkeypatch):
    write_mini(tmp_path / "results")
    first = _index(tmp_path, "site")
    kept = SectionsCache()
    if damage == "bytes":
        data = kept.file.read_bytes()
        kept.file.write_bytes(data.replace(b"benchmark-mini-v1", b"benchmark-evil-v1"))
    elif damage == "other inputs":
        stored = json.loads(kept.file.read_bytes().split(b"\n", 2)[2])
        write_framed(kept.file, _SECTIONS_MAGIC, json.dumps({**stored, "digest": "0" * 64, "html": "evil"}).encode())
    else:
        stored = json.loads(kept.file.read_bytes().split(b"\n", 2)[2])
        write_framed(kept.file, _SECTIONS_MAGIC, json.dumps({**stored, "html": ["evil"]}).encode())
    again = _index(tmp_path, "site")
    assert again == first and "evil" not in again and made() == 2
    assert _index(tmp_path, "site") == first and made() == 2  # kept again, and it verifies


def test_the_digest_names_every_board_and_the_declared_benchmarks():
    boards = {"stard": "a" * 64, "ukstat": "b" * 64}
    digest = sections_digest(boards)
    assert sections_digest(dict(boards)) == digest
    assert sections_digest({**boards, "ukstat": "c" * 64}) != digest
    assert sections_digest({"ukstat": "b" * 64, "stard": "a" * 64}) != digest  # the boards' order is the page's
    assert sections_digest({"stard": "a" * 64}) != digest
    with mini_benchmark():  # another benchmark declared: other columns, other sections
        assert sections_digest(boards) != digest
