"""Boards and comparisons compare only like with like (issues 21 §2-3, 26, 27): published
figures on other data in their own block, budget rows badged, one row per configuration
whatever parameters were added since, a label's definition and the task version part of
a board's identity, `compare` refusing what is not comparable, non-results skipped quietly."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.contract.taskinfo import Published, PublishedData, check_info
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.provenance import reproduce_command, reproduce_line, source_words
from statbench.leaderboard.sample import make_results, write_result
from statbench.loading.taskdef import info_from_definition
from statbench.results.record import Results


def _blob(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1))


def _scores(value: float, n: int = 6, measures=("R@5", "R@10", "R@100", "nDCG@10")) -> dict:
    return {f"q{i}": {m: value + (i % 3) / 100 for m in measures} for i in range(n)}


def _builtin(results: dict) -> dict:
    """A result of statbench's own model of that name (so its declarations are read)."""
    results["model"]["plugin"] = {"name": results["model"]["name"], "distribution": "statbench", "version": "0.1.0"}
    return results


def _recorded(results: dict, defaults: dict) -> dict:
    """A result of statbench's own model whose run recorded ``defaults`` as its declared defaults."""
    results = _builtin(results)
    results["model"]["defaults"] = dict(defaults)
    return results


# --- published figures: ranked only on the same data ------------------------------------------


def _stard_result(tmp_path, n_queries: int, corpus_size: int | None, name: str = "bm25"):
    from statbench.tasks.stard import Stard

    labels = [m.label for m in Stard.measures]
    per_query = {f"q{i}": {m: 0.5 + (i % 7) / 100 for m in labels} for i in range(n_queries)}
    qids = sorted(per_query)
    folds = {f"fold-{k + 1}": qids[k::5] for k in range(5)}
    results = make_results(per_query, task="stard", measures=labels, splits=folds, model=name)
    results["measures"] = [{"label": m.label, "ir_measure": m.ir_measure} for m in Stard.measures]
    if corpus_size is not None:
        results["task"]["corpus_size"] = corpus_size
    write_result(tmp_path / "r" / name, results)


def test_published_figures_on_other_data_are_a_block_of_their_own(tmp_path):
    from statbench.tasks.stard import Stard

    _stard_result(tmp_path, 1543, 58279)
    report = build_site(tmp_path / "r", tmp_path / "site")
    html = (tmp_path / "site" / "task-stard.html").read_text("utf-8")
    blob = _blob(html)
    # not in the ranked table, its script data, its tests or its plots
    assert html.count('<tbody class="row ref"') == 0 and not any(r["ref"] for r in blob["rows"].values())
    assert "(published)" not in html.split('<section class="charts">')[1]
    assert ("<h3>Reported on the paper&#39;s corpus: 55,348 articles, 1,543 queries (upstream STARD corpus.jsonl "
            "(oneal2000/STARD)); this board: 58,279 articles, 1,543 queries</h3>") in html
    block = html.split('id="published-apart"')[1].split("</section>")[0]
    assert block.count("<tr><td class=\"model\">") == len(Stard.definition["published"])
    assert "sig" not in block and "0.9065" in block  # Dense-STARD's R@100, shown as reported
    assert "stard · 58,279 articles, 1,543 queries · protocol 5-fold" in html
    assert report.problems == []


def test_published_figures_on_the_same_data_are_ranked(tmp_path):
    from statbench.tasks.stard import Stard

    _stard_result(tmp_path, 1543, 55348)
    build_site(tmp_path / "r", tmp_path / "site")
    html = (tmp_path / "site" / "task-stard.html").read_text("utf-8")
    assert html.count('<tbody class="row ref"') == len(Stard.definition["published"])
    assert 'id="published-apart"' not in html
    # the same data, but a label the board defines otherwise: apart again
    redefined = json.loads((tmp_path / "r" / "bm25" / "results.json").read_text("utf-8"))
    redefined["measures"][-1]["ir_measure"] = "P@10"
    write_result(tmp_path / "r" / "bm25", redefined)
    build_site(tmp_path / "r", tmp_path / "site2")
    html = (tmp_path / "site2" / "task-stard.html").read_text("utf-8")
    assert html.count('<tbody class="row ref"') == 0
    assert "<h3>Reported with the task&#39;s measure definitions; this board defines MRR@10 otherwise</h3>" in html


def test_published_data_is_declared_checked_and_defaulted():
    definition = {"name": "t", "title": "T", "language": "en", "relevance": {"1": "x"}, "depth": 10,
                  "measures": [{"label": "R@5", "ir_measure": "R@5"}],
                  "published_data": {"corpus_size": 100, "queries": 10, "description": "the paper's corpus"},
                  "published": {"a": {"source": "s", "scores": {"R@5": 0.5}},
                                "b": {"source": "s", "scores": {"R@5": 0.4}, "data": {"queries": 7}}}}
    info = info_from_definition(definition)
    a, b = info.published
    assert a.data == PublishedData(corpus_size=100, queries=10, description="the paper's corpus")
    assert b.data.corpus_size == 100 and b.data.queries == 7  # the figure's own fields over the task's
    assert a.same_data(corpus_size=100, queries=10) and not a.same_data(corpus_size=1842, queries=10)
    assert not a.same_data(corpus_size=None, queries=10)  # unknown is not the same data
    bad = Published(label="x", source="s", scores={"R@5": 0.1}, data=PublishedData(corpus_size=0, checksum="abc"))
    problems = check_info(type(info)(**{**info.__dict__, "published": (bad,)}))
    assert "published figures 'x': data corpus_size must be an int >= 1, found 0" in problems
    assert any("checksum 'abc' must be a sha256" in p for p in problems)
    for task in ("stard", "ukstat", "bsard"):
        from statbench.registry.plugins import get_registry

        info = get_registry().tasks[task].cls.task_info()
        assert check_info(info) == [] and all(p.data is not None and p.data.corpus_size for p in info.published)


# --- budget rows ------------------------------------------------------------------------------


def test_budget_rows_are_badged_migrated_from_declarations_and_can_be_hidden(tmp_path):
    root = tmp_path / "r"
    write_result(root / "bm25", make_results(_scores(0.3)))
    # written before model.budget existed: the installed dsr declares preset=cpu-small a budget
    write_result(root / "dsr", _builtin(make_results(_scores(0.2), model="dsr", family="dense",
                                                     params={"preset": "cpu-small"})))
    recorded = make_results(_scores(0.25), model="other", family="dense")
    recorded["model"]["budget"] = "preset=tiny"
    write_result(root / "other", recorded)
    build_site(root, tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    rows = {r["name"]: r for r in _blob(html)["rows"].values()}
    assert rows["dsr"]["budget"] == "preset=cpu-small" and rows["other"]["budget"] == "preset=tiny"
    assert rows["bm25"]["budget"] == ""
    assert '<span class="badge budget" title="reduced budget: preset=cpu-small">budget: cpu-small</span>' in html
    assert '<input type="checkbox" name="budget" checked> reduced-budget rows' in html


# --- one row per configuration; Holm counts real comparisons -----------------------------------


def test_a_parameter_added_with_its_old_default_keeps_the_row(tmp_path):
    from statbench.registry.plugins import get_registry

    defaults = get_registry().retrievers["bm25"].cls.defaults()
    old = {k: v for k, v in defaults.items() if k != "with_headings"}  # written before the parameter existed
    root = tmp_path / "r"
    # each run records the defaults it was declared with (model.defaults): the old one's lack with_headings
    write_result(root / "old", _recorded(make_results(_scores(0.3), params=old, created="2024-01-01T00:00:00+00:00"),
                                         old))
    write_result(root / "new", _recorded(make_results(_scores(0.3), params=defaults,
                                                      created="2024-02-01T00:00:00+00:00"), defaults))
    write_result(root / "headings", _recorded(make_results(_scores(0.4), params={**defaults, "with_headings": True}),
                                              defaults))
    write_result(root / "ql", make_results(_scores(0.5), model="ql"))
    report = build_site(root, tmp_path / "site")
    assert report.rows == 3 and report.problems == []
    assert any("old/results.json: superseded by" in n for n in report.notes)
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    # bm25 never against itself: 2 results, each on the 4 measures
    assert "Holm–Bonferroni over the 8 tests of this board: 2 results tested on 4 measures" in html


# --- a label is not a measure; the task version counts -----------------------------------------


def _redefined(value: float, spelling: str, **options) -> dict:
    results = make_results(_scores(value), **options)
    for m in results["measures"]:
        if m["label"] == "nDCG@10":
            m["ir_measure"] = spelling
    return results


def test_a_redefined_label_or_another_task_version_is_another_board(tmp_path):
    root = tmp_path / "r"
    write_result(root / "a", make_results(_scores(0.3)))
    write_result(root / "b", make_results(_scores(0.4), model="ql"))
    write_result(root / "p1", _redefined(0.9, "P@1", model="ql2"))
    v2 = make_results(_scores(0.8), model="ql3")
    v2["task"]["version"] = "2"
    write_result(root / "v2", v2)
    boards = collect(root).boards
    assert sorted(boards) == ["toy", "toy @ other measure definitions", "toy @ version 2"]
    assert [r.name for r in boards["toy"]] == ["bm25", "ql"]
    # results written before task.version was recorded are read as version 1
    legacy = make_results(_scores(0.35), model="legacy")
    legacy["task"].pop("version", None)
    write_result(root / "legacy", legacy)
    assert sorted(r.name for r in collect(root).boards["toy"]) == ["bm25", "legacy", "ql"]


def test_compare_refuses_other_definitions_and_versions(tmp_path):
    a = write_result(tmp_path / "a", make_results(_scores(0.3)))
    b = write_result(tmp_path / "b", _redefined(0.4, "P@1", model="ql"))
    result = CliRunner().invoke(cli, ["compare", str(a), str(b)])
    assert result.exit_code == 2
    assert f"nDCG@10 means nDCG@10 in {a} but P@1 in {b}: a label is not a measure; not comparable" in result.output
    # another measure, defined alike on both sides, is compared
    assert CliRunner().invoke(cli, ["compare", str(a), str(b), "--measure", "R@5"]).exit_code == 0
    v2 = make_results(_scores(0.4), model="ql")
    v2["task"]["version"] = "2"
    c = write_result(tmp_path / "c", v2)
    result = CliRunner().invoke(cli, ["compare", str(a), str(c), "--measure", "R@5"])
    assert result.exit_code == 2 and "different versions of the task (1 and 2)" in result.output


def test_compare_measure_accumulates(tmp_path):
    a = write_result(tmp_path / "a", make_results(_scores(0.3, n=8)))
    b = write_result(tmp_path / "b", make_results(_scores(0.5, n=8), model="ql"))
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--measure", "R@10", "--measure", "R@5", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [c["measure"] for c in out["comparisons"]] == ["R@10", "R@5"] and out["holm_over"] == "measures"
    assert all(c["p_holm"] == pytest.approx(min(1.0, 2 * c["p_value"])) for c in out["comparisons"])
    text = CliRunner().invoke(cli, ["compare", str(a), str(b), "--measure", "R@10", "--measure", "R@5"])
    assert "measure R@10, 8 paired queries" in text.output and "measure R@5, 8 paired queries" in text.output
    assert "(Holm over the 2 measures:" in text.output


# --- non-results, reproduce commands -----------------------------------------------------------


def test_files_that_are_not_results_are_skipped_quietly(tmp_path):
    root = tmp_path / "r"
    write_result(root / "bm25", make_results(_scores(0.3)))
    (root / "summary.json").write_text(json.dumps({"stard-sub": {"R@100": 0.5}}), encoding="utf-8")
    (root / "pool.sidecar.json").write_text(json.dumps({"command": "x", "depth": 100}), encoding="utf-8")
    (root / "broken").mkdir()
    (root / "broken" / "results.json").write_text(json.dumps({"note": "not results"}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(root), "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert "note: 2 JSON file(s) that are not results skipped (pool.sidecar.json, summary.json)" in lines
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 1 and "broken/results.json: does not match the results schema" in warnings[0]


def test_reproduce_command_is_what_a_stranger_types():
    results = Results.from_json(make_results(_scores(0.3), command="statbench run --task toy --model bm25 "
                                                                  "--data-dir ../shared/data/toy --param k1=1.2"))
    assert reproduce_command(results) == ("statbench run --task toy --model bm25 "
                                          "--data-dir $HOME/statbench-data/toy --param k1=1.2")
    # no source recorded (not a submission): no `pip install` of what no index may hold, said instead
    assert reproduce_line(results, None) == reproduce_command(results)
    assert source_words(results, None).startswith("source not recorded: statbench-sample 0.0.1 (installed where it ran")
    own = _builtin(make_results(_scores(0.3), command="statbench run --task toy --model bm25 --data-dir=data"))
    assert reproduce_command(Results.from_json(own)) == \
        "statbench run --task toy --model bm25 --data-dir=$HOME/statbench-data/toy"


def test_two_pools_of_one_name_built_differently_are_two_rows(tmp_path):
    """results.json records the pool file's sha256; a pool rebuilt differently under the same
    name ranks other candidates, so it never supersedes (or is tested as) the other."""
    root = tmp_path / "r"
    for name, value, sha in (("a", 0.3, "a" * 64), ("b", 0.4, "b" * 64)):
        results = make_results(_scores(value), model="bm25")
        results.update(pool="hand", pool_sha256=sha)
        write_result(root / name, results)
    report = build_site(root, tmp_path / "site")
    assert report.problems == [] and report.rows == 2
    assert not any("superseded" in n for n in report.notes)


def test_a_pool_run_records_the_pool_files_sha256(tmp_path):
    import hashlib

    from fixture_data import write_uk_pool

    data = write_uk_pool(tmp_path / "uk", {"p-a": "employer pays wages", "p-b": "tenant rent"},
                         {"Q1": "who pays wages"}, "Q1\t0\tp-a\t3\n", "Q1 Q0 p-b 1 2.0 x\nQ1 Q0 p-a 2 1.0 x\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "--task", "ukstat", "--pool", "hand", "--data-dir", str(data),
                                      "--output", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    recorded = Results.read(out / "results.json")
    assert recorded.pool == "hand"
    assert recorded.pool_sha256 == hashlib.sha256((data / "pools" / "hand.trec").read_bytes()).hexdigest()
