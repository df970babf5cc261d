"""The cells' states while a grid runs: a rich live table on a terminal (queued, running,
done, failed, elapsed), one line per finished cell otherwise (logs, CI)."""

from __future__ import annotations

import contextlib
import threading
import time

_STYLE = {"queued": "dim", "submitted": "cyan", "running": "yellow", "done": "green", "failed": "red",
          "skipped": "blue"}


class Board:
    def __init__(self, console, cell_ids, live: bool):
        self.console, self.live = console, live
        self.state = {cid: "queued" for cid in cell_ids}
        self.started: dict[str, float] = {}
        self.elapsed: dict[str, float] = {}
        self._lock = threading.Lock()
        self._live = None

    def add(self, cell_ids) -> None:
        with self._lock:
            for cid in cell_ids:
                self.state.setdefault(cid, "queued")

    def event(self, cell_id: str, state: str, outcome=None) -> None:
        with self._lock:
            self.state[cell_id] = state
            if state in ("running", "submitted"):
                self.started.setdefault(cell_id, time.monotonic())
            if outcome is not None:
                self.elapsed[cell_id] = outcome.seconds
        if not self.live and state in ("done", "failed", "skipped"):
            line = f"{state:8} {cell_id}"
            if outcome is not None:
                line += f" ({outcome.seconds:.1f} s)" + (f": {outcome.error}" if outcome.error else "")
            self.console.print(line, markup=False, highlight=False)
        if self._live is not None:
            self._live.update(self.render())

    def render(self):
        from rich.table import Table

        table = Table(title="statbench grid", title_justify="left")
        table.add_column("cell")
        table.add_column("state")
        table.add_column("elapsed", justify="right")
        now = time.monotonic()
        with self._lock:
            for cid, state in self.state.items():
                seconds = self.elapsed.get(cid)
                if seconds is None and cid in self.started and state in ("running", "submitted"):
                    seconds = now - self.started[cid]
                table.add_row(cid, f"[{_STYLE.get(state, '')}]{state}[/]", "" if seconds is None else f"{seconds:.1f} s")
        return table

    @contextlib.contextmanager
    def showing(self):
        if not self.live:
            yield self
            return
        from rich.live import Live

        with Live(self.render(), console=self.console, refresh_per_second=2, get_renderable=self.render) as live:
            self._live = live
            try:
                yield self
            finally:
                self._live = None
