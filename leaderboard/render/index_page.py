"""The site's first page: the overview of each declared benchmark (configurations across its
tasks, with aggregate ranks: :mod:`.overview_page`), then each board's line (its title, size,
baseline and best row), kept in the build's manifest so that an unchanged board's line needs
no rendering."""

from __future__ import annotations

from markupsafe import Markup

from statbench import __version__
from statbench.leaderboard.render.overview_page import overview_views
from statbench.leaderboard.render.overview_rows import with_cells
from statbench.leaderboard.render.templating import fmt

#: what the first page needs in static/ beside the boards' files
STATIC_FILES = ("overview.js",)


def board_summary(name: str, task_slug: str, page: dict) -> dict:
    """A board's line on the index, from its page model (:func:`.task_page.board_page`)."""
    best = page["best"]
    return {
        "name": name, "slug": task_slug, "words": page["words"], "title": page["info"]["title"],
        "language": page["info"]["language"], "n_results": page["n_results"], "tested": page["tested"],
        "baseline": page["baseline"],
        "best": None if best is None else {"label": best["label"], "value": fmt(best["cells"][page["tested_index"]]["mean"])},
    }


def overview_sections(env, boards: dict, keys: dict, slugs: dict) -> tuple[str, list[str]]:
    """(the overview sections of the first page, the ids of the benchmarks shown): one per
    benchmark that any of ``boards`` (board name -> rows; ``keys``: board name -> its BoardKey,
    ``slugs``: board name -> its files' slug) is on. Apart from the index, so that a build makes
    them in a fork while its boards are rendered (render/build.py)."""
    benchmarks = overview_views(boards, keys, slugs)
    with_cells(env, benchmarks)
    template = env.get_template("overview.html")
    return "".join(template.render(b=b) for b in benchmarks), [b["id"] for b in benchmarks]


def index_html(env, summaries: list[dict], boards: dict | None = None, keys: dict | None = None,
               slugs: dict | None = None, sections: tuple[str, list[str]] | None = None) -> str:
    """The index page: an overview section per benchmark that any of ``boards`` is on (or
    ``sections``, made earlier by :func:`overview_sections`), then every board's line in the
    boards' order."""
    if sections is None:
        sections = overview_sections(env, boards or {}, keys or {}, slugs or {})
    html, benchmarks = sections
    return env.get_template("index.html").render(version=__version__, tasks=summaries, benchmarks=benchmarks,
                                                 sections=Markup(html))
