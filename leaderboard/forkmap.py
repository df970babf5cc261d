"""Work of one build split between this process and a forked copy of it: the rows of a
board (their run files, views) and the pages of a board are independent of each other, and
a build otherwise leaves a second core idle (issue 22 §5: 10,000 results).

The child is a fork: it shares everything read so far (rows, templates, caches) without
pickling any of it, computes its share and sends back only the results (pickled, through a
pipe). The results come back in the order of the items whatever process made them, so a
build gives the same site with one core or two. A child that fails sends its exception,
raised here as it would have been in one process; a child that dies without a word (killed,
out of memory) makes the whole map run again in this process, never a partial result."""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from collections.abc import Callable, Sequence

from statbench.run.processes import usable_cpus

#: below this many items a fork (a few milliseconds) is not worth it
MIN_ITEMS = 16


def processes() -> int:
    """How many processes a build works in: 2 with two cores or more, 1 with one, or when
    switched off (``STATBENCH_BUILD_PROCESSES=1``: one process, as a reference or where
    forks are unwelcome). The validating workers of a cold build (.collect) count the same."""
    if os.environ.get("STATBENCH_BUILD_PROCESSES", "").strip() == "1":
        return 1
    return min(2, usable_cpus())


def _parallel() -> bool:
    """Whether to fork (:func:`processes`, on a platform that forks)."""
    return hasattr(os, "fork") and processes() > 1


def _take(counter, chunk: int, n: int):
    """The items' index ranges this process takes, a chunk at a time, from a counter shared
    with the other process: whichever is free takes the next, so neither waits for the other
    when one had other work (``meanwhile``) or slower items."""
    while True:
        with counter.get_lock():
            start = counter.value
            counter.value = start + chunk
        if start >= n:
            return
        yield range(start, min(n, start + chunk))


def split_map(fn: Callable, items: Sequence, meanwhile: Callable[[], object] | None = None,
              min_items: int = MIN_ITEMS, chunk: int = 0) -> tuple[list, object]:
    """``[fn(item) for item in items]``, computed by this process and a forked child
    together (each taking the next ``chunk`` items when it is free: by default a sixteenth
    of them), and ``meanwhile()``'s result (work of this process's own, done first: None if
    not given). ``fn``'s side effects in the child (on rows, on caches in memory) are lost:
    it must return all it makes, and write files only where no other item writes other
    content."""
    items = list(items)
    n = len(items)
    if n < max(2, min_items) or not _parallel():
        aside = meanwhile() if meanwhile is not None else None
        return [fn(item) for item in items], aside
    import multiprocessing

    chunk = chunk or max(1, n // 16)
    counter = multiprocessing.get_context("fork").Value("q", 0)  # in memory both processes share
    # the child takes chunks from the counter until none is left, as this process does below
    child = start(lambda: [(i, fn(items[i])) for span in _take(counter, chunk, n) for i in span])
    results: list = [_MISSING] * n
    try:
        aside = meanwhile() if meanwhile is not None else None
        for span in _take(counter, chunk, n):
            for i in span:
                results[i] = fn(items[i])
    except BaseException:
        child.close()
        raise
    for i, made in child.result(died=list):
        results[i] = made
    # what the child took and did not send (it died): done here, so nothing is ever missing
    for i in range(n):
        if results[i] is _MISSING:
            results[i] = fn(items[i])
    return results, aside


_MISSING = object()


class Pending:
    """``fn()`` computed in a forked child while this process goes on (:func:`start`);
    :meth:`result` waits for it. Without a fork (one core, switched off, no fork to be had)
    ``fn`` runs at once, here."""

    def __init__(self, fn: Callable[[], object]):
        self.pid = None
        self.value: object = _MISSING
        if not _parallel():
            self.value = fn()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            self.value = fn()
            return
        if pid == 0:
            os.close(read_end)
            code = 0
            try:
                try:
                    payload = pickle.dumps(("ok", fn()), protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException as exc:  # noqa: BLE001 - sent to the parent, raised there
                    code = 1
                    try:
                        payload = pickle.dumps(("error", exc), protocol=pickle.HIGHEST_PROTOCOL)
                    except Exception:
                        payload = pickle.dumps(("error", RuntimeError(traceback.format_exc())))
                with os.fdopen(write_end, "wb") as pipe:
                    pipe.write(payload)
            finally:
                os._exit(code)
        os.close(write_end)
        self.pid, self.read_end = pid, read_end

    def _reaped(self) -> tuple[bytes, int]:
        """What the child sent, and its exit status, once it has ended."""
        with os.fdopen(self.read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return data, status

    def close(self) -> None:
        """Wait for the child and drop its result (this process is failing anyway)."""
        if self.pid is not None:
            self._reaped()

    def result(self, died: Callable[[], object]):
        """The child's result (its exception raised here); ``died()`` if it died without one."""
        if self.pid is None:
            return self.value
        data, status = self._reaped()
        try:
            kind, value = pickle.loads(data)
        except Exception:  # nothing, or not all of it: the child died (killed, out of memory)
            return died()
        if kind == "error":
            raise value
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return died()
        return value


def start(fn: Callable[[], object]) -> Pending:
    """``fn()`` begun in a forked child; its result from :meth:`Pending.result`."""
    return Pending(fn)
