"""The build's work split with a forked child (leaderboard/forkmap.py): the same results in
the same order as one process, the child's errors raised here, a dead child's share done
again here, and one process when asked."""

from __future__ import annotations

import os
import time

import pytest
from forkspy import record_forks

from statbench.errors import StatbenchError
from statbench.leaderboard import forkmap
from statbench.leaderboard.forkmap import split_map, start

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


@pytest.fixture(autouse=True)
def two_cores(monkeypatch):
    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    monkeypatch.delenv("STATBENCH_BUILD_PROCESSES", raising=False)


def test_results_in_order_and_shared_with_a_child(tmp_path):
    parent = os.getpid()
    done_by_child = tmp_path / "child"

    def fn(i):
        if os.getpid() != parent:
            with open(done_by_child, "a") as log:  # appended a line per item the child made
                log.write(f"{i}\n")
        return i * i, os.getpid()

    def meanwhile():  # this process's own work: here, waiting until the child has made 101 items
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if done_by_child.exists() and len(done_by_child.read_text().split()) > 100:
                return "tests"
            time.sleep(0.01)
        return "the child never took its share"

    made, aside = split_map(fn, range(200), meanwhile=meanwhile, chunk=1)
    assert aside == "tests"
    assert [square for square, _ in made] == [i * i for i in range(200)]
    pids = [pid for _, pid in made]
    assert len(set(pids) - {parent}) == 1  # one child (and this process, for what was left)
    # the child was free while this process did its own work: it took more than half
    assert pids.count(parent) < 100


def test_few_items_or_one_process_asked_stay_here(monkeypatch):
    parent = os.getpid()
    made, aside = split_map(lambda i: os.getpid(), range(forkmap.MIN_ITEMS - 1))
    assert set(made) == {parent} and aside is None
    monkeypatch.setenv("STATBENCH_BUILD_PROCESSES", "1")
    made, _ = split_map(lambda i: os.getpid(), range(200))
    assert set(made) == {parent}
    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 1)
    monkeypatch.delenv("STATBENCH_BUILD_PROCESSES")
    assert set(split_map(lambda i: os.getpid(), range(200))[0]) == {parent}


def test_an_error_in_the_child_is_raised_here_as_it_was():
    parent = os.getpid()

    def fn(i):
        if os.getpid() == parent:
            time.sleep(0.01)  # slow enough here for the child to take its share, even on a busy machine
        else:
            raise StatbenchError(f"results/{i}/results.json changed while the leaderboard was being built")
        return i

    with pytest.raises(StatbenchError, match=r"^results/\d+/results.json changed while the leaderboard"):
        split_map(fn, range(100))


def test_an_exception_that_does_not_pickle_still_comes_back_with_its_text():
    parent = os.getpid()

    class Local(Exception):  # a local class: pickling it fails
        pass

    def fn(i):
        if os.getpid() == parent:
            time.sleep(0.01)
        else:
            raise Local("the child's own words")
        return i

    with pytest.raises(RuntimeError, match="the child's own words"):
        split_map(fn, range(100))


@pytest.mark.parametrize("where", ["meanwhile", "an item"])
def test_an_error_here_still_reaps_the_child(monkeypatch, where):
    parent = os.getpid()
    children = record_forks(monkeypatch)

    def fn(i):
        if os.getpid() != parent:
            time.sleep(0.02)  # the child is slow: it can never take every item before this process
            return i
        raise ValueError("here")  # whichever item this process takes first

    def meanwhile():
        raise ValueError("here")

    with pytest.raises(ValueError, match="here"):
        split_map(fn, range(40), meanwhile=meanwhile if where == "meanwhile" else None)
    assert len(children) == 1
    with pytest.raises(ChildProcessError):  # reaped: no child left behind
        os.waitpid(children[0], os.WNOHANG)


def test_a_child_that_dies_has_its_share_done_here():
    parent = os.getpid()

    def fn(i):
        time.sleep(0.002)
        if os.getpid() != parent:
            os._exit(9)  # killed without a word (as out of memory would), holding a chunk
        return i + 1

    made, _ = split_map(fn, range(100))
    assert made == [i + 1 for i in range(100)]


def test_work_begun_in_a_child_comes_back_or_is_done_here():
    parent = os.getpid()
    pending = start(lambda: ("made in", os.getpid()))
    assert pending.result(died=lambda: "died")[1] != parent

    def fails():
        raise StatbenchError("one clear line")

    with pytest.raises(StatbenchError, match="^one clear line$"):
        start(fails).result(died=lambda: "died")
    assert start(lambda: os._exit(9)).result(died=lambda: "done here") == "done here"


def test_without_a_fork_the_work_is_done_at_once(monkeypatch):
    monkeypatch.setenv("STATBENCH_BUILD_PROCESSES", "1")
    parent = os.getpid()
    assert start(os.getpid).result(died=lambda: None) == parent
