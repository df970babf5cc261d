"""The overview in ``leaderboard build`` (render/build.py): the first page holds each declared
benchmark's overview and static/overview.js is written beside it."""

from __future__ import annotations

from overview_fixtures import mini_benchmark, write_mini

from statbench.leaderboard.render.build import build_site


def test_the_build_writes_the_overview_and_its_script(tmp_path):
    write_mini(tmp_path / "results")
    with mini_benchmark():
        build_site(tmp_path / "results", tmp_path / "site", copy_runs=False)
    html = (tmp_path / "site" / "index.html").read_text("utf-8")
    assert 'id="benchmark-mini-v1"' in html and '<a href="task-stard.html">0.8000</a>' in html
    assert (tmp_path / "site" / "static" / "overview.js").is_file()


def test_a_rebuild_with_nothing_changed_gives_the_same_overview(tmp_path):
    write_mini(tmp_path / "results")
    with mini_benchmark():
        build_site(tmp_path / "results", tmp_path / "site", copy_runs=False)
        first = (tmp_path / "site" / "index.html").read_bytes()
        build_site(tmp_path / "results", tmp_path / "site", copy_runs=False)
    assert (tmp_path / "site" / "index.html").read_bytes() == first


def _mini_index(tmp_path, name: str) -> bytes:
    with mini_benchmark():
        build_site(tmp_path / "results", tmp_path / name, copy_runs=False)
    return (tmp_path / name / "index.html").read_bytes()


def test_the_overview_made_in_a_fork_is_the_one_made_in_one_process(tmp_path, monkeypatch):
    from statbench.leaderboard import forkmap

    write_mini(tmp_path / "results")
    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    forked = _mini_index(tmp_path, "forked")
    monkeypatch.setenv("STATBENCH_BUILD_PROCESSES", "1")
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh"))
    assert _mini_index(tmp_path, "one") == forked and b'id="benchmark-mini-v1"' in forked


def test_a_fork_that_dies_making_the_overview_has_it_made_here(tmp_path, monkeypatch):
    import os

    from statbench.leaderboard import forkmap
    from statbench.leaderboard.render import build

    write_mini(tmp_path / "results")
    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    expected = _mini_index(tmp_path, "first")
    parent, real = os.getpid(), build.overview_sections

    def dies_in_the_fork(*args):
        if os.getpid() != parent:
            os._exit(1)  # killed, out of memory: no word sent
        return real(*args)

    monkeypatch.setattr(build, "overview_sections", dies_in_the_fork)
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh"))  # nothing kept: the overview is made again
    assert _mini_index(tmp_path, "second") == expected


def test_a_site_of_no_declared_benchmark_has_no_overview_script(tmp_path):
    from statbench.leaderboard.sample import write_many

    write_many(tmp_path / "results", 3)
    build_site(tmp_path / "results", tmp_path / "site", copy_runs=False)
    assert not (tmp_path / "site" / "static" / "overview.js").exists()
    assert "overview.js" not in (tmp_path / "site" / "index.html").read_text("utf-8")
