"""Figures that are finite one by one but overflow a float when checked together (an
unbounded measure at 1e308 on two splits, timings of 1e308 s, a price of 1e-300 USD per
token) make the results file unpublishable in one line naming it, like any other
inconsistency: before, the checks raised OverflowError and the whole build (or compare)
stopped on that one file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.leaderboard.sample import make_results
from statbench.scoring.efficiency_checks import efficiency_problems
from statbench.scoring.publishable import check_results

HUGE = 1.7e308


def _unbounded_overflowing() -> dict:
    """NumRet (no bound) at 1.7e308 on every query of two splits: their mean overflows."""
    scores = {f"q{i}": {"NumRet": 1.0} for i in range(4)}
    obj = make_results(scores, measures=("NumRet",), splits={"a": ["q0", "q1"], "b": ["q2", "q3"]})
    obj["aggregate"]["NumRet"] = {"mean": HUGE, "std": 0.0}
    for split in obj["splits"]:
        split["scores"]["NumRet"] = HUGE
    for scores in obj["per_query"].values():
        scores["NumRet"] = HUGE
    if obj.get("all_queries"):
        obj["all_queries"]["NumRet"] = HUGE
    return obj


def test_an_overflowing_mean_is_a_problem_not_an_error():
    assert check_results(_unbounded_overflowing()) == [
        "aggregate: its figures are too large to be averaged (a float overflows): no run scored them"]


@pytest.mark.parametrize("timings, efficiency", [
    ({"total": 1e308, "search": 1e308, "index": 1e308}, {"index_seconds": 1e308}),
    ({"total": 1.0}, {"throughput_qps": 1e200, "search_seconds": 1e200}),
])
def test_overflowing_timings_are_a_problem_not_an_error(timings, efficiency):
    assert efficiency_problems({"timings": timings, "efficiency": efficiency}) == [
        "efficiency: its figures (or the timings) are too large to be checked against each other (a float "
        "overflows): no run measured them"]


@pytest.mark.parametrize("price, cost", [
    ("USD 1e-300 per 1 tokens (x, as of 2026-01-01)", 1e10),
    ("USD 1 per " + "9" * 400 + " tokens (x)", 1.0),
])
def test_a_cost_of_uncountable_units_is_a_problem_not_an_error(price, cost):
    record = {"timings": {"total": 1.0}, "reranker": {"name": "paid"},
              "efficiency": {"api": {"documents_sent": 3, "tokens_sent": 5, "cost_usd": cost, "price": price}}}
    (problem,) = efficiency_problems(record)
    assert problem.startswith(f"efficiency/api/cost_usd: {cost!r} at ") and "more tokens than can be counted" in problem


def test_the_build_skips_the_file_and_compare_says_one_line(tmp_path: Path):
    folder = tmp_path / "results" / "huge"
    folder.mkdir(parents=True)
    path = folder / "results.json"
    path.write_text(json.dumps(_unbounded_overflowing()), encoding="utf-8")
    build = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(tmp_path / "results"),
                                     "--out", str(tmp_path / "site")])
    assert build.exit_code == 0, build.output
    assert f"warning: skipped {path}: aggregate: its figures are too large to be averaged" in build.output
    compare = CliRunner().invoke(cli, ["compare", str(path), str(path)])
    assert compare.exit_code == 2
    assert compare.output.strip() == (f"Error: {path}: aggregate: its figures are too large to be averaged (a float "
                                      "overflows): no run scored them")
