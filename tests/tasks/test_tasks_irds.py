"""ir-datasets registration of every task, subset and pool, backed by the statbench loaders;
and `statbench list tasks` showing the declared splits."""

import ir_datasets
import pytest
from click.testing import CliRunner
from fixture_data import add_official, write_jsonl

from statbench.commands.cli import cli


@pytest.fixture
def irds():
    import statbench.loading.irds

    yield statbench.loading.irds
    statbench.loading.irds.forget()  # later tests must not see this test's folders


def test_stard_folds_and_official_split(irds, stard_dir):
    add_official(stard_dir)
    names = irds.register({"stard": stard_dir})
    assert {"statbench/stard/fold-3", "statbench/stard/dev", "statbench/stard/train", "statbench/bsard/test",
            "statbench/ukstat/dense-pool"} <= set(names)
    fold = ir_datasets.load("statbench/stard/fold-1")
    queries = list(fold.queries_iter())
    import logging

    from statbench.tasks.stard import Stard

    data = Stard().load(stard_dir, logging.getLogger("test"))
    assert [q.query_id for q in queries] == list(data.splits[0].test)
    assert fold.docs_count() == 6 and fold.docs_lang() == "zh"
    qrels = fold.qrels_dict()
    assert qrels == {q: data.qrels[q] for q in data.splits[0].test}
    assert fold.docs_store().get("刑法第一条").text.startswith("为了惩罚犯罪")
    assert [q.query_id for q in ir_datasets.load("statbench/stard/dev").queries_iter()] == ["3", "4"]
    assert [q.query_id for q in ir_datasets.load("statbench/stard/train").queries_iter()] == ["0", "1", "2"]
    assert len(list(ir_datasets.load("statbench/stard").queries_iter())) == 5


def test_ukstat_pool_as_scoreddocs(irds, tmp_path):
    root = tmp_path / "uk"
    write_jsonl(root / "corpus.jsonl", [{"id": "a", "content": "alpha"}, {"id": "b", "content": "beta"}])
    write_jsonl(root / "queries.jsonl", [{"qid": "Q1", "query": "alpha?"}])
    (root / "qrels.tsv").write_text("Q1\t0\ta\t3\nQ1\t0\tb\t1\n")
    (root / "pools").mkdir()
    (root / "pools" / "dense.trec").write_text("Q1 Q0 b 1 0.9 x\nQ1 Q0 a 2 0.5 x\n")
    (root / "pools" / "mine.trec").write_text("Q1 Q0 a 1 0.9 x\n")
    irds.register({"ukstat": root})
    pool = ir_datasets.load("statbench/ukstat/dense-pool")
    assert [(s.query_id, s.doc_id, s.score) for s in pool.scoreddocs_iter()] == [("Q1", "b", 0.9), ("Q1", "a", 0.5)]
    assert pool.qrels_defs()[3].startswith("directly answers")
    assert [(q.query_id, q.doc_id, q.relevance) for q in pool.qrels_iter()] == [("Q1", "a", 3), ("Q1", "b", 1)]
    # a pool built later under any name is reachable through the pattern
    assert [s.doc_id for s in ir_datasets.load("statbench/ukstat/mine-pool").scoreddocs_iter()] == ["a"]


def test_list_tasks_shows_splits_with_counts():
    result = CliRunner().invoke(cli, ["list", "tasks", "-v"], catch_exceptions=False, env={"COLUMNS": "250"})
    assert result.exit_code == 0
    out = result.output
    for text in ("5-fold*: fold-1 (309), fold-2 (309), fold-3 (309)", "official: dev (308)",
                 "training only: train (1235)", "test*: test (222)", "dev: dev (177)", "training only: train (709)",
                 "test*: test (100)", "pools bm25, dense", "corpus 22,633", "R@100 (primary)", "nDCG@10 (primary)"):
        assert text in out, text
