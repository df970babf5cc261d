"""Rich progress bars for long steps, handed to models as ``ctx.progress``."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def progress_bars(console, enabled: bool = True):
    """Yield ``progress(description, total) -> advance(n=1)``; bars vanish when done."""
    if not enabled:
        yield lambda description, total=None: (lambda n=1: None)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TimeRemainingColumn(), console=console, transient=True,
    ) as bars:

        def progress(description: str, total: int | None = None):
            task_id = bars.add_task(description, total=total)
            return lambda n=1: bars.advance(task_id, n)

        yield progress
