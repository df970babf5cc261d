"""``statbench evaluate`` of a foreign run whose scores differ in the file but are equal at
32-bit precision (trec_eval reads a score as a C float): the run is scored in trec_eval's
order, as documented, and one warning line says that this is not the file's ranking: how
many queries, one example, what to write instead (issue 33 §10)."""

from __future__ import annotations

import logging

from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.data.runfile import order_as_trec_eval
from statbench.scoring.evaluate_file import float32_reordering, shortest_float32_text
from foreign_run_fixtures import FOREIGN, write_foreign

#: one line of the warning, up to the example
SAID = "evaluated queries are not scored in the order of the file's scores"


def _evaluate(path, stard_dir, caplog, *extra):
    with caplog.at_level(logging.INFO, logger="statbench"):
        result = CliRunner().invoke(cli, ["evaluate", str(path), "--task", "stard", "--data-dir", str(stard_dir),
                                          "--json", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [r for r in caplog.records if SAID in r.getMessage()]


def test_scores_distinct_in_the_file_but_equal_at_float32_are_said_with_counts_and_an_example(stard_dir, tmp_path,
                                                                                               caplog):
    # FOREIGN: q0 and q1 are exact ties (the file leaves their order open), q2 has no tie,
    # q3 (1 + 1e-9 vs 1) and q4 (1e9 + 1 vs 1e9) differ in the file, not at float32
    path = tmp_path / "foreign.trec"
    write_foreign(path, FOREIGN)
    records = _evaluate(path, stard_dir, caplog)
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    line = records[0].getMessage()
    assert "\n" not in line
    assert f"{path}: 2 of 5 {SAID}" in line
    assert ("e.g. query 3: documents 婚姻法第二条 (score 1.000000001) and 建筑法第二条 (score 1.0) are both 1.0 at "
            "float32, so 建筑法第二条 is ranked above 婚姻法第二条") in line
    assert "score desc at float32, then doc id desc (trec_eval)" in line
    assert "write scores that differ at float32 (or rank-derived scores" in line


def test_scores_around_1e9_are_said_too(stard_dir, tmp_path, caplog):
    path = tmp_path / "big.trec"
    write_foreign(path, [row for row in FOREIGN if row[0] in ("2", "4")])
    line = _evaluate(path, stard_dir, caplog)[0].getMessage()
    assert f"{path}: 1 of 2 {SAID}" in line
    assert ("query 4: documents 刑法第一条 (score 1000000001.0) and 婚姻法第二条 (score 1000000000.0) are both "
            "1000000000.0 at float32, so 婚姻法第二条 is ranked above 刑法第一条") in line


def test_no_warning_when_the_scored_order_is_the_files(stard_dir, tmp_path, caplog):
    # exact ties only (q0, q1), no tie (q2), and a float32 collision that trec_eval's doc id
    # rule happens to break in the file's order (婚 > 刑: the larger score on the larger id)
    rows = [row for row in FOREIGN if row[0] in ("0", "1", "2")]
    rows += [("4", "婚姻法第二条", 1e9 + 1), ("4", "刑法第一条", 1e9)]
    path = tmp_path / "same.trec"
    write_foreign(path, rows)
    assert _evaluate(path, stard_dir, caplog) == []
    assert "rank documents with scores equal at 32-bit precision" in caplog.text  # the ties are still said


def test_only_evaluated_queries_are_counted(stard_dir, tmp_path, caplog):
    path = tmp_path / "foreign.trec"
    write_foreign(path, FOREIGN + [("unknown-query", "a", 1e9 + 1), ("unknown-query", "b", 1e9)])
    line = _evaluate(path, stard_dir, caplog)[0].getMessage()
    assert f"2 of 5 {SAID}" in line


def test_float32_reordering_names_the_first_pair_trec_eval_swaps():
    assert float32_reordering([("a", 1e9 + 1), ("b", 1e9)]) == (("a", 1e9 + 1), ("b", 1e9))
    assert float32_reordering([("b", 1e9 + 1), ("a", 1e9)]) is None  # doc id desc agrees
    assert float32_reordering([("a", 1.0), ("b", 1.0)]) is None  # an exact tie: the file says nothing
    assert float32_reordering([("a", 3.0), ("b", 2.0), ("c", 1.0)]) is None
    ranking = [("z", 1.0), ("a", 1.0 + 1e-9), ("m", 1.0 + 1e-12)]
    (a, score_a), (b, score_b) = float32_reordering(ranking)
    assert (a, b) == ("a", "z") and score_a > score_b
    assert [d for d, _ in order_as_trec_eval(ranking)] == ["z", "m", "a"]
    assert shortest_float32_text(1e9 + 1) == "1000000000.0" and shortest_float32_text(1 + 1e-9) == "1.0"
    # beyond float32's range both read as infinity, below it both as zero: the same class
    assert float32_reordering([("a", 2e39), ("b", 1e39)]) == (("a", 2e39), ("b", 1e39))
    assert float32_reordering([("a", 2e-50), ("b", 1e-50)]) == (("a", 2e-50), ("b", 1e-50))
    assert shortest_float32_text(1e39) == "inf" and shortest_float32_text(-1e39) == "-inf"
    assert shortest_float32_text(2e-50) == "0.0"


def test_compare_of_foreign_runs_says_it_too(stard_dir, tmp_path, caplog):
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    write_foreign(a, FOREIGN)
    write_foreign(b, [row for row in FOREIGN if row[0] != "4"] + [("4", "婚姻法第二条", 5.0), ("4", "刑法第一条", 4.0)])
    with caplog.at_level(logging.INFO, logger="statbench"):
        result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--task", "stard", "--data-dir", str(stard_dir)],
                                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    said = [r.getMessage() for r in caplog.records if SAID in r.getMessage()]
    assert [line.split(": ", 1)[0] for line in said] == [str(a), str(b)]
    assert f"{a}: 2 of 5 {SAID}" in said[0] and f"{b}: 1 of 5 {SAID}" in said[1]
