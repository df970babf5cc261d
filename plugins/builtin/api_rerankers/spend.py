"""What a reranking over a paid API may send, and when it must be confirmed first.

Shared by the API rerankers and the listwise LLM rerankers on an OpenAI-compatible
endpoint: keys come from an environment variable (a missing one is one line naming it);
the number of requests, documents and (estimated) tokens is logged before anything is
sent; past ``confirm_above`` documents the run stops unless ``STATBENCH_ALLOW_SPEND=1``
(what ``statbench run --yes`` sets) says the spending is intended."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from statbench.api import Param, StatbenchError

#: Set to 1 to allow a reranking past its ``confirm_above`` threshold (``statbench run --yes``).
ALLOW_ENV = "STATBENCH_ALLOW_SPEND"
#: Characters per token of the estimate (English prose; the real count is the provider's).
CHARS_PER_TOKEN = 4.0

CONFIRM_ABOVE = Param(1000, f"documents that may be sent without confirmation; past it set {ALLOW_ENV}=1 "
                            f"(statbench run --yes)", min=0)
MAX_RETRIES = Param(6, "retries of a request on HTTP 429/5xx and connection errors (backoff, honouring Retry-After)",
                    min=0, max=50)
TIMEOUT = Param(60.0, "seconds one request may take", above=0.0)


@dataclass(frozen=True)
class SpendEstimate:
    """What will be sent (requests not already answered by the response cache)."""

    requests: int
    documents: int
    characters: int
    cached_requests: int

    @property
    def tokens(self) -> int:
        return math.ceil(self.characters / CHARS_PER_TOKEN)

    def describe(self) -> str:
        return (f"{self.requests} requests, {self.documents} documents, ~{self.tokens} tokens "
                f"(estimate: characters/{CHARS_PER_TOKEN:g}); {self.cached_requests} requests answered by the cache")


def spending_allowed() -> bool:
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes")


def confirm(owner: str, target: str, estimate: SpendEstimate, threshold: int, log, already: int = 0) -> None:
    """Log the estimate; stop (one line) past ``threshold`` documents unless allowed.
    ``already``: documents this reranker already sent in the run (a run reranks split by
    split: the threshold holds for the whole run, not for each split)."""
    if estimate.requests == 0:
        log.info("%s: all %d requests answered by the response cache; nothing is sent", owner,
                 estimate.cached_requests)
        return
    # a warning, so the console shows it without -v: money is about to be spent
    log.warning("%s: about to send to %s: %s", owner, target, estimate.describe())
    if already + estimate.documents > threshold and not spending_allowed():
        before = f" after {already} documents already sent in this run" if already else ""
        raise StatbenchError(
            f"{owner}: this would send {estimate.describe()} to {target}{before}, above confirm_above={threshold} "
            f"documents; rerun with --yes (or {ALLOW_ENV}=1) to spend it")


def api_key(owner: str, variable: str) -> str:
    """The key in environment variable ``variable``; one line naming it when unset."""
    value = os.environ.get(variable, "").strip()
    if not value:
        raise StatbenchError(f"{owner}: set the API key in the environment variable {variable}")
    return value
