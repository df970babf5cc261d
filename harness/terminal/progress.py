"""Progress bars for long work (``ctx.progress``) and the up-front warning before work
that will take minutes. rich is imported only when a bar is shown.

Why the ETA used to stay ``-:--:--``: rich estimates the speed from the samples of the
last ``speed_estimate_period`` seconds (30 by default) and needs two of them; an encoding
loop that advances less often than every 30 s (a group of passages on a CPU) never has
two, and the first advance alone has no start to measure from. Here every bar records a
start sample and keeps :data:`SPEED_WINDOW_S` of history."""

from __future__ import annotations

import contextlib
import logging

#: seconds of progress samples the speed (and so the ETA) is estimated from
SPEED_WINDOW_S = 600.0
#: work estimated to take longer than this says so, with the estimate, before it starts
LONG_WORK_S = 180.0


def make_progress(console, get_time=None):
    """The rich ``Progress`` of every statbench bar (``get_time``: a clock, for tests)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TimeRemainingColumn(), console=console, transient=True, speed_estimate_period=SPEED_WINDOW_S,
        get_time=get_time,
    )


def add_bar(bars, description: str, total: int | None = None):
    """A new bar on ``bars`` (:func:`make_progress`); returns ``advance(n=1)``."""
    task_id = bars.add_task(description, total=total)
    bars.advance(task_id, 0)  # the start sample: the first advance already gives a speed
    return lambda n=1: bars.advance(task_id, n)


@contextlib.contextmanager
def progress_bars(console, enabled: bool = True):
    """Yield ``progress(description, total) -> advance(n=1)``; bars vanish when done.
    Never on a console that is not a terminal (a log file, a pipe): rich would still write
    a stray line there."""
    if not enabled or not getattr(console, "is_terminal", False):
        yield lambda description, total=None: (lambda n=1: None)
        return
    with make_progress(console) as bars:
        yield lambda description, total=None: add_bar(bars, description, total)


def duration_text(seconds: float) -> str:
    """``about 45 s``, ``about 21 min``, ``about 2 h 05 min``."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"about {seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60:02d} min"


def warn_if_long(log: logging.Logger, what: str, estimate_s: float, how: str,
                 threshold_s: float = LONG_WORK_S) -> bool:
    """Say, before it starts, that ``what`` will take ``estimate_s`` seconds when that is
    more than ``threshold_s``; ``how``: how the estimate was measured. Whether it warned."""
    if estimate_s <= threshold_s:
        return False
    log.warning("%s will take %s (%s)", what, duration_text(estimate_s), how)
    return True


__all__ = ["SPEED_WINDOW_S", "LONG_WORK_S", "make_progress", "add_bar", "progress_bars", "duration_text",
           "warn_if_long"]
