import math
from array import array

import pytest

from statbench.errors import DataFormatError
from statbench.data.runfile import order_ranking, read_qrels, read_run, write_run


def test_ties_are_broken_by_doc_id_and_made_strict():
    ranked = order_ranking([("b", 1.0), ("a", 1.0), ("c", 2.0), ("d", 0.5)])
    assert [d for d, _ in ranked] == ["c", "a", "b", "d"]
    scores = [s for _, s in ranked]
    assert all(x > y for x, y in zip(scores, scores[1:]))
    singles = array("f", scores)  # strictly decreasing as trec_eval reads them too (C floats)
    assert all(x > y for x, y in zip(singles, singles[1:]))
    # the tied score is lowered to the next float32 below 1.0, written in its shortest text
    assert scores[1] == 1.0 and scores[2] == 0.99999994 and singles[2] == 1.0 - 2.0 ** -24


def test_depth_cuts_after_ordering():
    assert [d for d, _ in order_ranking([("z", 1.0), ("y", 1.0), ("x", 1.0)], depth=2)] == ["x", "y"]


def test_non_finite_scores_are_rejected():
    with pytest.raises(ValueError, match="non-finite"):
        order_ranking([("a", float("nan"))])


def test_run_round_trip_keeps_exact_scores(tmp_path):
    rankings = {"q1": order_ranking([("a", 0.1 + 0.2), ("b", 0.1 + 0.2)])}
    write_run(tmp_path / "run.trec", rankings, "my tag")
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert lines == [f"q1 Q0 a 1 {0.1 + 0.2!r} my_tag", "q1 Q0 b 2 0.29999998 my_tag"]
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


def test_the_fast_run_reader_agrees_with_the_line_reader_on_damaged_runs(tmp_path, monkeypatch):
    """Random damage to a canonical run (a space doubled or dropped, a tab, NBSP or CR, a
    line cut, a signed rank, an odd score): the whole-text reader gives exactly the line
    reader's rankings or error, whichever it is."""
    import random

    import statbench.data.runfile as runfile

    good = "".join(f"q{q} Q0 d{d} {r} {s} tag\n" for q in (3, 1, 2)
                   for r, (d, s) in enumerate([(4, "2.5"), (1, "1e-3"), (7, "-0.5"), (2, ".25")], start=1))
    rng = random.Random(15)
    texts = [good]
    for _ in range(400):
        text = list(good)
        for _ in range(rng.randint(1, 2)):
            at = rng.randrange(len(text))
            text[at:at + rng.randint(0, 1)] = rng.choice([" ", "  ", "\t", "\u00a0", "\r", "\n", "", "+", "_",
                                                          "nan", "1", "x", "\u0661", "é", "\ufeff"])
        texts.append("".join(text))
    path = tmp_path / "run.trec"

    def outcome(reader):
        try:
            return reader(path, allow_empty=True)
        except DataFormatError as exc:
            return str(exc)

    fast_reads = 0
    for text in texts:
        path.write_text(text, "utf-8")
        fast_reads += runfile._read_canonical_run(path) is not None
        fast = outcome(runfile.read_run)
        with monkeypatch.context() as patch:
            patch.setattr(runfile, "_read_canonical_run", lambda path: None)
            assert fast == outcome(runfile.read_run), repr(text)
    assert fast_reads > 40  # the fast reader did read many of them

