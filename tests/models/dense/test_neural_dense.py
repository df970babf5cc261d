"""Bi-encoders end to end on the miniature STARD with tiny random models."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import tiny_models
from fixture_data import STARD_CORPUS
from statbench.errors import StatbenchError
from statbench.storage.paths import cache_root

CHUNKS = {"chunk_size": 12, "chunk_overlap": 3, "batch_size": 4}


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return tiny_models.bert(tmp_path_factory.mktemp("m") / "bert", tiny_models.stard_texts())


def _encode(folder, texts, pooling="mean"):
    from statbench.models.dense.biencoder import load_encoder

    model = load_encoder(str(folder), pooling, 64, "cpu")
    return model.encode(texts, convert_to_numpy=True)


def test_zero_shot_biencoder_ranks_by_cosine_and_reuses_its_encoding(stard_dir, bert_dir):
    params = {"model": str(bert_dir), "chunk_size": 512, "chunk_overlap": 20}  # every article fits one window
    outcome, lines = tiny_models.run(stard_dir, "biencoder", params)
    results = outcome.results
    assert results["model"]["family"] == "dense"
    assert results["throughput"]["corpus_encoding_cached"] == 0
    assert results["throughput"]["encode_passages_per_s"] > 0
    assert any("encoding 6 articles as 6 passages" in line for line in lines)

    # the run's scores are the cosine similarities of the tiny model's embeddings
    from fixture_data import STARD_QUERIES

    run = [line.split() for line in outcome.run_path.read_text().splitlines()]
    qid = run[0][0]
    assert [r[0] for r in run] == [qid] * 6  # fold-1 holds one test query
    query = next(q["问题"] for q in STARD_QUERIES if str(q["query_id"]) == qid)
    docs = _encode(bert_dir, [d["content"] for d in STARD_CORPUS])
    q = _encode(bert_dir, [query])[0]
    cosine = docs @ q / np.linalg.norm(docs, axis=1) / np.linalg.norm(q)
    by_doc = {r[2]: float(r[4]) for r in run}
    expected = {d["name"]: float(c) for d, c in zip(STARD_CORPUS, cosine)}
    assert by_doc == pytest.approx(expected, abs=1e-4)

    # second run, run cache removed: the corpus encoding is loaded, not recomputed
    shutil.rmtree(cache_root() / "runs")
    again, lines = tiny_models.run(stard_dir, "biencoder", params, output=outcome.results_path.parent / "again")
    assert any("reusing corpus encoding" in line and "no re-encoding" in line for line in lines)
    assert not any("encoding 6 articles" in line for line in lines)
    assert again.results["throughput"]["corpus_encoding_cached"] == 1
    assert again.results["per_query"] == results["per_query"]
    assert len(list((cache_root() / "encodings").glob("*/index.faiss"))) == 1


def test_long_articles_are_chunked_and_pooled(stard_dir, bert_dir):
    outcome, lines = tiny_models.run(stard_dir, "biencoder", {"model": str(bert_dir), **CHUNKS, "chunk_pooling": "max"})
    assert any("encoding 6 articles as" in line for line in lines)
    n_passages = outcome.results["throughput"]["corpus_passages"]
    assert n_passages > 6  # every fixture article (~35 characters) needs several 12-token windows
    meta = json.loads(next((cache_root() / "encodings").glob("*/meta.json")).read_text())
    assert meta["settings"]["chunk_size"] == 12 and meta["settings"]["chunk_pooling"] == "max"


@pytest.mark.parametrize("builder, preset", [(tiny_models.camembert, "camembert"), (tiny_models.longformer, "lawformer")])
def test_presets_run_on_local_camembert_and_longformer_shaped_models(stard_dir, tmp_path, builder, preset):
    folder = builder(tmp_path / preset, tiny_models.stard_texts())
    outcome, _ = tiny_models.run(stard_dir, preset, {"model": str(folder), **CHUNKS})
    assert outcome.results["model"]["name"] == preset
    assert len(outcome.results["per_query"]) == 1
    assert len(outcome.run_path.read_text().splitlines()) == 6


def test_sentence_transformers_folder_and_two_tower(stard_dir, tmp_path, bert_dir):
    st = tiny_models.sentence_transformer(tmp_path / "st", tiny_models.stard_texts())
    outcome, _ = tiny_models.run(stard_dir, "two-tower", {"model": str(st), "query_model": str(bert_dir), **CHUNKS})
    assert outcome.results["model"]["params"]["query_model"] == str(bert_dir)
    assert len(outcome.run_path.read_text().splitlines()) == 6


def test_unreachable_hub_model_names_the_hub_id_and_the_local_folder(stard_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(StatbenchError) as error:
        tiny_models.run(stard_dir, "sailer-zh")
    message = str(error.value)
    assert "'CSHaitao/SAILER_zh'" in message
    assert str(cache_root() / "hf" / "CSHaitao--SAILER_zh") in message
    assert "--param model=DIR" in message


def test_a_copy_in_the_local_hub_folder_is_used(stard_dir, bert_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shutil.copytree(bert_dir, cache_root() / "hf" / "camembert-base")
    outcome, _ = tiny_models.run(stard_dir, "camembert", CHUNKS)
    assert outcome.results["model"]["params"]["model"] == "camembert-base"


def test_fine_tuning_one_step_per_fold_checkpoints_and_resumes(stard_dir, bert_dir):
    params = {"model": str(bert_dir), **CHUNKS, "epochs": 1, "train_batch_size": 2, "max_steps": 1,
              "warmup_steps": 0, "hard_negatives": 1}
    outcome, lines = tiny_models.run(stard_dir, "biencoder-ft", params, splits=("fold-1", "fold-2"))
    assert outcome.results["model"]["trained"] is True
    assert outcome.results["throughput"]["train_steps_per_s"] > 0
    logs = sorted((cache_root() / "models" / "biencoder-ft").glob("*/train/train_log.jsonl"))
    assert len(logs) == 2  # one training per fold
    for log in logs:
        record = json.loads(log.read_text().splitlines()[-1])
        assert record["step"] == 1 and record["finished"] is True
        assert (log.parent / "epoch-1" / "encoder" / "modules.json").is_file()
    # each fold's fine-tuned encoder gets its own corpus encoding
    assert len(list((cache_root() / "encodings").glob("*/meta.json"))) == 2

    shutil.rmtree(cache_root() / "runs")
    _, lines = tiny_models.run(stard_dir, "biencoder-ft", params, splits=("fold-1",),
                               output=outcome.results_path.parent / "again")
    assert any("finished earlier" in line for line in lines)
    assert any("reusing corpus encoding" in line for line in lines)


def test_each_split_trains_from_the_initial_weights(stard_dir, bert_dir, tmp_path):
    """Training twice on the same data in two split folders gives the same weights:
    the second training restarted from the checkpoint, not from the first one's result."""
    import logging

    from statbench.api import Document, Query, RunContext
    from statbench.models.dense.biencoder import all_retrievers, load_encoder

    cls = next(c for c in all_retrievers() if c.name == "biencoder-ft")
    model = cls(model=str(bert_dir), **CHUNKS, epochs=1, train_batch_size=2, max_steps=2, warmup_steps=0)
    corpus = [Document(d["name"], d["content"]) for d in STARD_CORPUS]
    queries = [Query("a", "个体工商户的债务"), Query("b", "婚姻制度")]
    qrels = {"a": {"民法典第五十六条": 1}, "b": {"婚姻法第二条": 1}}
    weights = []
    for split in ("s1", "s2"):
        ctx = RunContext("stard", "zh", tmp_path / split, cache_root(), "x" * 64, logging.getLogger("t"))
        model.train(queries, qrels, corpus, ctx)
        weights.append({k: v.clone() for k, v in model._doc_encoder.state_dict().items()})
    initial = load_encoder(str(bert_dir), "auto", 14, "cpu").state_dict()
    assert all(np.allclose(weights[0][k], weights[1][k]) for k in weights[0])
    assert not all(np.allclose(weights[0][k], initial[k]) for k in weights[0])
