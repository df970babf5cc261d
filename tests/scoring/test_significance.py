"""Paired significance tests: hand-computed figures, and the ``compare`` command."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.leaderboard.sample import make_results, write_result
from statbench.scoring.significance import (
    bootstrap_ci,
    cohens_d,
    compare_to_baseline,
    holm,
    paired_arrays,
    per_query_measure,
    primary_measure,
    wilcoxon_p,
)


def test_holm_step_down_by_hand():
    # sorted: 0.01*3 = 0.03; 0.03*2 = 0.06; 0.04*1 = 0.04 -> raised to 0.06 (monotone)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_wilcoxon_exact_p_by_hand_and_zero_differences_dropped():
    # six positive differences: W = 0; exact two-sided p = 2 / 2**6
    diffs = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    statistic, p = wilcoxon_p(diffs)
    assert statistic == 0.0
    assert p == pytest.approx(2 / 64)
    # zero_method="wilcox": ties between the systems are discarded before ranking
    _, p_with_zeros = wilcoxon_p(np.concatenate([diffs, np.zeros(5)]))
    assert p_with_zeros == pytest.approx(2 / 64)


def test_wilcoxon_all_ties_is_no_evidence():
    assert wilcoxon_p(np.zeros(10)) == (None, 1.0)
    assert wilcoxon_p(np.array([])) == (None, 1.0)


def test_cohens_d_by_hand():
    assert cohens_d(np.array([1.0, 2.0, 3.0])) == pytest.approx(2.0)  # mean 2 / sd 1
    assert cohens_d(np.array([0.5, 0.5])) is None  # sd 0: undefined
    assert cohens_d(np.array([1.0])) is None


def test_bootstrap_is_seeded_and_brackets_the_mean():
    rng = np.random.default_rng(0)
    diffs = rng.normal(0.1, 0.2, size=200)
    a = bootstrap_ci(diffs, resamples=2000, seed=1)
    assert a == bootstrap_ci(diffs, resamples=2000, seed=1)
    assert a != bootstrap_ci(diffs, resamples=2000, seed=2)
    assert a[0] < diffs.mean() < a[1]
    # the standard error of the mean is ~0.2/sqrt(200) = 0.014: a 95% interval is ~0.055 wide
    assert 0.04 < a[1] - a[0] < 0.07
    assert bootstrap_ci(np.full(30, 0.25)) == pytest.approx((0.25, 0.25))


def test_paired_on_the_intersection_of_query_ids():
    base, sys_ = paired_arrays({"a": 0.1, "b": 0.2, "c": 0.3}, {"b": 0.5, "c": 0.3, "d": 1.0})
    assert base.tolist() == [0.2, 0.3] and sys_.tolist() == [0.5, 0.3]


def test_compare_to_baseline_counts_and_holm():
    baseline = {f"q{i}": 0.5 for i in range(16)}
    better = {f"q{i}": 0.5 + 0.01 * (i + 1) for i in range(14)} | {"q14": 0.5, "q15": 0.35}
    same = dict(baseline)
    results = compare_to_baseline("base", baseline, {"same": same, "better": better}, "R@10")
    assert [c.system for c in results] == ["better", "same"]  # sorted names
    b, s = results
    assert (b.n, b.wins, b.ties, b.losses) == (16, 14, 1, 1)
    assert b.mean_diff == pytest.approx((1.05 - 0.15) / 16)
    # 15 non-zero differences, ranks 1..15; the loss (-0.15) has the largest |d| -> rank 15: W = 15
    assert b.statistic == 15.0
    # exact null distribution: 137 of the 2**15 sign patterns have W <= 15; two-sided
    assert b.p_value == pytest.approx(2 * 137 / 2**15)
    assert b.p_holm == pytest.approx(min(1.0, 2 * b.p_value))  # smallest of two p-values: times 2
    assert b.significant and b.direction == 1
    assert (s.wins, s.ties, s.losses, s.p_value, s.direction) == (0, 16, 0, 1.0, 0)
    assert s.ci_low == s.ci_high == 0.0
    assert b.as_dict()["significant"] is True


def test_primary_measure_choice():
    assert primary_measure("stard", ["R@5", "R@100"]) == "R@100"
    assert primary_measure("ukstat", ["R@5", "nDCG@10"]) == "nDCG@10"
    assert primary_measure("other", ["MAP", "nDCG@10"]) == "nDCG@10"
    assert primary_measure("other", ["MAP", "P@5"]) == "MAP"

    from statbench.registry.plugins import get_registry
    from statbench.contract.taskinfo import TaskInfo

    declares = TaskInfo(name="x", language="en", measures=(), primary_measure="P@5")
    assert primary_measure("stard", ["R@100", "P@5"], declares) == "P@5"
    # the built-in tasks declare theirs (no task name is known to the significance code)
    assert primary_measure("ukstat", ["R@5", "nDCG@10", "R@100"], get_registry().tasks["ukstat"].cls.task_info()) == "nDCG@10"
    assert get_registry().tasks["stard"].cls.task_info().primary_measure == "R@100"


def test_per_query_measure_unknown_measure():
    results = make_results({"q1": {"R@5": 1.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 1.0}})
    assert per_query_measure(results, "R@5") == {"q1": 1.0}
    with pytest.raises(StatbenchError, match="no measure 'MAP'"):
        per_query_measure(results, "MAP", "x.json")


# --- the compare command -------------------------------------------------------------------


def _run(path, rows):
    path.write_text("".join(f"{q} Q0 {d} {r} {10 - r} t\n" for q, docs in rows.items() for r, d in enumerate(docs, 1)),
                    encoding="utf-8")
    return path


def test_compare_two_trec_runs(stard_dir, tmp_path):
    # qrels of the conftest mini-STARD: 0 -> 民法典第五十四条, 1 -> 民法典第五十六条,
    # 2 -> 建筑法第一条 + 建筑法第二条, 3 -> 婚姻法第二条, 4 -> 刑法第一条
    good = _run(tmp_path / "good.trec", {"0": ["民法典第五十四条"], "1": ["民法典第五十六条"], "2": ["建筑法第一条"],
                                          "3": ["婚姻法第二条"], "4": ["刑法第一条"]})
    bad = _run(tmp_path / "bad.trec", {"0": ["刑法第一条"], "1": ["民法典第五十六条"], "2": ["刑法第一条"],
                                        "3": ["刑法第一条"], "4": ["婚姻法第二条"]})
    result = CliRunner().invoke(
        cli, ["compare", str(bad), str(good), "--task", "stard", "--data-dir", str(stard_dir), "--measure", "R@5", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    # R@5 per query, bad: 0, 1, 0, 0, 0 (mean 0.2); good: 1, 1, 0.5, 1, 1 (mean 0.9)
    assert out["n"] == 5 and out["task"] == "stard" and out["measure"] == "R@5"
    assert out["mean_baseline"] == pytest.approx(0.2)
    assert out["mean_system"] == pytest.approx(0.9)
    assert (out["wins"], out["ties"], out["losses"]) == (4, 1, 0)
    # four positive differences 1, 0.5, 1, 1 (ranks 3, 1, 3, 3): W = 0, exact p = 2/16
    assert out["statistic"] == 0.0
    assert out["p_value"] == pytest.approx(0.125)
    assert out["significant"] is False

    text = CliRunner().invoke(cli, ["compare", str(bad), str(good), "--task", "stard", "--data-dir", str(stard_dir)])
    assert text.exit_code == 0, text.output
    assert "measure R@100, 5 paired queries" in text.output  # STARD's default measure
    assert "wins / ties / losses of B:" in text.output and "no significant difference" in text.output


def test_compare_accepts_results_json(tmp_path):
    scores_a = {f"q{i}": {"R@5": 0.0, "R@10": 0.0, "R@100": 0.5, "nDCG@10": 0.1} for i in range(8)}
    scores_b = {f"q{i}": {"R@5": 1.0, "R@10": 1.0, "R@100": 0.5 + i / 20, "nDCG@10": 0.2 + i / 100} for i in range(8)}
    a = write_result(tmp_path / "a", make_results(scores_a))
    b = write_result(tmp_path / "b", make_results(scores_b, model="ql"))
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["measure"] == "nDCG@10" and out["n"] == 8
    assert out["mean_diff"] == pytest.approx(0.1 + 0.07 / 2)
    assert out["p_value"] == pytest.approx(2 / 2**8)  # all 8 better: exact p
    assert out["direction"] == 1
    wrong = CliRunner().invoke(cli, ["compare", str(a), str(b), "--task", "stard"])
    assert wrong.exit_code == 2 and "results of task 'toy', not 'stard'" in wrong.output


def test_compare_trec_run_needs_task(tmp_path):
    run = _run(tmp_path / "r.trec", {"0": ["x"]})
    result = CliRunner().invoke(cli, ["compare", str(run), str(run)])
    assert result.exit_code == 2 and "needs --task" in result.output
