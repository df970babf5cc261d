"""Overlapping token windows over long articles (BSARD protocol: 200 tokens, 20 overlap).

Windows are counted in the encoder's own tokens (special tokens excluded) and cut back
into the original text through the tokenizer's character offsets, so each chunk is a
faithful slice of the article that the encoder re-tokenises to (about) the same tokens.
Chunk embeddings are pooled per article afterwards (mean or max)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from statbench.api import StatbenchError, UnknownNameError

#: How an article's window embeddings are pooled into one vector.
CHUNK_POOLINGS = ("mean", "max")


def windows(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """``[start, end)`` token spans of ``size`` tokens, each sharing ``overlap`` tokens with
    the previous one; the last window ends exactly at ``n_tokens``. Zero tokens: one empty window."""
    if size <= 0:
        raise StatbenchError(f"chunk size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise StatbenchError(f"chunk overlap must be in [0, chunk size), got {overlap} for size {size}")
    if n_tokens <= size:
        return [(0, n_tokens)]
    stride = size - overlap
    spans = []
    start = 0
    while True:
        end = min(start + size, n_tokens)
        spans.append((start, end))
        if end == n_tokens:
            return spans
        start += stride


@dataclass(frozen=True)
class Chunks:
    """Chunk texts and, for each, the index of the document it came from."""

    texts: list[str]
    owner: list[int]


def chunk_texts(texts: Sequence[str], tokenizer, size: int, overlap: int, batch_size: int = 256) -> Chunks:
    """Split every text into token windows. Texts within one window come back whole."""
    out_texts: list[str] = []
    owner: list[int] = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        offsets = _offsets(tokenizer, batch)
        for i, (text, spans) in enumerate(zip(batch, offsets)):
            doc = start + i
            if len(spans) <= size:
                out_texts.append(text)
                owner.append(doc)
                continue
            for lo, hi in windows(len(spans), size, overlap):
                out_texts.append(text[spans[lo][0] : spans[hi - 1][1]])
                owner.append(doc)
    return Chunks(out_texts, owner)


def _offsets(tokenizer, texts: list[str]) -> list[list[tuple[int, int]]]:
    """Character span of every token of every text (special tokens left out)."""
    if getattr(tokenizer, "is_fast", False):
        enc = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False)
        return [[tuple(span) for span in spans if span[1] > span[0]] for spans in enc["offset_mapping"]]
    # slow tokenizers have no offsets: locate each token's surface form in the text
    out = []
    for text in texts:
        spans, pos = [], 0
        for token in tokenizer.tokenize(text):
            surface = tokenizer.convert_tokens_to_string([token]).strip()
            found = text.find(surface, pos) if surface else -1
            if found < 0:
                spans.append((pos, min(pos + 1, len(text))))
            else:
                spans.append((found, found + len(surface)))
                pos = found + len(surface)
        out.append(spans)
    return out


def pool_chunks(embeddings, owner: Sequence[int], n_docs: int, mode: str):
    """One vector per document: mean or max over its chunks' vectors (numpy in, numpy out)."""
    import numpy as np

    if mode not in CHUNK_POOLINGS:
        raise UnknownNameError("chunk pooling", mode, CHUNK_POOLINGS)
    owner_arr = np.asarray(owner)
    dim = embeddings.shape[1]
    if mode == "mean":
        sums = np.zeros((n_docs, dim), dtype=np.float64)
        np.add.at(sums, owner_arr, embeddings)
        counts = np.bincount(owner_arr, minlength=n_docs).astype(np.float64)
        return (sums / np.maximum(counts, 1)[:, None]).astype(np.float32)
    out = np.full((n_docs, dim), -np.inf, dtype=np.float32)
    np.maximum.at(out, owner_arr, embeddings.astype(np.float32))
    out[~np.isfinite(out)] = 0.0
    return out
