"""Tiny randomly initialised models, built on the fly for the neural tests.

Every builder writes a complete local checkpoint (config, weights, tokenizer) that the
real loading code reads like a downloaded hub model. Vocabularies come from the test
texts: each CJK character and each lower-cased Latin word is one token."""

from __future__ import annotations

import re
from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]"]
HIDDEN = 32


def vocabulary(texts) -> list[str]:
    tokens = set()
    for text in texts:
        for piece in re.findall(r"[\u4e00-\u9fff]|[a-z0-9]+|[^\sa-z0-9\u4e00-\u9fff]", text.lower()):
            tokens.add(piece)
    tokens.update({"true", "false", "query", "document", "relevant", ":", "."})
    return SPECIALS + sorted(tokens - set(SPECIALS))


def _tokenizer(folder: Path, texts):
    from transformers import BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(vocabulary(texts)) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True, tokenize_chinese_chars=True)
    tokenizer.model_max_length = 512
    tokenizer.save_pretrained(str(folder))
    return tokenizer


def _common(vocab_size: int, **extra) -> dict:
    return dict(vocab_size=vocab_size, hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=48, pad_token_id=0, **extra)


def bert(folder: Path, texts, seed: int = 0) -> Path:
    import torch
    from transformers import BertConfig, BertModel

    tokenizer = _tokenizer(folder, texts)
    torch.manual_seed(seed)
    BertModel(BertConfig(**_common(len(tokenizer), max_position_embeddings=128))).save_pretrained(str(folder))
    return folder


def camembert(folder: Path, texts, seed: int = 0) -> Path:
    import torch
    from transformers import CamembertConfig, CamembertModel

    tokenizer = _tokenizer(folder, texts)
    torch.manual_seed(seed)
    config = CamembertConfig(**_common(len(tokenizer), max_position_embeddings=130))
    CamembertModel(config).save_pretrained(str(folder))
    return folder


def longformer(folder: Path, texts, seed: int = 0) -> Path:
    import torch
    from transformers import LongformerConfig, LongformerModel

    tokenizer = _tokenizer(folder, texts)
    torch.manual_seed(seed)
    config = LongformerConfig(**_common(len(tokenizer), max_position_embeddings=130), attention_window=4)
    LongformerModel(config).save_pretrained(str(folder))
    return folder


def t5(folder: Path, texts, seed: int = 0) -> Path:
    """A monoT5-shaped sequence-to-sequence model (reads 'true'/'false' logits)."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _tokenizer(folder, texts)
    torch.manual_seed(seed)
    config = T5Config(vocab_size=len(tokenizer), d_model=HIDDEN, d_kv=16, d_ff=48, num_layers=2, num_heads=2,
                      pad_token_id=0, decoder_start_token_id=0, eos_token_id=tokenizer.sep_token_id)
    T5ForConditionalGeneration(config).save_pretrained(str(folder))
    return folder


def cross_encoder(folder: Path, texts, seed: int = 0) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = _tokenizer(folder, texts)
    torch.manual_seed(seed)
    config = BertConfig(**_common(len(tokenizer), max_position_embeddings=128), num_labels=1)
    BertForSequenceClassification(config).save_pretrained(str(folder))
    return folder


def colbert(folder: Path, texts, dim: int = 16, seed: int = 0) -> Path:
    """A checkpoint laid out as colbert-ai saves one (HF_ColBERT: ``bert.*`` + ``linear.weight``).
    ``dim``: its token vectors' dimension; colbert-ai's PLAID residual codec packs ``nbits``
    per dimension into bytes, so it needs ``dim % (8 * nbits) == 0`` (16: nbits 1 or 2)."""
    import torch
    from safetensors.torch import save_file
    from transformers import BertConfig, BertModel

    tokenizer = _tokenizer(folder, texts)
    torch.manual_seed(seed)
    config = BertConfig(**_common(len(tokenizer), max_position_embeddings=256))
    model = BertModel(config, add_pooling_layer=False)
    state = {f"bert.{k}": v.contiguous() for k, v in model.state_dict().items()}
    state["linear.weight"] = torch.randn(dim, HIDDEN) * 0.2
    config.architectures = ["HF_ColBERT"]
    config.save_pretrained(str(folder))
    save_file(state, str(folder / "model.safetensors"))
    return folder


def sentence_transformer(folder: Path, texts, seed: int = 0) -> Path:
    """A sentence-transformers folder (modules.json, mean pooling, Normalize)."""
    from sentence_transformers import SentenceTransformer

    from statbench.models.dense.biencoder import _st_modules

    models = _st_modules()
    base = bert(folder.with_name(folder.name + "-base"), texts, seed)
    word = models.Transformer(str(base), max_seq_length=64)
    model = SentenceTransformer(modules=[word, models.Pooling(HIDDEN, "mean"), models.Normalize()], device="cpu")
    model.save(str(folder))
    return folder


# -- helpers shared by the neural tests ------------------------------------------------------

def stard_texts() -> list[str]:
    """Every text of the miniature STARD in tests/conftest.py (the tiny vocabularies' source)."""
    from fixture_data import STARD_CORPUS, STARD_QUERIES

    return [d["name"] + d["content"] for d in STARD_CORPUS] + [q["问题"] for q in STARD_QUERIES]


def run(data_dir, model=None, params=None, reranker=None, reranker_params=None, splits=("fold-1",), output=None,
        task="stard", pool=None, rerank_depth=100):
    """Run through the real runner, quietly; returns (outcome, log lines)."""
    import logging

    from statbench.run.runner import execute
    from statbench.run.request import RunRequest

    log = logging.getLogger("statbench.test.neural")
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    handler = Collect(logging.INFO)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        request = RunRequest(task=task, model=model, params=dict(params or {}), reranker=reranker,
                             reranker_params=dict(reranker_params or {}), pool=pool,
                             splits=list(splits) if splits else None, data_dir=data_dir,
                             output=output or Path(data_dir).parent / f"out-{model}-{reranker}",
                             rerank_depth=rerank_depth)
        outcome = execute(request, log, lambda description, total=None: (lambda n=1: None))
    finally:
        log.removeHandler(handler)
    return outcome, lines
