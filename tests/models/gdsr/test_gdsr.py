"""DSR and G-DSR (gdsr-2023) with tiny random encoders on the miniature STARD and its
legislative structure: training steps learn, the graph changes the scores, every
artefact (passage and article vectors, graph, checkpoints) is reused on a second run."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import tiny_models
from fixture_data import STARD_CORPUS
from structure_fixtures import HEADINGS, structure_lines, write_structure

from statbench.api import Query
from statbench.errors import StatbenchError
from statbench.storage.paths import cache_root

#: tiny sizes: passages of 16 tokens, articles of at most 4 passages
SMALL = {"chunk_length": 16, "max_doc_length": 64, "context_heads": 2, "batch_size": 4, "epochs": 2,
         "train_batch_size": 2, "device": "cpu"}
LGE = {"lge_batch_size": 2, "lge_epochs": 2}


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    headings = [h for law, heads in HEADINGS.values() for h in [law, *heads]]
    return tiny_models.bert(tmp_path_factory.mktemp("m") / "bert", tiny_models.stard_texts() + headings)


@pytest.fixture
def structured_stard(stard_dir):
    write_structure(stard_dir, structure_lines())
    return stard_dir


def _context(tmp_path):
    from lexical_fixtures import context

    return context(tmp_path, language="zh")


def _corpus(stard_dir):
    import logging

    from statbench.tasks.stard import Stard

    data = Stard().load(stard_dir, logging.getLogger("test"))
    return data, list(data.corpus.values())


def _snapshot(module) -> dict:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _changed(before: dict, module, prefix: str) -> bool:
    return any(not np.allclose(before[k].numpy(), v.detach().numpy()) for k, v in module.state_dict().items()
               if k.startswith(prefix))


@pytest.mark.parametrize("train_passage_encoder", [True, False])
def test_one_dsr_training_step_changes_the_parameters(structured_stard, bert_dir, tmp_path, train_passage_encoder):
    from statbench.models.gdsr.gdsr import DSR

    data, corpus = _corpus(structured_stard)
    model = DSR(model=str(bert_dir), **{**SMALL, "epochs": 1, "max_steps": 1, "train_batch_size": 3},
                train_passage_encoder=train_passage_encoder)
    model._load_initial()
    before = _snapshot(model._model)
    queries = [data.queries[q] for q in ("0", "1", "2")]
    model.train(queries, {q.id: data.qrels[q.id] for q in queries}, corpus, _context(tmp_path))
    assert _changed(before, model._model, "query_encoder.")
    assert _changed(before, model._model, "context.")
    assert _changed(before, model._model, "position.")
    assert _changed(before, model._model, "passage_encoder.") is train_passage_encoder
    log = next((tmp_path / "dsr-train").glob("*/train_log.jsonl")).read_text().splitlines()
    assert len(log) == 1 and '"step": 1' in log[0]


def test_one_lge_training_step_changes_the_parameters(tmp_path):
    import torch

    from statbench.models.dense.training import Checkpoints, Pair
    from statbench.models.gdsr.lge import build_gnn, fit_lge

    torch.manual_seed(0)
    # articles 0..3, sections 4 (root) and 5 (under 4); articles 0, 1 under 5, 2, 3 under 4
    edges = torch.tensor([[0, 1, 2, 3, 5, 5, 5, 4, 4, 4], [5, 5, 4, 4, 4, 0, 1, 2, 3, 5]])
    features = torch.randn(6, 8)
    gnn = build_gnn("gatv2", 8, 3, 0.0)
    before = _snapshot(gnn)
    pairs = [Pair("q1", "one", "0"), Pair("q2", "two", "2")]
    summary = fit_lge(gnn=gnn, features=features, edge_index=edges, article_node={str(i): i for i in range(4)},
                      pairs=pairs, query_vectors={"q1": torch.randn(8), "q2": torch.randn(8)},
                      qrels={"q1": {"0": 1}, "q2": {"2": 1}}, hard_negatives=None,
                      params={"lge_epochs": 1, "lge_batch_size": 2, "lge_lr": 1e-2, "lge_weight_decay": 0.1,
                              "lge_temperature": 0.01, "similarity": "cos", "seed": 1},
                      checkpoints=Checkpoints(tmp_path / "lge"), ctx=_context(tmp_path))
    assert summary["step"] == 1 and summary["finished"]
    assert all(_changed(before, gnn, f"convs.{i}.") for i in range(3))


@pytest.mark.parametrize("kind", ["gat", "gcn", "graphsage"])
def test_other_graph_layers_build_and_keep_the_width(kind):
    import torch

    from statbench.models.gdsr.lge import build_gnn

    gnn = build_gnn(kind, 8, 2, 0.1)
    out = gnn(torch.randn(3, 8), torch.tensor([[0, 1, 2, 1], [1, 0, 1, 2]]))
    assert out.shape == (3, 8)


def _run_lines(outcome):
    return [line.split() for line in outcome.run_path.read_text().splitlines()]


def test_gdsr_differs_from_dsr_and_reuses_every_artefact(structured_stard, bert_dir, isolated_cache):
    params = {"model": str(bert_dir), **SMALL}
    dsr, _ = tiny_models.run(structured_stard, "dsr", params)
    gdsr, lines = tiny_models.run(structured_stard, "gdsr", {**params, **LGE})
    # the same DSR training serves both models: gdsr loads dsr's finished checkpoints
    assert any(line.startswith("dsr: loaded after epoch 2") for line in lines)
    assert any("reusing article vectors" in line for line in lines)
    # 6 article edges + 5 section edges (4 laws are roots), both directions
    assert any(line.startswith("legal graph: built 6 article nodes, 9 section nodes, 22 edges") for line in lines)
    assert gdsr.results["throughput"]["graph_section_nodes"] == 9
    # same test query, same candidates, other scores: the graph encoder moved the articles
    dsr_scores = {r[2]: float(r[4]) for r in _run_lines(dsr)}
    gdsr_scores = {r[2]: float(r[4]) for r in _run_lines(gdsr)}
    assert set(dsr_scores) == set(gdsr_scores) == {d["name"] for d in STARD_CORPUS}
    assert max(abs(dsr_scores[d] - gdsr_scores[d]) for d in dsr_scores) > 1e-3
    assert all(-1.0 - 1e-5 <= s <= 1.0 + 1e-5 for s in gdsr_scores.values())  # cosine

    # second run without the run cache: nothing is trained, encoded or built again
    shutil.rmtree(cache_root() / "runs")
    again, lines = tiny_models.run(structured_stard, "gdsr", {**params, **LGE},
                                   output=gdsr.results_path.parent / "again")
    assert any(line.startswith("dsr: loaded after epoch 2") for line in lines)
    assert any(line.startswith("lge: loaded after epoch 2") for line in lines)
    assert any(line.startswith("legal graph: reusing 6 article nodes") for line in lines)
    assert any("reusing graph-encoded article vectors" in line for line in lines)
    assert any("reusing passage vectors of 9 section headings" in line for line in lines)
    assert not any("encoding" in line and "passages" in line for line in lines)
    assert again.results["per_query"] == gdsr.results["per_query"]


def test_dsr_scores_are_the_cosine_of_its_own_vectors(structured_stard, bert_dir, tmp_path):
    from statbench.models.gdsr.gdsr import DSR

    data, corpus = _corpus(structured_stard)
    model = DSR(model=str(bert_dir), **SMALL)
    ctx = _context(tmp_path)
    model.train([data.queries["0"]], {"0": data.qrels["0"]}, corpus, ctx)
    model.index(corpus, ctx)
    ranking = model.search([data.queries["1"]], 3, ctx)["1"]
    q = model.query_vectors([data.queries["1"].text], ctx)[0]
    vectors = model._article_encodings(corpus, ctx).embeddings
    expected = sorted(((d.id, float(v @ q)) for d, v in zip(corpus, vectors)), key=lambda x: -x[1])[:3]
    assert [d for d, _ in ranking] == [d for d, _ in expected]
    assert [s for _, s in ranking] == pytest.approx([s for _, s in expected], abs=1e-5)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_gdsr_needs_structure(stard_dir, bert_dir, isolated_cache):
    with pytest.raises(StatbenchError, match="declares no legislative structure"):
        tiny_models.run(stard_dir, "gdsr", {"model": str(bert_dir), **SMALL, **LGE, "epochs": 1})


def test_presets_and_parameter_checks():
    from statbench.models.gdsr.gdsr import DSR, GDSR

    small = GDSR(preset="cpu-small")
    assert (small.params["train_passage_encoder"], small.params["max_doc_length"], small.params["lge_batch_size"]) == (
        False, 256, 64)
    assert GDSR(preset="cpu-small", epochs=7).params["epochs"] == 7  # explicit beats the preset
    paper = DSR()
    assert (paper.params["epochs"], paper.params["train_batch_size"], paper.params["lr"], paper.params["temperature"],
            paper.params["chunk_length"], paper.params["max_doc_length"]) == (15, 24, 2e-5, 0.01, 128, 1024)
    assert (GDSR().params["gnn"], GDSR().params["gnn_layers"], GDSR().params["lge_lr"]) == ("gatv2", 3, 2e-4)
    with pytest.raises(StatbenchError, match="chunk_length=512 for dsr: above max_doc_length=256"):
        DSR(chunk_length=512, max_doc_length=256)
    with pytest.raises(StatbenchError, match="unknown parameter of dsr 'gnn'"):
        DSR(gnn="gcn")


def test_passages_split_by_tokens(bert_dir):
    from transformers import AutoTokenizer

    from statbench.models.gdsr.dsr_encoder import split_passages

    tokenizer = AutoTokenizer.from_pretrained(str(bert_dir))
    text = STARD_CORPUS[0]["content"]  # 41 characters, one token each
    n = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    passages = split_passages(tokenizer, [text, ""], chunk_length=16, max_doc_length=32)
    # 14 text tokens per passage, at most 2 passages: the article is cut at 28 tokens
    assert n > 28
    assert [len(p) for p in passages.ids] == [16, 16, 2]
    assert passages.owner == [0, 0, 1] and passages.position == [0, 1, 0] and passages.offsets == [0, 2, 3]
    assert all(p[0] == tokenizer.cls_token_id and p[-1] == tokenizer.sep_token_id for p in passages.ids)


def test_search_before_training_is_refused(bert_dir, tmp_path):
    from statbench.models.gdsr.gdsr import GDSR

    with pytest.raises(StatbenchError, match="index\\(\\) ran before train\\(\\)"):
        GDSR(model=str(bert_dir), **SMALL).index([], _context(tmp_path))
    assert Query  # imported for type clarity in helpers
