"""Which forks a piece of code made (leaderboard/forkmap.py): ``os.fork`` wrapped so that the
pid of every child is recorded in this process."""

from __future__ import annotations

import os


def record_forks(monkeypatch) -> list[int]:
    """The list the pid of each child forked from now on is appended to."""
    children: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            children.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return children
