"""What a task's loader says about its data files (a defect it worked around, items it
dropped) goes to run.log on every run, but to the console only the first time for this
data: the same files give the same notes, and repeating two warnings on every run, cached
or not, teaches users to ignore warnings. A marker in the cache, keyed by the task, the
data checksum and the notes themselves, remembers they were said (a new note, or other
data, is said again)."""

from __future__ import annotations

import logging

from statbench.data.checksum import config_key
from statbench.storage.paths import cache_root
from statbench.terminal.console import IN_RUN_LOG


def say_once(log: logging.Logger, task_name: str, checksum: str, records) -> None:
    """Put the warnings among ``records`` ((level, message) as the loader logged them,
    already in run.log) on the console, once per task, data checksum and notes."""
    notes = [(level, message) for level, message in records if level >= logging.WARNING]
    if not notes:
        return
    marker = cache_root() / "notices" / task_name / config_key([checksum, notes])
    try:
        if marker.exists():
            return
    except OSError:  # an unreadable cache: the notes are said (again), the run goes on
        log.debug("could not read %s", marker, exc_info=True)
    off_log = {IN_RUN_LOG: False}
    for level, message in notes:
        log.log(level, "%s", message, extra=off_log)
    log.log(logging.WARNING, "%s: said once for these data files (sha256 %s); run.log repeats it on every run",
            task_name, checksum[:16], extra=off_log)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:  # the notes are said again next time: nothing is lost
        log.debug("could not write %s", marker, exc_info=True)
