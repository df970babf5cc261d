"""Commercial reranking APIs through their official SDKs: ``cohere-rerank`` (Cohere Rerank,
API v2, ``POST /v2/rerank``, ``cohere`` SDK) and ``voyage-rerank`` (Voyage AI, API v1,
``POST /v1/rerank``, ``voyageai`` SDK), the ukstat-2025 paper's two API rerankers.

Every query of a run is one request (all its candidates, scores for each). Before
anything is sent the number of requests, documents and estimated tokens is logged, and a
run past ``confirm_above`` documents stops unless ``--yes``/``STATBENCH_ALLOW_SPEND=1``
(:mod:`.api_spend`). Each answer is validated (every candidate exactly once, finite
scores) before it is cached on disk (:mod:`.api_cache`), so a rerun sends nothing; rate
limits and server errors are retried honouring ``Retry-After`` (:mod:`.api_retry`). The
SDKs' own retries are switched off so that one policy applies. ``base_url`` (or the SDK's
environment variable) points an SDK at another endpoint, e.g. a proxy or a test server."""

from __future__ import annotations

import math
import os
import time
from typing import ClassVar, Mapping, Sequence

from statbench.api import (
    Document,
    Param,
    Query,
    Ranking,
    Reranker,
    RunContext,
    StatbenchError,
    hookimpl,
    one_line,
    text_sha256,
)
from statbench.models.api_rerankers.cache import ResponseCache
from statbench.models.api_rerankers.prices import price_of
from statbench.models.api_rerankers.retry import Failure, with_retries
from statbench.models.api_rerankers.spend import (
    CONFIRM_ABOVE,
    MAX_RETRIES,
    TIMEOUT,
    SpendEstimate,
    api_key,
    confirm,
)

#: Parameters that change how a run talks to the API, not what it answers (kept out of cache keys).
OPERATIONAL = ("api_key_env", "confirm_above", "max_retries", "timeout")
COMMON_PARAMS = {
    "base_url": Param("", "API endpoint (empty: the SDK's default, or its environment variable)"),
    "with_title": Param(False, "prepend the article's title to its text"),
    "confirm_above": CONFIRM_ABOVE,
    "max_retries": MAX_RETRIES,
    "timeout": TIMEOUT,
}


def validated_scores(owner: str, target: str, items, n: int) -> list[float]:
    """Scores in document order from ``(index, score)`` pairs; one line when the answer is
    not exactly one finite score for each of the ``n`` documents."""
    scores: list[float | None] = [None] * n
    for index, score in items:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n:
            raise StatbenchError(f"{owner}: malformed response from {target}: index {index!r} is not one of the "
                                 f"{n} documents sent")
        if scores[index] is not None:
            raise StatbenchError(f"{owner}: malformed response from {target}: document {index} scored twice")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise StatbenchError(f"{owner}: malformed response from {target}: score {score!r} of document {index} "
                                 f"is not a finite number")
        scores[index] = float(score)
    missing = [i for i, s in enumerate(scores) if s is None]
    if missing:
        raise StatbenchError(f"{owner}: malformed response from {target}: {len(missing)} of {n} documents have no "
                             f"score (first: {missing[0]})")
    return scores  # type: ignore[return-value]


class ApiReranker(Reranker):
    """Shared loop: one cached, validated, retried request per query."""

    family = "reranker"
    provider: ClassVar[str] = ""
    api_version: ClassVar[str] = ""
    sdk: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    base_url_env: ClassVar[str] = ""
    endpoint_path: ClassVar[str] = ""
    #: the usage key (see :meth:`send`) holding the units the provider bills, priced by prices.py
    billed_unit: ClassVar[str] = ""
    #: the usage key holding the tokens the provider counted ("": it reports none)
    tokens_unit: ClassVar[str] = ""

    def __init__(self, **params):
        super().__init__(**params)
        self.stats: dict[str, float] = {}
        self._client = None
        #: documents sent (not answered by the cache) by this reranker so far in the run
        self.documents_sent = 0
        #: usage key -> units the provider reported for the requests sent (not the cache's) in the run
        self.billed: dict[str, float] = {}
        #: requests sent whose answer reported no billed units (their cost is unknown)
        self.unbilled_requests = 0
        self._reranked = False
        self.description = (f"{self.provider} rerank API {self.api_version} (POST {self.endpoint()}, "
                            f"{self.sdk} SDK {_sdk_version(self.sdk)}), model {self.params['model']}")

    def config(self) -> dict:
        params = {k: v for k, v in self.params.items() if k not in OPERATIONAL}
        return {"name": self.name, "version": self.version, "params": params,
                "provider": self.provider, "api_version": self.api_version, "endpoint": self.base_url()}

    def base_url(self) -> str:
        return (self.params["base_url"] or os.environ.get(self.base_url_env, "") or self.default_base_url).rstrip("/")

    def endpoint(self) -> str:
        return self.base_url() + self.endpoint_path

    def _text(self, doc: Document) -> str:
        if self.params["with_title"] and doc.title:
            return f"{doc.title} {doc.text}"
        return doc.text

    # provider-specific --------------------------------------------------------------------
    def make_client(self, key: str):
        raise NotImplementedError

    def send(self, client, query: str, documents: list[str]) -> tuple[list[tuple[object, object]], dict]:
        """One request: ``(index, score)`` pairs as answered, and metadata worth keeping."""
        raise NotImplementedError

    def classify(self, exc: BaseException) -> Failure | None:
        raise NotImplementedError

    def unreadable(self, exc: BaseException, texts: list[str]) -> str:
        """Why the SDK could not read an answer, in a few words."""
        return one_line(exc)

    # the loop -------------------------------------------------------------------------------
    def request_key(self, query: str, documents: list[str]) -> dict:
        extra = {k: v for k, v in self.params.items() if k not in OPERATIONAL and k not in ("base_url", "with_title")}
        return {"endpoint": self.endpoint(), "api_version": self.api_version, **extra,
                "query_sha256": text_sha256(query), "documents_sha256": [text_sha256(d) for d in documents]}

    def rerank(self, queries: Sequence[Query], candidates: Mapping[str, Sequence[str]],
               corpus: Mapping[str, Document], ctx: RunContext) -> dict[str, Ranking]:
        cache = ResponseCache(ctx.cache_root / "api-responses", self.provider.lower())
        work = []
        for query in queries:
            docs = [doc for doc in candidates.get(query.id, []) if doc in corpus]
            texts = [self._text(corpus[doc]) for doc in docs]
            if docs:
                work.append((query, docs, texts, self.request_key(query.text, texts)))
        todo = [item for item in work if not cache.has(item[3])]
        estimate = SpendEstimate(requests=len(todo), documents=sum(len(d) for _, d, _, _ in todo),
                                 characters=sum(len(q.text) * len(t) + sum(map(len, t)) for q, _, t, _ in todo),
                                 cached_requests=len(work) - len(todo))
        confirm(self.name, f"{self.provider} ({self.params['model']})", estimate, int(self.params["confirm_above"]),
                ctx.log, already=self.documents_sent)
        self._reranked = True
        self.stats.update(api_requests=0, api_cached_requests=0, api_documents_sent=estimate.documents,
                          api_tokens_estimated=estimate.tokens, api_retries=0)
        out: dict[str, Ranking] = {q.id: [] for q in queries}
        advance = ctx.progress(f"{self.name}: requests", len(work))
        t0 = time.perf_counter()
        for query, docs, texts, key in work:
            payload, from_cache = cache.get_or_fetch(key, lambda: self._sent(query.text, texts))
            self.stats["api_cached_requests" if from_cache else "api_requests"] += 1
            scores = validated_scores(self.name, f"the cache entry of query {query.id} ({cache.root})",
                                      _pairs(payload.get("scores")), len(docs))
            usage = payload.get("usage")
            for name, value in (usage.items() if isinstance(usage, dict) and not from_cache else ()):
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                    self.stats[name] = self.stats.get(name, 0) + value
                    self.billed[name] = self.billed.get(name, 0) + value
            if not from_cache and not (isinstance(usage, dict) and self.billed_unit in usage):
                self.unbilled_requests += 1
            out[query.id] = list(zip(docs, scores))
            advance(1)
        self.stats["rerank_pairs_per_s"] = sum(len(d) for _, d, _, _ in work) / max(time.perf_counter() - t0, 1e-9)
        return out

    def api_usage(self) -> dict | None:
        """Documents sent in this process (answers from the response cache are not counted and
        cost nothing), the tokens the provider reported, and the cost of the billed units at
        the recorded price (prices.py): null when the model has no recorded price or an
        answer reported no units."""
        if not self._reranked:
            return None
        price = price_of(self.provider, self.params["model"])
        tokens = int(self.billed.get(self.tokens_unit, 0)) if self.tokens_unit and not self.unbilled_requests else None
        if not self.documents_sent:
            cost = 0.0  # nothing was sent: nothing was spent
        elif price is None or self.unbilled_requests:
            cost = None
        else:
            cost = price.cost(self.billed.get(self.billed_unit, 0))
        return {"documents_sent": self.documents_sent, "tokens_sent": tokens, "cost_usd": cost,
                "price": price.text() if price is not None else None}

    def _sent(self, query: str, texts: list[str]) -> dict:
        """:meth:`_fetch`, counted in :attr:`documents_sent` (whatever the answer)."""
        self.documents_sent += len(texts)
        return self._fetch(query, texts)

    def _fetch(self, query: str, texts: list[str]) -> dict:
        if self._client is None:
            self._client = self.make_client(api_key(self.name, self.params["api_key_env"]))
        target = self.endpoint()
        try:
            items, meta = with_retries(self.name, target, lambda: self.send(self._client, query, texts),
                                       self.classify, int(self.params["max_retries"]), self.stats)
        except StatbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - an answer the SDK could not read
            raise StatbenchError(f"{self.name}: malformed response from {target}: {self.unreadable(exc, texts)}") from exc
        scores = validated_scores(self.name, target, items, len(texts))
        return {"scores": [[i, s] for i, s in enumerate(scores)], **meta}


def _pairs(items) -> list:
    """A cached ``scores`` list as ``(index, score)`` pairs; anything else (an entry from
    another version, or one rewritten by hand with a matching manifest) becomes pairs that
    :func:`validated_scores` refuses in one line."""
    if not isinstance(items, list):
        return [(items, None)]
    return [tuple(item) if isinstance(item, list) and len(item) == 2 else (item, None) for item in items]


def _sdk_version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "(not installed)"


def _need(package: str, owner: str):
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError:
        raise StatbenchError(f"{owner}: needs the {package} SDK: pip install 'statbench[api]'") from None


class CohereRerank(ApiReranker):
    name = "cohere-rerank"
    description = "Cohere Rerank API v2 (cohere SDK); model=rerank-v3.5 by default; key in $CO_API_KEY"
    provider = "Cohere"
    api_version = "v2"
    sdk = "cohere"
    default_base_url = "https://api.cohere.com"
    base_url_env = "CO_API_URL"
    endpoint_path = "/v2/rerank"
    billed_unit = "cohere_search_units"
    default_params: ClassVar[dict] = {
        "model": Param("rerank-v3.5", "Cohere rerank model"),
        "api_key_env": Param("CO_API_KEY", "environment variable holding the API key"),
        "max_tokens_per_doc": Param(4096, "tokens of each document the API reads (longer ones are truncated)", min=1),
        **COMMON_PARAMS,
    }

    def make_client(self, key: str):
        cohere = _need("cohere", self.name)
        return cohere.ClientV2(api_key=key, base_url=self.base_url(), timeout=float(self.params["timeout"]),
                               max_retries=0, log_warning_experimental_features=False)

    def send(self, client, query, documents):
        response = client.rerank(model=self.params["model"], query=query, documents=documents,
                                 top_n=len(documents), max_tokens_per_doc=int(self.params["max_tokens_per_doc"]))
        items = [(r.index, r.relevance_score) for r in response.results]
        meta = getattr(response, "meta", None)
        version = getattr(getattr(meta, "api_version", None), "version", None)
        units = getattr(getattr(meta, "billed_units", None), "search_units", None)
        return items, {"api_version": version, "id": response.id,
                       "usage": {"cohere_search_units": units} if isinstance(units, (int, float)) else {}}

    def classify(self, exc):
        import httpx
        from cohere.core.api_error import ApiError

        if isinstance(exc, ApiError):
            if exc.status_code is None or 200 <= exc.status_code < 300:
                return None
            return Failure(exc.status_code, exc.headers or {}, _body_message(exc.body))
        if isinstance(exc, httpx.TransportError):
            return Failure(None, {}, one_line(exc))
        return None

    def unreadable(self, exc, texts):
        from cohere.core.api_error import ApiError

        if isinstance(exc, ApiError):  # the SDK's wrapper for a body it could not parse
            return f"HTTP {exc.status_code} with a body that is not a rerank response: {str(exc.body)[:80]!r}"
        return one_line(exc)


class VoyageRerank(ApiReranker):
    name = "voyage-rerank"
    description = "Voyage AI rerank API v1 (voyageai SDK); model=rerank-2.5 by default; key in $VOYAGE_API_KEY"
    provider = "Voyage"
    api_version = "v1"
    sdk = "voyageai"
    default_base_url = "https://api.voyageai.com/v1"
    base_url_env = "VOYAGE_API_BASE"
    endpoint_path = "/rerank"
    billed_unit = tokens_unit = "voyage_total_tokens"
    default_params: ClassVar[dict] = {
        "model": Param("rerank-2.5", "Voyage rerank model"),
        "api_key_env": Param("VOYAGE_API_KEY", "environment variable holding the API key"),
        "truncation": Param(True, "let the API truncate query/documents over the model's context (false: refuse)"),
        **COMMON_PARAMS,
    }

    def make_client(self, key: str):
        voyageai = _need("voyageai", self.name)
        return voyageai.Client(api_key=key, max_retries=0, timeout=float(self.params["timeout"]),
                               base_url=self.base_url())

    def send(self, client, query, documents):
        response = client.rerank(query=query, documents=documents, model=self.params["model"],
                                 truncation=bool(self.params["truncation"]))
        items = [(r.index, r.relevance_score) for r in response.results]
        tokens = getattr(response, "total_tokens", None)
        return items, {"usage": {"voyage_total_tokens": tokens} if isinstance(tokens, (int, float)) else {}}

    def classify(self, exc):
        from voyageai import error

        if isinstance(exc, error.VoyageError):
            status = exc.http_status
            if status is not None and 200 <= status < 300:
                return None
            return Failure(status, exc.headers or {}, exc.user_message or type(exc).__name__)
        return None

    def unreadable(self, exc, texts):
        if isinstance(exc, IndexError):  # the SDK looks each result's index up in the documents sent
            return f"a result index is not one of the {len(texts)} documents sent"
        return one_line(exc)


def _body_message(body) -> str:
    if isinstance(body, dict):
        return str(body.get("message") or body.get("detail") or body)
    return str(body)[:200]


@hookimpl
def register_rerankers(register):
    register(CohereRerank)
    register(VoyageRerank)
