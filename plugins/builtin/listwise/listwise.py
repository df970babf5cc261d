"""Listwise LLM rerankers: ``rankzephyr`` (castorini/rank_zephyr_7b_v1_full, ukstat-2025's
LLM reranker) and ``listwise-llm`` (any chat model), reranking by rank-llm's sliding window
(window 20, stride 10: :mod:`.listwise_window`) with RankZephyr's prompt
(:mod:`.listwise_prompt`).

Backend (:mod:`.listwise_backends`): a local transformers model (``model=HUB_ID_OR_PATH``)
or, with ``base_url``, an OpenAI-compatible endpoint (key in ``api_key_env``), which follows
the API rerankers' rules: spend logged and confirmed past ``confirm_above``, retries
honouring Retry-After. Every answer (local or remote) is cached on disk keyed by backend,
model and the exact prompt, so a rerun generates nothing.

An answer that is not a clean permutation is repaired as rank-llm does (duplicates
dropped, unknown ids dropped, missing passages appended in their previous order; no
digits at all leaves the window unchanged) and counted in ``listwise_repaired_answers``.
A passage's score is ``n - rank`` (``n`` candidates): the order is what the model gives."""

from __future__ import annotations

import time
from typing import ClassVar, Mapping, Sequence

from statbench.api import (
    Document,
    Param,
    ParamError,
    Query,
    Ranking,
    Reranker,
    RunContext,
    StatbenchError,
    fingerprint,
    hookimpl,
)
from statbench.models.api_rerankers.cache import ResponseCache
from statbench.models.api_rerankers.spend import (
    CONFIRM_ABOVE,
    MAX_RETRIES,
    TIMEOUT,
    SpendEstimate,
    api_key,
    confirm,
)
from statbench.models.listwise.backends import LocalCausalLM, OpenAIChat
from statbench.models.listwise.prompt import fitted
from statbench.models.listwise.window import apply_permutation, clean_response, parse_permutation, windows
from statbench.models.shared import hub
from statbench.models.shared.specs import DEVICE, with_defaults

RANKZEPHYR = "castorini/rank_zephyr_7b_v1_full"
OPERATIONAL = ("api_key_env", "confirm_above", "max_retries", "timeout", "device")
LISTWISE_PARAMS = {
    "model": Param("", "chat model: hub id or local folder (transformers), or the endpoint's model name"),
    "base_url": Param("", "OpenAI-compatible endpoint (e.g. http://host:8000/v1); empty: run the model locally"),
    "api_key_env": Param("OPENAI_API_KEY", "environment variable holding the endpoint's API key"),
    "window": Param(20, "passages the model ranks at once", min=2),
    "stride": Param(10, "step of the sliding window, from the bottom of the list to the top", min=1),
    "context_size": Param(4096, "the model's context, in tokens (passages are shortened to fit)", min=64),
    "with_title": Param(False, "prefix each passage with 'Title: ... Content:' (rank-llm's title form)"),
    "device": DEVICE,
    "confirm_above": CONFIRM_ABOVE,
    "max_retries": MAX_RETRIES,
    "timeout": TIMEOUT,
}


class ListwiseLLM(Reranker):
    name = "listwise-llm"
    description = ("Listwise LLM reranker, rank-llm sliding window (20/10) with RankZephyr's prompt; "
                   "local transformers model or OpenAI-compatible endpoint (base_url)")
    default_params: ClassVar[dict] = dict(LISTWISE_PARAMS)
    version = "1"
    preset_model: ClassVar[str] = ""

    def __init__(self, **params):
        super().__init__(**params)
        p = self.params
        if not p["model"]:
            if not self.preset_model:
                raise ParamError(f"{self.name}: give the model with --reranker-param model=HUB_ID_OR_PATH "
                                 f"(or the endpoint's model name with base_url=...)")
            p["model"] = self.preset_model
        if p["stride"] > p["window"]:
            raise ParamError(f"parameter stride={p['stride']} for {self.name}: above window={p['window']} "
                             f"(passages between windows would never be ranked); expected an int <= window")
        self.stats: dict[str, float] = {}
        self._backend = None
        #: passages sent to a remote endpoint (not answered by the cache) so far in the run
        self.documents_sent = 0
        self._reranked = False

    def api_usage(self) -> dict | None:
        """On an OpenAI-compatible endpoint: the passages sent in this process (answers from the
        response cache are not counted) and the prompt tokens the endpoint reported; no
        price is recorded for an arbitrary endpoint, so no cost (null). A local model: None."""
        if not self.remote or not self._reranked:
            return None
        backend = self._backend  # None when every answer came from the cache
        unknown = backend is not None and backend.unreported
        return {"documents_sent": self.documents_sent,
                "tokens_sent": None if unknown else (backend.prompt_tokens if backend is not None else 0),
                "cost_usd": 0.0 if not self.documents_sent else None, "price": None}

    def config(self) -> dict:
        return {"name": self.name, "version": self.version,
                "params": {k: v for k, v in self.params.items() if k not in OPERATIONAL}}

    @property
    def remote(self) -> bool:
        return bool(self.params["base_url"])

    def backend(self):
        if self._backend is None:
            p = self.params
            if self.remote:
                self._backend = OpenAIChat(self.name, p["base_url"], p["model"], api_key(self.name, p["api_key_env"]),
                                           float(p["timeout"]), int(p["max_retries"]), self.stats)
            else:
                self._backend = LocalCausalLM(p["model"], p["device"])
            self.description = (f"{type(self).description}; backend {self._backend.kind}, model {p['model']}"
                                + (f" at {p['base_url']}" if self.remote else ""))
        return self._backend

    def _identity(self) -> dict:
        if self.remote:
            return {"backend": "openai", "endpoint": self.params["base_url"].rstrip("/"), "model": self.params["model"]}
        return {"backend": "transformers", "model": fingerprint(self.params["model"])}

    # one query ---------------------------------------------------------------------------
    def _passages(self, docs: list[str], corpus: Mapping[str, Document]) -> list[tuple[str, str]]:
        return [(corpus[d].text, corpus[d].title if self.params["with_title"] else "") for d in docs]

    def _window_prompt(self, query: Query, passages, counter):
        backend_counter, output_tokens = counter
        return fitted(query.text, passages, backend_counter, int(self.params["context_size"]), output_tokens)

    def _rank_query(self, query: Query, docs: list[str], corpus, cache: ResponseCache, answer, counter) -> list[str]:
        """rank-llm's ``sliding_windows`` over ``docs``; ``answer(messages, size)`` is the
        model's text for one window (cached or generated)."""
        current = list(docs)
        for start, end in windows(len(current), int(self.params["window"]), int(self.params["stride"])):
            messages, _ = self._window_prompt(query, self._passages(current[start:end], corpus), counter(end - start))
            text = answer(messages, end - start)
            order = parse_permutation(text, end - start)
            if not _clean(text, end - start):
                self.stats["listwise_repaired_answers"] = self.stats.get("listwise_repaired_answers", 0) + 1
            current = current[:start] + [current[start:end][i] for i in order] + current[end:]
            self.stats["listwise_windows"] = self.stats.get("listwise_windows", 0) + 1
        return current

    def rerank(self, queries: Sequence[Query], candidates: Mapping[str, Sequence[str]],
               corpus: Mapping[str, Document], ctx: RunContext) -> dict[str, Ranking]:
        cache = ResponseCache(ctx.cache_root / "api-responses", "listwise")
        identity = self._identity()
        work = [(q, [d for d in candidates.get(q.id, []) if d in corpus]) for q in queries]
        work = [(q, docs) for q, docs in work if docs]

        def key(messages, size):
            return {**identity, "messages": messages, "max_tokens": size}

        counter = self._counter()
        if self.remote:
            self._confirm_spend(work, corpus, cache, key, counter, ctx)

        def generate(messages, size, tokens):
            if self.remote:
                self.documents_sent += size
            return {"text": self.backend().generate(messages, tokens)}

        def answer(messages, size):
            tokens = counter(size)[1]
            payload, from_cache = cache.get_or_fetch(key(messages, tokens), lambda: generate(messages, size, tokens))
            self.stats["llm_cached_answers" if from_cache else "llm_generated_answers"] = \
                self.stats.get("llm_cached_answers" if from_cache else "llm_generated_answers", 0) + 1
            if not isinstance(payload.get("text"), str):
                raise StatbenchError(f"{self.name}: a cached answer in {cache.root} holds no text")
            return payload["text"]

        self._reranked = True
        self.stats.update(listwise_windows=0, listwise_repaired_answers=0, llm_cached_answers=0,
                          llm_generated_answers=0)
        out: dict[str, Ranking] = {q.id: [] for q in queries}
        advance = ctx.progress(f"{self.name}: queries", len(work))
        t0 = time.perf_counter()
        for query, docs in work:
            order = self._rank_query(query, docs, corpus, cache, answer, counter)
            out[query.id] = [(doc, float(len(order) - i)) for i, doc in enumerate(order)]
            advance(1)
        self.stats["rerank_queries_per_s"] = len(work) / max(time.perf_counter() - t0, 1e-9)
        return out

    def _counter(self):
        """``counter(window size) -> (count_tokens, answer tokens)`` of the backend. For a
        remote model the estimate needs no client (so cached runs need no key)."""
        if self.remote:
            return lambda size: (OpenAIChat.count_tokens, OpenAIChat.output_tokens(size))
        backend = self.backend()
        return lambda size: (backend.count_tokens, backend.output_tokens(size))

    def _confirm_spend(self, work, corpus, cache, key, counter, ctx) -> None:
        """Walk each query's windows through the cache alone: the windows from the first
        uncached one on are what a run sends (counted on the order reached so far)."""
        requests = documents = characters = cached = 0
        for query, docs in work:
            current = list(docs)
            spans = windows(len(current), int(self.params["window"]), int(self.params["stride"]))
            for n, (start, end) in enumerate(spans):
                messages, _ = self._window_prompt(query, self._passages(current[start:end], corpus), counter(end - start))
                payload = cache.get(key(messages, counter(end - start)[1]))
                if payload is None or not isinstance(payload.get("text"), str):
                    for s, e in spans[n:]:
                        m, _ = self._window_prompt(query, self._passages(current[s:e], corpus), counter(e - s))
                        requests += 1
                        documents += e - s
                        characters += sum(len(x["content"]) for x in m)
                    break
                cached += 1
                current = apply_permutation(current, start, end, payload["text"])
        estimate = SpendEstimate(requests=requests, documents=documents, characters=characters,
                                 cached_requests=cached)
        confirm(self.name, f"{self.params['base_url']} ({self.params['model']})", estimate,
                int(self.params["confirm_above"]), ctx.log, already=self.documents_sent)


def _clean(text: str, size: int) -> bool:
    """True when the answer names every window position exactly once and nothing else."""
    try:
        ids = [int(x) for x in clean_response(text).split()]
    except ValueError:
        return False
    return sorted(ids) == list(range(1, size + 1))


class RankZephyr(ListwiseLLM):
    name = "rankzephyr"
    description = f"RankZephyr-7B listwise reranker ({RANKZEPHYR}), rank-llm sliding window 20/10"
    preset_model = RANKZEPHYR
    default_params: ClassVar[dict] = with_defaults(LISTWISE_PARAMS, model=RANKZEPHYR)


@hookimpl
def register_rerankers(register):
    register(ListwiseLLM)
    register(RankZephyr)
