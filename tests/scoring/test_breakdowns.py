"""Breakdowns by law, number of relevant articles and query length (statbench.scoring.breakdowns):
figures hand-computed on a tiny structured STARD, the multi-law rule, the declared length
buckets, results.json through the strict reader, the board's table."""

from __future__ import annotations

import json
import logging
import re
from html import unescape

import pytest

from statbench.api import Document, Query, Split, TaskData
from statbench.loading.loadcache import TaskSummary
from statbench.loading.queryfacts import QueryFacts, length_unit, query_length
from statbench.results.record import Results, read_results, write_results
from statbench.scoring.breakdowns import LAW_RULE, UNPLACED, breakdown_groups, bucket_of
from statbench.scoring.evaluate_file import evaluate_run_file
from statbench.testing import invoke_cli

LOG = logging.getLogger("test")

#: article -> law: 建筑法第二条 is placed in another law than 建筑法第一条, so query 2 (both
#: relevant) lies in two laws
LAWS = {"建筑法第一条": "建筑法", "建筑法第二条": "行政法", "民法典第五十四条": "民法典", "民法典第五十六条": "民法典",
        "刑法第一条": "刑法", "婚姻法第二条": "婚姻法"}

#: per query: R@5 and MRR@10 of the run below
#: q0 rank 1 (1, 1); q1 rank 2 (1, .5); q2 one of two at rank 1 (.5, 1); q3 missed (0, 0); q4 rank 3 (1, 1/3)
RUN = """0 Q0 民法典第五十四条 1 9 t
0 Q0 刑法第一条 2 8 t
1 Q0 刑法第一条 1 9 t
1 Q0 民法典第五十六条 2 8 t
2 Q0 建筑法第二条 1 9 t
3 Q0 刑法第一条 1 9 t
4 Q0 民法典第五十四条 1 9 t
4 Q0 婚姻法第二条 2 8 t
4 Q0 刑法第一条 3 7 t
"""


def write_structure(folder) -> None:
    with open(folder / "structure.jsonl", "w", encoding="utf-8") as handle:
        for name, law in LAWS.items():
            handle.write(json.dumps({"id": name, "law": law, "category": law, "headings": []}, ensure_ascii=False)
                         + "\n")


@pytest.fixture
def structured(stard_dir):
    write_structure(stard_dir)
    return stard_dir


def test_hand_computed_breakdowns_by_law_relevant_articles_and_length(structured, tmp_path):
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    scores = evaluate_run_file(run, "stard", structured, None, LOG)
    law = scores.breakdown["law"]
    # the law with most queries first, then by name; 行政法 and 建筑法 both hold query 2
    assert scores.breakdown_groups["law"].values == ["民法典", "刑法", "婚姻法", "建筑法", "行政法"]
    assert scores.breakdown_groups["law"].n_queries == {"民法典": 2, "刑法": 1, "婚姻法": 1, "建筑法": 1, "行政法": 1}
    assert scores.breakdown_groups["law"].rule == LAW_RULE
    assert law["民法典"]["R@5"] == 1.0 and law["民法典"]["MRR@10"] == 0.75
    assert law["建筑法"]["R@5"] == law["行政法"]["R@5"] == 0.5 and law["行政法"]["MRR@10"] == 1.0
    assert law["婚姻法"]["R@5"] == 0.0 and law["刑法"]["MRR@10"] == pytest.approx(1 / 3)
    assert scores.breakdown["relevant_articles"] == {
        "1": pytest.approx({**scores.breakdown["relevant_articles"]["1"], "R@5": 0.75,
                            "MRR@10": (1 + 0.5 + 0 + 1 / 3) / 4}),
        "2": pytest.approx({**scores.breakdown["relevant_articles"]["2"], "R@5": 0.5, "MRR@10": 1.0}),
    }
    assert scores.breakdown_groups["relevant_articles"].n_queries == {"1": 4, "2": 1}
    # lengths in characters (zh): 11, 13, 16, 13, 9
    assert scores.breakdown_groups["query_length"].values == ["0–15", "16–25"]
    assert scores.breakdown_groups["query_length"].n_queries == {"0–15": 4, "16–25": 1}
    assert scores.breakdown["query_length"]["16–25"]["R@5"] == 0.5


def test_a_query_in_several_laws_counts_in_each_and_an_unplaced_one_is_named():
    corpus = {"a1": Document("a1", "x", fields={"heading_path": "Law A › Part 1"}),
              "b1": Document("b1", "x", fields={"heading_path": "Law B"}),
              "c1": Document("c1", "x")}
    queries = {q: Query(q, "one two three") for q in ("q1", "q2", "q3")}
    qrels = {"q1": {"a1": 1, "b1": 2}, "q2": {"a1": 1, "b1": 0}, "q3": {"c1": 1}}
    data = TaskData(corpus=corpus, queries=queries, qrels=qrels, splits=[Split("test", ("q1", "q2", "q3"))],
                    files=[], checksum="0" * 64)
    summary = TaskSummary.of(data, {}, language="en-GB")
    assert summary.facts.laws == {"a1": "Law A", "b1": "Law B"}  # relevant articles only, the root of each path
    assert TaskSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
    groups = breakdown_groups(summary, ["q1", "q2", "q3"])
    formed, members = groups["law"]
    # a judgement of grade 0 is not relevant: q2 is in Law A only
    assert members == {"Law A": ["q1", "q2"], "Law B": ["q1"], UNPLACED: ["q3"]}
    assert sum(formed.n_queries.values()) == 4 > 3
    assert groups["relevant_articles"][1] == {"1": ["q2", "q3"], "2": ["q1"]}
    # a task without structure has no law breakdown, and one without facts only its own groups
    flat = TaskData(corpus={"c1": corpus["c1"]}, queries=queries, qrels={"q3": {"c1": 1}},
                    splits=[Split("test", ("q3",))], files=[], checksum="0" * 64, groups={"kind": {"q3": "k"}})
    assert set(breakdown_groups(TaskSummary.of(flat, {}, language="en"), ["q3"])) == {
        "kind", "relevant_articles", "query_length"}
    assert set(breakdown_groups(flat, ["q3"])) == {"kind"}


def test_length_buckets_are_declared_per_language():
    assert [length_unit(tag) for tag in ("zh", "zh-Hans", "ZH_cn", "en-GB", "fr", "nl")] == \
        ["characters", "characters", "characters", "words", "words", "words"]
    assert query_length("谁 可以\u3000成为？", "characters") == 6  # white space not counted
    assert query_length("  who may  become a\ttrader ", "words") == 5
    from statbench.scoring.breakdowns import LENGTH_BUCKETS
    words, chars = LENGTH_BUCKETS["words"], LENGTH_BUCKETS["characters"]
    assert [bucket_of(n, words) for n in (0, 10, 11, 20, 21, 40, 41, 80, 81, 500)] == \
        ["0–10", "0–10", "11–20", "11–20", "21–40", "21–40", "41–80", "41–80", "81+", "81+"]
    assert [bucket_of(n, chars) for n in (15, 16, 25, 26, 40, 41, 81)] == \
        ["0–15", "16–25", "16–25", "26–40", "26–40", "41–80", "81+"]
    with pytest.raises(ValueError):
        QueryFacts.from_json({"unit": "tokens", "lengths": {}, "laws": {}})


def _run_bm25(data_dir, out):
    result = invoke_cli(["run", "--task", "stard", "--model", "bm25", "--data-dir", data_dir, "--output", out,
                         "--no-progress"])
    assert result.exit_code == 0, result.output
    return out / "results.json"


def test_results_round_trip_and_older_results_still_read(structured, tmp_path):
    path = _run_bm25(structured, tmp_path / "out" / "bm25")
    obj = read_results(path)  # strict: schema-checked
    assert sorted(obj["breakdown_groups"]) == ["law", "query_length", "relevant_articles"]
    record = Results.from_json(obj)
    assert record.to_json() == obj
    assert record.breakdown_groups["law"].n_queries["民法典"] == 2
    # the same figures when every split is cached (the summary stands in for the load)
    again = read_results(_run_bm25(structured, tmp_path / "out" / "bm25"))
    assert (again["breakdown"], again["breakdown_groups"]) == (obj["breakdown"], obj["breakdown_groups"])
    assert set(again["cache"].values()) == {"hit"}
    # results written before the field existed still read
    old = {k: v for k, v in obj.items() if k != "breakdown_groups"}
    write_results(tmp_path / "old.json", old)
    assert Results.read(tmp_path / "old.json").breakdown_groups is None
    # a wrong type in it is refused by the strict reader
    bad = json.loads(json.dumps(obj))
    bad["breakdown_groups"]["law"]["n_queries"]["民法典"] = -1
    (tmp_path / "bad.json").write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(Exception, match="breakdown_groups"):
        read_results(tmp_path / "bad.json")


def test_board_shows_the_breakdown_table_and_plot(structured, tmp_path):
    from statbench.leaderboard.render.build import build_site

    path = _run_bm25(structured, tmp_path / "results" / "bm25")
    obj = read_results(path)
    build_site(tmp_path / "results", tmp_path / "site")
    html = (tmp_path / "site" / "task-stard.html").read_text("utf-8")
    section = re.search(r'<section id="breakdowns".*?</section>', html, re.S).group(0)
    tested = re.search(r"<h3>(\S+) by law</h3>", section).group(1)
    table = re.search(r'<table class="lb breakdown" data-group="law">.*?</table>', section, re.S).group(0)
    heads = [unescape(re.sub(r"<[^>]+>", " ", h)).split() for h in re.findall(r"<th[^>]*>(.*?)</th>", table, re.S)]
    assert heads[1:] == [["民法典", "n=2"], ["刑法", "n=1"], ["婚姻法", "n=1"], ["建筑法", "n=1"], ["行政法", "n=1"]]
    cells = re.findall(r'<td class="num">(.*?)</td>', table)
    assert cells == [f"{obj['breakdown']['law'][v][tested]:.4f}" for v in ("民法典", "刑法", "婚姻法", "建筑法", "行政法")]
    assert "counts in each of them" in section
    assert re.search(rf"<svg[^>]*>(?:(?!</svg>).)*{re.escape(tested)} by law.*?</svg>", section, re.S)
    assert '<table class="lb breakdown" data-group="query_length">' in section

    # an older result (no breakdown_groups) on the same board: values by name, no counts, no refusal
    old = {k: v for k, v in obj.items() if k != "breakdown_groups"}
    write_results(tmp_path / "old" / "results.json", old)
    build_site(tmp_path / "old", tmp_path / "old-site")
    html = (tmp_path / "old-site" / "task-stard.html").read_text("utf-8")
    assert '<table class="lb breakdown" data-group="law">' in html and "n=2" not in html


def test_verification_checks_the_claimed_query_counts(structured, tmp_path):
    from dataclasses import replace

    from statbench.leaderboard.verify.verify import compare_figures

    record = Results.read(_run_bm25(structured, tmp_path / "out" / "bm25"))
    assert compare_figures(record, record) == []
    law = record.breakdown_groups["law"]
    forged = replace(record, breakdown_groups={**record.breakdown_groups,
                                               "law": replace(law, n_queries={**law.n_queries, "民法典": 20})})
    assert compare_figures(forged, record) == [
        "breakdown law: claimed values, query counts or rule differ from the re-scored ones"]


# --- a breakdown with one value says nothing: left out with a note ------------------------------


def _with_groups(value: float, groups: dict[str, dict[str, list[str]]], described: bool = True) -> dict:
    """A sample result whose breakdown groups are ``groups`` (group -> value -> query ids)."""
    from statbench.leaderboard.sample import make_results

    qids = [f"q{i}" for i in range(6)]
    per_query = {q: {m: value + i / 100 for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i, q in enumerate(qids)}
    breakdown = {g: {v: {m: sum(per_query[q][m] for q in members) / len(members) for m in per_query["q0"]}
                     for v, members in values.items()} for g, values in groups.items()}
    results = make_results(per_query, breakdown=breakdown, model=f"m{value}")
    if described:
        results["breakdown_groups"] = {g: {"values": list(values), "n_queries": {v: len(m) for v, m in values.items()},
                                           "rule": f"the {g} of the query"} for g, values in groups.items()}
    return results


def test_a_breakdown_with_one_value_is_left_out_with_a_note(tmp_path):
    from statbench.leaderboard.render.build import build_site
    from statbench.leaderboard.sample import write_result

    qids = [f"q{i}" for i in range(6)]
    groups = {"relevant_articles": {"3": qids}, "category": {"a": qids[:2], "b": qids[2:]}}
    root = tmp_path / "r"
    write_result(root / "one", _with_groups(0.3, groups))
    write_result(root / "old", _with_groups(0.5, groups, described=False))  # written before breakdown_groups
    build_site(root, tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    section = re.search(r'<section id="breakdowns".*?</section>', html, re.S).group(0)
    assert '<table class="lb breakdown" data-group="category">' in section
    assert '<table class="lb breakdown" data-group="relevant_articles">' not in section
    assert "by relevant_articles</h3>" not in section
    note = re.search(r'<p class="note single-value" data-group="relevant_articles">(.*?)</p>', section, re.S).group(1)
    assert " ".join(unescape(note).split()).endswith(
        "by relevant_articles: left out, every evaluated query has the same value (3) (6 queries), so its figure is "
        "the board's own; it stays in each result's results.json (breakdown).")
    # the results stay as computed
    assert read_results(root / "one" / "results.json")["breakdown"]["relevant_articles"]["3"]["R@5"] == \
        pytest.approx(0.325)


def test_two_values_across_the_rows_are_a_breakdown(tmp_path):
    """One value in each result, but not the same one: the board's table compares them."""
    from statbench.leaderboard.render.breakdowns import breakdown_sections, group_values
    from statbench.results.record import Results

    qids = [f"q{i}" for i in range(6)]
    rows = []
    for key, value in (("a", "3"), ("b", "4")):
        record = Results.from_json(_with_groups(0.3, {"relevant_articles": {value: qids}}))
        rows.append(type("Row", (), {"key": key, "results": record})())
    assert group_values("relevant_articles", rows) == ["3", "4"]
    (section,) = breakdown_sections(rows, {"a": "A", "b": "B"}, "R@5")
    assert section["single"] is None and section["columns"]
    (alone,) = breakdown_sections(rows[:1], {"a": "A"}, "R@5")
    assert alone["single"].startswith("by relevant_articles: left out, every evaluated query has the same value (3)")


def test_a_rows_details_leave_a_single_value_breakdown_out(tmp_path):
    from statbench.leaderboard.render.build import build_site
    from statbench.leaderboard.sample import write_result
    qids = [f"q{i}" for i in range(6)]
    write_result(tmp_path / "r" / "one", _with_groups(0.3, {"relevant_articles": {"3": qids},
                                                            "category": {"a": qids[:2], "b": qids[2:]}}))
    build_site(tmp_path / "r", tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "by category</dt>" in html and "by relevant_articles</dt>" not in html
