"""One tie order for every evaluator (issues 21 §1 and 27).

A run statbench writes is strictly decreasing at 32-bit precision, so trec_eval's readers
(pytrec_eval, which reads scores as C floats and breaks ties by doc id descending),
ir-measures' Python providers and ranx all see the rank column's order and give equal
figures; ``statbench evaluate`` puts a foreign run with ties into one declared order
(trec_eval's) for every measure and says so; a judgement grade outside int64 is a data
error naming the file and line."""

from __future__ import annotations

import json
import math
from array import array

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.data.runfile import (
    TIE_ORDER,
    check_grade,
    order_as_trec_eval,
    order_ranking,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)
from foreign_run_fixtures import FOREIGN, write_foreign

#: query -> (ranking as a model returns it, the harness's order of its doc ids, relevant docs):
#: each case breaks the run's order for some evaluator if ties survive at 32-bit precision
CASES = {
    "exact": ([("c", 1.0), ("a", 1.0), ("b", 1.0)], ["a", "b", "c"], {"a"}),
    "exact_second": ([("c", 1.0), ("a", 1.0), ("b", 1.0)], ["a", "b", "c"], {"b"}),
    "near": ([("a", 1.0), ("b", 1.0 - 1e-9)], ["a", "b"], {"a"}),
    "below_float32": ([("z", 1.0), ("a", 1.0 + 1e-9), ("m", 1.0 + 1e-12)], ["a", "m", "z"], {"a"}),
    "large": ([("b", 1e9), ("a", 1e9 + 1), ("c", 1e9 - 100), ("d", 1e9 - 20)], ["a", "b", "d", "c"], {"a", "d"}),
    "negative": ([("b", -2.0), ("a", -2.0), ("c", -2.0 - 1e-12), ("d", -1e-50), ("e", 0.0)],
                 ["e", "d", "a", "b", "c"], {"a"}),
    "huge": ([("b", 1e299), ("a", 1e300), ("c", 5.0), ("d", -1e300)], ["a", "b", "c", "d"], {"a", "c"}),
    "tiny": ([("b", 1e-51), ("a", 1e-50), ("c", 1e-46)], ["c", "a", "b"], {"a"}),
}
MEASURES = ["P@1", "RR@1", "nDCG@1", "R@2", "RR@3", "AP"]


def hand_scores(order: list[str], relevant: set[str]) -> dict[str, float]:
    """The measures from their definitions (binary judgements) on the rank column's order."""
    hits = [doc in relevant for doc in order]
    first = next((rank for rank, hit in enumerate(hits, start=1) if hit), None)
    precisions = [sum(hits[:rank]) / rank for rank, hit in enumerate(hits, start=1) if hit]
    return {"P@1": float(hits[0]), "RR@1": float(first == 1), "nDCG@1": float(hits[0]),
            "R@2": sum(hits[:2]) / len(relevant), "RR@3": 1 / first if first and first <= 3 else 0.0,
            "AP": sum(precisions) / len(relevant)}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The cases written by the harness's writer, with their qrels."""
    folder = tmp_path_factory.mktemp("ties")
    rankings = {qid: order_ranking(ranking) for qid, (ranking, _, _) in CASES.items()}
    write_run(folder / "run.trec", rankings, "statbench")
    qrels = {qid: {doc: 1 for doc in relevant} | {doc: 0 for doc, _ in ranking if doc not in relevant}
             for qid, (ranking, _, relevant) in CASES.items()}
    write_qrels(folder / "qrels.trec", qrels)
    return folder / "run.trec", folder / "qrels.trec", rankings


def test_the_writer_keeps_the_harness_order_strict_at_32_bits(written):
    path, _, rankings = written
    for qid, (_, order, _) in CASES.items():
        assert [doc for doc, _ in rankings[qid]] == order, qid
    lines = [line.split() for line in path.read_text().splitlines()]
    for qid in CASES:
        texts = [parts[4] for parts in lines if parts[0] == qid]
        doubles = [float(t) for t in texts]
        singles = array("f", doubles)  # what trec_eval keeps: atof into a C float
        assert all(map(float.__gt__, doubles, doubles[1:])), (qid, texts)
        assert all(x > y for x, y in zip(singles, singles[1:])), (qid, texts)
        assert all(math.isfinite(x) for x in singles), (qid, texts)
        assert [int(parts[3]) for parts in lines if parts[0] == qid] == list(range(1, len(texts) + 1))
    assert read_run(path) == rankings  # what is held in memory is exactly what the text parses to
    # a score kept where it is already below its predecessor at 32 bits; a tie lowered to
    # the next float32 below, in its shortest text
    assert rankings["exact"] == [("a", 1.0), ("b", 0.99999994), ("c", 0.9999999)]
    assert rankings["large"][0] == ("a", 1e9 + 1) and rankings["large"][1] == ("b", 999999940.0)
    assert rankings["huge"][:2] == [("a", 3.4028235e38), ("b", 3.4028233e38)]  # beyond float32: saturated
    assert rankings["huge"][3] == ("d", -3.4028235e38)


def test_scores_below_the_float32_range_are_raised_from_the_lowest_float32_not_refused():
    # (they used to be refused, "rescale the model's scores": see tests/scoring/test_scoring_float_limits.py)
    assert order_ranking([("a", -1e300), ("b", -1e301)]) == [("a", -3.4028233e38), ("b", -3.4028235e38)]


def test_pytrec_eval_python_providers_and_ranx_agree_with_the_rank_column(written):
    import ir_measures
    from ranx import Qrels, Run, evaluate

    path, qrels_path, _ = written
    qrels, run = list(ir_measures.read_trec_qrels(str(qrels_path))), list(ir_measures.read_trec_run(str(path)))
    expected = {qid: hand_scores(order, relevant) for qid, (_, order, relevant) in CASES.items()}
    providers = ir_measures.providers.registry
    seen: dict[str, dict[str, dict[str, float]]] = {}  # evaluator -> query -> measure -> value
    # trec_eval in C (P, nDCG, R, AP), RR@k in Python (ir-measures' default providers); ir-measures'
    # own ranx provider fails on pandas 3 (string dtype), so ranx is called directly below
    for name in ("pytrec_eval", "msmarco"):
        provider = providers[name]
        measures = [m for m in map(ir_measures.parse_measure, MEASURES) if provider.supports(m)]
        for metric in provider.iter_calc(measures, qrels, run):
            seen.setdefault(name, {}).setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    assert {m for name in seen for scores in seen[name].values() for m in scores} == set(MEASURES)
    names = {"P@1": "precision@1", "RR@1": "mrr@1", "nDCG@1": "ndcg@1", "R@2": "recall@2", "RR@3": "mrr@3",
             "AP": "map"}
    direct = evaluate(Qrels.from_file(str(qrels_path), kind="trec"), Run.from_file(str(path), kind="trec"),
                      list(names.values()), return_mean=False, make_comparable=True)
    qids = sorted(Qrels.from_file(str(qrels_path), kind="trec").keys())  # ranx's query order
    seen["ranx"] = {qid: {m: float(direct[ranx_name][i]) for m, ranx_name in names.items()}
                    for i, qid in enumerate(qids)}
    for name, by_query in seen.items():
        for qid, scores in by_query.items():
            for measure, value in scores.items():
                assert value == pytest.approx(expected[qid][measure], abs=1e-12), (name, qid, measure)


def test_the_old_double_precision_tie_breaking_made_evaluators_disagree():
    """Why: the previous writer lowered a tie to the next *double*; pytrec_eval then saw a
    tie and put ``b`` first, while the rank column (and RR) put ``a`` first."""
    import ir_measures

    old = {"q": {"a": 1.0, "b": math.nextafter(1.0, -math.inf)}}
    new = {"q": dict(order_ranking([("a", 1.0), ("b", 1.0)]))}
    qrels = {"q": {"a": 1, "b": 0}}
    p_at_1 = ir_measures.providers.registry["pytrec_eval"]
    assert p_at_1.calc_aggregate([ir_measures.P @ 1], qrels, old)[ir_measures.P @ 1] == 0.0
    assert p_at_1.calc_aggregate([ir_measures.P @ 1], qrels, new)[ir_measures.P @ 1] == 1.0


# --- statbench evaluate on foreign runs with ties --------------------------------------------

#: MRR@3 by hand in the declared order (relevant: q0 民法典第五十四条 at rank 2, since
#: 民 U+6C11 > 刑 U+5211; q1 民法典第五十六条 at 2, since 四 U+56DB > 六 U+516D; q2 rank 1;
#: q3 婚姻法第二条 at 2, since 建 U+5EFA > 婚 U+5A5A; q4 刑法第一条 at 2, 婚 > 刑)
FOREIGN_RR = {"0": 0.5, "1": 0.5, "2": 1.0, "3": 0.5, "4": 0.5}


def evaluate_json(path, stard_dir) -> dict:
    result = CliRunner().invoke(cli, ["evaluate", str(path), "--task", "stard", "--data-dir", str(stard_dir),
                                      "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{"):])


def test_evaluate_scores_every_measure_in_trec_evals_order(stard_dir, tmp_path, caplog):
    import ir_measures

    from fixture_data import STARD_QUERIES

    path = tmp_path / "foreign.trec"
    write_foreign(path, FOREIGN)
    with caplog.at_level("INFO", logger="statbench"):
        scores = evaluate_json(path, stard_dir)
    assert scores["tie_order"] == TIE_ORDER == "score desc at float32, then doc id desc (trec_eval)"
    assert "4 of 5 evaluated quer(y/ies) rank documents with scores equal at 32-bit precision" in caplog.text
    for qid, rr in FOREIGN_RR.items():
        assert scores["per_query"][qid]["MRR@3"] == rr, qid
        assert scores["per_query"][qid]["MRR@10"] == rr, qid
        assert scores["per_query"][qid]["R@5"] == 1.0, qid
    # trec_eval's own P@1 on the file as written agrees: P@1 = 1 exactly where RR@k = 1
    qrels = {str(q["query_id"]): {name: 1 for name in q["match_name"]} for q in STARD_QUERIES}
    run = {qid: {} for qid, _, _ in FOREIGN}
    for qid, doc, score in FOREIGN:
        run[qid][doc] = score
    p_at_1 = {m.query_id: m.value for m in ir_measures.providers.registry["pytrec_eval"].iter_calc(
        [ir_measures.P @ 1], qrels, run)}
    assert {qid: float(rr == 1.0) for qid, rr in FOREIGN_RR.items()} == p_at_1


def test_a_foreign_run_rewritten_strict_gives_the_same_figures_without_ties(stard_dir, tmp_path):
    tied, strict = tmp_path / "tied.trec", tmp_path / "strict.trec"
    write_foreign(tied, FOREIGN)
    rankings: dict[str, list] = {}
    for qid, doc, score in FOREIGN:
        rankings.setdefault(qid, []).append((doc, score))
    write_run(strict, {qid: order_as_trec_eval(r) for qid, r in rankings.items()}, "strict")
    first, second = evaluate_json(tied, stard_dir), evaluate_json(strict, stard_dir)
    assert first["per_query"] == second["per_query"]
    assert "tie_order" not in second  # nothing left to break: the file's order is every evaluator's


def test_statbench_run_writes_a_run_that_evaluate_scores_identically(stard_dir, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir),
                                      "--output", str(out), "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    for ranking in read_run(out / "run.trec").values():
        singles = array("f", [score for _, score in ranking])
        assert all(x > y for x, y in zip(singles, singles[1:]))
    scores = evaluate_json(out / "run.trec", stard_dir)
    assert scores["per_query"] == results["per_query"] and "tie_order" not in scores


def test_order_as_trec_eval_on_float32_ties_and_overflow():
    ordered = order_as_trec_eval([("a", 1.0 + 1e-9), ("b", 1.0), ("c", 2.0), ("d", 1e300), ("e", 1e301)])
    assert [doc for doc, _ in ordered] == ["e", "d", "c", "b", "a"]  # 1e300 and 1e301 are both inf as floats
    singles = array("f", [score for _, score in ordered])
    assert all(x > y for x, y in zip(singles, singles[1:])) and math.isfinite(singles[0])


# --- judgement grades beyond int64 -------------------------------------------------------------

@pytest.mark.parametrize("grade", [str(2 ** 63), str(-(2 ** 63) - 1), "9" * 5000])
def test_a_grade_beyond_int64_is_a_data_error_naming_file_and_line(tmp_path, grade):
    path = tmp_path / "qrels.trec"
    path.write_text(f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    with pytest.raises(DataFormatError) as err:
        read_qrels(path)
    message = str(err.value)
    assert message.startswith(f"{path}, line 2, field 'relevance': relevance ")
    assert "outside the 64-bit integer range" in message and len(message) < 300


def test_grades_at_the_int64_bounds_are_read():
    assert check_grade(str(2 ** 63 - 1), "qrels", 1) == 2 ** 63 - 1
    assert check_grade(str(-(2 ** 63)), "qrels", 1) == -(2 ** 63)
    with pytest.raises(DataFormatError, match="is not an integer"):
        check_grade("1.5", "qrels", 3)


def test_the_evaluate_table_states_the_tie_order_it_scored_in(stard_dir, tmp_path):
    tied = tmp_path / "tied.trec"
    write_foreign(tied, FOREIGN)
    result = CliRunner().invoke(cli, ["evaluate", str(tied), "--task", "stard", "--data-dir", str(stard_dir)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "ties scored in one order: score desc at float32, then doc id desc (trec_eval)" in " ".join(
        result.output.split())
