"""A board's rows rendered once and kept between builds: a board that gained 10 rows among
3,343 renders the 10 (and those whose line changed: rank markers, p-values) and takes the
others' markup from the last build (issue 22 §5: a rebuild after adding results).

A row's markup (``templates/row.html``) reads only its view and what of the board a row
shows (:func:`board_part`); the key of a kept fragment is the sha256 of both (pickled) and
the site's code digest, so any change to what a row is made of, or to the code that makes
it, renders it anew. A row's rank cell is not part of it: a rank depends on every row of the
board (one more row moves every interval), so the kept markup holds :data:`RANK_SLOT` and
the page is assembled with the board's ranks (:func:`fill_rank`). One file per board, framed
with the sha256 of its content and verified on read (a damaged or edited file is not used);
JSON, never pickle: reading a cache file runs no code. A build keeps only the fragments it used."""

from __future__ import annotations

import markupsafe

from statbench.errors import StatbenchError
from statbench.leaderboard.caches.boardkept import KeptMarkup
from statbench.scoring.significance import format_p

#: where a row's kept markup takes its rank cell's content (``templates/row.html``)
RANK_SLOT = '<td class="rank"><!--rank--></td>'


def without_rank(view: dict) -> dict:
    """A row's view as its kept markup reads it: everything but its rank."""
    return {k: v for k, v in view.items() if k != "rank"}


def rank_cell(rank: dict | None) -> str:
    """The markup of a row's rank cell: "2 (1–4)" with the top group's mark, or a dash saying
    why the row has no rank (:func:`statbench.leaderboard.render.rows.rank_view`)."""
    escape = markupsafe.escape
    if rank and rank.get("text"):
        top = f' <span class="top-group" title="{escape(rank["title"])}">top</span>' if rank["top"] else ""
        return f'<td class="rank">{escape(rank["text"])}{top}</td>'
    why = rank["why"] if rank else "not ranked"
    return f'<td class="rank"><span class="unranked" title="{escape(why)}">—</span></td>'


def fill_rank(html: str, rank: dict | None) -> str:
    """A row's kept markup with its rank cell filled in (exactly one slot: else the markup is
    not the row template's, and is refused rather than shown without a rank)."""
    if html.count(RANK_SLOT) != 1:
        raise StatbenchError("a row's markup has no single rank cell to fill (templates/row.html changed?)")
    return html.replace(RANK_SLOT, rank_cell(rank), 1)


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

class Fragments(KeptMarkup):
    """The kept markup of one board's rows (key -> HTML), as JSON: reading a cache file runs
    no code."""

    folder, suffix, magic = "leaderboard-fragments", ".json", b"statbench-row-fragments 1\n"


    def key(self, view: dict, part: dict) -> str:
        return self.digest(view, part)

    def get(self, key: str) -> str | None:
        html = self.known.get(key)
        if isinstance(html, str) and html.count(RANK_SLOT) == 1:  # else not a row's markup: rendered anew
            self.used[key] = html
            return html
        return None

    def put(self, key: str, html: str) -> None:
        self.used[key] = html
