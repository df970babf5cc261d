"""UK statutes: both corpus layouts, graded scoring, frozen pools (build, checksum, rerun)."""

import json
import logging
import math

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError, DownloadError, StatbenchError
from statbench.storage.paths import cache_root
from statbench.results.record import load_results
from statbench.run.runner import execute
from statbench.run.request import RunRequest
from statbench.tasks.ukstat import UkStatutes

from fixture_data import write_jsonl
from ukstat_fixtures import PASSAGES, QRELS, QUERIES, uk_dir  # noqa: F401 - the fixture

LOG = logging.getLogger("test")
NO_PROGRESS = lambda description, total=None: (lambda n=1: None)  # noqa: E731


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_substitute_layout_loads_content_only(uk_dir):
    data = UkStatutes().load(uk_dir, LOG)
    assert sorted(p.name for p in data.files) == ["corpus.jsonl", "qrels.tsv", "queries.jsonl"]
    assert data.corpus["p-a"].text == PASSAGES["p-a"] and data.corpus["p-a"].fields == {}
    assert data.qrels["Q1"] == {"p-a": 3, "p-b": 2, "p-c": 1}
    assert data.queries["Q1"].fields == {}
    assert data.groups == {"legislation_type": {"Q1": "Scottish Statutory Instruments",
                                                "Q2": "Northern Ireland Statutory Rules"}}
    assert [s.test for s in data.splits] == [("Q1", "Q2")]
    assert dict(data.pools) == {} and data.dropped == []


def test_real_layout_reads_chunk_ids_and_never_the_instrument(tmp_path):
    items = [{"content": text, "metadata": {"chunk_id": f"uk:2020:doc#{k}", "doc_id": "uk:2020:doc", "year": 2020}}
             for k, text in PASSAGES.items()]
    (tmp_path / "corpus_uklegislation.json").write_text(json.dumps(items))
    write_jsonl(tmp_path / "eval_statutory_100queries_approved.jsonl", [
        {"qid": "Q1", "doc_id": "uk:2020:doc", "legislation_type": "Scottish Statutory Instruments",
         "query": QUERIES[0]["query"],
         "answers": [{"chunk_id": "uk:2020:doc#p-a", "rel": 3, "why": "x", "chunk": {"content": "..."}},
                     {"chunk_id": "uk:2020:doc#p-b", "rel": 2}, {"chunk_id": "uk:2020:doc#p-c", "rel": 1}]},
    ])
    data = UkStatutes().load(tmp_path, LOG)
    assert data.qrels == {"Q1": {"uk:2020:doc#p-a": 3, "uk:2020:doc#p-b": 2, "uk:2020:doc#p-c": 1}}
    assert data.corpus["uk:2020:doc#p-x"].text == PASSAGES["p-x"]
    assert "uk:2020:doc" not in json.dumps([dict(q.fields) for q in data.queries.values()]) + data.queries["Q1"].text
    # the passage's own place in its instrument (issue 13), the same field names for every passage
    assert data.corpus["uk:2020:doc#p-a"].fields == {"instrument": "uk:2020:doc", "code": "uk:2020:doc",
                                                     "heading_path": "uk:2020:doc"}
    assert {tuple(sorted(d.fields)) for d in data.corpus.values()} == {("code", "heading_path", "instrument")}


def test_real_layout_exposes_the_legislative_structure_as_bsard_names_it(tmp_path):
    meta = {"doc_id": "unitedkingdom:2020:13ebe8c785", "LegislationType": "Scottish Statutory Instruments",
            "source_url": "https://www.legislation.gov.uk/ssi/2020/262/regulation/12", "year": 2020,
            "file_name": "The Health Protection (Directions) (Scotland) Regulations 2020.txt", "n_chunks_in_doc": 19}
    items = [
        {"content": "Offences and penalties\n12.—(1) A person who contravenes a direction commits an offence.",
         "metadata": {**meta, "chunk_id": "c1", "chunk_position": 14}},
        {"content": "12.—(1) A numbered provision is not a heading.\nSecond line",
         "metadata": {**meta, "chunk_id": "c2", "chunk_position": 15}},
        {"content": "The Secretary of State may—\n(a) make regulations", "metadata": {"chunk_id": "c3"}},
    ]
    (tmp_path / "corpus_uklegislation.json").write_text(json.dumps(items, ensure_ascii=False), "utf-8")
    write_jsonl(tmp_path / "eval_statutory_100queries_approved.jsonl", [
        {"qid": "Q1", "doc_id": "unitedkingdom:2020:13ebe8c785", "query": "offences?",
         "answers": [{"chunk_id": "c1", "rel": 3}]}])
    data = UkStatutes().load(tmp_path, LOG)
    title = "The Health Protection (Directions) (Scotland) Regulations 2020"
    assert dict(data.corpus["c1"].fields) == {
        "instrument": "unitedkingdom:2020:13ebe8c785", "code": title, "position": "14",
        "heading": "Offences and penalties", "heading_path": f"{title} › Offences and penalties"}
    assert dict(data.corpus["c2"].fields) == {"instrument": "unitedkingdom:2020:13ebe8c785", "code": title,
                                              "position": "15", "heading_path": title}
    assert dict(data.corpus["c3"].fields) == {}  # no metadata beyond the id: no structure
    # nothing that tells judged passages apart: no type, year or URL (the URL names type and year)
    shown = json.dumps([dict(d.fields) for d in data.corpus.values()], ensure_ascii=False)
    assert "Scottish" not in shown and "2020/262" not in shown and "ssi" not in shown
    assert data.corpus["c1"].text.startswith("Offences and penalties")  # the text models see is unchanged


def test_real_layout_structure_changes_the_corpus_checksum_not_the_data_checksum(tmp_path):
    from statbench.storage.keys import corpus_checksum

    items = [{"content": "Offences\nA person commits an offence.", "metadata": {"chunk_id": "c1", "doc_id": "d1"}},
             {"content": "Other text", "metadata": {"chunk_id": "c2", "doc_id": "d1"}}]
    (tmp_path / "corpus_uklegislation.json").write_text(json.dumps(items), "utf-8")
    write_jsonl(tmp_path / "eval_statutory_100queries_approved.jsonl", [
        {"qid": "Q1", "query": "offence?", "answers": [{"chunk_id": "c1", "rel": 3}]}])
    first, again = UkStatutes().load(tmp_path, LOG), UkStatutes().load(tmp_path, LOG)
    assert first.checksum == again.checksum and corpus_checksum(first.corpus) == corpus_checksum(again.corpus)
    items[0]["metadata"]["doc_id"] = "d2"
    (tmp_path / "corpus_uklegislation.json").write_text(json.dumps(items), "utf-8")
    moved = UkStatutes().load(tmp_path, LOG)
    assert moved.corpus["c1"].fields["instrument"] == "d2"
    assert corpus_checksum(moved.corpus) != corpus_checksum(first.corpus)


def test_real_corpus_duplicate_and_missing_ids_are_located(tmp_path):
    items = [{"content": "a", "metadata": {"chunk_id": "c1"}}, {"content": "b", "metadata": {"chunk_id": "c1"}}]
    (tmp_path / "corpus_uklegislation.json").write_text(json.dumps(items))
    write_jsonl(tmp_path / "eval_statutory_100queries_approved.jsonl", [{"qid": "Q1", "query": "q", "answers": []}])
    with pytest.raises(DataFormatError, match=r"item 1: duplicate passage id 'c1' \(first at 0\)"):
        UkStatutes().load(tmp_path, LOG)
    (tmp_path / "corpus_uklegislation.json").write_text(json.dumps([{"content": "a", "metadata": {}}]))
    with pytest.raises(DataFormatError, match=r"field 'metadata.chunk_id': item 0: missing field"):
        UkStatutes().load(tmp_path, LOG)


def test_no_complete_layout_says_what_to_fetch(tmp_path):
    write_jsonl(tmp_path / "queries.jsonl", QUERIES)
    with pytest.raises(DownloadError) as err:
        UkStatutes().load(tmp_path, LOG)
    message = str(err.value)
    assert "corpus_uklegislation.json: fetch https://www.dropbox.com/" in message
    assert "for the substitute corpus" in message and f"place it at {tmp_path / 'corpus.jsonl'}" in message


def test_bad_grade_duplicate_passage_and_empty_query(uk_dir):
    sub = uk_dir / "substitute"
    (sub / "qrels.tsv").write_text(QRELS + "Q2 0 p-x 5\n")
    with pytest.raises(DataFormatError, match=r"qrels\.tsv, field 'relevance': query Q2, document p-x: grade 5"):
        UkStatutes().load(uk_dir, LOG)
    (sub / "qrels.tsv").write_text(QRELS + "Q1 0 p-gone 1\n")
    write_jsonl(sub / "queries.jsonl", QUERIES + [{"qid": "Q3", "query": "  "}])
    data = UkStatutes().load(uk_dir, LOG)
    assert data.dropped == [
        "queries.jsonl line 3: query Q3 has no text (empty or white space only): dropped",
        "qrels.tsv: 1 judgement(s) point to documents not in the corpus (e.g. Q1->p-gone)",
    ]
    write_jsonl(sub / "corpus.jsonl", [{"id": "p-a", "content": "x"}, {"id": "p-a", "content": "y"}])
    with pytest.raises(DataFormatError, match=r"corpus\.jsonl, line 2, field 'id': duplicate passage id 'p-a'"):
        UkStatutes().load(uk_dir, LOG)


def test_graded_ndcg_on_a_shipped_pool_matches_hand_computation(uk_dir, tmp_path):
    # a pool shipped in the data folder (no sidecar): its checksum is recorded as found
    pools = uk_dir / "pools"
    pools.mkdir()
    (pools / "hand.trec").write_text(
        "Q1 Q0 p-b 1 5.0 x\nQ1 Q0 p-x 2 4.0 x\nQ1 Q0 p-a 3 3.0 x\nQ1 Q0 p-d 4 2.0 x\nQ1 Q0 p-c 5 1.0 x\n"
        "Q2 Q0 p-x 1 2.0 x\nQ2 Q0 p-f 2 1.0 x\n"
    )
    out = tmp_path / "out"
    result = run("run", "--task", "ukstat", "--pool", "hand", "--data-dir", str(uk_dir), "--output", str(out),
                 "--no-progress")
    assert result.exit_code == 0, result.output
    scores = load_results(out / "results.json")["per_query"]
    # exponential gain 2^rel - 1: grades 3, 2, 1 -> 7, 3, 1
    dcg = 3 / math.log2(2) + 7 / math.log2(4) + 1 / math.log2(6)
    ideal = 7 + 3 / math.log2(3) + 1 / math.log2(4)
    assert scores["Q1"]["nDCG@5"] == pytest.approx(dcg / ideal)
    assert scores["Q1"]["MRR@5"] == 1.0  # p-b (grade 2) is relevant
    assert scores["Q1"]["R@5 (grade 3)"] == 1.0 and scores["Q1"]["R@5 (grade >=2)"] == 1.0
    assert scores["Q2"]["nDCG@5"] == pytest.approx((1 / math.log2(3)) / ideal)
    assert scores["Q2"]["R@5 (grade 3)"] == 0.0 and scores["Q2"]["R@5 (grade >=2)"] == 0.0
    assert scores["Q2"]["R@5"] == pytest.approx(1 / 3) and scores["Q2"]["MRR@5"] == pytest.approx(1 / 2)


def test_pool_build_then_rerun_the_pool(uk_dir, tmp_path):
    result = run("pool", "build", "--task", "ukstat", "--retriever", "bm25", "--depth", "3", "--data-dir", str(uk_dir),
                 "--no-progress")
    assert result.exit_code == 0, result.output
    path = cache_root() / "pools" / "ukstat" / "bm25.trec"
    meta = json.loads(path.with_suffix(".json").read_text())
    from statbench.data.checksum import file_sha256

    assert meta["sha256"] == file_sha256(path) and meta["depth"] == 3 and meta["retriever"]["name"] == "bm25"
    assert meta["command"].startswith("statbench pool build --task ukstat")
    lines = path.read_text().splitlines()
    assert max(int(line.split()[3]) for line in lines) <= 3 and {line.split()[0] for line in lines} == {"Q1", "Q2"}

    first = execute(RunRequest(task="ukstat", model="bm25", data_dir=uk_dir, output=tmp_path / "first"), LOG, NO_PROGRESS)
    pooled = execute(RunRequest(task="ukstat", pool="bm25", data_dir=uk_dir, output=tmp_path / "pool"), LOG, NO_PROGRESS)
    # the pool is BM25's top 3, in BM25's order
    first_lines = (tmp_path / "first" / "run.trec").read_text().splitlines()
    assert [line.split()[:3] for line in first_lines if int(line.split()[3]) <= 3] == [line.split()[:3] for line in lines]
    assert pooled.results["model"]["family"] == "pool" and pooled.results["pool"] == "bm25"
    run_lines = (tmp_path / "pool" / "run.trec").read_text().splitlines()
    assert [line.split()[2] for line in run_lines] == [line.split()[2] for line in lines]

    # tampering with the frozen file is an error when the pool is used, naming the rebuild command
    path.write_text("\n".join(lines[:-1]) + "\n")
    result = CliRunner().invoke(cli, ["run", "--task", "ukstat", "--pool", "bm25", "--data-dir", str(uk_dir),
                                      "--output", str(tmp_path / "x"), "--no-progress"])
    assert result.exit_code == 2
    assert "its sidecar bm25.json records" in result.output and "statbench pool build --task ukstat" in result.output
    # ...while the first stage itself still runs, and rebuilding repairs the pool
    assert run("pool", "build", "--task", "ukstat", "--retriever", "bm25", "--depth", "3", "--data-dir", str(uk_dir),
               "--no-progress").exit_code == 0
    assert execute(RunRequest(task="ukstat", pool="bm25", data_dir=uk_dir, output=tmp_path / "y"), LOG, NO_PROGRESS)


def test_pool_of_other_data_or_corpus_is_an_error(uk_dir, tmp_path):
    assert run("pool", "build", "--task", "ukstat", "--retriever", "bm25", "--data-dir", str(uk_dir),
               "--no-progress").exit_code == 0
    write_jsonl(uk_dir / "substitute" / "corpus.jsonl",
                [{"id": k, "content": v} for k, v in PASSAGES.items()] + [{"id": "p-new", "content": "new"}])
    with pytest.raises(StatbenchError, match="was built on other task data"):
        execute(RunRequest(task="ukstat", pool="bm25", data_dir=uk_dir, output=tmp_path / "o"), LOG, NO_PROGRESS)
    (uk_dir / "pools").mkdir()
    (uk_dir / "pools" / "foreign.trec").write_text("Q1 Q0 p-a 1 2.0 x\nQ1 Q0 zz-1 2 1.0 x\nQ1 Q0 zz-2 3 0.5 x\n")
    with pytest.raises(DataFormatError, match=r"pool 'foreign': 2 document id\(s\) not in the corpus \(e.g. zz-1, zz-2\)"):
        execute(RunRequest(task="ukstat", pool="foreign", data_dir=uk_dir, output=tmp_path / "o"), LOG, NO_PROGRESS)
    with pytest.raises(StatbenchError, match="valid choices: bm25, foreign"):
        execute(RunRequest(task="ukstat", pool="dense", data_dir=uk_dir, output=tmp_path / "o"), LOG, NO_PROGRESS)


def test_pool_depth_cannot_exceed_the_task_depth(uk_dir):
    result = CliRunner().invoke(cli, ["pool", "build", "--task", "ukstat", "--retriever", "bm25", "--depth", "500",
                                      "--data-dir", str(uk_dir)])
    assert result.exit_code == 2 and "exceeds the run depth of task ukstat (100)" in result.output


def test_definition_measures_and_published_figures():
    definition = UkStatutes.definition
    assert set(definition["relevance"]) == {"0", "1", "2", "3"}
    gains = [m.ir_measure for m in UkStatutes.measures if m.label.startswith("nDCG")]
    assert gains == [f"nDCG(gains={{0:0,1:1,2:3,3:7}})@{k}" for k in (5, 10, 25, 50, 100)]
    published = definition["published"]
    assert published["BM25-only (bm25 pool)"]["scores"] == {"nDCG@10": 0.2509, "MRR@10": 0.3708, "R@100": 0.5267}
    assert published["Distilled-Voyage-ModernBERT (dense pool)"]["scores"]["nDCG@10"] == 0.4211
    assert {e["pool"] for e in published.values()} == {"bm25", "dense"}
