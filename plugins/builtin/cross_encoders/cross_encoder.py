"""Cross-encoder rerankers: a (query, passage) pair in, a relevance score out.

``cross-encoder`` takes any sequence-classification checkpoint (``--reranker-param
model=HUB_ID_OR_PATH``); the presets name ukstat-2025's rerankers. ``monot5`` scores with
a T5 sequence-to-sequence model the monoT5 way: the probability of ``true`` against
``false`` as the first generated token after ``Query: q Document: d Relevant:``."""

from __future__ import annotations

import time
from typing import ClassVar, Mapping, Sequence

from statbench.api import Document, Param, Query, Ranking, Reranker, RunContext, hookimpl, warn_if_long
from statbench.models.shared import hub
from statbench.models.shared.specs import DEVICE, with_defaults

#: name -> (hub id, description)
PRESETS = {
    "minilm-ce": ("cross-encoder/ms-marco-MiniLM-L-6-v2", "MiniLM-L6 cross-encoder (MS MARCO)"),
    "minilm12-ce": ("cross-encoder/ms-marco-MiniLM-L-12-v2", "MiniLM-L12 cross-encoder (MS MARCO)"),
    "bge-reranker-base": ("BAAI/bge-reranker-base", "BGE reranker base"),
    "bge-reranker-large": ("BAAI/bge-reranker-large", "BGE reranker large"),
    "modernbert-ce": ("Alibaba-NLP/gte-reranker-modernbert-base", "ModernBERT-based cross-encoder reranker"),
}

#: pairs beyond this many scoring groups get a measured duration forecast (warned when long)
FORECAST_MIN_GROUPS = 4
_clock = time.perf_counter  # tests replace it

#: The option that takes a reranker's parameters (named in its error messages).
FLAG = "--reranker-param"
CE_PARAMS = {
    "model": Param("", "checkpoint: hub id or local folder (a preset's by default)"),
    "max_length": Param(512, "tokens of a (query, passage) pair the model reads", min=1),
    "batch_size": Param(16, "pairs scored per batch", min=1),
    "with_title": Param(False, "prepend the article's title to its text"),
    "device": DEVICE,
}


class _PairScorer(Reranker):
    """Shared loop: score every (query, candidate) pair in batches, with a progress bar."""

    preset_model: ClassVar[str] = ""

    def __init__(self, **params):
        super().__init__(**params)
        hub.model_or_preset(self.params, self.preset_model, self.name, FLAG)
        hub.check_available(self.params["model"], FLAG)
        self.stats: dict[str, float] = {}
        self._model = None

    def _text(self, doc: Document) -> str:
        if self.params["with_title"] and doc.title:
            return f"{doc.title} {doc.text}"
        return doc.text

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        raise NotImplementedError

    def ready(self) -> None:
        """Load the model now (else the first :meth:`score_pairs` does)."""

    def rerank(self, queries: Sequence[Query], candidates: Mapping[str, Sequence[str]],
               corpus: Mapping[str, Document], ctx: RunContext) -> dict[str, Ranking]:
        pairs, owners = [], []
        for query in queries:
            for doc in candidates.get(query.id, []):
                if doc in corpus:
                    pairs.append((query.text, self._text(corpus[doc])))
                    owners.append((query.id, doc))
        out: dict[str, Ranking] = {q.id: [] for q in queries}
        if not pairs:
            return out
        group = int(self.params["batch_size"]) * 8
        self.ready()  # loaded before the clock starts: the first group's time is scoring only
        advance = ctx.progress(f"{self.name}: scoring pairs", len(pairs))
        t0 = _clock()
        scores: list[float] = []
        for start in range(0, len(pairs), group):
            scores.extend(self.score_pairs(pairs[start : start + group]))
            advance(min(group, len(pairs) - start))
            if start == 0 and len(pairs) > FORECAST_MIN_GROUPS * group:
                seconds = max(_clock() - t0, 1e-9)
                warn_if_long(ctx.log, f"{self.name}: scoring {len(pairs)} pairs on {hub.device(self.params['device'])}",
                             seconds * len(pairs) / group,
                             f"measured on the first {group} pairs: {seconds:.1f} s; the bar shows the ETA as it goes")
        self.stats["rerank_pairs_per_s"] = len(pairs) / max(_clock() - t0, 1e-9)
        for (qid, doc), score in zip(owners, scores):
            out[qid].append((doc, float(score)))
        return out


class CrossEncoderReranker(_PairScorer):
    name = "cross-encoder"
    description = "Cross-encoder reranker on any sequence-classification checkpoint (model=HUB_ID_OR_PATH)"
    default_params: ClassVar[dict] = dict(CE_PARAMS)

    def ready(self) -> None:
        if self._model is None:
            from sentence_transformers import CrossEncoder

            p = self.params
            self._model = hub.load(p["model"], lambda path: CrossEncoder(
                path, max_length=int(p["max_length"]), device=hub.device(p["device"])), FLAG)

    def score_pairs(self, pairs):
        self.ready()
        # raw logits: the activation is monotone and would only squash ties together
        import torch

        scores = self._model.predict(pairs, batch_size=int(self.params["batch_size"]), show_progress_bar=False,
                                     activation_fn=torch.nn.Identity(), convert_to_numpy=True)
        return [float(s) for s in (scores if scores.ndim == 1 else scores[:, -1])]


class MonoT5Reranker(_PairScorer):
    name = "monot5"
    description = "monoT5 reranker: P(true) after 'Query: q Document: d Relevant:' (castorini/monot5-base-msmarco)"
    default_params: ClassVar[dict] = with_defaults(CE_PARAMS, model="castorini/monot5-base-msmarco")

    def _load(self):
        p = self.params
        self._tokenizer, model = hub.pretrained(p["model"], "AutoModelForSeq2SeqLM", FLAG)
        self._model = model.to(hub.device(p["device"])).eval()
        first = lambda word: self._tokenizer.encode(word, add_special_tokens=False)[0]  # noqa: E731
        self._true, self._false = first("true"), first("false")

    def ready(self) -> None:
        if self._model is None:
            self._load()

    def score_pairs(self, pairs):
        import torch

        self.ready()
        out: list[float] = []
        batch = int(self.params["batch_size"])
        device = self._model.device
        for start in range(0, len(pairs), batch):
            texts = [f"Query: {q} Document: {d} Relevant:" for q, d in pairs[start : start + batch]]
            enc = self._tokenizer(texts, padding=True, truncation=True, max_length=int(self.params["max_length"]),
                                  return_tensors="pt", return_token_type_ids=False).to(device)
            start_ids = torch.full((len(texts), 1), self._model.config.decoder_start_token_id, device=device)
            with torch.inference_mode():
                logits = self._model(**enc, decoder_input_ids=start_ids).logits[:, 0, [self._false, self._true]]
            out.extend(torch.log_softmax(logits.float(), dim=-1)[:, 1].cpu().tolist())
        return out


def _preset(name: str, hub_id: str, description: str) -> type:
    return type(
        f"CrossEncoder_{name.replace('-', '_')}",
        (CrossEncoderReranker,),
        {"__module__": __name__, "name": name, "description": f"{description} ({hub_id})",
         "preset_model": hub_id, "default_params": with_defaults(CE_PARAMS, model=hub_id)},
    )


@hookimpl
def register_rerankers(register):
    register(CrossEncoderReranker)
    register(MonoT5Reranker)
    for name, (hub_id, description) in PRESETS.items():
        register(_preset(name, hub_id, description))
