"""A build renders with the cycle collector off (its passes over the boards' views were ~1.3 s
of a rebuild at 10,000 results) and leaves it as it found it: enabled, nothing frozen, even
when the build fails."""

from __future__ import annotations

import gc

import pytest
from overview_fixtures import write_mini

from statbench.errors import StatbenchError
from statbench.leaderboard.render import build
from statbench.leaderboard.render.build import build_site


def test_the_boards_render_without_the_cycle_collector_and_it_is_restored(tmp_path, monkeypatch):
    write_mini(tmp_path / "results")
    seen = []
    real = build._build_from

    def spy(*args, **kwargs):
        seen.append((gc.isenabled(), gc.get_freeze_count() > 0))
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "_build_from", spy)
    assert gc.isenabled()
    build_site(tmp_path / "results", tmp_path / "site", copy_runs=False)
    assert seen == [(False, True)]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_failing_build_restores_the_collector(tmp_path, monkeypatch):
    write_mini(tmp_path / "results")

    def fails(*args, **kwargs):
        raise StatbenchError("boom")

    monkeypatch.setattr(build, "_build_from", fails)
    with pytest.raises(StatbenchError, match="boom"):
        build_site(tmp_path / "results", tmp_path / "site", copy_runs=False)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_collector_switched_off_by_the_caller_stays_off(tmp_path):
    write_mini(tmp_path / "results")
    gc.disable()
    try:
        build_site(tmp_path / "results", tmp_path / "site", copy_runs=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
