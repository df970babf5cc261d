"""docT5query with a tiny randomly initialised T5 built here: expansion, caching, resuming."""

from __future__ import annotations

import json
import re

import pytest

from statbench.api import Document, Query
from statbench.errors import StatbenchError
from statbench.models.lexical import doct5query
from statbench.models.lexical.doct5query import DocT5Query
from lexical_fixtures import EN_DOCS, FR_DOCS, context, top


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory):
    """A 1-layer T5 (16-d) with a word-level tokenizer over the fixtures' vocabulary."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    path = tmp_path_factory.mktemp("tiny-t5")
    words = sorted(set(re.findall(r"\w+", " ".join(d.text.lower() for d in FR_DOCS + EN_DOCS))))
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(words)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>",
                            unk_token="<unk>").save_pretrained(path)
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(vocab), d_model=16, d_ff=32, d_kv=8, num_layers=1, num_decoder_layers=1,
                      num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    T5ForConditionalGeneration(config).save_pretrained(path)
    return path


def test_expansion_is_cached_and_reused_without_the_model(tiny_t5, tmp_path, monkeypatch):
    model = DocT5Query(model=str(tiny_t5), n=3, batch_size=2, max_new_tokens=6)
    model.index(FR_DOCS, context(tmp_path, "fr"))
    entry, _ = model.cache_entry(FR_DOCS, context(tmp_path, "fr"))
    assert entry.verify() is None and entry.kind == "doct5query-expansions"
    rows = [json.loads(line) for line in (entry.path / "expansions.jsonl").read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == [d.id for d in FR_DOCS]
    assert all(len(r["queries"]) == 3 for r in rows)
    assert any(q for r in rows for q in r["queries"])  # the random model does produce words
    assert not list(entry.path.parent.glob("*.partial.jsonl"))  # the journal goes once the entry is sealed

    def refuse(*args, **kwargs):
        raise AssertionError("the model must not be loaded when every expansion is cached")

    monkeypatch.setattr(doct5query, "load_model", refuse)
    again = DocT5Query(model=str(tiny_t5), n=3, batch_size=2, max_new_tokens=6)
    expansions, _ = again.expansions(FR_DOCS, context(tmp_path, "fr", name="again"))
    assert expansions == {r["id"]: r["queries"] for r in rows}
    again.index(FR_DOCS, context(tmp_path, "fr", name="again"))


def test_interrupted_expansion_resumes_with_the_same_batches(tiny_t5, tmp_path, monkeypatch):
    """A run killed after two of four batches resumes with the other two, and ends with
    exactly the expansions of an uninterrupted run (batches are fixed by corpus position)."""
    settings = dict(model=str(tiny_t5), n=2, batch_size=1, max_new_tokens=4)
    clean, _ = DocT5Query(**settings).expansions(FR_DOCS, context(tmp_path / "clean", "fr"))

    calls = []
    original = DocT5Query.generate

    def interrupted(self, tokenizer, model_, texts, seed):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(texts)
        return original(self, tokenizer, model_, texts, seed)

    monkeypatch.setattr(DocT5Query, "generate", interrupted)
    model = DocT5Query(**settings)
    with pytest.raises(KeyboardInterrupt):
        model.expansions(FR_DOCS, context(tmp_path, "fr"))
    entry, _ = model.cache_entry(FR_DOCS, context(tmp_path, "fr"))
    journal = entry.path.with_name(entry.path.name + ".partial.jsonl")
    assert not entry.path.exists() and len(journal.read_text("utf-8").split()) >= 2
    # the last batch's line is cut short, as by a crash mid-write: it is generated again
    journal.write_text(journal.read_text("utf-8").rstrip()[:-20], encoding="utf-8")

    calls.clear()
    monkeypatch.setattr(DocT5Query, "generate", lambda self, *a: (calls.append(a[2]), original(self, *a))[1])
    expansions, _ = model.expansions(FR_DOCS, context(tmp_path, "fr"))
    assert calls == [[FR_DOCS[1].text], [FR_DOCS[2].text], [FR_DOCS[3].text]]
    assert expansions == clean
    assert entry.verify() is None and not journal.exists()


def test_expansions_are_indexed(tmp_path, monkeypatch):
    """A query matching only the generated text finds the expanded article."""
    fixed = {"salaire": ["quand suis-je rémunéré"], "loyer": ["obligations du preneur"]}
    monkeypatch.setattr(DocT5Query, "expansions", lambda self, corpus, ctx: (fixed, "fixed"))
    model = DocT5Query()
    ctx = context(tmp_path, "fr")
    model.index(FR_DOCS, ctx)
    results = model.search([Query("q1", "rémunération"), Query("q2", "le preneur")], 10, ctx)
    assert top(results["q1"]) == ["salaire"]
    assert top(results["q2"]) == ["loyer"]


def test_missing_models_fail_clearly(tmp_path, monkeypatch):
    with pytest.raises(StatbenchError, match="model directory .*nowhere not found"):
        doct5query.load_model(str(tmp_path / "nowhere"), "cpu")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(StatbenchError) as caught:
        DocT5Query(n=1).index([Document("a", "texte")], context(tmp_path, "fr"))
    message = str(caught.value)
    assert "doc2query/msmarco-french-mt5-base-v1" in message
    assert "huggingface-cli download" in message and "--param model=DIR" in message
