"""A board's rows rendered once and kept between builds: a board that gained 10 rows among
3,343 renders the 10 (and those whose line changed: rank markers, p-values) and takes the
others' markup from the last build (issue 22 §5: a rebuild after adding results).

A row's markup (``templates/row.html``) reads only its view and what of the board a row
shows (:func:`board_part`); the key of a kept fragment is the sha256 of both (pickled) and
the site's code digest, so any change to what a row is made of, or to the code that makes
it, renders it anew. One file per board, framed with the sha256 of its content and verified
on read (a damaged or edited file is not used); JSON, never pickle: reading a cache file
runs no code. A build keeps only the fragments it used."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import orjson

from statbench.leaderboard.records import _framed, _read, _unframed, _write_atomic

_MAGIC = b"statbench-row-fragments 1\n"


def _root() -> Path:
    from statbench.storage.paths import cache_root

    return cache_root() / "leaderboard-fragments"


def board_part(page: dict, ncols: int, explorer_href: str | None) -> dict:
    """What of a board one row's markup shows (beside the row's own view)."""
    return {
        "has_pool": page["has_pool"], "tested": page["tested"], "sig_href": page["sig_href"],
        "baseline": page["baseline"], "eff_columns": page["eff_columns"], "ncols": ncols,
        "explorer_href": explorer_href,
    }


def shown_comparison(comparison) -> dict | None:
    """A row's comparison with the baseline as its markup prints it (the figures formatted):
    what its fragment's key holds, so Holm's p-values moving with the number of rows tested
    re-render only the rows where a printed digit changed."""
    from statbench.scoring.significance import format_p

    if comparison is None:
        return None
    return {
        "n": comparison.n, "wins": comparison.wins, "ties": comparison.ties, "losses": comparison.losses,
        "mean_diff": signed(comparison.mean_diff), "ci_low": signed(comparison.ci_low),
        "ci_high": signed(comparison.ci_high), "cohens_d": signed(comparison.cohens_d),
        "p_value": format_p(comparison.p_value), "p_holm": format_p(comparison.p_holm),
        "significant": bool(comparison.significant),
    }


def signed(value) -> str:
    """A difference with its sign, as the board prints it."""
    return "—" if value is None else f"{value:+.4f}"


class Fragments:
    """The kept fragments of one board (by its slug and results folder)."""

    def __init__(self, board: str, code: str, root: Path | None = None):
        name = hashlib.sha256(board.encode()).hexdigest()[:32]
        self.file = (_root() if root is None else Path(root)) / f"{name}.json"
        self.code = code
        found = _unframed(_MAGIC, _read(self.file))
        known = {}
        if found is not None:
            try:
                known = orjson.loads(found[1])
            except orjson.JSONDecodeError:
                known = {}
        self.known = known if isinstance(known, dict) else {}
        self.used: dict[str, str] = {}

    def key(self, view: dict, part: dict) -> str:
        # pickle: a faithful encoding (two different views never give the same bytes; the
        # same view may give other bytes, which only renders it again) and 20 times faster
        # than sorted JSON, which was a tenth of a rebuild
        data = pickle.dumps((view, part), protocol=5)
        return hashlib.sha256(self.code.encode() + b"\0" + data).hexdigest()

    def get(self, key: str) -> str | None:
        html = self.known.get(key)
        if isinstance(html, str):
            self.used[key] = html
            return html
        return None

    def put(self, key: str, html: str) -> None:
        self.used[key] = html

    def save(self) -> None:
        """Keep the fragments this build used (only if they are not what is kept already)."""
        if self.used != self.known:
            payload = orjson.dumps(self.used, option=orjson.OPT_SORT_KEYS)
            _write_atomic(self.file, _framed(_MAGIC, payload))
