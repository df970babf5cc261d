"""How the built-in models cache what they build: every artefact (tokenised corpus, index,
encodings, trained vectors, expansions, checkpoint) is one :class:`statbench.storage.cache.CacheEntry`,
sealed with a manifest, verified on every read, built once under a cross-process lock,
and rebuilt (the event logged and recorded in results.json) when found invalid.

``load_or_build`` is :func:`statbench.storage.cache.cached` for artefacts that are used in memory
right after they are built: the freshly built value is returned as is, a verified entry
is read with ``load``."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, TypeVar

from statbench.api import CacheEntry, cached

T = TypeVar("T")


def load_or_build(entry: CacheEntry, build: Callable[[Path], T], load: Callable[[Path], T]) -> tuple[T, bool]:
    """``(value, reused)``: ``build(staging)`` writes the entry's files and returns the value
    when the entry is missing or invalid; otherwise ``load(folder)`` reads the verified entry
    (also when another process built it while this one waited for the lock)."""
    built: list[T] = []
    folder = cached(entry, lambda staging: built.append(build(staging)))
    if built:
        return built[0], False
    return load(folder), True
