"""The overview's data (issue 36 §1): which board fills a benchmark task's column, missing
cells never 0, ranks over the tasks run checked by hand, rows shown but not ranked."""

from pathlib import Path

import pytest
from overview_fixtures import MINI, mini_benchmark, write_mini, write_run

from statbench.api import Benchmark, BenchmarkTask
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.collect.rows import BoardKey
from statbench.leaderboard.render.admitted import admit_rows
from statbench.leaderboard.render.overview_data import pick_board
from statbench.leaderboard.render.overview_page import benchmark_overviews
from statbench.leaderboard.render.report import BuildReport
from statbench.leaderboard.repo.submission import card_parameters, card_text
from statbench.registry import plugins
from statbench.results.record import Results, read_results


def _overview(root: Path, bench=MINI):
    collected = collect(root)
    with mini_benchmark():
        found = benchmark_overviews(collected.boards, collected.keys)
    return next(o for o in found if o.benchmark == bench)


def _rows(o) -> dict:
    return {r.label: r for r in o.rows}


def test_hand_computed_borda_and_mean_ranks_over_the_tasks_run(tmp_path):
    """stard: A .8 > B .6 > C .4 (Borda 2, 1, 0; ranks 1, 2, 3); ukstat: B .7 > C .5 (Borda 1, 0;
    ranks 1, 2); A did not run ukstat. Borda: A 2, B 2, C 0 -> ranks 1, 1, 3; mean rank:
    A 1, B (2+1)/2 = 1.5, C (3+2)/2 = 2.5. Scores equal on every query: every resample gives
    the observed ranks, so each interval is the rank itself."""
    o = _overview(write_mini(tmp_path))
    rows = _rows(o)
    assert [r.label for r in o.rows] == ["model-a", "model-b", "model-c"]  # Borda rank, then mean rank
    got = {label: (r.tasks_run, r.ranks["all"].borda, r.ranks["all"].borda_rank, r.ranks["all"].borda_low,
                   r.ranks["all"].borda_high, r.ranks["all"].mean_rank, r.ranks["all"].mean_rank_low,
                   r.ranks["all"].mean_rank_high) for label, r in rows.items()}
    assert got == {"model-a": (1, 2.0, 1, 1, 1, 1.0, 1.0, 1.0),
                   "model-b": (2, 2.0, 1, 1, 1, 1.5, 1.5, 1.5),
                   "model-c": (2, 0.0, 3, 3, 3, 2.5, 2.5, 2.5)}


def test_a_missing_task_is_a_blank_cell_never_a_zero(tmp_path):
    o = _overview(write_mini(tmp_path))
    a = _rows(o)["model-a"]
    assert a.cells == [pytest.approx(0.8), None, None] and a.marks == ["", None, None]
    # had A's missing ukstat counted as 0, A would be last there and its mean rank 2, not 1
    assert a.ranks["all"].mean_rank == 1.0 and a.ranks["all"].tasks == 1


def test_a_task_nobody_ran_is_a_column_not_run(tmp_path):
    o = _overview(write_mini(tmp_path))
    assert [(c.task, c.measure, c.board, c.queries) for c in o.columns] == [
        ("stard", "R@100", "stard", 4), ("ukstat", "nDCG@10", "ukstat", 4), ("bsard", "R@100", None, 0)]
    assert all(r.cells[2] is None for r in o.rows)


def test_ranks_per_language_are_over_that_languages_tasks(tmp_path):
    """en (ukstat only): B 1, C 2, A unranked; zh (stard only): A 1, B 2, C 3."""
    o = _overview(write_mini(tmp_path))
    rows = _rows(o)
    assert o.languages == ["zh", "en"]
    assert {k: (r.ranks["zh"].borda_rank, r.ranks["zh"].mean_rank) for k, r in rows.items()} == {
        "model-a": (1, 1.0), "model-b": (2, 2.0), "model-c": (3, 3.0)}
    assert {k: r.ranks["en"].borda_rank for k, r in rows.items() if "en" in r.ranks} == {"model-b": 1, "model-c": 2}
    assert "en" not in rows["model-a"].ranks


def test_only_the_boards_that_fit_the_declaration_fill_a_column(tmp_path):
    """A stard result on the 5-fold protocol, one on another task version, and one on other
    data are on other boards: they never enter mini-v1's stard column (official: dev), which
    takes the board with the most rows; the others are named."""
    write_mini(tmp_path)
    write_run(tmp_path, "stard", "model-d", 0.9, splits={f"fold-{k}": [f"q{k}"] for k in range(1, 6)},
              qids=[f"q{k}" for k in range(1, 6)])
    other = write_run(tmp_path, "stard", "model-e", 0.95, folder="stard-e-other-data")
    text = other.read_text().replace('"data_checksum": "', '"data_checksum": "f')
    other.write_text(text.replace('"data_checksum": "f' + "0" * 64, '"data_checksum": "' + "f" * 64))
    o = _overview(tmp_path)
    column = o.columns[0]
    assert column.board == "stard" and len(column.others) == 2
    assert "model-d" not in _rows(o) and "model-e" not in _rows(o)


def test_pick_board_takes_the_most_rows_then_the_task_named_board():
    info = plugins.get_registry().tasks["stard"].cls.task_info()
    entry = BenchmarkTask("stard", "R@100", protocol="official")
    key = BoardKey("stard", "1", "a" * 64, (("dev", 308),), (("R@100", "R@100"),))
    other = key._replace(checksum="b" * 64)
    keys = {"stard": key, "stard @ other data": other}
    assert pick_board(entry, info, keys, {"stard": 2, "stard @ other data": 3}) == ("stard @ other data", ("stard",))
    assert pick_board(entry, info, keys, {"stard": 3, "stard @ other data": 3}) == ("stard", ("stard @ other data",))
    redefined = key._replace(measures=(("R@100", "R@1000"),))  # another definition is another measure
    assert pick_board(entry, info, {"stard": redefined}, {"stard": 5}) == (None, ("stard",))
    pinned = BenchmarkTask("stard", "R@100", protocol="official", data="b" * 64)
    assert pick_board(pinned, info, keys, {"stard": 9, "stard @ other data": 1}) == ("stard @ other data", ("stard",))
    old = BenchmarkTask("stard", "R@100", protocol="official", version="1")
    assert pick_board(old, info, {"stard": key._replace(version="2")}, {"stard": 1}) == (None, ("stard",))


def test_a_row_scored_on_other_queries_is_shown_not_ranked(tmp_path):
    write_mini(tmp_path)
    write_run(tmp_path, "stard", "model-x", 0.99, qids=["x0", "x1", "x2", "x3"])  # same board, other query ids
    o = _overview(tmp_path)
    x = _rows(o)["model-x"]
    assert x.cells[0] == pytest.approx(0.99) and x.marks[0] == "queries"
    assert x.ranks == {}  # no rank from a comparison on other queries
    assert _rows(o)["model-a"].ranks["all"].borda == 2.0  # the others ranked without it
    assert o.rows[-1] is x  # unranked rows after the ranked ones


def test_a_row_whose_card_declares_test_queries_seen_is_shown_not_ranked(tmp_path):
    write_mini(tmp_path)
    path = write_run(tmp_path, "stard", "model-s", 0.99)
    record = Results.from_json(read_results(path))
    card = {"card_version": 1, "model": {"name": "model-s", "version": "1"}, "source": "local",
            "parameters": card_parameters(record), "training_data": "the test queries", "test_queries_seen": True,
            "hardware": "machine-A", "licence": "MIT", "authors": ["someone"]}
    (path.parent / "model_card.json").write_text(card_text(card), encoding="utf-8")
    collected = collect(tmp_path)
    boards = dict(collected.boards)
    admit_rows(boards, BuildReport(out_dir=tmp_path))
    with mini_benchmark():
        o = next(o for o in benchmark_overviews(boards, collected.keys) if o.benchmark is MINI)
    s = _rows(o)["model-s"]
    assert s.marks[0] == "seen" and s.cells[0] == pytest.approx(0.99)
    assert s.ranks == {} and _rows(o)["model-a"].ranks["all"].borda_rank == 1


def test_two_configurations_never_share_a_label(tmp_path):
    write_mini(tmp_path)
    write_run(tmp_path, "stard", "model-a", 0.7, params={"k1": "1.2"}, folder="a-text")
    write_run(tmp_path, "stard", "model-a", 0.75, params={"k1": 1.2}, folder="a-number")
    labels = [r.label for r in _overview(tmp_path).rows]
    assert len(labels) == len(set(labels))


def test_a_benchmark_equal_to_mini_is_found_by_identity():
    assert MINI == Benchmark(name="mini", version="1", description="three tasks, for the tests", tasks=MINI.tasks)
