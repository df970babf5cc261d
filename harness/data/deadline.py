"""One overall bound on a network wait that the libraries doing it cannot bound themselves.

A socket timeout bounds one read, not a fetch: a server that answers and then stalls, or
trickles a byte now and then, a name lookup that hangs, or a library's own retries (the
Hugging Face libraries retry each file five times, ten seconds a try) can each wait for
minutes. :func:`call_within` runs the whole fetch, every retry included, in a worker
thread and stops waiting for it once its bound has passed: the caller then says so in one
line (what was being fetched, the bound, what to do instead). The worker is a daemon
thread left to end on its own: it never holds the process open, and nothing it returns
afterwards is used.

:func:`bound_from_env` reads a bound from the environment (``STATBENCH_HUB_TIMEOUT``...),
so that a slow but working line can wait longer and a test can wait less.
"""

from __future__ import annotations

import contextvars
import math
import os
import threading
from typing import Callable, TypeVar

from statbench.errors import StatbenchError

T = TypeVar("T")


class DeadlinePassed(Exception):
    """The bound passed before the call ended (its worker is left running, as a daemon)."""

    def __init__(self, seconds: float):
        super().__init__(f"not done within {seconds:g} s")
        self.seconds = seconds


def call_within(seconds: float, call: Callable[[], T], what: str = "network wait") -> T:
    """``call()``'s result, or its exception re-raised here; :class:`DeadlinePassed` once
    ``seconds`` have passed without it ending. It runs in a daemon thread with a copy of
    the caller's context variables; ``what`` names the thread (seen in a stack dump)."""
    outcome: dict = {}
    context = contextvars.copy_context()

    def work():
        try:
            outcome["value"] = context.run(call)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name=f"statbench {what}", daemon=True)
    worker.start()
    # a bound beyond the longest wait the platform holds (about 292 years) is "wait": joining
    # with it would raise OverflowError instead of waiting
    worker.join(min(seconds, threading.TIMEOUT_MAX))
    if worker.is_alive():
        raise DeadlinePassed(seconds)
    if "error" in outcome:
        error = outcome.pop("error")
        try:
            raise error
        finally:
            del error
    return outcome["value"]


def bound_from_env(variable: str, default: float) -> float:
    """Seconds from the environment variable ``variable`` (unset or empty: ``default``);
    anything but a positive finite number of seconds is one line naming the variable."""
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise StatbenchError(f"{variable}={raw[:40]!r} is not a number of seconds above 0 (the overall bound on a "
                             f"network wait; unset, it is {default:g} s)")
    return value
