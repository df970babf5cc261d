"""One board's files written: its table's pages (rows' markup kept where unchanged: .fragments),
the comparisons' page, the table's script, its explorer; its manifest entry."""

from __future__ import annotations

from pathlib import Path

from statbench.leaderboard.caches.fragments import Fragments, board_part, fill_rank, shown_comparison, without_rank
from statbench.leaderboard.caches.incremental import (
    code_digest,
    files_of,
)
from statbench.leaderboard.collect.rows import Row
from statbench.leaderboard.forkmap import split_map
from statbench.leaderboard.render.explorer import explorer_files
from statbench.leaderboard.render.index_page import board_summary
from statbench.leaderboard.render.run_links import run_source
from statbench.leaderboard.render.task_page import board_page
from statbench.leaderboard.render.templating import json_for_html, write_text


def render_board(env, context: dict, name: str, rows: list[Row], baseline: str, measure: str | None, tmp: Path,
                  task_slug: str, copy_runs: bool, results_dir: Path, page_size: int, digests=None,
                  explorer=None, tests=None) -> dict:
    """Test, copy and render one board into ``tmp``; its manifest entry (less its digest):
    the files it wrote with their sha256, what the build says about it, its index line."""
    page = board_page(name, rows, baseline, measure, tmp, task_slug, copy_runs, results_dir, page_size, digests,
                      tests)
    problems = [f"{name}: {problem}" for problem in page["problems"]]
    notes = []
    without_run = 0
    files = []
    for view in page["rows"]:
        provenance = view.get("provenance") or {}
        for problem in provenance.get("problems", []):
            problems.append(f"{name}: {view['label']}: {problem}")
        without_run += bool(provenance.get("notes"))
        if provenance.get("run_href"):
            files.append(provenance["run_href"])
        if provenance.get("reproduction") is not None:
            files.append(provenance["reproduction"].href)
    if measure is not None and page["tested"] != measure:
        notes.append(f"{name}: no measure {measure!r} on this board: tested {page['tested']} instead")
    if page["baseline"] is None:
        notes.append(f"{name}: no results of baseline {baseline!r}: no significance tests")
    page["explorer"] = None
    if explorer is not None:  # the board's per-query explorer (.explorer)

        page["explorer"], written = explorer_files(env, context, page, rows, results_dir, explorer,
                                                   run_source=run_source, to_json=json_for_html)
        for rel, text in written.items():
            write_text(tmp / rel, text)
            files.append(rel)
    bodies = _row_bodies(env, page, tmp, task_slug, results_dir)
    task_template = env.get_template("task.html")
    sig_template = env.get_template("significance.html")

    def write_file(job: tuple[str, dict | None]) -> str:
        # one file of the board: a page of the table, the comparisons' page, the table's script
        kind, part = job
        if kind == "part":
            write_text(tmp / part["file"], task_template.render(page=page, part=part, bodies=bodies, **context))
            return part["file"]
        if kind == "significance":
            write_text(tmp / page["sig_href"], sig_template.render(page=page, **context))
            return page["sig_href"]
        write_text(tmp / page["data_src"], f"window.statbenchLeaderboard = {json_for_html(page['blob'])};\n")
        return page["data_src"]

    jobs = [("part", part) for part in page["parts"]]
    jobs += [("significance", None)] if page["sig_href"] else []
    jobs += [("data", None)] if page["data_src"] else []
    written_files, _ = split_map(write_file, jobs, min_items=4)
    pages = [rel for (kind, _), rel in zip(jobs, written_files) if kind != "data"]
    files += [rel for (kind, _), rel in zip(jobs, written_files) if kind == "data"]
    return {"problems": problems, "notes": notes, "without_run": without_run, "pages": pages,
            "files": files_of(tmp, files + pages), "summary": board_summary(name, task_slug, page)}

def _row_bodies(env, page: dict, tmp: Path, task_slug: str, results_dir: Path) -> dict:
    """Row key -> the markup of its ``<tbody>``: kept from earlier builds where nothing it
    is made of changed (.fragments), else rendered (half of them in a fork: .forkmap)."""
    import markupsafe

    template = env.get_template("row.html")
    ncols = 5 + (1 if page["has_pool"] else 0) + len(page["info"]["measures"]) + len(page["eff_columns"])
    link = page["explorer"]
    explored = set(link["shown"]) if link else set()
    # a row's kept markup holds no rank (it moves whenever any row of the board does): the rank
    # cells are filled in from the board's ranks when the page is assembled
    views = [without_rank(dict(v, comparison=shown_comparison(v["comparison"])) if v.get("comparison") is not None
                          else v)
             for v in page["rows"]]
    parts = [board_part(page, ncols, link["href"] if v["key"] in explored else None) for v in views]
    kept = Fragments(f"{Path(results_dir).resolve()}\0{task_slug}", code_digest())
    keys = [kept.key(v, part) for v, part in zip(views, parts)]
    missing = [i for i, key in enumerate(keys) if kept.get(key) is None]
    made, _ = split_map(lambda i: template.render(v=views[i], board=parts[i]), missing)
    for i, html in zip(missing, made):
        kept.put(keys[i], html)
    kept.save()
    return {v["key"]: markupsafe.Markup(fill_rank(kept.used[key], v.get("rank")))
            for v, key in zip(page["rows"], keys)}
