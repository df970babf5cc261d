"""A folder replaced in one step (statbench.data.atomic, issue 33 §3): the target is the
old folder whole or the new one whole at every instant, a kill included; what a killed run
left beside it is reclaimed by the next run (a live run's never); one writer at a time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from statbench.data import atomic
from statbench.data.atomic import reclaim, replace_dir, staging_dir
from statbench.errors import StatbenchError
from statbench.storage.folder_locks import FolderBusyError, folder_lock, staged_dir


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _make(folder: Path, tag: str) -> Path:
    (folder / "sub").mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(f"index {tag}")
    (folder / "sub" / "page.html").write_text(f"page {tag}")
    return folder


def _beside(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.iterdir() if p.name != target.name)


OLD = {"index.html": "index old", "sub/page.html": "page old"}
NEW = {"index.html": "index new", "sub/page.html": "page new"}


def test_an_absent_target_is_one_rename(tmp_path):
    target = tmp_path / "site"
    staging = _make(staging_dir(target), "new")
    assert staging.parent == tmp_path and staging.name.startswith(f".site.staging-{os.getpid()}-")
    replace_dir(staging, target)
    assert _tree(target) == NEW and _beside(target) == []


def test_an_existing_target_is_exchanged_and_the_old_tree_removed(tmp_path):
    target = _make(tmp_path / "site", "old")
    (target / "gone.html").write_text("only in the old")
    replace_dir(_make(staging_dir(target), "new"), target)
    assert not target.is_symlink() and _tree(target) == NEW and _beside(target) == []


def test_without_exchange_the_target_becomes_a_link_swapped_in_one_rename(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "exchange_dirs", lambda a, b: False)
    target = _make(tmp_path / "site", "old")
    replace_dir(_make(staging_dir(target), "new"), target)
    assert target.is_symlink() and _tree(target) == NEW
    [version] = _beside(target)
    assert version.startswith(".site.v-") and os.readlink(target) == version
    replace_dir(_make(staging_dir(target), "third"), target)
    [version2] = _beside(target)  # the previous version removed, one link, one version
    assert version2 != version and os.readlink(target) == version2 and _tree(target)["index.html"] == "index third"
    assert reclaim(target) == [] and _tree(target)["index.html"] == "index third"  # the live version is kept


def test_staged_dir_replaces_on_success_and_leaves_the_target_on_failure(tmp_path):
    target = _make(tmp_path / "site", "old")
    with pytest.raises(RuntimeError):
        with staged_dir(target) as staging:
            _make(staging, "new")
            raise RuntimeError("half written")
    assert _tree(target) == OLD and _beside(target) == []
    with staged_dir(target) as staging:
        _make(staging, "new")
    assert _tree(target) == NEW and _beside(target) == []


_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from statbench.data import atomic
    from statbench.storage.folder_locks import staged_dir
    if sys.argv[2] == "no-exchange":
        atomic.exchange_dirs = lambda a, b: False
    target = Path(sys.argv[1])
    with staged_dir(target) as staging:
        (staging / "sub").mkdir()
        (staging / "index.html").write_text("index new")
        (staging / "sub" / "page.html").write_text("page new")
""")


def _killed_at(point: str, target: Path, tmp_path: Path, mode: str = "exchange") -> None:
    """Run a replacement of ``target`` in a child, SIGKILL it at ``point`` of replace_dir."""
    signal_file = tmp_path / f"paused-{point}"
    env = dict(os.environ, **{atomic.PAUSE_ENV: f"{point}:{signal_file}"})
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(target), mode], env=env)
    try:
        deadline = time.monotonic() + 60
        while not signal_file.exists():
            assert child.poll() is None, "the child ended before the pause point"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


@pytest.mark.parametrize("point, expected", [("replace", OLD), ("replaced", NEW)])
def test_a_kill_at_the_swap_leaves_one_whole_target_and_the_next_run_reclaims(tmp_path, point, expected):
    target = _make(tmp_path / "out" / "site", "old")
    _killed_at(point, target, tmp_path)
    assert _tree(target) == expected  # whole: the old one before the exchange, the new one after
    [leftover] = _beside(target)
    assert leftover.startswith(".site.staging-") and leftover.split("-")[1] != str(os.getpid())
    with staged_dir(target) as staging:
        _make(staging, "next")
    assert _tree(target)["index.html"] == "index next" and _beside(target) == []


def test_a_kill_between_the_two_renames_of_the_first_relink_is_repaired_by_the_next_run(tmp_path):
    """The one window of the fallback (a plain folder turned into a link): documented,
    and the moved-aside folder is put back before anything else."""
    target = _make(tmp_path / "out" / "site", "old")
    _killed_at("relink", target, tmp_path, mode="no-exchange")
    assert not os.path.lexists(target)
    assert sorted(n.split("-")[0] for n in _beside(target)) == [".site.link", ".site.old", ".site.v"]
    removed = reclaim(target)
    assert _tree(target) == OLD and not target.is_symlink() and _beside(target) == []
    assert sorted(p.name.split("-")[0] for p in removed) == [".site.link", ".site.v"]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_reclaim_takes_a_dead_runs_leftovers_never_a_live_runs(tmp_path):
    target = _make(tmp_path / "site", "old")
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = _dead_pid()
        keep = [target.with_name(f".site.staging-{live.pid}-{'a' * 12}"),
                target.with_name(f".site.staging-{os.getpid()}-{'b' * 12}"),  # this process's own
                target.with_name(".site.staging-cccccccccccc"),  # no process id, recent: kept
                target.with_name(f".other.staging-{dead}-{'d' * 12}"),  # another target's
                target.with_name(f".site.staging-{dead}-x"),  # not our pattern
                target.with_name("site.staging-1-aaaaaaaaaaaa")]  # not hidden: not ours
        gone = [target.with_name(f".site.staging-{dead}-{'e' * 12}"),
                target.with_name(f".site.old-{dead}-{'f' * 12}"),
                target.with_name(f".site.link-{dead}-{'0' * 12}")]
        for path in keep + gone[:2]:
            _make(path, "left")
        os.symlink("nowhere", gone[2])
        aged = target.with_name(f".site.staging-{live.pid}-{'1' * 12}")  # a live (reused?) id, but a day old
        legacy = target.with_name(".site.ab12CD_x.tmp.old")  # today's code's name, a day old
        for path in (aged, legacy):
            _make(path, "left")
            os.utime(path, (time.time() - 2 * 86400,) * 2)
        removed = reclaim(target)
        assert sorted(removed) == sorted(gone + [aged, legacy])
        assert all(p.exists() for p in keep) and not any(os.path.lexists(p) for p in gone + [aged, legacy])
        assert _tree(target) == OLD  # the target itself is never touched
    finally:
        live.kill()
        live.wait()


def test_a_second_writer_waits_saying_so_then_stops_in_one_line(tmp_path):
    target = tmp_path / "site"
    said = []
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from statbench.storage.folder_locks import folder_lock
        with folder_lock(Path({str(target)!r})):
            Path({str(tmp_path / 'held')!r}).touch()
            time.sleep(60)
    """)])
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "held").exists():
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        with pytest.raises(FolderBusyError) as caught:
            with folder_lock(target, timeout=0.2, on_wait=said.append, what="another build"):
                pytest.fail("the lock was held by the other process")
        assert isinstance(caught.value, StatbenchError) and "\n" not in str(caught.value)
        assert str(caught.value) == (f"{target}: another build kept writing it for over 0.2 s; nothing was written "
                                     "(try again when it has finished)")
        assert said == [f"{target}: another build is writing it; waiting up to 0.2 s for it to finish"]
    finally:
        holder.kill()
        holder.wait()
    with folder_lock(target, timeout=5, on_wait=said.append):  # a dead holder's lock is free
        pass
    assert len(said) == 1 and not any(tmp_path.glob(".site*"))  # nothing beside the folder
