"""Token windows over long articles: spans, full coverage, pooling."""

from __future__ import annotations

import numpy as np
import pytest

import tiny_models
from statbench.errors import StatbenchError, UnknownNameError
from statbench.models.dense.chunking import chunk_texts, pool_chunks, windows


def test_windows_overlap_and_end_exactly_at_the_last_token():
    assert windows(10, 4, 1) == [(0, 4), (3, 7), (6, 10)]
    assert windows(450, 200, 20) == [(0, 200), (180, 380), (360, 450)]
    assert windows(200, 200, 20) == [(0, 200)]
    assert windows(0, 200, 20) == [(0, 0)]


@pytest.mark.parametrize("size, overlap", [(0, 0), (4, 4), (4, -1)])
def test_bad_window_settings_are_refused(size, overlap):
    with pytest.raises(StatbenchError, match="chunk"):
        windows(10, size, overlap)


def test_every_token_of_a_long_article_is_in_some_window(tmp_path):
    from transformers import AutoTokenizer

    article = "".join(tiny_models.stard_texts()) * 3  # ~700 characters = tokens
    folder = tiny_models.bert(tmp_path / "bert", [article])
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    tokens = tokenizer.tokenize(article)
    chunks = chunk_texts(["短文。", article], tokenizer, size=50, overlap=10)
    assert chunks.owner.count(0) == 1 and chunks.texts[0] == "短文。"
    pieces = [t for t, owner in zip(chunks.texts, chunks.owner) if owner == 1]
    assert len(pieces) == len(windows(len(tokens), 50, 10))
    windows_tokens = [tokenizer.tokenize(p) for p in pieces]
    assert all(len(w) <= 50 for w in windows_tokens)
    # consecutive windows share exactly the overlap, and together they rebuild the article's tokens
    rebuilt = list(windows_tokens[0])
    for previous, current in zip(windows_tokens, windows_tokens[1:]):
        assert previous[-10:] == current[:10] or len(current) < 10
        rebuilt.extend(current[10:])
    assert rebuilt == tokens
    assert pieces[0] == article[: len(pieces[0])] and article.endswith(pieces[-1])


def test_pooling_over_chunks_by_hand():
    vectors = np.array([[1.0, 0.0], [3.0, 2.0], [0.0, 5.0]], dtype=np.float32)
    mean = pool_chunks(vectors, [0, 0, 1], 3, "mean")
    assert mean.tolist() == [[2.0, 1.0], [0.0, 5.0], [0.0, 0.0]]
    maxed = pool_chunks(vectors, [0, 0, 1], 2, "max")
    assert maxed.tolist() == [[3.0, 2.0], [0.0, 5.0]]
    with pytest.raises(UnknownNameError, match="unknown chunk pooling 'sum'; valid choices: max, mean"):
        pool_chunks(vectors, [0, 0, 1], 2, "sum")
