"""Cross-encoders, monoT5 and ColBERTv2 (first stage and reranker) with tiny random models."""

from __future__ import annotations

import pytest

import tiny_models
from fixture_data import STARD_CORPUS, write_jsonl
from statbench.paths import cache_root


@pytest.fixture(scope="module")
def colbert_dir(tmp_path_factory):
    return tiny_models.colbert(tmp_path_factory.mktemp("m") / "colbert", tiny_models.stard_texts())


def _run_lines(outcome):
    return [line.split() for line in outcome.run_path.read_text().splitlines()]


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


def test_colbert_first_stage_and_reranker_agree_on_maxsim(stard_dir, colbert_dir):
    params = {"model": str(colbert_dir), "doc_maxlen": 48, "query_maxlen": 16, "ncandidates": 100}
    first, lines = tiny_models.run(stard_dir, "colbertv2", params)
    assert first.results["model"]["family"] == "late-interaction"
    assert any("colbertv2: encoded 6 passages" in line for line in lines)
    ranked = _run_lines(first)
    assert len(ranked) == 6  # 100 candidate tokens cover the whole tiny corpus

    rerank_params = {k: v for k, v in params.items() if k != "ncandidates"}
    second, _ = tiny_models.run(stard_dir, "bm25", reranker="colbertv2", reranker_params=rerank_params)
    by_doc_first = {r[2]: float(r[4]) for r in ranked}
    for r in _run_lines(second):
        assert float(r[4]) == pytest.approx(by_doc_first[r[2]], rel=1e-3)  # the index stores float16

    import shutil

    shutil.rmtree(cache_root() / "runs")
    _, lines = tiny_models.run(stard_dir, "colbertv2", params, output=first.results_path.parent / "again")
    assert any("reusing token encodings" in line for line in lines)


def test_maxsim_by_hand():
    import torch

    from statbench.models.colbert import maxsim

    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    d = torch.tensor([[0.5, 0.5], [0.9, 0.1], [0.0, 0.3]])
    assert maxsim(q, d) == pytest.approx(0.9 + 0.5)
    assert maxsim(q, d[:0]) == 0.0


def test_colbert_encoder_matches_colbert_ai(colbert_dir, monkeypatch):
    """The transformers re-implementation encodes exactly as colbert-ai 0.2.22's Checkpoint."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    try:
        from colbert.infra import ColBERTConfig
        from colbert.modeling.checkpoint import Checkpoint

        config = ColBERTConfig(doc_maxlen=24, query_maxlen=12, dim=8, checkpoint=str(colbert_dir))
        reference = Checkpoint(str(colbert_dir), colbert_config=config)
    except Exception as exc:  # its C++ extension needs a compiler; skip where it cannot build
        pytest.skip(f"colbert-ai unavailable here: {type(exc).__name__}: {exc}")
    import torch

    from statbench.models.colbert import ColBERTEncoder

    ours = ColBERTEncoder(str(colbert_dir), 12, 24, "cpu")
    texts = [d["content"] for d in STARD_CORPUS[:3]]
    queries = ["个体工商户的债务由谁承担？", "婚姻制度"]
    assert torch.allclose(ours.queries(queries), reference.queryFromText(queries).float(), atol=1e-5)
    expected = reference.docFromText(texts, keep_dims=False)  # one (tokens, dim) tensor per passage
    for mine, theirs in zip(ours.docs(texts, batch_size=2), expected):
        assert mine.shape == theirs.shape and torch.allclose(mine, theirs.float(), atol=1e-5)


def test_reranker_on_a_frozen_pool(tmp_path):
    root = tmp_path / "uk"
    passages = {"p-a": "A person who contravenes a direction commits an offence.",
                "p-b": "A local authority may give a direction to close premises.",
                "p-c": "These Regulations come into force on the day after they are made."}
    write_jsonl(root / "substitute" / "corpus.jsonl", [{"id": k, "content": v} for k, v in passages.items()])
    write_jsonl(root / "substitute" / "queries.jsonl", [{"qid": "Q1", "query": "What if a direction is contravened?"}])
    (root / "substitute" / "qrels.tsv").write_text("Q1\t0\tp-a\t3\nQ1\t0\tp-b\t1\n")
    (root / "pools").mkdir()
    (root / "pools" / "hand.trec").write_text("Q1 Q0 p-c 1 3.0 hand\nQ1 Q0 p-b 2 2.0 hand\n")
    folder = tiny_models.cross_encoder(tmp_path / "ce", list(passages.values()) + ["What if a direction is contravened?"])
    outcome, _ = tiny_models.run(root, task="ukstat", pool="hand", reranker="cross-encoder",
                                 reranker_params={"model": str(folder)}, splits=None)
    assert outcome.results["pool"] == "hand"
    assert sorted(r[2] for r in _run_lines(outcome)) == ["p-b", "p-c"]  # only the pool is reordered


def test_a_model_without_checkpoint_or_preset_says_which_option_gives_one():
    from statbench.errors import StatbenchError
    from statbench.models.cross_encoder import CrossEncoderReranker
    from statbench.models.dense import BiEncoder

    with pytest.raises(StatbenchError, match=r"^cross-encoder: give the checkpoint with --reranker-param model=HUB_ID_OR_PATH$"):
        CrossEncoderReranker()
    with pytest.raises(StatbenchError, match=r"^biencoder: give the checkpoint with --param model=HUB_ID_OR_PATH$"):
        BiEncoder()
    assert BiEncoder(model="some/encoder").params["model"] == "some/encoder"
