"""A site is replaced in one step (issue 33 §3): a build killed at the swap leaves the old
site or the new one whole, never none; the next build reclaims what it left; two builds
into one ``--out`` both complete (the second waits, saying so) and the site is one of
them whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statbench.data.atomic import PAUSE_ENV
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.explorer import TaskTexts
from statbench.leaderboard.sample import write_sample


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _cli(results: Path, out: Path, *extra: str, pause: str | None = None, stderr=subprocess.PIPE) -> subprocess.Popen:
    env = dict(os.environ)
    if pause is not None:
        env[PAUSE_ENV] = pause
    return subprocess.Popen([sys.executable, "-m", "statbench.commands.cli", "leaderboard", "build", "--results",
                             str(results), "--out", str(out), *extra], env=env, stdout=subprocess.PIPE,
                            stderr=stderr, text=True)


def _wait_for(path: Path, child: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        if child.poll() is not None:
            pytest.fail(f"the build ended before its pause: {child.communicate()}")
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.fixture
def two_sites(tmp_path):
    """A results folder, its site built with the default baseline (``site``) and the site
    another baseline gives (``other``, built apart): what a rebuild may leave."""
    results = tmp_path / "results"
    write_sample(results)
    build_site(results, tmp_path / "out" / "site", explorer=TaskTexts())  # as the command builds it
    build_site(results, tmp_path / "other", baseline="dense-ft", explorer=TaskTexts())
    first, other = _tree(tmp_path / "out" / "site"), _tree(tmp_path / "other")
    assert first != other
    return results, tmp_path / "out" / "site", first, other


@pytest.mark.parametrize("point, which", [("replace", "first"), ("replaced", "other")])
def test_a_build_killed_at_the_swap_leaves_one_whole_site_and_the_next_reclaims(tmp_path, two_sites, point, which):
    results, site, first, other = two_sites
    signal_file = tmp_path / "paused"
    child = _cli(results, site, "--baseline", "dense-ft", pause=f"{point}:{signal_file}")
    try:
        _wait_for(signal_file, child)
        child.send_signal(signal.SIGKILL)
    finally:
        child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    assert _tree(site) == (first if which == "first" else other)  # whole, never absent
    assert [p.name.split("-")[0] for p in site.parent.iterdir() if p != site] == [".site.staging"]
    report = build_site(results, site, explorer=TaskTexts())
    assert report.problems == [] and sorted(p.name for p in site.parent.iterdir()) == ["site"]  # reclaimed
    assert _tree(site) == first


def test_two_builds_into_one_folder_take_turns(tmp_path, two_sites):
    results, site, first, other = two_sites
    signal_file, said = tmp_path / "paused", tmp_path / "b.err"
    a = _cli(results, site, "--baseline", "dense-ft", pause=f"replace:{signal_file}")
    b = None
    try:
        _wait_for(signal_file, a)
        with open(said, "w") as err:
            b = _cli(results, site, stderr=err)  # starts while the first holds the folder
        waiting = f"note: {site}: another build is writing it; waiting up to 600 s for it to finish"
        deadline = time.monotonic() + 120
        while waiting not in said.read_text():  # the second says it waits before the first is let go
            assert b.poll() is None and time.monotonic() < deadline, said.read_text()
            time.sleep(0.05)
        assert _tree(site) == first  # neither has replaced it yet
        signal_file.unlink()  # the first goes on
        _, err_a = a.communicate(timeout=120)
        b.communicate(timeout=120)
    finally:
        for child in (a, b):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()
    err_b = said.read_text()
    assert (a.returncode, b.returncode) == (0, 0), (err_a, err_b)
    assert "Traceback" not in err_a + err_b and err_b.splitlines().count(waiting) == 1
    assert _tree(site) == first  # the second (the default baseline) finished last, whole
    assert sorted(p.name for p in site.parent.iterdir()) == ["site"]
