"""Terminal output shared by every command: the rich console and the progress bars
handed to models as ``ctx.progress``. rich is imported only when a command prints."""

from __future__ import annotations

import contextlib


def make_console(stderr: bool = False):
    """A rich console; when not a terminal (logs, CI) wide enough for a 5-fold score table."""
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 140)
    return console


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
