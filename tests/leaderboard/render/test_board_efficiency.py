"""Issue 22 on the board: efficiency and cost columns (blank where not measured, never 0),
the quality-vs-latency / quality-vs-cost Pareto plots (the frontier is exactly the
non-dominated rows), verification badges, and incremental builds (only a changed board is
rendered again, and the site equals a full build byte for byte)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from statbench.leaderboard.caches import incremental
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.ranking import significance
from statbench.leaderboard.render import board_files
from statbench.leaderboard.render import build as build_module
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.efficiency import COLUMNS, DECLARED, efficiency_cells, pareto_front
from statbench.leaderboard.render.plots import Point, pareto_plot
from statbench.leaderboard.sample import make_results, write_result
from statbench.leaderboard.verify.verify import Verification

MEASURED = {
    "index_seconds": 0.0, "search_seconds": 0.024,  # 6 queries at 250 q/s
    "query_latency": {"median_ms": 4.0, "p95_ms": 9.5, "batch_size": 32, "queries": 6},
    "throughput_qps": 250.0, "peak_memory_mb": 1536.0, "index_bytes": 3 * 2**20,
    "hardware": {"cpu_model": "AMD EPYC 9654", "cpu_cores": 2, "gpu": None},
}


def _scores(value: float, n: int = 6) -> dict:
    return {f"q{i}": {m: min(1.0, value + i / 100) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(n)}


def _result(root: Path, folder: str, value: float, efficiency: dict | None = None, task: str = "toy", **options):
    results = make_results(_scores(value), task=task, model=options.pop("model", folder), **options)
    if efficiency is not None:
        results["efficiency"] = efficiency
    return write_result(root / task / folder, results, f"q0 Q0 d0 1 1.0 {folder}\n")


def _cells(html: str, key: str) -> list[str]:
    """The efficiency cells of a row, as text."""
    body = re.search(rf'<tbody class="row[^"]*" data-key="{key}".*?</tbody>', html, re.S).group(0)
    main = re.search(r'<tr class="main">.*?</tr>', body, re.S).group(0)
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r'<td class="eff[^"]*"[^>]*>(.*?)</td>', main, re.S)]


def _blob(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1))


# --- the Pareto frontier ---------------------------------------------------------------------


def _brute_force(points):
    return sorted(i for i, (x, y) in enumerate(points)
                  if not any(a <= x and b >= y and (a < x or b > y) for a, b in points))


@pytest.mark.parametrize("seed", range(20))
def test_pareto_front_is_exactly_the_non_dominated_points(seed):
    rng = random.Random(seed)
    # few distinct values: ties in cost, in quality and whole duplicates
    points = [(rng.choice([0.5, 1.0, 2.0, 4.0, 8.0]), rng.choice([0.1, 0.2, 0.3, 0.4])) for _ in range(rng.randint(1, 30))]
    front = pareto_front(points)
    assert sorted(front) == _brute_force(points)
    assert [points[i][0] for i in front] == sorted(points[i][0] for i in front)  # cheapest first


def test_pareto_front_examples():
    assert pareto_front([(1, 0.5), (2, 0.4), (3, 0.6), (3, 0.6), (0.5, 0.1)]) == [4, 0, 2, 3]
    assert pareto_front([]) == []
    assert pareto_front([(1, 0.5), (1, 0.5)]) == [0, 1]  # equal rows: neither dominates


def test_pareto_plot_marks_exactly_the_frontier_rows():
    points = [Point("a", 1.0, 0.30), Point("b", 2.0, 0.50), Point("c", 3.0, 0.40), Point("d", 50.0, 0.70),
              Point("e", 60.0, 0.70)]
    svg = pareto_plot(points, "t", "latency", "nDCG@10")
    front = re.findall(r'<circle class="front"[^>]*><title>([^:]+):', svg)
    dominated = re.findall(r'<circle class="dominated"[^>]*><title>([^:]+):', svg)
    assert front == ["a", "b", "d"] and sorted(dominated) == ["c", "e"]
    assert "(log scale)" in svg  # 1 to 60 ms spans more than 20x
    assert pareto_plot(points[:1], "t", "x", "y") == ""  # one row: nothing to trade off


# --- the columns -------------------------------------------------------------------------------


def test_cells_are_blank_where_not_measured_never_zero():
    from statbench.results.record import Results

    assert [c["text"] for c in efficiency_cells(None)] == [""] * len(COLUMNS)
    partial = {"query_latency": {"median_ms": 12.25, "p95_ms": 40.0, "batch_size": 1, "queries": 100}}
    cells = {c["key"]: c for c in efficiency_cells({"efficiency": partial})}
    assert cells["latency_median"]["text"] == "12.2 ms" and cells["latency_median"]["title"] == "over 100 queries"
    assert cells["batch_size"]["text"] == "1"
    for key in ("index_seconds", "throughput", "peak_memory", "index_size", "hardware", "api_documents", "cost"):
        assert cells[key]["text"] == "" and cells[key]["value"] is None, key
    # a measured 0 is shown as 0; the typed record reads like the mapping
    record = Results.from_json({**make_results(_scores(0.3)), "efficiency": MEASURED})
    cells = {c["key"]: c["text"] for c in efficiency_cells(record)}
    assert cells["index_seconds"] == "0 s" and cells["index_size"] == "3.00 MiB" and cells["peak_memory"] == "1,536 MB"
    assert cells["hardware"] == "AMD EPYC 9654 (2 cores)" and cells["throughput"] == "250 q/s"


def test_board_columns_hidden_by_default_blank_where_not_measured(tmp_path):
    root = tmp_path / "results"
    _result(root, "bm25", 0.3, MEASURED)
    _result(root, "dense", 0.5)  # nothing measured
    paid = {"query_latency": {"median_ms": 300.0, "p95_ms": 500.0, "batch_size": 1, "queries": 6},
            "api": {"documents_sent": 600, "tokens_sent": None, "cost_usd": 0.0123, "price": "$2.00 per 1,000 searches"}}
    _result(root, "rr", 0.6, paid, reranker={"name": "cohere-rerank", "family": "reranker", "params": {}, "version": "1",
                                            "plugin": {"name": "cohere-rerank", "distribution": "x", "version": "1"}})
    report = build_site(root, tmp_path / "site")
    assert report.problems == []
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    headers = re.findall(r'<th data-col="e:([a-z0-9_]+)"[^>]*class="eff', html)
    assert headers == [c.key for c in COLUMNS]
    # every efficiency figure is the submitter's measurement: its header says it is declared
    titles = re.findall(r'<th data-col="e:[a-z0-9_]+"[^>]*><button type="button" class="sort" title="([^"]*)">', html)
    assert len(titles) == len(COLUMNS) and all(title.endswith(f"({DECLARED})") for title in titles)
    assert '<input type="checkbox" name="efficiency" id="show-efficiency">' in html  # off by default
    css = (tmp_path / "site" / "static" / "leaderboard.css").read_text("utf-8")
    assert "table.lb .eff { display: none; }" in css
    blob = _blob(html)
    keys = {blob["rows"][k]["name"]: k for k in blob["order"]}
    assert _cells(html, keys["bm25"]) == ["0 s", "4.00 ms", "9.50 ms", "32", "250 q/s", "1,536 MB", "3.00 MiB",
                                          "AMD EPYC 9654 (2 cores)", "", "", ""]
    assert _cells(html, keys["dense"]) == [""] * len(COLUMNS)
    rr = _cells(html, keys["rr"])
    assert rr[1] == "300 ms" and rr[0] == "" and rr[-3:] == ["600", "", "$0.0123"]
    assert 'title="at $2.00 per 1,000 searches"' in html
    # the script's copy: measured values to sort by, nothing for what was not measured
    assert blob["rows"][keys["dense"]]["effv"] == {}
    assert blob["rows"][keys["bm25"]]["effv"]["index_seconds"] == 0.0
    assert blob["eff_columns"] == len(COLUMNS)
    # the latency plot: the two rows with a latency; no cost plot for one costed row
    assert html.count('class="chart pareto"') == 1
    assert "2 of 3 results have a measured query latency and are drawn" in html
    assert "Mixed hardware (2 configurations: AMD EPYC 9654 (2 cores); not recorded)" in html


# --- verification badges -----------------------------------------------------------------------


def test_verification_badges_and_refused_rows_never_published(tmp_path, monkeypatch):
    root = tmp_path / "results"
    _result(root, "bm25", 0.3)
    _result(root, "ok", 0.4)
    _result(root, "maybe", 0.5)
    _result(root, "bad", 0.6)
    plain = build_site(root, tmp_path / "plain")
    assert 'class="badge verified"' not in (tmp_path / "plain" / "task-toy.html").read_text("utf-8")
    assert plain.rows == 4
    found = {
        "ok": Verification("verified", None, "2026-11-25", "0.1.0"),
        "bm25": Verification("verified", None, "2026-11-25", "0.1.0"),
        "maybe": Verification("unverifiable", "no local data of version 2 of toy", None, None),
        "bad": Verification("refused", "R@5 on fold-1: claimed 0.6 vs re-scored 0.5", None, None),
    }
    real = build_module.collect

    def collect(results_dir, verify=None, records=None):
        collected = real(results_dir)
        for rows in collected.boards.values():
            for row in rows:
                row.verification = found[row.model.name]
        return collected

    monkeypatch.setattr(build_module, "collect", collect)
    report = build_site(root, tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert report.rows == 3 and ">bad<" not in html
    assert any("refused" in p and "claimed 0.6 vs re-scored 0.5" in p for p in report.problems)
    # the badge says the level in words (issue 34): verified rows re-scored, the unverifiable one self-reported
    badges = re.findall(r'<span class="badge level (re-scored|self-reported)" title="([^"]*)">', html)
    assert sorted(b[0] for b in badges) == ["re-scored", "re-scored", "self-reported"]
    assert any("on 2026-11-25 by statbench 0.1.0" in title for level, title in badges if level == "re-scored")
    assert ("self-reported", "not re-scored: no local data of version 2 of toy") in badges
    blob = _blob(html)
    assert sorted(r["ver"][0] for r in blob["rows"].values() if r["ver"]) == ["unverifiable", "verified", "verified"]
    assert sorted(r["lvl"][0] for r in blob["rows"].values()) == ["re-scored", "re-scored", "self-reported"]


# --- incremental builds ------------------------------------------------------------------------


def _tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _inodes(site: Path, prefix: str) -> dict[str, int]:
    return {str(p.relative_to(site)): p.stat().st_ino for p in site.rglob("*")
            if p.is_file() and (p.name.startswith(prefix) or f"/{prefix.split('-', 1)[-1]}/" in f"/{p.relative_to(site)}")}


def _two_boards(root: Path) -> None:
    for i, task in enumerate(("toy", "other")):
        _result(root, "bm25", 0.3 + i / 10, MEASURED, task=task)
        _result(root, "ql", 0.4 + i / 10, task=task)
        _result(root, "dense", 0.2 + i / 10, task=task)


def test_incremental_build_renders_only_the_changed_board_and_equals_a_full_build(tmp_path, monkeypatch):
    root = tmp_path / "results"
    _two_boards(root)
    first = build_site(root, tmp_path / "site")
    assert first.rendered == ["other", "toy"]
    other_before = _inodes(tmp_path / "site", "task-other")
    toy_before = _inodes(tmp_path / "site", "task-toy")
    assert any(k.startswith("runs/other/") for k in other_before) and "task-other.html" in other_before
    # nothing changed: nothing rendered, nothing tested
    calls = []
    real = board_files.board_page
    monkeypatch.setattr(board_files, "board_page", lambda name, *a, **k: calls.append(name) or real(name, *a, **k))
    again = build_site(root, tmp_path / "site")
    assert again.rendered == [] and calls == [] and again.rows == 6 and again.pages == first.pages
    # one result added to toy: only toy is rendered; other's files are the previous build's
    _result(root, "colbert", 0.7, task="toy")
    report = build_site(root, tmp_path / "site")
    assert report.rendered == ["toy"] and calls == ["toy"]
    assert _inodes(tmp_path / "site", "task-other") == other_before
    assert all(_inodes(tmp_path / "site", "task-toy").get(k) != v for k, v in toy_before.items() if k.endswith(".html"))
    full = build_site(root, tmp_path / "full")
    assert full.rendered == ["other", "toy"]
    assert _tree(tmp_path / "site") == _tree(tmp_path / "full")
    assert (report.problems, report.notes, report.rows, [p.name for p in report.pages]) == \
        (full.problems, full.notes, full.rows, [p.name for p in full.pages])


def test_incremental_build_renders_again_what_changed_under_it(tmp_path):
    root = tmp_path / "results"
    _two_boards(root)
    build_site(root, tmp_path / "site")
    # a page of the previous site edited by hand: not taken, the board is rendered again
    page = tmp_path / "site" / "task-other.html"
    page.write_text(page.read_text("utf-8").replace("bm25", "bm26"), encoding="utf-8")
    assert build_site(root, tmp_path / "site").rendered == ["other"]
    assert "bm26" not in page.read_text("utf-8")
    # a results file changed in place: its board is rendered again
    path = root / "toy" / "ql" / "results.json"
    data = json.loads(path.read_text("utf-8"))
    data["command"] += " --param k1=1.0"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert build_site(root, tmp_path / "site").rendered == ["toy"]
    # other build options, or another version of the site's code: everything
    assert build_site(root, tmp_path / "site", baseline="ql").rendered == ["other", "toy"]
    marker = tmp_path / "site" / ".statbench-site"
    marker.write_text(marker.read_text("utf-8").replace(incremental.code_digest(), "0" * 64), encoding="utf-8")
    assert build_site(root, tmp_path / "site", baseline="ql").rendered == ["other", "toy"]
    marker.write_text("built by statbench leaderboard build; this folder is replaced on each build\n{", encoding="utf-8")
    assert build_site(root, tmp_path / "site", baseline="ql").rendered == ["other", "toy"]


def test_record_cache_reads_a_file_once_and_never_trusts_a_changed_one(tmp_path):
    from statbench.leaderboard.caches.records import RecordCache
    from statbench.leaderboard.collect.reading import collect

    root = tmp_path / "results"
    _two_boards(root)
    cache = RecordCache(tmp_path / "records")
    first = collect(root, records=cache)
    assert (cache.hits, cache.misses) == (0, 6)
    again = collect(root, records=cache)
    assert (cache.hits, cache.misses) == (6, 6)
    assert {n: [r.results for r in rows] for n, rows in again.boards.items()} == \
        {n: [r.results for r in rows] for n, rows in first.boards.items()}
    # a file changed: read again, and its new figures are the ones collected
    path = root / "toy" / "ql" / "results.json"
    data = json.loads(path.read_text("utf-8"))
    data["created"] = "2024-06-01T00:00:00+00:00"
    path.write_text(json.dumps(data), encoding="utf-8")
    changed = collect(root, records=cache)
    assert (cache.hits, cache.misses) == (11, 7)
    assert [r.results.created for r in changed.boards["toy"] if r.model.name == "ql"] == ["2024-06-01T00:00:00+00:00"]
    # a damaged entry does not verify: the file is read again
    for entry in (tmp_path / "records").rglob("*.pickle"):
        raw = bytearray(entry.read_bytes())
        raw[-5] ^= 0xFF
        entry.write_bytes(bytes(raw))
    cache = RecordCache(tmp_path / "records")
    collect(root, records=cache)
    assert (cache.hits, cache.misses) == (0, 6)
    # a broken file is never cached: reported on every build
    (root / "toy" / "bad").mkdir()
    (root / "toy" / "bad" / "results.json").write_text("{", encoding="utf-8")
    for _ in range(2):
        assert any("bad/results.json" in p for p in collect(root, records=cache).problems)


def test_cached_records_read_their_per_query_scores_only_when_used(tmp_path):
    from statbench.errors import StatbenchError
    from statbench.leaderboard.caches.records import LazyQueries, RecordCache
    from statbench.leaderboard.collect.reading import collect

    root = tmp_path / "results"
    _two_boards(root)
    first = collect(root, records=RecordCache(tmp_path / "records"))
    again = collect(root, records=RecordCache(tmp_path / "records"))
    for name, rows in again.boards.items():
        for row, before in zip(rows, first.boards[name], strict=True):
            assert isinstance(row.results.per_query, LazyQueries) and not row.results.per_query._filled
            for label in before.results.labels:
                assert row.query_scores(label) == before.results.query_scores(label)
            assert row.queries_sha256 == before.queries_sha256
            assert not row.results.per_query._filled  # one measure's column, not the whole table
            assert row.results == before.results and row.results.per_query == before.results.per_query
    expected = first.boards["toy"][0].results.query_scores("R@5")

    def damage_queries():
        for file in (tmp_path / "records").rglob("*.queries.pickle"):
            raw = bytearray(file.read_bytes())
            raw[-3] ^= 0xFF
            file.write_bytes(bytes(raw))

    # a per-query file that does not verify: the scores are read again from the results file
    damage_queries()
    rows = collect(root, records=RecordCache(tmp_path / "records")).boards["toy"]
    assert rows[0].query_scores("R@5") == expected
    # ... unless the results file changed since the entry was made: the build stops, one line
    damage_queries()
    rows = collect(root, records=RecordCache(tmp_path / "records")).boards["toy"]
    # (by its content: rewriting the same bytes is no change, one more byte is)
    rows[0].path.write_bytes(rows[0].path.read_bytes() + b"\n")
    with pytest.raises(StatbenchError, match=r"results\.json changed while the leaderboard was being built"):
        rows[0].query_scores("R@5")


def test_validating_in_workers_gives_what_one_process_gives(tmp_path, monkeypatch):
    from statbench.leaderboard import forkmap
    from statbench.leaderboard.caches.records import RecordCache
    from statbench.leaderboard.collect import reading as collect_module

    root = tmp_path / "results"
    _two_boards(root)
    _result(root, "ql-again", 0.45, model="ql", created="2024-06-01T00:00:00+00:00")  # supersedes toy/ql
    (root / "toy" / "broken").mkdir()
    (root / "toy" / "broken" / "results.json").write_text('{"schema_version": 1}', encoding="utf-8")
    (root / "toy" / "summary.json").write_text('{"runs": 3}', encoding="utf-8")
    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    monkeypatch.setattr(collect_module, "PARALLEL_MIN", 1)
    parallel = collect_module.collect(root, records=RecordCache(tmp_path / "a"))
    monkeypatch.setattr(collect_module, "PARALLEL_MIN", 10**9)
    serial = collect_module.collect(root, records=RecordCache(tmp_path / "b"))
    plain = collect_module.collect(root)
    for got in (parallel, serial):
        assert (got.problems, got.notes) == (plain.problems, plain.notes)
        assert any("broken/results.json" in p for p in got.problems) and any("superseded" in n for n in got.notes)
        assert {name: [(r.key, r.path, r.results) for r in rows] for name, rows in got.boards.items()} == \
            {name: [(r.key, r.path, r.results) for r in rows] for name, rows in plain.boards.items()}
    # and the sites: validated in workers, then from the cache, equal a site built in one process
    monkeypatch.setattr(collect_module, "PARALLEL_MIN", 1)
    build_site(root, tmp_path / "site-workers")
    build_site(root, tmp_path / "site-cached")
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(collect_module, "PARALLEL_MIN", 10**9)
    build_site(root, tmp_path / "site-serial")
    assert _tree(tmp_path / "site-workers") == _tree(tmp_path / "site-serial") == _tree(tmp_path / "site-cached")


def test_a_board_tests_again_only_the_rows_whose_scores_changed(tmp_path, monkeypatch):
    from statbench.leaderboard.render import task_page

    monkeypatch.setenv("STATBENCH_BUILD_PROCESSES", "1")  # the tests counted in this process (no fork)
    root = tmp_path / "results"
    _two_boards(root)
    tested = []
    real = significance.pair_figures
    # where the board's tests call it (imported there by name)
    monkeypatch.setattr(task_page, "pair_figures", lambda base, systems, *a: tested.append(sorted(systems)) or
                        real(base, systems, *a))
    build_site(root, tmp_path / "site")
    assert len(tested) == 2 and all(len(keys) == 2 for keys in tested)  # ql and dense on each board
    keys = {r.model.name: r.key for rows in collect(root).boards.values() for r in rows if r.task == "toy"}
    # another board's row added: nothing on toy is tested again (toy is not even rendered)
    tested.clear()
    _result(root, "colbert", 0.6, task="other")
    assert build_site(root, tmp_path / "site").rendered == ["other"] and tested == [[_key(root, "other", "colbert")]]
    # one per-query score of ql on toy changed (its figures stay consistent): only ql is tested again
    tested.clear()
    scores = _scores(0.4)
    scores["q3"]["R@10"] = 0.5
    results = make_results(scores, task="toy", model="ql")
    write_result(root / "toy" / "ql", results, "q0 Q0 d0 1 1.0 ql\n")
    report = build_site(root, tmp_path / "site")
    assert report.rendered == ["toy"] and tested == [[keys["ql"]]]
    # the figures are those of a build that tests everything from nothing, byte for byte
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "empty-cache"))
    tested.clear()
    build_site(root, tmp_path / "full")
    assert sorted(map(len, tested)) == [2, 3]
    assert _tree(tmp_path / "site") == _tree(tmp_path / "full")
    # a kept comparison that does not verify is not used: tested again, same site
    for file in (tmp_path / "empty-cache" / "leaderboard-significance").rglob("*.pickle"):
        raw = bytearray(file.read_bytes())
        raw[-2] ^= 0xFF
        file.write_bytes(bytes(raw))
    tested.clear()
    build_site(root, tmp_path / "again")
    assert sorted(map(len, tested)) == [2, 3] and _tree(tmp_path / "again") == _tree(tmp_path / "full")


def _key(root: Path, task: str, model: str) -> str:
    return next(r.key for rows in collect(root).boards.values() for r in rows
                if r.task == task and r.model.name == model)


def test_no_worker_processes_to_be_had_validates_in_this_process(tmp_path, monkeypatch):
    import concurrent.futures

    from statbench.leaderboard import forkmap
    from statbench.leaderboard.caches.records import RecordCache
    from statbench.leaderboard.collect import reading as collect_module

    root = tmp_path / "results"
    _two_boards(root)

    def refused(*args, **kwargs):
        raise OSError("no semaphores here")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refused)
    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    monkeypatch.setattr(collect_module, "PARALLEL_MIN", 1)
    got = collect_module.collect(root, records=RecordCache(tmp_path / "records"))
    plain = collect_module.collect(root)
    assert {n: [r.results for r in rows] for n, rows in got.boards.items()} == \
        {n: [r.results for r in rows] for n, rows in plain.boards.items()}
