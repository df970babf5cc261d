"""How many worker processes a command may use and whether it may fork them
(harness/run/processes.py): one answer for a run's split fork, the lexical models' analysis
workers and a leaderboard build's forks."""

from __future__ import annotations

import os
import sys
import time

import pytest

from statbench.errors import StatbenchError
from statbench.run import processes
from statbench.run.processes import ForkedChild, can_fork, configured_workers, usable_cpus


@pytest.mark.parametrize("module", ["torch", "jnius"])  # torch's thread pools; pyserini's JVM bridge
def test_can_fork_unless_a_module_with_threads_of_its_own_is_loaded(monkeypatch, module):
    for name in processes.FORK_UNSAFE:  # earlier tests of a whole session may have loaded some
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert can_fork() == hasattr(os, "fork")
    monkeypatch.setitem(sys.modules, module, object())
    assert not can_fork()


@pytest.mark.parametrize(("value", "expected"), [(None, None), ("", None), ("  ", None), ("3", 3), (" 1 ", 1)])
def test_configured_workers(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("STATBENCH_WORKERS", raising=False)
    else:
        monkeypatch.setenv("STATBENCH_WORKERS", value)
    assert configured_workers() == expected


def test_workers_must_be_a_whole_number(monkeypatch):
    monkeypatch.setenv("STATBENCH_WORKERS", "two")
    with pytest.raises(StatbenchError, match="^STATBENCH_WORKERS='two': expected a whole number$"):
        configured_workers()


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no affinity mask here")
def test_usable_cpus_are_the_affinity_mask_s():
    assert usable_cpus() == len(os.sched_getaffinity(0))


class _Child(ForkedChild):
    def __init__(self, exit_code: int, sleep: float = 0.0):
        self.pid = os.fork()
        if self.pid == 0:
            time.sleep(sleep)
            os._exit(exit_code)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_is_waited_for_once_or_killed():
    child = _Child(3)
    assert child.wait() == 3 and child.wait() == 3  # its code kept: waited for once
    child.kill()  # already waited for: nothing to stop
    assert child.code == 3
    sleeping = _Child(0, sleep=60)
    sleeping.kill()
    assert sleeping.code == -9  # stopped by SIGKILL, and reaped
    with pytest.raises(ChildProcessError):
        os.waitpid(sleeping.pid, os.WNOHANG)
