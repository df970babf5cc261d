"""The STARD loader: qrels by article name, fixed folds, nothing dropped silently."""

import json
import logging
from importlib import resources

import pytest

from statbench.errors import DataFormatError
from statbench.loading.splits import kfold_assignment
from statbench.tasks.stard import Stard

from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

LOG = logging.getLogger("test")


def test_shipped_folds_are_the_seeded_assignment():
    shipped = json.loads(resources.files("statbench.tasks").joinpath("stard.folds.json").read_text())
    ids = [q for fold in shipped["folds"].values() for q in fold]
    assert len(ids) == len(set(ids)) == 1543
    assert kfold_assignment(ids, 5, shipped["seed"]) == shipped["folds"]
    assert shipped["seed"] == Stard.definition["splits"]["seed"]


def test_qrels_follow_names_not_sorted_ids(stard_dir):
    data = Stard().load(stard_dir, LOG)
    # query 2 lists match_id [1, 2] sorted but match_name in another order: names decide
    assert data.qrels["2"] == {"建筑法第一条": 1, "建筑法第二条": 1}
    assert data.corpus["建筑法第一条"].text.startswith("为了加强")
    assert sorted(q for s in data.splits for q in s.test) == ["0", "1", "2", "3", "4"]
    for split in data.splits:
        assert not set(split.test) & set(split.train)
    assert data.dropped == []


def test_unknown_articles_and_orphan_queries_are_reported(tmp_path):
    write_jsonl(tmp_path / "corpus.jsonl", STARD_CORPUS + [{"id": 9, "name": "民法典第五十四条", "content": "dup"}])
    queries = STARD_QUERIES + [{"query_id": 7, "问题": "不存在的法条？", "match_id": [99], "match_name": ["无此法第一条"]}]
    (tmp_path / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    data = Stard().load(tmp_path, LOG)
    assert "7" not in data.queries and "7" not in data.qrels
    assert data.corpus["民法典第五十四条"].text.startswith("自然人")  # the first of two duplicates is kept
    assert data.dropped == [
        "corpus.jsonl line 7: duplicate article name '民法典第五十四条' (first kept)",
        "queries.json: 1 judgement(s) point to documents not in the corpus (e.g. 7->无此法第一条)",
        "queries.json: 1 query(ies) without any relevant document in the corpus (e.g. 7)",
    ]


def test_whitespace_in_names_is_removed_consistently(tmp_path):
    corpus = [{"id": 1, "name": "最高人民法院  最高人民检察院解释第一条", "content": "内容"}]
    queries = [{"query_id": "a", "问题": "解释？", "match_id": [1], "match_name": ["最高人民法院 最高人民检察院解释第一条"]}]
    write_jsonl(tmp_path / "corpus.jsonl", corpus)
    (tmp_path / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    data = Stard().load(tmp_path, LOG)
    assert list(data.corpus) == ["最高人民法院最高人民检察院解释第一条"]
    assert data.qrels == {"a": {"最高人民法院最高人民检察院解释第一条": 1}}


def test_query_without_question_field_is_an_error(tmp_path):
    write_jsonl(tmp_path / "corpus.jsonl", STARD_CORPUS)
    (tmp_path / "queries.json").write_text(json.dumps([{"query_id": 1, "match_name": []}]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"queries.json, field '问题': item 0: missing field"):
        Stard().load(tmp_path, LOG)
