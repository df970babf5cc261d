"""A task board's page model: its significance tests against the baseline, its rows' views made
(in two processes: .forkmap) and ordered, its pages, charts and the script's data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from statbench.api import FAMILIES
from statbench.leaderboard.caches.incremental import (
    code_digest,
)
from statbench.leaderboard.caches.rankcolumns import RankColumns
from statbench.leaderboard.caches.rowviews import RowViews
from statbench.leaderboard.caches.sigcache import PairCache
from statbench.leaderboard.collect.rows import Row
from statbench.leaderboard.forkmap import split_map, start
from statbench.leaderboard.ranking.board_ranks import BoardRanks, rank_board
from statbench.leaderboard.ranking.board_tests import board_tests
from statbench.leaderboard.ranking.holm_family import BoardFamily
from statbench.leaderboard.ranking.significance import pair_figures
from statbench.leaderboard.render.board_info import board_words, task_info
from statbench.leaderboard.render.breakdowns import breakdown_sections
from statbench.leaderboard.render.efficiency import COLUMNS as EFFICIENCY_COLUMNS
from statbench.leaderboard.render.pareto import pareto_charts, pareto_point
from statbench.leaderboard.render.plots import Series, recall_curves, recall_cutoffs
from statbench.leaderboard.render.rows import (
    compared,
    levels_legend,
    placed_row_data,
    rank_view,
    reference_views,
    row_script_data,
    row_view,
    short_params,
    unique_labels,
)
from statbench.leaderboard.render.run_links import copy_run
from statbench.leaderboard.verify.levels import DECLARED
from statbench.scoring.reproduction import copy_reproduction
from statbench.scoring.significance import (
    ALPHA,
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    primary_measure,
    query_set_difference,
    with_holm,
)

#: rows per page of a task's table: a board with more is written as several static pages
#: (every row on exactly one, each page complete without JavaScript); the script pages,
#: sorts and filters across all rows from the page's JSON
PAGE_SIZE = 50


#: series drawn at most per chart (the best rows by the tested measure, and the baseline):
#: every figure of every row is in the table, its per-category figures in its details
CHART_SERIES = 12


def pick_baseline(rows: list[Row], baseline: str) -> Row | None:
    """The row named ``baseline`` (model name, or ``model → reranker``); among several,
    plain first stages (no reranker, no pool) with the recorded default parameters first
    (statbench's own model before another distribution's of that name), then the stable
    identity order."""
    matches = [r for r in rows if baseline in (r.name, r.model.name)]
    matches.sort(key=lambda r: (r.reranker is not None, r.pool is not None, r.name != baseline,
                                "distribution" in r.identity, short_params(r, "retrievers") != "", r.sort_key))
    return matches[0] if matches else None


#: from this many pairs to test, a board's tests are split between two processes
SPLIT_TESTS = 512


def board_significance(rows, measure: str, base: Row | None) -> tuple[dict[str, object], list[tuple[Row, str]]]:
    """Comparisons by row key, and the rows not tested with the reason. A paired test needs
    exactly the same (non-empty) query set on both sides: any other row is left out of the
    tests (and of Holm's count), never shown as not significant."""
    if base is None:
        return {}, []
    # each pair's figures are kept by the two rows' per-query scores (see .sigcache): a
    # board re-tests only the rows whose scores (or baseline) it has not tested before
    kept = PairCache.default(base.queries_sha256, measure, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
    tested = [r for r in rows if r is not base and measure in r.labels]
    outcomes = {r.key: kept.get(r.queries_sha256) for r in tested}
    fresh = [r for r in tested if outcomes[r.key] is None]
    if fresh:
        base_scores = base.query_scores(measure)

        def tested_half(half: list) -> tuple[dict, dict]:
            # each row's per-query scores read (from the record cache: a file each), paired
            # with the baseline's, and tested; a pair's figures do not depend on the others
            # tested with it (.stats), so a large board's rows are tested in two halves, one
            # in a fork (each half draws the bootstrap's resamples once)
            systems, refused = {}, {}
            order, placed = sorted(base_scores), {}
            for r in half:
                column = _aligned_column(r, measure, order, placed)
                if column is not None:  # the same queries as the baseline's, every one scored
                    systems[r.key] = column
                    continue
                scores = r.query_scores(measure)
                problem = query_set_difference(base_scores, scores)
                if problem is None:
                    systems[r.key] = scores
                else:
                    refused[r.key] = problem
            return pair_figures(base_scores, systems, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED), refused

        halves = [fresh[:len(fresh) // 2], fresh[len(fresh) // 2:]] if len(fresh) >= SPLIT_TESTS else [fresh]
        parts, _ = split_map(tested_half, halves, min_items=2)
        figures = {key: figure for part, _ in parts for key, figure in part.items()}
        refused = {key: problem for _, part in parts for key, problem in part.items()}
        for r in fresh:
            if r.key in refused:
                outcomes[r.key] = ("untested", refused[r.key])
                kept.put(r.queries_sha256, outcomes[r.key])
        for r in fresh:
            if r.key in figures:
                outcomes[r.key] = ("figures", figures[r.key])
                kept.put(r.queries_sha256, outcomes[r.key])
        kept.save()
    untested = [(r, outcomes[r.key][1]) for r in tested if outcomes[r.key][0] == "untested"]
    raw = [dict(system=key, baseline=base.key, measure=measure, **outcomes[key][1])
           for key in sorted(r.key for r in tested if outcomes[r.key][0] == "figures")]
    comparisons = with_holm(raw, ALPHA) if raw else []
    return {c.system: c for c in comparisons}, untested


def _aligned_column(row: Row, measure: str, order: list[str], placed: dict):
    """The row's per-query scores on ``measure`` as an array in the order of the baseline's
    query ids (``order``, sorted), taken from its cached table: what pairing the two as
    dicts gives, without building them (4 s of a 3,000-row STARD board). None when the row
    has no table, or its queries are not exactly the baseline's, or one has no score: the
    caller pairs it the careful way (and says why it cannot be tested). ``placed``: each
    table's query order -> where the baseline's queries are in it (shared by the rows)."""
    import numpy as np

    table = row.query_table()
    if table is None or measure not in table.labels:
        return None
    qids = tuple(table.qids)
    if qids not in placed:
        where = {qid: i for i, qid in enumerate(qids)}
        placed[qids] = (np.array([where[qid] for qid in order], dtype=np.intp)
                        if len(where) == len(order) and all(qid in where for qid in order) else None)
    index = placed[qids]
    if index is None:
        return None
    column = table.values[index, table.labels.index(measure)]
    return None if np.isnan(column).any() else column


def _board_tests(rows: list[Row], baseline: str, measure: str | None) -> tuple[dict, str, Row | None]:
    """A board's task information, the measure its tests are on and its baseline row."""
    info = task_info(rows[0].task, rows)
    labels_all = [m["label"] for m in info["measures"]]
    tested = measure if measure in labels_all else primary_measure(rows[0].task, labels_all, info["info"])
    return info, tested, pick_baseline(rows, baseline)


#: why a row whose card declares seen test queries has no rank
SEEN_UNRANKED = "its model card declares test queries seen: not ranked with the others"


@dataclass(frozen=True)
class BoardStatistics:
    """What a board's tests and ranks give its page."""

    comparisons: dict  #: row key -> its comparison on the tested measure (p adjusted over the family)
    untested: list  #: (row key, why) of the rows not tested on the tested measure
    family: BoardFamily  #: every test on the board, Holm-adjusted together
    ranks: BoardRanks


def board_statistics(rows: list[Row], base: Row | None, labels: list[str], measure: str | None,
                     tested: str) -> BoardStatistics:
    """The board's comparisons on the tested measure, its tests on every measure of its family
    and its ranks (:mod:`statbench.leaderboard.ranking`)."""
    comparisons, untested = board_significance(rows, tested, base)
    family, comparisons = board_tests(rows, base, labels, measure, tested, comparisons)
    seen = {row.key: SEEN_UNRANKED for row in rows if getattr(row, "card", None) and row.card.test_queries_seen}
    task = rows[0].task_record
    kept = RankColumns(f"{task.name}\0{task.version}\0{task.data_checksum}\0{rows[0].split_set}", tested)
    ranks = rank_board(rows, tested, left_out=seen, scored=kept.scored, kept_tests=True)
    kept.save()
    return BoardStatistics(comparisons, [(row.key, why) for row, why in untested], family, ranks)


def start_tests(rows: list[Row], baseline: str, measure: str | None):
    """A board's significance tests and ranks begun in a fork (with scipy's import, and the tests
    of its new rows), while the build goes on with the rest; :func:`board_page` takes them."""
    def tests() -> BoardStatistics:
        info, tested, base = _board_tests(rows, baseline, measure)
        return board_statistics(rows, base, [m["label"] for m in info["measures"]], measure, tested)

    return start(tests)


def _chart_rows(rows: list[Row], table: list[dict], base: Row | None) -> list[Row]:
    """The rows the charts draw: all of them up to :data:`CHART_SERIES`, else the best by
    the tested measure (the table's default order) and the baseline."""
    if len(rows) <= CHART_SERIES:
        return rows
    by_key = {r.key: r for r in rows}
    chosen = [by_key[v["key"]] for v in table if not v["reference"]][:CHART_SERIES]
    if base is not None and base not in chosen:
        chosen.append(base)
    return chosen


def _charts(rows: list[Row], refs: list[dict], measures: list[dict], tested: str, labels: dict[str, str]) -> list[str]:
    charts = []
    cutoffs = recall_cutoffs(measures)
    if len(cutoffs) >= 2:
        series = [
            Series(labels[r.key], {k: r.results.aggregate[lab].mean for k, lab in cutoffs if lab in r.results.aggregate})
            for r in rows
        ]
        series += [
            Series(f"{ref['name']} (published)", {k: ref_cells[lab] for k, lab in cutoffs if ref_cells.get(lab) is not None},
                   reference=True)
            for ref in refs
            for ref_cells in [{c["label"]: c["mean"] for c in ref["cells"]}]
        ]
        svg = recall_curves([s for s in series if s.values], "Recall@k (mean over splits)")
        if svg:
            charts.append(svg)
    return charts  # the breakdowns' bars: leaderboard/render/breakdowns.py


def _ranking_words(ranks: BoardRanks, labels: dict[str, str]) -> dict:
    """What the legend says of a board's ranks and top group."""
    best = labels.get(ranks.best) if ranks.best else None
    return {"measure": ranks.measure, "ranked": len(ranks.ranks), "queries": ranks.queries,
            "resamples": ranks.resamples, "alpha": ranks.alpha, "tests": ranks.tests, "top": len(ranks.top),
            "best": best,
            "top_title": (f"top group: not separable from the best ({best}) by the board's test (two-sided Wilcoxon "
                          f"signed-rank against it, Holm over {ranks.tests} test{'s' if ranks.tests != 1 else ''}, "
                          f"\u03b1 = {ranks.alpha})")}


def _page_files(task_slug: str, n_rows: int, page_size: int) -> list[str]:
    """The files of a task's table: ``task-SLUG.html``, then ``task-SLUG.p2.html``, ... (a
    dot cannot occur in a slug: no task's page is another's)."""
    count = max(1, -(-n_rows // page_size))
    return [f"task-{task_slug}.html"] + [f"task-{task_slug}.p{i}.html" for i in range(2, count + 1)]


def _made_rows(rows: list[Row], info: dict, tested: str, base: Row | None, measure: str | None, dest: Path,
               task_slug: str, copy_runs: bool, results_root: Path, digests, tests) -> tuple[list, BoardStatistics]:
    """Each row's product (its view, the script's data, its Pareto point), made in a fork while
    the board's tests and ranks run (or are taken from ``tests``), and kept for the next build."""
    labels_all = [m["label"] for m in info["measures"]]
    kept = RowViews(f"{Path(results_root).resolve()}\0{task_slug}", code_digest())
    context = (info["measures"], tested, str(results_root))

    def row_product(row: Row) -> tuple[tuple[dict, dict, tuple | None], str | None, bool]:
        # what a row makes of itself, apart from the others (in this process or a fork of
        # it): its view, the script's data, its Pareto point; kept from the last build when
        # nothing it is made of changed (.rowviews: its record is then not even loaded)
        run_href = copy_run(row, dest, task_slug, results_root, digests) if copy_runs else None
        reproduction, problem = copy_reproduction(row.path, dest)
        if problem:
            row.problems.append(problem)
        key = kept.key(row, context, run_href, reproduction)
        found = kept.get(key)
        if found is not None:
            return found, key, True
        view = row_view(row, info["measures"], tested, run_href, results_root, reproduction)
        return (view, row_script_data(view), pareto_point(row, tested)), key, False

    # the tests and ranks (with scipy's import, on a board with new rows) run while a fork makes rows
    def statistics() -> BoardStatistics:
        return board_statistics(rows, base, labels_all, measure, tested)

    if tests is None:
        products, stats = split_map(row_product, rows, meanwhile=statistics)
    else:
        products, _ = split_map(row_product, rows)
        stats = tests.result(died=lambda: None) or statistics()  # the fork died: they are computed here
    for product, key, hit in products:
        kept.keep(key, product, hit)  # before the views are changed below
    kept.save()
    return [product for product, _, _ in products], stats


def _compared_views(rows: list[Row], made: list, stats: BoardStatistics, base: Row | None) -> list[dict]:
    """The rows' views with their comparison with the baseline, their marks on every measure and their rank."""
    marks: dict[str, dict] = {}
    for (key, label), mark in stats.family.marks.items():
        marks.setdefault(key, {})[label] = mark
    return [compared(view, stats.comparisons.get(row.key), row is base, marks.get(row.key, {}),
                     rank_view(row.key, stats.ranks))
            for row, (view, _, _) in zip(rows, made)]


def _published_rows(info: dict, problems: list[str]) -> tuple[list[dict], list[dict]]:
    """The published figures' rows in the table, and the sections of those published apart."""
    refs = [compared(v, None, False, {}, rank_view(v["key"], None))
            for v in reference_views(info["published"], info["measures"], problems)]
    apart = [{"title": title, "rows": reference_views(figures, info["measures"], problems, prefix=f"apart-{i}-")}
             for i, (title, figures) in enumerate(sorted(info["published_apart"].items()))]
    return refs, apart


def _label_views(views: list[dict], refs: list[dict], rows: list[Row]) -> dict[str, str]:
    """Gives every view its label (unique on the board) and returns the labels by row key."""
    labels = unique_labels(views, rows)
    for v in views + refs:
        v["label"] = labels.get(v["key"], v["name"])
    return labels


def _ordered_table(views: list[dict], refs: list[dict], tested_index: int) -> list[dict]:
    """The table's default order: best first on the tested measure, rows that saw test queries
    (declared) after the ranked ones."""
    def order(v):
        value = v["cells"][tested_index]["mean"]
        return (bool(v.get("seen")), value is None, -(value or 0.0), v["reference"], v["label"])

    return sorted(views + refs, key=order)


def _significance_rows(views: list[dict]) -> list[dict]:
    """The tested rows for the significance table, largest mean difference first."""
    return sorted(
        ({"view": v, "c": v["comparison"]} for v in views if v["comparison"] is not None),
        key=lambda s: (-s["c"].mean_diff, s["view"]["label"]),
    )


def _family_counts(table: list[dict]) -> list[dict]:
    """The known families and then any other on the board, each with its count of rows."""
    families = list(FAMILIES) + sorted({v["family"] for v in table if v["family"] and v["family"] not in FAMILIES})
    counts = {f: sum(1 for v in table if v["family"] == f) for f in families}
    return [{"name": f, "count": counts[f]} for f in families]


def _page_parts(table: list[dict], files: list[str], page_size: int) -> list[dict]:
    """The table cut into its static pages: each page's number, file, rows and row range."""
    return [{"number": i + 1, "file": file, "rows": table[i * page_size:(i + 1) * page_size],
             "first": i * page_size + 1, "last": min(len(table), (i + 1) * page_size)}
            for i, file in enumerate(files)]


def _script_blob(table: list[dict], made: list, rows: list[Row], labels_all: list[str], tested: str,
                 baseline_label: str | None, files: list[str], sig_href: str, page_size: int, top_title: str) -> dict:
    """The script's data of the board: what it needs to page, sort and filter across all rows."""
    row_data = {view["key"]: data for view, data, _ in made}
    return {
        "measures": labels_all,
        "order": [v["key"] for v in table],
        "page_size": page_size,
        "pages": files,
        "sig_href": sig_href,
        "splits": [[n, k] for n, k in rows[0].split_set],
        "has_pool": any(v["pool"] for v in table),
        "tested": tested,
        "baseline": baseline_label,
        "eff_columns": len(EFFICIENCY_COLUMNS),
        "top_title": top_title,
        "rows": {v["key"]: placed_row_data(row_data.get(v["key"]) if not v["reference"] else row_script_data(v), v, i // page_size)
                 for i, v in enumerate(table)},
    }


def _untested_problems(untested: list[tuple[Row, str]], labels: dict[str, str], base: Row | None,
                       tested: str) -> list[str]:
    """Why each untested row has no comparison with the baseline."""
    return [f"{labels[row.key]}: not tested against {labels[base.key]} on {tested} "
            f"({row.path} vs {base.path}): {why}"
            for row, why in untested]


def _presence(views: list[dict], refs: list[dict], table: list[dict]) -> dict:
    """Which optional columns and legends the page needs."""
    return {
        "has_refs": bool(refs),
        "has_pool": any(v["pool"] for v in table),
        "has_folds": any(v.get("multi_split") for v in views),
        "has_trained": any(v["trained"] for v in views),
        "has_seen": any(v.get("seen") for v in views),
        "has_levels": any(v.get("level") for v in views),
    }


def board_page(name: str, rows: list[Row], baseline: str, measure: str | None, dest: Path,
               task_slug: str, copy_runs: bool, results_root: Path, page_size: int = PAGE_SIZE,
               digests=None, tests=None) -> dict:
    """The board's page model. ``tests``: its significance tests begun earlier
    (:func:`start_tests`), else run here while a fork makes the rows."""
    info, tested, base = _board_tests(rows, baseline, measure)
    labels_all = [m["label"] for m in info["measures"]]
    made, stats = _made_rows(rows, info, tested, base, measure, dest, task_slug, copy_runs, results_root,
                             digests, tests)
    by_key = {row.key: row for row in rows}
    untested = [(by_key[k], why) for k, why in stats.untested]
    views = _compared_views(rows, made, stats, base)
    problems: list[str] = []
    refs, apart = _published_rows(info, problems)
    labels = _label_views(views, refs, rows)
    ranking = _ranking_words(stats.ranks, labels)
    for v in views:
        if v["rank"]["top"]:
            v["rank"]["title"] = ranking["top_title"]
    tested_index = labels_all.index(tested)
    table = _ordered_table(views, refs, tested_index)
    sig_rows = _significance_rows(views)
    files = _page_files(task_slug, len(table), page_size)
    sig_href = f"task-{task_slug}.significance.html" if len(files) > 1 and sig_rows else ""
    blob = _script_blob(table, made, rows, labels_all, tested, base and labels[base.key], files, sig_href,
                        page_size, ranking["top_title"])
    # a board of several pages keeps its JSON in one script beside them (loaded once, not
    # repeated in every page); a board of one page keeps it inline
    data_src = f"data/task-{task_slug}.js" if len(files) > 1 else ""
    charted = _chart_rows(rows, table, base)
    problems.extend(_untested_problems(untested, labels, base, tested))
    return {
        "ranking": ranking,
        "family": {"tests": stats.family.tests, "measures": list(stats.family.measures),
                   "results": len({key for key, _ in stats.family.marks})},
        "name": name,
        "slug": task_slug,
        "words": board_words(rows[0].task, info),
        "info": info,
        "published_apart": apart,
        "has_budget": any(v["budget"] for v in views),
        "problems": problems,
        "data_checksum": rows[0].results.task.data_checksum,
        "splits": [{"name": n, "n": k} for n, k in rows[0].split_set],
        "tested": tested,
        "baseline": base and labels[base.key],
        "baseline_wanted": baseline,
        "rows": table,
        "parts": _page_parts(table, files, page_size),
        "sig_href": sig_href,
        "data_src": data_src,
        "n_results": len(views),
        "sig_rows": sig_rows,
        "families": _family_counts(table),
        **_presence(views, refs, table),
        "levels": levels_legend(),
        "declared": DECLARED,
        "charts": _charts(charted, refs, info["measures"], tested, labels),
        # rows whose card declares seen test queries are out of the ranking, so off the frontier too
        "pareto": pareto_charts([(row.key, None if view.get("seen") else point)
                                 for row, (view, _, point) in zip(rows, made)], tested, labels),
        "breakdowns": breakdown_sections(charted, labels, tested),
        "eff_columns": EFFICIENCY_COLUMNS,
        "charted": len(charted) if len(charted) < len(rows) else 0,
        "blob": blob,
        # the index names the best row that saw no test query (such rows are out of the ranking)
        "best": next((v for v in table if not v["reference"] and not v.get("seen")), None),
        "tested_index": tested_index,
    }
