"""A board's rows' views kept between builds: what a row makes of its record (its line's
view, the script's data, its point on the Pareto plots) without its record being loaded
again, when nothing it is made of changed (issue 22 §5: a board that gained 10 rows among
3,343 loaded and viewed all of them again).

The key of a kept view is the sha256 of everything :func:`~statbench.leaderboard.render.rows.row_view`
reads: the record's cache name (the results file's state as it was validated and the
validating code: :class:`~statbench.leaderboard.caches.records.RecordEntry`), the row's key,
identity, path and results folder, its verification, its problems and notes, the measures
shown and tested, the run file's link and the reproduction file's, its model card and source as read
and its level, and the site's code digest. A row whose record is not kept in the record cache (``entry_name`` None) is never
kept here. One file per board, framed with the sha256 of its payload and verified on read;
a build keeps only the views it used. The views are kept pickled one by one and unpickled
when used, so the caller's later changes to a view (its comparison, its label) never reach
what is kept."""

from __future__ import annotations

import pickle

from statbench.leaderboard.caches.boardkept import KeptPerBoard
from statbench.storage.cache_files import read_pickled_dict


class RowViews(KeptPerBoard):
    """The kept views of one board (key -> the pickled view, script data and Pareto point)."""

    folder, suffix, magic = "leaderboard-views", ".pickle", b"statbench-row-views 1\n"

    def read(self) -> dict:
        return read_pickled_dict(self.magic, self.file)

    def payload(self) -> bytes:
        return pickle.dumps(self.used, protocol=5)

    def key(self, row, context: tuple, run_href: str | None, reproduction) -> str | None:
        """The key of a row's view (None: its record is not kept, so neither is its view)."""
        if row.entry_name is None:
            return None
        return self.digest(row.entry_name, row.key, row.identity, str(row.path), row.verification,
                           list(row.problems), list(row.notes), run_href, reproduction, context,
                           getattr(row, "card", None), getattr(row, "level", None),
                           getattr(row, "source", None))

    def get(self, key: str | None):
        """The kept view (a fresh copy), or None."""
        data = self.known.get(key) if key is not None else None
        if not isinstance(data, bytes):
            return None
        try:
            made = pickle.loads(data)
        except Exception:  # noqa: BLE001 (a kept view that does not load is made again)
            return None
        self.used[key] = data
        return made

    def keep(self, key: str | None, made, found: bool) -> None:
        """Keep a row's view for the next build: ``found`` here (by :meth:`get`, maybe in
        another process), or ``made`` now."""
        if key is None:
            return
        if found and isinstance(self.known.get(key), bytes):
            self.used[key] = self.known[key]
        else:
            self.used[key] = pickle.dumps(made, protocol=5)
