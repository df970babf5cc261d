"""LSI classifier: one label per training article, ranking by probability, per split."""

from __future__ import annotations

import json
import math
import shutil

import pytest

import tiny_models
from statbench.storage.paths import cache_root


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return tiny_models.bert(tmp_path_factory.mktemp("m") / "bert", tiny_models.stard_texts())


def test_lsi_trains_per_split_and_ranks_training_articles_by_probability(stard_dir, bert_dir):
    params = {"model": str(bert_dir), "epochs": 1, "train_batch_size": 2, "max_steps": 1, "warmup_steps": 0,
              "hidden": 16}
    outcome, lines = tiny_models.run(stard_dir, "lsi", params)
    assert outcome.results["model"]["family"] == "classifier" and outcome.results["model"]["trained"] is True
    ranked = [line.split() for line in outcome.run_path.read_text().splitlines()]
    test_qid = ranked[0][0]
    labels_file = next((cache_root() / "models" / "lsi").glob("*/train/epoch-1/labels.json"))
    labels = json.loads(labels_file.read_text())
    # the labels are the articles relevant to the four training queries (not the test query's own)
    from fixture_data import STARD_QUERIES

    expected = sorted({n for q in STARD_QUERIES if str(q["query_id"]) != test_qid for n in q["match_name"]})
    assert labels == expected
    assert sorted(r[2] for r in ranked) == expected
    assert math.fsum(float(r[4]) for r in ranked) == pytest.approx(1.0, abs=1e-5)  # a softmax over the labels
    log = (labels_file.parent.parent / "train_log.jsonl").read_text().splitlines()
    assert json.loads(log[-1])["finished"] is True

    shutil.rmtree(cache_root() / "runs")
    _, lines = tiny_models.run(stard_dir, "lsi", params, output=outcome.results_path.parent / "again")
    assert any("lsi: loaded after epoch 1" in line for line in lines)
