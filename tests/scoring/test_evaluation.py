import math

from statbench.api import Measure
from statbench.scoring.evaluation import mean_scores, over_splits, per_query_scores

QRELS = {"q1": {"a": 3, "b": 1}, "q2": {"c": 1}, "q3": {"x": 1}}
RUN = {"q1": [("b", 2.0), ("a", 1.0), ("z", 0.5)], "q2": [("z", 1.0), ("y", 0.9), ("c", 0.8)]}


def test_hand_computed_scores_and_missing_query_counts_zero():
    measures = [Measure("R@2", "R@2"), Measure("MRR@10", "RR@10"), Measure("R@1", "R@1")]
    scores = per_query_scores(QRELS, RUN, measures, ["q1", "q2", "q3"])
    assert scores["q1"] == {"R@2": 1.0, "MRR@10": 1.0, "R@1": 0.5}
    assert scores["q2"] == {"R@2": 0.0, "MRR@10": 1 / 3, "R@1": 0.0}
    assert scores["q3"] == {"R@2": 0.0, "MRR@10": 0.0, "R@1": 0.0}  # no run line: zero, not skipped
    assert mean_scores(scores, measures)["MRR@10"] == (1 + 1 / 3 + 0) / 3


def test_exponential_and_linear_ndcg_in_one_call_are_not_mixed_up():
    measures = [Measure("nDCG@10 exp", "nDCG(gains={0:0,1:1,2:3,3:7})@10"), Measure("nDCG@10", "nDCG@10")]
    scores = per_query_scores(QRELS, RUN, measures, ["q1"])["q1"]
    # ranking b(1), a(3): exponential gains 1 and 7, linear gains 1 and 3
    exp_dcg, exp_ideal = 1 + 7 / math.log2(3), 7 + 1 / math.log2(3)
    lin_dcg, lin_ideal = 1 + 3 / math.log2(3), 3 + 1 / math.log2(3)
    assert math.isclose(scores["nDCG@10 exp"], exp_dcg / exp_ideal)
    assert math.isclose(scores["nDCG@10"], lin_dcg / lin_ideal)


def test_mean_and_sample_std_over_splits():
    measures = [Measure("R@1", "R@1")]
    out = over_splits({"f1": {"R@1": 0.2}, "f2": {"R@1": 0.4}}, measures)
    assert math.isclose(out["R@1"]["mean"], 0.3)
    assert math.isclose(out["R@1"]["std"], math.sqrt(0.02))


def _ir_measures_scores(qrels, run, names, qids):
    """What ir-measures itself gives on the whole run (one measure per call), judged queries
    without a ranking at 0."""
    import ir_measures

    out = {q: {n: 0.0 for n in names} for q in qids if q in qrels}
    run_dict = {q: dict(ranking) for q, ranking in run.items() if ranking}
    for name in names:
        for metric in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run_dict):
            if metric.query_id in out:
                out[metric.query_id][name] = float(metric.value)
    return out


def test_scores_of_rankings_cut_to_the_cutoff_equal_ir_measures_on_the_whole_ranking():
    """per_query_scores gives each measure family only the top of each strictly ordered
    ranking (its largest cut-off): the figures are exactly ir-measures' on the whole run,
    ties (given whole) and judged-only measures (never cut) included."""
    import random

    from statbench.data.runfile import order_ranking

    rng = random.Random(15)
    docs = [f"d{i}" for i in range(60)]
    qrels = {f"q{q}": {d: rng.choice([0, 1, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 12))} for q in range(40)}
    run = {}
    for q in range(38):  # q38, q39: no ranking at all
        ranked = [(d, float(rng.randint(0, 30))) for d in rng.sample(docs, rng.randint(1, 50))]
        run[f"q{q}"] = order_ranking(ranked) if q % 3 else ranked  # every third one keeps its ties
    names = ["R@5", "R@10", "R@20", "P@5", "RR@3", "RR@10", "nDCG@10", "nDCG(gains={0:0,1:1,2:3,3:7})@5", "AP@20",
             "Success@1", "RR(rel=2)@10", "R(rel=3)@50", "nDCG(judged_only=True)@5", "P(judged_only=True)@10",
             "AP", "RR", "nDCG", "Judged@10"]
    qids = sorted(qrels)
    ours = per_query_scores(qrels, run, [Measure(n, n) for n in names], qids)
    # a ranking with ties is scored in the harness's order (ties by doc id ascending), by
    # every measure: ir-measures' figures on the same rankings put in that order first
    assert ours == _ir_measures_scores(qrels, {q: order_ranking(r) for q, r in run.items()}, names, qids)
    assert any(0 < v < 1 for scores in ours.values() for v in scores.values())


def test_evaluate_gives_ir_measures_figures_on_a_stard_fixture(stard_dir, tmp_path):
    """`statbench evaluate` on a run with ties, unsorted lines and a query it does not rank:
    per query and on average, the figures ir-measures computes from the same qrels and the
    run in the declared order, trec_eval's (score descending at float32, doc id descending),
    stated in the results."""
    import json

    import ir_measures
    from click.testing import CliRunner

    from statbench.commands.cli import cli
    from statbench.data.runfile import TIE_ORDER, order_as_trec_eval

    lines = ["0 Q0 民法典第五十六条 1 3.0 x", "0 Q0 民法典第五十四条 2 3.0 x", "0 Q0 刑法第一条 3 1.0 x",
             "1 Q0 民法典第五十六条 1 0.5 x", "1 Q0 婚姻法第二条 2 2.5 x",  # not in score order
             "2 Q0 建筑法第二条 1 9.0 x", "2 Q0 刑法第一条 2 8.0 x", "2 Q0 建筑法第一条 3 7.0 x",
             "3 Q0 刑法第一条 1 1.0 x", "3 Q0 婚姻法第二条 2 1.0 x"]  # query 4: no line
    run_path = tmp_path / "run.trec"
    run_path.write_text("\n".join(lines) + "\n", "utf-8")
    result = CliRunner().invoke(cli, ["evaluate", str(run_path), "--task", "stard", "--data-dir", str(stard_dir),
                                      "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output[result.output.index("{"):])
    qrels = {"0": {"民法典第五十四条": 1}, "1": {"民法典第五十六条": 1}, "2": {"建筑法第一条": 1, "建筑法第二条": 1},
             "3": {"婚姻法第二条": 1}, "4": {"刑法第一条": 1}}
    run = {}
    for line in lines:
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, []).append((doc, float(score)))
    run = {q: order_as_trec_eval(r) for q, r in run.items()}
    names = {m["label"]: m["ir_measure"] for m in scores["measures"]}
    expected = _ir_measures_scores(qrels, run, list(names.values()), list(qrels))
    assert scores["per_query"] == {q: {label: expected[q][name] for label, name in names.items()} for q in qrels}
    parsed = [ir_measures.parse_measure(n) for n in names.values()]
    aggregate = ir_measures.calc_aggregate(parsed, qrels, {q: dict(r) for q, r in run.items()})
    for label, name in names.items():  # the mean over every judged query, query 4 at 0
        assert math.isclose(scores["all_queries"][label], aggregate[ir_measures.parse_measure(name)])
    # doc id descending puts 民法典第五十四条 (U+56DB) before 民法典第五十六条 (U+516D), and
    # 婚姻法第二条 before 刑法第一条: both relevant ones first
    assert math.isclose(scores["all_queries"]["MRR@10"], (1 + 1 / 2 + 1 + 1 + 0) / 5)
    assert scores["tie_order"] == TIE_ORDER
    assert math.isclose(scores["all_queries"]["R@5"], (1 + 1 + 1 + 1 + 0) / 5)
