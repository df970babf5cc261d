"""Red-team of scoring (R1): tie order at the ends of the float32 range, custom measures
that return odd numbers, F-beta's limits, and compare's refusal of other data."""

from __future__ import annotations

import json
import math
from array import array

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.data.runfile import TIE_ORDER, order_as_trec_eval, order_ranking, read_run, write_run

LOWEST = -3.4028234663852886e38  # -FLT_MAX: torch.finfo(torch.float32).min, a common mask value


def strict(ranking) -> bool:
    singles = array("f", [score for _, score in ranking])
    return all(map(math.isfinite, singles)) and all(x > y for x, y in zip(singles, singles[1:]))


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


# --- scores at the bottom of the float32 range ---------------------------------------------------

def test_many_scores_at_the_lowest_float32_are_ranked_not_refused():
    """A model (or a foreign run) masking documents with -FLT_MAX, or scoring below it, gave
    "a run file cannot rank it below ... rescale the model's scores" as soon as two did."""
    masked = [(f"m{i:03d}", LOWEST) for i in range(300)] + [("top", 2.0), ("mid", -1.0), ("x", -1e300)]
    for ordered in (order_ranking(masked), order_as_trec_eval(masked)):
        assert strict(ordered) and len(ordered) == len(masked)
        assert ordered[0] == ("top", 2.0) and ordered[1] == ("mid", -1.0)  # untouched above the block
        assert ordered[-1] == ("x", -3.4028235e38)
    assert [d for d, _ in order_ranking(masked)][2:5] == ["m000", "m001", "m002"]  # doc id ascending
    assert [d for d, _ in order_as_trec_eval(masked)][2:5] == ["m299", "m298", "m297"]  # doc id descending
    assert order_ranking([("a", -1e300), ("b", -1e301)]) == [("a", -3.4028233e38), ("b", -3.4028235e38)]


def test_a_run_with_lowest_scores_is_written_and_read_back_strict(tmp_path):
    rankings = {"q": order_ranking([(f"d{i}", LOWEST) for i in range(50)] + [("e", -1e39)])}
    write_run(tmp_path / "run.trec", rankings, "t")
    assert read_run(tmp_path / "run.trec") == rankings and strict(rankings["q"])


def test_evaluate_scores_a_foreign_run_at_the_bottom_of_float32_in_trec_evals_order(stard_dir, tmp_path):
    import ir_measures

    from fixture_data import STARD_QUERIES

    rows = [("0", "民法典第五十四条", LOWEST), ("0", "刑法第一条", LOWEST),  # 民 > 刑: relevant first
            ("1", "刑法第一条", -1e39), ("1", "民法典第五十六条", -1e39),  # both -inf as float32
            ("2", "刑法第一条", -1e39), ("2", "建筑法第二条", LOWEST)]  # -FLT_MAX above -inf
    path = tmp_path / "foreign.trec"
    path.write_text("".join(f"{q} Q0 {d} {i} {s!r} x\n" for i, (q, d, s) in enumerate(rows, 1)), "utf-8")
    result = invoke("evaluate", path, "--task", "stard", "--data-dir", stard_dir, "--json", "--measure", "MRR@3")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output[result.output.index("{"):])
    assert scores["tie_order"] == TIE_ORDER
    assert {q: scores["per_query"][q]["MRR@3"] for q in "012"} == {"0": 1.0, "1": 1.0, "2": 1.0}
    qrels = {str(q["query_id"]): {name: 1 for name in q["match_name"]} for q in STARD_QUERIES}
    run: dict = {}
    for q, d, s in rows:
        run.setdefault(q, {})[d] = s
    p_at_1 = {m.query_id: m.value for m in ir_measures.providers.registry["pytrec_eval"].iter_calc(
        [ir_measures.P @ 1], qrels, run)}
    assert {q: p_at_1[q] for q in "012"} == {"0": 1.0, "1": 1.0, "2": 1.0}  # trec_eval's own order agrees


# --- custom measures ------------------------------------------------------------------------------

def test_a_custom_measure_returning_an_int_beyond_float_is_a_plugin_error_not_a_crash():
    from statbench.registry.checks import PluginError
    from statbench.scoring.measures import CustomMeasure, ParsedCustomMeasure

    class Huge(CustomMeasure):
        name = "Huge"

        def per_query(self, ranking, qrels, **params):
            return 10 ** 400

    measure = ParsedCustomMeasure(cls=Huge, qualified="x:Huge", params=())
    with pytest.raises(PluginError) as err:
        measure.score([("a", 1.0)], {"a": 1}, "q7")
    message = str(err.value)
    assert "returned an int of 1329 bits for query 'q7', not a finite number" in message
    assert "\n" not in message and len(message) < 300


def test_f_beta_with_a_huge_beta_is_recall_and_a_tiny_beta_precision():
    from statbench.scoring.measures import parse_measure

    ranking, qrels = [("a", 3.0), ("b", 2.0), ("c", 1.0)], {"a": 1, "d": 1}  # P = 1/3, R = 1/2
    assert parse_measure("F(beta=1e200)@3").score(ranking, qrels, "q") == 0.5
    assert parse_measure("F(beta=1e-200)@3").score(ranking, qrels, "q") == pytest.approx(1 / 3)
    assert parse_measure("F2@3").score(ranking, qrels, "q") == (1 + 4) * (1 / 3) * 0.5 / (4 / 3 + 0.5)


# --- compare: a TREC run against results on other data ---------------------------------------------

def test_compare_refuses_a_trec_run_scored_on_other_data_than_the_results(stard_dir, tmp_path):
    """results.json recorded its data; a TREC run scored against another data folder (other
    judgements, same queries) was tested against it as if on the same data."""
    import shutil

    out = tmp_path / "out"
    result = invoke("run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--output", out,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    other = tmp_path / "other"
    shutil.copytree(stard_dir, other)
    queries = json.loads((other / "queries.json").read_text("utf-8"))
    queries[0]["match_name"], queries[0]["match_id"] = ["刑法第一条"], [5]
    (other / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), "utf-8")

    same = invoke("compare", out / "results.json", out / "run.trec", "--task", "stard", "--data-dir", stard_dir,
                  "--measure", "MRR@10")
    assert same.exit_code == 0, same.output
    assert "mean difference B - A: +0.0000" in same.output
    refused = CliRunner().invoke(cli, ["compare", str(out / "results.json"), str(out / "run.trec"), "--task",
                                       "stard", "--data-dir", str(other), "--measure", "MRR@10"])
    assert refused.exit_code == 2, refused.output
    assert "were scored on different data of task 'stard'" in refused.output
    assert "not comparable" in refused.output and "Traceback" not in refused.output
    # and the evaluate output says which data it scored
    scores = invoke("evaluate", out / "run.trec", "--task", "stard", "--data-dir", stard_dir, "--json")
    recorded = json.loads((out / "results.json").read_text())["task"]["data_checksum"]
    assert json.loads(scores.output[scores.output.index("{"):])["data_checksum"] == recorded


def test_compare_refuses_results_scored_in_another_tie_order(stard_dir, tmp_path):
    out = tmp_path / "out"
    assert invoke("run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--output", out,
                  "--no-progress").exit_code == 0
    results = json.loads((out / "results.json").read_text())
    results["tie_order"] = "score desc, then doc id asc"
    (tmp_path / "other.json").write_text(json.dumps(results, ensure_ascii=False))
    refused = CliRunner().invoke(cli, ["compare", str(out / "results.json"), str(tmp_path / "other.json"),
                                       "--measure", "MRR@10"])
    assert refused.exit_code == 2, refused.output
    assert "another order ('score desc, then doc id asc')" in refused.output and "not comparable" in refused.output


# --- evaluate: a run of another task whose query ids happen to match -------------------------------

def test_evaluate_refuses_a_run_none_of_whose_documents_is_in_the_corpus(stard_dir, tmp_path):
    """STARD's query ids are numbers, as are many tasks': a run of another task (or with
    numeric article ids instead of names) was scored as zeros with a warning."""
    path = tmp_path / "other.trec"
    path.write_text("0 Q0 3 1 2.0 x\n0 Q0 5 2 1.0 x\n1 Q0 4 1 1.0 x\n")
    result = CliRunner().invoke(cli, ["evaluate", str(path), "--task", "stard", "--data-dir", str(stard_dir)])
    assert result.exit_code == 2, result.output
    assert "none of the 3 document id(s) it ranks for the evaluated queries is in the corpus of task stard" \
        in result.output
    assert "is it a run of another task?" in result.output
    # one known document is enough to be scored (the rest count as non-relevant)
    path.write_text("0 Q0 3 1 2.0 x\n0 Q0 民法典第五十四条 2 1.0 x\n")
    assert invoke("evaluate", path, "--task", "stard", "--data-dir", stard_dir).exit_code == 0


def test_a_tag_with_tabs_or_line_breaks_stays_one_column(tmp_path):
    write_run(tmp_path / "run.trec", {"q": order_ranking([("a", 1.0), ("b", 1.0)])}, "pool-x\ty\nz w")
    assert (tmp_path / "run.trec").read_text() == "q Q0 a 1 1.0 pool-x_y_z_w\nq Q0 b 2 0.99999994 pool-x_y_z_w\n"
    assert read_run(tmp_path / "run.trec") == {"q": [("a", 1.0), ("b", 0.99999994)]}


# --- significance: equal differences have no standard deviation ------------------------------------

def test_cohens_d_of_equal_differences_is_undefined_not_1e15():
    """np.std of six equal 0.1 is 1.5e-17 (its mean is 0.09999999999999999): d was 6.6e15,
    printed by compare as "Cohen's d of the differences: +6577928282353816.000"."""
    import numpy as np

    from statbench.scoring.significance import cohens_d, compare_to_baseline

    assert cohens_d(np.array([0.1] * 6)) is None and cohens_d([0.1] * 6) is None
    base = {f"q{i}": 0.0 for i in range(6)}
    (c,) = compare_to_baseline("a", base, {"b": {q: 0.1 for q in base}}, "P@10")
    assert c.cohens_d is None and (c.wins, c.ties, c.losses) == (6, 0, 0)
    assert cohens_d(np.array([1.0, 2.0, 3.0])) == pytest.approx(2.0)
