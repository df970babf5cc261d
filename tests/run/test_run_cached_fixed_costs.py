"""Issue 15, fixed costs: a cached run reads no corpus and formats nothing again, yet proves
every entry it uses; the fast readers and checks give exactly what the strict ones give."""

import json
import logging
import random

import numpy as np
import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.tasks.stard import Stard


LOG = logging.getLogger("test")


def run_cli(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def bm25(stard_dir, out, *extra):
    result = run_cli("run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir), "--output", str(out),
                     "--no-progress", *extra)
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text("utf-8"))


@pytest.fixture
def counted_loads(monkeypatch):
    """How many times the STARD loader parsed its files."""
    calls = []
    real = Stard.load

    def load(self, data_dir, log):
        calls.append(1)
        return real(self, data_dir, log)

    monkeypatch.setattr(Stard, "load", load)
    return calls


def same_scores(a, b):
    keys = ("measures", "splits", "aggregate", "all_queries", "per_query", "task", "model", "run_file")
    return {k: a.get(k) for k in keys} == {k: b.get(k) for k in keys}


def test_a_cached_run_reads_no_corpus_and_writes_the_same_files(stard_dir, tmp_path, counted_loads):
    cold = bm25(stard_dir, tmp_path / "cold")
    assert len(counted_loads) == 1 and set(cold["cache"].values()) == {"miss"}
    warm = bm25(stard_dir, tmp_path / "warm")
    assert len(counted_loads) == 1, "the corpus was parsed again although every split was cached"
    assert set(warm["cache"].values()) == {"hit"}
    assert same_scores(cold, warm)
    for name in ("run.trec", "qrels.trec"):
        assert (tmp_path / "cold" / name).read_bytes() == (tmp_path / "warm" / name).read_bytes()
    log = (tmp_path / "warm" / "run.log").read_text("utf-8")
    assert "every split cached: the load's summary read from" in log


def test_the_assembled_run_is_what_formatting_the_whole_run_gives(stard_dir, tmp_path):
    from statbench.data.runfile import read_run, write_run

    bm25(stard_dir, tmp_path / "a")
    rankings = read_run(tmp_path / "a" / "run.trec")
    write_run(tmp_path / "formatted.trec", rankings, "statbench-bm25")
    assert (tmp_path / "formatted.trec").read_bytes() == (tmp_path / "a" / "run.trec").read_bytes()
    bm25(stard_dir, tmp_path / "b")  # assembled from the cache entries' bytes
    assert (tmp_path / "formatted.trec").read_bytes() == (tmp_path / "b" / "run.trec").read_bytes()


def test_a_changed_data_file_is_loaded_again(stard_dir, tmp_path, counted_loads):
    first = bm25(stard_dir, tmp_path / "a")
    corpus = stard_dir / "corpus.jsonl"
    corpus.write_text(corpus.read_text("utf-8") + json.dumps({"name": "新法第一条", "content": "婚姻 新的 条文"},
                                                              ensure_ascii=False) + "\n", "utf-8")
    second = bm25(stard_dir, tmp_path / "b")
    assert len(counted_loads) == 2
    assert second["task"]["data_checksum"] != first["task"]["data_checksum"]
    assert set(second["cache"].values()) == {"miss"}  # another corpus: the split runs are other entries too


def test_an_added_optional_file_is_loaded_again(stard_dir, tmp_path, counted_loads):
    bm25(stard_dir, tmp_path / "a")
    (stard_dir / "cn_stopwords.txt").write_text("的\n了\n", "utf-8")  # declared, optional, not there before
    bm25(stard_dir, tmp_path / "b")
    assert len(counted_loads) == 2


def test_a_changed_task_version_or_loader_option_is_loaded_again(stard_dir, tmp_path, counted_loads, monkeypatch):
    bm25(stard_dir, tmp_path / "a")
    monkeypatch.setattr(Stard, "version", "99")
    bm25(stard_dir, tmp_path / "b")
    assert len(counted_loads) == 2
    monkeypatch.setattr(Stard, "some_loader_option", True, raising=False)
    bm25(stard_dir, tmp_path / "c")
    assert len(counted_loads) == 3


def test_a_corrupted_split_entry_is_rebuilt_not_used(stard_dir, tmp_path, isolated_cache, counted_loads):
    cold = bm25(stard_dir, tmp_path / "a")
    entries = sorted(p for p in (isolated_cache / "runs" / "stard").iterdir() if p.is_dir())
    run = entries[0] / "run.trec"
    run.write_bytes(run.read_bytes().replace(b"statbench-bm25", b"statbench-bm26", 1))
    again = bm25(stard_dir, tmp_path / "b")
    assert len(counted_loads) == 2  # a split to compute: the task is loaded in full
    assert sorted(again["cache"].values()).count("miss") == 1
    assert "sha256 differs" in again["cache_invalid"][0]["reason"]
    assert same_scores(cold, again)
    assert (tmp_path / "a" / "run.trec").read_bytes() == (tmp_path / "b" / "run.trec").read_bytes()


def test_a_corrupted_summary_or_scores_entry_is_never_used(stard_dir, tmp_path, isolated_cache, counted_loads):
    cold = bm25(stard_dir, tmp_path / "a")
    (summary,) = (isolated_cache / "loads" / "stard").glob("*/summary.json")
    obj = json.loads(summary.read_text("utf-8"))
    obj["qrels"][next(iter(obj["qrels"]))] = {"forged": 1}
    summary.write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    for scores in (isolated_cache / "scores" / "stard").glob("*/scores.json"):
        per_query = json.loads(scores.read_text("utf-8"))
        scores.write_text(json.dumps({q: {m: 0.25 for m in v} for q, v in per_query.items()}), "utf-8")
    again = bm25(stard_dir, tmp_path / "b")
    assert len(counted_loads) == 2  # the summary failed its manifest: loaded in full
    assert same_scores(cold, again)
    invalid = {e["entry"]: e["reason"] for e in again["cache_invalid"]}
    assert invalid.pop(str(summary.parent)).startswith("summary.json: ")
    assert invalid and all(r.startswith("scores.json: ") and "/scores/stard/" in e for e, r in invalid.items())


def test_a_run_with_a_reranker_or_a_split_subset_reuses_the_summary(stard_dir, tmp_path, counted_loads):
    one = bm25(stard_dir, tmp_path / "a", "--split", "fold-2")
    two = bm25(stard_dir, tmp_path / "b", "--split", "fold-2")
    assert len(counted_loads) == 1 and same_scores(one, two)
    bm25(stard_dir, tmp_path / "c", "--split", "fold-3")  # not cached yet: a full load
    assert len(counted_loads) == 2


# --- evaluate reads the judgements and the run only ------------------------------------------


def test_evaluate_uses_the_summary_and_scores_as_the_run_did(stard_dir, tmp_path, counted_loads):
    record = bm25(stard_dir, tmp_path / "a")
    result = run_cli("evaluate", "--task", "stard", "--data-dir", str(stard_dir), "--json",
                     str(tmp_path / "a" / "run.trec"))
    assert result.exit_code == 0, result.output
    assert len(counted_loads) == 1
    scores = json.loads(result.output[result.output.index("{"):])
    assert scores["per_query"] == record["per_query"] and scores["aggregate"] == record["aggregate"]


def test_evaluate_still_reports_documents_outside_the_corpus(stard_dir, tmp_path, caplog):
    bm25(stard_dir, tmp_path / "a")
    run = tmp_path / "a" / "run.trec"
    lines = run.read_text("utf-8").splitlines()
    qid = lines[0].split(" ")[0]
    (tmp_path / "foreign.trec").write_text(f"{qid} Q0 no-such-article 1 99.0 x\n" + "\n".join(lines[1:]) + "\n",
                                           "utf-8")
    with caplog.at_level(logging.WARNING, logger="statbench"):
        result = run_cli("evaluate", "--task", "stard", "--data-dir", str(stard_dir), str(tmp_path / "foreign.trec"))
    assert result.exit_code == 0, result.output
    assert "no-such-article" in caplog.text + result.output


# --- the fast readers agree with the strict ones ---------------------------------------------


def _line_reader(monkeypatch):
    import statbench.data.runfile as runfile

    monkeypatch.setattr(runfile, "_read_canonical_run", lambda path: None)
    return runfile.read_run


RUNS = [
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d1 1 -3e-2 t\nq1 Q0 d3 3 .5 t\n",  # q1 in two blocks
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.5 t\n",  # a pair twice
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1e999 t\n",  # overflows
    "q1 Q0 d1 1 nan t\n", "q1 Q0 d1 x 1 t\n", "q1 Q0 d1 +1 1 t\n", "q1 Q0 d1 1 1_0 t\n", "q1 Q0 d1 1 ١ t\n",
    "q1 Q0 d1 1 2.5\n", "q1  Q0 d1 1 2.5 t\n", "q1\tQ0\td1\t1\t2.5\tt\n", "q1 Q0 d1 1 2.5 t", "q1 Q0 d1 1 2.5 t\r\n",
    "q1 Q0 d\u00a0x 1 2.5 t\n", "\n\nq1 Q0 d1 1 2.5 t\n\n", "", "q1 Q0 d1 1 2.5 t\n\ufeffq2 Q0 d1 1 1 t\n",
    "q1 Q0 d1 1 2.5 t 7\nq2 Q0 d1 1 1\n",  # seven and five columns: six on average
]


@pytest.mark.parametrize("text", RUNS)
def test_the_fast_run_reader_gives_what_the_line_reader_gives(text, tmp_path, monkeypatch):
    from statbench.data.runfile import read_run

    path = tmp_path / "run.trec"
    path.write_text(text, "utf-8")

    def outcome(reader):
        try:
            return reader(path, allow_empty=True)
        except DataFormatError as exc:
            return str(exc)

    fast = outcome(read_run)
    assert fast == outcome(_line_reader(monkeypatch))
    if text == RUNS[0]:
        assert fast == {"q1": [("d1", 2.5), ("d2", 1.5), ("d3", 0.5)], "q2": [("d1", -0.03)]}


def test_schema_check_gives_the_full_validators_verdict():
    from statbench.leaderboard.sample import make_results
    from statbench.results.record import _validator, schema_errors

    good = make_results({"q1": {"R@10": 0.5}, "q2": {"R@10": 1.0}}, measures=["R@10"])
    assert schema_errors(good) == []
    for bad in ({"q1": {"R@10": True}}, {"q1": {"R@10": "0.5"}}, {"q1": [0.5]}, [], {"q1": {"R@10": None}}):
        broken = {**good, "per_query": bad}
        full = sorted(_validator().iter_errors(broken), key=lambda e: list(e.absolute_path))
        expected = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in full]
        assert schema_errors(broken) == expected and expected
    assert schema_errors({**good, "breakdown": {"category": {"a": {"R@10": "x"}}}})
    assert schema_errors({**good, "created": 5}) and schema_errors({**good, "extra_key": 1})


def test_top_k_keeps_what_cutting_the_whole_corpus_kept():
    from statbench.models.shared.topk import top_k

    def reference(scores, ids, k, among=None, positive=True):
        rows = list(range(len(scores))) if among is None else list(among)
        if k < len(rows):
            threshold = sorted((scores[i] for i in rows), reverse=True)[k - 1]
            rows = [i for i in rows if scores[i] >= threshold]
        return [(ids[i], float(scores[i])) for i in rows if not positive or scores[i] > 0]

    rng = np.random.default_rng(7)
    for trial in range(500):
        n = int(rng.integers(1, 40))
        scores = (rng.integers(-2, 4, size=n) * (rng.random(n) < 0.4)).astype([np.float32, np.float64][trial % 2])
        ids = [f"d{i}" for i in range(n)]
        among = None if trial % 3 else np.unique(rng.integers(0, n, size=max(1, n // 2)))
        for k in (1, 3, 10, 50):
            for positive in (True, False):
                got = top_k(scores, ids, k, among, positive)
                assert got == reference(scores, ids, k, among, positive)
                assert all(type(score) is float for _, score in got)


def test_two_analysis_workers_give_the_tokens_of_one(monkeypatch):
    from statbench.models.lexical.analysis import Analyzer, analyse_texts

    texts = [f"Le {i} juillet, l'article {i} du Code civil s'applique aux contrats." for i in range(300)]
    monkeypatch.setenv("STATBENCH_WORKERS", "1")
    serial = analyse_texts(Analyzer("fr"), texts)
    monkeypatch.setenv("STATBENCH_WORKERS", "3")
    advanced = []
    assert analyse_texts(Analyzer("fr"), texts, lambda n=1: advanced.append(n)) == serial
    assert sum(advanced) == len(texts) and serial[1][:2] == ["1", "juillet"]


@pytest.mark.parametrize("chunk", [1, 3, 17, 4096])
def test_the_streaming_json_list_reader_gives_what_the_whole_file_reader_gives(chunk, tmp_path, monkeypatch):
    import statbench.data.dataio as dataio

    monkeypatch.setattr(dataio, "JSON_LIST_CHUNK", chunk)
    rng = random.Random(chunk)
    items = [{"content": "é—" * rng.randint(0, 9), "metadata": {"chunk_id": f"c{i}", "n": i * 1.5}} for i in range(25)]
    good = json.dumps(items, indent=1, ensure_ascii=False)
    texts = [good, "[]", "[1, 12345, 1e5]", "[1e999]", "[1,2", "[1 2]", "[1] x", '[{"a":1,"a":2}]', "{}", "",
             "[1,\n\ufeff2]", "[1,\x002]"]
    for _ in range(60):
        chars = list(good)
        chars[rng.randrange(len(chars))] = rng.choice('"}],x \n{1')
        texts.append("".join(chars))
    path = tmp_path / "list.json"

    def outcome(reader):
        try:
            return list(reader(path, "items"))
        except DataFormatError as exc:
            return str(exc)

    for text in texts:
        path.write_text(text, "utf-8")
        assert outcome(dataio.read_json_list) == outcome(dataio._whole_json_list), text[:60]
    path.write_bytes(b"[1, \xff]")
    assert "not valid UTF-8" in outcome(dataio.read_json_list)


def test_the_real_uk_layout_streams_with_line_numbers(tmp_path, monkeypatch):
    import statbench.data.dataio as dataio
    from statbench.tasks.ukstat import read_real_corpus

    monkeypatch.setattr(dataio, "JSON_LIST_CHUNK", 64)
    items = [{"content": f"Heading {i}\nText {i}", "metadata": {"chunk_id": f"c{i}", "doc_id": "d"}} for i in range(30)]
    items[20]["metadata"]["chunk_id"] = "c3"
    path = tmp_path / "corpus_uklegislation.json"
    path.write_text(json.dumps(items, indent=1), "utf-8")
    with pytest.raises(DataFormatError, match=r"item 20: duplicate passage id 'c3' .*\(the item starts on line"):
        read_real_corpus(path)
    del items[20]
    path.write_text(json.dumps(items, indent=1), "utf-8")
    corpus = read_real_corpus(path)
    assert len(corpus) == 29 and corpus["c29"].fields["heading"] == "Heading 29"


def test_a_loader_reading_an_undeclared_file_never_gets_a_cached_load(stard_dir, tmp_path, monkeypatch):
    """The load summary is keyed by the declared files; a loader that also opens another file
    (through open_data) could change its output without changing the key, so its load is
    never summarised: every run parses the data again."""
    from statbench.data.dataio import open_data

    side = tmp_path / "side.txt"
    side.write_text("anything")
    calls = []
    real = Stard.load

    def load(self, data_dir, log):
        calls.append(1)
        with open_data(side):
            pass
        return real(self, data_dir, log)

    monkeypatch.setattr(Stard, "load", load)
    bm25(stard_dir, tmp_path / "cold")
    warm = bm25(stard_dir, tmp_path / "warm")
    assert len(calls) == 2, "a load that read an undeclared file was served from the cached summary"
    assert set(warm["cache"].values()) == {"hit"}  # the split runs themselves are still reused
    # `statbench evaluate` loads through the same guard: no summary, so every call parses again
    for _ in range(2):
        result = run_cli("evaluate", str(tmp_path / "warm" / "run.trec"), "--task", "stard", "--data-dir", str(stard_dir))
        assert result.exit_code == 0, result.output
    assert len(calls) == 4
