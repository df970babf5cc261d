"""The overview rows' markup that a rebuild keeps: a row's configuration and figure cells
(``templates/overview_cells.html``), by the sha256 of what they show (its label, family,
training and cells) and the site's code. Its rank cells and filter attributes are rendered at
each build: one more row on a board moves every configuration's Borda points and ranks, not
its figures. One file per benchmark (:class:`~statbench.leaderboard.caches.boardkept.KeptMarkup`:
framed, verified on read, JSON: reading it runs no code); a build keeps only what it used."""

from __future__ import annotations

from markupsafe import Markup

from statbench.leaderboard.caches.boardkept import KeptMarkup
from statbench.leaderboard.caches.incremental import code_digest


class OverviewCells(KeptMarkup):
    """One benchmark's rows' cells markup (key -> HTML)."""

    folder, suffix, magic = "leaderboard-overview-rows", ".json", b"statbench-overview-cells 1\n"


def with_cells(env, benchmarks: list[dict]) -> None:
    """Each overview row's view (:func:`.overview_page.overview_view`) given its cells' markup
    (``middle``): kept from the last build where what they show is the same, else rendered."""
    template = env.get_template("overview_cells.html")
    for b in benchmarks:
        kept = OverviewCells(b["id"], code_digest())
        for r in b["rows"]:
            key = kept.digest(r["label"], r["family"], r["training"], r["cells"])
            html = kept.known.get(key)
            if not (isinstance(html, str) and html.startswith("<td>") and html.endswith("</td>")):
                html = template.render(r=r)
            kept.used[key] = html
            r["middle"] = Markup(html)
        kept.save()
