"""A kept overview sections file made from other inputs is not parsed (megabytes at scale), and
one holding the digest asked for is taken only when all of it verifies and reads."""

from __future__ import annotations

import json

from statbench.leaderboard.render import overview_cache
from statbench.leaderboard.render.overview_cache import _SECTIONS_MAGIC, SectionsCache
from statbench.storage.cache_files import write_framed


def test_other_inputs_are_a_miss_without_parsing(monkeypatch):
    kept = SectionsCache()
    kept.put("a" * 64, ("<section>x</section>", ["statutes-v1"]))
    parsed = []
    real = json.loads
    monkeypatch.setattr(overview_cache.json, "loads", lambda text: parsed.append(1) or real(text))
    assert kept.get("b" * 64) is None
    assert parsed == []
    assert kept.get("a" * 64) == ("<section>x</section>", ["statutes-v1"])
    assert parsed == [1]


def test_a_digest_prefix_alone_is_not_enough():
    kept = SectionsCache()
    digest = "c" * 64
    for payload in (b'{"digest": "' + digest.encode() + b'", "html": 3, "benchmarks": []}',
                    b'{"digest": "' + digest.encode() + b'", "html": "<p>", "benchmarks": [1]}',
                    b'{"digest": "' + digest.encode() + b'"' + b"garbage"):
        write_framed(kept.file, _SECTIONS_MAGIC, payload)
        assert kept.get(digest) is None
    # the digest of another build that starts with the one asked for is another digest
    kept.put(digest + "d", ("<p>", []))
    assert kept.get(digest) is None
