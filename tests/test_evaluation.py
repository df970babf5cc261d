import math

from statbench.api import Measure
from statbench.evaluation import mean_scores, over_splits, per_query_scores

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
