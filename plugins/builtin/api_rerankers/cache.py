"""On-disk cache of paid API responses, so a rerun sends nothing.

One :class:`statbench.storage.cache.CacheEntry` per request, keyed by what determines the answer
(provider, model, endpoint, the query and the sha256 of every passage, in order, or the
exact prompt): the entry proves itself on read (manifest + sha256) and is written only
after the response has been validated by the caller, so a malformed answer is never kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from statbench.api import CacheEntry, cached, keyed_entry, read_json

RESPONSE = "response.json"


class ResponseCache:
    """Responses of one provider under ``root/<provider>/``."""

    def __init__(self, root: Path, provider: str):
        self.root = Path(root) / provider
        self.provider = provider

    def entry(self, key: dict) -> CacheEntry:
        full = {"provider": self.provider, **key}
        return keyed_entry(self.root, "api-response", full, required=(RESPONSE,), sharded=True)

    def has(self, key: dict) -> bool:
        return self.entry(key).valid()

    def get(self, key: dict) -> dict | None:
        """The cached payload, or None when there is no intact entry."""
        entry = self.entry(key)
        return read_json(entry.file(RESPONSE), expect=dict) if entry.valid() else None

    def get_or_fetch(self, key: dict, fetch: Callable[[], dict]) -> tuple[dict, bool]:
        """``(payload, from_cache)``: the cached payload, or ``fetch()`` (which must
        validate its answer and raise on a bad one) written as a new entry."""
        entry = self.entry(key)
        fetched = False

        def build(staging: Path) -> None:
            nonlocal fetched
            payload = fetch()
            fetched = True
            (staging / RESPONSE).write_text(json.dumps(payload, ensure_ascii=False, sort_keys=True), "utf-8")

        cached(entry, build)
        return read_json(entry.file(RESPONSE), expect=dict), not fetched
