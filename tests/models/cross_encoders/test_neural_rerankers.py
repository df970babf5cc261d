"""Cross-encoders and monoT5 with tiny random models (ColBERTv2: tests/models/late_interaction/test_colbert.py)."""

from __future__ import annotations

import pytest

import tiny_models
from fixture_data import STARD_CORPUS, write_uk_pool


def _run_lines(outcome):
    return [line.split() for line in outcome.run_path.read_text().splitlines()]


@pytest.mark.slow
def test_cross_encoder_reranks_bm25_candidates_by_its_own_logits(stard_dir, tmp_path):
    from sentence_transformers import CrossEncoder
    import torch

    folder = tiny_models.cross_encoder(tmp_path / "ce", tiny_models.stard_texts())
    outcome, _ = tiny_models.run(stard_dir, "bm25", reranker="cross-encoder",
                                 reranker_params={"model": str(folder), "batch_size": 2})
    results = outcome.results
    assert results["reranker"]["family"] == "reranker"
    assert results["throughput"]["rerank_pairs_per_s"] > 0
    lines = _run_lines(outcome)
    qid = lines[0][0]
    from fixture_data import STARD_QUERIES

    query = next(q["问题"] for q in STARD_QUERIES if str(q["query_id"]) == qid)
    texts = {d["name"]: d["content"] for d in STARD_CORPUS}
    model = CrossEncoder(str(folder), device="cpu")
    expected = model.predict([(query, texts[r[2]]) for r in lines], activation_fn=torch.nn.Identity())
    assert [float(r[4]) for r in lines] == pytest.approx([float(x) for x in expected], abs=1e-4)
    assert [float(r[4]) for r in lines] == sorted((float(r[4]) for r in lines), reverse=True)


def test_monot5_scores_are_log_probabilities_of_true(stard_dir, tmp_path):
    folder = tiny_models.t5(tmp_path / "t5", tiny_models.stard_texts())
    outcome, _ = tiny_models.run(stard_dir, "bm25", reranker="monot5", reranker_params={"model": str(folder)})
    scores = [float(r[4]) for r in _run_lines(outcome)]
    assert scores and all(s < 0 for s in scores)  # log P(true | ...) over {true, false}


def test_reranker_on_a_frozen_pool(tmp_path):
    passages = {"p-a": "A person who contravenes a direction commits an offence.",
                "p-b": "A local authority may give a direction to close premises.",
                "p-c": "These Regulations come into force on the day after they are made."}
    root = write_uk_pool(tmp_path / "uk", passages, {"Q1": "What if a direction is contravened?"},
                         "Q1\t0\tp-a\t3\nQ1\t0\tp-b\t1\n", "Q1 Q0 p-c 1 3.0 hand\nQ1 Q0 p-b 2 2.0 hand\n")
    folder = tiny_models.cross_encoder(tmp_path / "ce", list(passages.values()) + ["What if a direction is contravened?"])
    outcome, _ = tiny_models.run(root, task="ukstat", pool="hand", reranker="cross-encoder",
                                 reranker_params={"model": str(folder)}, splits=None)
    assert outcome.results["pool"] == "hand"
    assert sorted(r[2] for r in _run_lines(outcome)) == ["p-b", "p-c"]  # only the pool is reordered


def test_a_model_without_checkpoint_or_preset_says_which_option_gives_one(monkeypatch):
    from statbench.errors import StatbenchError
    from statbench.models.shared import hub
    from statbench.models.cross_encoders.cross_encoder import CrossEncoderReranker
    from statbench.models.dense.biencoder import BiEncoder

    monkeypatch.setattr(hub, "offline_reason", lambda: None)  # a hub that answers (tests never use it)

    with pytest.raises(StatbenchError, match=r"^cross-encoder: give the checkpoint with --reranker-param model=HUB_ID_OR_PATH$"):
        CrossEncoderReranker()
    with pytest.raises(StatbenchError, match=r"^biencoder: give the checkpoint with --param model=HUB_ID_OR_PATH$"):
        BiEncoder()
    assert BiEncoder(model="some/encoder").params["model"] == "some/encoder"
