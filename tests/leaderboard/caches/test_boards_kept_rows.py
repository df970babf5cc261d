"""Red-team of the boards (R3): which result of a configuration a board keeps, what a
configuration is, when published figures are ranked beside runs, what a task may declare."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.api import Measure, Task
from statbench.commands.cli import cli
from statbench.contract.taskinfo import Protocol, Published, PublishedData, TaskInfo, check_info
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import make_results, write_result
from statbench.testing import registered_plugin


def _scores(value: float, n: int = 6, measures=("R@5", "R@10", "R@100", "nDCG@10")) -> dict:
    return {f"q{i}": {m: value + (i % 3) / 100 for m in measures} for i in range(n)}


def _blob(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1))


# --- which of two results of one configuration is shown ----------------------------------------


def test_newer_is_decided_by_time_not_by_text(tmp_path):
    root = tmp_path / "r"
    # 12:00 at +02:00 is 10:00 UTC: older than 11:00 UTC, though later as text
    write_result(root / "a", make_results(_scores(0.3), created="2024-05-01T12:00:00+02:00"))
    write_result(root / "b", make_results(_scores(0.4), created="2024-05-01T11:00:00Z"))
    collected = collect(root)
    (row,) = collected.boards["toy"]
    assert row.path == root / "b" / "results.json"
    assert f"skipped {root / 'a' / 'results.json'}: superseded by {root / 'b' / 'results.json'} " \
           "(same configuration, newer)" in collected.notes


def test_no_time_decides_then_it_is_said(tmp_path):
    root = tmp_path / "r"
    write_result(root / "a", make_results(_scores(0.3), created="2024-05-01T12:00:00+00:00"))
    write_result(root / "b", make_results(_scores(0.4), created="2024-05-01T12:00:00+00:00"))
    collected = collect(root)
    assert [r.path for r in collected.boards["toy"]] == [root / "a" / "results.json"]
    assert collected.problems == [f"skipped {root / 'b' / 'results.json'}: same configuration as "
                                  f"{root / 'a' / 'results.json'}, which is shown: both written at "
                                  "'2024-05-01T12:00:00+00:00'; kept the first by path"]
    # a copy with the same figures is only noted
    write_result(root / "b", make_results(_scores(0.3), created="2024-05-01T12:00:00+00:00"))
    collected = collect(root)
    assert collected.problems == [] and any("the same configuration and figures as" in n for n in collected.notes)
    write_result(root / "b", make_results(_scores(0.4), created="yesterday"))
    collected = collect(root)
    assert [r.path for r in collected.boards["toy"]] == [root / "a" / "results.json"]
    assert len(collected.problems) == 1 and "created 'yesterday' is not an ISO 8601 time" in collected.problems[0]


# --- what a configuration is --------------------------------------------------------------------


def test_one_and_one_point_zero_are_one_configuration(tmp_path):
    root = tmp_path / "r"
    write_result(root / "a", make_results(_scores(0.3), model="xx", params={"k": 1, "w": [2, 0.5]},
                                          created="2024-01-01T00:00:00+00:00"))
    write_result(root / "b", make_results(_scores(0.35), model="xx", params={"k": 1.0, "w": [2.0, 0.5]},
                                          created="2024-02-01T00:00:00+00:00"))
    write_result(root / "c", make_results(_scores(0.2), model="xx", params={"k": True, "w": [2, 0.5]}))
    write_result(root / "bm25", make_results(_scores(0.2)))
    report = build_site(root, tmp_path / "site")
    assert report.rows == 3  # bm25, xx (k=1: the newer file), xx (k=true: not 1)
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "Holm–Bonferroni over the 8 tests of this board: 2 results tested on 4 measures" in html


def test_another_distributions_model_of_an_installed_name_is_its_own_row(tmp_path):
    root = tmp_path / "r"
    own = make_results(_scores(0.3))
    own["model"]["plugin"] = {"name": "bm25", "distribution": "statbench", "version": "0.1.0"}
    write_result(root / "own", own)
    other = make_results(_scores(0.5), created="2025-01-01T00:00:00+00:00")  # newer: it used to replace the row
    other["model"]["plugin"] = {"name": "bm25", "distribution": "other-bm25", "version": "1.0"}
    write_result(root / "other", other)
    report = build_site(root, tmp_path / "site")
    assert report.rows == 2 and not any("superseded" in n for n in report.notes)
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    blob = _blob(html)
    assert sorted(r["label"] for r in blob["rows"].values()) == ["bm25 [other-bm25]", "bm25 [statbench]"]
    assert blob["baseline"] == "bm25 [statbench]"  # the installed bm25 is the baseline
    values = {r["label"]: r["values"]["R@5"] for r in blob["rows"].values()}
    assert values["bm25 [statbench]"] == pytest.approx(0.31)


# --- published figures ranked only where every known fact of their data agrees -----------------


def test_a_figures_own_query_count_over_the_tasks_checksum_is_other_data():
    data = PublishedData(checksum="a" * 64, corpus_size=100, queries=7)
    assert not data.same_as(corpus_size=100, queries=10, checksum="a" * 64)
    assert not data.same_as(corpus_size=99, queries=7, checksum="a" * 64)
    assert data.same_as(corpus_size=100, queries=7, checksum="a" * 64)
    assert data.same_as(corpus_size=None, queries=None, checksum="a" * 64)
    assert not data.same_as(corpus_size=100, queries=7, checksum="b" * 64)
    assert PublishedData(corpus_size=100).same_as(corpus_size=100, queries=3)
    assert not PublishedData(queries=3, checksum="a" * 64).same_as(corpus_size=100, queries=3)


def _stard_result(root, version: str | None, corpus_size: int = 55348, n_queries: int = 1543):
    from statbench.tasks.stard import Stard

    labels = [m.label for m in Stard.measures]
    per_query = {f"q{i}": {m: 0.5 + (i % 7) / 100 for m in labels} for i in range(n_queries)}
    qids = sorted(per_query)
    results = make_results(per_query, task="stard", measures=labels, splits={f"fold-{k + 1}": qids[k::5] for k in range(5)})
    results["measures"] = [{"label": m.label, "ir_measure": m.ir_measure} for m in Stard.measures]
    results["task"]["corpus_size"] = corpus_size
    if version is None:
        results["task"].pop("version", None)
    else:
        results["task"]["version"] = version
    write_result(root, results)


def test_published_figures_are_ranked_only_on_the_installed_task_versions_board(tmp_path):
    from statbench.tasks.stard import Stard

    n = len(Stard.definition["published"])
    _stard_result(tmp_path / "r" / "bm25", "7")
    build_site(tmp_path / "r", tmp_path / "site")
    html = (tmp_path / "site" / "task-stard.html").read_text("utf-8")
    assert html.count('<tbody class="row ref"') == 0
    assert "<h3>Declared by version 1 of the task; this board: version 7</h3>" in html
    # the installed version (a result from before task.version was recorded counts as 1): ranked
    _stard_result(tmp_path / "r" / "bm25", None)
    build_site(tmp_path / "r", tmp_path / "site")
    assert (tmp_path / "site" / "task-stard.html").read_text("utf-8").count('<tbody class="row ref"') == n


# --- what a task may declare about published figures: one line each ----------------------------


@pytest.mark.parametrize("figure, expected", [
    (Published("x", "s", {"R@5": 0.1}, protocol="nope", data=PublishedData(corpus_size=3)),
     "published figures 'x': protocol 'nope' is not one of the task's protocols (p): the figures would be shown on "
     "no board"),
    (Published("x", "s", {"R@5": "0.1"}), "published figures 'x': R@5: '0.1' is not a finite number"),
    (Published("x", "s", {"R@5": True}), "published figures 'x': R@5: True is not a finite number"),
    (Published("x", "s", [("R@5", 0.1)]), "published figures 'x': scores must be a mapping of measure label -> value"),
    (Published(5, "s", {"R@5": 0.1}), "published figures need a label (a non-empty string), found 5"),
    (Published("x", "s", {"R@5": 0.1}, data=PublishedData(corpus_size=3, version=5)),
     "published figures 'x': data version must be a string, found 5"),
])
def test_bad_published_declarations_in_python_are_one_line(figure, expected):
    class Declared(Task):
        info = TaskInfo(name="declared", language="en", measures=(Measure("R@5", "R@5"),), depth=10,
                        protocols=(Protocol("p", ("test",)),), published=(figure,))

        def load(self, data_dir, log):
            raise NotImplementedError

    problems = check_info(Declared.task_info())
    assert any(p.startswith(expected) for p in problems), problems

    class Plugin:
        @hookimpl
        def register_tasks(self, register):
            register(Declared)

    with registered_plugin(Plugin(), "redteam-declared"):
        result = CliRunner().invoke(cli, ["list", "tasks"])
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert "failed to load and was skipped: PluginError" in result.output.replace("\n", " ")


def test_a_figure_declared_twice_is_refused():
    figure = Published("x", "s", {"R@5": 0.1})
    info = TaskInfo(name="twice", language="en", measures=(Measure("R@5", "R@5"),), published=(figure, figure))
    assert "published figures 'x' declared twice (one would hide the other)" in check_info(info)


def test_a_reduced_budget_run_never_replaces_the_protocols_run(tmp_path):
    root = tmp_path / "r"
    write_result(root / "bm25", make_results(_scores(0.2)))
    full = make_results(_scores(0.3), model="other", family="dense", created="2024-01-01T00:00:00+00:00")
    write_result(root / "full", full)
    small = make_results(_scores(0.25), model="other", family="dense", created="2024-02-01T00:00:00+00:00")
    small["model"]["budget"] = "epochs=1"  # recorded budget, parameters spelled alike
    write_result(root / "small", small)
    collected = collect(root)
    rows = {r.path.parent.name: r for r in collected.boards["toy"]}
    assert sorted(rows) == ["bm25", "full", "small"] and not collected.notes
    assert rows["small"].budget == "epochs=1" and rows["full"].budget is None


def test_reproduce_command_quotes_the_task_name_in_the_data_folder():
    from statbench.leaderboard.render.provenance import reproduce_command
    from statbench.results.record import Results

    results = make_results(_scores(0.3), task="x; rm -rf ~",
                           command="statbench run --task 'x; rm -rf ~' --data-dir d --output '$HOME/o'")
    assert reproduce_command(Results.from_json(results)) == (
        "statbench run --task 'x; rm -rf ~' "
        "--data-dir $HOME/statbench-data/'x; rm -rf ~' --output '$HOME/o'")


def test_a_measure_no_board_has_is_refused_and_one_some_lack_is_said(tmp_path):
    root = tmp_path / "r"
    write_result(root / "bm25", make_results(_scores(0.3)))
    write_result(root / "ql", make_results(_scores(0.4), model="ql"))
    write_result(root / "few", make_results(_scores(0.4, measures=("R@5",)), model="ql", measures=("R@5",)))
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(root), "--out", str(out),
                                      "--measure", "R@1000"])
    assert result.exit_code == 2 and not out.exists()
    assert "--measure 'R@1000' is not a measure of any board (measures: R@10, R@100, R@5, nDCG@10)" in result.output
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(root), "--out", str(out),
                                      "--measure", "R@10"])
    assert result.exit_code == 0
    assert "note: toy @ other measures: no measure 'R@10' on this board: tested R@5 instead" in result.stderr
