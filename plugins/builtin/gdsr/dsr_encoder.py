"""The dense statute retriever's encoders (gdsr-2023 section 3.1): a [CLS] query encoder
and a *hierarchical* article encoder. An article is cut into passages of at most
``chunk_length`` tokens (specials included; at most ``max_doc_length // chunk_length``
passages), each passage is encoded by a shared BERT-like encoder ([CLS]), learnable
passage position embeddings are added, a small Transformer encoder makes the passages
aware of each other, and the article vector is their max (or mean) pool.

Passage vectors are computed in length-sorted batches (:func:`encode_passages`) so the
first-level encoder runs once per passage; :meth:`DSRModel.pool_articles` then runs the
second level on padded groups of passage vectors. With a frozen passage encoder
(a CPU preset) the passage vectors of a corpus never change and are cached once."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from statbench.api import StatbenchError


@dataclass
class Passages:
    """Token ids of every passage of a list of texts: passage ``p`` belongs to text
    ``owner[p]`` at position ``position[p]``; ``offsets[t]:offsets[t+1]`` are text t's."""

    ids: list[list[int]]
    owner: list[int]
    position: list[int]
    offsets: list[int]


def split_passages(tokenizer, texts: Sequence[str], chunk_length: int, max_doc_length: int) -> Passages:
    """Cut each text into passages (an empty text is one passage of specials only)."""
    specials = tokenizer.num_special_tokens_to_add(pair=False)
    body = chunk_length - specials
    if body < 1:
        raise StatbenchError(f"chunk_length={chunk_length} leaves no room for text after {specials} special tokens")
    limit = max(1, max_doc_length // chunk_length)
    # long articles are cut below: transformers' "sequence too long" warning does not apply
    getattr(tokenizer, "deprecation_warnings", {})["sequence-length-is-longer-than-the-specified-maximum"] = True
    encoded = tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
    out = Passages([], [], [], [0])
    for t, tokens in enumerate(encoded):
        tokens = tokens[: limit * body]
        pieces = [tokens[i : i + body] for i in range(0, len(tokens), body)] or [[]]
        for position, piece in enumerate(pieces):
            out.ids.append(tokenizer.build_inputs_with_special_tokens(piece))
            out.owner.append(t)
            out.position.append(position)
        out.offsets.append(len(out.ids))
    return out


def pad(batch: list[list[int]], pad_id: int, device):
    """(input_ids, attention_mask) tensors of a batch of token id lists."""
    import torch

    width = max(len(x) for x in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, row in enumerate(batch):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids.to(device), mask.to(device)


def cls(encoder, ids, mask):
    """The last layer's [CLS] (first token) vector."""
    return encoder(input_ids=ids, attention_mask=mask).last_hidden_state[:, 0]


def divisor_heads(dim: int, wanted: int) -> int:
    """The largest head count <= ``wanted`` dividing ``dim`` (12 for 768/384, fewer for tiny models)."""
    return max(h for h in range(1, max(1, wanted) + 1) if dim % h == 0)


def build_dsr(query_encoder, passage_encoder, max_passages: int, layers: int, heads: int, dropout: float,
              pooling: str):
    """A :class:`DSRModel` (defined here so that torch is imported only when one is built)."""
    import torch
    from torch import nn

    class DSRModel(nn.Module):
        """Query encoder, passage encoder, passage positions, passage-level Transformer."""

        def __init__(self):
            super().__init__()
            dim = passage_encoder.config.hidden_size
            if query_encoder.config.hidden_size != dim:
                raise StatbenchError(f"query encoder width {query_encoder.config.hidden_size} differs from the "
                                     f"article encoder's {dim}")
            self.query_encoder = query_encoder
            self.passage_encoder = passage_encoder
            self.position = nn.Embedding(max_passages, dim)
            nn.init.normal_(self.position.weight, std=0.02)
            layer = nn.TransformerEncoderLayer(dim, divisor_heads(dim, heads), 4 * dim, dropout, activation="gelu",
                                               batch_first=True)
            self.context = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.pooling = pooling

        def queries(self, ids, mask):
            return cls(self.query_encoder, ids, mask)

        def passages(self, ids, mask):
            return cls(self.passage_encoder, ids, mask)

        def pool_articles(self, vectors, owner_mask):
            """Article vectors from passage vectors ``(A, m, d)`` with ``owner_mask`` (A, m) True
            where a passage exists: positions added, context layers, max/mean pool."""
            m = vectors.shape[1]
            h = vectors + self.position(torch.arange(m, device=vectors.device))[None]
            h = self.context(h, src_key_padding_mask=~owner_mask)
            if self.pooling == "max":
                return h.masked_fill(~owner_mask[..., None], float("-inf")).max(dim=1).values
            weights = owner_mask[..., None].to(h.dtype)
            return (h * weights).sum(1) / weights.sum(1).clamp(min=1.0)

    return DSRModel()


def group_passages(vectors, offsets: Sequence[int], articles: Sequence[int], device):
    """``(A, m, d)`` padded passage vectors of the given texts (``offsets`` as in
    :class:`Passages`) and their mask."""
    import torch

    counts = [offsets[a + 1] - offsets[a] for a in articles]
    m = max(counts)
    out = torch.zeros((len(articles), m, vectors.shape[-1]), dtype=vectors.dtype, device=device)
    mask = torch.zeros((len(articles), m), dtype=torch.bool, device=device)
    for i, (a, c) in enumerate(zip(articles, counts)):
        start = offsets[a]
        out[i, :c] = vectors[start : start + c]
        mask[i, :c] = True
    return out, mask


def encode_passages(model, passages: Passages, pad_id: int, batch_size: int, device, progress=None):
    """Passage [CLS] vectors (P, d) as a float32 numpy array, in length-sorted batches."""
    import numpy as np
    import torch

    order = sorted(range(len(passages.ids)), key=lambda i: len(passages.ids[i]))
    dim = model.passage_encoder.config.hidden_size
    out = np.zeros((len(order), dim), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            ids, mask = pad([passages.ids[i] for i in rows], pad_id, device)
            out[rows] = model.passages(ids, mask).float().cpu().numpy()
            if progress:
                progress(len(rows))
    return out


def pool_all(model, passage_vectors, offsets: Sequence[int], batch_size: int, device, progress=None):
    """Article vectors (A, d), float32 numpy, from every text's passage vectors."""
    import numpy as np
    import torch

    n = len(offsets) - 1
    vectors = torch.from_numpy(passage_vectors)
    parts = []
    with torch.inference_mode():
        for start in range(0, n, batch_size):
            rows = list(range(start, min(n, start + batch_size)))
            grouped, mask = group_passages(vectors, offsets, rows, device)
            parts.append(model.pool_articles(grouped, mask).float().cpu().numpy())
            if progress:
                progress(len(rows))
    return np.concatenate(parts) if parts else np.zeros((0, vectors.shape[-1]), dtype=np.float32)


def max_passages(chunk_length: int, max_doc_length: int) -> int:
    return max(1, math.floor(max_doc_length / chunk_length))


def contrastive_loss(q, d, query_ids: Sequence[str], doc_ids: Sequence[str], qrels, temperature: float,
                     normalize: bool = True):
    """The loss of DSR and LGE (eq. 4): NLL of query i's own article (column i) against every
    other column (in-batch and hard negatives), similarities / ``temperature`` (cosine when
    ``normalize``). Columns holding another article relevant to row i's query are masked."""
    import torch
    import torch.nn.functional as F

    if normalize:
        q, d = F.normalize(q, dim=-1), F.normalize(d, dim=-1)
    scores = q @ d.T / temperature
    mask = torch.tensor([[j != i and qrels.get(qid, {}).get(doc, 0) > 0 for j, doc in enumerate(doc_ids)]
                         for i, qid in enumerate(query_ids)], dtype=torch.bool, device=scores.device)
    scores = scores.masked_fill(mask, float("-inf"))
    return F.cross_entropy(scores, torch.arange(len(query_ids), device=scores.device))
