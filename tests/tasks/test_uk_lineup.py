"""ukstat-2025's reranker line-up (Tables 7-8): every family is listed, and the local ones
rerank a frozen ukstat pool with tiny random checkpoints standing in for the hub weights.

The API rerankers (test_api_rerankers.py), the listwise LLMs (test_listwise.py) and
ColBERTv2 (test_colbert.py) run on frozen pools in their own files, against local servers,
a tiny causal LM and colbert-ai's index respectively."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

import tiny_models
from fixture_data import write_uk_pool

PASSAGES = {"p-a": "A person who contravenes a direction commits an offence.",
            "p-b": "A local authority may give a direction to close premises.",
            "p-c": "These Regulations come into force on the day after they are made.",
            "p-d": "The Secretary of State may by regulations amend this Schedule."}
QUERY = "What if a direction is contravened?"
#: the frozen pool: three of the four passages (p-a is never retrieved, so never reranked in)
POOL = "Q1 Q0 p-c 1 3.0 hand\nQ1 Q0 p-b 2 2.0 hand\nQ1 Q0 p-d 3 1.0 hand\n"

#: Table 7-8 family -> statbench reranker name
LINEUP = {"MiniLM-L6": "minilm-ce", "MiniLM-L12": "minilm12-ce", "BGE base": "bge-reranker-base",
          "BGE large": "bge-reranker-large", "monoT5": "monot5", "ModernBERT": "modernbert-ce",
          "Distilled ModernBERT": "distilled-modernbert", "Cohere": "cohere-rerank", "Voyage": "voyage-rerank",
          "ColBERTv2": "colbertv2", "RankZephyr": "rankzephyr"}
CROSS_ENCODERS = ["minilm-ce", "minilm12-ce", "bge-reranker-base", "bge-reranker-large", "modernbert-ce",
                  "distilled-modernbert", "cross-encoder"]


@pytest.fixture(scope="module")
def uk_pool(tmp_path_factory):
    return write_uk_pool(tmp_path_factory.mktemp("uk") / "uk", PASSAGES, {"Q1": QUERY},
                         "Q1\t0\tp-a\t3\nQ1\t0\tp-b\t1\n", POOL)


def test_list_models_shows_every_reranker_family_of_tables_7_and_8():
    from statbench.commands.cli import cli

    result = CliRunner().invoke(cli, ["list", "models", "-v"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    rows = [[cell.strip() for cell in line.split("│")[1:3]] for line in result.output.splitlines() if "│" in line]
    listed = {(name, kind) for name, kind in rows if name}
    missing = [family for family, name in LINEUP.items() if (name, "reranker") not in listed]
    assert missing == []


def _ranked(outcome) -> list[tuple[str, float]]:
    rows = [line.split() for line in outcome.run_path.read_text().splitlines()]
    return [(r[2], float(r[4])) for r in rows]


@pytest.mark.parametrize("name", CROSS_ENCODERS)
def test_each_cross_encoder_preset_reranks_the_frozen_pool_by_its_logits(uk_pool, tmp_path, name):
    import torch
    from sentence_transformers import CrossEncoder

    folder = tiny_models.cross_encoder(tmp_path / "ce", list(PASSAGES.values()) + [QUERY])
    outcome, _ = tiny_models.run(uk_pool, task="ukstat", pool="hand", reranker=name,
                                 reranker_params={"model": str(folder)}, splits=None, output=tmp_path / "out")
    assert outcome.results["pool"] == "hand" and outcome.results["reranker"]["name"] == name
    ranked = _ranked(outcome)
    assert sorted(doc for doc, _ in ranked) == ["p-b", "p-c", "p-d"]  # only the pool, all of it
    model = CrossEncoder(str(folder), device="cpu")
    expected = model.predict([(QUERY, PASSAGES[doc]) for doc, _ in ranked], activation_fn=torch.nn.Identity())
    assert [s for _, s in ranked] == pytest.approx([float(x) for x in expected], abs=1e-4)
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


def test_monot5_reranks_the_frozen_pool_by_log_p_true(uk_pool, tmp_path):
    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    folder = tiny_models.t5(tmp_path / "t5", list(PASSAGES.values()) + [QUERY])
    outcome, _ = tiny_models.run(uk_pool, task="ukstat", pool="hand", reranker="monot5",
                                 reranker_params={"model": str(folder)}, splits=None, output=tmp_path / "out")
    ranked = _ranked(outcome)
    assert sorted(doc for doc, _ in ranked) == ["p-b", "p-c", "p-d"]
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = T5ForConditionalGeneration.from_pretrained(str(folder)).eval()
    true, false = (tokenizer.encode(w, add_special_tokens=False)[0] for w in ("true", "false"))
    for doc, score in ranked:
        enc = tokenizer(f"Query: {QUERY} Document: {PASSAGES[doc]} Relevant:", return_tensors="pt",
                        return_token_type_ids=False)
        with torch.inference_mode():
            logits = model(**enc, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits[0, 0]
        by_hand = float(logits[true]) - math.log(math.exp(float(logits[false])) + math.exp(float(logits[true])))
        assert score == pytest.approx(by_hand, abs=1e-4)
