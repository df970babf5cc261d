"""How many processes the work of a command may use, and whether it may fork them: one
answer for every place that forks (a run's splits, a corpus's analysis workers, a
leaderboard build's and a verification's workers).

- ``STATBENCH_WORKERS`` (a whole number) fixes the processes everywhere; anything else stops
  with one line.
- The CPUs are those this process may run on (its affinity mask), not the machine's.
- A fork is safe unless a module that runs native threads of its own (or a JVM) is loaded:
  a forked child could find their locks held."""

from __future__ import annotations

import os
import signal
import sys

from statbench.errors import StatbenchError

#: Loaded, these make forking unsafe: their native threads (or a JVM's) may hold locks.
FORK_UNSAFE = ("torch", "jnius", "jpype", "tensorflow", "jax", "ray", "onnxruntime")


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def configured_workers() -> int | None:
    """``STATBENCH_WORKERS`` as a number, None when unset or blank; ``StatbenchError`` when
    it is not a whole number."""
    configured = os.environ.get("STATBENCH_WORKERS", "").strip()
    if not configured:
        return None
    try:
        return int(configured)
    except ValueError:
        raise StatbenchError(f"STATBENCH_WORKERS={configured!r}: expected a whole number") from None


def can_fork() -> bool:
    """Whether this process may fork workers (see the module's docstring)."""
    return hasattr(os, "fork") and not any(name in sys.modules for name in FORK_UNSAFE)


class ForkedChild:
    """A forked child process (its ``pid`` set by the subclass that forks it): waited for
    once, or stopped."""

    pid: int
    code: int | None = None

    def wait(self) -> int:
        """The child's exit code, once it has ended."""
        if self.code is None:
            self.code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.code

    def kill(self) -> None:
        """Stop the child (unless it has been waited for) and reap it."""
        if self.code is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.wait()
