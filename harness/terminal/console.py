"""Terminal output shared by every command: the rich console and the progress bars
handed to models as ``ctx.progress``. rich is imported only when a command prints."""

from __future__ import annotations

import logging

from statbench.terminal.progress import progress_bars as _progress_bars

#: a log record attribute: ``False`` keeps the record off the console (run.log has it)
ON_CONSOLE = "statbench_console"
#: a log record attribute: ``False`` keeps the record out of run.log (said on the console only)
IN_RUN_LOG = "statbench_run_log"


class ConsoleFilter(logging.Filter):
    """On the console handler: drops the records marked ``ON_CONSOLE=False``."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, ON_CONSOLE, True)


class OffConsole(logging.Filter):
    """On a logger, for a while: marks every record it logs ``ON_CONSOLE=False`` (what a
    loader says goes to run.log; the runner decides what the console repeats)."""

    def filter(self, record: logging.LogRecord) -> bool:
        setattr(record, ON_CONSOLE, False)
        return True


def make_console(stderr: bool = False):
    """A rich console; when not a terminal (logs, CI) wide enough for a 5-fold score table."""
    from rich.console import Console

    # no :emoji: codes: a path or a description holding ':fire:' is printed as given
    console = Console(stderr=stderr, highlight=False, emoji=False)
    if not console.is_terminal:
        console.width = max(console.width, 140)
    return console


def progress_bars(console, enabled: bool = True):
    """Yield ``progress(description, total) -> advance(n=1)``; bars vanish when done
    (:func:`statbench.terminal.progress.progress_bars`: bars whose ETA works)."""
    return _progress_bars(console, enabled)
