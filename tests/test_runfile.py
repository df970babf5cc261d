import math

import pytest

from statbench.errors import DataFormatError
from statbench.runfile import order_ranking, read_qrels, read_run, write_run


def test_ties_are_broken_by_doc_id_and_made_strict():
    ranked = order_ranking([("b", 1.0), ("a", 1.0), ("c", 2.0), ("d", 0.5)])
    assert [d for d, _ in ranked] == ["c", "a", "b", "d"]
    scores = [s for _, s in ranked]
    assert all(x > y for x, y in zip(scores, scores[1:]))
    assert scores[1] == 1.0 and scores[2] == math.nextafter(1.0, -math.inf)


def test_depth_cuts_after_ordering():
    assert [d for d, _ in order_ranking([("z", 1.0), ("y", 1.0), ("x", 1.0)], depth=2)] == ["x", "y"]


def test_non_finite_scores_are_rejected():
    with pytest.raises(ValueError, match="non-finite"):
        order_ranking([("a", float("nan"))])


def test_run_round_trip_keeps_exact_scores(tmp_path):
    rankings = {"q1": order_ranking([("a", 0.1 + 0.2), ("b", 0.1 + 0.2)])}
    write_run(tmp_path / "run.trec", rankings, "my tag")
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert lines[0] == f"q1 Q0 a 1 {0.1 + 0.2!r} my_tag"
    assert read_run(tmp_path / "run.trec") == rankings


def test_qrels_with_three_columns_names_file_and_line(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 d2 1\n")
    with pytest.raises(DataFormatError) as err:
        read_qrels(path)
    assert str(err.value) == f"{path}, line 2: expected 4 columns (qid iteration docid relevance), found 3"


def test_run_with_bad_score_names_field(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d1 1 high tag\n")
    with pytest.raises(DataFormatError, match=r"line 1, field 'score': score 'high' is not a number"):
        read_run(path)
